// Locks on a real NATS bucket between two processes: a child process takes the lock
// and renews it; this process finds it held, SIGKILLs the child, and takes the lock
// at once (a dead pid on the same machine) or only after the lease (a judge on
// another machine), always with a fencing token larger than the dead holder's.
//
// The child is this test program run again with one hidden test case (skipped in
// normal runs), told what to do through the environment; it reports on a pipe.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "leasejudge/lock.hpp"
#include "leasejudge/store/nats.hpp"
#include "nats_server.hpp"
#include "self_spawn.hpp"

#if defined(LEASEJUDGE_HAVE_NATS)

using namespace leasejudge;
using leasejudge::test::NatsServer;

namespace {

// Both processes say they run on this machine id, whatever the real one is (a
// machine without a network card has none, and then no pid is ever trusted).
const std::string test_machine = "6c1d0e2f3a4b5c6d7e8f9a0b1c2d3e4f";
const std::string lock_key = "locks/build-cache";
constexpr std::int64_t child_lease_ms = 900;  // renewed every 300 ms

NatsOptions options_for(const std::string& url) {
  NatsOptions o;
  o.urls = {url};
  o.bucket = "locks";
  o.create_bucket = true;
  o.request_timeout = std::chrono::milliseconds(3000);
  o.reconnect_wait = std::chrono::milliseconds(100);
  return o;
}

Describer no_describer() {
  return [](const ExecutionRef&) { return ExecutionState::unknown("process holders are never described"); };
}

// A judge on this machine: pids checked with kill(pid, 0), owner tokens judged.
Here here_local() {
  Here h = this_machine();
  h.machine = MachineField::of(test_machine);
  return h;
}
// A judge on another machine: it can trust no pid and no owner token of ours.
Here here_elsewhere() {
  Here h = this_machine();
  h.host = "another-host";
  h.machine = MachineField::of("0f0e0d0c0b0a09080706050403020100");
  h.owner_state = {};
  return h;
}

LockRequest request_from(Here here) {
  LockRequest r;
  r.purpose = "build cache";
  r.holder = ProcessHolder{60000};
  r.describe = no_describer();
  r.here = std::move(here);
  BodyAuthor a = this_author();
  a.machine = test_machine;
  r.author = a;
  return r;
}

// The child: one holder process.
struct Child {
  pid_t pid = 0;
  int out = -1;  // read end of its report pipe

  bool spawn(const std::string& url) {
    int fds[2];
    if (::pipe(fds) != 0) return false;
    pid = test::spawn_self("nats lock: the holder process",
                           {"LEASEJUDGE_NATS_LOCK_URL=" + url, "LEASEJUDGE_NATS_LOCK_FD=3"}, {{fds[1], 3}}, {fds[0]});
    ::close(fds[1]);
    out = fds[0];
    return pid > 0;
  }

  // The child's next report line ("" after 20 s or at its end).
  std::string line() { return test::read_line(out, std::chrono::seconds(20)); }

  void kill() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);  // reaped: its pid is free from now on
    pid = 0;
  }

  ~Child() {
    kill();
    if (out >= 0) ::close(out);
  }
};

// The lease end a body states, in ms since the epoch.
std::int64_t lease_end_of(const std::string& body) {
  auto parsed = parse_lock_body(body);
  REQUIRE(parsed.ok());
  REQUIRE(parsed->lease_until.has_value());
  auto ms = parse_js_date(*parsed->lease_until);
  REQUIRE(ms.has_value());
  return *ms;
}

StoreEntry current(NatsStore& store) {
  auto got = store.get(lock_key);
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  return **got;
}

// Wait until the child has renewed its lock at least once past `since`.
Revision renewed_past(NatsStore& store, Revision since) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    StoreEntry e = current(store);
    if (e.revision > since) return e.revision;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL("the holder never renewed its lock");
  return 0;
}

}  // namespace

TEST_SUITE("nats lock") {
  // The holder process: takes the lock, says so on fd 3, renews until killed.
  TEST_CASE("nats lock: the holder process" * doctest::skip()) {
    const char* url = std::getenv("LEASEJUDGE_NATS_LOCK_URL");
    const char* fd_text = std::getenv("LEASEJUDGE_NATS_LOCK_FD");
    if (url == nullptr || fd_text == nullptr) return;  // only ever run by the test below
    int fd = std::atoi(fd_text);
    NatsOptions o = options_for(url);
    o.create_bucket = false;
    auto store = NatsStore::open(o);
    if (!store.ok()) {
      dprintf(fd, "failed %s\n", store.error().message.c_str());
      return;
    }
    LockRequest r = request_from(here_local());
    r.holder = ProcessHolder{child_lease_ms};
    auto got = acquire_lock(**store, lock_key, r, system_now());
    if (!got.ok() || got->outcome != Acquisition::Outcome::acquired) {
      dprintf(fd, "failed %s\n", got.ok() ? acquisition_outcome_name(got->outcome) : got.error().message.c_str());
      return;
    }
    dprintf(fd, "acquired %llu\n", static_cast<unsigned long long>(got->lock.revision));
    LockRenewal renewal(**store, got->lock, system_clock(),
                        [fd](const Error& e) { dprintf(fd, "lost %s\n", e.message.c_str()); });
    std::this_thread::sleep_for(std::chrono::seconds(120));  // until killed
  }

  TEST_CASE("lock acquire, renew and break between two processes, one SIGKILLed") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto opened = test::open_when_ready(options_for(server.url()));
    REQUIRE(opened.ok());
    NatsStore& store = **opened;

    SUBCASE("a dead pid on this machine: taken at once") {
      Child child;
      REQUIRE(child.spawn(server.url()));
      std::string said = child.line();
      REQUIRE_MESSAGE(said.rfind("acquired ", 0) == 0, said);
      const Revision first = std::stoull(said.substr(9));
      CHECK(current(store).revision == first);

      // Held while the child lives, by a judge here and by one elsewhere.
      auto here = acquire_lock(store, lock_key, request_from(here_local()), system_now());
      REQUIRE(here.ok());
      CHECK(here->outcome == Acquisition::Outcome::held);
      CHECK(here->verdict->reason == LockReason::lease_runs);
      CHECK(here->broke_at == 0);
      auto elsewhere = acquire_lock(store, lock_key, request_from(here_elsewhere()), system_now());
      REQUIRE(elsewhere.ok());
      CHECK(elsewhere->outcome == Acquisition::Outcome::held);

      // The child renews over NATS: its revision moves.
      const Revision renewed = renewed_past(store, first);
      child.kill();
      const StoreEntry last = current(store);
      CHECK(last.revision >= renewed);

      auto taken = acquire_lock(store, lock_key, request_from(here_local()), system_now());
      REQUIRE(taken.ok());
      CHECK(taken->outcome == Acquisition::Outcome::acquired);
      REQUIRE(taken->verdict);
      CHECK(taken->verdict->kind == LockVerdict::Kind::break_lock);
      CHECK(taken->verdict->reason == LockReason::process_gone);
      CHECK(taken->broke_at == last.revision);
      CHECK(taken->lock.revision > taken->broke_at);  // the fencing token
      CHECK(current(store).value == taken->lock.body);
      CHECK(release_lock(store, taken->lock).ok());
      CHECK_FALSE(store.get(lock_key)->has_value());
    }

    SUBCASE("a judge on another machine: taken only after the lease") {
      Child child;
      REQUIRE(child.spawn(server.url()));
      std::string said = child.line();
      REQUIRE_MESSAGE(said.rfind("acquired ", 0) == 0, said);
      const Revision first = std::stoull(said.substr(9));
      renewed_past(store, first);
      child.kill();
      const StoreEntry last = current(store);
      const std::int64_t lease_end = lease_end_of(last.value);

      // Its pid is nothing to a judge elsewhere: the lease decides, strictly after.
      auto now = acquire_lock(store, lock_key, request_from(here_elsewhere()), system_now());
      REQUIRE(now.ok());
      CHECK(now->outcome == Acquisition::Outcome::held);
      CHECK(now->verdict->reason == LockReason::lease_runs);
      auto at_end = acquire_lock(store, lock_key, request_from(here_elsewhere()), Instant::from_unix_ms(lease_end));
      REQUIRE(at_end.ok());
      CHECK(at_end->outcome == Acquisition::Outcome::held);
      CHECK(current(store).revision == last.revision);

      auto after = acquire_lock(store, lock_key, request_from(here_elsewhere()), Instant::from_unix_ms(lease_end + 1));
      REQUIRE(after.ok());
      CHECK(after->outcome == Acquisition::Outcome::acquired);
      CHECK(after->verdict->reason == LockReason::lease_ended);
      CHECK(after->broke_at == last.revision);
      CHECK(after->lock.revision > last.revision);  // the fencing token
      CHECK(current(store).value == after->lock.body);

      // The dead holder's last body can no longer be renewed or released over ours.
      HeldLock stale{lock_key, "", last.value, last.revision, child_lease_ms};
      CHECK(renew_lock(store, stale, system_now()).code() == Errc::changed);
    }
  }

}  // TEST_SUITE

#else  // a build without the NATS store

TEST_CASE("nats lock: the NATS store") {
  LJ_REQUIRE_OR_SKIP(false, "leasejudge was built without libnats (LEASEJUDGE_NATS=OFF)");
}

#endif
