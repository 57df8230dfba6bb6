// Test fixture: processes racing to take one lock whose holder is provably gone (a
// reaped pid on this machine). Each racer is this test program run again with one
// hidden test case; it opens the store, says "ready" on fd 4, then for each line on
// fd 3 takes the lock once and answers one line. A round sends "go" to every racer and
// tallies their answers. Private to the tests.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "leasejudge/lock.hpp"
#include "self_spawn.hpp"

namespace leasejudge::test {

inline const std::string racer_machine = "6c1d0e2f3a4b5c6d7e8f9a0b1c2d3e4f";

inline Here racer_here() {
  Here h = this_machine();
  h.machine = MachineField::of(racer_machine);
  return h;
}

// A lock request for a process holder on racer_machine (never a described execution).
inline LockRequest racer_request() {
  LockRequest r;
  r.purpose = "cache";
  r.holder = ProcessHolder{60000};
  r.describe = [](const ExecutionRef&) { return ExecutionState::unknown("process holders are never described"); };
  r.here = racer_here();
  BodyAuthor a = this_author();
  a.machine = racer_machine;
  r.author = a;
  return r;
}

// A lock body of a process that is gone: `dead`, a reaped pid on racer_machine.
inline std::string gone_holder_body(pid_t dead) {
  BodyAuthor a = this_author();
  a.machine = racer_machine;
  a.pid = dead;
  a.owner.reset();
  auto body = lock_body("cache", system_now(), ProcessHolder{60000}, "", a);
  REQUIRE(body.ok());
  return *body;
}

// In the racer process: say "ready", then for each line on fd 3 take the lock at key
// once and answer "acquired REVISION ID", the outcome's name, or "error TEXT" on fd 4.
inline void serve_racer(Store& store, const std::string& key) {
  dprintf(4, "ready\n");
  LockRequest r = racer_request();
  char ch;
  while (::read(3, &ch, 1) == 1) {
    if (ch != '\n') continue;
    auto got = acquire_lock(store, key, r, system_now());
    if (!got.ok()) {
      dprintf(4, "error %s\n", got.error().message.c_str());
    } else if (got->outcome == Acquisition::Outcome::acquired) {
      dprintf(4, "acquired %llu %s\n", static_cast<unsigned long long>(got->lock.revision), got->lock.id.c_str());
    } else {
      dprintf(4, "%s\n", acquisition_outcome_name(got->outcome));
    }
  }
}

// One racer process, running the hidden test case `test_case` with
// LEASEJUDGE_RACER_URL=url.
struct Racer {
  pid_t pid = 0;
  int in = -1, out = -1;

  bool spawn(const std::string& test_case, const std::string& url) {
    int to[2], from[2];
    if (::pipe(to) != 0 || ::pipe(from) != 0) return false;
    pid = spawn_self(test_case, {"LEASEJUDGE_RACER_URL=" + url}, {{to[0], 3}, {from[1], 4}}, {to[1], from[0]});
    ::close(to[0]);
    ::close(from[1]);
    in = to[1];
    out = from[0];
    return pid > 0;
  }

  void send(const char* line) const { CHECK(::write(in, line, std::strlen(line)) == ssize_t(std::strlen(line))); }

  // Its next line ("" after 30 s or at its end).
  std::string line() const { return read_line(out, std::chrono::seconds(30)); }

  ~Racer() {
    if (in >= 0) ::close(in);  // its end of input: it leaves
    if (pid > 0) {
      int status = 0;
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (::waitpid(pid, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    if (out >= 0) ::close(out);
  }
};

// What the racers answered to one "go".
struct RaceRound {
  int acquired = 0;       // how many said they took the lock
  int errors = 0;         // errors and silences
  std::string winner_id;  // the last taker's lock id
  Revision token = 0;     // the last taker's revision
};

// Send "go" to every racer and read one answer from each; errors are shown as messages.
inline RaceRound race_round(const std::vector<std::unique_ptr<Racer>>& racers, int round) {
  RaceRound out;
  for (auto& r : racers) r->send("go\n");
  for (auto& r : racers) {
    std::string answer = r->line();
    if (answer.rfind("acquired ", 0) == 0) {
      ++out.acquired;
      out.token = std::stoull(answer.substr(9));
      out.winner_id = answer.substr(answer.rfind(' ') + 1);
    } else if (answer.rfind("error ", 0) == 0 || answer.empty()) {
      ++out.errors;
      MESSAGE("round " << round << ": " << answer);
    }
  }
  return out;
}

}  // namespace leasejudge::test
