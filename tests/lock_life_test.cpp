// The lock's life on a store: acquire, renew, release, a lost race, the heartbeat and
// waiting for a lock.
#include <condition_variable>
#include <mutex>

#include "leasejudge/store_lease.hpp"
#include "lock_fixtures.hpp"

using namespace leasejudge;
using namespace leasejudge::lock_test;

TEST_SUITE("lock") {
  // --- the lock's life on a store -------------------------------------------------------------

  namespace {

  LockRequest request_for(std::string purpose, std::string id) {
    LockRequest r;
    r.purpose = std::move(purpose);
    r.id = std::move(id);
    r.holder = ProcessHolder{600000};
    r.here = test_here();
    r.author = BodyAuthor{"build-7", std::string("m-aaa"), 300, std::nullopt};
    r.describe = answer(ExecutionState::running());
    return r;
  }

  // A store whose next remove or create loses a race against another writer.
  class RacingStore final : public Store {
   public:
    explicit RacingStore(MemoryStore& inner) : inner_(inner) {}
    Result<std::vector<std::string>> keys() override { return inner_.keys(); }
    Result<std::optional<StoreEntry>> get(std::string_view key) override { return inner_.get(key); }
    Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
      return inner_.update(key, value, revision);
    }
    Result<Revision> create(std::string_view key, std::string_view value) override {
      if (armed_) inner_.put(key, "someone else");
      return inner_.create(key, value);
    }
    Status remove(std::string_view key, Revision revision) override {
      if (race_remove) inner_.put(key, "renewed meanwhile");
      Status removed = inner_.remove(key, revision);
      if (removed && race_create) armed_ = true;
      return removed;
    }
    bool race_remove = false;
    bool race_create = false;

   private:
    MemoryStore& inner_;
    bool armed_ = false;
  };

  void life_on(Store& store) {
    const std::string key = "locks/state";
    SUBCASE("acquire a free lock, renew it, release it") {
      auto got = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::acquired);
      CHECK(!got->verdict);
      CHECK(got->broke_at == 0);
      HeldLock lock = got->lock;
      CHECK(lock.id == "id-1");
      CHECK(lock.lease_ms == 600000);
      CHECK(lock.body == R"({"purpose":"deploy","id":"id-1","host":"build-7","machine":"m-aaa","pid":300,)"
                         R"("startedAt":"2024-05-01T12:00:00.000Z","leaseUntil":"2024-05-01T12:15:00.000Z"})");
      auto stored = store.get(key);
      REQUIRE(stored.ok());
      REQUIRE(stored->has_value());
      CHECK((*stored)->value == lock.body);
      CHECK((*stored)->revision == lock.revision);

      const Revision first = lock.revision;
      REQUIRE(renew_lock(store, lock, Instant::from_unix_ms(now_ms + 200000)).ok());
      CHECK(lock.revision > first);
      CHECK(lock.body.find(R"("leaseUntil":"2024-05-01T12:18:20.000Z")") != std::string::npos);
      CHECK((*store.get(key))->value == lock.body);

      CHECK(release_lock(store, lock).ok());
      CHECK(!store.get(key)->has_value());
      CHECK(release_lock(store, lock).code() == Errc::not_found);
    }
    SUBCASE("a live holder keeps the lock") {
      auto first = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(first.ok());
      auto second = acquire_lock(store, key, request_for("other", "id-2"), Instant::from_unix_ms(now_ms + 60000));
      REQUIRE(second.ok());
      CHECK(second->outcome == Acquisition::Outcome::held);
      REQUIRE(second->verdict);
      CHECK(second->verdict->reason == LockReason::lease_runs);
      CHECK(second->broke_at == 0);
      CHECK((*store.get(key))->value == first->lock.body);
    }
    SUBCASE("a dead holder's lock is broken at the revision judged, with a fencing token") {
      auto first = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(first.ok());
      LockRequest later = request_for("other", "id-2");
      auto second = acquire_lock(store, key, later, Instant::from_unix_ms(now_ms + 900001));
      REQUIRE(second.ok());
      CHECK(second->outcome == Acquisition::Outcome::acquired);
      REQUIRE(second->verdict);
      check_verdict(*second->verdict, K::break_lock, LockReason::lease_ended, false,
                    "deploy (on build-7, pid 300, started 2024-05-01T12:00:00.000Z) stopped renewing its lock; its "
                    "lease ended at 2024-05-01T12:15:00.000Z");
      CHECK(second->broke_at == first->lock.revision);
      CHECK(second->lock.revision > second->broke_at);
      CHECK(second->lock.id == "id-2");
      // The old holder finds out at its next renewal, and cannot release ours.
      HeldLock old = first->lock;
      CHECK(renew_lock(store, old, Instant::from_unix_ms(now_ms + 900002)).code() == Errc::changed);
      CHECK(release_lock(store, old).code() == Errc::changed);
      CHECK((*store.get(key))->value == second->lock.body);
    }
    SUBCASE("a holder that cannot be checked: unknown, nothing broken") {
      auto first = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(first.ok());
      (void)first;
      auto exec = lock_body("upgrade", now, ExecutionHolder{{"p", "r", "job"}, 1000}, "id-x",
                            BodyAuthor{"localhost", std::nullopt, 1, std::nullopt});
      REQUIRE(exec.ok());
      auto entry = store.get(key);
      REQUIRE(store.update(key, *exec, (*entry)->revision).ok());
      LockRequest r = request_for("other", "id-2");
      r.describe = answer(ExecutionState::unknown("no access"));
      auto got = acquire_lock(store, key, r, Instant::from_unix_ms(now_ms + 86400000));
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::unknown);
      CHECK(got->verdict->reason == LockReason::execution_unknown);
      CHECK((*store.get(key))->value == *exec);
    }
    SUBCASE("renewal that finds the lock rewritten says it is lost") {
      auto got = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(got.ok());
      HeldLock lock = got->lock;
      REQUIRE(store.update(key, "someone's body", lock.revision).ok());
      auto lost = renew_lock(store, lock, now);
      CHECK(lost.code() == Errc::changed);
      CHECK(release_lock(store, lock).code() == Errc::changed);
    }
    SUBCASE("a lock taken before is renewed with the lease it was taken with") {
      LockRequest r = request_for("deploy", "id-1");
      r.holder = ProcessHolder{30000};
      r.author->owner = "no-boot-id.300.1";
      REQUIRE(acquire_lock(store, key, r, now).ok());
      auto held = held_lock(store, key, "id-1", lease_as_taken);
      REQUIRE(held.ok());
      CHECK(held->lease_ms == 30000);
      REQUIRE(renew_lock(store, *held, Instant::from_unix_ms(now_ms + 10000)).ok());
      auto body = parse_lock_body((*store.get(key))->value);
      CHECK(body->lease_until == "2024-05-01T12:05:40.000Z");
      CHECK(body->lease_ms == 30000);
      // A lease named wins; a body that records none (the JavaScript code's) gets the
      // process lease.
      CHECK(held_lock(store, key, "id-1", 90000)->lease_ms == 90000);
      auto js = store.get(key);
      REQUIRE(store.update(key, R"({"purpose":"p","id":"id-js"})", (*js)->revision).ok());
      CHECK(held_lock(store, key, "id-js", lease_as_taken)->lease_ms == process_lease_ms);
    }
  }

  }  // namespace

  TEST_CASE("the lock's life on the memory store") {
    MemoryStore store;
    life_on(store);
  }

  TEST_CASE("the lock's life on the file store") {
    char dir[] = "/tmp/lj-lock-life-XXXXXX";
    REQUIRE(::mkdtemp(dir) != nullptr);
    {
      auto store = FileStore::open(dir);
      REQUIRE(store.ok());
      life_on(**store);
    }
    std::string cmd = std::string("rm -rf ") + dir;
    CHECK(std::system(cmd.c_str()) == 0);
  }

  TEST_CASE("a lost race is reported, never retried") {
    MemoryStore inner;
    RacingStore store(inner);
    const std::string key = "k";
    auto first = acquire_lock(store, key, request_for("deploy", "id-1"), now);
    REQUIRE(first.ok());
    const Instant later = Instant::from_unix_ms(now_ms + 900001);
    SUBCASE("the holder renewed between our judgement and our delete") {
      store.race_remove = true;
      auto got = acquire_lock(store, key, request_for("other", "id-2"), later);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::lost_race);
      CHECK(got->verdict->reason == LockReason::lease_ended);
      CHECK(got->broke_at == 0);
      CHECK((*inner.get(key))->value == "renewed meanwhile");
    }
    SUBCASE("another breaker created first after our delete") {
      store.race_create = true;
      auto got = acquire_lock(store, key, request_for("other", "id-2"), later);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::lost_race);
      CHECK(got->broke_at == first->lock.revision);
      CHECK((*inner.get(key))->value == "someone else");
    }
    SUBCASE("the holder released between our create and our read") {
      class Vanishing final : public Store {
       public:
        Result<std::vector<std::string>> keys() override { return std::vector<std::string>{}; }
        Result<std::optional<StoreEntry>> get(std::string_view) override { return std::optional<StoreEntry>(); }
        Result<Revision> update(std::string_view, std::string_view, Revision) override {
          return Error{Errc::changed, "changed"};
        }
        Result<Revision> create(std::string_view, std::string_view) override { return Error{Errc::exists, "exists"}; }
        Status remove(std::string_view, Revision) override { return Error{Errc::changed, "changed"}; }
      } vanishing;
      auto got = acquire_lock(vanishing, key, request_for("other", "id-2"), later);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::lost_race);
      CHECK(!got->verdict);
    }
    SUBCASE("a failing store is an error") {
      class Down final : public Store {
       public:
        Result<std::vector<std::string>> keys() override { return Error{Errc::store, "down"}; }
        Result<std::optional<StoreEntry>> get(std::string_view) override { return Error{Errc::store, "down"}; }
        Result<Revision> update(std::string_view, std::string_view, Revision) override {
          return Error{Errc::store, "down"};
        }
        Result<Revision> create(std::string_view, std::string_view) override { return Error{Errc::store, "down"}; }
        Status remove(std::string_view, Revision) override { return Error{Errc::store, "down"}; }
      } down;
      CHECK(acquire_lock(down, key, request_for("x", "i"), now).code() == Errc::store);
      CHECK(acquire_lock(down, "", request_for("x", "i"), now).code() == Errc::invalid_argument);
    }
  }

  TEST_CASE("the heartbeat renews every third of the lease and reports a lost lock") {
    MemoryStore store;
    LockRequest r = request_for("deploy", "id-1");
    r.holder = ProcessHolder{60};  // renewed every 20 ms
    auto got = acquire_lock(store, "k", r, now);
    REQUIRE(got.ok());
    CHECK(LockRenewal::interval(60) == std::chrono::milliseconds(20));
    CHECK(LockRenewal::interval(600000) == std::chrono::milliseconds(200000));
    CHECK(LockRenewal::interval(1) == std::chrono::milliseconds(1));
    std::atomic<int> lost_calls{0};
    std::string lost_message;
    std::mutex mu;
    LockRenewal renewal(store, got->lock, fixed_clock(now), [&](const Error& e) {
      std::lock_guard<std::mutex> g(mu);
      lost_message = e.message;
      lost_calls.fetch_add(1);
    });
    auto wait_for = [](auto&& condition) {
      for (int i = 0; i < 2000 && !condition(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return condition();
    };
    REQUIRE(wait_for([&] { return renewal.renewals() >= 2; }));
    HeldLock current = renewal.lock();
    CHECK(current.revision > got->lock.revision);
    CHECK(!renewal.lost());
    // Someone rewrites the lock: the next renewal finds out and says so, once.
    store.put("k", "taken over");
    REQUIRE(wait_for([&] { return renewal.lost(); }));
    REQUIRE(wait_for([&] { return lost_calls.load() == 1; }));
    {
      std::lock_guard<std::mutex> g(mu);
      CHECK(lost_message.find("is no longer ours") != std::string::npos);
    }
    renewal.stop();
    renewal.stop();
    CHECK(lost_calls.load() == 1);

    // A lock without a lease: nothing to renew, nothing lost.
    LockRequest plain = request_for("local", "id-3");
    plain.holder = std::monostate{};
    auto local = acquire_lock(store, "plain", plain, now);
    REQUIRE(local.ok());
    CHECK(local->lock.lease_ms == 0);
    LockRenewal idle(store, local->lock, fixed_clock(now), [&](const Error&) { lost_calls.fetch_add(1); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    idle.stop();
    CHECK(idle.renewals() == 0);
    CHECK(!idle.lost());
    CHECK(idle.lock().revision == local->lock.revision);
    CHECK(lost_calls.load() == 1);
  }

  // A store whose updates fail while `failing` is above 0 (each failure counts it down),
  // or for good with failing < 0.
  class FlakyStore final : public Store {
   public:
    explicit FlakyStore(MemoryStore& inner) : inner_(inner) {}
    std::atomic<int> failing{0};
    std::atomic<int> failures{0};
    Result<std::vector<std::string>> keys() override { return inner_.keys(); }
    Result<std::optional<StoreEntry>> get(std::string_view key) override { return inner_.get(key); }
    std::atomic<int> answers_lost{0};  // the next this many updates land, then say timeout
    Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
      if (answers_lost.load() > 0) {
        answers_lost.fetch_sub(1);
        auto landed = inner_.update(key, value, revision);
        if (!landed) return landed;
        return Error{Errc::timeout, "no answer from the server"};
      }
      int f = failing.load();
      if (f != 0) {
        if (f > 0) failing.fetch_sub(1);
        failures.fetch_add(1);
        return Error{Errc::store, "the server is down"};
      }
      return inner_.update(key, value, revision);
    }
    Result<Revision> create(std::string_view key, std::string_view value) override { return inner_.create(key, value); }
    Status remove(std::string_view key, Revision revision) override { return inner_.remove(key, revision); }

   private:
    MemoryStore& inner_;
  };

  template <typename F>
  bool wait_until_true(F&& condition, int ms = 10000) {
    for (int i = 0; i < ms / 5 && !condition(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return condition();
  }

  std::int64_t elapsed_ms(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count();
  }

  TEST_CASE("the heartbeat tries a failed renewal again within the lease") {
    MemoryStore inner;
    FlakyStore store(inner);
    LockRequest r = request_for("deploy", "id-1");
    r.holder = ProcessHolder{300};  // renewed every 100 ms, tried again every 25 ms
    auto got = acquire_lock(store, "k", r, now);
    REQUIRE(got.ok());
    CHECK(LockRenewal::retry_interval(300) == std::chrono::milliseconds(25));
    CHECK(LockRenewal::retry_interval(600000) == std::chrono::milliseconds(2000));
    CHECK(LockRenewal::retry_interval(3) == std::chrono::milliseconds(1));
    std::atomic<int> lost_calls{0};
    Errc lost_code = Errc::ok;
    std::string lost_message;
    std::mutex mu;
    auto on_lost = [&](const Error& e) {
      std::lock_guard<std::mutex> g(mu);
      lost_code = e.code;
      lost_message = e.message;
      lost_calls.fetch_add(1);
    };

    SUBCASE("one failure: tried again, no loss") {
      store.failing = 1;
      LockRenewal renewal(store, got->lock, fixed_clock(now), on_lost);
      REQUIRE(wait_until_true([&] { return renewal.renewals() >= 3; }));
      CHECK(store.failures.load() == 1);
      CHECK(renewal.retries() == 1);
      CHECK(!renewal.lost());
      CHECK(!renewal.expired());
      CHECK(lost_calls.load() == 0);
      renewal.stop();
      CHECK(renewal.lock().revision == inner.get("k")->value().revision);
    }
    SUBCASE("a renewal that landed while its answer was lost: taken at its revision, no loss") {
      store.answers_lost = 1;
      LockRenewal renewal(store, got->lock, fixed_clock(now), on_lost);
      REQUIRE(wait_until_true([&] { return renewal.renewals() >= 2; }));
      CHECK(store.answers_lost.load() == 0);
      CHECK(renewal.retries() == 2);  // the lost answer, then the update that found the key moved
      CHECK(!renewal.lost());
      CHECK(lost_calls.load() == 0);
      renewal.stop();
      CHECK(renewal.lock().revision == inner.get("k")->value().revision);
      CHECK(parse_lock_body(inner.get("k")->value().value)->id == "id-1");
    }
    SUBCASE("failing for good: lost when the lease ends, not before") {
      const auto start = std::chrono::steady_clock::now();
      store.failing = -1;
      LockRenewal renewal(store, got->lock, fixed_clock(now), on_lost);
      REQUIRE(wait_until_true([&] { return lost_calls.load() == 1; }));
      const auto took = elapsed_ms(start);
      CHECK(took >= 300);
      CHECK(took < 3000);
      CHECK(renewal.lost());
      CHECK(renewal.expired());
      CHECK(renewal.renewals() == 0);
      // Tried at 100 ms, then every 25 ms until the lease's end at 300 ms: up to 8 tries (fewer on a
      // busy machine, but more than one).
      CHECK(store.failures.load() >= 2);
      CHECK(store.failures.load() <= 8);
      std::lock_guard<std::mutex> g(mu);
      CHECK(lost_code == Errc::timeout);
      CHECK(lost_message == "the lock k was not renewed within its lease of 300 ms: the server is down");
    }
    SUBCASE("a failure, then the lock changed: lost at once") {
      store.failing = 1;
      LockRenewal renewal(store, got->lock, fixed_clock(now), on_lost);
      REQUIRE(wait_until_true([&] { return store.failures.load() == 1; }));
      inner.put("k", "taken over");
      REQUIRE(wait_until_true([&] { return lost_calls.load() == 1; }));
      std::lock_guard<std::mutex> g(mu);
      CHECK(lost_code == Errc::changed);
    }
  }

  // How long after `since` the renewal first said its lease had ended (its loss, as a
  // caller polling expired() sees it), in ms; -1 when not within 5 s.
  std::int64_t expired_after(const LockRenewal& renewal, std::chrono::steady_clock::time_point since) {
    while (!renewal.expired()) {
      if (elapsed_ms(since) > 5000) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return elapsed_ms(since);
  }

  TEST_CASE("a heartbeat started late counts the lease from the acquisition's write") {
    // The store counts the lease from the acquisition: a heartbeat started 450 ms after
    // it, whose renewals all fail, reports the loss 600 ms after the acquisition, not
    // 600 ms after its own start (when a judge may have broken the lock already).
    MemoryStore inner;
    FlakyStore store(inner);
    store.failing = -1;
    LockRequest r = request_for("deploy", "id-1");
    r.holder = ProcessHolder{600};
    const auto asked = std::chrono::steady_clock::now();
    auto got = acquire_lock(store, "k", r, now);
    REQUIRE(got.ok());
    CHECK(got->lock.lease_from_ns > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(450));
    LockRenewal renewal(store, got->lock, fixed_clock(now), [](const Error&) {});
    const std::int64_t took = expired_after(renewal, asked);
    CHECK(took >= 600);
    CHECK(took < 1000);
    renewal.stop();
  }

  // A memory store with store leases that it never ends by itself; keep-alives and
  // updates fail while `unreachable` (the holder cut off from the store).
  class LeasedStore final : public Store, public StoreLeases {
   public:
    std::atomic<bool> unreachable{false};
    Result<std::vector<std::string>> keys() override { return inner_.keys(); }
    Result<std::optional<StoreEntry>> get(std::string_view key) override { return inner_.get(key); }
    Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
      if (unreachable) return Error{Errc::timeout, "no answer from the store"};
      return inner_.update(key, value, revision);
    }
    Result<Revision> create(std::string_view key, std::string_view value) override { return inner_.create(key, value); }
    Status remove(std::string_view key, Revision revision) override { return inner_.remove(key, revision); }
    StoreLeases* leases() override { return this; }
    Result<StoreLease> grant(std::int64_t lease_ms) override { return StoreLease{++granted_, store_lease_seconds(lease_ms)}; }
    Result<std::int64_t> keep_alive(StoreLeaseId) override {
      if (unreachable) return Error{Errc::timeout, "no answer from the store"};
      return std::int64_t{1};
    }
    Status revoke(StoreLeaseId) override { return Status::success(); }
    Result<StoreLeaseLife> life(StoreLeaseId) override { return StoreLeaseLife{false, 1, 1, "TTL 1 of 1 s"}; }
    Result<Revision> create_bound(std::string_view key, std::string_view value, StoreLeaseId) override {
      return create(key, value);
    }
    Result<Revision> update_bound(std::string_view key, std::string_view value, Revision revision,
                                  StoreLeaseId) override {
      return update(key, value, revision);
    }

   private:
    MemoryStore inner_;
    StoreLeaseId granted_ = 0;
  };

  TEST_CASE("a lock bound to a store lease is lost a margin before the store can end the lease") {
    // A lease of 1 s: a store lease of 1 s, which the store may end 1 s after the
    // acquisition, the key deleted at once and taken by the next holder. Cut off from
    // the store from the start, the holder reports the loss store_lease_margin_ms
    // before, not at the same moment (its report, and the work it stops, would race
    // the next holder's acquisition).
    LeasedStore store;
    LockRequest r = request_for("deploy", "id-1");
    r.holder = ProcessHolder{1000};
    const auto asked = std::chrono::steady_clock::now();
    auto got = acquire_lock(store, "k", r, now);
    REQUIRE(got.ok());
    CHECK(got->lock.store_lease == 1);
    CHECK(got->lock.store_lease_s == 1);
    store.unreachable = true;
    LockRenewal renewal(store, got->lock, fixed_clock(now), [](const Error&) {});
    const std::int64_t took = expired_after(renewal, asked);
    CHECK(store_lease_margin_ms == 250);
    CHECK(took >= 1000 - store_lease_margin_ms);
    CHECK(took < 1000);
    renewal.stop();
    // A lease of 1.5 s has a store lease of 2 s: the margin is already there.
    store.unreachable = false;
    r.holder = ProcessHolder{1500};
    const auto again = std::chrono::steady_clock::now();
    auto longer = acquire_lock(store, "k2", r, now);
    REQUIRE(longer.ok());
    CHECK(longer->lock.store_lease_s == 2);
    store.unreachable = true;
    LockRenewal second(store, longer->lock, fixed_clock(now), [](const Error&) {});
    const std::int64_t took2 = expired_after(second, again);
    CHECK(took2 >= 1500);
    CHECK(took2 < 1750);
    second.stop();
  }

  TEST_CASE("waiting for a lock: a deadline, a cancel, a holder that goes") {
    MemoryStore store;
    LockRequest mine = request_for("deploy", "");
    auto theirs = acquire_lock(store, "k", request_for("theirs", "id-theirs"), now);
    REQUIRE(theirs.ok());
    REQUIRE(theirs->outcome == Acquisition::Outcome::acquired);
    LockWait wait;
    wait.clock = fixed_clock(now);
    wait.poll_min = std::chrono::milliseconds(5);
    wait.poll_max = std::chrono::milliseconds(40);

    SUBCASE("a live holder: held once the wait has run out") {
      wait.wait = std::chrono::milliseconds(200);
      const auto start = std::chrono::steady_clock::now();
      auto got = acquire_lock_wait(store, "k", mine, wait);
      const auto took = elapsed_ms(start);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::held);
      CHECK(got->verdict->reason == LockReason::lease_runs);
      CHECK(took >= 200);
      CHECK(took < 2000);
      CHECK(parse_lock_body(store.get("k")->value().value)->id == "id-theirs");
    }
    SUBCASE("no wait: one try") {
      const auto start = std::chrono::steady_clock::now();
      auto got = acquire_lock_wait(store, "k", mine, wait);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::held);
      CHECK(elapsed_ms(start) < 1000);
    }
    SUBCASE("the holder releases during the wait: ours") {
      wait.wait = std::chrono::milliseconds(10000);
      std::thread releaser([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        CHECK(release_lock(store, theirs->lock).ok());
      });
      auto got = acquire_lock_wait(store, "k", mine, wait);
      releaser.join();
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::acquired);
      CHECK(got->lock.revision > theirs->lock.revision);
      CHECK(parse_lock_body(store.get("k")->value().value)->id == got->lock.id);
    }
    SUBCASE("a breakable holder: broken at the first try") {
      store.put("k", R"({"purpose":"gone","id":"x","host":"build-7","machine":"m-aaa","pid":200})");
      const Revision dead = store.get("k")->value().revision;
      auto got = acquire_lock_wait(store, "k", mine, wait);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::acquired);
      CHECK(got->broke_at == dead);
      CHECK(got->verdict->reason == LockReason::process_gone);
    }
    SUBCASE("cancelled: Errc::user within a poll, nothing written") {
      wait.wait = std::chrono::milliseconds(60000);
      std::atomic<bool> stop{false};
      wait.cancelled = [&] { return stop.load(); };
      std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        stop = true;
      });
      const auto start = std::chrono::steady_clock::now();
      auto got = acquire_lock_wait(store, "k", mine, wait);
      const auto took = elapsed_ms(start);
      canceller.join();
      CHECK(got.code() == Errc::user);
      CHECK(got.error().message == "the wait for the lock k was cancelled");
      CHECK(took >= 100);
      CHECK(took < 1000);
      CHECK(parse_lock_body(store.get("k")->value().value)->id == "id-theirs");
    }
    SUBCASE("bad waits") {
      wait.wait = std::chrono::milliseconds(-1);
      CHECK(acquire_lock_wait(store, "k", mine, wait).code() == Errc::invalid_argument);
      wait.wait = std::chrono::milliseconds(10);
      wait.poll_min = std::chrono::milliseconds(0);
      CHECK(acquire_lock_wait(store, "k", mine, wait).code() == Errc::invalid_argument);
      wait.poll_min = std::chrono::milliseconds(50);
      wait.poll_max = std::chrono::milliseconds(10);
      CHECK(acquire_lock_wait(store, "k", mine, wait).code() == Errc::invalid_argument);
      wait.poll_max = std::chrono::milliseconds(50);
      CHECK(acquire_lock_wait(store, "", mine, wait).code() == Errc::invalid_argument);
    }
  }

  // A store whose own watch of a key hands over its deletions (or breaks when asked).
  struct WatchedStore final : Store {
    MemoryStore mem;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<KeyChange> pending;
    bool broken = false;
    Result<std::vector<std::string>> keys() override { return mem.keys(); }
    Result<std::optional<StoreEntry>> get(std::string_view key) override { return mem.get(key); }
    Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
      return mem.update(key, value, revision);
    }
    Result<Revision> create(std::string_view key, std::string_view value) override { return mem.create(key, value); }
    Status remove(std::string_view key, Revision revision) override {
      Status st = mem.remove(key, revision);
      std::lock_guard lock(mu);
      if (st) pending.push_back(KeyChange{std::string(key), 0, std::nullopt, 0});
      cv.notify_all();
      return st;
    }
    struct Watch final : KeyWatch {
      WatchedStore& s;
      explicit Watch(WatchedStore& store) : s(store) {}
      Status next(std::vector<KeyChange>& out, std::int64_t wait_ns) override {
        std::unique_lock lock(s.mu);
        s.cv.wait_for(lock, std::chrono::nanoseconds(wait_ns), [&] { return !s.pending.empty() || s.broken; });
        if (s.broken) return Status(Errc::store, "the connection was lost");
        out.insert(out.end(), s.pending.begin(), s.pending.end());
        s.pending.clear();
        return Status::success();
      }
    };
    Result<std::unique_ptr<KeyWatch>> watch_key(std::string_view, const KeyWatchOptions&) override {
      return std::unique_ptr<KeyWatch>(std::make_unique<Watch>(*this));
    }
  };

  TEST_CASE("waiting for a lock: woken by the store's watch of the key, the poll the fallback") {
    WatchedStore store;
    LockRequest mine = request_for("deploy", "");
    auto theirs = acquire_lock(store, "k", request_for("theirs", "id-theirs"), now);
    REQUIRE(theirs.ok());
    LockWait wait;
    wait.clock = fixed_clock(now);
    wait.wait = std::chrono::milliseconds(10000);
    std::vector<std::string> notes;
    std::mutex notes_mu;
    wait.note = [&](std::string_view line) {
      std::lock_guard lock(notes_mu);
      notes.emplace_back(line);
    };
    auto release_after = [&](int ms) {
      return std::thread([&store, &theirs, ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        CHECK(release_lock(store, theirs->lock).ok());
      });
    };
    auto without_ms = [](std::string line) { return line.substr(0, line.find(" after ")); };

    SUBCASE("a release wakes the wait long before its 5 s poll") {
      wait.poll_min = wait.poll_max = std::chrono::milliseconds(5000);
      const auto start = std::chrono::steady_clock::now();
      std::thread releaser = release_after(100);
      auto got = acquire_lock_wait(store, "k", mine, wait);
      releaser.join();
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::acquired);
      CHECK(elapsed_ms(start) < 2000);
      REQUIRE(notes.size() == 2);
      CHECK(notes[0] == "waiting on a watch of k: a release wakes the wait (its poll, 5000 ms to 5000 ms, the fallback)");
      CHECK(without_ms(notes[1]) == "woken by a watch event (k gone)");
    }
    SUBCASE("a watch that breaks: said once, the poll wakes the wait") {
      wait.poll_min = wait.poll_max = std::chrono::milliseconds(300);
      store.broken = true;
      std::thread releaser = release_after(100);
      auto got = acquire_lock_wait(store, "k", mine, wait);
      releaser.join();
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::acquired);
      REQUIRE(notes.size() == 3);
      CHECK(notes[1] == "the watch of k broke (the connection was lost): the wait polls from now on");
      CHECK(without_ms(notes[2]) == "woken by its poll");
    }
    SUBCASE("a store without a watch of its own: said, polled") {
      MemoryStore mem;
      auto held = acquire_lock(mem, "k", request_for("theirs", "id-theirs"), now);
      REQUIRE(held.ok());
      wait.poll_min = wait.poll_max = std::chrono::milliseconds(20);
      wait.wait = std::chrono::milliseconds(50);
      auto got = acquire_lock_wait(mem, "k", mine, wait);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::held);
      REQUIRE(notes.size() >= 2);
      CHECK(notes[0] == "no watch of k (the store has no watch of its own for the key k): the wait polls, 20 ms to 20 ms apart");
      CHECK(without_ms(notes[1]) == "woken by its poll");
    }
  }
}  // TEST_SUITE
