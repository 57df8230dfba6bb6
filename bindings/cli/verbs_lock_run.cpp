// lock run: a command run under a lock (flock(1)'s `flock FILE CMD`, etcdctl's
// `lock NAME CMD`): wait for the lock, run the command with its fencing token, keep
// the lock renewed while it runs, release it when it ends; stop the command when
// the lock is lost.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "command.hpp"

namespace leasejudge::cli {

namespace {

constexpr const char* token_variable = "LEASEJUDGE_FENCING_TOKEN";
constexpr std::int64_t default_grace_ms = 10000;
constexpr auto poll_every = std::chrono::milliseconds(20);

// What the heartbeat said when it lost the lock (its thread writes it).
struct Lost {
  std::mutex mu;
  std::string why;
};

void on_lost(int code, const char* message, size_t len, void* payload) {
  auto* lost = static_cast<Lost*>(payload);
  std::lock_guard<std::mutex> g(lost->mu);
  lost->why = fmt::format("{}: {}", lj_strerror(code), std::string_view(message, len));
}

// The child's pid while it runs, for the signal handler that passes SIGTERM, SIGINT
// and SIGHUP on to it; a signal that comes before the child is kept for it.
volatile sig_atomic_t child_pid = 0;
volatile sig_atomic_t pending_signal = 0;

void pass_on(int sig) {
  pid_t pid = child_pid;
  if (pid > 0)
    ::kill(pid, sig);
  else
    pending_signal = sig;
}

// The handlers of SIGTERM, SIGINT and SIGHUP while the child runs, the ones before
// put back after.
class PassSignals {
 public:
  PassSignals() {
    struct sigaction sa {};
    sa.sa_handler = pass_on;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (std::size_t i = 0; i < 3; ++i) sigaction(signals_[i], &sa, &before_[i]);
  }
  ~PassSignals() {
    for (std::size_t i = 0; i < 3; ++i) sigaction(signals_[i], &before_[i], nullptr);
  }
  PassSignals(const PassSignals&) = delete;
  PassSignals& operator=(const PassSignals&) = delete;

 private:
  const int signals_[3] = {SIGTERM, SIGINT, SIGHUP};
  struct sigaction before_[3]{};
};

// The child's environment: the host's with LEASEJUDGE_FENCING_TOKEN set to token.
std::vector<std::string> child_environment(const Context& cx, std::uint64_t token) {
  std::vector<std::string> env;
  const std::string prefix = fmt::format("{}=", token_variable);
  for (const char* const* e = cx.host().environment; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env.emplace_back(*e);
  env.push_back(fmt::format("{}{}", prefix, token));
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// Start argv with env. The child dies with this process (SIGKILL when it is gone:
// the lock is then breakable at once, so the command must not go on without it).
// The pid, or -1 with errno_out set (the child's exec error included).
pid_t spawn(std::vector<std::string> argv, std::vector<std::string> env, int& errno_out) {
  std::vector<char*> av = pointers(argv), ev = pointers(env);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    errno_out = errno;
    return -1;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    errno_out = errno;
    ::close(report[0]);
    ::close(report[1]);
    return -1;
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(av[0], av.data(), ev.data());
    int e = errno;
    ssize_t w = ::write(report[1], &e, sizeof e);
    (void)w;
    ::_exit(127);
  }
  ::close(report[1]);
  int e = 0;
  ssize_t got;
  do got = ::read(report[0], &e, sizeof e);
  while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof e)) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    errno_out = e;
    return -1;
  }
  return pid;
}

// The exit status of a wait status: the child's code, or 128 + its signal.
int status_exit(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return exit_failed;
}

// Wait for the child; when the lease is lost, SIGTERM it and SIGKILL it after
// grace_ms. Its wait status; lost says whether the lease was lost.
int supervise(const Context& cx, pid_t pid, lj_lock_heartbeat_t* beat, Lost& lost_why, std::int64_t grace_ms,
              bool& lost) {
  using clock = std::chrono::steady_clock;
  clock::time_point kill_at{};
  bool killed = false;
  lost = false;
  while (true) {
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
    if (!lost && lj_lock_heartbeat_lost(beat) != 0) {
      lost = true;
      std::string why;
      {
        std::lock_guard<std::mutex> g(lost_why.mu);
        why = lost_why.why.empty() ? "the lease ended while a renewal was still unanswered" : lost_why.why;
      }
      cx.note(fmt::format("lost the lock ({}): stopping the command (SIGTERM, SIGKILL after {} ms)", why, grace_ms));
      ::kill(pid, SIGTERM);
      kill_at = clock::now() + std::chrono::milliseconds(grace_ms);
    }
    if (lost && !killed && clock::now() >= kill_at) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(poll_every);
  }
}

struct RunOptions {
  std::string key;
  std::vector<std::string> command;
  std::int64_t wait_ms = 0, lease_ms = 0, grace_ms = default_grace_ms;
  std::string purpose;
  int conflict_exit = exit_wait_ended;
};

int read_run_settings(const Context& cx, const Args& args, RunOptions& o);

int read_run_options(const Context& cx, const Args& args, RunOptions& o) {
  if (auto line = args.value("--command")) {
    // flock(1)'s -c: one command line, run by the shell.
    if (args.operands.size() != 1)
      return cx.usage("lock run KEY -c CMD takes KEY only: the command is CMD, run by sh -c");
    o.key = args.operands[0];
    o.command = {"/bin/sh", "-c", *line};
    return read_run_settings(cx, args, o);
  }
  if (args.operands.size() < 2) return cx.usage("KEY and a command are required: lock run KEY -- CMD [ARGS...]");
  o.key = args.operands[0];
  o.command.assign(args.operands.begin() + 1, args.operands.end());
  if (o.command[0].empty()) return cx.usage("the command is empty");
  return read_run_settings(cx, args, o);
}

int read_run_settings(const Context& cx, const Args& args, RunOptions& o) {
  if (int rc = wait_ms_of(cx, args, o.wait_ms); rc != exit_ok) return rc;
  if (int rc = lease_ms_of(cx, args, o.lease_ms); rc != exit_ok) return rc;
  if (auto grace = args.value("--grace")) {
    auto ms = duration_ms_arg(*grace);
    if (!ms || *ms > 86400000) return cx.usage(fmt::format("--grace {} is no duration of up to a day", *grace));
    o.grace_ms = *ms;
  }
  if (int rc = conflict_exit_of(cx, args, o.conflict_exit); rc != exit_ok) return rc;
  o.purpose = args.value("--purpose").value_or(fmt::format("leasejudge lock run {} (pid {})", o.key, ::getpid()));
  return exit_ok;
}

// The lock, waited for; exit_ok with lock.p set, or the exit to end with.
int take(const Context& cx, const RunOptions& o, lj_store_t* store, LockHandle& lock) {
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  holder.lease_ms = o.lease_ms;
  holder.pid = 0;  // this process: it lives as long as the command runs
  LockWaitCalls wait(cx, o.wait_ms);
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  opts.gcloud_env = const_cast<char* const*>(cx.host().environment);
  lj_lock_acquisition_t a{};
  lj_error_t* err = nullptr;
  int rc = lj_lock_acquire_wait(&lock.p, &a, store, o.key.data(), o.key.size(), o.purpose.data(), o.purpose.size(),
                                &holder, &wait.options, &opts, &err);
  if (rc == LJ_EUSER) {
    lj_error_destroy(err);
    cx.note(fmt::format("interrupted while waiting for {}: the command was not run", o.key));
    return exit_interrupted;
  }
  if (rc != LJ_OK) return cx.failed(fmt::format("acquiring {}", o.key), rc, err);
  std::string why = a.has_verdict && a.verdict.why != nullptr ? std::string(a.verdict.why, a.verdict.why_len) : "";
  const int outcome = a.outcome;
  lj_lock_acquisition_clear(&a);
  if (outcome == LJ_ACQUIRE_ACQUIRED) return exit_ok;
  cx.note(fmt::format("the wait of {} for {} ended without the lock ({}): the command was not run",
                      duration_text(o.wait_ms), terminal_text(o.key),
                      why.empty() ? "another writer won the race" : terminal_text(why)));
  return o.conflict_exit;
}

int run_lock_run(Context& cx, const Args& args) {
  if (cx.host().runs_children == 0)
    return cx.usage("lock run runs a command of its own: use the leasejudge command, not the shell builtin");
  RunOptions o;
  if (int rc = read_run_options(cx, args, o); rc != exit_ok) return rc;
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  LockHandle lock;
  if (int rc = take(cx, o, store.p, lock); rc != exit_ok) {
    if (cx.json && rc != exit_interrupted)
      cx.out(fmt::format(R"({{"key":{},"outcome":"not-run","fencing_token":null,"exit_code":{}}})", quote(o.key), rc));
    return rc;
  }
  const std::uint64_t token = lj_lock_revision(lock.p);
  if (cx.interrupted()) {  // between the wait and the command: it never runs
    lj_lock_release(lock.p, nullptr);
    cx.note(fmt::format("interrupted once {} was taken: released, the command was not run", o.key));
    return exit_interrupted;
  }

  Lost lost_why;
  lj_lock_heartbeat_t* beat = nullptr;
  lj_error_t* err = nullptr;
  if (int rc = lj_lock_heartbeat_start(&beat, lock.p, on_lost, &lost_why, &err); rc != LJ_OK) {
    int code = cx.failed(fmt::format("renewing {}", o.key), rc, err);
    lj_lock_release(lock.p, nullptr);
    return code;
  }
  int status = -1, spawn_errno = 0;
  bool lost = false;
  {
    pending_signal = 0;
    PassSignals passing;
    const pid_t pid = spawn(o.command, child_environment(cx, lj_lock_revision(lock.p)), spawn_errno);
    if (pid > 0) {
      child_pid = pid;
      if (pending_signal != 0) ::kill(pid, pending_signal);  // came while the child started
      status = supervise(cx, pid, beat, lost_why, o.grace_ms, lost);
      child_pid = 0;
    }
  }
  lj_lock_heartbeat_destroy(beat);
  // A lost lock is released too while its body is still ours (a store that did not
  // answer in time): the command has ended, nothing of it holds the lock any more.
  if (int rc = lj_lock_release(lock.p, &err); rc != LJ_OK) {
    if (lost)
      lj_error_destroy(err);
    else
      cx.failed(fmt::format("releasing {}", o.key), rc, err);
  }
  int code = lost ? exit_lease_lost : status_exit(status);
  if (spawn_errno != 0) {
    cx.note(fmt::format("{}: {}", terminal_text(o.command[0]), std::strerror(spawn_errno)));
    code = spawn_errno == ENOENT ? 127 : 126;
  } else if (status == -1) {
    cx.note(fmt::format("waiting for {}: {}", terminal_text(o.command[0]), std::strerror(errno)));
    code = exit_failed;
  }
  // --json: one line once the command has ended, after its own output.
  if (cx.json)
    cx.out(fmt::format(R"({{"key":{},"outcome":"{}","fencing_token":{},"exit_code":{}}})", quote(o.key),
                       spawn_errno != 0 ? "not-run" : lost ? "lost" : "ran", token, code));
  return code;
}

}  // namespace

std::vector<Verb> lock_run_verbs() {
  return {
      {"lock run", "KEY -- CMD [ARGS...] | KEY -c CMD", "run a command while holding the lock at KEY",
       [] {
         std::vector<Option> o = {
             {"--command", "CMD", "-c CMD: run the command line CMD by sh -c, as flock -c does"},
             {"--wait", "D", "while the lock is held, try again until D has passed (default: one try)"},
             {"--lease", "D", "the lease: 90, 90s, 500ms, 5m, 2h, up to a day (default 10m)"},
             {"--grace", "D", "once the lock is lost, SIGKILL the command D after SIGTERM (default 10s)"},
             {"--purpose", "TEXT", "what the lock is for (in its body)"},
             conflict_exit_option,
         };
         o.insert(o.end(), store_options.begin(), store_options.end());
         return o;
       }(),
       run_lock_run,
       "Takes the lock for this process (waiting as lock acquire --wait does), runs CMD with\n"
       "LEASEJUDGE_FENCING_TOKEN set to the lock's revision, renews the lease every third of\n"
       "it (a failed renewal tried again while the lease runs) and releases the lock when CMD\n"
       "ends. With -c CMD (--command CMD), as flock(1)'s -c, CMD is one command line run by\n"
       "/bin/sh -c. SIGTERM, SIGINT and SIGHUP are passed on to CMD. CMD dies with this\n"
       "process (SIGKILL): a lock whose holder is gone may be broken at once.\n"
       "Exit: CMD's status (128+N when signal N ended it); 8 the wait ended without the lock\n"
       "(CMD never ran); 9 the lock was lost while CMD ran (CMD got SIGTERM, SIGKILL after\n"
       "--grace); 126/127 CMD could not be run; 130 interrupted while waiting; 1-7 as the\n"
       "other verbs. Not in the bash builtin (bash reaps its own children): the command only."},
  };
}

}  // namespace leasejudge::cli
