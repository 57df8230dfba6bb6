// A sweep on three etcd members on 127.0.0.1 with the cluster's leader (asked of the
// members: POST /v3/maintenance/status) SIGKILLed in the middle of the apply. Against
// the state before, read key by key afterwards: every write the sweep reported done
// is there (the ended bytes at a newer revision, or the key gone); every key found
// changed was written by a write reported done or unknown (never one reported
// failed, changed or not sent, never one not planned); the next rounds complete and
// leave exactly what the rules say. Bounded: 30 s.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "etcd_server.hpp"
#include "leasejudge/sweep.hpp"
#include "sweep_fixtures.hpp"

#if defined(LEASEJUDGE_HAVE_ETCD) && defined(LEASEJUDGE_ETCD_STATUS)

using namespace leasejudge;
using namespace leasejudge::test;

namespace {

// A store on these members, tried again for up to 10 s while they elect a leader (etcd
// answers "leader changed" or "no leader" meanwhile).
std::unique_ptr<EtcdStore> open_on(const std::vector<std::string>& endpoints) {
  EtcdOptions o;
  o.endpoints = endpoints;
  o.prefix = "steps";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto s = EtcdStore::open(o);
  while (!s.ok() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    s = EtcdStore::open(o);
  }
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
  return std::move(s).value();
}

// Write the state, several writers at once (etcd commits concurrent writes in one
// batch); the revision each key got.
std::map<std::string, Revision> seed(const EtcdCluster& cluster, const std::vector<Planted>& state) {
  constexpr std::size_t writers = 16;
  std::vector<std::vector<std::pair<std::string, Revision>>> got(writers);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      EtcdOptions o;
      o.endpoints = cluster.endpoints();
      o.prefix = "steps";
      auto store = EtcdStore::open(o);
      if (!store.ok()) return;
      for (std::size_t i = w; i < state.size(); i += writers) {
        auto r = (*store)->put(state[i].key, state[i].value);
        if (r.ok()) got[w].emplace_back(state[i].key, *r);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::map<std::string, Revision> out;
  for (const auto& g : got) out.insert(g.begin(), g.end());
  REQUIRE(out.size() == state.size());
  return out;
}

}  // namespace

TEST_SUITE("etcd sweep") {
  TEST_CASE("the leader killed mid-apply: writes done are there, every key changed was reported done or unknown") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster cluster(3);
    REQUIRE(cluster.start());
    const auto state = plant(3000, 21);
    const auto seeded = seed(cluster, state);
    const Expected expected = count(state);
    std::map<std::string, const Planted*> by_key;
    for (const auto& p : state) by_key[p.key] = &p;

    auto store = open_on(cluster.endpoints());
    const int leader = cluster.leader();
    REQUIRE(leader >= 0);
    std::size_t done = 0;
    SweepReport first = end_stale(
        *store, node, before,
        [&](std::string_view line) {
          if (line.rfind("the step ", 0) == 0 && ++done == 30) cluster.kill(static_cast<std::size_t>(leader));
        },
        sweep_options());
    MESSAGE("leader m" << leader << " killed after 30 writes; first round: " << first.counts.ends << " ended, "
                       << first.counts.deletes << " deleted, " << first.counts.unknown << " unknown, "
                       << first.counts.failed << " failed, "
                       << (first.status.ok() ? std::string("ok") : first.status.error().message));
    REQUIRE(done >= 30);

    // Read on the members left, once they elected a leader.
    std::vector<std::string> left;
    for (std::size_t i = 0; i < cluster.size(); ++i)
      if (static_cast<int>(i) != leader) left.push_back(cluster.endpoint(i));
    auto reader = open_on(left);
    const auto after = read_every_key(*reader);

    std::map<std::string, SweepOutcome> reported;
    for (const auto& w : first.writes) reported[std::string(w.key)] = w.outcome;
    std::size_t wrong = 0;
    auto bad = [&](const std::string& key, const std::string& what) {
      if (++wrong <= 10) MESSAGE("key " << key << ": " << what);
    };
    for (const auto& [key, outcome] : reported) {
      if (outcome != SweepOutcome::done) continue;
      const Planted& p = *by_key.at(key);
      auto it = after.find(key);
      if (p.expect == Expect::remove && it != after.end()) bad(key, "reported deleted, still there");
      if (p.expect == Expect::end &&
          (it == after.end() || it->second.value != ended_value(p.value) || it->second.revision <= seeded.at(key)))
        bad(key, "reported ended, not there as ended");
      if (p.expect == Expect::leave) bad(key, "written, though the rules leave it");
    }
    for (const auto& p : state) {
      auto it = after.find(p.key);
      const bool changed = it == after.end() || it->second.revision != seeded.at(p.key) || it->second.value != p.value;
      if (!changed) continue;
      auto r = reported.find(p.key);
      if (r == reported.end())
        bad(p.key, "changed, with no write reported");
      else if (r->second != SweepOutcome::done && r->second != SweepOutcome::unknown)
        bad(p.key, std::string("changed, its write reported ") + sweep_outcome_name(r->second));
    }
    for (const auto& [key, entry] : after)
      if (by_key.count(key) == 0) bad(key, "there, though never planted");
    CHECK(wrong == 0);

    // The next rounds, as the periodic round runs them, until one completes: then the
    // state is exactly what the rules say.
    cluster.start_member(static_cast<std::size_t>(leader));
    std::optional<SweepReport> last;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do {
      last = end_stale(*reader, node, before, {}, sweep_options());
    } while (!last->status.ok() && std::chrono::steady_clock::now() < deadline);
    REQUIRE_MESSAGE(last->status.ok(), (last->status.ok() ? std::string() : last->status.error().message));
    const auto settled = read_every_key(*reader);
    std::size_t present = 0;
    for (const auto& p : state) {
      auto it = settled.find(p.key);
      present += p.expect != Expect::remove;
      if (p.expect == Expect::remove) {
        if (it != settled.end()) bad(p.key, "not deleted in the end");
      } else if (it == settled.end()) {
        bad(p.key, "gone in the end");
      } else if (it->second.value != (p.expect == Expect::end ? ended_value(p.value) : p.value)) {
        bad(p.key, "not as the rules say in the end");
      } else if (p.expect == Expect::leave && it->second.revision != seeded.at(p.key)) {
        bad(p.key, "left, but rewritten");
      }
    }
    CHECK(wrong == 0);
    CHECK(settled.size() == present);
    CHECK(expected.ends + expected.removes > 100);
  }
}

#else

TEST_CASE("etcd sweep: the etcd store") {
  LJ_REQUIRE_OR_SKIP(false, "this build has no etcd store (libcurl4-openssl-dev was not found)");
}

#endif
