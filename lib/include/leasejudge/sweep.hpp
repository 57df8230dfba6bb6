// Sweeps: judging every step key of a node and ending, deleting or leaving each.
//
// A sweep plans, then applies. The plan is pure: entries (key, revision, value) in,
// one verdict per entry out, with its why and what is said of the owner; nothing is
// read or written. Apply acts through a Store and only at the revision the plan read:
// a key another writer moved since is skipped and counted (Errc::changed), never
// overwritten. Any other store error stops the sweep, which answers what it did before
// the error and the error, as the seed's EndStale does.
//
// end_stale reads the node's keys in one bulk pass (Store::scan over "<node>."), plans
// each batch as it comes, and sends its ends and deletes through a pipeline of writes
// in flight (Store::pipeline), each at its revision. A failed write, or one whose
// acknowledgement never came (unknown: it may have landed), stops the sweep: nothing
// more is sent, the writes in flight are waited for, and the report lists every
// write with its outcome. Nothing is retried. Keys of other nodes are never read.
//
// end_stale, end_one, end_stale_at_start and end_stale_round are the step seed's
// EndStale, EndOne, EndStaleAtStart and EndStaleRound, with their messages and log
// lines. plan_batch is the hot path: one buffer of many entries, verdicts into arrays
// the caller owns, optionally over several threads, nothing allocated per key.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/step.hpp"
#include "leasejudge/store.hpp"
#include "leasejudge/text_list.hpp"

namespace leasejudge {

struct SweepKey;
// Told of every key a sweep reads (SweepOptions::on_key).
using SweepObserver = std::function<void(const SweepKey& key)>;

// A sweep's options: its rules (StepRules, as every plan takes them), and how the
// sweep reads and writes. The sweep calls take the node and the `before` of their
// sweep as the seed's do; rules.before is this process's start, the `before` of
// EndOne and of the round.
struct SweepOptions {
  StepRules rules;
  // The sweep runs in the owners' process (the seed's sweeps): the rules by-owner and
  // not-self take this process's token when rules.owner is empty (resolve's in_process).
  bool in_process = true;
  Clock clock;                            // the time when rules.now is not set; empty: the system clock
  int attempts = 6;                       // end_stale_at_start's tries (the seed's StaleAttempts)
  std::int64_t retry_ns = 5'000'000'000;  // and the wait between them (StaleRetry)
  std::size_t window = 0;                 // writes in flight at once (1: one at a time;
                                          // 0: the store's write_window())
  std::size_t batch_keys = 4096;          // keys read and planned per batch
  bool dry_run = false;                   // plan only: nothing is written
  SweepObserver on_key;                   // each key read, with its verdict and outcome
};

// The rules of a sweep of node from before (nullopt: rules.before), resolved
// (resolve(), in process as opts.in_process says); Errc::invalid_argument as resolve()
// refuses them.
Result<StepRules> sweep_rules(std::string_view node, std::optional<Instant> before, const SweepOptions& opts);
// The time now: rules.now when set, else the clock's.
Instant sweep_now(const SweepOptions& opts);

// One line per action, and the sweep's notes (as the seed's logf).
using SweepLog = std::function<void(std::string_view line)>;

// A key as read: its value (empty: none) and the revision it was read at.
struct SweepEntry {
  std::string_view key;
  Revision revision = 0;
  std::string_view value;
};

// One key to end or delete, and why.
struct PlannedStep {
  std::size_t entry = 0;  // index into the entries planned
  StepVerdict verdict;
  std::string id, tool, owner;
  Instant started = go_zero_time;
  std::string why, said;
};

// What a sweep counts. Every key read lands in exactly one of these. A dry run
// counts the ends and deletes it plans.
struct SweepCounts {
  std::size_t ends = 0;        // rewritten as failed
  std::size_t deletes = 0;     // deleted (asks a gone owner held)
  std::size_t changed = 0;     // skipped: the key moved since it was read
  std::size_t left = 0;        // steps of the node left as they are
  std::size_t no_step = 0;     // no value, or a value that is no step
  std::size_t other_node = 0;  // keys read that are no step key of the node
  std::size_t failed = 0;      // an end or delete that did not land (it stopped the sweep)
  std::size_t unknown = 0;     // an end or delete whose acknowledgement never came
  std::size_t not_sent = 0;    // an end or delete planned after the sweep stopped
};

struct SweepPlan {
  std::vector<PlannedStep> actions;  // in entry order; only ends and deletes
  SweepCounts counts;                // ends and deletes planned; changed stays 0
};

// What became of one key a sweep read (SweepOptions::on_key; SweepReport::writes for
// the ends and deletes).
enum class SweepOutcome : std::uint8_t {
  left = 0,      // nothing to do (the verdict says why)
  planned = 1,   // a dry run's end or delete
  done = 2,      // ended or deleted
  changed = 3,   // skipped: the key moved since it was read
  failed = 4,    // the write did not land
  unknown = 5,   // the write's acknowledgement never came: it may have landed
  not_sent = 6,  // the sweep had stopped
};
const char* sweep_outcome_name(SweepOutcome outcome) noexcept;  // "left", "planned", ...

// A key as the observer sees it; the views live during the call only.
struct SweepKey {
  std::string_view key;
  Revision revision = 0;
  StepVerdict verdict;
  std::string_view id, tool, owner;  // "" unless the value is a step
  Instant started = go_zero_time;
  std::string_view why, said;  // "" for leave
  SweepOutcome outcome = SweepOutcome::left;
  std::string_view error;  // failed, unknown: what the store said
};

// One end or delete a sweep sent, and its outcome. Read from a report, key is a view
// into the report's SweepWrites: it lives until the report is changed, moved from or
// destroyed.
struct SweepWrite {
  std::string_view key;
  StepAction action = StepAction::end;
  SweepOutcome outcome = SweepOutcome::done;
  Revision revision = 0;  // the revision it was sent at
};

// A report's writes: their keys in one TextList, the rest beside; nothing allocated a
// write. Read as SweepWrite values whose keys view the list.
class SweepWrites {
 public:
  using const_iterator = IndexIterator<SweepWrites, SweepWrite>;
  using iterator = const_iterator;
  using value_type = SweepWrite;
  using size_type = std::size_t;

  void push_back(const SweepWrite& write);  // its key copied into the list
  void clear() noexcept;

  std::size_t size() const noexcept { return rest_.size(); }
  bool empty() const noexcept { return rest_.empty(); }
  // Write i; i < size().
  SweepWrite operator[](std::size_t i) const noexcept {
    const Rest& r = rest_[i];
    return SweepWrite{keys_[i], r.action, r.outcome, r.revision};
  }
  const_iterator begin() const noexcept { return const_iterator(this, 0); }
  const_iterator end() const noexcept { return const_iterator(this, size()); }

 private:
  struct Rest {
    Revision revision = 0;
    StepAction action = StepAction::end;
    SweepOutcome outcome = SweepOutcome::done;
  };
  TextList keys_;
  std::vector<Rest> rest_;
};

// What a sweep measured. Times in nanoseconds of the steady clock.
struct SweepStats {
  std::int64_t read_ns = 0;   // waiting for the store's reads
  std::int64_t plan_ns = 0;   // planning
  std::int64_t apply_ns = 0;  // sending writes and waiting for their outcomes
  std::int64_t total_ns = 0;
  std::uint64_t keys = 0, bytes = 0, batches = 0;  // read
  std::uint64_t writes = 0;                        // sent
  std::uint64_t max_in_flight = 0;
  std::uint64_t waits = 0;     // waits past the store's patience (each logged)
  std::uint64_t retries = 0;   // reads started again (each logged)
  std::uint64_t skipped = 0;   // keys written while they were read, left to the next sweep
  std::uint64_t rejected = 0;  // keys the store cannot write (its key rules): left unread
};

struct SweepReport {
  TextList ended;  // ids of the steps ended or deleted, in order
  SweepCounts counts;
  Status status;       // ok, or what stopped the sweep (what was done before is above)
  SweepWrites writes;  // every end and delete sent, in order, with its outcome
  SweepStats stats;
};

// The pure plan.
SweepPlan plan_sweep(std::span<const SweepEntry> entries, const StepRules& rules);

// Apply a plan of entries through store at the revisions read, opts.window writes in
// flight; each done action is logged. The ended time is read from opts.clock at each
// write.
SweepReport apply_sweep(Store& store, std::span<const SweepEntry> entries, const SweepPlan& plan, const SweepLog& log,
                        const SweepOptions& opts = {});

// The seed's EndStale: read node's keys (store.scan), plan each batch, send its ends
// and deletes. `before` is the start of this process for a step with no owner
// (nullopt: opts.rules.before, as resolve() takes it). `now`
// is read from opts.clock once per batch, and at each write for its ended time.
// Messages: "buildstep: listing the steps of <node>: ..." (the read failed),
// "buildstep: reading the step <key>: ..." (a store without a bulk read failed to
// read that key), "buildstep: ending the step <key>: ..." (its write failed; "... its
// outcome is unknown: ..." when no acknowledgement came), each with the store's code.
// The store's notes (waits, retries) and the slow acknowledgements are logged.
SweepReport end_stale(Store& store, std::string_view node, std::optional<Instant> before, const SweepLog& log,
                      const SweepOptions& opts = {});

// Is the step id run by this process now? (the seed's live; may be empty)
using StepLive = std::function<bool(std::string_view id)>;

// The seed's EndOne: end this node's running step id (or the key <node>.<id>) as failed
// with why, and answer it (state failed, reason why; as read otherwise). Refusals:
//   Errc::invalid_argument  another node's key; no why; no valid key
//   Errc::not_found         no step under the key
//   Errc::parse             the value is no step
//   Errc::refused           not running; owned by this process, or with no owner and
//                           started since this process began; live(id); under rule
//                           provably_dead, an owner not proven gone
//   Errc::changed           the key moved while it was ended
// and the store's own errors as they come. written (optional) receives the value
// written to the store.
Result<Step> end_one(Store& store, std::string_view node, std::string_view id, std::string_view why,
                     const StepLive& live = {}, const SweepOptions& opts = {}, std::string* written = nullptr);

// The signals a module's start sweep waits on: the runtime serving, and a cancel.
// Thread-safe; serve and cancel are one-way.
class SweepSignals {
 public:
  void serve();
  void cancel();
  bool served() const;
  bool cancelled() const;
  // Block until served (true) or cancelled (false).
  bool wait_served() const;
  // Sleep ns, or less when cancelled meanwhile (false).
  bool sleep_for(std::int64_t ns) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool served_ = false;
  bool cancelled_ = false;
};

// The seed's EndStaleAtStart: wait until served (or cancelled), say once when the
// owner's boot id is "no-boot-id", then end_stale up to opts.attempts times,
// opts.retry_ns apart, logging each failure and the count at success. The last
// sweep's report; nullopt when cancelled before any sweep.
std::optional<SweepReport> end_stale_at_start(Store& store, std::string_view node, std::optional<Instant> before,
                                              const SweepLog& log,
                                              const SweepSignals& signals, const SweepOptions& opts = {});

// The seed's EndStaleRound: only when already served, end_stale with before = this
// process's start, its error logged. nullopt when not served.
std::optional<SweepReport> end_stale_round(Store& store, std::string_view node, const SweepLog& log,
                                           const SweepSignals& signals, const SweepOptions& opts = {});

// --- batches ---------------------------------------------------------------------------

// One entry's verdict, 16 bytes. The layout of the C ABI's lj_step_action_t.
struct BatchVerdict {
  StepAction action = StepAction::leave;
  StepReason reason = StepReason::other_node;
  std::uint16_t reserved = 0;
  std::int32_t bound_nsec = 0;  // ask_past_bound: when its asker stopped waiting
  std::int64_t bound_sec = 0;
};
inline StepVerdict to_verdict(const BatchVerdict& v) noexcept {
  return StepVerdict{v.action, v.reason, Instant{v.bound_sec, v.bound_nsec}};
}

// Counts of a batch: end + remove + leave + no_step + other_node == entries.
struct BatchSummary {
  std::uint64_t end = 0, remove = 0, leave = 0, no_step = 0, other_node = 0;
  // Count one verdict.
  void add(const StepVerdict& v) noexcept {
    switch (v.reason) {
      case StepReason::other_node:
        ++other_node;
        return;
      case StepReason::no_value:
      case StepReason::no_step:
        ++no_step;
        return;
      default:
        break;
    }
    if (v.action == StepAction::end)
      ++end;
    else if (v.action == StepAction::remove)
      ++remove;
    else
      ++leave;
  }
  // Count what another summary counted (a run's, planned on a thread of its own).
  void add(const BatchSummary& s) noexcept {
    end += s.end;
    remove += s.remove;
    leave += s.leave;
    no_step += s.no_step;
    other_node += s.other_node;
  }
};

// Plan every entry of buffer into out[i] (out.size() >= entries.size()). Every value is
// read where it is and nothing past it is read. threads > 1 splits the entries into that
// many runs, one per thread. Errc::invalid_argument when an entry lies outside the buffer
// or out is short. Allocates nothing per entry.
Status plan_batch(std::span<BatchVerdict> out, std::string_view buffer, std::span<const BatchEntry> entries,
                  const StepRules& rules, unsigned threads = 1, BatchSummary* summary = nullptr);

}  // namespace leasejudge
