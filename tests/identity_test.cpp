#include "leasejudge/identity.hpp"

#include <doctest/doctest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "skip.hpp"

using namespace leasejudge;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A child that sleeps until killed; reaped by the caller.
pid_t spawn_sleeper() {
  pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  return pid;
}

void reap(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
}

// base 36 of a non-negative number, computed here independently of the library.
std::string base36(long long v) {
  const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  if (v == 0) return "0";
  std::string out;
  while (v > 0) {
    out.insert(out.begin(), digits[v % 36]);
    v /= 36;
  }
  return out;
}

}  // namespace

TEST_SUITE("identity") {
  TEST_CASE("boot id is the file's trimmed content") {
    std::string raw = slurp("/proc/sys/kernel/random/boot_id");
    REQUIRE(raw.size() == 37);  // 36 characters and a newline
    CHECK(read_boot_id() == raw.substr(0, 36));
    CHECK(boot_id() == raw.substr(0, 36));
  }

  TEST_CASE("stat lines are read after the last parenthesis") {
    // Fields 3.. after ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime(22)
    const std::string tail = " S 41 42 42 0 -1 4194304 10 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200";
    SUBCASE("a plain name") {
      std::string line = "123 (sleep)" + tail;
      CHECK(parse_stat_start_ticks(line) == std::optional<std::uint64_t>(987654));
      CHECK(parse_stat_ppid(line) == std::optional<Pid>(41));
    }
    SUBCASE("spaces and ') (' in the name") {
      std::string line = "123 (a) (b c) ) x)" + tail;
      CHECK(parse_stat_start_ticks(line) == std::optional<std::uint64_t>(987654));
      CHECK(parse_stat_ppid(line) == std::optional<Pid>(41));
    }
    SUBCASE("a name that looks like fields") {
      std::string line = "123 (S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22)" + tail;
      CHECK(parse_stat_start_ticks(line) == std::optional<std::uint64_t>(987654));
    }
    SUBCASE("malformed lines") {
      CHECK_FALSE(parse_stat_start_ticks(""));
      CHECK_FALSE(parse_stat_start_ticks("123 (sleep"));
      CHECK_FALSE(parse_stat_start_ticks("123 (sleep) S 41 42"));  // truncated
      CHECK_FALSE(parse_stat_start_ticks("123 (sleep) S 41 42 42 0 -1 4194304 10 0 0 0 1 2 0 0 20 0 1 0 98x7 1"));
      CHECK_FALSE(parse_stat_start_ticks("123 (sleep) S 41 42 42 0 -1 4194304 10 0 0 0 1 2 0 0 20 0 1 0 -5 1"));
      CHECK_FALSE(parse_stat_ppid("123 (sleep) S x1 42"));
    }
  }

  TEST_CASE("process start matches the kernel's record") {
    auto self = process_start(getpid());
    REQUIRE(self);
    std::string stat = slurp("/proc/self/stat");
    CHECK(parse_stat_start_ticks(stat) == std::optional<std::uint64_t>(self->ticks));
    // btime from /proc/stat, read independently.
    std::ifstream in("/proc/stat");
    std::string word;
    long long btime = -1;
    while (in >> word)
      if (word == "btime") {
        in >> btime;
        break;
      }
    REQUIRE(btime > 0);
    long long expected = btime * 1000 + static_cast<long long>(self->ticks) * 1000 / sysconf(_SC_CLK_TCK);
    CHECK(self->unix_ms == expected);
    CHECK(process_start(0).code() == Errc::invalid_argument);
    CHECK(process_start(-3).code() == Errc::invalid_argument);
  }

  TEST_CASE("liveness: alive, dead, zombie, someone else's") {
    CHECK(liveness(getpid()) == Liveness::alive);
    CHECK(liveness(0) == Liveness::unknown);
    CHECK(liveness(-1) == Liveness::unknown);

    SUBCASE("a child that exits during the test is dead once reaped") {
      pid_t child = fork();
      if (child == 0) _exit(0);
      reap(child);
      CHECK(liveness(child) == Liveness::dead);
      CHECK(process_start(child).code() == Errc::not_found);
      auto token = format_owner_token(boot_id(), child, 1000);
      CHECK(judge_owner_token(token).state == HolderState::dead);
    }
    SUBCASE("a zombie is still alive to kill(), as the seeds take it") {
      pid_t child = fork();
      if (child == 0) _exit(0);
      // Wait until it is a zombie, without reaping it.
      for (int i = 0; i < 500; ++i) {
        std::string stat = slurp("/proc/" + std::to_string(child) + "/stat");
        auto close = stat.rfind(')');
        if (close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z') break;
        usleep(10000);
      }
      CHECK(liveness(child) == Liveness::alive);
      auto start = process_start(child);
      REQUIRE(start);
      auto token = owner_token_of(child);
      REQUIRE(token);
      CHECK(judge_owner_token(*token).state == HolderState::alive);
      reap(child);
      CHECK(liveness(child) == Liveness::dead);
    }
    SUBCASE("a process of another user is alive (EPERM)") {
      LJ_REQUIRE_OR_SKIP(geteuid() == 0, "not root: cannot drop a child to nobody");
      const passwd* nobody = getpwnam("nobody");
      REQUIRE(nobody != nullptr);
      pid_t target = spawn_sleeper();  // owned by root
      pid_t child = fork();
      if (child == 0) {
        if (setgid(nobody->pw_gid) != 0 || setuid(nobody->pw_uid) != 0) _exit(10);
        errno = 0;
        int rc = kill(target, 0);
        if (!(rc == -1 && errno == EPERM)) _exit(11);  // the premise: EPERM
        _exit(liveness(target) == Liveness::alive ? 0 : 12);
      }
      int status = 0;
      waitpid(child, &status, 0);
      kill(target, SIGKILL);
      reap(target);
      REQUIRE(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
  }

  TEST_CASE("owner tokens: producer") {
    CHECK(format_owner_token("no-boot-id", 1, 0) == "no-boot-id.1.0");
    CHECK(format_owner_token("b", 42, 35) == "b.42.z");
    CHECK(format_owner_token("b", 42, 36) == "b.42.10");
    // 1700000000000 ms, in base 36 by the independent routine above.
    CHECK(format_owner_token("x", 7, 1700000000000LL) == "x.7." + base36(1700000000000LL));
    CHECK(base36(1700000000000LL) == "loyw3v28");

    auto self = process_start(getpid());
    REQUIRE(self);
    CHECK(self_owner_token() == boot_id() + "." + std::to_string(getpid()) + "." + base36(self->unix_ms));
    auto of = owner_token_of(getpid());
    REQUIRE(of);
    CHECK(*of == self_owner_token());
  }

  TEST_CASE("owner tokens: strict parser") {
    const std::string boot = "0f837d89-9353-4ac3-bcb0-71f2e7667155";
    auto ok = parse_owner_token(boot + ".1234.loyw3v28");
    REQUIRE(ok);
    CHECK(ok->boot_id == boot);
    CHECK(ok->pid == 1234);
    CHECK(ok->start_ms == 1700000000000LL);
    auto nb = parse_owner_token("no-boot-id.5.0");
    REQUIRE(nb);
    CHECK(nb->start_ms == 0);

    const char* bad[] = {
        "",
        ".",
        "..",
        "no-boot-id",
        "no-boot-id.5",
        "no-boot-id.5.",
        "no-boot-id..1",
        "no-boot-id.5.1.2",
        "no-boot-id.abc.1",     // non-numeric pid
        "no-boot-id.0.1",       // pid 0
        "no-boot-id.007.1",     // leading zeros
        "no-boot-id.-5.1",
        "no-boot-id.+5.1",
        "no-boot-id.2147483648.1",  // beyond pid_t
        "no-boot-id.5.01",      // leading zero in the start
        "no-boot-id.5.-1",
        "no-boot-id.5.ABC",     // upper case base 36
        "no-boot-id.5.1 ",      // trailing space
        " no-boot-id.5.1",
        "no-boot-id.5.zzzzzzzzzzzzzzzzzz",  // beyond int64
        "0f837d89-9353-4ac3-bcb0-71f2e76671550.5.1",  // 37-character boot id
        "0f837d89-9353-4ac3-bcb0-71f2e766715.5.1",    // 35 characters
        "0F837D89-9353-4AC3-BCB0-71F2E7667155.5.1",   // upper case
        "0f837d89-9353-4ac3-bcb0-71f2e766715g.5.1",
    };
    for (const char* b : bad) {
      CAPTURE(b);
      CHECK_FALSE(parse_owner_token(b));
    }
    std::string nul("no-boot-id.5.1\0", 15);
    CHECK_FALSE(parse_owner_token(nul));
    CHECK_FALSE(parse_owner_token(std::string(1 << 20, 'a')));
    CHECK_FALSE(parse_owner_token("no-boot-id.5.\xff"));
  }

  TEST_CASE("owner tokens: judgement") {
    pid_t child = spawn_sleeper();
    auto start = process_start(child);
    REQUIRE(start);
    std::string real = format_owner_token(boot_id(), child, start->unix_ms);

    SUBCASE("the live process itself") {
      auto j = judge_owner_token(real);
      CHECK(j.state == HolderState::alive);
      CHECK(j.why.find(std::to_string(child)) != std::string::npos);
    }
    SUBCASE("a start the Go seed wrote a little later is within the tolerance") {
      CHECK(judge_owner_token(format_owner_token(boot_id(), child, start->unix_ms + 4999)).state == HolderState::alive);
      CHECK(judge_owner_token(format_owner_token(boot_id(), child, start->unix_ms - 5000)).state == HolderState::alive);
    }
    SUBCASE("a forged token with a wrong start is recycled") {
      auto j = judge_owner_token(format_owner_token(boot_id(), child, start->unix_ms + 5001));
      CHECK(j.state == HolderState::recycled);
      OwnerJudgeOptions strict;
      strict.start_tolerance_ms = 0;
      CHECK(judge_owner_token(format_owner_token(boot_id(), child, start->unix_ms + 1), strict).state ==
            HolderState::recycled);
    }
    SUBCASE("a token from another boot") {
      std::string other = boot_id();
      other[0] = other[0] == 'a' ? 'b' : 'a';
      auto j = judge_owner_token(format_owner_token(other, child, start->unix_ms));
      CHECK(j.state == HolderState::other_boot);
      CHECK(j.why.find(other) != std::string::npos);
    }
    SUBCASE("a token without a boot id is judged by pid and start") {
      CHECK(judge_owner_token(format_owner_token(no_boot_id, child, start->unix_ms)).state == HolderState::alive);
    }
    SUBCASE("a malformed token is unknown, never dead") {
      CHECK(judge_owner_token("garbage").state == HolderState::unknown);
      CHECK(judge_owner_token("").state == HolderState::unknown);
    }
    kill(child, SIGKILL);
    reap(child);
    CHECK(judge_owner_token(real).state == HolderState::dead);
  }

  TEST_CASE("lease identities: the seed's valid_identity") {
    const std::string boot = "0f837d89-9353-4ac3-bcb0-71f2e7667155";
    CHECK(valid_lease_identity("linux " + boot + " 12345"));
    CHECK(valid_lease_identity("linux " + boot + " 0"));
    CHECK(valid_lease_identity("linux ------------------------------------ 1"));  // [0-9a-f-]{36}
    CHECK_FALSE(valid_lease_identity("linux " + boot + " "));
    CHECK_FALSE(valid_lease_identity("linux " + boot + " 12a"));
    CHECK_FALSE(valid_lease_identity("linux " + boot + " 12345 "));  // trailing space
    CHECK_FALSE(valid_lease_identity("linux " + boot + "0 1"));      // 37 characters
    CHECK_FALSE(valid_lease_identity("linux " + boot.substr(1) + " 1"));
    CHECK_FALSE(valid_lease_identity("linux " + std::string(36, 'A') + " 1"));
    CHECK_FALSE(valid_lease_identity("linux  " + boot + " 1"));
    CHECK_FALSE(valid_lease_identity("Linux " + boot + " 1"));
    // grep reads line by line: a later line may match.
    CHECK(valid_lease_identity("linux x\nlinux " + boot + " 7"));
    CHECK_FALSE(valid_lease_identity("linux x\nps Mon"));
    CHECK(valid_lease_identity("ps Mon Jan  1 00:00:00 2024"));
    CHECK(valid_lease_identity("ps x"));
    CHECK(valid_lease_identity("ps \t"));  // a tab is not a space to the seed
    CHECK_FALSE(valid_lease_identity("ps "));
    CHECK_FALSE(valid_lease_identity("ps    "));
    CHECK_FALSE(valid_lease_identity("ps"));
    CHECK_FALSE(valid_lease_identity(""));
    CHECK_FALSE(valid_lease_identity("windows 1"));
    CHECK(lease_identity_backend("linux a b") == "linux");
    CHECK(lease_identity_backend("ps Mon") == "ps");
    CHECK(lease_identity_backend("nospace") == "nospace");
  }

  TEST_CASE("lease identities: of a process, and the seed's state()") {
    pid_t child = spawn_sleeper();
    auto start = process_start(child);
    REQUIRE(start);
    std::string expected = "linux " + boot_id() + " " + std::to_string(start->ticks);
    CHECK(lease_identity_of(child) == expected);

    CHECK(judge_lease_identity(child, expected, 0).state == HolderState::alive);
    CHECK(judge_lease_identity(child, expected, 500).state == HolderState::alive);
    std::string other = "linux " + boot_id() + " " + std::to_string(start->ticks + 1);
    CHECK(judge_lease_identity(child, other, 0).state == HolderState::recycled);
    // Stale needs proof: a malformed record or another backend keeps the lease.
    CHECK(judge_lease_identity(child, "linux garbage", 0).state == HolderState::alive);
    CHECK(judge_lease_identity(child, "ps Mon Jan  1 00:00:00 2024", 0).state == HolderState::alive);
    // No identity recorded: stale only from 120 minutes on.
    CHECK(judge_lease_identity(child, "", 119).state == HolderState::alive);
    CHECK(judge_lease_identity(child, "", 120).state == HolderState::recycled);

    kill(child, SIGKILL);
    reap(child);
    CHECK(lease_identity_of(child).empty());
    CHECK(judge_lease_identity(child, expected, 0).state == HolderState::dead);
    CHECK(judge_lease_identity(child, "", 500).state == HolderState::dead);
  }

  TEST_CASE("parent chain") {
    pid_t child = fork();
    if (child == 0) {
      auto chain = parent_chain(getpid());
      bool ok = chain.size() >= 2 && chain[0] == getpid() && chain[1] == getppid();
      for (Pid p : chain) ok = ok && p > 1;
      auto two = parent_chain(getpid(), 2);
      ok = ok && two.size() == 2;
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(parent_chain(1).empty());
    CHECK(parent_chain(0).empty());
    CHECK(parent_of(getpid()).value() == getppid());
  }

  TEST_CASE("machine id over given facts") {
    // Expected digests computed with sha256sum:
    //   printf 'host\npid:[4026531836]\n02:00:00:00:00:01\naa:bb:cc:dd:ee:ff' | sha256sum | cut -c1-32
    std::vector<NetCard> cards = {
        {"eth1", "aa:bb:cc:dd:ee:ff", false},
        {"lo", "00:00:00:00:00:00", true},
        {"eth0", "02:00:00:00:00:01", false},
        {"eth0", "02:00:00:00:00:01", false},  // its IPv6 address: the same card again
        {"tun0", "00:00:00:00:00:00", false},
        {"lo2", "12:34:56:78:9a:bc", true},
    };
    auto id = machine_id_of("host", "pid:[4026531836]", cards);
    REQUIRE(id);
    CHECK(*id == "7529f6611c08b8e93a05ccea92d97a5f");
    CHECK_FALSE(machine_id_of("host", "pid:[1]", {{"lo", "00:00:00:00:00:00", true}}));
    CHECK_FALSE(machine_id_of("host", "pid:[1]", {}));
  }

  TEST_CASE("this machine's evidence: kept, read again at most once a second, made again on a change") {
    using namespace std::chrono_literals;
    using Clock = std::chrono::steady_clock;
    // The facts of "machine id over given facts" above, and its digest (sha256sum).
    MachineFacts facts{
        "host",
        "pid:[4026531836]",
        {{"eth1", "aa:bb:cc:dd:ee:ff", false}, {"lo", "00:00:00:00:00:00", true}, {"eth0", "02:00:00:00:00:01", false}},
        false};
    const std::string id = "7529f6611c08b8e93a05ccea92d97a5f";
    Clock::time_point t{1000s};
    int sourced = 0;
    MachineEvidenceCache cache(
        [&] {
          ++sourced;
          return facts;
        },
        [&] { return t; }, 1s);
    CHECK(cache.reads() == 0);

    auto first = cache.get();
    REQUIRE(first);
    CHECK(first->host == "host");
    CHECK(first->machine_id == id);
    CHECK(first->generation == 1);
    CHECK(sourced == 1);
    CHECK(cache.computations() == 1);

    SUBCASE("within the second: nothing is read, whatever changed") {
      facts.host = "renamed";
      for (auto at : {0ms, 1ms, 500ms, 999ms}) {
        t = Clock::time_point{1000s} + at;
        for (int i = 0; i < 1000; ++i) {
          CHECK(cache.get() == first);
          CHECK(cache.generation() == 1);
        }
      }
      CHECK(sourced == 1);
      CHECK(cache.reads() == 1);
      // The second is up: the new name is read, and a new id made from it.
      t = Clock::time_point{1001s};
      auto renamed = cache.get();
      CHECK(sourced == 2);
      CHECK(renamed != first);
      CHECK(renamed->host == "renamed");
      // printf 'renamed\npid:[4026531836]\n02:00:00:00:00:01\naa:bb:cc:dd:ee:ff' | sha256sum | cut -c1-32
      CHECK(renamed->machine_id == "6085860c13c1bb0a3af91391ca2250a9");
      CHECK(renamed->generation == 2);
      CHECK(cache.computations() == 2);
      // The one that had it keeps its own copy intact.
      CHECK(first->host == "host");
    }
    SUBCASE("after the second, unchanged facts are read but nothing is made again") {
      t += 1s;
      CHECK(cache.generation() == 1);
      CHECK(cache.get() == first);
      CHECK(sourced == 2);
      CHECK(cache.computations() == 1);
      t += 10s;
      CHECK(cache.get() == first);
      CHECK(sourced == 3);
      CHECK(cache.computations() == 1);
    }
    SUBCASE("a card that goes down, then Cloud Run: no id") {
      facts.cards = {{"lo", "00:00:00:00:00:00", true}};
      t += 1s;
      CHECK(cache.generation() == 2);
      auto none = cache.get();
      CHECK(none->host == "host");
      CHECK_FALSE(none->machine_id);
      facts.cards.push_back({"eth0", "02:00:00:00:00:01", false});
      facts.cards.push_back({"eth1", "aa:bb:cc:dd:ee:ff", false});
      t += 1s;
      CHECK(cache.get()->machine_id == id);  // the same facts as at first, in another order
      facts.cloud_run = true;
      t += 1s;
      auto cloud = cache.get();
      CHECK_FALSE(cloud->machine_id);
      CHECK(cloud->generation == 4);
      CHECK(sourced == 4);
    }
  }

  TEST_CASE("this machine's evidence from many threads at once") {
    using namespace std::chrono_literals;
    using Clock = std::chrono::steady_clock;
    // Each read of the facts flips the host name; every evidence seen must be whole:
    // its id the one its host gives.
    std::atomic<std::int64_t> ms{0};
    int flips = 0;  // under the cache's lock
    std::vector<NetCard> cards = {{"eth0", "02:00:00:00:00:01", false}};
    MachineEvidenceCache cache(
        [&] {
          ++flips;
          return MachineFacts{flips % 2 ? "a" : "b", "ns", cards, false};
        },
        [&] { return Clock::time_point{std::chrono::milliseconds(ms.load())}; }, 1s);
    const auto id_a = machine_id_of("a", "ns", cards), id_b = machine_id_of("b", "ns", cards);
    std::atomic<int> torn{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k) {
      threads.emplace_back([&, k] {
        for (int i = 0; i < 20000; ++i) {
          if (k == 0 && i % 100 == 0) ms += 250;
          auto e = cache.get();
          if (e->machine_id != (e->host == "a" ? id_a : id_b)) ++torn;
          (void)cache.generation();
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(torn.load() == 0);
    // 200 steps of 250 ms: 50 s, so at most 51 reads (one a second and the first).
    CHECK(cache.reads() >= 2);
    CHECK(cache.reads() <= 51);
    CHECK(cache.computations() == cache.reads());
  }

  TEST_CASE("the process's own evidence is this machine's") {
    auto e = this_machine_evidence().get();
    CHECK(e->host == host_name());
    CHECK(e->machine_id == machine_id());
    CHECK(e->machine_id == machine_id_of(read_machine_facts()));
    CHECK(e->generation >= 1);
  }
}
