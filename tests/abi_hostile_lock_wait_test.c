/* Every exported symbol of the C ABI's lock wait part with hostile arguments (NULL, empty,
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

static lj_store_t *wait_store;

static int call_acquire_wait(const lj_lock_options_t *o, lj_error_t **err) {
  lj_lock_t *lock = NULL;
  lj_lock_acquisition_t a;
  int rc = lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, NULL, o, err);
  lj_lock_acquisition_clear(&a);
  if (lock != NULL) lj_lock_release(lock, NULL);
  lj_lock_destroy(lock);
  return rc;
}

static int always_cancel(void *payload) {
  (void)payload;
  return 7;
}

/* Waiting for a lock and the heartbeat: bad options and waits, NULLs, a cancel at
 * once, a lock without a lease, a heartbeat started twice. */
static void case_lock_wait(void) {
  lj_error_t *err = NULL;
  lj_lock_t *lock = (lj_lock_t *)1, *held = NULL;
  lj_lock_acquisition_t a;
  lj_lock_wait_options_t w = LJ_LOCK_WAIT_OPTIONS_INIT;
  lj_lock_holder_t none = LJ_LOCK_HOLDER_INIT;
  lj_lock_heartbeat_t *beat = (lj_lock_heartbeat_t *)1, *second = NULL;
  char *junk = big_junk(BIG);

  CHECK(lj_store_memory_open(&wait_store, NULL) == LJ_OK);
  bad_lock_options(call_acquire_wait);
  CHECK(lj_lock_wait_options_init(NULL, LJ_LOCK_WAIT_OPTIONS_VERSION) == LJ_EINVAL);
  CHECK(lj_lock_wait_options_init(&w, 0) == LJ_EVERSION);
  CHECK(lj_lock_wait_options_init(&w, LJ_LOCK_WAIT_OPTIONS_VERSION + 1) == LJ_EVERSION);
  CHECK(lj_lock_wait_options_init(&w, LJ_LOCK_WAIT_OPTIONS_VERSION) == LJ_OK && w.poll_min_ms == 50);
  w.version = 0;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EVERSION);
  w.version = LJ_LOCK_WAIT_OPTIONS_VERSION + 1;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EVERSION);
  w.version = LJ_LOCK_WAIT_OPTIONS_VERSION;
  w.wait_ms = -1;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.wait_ms = INT64_MIN;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.wait_ms = INT64_MAX;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.wait_ms = 0;
  w.poll_min_ms = INT64_MIN;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.poll_min_ms = 0;
  w.poll_max_ms = INT64_MAX;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.poll_min_ms = 500;
  w.poll_max_ms = 499;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.poll_min_ms = w.poll_max_ms = 0;
  REFUSED(lj_lock_acquire_wait(NULL, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, NULL, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, NULL, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  CHECK(lock == NULL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, NULL, 1, S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), NULL, 1, NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("\xff"), NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), junk, BIG, NULL, &w, NULL, &err), LJ_EINVAL);
  none.version = 0;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), &none, &w, NULL, &err), LJ_EVERSION);
  none.version = LJ_LOCK_HOLDER_VERSION;
  CHECK(lock == NULL && a.has_verdict == 0);
  /* Cancelled before its first try: nothing written. */
  w.cancelled = always_cancel;
  w.wait_ms = 86400000;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EUSER);
  CHECK(lock == NULL && a.revision == 0);

  /* The heartbeat. */
  REFUSED(lj_lock_heartbeat_start(NULL, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_heartbeat_start(&beat, NULL, NULL, NULL, &err), LJ_EINVAL);
  CHECK(beat == NULL);
  CHECK(lj_lock_heartbeat_lost(NULL) == 1);
  CHECK(lj_lock_heartbeat_renewals(NULL) == 0 && lj_lock_heartbeat_retries(NULL) == 0);
  lj_lock_heartbeat_destroy(NULL);
  none.kind = LJ_LOCK_HOLDER_NONE;
  CHECK(lj_lock_acquire(&held, &a, wait_store, S("plain"), S("p"), &none, NOW_MS, NULL, NULL) == LJ_OK);
  lj_lock_acquisition_clear(&a);
  REFUSED(lj_lock_heartbeat_start(&beat, held, NULL, NULL, &err), LJ_EINVAL);
  CHECK(beat == NULL && lj_lock_release(held, NULL) == LJ_OK);
  lj_lock_destroy(held);
  CHECK(lj_lock_acquire(&held, &a, wait_store, S("leased"), S("p"), NULL, LJ_TIME_DEFAULT, NULL, NULL) == LJ_OK);
  lj_lock_acquisition_clear(&a);
  CHECK(lj_lock_heartbeat_start(&beat, held, NULL, NULL, NULL) == LJ_OK && beat != NULL);
  REFUSED(lj_lock_heartbeat_start(&second, held, NULL, NULL, &err), LJ_EBUSY);
  REFUSED(lj_lock_renew(held, LJ_TIME_DEFAULT, &err), LJ_EBUSY);
  REFUSED(lj_lock_release(held, &err), LJ_EBUSY);
  CHECK(second == NULL && lj_lock_heartbeat_lost(beat) == 0);
  lj_lock_heartbeat_destroy(beat);
  CHECK(lj_lock_release(held, NULL) == LJ_OK);
  lj_lock_destroy(held);
  lj_store_destroy(wait_store);
  wait_store = NULL;
  free(junk);
}

static const struct symbol_case cases[] = {
    {"lj_lock_wait_options_init", case_lock_wait},
    {"lj_lock_acquire_wait", case_lock_wait},
    {"lj_lock_heartbeat_start", case_lock_wait},
    {"lj_lock_heartbeat_lost", case_lock_wait},
    {"lj_lock_heartbeat_renewals", case_lock_wait},
    {"lj_lock_heartbeat_retries", case_lock_wait},
    {"lj_lock_heartbeat_destroy", case_lock_wait},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
