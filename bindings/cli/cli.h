/* The leasejudge command's verbs, as the executable and the bash builtin run them.
 *
 * One table of verbs (verbs.cpp) serves both: the same options, messages, output and
 * exit codes, whichever way a verb is called. What differs is only what the host
 * says of itself: where output goes, whose process "this shell" is (the builtin's $$,
 * the command's parent), the environment children see, and when to stop a wait.
 * Written over the C ABI (leasejudge.h) only. */
#ifndef LEASEJUDGE_CLI_H
#define LEASEJUDGE_CLI_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lj_cli_host_t {
  FILE *out; /* the verb's output */
  FILE *err; /* messages, summaries, progress */
  /* The process a verb speaks for by default: its leases, locks and owner token. */
  int32_t self_pid;
  /* The environment children (gcloud) and the lease directory read; NULL-terminated. */
  const char *const *environment;
  /* Non-zero once a wait or a sweep should stop (an interrupt). May be NULL. */
  int (*interrupted)(void *payload);
  void *payload;
  int err_is_tty; /* progress lines go to err only when it is a terminal */
  /* Where the bench verb finds bench/run and the build it measures (NULL: no bench). */
  const char *source_dir;
  const char *build_dir;
  /* Non-zero when a verb may fork, wait for and signal a child of its own (lock
   * run): the command's own process. A shell's builtin leaves it 0: the shell reaps
   * and signals its children itself. */
  int runs_children;
  /* Non-zero once per hangup (SIGHUP) since the last call: a service opens its store
   * again. The first call arms it: before, a hangup ends the command as it always
   * did. NULL where verbs do not run as services (the builtin): step watch refuses. */
  int (*hangup)(void *payload);
} lj_cli_host_t;

/* Run the verb named by argv[0..argc) (the words after "leasejudge"); its exit code
 * (leasejudge(1) lists them). Writes only to host->out and host->err. */
int lj_cli_run(const lj_cli_host_t *host, int argc, const char *const *argv);

#ifdef __cplusplus
}
#endif

#endif
