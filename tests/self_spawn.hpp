// Test fixture: this test program run again as a child process with one hidden test
// case (doctest's --no-skip --test-case), its environment plus more, and pipe ends
// placed at given descriptors. Private to the tests.
#pragma once

#include <poll.h>
#include <spawn.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace leasejudge::test {

// Spawn the child: `env` added to this environment; each (fd, at) of `place` put at
// descriptor `at` in the child; each of `close_in_child` closed there. Its pid, or 0.
inline pid_t spawn_self(const std::string& test_case, const std::vector<std::string>& env,
                        const std::vector<std::pair<int, int>>& place, const std::vector<int>& close_in_child) {
  char self_path[4096];
  ssize_t n = ::readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  if (n <= 0) return 0;
  self_path[n] = '\0';
  std::vector<std::string> args = {self_path, "--no-skip", "--test-case=" + test_case, "--no-version",
                                   "--minimal"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) env_text.emplace_back(*e);
  env_text.insert(env_text.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (auto [fd, at] : place) posix_spawn_file_actions_adddup2(&fa, fd, at);
  for (int fd : close_in_child) posix_spawn_file_actions_addclose(&fa, fd);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, self_path, &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : 0;
}

// The next line a child writes on fd, without its end ("" after `patience`, or when
// the child closes it).
inline std::string read_line(int fd, std::chrono::seconds patience) {
  std::string s;
  auto deadline = std::chrono::steady_clock::now() + patience;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char c;
    if (::read(fd, &c, 1) != 1) return s;
    if (c == '\n') return s;
    s.push_back(c);
  }
  return s;
}

}  // namespace leasejudge::test
