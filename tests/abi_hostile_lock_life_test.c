/* Every exported symbol of the C ABI's lock life part with hostile arguments (NULL, empty,
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

static lj_store_t *life_store;

static int call_acquire(const lj_lock_options_t *o, lj_error_t **err) {
  lj_lock_t *lock = NULL;
  lj_lock_acquisition_t a;
  int rc = lj_lock_acquire(&lock, &a, life_store, S("k"), S("p"), NULL, NOW_MS, o, err);
  lj_lock_acquisition_clear(&a);
  if (lock != NULL) lj_lock_release(lock, NULL);
  lj_lock_destroy(lock);
  return rc;
}

static void case_lock_life(void) {
  lj_error_t *err = NULL;
  lj_lock_t *lock = (lj_lock_t *)1;
  lj_lock_acquisition_t a;
  lj_lock_holder_t none = LJ_LOCK_HOLDER_INIT;
  char *out = (char *)1;
  size_t len = 0;

  CHECK(lj_store_memory_open(&life_store, NULL) == LJ_OK);
  bad_lock_options(call_acquire);
  REFUSED(lj_lock_acquire(NULL, &a, life_store, S("k"), S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, NULL, life_store, S("k"), S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, NULL, S("k"), S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  CHECK(lock == NULL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, NULL, 0, S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, NULL, 1, S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, S("k"), NULL, 1, NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, S("k"), S("\xff"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, S("k"), S("p"), NULL, -JS_LIMIT - 1, NULL, &err), LJ_EINVAL);
  CHECK(lock == NULL && a.has_verdict == 0);

  REFUSED(lj_lock_renew(NULL, NOW_MS, &err), LJ_EINVAL);
  REFUSED(lj_lock_release(NULL, &err), LJ_EINVAL);
  CHECK(lj_lock_revision(NULL) == 0 && lj_lock_renew_interval_ms(NULL) == 0);
  REFUSED(lj_lock_id(NULL, &len, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_id(&out, &len, NULL, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_lock_body(NULL, &len, NULL, &err), LJ_EINVAL);
  out = (char *)1;
  REFUSED(lj_lock_body(&out, &len, NULL, &err), LJ_EINVAL);
  CHECK(out == NULL);
  lj_lock_destroy(NULL);
  lj_lock_acquisition_clear(NULL);

  /* A lock without a lease has nothing to renew; a released lock is no one's. */
  none.kind = LJ_LOCK_HOLDER_NONE;
  CHECK(lj_lock_acquire(&lock, &a, life_store, "k\0\xff", 3, S("p"), &none, NOW_MS, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && lock != NULL && lj_lock_renew_interval_ms(lock) == 0);
  REFUSED(lj_lock_renew(lock, NOW_MS, &err), LJ_EINVAL);
  REFUSED(lj_lock_renew(lock, INT64_MAX, &err), LJ_EINVAL);
  CHECK(lj_lock_id(&out, &len, lock, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  CHECK(lj_lock_body(&out, &len, lock, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  CHECK(lj_lock_release(lock, NULL) == LJ_OK);
  REFUSED(lj_lock_release(lock, &err), LJ_ENOTFOUND);
  lj_lock_destroy(lock);
  lj_lock_acquisition_clear(&a);
  lj_store_destroy(life_store);
  life_store = NULL;
}

static const struct symbol_case cases[] = {
    {"lj_lock_acquire", case_lock_life},
    {"lj_lock_acquisition_clear", case_lock_life},
    {"lj_lock_renew", case_lock_life},
    {"lj_lock_release", case_lock_life},
    {"lj_lock_revision", case_lock_life},
    {"lj_lock_renew_interval_ms", case_lock_life},
    {"lj_lock_lease_ms", case_lock_life},
    {"lj_lock_id", case_lock_life},
    {"lj_lock_body", case_lock_life},
    {"lj_lock_destroy", case_lock_life},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
