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

/* The exit codes of every verb, the command's and the builtin's alike: one meaning
 * each, whichever verb meets the case (leasejudge(1), EXIT STATUS). A malformed input
 * line and a file that cannot be read are FAILED, a store that fails (unreachable,
 * missing, refusing a value) is STORE, an option or operand refused is USAGE. */
enum {
  LJ_CLI_EXIT_OK = 0,            /* done (lock judge: break) */
  LJ_CLI_EXIT_NO = 1,            /* the answer is no: held, none, refused, not found */
  LJ_CLI_EXIT_USAGE = 2,         /* a usage error: an option, operand or value refused */
  LJ_CLI_EXIT_UNKNOWN = 3,       /* the evidence could not be gathered (lock judge: unknown) */
  LJ_CLI_EXIT_STORE = 4,         /* the store failed: unreachable, missing, refused */
  LJ_CLI_EXIT_CHANGED = 5,       /* a write lost its race: the key moved since it was read */
  LJ_CLI_EXIT_UNCERTAIN = 6,     /* a write's outcome is unknown: it may have landed */
  LJ_CLI_EXIT_FAILED = 7,        /* a file, a malformed input line, memory, a child */
  LJ_CLI_EXIT_WAIT_ENDED = 8,    /* a wait for a lock ended without it */
  LJ_CLI_EXIT_LOCK_LOST = 9,     /* lock run, lock hold: the lock was lost while held */
  LJ_CLI_EXIT_INTERRUPTED = 130  /* stopped by an interrupt (128 + SIGINT) */
};

/* What an exit code above means, one line; NULL for a code not in the table. */
const char *lj_cli_exit_meaning(int code);

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
  /* Tells the service manager how a service (step watch) is, one or more lines of
   * sd_notify's assignments ("READY=1", "WATCHDOG=1", "STOPPING=1", "STATUS=..."): the
   * command's is libsystemd's sd_notify, a no-op where no manager listens (no
   * NOTIFY_SOCKET). NULL where no verb runs as a service (the builtin). */
  int (*notify)(const char *state, void *payload);
  /* The watchdog interval the manager asked for (sd_watchdog_enabled: WatchdogSec), in
   * microseconds; 0: none. A service pings it twice an interval while its loop turns. */
  uint64_t watchdog_usec;
  /* Non-zero when err is the journal's stream (lj_cli_is_journal_stream): each line on
   * err then opens with its syslog priority, as sd-daemon.h's SD_ERR ("<3>"),
   * SD_WARNING ("<4>") and SD_INFO ("<6>"), which journald reads and strips. */
  int err_is_journal;
} lj_cli_host_t;

/* Non-zero when fd is the stream journald gave the process: journal_stream (the
 * JOURNAL_STREAM variable's value, "<device>:<inode>" in decimal) names fd's device
 * and inode. 0 for NULL, an empty or malformed value, or another file (stderr
 * redirected by a child of the service). */
int lj_cli_is_journal_stream(int fd, const char *journal_stream);

/* Run the verb named by argv[0..argc) (the words after "leasejudge"); its exit code
 * (leasejudge(1) lists them). Writes only to host->out and host->err. */
int lj_cli_run(const lj_cli_host_t *host, int argc, const char *const *argv);

#ifdef __cplusplus
}
#endif

#endif
