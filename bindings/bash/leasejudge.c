/* leasejudge as a bash loadable builtin: every verb of the leasejudge command without
 * a fork.
 *
 *   enable -f <prefix>/lib/bash/leasejudge.so leasejudge
 *   leasejudge lease touch; leasejudge step plan --node n1 state.jsonl; ...
 *
 * The builtin only adapts: the verbs are the command's own (bindings/cli, one table
 * for both), run with this shell as "this shell" ($$ owns the leases and locks it
 * takes), the shell's exported environment, and bash's interrupt state. A verb never
 * exits, longjmps out of a call in progress or keeps memory between calls: Ctrl-C
 * stops a wait or a sweep through the verbs' interrupted callback, and bash acts on
 * it only once the call has returned and released everything.
 */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "common.h"

#include "cli.h"
#include "leasejudge.h"

/* bash's trap.h is not among the installed headers: what the builtin reads of it. A
 * SIGINT with a trap set only marks the trap pending (interrupt_state stays 0). */
extern int pending_traps[];

/* A wait or a sweep stops on Ctrl-C (trapped or not) and on a signal that terminates
 * the shell; other trapped signals run their traps once the call returns. */
static int leasejudge_interrupted(void *payload) {
  (void)payload;
  return interrupt_state != 0 || terminating_signal != 0 || pending_traps[SIGINT] != 0;
}

int leasejudge_builtin(WORD_LIST *list) {
  const char *small[32];
  const char **argv = small;
  size_t n = 0, cap = sizeof small / sizeof small[0];
  WORD_LIST *l;
  lj_cli_host_t host;
  int rc;

  for (l = list; l != NULL; l = l->next) ++n;
  if (n > cap && (argv = (const char **)malloc(n * sizeof *argv)) == NULL) {
    builtin_error("out of memory");
    return EXECUTION_FAILURE;
  }
  n = 0;
  for (l = list; l != NULL; l = l->next) argv[n++] = l->word->word;

  maybe_make_export_env(); /* the environment children see: `VAR=x leasejudge ...` included */
  host.out = stdout;
  host.err = stderr;
  host.self_pid = (int32_t)dollar_dollar_pid;
  host.environment = (const char *const *)export_env;
  host.interrupted = leasejudge_interrupted;
  host.payload = NULL;
  host.err_is_tty = isatty(2);
  host.source_dir = NULL;
  host.build_dir = NULL;
  host.runs_children = 0; /* bash reaps its children itself: lock run refuses */
  host.hangup = NULL; /* no service runs in a shell: step watch refuses */
  host.notify = NULL;
  host.watchdog_usec = 0;
  /* A script run by systemd: the shell's stderr may be the journal. */
  host.err_is_journal = lj_cli_is_journal_stream(2, get_string_value("JOURNAL_STREAM"));
  rc = lj_cli_run(&host, (int)n, argv);
  if (argv != small) free(argv);
  fflush(stdout);
  if (rc == LJ_CLI_EXIT_INTERRUPTED) {
    /* The interrupt that stopped the verb, handled now that nothing is held: an
     * untrapped one ends the command as bash ends any; a trapped one runs its trap. */
    QUIT;
    return 128 + SIGINT;
  }
  return sh_chkwrite(rc);
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
    "Judge whether the holders of leases, locks and steps are alive; reclaim what a gone one left.",
    "",
    "The verbs of the leasejudge command, run in this shell (`leasejudge --help` lists",
    "them, `leasejudge VERB --help` tells one): step plan|sweep|end|export|import,",
    "lock judge|acquire|renew|release, lease touch|live|list, identity, owner,",
    "machine-id, version. This shell ($$) is the one whose leases and locks they take.",
    "",
    "Exit status: the command's one table (cli.h; `leasejudge --help` lists it, each",
    "verb's --help the codes it gives): 0 done (lock judge: break), 1 no, 2 usage,",
    "3 unknown, 4 store failed, 5 changed, 6 a write's outcome unknown, 7 failed (a file,",
    "a malformed line), 8 a wait ended without the lock, 130 interrupted; lease gives",
    "the script's codes.",
    (char *)NULL};

struct builtin leasejudge_struct = {
    "leasejudge",
    leasejudge_builtin,
    BUILTIN_ENABLED,
    leasejudge_doc,
    "leasejudge VERB [options] [operands]",
    0,
};
