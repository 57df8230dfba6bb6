// The plan of one step past its node filter, for a reader that has checked the key
// already (the lines plan checks it as it reads the line). Private to lib/.
#pragma once

#include <string_view>

#include "leasejudge/step.hpp"

namespace leasejudge {

// plan_read_step for a key known to be a step key of rules.node.
StepVerdict judge_read_step(std::string_view key, std::string_view value, StepShape shape, const StepView& view,
                            const StaleRules& rules, OwnerVerdicts* cache, HolderJudgement* judgement);

}  // namespace leasejudge
