/* A pid that names no process now, for the C tests of the ABI: a child forked, exited
 * and reaped (the kernel hands its pid out again only after the rest of its range).
 * Include after the system headers, with _POSIX_C_SOURCE set. */
#ifndef LEASEJUDGE_TESTS_DEAD_PID_H
#define LEASEJUDGE_TESTS_DEAD_PID_H

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static inline pid_t dead_pid(void) {
  int status;
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, &status, 0);
  return pid;
}

#endif
