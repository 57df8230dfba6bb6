// Test fixture: what every server a test starts by hand needs (nats-server, etcd):
// the executable looked up by name, a free 127.0.0.1 port, a temporary directory, the
// process spawned with its output in a log file (here, or in a network namespace of
// its own: ServerPlace), and ended by a signal and reaped. Private to the tests.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace leasejudge::test {

// The executable `name`: the path in environment variable `env` when it is one, else
// the first in PATH and then in `more_dirs` (":"-separated); "" when there is none.
inline std::string find_executable(const char* env, const std::string& name, const std::string& more_dirs) {
  auto executable = [](const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; };
  if (const char* given = std::getenv(env); given != nullptr && executable(given)) return given;
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":" + more_dirs;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
    start = end + 1;
  }
  return {};
}

// A port nobody listens on now (the kernel's pick for an ephemeral bind).
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

inline bool port_accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// Whether address:port accepts a TCP connection within 500 ms (an address behind a cut
// link answers nothing: a blocking connect would wait minutes).
inline bool port_accepts(const std::string& address, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) return false;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof error;
    ok = ::poll(&p, 1, 500) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
  }
  ::close(fd);
  return ok;
}

// Where a server runs: here, on 127.0.0.1 and free ports (the default); or in a
// network namespace of its own (tests/nemesis.sh), `launch` put before its command
// line to run it there, bound to `address` on the server's usual ports.
struct ServerPlace {
  std::vector<std::string> launch;
  std::string address = "127.0.0.1";
  bool here() const { return launch.empty(); }
};

// args run at place: the place's launch words first.
inline std::vector<std::string> placed(const ServerPlace& place, std::vector<std::string> args) {
  args.insert(args.begin(), place.launch.begin(), place.launch.end());
  return args;
}

inline std::string make_temp_dir(const char* what) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / (std::string("leasejudge-") + what + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) return {};
  return tmpl;
}

// Spawn args[0] with args, stdin from /dev/null, stdout and stderr appended to log.
// Its pid, or 0.
inline pid_t spawn_logged(std::vector<std::string> args, const std::string& log) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : 0;
}

// Send sig to pid and reap it; SIGKILL when it has not ended within `patience`.
inline void end_process(pid_t pid, int sig, std::chrono::milliseconds patience) {
  if (pid <= 0) return;
  ::kill(pid, sig);
  auto deadline = std::chrono::steady_clock::now() + patience;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// SIGSTOP pid and wait (up to 2 s) until every thread of it is stopped: the signal
// stops the threads on other CPUs a moment later, and one of them could still answer.
inline bool stop_process(pid_t pid) {
  if (pid <= 0 || ::kill(pid, SIGSTOP) != 0) return false;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream in(t.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto close = stat.rfind(')');
      if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'T') all = false;
    }
    if (all && !ec) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace leasejudge::test
