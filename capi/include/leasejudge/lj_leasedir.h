/* leasejudge C ABI: the lease directory (included by leasejudge.h).
 *
 * The workflow leases several sessions keep on one shared checkout, byte-compatible
 * with the gstack-lease script so that both can share one directory at once: a lease
 * <dir>/<pid> holds the pid's start identity; touch writes one under the directory's
 * lock and prunes, live prints the leases of live processes (reclaiming stale ones),
 * list prints every lease with its state. The verbs print exactly the script's lines
 * and return its exit codes; leasejudge/leasedir.hpp gives the rules in full.
 */
#ifndef LEASEJUDGE_LJ_LEASEDIR_H
#define LEASEJUDGE_LJ_LEASEDIR_H

#include "leasejudge/lj_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a line goes: what the script prints on stdout or on stderr. */
#define LJ_LEASEDIR_STDOUT 1
#define LJ_LEASEDIR_STDERR 2

/* Receives each line a verb prints, without its newline (line is NUL-terminated too,
 * borrowed for the call). A non-zero return stops the verb with LJ_EUSER, after the
 * directory lock is released. */
typedef int (*lj_leasedir_line_fn)(int stream, const char *line, size_t len, void *payload);

/* Polled while the directory lock is awaited (every 0.1 s); non-zero stops the wait
 * and the verb with LJ_EUSER. */
typedef int (*lj_leasedir_interrupted_fn)(void *payload);

#define LJ_LEASEDIR_OPTIONS_VERSION 1
typedef struct lj_leasedir_options_t {
  uint32_t version;
  /* Lock tries before giving up on a live holder; -1: LEASEJUDGE_LEASE_LOCK_TRIES,
   * else GSTACK_LEASE_LOCK_TRIES, else 300. */
  int64_t lock_tries;
  /* The lock gives up after this many seconds (default 30). */
  int64_t lock_time_limit_s;
  /* Pause between tries in milliseconds (default 100). */
  int64_t lock_retry_ms;
  /* The shared harness's process name (NUL-terminated; NULL: LEASEJUDGE_SHARED_HARNESS,
   * else "capy-server"). */
  const char *shared_harness;
  /* The process that takes the lock and is named in its token; 0: this process. */
  int32_t self_pid;
  /* The environment to read and to give to git and ps: KEY=VALUE strings ending with
   * NULL; NULL: this process's environ. Borrowed for the call. */
  const char *const *environment;
  lj_leasedir_interrupted_fn interrupted; /* NULL: never */
  void *interrupted_payload;
} lj_leasedir_options_t;
#define LJ_LEASEDIR_OPTIONS_INIT {LJ_LEASEDIR_OPTIONS_VERSION, -1, 30, 100, NULL, 0, NULL, NULL, NULL}
/* Fill opts with the defaults of version. LJ_EINVAL for NULL, LJ_EVERSION for an
 * unknown version. */
LJ_API int lj_leasedir_options_init(lj_leasedir_options_t *opts, uint32_t version);

/* The lease command as the script parses it. args: nargs NUL-terminated strings, the
 * verb first ("touch", "live", "list"; "-h", "--help" or none prints the usage) then
 * its options (--root R, --pid P, --from P, --exclude-ancestry-of P,
 * --count-shared-harness). default_root (NUL-terminated, NULL or "": the current
 * directory) is used without --root; default_pid (NULL or "": the parent process) by
 * touch without --pid and --from. *exit_code is the script's: 0, 1 (live found none),
 * 2 (usage, not a checkout, nothing written), 3 (the lock could not be taken).
 * Returns LJ_OK, LJ_EINVAL (NULL exit_code, NULL args with nargs > 0, a NULL arg),
 * LJ_EVERSION, LJ_EUSER (the callback or interrupted stopped it). */
LJ_API int lj_leasedir_run(int *exit_code, const char *const *args, size_t nargs, const char *default_root,
                           const char *default_pid, lj_leasedir_line_fn line, void *payload,
                           const lj_leasedir_options_t *opts, lj_error_t **err);

/* The lease directory of the checkout at root (root, root_len; a relative root is
 * read from the current directory): LEASEJUDGE_LEASE_DIR or GSTACK_LEASE_DIR when set
 * and non-empty, else <git dir>/gstack-leases. *out is the caller's (lj_free).
 * LJ_ENOTFOUND when root is not a git checkout; LJ_EINVAL for NULL out or an empty root. */
LJ_API int lj_leasedir_path(char **out, size_t *out_len, const char *root, size_t root_len,
                            const lj_leasedir_options_t *opts, lj_error_t **err);

/* The verbs on a lease directory (dir, dir_len), each printing through line (NULL:
 * print nothing) and setting *exit_code as the script's verb exits. */
/* touch: write pid's identity as its lease (pid, pid_len: the file name, as given) and
 * prune, under the lock. *exit_code 0, 2 or 3. */
LJ_API int lj_leasedir_touch(int *exit_code, const char *dir, size_t dir_len, const char *pid, size_t pid_len,
                             lj_leasedir_line_fn line, void *payload, const lj_leasedir_options_t *opts,
                             lj_error_t **err);
/* live: leases of live processes outside the ancestry of (exclude, exclude_len; empty:
 * none), stale ones reclaimed. *exit_code 0 when one was printed, 1 when none. */
LJ_API int lj_leasedir_live(int *exit_code, const char *dir, size_t dir_len, const char *exclude,
                            size_t exclude_len, int count_shared_harness, lj_leasedir_line_fn line, void *payload,
                            const lj_leasedir_options_t *opts, lj_error_t **err);
/* list: `<pid> <age>m alive|dead|stale` per lease. *exit_code 0. */
LJ_API int lj_leasedir_list(int *exit_code, const char *dir, size_t dir_len, lj_leasedir_line_fn line,
                            void *payload, const lj_leasedir_options_t *opts, lj_error_t **err);

/* The state of one lease as list judges it: pid (the file name), its record (first
 * line) and age in minutes. */
typedef enum lj_lease_state_t { LJ_LEASE_ALIVE = 0, LJ_LEASE_DEAD = 1, LJ_LEASE_STALE = 2 } lj_lease_state_t;
LJ_API int lj_leasedir_state(lj_lease_state_t *out, const char *pid, size_t pid_len, const char *record,
                             size_t record_len, int64_t age_min, const lj_leasedir_options_t *opts,
                             lj_error_t **err);

#ifdef __cplusplus
}
#endif

#endif
