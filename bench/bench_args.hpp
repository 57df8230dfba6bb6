// The options the benchmark programs share (leasejudge-bench-sweep, -nats): the state
// and decisions files, the rules' inputs, and how a value is read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "leasejudge/clock.hpp"
#include "leasejudge/step_rules.hpp"

namespace leasejudge::bench {

struct RuleArgs {
  std::string contender, state, node, owner, decisions;
  Instant now{}, before{};
  std::int64_t bound_s = 3600;
  bool have_now = false, have_before = false;
};

// The rules of args, built once for every contender: its node, owner, times and bound,
// and the rule not-self (every benchmark names its owner token, as the module's own
// sweep does).
inline StepRules step_rules(const RuleArgs& args) {
  StepRules r;
  r.node = args.node;
  r.owner = args.owner;
  r.before = args.before;
  r.now = args.now;
  r.bound_ns = args.bound_s * 1000000000LL;
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
