/* Every exported symbol of the C ABI's leasedir part with hostile arguments (NULL, empty,
 * huge and non-UTF-8 input, embedded NULs, options of a version unknown, values out of
 * range): each call answers the clean error its comment names, or the documented
 * result. abi_hostile_symbols_test checks that every exported symbol has its case.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "hostile.h"

static int lines_ok(int stream, const char *line, size_t len, void *payload) {
  int *bad = (int *)payload;
  if ((stream != LJ_LEASEDIR_STDOUT && stream != LJ_LEASEDIR_STDERR) || line == NULL || line[len] != '\0') ++*bad;
  return 0;
}

static void case_leasedir(void) {
  lj_error_t *err = NULL;
  lj_leasedir_options_t o = LJ_LEASEDIR_OPTIONS_INIT;
  lj_lease_state_t state = LJ_LEASE_DEAD;
  int code = -1, bad = 0;
  char *out = (char *)1;
  size_t len = 0;
  char dir[] = "/tmp/lj-hostile-lease-XXXXXX";
  char cmd[100];
  const char *help[] = {"--help"};
  const char *nul_arg[] = {"list", NULL};
  const char *bad_opt[] = {"list", "--root", "\xff\xfe", "--nope"};

  REFUSED(lj_leasedir_options_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_leasedir_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_leasedir_options_init(&o, LJ_LEASEDIR_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_leasedir_options_init(&o, LJ_LEASEDIR_OPTIONS_VERSION) == LJ_OK && o.lock_tries == -1);

  REFUSED(lj_leasedir_run(NULL, help, 1, NULL, NULL, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_run(&code, NULL, 1, NULL, NULL, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_run(&code, nul_arg, 2, NULL, NULL, NULL, NULL, NULL, &err), LJ_EINVAL);
  o.version = 0;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EVERSION);
  o.version = LJ_LEASEDIR_OPTIONS_VERSION + 1;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EVERSION);
  o.version = LJ_LEASEDIR_OPTIONS_VERSION;
  o.lock_tries = -2;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.lock_tries = -1;
  o.lock_time_limit_s = -1;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.lock_time_limit_s = 30;
  o.lock_retry_ms = 60001;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.lock_retry_ms = -1;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.lock_retry_ms = 100;
  o.self_pid = -1;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.self_pid = 0;
  CHECK(lj_leasedir_run(&code, help, 1, NULL, NULL, lines_ok, &bad, &o, NULL) == LJ_OK && code == 0 && bad == 0);
  CHECK(lj_leasedir_run(&code, NULL, 0, NULL, NULL, lines_ok, &bad, &o, NULL) == LJ_OK && code == 0);
  CHECK(lj_leasedir_run(&code, bad_opt, 4, NULL, NULL, lines_ok, &bad, &o, NULL) == LJ_OK && code == 2 && bad == 0);

  REFUSED(lj_leasedir_path(NULL, &len, S("/"), NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_path(&out, &len, NULL, 0, NULL, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_leasedir_path(&out, &len, NULL, 3, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_path(&out, &len, "/\0x", 3, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_path(&out, &len, S("/nonexistent-root"), NULL, &err), LJ_ENOTFOUND);

  CHECK(mkdtemp(dir) != NULL);
  REFUSED(lj_leasedir_touch(NULL, S("/tmp"), S("1"), NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_touch(&code, NULL, 4, S("1"), NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_touch(&code, "/tmp\0", 5, S("1"), NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_touch(&code, dir, strlen(dir), NULL, 1, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_touch(&code, dir, strlen(dir), "1\0", 2, NULL, NULL, NULL, &err), LJ_EINVAL);
  o.version = 0;
  REFUSED(lj_leasedir_touch(&code, dir, strlen(dir), S("1"), NULL, NULL, &o, &err), LJ_EVERSION);
  REFUSED(lj_leasedir_live(&code, dir, strlen(dir), NULL, 0, 0, NULL, NULL, &o, &err), LJ_EVERSION);
  REFUSED(lj_leasedir_list(&code, dir, strlen(dir), NULL, NULL, &o, &err), LJ_EVERSION);
  o.version = LJ_LEASEDIR_OPTIONS_VERSION;
  REFUSED(lj_leasedir_live(NULL, S("/tmp"), NULL, 0, 0, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_live(&code, NULL, 2, NULL, 0, 0, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_live(&code, dir, strlen(dir), NULL, 3, 0, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_list(NULL, S("/tmp"), NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_list(&code, NULL, 2, NULL, NULL, NULL, &err), LJ_EINVAL);
  /* A pid that is no process: the script's touch writes it an empty lease (0). */
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), S("\xff"), lines_ok, &bad, NULL, NULL) == LJ_OK);
  CHECK(code == 0 && bad == 0);
  CHECK(lj_leasedir_list(&code, dir, strlen(dir), lines_ok, &bad, NULL, NULL) == LJ_OK && code == 0 && bad == 0);
  CHECK(lj_leasedir_live(&code, dir, strlen(dir), S("\xff"), 1, lines_ok, &bad, NULL, NULL) == LJ_OK && code == 1);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);

  REFUSED(lj_leasedir_state(NULL, S("1"), S("x"), 0, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_state(&state, NULL, 0, S("x"), 0, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_state(&state, "1\0", 2, S("x"), 0, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_state(&state, S("1"), NULL, 1, 0, NULL, &err), LJ_EINVAL);
  o.version = 0;
  REFUSED(lj_leasedir_state(&state, S("1"), S("x"), 0, &o, &err), LJ_EVERSION);
  CHECK(lj_leasedir_state(&state, S("2147483647"), "\0\xff", 2, INT64_MIN, NULL, NULL) == LJ_OK);
  CHECK(state == LJ_LEASE_DEAD);
}

static const struct symbol_case cases[] = {
    {"lj_leasedir_options_init", case_leasedir},
    {"lj_leasedir_run", case_leasedir},
    {"lj_leasedir_path", case_leasedir},
    {"lj_leasedir_touch", case_leasedir},
    {"lj_leasedir_live", case_leasedir},
    {"lj_leasedir_list", case_leasedir},
    {"lj_leasedir_state", case_leasedir},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
