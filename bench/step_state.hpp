// A generated steps state for the sweep benchmarks: N keys over M nodes, written as the
// JSON lines `leasejudge step plan` reads ({"key":..,"revision":..,"value":{..}} per line).
//
// The mix is what a build node's steps state holds after a while: most steps finished,
// running steps of this process, of gone processes (with and without an owner, hand-started
// and pulled asks), asks younger and older than the step bound, hand-started steps from
// before and after this process's start, some values that are no step (wrong types, no
// object, malformed times) and keys of other nodes or no node. A few keys sit exactly on a
// rule's edge (an ask exactly at the bound, a step started exactly at `before`, a UUID id
// with a hand tool, duplicate and case-folded field names) so the agreement check between
// the Go baseline and leasejudge covers them. Every time is well-formed as Go 1.19 and the
// strict Go 1.20 reader both read it, so the two agree by construction on what a time is.
//
// The same seed gives the same bytes: states are cached by their parameters.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "bench_args.hpp"
#include "leasejudge/clock.hpp"

namespace leasejudge::bench {

struct StepStateSpec {
  std::uint64_t keys = 10000;
  std::uint32_t nodes = 4;          // this node and nodes-1 others
  // The rules the state is written around: the sweeping node, this process's owner
  // token, the sweep's now, this process's start (before) and the step bound.
  Rules rules;
  std::uint64_t seed = 1;
  // Share of keys on other nodes (or with no node), in percent.
  std::uint32_t other_node_pct = 8;
  // Values' sizes are drawn uniformly from [min_value, max_value] bytes (a value with
  // an ask and a long owner may come out a little longer than min_value asks).
  std::uint32_t min_value = 200;
  std::uint32_t max_value = 800;
  // Share of keys, in percent, that test a reader of Go's encoding/json at its edges
  // (folded and repeated field names, number limits, nesting, surrogates, bytes that are
  // no JSON): 0 in the benchmarks' states, set for agreement runs.
  std::uint32_t edge_pct = 0;
};

// What the generator wrote, by the kind it meant each key to be (for the report).
struct StepStateCounts {
  std::uint64_t keys = 0, value_bytes = 0;
  std::uint64_t other_node = 0, finished = 0, no_step = 0;
  std::uint64_t own = 0, other_owner = 0, other_owner_ask = 0;
  std::uint64_t ask_old = 0, ask_young = 0, hand_before = 0, hand_after = 0;
  std::uint64_t edge = 0;
};

// Write the state to out; false when a write fails (errno says why).
bool write_step_state(const StepStateSpec& spec, std::FILE* out, StepStateCounts* counts);

}  // namespace leasejudge::bench
