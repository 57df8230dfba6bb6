// Applying a sweep's plan (sweep_apply.hpp).
#include "sweep_apply.hpp"

#include <fmt/compile.h>

#include <algorithm>
#include <chrono>
#include <iterator>

namespace leasejudge {

std::int64_t sweep_steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void count_sweep_action(SweepCounts& counts, StepAction action) {
  if (action == StepAction::remove)
    ++counts.deletes;
  else
    ++counts.ends;
}

SweepApplier::SweepApplier(Store& store, const SweepLog& log, const SweepOptions& opts, SweepReport& report)
    : log_(log), opts_(opts), report_(report), window_(opts.window > 0 ? opts.window : std::max<std::size_t>(store.write_window(), 1)) {
  if (!opts.dry_run) {
    PipelineOptions po;
    po.window = window_;
    po.note = [this](std::string_view line) {
      ++report_.stats.waits;
      if (log_) log_(line);
    };
    pipe_ = store.pipeline(po);
    ring_.resize(window_);
  }
}

void SweepApplier::act(const SweepEntry& e, const PlannedStep& p, StepCodec& codec, const StepSpans* spans) {
  if (opts_.dry_run) {
    count_sweep_action(report_.counts, p.verdict.action);
    observe(e.key, e.revision, p, SweepOutcome::planned, {});
    return;
  }
  if (stopped_) {
    ++report_.counts.not_sent;
    observe(e.key, e.revision, p, SweepOutcome::not_sent, {});
    return;
  }
  std::int64_t t0 = sweep_steady_ns();
  // A full window is let drain to half before the next send, so that the sweep
  // wakes once per many acknowledgements rather than once per write.
  if (count_ >= window_) {
    while (count_ > window_ / 2) settle();
  }
  // A failure in flight stops the sweep: its outcome will say so, nothing more is sent.
  if (!stopped_ && pipe_->broken()) {
    while (count_ > 0 && !stopped_) settle();
  }
  if (stopped_) {
    ++report_.counts.not_sent;
    observe(e.key, e.revision, p, SweepOutcome::not_sent, {});
  } else {
    send(e, p, codec, spans);
    while (count_ > 0 && pipe_->ready() > 0) settle();  // what is known now stops the sweep now
  }
  report_.stats.apply_ns += sweep_steady_ns() - t0;
}

void SweepApplier::finish() {
  std::int64_t t0 = sweep_steady_ns();
  while (count_ > 0) settle();
  report_.stats.apply_ns += sweep_steady_ns() - t0;
}

void SweepApplier::Slot::hold(const Sent& s) {
  key.assign(s.key);
  id.assign(s.id);
  tool.assign(s.tool);
  owner.assign(s.owner);
  why.assign(s.why);
  said.assign(s.said);
  started = s.started;
  verdict = s.verdict;
  revision = s.revision;
}

// Sends the write. Its outcome, when the store knows it at once and no write is in
// flight before it (a store that writes as it is sent), is concluded from the views
// without holding them; otherwise the write takes the next slot.
void SweepApplier::send(const SweepEntry& e, const PlannedStep& p, StepCodec& codec, const StepSpans* spans) {
  const Sent sent{e.key, p.id, p.tool, p.owner, p.why, p.said, p.started, p.verdict, e.revision};
  if (p.verdict.action == StepAction::remove) {
    pipe_->remove(e.key, e.revision);
  } else {
    if (Status ended = codec.end(e.value, p.why, sweep_now(opts_), ended_, spans); !ended.ok()) {
      // Never sent: concluded once every write before it is.
      while (count_ > 0) settle();
      conclude(sent, WriteOutcome{WriteOutcome::Kind::failed, 0, ended.error()});
      return;
    }
    pipe_->update(e.key, ended_, e.revision);  // a store copies what it sends
  }
  ++report_.stats.writes;
  report_.stats.max_in_flight = std::max<std::uint64_t>(report_.stats.max_in_flight, pipe_->in_flight());
  if (count_ == 0 && pipe_->ready() > 0) {
    conclude(sent, next_outcome());
    return;
  }
  ring_[(head_ + count_) % window_].hold(sent);
  ++count_;
}

WriteOutcome SweepApplier::next_outcome() {
  auto outcome = pipe_->next();
  if (!outcome) {
    return WriteOutcome{WriteOutcome::Kind::unknown, 0,
                        Error{Errc::internal, "the store's pipeline lost track of a write"}};
  }
  return std::move(*outcome);
}

// The oldest write's outcome.
void SweepApplier::settle() {
  const Slot& s = ring_[head_];
  conclude(s.sent(), next_outcome());
  head_ = (head_ + 1) % window_;
  --count_;
}

void SweepApplier::conclude(const Sent& s, const WriteOutcome& o) {
  SweepOutcome outcome = SweepOutcome::done;
  switch (o.kind) {
    case WriteOutcome::Kind::done:
      count_sweep_action(report_.counts, s.verdict.action);
      report_.ended.push_back(s.id);
      log_done(s);
      break;
    case WriteOutcome::Kind::changed:
      // Another writer was first (a redelivered ask's start, a real end): its word stands.
      outcome = SweepOutcome::changed;
      ++report_.counts.changed;
      break;
    case WriteOutcome::Kind::failed:
    case WriteOutcome::Kind::unknown:
      outcome = o.kind == WriteOutcome::Kind::failed ? SweepOutcome::failed : SweepOutcome::unknown;
      if (o.kind == WriteOutcome::Kind::failed)
        ++report_.counts.failed;
      else
        ++report_.counts.unknown;
      stop(s, o);
      break;
  }
  report_.writes.push_back(SweepWrite{s.key, s.verdict.action, outcome, s.revision});
  if (opts_.on_key) {
    SweepKey k{s.key,
               s.revision,
               s.verdict,
               s.id,
               s.tool,
               s.owner,
               s.started,
               s.why,
               s.said,
               outcome,
               o.kind == WriteOutcome::Kind::done ? std::string_view() : std::string_view(o.error.message)};
    opts_.on_key(k);
  }
}

void SweepApplier::stop(const Sent& s, const WriteOutcome& o) {
  if (o.kind == WriteOutcome::Kind::unknown && log_)
    log_(fmt::format("the write ending the step {} has an unknown outcome (it may have landed): {}", s.key,
                     o.error.message));
  stopped_ = true;
  if (!report_.status.ok()) return;  // the first failure is the sweep's
  std::string message =
      o.kind == WriteOutcome::Kind::unknown
          ? fmt::format("buildstep: ending the step {}: its outcome is unknown: {}", s.key, o.error.message)
          : fmt::format("buildstep: ending the step {}: {}", s.key, o.error.message);
  report_.status = Status(o.error.code, std::move(message));
}

void SweepApplier::log_done(const Sent& s) {
  if (!log_) return;
  char started[rfc3339_max];
  std::size_t n = format_rfc3339(s.started, started);
  line_.clear();
  fmt::format_to(
      std::back_inserter(line_), FMT_COMPILE("the step {} ({}, started {}) was left running and is {}: {}; {}"), s.key,
      s.tool, std::string_view(started, n),
      s.verdict.action == StepAction::remove ? "deleted, left to the stream's redelivery" : "ended", s.why, s.said);
  log_(std::string_view(line_.data(), line_.size()));
}

void SweepApplier::observe(std::string_view key, Revision revision, const PlannedStep& p, SweepOutcome outcome,
                           std::string_view error) {
  if (!opts_.on_key) return;
  SweepKey k{key, revision, p.verdict, p.id, p.tool, p.owner, p.started, p.why, p.said, outcome, error};
  opts_.on_key(k);
}

}  // namespace leasejudge
