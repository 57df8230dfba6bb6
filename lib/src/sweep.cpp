// The sweep engine: plan, apply, the seed's EndStale family, and the batch plan.
#include "leasejudge/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "step_json.hpp"

namespace leasejudge {

std::string sweep_self(const SweepOptions& opts) {
  return opts.owner.empty() ? self_owner_token() : opts.owner;
}

Instant sweep_boot(const SweepOptions& opts) {
  return opts.boot ? *opts.boot : this_process_start();
}

Instant sweep_now(const SweepOptions& opts) {
  return opts.clock ? opts.clock() : system_now();
}

StaleRules stale_rules(std::string_view node, Instant before, const SweepOptions& opts) {
  StaleRules rules;
  rules.node = std::string(node);
  rules.self = sweep_self(opts);
  rules.before = before;
  rules.now = sweep_now(opts);
  rules.bound_ns = opts.bound_ns;
  rules.rule = opts.rule;
  rules.judge = opts.judge;
  return rules;
}

namespace {

thread_local StepCodec tl_codec;

void count_verdict(SweepCounts& counts, const StepVerdict& v) {
  switch (v.reason) {
    case StepReason::other_node:
      ++counts.other_node;
      return;
    case StepReason::no_value:
    case StepReason::no_step:
      ++counts.no_step;
      return;
    default:
      break;
  }
  if (v.action == StepAction::end)
    ++counts.ends;
  else if (v.action == StepAction::remove)
    ++counts.deletes;
  else
    ++counts.left;
}

// Plan one entry; an action only for end and delete.
std::optional<PlannedStep> plan_entry(std::size_t index, const SweepEntry& e, const StaleRules& rules, StepCodec& codec,
                                      OwnerVerdicts* cache, SweepCounts& counts) {
  StepView view;
  HolderJudgement judgement;
  StepVerdict v = plan_step(e.key, e.value, rules, codec, &view, cache, &judgement);
  count_verdict(counts, v);
  if (v.action == StepAction::leave) return std::nullopt;
  PlannedStep p;
  p.entry = index;
  p.verdict = v;
  p.id = std::string(view.id);
  p.tool = std::string(view.tool);
  p.owner = std::string(view.owner);
  p.started = view.started;
  p.why = step_why(v);
  p.said = step_said(v, view.owner, rules.self, &judgement);
  return p;
}

// Apply one planned action. False when the sweep must stop (report.status set).
bool apply_one(Store& store, const SweepEntry& e, const PlannedStep& p, StepCodec& codec, const SweepLog& log,
               const SweepOptions& opts, SweepReport& report) {
  Status done;
  if (p.verdict.action == StepAction::remove) {
    done = store.remove(e.key, e.revision);
  } else {
    auto ended = codec.end(e.value, p.why, sweep_now(opts));
    if (!ended) {
      done = ended.error();
    } else {
      auto written = store.update(e.key, *ended, e.revision);
      if (!written) done = written.error();
    }
  }
  if (!done) {
    if (done.code() == Errc::changed) {
      // Another writer was first (a redelivered ask's start, a real end): its word stands.
      if (p.verdict.action == StepAction::remove)
        --report.counts.deletes;
      else
        --report.counts.ends;
      ++report.counts.changed;
      return true;
    }
    report.status = Status(done.code(), fmt::format("buildstep: ending the step {}: {}", e.key, done.error().message));
    if (p.verdict.action == StepAction::remove)
      --report.counts.deletes;
    else
      --report.counts.ends;
    return false;
  }
  if (log) {
    char started[rfc3339_max];
    std::size_t n = format_rfc3339(p.started, started);
    log(fmt::format(
        "the step {} ({}, started {}) was left running and is {}: {}; {}", e.key, p.tool, std::string_view(started, n),
        p.verdict.action == StepAction::remove ? "deleted, left to the stream's redelivery" : "ended", p.why, p.said));
  }
  report.ended.push_back(p.id);
  return true;
}

}  // namespace

SweepPlan plan_sweep(std::span<const SweepEntry> entries, const StaleRules& rules) {
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
  report.counts = plan.counts;
  report.counts.changed = 0;
  std::size_t i = 0;
  for (; i < plan.actions.size(); ++i) {
    const PlannedStep& p = plan.actions[i];
    if (p.entry >= entries.size()) {
      report.status =
          Status(Errc::invalid_argument, fmt::format("the plan names entry {} of {}", p.entry, entries.size()));
      break;
    }
    if (!apply_one(store, entries[p.entry], p, tl_codec, log, opts, report)) break;
  }
  // Actions never tried after a stop are neither done nor skipped: take them back.
  for (std::size_t k = i + 1; k < plan.actions.size(); ++k) {
    if (plan.actions[k].verdict.action == StepAction::remove)
      --report.counts.deletes;
    else
      --report.counts.ends;
  }
  return report;
}

SweepReport end_stale(Store& store, std::string_view node, Instant before, const SweepLog& log,
                      const SweepOptions& opts) {
  SweepReport report;
  auto keys = store.keys();
  if (!keys) {
    report.status =
        Status(keys.code(), fmt::format("buildstep: listing the steps of {}: {}", node, keys.error().message));
    return report;
  }
  StaleRules rules = stale_rules(node, before, opts);
  OwnerVerdicts cache;
  StepCodec& codec = tl_codec;
  for (const std::string& k : *keys) {
    auto parts = parse_step_key(k);
    if (!parts || parts->node != node) {
      ++report.counts.other_node;
      continue;
    }
    auto got = store.get(k);
    if (!got) {
      report.status = Status(got.code(), fmt::format("buildstep: reading the step {}: {}", k, got.error().message));
      return report;
    }
    SweepEntry e{k, *got ? (*got)->revision : 0, *got ? std::string_view((*got)->value) : std::string_view()};
    rules.now = sweep_now(opts);  // the seed reads now for each step
    auto p = plan_entry(0, e, rules, codec, &cache, report.counts);
    if (!p) continue;
    if (!apply_one(store, e, *p, codec, log, opts, report)) return report;
  }
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
  std::string self = sweep_self(opts);
  Instant boot = sweep_boot(opts);
  if (step->owner == self || (step->owner.empty() && !(step->started < boot)) || (live && live(id)))
    return Error{Errc::refused,
                 fmt::format("the step {} was started by this process and may run now; only a step a previous "
                             "process left is ended",
                             *key)};
  if (opts.rule == OwnerRule::provably_dead && !step->owner.empty()) {
    HolderJudgement j = opts.judge ? opts.judge(step->owner) : judge_owner_token(step->owner);
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

std::optional<SweepReport> end_stale_at_start(Store& store, std::string_view node, Instant before, const SweepLog& log,
                                              const SweepSignals& signals, const SweepOptions& opts) {
  if (!signals.wait_served()) return std::nullopt;
  std::string self = sweep_self(opts);
  if (log) {
    auto token = parse_owner_token(self);
    if (token && token->boot_id == no_boot_id)
      log(
          fmt::format("the boot id of {} cannot be read (/proc/sys/kernel/random/boot_id): its steps' owner is "
                      "{}, told apart by pid and start only",
                      node, self));
  }
  SweepOptions resolved = opts;
  resolved.owner = self;
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
  SweepReport report = end_stale(store, node, sweep_boot(opts), log, opts);
  if (!report.status.ok() && log) log(fmt::format("ending the steps left running: {}", report.status.error().message));
  return report;
}

// --- batches -------------------------------------------------------------------------------

namespace {

void plan_run(std::span<BatchVerdict> out, std::string_view buffer, std::span<const BatchEntry> entries,
              const StaleRules& rules, StepCodec& codec, BatchSummary& summary) {
  OwnerVerdicts cache;
  StepView view;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BatchEntry& e = entries[i];
    std::string_view key(buffer.data() + e.key_offset, e.key_len);
    std::string_view value(buffer.data() + e.value_offset, e.value_len);
    StepVerdict v = plan_step(key, value, rules, codec, &view, &cache);
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

Status plan_batch(std::span<BatchVerdict> out, std::string_view buffer, std::size_t padding,
                  std::span<const BatchEntry> entries, const StaleRules& rules, unsigned threads,
                  BatchSummary* summary) {
  if (out.size() < entries.size())
    return Status(Errc::invalid_argument,
                  fmt::format("the batch has {} entries and room for {} verdicts", entries.size(), out.size()));
  if (rules.self.empty()) return Status(Errc::invalid_argument, "the rules name no owner for this process");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BatchEntry& e = entries[i];
    if (e.key_offset > buffer.size() || e.key_len > buffer.size() - e.key_offset || e.value_offset > buffer.size() ||
        e.value_len > buffer.size() - e.value_offset)
      return Status(Errc::invalid_argument,
                    fmt::format("batch entry {} lies outside the buffer of {} bytes", i, buffer.size()));
  }
  (void)padding;  // every value is read where it is, never past its end
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
    for (const auto& p : parts) {
      total.end += p.end;
      total.remove += p.remove;
      total.leave += p.leave;
      total.no_step += p.no_step;
      total.other_node += p.other_node;
    }
  }
  if (summary != nullptr) *summary = total;
  return Status::success();
}

}  // namespace leasejudge
