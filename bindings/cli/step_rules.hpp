// What the step verbs share: the rules a plan, a sweep or a watch judges by, read
// from the rule options, and the node they judge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "command.hpp"

namespace leasejudge::cli {

// The rules a plan or a sweep judges by, from the options. Without --owner, the
// owner is this shell's and the rule provably-dead: a plan or sweep run from outside
// the module never ends a step whose owner is alive on this node; --owner TOKEN
// --rule not-self is the module's own sweep.
struct Rules {
  std::string owner;
  bool owner_given = false;
  int rule = LJ_STEP_RULE_NOT_SELF;
  int64_t before_ns = LJ_STEP_DEFAULT_TIME;
  int64_t now_ns = LJ_STEP_DEFAULT_TIME;
  // nullopt: the library's default (the options' INIT).
  std::optional<int64_t> bound_s, min_age_ms;
};

// The rule options (--owner, --rule, --before, --now, --bound, --min-age) into r; a usage error
// or a failure's exit, said, otherwise exit_ok.
int rules_of(const Context& cx, const Args& args, Rules& r);
// The note saying which rule a plan or sweep judged by, and why that one.
std::string rule_note(const Rules& r);
// The rule fields (owner, rule, times, bound) of r in o, an options struct of either
// kind (lj_sweep_options_t, lj_step_plan_options_t: the same fields); the rest as o had
// them.
template <typename Options>
Options with_rules(Options o, const Rules& r) {
  o.owner = r.owner.data();
  o.owner_len = r.owner.size();
  o.before_ns = r.before_ns;
  o.now_ns = r.now_ns;
  if (r.bound_s) o.bound_seconds = *r.bound_s;
  o.rule = r.rule;
  if (r.min_age_ms) o.min_age_ms = *r.min_age_ms;
  return o;
}
// The sweep options of r, each callback and the rest left to the caller.
inline lj_sweep_options_t sweep_options(const Rules& r) {
  return with_rules<lj_sweep_options_t>(LJ_SWEEP_OPTIONS_INIT, r);
}
// --node N: required, no '.'.
int node_of(const Context& cx, const Args& args, std::string& node);

}  // namespace leasejudge::cli
