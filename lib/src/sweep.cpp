// The sweep engine: plan, apply, the seed's EndStale family, and the batch plan.
#include "leasejudge/sweep.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <thread>

#include "step_json.hpp"
#include "sweep_apply.hpp"

namespace leasejudge {

Instant sweep_now(const SweepOptions& opts) {
  if (opts.rules.now) return *opts.rules.now;
  return opts.clock ? opts.clock() : system_now();
}

Result<StepRules> sweep_rules(std::string_view node, std::optional<Instant> before, const SweepOptions& opts) {
  StepRules given = opts.rules;
  given.node = std::string(node);
  if (before) given.before = before;
  given.now = sweep_now(opts);
  return resolve(std::move(given), opts.in_process);
}

const char* sweep_outcome_name(SweepOutcome outcome) noexcept {
  switch (outcome) {
    case SweepOutcome::left:
      return "left";
    case SweepOutcome::planned:
      return "planned";
    case SweepOutcome::done:
      return "done";
    case SweepOutcome::changed:
      return "changed";
    case SweepOutcome::failed:
      return "failed";
    case SweepOutcome::unknown:
      return "unknown";
    case SweepOutcome::not_sent:
      return "not-sent";
  }
  return "";
}

void SweepWrites::push_back(const SweepWrite& write) {
  rest_.push_back(Rest{write.revision, write.action, write.outcome});
  try {
    keys_.push_back(write.key);
  } catch (...) {
    rest_.pop_back();  // out of memory: the writes as they were
    throw;
  }
}

void SweepWrites::clear() noexcept {
  keys_.clear();
  rest_.clear();
}

namespace {

thread_local StepCodec tl_codec;

// Count a verdict at plan time: leaves now, ends and deletes only once their outcome
// is known (or, in a dry run, as planned).
void count_leave(SweepCounts& counts, const StepVerdict& v) {
  switch (v.reason) {
    case StepReason::other_node:
      ++counts.other_node;
      return;
    case StepReason::no_value:
    case StepReason::no_step:
      ++counts.no_step;
      return;
    default:
      ++counts.left;
  }
}

// Fills an acted-on step from its verdict and view; the strings keep whatever
// capacity p already had.
void fill_planned(PlannedStep& p, const StepVerdict& v, const StepView& view, std::string_view self,
                  const HolderJudgement& judgement) {
  p.verdict = v;
  p.id.assign(view.id);
  p.tool.assign(view.tool);
  p.owner.assign(view.owner);
  p.started = view.started;
  char why[step_why_max];
  p.why.assign(why, step_why(v, why));
  p.said.clear();
  append_step_said(p.said, v, view.owner, self, &judgement);
}

// Plan one entry; an action only for end and delete.
std::optional<PlannedStep> plan_entry(std::size_t index, const SweepEntry& e, const StepRules& rules, StepCodec& codec,
                                      OwnerVerdicts* cache, SweepCounts& counts) {
  const StepRead read = read_step(e.key, e.value, rules.node, codec);
  HolderJudgement judgement;
  StepVerdict v = judge_step(read, rules, cache, &judgement);
  const StepView& view = read.view;
  if (v.action == StepAction::leave) {
    count_leave(counts, v);
    return std::nullopt;
  }
  count_sweep_action(counts, v.action);
  PlannedStep p;
  p.entry = index;
  fill_planned(p, v, view, rules.owner, judgement);
  return p;
}

// Tell the observer of a key the plan leaves.
void observe_leave(const SweepOptions& opts, const SweepEntry& e, const StepVerdict& v, const StepView& view) {
  if (!opts.on_key) return;
  SweepKey k;
  k.key = e.key;
  k.revision = e.revision;
  k.verdict = v;
  k.id = view.id;
  k.tool = view.tool;
  k.owner = view.owner;
  k.started = view.started;
  k.outcome = SweepOutcome::left;
  opts.on_key(k);
}

// Why a batch cannot be planned (plan_batch's refusals), or success.
Status check_batch(std::string_view buffer, std::span<const BatchEntry> entries, const StepRules& rules) {
  if (rules.owner.empty()) return Status(Errc::invalid_argument, "the rules name no owner for this process");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BatchEntry& e = entries[i];
    if (e.key_offset > buffer.size() || e.key_len > buffer.size() - e.key_offset || e.value_offset > buffer.size() ||
        e.value_len > buffer.size() - e.value_offset)
      return Status(Errc::invalid_argument,
                    fmt::format("batch entry {} lies outside the buffer of {} bytes", i, buffer.size()));
  }
  return Status::success();
}

// end_stale's work on each batch a scan hands over: every key planned once, its end or
// delete sent at once. A step whose owner the plan judged gone is planned again with
// the owner's judgement, which its log line gives (the later word stands where it
// differs).
class BatchSweep {
 public:
  BatchSweep(StepRules& rules, const SweepOptions& opts, SweepApplier& applier, SweepReport& report)
      : rules_(rules), opts_(opts), applier_(applier), report_(report) {}
  BatchSweep(const BatchSweep&) = delete;
  BatchSweep& operator=(const BatchSweep&) = delete;

  // Success, or why the batch could not be planned; Errc::user once the sweep stopped.
  Status operator()(const ScanBatch& batch) {
    std::int64_t p0 = sweep_steady_ns();
    std::int64_t applied = report_.stats.apply_ns;
    rules_.now = sweep_now(opts_);
    if (Status checked = check_batch(batch.buffer, batch.entries, rules_); !checked.ok()) return checked;
    cache_ = OwnerVerdicts();  // owners judged afresh in each batch, as plan_batch judges them
    // Once the sweep stopped, the batch's other keys are still planned and counted
    // (an end or delete as not sent): every key read is in the report.
    for (const BatchEntry& b : batch.entries) {
      SweepEntry e{batch.buffer.substr(b.key_offset, b.key_len), b.revision,
                   batch.buffer.substr(b.value_offset, b.value_len)};
      sweep_entry(e);
    }
    report_.stats.plan_ns += sweep_steady_ns() - p0 - (report_.stats.apply_ns - applied);
    if (applier_.stopped()) {
      halted_ = true;
      return Status(Errc::user, "the sweep stopped");
    }
    return Status::success();
  }

  // True once the sweep stopped the scan itself.
  bool halted() const noexcept { return halted_; }

 private:
  void sweep_entry(const SweepEntry& e) {
    // The step's spans are kept from its read: it is ended right after, from the batch's
    // unchanged bytes, with no second read.
    const StepRead read = read_step(e.key, e.value, rules_.node, codec_, &spans_);
    const StepView& view = read.view;
    HolderJudgement judgement;
    StepVerdict v = judge_step(read, rules_, &cache_);
    // An owner judged gone is judged again for the judgement's words, from the step read.
    if (v.reason == StepReason::owner_gone) v = judge_step(read, rules_, &cache_, &judgement);
    if (v.action == StepAction::leave) {
      count_leave(report_.counts, v);
      observe_leave(opts_, e, v, view);
      return;
    }
    fill_planned(planned_, v, view, rules_.owner, judgement);  // its strings keep their capacity
    applier_.act(e, planned_, codec_, &spans_);
  }

  StepRules& rules_;
  const SweepOptions& opts_;
  SweepApplier& applier_;
  SweepReport& report_;
  StepCodec& codec_ = tl_codec;
  StepSpans spans_;  // the last step's, read and ended within sweep_entry
  OwnerVerdicts cache_;
  PlannedStep planned_;
  bool halted_ = false;
};

}  // namespace

SweepPlan plan_sweep(std::span<const SweepEntry> entries, const StepRules& rules) {
  SweepPlan plan;
  OwnerVerdicts cache;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto p = plan_entry(i, entries[i], rules, tl_codec, &cache, plan.counts);
    if (p) plan.actions.push_back(std::move(*p));
  }
  return plan;
}

SweepReport apply_sweep(Store& store, std::span<const SweepEntry> entries, const SweepPlan& plan, const SweepLog& log,
                        const SweepOptions& opts) {
  SweepReport report;
  std::int64_t t0 = sweep_steady_ns();
  report.counts = plan.counts;
  report.counts.ends = report.counts.deletes = report.counts.changed = 0;  // counted at their outcomes
  {
    SweepApplier applier(store, log, opts, report);
    for (const PlannedStep& p : plan.actions) {
      if (p.entry >= entries.size()) {
        if (report.status.ok())
          report.status =
              Status(Errc::invalid_argument, fmt::format("the plan names entry {} of {}", p.entry, entries.size()));
        ++report.counts.not_sent;
        continue;
      }
      if (!report.status.ok() && !applier.stopped()) {
        ++report.counts.not_sent;
        continue;
      }
      applier.act(entries[p.entry], p, tl_codec);
    }
  }
  report.stats.total_ns = sweep_steady_ns() - t0;
  return report;
}

SweepReport end_stale(Store& store, std::string_view node, std::optional<Instant> before, const SweepLog& log,
                      const SweepOptions& opts) {
  SweepReport report;
  std::int64_t t0 = sweep_steady_ns();
  auto resolved = sweep_rules(node, before, opts);
  if (!resolved) {
    report.status = Status(resolved.error());
    return report;
  }
  StepRules& rules = *resolved;
  ScanStats scanned;
  bool halted = false;  // the sweep stopped the read itself
  Status read;
  {
    SweepApplier applier(store, log, opts, report);
    BatchSweep sweep(rules, opts, applier, report);
    ScanOptions so;
    so.batch_keys = opts.batch_keys;
    so.note = log;
    read = store.scan(fmt::format("{}.", node), std::ref(sweep), so, &scanned);
    halted = sweep.halted();
  }
  if (!halted && !read.ok() && report.status.ok()) {
    report.status =
        scanned.failed_key.empty()
            ? Status(read.code(), fmt::format("buildstep: listing the steps of {}: {}", node, read.error().message))
            : Status(read.code(),
                     fmt::format("buildstep: reading the step {}: {}", scanned.failed_key, read.error().message));
  }
  SweepStats& st = report.stats;
  st.keys = scanned.keys;
  st.bytes = scanned.bytes;
  st.batches = scanned.batches;
  st.waits += scanned.waits;
  st.retries = scanned.retries;
  st.skipped = scanned.skipped;
  st.rejected = scanned.rejected;
  st.total_ns = sweep_steady_ns() - t0;
  st.read_ns = std::max<std::int64_t>(0, st.total_ns - st.plan_ns - st.apply_ns);
  return report;
}

Result<Step> end_one(Store& store, std::string_view node, std::string_view id_text, std::string_view why,
                     const StepLive& live, const SweepOptions& opts, std::string* written_value) {
  std::string_view id = step_json::trim_go_space(id_text);
  if (auto dot = id.find('.'); dot != std::string_view::npos) {
    std::string_view n = id.substr(0, dot);
    if (n != node)
      return Error{Errc::invalid_argument,
                   fmt::format("the step {} is of node {}, this module runs on {}", step_json::go_quote(id),
                               step_json::go_quote(n), step_json::go_quote(node))};
    id = id.substr(dot + 1);
  }
  if (step_json::trim_go_space(why).empty()) return Error{Errc::invalid_argument, "say why the step is ended (why)"};
  auto key = step_key(node, id);
  if (!key) return key.error();
  auto got = store.get(*key);
  if (!got) return got.error();
  if (!*got || (*got)->value.empty()) return Error{Errc::not_found, fmt::format("no step {} in the steps state", *key)};
  const StoreEntry& entry = **got;
  StepCodec& codec = tl_codec;
  auto step = codec.decode(entry.value);
  if (!step) return Error{Errc::parse, fmt::format("the step {} is no step: {}", *key, codec.no_step_why())};
  if (step->state != step_running)
    return Error{Errc::refused, fmt::format("the step {} is {}, not running", *key, step->state)};
  auto rules = sweep_rules(node, std::nullopt, opts);
  if (!rules) return rules.error();
  if (step->owner == rules->owner || (step->owner.empty() && !(step->started < *rules->before)) || (live && live(id)))
    return Error{Errc::refused,
                 fmt::format("the step {} was started by this process and may run now; only a step a previous "
                             "process left is ended",
                             *key)};
  if (rules->rule == OwnerRule::provably_dead && !step->owner.empty()) {
    HolderJudgement j = rules->judge ? rules->judge(step->owner) : judge_owner_token(step->owner);
    if (j.state == HolderState::alive || j.state == HolderState::unknown)
      return Error{Errc::refused,
                   fmt::format("the step {} is owned by {}, which is not proven gone ({}: {}); only a step a "
                               "previous process left is ended",
                               *key, step->owner, holder_state_name(j.state), j.why)};
  }
  auto ended = codec.end(entry.value, why, sweep_now(opts));
  if (!ended) return ended.error();
  auto written = store.update(*key, *ended, entry.revision);
  if (!written) {
    if (written.code() == Errc::changed)
      return Error{Errc::changed, fmt::format("the step {} changed while it was being ended; read it again", *key)};
    return written.error();
  }
  if (written_value != nullptr) *written_value = std::move(*ended);
  step->state = std::string(step_failed);
  step->reason = std::string(why);
  return std::move(*step);
}

// --- signals and the module's sweeps ---------------------------------------------------

void SweepSignals::serve() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    served_ = true;
  }
  cv_.notify_all();
}

void SweepSignals::cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
}

bool SweepSignals::served() const {
  std::lock_guard<std::mutex> lock(mu_);
  return served_;
}

bool SweepSignals::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool SweepSignals::wait_served() const {
  std::unique_lock<std::mutex> lock(mu_);
  // A cancel wins over a serve that came with it, as the seed's select checks the
  // context first only by chance; stopping is the safe side.
  cv_.wait(lock, [this] { return served_ || cancelled_; });
  return !cancelled_;
}

bool SweepSignals::sleep_for(std::int64_t ns) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::nanoseconds(ns < 0 ? 0 : ns), [this] { return cancelled_; });
  return !cancelled_;
}

std::optional<SweepReport> end_stale_at_start(Store& store, std::string_view node, std::optional<Instant> before,
                                              const SweepLog& log,
                                              const SweepSignals& signals, const SweepOptions& opts) {
  if (!signals.wait_served()) return std::nullopt;
  auto rules = sweep_rules(node, before, opts);
  if (!rules) {
    SweepReport refused;
    refused.status = Status(rules.error());
    return refused;
  }
  const std::string& self = rules->owner;
  if (log) {
    auto token = parse_owner_token(self);
    if (token && token->boot_id == no_boot_id)
      log(
          fmt::format("the boot id of {} cannot be read (/proc/sys/kernel/random/boot_id): its steps' owner is "
                      "{}, told apart by pid and start only",
                      node, self));
  }
  SweepOptions resolved = opts;
  resolved.rules.owner = self;
  for (int attempt = 1;; ++attempt) {
    SweepReport report = end_stale(store, node, before, log, resolved);
    if (report.status.ok()) {
      if (log) log(fmt::format("{} steps of {} left running by a previous process ended", report.ended.size(), node));
      return report;
    }
    if (log)
      log(fmt::format("ending the steps left running (try {} of {}): {}", attempt, opts.attempts,
                      report.status.error().message));
    if (attempt >= opts.attempts) return report;
    if (!signals.sleep_for(opts.retry_ns)) return report;
  }
}

std::optional<SweepReport> end_stale_round(Store& store, std::string_view node, const SweepLog& log,
                                           const SweepSignals& signals, const SweepOptions& opts) {
  if (!signals.served()) return std::nullopt;
  SweepReport report = end_stale(store, node, std::nullopt, log, opts);
  if (!report.status.ok() && log) log(fmt::format("ending the steps left running: {}", report.status.error().message));
  return report;
}

// --- batches -------------------------------------------------------------------------------

namespace {

void plan_run(std::span<BatchVerdict> out, std::string_view buffer, std::span<const BatchEntry> entries,
              const StepRules& rules, StepCodec& codec, BatchSummary& summary) {
  OwnerVerdicts cache;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BatchEntry& e = entries[i];
    std::string_view key(buffer.data() + e.key_offset, e.key_len);
    std::string_view value(buffer.data() + e.value_offset, e.value_len);
    StepVerdict v = judge_step(read_step(key, value, rules.node, codec), rules, &cache);
    BatchVerdict& o = out[i];
    o.action = v.action;
    o.reason = v.reason;
    o.reserved = 0;
    o.bound_sec = v.bound_at.sec;
    o.bound_nsec = v.bound_at.nsec;
    summary.add(v);
  }
}

}  // namespace

Status plan_batch(std::span<BatchVerdict> out, std::string_view buffer, std::span<const BatchEntry> entries,
                  const StepRules& rules, unsigned threads, BatchSummary* summary) {
  if (out.size() < entries.size())
    return Status(Errc::invalid_argument,
                  fmt::format("the batch has {} entries and room for {} verdicts", entries.size(), out.size()));
  if (Status checked = check_batch(buffer, entries, rules); !checked.ok()) return checked;
  BatchSummary total;
  // Below a few thousand entries a thread costs more than it saves.
  unsigned runs = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(entries.size() / 2048)));
  if (runs <= 1) {
    plan_run(out, buffer, entries, rules, tl_codec, total);
  } else {
    std::vector<BatchSummary> parts(runs);
    std::vector<std::thread> workers;
    workers.reserve(runs - 1);
    std::size_t per = (entries.size() + runs - 1) / runs;
    auto run = [&](unsigned r, StepCodec& codec) {
      std::size_t b = std::min(entries.size(), r * per), e = std::min(entries.size(), b + per);
      plan_run(out.subspan(b, e - b), buffer, entries.subspan(b, e - b), rules, codec, parts[r]);
    };
    for (unsigned r = 1; r < runs; ++r)
      workers.emplace_back([&, r] {
        StepCodec codec;
        run(r, codec);
      });
    run(0, tl_codec);
    for (auto& w : workers) w.join();
    for (const auto& p : parts) total.add(p);
  }
  if (summary != nullptr) *summary = total;
  return Status::success();
}

}  // namespace leasejudge
