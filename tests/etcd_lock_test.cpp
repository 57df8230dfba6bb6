// Locks on a real etcd bound to etcd leases (a member started here on 127.0.0.1): a
// holder process SIGKILLed loses its key when its lease's TTL runs out and the next
// acquire creates with a larger fencing token; a lease etcd no longer has breaks the
// lock (store_lease_ended: an acquire that read the key just before creates without
// a delete, the key went with the lease), one that cannot be read does not
// (store_lease_unknown); a store lease that runs outweighs a skewed clock;
// a heartbeat keeps the lease alive past its first TTL; a new lease length binds a
// new lease in the renewal's own update; release revokes the lease after the delete;
// the lease calls refuse bad input.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "etcd_server.hpp"
#include "leasejudge/lock.hpp"
#include "leasejudge/store/memory.hpp"
#include "leasejudge/store_lease.hpp"
#include "self_spawn.hpp"

#if defined(LEASEJUDGE_HAVE_ETCD)

using namespace leasejudge;
using namespace leasejudge::test;
using Steady = std::chrono::steady_clock;
using K = LockVerdict::Kind;

namespace {

std::unique_ptr<EtcdStore> open_on(const EtcdCluster& c, const std::string& prefix) {
  EtcdOptions o;
  o.request_timeout = std::chrono::milliseconds(2000);
  return open_etcd(c.endpoints(), prefix, o);
}

const std::string lock_key = "locks.cache";

LockRequest request(std::int64_t lease_ms) {
  LockRequest r;
  r.purpose = "cache";
  r.holder = ProcessHolder{lease_ms};
  r.describe = [](const ExecutionRef&) { return ExecutionState::unknown("process holders are never described"); };
  return r;
}

Instant now() {
  return system_clock()();
}

HeldLock take(Store& store, std::int64_t lease_ms) {
  auto a = acquire_lock(store, lock_key, request(lease_ms), now());
  REQUIRE_MESSAGE(a.ok(), (a.ok() ? std::string() : a.error().message));
  REQUIRE(a->outcome == Acquisition::Outcome::acquired);
  return a->lock;
}

StoreEntry entry_of(Store& store) {
  auto e = store.get(lock_key);
  REQUIRE(e.ok());
  REQUIRE(e->has_value());
  return **e;
}

bool gone(Store& store) {
  auto e = store.get(lock_key);
  REQUIRE(e.ok());
  return !e->has_value();
}

// `leasejudge lock hold` as a child, its stdout on a pipe; its pid, and its first line.
pid_t spawn_hold(const std::string& url, const std::string& lease, std::string& first_line) {
  int out[2];
  REQUIRE(::pipe(out) == 0);
  std::string exe = std::string(LEASEJUDGE_BINARY_DIR) + "/leasejudge";
  std::vector<std::string> args = {exe, "lock", "hold", "--store", url, "--lease", lease, lock_key};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  REQUIRE(rc == 0);
  first_line = leasejudge::test::read_line(out[0], std::chrono::seconds(10));
  ::close(out[0]);
  return pid;
}

// The etcd store, whose get() lets the lease of the entry it read end before it
// answers: the race in which a judge reads a key just before etcd expires its lease.
class LeaseEndsAfterRead final : public Store {
 public:
  explicit LeaseEndsAfterRead(EtcdStore& inner) : inner_(inner) {}
  Result<std::vector<std::string>> keys() override { return inner_.keys(); }
  Result<std::optional<StoreEntry>> get(std::string_view key) override {
    auto e = inner_.get(key);
    if (e.ok() && e->has_value() && (*e)->lease != 0) REQUIRE(inner_.revoke((*e)->lease).ok());
    return e;
  }
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
    return inner_.update(key, value, revision);
  }
  Result<Revision> create(std::string_view key, std::string_view value) override { return inner_.create(key, value); }
  Status remove(std::string_view key, Revision revision) override { return inner_.remove(key, revision); }
  StoreLeases* leases() override { return inner_.leases(); }

 private:
  EtcdStore& inner_;
};

}  // namespace

TEST_SUITE("etcd locks") {
  TEST_CASE("a holder SIGKILLed loses its key when its etcd lease runs out; the next acquire's token is larger") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(1);
    const std::string prefix = fresh_etcd_prefix("lk");
    auto store = open_on(c, prefix);
    std::string line;
    pid_t holder = spawn_hold(c.url(prefix), "2s", line);
    REQUIRE_MESSAGE(!line.empty(), "lock hold printed no fencing token");
    const Revision token = std::stoull(line);
    StoreEntry held = entry_of(*store);
    CHECK(held.revision == token);
    CHECK(held.lease > 0);
    auto life = store->life(held.lease);
    REQUIRE(life.ok());
    CHECK(!life->ended);
    CHECK(life->granted_s == 2);

    ::kill(holder, SIGKILL);
    int status = 0;
    ::waitpid(holder, &status, 0);
    CHECK(WIFSIGNALED(status));
    auto killed = Steady::now();
    CHECK(!gone(*store));  // the lease still runs: nothing deleted it
    while (!gone(*store) && Steady::now() - killed < std::chrono::seconds(8)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - killed).count();
    MESSAGE("the key went " << took << " ms after the kill");
    CHECK(gone(*store));
    // The 2 s TTL from the holder's last keep-alive (at most a third of it before the
    // kill), plus etcd's expiry tick and a loaded machine's slack.
    CHECK(took >= 1000);
    CHECK(took <= 2000 + 3000);
    auto after = store->life(held.lease);
    REQUIRE(after.ok());
    CHECK(after->ended);
    CHECK(after->ttl_s == -1);

    auto next = acquire_lock(*store, lock_key, request(60000), now());
    REQUIRE(next.ok());
    CHECK(next->outcome == Acquisition::Outcome::acquired);
    CHECK(!next->verdict.has_value());  // nothing to judge: the key was gone
    CHECK(next->broke_at == 0);
    CHECK(next->lock.revision > token);
    CHECK(next->lock.store_lease > 0);
    CHECK(next->lock.store_lease != held.lease);
    CHECK(release_lock(*store, next->lock).ok());
  }

  TEST_CASE("an entry whose etcd lease was revoked is a break, store_lease_ended; the next acquire creates") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(1);
    auto store = open_on(c, fresh_etcd_prefix("lk"));
    HeldLock lock = take(*store, 60000);
    CHECK(lock.store_lease_s == 60);
    StoreEntry entry = entry_of(*store);
    CHECK(entry.lease == lock.store_lease);
    CHECK(entry.revision == lock.revision);
    const Here here = this_machine();
    LockVerdict live = judge_stored_lock(*store, lock_key, entry, {}, now(), here);
    CHECK(live.kind == K::held);
    CHECK(live.reason == LockReason::lease_runs);

    // A clock an hour ahead reads the body's lease as ended; etcd's clock says it runs.
    LockVerdict skewed = judge_stored_lock(*store, lock_key, entry, {}, now().plus_ns(3600'000'000'000), here);
    CHECK(skewed.kind == K::held);
    CHECK(skewed.reason == LockReason::lease_runs);
    CHECK(skewed.why.find("still runs: etcd at http://" + c.endpoint(0) + " answers TTL ") != std::string::npos);
    CHECK(judge_lock(entry.value, {}, now().plus_ns(3600'000'000'000), here).reason == LockReason::lease_ended);

    REQUIRE(store->revoke(entry.lease).ok());
    LockVerdict v = judge_stored_lock(*store, lock_key, entry, {}, now(), here);
    CHECK(v.kind == K::break_lock);
    CHECK(v.reason == LockReason::store_lease_ended);
    CHECK(static_cast<int>(v.reason) == 15);
    CHECK(!v.manual_removal);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(entry.lease));
    CHECK(v.why == std::string("the holder of the lock locks.cache stopped keeping its store lease ") + hex +
                       " alive: etcd at http://" + c.endpoint(0) + " answers TTL -1: it no longer has the lease");
    CHECK(gone(*store));  // etcd deleted the key with the lease

    auto next = acquire_lock(*store, lock_key, request(60000), now());
    REQUIRE(next.ok());
    CHECK(next->outcome == Acquisition::Outcome::acquired);
    CHECK(next->lock.revision > lock.revision);
  }

  TEST_CASE("an acquire that reads a key whose etcd lease then ends judges it ended (store_lease_ended) and creates, breaking nothing") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(1);
    auto store = open_on(c, fresh_etcd_prefix("lk"));
    HeldLock first = take(*store, 60000);
    LeaseEndsAfterRead racing(*store);
    auto a = acquire_lock(racing, lock_key, request(60000), now());
    REQUIRE(a.ok());
    CHECK(a->outcome == Acquisition::Outcome::acquired);
    REQUIRE(a->verdict.has_value());
    CHECK(a->verdict->kind == K::break_lock);
    CHECK(a->verdict->reason == LockReason::store_lease_ended);
    CHECK(a->broke_at == 0);  // the store took the key with its lease: nothing was left to break
    CHECK(a->lock.revision > first.revision);
    CHECK(a->lock.store_lease != first.store_lease);
    StoreEntry now_held = entry_of(*store);
    CHECK(now_held.revision == a->lock.revision);
    CHECK(now_held.lease == a->lock.store_lease);
    REQUIRE(release_lock(*store, a->lock).ok());
  }

  TEST_CASE("a lease whose state cannot be read (etcd stopped) is no break: unknown, store_lease_unknown") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster own(1);
    REQUIRE(own.start());
    auto store = open_on(own, fresh_etcd_prefix("lk"));
    HeldLock lock = take(*store, 60000);
    StoreEntry entry = entry_of(*store);
    own.kill(0);
    LockVerdict v = judge_stored_lock(*store, lock_key, entry, {}, now(), this_machine());
    CHECK(v.kind == K::unknown);
    CHECK(v.reason == LockReason::store_lease_unknown);
    CHECK(static_cast<int>(v.reason) == 16);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(lock.store_lease));
    const std::string head = std::string("the lock locks.cache is bound to the store lease ") + hex +
                             ", whose state could not be read: etcd at http://" + own.endpoint(0);
    CHECK(v.why.substr(0, head.size()) == head);
    auto a = acquire_lock(*store, lock_key, request(60000), now());
    CHECK(!a.ok());  // the store cannot be read: no break, and no acquisition
  }

  TEST_CASE("a heartbeat keeps the key's etcd lease alive past its first TTL; release revokes it after the delete") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(1);
    auto store = open_on(c, fresh_etcd_prefix("lk"));
    HeldLock lock = take(*store, 1500);
    CHECK(lock.store_lease_s == 2);
    const StoreLeaseId lease = lock.store_lease;
    LockRenewal beat(*store, lock, system_clock(), nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));  // past the 2 s TTL, twice over the lease
    CHECK(!beat.lost());
    CHECK(beat.renewals() >= 3);
    beat.stop();
    StoreEntry entry = entry_of(*store);  // within the TTL of the last renewal
    CHECK(entry.lease == lease);
    auto life = store->life(lease);
    REQUIRE(life.ok());
    CHECK(!life->ended);
    CHECK(life->granted_s == 2);
    HeldLock renewed = beat.lock();
    CHECK(renewed.revision == entry.revision);
    CHECK(renewed.store_lease == lease);
    REQUIRE(release_lock(*store, renewed).ok());
    CHECK(gone(*store));
    auto revoked = store->life(lease);
    REQUIRE(revoked.ok());
    CHECK(revoked->ended);
  }

  TEST_CASE("a new lease length binds a new etcd lease in the renewal's own update, and revokes the old") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(1);
    auto store = open_on(c, fresh_etcd_prefix("lk"));
    HeldLock first = take(*store, 60000);
    auto reopened = held_lock(*store, lock_key, first.id, 90000);
    REQUIRE(reopened.ok());
    CHECK(reopened->store_lease == first.store_lease);
    CHECK(reopened->store_lease_s == 60);
    HeldLock lock = *reopened;
    REQUIRE(renew_lock(*store, lock, now()).ok());
    CHECK(lock.store_lease != first.store_lease);
    CHECK(lock.store_lease_s == 90);
    StoreEntry entry = entry_of(*store);
    CHECK(entry.lease == lock.store_lease);
    CHECK(entry.revision == lock.revision);
    auto fresh = store->life(lock.store_lease);
    REQUIRE(fresh.ok());
    CHECK(fresh->granted_s == 90);
    auto old = store->life(first.store_lease);
    REQUIRE(old.ok());
    CHECK(old->ended);
    // A renewal at a revision that moved lands nowhere: the key keeps its body and lease.
    HeldLock stale = lock;
    stale.revision = first.revision;
    auto lost = renew_lock(*store, stale, now());
    CHECK(lost.code() == Errc::changed);
    CHECK(entry_of(*store).revision == lock.revision);
    REQUIRE(release_lock(*store, lock).ok());
  }

  TEST_CASE("the lease calls refuse bad input; a store without leases has none") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(1);
    auto store = open_on(c, fresh_etcd_prefix("lk"));
    CHECK(store->grant(0).code() == Errc::invalid_argument);
    CHECK(store->grant(-1).code() == Errc::invalid_argument);
    CHECK(store->keep_alive(0).code() == Errc::invalid_argument);
    CHECK(store->keep_alive(-7).code() == Errc::invalid_argument);
    CHECK(store->revoke(0).code() == Errc::invalid_argument);
    CHECK(store->life(-1).code() == Errc::invalid_argument);
    const StoreLeaseId never = 0x7fffffff12345678;  // a lease etcd never granted
    CHECK(store->keep_alive(never).code() == Errc::not_found);
    CHECK(store->revoke(never).code() == Errc::not_found);
    auto none = store->life(never);
    REQUIRE(none.ok());
    CHECK(none->ended);
    CHECK(none->ttl_s == -1);
    CHECK(store->create_bound("k", "v", 0).code() == Errc::invalid_argument);
    CHECK(store->create_bound("k", "v", never).code() == Errc::store);  // etcd: lease not found
    CHECK(!store->get("k")->has_value());
    auto lease = store->grant(1);
    REQUIRE(lease.ok());
    CHECK(lease->ttl_s == 1);
    CHECK(store->create_bound("", "v", lease->id).code() == Errc::invalid_argument);
    CHECK(store->update_bound("k", "v", 0, lease->id).code() == Errc::changed);
    CHECK(store->update_bound("k", "v", 5, 0).code() == Errc::invalid_argument);
    // Keys and values are bytes: a NUL, invalid UTF-8, a megabyte.
    const std::string key("a\0\xff\xfe", 4), value(1 << 20, '\xc0');
    auto made = store->create_bound(key, value, lease->id);
    REQUIRE(made.ok());
    auto read = store->get(key);
    REQUIRE(read.ok());
    REQUIRE(read->has_value());
    CHECK((*read)->value == value);
    CHECK((*read)->lease == lease->id);
    CHECK(store->create_bound(key, "again", lease->id).code() == Errc::exists);
    REQUIRE(store->revoke(lease->id).ok());
    CHECK(!store->get(key)->has_value());
    CHECK(store->leases() == store.get());

    MemoryStore memory;
    CHECK(memory.leases() == nullptr);
    StoreEntry foreign{"{\"purpose\":\"p\"}", 3, 42};  // a lease id, on a store without leases: judged by body
    LockVerdict v = judge_stored_lock(memory, "k", foreign, {}, now(), this_machine());
    CHECK(v.reason == LockReason::no_lease);
  }
}

TEST_CASE("store_lease_seconds: whole seconds, rounded up, at least one") {
  CHECK(store_lease_seconds(-5) == 1);
  CHECK(store_lease_seconds(0) == 1);
  CHECK(store_lease_seconds(1) == 1);
  CHECK(store_lease_seconds(1000) == 1);
  CHECK(store_lease_seconds(1001) == 2);
  CHECK(store_lease_seconds(60000) == 60);
  CHECK(store_lease_seconds(INT64_MAX) == INT64_MAX / 1000 + 1);
}

#else

TEST_CASE("etcd locks: this build has no etcd store") {
  LJ_REQUIRE_OR_SKIP(false, "this build has no etcd store (libcurl4-openssl-dev was not found)");
}

#endif
