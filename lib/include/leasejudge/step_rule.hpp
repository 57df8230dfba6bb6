// Which rule a plan or sweep judges owners by, when its caller names one or leaves it
// to the library: the one place that default is decided, for every door.
#pragma once

#include <cstdint>
#include <string_view>

#include "leasejudge/error.hpp"
#include "leasejudge/step.hpp"

namespace leasejudge {

// What a caller asks for (the C ABI's lj_step_rule_t).
enum class RuleChoice : std::uint8_t {
  not_self = 0,       // every owner but the caller's token is gone (the seed's own sweep)
  provably_dead = 1,  // only owners proven gone
  by_owner = 2,       // the library's default: not-self when the caller names its owner
                      // token (or sweeps in its own process), provably-dead otherwise
};

// The rule to judge by. by_owner gives not-self only to a caller that names its owner
// token (that process's steps are its own to judge), and provably-dead to one that does
// not: a plan or sweep run from outside the owners' processes never ends a step whose
// owner is alive. In process (the seed's in-process sweeps: EndOne, the sweep at start,
// the periodic round, whose owner is this process) both by-owner and not-self take this
// process's token. Errc::invalid_argument for a choice out of range, and for not-self
// with no owner named out of process.
Result<OwnerRule> choose_owner_rule(int choice, std::string_view owner, bool in_process);

}  // namespace leasejudge
