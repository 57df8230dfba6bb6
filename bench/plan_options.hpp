// The C ABI's plan options from the benchmarks' rule arguments: what the C ABI contenders
// (capi_contender.cpp) and leasejudge-bench-ab (ab.cpp) hand lj_step_plan_*.
#pragma once

#include <cstdint>

#include "bench_args.hpp"
#include "leasejudge.h"

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

}  // namespace leasejudge::bench
