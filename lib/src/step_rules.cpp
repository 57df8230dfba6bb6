// The staleness rules (leasejudge/step_rules.hpp).
#include "leasejudge/step_rules.hpp"

#include <unistd.h>

#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "leasejudge/step_key.hpp"
#include "leasejudge/text.hpp"

namespace leasejudge {

Instant this_process_start() {
  static const Instant start = [] {
    auto ps = process_start(static_cast<Pid>(::getpid()));
    return ps ? Instant::from_unix_ms(ps->unix_ms) : system_now();
  }();
  return start;
}

namespace {

// The rule judged by: by-owner gives not-self only to a caller that names its owner
// token (that process's steps are its own to judge), and provably-dead to one that does
// not, so that a plan or sweep run from outside the owners' processes never ends a step
// whose owner is alive. In process both by-owner and not-self take this process's token.
Result<OwnerRule> chosen_rule(OwnerRule given, bool named, bool in_process, std::string* why) {
  switch (given) {
    case OwnerRule::provably_dead:
      if (why != nullptr)
        *why = named || in_process ? "rule provably-dead: only owners proven gone (dead, recycled, rebooted) are ended"
                                   : "rule provably-dead (no owner named): only owners proven gone (dead, recycled, "
                                     "rebooted) are ended, never a step whose owner is alive on this node";
      return OwnerRule::provably_dead;
    case OwnerRule::by_owner:
      if (!named && !in_process) return chosen_rule(OwnerRule::provably_dead, named, in_process, why);
      return chosen_rule(OwnerRule::not_self, named, in_process, why);
    case OwnerRule::not_self:
      if (!named && !in_process)
        return Error{Errc::invalid_argument,
                     "the rule not-self takes every owner but the caller's for gone: it needs the caller's owner "
                     "token (or the rule by-owner, which is provably-dead without one)"};
      return OwnerRule::not_self;  // its why names the owner, resolved
  }
  return Error{Errc::invalid_argument, fmt::format("no rule {}", static_cast<int>(given))};
}

}  // namespace

Result<StepRules> resolve(StepRules given, bool in_process, std::string* why) {
  if (given.node.empty()) return Error{Errc::invalid_argument, "the rules name no node"};
  if (given.node.find('.') != std::string::npos)
    return Error{Errc::invalid_argument,
                 fmt::format("the node {} holds a '.', which ends a step key's node", c_text_capped(given.node, 80))};
  if (!given.owner.empty() && !parse_owner_token(given.owner)) {
    return Error{Errc::invalid_argument,
                 fmt::format("the owner '{}' is not an owner token: <boot id>.<pid>.<start in base 36>, as the "
                             "steps' owners write it (for instance {})",
                             c_text_capped(given.owner, 80), self_owner_token())};
  }
  if (given.bound_ns <= 0)
    return Error{Errc::invalid_argument, fmt::format("the step bound of {} ns is out of range", given.bound_ns)};
  if (given.min_age_ns < 0)
    return Error{Errc::invalid_argument, fmt::format("the minimum age of {} ns is negative", given.min_age_ns)};
  if (given.self_pid < 0 || given.self_pid > std::numeric_limits<Pid>::max())
    return Error{Errc::invalid_argument,
                 fmt::format("self_pid {} is no pid (0 stands for this process)", given.self_pid)};
  auto rule = chosen_rule(given.rule, !given.owner.empty(), in_process, why);
  if (!rule) return rule.error();
  given.rule = *rule;
  if (given.self_pid != 0 && (given.owner.empty() || !given.before)) {
    auto pid = static_cast<Pid>(given.self_pid);
    auto start = process_start(pid);
    if (!start) return start.error();
    if (given.owner.empty()) given.owner = format_owner_token(boot_id(), pid, start->unix_ms);
    if (!given.before) given.before = Instant::from_unix_ms(start->unix_ms);
  }
  if (given.owner.empty()) given.owner = self_owner_token();
  if (given.rule == OwnerRule::not_self && why != nullptr)
    *why = fmt::format("rule not-self: every owner but {} is taken for gone", given.owner);
  if (!given.before) given.before = this_process_start();
  if (!given.now) given.now = system_now();
  return given;
}

const char* step_action_name(StepAction action) noexcept {
  switch (action) {
    case StepAction::leave:
      return "leave";
    case StepAction::end:
      return "end";
    case StepAction::remove:
      return "delete";
  }
  return "leave";
}

const char* step_reason_name(StepReason reason) noexcept {
  switch (reason) {
    case StepReason::other_node:
      return "other-node";
    case StepReason::no_value:
      return "no-value";
    case StepReason::no_step:
      return "no-step";
    case StepReason::not_running:
      return "not-running";
    case StepReason::owned_by_self:
      return "owned-by-self";
    case StepReason::owner_not_self:
      return "owner-not-self";
    case StepReason::owner_gone:
      return "owner-gone";
    case StepReason::owner_alive:
      return "owner-alive";
    case StepReason::owner_unknown:
      return "owner-unknown";
    case StepReason::ask_within_bound:
      return "ask-within-bound";
    case StepReason::ask_past_bound:
      return "ask-past-bound";
    case StepReason::started_before:
      return "started-before";
    case StepReason::started_since:
      return "started-since";
    case StepReason::under_min_age:
      return "under-min-age";
  }
  return "unknown";
}

namespace {
HolderJudgement judge_owner(std::string_view owner, const StepRules& rules) {
  return rules.judge ? rules.judge(owner) : judge_owner_token(owner);
}
}  // namespace

HolderState OwnerVerdicts::state_of(std::string_view owner, const StepRules& rules, HolderJudgement* full) {
  if (full == nullptr && owner.size() < token_max) {
    for (int i = 0; i < used_; ++i)
      if (lengths_[i] == owner.size() && std::memcmp(tokens_[i], owner.data(), owner.size()) == 0) return states_[i];
  }
  HolderJudgement j = judge_owner(owner, rules);
  if (owner.size() < token_max) {
    int slot = used_ < slots ? used_++ : next_;
    if (used_ == slots && slot == next_) next_ = (next_ + 1) % slots;
    std::memcpy(tokens_[slot], owner.data(), owner.size());
    lengths_[slot] = static_cast<std::uint8_t>(owner.size());
    states_[slot] = j.state;
  }
  HolderState state = j.state;
  if (full != nullptr) *full = std::move(j);
  return state;
}

namespace {

// The seed's staleWhy and its choice of end or delete, for a running step of
// rules.node under key.
StepVerdict judge_running_step(std::string_view key, const StepView& step, const StepRules& rules,
                               OwnerVerdicts* cache, HolderJudgement* judgement) {
  if (step.owner == rules.owner) return {StepAction::leave, StepReason::owned_by_self, {}};
  if (rules.min_age_ns > 0 && rules.now.value_or(go_zero_time) < step.started.plus_ns(rules.min_age_ns))
    return {StepAction::leave, StepReason::under_min_age, {}};
  bool ask = is_ask_step(key, step.tool);
  if (!step.owner.empty()) {
    // A pulled ask is deleted, never ended: its stream redelivers it, and an end
    // written here would fail a check the redelivery still runs.
    StepAction act = ask ? StepAction::remove : StepAction::end;
    if (rules.rule == OwnerRule::not_self) return {act, StepReason::owner_not_self, {}};
    HolderState state;
    if (cache != nullptr) {
      state = cache->state_of(step.owner, rules, judgement);
    } else {
      HolderJudgement j = judge_owner(step.owner, rules);
      state = j.state;
      if (judgement != nullptr) *judgement = std::move(j);
    }
    switch (state) {
      case HolderState::dead:
      case HolderState::recycled:
      case HolderState::other_boot:
        return {act, StepReason::owner_gone, {}};
      case HolderState::alive:
        return {StepAction::leave, StepReason::owner_alive, {}};
      case HolderState::unknown:
        break;
    }
    return {StepAction::leave, StepReason::owner_unknown, {}};
  }
  if (ask) {
    Instant bound_at = step.started.plus_ns(rules.bound_ns);
    if (!(bound_at < rules.now.value_or(go_zero_time))) return {StepAction::leave, StepReason::ask_within_bound, bound_at};
    return {StepAction::end, StepReason::ask_past_bound, bound_at};
  }
  if (step.started < rules.before.value_or(go_zero_time)) return {StepAction::end, StepReason::started_before, {}};
  return {StepAction::leave, StepReason::started_since, {}};
}

}  // namespace


StepRead read_step(std::string_view key, std::string_view value, std::string_view node, StepCodec& codec,
                   StepSpans* spans) {
  StepRead read{key, value, StepShape::no_step, {}};
  if (spans != nullptr) {
    spans->fields.clear();
    spans->of = {};
  }
  if (is_step_key_of(key, node) && !value.empty()) read.shape = codec.read(value, read.view, spans);
  return read;
}

StepVerdict judge_step(const StepRead& read, const StepRules& rules, OwnerVerdicts* cache,
                       HolderJudgement* judgement) {
  if (!is_step_key_of(read.key, rules.node)) return {StepAction::leave, StepReason::other_node, {}};
  if (read.value.empty()) return {StepAction::leave, StepReason::no_value, {}};
  if (read.shape == StepShape::no_step) return {StepAction::leave, StepReason::no_step, {}};
  if (read.shape == StepShape::null_value || read.view.state != step_running)
    return {StepAction::leave, StepReason::not_running, {}};
  return judge_running_step(read.key, read.view, rules, cache, judgement);
}

namespace {
constexpr std::string_view past_bound_prefix = "past the step bound: its asker stopped waiting at ";
}

std::size_t step_why(const StepVerdict& verdict, char* out) noexcept {
  switch (verdict.reason) {
    case StepReason::owner_not_self:
    case StepReason::owner_gone:
    case StepReason::started_before:
      std::memcpy(out, restart_reason.data(), restart_reason.size());
      return restart_reason.size();
    case StepReason::ask_past_bound: {
      std::memcpy(out, past_bound_prefix.data(), past_bound_prefix.size());
      return past_bound_prefix.size() + format_rfc3339(verdict.bound_at, out + past_bound_prefix.size());
    }
    default:
      return 0;
  }
}

std::string_view step_leave_why(StepReason reason) noexcept {
  switch (reason) {
    case StepReason::other_node:
      return "the key is no step key of this node";
    case StepReason::no_value:
      return "the key holds no value";
    case StepReason::no_step:
      return "the value is no step (Go's decoder refuses it)";
    case StepReason::not_running:
      return "the step is not running";
    case StepReason::owned_by_self:
      return "this process owns it";
    case StepReason::owner_alive:
      return "its owner is alive";
    case StepReason::owner_unknown:
      return "its owner cannot be judged, so it is not proven gone";
    case StepReason::ask_within_bound:
      return "its asker still waits for it";
    case StepReason::started_since:
      return "it names no owner and started since this process began";
    case StepReason::under_min_age:
      return "it started less than the minimum age (--min-age) ago";
    default:
      return {};
  }
}

std::string step_why(const StepVerdict& verdict) {
  char buf[step_why_max];
  return std::string(buf, step_why(verdict, buf));
}

void append_step_said(std::string& out, const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement) {
  switch (verdict.reason) {
    case StepReason::owner_not_self:
      out.append("its owner ").append(owner).append(" is not this process ").append(self);
      return;
    case StepReason::owner_gone:
      out.append("its owner ").append(owner).append(" is provably gone");
      if (judgement != nullptr && !judgement->why.empty()) out.append(": ").append(judgement->why);
      return;
    case StepReason::ask_past_bound:
      out.append("it names no owner (an older build wrote it)");
      return;
    case StepReason::started_before:
      out.append("it names no owner (an older build wrote it) and started before this process");
      return;
    default:
      return;
  }
}

std::string step_said(const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement) {
  std::string out;
  append_step_said(out, verdict, owner, self, judgement);
  return out;
}

}  // namespace leasejudge
