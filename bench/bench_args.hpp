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

// The rule options of args: its bound, and the rule not-self (every benchmark names its
// owner token, as the module's own sweep does).
inline RuleOptions rule_options(const RuleArgs& args) {
  RuleOptions o;
  o.bound_ns = args.bound_s * 1000000000LL;
  o.rule = OwnerRule::not_self;
  return o;
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
