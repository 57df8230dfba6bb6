// Network partitions at the kernel level (tests/nemesis.sh) on three etcd members, each
// in a network namespace of its own bound to its own address; the test's driver in the
// lab's control namespace, every client in a namespace of its own:
//   - the lock's history (tests/lock_history.hpp): three holders, each in a client
//     namespace, taking the lock with a lease of 2 s of real time (the key bound to an
//     etcd lease of 2 s, which the cluster counts in real time), while the nemesis
//     throws in turn a member isolated, the leader isolated, a majority/minority
//     split, a one-way cut, a flapping partition, the current holder cut off and a
//     lossy link, healing between; the counts are said, the history checked;
//   - the isolated holder (tests/partition_run.hpp): a real `leasejudge lock run` cut
//     from every member reports its loss before its key expires with its etcd lease
//     and another holder takes the lock; no clock is faked: the cluster expires the
//     lease by itself, and the margin between the loss and the expiry is said;
//   - sweeps: one whose client is cut mid-apply, one whose leader is isolated
//     mid-apply (tests/sweep_partition.hpp says what is checked; the writes per key
//     are the keys' etcd versions).
// In the plain build only. Bounded by each run's goals and deadlines.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "etcd_server.hpp"
#include "leasejudge/store_url.hpp"
#include "nemesis.hpp"

#if defined(LEASEJUDGE_HAVE_ETCD) && defined(LEASEJUDGE_ETCD_STATUS)

#include <openssl/evp.h>

#include "partition_run.hpp"
#include "sweep_partition.hpp"

using namespace leasejudge;
using namespace leasejudge::test;
using namespace std::chrono_literals;

namespace {

EtcdCluster& cluster() {
  static std::unique_ptr<EtcdCluster> c;
  if (!c) {
    c = std::make_unique<EtcdCluster>(3,
                                      std::vector<ServerPlace>{lab().place("m0"), lab().place("m1"), lab().place("m2")});
    REQUIRE_MESSAGE(c->start(), "the etcd members did not start in their namespaces");
  }
  return *c;
}

std::string url_of(const std::string& prefix) {
  return cluster().url(prefix);
}

std::unique_ptr<EtcdStore> open_prefix(const std::string& prefix) {
  EtcdOptions o;
  o.endpoints = cluster().endpoints();
  o.prefix = prefix;
  o.request_timeout = 2000ms;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  auto s = EtcdStore::open(o);
  while (!s.ok() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
    s = EtcdStore::open(o);
  }
  if (!s.ok()) return nullptr;
  return std::move(s).value();
}

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string unbase64(std::string_view text) {
  std::string out(3 * (text.size() / 4) + 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return {};
  std::size_t len = static_cast<std::size_t>(n);
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --len;  // the padding decoded as zeros
  out.resize(len);
  return out;
}

// How many writes each key under prefix had since its seed: its etcd version (1 at its
// create, one more at each put since) less one; a planted key that is gone was
// deleted once (a key deleted cannot be deleted again at its revision).
std::map<std::string, int> etcd_writes_per_key(const std::string& prefix, const std::vector<Planted>& state) {
  std::string body;
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  const std::string url = "http://" + cluster().endpoint(0) + "/v3/kv/range";
  const std::string request = R"({"key":")" + base64(prefix + "/") + R"(","range_end":")" + base64(prefix + "0") +
                              R"(","limit":0})";
  auto sink = +[](char* p, size_t size, size_t n, void* user) {
    static_cast<std::string*>(user)->append(p, size * n);
    return size * n;
  };
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  REQUIRE_MESSAGE(rc == CURLE_OK, curl_easy_strerror(rc));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(body).get(doc) == simdjson::SUCCESS);
  std::map<std::string, int> out;
  simdjson::dom::array kvs;
  if (doc["kvs"].get(kvs) == simdjson::SUCCESS) {
    for (simdjson::dom::element kv : kvs) {
      std::string_view key, version;
      REQUIRE(kv["key"].get(key) == simdjson::SUCCESS);
      REQUIRE(kv["version"].get(version) == simdjson::SUCCESS);
      out[unbase64(key).substr(prefix.size() + 1)] = std::stoi(std::string(version)) - 1;
    }
  }
  for (const auto& p : state)
    if (out.count(p.key) == 0) out[p.key] = 1;
  return out;
}

// Write the state, several writers at once (etcd commits concurrent writes in one
// batch).
void seed(const std::string& prefix, const std::vector<Planted>& state) {
  constexpr std::size_t writers = 8;
  std::vector<std::thread> threads;
  std::atomic<std::size_t> written{0};
  for (std::size_t w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      auto store = open_prefix(prefix);
      if (!store) return;
      for (std::size_t i = w; i < state.size(); i += writers)
        if (store->put(state[i].key, state[i].value).ok()) ++written;
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(written == state.size());
}

}  // namespace

TEST_SUITE("etcd partitions") {
  TEST_CASE("the lock keeps its history under partitions") {
    REQUIRE_LAB();
    SKIP_WITHOUT_ETCD();
    auto store = open_store_url(url_of("history"));
    REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.error().message));
    const Run run = partition_history_run(100);
    Fleet fleet;
    fleet.urls = url_of("history");
    fleet.bucket = "-";
    fleet.store = store->get();
    fleet.place_holder = [](int slot) { return lab().launch("c" + std::to_string(slot)); };
    // A lease of 2 s of real time: the key's etcd lease, which the cluster counts.
    fleet.holder_args = {"2000"};
    fleet.partitions = partitions_of(lab(), [] { return cluster().leader(); }, 2500ms);
    Outcome out;
    out.history.lease_ns = 2'000'000'000;
    out.history.store_leases = true;
    drive_partition_history(run, fleet, out);
    check_partitions_kept("etcd, 3 members", run, fleet.partitions, out);
  }

  TEST_CASE("a holder cut off from every member reports its loss before its key expires and another takes it") {
    REQUIRE_LAB();
    SKIP_WITHOUT_ETCD();
    auto store = open_store_url(url_of("isolated"));
    REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.error().message));
    IsolatedHolder run;
    run.store = "etcd, 3 members";
    run.url = url_of("isolated");
    run.lease = "2s";
    check_isolated_holder(lab(), run, **store, "job");
  }

  TEST_CASE("sweeps under partitions: the client cut mid-apply, the leader isolated mid-apply") {
    REQUIRE_LAB();
    SKIP_WITHOUT_ETCD();
    for (const bool leader : {false, true}) {
      const std::string prefix = leader ? "steps-leader" : "steps-client";
      SweepUnderPartition s;
      s.store_name = "etcd, 3 members";
      s.fault = leader ? "the leader isolated" : "the sweep's client cut off";
      s.state = test::plant(1500, leader ? 31 : 37);
      s.open = [prefix]() -> std::unique_ptr<Store> { return open_prefix(prefix); };
      seed(prefix, s.state);
      auto store = open_prefix(prefix);
      REQUIRE(store);
      s.seeded = revisions_now(*store, s.state);
      s.inject = [leader]() {
        if (!leader) return lab().isolate("c3");
        const int l = cluster().leader();
        return l >= 0 && lab().isolate("m" + std::to_string(l));
      };
      s.heal = [] { return lab().heal(); };
      s.writes_per_key = [&]() { return etcd_writes_per_key(prefix, s.state); };
      sweep_under_partition(lab(), "c3", s);
    }
  }
}

#else

TEST_CASE("etcd partitions: the etcd store") {
  LJ_REQUIRE_OR_SKIP(false, "this build has no etcd store (libcurl4-openssl-dev was not found)");
}

#endif
