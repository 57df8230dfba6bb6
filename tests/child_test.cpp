#include "child.hpp"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

using namespace leasejudge;

namespace {
// A handler like bash's: it reaps any child that has ended.
void reap_any(int) {
  int saved = errno;
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  errno = saved;
}
}  // namespace

TEST_SUITE("child") {
  TEST_CASE("exit code, output and error streams") {
    ChildRun run;
    run.argv = {"sh", "-c", "printf out; printf err >&2; exit 3"};
    auto r = run_child(run);
    REQUIRE(r);
    CHECK(r->exit_code == 3);
    CHECK(r->signal == 0);
    CHECK(r->out == "out");
    CHECK(r->err == "err");
  }
  TEST_CASE("a program that is not on PATH") {
    ChildRun run;
    run.argv = {"leasejudge-no-such-program"};
    CHECK(run_child(run).code() == Errc::not_found);
    run.argv = {};
    CHECK(run_child(run).code() == Errc::invalid_argument);
  }
  TEST_CASE("a child past its timeout is killed") {
    ChildRun run;
    run.argv = {"sleep", "30"};
    run.timeout = std::chrono::milliseconds(200);
    auto r = run_child(run);
    CHECK(r.code() == Errc::timeout);
  }
  TEST_CASE("a child killed by a signal") {
    ChildRun run;
    run.argv = {"sh", "-c", "kill -9 $$"};
    auto r = run_child(run);
    REQUIRE(r);
    CHECK(r->exit_code == -1);
    CHECK(r->signal == 9);
  }
  TEST_CASE("environment: overrides and a base environment") {
    ChildRun run;
    run.argv = {"sh", "-c", "printf '%s/%s' \"$LJ_A\" \"$LJ_B\""};
    run.env = {{"LJ_A", "one"}};
    auto r = run_child(run);
    REQUIRE(r);
    CHECK(r->out == "one/");
    char a[] = "LJ_A=base", b[] = "LJ_B=two", path[] = "PATH=/usr/bin:/bin";
    char* base[] = {a, b, path, nullptr};
    run.base_env = base;
    r = run_child(run);
    REQUIRE(r);
    CHECK(r->out == "one/two");
    char nopath[] = "PATH=/nonexistent";
    char* empty_path[] = {nopath, nullptr};
    run.base_env = empty_path;
    CHECK(run_child(run).code() == Errc::not_found);
  }
  TEST_CASE("a host's SIGCHLD handler does not take the exit status") {
    struct sigaction sa {}, old{};
    sa.sa_handler = reap_any;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCHLD, &sa, &old);
    for (int i = 0; i < 20; ++i) {
      ChildRun run;
      run.argv = {"sh", "-c", "exit 7"};
      auto r = run_child(run);
      REQUIRE(r);
      CHECK(r->exit_code == 7);
    }
    sigaction(SIGCHLD, &old, nullptr);
  }
  TEST_CASE("output beyond the cap is read and dropped") {
    ChildRun run;
    run.argv = {"sh", "-c", "head -c 100000 /dev/zero"};
    run.max_output = 1000;
    auto r = run_child(run);
    REQUIRE(r);
    CHECK(r->out.size() == 1000);
    CHECK(r->exit_code == 0);
  }
}
