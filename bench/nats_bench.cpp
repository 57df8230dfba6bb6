// leasejudge-bench-nats: one sweep contender over a real nats-server, in a process of its
// own (its peak RSS is its own).
//
//   leasejudge-bench-nats --url URL --contender load --state FILE [--bucket B] [--replicas R]
//   leasejudge-bench-nats --url URL --contender NAME --node N --owner TOKEN --now ISO
//                         --before ISO [--bound S] [--bucket B] [--window W] [--decisions FILE]
//
// `load` purges the bucket (default "bench", created with R replicas when missing) and
// loads every key of the state (all nodes). Each other contender sweeps the bucket once,
// as it is (bench/run loads it again before each contender that writes), timing the
// whole end_stale call; it never reads the state file. Contenders:
//   nats-scan-raw  the node's keys in one filtered pass (NatsStore::scan), each batch
//                  handed to nothing: the ceiling of any sweep of this bucket
//   nats-dry-run   end_stale with dry_run: the node's keys in one filtered pass (a KV
//                  watch), planned batch by batch; nothing written
//   nats-sweep     end_stale: the same read, the ends and deletes sent through JetStream
//                  async publishes, W in flight (default 256), each at its revision
//   nats-per-key   the per-key path (a store without a bulk read or a pipeline): every
//                  key of the bucket listed, then a get, a plan and a synchronous write
//                  for each key of the node
// "keys" is the number of the node's keys a sweep reads (keys/s counts those), and
// "value_bytes" their keys' and values' bytes. The result is one JSON object on stdout,
// as leasejudge-bench-sweep's, with the writes made, writes/s (over the apply time) and
// the read, plan and apply times; with --decisions, each key's action, why and said,
// sorted by key.
#include <fmt/format.h>
#include <nats/nats.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_args.hpp"
#include "leasejudge/clock.hpp"
#include "leasejudge/step.hpp"
#include "leasejudge/store/nats.hpp"
#include "leasejudge/sweep.hpp"
#include "step_lines.hpp"
#include "store_sweep.hpp"

namespace leasejudge::bench {
namespace {

struct NatsBenchOptions : RuleArgs {
  std::string url, bucket = "bench";
  int replicas = 1;
  std::size_t window = 256;
};

[[noreturn]] void fail(std::string_view why) {
  fmt::print(stderr, "leasejudge-bench-nats: {}\n", why);
  std::exit(1);
}

[[noreturn]] void usage(std::string_view why) {
  fmt::print(stderr, "leasejudge-bench-nats: {}\n", why);
  fmt::print(stderr,
             "usage: leasejudge-bench-nats --url URL --contender load --state FILE [--bucket B] [--replicas R]\n"
             "       leasejudge-bench-nats --url URL --contender nats-dry-run|nats-sweep|nats-per-key --node N\n"
             "                             --owner TOKEN --now ISO --before ISO [--bound S] [--bucket B] [--window W]\n"
             "                             [--decisions FILE]\n");
  std::exit(2);
}

NatsBenchOptions parse(int argc, char** argv) {
  NatsBenchOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", a));
    const char* v = argv[++i];
    if (rule_arg(o, a, v, usage))
      continue;
    else if (a == "--url")
      o.url = v;
    else if (a == "--bucket")
      o.bucket = v;
    else if (a == "--replicas")
      o.replicas = static_cast<int>(number_arg(a, v, usage));
    else if (a == "--window")
      o.window = static_cast<std::size_t>(number_arg(a, v, usage));
    else
      usage(fmt::format("unknown option {}", a));
  }
  if (o.url.empty() || o.contender.empty()) usage("--url and --contender are required");
  if (o.contender == "load" ? o.state.empty() : (o.rules.node.empty() || o.rules.owner.empty() || !o.rules.have_now || !o.rules.have_before))
    usage("load needs --state; a sweep needs --node, --owner, --now and --before");
  return o;
}

// Purge the bucket and load every key of the state, many publishes in flight over a
// connection of its own.
void load(const NatsBenchOptions& o, const StepLines& lines) {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  if (natsConnection_ConnectTo(&nc, o.url.c_str()) != NATS_OK) fail(fmt::format("cannot connect to {}", o.url));
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 60000;
  jo.PublishAsync.MaxPending = 4096;
  jo.PublishAsync.StallWait = 60000;
  if (natsConnection_JetStream(&js, nc, &jo) != NATS_OK) fail("cannot open JetStream");
  std::string stream = "KV_" + o.bucket;
  natsStatus s = js_PurgeStream(js, stream.c_str(), nullptr, nullptr);
  if (s != NATS_OK) fail(fmt::format("purging {}: {}", stream, natsStatus_GetText(s)));
  std::string subject;
  for (const StepLine& l : lines.lines) {
    subject.assign("$KV.").append(o.bucket).append(".").append(lines.key(l));
    std::string_view v = lines.value(l);
    s = js_PublishAsync(js, subject.c_str(), v.data(), static_cast<int>(v.size()), nullptr);
    if (s != NATS_OK) fail(fmt::format("loading {}: {}", subject, natsStatus_GetText(s)));
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 120000;
  if (js_PublishAsyncComplete(js, &po) != NATS_OK) fail("loading the bucket: not every write was acknowledged");
  natsMsgList pending{};
  if (js_PublishAsyncGetPendingList(&pending, js) == NATS_OK) {
    natsMsgList_Destroy(&pending);
    fail("loading the bucket: writes left unacknowledged");
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
}

int run(const NatsBenchOptions& o) {
  NatsOptions no;
  no.urls = {o.url};
  no.bucket = o.bucket;
  no.create_bucket = true;
  no.replicas = o.replicas;
  no.request_timeout = std::chrono::milliseconds(10000);
  auto opened = NatsStore::open(no);
  if (!opened) fail(opened.error().message);
  NatsStore& nats = **opened;
  if (o.contender == "load") {
    auto lines = read_step_lines(o.state);
    if (!lines) fail(lines.error().message);
    load(o, *lines);
    fmt::print(R"({{"loaded":{}}})"
               "\n",
               lines->lines.size());
    return 0;
  }
  if (o.contender == "nats-scan-raw") {
    run_scan_raw("leasejudge-bench-nats", "nats-scan-raw", nats, o);
    return 0;
  }
  if (o.contender != "nats-dry-run" && o.contender != "nats-sweep" && o.contender != "nats-per-key")
    usage(fmt::format("unknown contender {}", o.contender));
  run_end_stale("leasejudge-bench-nats", nats, o, o.window);
  return 0;
}

}  // namespace
}  // namespace leasejudge::bench

int main(int argc, char** argv) {
  return leasejudge::bench::run(leasejudge::bench::parse(argc, argv));
}
