// Test fixture: the lock's history, checked (tests/lock_history_test.cpp says what
// it checks and how). Lock holders in processes of their own (tests/lock_history_holder.c,
// through the C ABI) log every critical section while faults are thrown at them and
// at their cluster; their logs are read into a history and its violations listed.
// Private to the tests; the including target defines LEASEJUDGE_HISTORY_HOLDER.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "leasejudge/lock.hpp"
#include "leasejudge/store.hpp"
#include "server_process.hpp"

namespace leasejudge::test {

using namespace std::chrono_literals;

inline const char* const history_key = "the-lock";

inline std::int64_t real_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

constexpr std::int64_t scale = 1000;
constexpr std::int64_t lease_real_ns = (process_lease_ms + lease_skew_ms) / scale * 1000000;

// --- the history --------------------------------------------------------------------

struct Write {
  std::int64_t at;
  std::uint64_t token;
};

struct Section {
  pid_t pid = 0;
  std::uint64_t token = 0;  // the acquisition's revision
  std::uint64_t last = 0;   // its last revision logged (renewals move it)
  std::uint64_t broke_at = 0;
  std::int64_t start = 0, end = 0;
  std::string how;  // released, lost, changed, error<code>, killed
  std::vector<Write> writes;
  // A plain client's create: it landed at some time from start (the call) to
  // returned (its answer); start orders it, returned says it surely held the lock.
  bool plain = false;
  std::int64_t returned = 0;
  // When its acquisition was asked for (0: at start). A store that stalls the call
  // holds the holder up as a pause does.
  std::int64_t asked = 0;
};

inline std::int64_t asked_at(const Section& s) {
  return s.asked != 0 ? s.asked : s.start;
}

struct Pause {
  pid_t pid;
  std::int64_t from, to;
};

struct History {
  std::vector<Section> sections;
  std::vector<std::uint64_t> breaks;  // revisions broken by acquisitions that lost the race after
  std::vector<std::int64_t> errors;   // times of acquisitions that failed with an error, or were killed
  std::map<pid_t, std::int64_t> killed;
  std::vector<Pause> pauses;
  // The lease in real time: a holder held up longer than it was paused past it.
  std::int64_t lease_ns = lease_real_ns;
  // Whether the store ends a body with its store lease (etcd): a body left is then
  // taken by the store once its holder stops renewing, and the next acquisition finds
  // it gone, with no break.
  bool store_leases = false;
};

// One holder's log into sections. A section its holder did not end was ended by
// the kill: its work ended with the last thing it logged (a write, a renewal, its
// start, or the release it was making: "releasing", which may have landed or not).
inline void read_log(const std::string& path, pid_t pid, History& h) {
  std::ifstream in(path);
  std::string line;
  std::optional<Section> open;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    char kind = 0;
    ls >> kind;
    if (kind == 'A') {
      Section s;
      s.pid = pid;
      ls >> s.token >> s.start >> s.broke_at;
      if (!(ls >> s.asked)) s.asked = 0;
      if (s.asked != 0 && s.start - s.asked > h.lease_ns) h.pauses.push_back({pid, s.asked, s.start});
      s.last = s.token;
      s.end = s.start;
      s.how = "killed";
      open = s;
    } else if (kind == 'W' && open) {
      Write w{};
      ls >> w.token >> w.at;
      open->writes.push_back(w);
      open->end = w.at;
    } else if (kind == 'R' && open) {
      std::int64_t asked = 0;
      ls >> open->last >> open->end;
      // A renewal the store held up past the lease: a pause of its holder.
      if (ls >> asked && open->end - asked > h.lease_ns) h.pauses.push_back({pid, asked, open->end});
    } else if (kind == 'F' && open) {
      ls >> open->end;
      open->how = "releasing";
    } else if (kind == 'E' && open) {
      ls >> open->end >> open->how;
      h.sections.push_back(*open);
      open.reset();
    } else if (kind == 'B') {
      std::uint64_t revision = 0;
      ls >> revision;
      h.breaks.push_back(revision);
    } else if (kind == 'X') {
      std::int64_t at = 0;
      ls >> at;
      h.errors.push_back(at);
    }
  }
  if (!open && h.killed.count(pid) > 0) {
    // Killed between sections: maybe inside an acquisition whose write landed before
    // the holder could log it, a body nobody logged, as after an acquisition's error.
    h.errors.push_back(h.killed.at(pid));
  }
  if (open) {
    // A holder that was not killed ends every section it starts.
    if (h.killed.count(pid) == 0) open->end = std::numeric_limits<std::int64_t>::max();
    if (open->how == "releasing") open->how = "killed-releasing";
    h.sections.push_back(*open);
  }
}

// Whether pid was paused past its lease after from and before to.
inline bool paused_past_lease(const History& h, pid_t pid, std::int64_t from, std::int64_t to) {
  for (const Pause& p : h.pauses) {
    if (p.pid == pid && p.from >= from && p.from <= to && p.to - p.from > h.lease_ns) return true;
  }
  return false;
}

inline bool error_between(const History& h, std::int64_t from, std::int64_t to) {
  return std::any_of(h.errors.begin(), h.errors.end(), [&](std::int64_t t) { return t >= from && t <= to; });
}

// The violations of the history, one sentence each.
inline std::vector<std::string> check(History h) {
  std::vector<std::string> bad;
  auto& s = h.sections;
  std::sort(s.begin(), s.end(), [](const Section& a, const Section& b) { return a.start < b.start; });
  // An acquisition that returned before another was asked for holds the older token.
  std::vector<std::size_t> newest(s.size());  // of s[0..i], the index of the largest token
  for (std::size_t i = 0; i < s.size(); ++i)
    newest[i] = i > 0 && s[newest[i - 1]].token >= s[i].token ? newest[i - 1] : i;
  for (std::size_t j = 0; j < s.size(); ++j) {
    auto returned_before = std::lower_bound(s.begin(), s.end(), asked_at(s[j]),
                                            [](const Section& x, std::int64_t t) { return x.start < t; });
    if (returned_before == s.begin()) continue;
    const Section& i = s[newest[static_cast<std::size_t>(returned_before - s.begin()) - 1]];
    if (i.token >= s[j].token) {
      bad.push_back("token " + std::to_string(s[j].token) + " (pid " + std::to_string(s[j].pid) +
                    ") began after token " + std::to_string(i.token) + " (pid " + std::to_string(i.pid) + ")");
    }
  }
  // Two sections at once: the older token's holder was paused past its lease, and what
  // it wrote since the newer began carries its older token (a fenced resource refuses it).
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::size_t j = i + 1; j < s.size() && s[j].start < s[i].end; ++j) {
      const Section &a = s[i], &b = s[j];
      if (b.plain && b.returned >= a.end) continue;  // it may have landed once a was done
      const Section &older = a.token < b.token ? a : b, &newer = a.token < b.token ? b : a;
      const bool excused = paused_past_lease(h, older.pid, asked_at(older), newer.start);
      bool fenced = true;
      for (const Write& w : older.writes)
        if (w.at >= newer.start && w.token >= newer.token) fenced = false;
      if (!excused || !fenced) {
        bad.push_back("sections " + std::to_string(older.token) + " (pid " + std::to_string(older.pid) + ") and " +
                      std::to_string(newer.token) + " (pid " + std::to_string(newer.pid) + ") overlap" +
                      (excused ? ", and a write after the later began carries a token not older than it"
                               : " with no pause past the lease"));
      }
    }
  }
  // No acquisition lost. In token order, every break broke the last body of the
  // section before it, once, and only a section its holder did not release; and
  // every section not released was broken before the next one began. A write whose
  // answer never came (an acquisition's error, or one its holder was killed in before
  // it could log it) may leave a body nobody logged, and a release that failed may
  // have landed: those are excused.
  std::sort(s.begin(), s.end(), [](const Section& a, const Section& b) { return a.token < b.token; });
  std::vector<std::uint64_t> breaks = h.breaks;
  for (const Section& c : s)
    if (c.broke_at != 0) breaks.push_back(c.broke_at);
  std::sort(breaks.begin(), breaks.end());
  std::map<std::size_t, int> broken;  // section index -> breaks of its body
  for (std::size_t k = 0; k < breaks.size(); ++k) {
    const std::uint64_t b = breaks[k];
    if (k > 0 && breaks[k - 1] == b) bad.push_back("the body at " + std::to_string(b) + " was broken twice");
    auto after = std::upper_bound(s.begin(), s.end(), b, [](std::uint64_t v, const Section& x) { return v < x.token; });
    if (after == s.begin()) {
      if (h.errors.empty()) bad.push_back("the body at " + std::to_string(b) + " was broken before any section");
      continue;
    }
    const std::size_t i = static_cast<std::size_t>(after - s.begin()) - 1;
    const Section& c = s[i];
    const std::int64_t next_start = i + 1 < s.size() ? s[i + 1].start : std::numeric_limits<std::int64_t>::max();
    const bool unsure = error_between(h, c.start, next_start);
    if ((c.how == "released" || b < c.last) && !unsure) {  // killed-releasing: its release may not have landed
      bad.push_back("the body at " + std::to_string(b) + " was broken, though the section at " +
                    std::to_string(c.token) + " (last revision " + std::to_string(c.last) + ") ended " + c.how);
    }
    ++broken[i];
  }
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    const Section &c = s[i], &n = s[i + 1];
    if (c.how == "released" || c.how.rfind("error", 0) == 0 || c.how == "killed-releasing" || broken.count(i) > 0)
      continue;
    if (h.store_leases) continue;  // its store lease ran out: the store took the body
    if (!error_between(h, c.start, n.start)) {
      bad.push_back("the section at " + std::to_string(c.token) + " ended " + c.how + ", and the next acquisition at " +
                    std::to_string(n.token) + " came with no break of its body");
    }
  }
  return bad;
}

// --- the run --------------------------------------------------------------------------

// The pid in the lock's body now, or 0.
inline pid_t holder_now(Store& store) {
  auto got = store.get(history_key);
  if (!got || !got->has_value()) return 0;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::padded_string text((**got).value);
  double pid = 0;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS || doc["pid"].get(pid) != simdjson::SUCCESS) return 0;
  return static_cast<pid_t>(pid);
}

struct Run {
  std::string mode;
  int holders = 3;
  std::size_t handoffs = 1000;
  std::chrono::seconds limit{150};
  int kills = 2, pauses = 2, leader_restarts = 1;
  // The cluster's leader SIGSTOPped past the lease and SIGCONTed (where the fleet can).
  int leader_pauses = 0;
  // The bucket's replicas when the holders open it; below 3, it is scaled to 3 once
  // `rescale_after` handoffs are done, while they hold it open, before any fault.
  int start_replicas = 3;
  std::size_t rescale_after = 0;
  // A plain KV client (nats.c's kvStore_Create, as a module's nats.go code) creating
  // the lock beside the holders, a body whose lease is long past: each create that
  // lands is a section of its own, left for the holders to break.
  bool plain_client = false;
  // Each of the fleet's partitions (Fleet::partitions) injected this many times.
  int partition_rounds = 0;
};

// A fault of the run and when it was in place: from its start to the next fault's (the
// heal and the time after it included).
struct FaultWindow {
  std::string kind;
  std::int64_t from = 0, to = 0;
};

struct Outcome {
  History history;
  std::size_t handoffs = 0;
  int kills = 0, pauses = 0, leader_restarts = 0, leader_pauses = 0;
  int bad_exits = 0;
  bool rescaled = false;
  int plain_creates = 0;
  std::map<std::string, int> partitions;  // by kind: how many were injected
  std::vector<FaultWindow> windows;       // of the partitions
};

// The acquisitions made while each kind of partition was in place (or healing), by kind.
inline std::map<std::string, std::size_t> handoffs_by_fault(const Outcome& out) {
  std::map<std::string, std::size_t> by;
  for (const FaultWindow& w : out.windows) {
    by[w.kind] += 0;
    for (const Section& s : out.history.sections)
      if (!s.plain && s.start >= w.from && s.start < w.to) ++by[w.kind];
  }
  return by;
}

class Holders {
 public:
  Holders(std::string dir, std::string urls, std::string bucket, std::string mode, std::int64_t t0_ms,
          std::int64_t deadline_ms)
      : dir_(std::move(dir)),
        urls_(std::move(urls)),
        bucket_(std::move(bucket)),
        mode_(std::move(mode)),
        t0_(t0_ms),
        deadline_(deadline_ms) {}

  // Where each holder runs: the words put before its command line for its slot (the
  // first free of 0, 1, ...: a holder spawned after one was killed takes its slot);
  // and more arguments for it (its lease).
  void place(std::function<std::vector<std::string>(int slot)> launch, std::vector<std::string> extra) {
    launch_ = std::move(launch);
    extra_ = std::move(extra);
  }
  // The slot of a live holder; -1 for none.
  int slot_of(pid_t pid) const {
    auto it = slots_.find(pid);
    return it != slots_.end() && ours(pid) ? it->second : -1;
  }

  bool spawn() {
    int slot = 0;
    while (std::any_of(live_.begin(), live_.end(), [&](pid_t p) { return slots_.at(p) == slot; })) ++slot;
    std::string log = dir_ + "/holder-" + std::to_string(logs_.size()) + ".log";
    std::vector<std::string> args = {LEASEJUDGE_HISTORY_HOLDER,
                                     urls_,
                                     bucket_,
                                     history_key,
                                     log,
                                     std::to_string(t0_),
                                     std::to_string(scale),
                                     std::to_string(deadline_),
                                     stop_file(),
                                     mode_,
                                     std::to_string(logs_.size() * 7919 + 17)};
    args.insert(args.end(), extra_.begin(), extra_.end());
    if (launch_) {
      auto words = launch_(slot);
      args.insert(args.begin(), words.begin(), words.end());
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return false;
    logs_.emplace_back(pid, log);
    live_.push_back(pid);
    slots_[pid] = slot;
    return true;
  }
  std::string stop_file() const { return dir_ + "/stop"; }
  bool ours(pid_t pid) const { return std::find(live_.begin(), live_.end(), pid) != live_.end(); }

  // Reap what ended; a holder that exits on its own must exit 0.
  void reap(Outcome& out) {
    for (auto it = live_.begin(); it != live_.end();) {
      int status = 0;
      if (::waitpid(*it, &status, WNOHANG) == *it) {
        const bool was_killed = out.history.killed.count(*it) > 0;
        if (!was_killed && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) ++out.bad_exits;
        it = live_.erase(it);
      } else {
        ++it;
      }
    }
  }
  void kill(pid_t pid, Outcome& out) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    out.history.killed[pid] = real_ns();
    live_.erase(std::remove(live_.begin(), live_.end(), pid), live_.end());
  }
  std::size_t handoffs() const {
    std::size_t n = 0;
    for (const auto& [pid, log] : logs_) {
      std::ifstream in(log);
      std::string line;
      while (std::getline(in, line)) n += line.rfind("A ", 0) == 0;
    }
    return n;
  }
  bool any_live() const { return !live_.empty(); }
  void read(History& h) const {
    for (const auto& [pid, log] : logs_) read_log(log, pid, h);
  }

  // Every holder alive now.
  const std::vector<pid_t>& live() const { return live_; }

 private:
  std::string dir_, urls_, bucket_, mode_;
  std::int64_t t0_, deadline_;
  std::vector<std::pair<pid_t, std::string>> logs_;
  std::vector<pid_t> live_;
  std::function<std::vector<std::string>(int slot)> launch_;
  std::vector<std::string> extra_;
  std::map<pid_t, int> slots_;
};

// A network partition the run throws (tests/nemesis.sh): its kind, and what injects
// it, holds it a while and heals it, given the slot of the holder that holds the lock
// now (-1: none found); false when it could not be injected now (no leader found).
struct Partition {
  std::string kind;
  std::function<bool(int holder_slot)> inject;
};

// The cluster the holders take the lock on, as the run's faults act on it.
struct Fleet {
  // The holder's first two arguments: NATS URLs and the bucket, or a store URL and "-".
  std::string urls, bucket;
  Store* store = nullptr;  // where the run reads who holds the lock
  // Kill the cluster's leader and start it again / stop it (SIGSTOP) past the lease and
  // continue it; false when no leader was found. Each may record the holders it stalls.
  std::function<bool(const std::vector<pid_t>&holders, History&h)> restart_leader, pause_leader;
  std::function<bool()> rescale;              // to three replicas
  std::function<void()> after_spawn;          // once the first holders run
  std::function<void(Outcome&)> before_read;  // once every holder ended
  // Where the holders run (Holders::place; none: here), and more arguments for them.
  std::function<std::vector<std::string>(int slot)> place_holder;
  std::vector<std::string> holder_args;
  // The partitions thrown in turn after the faults above, run.partition_rounds each.
  std::vector<Partition> partitions;
};

// Run the holders on the fleet, with faults, one every 1.5 s or so, in turn: kill the
// holder, pause it past its lease, kill and restart the leader, pause the leader, then
// the fleet's partitions; until the goals are met or the run's limit. Then read their
// logs into out.history.
inline void drive_history(const Run& run, Fleet& fleet, Outcome& out) {
  const std::string dir = make_temp_dir("history");
  REQUIRE(!dir.empty());
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t t0 = real_ns() / 1000000;
  Holders holders(dir, fleet.urls, fleet.bucket, run.mode, t0,
                  t0 + std::chrono::duration_cast<std::chrono::milliseconds>(run.limit).count());
  if (fleet.place_holder || !fleet.holder_args.empty()) holders.place(fleet.place_holder, fleet.holder_args);
  for (int i = 0; i < run.holders; ++i) REQUIRE(holders.spawn());
  if (fleet.after_spawn) fleet.after_spawn();

  int turn = 0;
  auto next_fault = started + 3s;
  while (std::chrono::steady_clock::now() - started < run.limit) {
    holders.reap(out);
    out.handoffs = holders.handoffs();
    if (run.start_replicas < 3 && !out.rescaled) {
      if (out.handoffs >= run.rescale_after) {
        REQUIRE(fleet.rescale());
        out.rescaled = true;
        next_fault = std::chrono::steady_clock::now() + 1500ms;
      }
      std::this_thread::sleep_for(50ms);
      continue;
    }
    const int base = run.leader_pauses > 0 ? 4 : 3;
    const int kinds = base + static_cast<int>(fleet.partitions.size());
    auto partition_done = [&](int what) {
      return out.partitions[fleet.partitions[static_cast<std::size_t>(what - base)].kind] >= run.partition_rounds;
    };
    bool partitions_done = true;
    for (int k = base; k < kinds; ++k) partitions_done = partitions_done && partition_done(k);
    const bool faults_done = out.kills >= run.kills && out.pauses >= run.pauses &&
                             out.leader_restarts >= run.leader_restarts &&
                             out.leader_pauses >= run.leader_pauses && partitions_done;
    if (faults_done && out.handoffs >= run.handoffs) break;
    if (std::chrono::steady_clock::now() >= next_fault && !faults_done) {
      int what = turn++ % kinds;
      // With partitions, the kinds done are passed over (a run of partitions alone
      // waits for none of the others).
      while (!fleet.partitions.empty() && (what >= base ? partition_done(what)
                                                         : (what == 0   ? out.kills >= run.kills
                                                            : what == 1 ? out.pauses >= run.pauses
                                                            : what == 2 ? out.leader_restarts >= run.leader_restarts
                                                                        : out.leader_pauses >= run.leader_pauses)))
        what = turn++ % kinds;
      if (what == 0 && out.kills < run.kills) {
        pid_t pid = holder_now(*fleet.store);
        if (pid > 0 && holders.ours(pid)) {
          holders.kill(pid, out);
          ++out.kills;
          REQUIRE(holders.spawn());
        }
      } else if (what == 1 && out.pauses < run.pauses) {
        pid_t pid = holder_now(*fleet.store);
        if (pid > 0 && holders.ours(pid)) {
          Pause p{pid, real_ns(), 0};
          ::kill(pid, SIGSTOP);
          std::this_thread::sleep_for(1500ms);
          p.to = real_ns();
          ::kill(pid, SIGCONT);
          out.history.pauses.push_back(p);
          ++out.pauses;
        }
      } else if (what == 2 && out.leader_restarts < run.leader_restarts) {
        if (fleet.restart_leader(holders.live(), out.history)) ++out.leader_restarts;
      } else if (what == 3 && out.leader_pauses < run.leader_pauses) {
        if (fleet.pause_leader(holders.live(), out.history)) ++out.leader_pauses;
      } else if (what >= base) {
        const Partition& p = fleet.partitions[static_cast<std::size_t>(what - base)];
        if (!out.windows.empty() && out.windows.back().to == 0) out.windows.back().to = real_ns();
        FaultWindow w{p.kind, real_ns(), 0};
        if (p.inject(holders.slot_of(holder_now(*fleet.store)))) {
          ++out.partitions[p.kind];
          out.windows.push_back(w);
        }
      }
      next_fault = std::chrono::steady_clock::now() + 1500ms;
    }
    std::this_thread::sleep_for(50ms);
  }
  // Stop the holders: each finishes its section and exits.
  { std::ofstream(holders.stop_file()) << "stop\n"; }
  const auto stopping = std::chrono::steady_clock::now();
  while (holders.any_live() && std::chrono::steady_clock::now() - stopping < 30s) {
    holders.reap(out);
    std::this_thread::sleep_for(20ms);
  }
  REQUIRE_FALSE(holders.any_live());
  if (!out.windows.empty() && out.windows.back().to == 0) out.windows.back().to = real_ns();
  if (fleet.before_read) fleet.before_read(out);
  holders.read(out.history);
  out.handoffs = out.history.sections.size();
  if (std::getenv("LEASEJUDGE_KEEP_HISTORY") != nullptr) {
    MESSAGE("the holders' logs are kept in " << dir);
  } else {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
}

// A real lock's run that met every goal it was given (faults done, handoffs made, no
// holder exiting badly) and kept its history: said with its counts, then checked.
inline void check_history_kept(const Run& run, const Outcome& out) {
  MESSAGE(out.handoffs << " handoffs checked, " << out.kills << " kills, " << out.pauses << " pauses, "
                       << out.leader_restarts << " leader restarts, " << out.leader_pauses << " leader pauses");
  CHECK(out.bad_exits == 0);
  CHECK(out.kills >= run.kills);
  CHECK(out.pauses >= run.pauses);
  CHECK(out.leader_restarts >= run.leader_restarts);
  CHECK(out.leader_pauses >= run.leader_pauses);
  CHECK(out.handoffs >= run.handoffs);
  auto bad = check(out.history);
  for (const auto& b : bad) MESSAGE(b);
  CHECK(bad.empty());
}

}  // namespace leasejudge::test
