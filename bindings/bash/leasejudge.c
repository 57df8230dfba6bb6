/* leasejudge as a bash loadable builtin: every verb without a fork.
 *
 *   enable -f <build>/bindings/bash/leasejudge.so leasejudge
 *   leasejudge lease touch|live|list [--root R] [--pid P | --from P] ...
 *
 * The builtin only adapts: each verb is one call through the C ABI (libleasejudge.so).
 * It never exits, longjmps out of a call in progress, or keeps memory between calls:
 * an interrupt (Ctrl-C) stops a wait for the lease lock through the ABI's interrupted
 * callback, and bash acts on it only once the call has returned and released
 * everything. Lines go to the shell's stdout and stderr as the gstack-lease script
 * prints them; a bad option prints the usage on stderr and returns 2.
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "bashgetopt.h"
#include "common.h"

#include "leasejudge.h"

#define LJB_USAGE 2 /* a bad option: what the script returns, not bash's EX_USAGE (258) */

/* bash's trap.h is not among the installed headers: what the builtin reads of it. A
 * SIGINT with a trap set only marks the trap pending (interrupt_state stays 0). */
extern int pending_traps[];

static const char leasejudge_usage_text[] =
    "usage: leasejudge lease touch|live|list [--root <checkout>] [--pid <p> | --from <pid>]\n"
    "                        [--exclude-ancestry-of <pid>] [--count-shared-harness]\n"
    "       leasejudge identity [PID]\n"
    "       leasejudge owner [PID]\n"
    "       leasejudge machine-id\n"
    "       leasejudge version\n";

/* --- output ------------------------------------------------------------------- */

/* Writes one line where the verb says; stdout is flushed before stderr so that the two
 * keep their order on a shared terminal or file. */
static int leasejudge_line(int stream, const char *line, size_t len, void *payload) {
  (void)payload;
  if (stream == LJ_LEASEDIR_STDERR) {
    fflush(stdout);
    fwrite(line, 1, len, stderr);
    fputc('\n', stderr);
    fflush(stderr);
  } else {
    fwrite(line, 1, len, stdout);
    fputc('\n', stdout);
  }
  return 0;
}

/* A wait for the lease lock stops on Ctrl-C (trapped or not) and on a signal that
 * terminates the shell; other trapped signals run their traps once the call returns,
 * as they would after the script's `sleep 0.1`. */
static int leasejudge_interrupted(void *payload) {
  (void)payload;
  return interrupt_state != 0 || terminating_signal != 0 || pending_traps[SIGINT] != 0;
}

static void leasejudge_usage(FILE *to) { fputs(leasejudge_usage_text, to); }

static int leasejudge_bad_usage(const char *what, const char *arg) {
  if (what != NULL) builtin_error("%s: %s", what, arg != NULL ? arg : "");
  leasejudge_usage(stderr);
  return LJB_USAGE;
}

/* The status after writing: a write error (a closed pipe, a full disk) is a failure. */
static int leasejudge_done(int status) { return sh_chkwrite(status); }

static void leasejudge_report(const char *verb, int rc, lj_error_t *err) {
  const char *message = err != NULL ? lj_error_message(err) : "";
  builtin_error("%s: %s%s%s", verb, lj_strerror(rc), message[0] != '\0' ? ": " : "", message);
  lj_error_destroy(err);
}

/* A pid argument: a decimal in 1..INT32_MAX. */
static int leasejudge_pid_arg(const char *text, int32_t *out) {
  char *end = NULL;
  long v;
  if (text == NULL || text[0] < '0' || text[0] > '9') return 0;
  errno = 0;
  v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v <= 0 || v > INT32_MAX) return 0;
  *out = (int32_t)v;
  return 1;
}

/* The shell's environment as its children see it: exported variables, including the
 * temporary ones of `VAR=x leasejudge ...`. */
static const char *const *leasejudge_environment(void) {
  maybe_make_export_env();
  return (const char *const *)export_env;
}

/* --- verbs ---------------------------------------------------------------------- */

static int leasejudge_lease(WORD_LIST *list) {
  const char *argv_small[16];
  const char **argv = argv_small;
  size_t n = 0, cap = sizeof argv_small / sizeof argv_small[0];
  WORD_LIST *l;
  char pid_text[32];
  lj_leasedir_options_t opts = LJ_LEASEDIR_OPTIONS_INIT;
  lj_error_t *err = NULL;
  int exit_code = 2, rc;

  for (l = list; l != NULL; l = l->next) ++n;
  if (n > cap) {
    argv = (const char **)malloc(n * sizeof *argv);
    if (argv == NULL) {
      builtin_error("lease: out of memory");
      return EXECUTION_FAILURE;
    }
  }
  n = 0;
  for (l = list; l != NULL; l = l->next) argv[n++] = l->word->word;

  snprintf(pid_text, sizeof pid_text, "%ld", (long)dollar_dollar_pid);
  opts.environment = leasejudge_environment();
  opts.interrupted = leasejudge_interrupted;
  rc = lj_leasedir_run(&exit_code, argv, n, NULL, pid_text, leasejudge_line, NULL, &opts, &err);
  if (argv != argv_small) free(argv);
  fflush(stdout);
  if (rc == LJ_EUSER) {
    lj_error_destroy(err);
    /* The interrupt that stopped the wait, handled now that nothing is held: an
     * untrapped one ends the command as bash ends any; a trapped one runs its trap. */
    QUIT;
    return 128 + SIGINT;
  }
  if (rc != LJ_OK) {
    leasejudge_report("lease", rc, err);
    return EXECUTION_FAILURE;
  }
  return leasejudge_done(exit_code);
}

typedef int (*leasejudge_pid_fn)(char **out, size_t *out_len, int32_t pid, lj_error_t **err);

/* identity [PID] and owner [PID]: one line; 1 when the pid has none. */
static int leasejudge_pid_verb(const char *verb, WORD_LIST *list, leasejudge_pid_fn fn) {
  int32_t pid = (int32_t)dollar_dollar_pid;
  char *out = NULL;
  size_t len = 0;
  lj_error_t *err = NULL;
  int rc;

  if (list != NULL) {
    if (list->next != NULL) return leasejudge_bad_usage("too many arguments", list->next->word->word);
    if (!leasejudge_pid_arg(list->word->word, &pid)) return leasejudge_bad_usage("not a pid", list->word->word);
  }
  rc = fn(&out, &len, pid, &err);
  if (rc == LJ_ENOTFOUND) {
    lj_error_destroy(err);
    return EXECUTION_FAILURE;
  }
  if (rc != LJ_OK) {
    leasejudge_report(verb, rc, err);
    return EXECUTION_FAILURE;
  }
  if (len > 0) {
    fwrite(out, 1, len, stdout);
    fputc('\n', stdout);
  }
  lj_free(out);
  fflush(stdout);
  return leasejudge_done(len > 0 ? EXECUTION_SUCCESS : EXECUTION_FAILURE);
}

static int leasejudge_machine_id(WORD_LIST *list) {
  char *out = NULL;
  size_t len = 0;
  lj_error_t *err = NULL;
  int rc;

  if (list != NULL) return leasejudge_bad_usage("too many arguments", list->word->word);
  rc = lj_machine_id(&out, &len, &err);
  if (rc == LJ_ENOTFOUND) {
    lj_error_destroy(err);
    return EXECUTION_FAILURE;
  }
  if (rc != LJ_OK) {
    leasejudge_report("machine-id", rc, err);
    return EXECUTION_FAILURE;
  }
  fwrite(out, 1, len, stdout);
  fputc('\n', stdout);
  lj_free(out);
  fflush(stdout);
  return leasejudge_done(EXECUTION_SUCCESS);
}

static int leasejudge_version(WORD_LIST *list) {
  if (list != NULL) return leasejudge_bad_usage("too many arguments", list->word->word);
  printf("%s\n", lj_version());
  fflush(stdout);
  return leasejudge_done(EXECUTION_SUCCESS);
}

int leasejudge_builtin(WORD_LIST *list) {
  const char *verb;

  if (list == NULL) return leasejudge_bad_usage(NULL, NULL);
  verb = list->word->word;
  if (strcmp(verb, "lease") == 0) return leasejudge_lease(list->next);
  if (strcmp(verb, "identity") == 0) return leasejudge_pid_verb("identity", list->next, lj_lease_identity);
  if (strcmp(verb, "owner") == 0) return leasejudge_pid_verb("owner", list->next, lj_owner_token);
  if (strcmp(verb, "machine-id") == 0) return leasejudge_machine_id(list->next);
  if (strcmp(verb, "version") == 0) return leasejudge_version(list->next);
  if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "help") == 0) {
    leasejudge_usage(stdout);
    fflush(stdout);
    return leasejudge_done(EXECUTION_SUCCESS);
  }
  return leasejudge_bad_usage("unknown verb", verb);
}

/* Refuses to load against a library of another ABI major. */
int leasejudge_builtin_load(char *name) {
  (void)name;
  if (lj_version_number() / 10000 != LJ_VERSION_MAJOR) {
    builtin_error("libleasejudge %s does not match the builtin's ABI %d", lj_version(), LJ_VERSION_MAJOR);
    return 0;
  }
  return 1;
}

void leasejudge_builtin_unload(char *name) { (void)name; }

char *leasejudge_doc[] = {
    "Judge whether the holders of leases, locks and steps are alive; keep workflow leases.",
    "",
    "  lease touch|live|list ...   the gstack-lease verbs on the checkout's lease",
    "      directory (see `leasejudge lease --help`): the same lines, messages and",
    "      exit statuses (0, 1, 2, 3). touch records this shell ($$) by default.",
    "  identity [PID]    the lease identity line of PID (default $$); 1 when unknown.",
    "  owner [PID]       the step owner token of PID (default $$).",
    "  machine-id        this machine's id; 1 when it has none.",
    "  version           the library's version.",
    "",
    "A bad option prints the usage on stderr and returns 2.",
    (char *)NULL};

struct builtin leasejudge_struct = {
    "leasejudge",
    leasejudge_builtin,
    BUILTIN_ENABLED,
    leasejudge_doc,
    "leasejudge lease|identity|owner|machine-id|version ...",
    0,
};
