// The C ABI's rules and plan options from the benchmarks' rules, and its entries from a
// state in memory: what the C ABI contenders (capi_contender.cpp) and leasejudge-bench-ab
// (ab.cpp) hand lj_step_plan_*.
#pragma once

#include <cstdint>
#include <vector>

#include "bench_args.hpp"
#include "leasejudge.h"
#include "step_lines.hpp"

namespace leasejudge::bench {

inline std::int64_t ns_of(Instant t) {
  return t.sec * 1000000000LL + t.nsec;
}

// The rules as the C ABI takes them (pointing into rules' strings).
inline lj_step_rules_t c_rules(const Rules& rules) {
  lj_step_rules_t r = LJ_STEP_RULES_INIT;
  r.node = rules.node.data();
  r.node_len = rules.node.size();
  r.owner = rules.owner.data();
  r.owner_len = rules.owner.size();
  r.before_ns = ns_of(rules.before);
  r.now_ns = ns_of(rules.now);
  r.bound_ms = rules.bound_ms;
  r.rule = LJ_STEP_RULE_NOT_SELF;
  return r;
}

inline lj_step_plan_options_t plan_options(const Rules& rules, unsigned threads) {
  lj_step_plan_options_t opts = LJ_STEP_PLAN_OPTIONS_INIT;
  opts.rules = c_rules(rules);
  opts.threads = threads;
  return opts;
}

// Each line's key and value where lines holds them, for lj_step_plan_batch.
inline std::vector<lj_step_entry_t> plan_entries(const StepLines& lines) {
  std::vector<lj_step_entry_t> entries;
  entries.reserve(lines.lines.size());
  for (const StepLine& l : lines.lines)
    entries.push_back(lj_step_entry_t{l.key_offset, l.value_offset, l.key_len, l.value_len, l.revision});
  return entries;
}

}  // namespace leasejudge::bench
