// The lock's history on a real cluster: three nats-servers on 127.0.0.1 with an R3
// bucket, lock holders in processes of their own (tests/lock_history_holder.c,
// through the C ABI) that log every critical section, and faults thrown at them
// meanwhile: the current holder SIGKILLed, the current holder SIGSTOPped past its
// lease and SIGCONTed, the bucket's stream leader SIGKILLed and restarted; in one
// run the bucket starts with one replica and is scaled to three while the holders
// hold it open. Then the history is checked:
//   - fencing tokens strictly increase in the real-time order of the sections;
//   - no two sections overlap, unless the earlier holder was paused past its lease
//     meanwhile, and then every write it made after the later one began carries
//     the older token (a fenced resource refuses it);
//   - no acquisition is lost: the next acquisition after each section finds the
//     lock released, or breaks exactly the body that section left; a break of a
//     body nobody logged, or a body left and never broken, is a violation (only a
//     write whose answer never came, logged as such, may leave one unlogged);
//   - at least 1,000 handoffs.
// The same run with the holders' store skipping the revision check must show a
// violation. Bounded: each run stops by itself at its goals or its deadline.
//
// A section is the holder's work under the lock: from its acquisition to the moment
// it stops writing (before its release); a killed holder's section ends with the
// last thing it logged. The holders' lock clock runs 1000 times real time, so the
// lease (10 minutes plus 5 of skew) lasts 0.9 s: a pause of 1.5 s is past it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "leasejudge/lock.hpp"
#include "nats_server.hpp"

#if defined(LEASEJUDGE_HAVE_NATS)

using namespace leasejudge;
using namespace leasejudge::test;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t scale = 1000;
constexpr std::int64_t lease_real_ns = (process_lease_ms + lease_skew_ms) / scale * 1000000;
const char* const bucket = "history";
const char* const key = "the-lock";

std::int64_t real_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

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
};

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
};

// One holder's log into sections. A section its holder did not end was ended by
// the kill: its work ended with the last thing it logged (a write, a renewal, its
// start, or the release it was making: "releasing", which may have landed or not).
void read_log(const std::string& path, pid_t pid, History& h) {
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
      ls >> open->last >> open->end;
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
bool paused_past_lease(const History& h, pid_t pid, std::int64_t from, std::int64_t to) {
  for (const Pause& p : h.pauses) {
    if (p.pid == pid && p.from >= from && p.from <= to && p.to - p.from > lease_real_ns) return true;
  }
  return false;
}

bool error_between(const History& h, std::int64_t from, std::int64_t to) {
  return std::any_of(h.errors.begin(), h.errors.end(), [&](std::int64_t t) { return t >= from && t <= to; });
}

// The violations of the history, one sentence each.
std::vector<std::string> check(History h) {
  std::vector<std::string> bad;
  auto& s = h.sections;
  std::sort(s.begin(), s.end(), [](const Section& a, const Section& b) { return a.start < b.start; });
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i].token <= s[i - 1].token) {
      bad.push_back("token " + std::to_string(s[i].token) + " (pid " + std::to_string(s[i].pid) +
                    ") began after token " + std::to_string(s[i - 1].token) + " (pid " + std::to_string(s[i - 1].pid) +
                    ")");
    }
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::size_t j = i + 1; j < s.size() && s[j].start < s[i].end; ++j) {
      const Section &a = s[i], &b = s[j];
      if (b.plain && b.returned >= a.end) continue;  // it may have landed once a was done
      const bool excused = paused_past_lease(h, a.pid, a.start, b.start);
      bool fenced = true;
      for (const Write& w : a.writes)
        if (w.at >= b.start && w.token >= b.token) fenced = false;
      if (!excused || !fenced) {
        bad.push_back("sections " + std::to_string(a.token) + " (pid " + std::to_string(a.pid) + ") and " +
                      std::to_string(b.token) + " (pid " + std::to_string(b.pid) + ") overlap" +
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
    if (!error_between(h, c.start, n.start)) {
      bad.push_back("the section at " + std::to_string(c.token) + " ended " + c.how + ", and the next acquisition at " +
                    std::to_string(n.token) + " came with no break of its body");
    }
  }
  return bad;
}

// --- the run --------------------------------------------------------------------------

// The pid in the lock's body now, or 0.
pid_t holder_now(NatsStore& store) {
  auto got = store.get(key);
  if (!got || !got->has_value()) return 0;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::padded_string text((**got).value);
  double pid = 0;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS || doc["pid"].get(pid) != simdjson::SUCCESS) return 0;
  return static_cast<pid_t>(pid);
}

// The node leading the bucket's stream, asked of the cluster; -1 when none answers.
int stream_leader(const std::vector<std::string>& urls) {
  for (const std::string& url : urls) {
    natsConnection* nc = nullptr;
    natsOptions* opts = nullptr;
    natsOptions_Create(&opts);
    natsOptions_SetURL(opts, url.c_str());
    natsOptions_SetTimeout(opts, 500);
    natsOptions_SetAllowReconnect(opts, false);
    int leader = -1;
    if (natsConnection_Connect(&nc, opts) == NATS_OK) {
      natsMsg* reply = nullptr;
      std::string subject = std::string("$JS.API.STREAM.INFO.KV_") + bucket;
      if (natsConnection_RequestString(&reply, nc, subject.c_str(), "", 1000) == NATS_OK) {
        std::string_view body(natsMsg_GetData(reply), static_cast<std::size_t>(natsMsg_GetDataLength(reply)));
        auto at = body.find("\"leader\":\"lj-node-");
        if (at != std::string_view::npos) leader = body[at + 18] - '0';
        natsMsg_Destroy(reply);
      }
      natsConnection_Destroy(nc);
    }
    natsOptions_Destroy(opts);
    if (leader >= 0 && leader < NatsCluster::kNodes) return leader;
  }
  return -1;
}

struct Run {
  std::string mode;
  int holders = 3;
  std::size_t handoffs = 1000;
  std::chrono::seconds limit{150};
  int kills = 2, pauses = 2, leader_restarts = 1;
  // The bucket's replicas when the holders open it; below 3, it is scaled to 3 once
  // `rescale_after` handoffs are done, while they hold it open, before any fault.
  int start_replicas = 3;
  std::size_t rescale_after = 0;
  // A plain KV client (nats.c's kvStore_Create, as a module's nats.go code) creating
  // the lock beside the holders, a body whose lease is long past: each create that
  // lands is a section of its own, left for the holders to break.
  bool plain_client = false;
};

struct Outcome {
  History history;
  std::size_t handoffs = 0;
  int kills = 0, pauses = 0, leader_restarts = 0;
  int bad_exits = 0;
  bool rescaled = false;
  int plain_creates = 0;
};

// The plain client: every 5-25 ms a create of the lock where it holds nothing,
// over a connection of its own; each that lands is a section of the history (killed:
// its body left), each that fails without an answer an error (it may have landed).
class PlainClient {
 public:
  PlainClient(const std::string& url, History& into) : history_(into) {
    t_ = std::thread([this, url] { run(url); });
  }
  ~PlainClient() { stop(); }
  void stop() {
    stop_ = true;
    if (t_.joinable()) t_.join();
  }
  int creates() const { return creates_; }

 private:
  void run(const std::string& url) {
    natsConnection* nc = nullptr;
    jsCtx* js = nullptr;
    kvStore* kv = nullptr;
    if (natsConnection_ConnectTo(&nc, url.c_str()) != NATS_OK || natsConnection_JetStream(&js, nc, nullptr) != NATS_OK ||
        js_KeyValue(&kv, js, bucket) != NATS_OK) {
      failed_ = true;
    }
    for (int n = 0; !stop_ && !failed_; ++n) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + (n * 7) % 20));
      const std::string body = R"({"purpose":"a plain client","id":"plain-)" + std::to_string(n) +
                               R"(","host":"plain-host","machine":null,"pid":1,)"
                               R"("startedAt":"2024-05-01T10:00:00.000Z","leaseUntil":"2024-05-01T10:05:00.000Z"})";
      // Its create landed at some moment between the call and its answer.
      Section s;
      s.pid = -1 - n;
      s.plain = true;
      s.start = s.end = real_ns();
      std::uint64_t rev = 0;
      natsStatus st = kvStore_CreateString(&rev, kv, key, body.c_str());
      s.returned = real_ns();
      if (st == NATS_OK) {
        s.token = s.last = rev;
        s.how = "killed";
        std::lock_guard lock(mu_);
        history_.sections.push_back(s);
        ++creates_;
      } else if (st != NATS_ERR) {
        // Not the refusal of a key that holds a value (NATS_ERR): a time-out, a lost
        // connection, nothing answering.
        std::lock_guard lock(mu_);
        history_.errors.push_back(s.end);  // no answer: it may have landed
      }
    }
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }

  History& history_;
  std::thread t_;
  std::atomic<bool> stop_{false};
  bool failed_ = false;
  int creates_ = 0;
  std::mutex mu_;
};

class Holders {
 public:
  Holders(std::string dir, std::string urls, std::string mode, std::int64_t t0_ms, std::int64_t deadline_ms)
      : dir_(std::move(dir)), urls_(std::move(urls)), mode_(std::move(mode)), t0_(t0_ms), deadline_(deadline_ms) {}

  bool spawn() {
    std::string log = dir_ + "/holder-" + std::to_string(logs_.size()) + ".log";
    std::vector<std::string> args = {LEASEJUDGE_HISTORY_HOLDER,
                                     urls_,
                                     bucket,
                                     key,
                                     log,
                                     std::to_string(t0_),
                                     std::to_string(scale),
                                     std::to_string(deadline_),
                                     stop_file(),
                                     mode_,
                                     std::to_string(logs_.size() * 7919 + 17)};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return false;
    logs_.emplace_back(pid, log);
    live_.push_back(pid);
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

 private:
  std::string dir_, urls_, mode_;
  std::int64_t t0_, deadline_;
  std::vector<std::pair<pid_t, std::string>> logs_;
  std::vector<pid_t> live_;
};

Outcome run_history(const Run& run) {
  Outcome out;
  NatsCluster cluster;
  REQUIRE(cluster.start());
  std::string urls;
  for (const auto& u : cluster.urls()) urls += (urls.empty() ? "" : ",") + u;
  NatsOptions o;
  o.urls = cluster.urls();
  o.bucket = bucket;
  o.create_bucket = true;
  o.replicas = run.start_replicas;
  auto store = open_when_ready(o, 30s);
  REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.error().message));

  const std::string dir = make_temp_dir("history");
  REQUIRE(!dir.empty());
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t t0 = real_ns() / 1000000;
  Holders holders(dir, urls, run.mode, t0,
                  t0 + std::chrono::duration_cast<std::chrono::milliseconds>(run.limit).count());
  for (int i = 0; i < run.holders; ++i) REQUIRE(holders.spawn());
  std::optional<PlainClient> plain;
  if (run.plain_client) plain.emplace(cluster.node(1).url(), out.history);

  // Faults, one every 1.5 s or so, in turn: kill the holder, pause it past its
  // lease, kill and restart the stream leader; until the goals are met.
  int turn = 0;
  auto next_fault = started + 3s;
  while (std::chrono::steady_clock::now() - started < run.limit) {
    holders.reap(out);
    out.handoffs = holders.handoffs();
    if (run.start_replicas < 3 && !out.rescaled) {
      if (out.handoffs >= run.rescale_after) {
        REQUIRE(scale_stream(cluster.node(0).url(), std::string("KV_") + bucket, 3));
        out.rescaled = true;
        next_fault = std::chrono::steady_clock::now() + 1500ms;
      }
      std::this_thread::sleep_for(50ms);
      continue;
    }
    const bool faults_done =
        out.kills >= run.kills && out.pauses >= run.pauses && out.leader_restarts >= run.leader_restarts;
    if (faults_done && out.handoffs >= run.handoffs) break;
    if (std::chrono::steady_clock::now() >= next_fault && !faults_done) {
      const int what = turn++ % 3;
      if (what == 0 && out.kills < run.kills) {
        pid_t pid = holder_now(**store);
        if (pid > 0 && holders.ours(pid)) {
          holders.kill(pid, out);
          ++out.kills;
          REQUIRE(holders.spawn());
        }
      } else if (what == 1 && out.pauses < run.pauses) {
        pid_t pid = holder_now(**store);
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
        int leader = stream_leader(cluster.urls());
        if (leader >= 0) {
          cluster.node(leader).kill();
          std::this_thread::sleep_for(1000ms);
          REQUIRE(cluster.node(leader).start());
          ++out.leader_restarts;
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
  if (plain) {
    plain->stop();
    out.plain_creates = plain->creates();
  }
  holders.read(out.history);
  out.handoffs = out.history.sections.size();
  if (std::getenv("LEASEJUDGE_KEEP_HISTORY") != nullptr) {
    MESSAGE("the holders' logs are kept in " << dir);
  } else {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return out;
}

}  // namespace

TEST_SUITE("lock history") {
  TEST_CASE("the checker reads violations into sentences") {
    // A hand-made history: two sections overlapping with no pause, a token that
    // goes back, a body broken that nobody left.
    History h;
    h.sections.push_back({1, 10, 10, 0, 100, 300, "released", {}});
    h.sections.push_back({2, 12, 12, 0, 200, 400, "released", {}});
    h.sections.push_back({3, 11, 11, 0, 500, 600, "released", {}});
    h.sections.push_back({4, 20, 20, 15, 700, 800, "released", {}});
    auto bad = check(h);
    REQUIRE(bad.size() == 3);
    CHECK(bad[0] == "token 11 (pid 3) began after token 12 (pid 2)");
    CHECK(bad[1] == "sections 10 (pid 1) and 12 (pid 2) overlap with no pause past the lease");
    CHECK(bad[2] == "the body at 15 was broken, though the section at 12 (last revision 12) ended released");
    // A pause past the lease excuses an overlap whose late writes are fenced.
    History p;
    p.sections.push_back({1, 10, 10, 0, 100, 3000000000, "lost", {{2900000000, 10}}});
    p.sections.push_back({2, 12, 12, 10, 1500000000, 1600000000, "released", {}});
    p.pauses.push_back({1, 200, 1000000200 + lease_real_ns});
    CHECK(check(p).empty());
    // The same overlap with a write carrying a newer token is not.
    p.sections[0].writes.push_back({2950000000, 13});
    CHECK(check(p).size() == 1);
    // A body its holder left must be broken before the next acquisition, once.
    History q;
    q.sections.push_back({1, 10, 10, 0, 100, 200, "killed", {}});
    q.sections.push_back({2, 12, 12, 0, 300, 400, "released", {}});
    auto lost = check(q);
    REQUIRE(lost.size() == 1);
    CHECK(lost[0] == "the section at 10 ended killed, and the next acquisition at 12 came with no break of its body");
    q.breaks = {10};
    CHECK(check(q).empty());
    q.breaks = {10, 10};
    auto twice = check(q);
    REQUIRE(twice.size() == 1);
    CHECK(twice[0] == "the body at 10 was broken twice");
    // A plain client's create held the lock from some moment of its call on: one whose
    // answer came only after a holder's work ended is no overlap; one answered while a
    // holder worked is.
    History plain;
    plain.sections.push_back({1, 10, 10, 0, 100, 300, "released", {}});
    Section create{-1, 12, 12, 0, 250, 250, "killed", {}, true, 350};
    plain.sections.push_back(create);
    plain.sections.push_back({2, 13, 13, 12, 400, 500, "released", {}});
    CHECK(check(plain).empty());
    plain.sections[1].returned = 280;
    auto during = check(plain);
    REQUIRE(during.size() == 1);
    CHECK(during[0] == "sections 10 (pid 1) and 12 (pid -1) overlap with no pause past the lease");
  }

  TEST_CASE("the real lock keeps its history under kills, pauses and a leader's restart") {
    SKIP_WITHOUT_NATS_SERVER();
    Run run;
    run.mode = "real";
    Outcome out = run_history(run);
    MESSAGE(out.handoffs << " handoffs checked, " << out.kills << " kills, " << out.pauses << " pauses, "
                         << out.leader_restarts << " leader restarts");
    CHECK(out.bad_exits == 0);
    CHECK(out.kills >= run.kills);
    CHECK(out.pauses >= run.pauses);
    CHECK(out.leader_restarts >= run.leader_restarts);
    CHECK(out.handoffs >= run.handoffs);
    auto bad = check(out.history);
    for (const auto& b : bad) MESSAGE(b);
    CHECK(bad.empty());
  }

  TEST_CASE("a bucket scaled from one replica to three while the holders hold it open keeps the history") {
    SKIP_WITHOUT_NATS_SERVER();
    Run run;
    run.mode = "real";
    run.handoffs = 400;
    run.kills = 1;
    run.pauses = 1;
    // nats-server 2.9.10 loses acknowledged writes of a stream scaled from one replica
    // to three when its leader is killed afterwards (the revisions go back: measured,
    // in every run); 2.10 keeps them. There the leader is not killed in this run: the
    // run with three replicas from the start kills it on every version.
    const std::string version = nats_server_version();
    int major = 0, minor = 0;
    REQUIRE(std::sscanf(version.c_str(), "%d.%d", &major, &minor) == 2);
    run.leader_restarts = major > 2 || (major == 2 && minor >= 10) ? 1 : 0;
    run.limit = 120s;
    run.start_replicas = 1;
    run.rescale_after = 100;
    Outcome out = run_history(run);
    MESSAGE(out.handoffs << " handoffs checked on nats-server " << version << ", scaled from 1 to 3 replicas after "
                         << run.rescale_after << ", "
                         << out.kills << " kills, " << out.pauses << " pauses, " << out.leader_restarts
                         << " leader restarts");
    CHECK(out.rescaled);
    CHECK(out.bad_exits == 0);
    CHECK(out.leader_restarts >= run.leader_restarts);
    CHECK(out.handoffs >= run.handoffs);
    auto bad = check(out.history);
    for (const auto& b : bad) MESSAGE(b);
    CHECK(bad.empty());
  }

  TEST_CASE("a plain KV client creating the lock beside the holders is fenced from 2.9.21 on") {
    SKIP_WITHOUT_NATS_SERVER();
    const std::string version = nats_server_version();
    int major = 0, minor = 0, patch = 0;
    REQUIRE(std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch) == 3);
    const bool fenced = major > 2 || (major == 2 && (minor > 9 || (minor == 9 && patch >= 21)));
    Run run;
    run.mode = "real";
    run.handoffs = 300;
    run.kills = 1;
    run.pauses = 1;
    run.leader_restarts = 0;
    run.limit = 90s;
    run.plain_client = true;
    Outcome out = run_history(run);
    auto bad = check(out.history);
    MESSAGE(out.handoffs << " handoffs checked on nats-server " << version << ", " << out.plain_creates
                         << " of them the plain client's creates; " << bad.size() << " violations");
    CHECK(out.bad_exits == 0);
    CHECK(out.plain_creates >= 5);
    CHECK(out.handoffs >= run.handoffs);
    if (fenced) {
      for (const auto& b : bad) MESSAGE(b);
      CHECK(bad.empty());
    }
    // Before 2.9.21 a replicated bucket does not fence a writer that leaves out the
    // stream's expectation, as the store says once (tests/nats_replicated_test.cpp):
    // whatever this run found is printed above, not asserted.
  }

  TEST_CASE("a lock that skips the revision check breaks its history, and the checker says so") {
    SKIP_WITHOUT_NATS_SERVER();
    Run run;
    run.mode = "broken";
    run.handoffs = 200;
    run.kills = 0;
    // Each pause past the lease is a chance for the broken lock to show: several, so
    // that a run on a loaded machine, where a pause may pass unexploited, still does.
    run.pauses = 6;
    run.leader_restarts = 0;
    run.limit = 40s;
    Outcome out = run_history(run);
    MESSAGE(out.handoffs << " handoffs, " << out.pauses << " pauses");
    CHECK(out.pauses >= run.pauses);
    auto bad = check(out.history);
    for (std::size_t i = 0; i < bad.size() && i < 5; ++i) MESSAGE(bad[i]);
    CHECK_FALSE(bad.empty());
  }
}

#else

TEST_CASE("lock history: the NATS store") {
  LJ_REQUIRE_OR_SKIP(false, "leasejudge was built without libnats (LEASEJUDGE_NATS=OFF)");
}

#endif
