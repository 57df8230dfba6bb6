// Network partitions at the kernel level (tests/nemesis.sh) on three nats-servers, each
// in a network namespace of its own bound to its own address, with R3 buckets; the
// test's driver in the lab's control namespace, every client in a namespace of its own:
//   - the lock's history (tests/lock_history.hpp): three holders, each in a client
//     namespace, while the nemesis throws in turn a member isolated, the stream leader
//     isolated, a majority/minority split, a one-way cut, a flapping partition, the
//     current holder cut off and a lossy link, healing between; the faults per kind,
//     the handoffs per fault, the overlaps, lost acquisitions and unknowns are said,
//     and the history must keep every rule;
//   - the isolated holder (tests/partition_run.hpp): a real `leasejudge lock run` cut
//     from every member reports its loss before another holder breaks its lock; the
//     other acquirer's clock runs 296 s ahead (libfaketime), inside the 5 minutes of
//     skew every body's lease carries, or it would wait those 5 minutes;
//   - sweeps: one whose client is cut mid-apply, one whose stream leader is isolated
//     mid-apply (tests/sweep_partition.hpp says what is checked).
// Registered for nats-server 2.10.27 and the current one (the sweeps on 2.10.27 only),
// in the plain build only. Bounded by each run's goals and deadlines.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "leasejudge/store/nats.hpp"
#include "leasejudge/sweep.hpp"
#include "nats_server.hpp"
#include "nemesis.hpp"

#if defined(LEASEJUDGE_HAVE_NATS)

#include "partition_run.hpp"
#include "sweep_partition.hpp"

using namespace leasejudge;
using namespace leasejudge::test;
using namespace std::chrono_literals;

namespace {

// The nats-server this run is registered for (LEASEJUDGE_NATS_SERVER, of version
// LEASEJUDGE_NATS_VERSION: "2.10.27", or "2.11+" for 2.11 or later) is there; "" when
// it is, else why not. Without them, the one nats-server_path() finds.
std::string server_missing() {
  const char* exe = std::getenv("LEASEJUDGE_NATS_SERVER");
  const char* want = std::getenv("LEASEJUDGE_NATS_VERSION");
  if (exe != nullptr && ::access(exe, X_OK) != 0)
    return std::string("nats-server ") + (want != nullptr ? want : "") + " is not at " + exe +
           " (bash .ci/fetch-nats-server)";
  if (nats_server_path().empty()) return "nats-server is not installed";
  return {};
}

#define REQUIRE_SERVER() LJ_REQUIRE_OR_SKIP(server_missing().empty(), server_missing())

// Whether version a.b.c is at least b (both "major.minor[.patch]").
bool at_least(const std::string& have, const std::string& least) {
  int h[3] = {0, 0, 0}, l[3] = {0, 0, 0};
  std::sscanf(have.c_str(), "%d.%d.%d", &h[0], &h[1], &h[2]);
  std::sscanf(least.c_str(), "%d.%d.%d", &l[0], &l[1], &l[2]);
  return std::lexicographical_compare(l, l + 3, h, h + 3) || std::equal(l, l + 3, h);
}

NatsCluster& cluster() {
  static std::unique_ptr<NatsCluster> c;
  if (!c) {
    const std::string have = nats_server_version();
    const char* want = std::getenv("LEASEJUDGE_NATS_VERSION");
    if (want != nullptr && *want != '\0') {
      const std::string w = want;
      if (w.back() == '+')
        REQUIRE_MESSAGE(at_least(have, w.substr(0, w.size() - 1)), "nats-server " << have << " is older than " << w);
      else
        REQUIRE_MESSAGE(have == w, "nats-server " << have << " is not " << w);
    }
    c = std::make_unique<NatsCluster>(
        std::vector<ServerPlace>{lab().place("m0"), lab().place("m1"), lab().place("m2")});
    REQUIRE_MESSAGE(c->start(), "the nats-servers did not start in their namespaces");
    MESSAGE("nats-server " << have << ", each member in a network namespace of its own");
  }
  return *c;
}

std::string urls_text() {
  std::string urls;
  for (const auto& u : cluster().urls()) urls += (urls.empty() ? "" : ",") + u;
  return urls;
}

std::unique_ptr<NatsStore> open_bucket(const std::string& bucket, int history = 1) {
  NatsOptions o;
  o.urls = cluster().urls();
  o.bucket = bucket;
  o.create_bucket = true;
  o.replicas = 3;
  o.history = history;
  o.request_timeout = 2000ms;
  o.reconnect_wait = 100ms;
  auto s = open_when_ready(o, 30s);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
  return std::move(s).value();
}

int leader_of(const std::string& bucket) {
  return stream_leader(cluster(), "KV_" + bucket);
}

// How many writes each key had since its seed: the bucket's history of every key,
// watched from its start, less the seed.
std::map<std::string, int> nats_writes_per_key(const std::string& url, const std::string& bucket) {
  std::map<std::string, int> out;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  kvStore* kv = nullptr;
  kvWatcher* w = nullptr;
  kvWatchOptions wo;
  kvWatchOptions_Init(&wo);
  wo.IncludeHistory = true;
  natsStatus st = natsConnection_ConnectTo(&nc, url.c_str());
  if (st == NATS_OK) st = natsConnection_JetStream(&js, nc, nullptr);
  if (st == NATS_OK) st = js_KeyValue(&kv, js, bucket.c_str());
  if (st == NATS_OK) st = kvStore_WatchAll(&w, kv, &wo);
  while (st == NATS_OK) {
    kvEntry* e = nullptr;
    st = kvWatcher_Next(&e, w, 10000);
    if (st != NATS_OK || e == nullptr) break;  // nullptr: every entry so far was sent
    ++out[kvEntry_Key(e)];
    kvEntry_Destroy(e);
  }
  kvWatcher_Destroy(w);
  kvStore_Destroy(kv);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  REQUIRE_MESSAGE(st == NATS_OK, "reading the history of " << bucket << ": " << natsStatus_GetText(st));
  for (auto& [key, n] : out) --n;
  return out;
}

}  // namespace

TEST_SUITE("nats partitions") {
  TEST_CASE("the lock keeps its history under partitions") {
    REQUIRE_LAB();
    REQUIRE_SERVER();
    auto store = open_bucket("history");
    const Run run = partition_history_run(200);
    Fleet fleet;
    fleet.urls = urls_text();
    fleet.bucket = "history";
    fleet.store = store.get();
    fleet.place_holder = [](int slot) { return lab().launch("c" + std::to_string(slot)); };
    fleet.partitions = partitions_of(lab(), [] { return leader_of("history"); }, 2500ms);
    Outcome out;
    drive_partition_history(run, fleet, out);
    check_partitions_kept("nats-server " + nats_server_version() + " R3", run, fleet.partitions, out);
  }

  TEST_CASE("a holder cut off from every member reports its loss before another holder breaks its lock") {
    REQUIRE_LAB();
    REQUIRE_SERVER();
    auto store = open_bucket("isolated");
    IsolatedHolder run;
    run.store = "nats-server " + nats_server_version() + " R3";
    run.url = "nats://";
    for (int i = 0; i < NatsCluster::kNodes; ++i)
      run.url += (i > 0 ? "," : "") + Lab::address("m" + std::to_string(i)) + ":4222";
    run.url += "/isolated";
    run.lease = "2s";
    // The other acquirer's clock 296 s ahead: its judgement of the body's lease
    // (the holder's last renewal + 2 s + 300 s of skew) comes 4 s after the lease's end.
    run.acquirer_env = {"/usr/bin/env", "FAKETIME=+296", "FAKETIME_DONT_FAKE_MONOTONIC=1",
                        "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"};
    LJ_REQUIRE_OR_SKIP(::access("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", R_OK) == 0,
                       "libfaketime is not installed (apt-get install faketime)");
    check_isolated_holder(lab(), run, *store, "job");
  }

  TEST_CASE("sweeps under partitions: the client cut mid-apply, the stream leader isolated mid-apply") {
    REQUIRE_LAB();
    REQUIRE_SERVER();
    for (const bool leader : {false, true}) {
      const std::string bucket = leader ? "steps-leader" : "steps-client";
      auto store = open_bucket(bucket, 4);
      SweepUnderPartition s;
      s.store_name = "nats-server " + nats_server_version() + " R3";
      s.fault = leader ? "the stream leader isolated" : "the sweep's client cut off";
      s.state = test::plant(2000, leader ? 23 : 29);
      NatsOptions o;
      o.urls = cluster().urls();
      o.bucket = bucket;
      o.request_timeout = 2000ms;
      o.reconnect_wait = 100ms;
      s.open = [o]() -> std::unique_ptr<Store> {
        auto opened = open_when_ready(o, 10s);
        if (!opened.ok()) return nullptr;
        return std::move(opened).value();
      };
      std::vector<std::pair<std::string, std::string>> kv;
      for (const auto& p : s.state) kv.emplace_back(p.key, p.value);
      REQUIRE(seed_bucket(cluster().node(0).url(), bucket, kv) == s.state.size());
      s.seeded = revisions_now(*store, s.state);
      s.inject = [&, leader]() {
        if (!leader) return lab().isolate("c3");
        const int l = leader_of(bucket);
        return l >= 0 && lab().isolate("m" + std::to_string(l));
      };
      s.heal = [] { return lab().heal(); };
      s.writes_per_key = [&]() { return nats_writes_per_key(cluster().node(0).url(), bucket); };
      sweep_under_partition(lab(), "c3", s);
    }
  }
}

#else

TEST_CASE("nats partitions: the NATS store") {
  LJ_REQUIRE_OR_SKIP(false, "leasejudge was built without libnats (LEASEJUDGE_NATS=OFF)");
}

#endif
