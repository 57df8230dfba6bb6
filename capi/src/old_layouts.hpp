// The option structs as they were before their rules became one member
// (lj_step_rules_t): lj_step_plan_options_t versions 1-2 and lj_sweep_options_t
// versions 1-3, the rule fields side by side, the bound in whole seconds. A program
// built against an older header still passes them: each is read by its version over
// its own defaults, then converted into today's struct by one function. Private to
// capi/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "leasejudge.h"
#include "options.hpp"

namespace leasejudge::capi {

// lj_step_plan_options_t, versions 1 and 2.
struct PlanOptionsFlat {
  std::uint32_t version;
  const char* node;
  size_t node_len;
  const char* owner;
  size_t owner_len;
  std::int64_t before_ns;
  std::int64_t now_ns;
  std::int64_t bound_seconds;
  int rule;
  std::int64_t start_tolerance_ms;
  int (*owner_state)(lj_holder_state_t* out_state, const char* token, size_t token_len, void* payload);
  void* payload;
  std::uint32_t threads;
  std::int64_t min_age_ms;  // version 2
};
inline const OptionsVersions<PlanOptionsFlat, 2> plan_flat_versions{
    "lj_step_plan_options_t",
    {2, nullptr, 0, nullptr, 0, LJ_TIME_DEFAULT, LJ_TIME_DEFAULT, 3600, LJ_STEP_RULE_BY_OWNER, 5000, nullptr, nullptr,
     1, 0},
    {offsetof(PlanOptionsFlat, min_age_ms), sizeof(PlanOptionsFlat)}};

// lj_sweep_options_t, versions 1 to 3.
struct SweepOptionsFlat {
  std::uint32_t version;
  const char* owner;
  size_t owner_len;
  std::int64_t before_ns;
  std::int64_t now_ns;
  std::int64_t bound_seconds;
  int rule;
  std::int64_t start_tolerance_ms;
  int (*owner_state)(lj_holder_state_t* out_state, const char* token, size_t token_len, void* payload);
  int (*log)(const char* line, size_t line_len, void* payload);
  int (*live)(int* out_live, const char* id, size_t id_len, void* payload);
  void* payload;
  std::int32_t attempts;
  std::int64_t retry_ms;
  std::uint32_t write_window;  // version 2
  std::uint32_t batch_keys;
  int dry_run;
  int (*on_key)(const lj_sweep_key_t* key, void* payload);
  std::int64_t min_age_ms;  // version 3
};
inline const OptionsVersions<SweepOptionsFlat, 3> sweep_flat_versions{
    "lj_sweep_options_t",
    {3, nullptr, 0, LJ_TIME_DEFAULT, LJ_TIME_DEFAULT, 3600, LJ_STEP_RULE_BY_OWNER, 5000, nullptr, nullptr, nullptr,
     nullptr, 6, 5000, 256, 4096, 0, nullptr, 0},
    {offsetof(SweepOptionsFlat, write_window), offsetof(SweepOptionsFlat, min_age_ms), sizeof(SweepOptionsFlat)}};

// A bound in whole seconds as milliseconds; one past the range of nanoseconds stays
// past it, for the converter to refuse as it always did.
inline std::int64_t bound_ms_of_seconds(std::int64_t s) {
  constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max() / 1000;
  if (s > most) return std::numeric_limits<std::int64_t>::max();
  if (s < -most) return std::numeric_limits<std::int64_t>::min();
  return s * 1000;
}

// The rule fields of an old layout as today's rules (the node: the plan's, or none).
template <typename Flat>
lj_step_rules_t rules_of_flat(const Flat& f, const char* node, size_t node_len) {
  lj_step_rules_t r = LJ_STEP_RULES_INIT;
  r.node = node;
  r.node_len = node_len;
  r.owner = f.owner;
  r.owner_len = f.owner_len;
  r.before_ns = f.before_ns;
  r.now_ns = f.now_ns;
  r.bound_ms = bound_ms_of_seconds(f.bound_seconds);
  r.rule = f.rule;
  r.start_tolerance_ms = f.start_tolerance_ms;
  r.min_age_ms = f.min_age_ms;
  return r;
}

inline lj_step_plan_options_t plan_options_of(const PlanOptionsFlat& f) {
  lj_step_plan_options_t o = LJ_STEP_PLAN_OPTIONS_INIT;
  o.rules = rules_of_flat(f, f.node, f.node_len);
  o.owner_state = f.owner_state;
  o.payload = f.payload;
  o.threads = f.threads;
  return o;
}

inline lj_sweep_options_t sweep_options_of(const SweepOptionsFlat& f) {
  lj_sweep_options_t o = LJ_SWEEP_OPTIONS_INIT;
  o.rules = rules_of_flat(f, nullptr, 0);
  o.owner_state = f.owner_state;
  o.log = f.log;
  o.live = f.live;
  o.payload = f.payload;
  o.attempts = f.attempts;
  o.retry_ms = f.retry_ms;
  o.write_window = f.write_window;
  o.batch_keys = f.batch_keys;
  o.dry_run = f.dry_run;
  o.on_key = f.on_key;
  return o;
}

}  // namespace leasejudge::capi
