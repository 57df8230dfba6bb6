// Test fixture: the lock under network partitions (tests/nemesis.sh), the same on every
// store: the partitions a lock-history run throws, its counts said and checked, and
// the isolated holder (a real `leasejudge lock run` cut off from every member while
// its lease runs, and the next holder after it). Private to the tests; the including
// target defines LEASEJUDGE_HISTORY_HOLDER, LEASEJUDGE_SOURCE_DIR and
// LEASEJUDGE_BINARY_DIR.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lock_history.hpp"
#include "nemesis.hpp"
#include "skip.hpp"

namespace leasejudge::test {

// One lab for the program, made before any other thread starts: 3 members, a client
// namespace for each of the 3 holders, and one more for a sweep.
inline Lab& lab() {
  static Lab l(3, 4);
  return l;
}

// In a test case, first: the lab made (or the case skipped, failed under CI), and no
// fault of a case before that failed left in place.
#define REQUIRE_LAB()                                                                     \
  LJ_REQUIRE_OR_SKIP(lab().ok(), "no lab of network namespaces: " << lab().error()); \
  lab().clear()

// The partitions of a history run, in turn, each held for `hold` and then healed:
// a member that does not lead isolated; the leader isolated; a split with the leader
// and the current holder's client on the minority side; a one-way cut of everything
// the leader sends the other members; the leader isolated and healed every 300 ms;
// the current holder's client cut from every member; 30% of the packets lost each
// way on the link between the leader and one other member. leader(): the index of the
// member that leads now (-1: none found, and the partition waits for its next turn).
inline std::vector<Partition> partitions_of(Lab& lab, std::function<int()> leader, std::chrono::milliseconds hold) {
  Lab* nemesis = &lab;
  auto m = [](int i) { return "m" + std::to_string(i); };
  auto held = [nemesis, hold](bool injected) {
    REQUIRE_MESSAGE(injected, nemesis->error());
    std::this_thread::sleep_for(hold);
    REQUIRE_MESSAGE(nemesis->heal(), nemesis->error());
    return true;
  };
  return {
      {"member isolated",
       [=](int) {
         const int l = leader();
         return l >= 0 && held(nemesis->isolate(m((l + 1) % 3)));
       }},
      {"leader isolated",
       [=](int) {
         const int l = leader();
         return l >= 0 && held(nemesis->isolate(m(l)));
       }},
      {"majority/minority split",
       [=](int slot) {
         const int l = leader();
         return l >= 0 && held(nemesis->split(m(l) + (slot >= 0 ? ",c" + std::to_string(slot) : "")));
       }},
      {"one-way cut",
       [=](int) {
         const int l = leader();
         return l >= 0 && held(nemesis->cut(m(l), m((l + 1) % 3) + "," + m((l + 2) % 3)));
       }},
      {"flapping partition",
       [=](int) {
         const int l = leader();
         return l >= 0 && held(nemesis->flap(m(l), 300));
       }},
      {"holder cut off",
       [=](int slot) { return slot >= 0 && held(nemesis->isolate("c" + std::to_string(slot))); }},
      {"lossy link",
       [=](int) {
         const int l = leader();
         return l >= 0 && held(nemesis->lose(m(l), m((l + 1) % 3), 30));
       }},
  };
}

// A lock history run through the partitions of partitions_of: real holders, no kills,
// pauses or restarts of its own (the partitions are its faults), each kind once, at most
// 90 s; `handoffs` to reach.
inline Run partition_history_run(std::size_t handoffs) {
  Run run;
  run.mode = "real";
  run.handoffs = handoffs;
  run.kills = 0;
  run.pauses = 0;
  run.leader_restarts = 0;
  run.partition_rounds = 1;
  run.limit = std::chrono::seconds(90);
  return run;
}

// drive_history, saying how long the run took.
inline void drive_partition_history(const Run& run, Fleet& fleet, Outcome& out) {
  const auto started = std::chrono::steady_clock::now();
  drive_history(run, fleet, out);
  MESSAGE("the run took "
          << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count()
          << " ms");
}

// A partition run's counts said (faults per kind, handoffs per fault, overlaps, lost
// acquisitions, unknowns) and checked: every partition injected, no holder exiting
// badly, no violation of the history.
inline void check_partitions_kept(const std::string& store, const Run& run, const std::vector<Partition>& partitions,
                                  const Outcome& out) {
  const auto by_fault = handoffs_by_fault(out);
  std::ostringstream faults;
  for (const Partition& p : partitions) {
    const int n = out.partitions.count(p.kind) > 0 ? out.partitions.at(p.kind) : 0;
    faults << "\n  " << p.kind << ": " << n << " injected, "
           << (by_fault.count(p.kind) > 0 ? by_fault.at(p.kind) : 0) << " handoffs while it held and healed";
    CHECK_MESSAGE(n >= run.partition_rounds, p.kind);
  }
  const auto bad = check(out.history);
  std::size_t overlaps = 0, lost = 0, disorder = 0;
  for (const auto& b : bad) {
    if (b.find("overlap") != std::string::npos)
      ++overlaps;
    else if (b.find("began after") != std::string::npos)
      ++disorder;
    else
      ++lost;
  }
  std::map<std::string, int> ends;
  for (const Section& s : out.history.sections) ++ends[s.how];
  std::ostringstream how;
  for (const auto& [h, n] : ends) how << (how.tellp() > 0 ? ", " : "") << n << " " << h;
  std::size_t unknown_ends = 0;
  for (const auto& [h, n] : ends)
    if (h.rfind("error", 0) == 0) unknown_ends += static_cast<std::size_t>(n);
  MESSAGE(store << ": " << out.handoffs << " handoffs checked; partitions:" << faults.str() << "\n  overlaps: "
                << overlaps << ", tokens out of order: " << disorder << ", lost acknowledged acquisitions: " << lost
                << "\n  unknowns: " << out.history.errors.size()
                << " acquisitions without an answer (said as errors, their writes maybe landed), " << unknown_ends
                << " sections whose renewal or release got no answer (said as errors, never as held)"
                << "\n  sections ended: " << how.str());
  for (const auto& b : bad) MESSAGE(b);
  CHECK(bad.empty());
  CHECK(out.bad_exits == 0);
  CHECK(out.handoffs >= run.handoffs);
}

// --- the isolated holder ---------------------------------------------------------------

// The key as the driver sees it, polled: when each get was sent and answered, and the
// revision it found (0: no key; -1: the get failed).
struct KeySample {
  std::int64_t sent = 0, answered = 0;
  std::int64_t revision = -1;
};

class KeyPoll {
 public:
  KeyPoll(Store& store, std::string key) : store_(store), key_(std::move(key)) {
    thread_ = std::thread([this] {
      while (!stop_) {
        KeySample s;
        s.sent = real_ns();
        auto got = store_.get(key_);
        s.answered = real_ns();
        if (got) s.revision = got->has_value() ? static_cast<std::int64_t>((**got).revision) : 0;
        {
          std::lock_guard<std::mutex> g(mu_);
          samples_.push_back(s);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }
  ~KeyPoll() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::vector<KeySample> samples() const {
    std::lock_guard<std::mutex> g(mu_);
    return samples_;
  }

 private:
  Store& store_;
  std::string key_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<KeySample> samples_;
  std::thread thread_;
};

struct IsolatedHolder {
  std::string store;  // the store as the report names it
  std::string url;    // its URL, for lock run and lock acquire in the client namespaces
  std::string lease = "2s";
  // Words put before the second acquirer's command (an environment: its clock).
  std::vector<std::string> acquirer_env;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Wait up to `patience` for pid to end; its wait status, or -1 (then it is killed).
inline int wait_exit(pid_t pid, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      end_process(pid, SIGKILL, std::chrono::seconds(5));
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status;
}

// A real `leasejudge lock run --lease LEASE KEY -- CHILD` in c0, its child logging
// each write with its fencing token; c0 cut from every member while the lease runs;
// another `lock acquire --wait` in c1. The holder must report the loss (its child
// SIGTERMed, exit 9) while its body is still in the store, so before the next holder
// breaks or acquires it; every write of its child carries its token; the next
// token is larger. observer: the driver's store, polled for the key.
inline void check_isolated_holder(Lab& lab, const IsolatedHolder& run, Store& observer, const std::string& key) {
  const std::string dir = make_temp_dir("isolated");
  REQUIRE(!dir.empty());
  const std::string lj = std::string(LEASEJUDGE_BINARY_DIR) + "/leasejudge";
  const std::string writes = dir + "/writes";
  // The child: a write every 20 ms with its token; at SIGTERM, when it came.
  const std::string child = "trap 'echo \"T ${EPOCHREALTIME/./}\" >>" + writes + "; exit 0' TERM; while :; do echo \"W " +
                            "$LEASEJUDGE_FENCING_TOKEN ${EPOCHREALTIME/./}\" >>" + writes + "; sleep 0.02; done";
  auto holder_args = lab.launch("c0");
  holder_args.insert(holder_args.end(),
                     {lj, "lock", "run", "--store", run.url, "--lease", run.lease, key, "--", "/bin/bash", "-c", child});
  const pid_t holder = spawn_logged(holder_args, dir + "/holder.log");
  REQUIRE(holder > 0);
  std::int64_t first_write = 0;
  for (int i = 0; i < 1000 && first_write == 0; ++i) {
    if (read_text(writes).rfind("W ", 0) == 0) first_write = real_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE_MESSAGE(first_write != 0, "lock run never started its child: " << read_text(dir + "/holder.log"));
  KeyPoll poll(observer, key);
  // Past a renewal or two, then the cut.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const std::int64_t cut = real_ns();
  REQUIRE_MESSAGE(lab.isolate("c0"), lab.error());
  auto acquirer_args = lab.launch("c1");
  acquirer_args.insert(acquirer_args.end(), run.acquirer_env.begin(), run.acquirer_env.end());
  acquirer_args.insert(acquirer_args.end(),
                       {lj, "lock", "acquire", key, "--store", run.url, "--wait", "60s", "--lease", run.lease});
  const pid_t acquirer = spawn_logged(acquirer_args, dir + "/acquirer.log");
  REQUIRE(acquirer > 0);
  const int acquired = wait_exit(acquirer, std::chrono::seconds(40));
  const std::int64_t acquirer_done = real_ns();
  REQUIRE_MESSAGE(lab.heal(), lab.error());
  const int held = wait_exit(holder, std::chrono::seconds(30));
  const std::int64_t holder_done = real_ns();
  poll.stop();
  const std::string acquirer_said = read_text(dir + "/acquirer.log");
  const std::string holder_said = read_text(dir + "/holder.log");
  INFO("lock run said: " << holder_said);
  INFO("lock acquire said: " << acquirer_said);
  REQUIRE(WIFEXITED(acquired));
  REQUIRE(WEXITSTATUS(acquired) == 0);
  CHECK(WIFEXITED(held));
  CHECK(WEXITSTATUS(held) == 9);
  CHECK(holder_said.find("lost the lock") != std::string::npos);

  // The child's log: its writes, all with one token, and when the SIGTERM came.
  std::istringstream log(read_text(writes));
  std::string kind;
  std::uint64_t token = 0, first_token = 0;
  std::int64_t at_us = 0, loss = 0, last_write = 0;
  std::size_t written = 0, written_after_cut = 0, other_tokens = 0;
  while (log >> kind) {
    if (kind == "W" && log >> token >> at_us) {
      if (first_token == 0) first_token = token;
      if (token != first_token) ++other_tokens;
      ++written;
      if (at_us * 1000 > cut) ++written_after_cut;
      last_write = at_us * 1000;
    } else if (kind == "T" && log >> at_us) {
      loss = at_us * 1000;
    }
  }
  REQUIRE(loss != 0);
  const auto at = acquirer_said.find("fencing token ");
  REQUIRE(at != std::string::npos);
  const std::uint64_t next_token = std::stoull(acquirer_said.substr(at + 14));

  // The key as the driver saw it: the old body (any revision below the next token)
  // last seen at gone_after (when that get was sent); first seen gone, and the next
  // holder's body first seen, at the answers of those gets.
  std::int64_t gone_after = 0, gone_by = 0, acquired_by = 0;
  for (const KeySample& s : poll.samples()) {
    if (s.revision > 0 && static_cast<std::uint64_t>(s.revision) < next_token) gone_after = s.sent;
  }
  for (const KeySample& s : poll.samples()) {
    if (s.sent > gone_after && s.revision >= 0 && gone_by == 0 &&
        (s.revision == 0 || static_cast<std::uint64_t>(s.revision) >= next_token))
      gone_by = s.answered;
    if (s.revision > 0 && static_cast<std::uint64_t>(s.revision) >= next_token && acquired_by == 0)
      acquired_by = s.answered;
  }
  auto ms = [](std::int64_t ns) { return static_cast<double>(ns) / 1e6; };
  MESSAGE(run.store << ": the isolated holder (lease " << run.lease << ", fencing token " << first_token
                    << "): cut at 0 ms; its loss reported (the child SIGTERMed) at " << ms(loss - cut)
                    << " ms; its body last seen at " << ms(gone_after - cut) << " ms, seen gone by "
                    << ms(gone_by - cut) << " ms; the next holder's body (fencing token " << next_token
                    << ") seen by " << ms(acquired_by - cut) << " ms, its lock acquire returned at "
                    << ms(acquirer_done - cut) << " ms; margin from the loss to the body's end: at least "
                    << ms(gone_after - loss) << " ms; lock run exited "
                    << (WIFEXITED(held) ? WEXITSTATUS(held) : -1) << " at " << ms(holder_done - cut)
                    << " ms (healed once the lock acquire returned); " << written << " writes, "
                    << written_after_cut << " of them after the cut, the last at " << ms(last_write - cut)
                    << " ms");
  CHECK(gone_after > 0);
  CHECK(acquired_by > 0);
  // The promise: the loss reported while the old body was still in the store, before
  // anyone broke or replaced it.
  CHECK(loss < gone_after);
  CHECK(last_write <= loss);
  CHECK(other_tokens == 0);
  CHECK(next_token > first_token);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace leasejudge::test
