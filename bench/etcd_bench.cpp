// leasejudge-bench-etcd: one sweep contender over a real etcd cluster, in a process of
// its own (its peak RSS is its own).
//
//   leasejudge-bench-etcd --endpoints H:P[,H:P...] --contender load --state FILE [--prefix P]
//   leasejudge-bench-etcd --endpoints H:P[,H:P...] --contender clear [--prefix P]
//   leasejudge-bench-etcd --endpoints H:P[,H:P...] --contender NAME --node N --owner TOKEN
//                         --now ISO --before ISO [--bound S] [--prefix P] [--window W]
//                         [--txn-keys K] [--txns-in-flight T] [--decisions FILE]
//
// `load` removes every key under the prefix (default "bench") and writes every key of
// the state (all nodes), 32 writers at once; `clear` only removes them. Each other contender sweeps the keys once, as
// they are (bench/run loads them again before each contender that writes), timing the
// whole end_stale call; it never reads the state file. Contenders:
//   etcd-scan-raw  the node's keys in one range read at one revision, page by page
//                  (EtcdStore::scan), each batch handed to nothing: the ceiling of any
//                  sweep of these keys
//   etcd-dry-run   end_stale with dry_run: the same read, planned batch by batch
//   etcd-sweep     end_stale: the same read, the ends and deletes sent W in flight
//                  (default 256), each at its revision, in txns of K keys (default the
//                  store's, 128; 1: a txn a write), T txns in flight at most (default 16)
//   etcd-per-key   the per-key path (keys() of the prefix, then a get, a plan and a
//                  txn alone for each key of the node)
// The result is one JSON object on stdout, as leasejudge-bench-nats's; a sweep's txns
// (EtcdStore::write_stats) one line on stderr, "etcd-txns {...}".
#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_args.hpp"
#include "leasejudge/store/etcd.hpp"
#include "step_lines.hpp"
#include "store_sweep.hpp"

namespace leasejudge::bench {
namespace {

constexpr std::string_view program = "leasejudge-bench-etcd";

struct EtcdBenchOptions : RuleArgs {
  std::vector<std::string> endpoints;
  std::string prefix = "bench";
  std::size_t window = 256;
  std::size_t txn_keys = EtcdOptions{}.txn_keys;
  std::size_t txns_in_flight = EtcdOptions{}.txns_in_flight;
};

[[noreturn]] void usage(std::string_view why) {
  fmt::print(stderr, "{}: {}\n", program, why);
  fmt::print(stderr,
             "usage: leasejudge-bench-etcd --endpoints H:P[,H:P...] --contender load --state FILE [--prefix P]\n"
             "       leasejudge-bench-etcd --endpoints H:P[,H:P...] --contender etcd-scan-raw|etcd-dry-run|\n"
             "                             etcd-sweep|etcd-per-key --node N --owner TOKEN --now ISO --before ISO\n"
             "                             [--bound S] [--prefix P] [--window W] [--txn-keys K]\n"
             "                             [--txns-in-flight T] [--decisions FILE]\n");
  std::exit(2);
}

EtcdBenchOptions parse(int argc, char** argv) {
  EtcdBenchOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", a));
    const char* v = argv[++i];
    if (rule_arg(o, a, v, usage)) continue;
    if (a == "--endpoints") {
      std::string_view list = v;
      for (std::size_t at = 0; at <= list.size();) {
        std::size_t end = std::min(list.find(',', at), list.size());
        if (end > at) o.endpoints.emplace_back(list.substr(at, end - at));
        at = end + 1;
      }
    } else if (a == "--prefix") {
      o.prefix = v;
    } else if (a == "--window") {
      o.window = static_cast<std::size_t>(number_arg(a, v, usage));
    } else if (a == "--txn-keys") {
      o.txn_keys = static_cast<std::size_t>(number_arg(a, v, usage));
    } else if (a == "--txns-in-flight") {
      o.txns_in_flight = static_cast<std::size_t>(number_arg(a, v, usage));
    } else {
      usage(fmt::format("unknown option {}", a));
    }
  }
  if (o.endpoints.empty() || o.contender.empty()) usage("--endpoints and --contender are required");
  if (o.contender == "clear") return o;
  if (o.contender == "load" ? o.state.empty() : (o.rules.node.empty() || o.rules.owner.empty() || !o.rules.have_now || !o.rules.have_before))
    usage("load needs --state; a sweep needs --node, --owner, --now and --before");
  return o;
}

std::unique_ptr<EtcdStore> open(const EtcdBenchOptions& o) {
  EtcdOptions eo;
  eo.endpoints = o.endpoints;
  eo.prefix = o.prefix;
  eo.request_timeout = std::chrono::milliseconds(10000);
  eo.txn_keys = o.txn_keys;
  eo.txns_in_flight = o.txns_in_flight;
  auto opened = EtcdStore::open(eo);
  if (!opened) store_bench_fail(program, opened.error().message);
  return std::move(opened).value();
}

// Remove every key under the prefix, each at the revision scanned.
void clear(EtcdStore& store) {
  auto pipe = store.pipeline();
  Status read = store.scan("", [&](const ScanBatch& b) {
    for (const auto& e : b.entries) pipe->remove(b.buffer.substr(e.key_offset, e.key_len), e.revision);
    return Status::success();
  });
  if (!read) store_bench_fail(program, fmt::format("clearing: {}", read.error().message));
  while (auto out = pipe->next()) {
    if (out->kind != WriteOutcome::Kind::done) store_bench_fail(program, "clearing: a delete did not land");
  }
}

// Remove every key under the prefix, then write the state's, 32 writers at once, each
// over a store of its own: etcd commits concurrent writes in one batch.
void load(const EtcdBenchOptions& o, EtcdStore& store, const StepLines& lines) {
  clear(store);
  std::atomic<std::size_t> next{0}, failed{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 32; ++w) {
    writers.emplace_back([&] {
      auto mine = open(o);
      for (std::size_t i = next++; i < lines.lines.size(); i = next++) {
        const StepLine& l = lines.lines[i];
        if (!mine->put(lines.key(l), lines.value(l))) ++failed;
      }
    });
  }
  for (auto& t : writers) t.join();
  if (failed > 0) store_bench_fail(program, fmt::format("loading: {} writes failed", failed.load()));
}

int run(const EtcdBenchOptions& o) {
  auto store = open(o);
  if (o.contender == "load") {
    auto lines = read_step_lines(o.state);
    if (!lines) store_bench_fail(program, lines.error().message);
    load(o, *store, *lines);
    fmt::print(R"({{"loaded":{}}})"
               "\n",
               lines->lines.size());
    return 0;
  }
  if (o.contender == "clear") {
    clear(*store);
    return 0;
  }
  if (o.contender == "etcd-scan-raw") {
    run_scan_raw(program, "etcd-scan-raw", *store, o);
    return 0;
  }
  if (o.contender != "etcd-dry-run" && o.contender != "etcd-sweep" && o.contender != "etcd-per-key")
    usage(fmt::format("unknown contender {}", o.contender));
  run_end_stale(program, *store, o, o.window);
  const EtcdWriteStats w = store->write_stats();
  fmt::print(stderr, R"(etcd-txns {{"txns":{},"writes":{},"resent":{},"split":{},"most_in_flight":{},"txn_keys":{}}})"
             "\n",
             w.txns, w.writes, w.resent, w.split, w.most_in_flight, w.txn_keys);
  return 0;
}

}  // namespace
}  // namespace leasejudge::bench

int main(int argc, char** argv) {
  return leasejudge::bench::run(leasejudge::bench::parse(argc, argv));
}
