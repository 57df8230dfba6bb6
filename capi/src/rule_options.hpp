// The rules of the C ABI, lj_step_rules_t, as lib's StepRules: one converter, which only
// translates (the defaults and the checks of the rules are resolve()'s, in lib), and the
// reading of the two option structs that hold the rules as a member, by their version.
// Private to capi/.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "internal.hpp"
#include "leasejudge/step_rules.hpp"
#include "old_layouts.hpp"
#include "options.hpp"
#include "step_handle.hpp"

namespace leasejudge::capi {

inline const OptionsVersions<lj_step_rules_t, 1> rules_versions{
    "lj_step_rules_t", LJ_STEP_RULES_INIT, {sizeof(lj_step_rules_t)}};

// A time of the C ABI: LJ_TIME_DEFAULT leaves it to resolve().
inline std::optional<Instant> time_of_ns(std::int64_t ns) {
  if (ns == LJ_TIME_DEFAULT) return std::nullopt;
  return instant_of_ns(ns);
}

// out from c as given, its owner judged by owner_state (NULL: on this node) with
// payload; the judge marks stopped when the callback asks to stop. LJ_OK or a code (err
// set) for what C cannot say in StepRules: a NULL node or owner with a length, a bound
// or minimum age in ms past the range of nanoseconds (or a bound not positive), a rule
// that is no lj_step_rule_t, a negative tolerance.
inline int step_rules_of(StepRules& out, const lj_step_rules_t& c, OwnerStateFn owner_state, void* payload,
                         std::atomic<bool>* stopped, lj_error_t** err) {
  constexpr std::int64_t ms_most = std::numeric_limits<std::int64_t>::max() / 1000000;
  std::string_view node, owner;
  if (!view_of(c.node, c.node_len, node)) return fail(err, LJ_EINVAL, "the node is NULL with a length");
  if (!view_of(c.owner, c.owner_len, owner)) return fail(err, LJ_EINVAL, "the owner is NULL with a length");
  if (c.bound_ms <= 0 || c.bound_ms > ms_most)
    return fail(err, LJ_EINVAL, fmt::format("the step bound of {} ms is out of range", c.bound_ms));
  if (c.rule < LJ_STEP_RULE_NOT_SELF || c.rule > LJ_STEP_RULE_BY_OWNER)
    return fail(err, LJ_EINVAL, fmt::format("no rule {}", c.rule));
  // A negative tolerance would take every live owner for another process.
  if (c.start_tolerance_ms < 0) return fail(err, LJ_EINVAL, "start_tolerance_ms is negative");
  if (c.min_age_ms > ms_most || c.min_age_ms < -ms_most)
    return fail(err, LJ_EINVAL, fmt::format("a minimum age of {} ms is out of range", c.min_age_ms));
  out.node = std::string(node);
  out.owner = std::string(owner);
  out.before = time_of_ns(c.before_ns);
  out.now = time_of_ns(c.now_ns);
  out.bound_ns = c.bound_ms * 1000000;
  out.rule = static_cast<OwnerRule>(c.rule);
  out.judge = owner_judge_of(owner_state, payload, c.start_tolerance_ms, stopped);
  out.min_age_ns = c.min_age_ms * 1000000;  // a negative one is resolve()'s to refuse
  out.self_pid = c.self_pid;                // and a self_pid out of range
  return LJ_OK;
}

// in (an options struct holding `rules`) read by its version into today's layout: the
// versions 1..N of its flat layout through flat and convert (old_layouts.hpp), version
// N+1 with its rules read by their own version. NULL: defaults. LJ_EVERSION for a
// version of 0 or past N+1, or rules of such a version.
template <typename T, typename Flat, std::size_t N, typename Convert>
int read_rule_options(T& out, const T* in, const T& defaults, const OptionsVersions<Flat, N>& flat, Convert convert,
                      lj_error_t** err) {
  out = defaults;
  if (in == nullptr) return LJ_OK;
  std::uint32_t version = 0;
  std::memcpy(&version, static_cast<const void*>(in), sizeof version);
  if (version >= 1 && version <= N) {
    Flat f;
    if (int rc = read_options(f, reinterpret_cast<const Flat*>(in), flat, err); rc != LJ_OK) return rc;
    out = convert(f);
    return LJ_OK;
  }
  if (version != N + 1)
    return fail(err, LJ_EVERSION,
                fmt::format("{} version {} is unknown (this library reads versions 1 to {})", flat.name, version, N + 1));
  std::memcpy(static_cast<void*>(&out), static_cast<const void*>(in), sizeof(T));
  return read_options(out.rules, &in->rules, rules_versions, err);
}

// The lj_x_options_init of such a struct: an older version's defaults in its flat
// layout, written only over the bytes that version has; today's in today's.
template <typename T, typename Flat, std::size_t N>
int init_rule_options(T* opts, std::uint32_t version, const T& defaults, const OptionsVersions<Flat, N>& flat) {
  if (opts == nullptr) return LJ_EINVAL;
  if (version >= 1 && version <= N) return init_options(reinterpret_cast<Flat*>(opts), version, flat);
  if (version != N + 1) return LJ_EVERSION;
  *opts = defaults;
  return LJ_OK;
}

}  // namespace leasejudge::capi
