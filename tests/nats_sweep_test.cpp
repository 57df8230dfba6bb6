// Sweeps on a real NATS bucket: the plan applied key by key, racing writers, two
// sweepers at once, a server restarted mid-sweep, a cluster losing a node; and the
// keys/s figures of reading, planning and applying over NATS on loopback.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "leasejudge/store/memory.hpp"
#include "leasejudge/store/nats.hpp"
#include "leasejudge/sweep.hpp"
#include "nats_server.hpp"
#include "sweep_fixtures.hpp"

#if defined(LEASEJUDGE_HAVE_NATS)

using namespace leasejudge;
using leasejudge::test::NatsCluster;
using leasejudge::test::NatsServer;
using leasejudge::test::Expect;
using leasejudge::test::Planted;
using leasejudge::test::Expected;
using leasejudge::test::node;
using leasejudge::test::self;
using leasejudge::test::before;
using leasejudge::test::now;
using leasejudge::test::plant;
using leasejudge::test::count;
using leasejudge::test::ended_value;
using leasejudge::test::sweep_options;
using leasejudge::test::other_owner;
using leasejudge::test::step_value;

namespace {

std::unique_ptr<NatsStore> open_store(const NatsOptions& o) {
  auto s = test::open_when_ready(o);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
  return std::move(s).value();
}

NatsOptions options_for(const std::vector<std::string>& urls, int replicas = 1) {
  NatsOptions o;
  o.urls = urls;
  o.bucket = "steps";
  o.create_bucket = true;
  o.replicas = replicas;
  o.request_timeout = std::chrono::milliseconds(3000);
  o.reconnect_wait = std::chrono::milliseconds(100);
  return o;
}

void seed_only(const std::string& url, const std::vector<Planted>& state) {
  std::vector<std::pair<std::string, std::string>> kv;
  kv.reserve(state.size());
  for (const auto& p : state) kv.emplace_back(p.key, p.value);
  REQUIRE(test::seed_bucket(url, "steps", kv) == state.size());
}

// The revision of every key read, by key; every planted key must be there.
std::map<std::string, Revision> revisions_of(const std::vector<NatsEntry>& entries, const std::vector<Planted>& state) {
  REQUIRE(entries.size() == state.size());
  std::map<std::string, Revision> revisions;
  for (const auto& e : entries) revisions[e.key] = e.revision;
  for (const auto& p : state) REQUIRE(revisions.count(p.key) == 1);
  return revisions;
}

// Seed the bucket; the revisions the planted keys got, by key.
std::map<std::string, Revision> seed(const std::string& url, NatsStore& store, const std::vector<Planted>& state) {
  seed_only(url, state);
  auto entries = store.entries();
  REQUIRE_MESSAGE(entries.ok(), (entries.ok() ? std::string() : entries.error().message));
  return revisions_of(*entries, state);
}

// An override saying the other writer deleted the key last.
const std::string gone = "\x01gone";

// The bucket, key by key, against the planted state after a complete sweep: ended
// keys hold exactly the ended bytes at a newer revision, deleted keys are gone,
// every other key holds its bytes at its revision. `overrides`: keys another writer
// wrote last, with what it wrote (those hold that, whatever the sweep planned; `gone`:
// it deleted them). `extra`: keys in the bucket beyond the state. Returns what it read.
std::vector<NatsEntry> check_swept(NatsStore& store, const std::vector<Planted>& state,
                                   const std::map<std::string, Revision>& seeded,
                                   const std::map<std::string, std::string>& overrides = {}, std::size_t extra = 0) {
  auto entries = store.entries();
  REQUIRE_MESSAGE(entries.ok(), (entries.ok() ? std::string() : entries.error().message));
  std::map<std::string, const NatsEntry*> now_in;
  for (const auto& e : *entries) now_in[e.key] = &e;
  std::size_t wrong = 0;
  auto report = [&](const std::string& key, const char* what) {
    if (++wrong <= 10) MESSAGE("key " << key << ": " << std::string(what));
  };
  for (const auto& p : state) {
    auto it = now_in.find(p.key);
    Revision was = seeded.at(p.key);
    if (auto o = overrides.find(p.key); o != overrides.end()) {
      if (o->second == gone) {
        if (it != now_in.end()) report(p.key, "the other writer's delete was lost");
      } else if (it == now_in.end() || it->second->value != o->second) {
        report(p.key, "the other writer's value was lost");
      }
      continue;
    }
    switch (p.expect) {
      case Expect::remove:
        if (it != now_in.end()) report(p.key, "not deleted");
        break;
      case Expect::end:
        if (it == now_in.end())
          report(p.key, "gone instead of ended");
        else if (it->second->value != ended_value(p.value))
          report(p.key, "not ended as expected");
        else if (it->second->revision <= was)
          report(p.key, "ended without a new revision");
        break;
      case Expect::leave:
        if (it == now_in.end())
          report(p.key, "gone instead of left");
        else if (it->second->value != p.value || it->second->revision != was)
          report(p.key, "touched");
        break;
    }
  }
  CHECK(wrong == 0);
  std::size_t present = extra;
  for (const auto& p : state) {
    auto o = overrides.find(p.key);
    present += (o != overrides.end() ? o->second != gone : p.expect != Expect::remove) ? 1 : 0;
  }
  CHECK(now_in.size() == present);
  return std::move(entries).value();
}

// The entries of a bucket as a sweep plans them (views into `held`).
std::vector<SweepEntry> sweep_entries(const std::vector<NatsEntry>& held) {
  std::vector<SweepEntry> out;
  out.reserve(held.size());
  for (const auto& e : held) out.push_back(SweepEntry{e.key, e.revision, e.value});
  return out;
}

double per_second(std::size_t n, std::chrono::steady_clock::duration d) {
  double s = std::chrono::duration<double>(d).count();
  return s > 0 ? static_cast<double>(n) / s : 0;
}

}  // namespace

TEST_SUITE("nats sweep") {
  TEST_CASE("a sweep of 100k keys does exactly what its plan says, key by key") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for({server.url()}));
    const auto state = plant(100000, 1);
    seed_only(server.url(), state);
    const Expected expected = count(state);
    std::map<std::string, Expect> by_key;
    for (const auto& p : state) by_key[p.key] = p.expect;

    // Read, plan, apply: the three parts of a sweep, timed apart.
    auto t0 = std::chrono::steady_clock::now();
    auto held = store->entries();
    REQUIRE(held.ok());
    auto t1 = std::chrono::steady_clock::now();
    std::vector<SweepEntry> entries = sweep_entries(*held);
    SweepOptions opts = sweep_options();
    StepRules rules = *sweep_rules(node, before, opts);
    SweepPlan plan = plan_sweep(entries, rules);
    auto t2 = std::chrono::steady_clock::now();
    const auto seeded = revisions_of(*held, state);

    // The plan against the state as planted, key by key.
    std::size_t plan_wrong = 0;
    std::set<std::string> planned;
    for (const auto& a : plan.actions) {
      const std::string key(entries[a.entry].key);
      planned.insert(key);
      Expect want = by_key.at(key);
      bool ok = (a.verdict.action == StepAction::end && want == Expect::end) ||
                (a.verdict.action == StepAction::remove && want == Expect::remove);
      if (!ok && ++plan_wrong <= 10) MESSAGE("planned wrongly: " << key);
    }
    CHECK(plan_wrong == 0);
    CHECK(planned.size() == expected.ends + expected.removes);
    CHECK(plan.counts.ends == expected.ends);
    CHECK(plan.counts.deletes == expected.removes);

    std::size_t logged = 0;
    SweepReport report = apply_sweep(
        *store, entries, plan, [&](std::string_view) { ++logged; }, opts);
    auto t3 = std::chrono::steady_clock::now();
    REQUIRE_MESSAGE(report.status.ok(), report.status.error().message);
    CHECK(report.counts.ends == expected.ends);
    CHECK(report.counts.deletes == expected.removes);
    CHECK(report.counts.changed == 0);
    CHECK(report.ended.size() == expected.ends + expected.removes);
    CHECK(logged == expected.ends + expected.removes);

    auto after = check_swept(*store, state, seeded);

    MESSAGE("NATS on loopback, " << state.size() << " keys, " << plan.actions.size() << " actions: read "
                                 << static_cast<long>(per_second(state.size(), t1 - t0)) << " keys/s, plan "
                                 << static_cast<long>(per_second(state.size(), t2 - t1)) << " keys/s, apply "
                                 << static_cast<long>(per_second(plan.actions.size(), t3 - t2)) << " actions/s");

    // A second round finds nothing left to do.
    auto entries2 = sweep_entries(after);
    SweepPlan plan2 = plan_sweep(entries2, rules);
    CHECK(plan2.actions.empty());
  }

  TEST_CASE("the seed's EndStale runs unchanged on a NATS bucket") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for({server.url()}));
    const auto state = plant(3000, 2);
    const auto seeded = seed(server.url(), *store, state);
    const Expected expected = count(state);

    std::vector<std::string> lines;
    SweepReport report = end_stale(
        *store, node, before, [&](std::string_view line) { lines.emplace_back(line); }, sweep_options());
    REQUIRE_MESSAGE(report.status.ok(), report.status.error().message);
    CHECK(report.counts.ends == expected.ends);
    CHECK(report.counts.deletes == expected.removes);
    CHECK(report.counts.changed == 0);
    CHECK(lines.size() == expected.ends + expected.removes);
    check_swept(*store, state, seeded);
  }

  TEST_CASE("a racing writer during the sweep: no write lost, conflicts counted") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for({server.url()}));
    auto writer = open_store(options_for({server.url()}));
    const auto state = plant(20000, 3);
    const auto seeded = seed(server.url(), *store, state);

    auto held = store->entries();
    REQUIRE(held.ok());
    std::vector<SweepEntry> entries = sweep_entries(*held);
    SweepOptions opts = sweep_options();
    SweepPlan plan = plan_sweep(entries, *sweep_rules(node, before, opts));
    REQUIRE(!plan.actions.empty());

    // The writer restarts steps the sweep planned to end (a redelivered ask begun
    // again, a step taken up again) and rewrites random other keys, while the sweep
    // applies. The first writes land before the sweep starts, the last ones when it
    // runs, both in the planned keys' reverse order so that they race the sweep.
    std::vector<std::string> planned_keys;
    for (const auto& a : plan.actions) planned_keys.emplace_back(entries[a.entry].key);
    std::map<std::string, std::string> last_written;
    std::atomic<int> written{0};
    std::atomic<bool> failed{false};
    std::mt19937 rng(4);
    std::thread racer([&] {
      int n = 0;
      for (auto it = planned_keys.rbegin(); it != planned_keys.rend(); ++it, ++n) {
        std::string key = *it;
        if (n % 2 == 1) key = state[rng() % state.size()].key;  // and every other write a random key
        std::string value = "{\"id\":\"raced-" + std::to_string(n) +
                            "\",\"tool\":\"go build\",\"state\":\"running\","
                            "\"owner\":\"" +
                            self + "\"}";
        auto w = writer->put(key, value);
        if (!w.ok()) {
          failed = true;
          return;
        }
        last_written[key] = value;
        ++written;
      }
    });
    // Let the writer get ahead: its first writes surely precede the sweep's.
    while (written.load() < 100 && !failed.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    SweepReport report = apply_sweep(*store, entries, plan, {}, opts);
    racer.join();
    REQUIRE_FALSE(failed.load());
    REQUIRE_MESSAGE(report.status.ok(), report.status.error().message);

    // Every planned key was either done or counted changed; the keys the writer
    // touched first (before the sweep started) all counted changed.
    CHECK(report.counts.ends + report.counts.deletes + report.counts.changed == plan.actions.size());
    CHECK(report.counts.changed >= 50);
    MESSAGE("conflicts counted: " << report.counts.changed << " of " << plan.actions.size() << " planned");

    // Key by key: what the writer wrote last is there; every other key is as the plan
    // applied it.
    check_swept(*store, state, seeded, last_written);
  }

  TEST_CASE("end_stale over NATS decides and writes every key as over the memory store") {
    SKIP_WITHOUT_NATS_SERVER();
    // Values up to 1 MiB need a larger payload than the server's default.
    const std::string conf = test::make_temp_dir("nats-conf") + "/server.conf";
    {
      std::FILE* f = std::fopen(conf.c_str(), "w");
      REQUIRE(f != nullptr);
      std::fputs("max_payload: 8388608\n", f);
      std::fclose(f);
    }
    NatsServer server({"-c", conf});
    REQUIRE(server.start());
    auto store = open_store(options_for({server.url()}));
    auto state = plant(100000, 11);
    // Bad input: a 1 MiB step left running (ended), a 1 MiB value that is no step (left).
    Planted big;
    big.key = node + ".big-running";
    big.value = step_value("big-running", "go build", "running", other_owner, "2024-05-01T10:00:00Z", 1 << 20);
    big.expect = Expect::end;
    state.push_back(big);
    Planted junk;
    junk.key = node + ".big-junk";
    junk.value = "[" + std::string(1 << 20, '1') + "]";
    state.push_back(junk);
    const auto seeded = seed(server.url(), *store, state);
    // A key the NATS rules reject, written by another client: left, counted.
    REQUIRE(test::seed_bucket(server.url(), "steps",
                              {{node + ".bad#key", step_value("x", "go build", "running", other_owner,
                                                              "2024-05-01T10:00:00Z", 10)}}) == 1);
    MemoryStore memory;
    for (const auto& p : state) memory.put(p.key, p.value);

    std::vector<std::string> log;
    auto t0 = std::chrono::steady_clock::now();
    SweepReport on_nats = end_stale(
        *store, node, before, [&](std::string_view l) { log.emplace_back(l); }, sweep_options());
    auto t1 = std::chrono::steady_clock::now();
    SweepReport on_memory = end_stale(memory, node, before, {}, sweep_options());
    REQUIRE_MESSAGE(on_nats.status.ok(), on_nats.status.error().message);
    REQUIRE(on_memory.status.ok());

    // The same writes, key by key (the NATS read comes in the bucket's order, the
    // memory store's in key order).
    auto by_key = [](const SweepReport& r) {
      std::map<std::string, std::pair<StepAction, SweepOutcome>> m;
      for (const auto& w : r.writes) CHECK(m.emplace(w.key, std::make_pair(w.action, w.outcome)).second);
      return m;
    };
    CHECK(by_key(on_nats) == by_key(on_memory));
    CHECK(std::multiset<std::string>(on_nats.ended.begin(), on_nats.ended.end()) ==
          std::multiset<std::string>(on_memory.ended.begin(), on_memory.ended.end()));
    const Expected expected = count(state);
    CHECK(on_nats.counts.ends == expected.ends);
    CHECK(on_nats.counts.deletes == expected.removes);
    CHECK(on_nats.counts.ends == on_memory.counts.ends);
    CHECK(on_nats.counts.deletes == on_memory.counts.deletes);
    CHECK(on_nats.counts.left == on_memory.counts.left);
    CHECK(on_nats.counts.no_step == on_memory.counts.no_step);
    CHECK(on_nats.counts.changed == 0);
    CHECK(on_nats.counts.other_node == 0);
    CHECK(on_nats.stats.rejected == 1);
    CHECK(on_nats.stats.keys == on_memory.stats.keys);
    CHECK(on_nats.stats.writes == expected.ends + expected.removes);
    CHECK(on_nats.stats.max_in_flight > 1);  // writes were pipelined
    CHECK(std::count_if(log.begin(), log.end(), [](const std::string& l) {
            return l.find("bad#key breaks the NATS key rules") != std::string::npos;
          }) == 1);

    // The final bucket is the memory store's final state.
    auto after = store->entries();
    REQUIRE(after.ok());
    std::map<std::string, std::string> nats_final, memory_final;
    for (const auto& e : *after)
      if (e.key != node + ".bad#key") nats_final[e.key] = e.value;
    const std::vector<std::string> memory_keys = *memory.keys();
    for (const auto& k : memory_keys) memory_final[k] = (*memory.get(k))->value;
    CHECK(nats_final.size() == memory_final.size());
    CHECK((nats_final == memory_final));
    check_swept(*store, state, seeded, {}, 1);  // and the rejected key, kept
    MESSAGE("end_stale on NATS (loopback), "
            << on_nats.stats.keys << " keys of the node, " << on_nats.stats.writes
            << " writes: " << static_cast<long>(per_second(on_nats.stats.keys, t1 - t0)) << " keys/s (read "
            << on_nats.stats.read_ns / 1000000 << " ms, plan " << on_nats.stats.plan_ns / 1000000 << " ms, apply "
            << on_nats.stats.apply_ns / 1000000 << " ms)");
  }

  TEST_CASE("a writer racing end_stale's read and apply: no write of it lost") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for({server.url()}));
    auto writer = open_store(options_for({server.url()}));
    const auto state = plant(30000, 12);
    const auto seeded = seed(server.url(), *store, state);

    // The writer updates and deletes random keys of the node while the sweep reads and
    // writes; its values are steps of this process (left by any sweep).
    std::map<std::string, std::string> last;  // key -> its last write ("\x01gone": deleted)
    std::atomic<bool> stop{false}, failed{false};
    std::atomic<int> written{0};
    std::thread racer([&] {
      std::mt19937 rng(13);
      for (int n = 0; !stop.load(); ++n) {
        const Planted& p = state[rng() % state.size()];
        if (p.key.compare(0, node.size() + 1, node + ".") != 0) continue;
        if (rng() % 4 == 0) {
          auto got = writer->get(p.key);
          if (!got.ok()) {
            failed.store(true);
            return;
          }
          if (!*got) continue;
          Status st = writer->remove(p.key, (*got)->revision);
          if (st.ok())
            last[p.key] = "\x01gone";
          else if (st.code() != Errc::changed) {
            failed.store(true);
            return;
          }
        } else {
          std::string value = "{\"id\":\"raced-" + std::to_string(n) +
                              "\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"" + self + "\"}";
          if (!writer->put(p.key, value).ok()) {
            failed.store(true);
            return;
          }
          last[p.key] = value;
        }
        ++written;
      }
    });
    while (written.load() < 200 && !failed.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    SweepOptions opts = sweep_options();
    opts.batch_keys = 256;  // many batches: the racer's writes fall between them
    SweepReport report = end_stale(*store, node, before, {}, opts);
    stop = true;
    racer.join();
    REQUIRE_FALSE(failed.load());
    REQUIRE_MESSAGE(report.status.ok(), report.status.error().message);
    CHECK(report.counts.unknown == 0);
    CHECK(report.counts.failed == 0);
    MESSAGE("racer writes: " << written.load() << "; sweep: " << report.counts.changed << " changed, "
                             << report.stats.skipped << " keys written during the read left to the next sweep");
    // The sweep's writes all landed on values it read, never on the racer's.
    for (const auto& w : report.writes) {
      if (w.outcome != SweepOutcome::done) continue;
      CHECK(w.revision == seeded.at(std::string(w.key)));
    }
    check_swept(*store, state, seeded, last);
  }

  TEST_CASE("the server killed while end_stale reads: a clean failure, the next round completes") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for({server.url()}));
    const auto state = plant(40000, 14);
    const auto seeded = seed(server.url(), *store, state);
    SweepOptions opts = sweep_options();
    opts.batch_keys = 500;
    std::size_t seen = 0;
    opts.on_key = [&](const SweepKey&) {
      if (++seen == 5000) server.kill();
    };
    SweepReport first = end_stale(*store, node, before, {}, opts);
    // A store failure, or writes in flight whose outcome is unknown (then said so).
    CHECK((first.status.code() == Errc::store ||
           (first.status.code() == Errc::unknown_outcome && first.counts.unknown > 0)));
    CHECK_MESSAGE(first.status.error().message.rfind("buildstep: ", 0) == 0, first.status.error().message);
    CHECK(first.stats.keys < 40000);
    REQUIRE(server.start());
    SweepReport next;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      next = end_stale(*store, node, before, {}, sweep_options());
      if (!next.status.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (!next.status.ok() && std::chrono::steady_clock::now() < deadline);
    REQUIRE_MESSAGE(next.status.ok(), next.status.error().message);
    // No write landed at a stale revision: every done write is at the revision planted.
    for (const auto* r : {&first, &next})
      for (const auto& w : r->writes)
        if (w.outcome == SweepOutcome::done) CHECK(w.revision == seeded.at(std::string(w.key)));
    check_swept(*store, state, seeded);
  }

  TEST_CASE("an R3 bucket with its stream leader killed during the apply") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsCluster cluster;
    REQUIRE(cluster.start());
    auto store = open_store(options_for(cluster.urls(), 3));
    const auto state = plant(6000, 15);
    const auto seeded = seed(cluster.node(0).url(), *store, state);
    const Expected expected = count(state);
    int leader = test::stream_leader(cluster, "KV_steps");
    REQUIRE(leader >= 0);
    std::size_t done = 0;
    SweepReport first = end_stale(
        *store, node, before,
        [&](std::string_view line) {
          if (line.rfind("the step ", 0) == 0 && ++done == 30) cluster.node(leader).kill();
        },
        sweep_options());
    MESSAGE("leader lj-node-" << leader << " killed; first round: " << first.ended.size() << " ended, "
                              << first.counts.unknown << " unknown, " << first.counts.failed
                              << " failed: " << (first.status.ok() ? std::string("ok") : first.status.error().message));
    // The next rounds, as the module's periodic round runs them, until one completes.
    std::vector<SweepReport> rounds{first};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!rounds.back().status.ok() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      rounds.push_back(end_stale(*store, node, before, {}, sweep_options()));
    }
    REQUIRE_MESSAGE(rounds.back().status.ok(), rounds.back().status.error().message);
    // No key ended twice; every acknowledged write is in the bucket.
    std::map<std::string, int> done_writes;
    std::set<std::string> uncertain;
    for (const auto& r : rounds)
      for (const auto& w : r.writes) {
        if (w.outcome == SweepOutcome::done) ++done_writes[std::string(w.key)];
        if (w.outcome == SweepOutcome::unknown || w.outcome == SweepOutcome::failed) uncertain.insert(std::string(w.key));
      }
    for (const auto& [key, n] : done_writes) CHECK_MESSAGE(n == 1, key);
    // A leader change is no refusal: a write without an answer is unknown, never failed.
    for (const auto& r : rounds) CHECK(r.counts.failed == 0);
    std::size_t settled = done_writes.size();
    for (const auto& k : uncertain) settled += done_writes.count(k) == 0 ? 1 : 0;  // those that landed unseen
    CHECK(done_writes.size() <= expected.ends + expected.removes);
    CHECK(settled >= expected.ends + expected.removes);
    check_swept(*store, state, seeded);
  }

  TEST_CASE("one node of three down: the sweep completes, its waits bounded and logged") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsCluster cluster;
    REQUIRE(cluster.start());
    auto store = open_store(options_for(cluster.urls(), 3));
    const auto state = plant(2000, 16);
    const auto seeded = seed(cluster.node(0).url(), *store, state);
    cluster.node(2).kill();
    std::vector<std::string> log;
    auto t0 = std::chrono::steady_clock::now();
    SweepReport r;
    auto deadline = t0 + std::chrono::seconds(60);
    do {
      r = end_stale(
          *store, node, before, [&](std::string_view l) { log.emplace_back(l); }, sweep_options());
      if (!r.status.ok()) log.push_back("round failed: " + r.status.error().message);
    } while (!r.status.ok() && std::chrono::steady_clock::now() < deadline);
    auto took = std::chrono::steady_clock::now() - t0;
    REQUIRE_MESSAGE(r.status.ok(), r.status.error().message);
    // Any wait past a second is in the log: none is silent.
    std::size_t notes =
        std::count_if(log.begin(), log.end(), [](const std::string& l) { return l.rfind("the step ", 0) != 0; });
    if (took > std::chrono::seconds(2)) CHECK(notes > 0);
    MESSAGE("one node down: " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms, " << notes
                              << " notes, " << r.stats.waits << " waits, " << r.stats.retries << " retries");
    for (const auto& l : log)
      if (l.rfind("the step ", 0) != 0) MESSAGE("  " << l);
    check_swept(*store, state, seeded);
  }

  TEST_CASE("two sweepers at once: each stale key ended once") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto a = open_store(options_for({server.url()}));
    auto b = open_store(options_for({server.url()}));
    const auto state = plant(6000, 5);
    const auto seeded = seed(server.url(), *a, state);
    const Expected expected = count(state);

    SweepReport ra, rb;
    std::thread ta([&] { ra = end_stale(*a, node, before, {}, sweep_options()); });
    std::thread tb([&] { rb = end_stale(*b, node, before, {}, sweep_options()); });
    ta.join();
    tb.join();
    REQUIRE_MESSAGE(ra.status.ok(), ra.status.error().message);
    REQUIRE_MESSAGE(rb.status.ok(), rb.status.error().message);

    std::multiset<std::string> ended(ra.ended.begin(), ra.ended.end());
    ended.insert(rb.ended.begin(), rb.ended.end());
    std::set<std::string> want;
    for (const auto& p : state) {
      if (p.expect != Expect::leave) want.insert(p.key.substr(node.size() + 1));
    }
    CHECK(ended.size() == want.size());  // none twice
    CHECK(std::set<std::string>(ended.begin(), ended.end()) == want);
    CHECK(ra.counts.ends + rb.counts.ends == expected.ends);
    CHECK(ra.counts.deletes + rb.counts.deletes == expected.removes);
    MESSAGE("sweeper a: " << ra.ended.size() << " ended, " << ra.counts.changed << " lost races; sweeper b: "
                          << rb.ended.size() << " ended, " << rb.counts.changed << " lost races");
    check_swept(*a, state, seeded);
  }

  TEST_CASE("the server restarted mid-sweep: the sweep fails cleanly, the next round completes") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for({server.url()}));
    const auto state = plant(6000, 6);
    const auto seeded = seed(server.url(), *store, state);
    const Expected expected = count(state);

    // The server dies after the sweep's 40th action.
    std::size_t done = 0;
    SweepReport first = end_stale(
        *store, node, before,
        [&](std::string_view) {
          if (++done == 40) server.kill();
        },
        sweep_options());
    CHECK((first.status.code() == Errc::store ||
           (first.status.code() == Errc::unknown_outcome && first.counts.unknown > 0)));
    CHECK_MESSAGE(first.status.error().message.find("NATS") != std::string::npos, first.status.error().message);
    // The writes in flight when it died have no acknowledgement: unknown, never retried.
    std::set<std::string> unknown;
    for (const auto& w : first.writes)
      if (w.outcome == SweepOutcome::unknown) unknown.insert(std::string(w.key.substr(node.size() + 1)));
    CHECK(unknown.size() == first.counts.unknown);
    CHECK(first.ended.size() >= 40);
    CHECK(first.ended.size() < expected.ends + expected.removes);

    REQUIRE(server.start());
    // The next rounds (as the module's periodic round would run them) until one
    // completes: the first may still find the connection coming back.
    SweepReport next;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      next = end_stale(*store, node, before, {}, sweep_options());
      if (!next.status.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (!next.status.ok() && std::chrono::steady_clock::now() < deadline);
    REQUIRE_MESSAGE(next.status.ok(), next.status.error().message);
    CHECK(next.counts.changed == 0);
    // Nothing ended twice, nothing missed: a write of unknown outcome either landed
    // (the next round leaves that step) or did not (the next round ends it).
    std::set<std::string> first_ended(first.ended.begin(), first.ended.end());
    std::size_t landed = unknown.size();
    for (const auto& id : next.ended) {
      CHECK(first_ended.count(std::string(id)) == 0);
      if (unknown.count(std::string(id)) != 0) --landed;
    }
    CHECK(first.ended.size() + next.ended.size() + landed == expected.ends + expected.removes);
    check_swept(*store, state, seeded);
  }

  TEST_CASE("a sweep on a three-node cluster completes with one node killed") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsCluster cluster;
    REQUIRE(cluster.start());
    auto store = open_store(options_for(cluster.urls(), 3));
    const auto state = plant(3000, 7);
    const auto seeded = seed(cluster.node(1).url(), *store, state);

    // The node the store is connected to (the first URL) dies mid-sweep.
    std::size_t done = 0;
    SweepReport first = end_stale(
        *store, node, before,
        [&](std::string_view) {
          if (++done == 20) cluster.node(0).kill();
        },
        sweep_options());
    SweepReport next = first;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!next.status.ok() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      next = end_stale(*store, node, before, {}, sweep_options());
    }
    REQUIRE_MESSAGE(next.status.ok(), next.status.error().message);
    check_swept(*store, state, seeded);
  }

}  // TEST_SUITE

#else  // a build without the NATS store

TEST_CASE("nats sweep: the NATS store") {
  LJ_REQUIRE_OR_SKIP(false, "leasejudge was built without libnats (LEASEJUDGE_NATS=OFF)");
}

#endif
