// Applying a sweep's plan: its ends and deletes sent through the store's pipeline, each
// outcome accounted for in the order sent. Private to lib/ (sweep.cpp's plan and scan
// loops hand it what they planned).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/sweep.hpp"

namespace leasejudge {

// The steady clock in nanoseconds: what a sweep's stats are timed with.
std::int64_t sweep_steady_ns();
// Count an end or a delete (once its outcome is known, or as planned in a dry run).
void count_sweep_action(SweepCounts& counts, StepAction action);

// Sends the ends and deletes of a sweep through the store's pipeline, at most
// opts.window in flight, and accounts for each outcome in the order sent: a done one
// logged with the seed's line, a changed one skipped and counted; a failed or unknown
// one stops the sweep (nothing more is sent). Every write sent is waited for.
class SweepApplier {
 public:
  SweepApplier(Store& store, const SweepLog& log, const SweepOptions& opts, SweepReport& report);
  SweepApplier(const SweepApplier&) = delete;
  SweepApplier& operator=(const SweepApplier&) = delete;
  ~SweepApplier() { finish(); }

  bool stopped() const noexcept { return stopped_; }

  // Act on a planned step of entry e: a dry run reports it, a stopped sweep counts it
  // unsent, otherwise its write is sent.
  // spans (optional) are those a read found in e.value's bytes.
  void act(const SweepEntry& e, const PlannedStep& p, StepCodec& codec, const StepSpans* spans = nullptr);

  // Wait for every write in flight.
  void finish();

 private:
  // What a write's outcome needs, as views: into the entry and its plan while the write
  // is sent, into its Slot while it is in flight.
  struct Sent {
    std::string_view key, id, tool, owner, why, said;
    Instant started = go_zero_time;
    StepVerdict verdict;
    Revision revision = 0;
  };
  // A write in flight: its Sent held (the entry's bytes may be gone by its outcome).
  // Slots are reused, so their strings keep their capacity.
  struct Slot {
    std::string key, id, tool, owner, why, said;
    Instant started = go_zero_time;
    StepVerdict verdict;
    Revision revision = 0;

    void hold(const Sent& s);
    Sent sent() const { return Sent{key, id, tool, owner, why, said, started, verdict, revision}; }
  };

  void send(const SweepEntry& e, const PlannedStep& p, StepCodec& codec, const StepSpans* spans);
  WriteOutcome next_outcome();
  void settle();
  void conclude(const Sent& s, const WriteOutcome& o);
  void stop(const Sent& s, const WriteOutcome& o);
  void log_done(const Sent& s);
  void observe(std::string_view key, Revision revision, const PlannedStep& p, SweepOutcome outcome,
               std::string_view error);

  const SweepLog& log_;
  const SweepOptions& opts_;
  SweepReport& report_;
  std::size_t window_;
  std::unique_ptr<WritePipeline> pipe_;
  std::vector<Slot> ring_;
  fmt::memory_buffer line_;  // the log line being written, reused
  std::string ended_;        // the value of the end being sent, reused
  std::size_t head_ = 0, count_ = 0;
  bool stopped_ = false;
};

}  // namespace leasejudge
