// The step watch over the memory and file stores: the polling watch's changes, the
// start's sweep, each change judged, a key raced between its read and its write
// skipped and counted, a failing store retried, a stop between writes.
#include "leasejudge/watch.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fixtures/step/step_cases.hpp"
#include "leasejudge/stoppable_store.hpp"
#include "leasejudge/store/file.hpp"
#include "leasejudge/store/memory.hpp"

using namespace leasejudge;

namespace {

const std::string self(step_cases::self);
const std::string gone = "9d1f0a3c-0000-4c4b-9d5e-000000000000.77.lvq0";
const std::string ask = "6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";

std::string running(const std::string& id, const std::string& tool, const std::string& owner) {
  return "{\"id\":\"" + id + "\",\"tool\":\"" + tool + "\",\"state\":\"running\",\"owner\":\"" + owner +
         "\",\"started\":\"2024-05-01T10:00:00Z\"}";
}

StepWatchOptions options() {
  StepWatchOptions o;
  o.sweep.rules.owner = self;
  o.sweep.rules.before = step_cases::before;
  o.sweep.retry_ns = 1'000'000;
  o.interval_ns = 3'600'000'000'000;  // no round unless a test asks
  o.poll_ns = 5'000'000;
  o.tick_ns = 2'000'000;
  o.backoff_min_ns = 2'000'000;
  o.backoff_max_ns = 8'000'000;
  return o;
}

// A value's state field, "" when none.
std::string state_of(Store& s, const std::string& key) {
  auto got = s.get(key);
  if (!got || !*got) return "absent";
  const std::string& v = (*got)->value;
  auto at = v.find("\"state\":\"");
  if (at == std::string::npos) return "";
  at += 9;
  return v.substr(at, v.find('"', at) - at);
}

bool eventually(const std::function<bool()>& cond, int ms = 3000) {
  for (int i = 0; i < ms / 2; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return cond();
}

// A watch run on its own thread, stopped and joined when it goes.
struct Running {
  StepWatch watch{"n1", step_cases::before};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> lines;
  Status result;
  std::thread t;
  Running(Store& s, const StepWatchOptions& o) {
    t = std::thread([this, &s, o] {
      result = watch.run(
          s, o,
          [this](std::string_view l) {
            std::lock_guard lock(mu);
            lines.emplace_back(l);
          },
          [this] { return stop.load(); });
    });
  }
  bool logged(std::string_view part) {
    std::lock_guard lock(mu);
    for (const auto& l : lines)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
  void finish() {
    stop = true;
    if (t.joinable()) t.join();
  }
  ~Running() { finish(); }
};

// Every update loses its race: another writer moves the key first.
class RacingStore final : public Store {
 public:
  MemoryStore inner;
  Result<std::vector<std::string>> keys() override { return inner.keys(); }
  Result<std::optional<StoreEntry>> get(std::string_view key) override { return inner.get(key); }
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
    if (key == "n1.raced") inner.put(key, running("raced", "go build", self));
    return inner.update(key, value, revision);
  }
  Result<Revision> create(std::string_view key, std::string_view value) override { return inner.create(key, value); }
  Status remove(std::string_view key, Revision revision) override { return inner.remove(key, revision); }
};

// A store whose reads fail while `down` is set.
class FlakyStore final : public Store {
 public:
  MemoryStore inner;
  std::atomic<bool> down{false};
  Result<std::vector<std::string>> keys() override {
    if (down) return Error{Errc::store, "the store is down"};
    return inner.keys();
  }
  Result<std::optional<StoreEntry>> get(std::string_view key) override {
    if (down) return Error{Errc::store, "the store is down"};
    return inner.get(key);
  }
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
    if (down) return Error{Errc::store, "the store is down"};
    return inner.update(key, value, revision);
  }
  Result<Revision> create(std::string_view key, std::string_view value) override { return inner.create(key, value); }
  Status remove(std::string_view key, Revision revision) override { return inner.remove(key, revision); }
};

}  // namespace

TEST_SUITE("watch") {
  TEST_CASE("the polling watch hands over what moved and what went, never what was there") {
    MemoryStore s;
    s.put("n1.a", "1");
    s.put("n2.x", "1");
    KeyWatchOptions ko;
    ko.poll_ns = 1'000'000;
    auto w = s.watch("n1.", ko);
    REQUIRE(w.ok());
    std::vector<KeyChange> out;
    REQUIRE((*w)->next(out, 5'000'000).ok());
    CHECK(out.empty());
    Revision b = s.put("n1.b", "2");
    s.put("n2.y", "2");  // another prefix
    auto ra = s.get("n1.a");
    REQUIRE(ra.ok());
    REQUIRE(s.remove("n1.a", (**ra).revision).ok());
    for (int i = 0; i < 20 && out.size() < 2; ++i) REQUIRE((*w)->next(out, 5'000'000).ok());
    REQUIRE(out.size() == 2);
    std::sort(out.begin(), out.end(), [](const KeyChange& x, const KeyChange& y) { return x.key < y.key; });
    CHECK(out[0].key == "n1.a");
    CHECK_FALSE(out[0].value.has_value());
    CHECK(out[1].key == "n1.b");
    CHECK(out[1].revision == b);
    CHECK(out[1].value == std::optional<std::string>("2"));
    CHECK(out[1].written_unix_ns > 0);
  }

  TEST_CASE("a watch that polls never is refused") {
    MemoryStore s;
    KeyWatchOptions ko;
    ko.poll_ns = 0;
    auto w = s.watch("n1.", ko);
    REQUIRE_FALSE(w.ok());
    CHECK(w.code() == Errc::invalid_argument);
  }

  TEST_CASE("options out of range are refused before anything is read") {
    MemoryStore s;
    StepWatch w("n1", step_cases::before);
    for (int i = 0; i < 4; ++i) {
      StepWatchOptions o = options();
      if (i == 0) o.interval_ns = 0;
      if (i == 1) o.tick_ns = -1;
      if (i == 2) o.backoff_min_ns = 0;
      if (i == 3) o.backoff_max_ns = o.backoff_min_ns - 1;
      Status st = w.run(s, o, {}, [] { return false; });
      CHECK(st.code() == Errc::invalid_argument);
    }
    CHECK(w.figure(WatchFigure::sweeps) == 0);
  }

  TEST_CASE("the start's sweep, then each change judged as it comes; its own steps left") {
    MemoryStore s;
    s.put("n1.before", running("before", "go build", gone));
    s.put("n1.own", running("own", "go build", self));
    s.put("n2.other", running("other", "go build", gone));
    Running r(s, options());
    REQUIRE(eventually([&] { return state_of(s, "n1.before") == "failed"; }));
    s.put("n1.after", running("after", "go build", gone));
    REQUIRE(eventually([&] { return state_of(s, "n1.after") == "failed"; }));
    s.put("n1." + ask, running(ask, "check ask", gone));
    REQUIRE(eventually([&] { return state_of(s, "n1." + ask) == "absent"; }));
    s.put("n1.own2", running("own2", "go build", self));
    REQUIRE(eventually([&] { return r.watch.judged(StepReason::owned_by_self) >= 2; }));
    r.finish();
    CHECK(r.result.ok());
    CHECK(state_of(s, "n1.own") == "running");
    CHECK(state_of(s, "n1.own2") == "running");
    CHECK(state_of(s, "n2.other") == "running");
    CHECK(r.watch.figure(WatchFigure::ends) == 2);
    CHECK(r.watch.figure(WatchFigure::deletes) == 1);
    CHECK(r.watch.figure(WatchFigure::changed) == 0);
    CHECK(r.watch.figure(WatchFigure::sweeps) == 1);
    CHECK(r.watch.figure(WatchFigure::rounds) == 0);
    CHECK(r.watch.figure(WatchFigure::store_errors) == 0);
    CHECK(r.watch.judged(StepReason::owner_not_self) == 3);
    CHECK(r.watch.judged(StepReason::owned_by_self) == 2);
    CHECK(r.watch.figure(WatchFigure::last_sweep_unix_ns) > 0);
    CHECK(r.watch.figure(WatchFigure::last_clean_sweep_unix_ns) == r.watch.figure(WatchFigure::last_sweep_unix_ns));
    CHECK(r.logged("the step n1.after (go build, started 2024-05-01T10:00:00Z) was left running and is ended"));
  }

  TEST_CASE("a round every interval") {
    MemoryStore s;
    StepWatchOptions o = options();
    o.interval_ns = 20'000'000;
    Running r(s, o);
    REQUIRE(eventually([&] { return r.watch.figure(WatchFigure::rounds) >= 2; }));
    r.finish();
    CHECK(r.watch.figure(WatchFigure::sweeps) == r.watch.figure(WatchFigure::rounds) + 1);
  }

  TEST_CASE("a key moved between its read and its write is skipped and counted, never overwritten") {
    RacingStore s;
    Running r(s, options());
    REQUIRE(eventually([&] { return r.watch.figure(WatchFigure::sweeps) == 1; }));
    s.inner.put("n1.raced", running("raced", "go build", gone));
    REQUIRE(eventually([&] { return r.watch.figure(WatchFigure::changed) == 1; }));
    r.finish();
    auto got = s.inner.get("n1.raced");
    REQUIRE(got.ok());
    CHECK((**got).value == running("raced", "go build", self));  // the other writer's word stands
    CHECK(r.watch.figure(WatchFigure::ends) == 0);
  }

  TEST_CASE("a failing store is logged and retried; once back, a sweep reads what the gap hid") {
    FlakyStore s;
    s.down = true;
    Running r(s, options());
    REQUIRE(eventually([&] { return r.watch.figure(WatchFigure::store_errors) >= 3; }));
    CHECK(r.logged("trying again in"));
    CHECK(r.watch.figure(WatchFigure::last_clean_sweep_unix_ns) == 0);  // no sweep read the store
    s.inner.put("n1.gap", running("gap", "go build", gone));
    s.down = false;
    REQUIRE(eventually([&] { return state_of(s.inner, "n1.gap") == "failed"; }, 10000));
    REQUIRE(eventually([&] { return r.watch.figure(WatchFigure::last_clean_sweep_unix_ns) > 0; }, 10000));
    r.finish();
    CHECK(r.watch.figure(WatchFigure::reconnects) >= 1);
    CHECK(r.logged("watching the keys of n1 again"));
    CHECK(r.watch.figure(WatchFigure::ends) == 1);
  }

  TEST_CASE("a later run (the store opened again) starts with a round, its figures kept") {
    MemoryStore s;
    StepWatch w("n1", step_cases::before);
    s.put("n1.a", running("a", "go build", gone));
    std::atomic<int> calls{0};  // asked from two threads during the start
    auto stop_soon = [&] { return ++calls > 50; };
    REQUIRE(w.run(s, options(), {}, stop_soon).ok());
    CHECK(w.figure(WatchFigure::ends) == 1);
    s.put("n1.b", running("b", "go build", gone));
    calls = 0;
    REQUIRE(w.run(s, options(), {}, stop_soon).ok());
    CHECK(w.figure(WatchFigure::ends) == 2);
    CHECK(w.figure(WatchFigure::sweeps) == 2);
    CHECK(state_of(s, "n1.b") == "failed");
  }

  TEST_CASE("a stop asked before the first write sends none") {
    MemoryStore s;
    for (int i = 0; i < 50; ++i) s.put("n1.k" + std::to_string(i), running("k", "go build", gone));
    StepWatch w("n1", step_cases::before);
    REQUIRE(w.run(s, options(), {}, [] { return true; }).ok());
    CHECK(w.figure(WatchFigure::ends) == 0);
    for (int i = 0; i < 50; ++i) CHECK(state_of(s, "n1.k" + std::to_string(i)) == "running");
  }

  TEST_CASE("a stop between writes: every write sent lands whole, none after") {
    MemoryStore s;
    for (int i = 0; i < 200; ++i) s.put("n1.k" + std::to_string(i), running("k", "go build", gone));
    StepWatch w("n1", step_cases::before);
    StepWatchOptions o = options();
    o.sweep.window = 1;
    std::atomic<int> seen{0};
    o.sweep.on_key = [&](const SweepKey&) { ++seen; };
    REQUIRE(w.run(s, o, {}, [&] { return seen.load() >= 10; }).ok());
    std::size_t failed = 0, running_now = 0;
    for (int i = 0; i < 200; ++i) {
      std::string st = state_of(s, "n1.k" + std::to_string(i));
      if (st == "failed") ++failed;
      if (st == "running") ++running_now;
    }
    CHECK(failed == w.figure(WatchFigure::ends));
    CHECK(failed + running_now == 200);
    CHECK(failed >= 10);
    CHECK(failed < 200);
    CHECK(w.figure(WatchFigure::store_errors) == 0);  // the refusals of a stop are no store errors
  }

  TEST_CASE("the file store's keys are watched by polling") {
    auto dir = std::filesystem::temp_directory_path() / ("lj-watch-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    auto fs = FileStore::open(dir.string());
    REQUIRE(fs.ok());
    Store& s = **fs;
    Running r(s, options());
    REQUIRE(eventually([&] { return r.watch.figure(WatchFigure::sweeps) == 1; }));
    REQUIRE(s.create("n1.f", running("f", "go build", gone)).ok());
    REQUIRE(eventually([&] { return state_of(s, "n1.f") == "failed"; }));
    r.finish();
    CHECK(r.watch.figure(WatchFigure::ends) == 1);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("figure names") {
    CHECK(std::string(watch_figure_name(WatchFigure::sweeps)) == "sweeps");
    CHECK(std::string(watch_figure_name(WatchFigure::lag_ns)) == "lag-ns");
    CHECK(std::string(watch_figure_name(WatchFigure::last_clean_sweep_unix_ns)) == "last-clean-sweep-unix-ns");
    CHECK(std::string(watch_figure_name(static_cast<WatchFigure>(99))).empty());
  }
}
