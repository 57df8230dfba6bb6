// Test fixture: a sweep under a network partition (tests/nemesis.sh), the same on every
// store. The sweep runs in a thread that joined a client namespace of the lab; before
// its 30th write is sent (the ones before it in flight or answered), a fault is
// injected (its client cut off, or the leader isolated) and healed 2.5 s later; the
// rounds after it run as the periodic round runs them, until one completes. Against the state before, read afterwards
// from the driver:
//   - every write reported done is in the store (the ended bytes at a newer revision,
//     or the key gone);
//   - every key changed since was written by a write reported done or unknown (never
//     one reported failed, changed or not sent, never one not planned);
//   - nothing was ended twice: the store's own history of each key holds at most one
//     write since the seed, and no write was reported done twice;
//   - in the end every key is as the rules say.
// Private to the tests.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "leasejudge/store.hpp"
#include "leasejudge/sweep.hpp"
#include "nemesis.hpp"
#include "sweep_fixtures.hpp"

namespace leasejudge::test {

struct SweepUnderPartition {
  std::string store_name, fault;
  std::vector<Planted> state;
  std::map<std::string, Revision> seeded;  // the revision each planted key got
  // A store of the sweep's own (called in the client's thread, and in the driver's).
  std::function<std::unique_ptr<Store>()> open;
  std::function<bool()> inject, heal;
  // How many writes each key had since the seed, as the store's own history says.
  std::function<std::map<std::string, int>()> writes_per_key;
};

// A store whose pipelines call fault() before they send the n-th write (from 1): a
// fault injected there lands mid-apply, some writes answered, some in flight, the
// rest still to send.
class FaultAtWrite final : public Store {
 public:
  FaultAtWrite(Store& inner, std::size_t n, std::function<void()> fault)
      : inner_(inner), n_(n), fault_(std::move(fault)) {}
  Result<std::vector<std::string>> keys() override { return inner_.keys(); }
  Result<std::optional<StoreEntry>> get(std::string_view key) override { return inner_.get(key); }
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
    sending();
    return inner_.update(key, value, revision);
  }
  Result<Revision> create(std::string_view key, std::string_view value) override {
    sending();
    return inner_.create(key, value);
  }
  Status remove(std::string_view key, Revision revision) override {
    sending();
    return inner_.remove(key, revision);
  }
  Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options = {},
              ScanStats* stats = nullptr) override {
    return inner_.scan(prefix, sink, options, stats);
  }
  std::unique_ptr<WritePipeline> pipeline(const PipelineOptions& options = {}) override {
    return std::make_unique<Pipe>(inner_.pipeline(options), *this);
  }

 private:
  class Pipe final : public WritePipeline {
   public:
    Pipe(std::unique_ptr<WritePipeline> inner, FaultAtWrite& store) : inner_(std::move(inner)), store_(store) {}
    void update(std::string_view key, std::string_view value, Revision revision) override {
      store_.sending();
      inner_->update(key, value, revision);
    }
    void remove(std::string_view key, Revision revision) override {
      store_.sending();
      inner_->remove(key, revision);
    }
    void create(std::string_view key, std::string_view value) override {
      store_.sending();
      inner_->create(key, value);
    }
    std::size_t in_flight() const override { return inner_->in_flight(); }
    std::size_t ready() const override { return inner_->ready(); }
    bool broken() const override { return inner_->broken(); }
    std::optional<WriteOutcome> next() override { return inner_->next(); }

   private:
    std::unique_ptr<WritePipeline> inner_;
    FaultAtWrite& store_;
  };
  void sending() {
    if (++sent_ == n_) fault_();
  }

  Store& inner_;
  std::size_t n_, sent_ = 0;
  std::function<void()> fault_;
};

// The revision of every planted key now; every one must be there.
inline std::map<std::string, Revision> revisions_now(Store& store, const std::vector<Planted>& state) {
  std::map<std::string, Revision> out;
  for (const auto& p : state) {
    auto e = store.get(p.key);
    REQUIRE_MESSAGE(e.ok(), (e.ok() ? std::string() : e.error().message));
    REQUIRE(e->has_value());
    out[p.key] = (**e).revision;
  }
  return out;
}

inline void sweep_under_partition(Lab& lab, const std::string& client, const SweepUnderPartition& s) {
  const Expected expected = count(s.state);
  std::map<std::string, const Planted*> by_key;
  for (const auto& p : s.state) by_key[p.key] = &p;

  std::vector<SweepReport> rounds;
  std::atomic<bool> injected{false}, injected_ok{false}, healed{false}, first_ended{false};
  std::string failure;
  std::thread sweeper([&] {
    if (!lab.enter(client)) {
      failure = "the sweep's thread could not join " + client;
      first_ended = true;
      return;
    }
    auto store = s.open();
    if (!store) {
      failure = "the sweep's store did not open in " + client;
      first_ended = true;
      return;
    }
    FaultAtWrite faulty(*store, 30, [&] {
      injected_ok = s.inject();
      injected = true;
    });
    rounds.push_back(end_stale(faulty, node, before, {}, sweep_options()));
    first_ended = true;
    while (!healed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!rounds.back().status.ok() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      rounds.push_back(end_stale(*store, node, before, {}, sweep_options()));
    }
  });
  // Heal 2.5 s after the fault came (or once the first round ended without one).
  while (!injected && !first_ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (injected) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const bool heal_ok = !injected_ok || s.heal();
  healed = true;
  sweeper.join();
  REQUIRE_MESSAGE(failure.empty(), failure);
  REQUIRE_MESSAGE(injected_ok, "the fault was not injected: " << lab.error());
  REQUIRE_MESSAGE(heal_ok, lab.error());
  REQUIRE_MESSAGE(rounds.back().status.ok(), rounds.back().status.error().message);

  auto reader = s.open();
  REQUIRE(reader);
  const auto after = read_every_key(*reader);
  std::size_t wrong = 0;
  auto bad = [&](const std::string& key, const std::string& what) {
    if (++wrong <= 10) MESSAGE("key " << key << ": " << what);
  };
  // Every round's writes: what each key was reported, done ones counted.
  std::map<std::string, int> done_reports;
  std::map<std::string, std::set<SweepOutcome>> reported;
  std::size_t unknown = 0, failed = 0, not_sent = 0;
  for (const auto& r : rounds) {
    for (const auto& w : r.writes) {
      const std::string key(w.key);
      reported[key].insert(w.outcome);
      if (w.outcome == SweepOutcome::done) ++done_reports[key];
      unknown += w.outcome == SweepOutcome::unknown;
      failed += w.outcome == SweepOutcome::failed;
      not_sent += w.outcome == SweepOutcome::not_sent;
    }
  }
  for (const auto& [key, n] : done_reports) {
    if (n > 1) bad(key, "reported done " + std::to_string(n) + " times");
    const Planted& p = *by_key.at(key);
    auto it = after.find(key);
    if (p.expect == Expect::remove && it != after.end()) bad(key, "reported deleted, still there");
    if (p.expect == Expect::end &&
        (it == after.end() || it->second.value != ended_value(p.value) || it->second.revision <= s.seeded.at(key)))
      bad(key, "reported ended, not there as ended");
    if (p.expect == Expect::leave) bad(key, "written, though the rules leave it");
  }
  for (const auto& p : s.state) {
    auto it = after.find(p.key);
    const bool changed = it == after.end() || it->second.revision != s.seeded.at(p.key) || it->second.value != p.value;
    if (!changed) continue;
    auto r = reported.find(p.key);
    if (r == reported.end() || (r->second.count(SweepOutcome::done) == 0 && r->second.count(SweepOutcome::unknown) == 0))
      bad(p.key, "changed, with no write of it reported done or unknown");
  }
  for (const auto& [key, entry] : after)
    if (by_key.count(key) == 0) bad(key, "there, though never planted");
  // Nothing ended twice, as the store's history says.
  const auto writes = s.writes_per_key();
  std::size_t twice = 0, written = 0;
  for (const auto& [key, n] : writes) {
    written += n > 0;
    if (n > 1) {
      ++twice;
      bad(key, "written " + std::to_string(n) + " times since the seed");
    }
  }
  // In the end, as the rules say.
  std::size_t present = 0;
  for (const auto& p : s.state) {
    auto it = after.find(p.key);
    present += p.expect != Expect::remove;
    if (p.expect == Expect::remove) {
      if (it != after.end()) bad(p.key, "not deleted in the end");
    } else if (it == after.end()) {
      bad(p.key, "gone in the end");
    } else if (it->second.value != (p.expect == Expect::end ? ended_value(p.value) : p.value)) {
      bad(p.key, "not as the rules say in the end");
    } else if (p.expect == Expect::leave && it->second.revision != s.seeded.at(p.key)) {
      bad(p.key, "left, but rewritten");
    }
  }
  const SweepReport& first = rounds.front();
  MESSAGE(s.store_name << ", " << s.fault << " before the sweep's 30th write: first round " << first.counts.ends
                       << " ended, " << first.counts.deletes << " deleted, " << first.counts.unknown << " unknown, "
                       << first.counts.failed << " failed ("
                       << (first.status.ok() ? std::string("complete") : first.status.error().message) << "); "
                       << rounds.size() << " rounds in all; writes: " << done_reports.size() << " keys reported done, "
                       << unknown << " unknown, " << failed << " failed, " << not_sent << " not sent; "
                       << expected.ends + expected.removes << " keys to end or delete, " << written
                       << " keys written since the seed (the store's history), " << twice << " of them twice");
  CHECK(wrong == 0);
  CHECK(twice == 0);
  CHECK(written == expected.ends + expected.removes);
  CHECK(after.size() == present);
  CHECK(expected.ends + expected.removes > 50);
}

}  // namespace leasejudge::test
