// The options the benchmark programs share (leasejudge-bench-sweep, -nats): the state
// and decisions files, the rules' inputs, and how a value is read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "leasejudge/clock.hpp"
#include "leasejudge/step_rules.hpp"

namespace leasejudge::bench {

// The rules every benchmark judges by: read once from the arguments (rule_arg) and
// handed alike to the generator (step_state.hpp: the state it writes sits on their
// edges), to every contender as lib's StepRules (step_rules) and to the C ABI as its
// lj_step_rules_t (plan_options.hpp). Every benchmark names its owner token and judges
// by the rule not-self, as the module's own sweep does.
struct Rules {
  std::string node, owner;
  Instant now{}, before{};
  std::int64_t bound_ms = 3600000;  // the step bound (the generator places asks around it)
  bool have_now = false, have_before = false;
};

struct RuleArgs {
  std::string contender, state, decisions;
  Rules rules;
};

// The rules as lib takes them.
inline StepRules step_rules(const Rules& rules) {
  StepRules r;
  r.node = rules.node;
  r.owner = rules.owner;
  r.before = rules.before;
  r.now = rules.now;
  r.bound_ns = rules.bound_ms * 1000000LL;
  r.rule = OwnerRule::not_self;
  return r;
}

// Prints why and the program's usage, and exits 2.
using Usage = void (*)(std::string_view why);

Instant instant_arg(std::string_view flag, const char* text, Usage usage);
// A decimal number >= 0.
long number_arg(std::string_view flag, const char* text, Usage usage);
// When flag is one of RuleArgs' (--contender, --state, --node, --owner, --decisions,
// --now, --before, --bound), its value read into args: true. False for another flag.
bool rule_arg(RuleArgs& args, std::string_view flag, const char* value, Usage usage);

}  // namespace leasejudge::bench
