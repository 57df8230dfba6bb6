#include "leasejudge/leasedir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <langinfo.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>

#include "child.hpp"
#include "leasedir_shell.hpp"

namespace leasejudge {

// =====================================================================================
// the lease directory
// =====================================================================================

const char* lease_state_name(LeaseState state) noexcept {
  switch (state) {
    case LeaseState::alive:
      return "alive";
    case LeaseState::dead:
      return "dead";
    case LeaseState::stale:
      return "stale";
  }
  return "alive";
}

namespace {

// Threads of one process take the lock one at a time: their token is the same. A
// thread that already has the turn (through another LeaseDir) is told so at once.
class ProcessTurn {
 public:
  enum class Outcome { taken, waited_out, own };
  Outcome acquire(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> guard(m_);
    if (taken_ && owner_ == std::this_thread::get_id()) return Outcome::own;
    if (!cv_.wait_for(guard, wait, [this] { return !taken_; })) return Outcome::waited_out;
    taken_ = true;
    owner_ = std::this_thread::get_id();
    return Outcome::taken;
  }
  void release() {
    {
      std::lock_guard<std::mutex> guard(m_);
      taken_ = false;
      owner_ = std::thread::id();
    }
    cv_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool taken_ = false;
  std::thread::id owner_;
};

ProcessTurn& process_turn() {
  static ProcessTurn turn;
  return turn;
}

Instant realtime_now() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return Instant{static_cast<std::int64_t>(ts.tv_sec), static_cast<std::int32_t>(ts.tv_nsec)};
}

// ${VAR:-300} with anything but digits meaning 300; a count too large for any
// comparison (bash's test refuses it) never ends the tries.
std::int64_t tries_from(std::optional<std::string_view> text) {
  if (!text || text->empty()) return 300;
  if (!std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; })) return 300;
  std::int64_t v = 0;
  for (char c : *text) {
    if (v > (INT64_MAX - 9) / 10) return INT64_MAX;
    v = v * 10 + (c - '0');
  }
  return v;
}

struct Stop {};  // a sink asked to stop: unwinds to the verb, which reports Errc::user

}  // namespace

struct LeaseDir::Impl {
  std::string dir;
  LeaseDirOptions opts;
  Pid self = 0;
  std::string lock_path;
  shell::EnvLocale loc;
  std::string token;
  bool token_ready = false;
  std::string lock_owner;
  bool has_turn = false;  // this LeaseDir has the process's turn: it holds, or takes, the lock
  const LeaseLineSink* sink = nullptr;

  Impl(std::string d, LeaseDirOptions o)
      : dir(std::move(d)),
        opts(std::move(o)),
        self(opts.self > 0 ? opts.self : ::getpid()),
        lock_path(dir + "/.lock"),
        loc(opts.environment) {}

  const char* const* env() const noexcept { return opts.environment; }
  Instant now() const { return opts.clock ? opts.clock() : realtime_now(); }
  std::int64_t now_sec() const { return now().sec; }

  void emit(LeaseStream stream, std::string_view line) {
    if (sink != nullptr && *sink && !(*sink)(stream, line)) throw Stop{};
  }
  void tool(const shell::ToolOutcome& o) {
    if (!o.message.empty()) emit(LeaseStream::err, o.message);
  }

  const std::string& my_token() {
    if (!token_ready) {
      token = std::to_string(self) + " " + lease_identity_of(self);
      token_ready = true;
    }
    return token;
  }

  // --- the script's judgements ---

  LeaseState state(std::string_view name, std::string_view record, std::int64_t age_min) {
    if (auto pid = shell::canonical_pid(name)) {
      switch (judge_lease_identity(*pid, record, age_min).state) {
        case HolderState::dead:
          return LeaseState::dead;
        case HolderState::recycled:
        case HolderState::other_boot:
          return LeaseState::stale;
        case HolderState::alive:
        case HolderState::unknown:
          return LeaseState::alive;
      }
      return LeaseState::alive;
    }
    if (!shell::name_alive(name, env())) return LeaseState::dead;
    if (record.empty()) return age_min >= 120 ? LeaseState::stale : LeaseState::alive;
    std::string now_id = shell::name_identity(name, env());
    if (valid_lease_identity(record) && !now_id.empty() &&
        lease_identity_backend(record) == lease_identity_backend(now_id) && record != now_id)
      return LeaseState::stale;
    return LeaseState::alive;
  }

  bool holder_gone(std::string_view token_text) {
    std::string_view pid = shell::token_pid(token_text);
    if (shell::token_pid_malformed(pid)) return true;
    LeaseState s = state(pid, shell::token_identity(token_text), 0);
    return s == LeaseState::dead || s == LeaseState::stale;
  }

  bool abandoned(const std::string& claim, std::string_view token_text) {
    return shell::token_identity(token_text).empty() && !shell::find_prints_within(claim, now(), 2);
  }

  std::int64_t age_min(const std::string& file) {
    std::int64_t m = shell::mtime_seconds(file).value_or(0);
    return (now_sec() - m) / 60;
  }

  // --- the lock protocol ---

  std::string owner_of(const std::string& path) {
    if (shell::path_is_link(path)) return shell::link_target(path).value_or("");
    return shell::first_line(path + "/owner").value_or("");
  }

  std::pair<std::string, std::string> split_path(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return {".", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
  }

  bool take(const std::string& path) {
    if (shell::path_exists(path) || shell::path_is_link(path)) return false;
    std::string claim = path + ".claim." + std::to_string(self);
    {
      shell::FileFd f{::open(claim.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666)};
      std::string text = my_token() + "\n";
      bool written = f.fd >= 0 && ::write(f.fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      if (!written) {
        ::unlink(claim.c_str());
        return false;
      }
    }
    if (::mkdir(path.c_str(), 0777) == 0) {
      std::string owner = path + "/owner";
      if (!shell::path_exists(owner)) {
        auto moved = shell::move_path(claim, owner, true, loc.utf8());
        tool(moved);
        if (moved.ok) return true;
      }
      if (!shell::path_exists(owner)) tool(shell::remove_tree(path, loc.utf8()));
    }
    ::unlink(claim.c_str());
    return false;
  }

  bool orphaned(const std::string& path) {
    std::int64_t clock = now_sec();
    if (!shell::path_exists(path) || shell::path_is_link(path)) return false;
    auto om = shell::mtime_seconds(path);
    if (!om) return false;
    auto [parent, base] = split_path(path);
    for (const auto& name : shell::glob_names(parent, base + ".claim.", "", loc.get())) {
      std::string claim = parent + "/" + name;
      std::string t = shell::first_line(claim).value_or("");
      if (abandoned(claim, t)) continue;
      if (!t.empty() && !holder_gone(t)) return false;
    }
    if (shell::path_is_dir(path) && shell::path_exists(path + "/owner")) {
      auto o = shell::first_line(path + "/owner");
      if (!o || !o->empty()) return false;
    }
    auto again = shell::mtime_seconds(path);
    if (!again || *again != *om) return false;
    std::int64_t age = clock - *om;
    return age >= 2 || age <= -60;
  }

  bool drop(const std::string& path) {
    if (shell::path_is_link(path)) return ::unlink(path.c_str()) == 0 || errno == ENOENT;
    std::string gone = path + ".gone." + std::to_string(self);
    if (!shell::move_path(path, gone, false, loc.utf8()).ok) return false;
    shell::remove_tree(gone, loc.utf8());  // its messages go to /dev/null in the script
    return true;
  }

  // drop PATH || rm -rf PATH
  bool drop_or_remove(const std::string& path) {
    if (drop(path)) return true;
    auto removed = shell::remove_tree(path, loc.utf8());
    tool(removed);
    return removed.ok;
  }

  bool break_lock(const std::string& owner) {
    std::string brk = lock_path + ".break";
    if (!take(brk)) {
      std::string b = owner_of(brk);
      if (!b.empty()) {
        if (holder_gone(b) && owner_of(brk) == b) drop(brk);
      } else if (orphaned(brk)) {
        drop(brk);
      }
      return false;
    }
    bool kept = false;
    if (!owner.empty()) {
      if (owner_of(lock_path) == owner) kept = !drop_or_remove(lock_path);
    } else if (orphaned(lock_path)) {
      kept = !drop_or_remove(lock_path);
    }
    drop(brk);
    return !kept;
  }

  bool interrupted() const { return opts.interrupted && opts.interrupted(); }

  // LEASEJUDGE_LEASE_TRACE=<file>: one line `<pid> lock|unlock <seconds.micros>` appended
  // as the lock is taken and released, so that a test (or a person) can prove that no
  // two holders were ever inside at once. LEASEJUDGE_LEASE_TRACE_HOLD_MS widens each
  // hold, for tests that kill holders inside the lock.
  void trace(std::string_view what) {
    auto path = shell::env_first(env(), {"LEASEJUDGE_LEASE_TRACE"});
    if (!path) return;
    Instant t = realtime_now();
    char stamp[48];
    std::snprintf(stamp, sizeof stamp, "%lld.%06d", static_cast<long long>(t.sec), t.nsec / 1000);
    std::string line = std::to_string(self) + " " + std::string(what) + " " + stamp + "\n";
    shell::FileFd f{::open(std::string(*path).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666)};
    if (f.fd >= 0 && ::write(f.fd, line.data(), line.size()) < 0) return;
    if (what == "lock") {
      auto hold = shell::env_first(env(), {"LEASEJUDGE_LEASE_TRACE_HOLD_MS"});
      std::int64_t ms = hold && std::all_of(hold->begin(), hold->end(), [](char c) { return c >= '0' && c <= '9'; })
                            ? tries_from(hold)
                            : 0;
      if (ms > 0 && ms < 60000) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
  }

  // lock(): true once held; false when it could not be taken. Throws Stop when
  // interrupted.
  bool lock() {
    lock_owner.clear();
    std::int64_t start = now_sec();
    std::int64_t limit = opts.lock_time_limit_s;
    // Another thread of this process holds it: wait for our turn within the same bound.
    if (has_turn) {  // held by this LeaseDir already
      lock_owner = my_token();
      return false;
    }
    while (true) {
      auto turn = process_turn().acquire(std::chrono::milliseconds(100));
      if (turn == ProcessTurn::Outcome::taken) break;
      if (turn == ProcessTurn::Outcome::own || now_sec() - start >= limit) {
        lock_owner = my_token();
        return false;
      }
      if (interrupted()) throw Stop{};
    }
    has_turn = true;
    my_token();
    std::int64_t max = opts.lock_tries;
    if (max < 0) {
      auto text = shell::env_first(env(), {"LEASEJUDGE_LEASE_LOCK_TRIES"});
      if (!text) text = shell::env_value(env(), "GSTACK_LEASE_LOCK_TRIES");
      max = tries_from(text);
    }
    std::int64_t tries = 0, gone = 0;
    while (true) {
      if (take(lock_path)) {
        trace("lock");
        return true;
      }
      lock_owner = owner_of(lock_path);
      if (!shell::path_exists(lock_path) && !shell::path_is_link(lock_path)) {
        // Released since take, or take cannot work here: never wait out the tries for a
        // lock nobody holds.
        if (++gone >= 10) break;
        continue;
      }
      gone = 0;
      ++tries;
      if (!lock_owner.empty()) {
        if (holder_gone(lock_owner) && break_lock(lock_owner)) continue;
      } else if (orphaned(lock_path)) {
        if (break_lock("")) continue;
      }
      if (tries >= max) break;
      if (now_sec() - start >= limit) break;
      if (interrupted()) {
        release_turn();
        throw Stop{};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(opts.lock_retry_ms));
      if (interrupted()) {
        release_turn();
        throw Stop{};
      }
    }
    release_turn();
    return false;
  }

  void release_turn() {
    if (!has_turn) return;
    has_turn = false;
    process_turn().release();
  }

  void unlock() {
    if (!has_turn) return;
    if (owner_of(lock_path) == my_token()) {
      trace("unlock");
      drop_or_remove(lock_path);
    }
    release_turn();
  }

  // Releases the lock when a verb leaves early.
  struct Held {
    Impl& impl;
    ~Held() {
      if (impl.has_turn) {
        try {
          impl.sink = nullptr;
          impl.unlock();
        } catch (...) {
          // unlock failing while unwinding leaves the lock for the breakers
        }
      }
    }
  };

  bool reclaim(const std::string& file, std::string_view record) {
    if (!lock()) return false;
    Held held{*this};
    bool same = shell::first_line(file).value_or("") == record;
    if (same) ::unlink(file.c_str());
    unlock();
    return same;
  }

  // --- the verbs ---

  int touch(std::string_view pid) {
    std::string name(pid);
    auto made = shell::make_dirs(dir, loc.utf8());
    if (!made.ok) {
      tool(made);
      return 2;
    }
    if (!lock()) {
      if (!lock_owner.empty() && !holder_gone(lock_owner)) {
        emit(LeaseStream::err, opts.program + ": the lease directory is locked by live process " +
                                   std::string(shell::token_pid(lock_owner)) + "; lease " + name + " not renewed");
      } else {
        emit(LeaseStream::err,
             opts.program + ": cannot take the lease directory lock " + lock_path + "; lease " + name + " not renewed");
      }
      return 3;
    }
    Held held{*this};
    std::string tmp = dir + "/." + name + "." + std::to_string(self);
    std::string id = shell::name_identity(name, env());
    bool written = false;
    {
      shell::FileFd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666)};
      if (f.fd < 0) {
        emit(LeaseStream::err, opts.program + ": " + tmp + ": " + shell::error_text(errno));
      } else {
        std::string text = id.empty() ? std::string() : id + "\n";
        written = text.empty() || ::write(f.fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        if (::close(f.fd) != 0) written = false;
        f.fd = -1;
      }
    }
    if (written) {
      auto moved = shell::move_path(tmp, dir + "/" + name, false, loc.utf8());
      tool(moved);
      written = moved.ok;
    }
    if (!written) {
      ::unlink(tmp.c_str());
      unlock();
      return 2;
    }
    prune();
    unlock();
    return 0;
  }

  void prune() {
    Instant t = now();
    {
      shell::DirStream d(dir.c_str());
      std::vector<std::string> old;
      if (d.d != nullptr) {
        while (dirent* e = ::readdir(d.d)) {
          std::string_view n = e->d_name;
          if (n == "." || n == ".." || n.substr(0, 5) == ".lock") continue;
          std::string full = dir + "/" + std::string(n);
          struct stat st {};
          if (::lstat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
          if (shell::modified_before(full, t, 120)) old.push_back(std::move(full));
        }
      }
      for (const auto& f : old) ::unlink(f.c_str());
    }
    for (const auto& name : shell::glob_names(dir, ".lock", ".claim.", loc.get())) {
      std::string claim = dir + "/" + name;
      if (!shell::path_is_file(claim)) continue;
      std::string t2 = shell::first_line(claim).value_or("");
      if (shell::modified_before(claim, now(), 2) && (abandoned(claim, t2) || holder_gone(t2))) ::unlink(claim.c_str());
    }
    for (const auto& name : shell::glob_names(dir, ".lock", ".gone.", loc.get()))
      shell::remove_tree(dir + "/" + name, loc.utf8());
  }

  std::vector<std::string> lease_files() {
    std::vector<std::string> out;
    for (auto& name : shell::glob_names(dir, "", "", loc.get()))
      if (shell::path_is_file(dir + "/" + name)) out.push_back(std::move(name));
    return out;
  }

  int list() {
    for (const auto& name : shell::glob_names(dir, "", "", loc.get())) {
      std::string file = dir + "/" + name;
      if (!shell::path_is_file(file)) continue;
      std::int64_t age = age_min(file);
      std::string record = shell::first_line(file).value_or("");
      emit(LeaseStream::out, name + " " + std::to_string(age) + "m " + lease_state_name(state(name, record, age)));
    }
    return 0;
  }

  std::string harness_name() const {
    if (!opts.shared_harness.empty()) return opts.shared_harness;
    auto v = shell::env_first(env(), {"LEASEJUDGE_SHARED_HARNESS"});
    return v ? std::string(*v) : std::string("capy-server");
  }

  bool shared_harness(std::string_view name) {
    std::string comm = shell::name_command(name, env(), loc);
    auto slash = comm.rfind('/');
    std::string_view base =
        slash == std::string::npos ? std::string_view(comm) : std::string_view(comm).substr(slash + 1);
    if (!base.empty() && base.front() == '-') base.remove_prefix(1);
    return base == harness_name();
  }

  int live(std::string_view exclude, bool count_shared) {
    std::string ancestry = " ";
    std::string p(exclude);
    for (int hops = 0; !p.empty() && hops < 64; ++hops) {
      if (!std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }) || p == "0" || p == "1") break;
      ancestry += p + " ";
      p = shell::name_parent(p, env());
    }
    int found = 1;
    for (const auto& name : shell::glob_names(dir, "", "", loc.get())) {
      std::string file = dir + "/" + name;
      if (!shell::path_is_file(file)) continue;
      std::int64_t age = age_min(file);
      if (ancestry.find(" " + name + " ") != std::string::npos) {
        if (!(count_shared && age < 120 && shared_harness(name))) continue;
      }
      std::string record = shell::first_line(file).value_or("");
      LeaseState s = state(name, record, age);
      if (s == LeaseState::dead) continue;
      if (s == LeaseState::stale && reclaim(file, record)) {
        std::string comm = shell::name_command(name, env(), loc);
        std::string now_id = shell::name_identity(name, env());
        emit(LeaseStream::err, opts.program + ": reclaimed stale lease " + name + " (" + std::to_string(age) +
                                   "m; recorded '" + record + "', pid " + name + " is now " + comm + " '" + now_id +
                                   "')");
        continue;
      }
      std::string comm = shell::name_command(name, env(), loc);
      auto slash = comm.rfind('/');
      if (slash != std::string::npos) comm.erase(0, slash + 1);
      emit(LeaseStream::out, name + " " + std::to_string(age_min(file)) + "m " + comm);
      found = 0;
    }
    return found;
  }

  template <typename Body>
  Result<int> run(const LeaseLineSink& s, Body&& body) {
    sink = &s;
    try {
      int code = body();
      sink = nullptr;
      return code;
    } catch (const Stop&) {
      sink = nullptr;
      if (has_turn) unlock();
      return Error{Errc::user, "stopped by the caller"};
    }
  }
};

// --- LeaseDir ----------------------------------------------------------------------

LeaseDir::LeaseDir(std::string path, LeaseDirOptions opts)
    : impl_(std::make_unique<Impl>(std::move(path), std::move(opts))) {}
LeaseDir::~LeaseDir() {
  if (impl_ && impl_->has_turn) {
    impl_->sink = nullptr;
    impl_->unlock();
  }
}

const std::string& LeaseDir::path() const noexcept {
  return impl_->dir;
}

Result<int> LeaseDir::touch(std::string_view pid, const LeaseLineSink& sink) {
  return impl_->run(sink, [&] { return impl_->touch(pid); });
}

Result<int> LeaseDir::live(std::string_view exclude_ancestry_of, bool count_shared_harness, const LeaseLineSink& sink) {
  return impl_->run(sink, [&] { return impl_->live(exclude_ancestry_of, count_shared_harness); });
}

Result<int> LeaseDir::list(const LeaseLineSink& sink) {
  return impl_->run(sink, [&] { return impl_->list(); });
}

std::vector<LeaseEntry> LeaseDir::entries() {
  std::vector<LeaseEntry> out;
  for (auto& name : impl_->lease_files()) {
    std::string file = impl_->dir + "/" + name;
    LeaseEntry e;
    e.age_min = impl_->age_min(file);
    e.record = shell::first_line(file).value_or("");
    e.state = impl_->state(name, e.record, e.age_min);
    e.pid = std::move(name);
    out.push_back(std::move(e));
  }
  return out;
}

LeaseState LeaseDir::state_of(std::string_view pid, std::string_view record, std::int64_t age_min) {
  return impl_->state(pid, record, age_min);
}

Result<bool> LeaseDir::lock() {
  impl_->sink = nullptr;
  try {
    return impl_->lock();
  } catch (const Stop&) {
    return Error{Errc::user, "interrupted while waiting for the lease directory lock"};
  }
}

const std::string& LeaseDir::lock_owner() const noexcept {
  return impl_->lock_owner;
}

void LeaseDir::unlock() {
  impl_->sink = nullptr;
  impl_->unlock();
}

const std::string& LeaseDir::token() {
  return impl_->my_token();
}

// --- the directory of a checkout -----------------------------------------------------

Result<std::string> checkout_git_dir(std::string_view root, const LeaseDirOptions& opts) {
  auto run = shell::run_tool({"git", "-C", std::string(root), "rev-parse", "--absolute-git-dir"}, opts.environment);
  if (run.status != 0) return Error{Errc::not_found, std::string(root) + " is not a git checkout"};
  return shell::substitution(std::move(run.out));
}

Result<std::string> lease_dir_of(std::string_view root, const LeaseDirOptions& opts) {
  auto git_dir = checkout_git_dir(root, opts);
  if (!git_dir) return git_dir.error();
  if (auto v = shell::env_first(opts.environment, {"LEASEJUDGE_LEASE_DIR", "GSTACK_LEASE_DIR"})) return std::string(*v);
  return *git_dir + "/gstack-leases";
}

}  // namespace leasejudge
