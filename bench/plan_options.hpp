// The C ABI's plan options from the benchmarks' rule arguments, and its entries from a
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

inline lj_step_plan_options_t plan_options(const RuleArgs& args, unsigned threads) {
  lj_step_plan_options_t opts = LJ_STEP_PLAN_OPTIONS_INIT;
  opts.node = args.node.data();
  opts.node_len = args.node.size();
  opts.owner = args.owner.data();
  opts.owner_len = args.owner.size();
  opts.before_ns = ns_of(args.before);
  opts.now_ns = ns_of(args.now);
  opts.bound_seconds = args.bound_s;
  opts.rule = LJ_STEP_RULE_NOT_SELF;
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
