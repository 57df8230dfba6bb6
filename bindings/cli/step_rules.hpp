// What the step verbs share: the rules a plan, a sweep or a watch judges by, read
// from the rule options, and the node they judge.
#pragma once

#include <cstdint>
#include <string>

#include "command.hpp"

namespace leasejudge::cli {

// The rules a plan or a sweep judges by, from the options: the C ABI's one rules
// struct, every field the options leave out at its INIT value (the library's
// default), checked and resolved by the library (lj_step_rules_resolve). Without
// --owner, "self" is the shell that ran the command; --owner TOKEN --rule not-self is
// the module's own sweep.
struct Rules {
  std::string node, owner;              // what rules.node and rules.owner point into
  lj_step_rules_t given = LJ_STEP_RULES_INIT;
  std::string note;                     // the rule chosen and why, as the library says it

  // given, pointing into node and owner (valid while this lives unchanged).
  lj_step_rules_t c() const {
    lj_step_rules_t r = given;
    r.node = node.data();
    r.node_len = node.size();
    r.owner = owner.data();
    r.owner_len = owner.size();
    return r;
  }
};

// The rules of node by the rule options (--owner, --rule, --before, --now, --bound,
// --min-age) into r, resolved by the library: a usage error (the library's refusal
// too), or a failure's exit, said; otherwise exit_ok.
int rules_of(const Context& cx, const Args& args, const std::string& node, Rules& r);
// The sweep options of r, each callback and the rest left to the caller.
inline lj_sweep_options_t sweep_options(const Rules& r) {
  lj_sweep_options_t o = LJ_SWEEP_OPTIONS_INIT;
  o.rules = r.c();
  return o;
}
// --node N: required (the library judges the name).
int node_of(const Context& cx, const Args& args, std::string& node);

}  // namespace leasejudge::cli
