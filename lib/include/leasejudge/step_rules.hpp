// The staleness rules: which running step no live process runs any more.
//
// The rules (judge_step) are the step seed's, for the running steps of one node: a
// step this process owns is left; one another process owns is a previous process's
// (rule not_self) or, with rule provably_dead, only when that process is proven gone.
// A step with no owner (an older build) is ended when it is an ask past the step
// bound, or hand-started before this process began. A pulled ask a gone owner held is
// deleted, not ended: its stream redelivers it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "leasejudge/clock.hpp"
#include "leasejudge/error.hpp"
#include "leasejudge/identity.hpp"
#include "leasejudge/step_codec.hpp"

namespace leasejudge {

// Why a step a previous process left running is ended.
inline constexpr std::string_view restart_reason = "the build module restarted while it ran";
// How long an asker waits for its ask's end by default (the SDK's StepBound).
inline constexpr std::int64_t default_step_bound_ns = 3600LL * 1000000000LL;

// When this process began, as the kernel recorded it (boot time plus its start ticks;
// never later than the true start); the instant of the first call where /proc cannot
// be read. The default `before` of a sweep and the start EndOne compares with.
Instant this_process_start();

// Which owners a plan or sweep takes for gone.
enum class OwnerRule : std::uint8_t {
  not_self = 0,       // every owner but this process (the seed)
  provably_dead = 1,  // only an owner judge_owner_token proves gone (dead, recycled,
                      // other boot): for nodes that run several processes at once
  by_owner = 2,       // the default, as given: not-self when the caller names its owner
                      // token (or sweeps in its own process), provably-dead otherwise;
                      // resolve() turns it into one of the two above
};

enum class StepAction : std::uint8_t {
  leave = 0,
  end = 1,     // rewritten as failed (StepCodec::end)
  remove = 2,  // deleted: a pulled ask, left to its stream's redelivery
};

// Why a key got its action. Numbers are the C ABI's LJ_STEP_* and never change.
enum class StepReason : std::uint8_t {
  other_node = 0,        // no step key of this node: untouched
  no_value = 1,          // the key holds no value (or an empty one)
  no_step = 2,           // Go's decoder fails on the value
  not_running = 3,       // a step, not running
  owned_by_self = 4,     // this process owns it: it may run now
  owner_not_self = 5,    // another owner (rule not_self): ended or deleted
  owner_gone = 6,        // an owner proven gone (rule provably_dead): ended or deleted
  owner_alive = 7,       // rule provably_dead: its owner runs
  owner_unknown = 8,     // rule provably_dead: its owner cannot be judged
  ask_within_bound = 9,  // no owner, an ask its asker still waits for
  ask_past_bound = 10,   // no owner, an ask past the step bound: ended
  started_before = 11,   // no owner, hand-started before this process: ended
  started_since = 12,    // no owner, started since this process began: may be ours
  under_min_age = 13,    // started less than the rules' min_age before now: left, whoever owns it
};
inline constexpr int step_reason_count = 14;

// "leave", "end", "delete".
const char* step_action_name(StepAction action) noexcept;
// "other-node", "no-value", "no-step", ... (the enum names with '-').
const char* step_reason_name(StepReason reason) noexcept;

// Judges an owner token (tests pass their own; the default is judge_owner_token).
using OwnerJudge = std::function<HolderJudgement(std::string_view owner)>;

// The rules of a plan or sweep: the one struct of them, held by a plan's caller and by
// SweepOptions alike; the C ABI's lj_step_rules_t converts to it in one place
// (capi/src/rule_options.hpp). A new rule is a field here and a line in resolve().
// As given, a field may be left to its default; resolve() takes every default and
// checks the rest, and judge_step reads only rules it resolved.
struct StepRules {
  std::string node;               // the node whose keys are judged: non-empty, no '.'
  std::string owner;              // this process's owner token; empty: none named
                                  // (resolved: the owner token of self_pid)
  std::optional<Instant> before;  // a step with no owner started before it is a
                                  // previous process's; nullopt: self_pid's start
  std::optional<Instant> now;     // nullopt: the system clock (a sweep: its clock)
  std::int64_t bound_ns = default_step_bound_ns;  // how long an asker waits; > 0
  OwnerRule rule = OwnerRule::by_owner;
  OwnerJudge judge;               // empty: judge_owner_token with its default options
  // A running step started less than min_age_ns before now is left, whoever owns it:
  // a guard when a node's boot time or its owners' tokens are in doubt. 0: none; >= 0.
  std::int64_t min_age_ns = 0;
  // Whose owner token "self" is when no owner is named, and whose start the default
  // before is (a command acting for the shell that ran it): 0, this process
  // (self_owner_token(), this_process_start()); else a pid, read from /proc as
  // owner_token_of reads it.
  std::int64_t self_pid = 0;
};

// The rules given, resolved: the owner (empty: self_pid's token), before (self_pid's
// start), now (the system clock, read here) and the rule (by-owner: not-self when the
// owner is named or in_process, provably-dead otherwise). in_process: the seed's own
// sweeps, whose owner is this process whether it is named or not (the rules by-owner
// and not-self then take its token). why (optional) receives the rule chosen and why,
// as a person reads it. Errc::invalid_argument for a node that is empty or holds a '.'
// (a NUL it may hold: keys are bytes), an owner that is no owner token, a rule out of range, not-self with no
// owner named out of process, a bound out of range, a negative min_age_ns and a
// self_pid that is negative or past a pid's range; process_start's error for a
// self_pid of no process. The one place a default of the rules is decided, for every
// door.
Result<StepRules> resolve(StepRules given, bool in_process, std::string* why = nullptr);

struct StepVerdict {
  StepAction action = StepAction::leave;
  StepReason reason = StepReason::other_node;
  Instant bound_at{};  // ask_past_bound: when its asker stopped waiting
};

// Remembers owner judgements within one plan, so that a batch judges each owner once.
// Fixed size: holds a few recent owners and allocates nothing.
class OwnerVerdicts {
 public:
  HolderState state_of(std::string_view owner, const StepRules& rules, HolderJudgement* full = nullptr);

 private:
  static constexpr int slots = 8;
  static constexpr std::size_t token_max = 80;
  char tokens_[slots][token_max] = {};
  std::uint8_t lengths_[slots] = {};
  HolderState states_[slots] = {};
  int used_ = 0, next_ = 0;
};

// A key and its value as read for the rules (read_step).
struct StepRead {
  std::string_view key, value;
  StepShape shape = StepShape::no_step;  // unread: another node's key, or no value
  StepView view;                         // the step read (empty unless shape is step)
};

// Read key and its value for the rules of node: the node filter, then StepCodec::read
// of a value that is not empty. spans (optional) receives where the step's fields are,
// for StepCodec::end.
StepRead read_step(std::string_view key, std::string_view value, std::string_view node, StepCodec& codec,
                   StepSpans* spans = nullptr);

// The one judgement of a step, which every plan and sweep makes: the node filter, the
// value's shape, running, then the seed's staleWhy and its choice of end or delete.
// cache (optional) judges each owner once in a batch; judgement (optional) receives the
// owner's judgement under rule provably_dead, judged afresh.
StepVerdict judge_step(const StepRead& read, const StepRules& rules, OwnerVerdicts* cache = nullptr,
                       HolderJudgement* judgement = nullptr);

// The why of a verdict: restart_reason, "past the step bound: its asker stopped
// waiting at <bound UTC, seconds>", or "" for leave.
std::string step_why(const StepVerdict& verdict);
inline constexpr std::size_t step_why_max = 128;
// The same into out (at least step_why_max bytes); the length written.
std::size_t step_why(const StepVerdict& verdict, char* out) noexcept;
// Why a key is left, by its reason: "this process owns it", "the step is not
// running", ...; "" for the reasons of an end or a delete (step_why says those).
std::string_view step_leave_why(StepReason reason) noexcept;
// What the log says of the owner: "its owner <owner> is not this process <self>",
// "its owner <owner> is provably gone: <judgement>", "it names no owner (an older
// build wrote it)" (and "... and started before this process"); "" for leave.
std::string step_said(const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement = nullptr);
// The same appended to out (a string kept from call to call allocates no more).
void append_step_said(std::string& out, const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement = nullptr);

}  // namespace leasejudge
