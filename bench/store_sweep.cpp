// The sweep contenders shared by the stores' benchmarks (store_sweep.hpp).
#include "store_sweep.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "leasejudge/step.hpp"
#include "leasejudge/sweep.hpp"

namespace leasejudge::bench {
namespace {

// The per-key path: only the store's single-key calls, so that scan and pipeline are
// the defaults (keys + get, each write when it is sent).
class PerKey final : public Store {
 public:
  explicit PerKey(Store& inner) : inner_(inner) {}
  Result<std::vector<std::string>> keys() override { return inner_.keys(); }
  Result<std::optional<StoreEntry>> get(std::string_view k) override { return inner_.get(k); }
  Result<Revision> update(std::string_view k, std::string_view v, Revision r) override {
    return inner_.update(k, v, r);
  }
  Result<Revision> create(std::string_view k, std::string_view v) override { return inner_.create(k, v); }
  Status remove(std::string_view k, Revision r) override { return inner_.remove(k, r); }

 private:
  Store& inner_;
};

}  // namespace

void store_bench_fail(std::string_view program, std::string_view why) {
  fmt::print(stderr, "{}: {}\n", program, why);
  std::exit(1);
}

void run_scan_raw(std::string_view program, std::string_view name, Store& store, const RuleArgs& args) {
  ScanStats st;
  auto t0 = std::chrono::steady_clock::now();
  Status done = store.scan(
      args.rules.node + ".", [](const ScanBatch&) { return Status::success(); }, {}, &st);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!done) store_bench_fail(program, fmt::format("scan: {}", done.error().message));
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print(R"({{"contender":"{}","keys":{},"threads":1,"seconds":{:.9f},"reps":1,"value_bytes":{},)"
             R"("peak_rss_kb":{},"writes_per_s":0,"read_s":{:.6f},"waits":{}}})"
             "\n",
             name, st.keys, seconds, st.bytes, ru.ru_maxrss, seconds, st.waits);
}

void run_end_stale(std::string_view program, Store& inner, const RuleArgs& o, std::size_t window) {
  const bool per_key_path = o.contender.ends_with("-per-key");
  PerKey per_key(inner);
  Store& store = per_key_path ? static_cast<Store&>(per_key) : inner;
  SweepOptions opts;
  opts.rules = step_rules(o.rules);
  opts.dry_run = o.contender.ends_with("-dry-run");
  opts.window = window;
  std::vector<std::string> decided;  // key \t action \t why \t said
  opts.on_key = [&](const SweepKey& k) {
    if (o.decisions.empty()) return;
    decided.push_back(fmt::format("{}\t{}\t{}\t{}", k.key, step_action_name(k.verdict.action), k.why, k.said));
  };
  auto t0 = std::chrono::steady_clock::now();
  SweepReport report = end_stale(store, o.rules.node, o.rules.before, {}, opts);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!report.status) store_bench_fail(program, fmt::format("end_stale: {}", report.status.error().message));
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  if (!o.decisions.empty()) {
    std::sort(decided.begin(), decided.end());
    std::FILE* f = std::fopen(o.decisions.c_str(), "wb");
    if (f == nullptr) store_bench_fail(program, fmt::format("cannot write {}", o.decisions));
    for (const auto& d : decided) std::fprintf(f, "%s\n", d.c_str());
    if (std::fclose(f) != 0) store_bench_fail(program, fmt::format("cannot write {}", o.decisions));
  }
  const SweepCounts& c = report.counts;
  const SweepStats& st = report.stats;
  fmt::print(R"({{"contender":"{}","keys":{},"threads":1,"seconds":{:.9f},"reps":1,"value_bytes":{},"peak_rss_kb":{},)"
             R"("end":{},"delete":{},"leave":{},"writes":{},"writes_per_s":{:.0f},"max_in_flight":{},)"
             R"("read_s":{:.6f},"plan_s":{:.6f},"apply_s":{:.6f},"waits":{},"retries":{}}})"
             "\n",
             o.contender, st.keys, seconds, st.bytes, ru.ru_maxrss, c.ends, c.deletes,
             c.left + c.no_step + c.other_node + c.changed, st.writes,
             st.writes > 0 && st.apply_ns > 0 ? static_cast<double>(st.writes) / (st.apply_ns / 1e9) : 0.0,
             st.max_in_flight, st.read_ns / 1e9, st.plan_ns / 1e9, st.apply_ns / 1e9, st.waits, st.retries);
}

}  // namespace leasejudge::bench
