// Test fixture: a lab of network namespaces (tests/nemesis.sh) for a C++ test, and
// the faults it throws. The lab belongs to this process (its pid names it): made
// when the Lab is constructed, taken down by its destructor, and swept away by the
// next lab made on the machine when this process dies without it. The constructing
// thread joins the lab's control namespace (ctl), from which every member and client
// is reached on links no fault cuts; threads it starts after inherit it, so the lab
// must be made before any other thread runs (Lab says so when it cannot be).
// Servers and clients run in their nodes' namespaces through launch(node).
// Private to the tests.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "server_process.hpp"

namespace leasejudge::test {

inline std::string nemesis_script() {
  return std::string(LEASEJUDGE_SOURCE_DIR) + "/tests/nemesis.sh";
}

// Run nemesis.sh with args; its exit status (-1: it could not run), its stdout and
// stderr together in out.
inline int run_nemesis(const std::vector<std::string>& args, std::string& out) {
  std::vector<std::string> words = {"/bin/bash", nemesis_script()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int pipe_fd[2];
  if (::pipe2(pipe_fd, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pipe_fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pipe_fd[1], 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(pipe_fd[1]);
  out.clear();
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipe_fd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fd[0]);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline int thread_count() {
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

class Lab {
 public:
  Lab(int members, int clients) : id_(std::to_string(::getpid())) {
    if (::geteuid() != 0) {
      error_ = "network namespaces need root";
      return;
    }
    if (thread_count() != 1) {
      error_ = "the lab must be made before any other thread of the test runs (they would stay outside it)";
      return;
    }
    if (run_nemesis({"up", id_, std::to_string(members), std::to_string(clients)}, error_) != 0) return;
    made_ = true;
    const std::string ctl = "/run/netns/lj" + id_ + "-ctl";
    int fd = ::open(ctl.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
      error_ = "cannot join " + ctl + ": " + std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return;
    }
    ::close(fd);
    ok_ = true;
    error_.clear();
  }
  ~Lab() {
    if (!made_) return;
    std::string out;
    (void)run_nemesis({"down", id_}, out);
  }
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  bool ok() const { return ok_; }
  // What the last call to nemesis.sh said when it failed (or why the lab is not ok).
  const std::string& error() const { return error_; }
  const std::string& id() const { return id_; }

  // The words that run a command in node's namespace (the command's pid is the
  // spawned process's: nemesis.sh and ip netns exec exec it).
  std::vector<std::string> launch(const std::string& node) const {
    return {"/bin/bash", nemesis_script(), "run", id_, node, "--"};
  }
  // The address nemesis.sh gives node: members m<i> 192.0.2.(1+i), clients c<i>
  // 192.0.2.(101+i).
  static std::string address(const std::string& node) {
    const int i = std::atoi(node.c_str() + 1);
    return "192.0.2." + std::to_string(node[0] == 'm' ? 1 + i : 101 + i);
  }
  ServerPlace place(const std::string& node) const { return ServerPlace{launch(node), address(node)}; }

  // Join node's namespace with the calling thread only (a thread that plays a client
  // of its own); false when it cannot.
  bool enter(const std::string& node) {
    const std::string path = "/run/netns/lj" + id_ + "-" + node;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const bool joined = fd >= 0 && ::setns(fd, CLONE_NEWNET) == 0;
    if (fd >= 0) ::close(fd);
    return joined;
  }

  // The faults (nemesis.sh says what each does); each true when it is in place.
  bool isolate(const std::string& node) { return nemesis({"isolate", id_, node}); }
  bool split(const std::string& side) { return nemesis({"split", id_, side}); }
  bool cut(const std::string& from, const std::string& to) { return nemesis({"cut", id_, from, to}); }
  bool flap(const std::string& node, int ms) { return nemesis({"flap", id_, node, std::to_string(ms)}); }
  bool lose(const std::string& a, const std::string& b, int percent) {
    return nemesis({"lose", id_, a, b, std::to_string(percent)});
  }
  bool heal() { return nemesis({"heal", id_}); }
  // Every fault a failed test case may have left in place removed (none: nothing done).
  void clear() {
    std::string out;
    if (ok_) (void)run_nemesis({"heal", id_}, out);
  }

 private:
  bool nemesis(const std::vector<std::string>& args) {
    std::string out;
    if (run_nemesis(args, out) == 0) return true;
    error_ = out;
    return false;
  }

  std::string id_;
  std::string error_;
  bool made_ = false, ok_ = false;
};

}  // namespace leasejudge::test
