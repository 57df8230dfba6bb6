// The rules of the C ABI's option structs, lj_step_plan_options_t and
// lj_sweep_options_t, as lib's StepRules: one converter, which only translates (the
// defaults and the checks of the rules are resolve()'s, in lib). Private to capi/.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "internal.hpp"
#include "leasejudge/step_rules.hpp"
#include "step_handle.hpp"

namespace leasejudge::capi {

// A time of the C ABI: LJ_TIME_DEFAULT leaves it to resolve().
inline std::optional<Instant> time_of_ns(std::int64_t ns) {
  if (ns == LJ_TIME_DEFAULT) return std::nullopt;
  return instant_of_ns(ns);
}

// out from the rule fields of c (either options struct), as given. The owner judge
// marks stopped when its callback asks to stop. LJ_OK or a code (err set) for what C
// cannot say in StepRules: a NULL owner with a length, a bound in seconds past the
// range of nanoseconds, a rule that is no lj_step_rule_t, a negative tolerance, a
// minimum age in ms past the range of nanoseconds.
template <typename C>
int step_rules_of(StepRules& out, const C& c, std::atomic<bool>* stopped, lj_error_t** err) {
  std::string_view owner;
  if (!view_of(c.owner, c.owner_len, owner)) return fail(err, LJ_EINVAL, "the owner is NULL with a length");
  if (c.bound_seconds <= 0 || c.bound_seconds > std::numeric_limits<std::int64_t>::max() / 1000000000)
    return fail(err, LJ_EINVAL, fmt::format("the step bound of {} seconds is out of range", c.bound_seconds));
  if (c.rule < LJ_STEP_RULE_NOT_SELF || c.rule > LJ_STEP_RULE_BY_OWNER)
    return fail(err, LJ_EINVAL, fmt::format("no rule {}", c.rule));
  // A negative tolerance would take every live owner for another process.
  if (c.start_tolerance_ms < 0) return fail(err, LJ_EINVAL, "start_tolerance_ms is negative");
  if (c.min_age_ms > std::numeric_limits<std::int64_t>::max() / 1000000 ||
      c.min_age_ms < std::numeric_limits<std::int64_t>::min() / 1000000)
    return fail(err, LJ_EINVAL, fmt::format("a minimum age of {} ms is out of range", c.min_age_ms));
  out.owner = std::string(owner);
  out.before = time_of_ns(c.before_ns);
  out.now = time_of_ns(c.now_ns);
  out.bound_ns = c.bound_seconds * 1000000000;
  out.rule = static_cast<OwnerRule>(c.rule);
  out.judge = owner_judge_of(c.owner_state, c.payload, c.start_tolerance_ms, stopped);
  out.min_age_ns = c.min_age_ms * 1000000;  // a negative one is resolve()'s to refuse
  return LJ_OK;
}

}  // namespace leasejudge::capi
