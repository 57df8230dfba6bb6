#include "child.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace leasejudge {
namespace {

// The value of name in env, or nullptr.
const char* env_value(char* const* env, std::string_view name) {
  for (char* const* e = env; *e != nullptr; ++e) {
    std::string_view kv = *e;
    if (kv.size() > name.size() && kv.substr(0, name.size()) == name && kv[name.size()] == '=')
      return *e + name.size() + 1;
  }
  return nullptr;
}

// The path of argv0 on PATH, or empty when there is none that is executable.
std::string find_on_path(const std::string& argv0, const char* path) {
  if (argv0.find('/') != std::string::npos) return access(argv0.c_str(), X_OK) == 0 ? argv0 : "";
  std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
  while (true) {
    auto colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    std::string candidate = dir.empty() ? argv0 : fmt::format("{}/{}", dir, argv0);
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos) return "";
    rest.remove_prefix(colon + 1);
  }
}

struct Fd {
  int fd = -1;
  ~Fd() { close_now(); }
  void close_now() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// The child's environment (base with run.env applied) and argv, as execve takes them.
struct ChildArgs {
  std::vector<std::string> env_store, args_store;
  std::vector<char*> envp, argv;
  explicit ChildArgs(const ChildRun& run, char* const* base) {
    for (char* const* e = base; *e != nullptr; ++e) {
      std::string_view kv = *e;
      bool replaced = false;
      for (const auto& [k, v] : run.env)
        if (kv.size() > k.size() && kv.substr(0, k.size()) == k && kv[k.size()] == '=') replaced = true;
      if (!replaced) env_store.emplace_back(kv);
    }
    for (const auto& [k, v] : run.env) env_store.push_back(k + "=" + v);
    for (auto& s : env_store) envp.push_back(s.data());
    envp.push_back(nullptr);
    args_store.assign(run.argv.begin(), run.argv.end());
    for (auto& s : args_store) argv.push_back(s.data());
    argv.push_back(nullptr);
  }
};

// Start program with stdin from /dev/null and stdout, stderr to out_w, err_w, in a
// process group of its own (so a timeout ends whatever it started too), with no
// signal blocked and SIGPIPE, SIGCHLD at their defaults. The caller blocks SIGCHLD.
Result<pid_t> spawn_child(const std::string& program, ChildArgs& args, int out_w, int err_w) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w, 1);
  posix_spawn_file_actions_adddup2(&actions, err_w, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t deflt;
  sigemptyset(&deflt);
  sigaddset(&deflt, SIGPIPE);
  sigaddset(&deflt, SIGCHLD);
  posix_spawnattr_setsigdefault(&attr, &deflt);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, args.argv.data(), args.envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Error{Errc::io, fmt::format("cannot start {}: {}", program, std::strerror(rc))};
  return pid;
}

// Read the child's stdout and stderr until both end or the deadline passes, each kept
// up to max_output bytes. False when the deadline passed first.
bool collect_output(Fd& out_r, Fd& err_r, ChildResult& result, std::size_t max_output,
                    std::chrono::steady_clock::time_point deadline) {
  char buf[65536];
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[2];
    nfds_t n = 0;
    if (out_r.fd >= 0) fds[n++] = {out_r.fd, POLLIN, 0};
    if (err_r.fd >= 0) fds[n++] = {err_r.fd, POLLIN, 0};
    int ready = poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      Fd& src = fds[i].fd == out_r.fd ? out_r : err_r;
      std::string& dst = fds[i].fd == out_r.fd ? result.out : result.err;
      ssize_t got = ::read(src.fd, buf, sizeof buf);
      if (got > 0) {
        std::size_t keep =
            std::min<std::size_t>(static_cast<std::size_t>(got), max_output - std::min(max_output, dst.size()));
        dst.append(buf, keep);
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        src.close_now();
      }
    }
  }
  return true;
}

}  // namespace

Result<ChildResult> run_child(const ChildRun& run) {
  if (run.argv.empty()) return Error{Errc::invalid_argument, "no program to run"};
  char* const* base = run.base_env != nullptr ? run.base_env : environ;
  const char* path = env_value(base, "PATH");
  for (const auto& [k, v] : run.env)
    if (k == "PATH") path = v.c_str();
  std::string program = find_on_path(run.argv[0], path);
  if (program.empty()) return Error{Errc::not_found, fmt::format("{} is not on PATH", run.argv[0])};
  ChildArgs args(run, base);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Error{Errc::io, fmt::format("pipe: {}", std::strerror(errno))};
  Fd out_r{out_pipe[0]}, out_w{out_pipe[1]};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return Error{Errc::io, fmt::format("pipe: {}", std::strerror(errno))};
  Fd err_r{err_pipe[0]}, err_w{err_pipe[1]};
  // Keep SIGCHLD from a host handler that reaps any child until ours is reaped.
  sigset_t chld, saved_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &chld, &saved_mask);
  struct MaskRestore {
    sigset_t* mask;
    ~MaskRestore() { pthread_sigmask(SIG_SETMASK, mask, nullptr); }
  } restore{&saved_mask};
  auto spawned = spawn_child(program, args, out_w.fd, err_w.fd);
  if (!spawned) return spawned.error();
  pid_t pid = *spawned;
  out_w.close_now();
  err_w.close_now();

  ChildResult result;
  bool timed_out =
      !collect_output(out_r, err_r, result, run.max_output, std::chrono::steady_clock::now() + run.timeout);
  if (timed_out) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited != pid) {
    return Error{Errc::io, fmt::format("{} was reaped by someone else: its exit status is unknown", run.argv[0])};
  }
  if (timed_out) {
    return Error{Errc::timeout,
                 fmt::format("{} did not finish within {} ms and was killed", run.argv[0], run.timeout.count())};
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace leasejudge
