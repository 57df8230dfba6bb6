// Watching a node's steps: the sweep as a service, keeping a node's steps clean as
// they change rather than once at a module's start.
//
// A step watch starts with the seed's EndStaleAtStart (end_stale_at_start, with its
// retries), then judges each key of the node as it changes (Store::watch over
// "<node>."), and runs the seed's EndStaleRound (end_stale_round) every interval.
// Each key is judged as a sweep judges it, by the same rules (plan_sweep), and each
// write lands only at the revision read (apply_sweep): a key moved since is skipped
// and counted as changed, never overwritten. A write whose acknowledgement never
// came is counted unknown and never sent again: the key is read anew at its next
// change or round.
//
// A stop (asked between two store calls) ends the watch before its next write; the
// writes in flight are waited for, so none is cut short. A lost store (a failed watch
// or sweep) is logged and retried with a backoff that doubles up to a limit; once a
// watch is open again, a round reads what the gap may have hidden. Nothing waits
// silently: every failure and every return to service is a line of the log.
//
// The watch's figures are counters (and a few gauges) that another thread may read
// while it runs, for metrics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "leasejudge/step.hpp"
#include "leasejudge/store.hpp"
#include "leasejudge/sweep.hpp"

namespace leasejudge {

struct StepWatchOptions {
  SweepOptions sweep;                            // the rules, the start's retries, the write window
  std::int64_t interval_ns = 60'000'000'000;     // a round every interval
  std::int64_t poll_ns = 1'000'000'000;          // a polling store's watch: a scan per poll
  std::int64_t tick_ns = 100'000'000;            // how often a stop is asked for while nothing happens
  std::int64_t backoff_min_ns = 500'000'000;     // the first wait after a failure
  std::int64_t backoff_max_ns = 30'000'000'000;  // and the longest
};

// What a watch did: counters, which only grow, and gauges (marked so).
enum class WatchFigure : std::uint8_t {
  sweeps = 0,               // whole sweeps of the node: the start's, the rounds, the reads after a gap
  rounds = 1,               // of those, the periodic rounds
  changes = 2,              // changes the watch handed over
  ends = 3,                 // steps ended (rewritten as failed)
  deletes = 4,              // asks deleted
  changed = 5,              // writes skipped: the key moved since it was read
  unknown = 6,              // writes whose acknowledgement never came (they may have landed)
  store_errors = 7,         // failed store calls: a watch, a sweep or a write that failed
  store_timeouts = 8,       // waits on the store past its patience, and the unknown writes
  reconnects = 9,           // watches opened again after a failure
  last_sweep_ns = 10,       // gauge: the last whole sweep's duration
  last_sweep_unix_ns = 11,  // gauge: when it ended (0: none yet)
  lag_ns = 12,              // gauge: the last change's age when it was judged
  last_clean_sweep_unix_ns = 13,  // gauge: when the last whole sweep that failed nothing ended (0: none yet)
};
inline constexpr int watch_figure_count = 14;

class StepWatch {
 public:
  // A watch of node's steps; before is its owner's start (a step with no owner
  // started before it is a previous process's); nullopt: the rules' before, as each
  // sweep of the watch resolves it (resolve(): self_pid's start).
  StepWatch(std::string node, std::optional<Instant> before);
  const std::string& node() const noexcept { return node_; }

  // Watch through store until stop() says true (asked between store calls and every
  // opts.tick_ns while nothing happens). The first run starts with end_stale_at_start;
  // a later one (the store opened again) with a round. Logs through log. Success when
  // stopped; Errc::invalid_argument for options out of range.
  Status run(Store& store, const StepWatchOptions& opts, const SweepLog& log, const std::function<bool()>& stop);

  // A figure, or the count of keys judged with reason; any thread, any time.
  std::uint64_t figure(WatchFigure f) const noexcept;
  std::uint64_t judged(StepReason reason) const noexcept;

 private:
  struct Run;
  void count_key(const SweepKey& k);
  void count_report(const SweepReport& report, std::int64_t took_ns);
  void add(WatchFigure f, std::uint64_t n = 1) noexcept;
  void set(WatchFigure f, std::uint64_t v) noexcept;

  std::string node_;
  std::optional<Instant> before_;
  bool started_ = false;
  std::array<std::atomic<std::uint64_t>, watch_figure_count> figures_{};
  std::array<std::atomic<std::uint64_t>, step_reason_count> judged_{};
};

const char* watch_figure_name(WatchFigure f) noexcept;  // "sweeps", "rounds", ...

}  // namespace leasejudge
