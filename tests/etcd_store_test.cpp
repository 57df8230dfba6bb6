// The etcd store on real etcd clusters (1 and 3 members on 127.0.0.1, started here):
// the store contract every store keeps, the scan at one revision while another client
// writes, writes in flight when a member dies (done or unknown, never a wrong
// changed), a cluster down as a store error naming the endpoint, and four processes
// racing for a lock whose holder is provably gone: never two holders, fencing tokens
// increasing.
#include "leasejudge/store/etcd.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dead_pid.h"
#include "etcd_server.hpp"
#include "leasejudge/lj_store.h"
#include "leasejudge/lock.hpp"
#include "leasejudge/store_url.hpp"
#include "racer.hpp"
#include "store_contract.hpp"

#if defined(LEASEJUDGE_HAVE_ETCD)

using namespace leasejudge;
using namespace leasejudge::test;

namespace {

using Steady = std::chrono::steady_clock;

const std::string lock_key = "locks.cache";

}  // namespace

TEST_SUITE("etcd store") {
  TEST_CASE("the store contract on one member") {
    SKIP_WITHOUT_ETCD();
    auto s = open_etcd(shared_etcd_cluster(1).endpoints(), fresh_etcd_prefix("t"));
    test::check_store_contract(*s);
  }

  TEST_CASE("the store contract on three members") {
    SKIP_WITHOUT_ETCD();
    auto s = open_etcd(shared_etcd_cluster(3).endpoints(), fresh_etcd_prefix("t"));
    test::check_store_contract(*s);
  }

  TEST_CASE("options out of range are refused before any connection") {
    EtcdOptions o;
    o.endpoints = {"127.0.0.1:1"};
    CHECK(EtcdStore::open(o).code() == Errc::invalid_argument);  // no prefix
    o.prefix = "p";
    o.request_timeout = std::chrono::milliseconds(0);
    CHECK(EtcdStore::open(o).code() == Errc::invalid_argument);
    o.request_timeout = std::chrono::milliseconds(1000);
    o.endpoints = {""};
    CHECK(EtcdStore::open(o).code() == Errc::invalid_argument);
  }

  TEST_CASE("keys and values are bytes, and keys are namespaced by the prefix") {
    SKIP_WITHOUT_ETCD();
    std::string prefix = fresh_etcd_prefix("t");
    auto s = open_etcd(shared_etcd_cluster(1).endpoints(), prefix);
    auto beside = open_etcd(shared_etcd_cluster(1).endpoints(), prefix + "x");  // a prefix that starts like ours
    const std::string key("k\xff\x01 /é", 7), value(std::string("\0\x80\xc3(", 4));
    REQUIRE(s->create(key, value).ok());
    REQUIRE(beside->create("other", "o").ok());
    auto keys = s->keys();
    REQUIRE(keys.ok());
    CHECK(*keys == std::vector<std::string>{key});
    auto got = s->get(key);
    REQUIRE(got.ok());
    CHECK((**got).value == value);
    CHECK(s->get("").code() == Errc::invalid_argument);
    CHECK(s->create("", "v").code() == Errc::invalid_argument);
  }

  TEST_CASE("a scan reads at one revision across pages while another client writes") {
    SKIP_WITHOUT_ETCD();
    std::string prefix = fresh_etcd_prefix("t");
    auto s = open_etcd(shared_etcd_cluster(3).endpoints(), prefix);
    auto other = open_etcd({shared_etcd_cluster(3).endpoint(2)}, prefix);
    std::map<std::string, Revision> before;
    for (int i = 0; i < 50; ++i) {
      std::string key = fmt::format("n.{:03}", i);
      auto r = s->create(key, "old");
      REQUIRE(r.ok());
      before[key] = *r;
    }
    ScanOptions options;
    options.batch_keys = 7;
    std::map<std::string, std::pair<std::string, Revision>> seen;
    int batches = 0;
    Status st = s->scan(
        "n.",
        [&](const ScanBatch& b) {
          if (batches++ == 0) {  // after the first page: another client moves a later key and adds one
            REQUIRE(other->update("n.040", "new", before["n.040"]).ok());
            REQUIRE(other->create("n.999", "late").ok());
          }
          for (const BatchEntry& e : b.entries) {
            seen[std::string(b.buffer.substr(e.key_offset, e.key_len))] = {
                std::string(b.buffer.substr(e.value_offset, e.value_len)), e.revision};
          }
          return Status::success();
        },
        options);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message));
    CHECK(batches == 8);  // 50 keys, 7 a page
    REQUIRE(seen.size() == 50);
    for (auto& [key, rev] : before) {
      CHECK(seen[key].first == "old");
      CHECK(seen[key].second == rev);
    }
    CHECK(seen.count("n.999") == 0);
  }

  TEST_CASE("a member killed with writes in flight: each write done, unknown or failed, and done ones are there") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster c(3);
    REQUIRE(c.start());
    std::string prefix = fresh_etcd_prefix("t");
    auto seed = open_etcd(c.endpoints(), prefix);
    std::vector<Revision> revs;
    for (int i = 0; i < 300; ++i) {
      auto r = seed->create(fmt::format("k.{:03}", i), "v0");
      REQUIRE(r.ok());
      revs.push_back(*r);
    }
    auto s = open_etcd({c.endpoint(0)}, prefix);
    PipelineOptions po;
    po.window = 64;
    auto p = s->pipeline(po);
    std::vector<WriteOutcome> out;
    for (int i = 0; i < 300; ++i) {
      p->update(fmt::format("k.{:03}", i), "v1", revs[i]);
      if (i == 150) {  // the first 50 answered, then the member dies with 100 in flight or queued
        for (int j = 0; j < 50; ++j) out.push_back(*p->next());
        c.kill(0);
      }
    }
    std::map<WriteOutcome::Kind, int> count;
    while (auto o = p->next()) out.push_back(*o);
    REQUIRE(out.size() == 300);
    REQUIRE(c.healthy(std::chrono::seconds(20)));  // the two left have a leader
    auto after = open_etcd({c.endpoint(1), c.endpoint(2)}, prefix);
    for (int i = 0; i < 300; ++i) {
      ++count[out[i].kind];
      auto got = after->get(fmt::format("k.{:03}", i));
      REQUIRE(got.ok());
      if (out[i].kind == WriteOutcome::Kind::done) {
        CHECK((**got).value == "v1");
        CHECK((**got).revision == out[i].revision);
      } else if (out[i].kind == WriteOutcome::Kind::failed) {
        CHECK((**got).value == "v0");  // a failed write did not land
      }
    }
    MESSAGE("done " << count[WriteOutcome::Kind::done] << ", unknown " << count[WriteOutcome::Kind::unknown]
                    << ", failed " << count[WriteOutcome::Kind::failed]);
    CHECK(count[WriteOutcome::Kind::changed] == 0);
    CHECK(count[WriteOutcome::Kind::done] >= 50);
    CHECK(count[WriteOutcome::Kind::unknown] + count[WriteOutcome::Kind::failed] > 0);
    CHECK(p->broken());
  }

  TEST_CASE("the cluster down: a store error naming the endpoint; a dead endpoint passed over for a live one") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster c(1);
    REQUIRE(c.start());
    int dead = test::free_port();
    std::string dead_endpoint = "127.0.0.1:" + std::to_string(dead);
    auto s = open_etcd({dead_endpoint, c.endpoint(0)}, "down");
    REQUIRE(s->create("k", "v").ok());
    CHECK(s->endpoint() == "http://" + c.endpoint(0));
    c.kill(0);
    auto got = s->get("k");
    REQUIRE(got.code() == Errc::store);
    CHECK(got.error().message.find("etcd at http://") == 0);
    CHECK(got.error().message.find("127.0.0.1:") != std::string::npos);
    auto w = s->create("k2", "v");
    CHECK(w.code() == Errc::store);  // refused connections: nothing was sent
    EtcdOptions o;
    o.endpoints = {dead_endpoint};
    o.prefix = "down";
    auto none = EtcdStore::open(o);
    REQUIRE(none.code() == Errc::store);
    CHECK(none.error().message.find(dead_endpoint) != std::string::npos);
  }

  TEST_CASE("a member that stops answering: a read times out, a write is unknown; a killed one breaks the watch") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster c(1);
    REQUIRE(c.start());
    EtcdOptions o;
    o.endpoints = {c.endpoint(0)};
    o.prefix = "stop";
    o.request_timeout = std::chrono::milliseconds(500);
    auto opened = EtcdStore::open(o);
    REQUIRE(opened.ok());
    auto& s = *opened;
    auto r = s->create("k", "v");
    REQUIRE(r.ok());
    auto w = s->watch("");
    REQUIRE(w.ok());
    REQUIRE(c.pause(0));
    CHECK(s->get("k").code() == Errc::timeout);
    auto u = s->update("k", "v2", *r);
    CHECK(u.code() == Errc::unknown_outcome);
    CHECK(u.error().message.find("etcd at http://" + c.endpoint(0)) == 0);
    auto p = s->pipeline();
    p->update("k", "v3", *r);
    auto o1 = p->next();
    REQUIRE(o1.has_value());
    CHECK(o1->kind == WriteOutcome::Kind::unknown);
    CHECK(p->broken());
    ::kill(c.pid(0), SIGCONT);
    c.kill(0);
    std::vector<KeyChange> changes;
    Status st;
    for (int i = 0; i < 50 && st.ok(); ++i) st = (*w)->next(changes, 100'000'000);
    CHECK(st.code() == Errc::store);
    CHECK(st.error().message.find("etcd at http://" + c.endpoint(0)) == 0);
    CHECK((*w)->next(changes, 0).code() == Errc::store);  // and stays broken
  }

  TEST_CASE("a store URL opens etcd; a password is never shown") {
    SKIP_WITHOUT_ETCD();
    auto s = open_store_url(shared_etcd_cluster(1).url(fresh_etcd_prefix("t")));
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    CHECK((*s)->create("k", "v").ok());
    auto refused = open_store_url("etcd://root:secret@" + shared_etcd_cluster(1).endpoint(0) + "/p");
    REQUIRE_FALSE(refused.ok());  // authentication is off: etcd refuses the user
    CHECK(refused.code() == Errc::store);
    CHECK(refused.error().message.find("secret") == std::string::npos);
    CHECK(refused.error().message.find("opening etcd://***@") == 0);
  }

  TEST_CASE("the C ABI's store opener reaches etcd by its URL, as every door does") {
    SKIP_WITHOUT_ETCD();
    std::string prefix = fresh_etcd_prefix("t");
    std::string url = shared_etcd_cluster(3).url(prefix);
    lj_store_t* store = nullptr;
    lj_error_t* err = nullptr;
    REQUIRE(lj_store_open_url(&store, url.data(), url.size(), nullptr, &err) == LJ_OK);
    uint64_t rev = 0;
    CHECK(lj_store_create(&rev, store, "k", 1, "v\0x", 3, &err) == LJ_OK);
    CHECK(rev > 0);
    CHECK(lj_store_create(nullptr, store, "k", 1, "w", 1, &err) == LJ_EEXISTS);
    lj_error_destroy(err);
    err = nullptr;
    CHECK(lj_store_update(nullptr, store, "k", 1, "w", 1, rev + 1000, &err) == LJ_ECHANGED);
    lj_error_destroy(err);
    err = nullptr;
    char* value = nullptr;
    size_t len = 0;
    uint64_t got_rev = 0;
    REQUIRE(lj_store_get(&value, &len, &got_rev, store, "k", 1, &err) == LJ_OK);
    CHECK(std::string(value, len) == std::string("v\0x", 3));
    CHECK(got_rev == rev);
    lj_free(value);
    lj_store_destroy(store);
    // The same key through the C++ store: one namespace.
    auto s = open_etcd(shared_etcd_cluster(3).endpoints(), prefix);
    auto k = s->get("k");
    REQUIRE(k.ok());
    CHECK((**k).revision == rev);
  }

  // A racer: opens the store, says "ready", then for each "go" takes the lock once and
  // answers "acquired REVISION ID", the outcome's name, or "error TEXT".
  TEST_CASE("etcd: the racer process" * doctest::skip()) {
    const char* url = std::getenv("LEASEJUDGE_RACER_URL");
    if (url == nullptr) return;
    auto store = open_store_url(url);
    if (!store.ok()) {
      dprintf(4, "error %s\n", store.error().message.c_str());
      return;
    }
    test::serve_racer(**store, lock_key);
  }

  TEST_CASE("four processes race for a gone holder's lock on three members: one holder a round, tokens increasing") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(3);
    std::string prefix = fresh_etcd_prefix("t");
    auto store = open_etcd(c.endpoints(), prefix);
    std::vector<std::unique_ptr<test::Racer>> racers;
    for (int i = 0; i < 4; ++i) {
      racers.push_back(std::make_unique<test::Racer>());
      // Each racer's first endpoint is a different member.
      std::string url = "etcd://" + c.endpoint(i % 3) + "," + c.endpoint((i + 1) % 3) + "/" + prefix;
      REQUIRE(racers.back()->spawn("etcd: the racer process", url));
    }
    for (auto& r : racers) REQUIRE(r->line() == "ready");
    const std::string gone = test::gone_holder_body(dead_pid());
    int rounds = 0, doubles = 0, taken = 0, errors = 0, unordered = 0;
    Revision last_token = 0;
    const auto until = Steady::now() + std::chrono::seconds(150);
    while (rounds < 1000 && Steady::now() < until) {
      REQUIRE(store->put(lock_key, gone).ok());
      test::RaceRound round = test::race_round(racers, rounds);
      errors += round.errors;
      if (round.acquired > 1) ++doubles;
      if (round.acquired == 1) {
        ++taken;
        if (round.token <= last_token) ++unordered;
        last_token = round.token;
        auto now = store->get(lock_key);
        REQUIRE(now.ok());
        REQUIRE(now->has_value());
        CHECK((**now).revision == round.token);
        auto body = parse_lock_body((**now).value);
        REQUIRE(body.ok());
        CHECK(body->id == round.winner_id);
      }
      ++rounds;
    }
    MESSAGE(rounds << " rounds: " << taken << " taken, " << doubles << " with two holders, " << errors << " errors");
    CHECK(rounds >= 1000);
    CHECK(doubles == 0);
    CHECK(unordered == 0);
    CHECK(errors == 0);
    CHECK(taken == rounds);
  }
}

#else

TEST_CASE("etcd store: this build has no etcd store") {
  LJ_REQUIRE_OR_SKIP(false, "this build has no etcd store (libcurl4-openssl-dev was not found)");
}

#endif
