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
#include <fcntl.h>
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
    "       leasejudge lock judge [--now ISO] [--json] [FILE]\n"
    "       leasejudge step plan --node N [--owner TOKEN] [--before ISO] [--now ISO]\n"
    "                            [--bound SECONDS] [--rule not-self|provably-dead] [FILE]\n"
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
  if (what != NULL && arg != NULL && arg[0] != '\0') builtin_error("%s: %s", what, arg);
  else if (what != NULL) builtin_error("%s", what);
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


/* --- lock judge, step plan ------------------------------------------------------------ */

#define LJB_INPUT_MAX ((size_t)1 << 30) /* a lock body larger than 1 GiB is refused */

/* All of FILE (NULL or "-": stdin, as the shell redirected it) into a malloc'ed buffer
 * the caller frees. 0, or an errno. */
static int leasejudge_read_input(const char *path, char **out, size_t *out_len) {
  int fd = 0, rc = 0;
  size_t len = 0, cap = 65536;
  char *buf;

  if (path != NULL && strcmp(path, "-") != 0) {
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
  }
  buf = (char *)malloc(cap);
  if (buf == NULL) rc = ENOMEM;
  while (rc == 0) {
    ssize_t got;
    if (len == cap) {
      char *bigger;
      if (cap >= LJB_INPUT_MAX) {
        rc = EFBIG;
        break;
      }
      bigger = (char *)realloc(buf, cap * 2);
      if (bigger == NULL) {
        rc = ENOMEM;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    got = read(fd, buf + len, cap - len);
    if (got < 0 && errno == EINTR) {
      if (interrupt_state != 0 || terminating_signal != 0) rc = EINTR;
      continue;
    }
    if (got < 0) rc = errno;
    else if (got == 0) break;
    else len += (size_t)got;
  }
  if (fd != 0) close(fd);
  if (rc != 0) {
    free(buf);
    return rc;
  }
  *out = buf;
  *out_len = len;
  return 0;
}

/* The value after an option that needs one; NULL (after the usage) when missing. */
static const char *leasejudge_value(WORD_LIST **list) {
  WORD_LIST *l = *list;
  if (l->next == NULL) {
    leasejudge_bad_usage("an option needs a value", l->word->word);
    return NULL;
  }
  *list = l->next;
  return l->next->word->word;
}

#define LJB_PLAN_CHUNK ((size_t)1 << 20) /* step plan reads its input this much at a time */

static int leasejudge_write_stdout(const char *data, size_t len, void *payload) {
  (void)payload;
  return fwrite(data, 1, len, stdout) == len ? 0 : 1;
}

/* The lines of FILE (NULL or "-": stdin) planned as they are read, the answers written
 * to stdout as they come: a state of any size in bounded memory. 0 with *rc the plan's
 * code, or an errno (EINTR on Ctrl-C) of the input. */
static int leasejudge_plan_stream(const char *path, lj_step_lines_plan_t *plan, lj_step_plan_summary_t *summary,
                                  int *rc, lj_error_t **err) {
  int fd = 0, error = 0;
  char *buf;
  *rc = LJ_OK;
  if (path != NULL && strcmp(path, "-") != 0) {
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
  }
  buf = (char *)malloc(LJB_PLAN_CHUNK);
  if (buf == NULL) error = ENOMEM;
  while (error == 0 && *rc == LJ_OK) {
    ssize_t got = read(fd, buf, LJB_PLAN_CHUNK);
    if (got < 0 && errno == EINTR) {
      if (leasejudge_interrupted(NULL)) error = EINTR;
      continue;
    }
    if (got < 0) error = errno;
    else if (got == 0) break;
    else *rc = lj_step_lines_plan_feed(plan, buf, (size_t)got, leasejudge_write_stdout, NULL, err);
  }
  if (error == 0 && *rc == LJ_OK) *rc = lj_step_lines_plan_finish(summary, plan, leasejudge_write_stdout, NULL, err);
  free(buf);
  if (fd != 0) close(fd);
  return error;
}

static int leasejudge_input_failed(const char *verb, const char *path, int error) {
  if (error == EINTR) {
    QUIT;
    return 128 + SIGINT;
  }
  builtin_error("%s: %s: %s", verb, path != NULL ? path : "stdin", strerror(error));
  return LJB_USAGE;
}

/* lock judge [--now ISO] [--json] [FILE]: 0 break, 1 held, 3 unknown, 2 usage. */
static int leasejudge_lock(WORD_LIST *list) {
  const char *path = NULL, *now_text = NULL;
  int json = 0, rc, status, error;
  int64_t now_ms = LJ_LOCK_NOW;
  char *body = NULL, *text = NULL;
  size_t body_len = 0, text_len = 0;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  lj_lock_verdict_t verdict;
  lj_error_t *err = NULL;

  if (list == NULL || strcmp(list->word->word, "judge") != 0)
    return leasejudge_bad_usage("lock: unknown verb", list != NULL ? list->word->word : "");
  for (list = list->next; list != NULL; list = list->next) {
    const char *a = list->word->word;
    if (strcmp(a, "--now") == 0) {
      if ((now_text = leasejudge_value(&list)) == NULL) return LJB_USAGE;
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      return leasejudge_bad_usage("lock judge: unknown option", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return leasejudge_bad_usage("lock judge: one FILE at most", a);
    }
  }
  if (now_text != NULL && lj_lock_time_parse(&now_ms, now_text, strlen(now_text), NULL) != LJ_OK)
    return leasejudge_bad_usage("lock judge: --now is no ISO time", now_text);
  if ((error = leasejudge_read_input(path, &body, &body_len)) != 0)
    return leasejudge_input_failed("lock judge", path, error);

  opts.gcloud_env = (char *const *)leasejudge_environment();
  memset(&verdict, 0, sizeof verdict);
  rc = lj_lock_judge(&verdict, body, body_len, now_ms, &opts, &err);
  free(body);
  if (rc != LJ_OK) {
    /* No verdict could be made: never "break" on that. */
    leasejudge_report("lock judge", rc, err);
    return 3;
  }
  rc = json ? lj_lock_verdict_json(&text, &text_len, &verdict, &err)
            : lj_lock_verdict_text(&text, &text_len, &verdict, &err);
  status = verdict.kind == LJ_LOCK_BREAK ? 0 : verdict.kind == LJ_LOCK_HELD ? 1 : 3;
  lj_lock_verdict_clear(&verdict);
  if (rc != LJ_OK) {
    leasejudge_report("lock judge", rc, err);
    return 3;
  }
  fwrite(text, 1, text_len, stdout);
  fputc('\n', stdout);
  lj_free(text);
  fflush(stdout);
  return leasejudge_done(status);
}

/* The start, in ns since the epoch, that an owner token records (its last field,
 * milliseconds in base 36); -1 when it has none. */
static int64_t leasejudge_token_start_ns(const char *token, size_t len) {
  int64_t ms = 0;
  size_t i = len;
  while (i > 0 && token[i - 1] != '.') --i;
  if (i == 0 || i == len) return -1;
  for (; i < len; ++i) {
    char c = token[i];
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : -1;
    if (digit < 0 || ms > (INT64_MAX / 1000000 - digit) / 36) return -1;
    ms = ms * 36 + digit;
  }
  return ms * 1000000;
}

/* step plan --node N [--owner T] [--before ISO] [--now ISO] [--bound S] [--rule R] [FILE] */
static int leasejudge_step(WORD_LIST *list) {
  const char *path = NULL, *node = NULL, *owner = NULL, *before = NULL, *now = NULL, *bound = NULL, *rule = NULL;
  lj_step_plan_options_t opts = LJ_STEP_PLAN_OPTIONS_INIT;
  lj_step_plan_summary_t summary;
  lj_step_lines_plan_t *plan = NULL;
  char *line = NULL, *own_token = NULL;
  size_t line_len = 0, own_len = 0;
  lj_error_t *err = NULL;
  int rc, error;

  if (list == NULL || strcmp(list->word->word, "plan") != 0)
    return leasejudge_bad_usage("step: unknown verb", list != NULL ? list->word->word : "");
  for (list = list->next; list != NULL; list = list->next) {
    const char *a = list->word->word, **slot = NULL;
    if (strcmp(a, "--node") == 0) slot = &node;
    else if (strcmp(a, "--owner") == 0) slot = &owner;
    else if (strcmp(a, "--before") == 0) slot = &before;
    else if (strcmp(a, "--now") == 0) slot = &now;
    else if (strcmp(a, "--bound") == 0) slot = &bound;
    else if (strcmp(a, "--rule") == 0) slot = &rule;
    if (slot != NULL) {
      if ((*slot = leasejudge_value(&list)) == NULL) return LJB_USAGE;
    } else if (a[0] == '-' && a[1] != '\0') {
      return leasejudge_bad_usage("step plan: unknown option", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return leasejudge_bad_usage("step plan: one FILE at most", a);
    }
  }
  if (node == NULL || node[0] == '\0') return leasejudge_bad_usage("step plan: --node is required", NULL);
  opts.node = node;
  opts.node_len = strlen(node);
  if (before != NULL && lj_step_time_parse(&opts.before_ns, before, strlen(before), NULL) != LJ_OK)
    return leasejudge_bad_usage("step plan: --before is no RFC 3339 time", before);
  if (now != NULL && lj_step_time_parse(&opts.now_ns, now, strlen(now), NULL) != LJ_OK)
    return leasejudge_bad_usage("step plan: --now is no RFC 3339 time", now);
  if (bound != NULL) {
    char *end = NULL;
    long long v;
    errno = 0;
    v = strtoll(bound, &end, 10);
    if (bound[0] < '0' || bound[0] > '9' || errno != 0 || *end != '\0' || v <= 0)
      return leasejudge_bad_usage("step plan: --bound is no positive number of seconds", bound);
    opts.bound_seconds = (int64_t)v;
  }
  if (rule != NULL) {
    if (strcmp(rule, "not-self") == 0) opts.rule = LJ_STEP_RULE_NOT_SELF;
    else if (strcmp(rule, "provably-dead") == 0) opts.rule = LJ_STEP_RULE_PROVABLY_DEAD;
    else return leasejudge_bad_usage("step plan: --rule is not-self or provably-dead", rule);
  }
  /* This shell's token and start, not the process's: a subshell plans as its shell. */
  if (owner == NULL || before == NULL) {
    rc = lj_owner_token(&own_token, &own_len, (int32_t)dollar_dollar_pid, &err);
    if (rc != LJ_OK) {
      leasejudge_report("step plan", rc, err);
      return EXECUTION_FAILURE;
    }
    if (before == NULL) {
      int64_t start = leasejudge_token_start_ns(own_token, own_len);
      if (start >= 0) opts.before_ns = start;
    }
  }
  if (owner != NULL) {
    opts.owner = owner;
    opts.owner_len = strlen(owner);
  } else {
    opts.owner = own_token;
    opts.owner_len = own_len;
  }
  rc = lj_step_lines_plan_create(&plan, &opts, &err);
  lj_free(own_token);
  if (rc != LJ_OK) {
    leasejudge_report("step plan", rc, err);
    return EXECUTION_FAILURE;
  }
  memset(&summary, 0, sizeof summary);
  error = leasejudge_plan_stream(path, plan, &summary, &rc, &err);
  lj_step_lines_plan_destroy(plan);
  fflush(stdout);
  if (error != 0) return leasejudge_input_failed("step plan", path, error);
  if (rc != LJ_OK) {
    leasejudge_report("step plan", rc, err);
    return EXECUTION_FAILURE;
  }
  if (lj_step_plan_summary_format(&line, &line_len, &summary, NULL) == LJ_OK) {
    fwrite(line, 1, line_len, stderr);
    fputc('\n', stderr);
    lj_free(line);
  }
  return leasejudge_done(EXECUTION_SUCCESS);
}

int leasejudge_builtin(WORD_LIST *list) {
  const char *verb;

  if (list == NULL) return leasejudge_bad_usage(NULL, NULL);
  verb = list->word->word;
  if (strcmp(verb, "lease") == 0) return leasejudge_lease(list->next);
  if (strcmp(verb, "lock") == 0) return leasejudge_lock(list->next);
  if (strcmp(verb, "step") == 0) return leasejudge_step(list->next);
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
    "  lock judge [--now ISO] [--json] [FILE]",
    "      judge a lock body (FILE or stdin) on this machine, asking Cloud Run where it",
    "      names an execution: `<kind> <reason> <why>`, or one JSON object with --json;",
    "      exit 0 break, 1 held, 3 unknown.",
    "  step plan --node N [--owner TOKEN] [--before ISO] [--now ISO] [--bound SECONDS]",
    "            [--rule not-self|provably-dead] [FILE]",
    "      plan a sweep of JSON lines {\"key\",\"revision\",\"value\"} (FILE or stdin): one",
    "      line {\"key\",\"action\",\"why\"} per key, in order, and a summary on stderr.",
    "      The owner defaults to this shell's token ($$), before to its start.",
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
    "leasejudge lease|lock|step|identity|owner|machine-id|version ...",
    0,
};
