// The sweep contenders every store's benchmark runs (leasejudge-bench-nats, -etcd): the
// bulk read alone, end_stale dry and applied, and the per-key path, each timed over one
// call and printed as one JSON object, the row bench/run reads.
#pragma once

#include <string_view>

#include "bench_args.hpp"
#include "leasejudge/store.hpp"

namespace leasejudge::bench {

// Prints why and exits 1.
[[noreturn]] void store_bench_fail(std::string_view program, std::string_view why);

// `<name>-scan-raw`: the node's keys in one bulk pass (Store::scan), each batch handed
// to nothing: the ceiling of any sweep of this store.
void run_scan_raw(std::string_view program, std::string_view name, Store& store, const RuleArgs& args);

// `<name>-dry-run`, `<name>-sweep`, `<name>-per-key` (name is the contender less its
// last part): end_stale over store, dry or applied; the per-key path sees only the
// store's single-key calls (keys() and a get per key, each write sent alone). window:
// the writes in flight at once. With args.decisions, each key's action, why and said,
// sorted by key.
void run_end_stale(std::string_view program, Store& store, const RuleArgs& args, std::size_t window);

}  // namespace leasejudge::bench
