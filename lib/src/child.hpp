// Running a program as evidence: gcloud for an execution's state, ps for a
// process's start where /proc cannot tell, git for a checkout's git dir. No shell:
// the program is found on PATH and given its arguments as they are. Private to lib/.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "leasejudge/error.hpp"

namespace leasejudge {

struct ChildRun {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH when it has no '/'
  // Variables set for the child, replacing those of the base environment.
  std::vector<std::pair<std::string, std::string>> env;
  // The base environment ("NAME=value" strings, NULL-terminated), PATH included;
  // nullptr means the process's environ. A bash builtin passes the shell's exported
  // variables here, since environ is only the shell's initial environment.
  char* const* base_env = nullptr;
  std::chrono::milliseconds timeout{60000};
  std::size_t max_output = 16u << 20;  // bytes kept of each stream; the rest is read and dropped
};

struct ChildResult {
  int exit_code = -1;    // the exit status, or -1 when killed by a signal
  int signal = 0;        // the signal that ended it, 0 when it exited
  std::string out;       // standard output
  std::string err;       // standard error
};

// Run the program to its end. SIGCHLD is blocked in the calling thread from before
// the spawn until the child is reaped, so a host's SIGCHLD handler (bash's waits for
// any child) cannot reap it first and turn its status into a guess. Errc::not_found when it is not on PATH; Errc::timeout
// when it outlives the timeout (it is killed, with its process group); Errc::io when
// it cannot be started or its output cannot be read.
Result<ChildResult> run_child(const ChildRun& run);

}  // namespace leasejudge
