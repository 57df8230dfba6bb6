// The rule options of the C ABI's two option structs, lj_step_plan_options_t and
// lj_sweep_options_t, which carry them in fields of the same names: one converter,
// one set of checks and messages. Private to capi/.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <string_view>

#include "internal.hpp"
#include "leasejudge/step_rule.hpp"
#include "leasejudge/step_rules.hpp"
#include "step_handle.hpp"

namespace leasejudge::capi {

// out from the rule fields of c (either options struct); owner receives the owner
// token c names (empty: none). in_process: the caller sweeps in its own process (the
// rule by-owner and not-self then take its token). The owner judge marks stopped when
// its callback asks to stop. LJ_OK or a code (err set).
template <typename C>
int rule_options_of(RuleOptions& out, std::string_view& owner, const C& c, bool in_process,
                    std::atomic<bool>* stopped, lj_error_t** err) {
  if (!view_of(c.owner, c.owner_len, owner)) return fail(err, LJ_EINVAL, "the owner is NULL with a length");
  if (c.bound_seconds <= 0 || c.bound_seconds > std::numeric_limits<std::int64_t>::max() / 1000000000)
    return fail(err, LJ_EINVAL, fmt::format("the step bound of {} seconds is out of range", c.bound_seconds));
  auto rule = choose_owner_rule(c.rule, owner, in_process);
  if (!rule) return fail(err, rule.error());
  // A negative tolerance would take every live owner for another process.
  if (c.start_tolerance_ms < 0) return fail(err, LJ_EINVAL, "start_tolerance_ms is negative");
  out.bound_ns = c.bound_seconds * 1000000000;
  out.rule = *rule;
  out.judge = owner_judge_of(c.owner_state, c.payload, c.start_tolerance_ms, stopped);
  return LJ_OK;
}

}  // namespace leasejudge::capi
