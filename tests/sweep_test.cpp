#include "leasejudge/sweep.hpp"

#include <doctest/doctest.h>

#include <map>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "fixtures/step/step_cases.hpp"
#include "leasejudge/store/memory.hpp"

using namespace leasejudge;

namespace {

const std::string self(step_cases::self);
const std::string ask1 = "6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
const std::string ask2 = "7f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
const std::string ask3 = "8f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";

SweepOptions options() {
  SweepOptions o;
  o.rules.owner = self;
  o.rules.before = step_cases::before;
  o.clock = fixed_clock(step_cases::now);
  o.retry_ns = 1000000;  // 1 ms: the tests do not wait for the seed's 5 s
  return o;
}

std::string step(const std::string& id, const std::string& tool, const std::string& state, const std::string& owner,
                 const std::string& started) {
  std::string v = "{\"id\":\"" + id + "\",\"tool\":\"" + tool + "\",\"state\":\"" + state + "\"";
  if (!owner.empty()) v += ",\"owner\":\"" + owner + "\"";
  if (!started.empty()) v += ",\"started\":\"" + started + "\"";
  return v + ",\"result\":{\"x\":1}}";
}

// A store whose calls can fail or be raced, around a memory store.
class TestStore final : public Store {
 public:
  MemoryStore mem;
  int fail_keys = 0;       // the next n keys() calls fail
  std::string fail_get;    // get of this key fails
  std::string fail_write;  // update/remove of this key fails (Errc::store)
  std::string race;        // before update/remove of this key, another writer puts
  std::string race_value = "{\"id\":\"raced\",\"state\":\"succeeded\"}";
  int keys_calls = 0;

  Result<std::vector<std::string>> keys() override {
    ++keys_calls;
    if (fail_keys > 0) {
      --fail_keys;
      return Error{Errc::store, "the server is down"};
    }
    return mem.keys();
  }
  Result<std::optional<StoreEntry>> get(std::string_view key) override {
    if (key == fail_get) return Error{Errc::io, "the read broke"};
    return mem.get(key);
  }
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
    if (key == fail_write) return Error{Errc::store, "the write broke"};
    if (key == race) mem.put(key, race_value);
    return mem.update(key, value, revision);
  }
  Result<Revision> create(std::string_view key, std::string_view value) override { return mem.create(key, value); }
  Status remove(std::string_view key, Revision revision) override {
    if (key == fail_write) return Status(Errc::store, "the delete broke");
    if (key == race) mem.put(key, race_value);
    return mem.remove(key, revision);
  }
};

// A store whose pipeline holds every write in flight until its outcome is asked for,
// and can answer one key's write as unknown (never performed, or performed with its
// acknowledgement lost).
class DelayedStore final : public Store {
 public:
  MemoryStore mem;
  std::string unknown_key;     // its write's outcome is unknown
  bool unknown_lands = false;  // ... and it landed all the same
  std::size_t max_in_flight = 0;
  std::vector<std::string> sent;  // keys in the order sent

  Result<std::vector<std::string>> keys() override { return mem.keys(); }
  Result<std::optional<StoreEntry>> get(std::string_view key) override { return mem.get(key); }
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
    return mem.update(key, value, revision);
  }
  Result<Revision> create(std::string_view key, std::string_view value) override { return mem.create(key, value); }
  Status remove(std::string_view key, Revision revision) override { return mem.remove(key, revision); }
  Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& o, ScanStats* st) override {
    return mem.scan(prefix, sink, o, st);
  }

  class Pipe final : public WritePipeline {
   public:
    explicit Pipe(DelayedStore& s) : s_(s) {}
    void update(std::string_view key, std::string_view value, Revision revision) override {
      queue_.push_back({std::string(key), std::string(value), revision, false});
      s_.sent.emplace_back(key);
      s_.max_in_flight = std::max(s_.max_in_flight, queue_.size());
    }
    void remove(std::string_view key, Revision revision) override {
      queue_.push_back({std::string(key), {}, revision, true});
      s_.sent.emplace_back(key);
      s_.max_in_flight = std::max(s_.max_in_flight, queue_.size());
    }
    void create(std::string_view, std::string_view) override { FAIL("a sweep never creates"); }
    std::size_t in_flight() const override { return queue_.size(); }
    std::size_t ready() const override { return 0; }
    std::optional<WriteOutcome> next() override {
      if (queue_.empty()) return std::nullopt;
      Write w = std::move(queue_.front());
      queue_.erase(queue_.begin());
      if (w.key == s_.unknown_key) {
        if (s_.unknown_lands) perform(w);
        return WriteOutcome{WriteOutcome::Kind::unknown, 0, Error{Errc::timeout, "no acknowledgement came"}};
      }
      return perform(w);
    }

   private:
    struct Write {
      std::string key, value;
      Revision revision;
      bool remove;
    };
    WriteOutcome perform(const Write& w) {
      if (w.remove) {
        Status st = s_.mem.remove(w.key, w.revision);
        if (st) return WriteOutcome{};
        return WriteOutcome{st.code() == Errc::changed ? WriteOutcome::Kind::changed : WriteOutcome::Kind::failed, 0,
                            st.error()};
      }
      auto r = s_.mem.update(w.key, w.value, w.revision);
      if (r) return WriteOutcome{WriteOutcome::Kind::done, *r, {}};
      return WriteOutcome{r.code() == Errc::changed ? WriteOutcome::Kind::changed : WriteOutcome::Kind::failed, 0,
                          r.error()};
    }
    DelayedStore& s_;
    std::vector<Write> queue_;
  };
  std::unique_ptr<WritePipeline> pipeline(const PipelineOptions&) override { return std::make_unique<Pipe>(*this); }
};

std::string value_of(Store& s, const std::string& key) {
  auto e = s.get(key);
  REQUIRE(e.ok());
  return *e ? (*e)->value : std::string("<none>");
}

// Every kind of key a node's steps state holds.
// In key order, the order the store's scan hands them over (the order they are
// first written).
void fill(MemoryStore& m) {
  m.put("loose", step("loose", "go build", "running", "o.1.2", "2024-05-01T10:00:00Z"));
  m.put("n1." + ask1, step(ask1, "check ask", "running", "o.1.2", "2024-05-01T11:59:00Z"));
  m.put("n1." + ask2, step(ask2, "check ask", "running", "", "2024-05-01T10:30:00Z"));
  m.put("n1." + ask3, step(ask3, "check ask", "running", "", "2024-05-01T11:30:00Z"));
  m.put("n1.a-own", step("a-own", "go build", "running", self, "2024-05-01T10:00:00Z"));
  m.put("n1.b-other", step("b-other", "go build", "running", "o.1.2", "2024-05-01T11:30:00Z"));
  m.put("n1.c-old", step("c-old", "go build", "running", "", "2024-05-01T10:59:00Z"));
  m.put("n1.d-new", step("d-new", "go build", "running", "", "2024-05-01T11:01:00Z"));
  m.put("n1.e-done", step("e-done", "go build", "succeeded", "o.1.2", "2024-05-01T10:00:00Z"));
  m.put("n1.f-bad", "{\"id\":\"f-bad\",\"state\":\"running\",\"owner\":\"o.1.2\",\"started\":7}");
  m.put("n1.g-cut", "{\"id\":\"g-cut\",\"state\":\"running\",\"owner\":\"o.1.2\"");
  m.put("n2.h-far", step("h-far", "go build", "running", "o.1.2", "2024-05-01T10:00:00Z"));
}

const std::string restart = "the build module restarted while it ran";

// A sweep over fill's keys, in order: ask1, ask2, ask3, a-own, b-other, ...
std::vector<std::string> expected_log() {
  return {
      "the step n1." + ask1 +
          " (check ask, started 2024-05-01T11:59:00Z) was left running and is deleted, left to "
          "the stream's redelivery: " +
          restart + "; its owner o.1.2 is not this process " + self,
      "the step n1." + ask2 +
          " (check ask, started 2024-05-01T10:30:00Z) was left running and is ended: past the "
          "step bound: its asker stopped waiting at 2024-05-01T11:30:00Z; it names no owner (an older build wrote it)",
      "the step n1.b-other (go build, started 2024-05-01T11:30:00Z) was left running and is ended: " + restart +
          "; its owner o.1.2 is not this process " + self,
      "the step n1.c-old (go build, started 2024-05-01T10:59:00Z) was left running and is ended: " + restart +
          "; it names no owner (an older build wrote it) and started before this process",
  };
}

std::string ended_value(const std::string& id, const std::string& tool, const std::string& owner,
                        const std::string& started, const std::string& why) {
  std::string v = "{\"id\":\"" + id + "\",\"tool\":\"" + tool + "\",\"state\":\"failed\"";
  if (!owner.empty()) v += ",\"owner\":\"" + owner + "\"";
  return v + ",\"started\":\"" + started + "\",\"reason\":\"" + why + "\",\"ended\":\"2024-05-01T12:00:00Z\"}";
}

}  // namespace

TEST_SUITE("sweep") {
  TEST_CASE("end_stale ends, deletes and leaves as the seed, logging each") {
    TestStore store;
    fill(store.mem);
    std::string untouched[] = {"n1.a-own", "n1." + ask3, "n1.d-new", "n1.e-done",
                               "n1.f-bad", "n1.g-cut",   "n2.h-far", "loose"};
    std::vector<std::string> before_values;
    for (const auto& k : untouched) before_values.push_back(value_of(store, k));

    std::vector<std::string> log;
    SweepReport r = end_stale(
        store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, options());
    REQUIRE(r.status.ok());
    CHECK(r.ended == std::vector<std::string>{ask1, ask2, "b-other", "c-old"});
    CHECK(log == expected_log());
    CHECK(r.counts.ends == 3);
    CHECK(r.counts.deletes == 1);
    CHECK(r.counts.changed == 0);
    CHECK(r.counts.left == 4);  // a-own, ask3, d-new, e-done
    CHECK(r.counts.no_step == 2);
    CHECK(r.counts.other_node == 0);  // n2.h-far and loose: the sweep reads only n1.*

    CHECK(value_of(store, "n1.b-other") ==
          ended_value("b-other", "go build", "o.1.2", "2024-05-01T11:30:00Z", restart));
    CHECK(value_of(store, "n1." + ask1) == "<none>");
    CHECK(value_of(store, "n1." + ask2) ==
          ended_value(ask2, "check ask", "", "2024-05-01T10:30:00Z",
                      "past the step bound: its asker stopped waiting at 2024-05-01T11:30:00Z"));
    CHECK(value_of(store, "n1.c-old") == ended_value("c-old", "go build", "", "2024-05-01T10:59:00Z", restart));
    for (std::size_t i = 0; i < std::size(untouched); ++i) CHECK(value_of(store, untouched[i]) == before_values[i]);

    // A second sweep finds nothing more to do.
    log.clear();
    r = end_stale(
        store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, options());
    CHECK(r.status.ok());
    CHECK(r.ended.empty());
    CHECK(log.empty());
  }

  TEST_CASE("plan then apply: a key changed in between is skipped, counted and never overwritten") {
    MemoryStore store;
    fill(store);
    // Read every key, as a sweep does.
    std::vector<std::string> keys = *store.keys();
    std::vector<StoreEntry> read;
    for (const auto& k : keys) read.push_back(**store.get(k));
    std::vector<SweepEntry> entries;
    for (std::size_t i = 0; i < keys.size(); ++i)
      entries.push_back(SweepEntry{keys[i], read[i].revision, read[i].value});

    SweepPlan plan = plan_sweep(entries, *sweep_rules("n1", step_cases::before, options()));
    REQUIRE(plan.actions.size() == 4);
    CHECK(plan.counts.ends == 3);
    CHECK(plan.counts.deletes == 1);
    CHECK(plan.actions[0].verdict.action == StepAction::remove);
    CHECK(plan.actions[0].why == restart);
    CHECK(plan.actions[0].said == "its owner o.1.2 is not this process " + self);
    CHECK(plan.actions[1].verdict.reason == StepReason::ask_past_bound);

    // Another writer gets to two of them first: a real end, and a redelivered ask.
    const std::string real_end = "{\"id\":\"b-other\",\"state\":\"succeeded\"}";
    const std::string redelivered = step(ask1, "check ask", "running", "o.9.9", "2024-05-01T11:59:30Z");
    store.put("n1.b-other", real_end);
    store.put("n1." + ask1, redelivered);

    std::vector<std::string> log;
    SweepReport r = apply_sweep(
        store, entries, plan, [&](std::string_view l) { log.emplace_back(l); }, options());
    CHECK(r.status.ok());
    CHECK(r.ended == std::vector<std::string>{ask2, "c-old"});
    CHECK(r.counts.changed == 2);
    CHECK(r.counts.ends == 2);
    CHECK(r.counts.deletes == 0);
    CHECK(log == std::vector<std::string>{expected_log()[1], expected_log()[3]});
    CHECK(value_of(store, "n1.b-other") == real_end);
    CHECK(value_of(store, "n1." + ask1) == redelivered);
  }

  TEST_CASE("end_stale skips a key raced between its read and its write") {
    TestStore store;
    fill(store.mem);
    store.race = "n1.b-other";
    SweepReport r = end_stale(store, "n1", step_cases::before, {}, options());
    CHECK(r.status.ok());
    CHECK(r.counts.changed == 1);
    CHECK(r.ended == std::vector<std::string>{ask1, ask2, "c-old"});
    CHECK(value_of(store, "n1.b-other") == store.race_value);
    store.race = "n1." + ask1;  // and a delete raced by a redelivery
    store.mem.put("n1." + ask1, step(ask1, "check ask", "running", "o.1.2", "2024-05-01T11:59:00Z"));
    r = end_stale(store, "n1", step_cases::before, {}, options());
    CHECK(r.counts.changed == 1);
    CHECK(r.ended.empty());
    CHECK(value_of(store, "n1." + ask1) == store.race_value);
  }

  TEST_CASE("a store error stops the sweep with what was done") {
    TestStore store;
    fill(store.mem);
    store.fail_keys = 1;
    SweepReport r = end_stale(store, "n1", step_cases::before, {}, options());
    CHECK(r.status.code() == Errc::store);
    CHECK(r.status.error().message == "buildstep: listing the steps of n1: the server is down");
    CHECK(r.ended.empty());

    store.fail_get = "n1.c-old";
    r = end_stale(store, "n1", step_cases::before, {}, options());
    CHECK(r.status.code() == Errc::io);
    CHECK(r.status.error().message == "buildstep: reading the step n1.c-old: the read broke");
    CHECK(r.ended == std::vector<std::string>{ask1, ask2, "b-other"});

    TestStore again;
    fill(again.mem);
    again.fail_write = "n1." + ask2;
    std::vector<std::string> log;
    r = end_stale(
        again, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, options());
    CHECK(r.status.code() == Errc::store);
    CHECK(r.status.error().message == "buildstep: ending the step n1." + ask2 + ": the write broke");
    CHECK(r.ended == std::vector<std::string>{ask1});
    CHECK(r.counts.ends == 0);
    CHECK(r.counts.deletes == 1);
    CHECK(log.size() == 1);
    CHECK(value_of(again, "n1.c-old") == step("c-old", "go build", "running", "", "2024-05-01T10:59:00Z"));

    // apply_sweep stops the same way, and counts no action it never tried.
    MemoryStore m;
    fill(m);
    std::vector<std::string> keys = *m.keys();
    std::vector<StoreEntry> read;
    for (const auto& k : keys) read.push_back(**m.get(k));
    std::vector<SweepEntry> entries;
    for (std::size_t i = 0; i < keys.size(); ++i)
      entries.push_back(SweepEntry{keys[i], read[i].revision, read[i].value});
    SweepPlan plan = plan_sweep(entries, *sweep_rules("n1", step_cases::before, options()));
    TestStore failing;
    fill(failing.mem);
    failing.fail_write = "n1.b-other";
    r = apply_sweep(failing, entries, plan, {}, options());
    CHECK(r.status.code() == Errc::store);
    CHECK(r.ended == std::vector<std::string>{ask1, ask2});
    CHECK(r.counts.ends == 1);
    CHECK(r.counts.deletes == 1);
  }

  TEST_CASE("end_stale keeps a window of writes in flight, and an unknown outcome stops it") {
    // The actions in key order: ask1 (delete), ask2, b-other, c-old (ends).
    for (bool lands : {false, true}) {
      CAPTURE(lands);
      DelayedStore store;
      fill(store.mem);
      store.unknown_key = "n1." + ask2;
      store.unknown_lands = lands;
      const std::string c_old = value_of(store, "n1.c-old");
      SweepOptions o = options();
      o.window = 2;
      std::vector<std::string> log;
      SweepReport r = end_stale(
          store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, o);
      CHECK(r.status.code() == Errc::timeout);
      CHECK(r.status.error().message ==
            "buildstep: ending the step n1." + ask2 + ": its outcome is unknown: no acknowledgement came");
      CHECK(store.max_in_flight == 2);
      // b-other was in flight when ask2's outcome came: it is waited for; c-old is never sent.
      CHECK(store.sent == std::vector<std::string>{"n1." + ask1, "n1." + ask2, "n1.b-other"});
      CHECK(r.ended == std::vector<std::string>{ask1, "b-other"});
      CHECK(r.counts.deletes == 1);
      CHECK(r.counts.ends == 1);
      CHECK(r.counts.unknown == 1);
      CHECK(r.counts.failed == 0);
      CHECK(r.counts.not_sent == 1);
      REQUIRE(r.writes.size() == 3);
      CHECK(r.writes[0].key == "n1." + ask1);
      CHECK(r.writes[0].outcome == SweepOutcome::done);
      CHECK(r.writes[0].action == StepAction::remove);
      CHECK(r.writes[1].key == "n1." + ask2);
      CHECK(r.writes[1].outcome == SweepOutcome::unknown);
      CHECK(r.writes[2].key == "n1.b-other");
      CHECK(r.writes[2].outcome == SweepOutcome::done);
      CHECK(r.stats.writes == 3);
      CHECK(r.stats.max_in_flight == 2);
      CHECK(log == std::vector<std::string>{expected_log()[0],
                                            "the write ending the step n1." + ask2 +
                                                " has an unknown outcome (it may have landed): no acknowledgement came",
                                            expected_log()[2]});
      CHECK(value_of(store, "n1.c-old") == c_old);
      CHECK((value_of(store, "n1." + ask2).find("\"state\":\"failed\"") != std::string::npos) == lands);
    }
  }

  TEST_CASE("a sweep that stops early counts and tells of every key it read, the ones after the stop too") {
    // One batch; ask2's write is unknown and stops the sweep with one write in flight:
    // b-other, c-old and the keys after them were read and are never reached.
    DelayedStore store;
    fill(store.mem);
    store.unknown_key = "n1." + ask2;
    SweepOptions o = options();
    o.window = 1;
    std::vector<std::pair<std::string, SweepOutcome>> seen;
    o.on_key = [&](const SweepKey& k) { seen.emplace_back(std::string(k.key), k.outcome); };
    SweepReport r = end_stale(store, "n1", step_cases::before, {}, o);
    CHECK(r.status.code() == Errc::timeout);
    CHECK(store.sent == std::vector<std::string>{"n1." + ask1, "n1." + ask2});
    const SweepCounts& c = r.counts;
    // Every key read lands in exactly one count, and the observer hears of each once.
    CHECK(c.ends + c.deletes + c.changed + c.left + c.no_step + c.other_node + c.failed + c.unknown + c.not_sent ==
          r.stats.keys);
    CHECK(seen.size() == r.stats.keys);
    CHECK(c.unknown == 1);
    CHECK(c.deletes == 1);
    CHECK(c.not_sent == 2);  // b-other and c-old: planned ends never sent
    std::size_t not_sent = 0;
    for (const auto& [key, outcome] : seen) not_sent += outcome == SweepOutcome::not_sent;
    CHECK(not_sent == 2);
    CHECK(value_of(store, "n1.b-other").find("\"state\":\"failed\"") == std::string::npos);
  }

  TEST_CASE("a dry run plans and tells the observer of every key, and writes nothing") {
    MemoryStore store;
    fill(store);
    const std::vector<std::string> keys = *store.keys();
    std::vector<std::string> before;
    for (const auto& k : keys) before.push_back(value_of(store, k));
    SweepOptions o = options();
    o.dry_run = true;
    std::vector<std::string> seen;
    o.on_key = [&](const SweepKey& k) {
      seen.push_back(fmt::format("{} {} {} {} {}", k.key, step_action_name(k.verdict.action),
                                 step_reason_name(k.verdict.reason), sweep_outcome_name(k.outcome), k.why));
    };
    std::vector<std::string> log;
    SweepReport r = end_stale(
        store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, o);
    REQUIRE(r.status.ok());
    CHECK(log.empty());
    CHECK(r.ended.empty());
    CHECK(r.writes.empty());
    CHECK(r.counts.ends == 3);
    CHECK(r.counts.deletes == 1);
    CHECK(r.counts.left == 4);
    CHECK(r.counts.no_step == 2);
    std::vector<std::string> after;
    for (const auto& k : keys) after.push_back(value_of(store, k));
    CHECK(after == before);
    CHECK(seen == std::vector<std::string>{
                      "n1." + ask1 + " delete owner-not-self planned " + restart,
                      "n1." + ask2 +
                          " end ask-past-bound planned past the step bound: its asker stopped waiting at "
                          "2024-05-01T11:30:00Z",
                      "n1." + ask3 + " leave ask-within-bound left ",
                      "n1.a-own leave owned-by-self left ",
                      "n1.b-other end owner-not-self planned " + restart,
                      "n1.c-old end started-before planned " + restart,
                      "n1.d-new leave started-since left ",
                      "n1.e-done leave not-running left ",
                      "n1.f-bad leave no-step left ",
                      "n1.g-cut leave no-step left ",
                  });
  }

  TEST_CASE("the rule provably-dead in a sweep") {
    MemoryStore store;
    fill(store);
    SweepOptions o = options();
    o.rules.rule = OwnerRule::provably_dead;
    o.rules.judge = [](std::string_view) { return HolderJudgement{HolderState::alive, "pid 2 runs"}; };
    SweepReport r = end_stale(store, "n1", step_cases::before, {}, o);
    CHECK(r.ended == std::vector<std::string>{ask2, "c-old"});  // only steps with no owner
    o.rules.judge = [](std::string_view) { return HolderJudgement{HolderState::dead, "pid 2 is gone"}; };
    std::vector<std::string> log;
    r = end_stale(
        store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, o);
    CHECK(r.ended == std::vector<std::string>{ask1, "b-other"});
    REQUIRE(log.size() == 2);
    CHECK(log[1] == "the step n1.b-other (go build, started 2024-05-01T11:30:00Z) was left running and is ended: " +
                        restart + "; its owner o.1.2 is provably gone: pid 2 is gone");
  }

  TEST_CASE("end_one refuses as the seed does") {
    TestStore store;
    fill(store.mem);
    store.mem.put("n1.x", step("x", "go build", "running", "o.1.2", "2024-05-01T10:00:00Z"));
    SweepOptions o = options();
    auto refused = [&](const std::string& id, const std::string& why, Errc code, const std::string& message,
                       const StepLive& live = {}) {
      auto r = end_one(store, "n1", id, why, live, o);
      REQUIRE_FALSE(r.ok());
      CHECK(r.code() == code);
      CHECK(r.error().message == message);
    };
    refused("n2.x", "w", Errc::invalid_argument, "the step \"n2.x\" is of node \"n2\", this module runs on \"n1\"");
    refused("n2.\x01\xff", "w", Errc::invalid_argument,
            "the step \"n2.\\x01\\xff\" is of node \"n2\", this module runs on \"n1\"");
    refused("n1.x", " \t\n", Errc::invalid_argument, "say why the step is ended (why)");
    refused("n1.x", "", Errc::invalid_argument, "say why the step is ended (why)");
    refused("", "w", Errc::invalid_argument, "a step's id is empty");
    refused("n1.", "w", Errc::invalid_argument, "a step's id is empty");
    refused("nope", "w", Errc::not_found, "no step n1.nope in the steps state");
    refused("f-bad", "w", Errc::parse, "the step n1.f-bad is no step: its started is no RFC 3339 time");
    refused("e-done", "w", Errc::refused, "the step n1.e-done is succeeded, not running");
    const std::string mine =
        "was started by this process and may run now; only a step a previous process left is ended";
    refused("a-own", "w", Errc::refused, "the step n1.a-own " + mine);
    refused("d-new", "w", Errc::refused, "the step n1.d-new " + mine);  // no owner, started since boot
    std::string asked;
    refused(" n1.x\u2003", "w", Errc::refused, "the step n1.x " + mine, [&](std::string_view id) {
      asked = std::string(id);
      return true;
    });
    CHECK(asked == "x");
    store.race = "n1.x";
    refused("x", "w", Errc::changed, "the step n1.x changed while it was being ended; read it again");
    CHECK(value_of(store, "n1.x") == store.race_value);
    store.race.clear();
    store.fail_write = "n1.c-old";
    refused("c-old", "w", Errc::store, "the write broke");
    store.fail_write.clear();
    store.fail_get = "n1.c-old";
    refused("c-old", "w", Errc::io, "the read broke");
    store.fail_get.clear();
    o.rules.rule = OwnerRule::provably_dead;
    o.rules.judge = [](std::string_view) { return HolderJudgement{HolderState::unknown, "cannot read pid 2"}; };
    refused("b-other", "w", Errc::refused,
            "the step n1.b-other is owned by o.1.2, which is not proven gone (unknown: cannot read pid 2); only a step "
            "a previous process left is ended");
    o.rules.rule = OwnerRule::not_self;

    // And ends what it may.
    auto done = end_one(store, "n1", "n1.b-other", "stuck for a day", {}, o);
    REQUIRE(done.ok());
    CHECK(done->id == "b-other");
    CHECK(done->state == "failed");
    CHECK(done->reason == "stuck for a day");
    CHECK(done->owner == "o.1.2");
    CHECK(done->result == std::optional<std::string>("{\"x\":1}"));  // as read, as the seed's answer
    CHECK(value_of(store, "n1.b-other") ==
          ended_value("b-other", "go build", "o.1.2", "2024-05-01T11:30:00Z", "stuck for a day"));
    auto no_owner = end_one(
        store, "n1", "c-old", "w", [](std::string_view) { return false; }, o);
    CHECK(no_owner.ok());
  }

  TEST_CASE("end_stale_at_start waits, retries, says once, and stops on cancel") {
    SUBCASE("cancelled before serving: no sweep") {
      TestStore store;
      fill(store.mem);
      SweepSignals signals;
      signals.cancel();
      CHECK_FALSE(end_stale_at_start(store, "n1", step_cases::before, {}, signals, options()).has_value());
      CHECK(store.keys_calls == 0);
    }
    SUBCASE("served later, from another thread") {
      TestStore store;
      fill(store.mem);
      SweepSignals signals;
      std::vector<std::string> log;
      std::thread server([&] { signals.serve(); });
      auto r = end_stale_at_start(
          store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, signals, options());
      server.join();
      REQUIRE(r.has_value());
      CHECK(r->ended.size() == 4);
      REQUIRE(log.size() == 5);
      CHECK(log[4] == "4 steps of n1 left running by a previous process ended");
    }
    SUBCASE("tries again while the state cannot be read") {
      TestStore store;
      fill(store.mem);
      store.fail_keys = 2;
      SweepSignals signals;
      signals.serve();
      std::vector<std::string> log;
      auto r = end_stale_at_start(
          store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, signals, options());
      REQUIRE(r.has_value());
      CHECK(r->status.ok());
      CHECK(store.keys_calls == 3);
      REQUIRE(log.size() == 7);
      CHECK(log[0] ==
            "ending the steps left running (try 1 of 6): buildstep: listing the steps of n1: the server is down");
      CHECK(log[1] ==
            "ending the steps left running (try 2 of 6): buildstep: listing the steps of n1: the server is down");
      CHECK(log[6] == "4 steps of n1 left running by a previous process ended");
    }
    SUBCASE("gives up after its attempts") {
      TestStore store;
      store.fail_keys = 100;
      SweepSignals signals;
      signals.serve();
      SweepOptions o = options();
      o.attempts = 3;
      std::vector<std::string> log;
      auto r = end_stale_at_start(
          store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, signals, o);
      REQUIRE(r.has_value());
      CHECK(r->status.code() == Errc::store);
      CHECK(store.keys_calls == 3);
      REQUIRE(log.size() == 3);
      CHECK(log[2] ==
            "ending the steps left running (try 3 of 3): buildstep: listing the steps of n1: the server is down");
    }
    SUBCASE("a cancel ends the wait between tries") {
      TestStore store;
      store.fail_keys = 100;
      SweepSignals signals;
      signals.serve();
      SweepOptions o = options();
      o.retry_ns = 3600LL * 1000000000;
      std::atomic<int> lines{0};
      std::thread canceller;
      auto r = end_stale_at_start(
          store, "n1", step_cases::before,
          [&](std::string_view) {
            if (lines++ == 0) canceller = std::thread([&] { signals.cancel(); });
          },
          signals, o);
      canceller.join();
      REQUIRE(r.has_value());
      CHECK(store.keys_calls == 1);
    }
    SUBCASE("says once when the boot id cannot be read") {
      TestStore store;
      SweepSignals signals;
      signals.serve();
      SweepOptions o = options();
      o.rules.owner = "no-boot-id.4242.lvq1g2a8";
      std::vector<std::string> log;
      auto r = end_stale_at_start(
          store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, signals, o);
      REQUIRE(r.has_value());
      REQUIRE(log.size() == 2);
      CHECK(log[0] ==
            "the boot id of n1 cannot be read (/proc/sys/kernel/random/boot_id): its steps' owner is "
            "no-boot-id.4242.lvq1g2a8, told apart by pid and start only");
      CHECK(log[1] == "0 steps of n1 left running by a previous process ended");
    }
  }

  TEST_CASE("end_stale_round runs only once served, before = this process's start") {
    TestStore store;
    fill(store.mem);
    SweepSignals signals;
    std::vector<std::string> log;
    auto logf = [&](std::string_view l) { log.emplace_back(l); };
    CHECK_FALSE(end_stale_round(store, "n1", logf, signals, options()).has_value());
    CHECK(store.keys_calls == 0);
    signals.serve();
    SweepOptions o = options();
    o.rules.before = Instant{1714561140, 0};  // 10:59:00: c-old started exactly then, so is left
    auto r = end_stale_round(store, "n1", logf, signals, o);
    REQUIRE(r.has_value());
    CHECK(r->ended == std::vector<std::string>{ask1, ask2, "b-other"});
    store.fail_keys = 1;
    log.clear();
    r = end_stale_round(store, "n1", logf, signals, o);
    REQUIRE(r.has_value());
    CHECK(log == std::vector<std::string>{
                     "ending the steps left running: buildstep: listing the steps of n1: the server is down"});
  }

  TEST_CASE("values that are no step are left untouched and counted, however they break") {
    MemoryStore store;
    const std::string running = "{\"id\":\"x\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\"";
    std::vector<std::pair<std::string, std::string>> broken = {
        {"n1.cut", running},                                                 // truncated
        {"n1.type-state", "{\"state\":[\"running\"],\"owner\":\"o.1.2\"}"},  // wrong types, one per field
        {"n1.type-owner", "{\"state\":\"running\",\"owner\":7}"},
        {"n1.type-tool", "{\"state\":\"running\",\"owner\":\"o\",\"tool\":{}}"},
        {"n1.type-id", "{\"state\":\"running\",\"owner\":\"o\",\"id\":true}"},
        {"n1.type-reason", "{\"state\":\"running\",\"owner\":\"o\",\"reason\":1}"},
        {"n1.type-started", "{\"state\":\"running\",\"owner\":\"o\",\"started\":\"yesterday\"}"},
        {"n1.type-ended", "{\"state\":\"running\",\"owner\":\"o\",\"ended\":0}"},
        {"n1.type-ask", "{\"state\":\"running\",\"owner\":\"o\",\"ask\":\"x\"}"},
        {"n1.type-levels", "{\"state\":\"running\",\"owner\":\"o\",\"ask\":{\"check\":{\"levels\":[1]}}}"},
        {"n1.bom", "\xef\xbb\xbf" + running + "}"},
        {"n1.trailing", running + "} {}"},
        {"n1.nul", running + "}\0"},
        {"n1.nul-inside", "{\"state\":\"running\",\"owner\":\"o\0\"}"},
        {"n1.big", running + ",\"result\":\"" + std::string(1 << 20, 'x') + "\""},  // 1 MB, unclosed
        {"n1.deep", running + ",\"result\":" + std::string(10000, '[') + std::string(10000, ']') + "}"},
        {"n1.bad-escape", running + ",\"result\":\"\\q\"}"},
        {"n1.bad-utf8-out", running + ",\"result\":\xff}"},
    };
    broken[12].second.push_back('\0');  // the literals above stop at their NUL
    broken[13].second = std::string("{\"state\":\"running\",\"owner\":\"o\0\"}", 32);
    for (const auto& [k, v] : broken) store.put(k, v);
    // A few that Go does take, next to them.
    store.put("n1.big-ok", running + ",\"result\":\"" + std::string(1 << 20, 'x') + "\"}");
    store.put("n1.deep-ok", running + ",\"result\":" + std::string(9999, '[') + std::string(9999, ']') + "}");
    store.put("n1.utf8-ok", "{\"id\":\"u\",\"state\":\"running\",\"owner\":\"o\\u00e9\xff\"}");

    std::vector<std::string> log;
    SweepReport r = end_stale(
        store, "n1", step_cases::before, [&](std::string_view l) { log.emplace_back(l); }, options());
    REQUIRE(r.status.ok());
    CHECK(r.counts.no_step == broken.size());
    CHECK(r.counts.ends == 3);
    CHECK(r.ended == std::vector<std::string>{"x", "x", "u"});
    for (const auto& [k, v] : broken) {
      CAPTURE(k);
      CHECK(value_of(store, k) == v);
    }
    REQUIRE(log.size() == 3);
    CHECK(log[2] == "the step n1.utf8-ok (, started 0001-01-01T00:00:00Z) was left running and is ended: " + restart +
                        "; its owner o\xc3\xa9\xef\xbf\xbd is not this process " + self);
  }

  TEST_CASE("a sweep over a generated state ends exactly what the plan says") {
    MemoryStore store;
    // Written in key order (the last of a key's values standing), so that the scan's
    // order is the keys' order.
    std::map<std::string, std::string> state;
    for (const auto& c : step_cases::corpus(3000, 11)) state[c.key] = c.value;
    for (const auto& [k, v] : state) store.put(k, v);
    std::vector<std::string> keys = *store.keys();
    std::vector<StoreEntry> read;
    for (const auto& k : keys) read.push_back(**store.get(k));
    std::vector<SweepEntry> entries;
    for (std::size_t i = 0; i < keys.size(); ++i)
      entries.push_back(SweepEntry{keys[i], read[i].revision, read[i].value});
    SweepPlan plan = plan_sweep(entries, *sweep_rules("n1", step_cases::before, options()));
    SweepReport r = end_stale(store, "n1", step_cases::before, {}, options());
    REQUIRE(r.status.ok());
    CHECK(r.ended.size() == plan.actions.size());
    CHECK(r.counts.ends == plan.counts.ends);
    CHECK(r.counts.deletes == plan.counts.deletes);
    CHECK(r.counts.left == plan.counts.left);
    CHECK(r.counts.no_step == plan.counts.no_step);
    CHECK(plan.counts.other_node > 0);
    CHECK(r.counts.other_node == 0);  // other nodes' keys are never read
    CHECK(r.stats.keys == keys.size() - plan.counts.other_node);
    std::size_t i = 0;
    StepCodec codec;
    for (const auto& a : plan.actions) {
      const std::string& key = keys[a.entry];
      CHECK(r.ended[i++] == a.id);
      if (a.verdict.action == StepAction::remove) {
        CHECK(value_of(store, key) == "<none>");
      } else {
        auto expected = codec.end(read[a.entry].value, a.why, step_cases::now);
        REQUIRE(expected.ok());
        CHECK(value_of(store, key) == *expected);
      }
    }
  }
}
