/* Every exported symbol of the C ABI's watch part with hostile arguments (NULL, empty,
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

static int watch_stop_at_once(void *payload) {
  (void)payload;
  return 1;
}

static void case_watch(void) {
  lj_error_t *err = NULL;
  lj_step_watch_t *watch = NULL;
  lj_step_watch_options_t o;
  lj_store_t *store = NULL;
  char *junk = big_junk(BIG);
  REFUSED(lj_step_watch_options_init(NULL, LJ_STEP_WATCH_OPTIONS_VERSION), LJ_EINVAL);
  REFUSED(lj_step_watch_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_step_watch_options_init(&o, LJ_STEP_WATCH_OPTIONS_VERSION + 1), LJ_EVERSION);
  REFUSED(lj_step_watch_create(NULL, S("n1"), 0, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_create(&watch, NULL, 2, 0, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_create(&watch, S(""), 0, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_create(&watch, S("n.1"), 0, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_create(&watch, S("\xff."), 0, &err), LJ_EINVAL);
  CHECK(watch == NULL);
  /* A huge node of any bytes: refused for its '.', or taken. */
  {
    int rc = lj_step_watch_create(&watch, junk, BIG, 0, &err);
    CHECK(rc == LJ_OK || refused(rc, LJ_EINVAL, &err));
    lj_step_watch_destroy(watch);
    watch = NULL;
  }
  CHECK(lj_step_watch_create(&watch, S("n\0\xff"), LJ_TIME_DEFAULT, NULL) == LJ_OK);
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  REFUSED(lj_step_watch_run(NULL, store, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_run(watch, NULL, NULL, &err), LJ_EINVAL);
  lj_step_watch_options_init(&o, LJ_STEP_WATCH_OPTIONS_VERSION);
  o.version = 0;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EVERSION);
  o.version = LJ_STEP_WATCH_OPTIONS_VERSION + 1;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EVERSION);
  lj_step_watch_options_init(&o, LJ_STEP_WATCH_OPTIONS_VERSION);
  o.interval_ms = INT64_MIN;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EINVAL);
  o.interval_ms = INT64_MAX;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EINVAL);
  o.interval_ms = 1000;
  o.poll_ms = -1;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EINVAL);
  o.poll_ms = 1000;
  o.backoff_max_ms = 0;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EINVAL);
  o.backoff_max_ms = 30000;
  o.stop = watch_stop_at_once;
  CHECK(lj_step_watch_run(watch, store, &o, NULL) == LJ_OK);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_ENDS) == 0);
  CHECK(lj_step_watch_figure(watch, INT_MIN) == 0 && lj_step_watch_figure(watch, INT_MAX) == 0);
  CHECK(lj_step_watch_judged(watch, INT_MIN) == 0 && lj_step_watch_judged(watch, INT_MAX) == 0);
  CHECK(lj_step_watch_figure(NULL, 0) == 0 && lj_step_watch_judged(NULL, 0) == 0);
  lj_step_watch_destroy(watch);
  lj_step_watch_destroy(NULL);
  lj_store_destroy(store);
  free(junk);
}

static const struct symbol_case cases[] = {
    {"lj_step_watch_create", case_watch},
    {"lj_step_watch_destroy", case_watch},
    {"lj_step_watch_figure", case_watch},
    {"lj_step_watch_judged", case_watch},
    {"lj_step_watch_options_init", case_watch},
    {"lj_step_watch_run", case_watch},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
