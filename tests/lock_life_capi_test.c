/* The C ABI's lock life, from C: acquire, renew and release over each store, the
 * revision and body kept.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "lock_capi.h"

static void test_life_on(lj_store_t *store) {
  struct here_state hs;
  struct describer d;
  lj_lock_here_t here;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  lj_lock_acquisition_t a;
  lj_lock_t *first = NULL, *second = NULL;
  char *text = NULL;
  size_t len = 0;
  uint64_t first_revision;

  memset(&hs, 0, sizeof hs);
  memset(&d, 0, sizeof d);
  hs.owner = LJ_HOLDER_UNKNOWN;
  here = test_here(&hs);
  opts.here = &here;
  opts.describe = describe;
  opts.describe_payload = &d;

  CHECK(lj_lock_acquire(&first, &a, store, S("locks/state"), S("deploy"), &holder, now_ms, &opts, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && a.has_verdict == 0 && a.broke_at == 0);
  CHECK(first != NULL && a.revision == lj_lock_revision(first) && a.revision > 0);
  CHECK(lj_lock_renew_interval_ms(first) == 200000);
  first_revision = lj_lock_revision(first);
  lj_lock_acquisition_clear(&a);

  /* Held by a live holder (the lease runs). */
  CHECK(lj_lock_acquire(&second, &a, store, S("locks/state"), S("other"), &holder, now_ms + 60000, &opts, NULL) ==
        LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_HELD && a.has_verdict == 1 && second == NULL);
  CHECK(a.verdict.kind == LJ_LOCK_HELD && a.verdict.reason == LJ_LOCK_LEASE_RUNS);
  CHECK(a.verdict.why != NULL && strstr(a.verdict.why, "; its lease runs until 2024-05-01T12:15:00.000Z unless renewed"));
  lj_lock_acquisition_clear(&a);
  CHECK(a.verdict.why == NULL);
  lj_lock_acquisition_clear(NULL);

  /* The stored lock judged as acquire judges it: held at the revision read, its body back. */
  {
    lj_lock_verdict_t v;
    uint64_t judged = 0;
    char *body = NULL;
    size_t body_len = 0;
    CHECK(lj_lock_judge_stored(&v, &judged, &body, &body_len, store, S("locks/state"), now_ms + 60000, &opts, NULL) ==
          LJ_OK);
    CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_LEASE_RUNS && judged == first_revision);
    CHECK(lj_lock_body(&text, &len, first, NULL) == LJ_OK && str_is(body, body_len, text));
    lj_free(text);
    lj_free(body);
    lj_lock_verdict_clear(&v);
    /* Past the lease (now > its end): break, and nothing written. */
    CHECK(lj_lock_judge_stored(&v, &judged, NULL, NULL, store, S("locks/state"), now_ms + 900001, &opts, NULL) ==
          LJ_OK);
    CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_LEASE_ENDED && judged == first_revision);
    lj_lock_verdict_clear(&v);
  }

  /* Renewed, the lease moves and the revision grows. */
  CHECK(lj_lock_renew(first, now_ms + 60000, NULL) == LJ_OK);
  CHECK(lj_lock_revision(first) > first_revision);
  CHECK(lj_lock_body(&text, &len, first, NULL) == LJ_OK);
  CHECK(strstr(text, "\"leaseUntil\":\"2024-05-01T12:16:00.000Z\"") != NULL);
  lj_free(text);
  first_revision = lj_lock_revision(first);

  /* Past the lease: broken at the revision judged, with a larger fencing token. */
  CHECK(lj_lock_acquire(&second, &a, store, S("locks/state"), S("other"), &holder, now_ms + 960001, &opts, NULL) ==
        LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && second != NULL);
  CHECK(a.has_verdict == 1 && a.verdict.kind == LJ_LOCK_BREAK && a.verdict.reason == LJ_LOCK_LEASE_ENDED);
  CHECK(a.broke_at == first_revision && a.revision > a.broke_at);
  lj_lock_acquisition_clear(&a);
  CHECK(d.calls == 0);

  /* The old holder lost it: renew and release say so. */
  CHECK(lj_lock_renew(first, now_ms + 960002, NULL) == LJ_ECHANGED);
  CHECK(lj_lock_release(first, NULL) == LJ_ECHANGED);
  CHECK(lj_lock_id(&text, &len, second, NULL) == LJ_OK && len == 36);
  lj_free(text);
  CHECK(lj_lock_release(second, NULL) == LJ_OK);
  CHECK(lj_lock_release(second, NULL) == LJ_ENOTFOUND);
  lj_lock_destroy(first);
  lj_lock_destroy(second);
  lj_lock_destroy(NULL);

  /* A lock without a lease has nothing to renew. */
  holder.kind = LJ_LOCK_HOLDER_NONE;
  CHECK(lj_lock_acquire(&first, &a, store, S("plain"), S("local"), &holder, now_ms, &opts, NULL) == LJ_OK);
  CHECK(first != NULL && lj_lock_renew_interval_ms(first) == 0);
  CHECK(lj_lock_renew(first, now_ms, NULL) == LJ_EINVAL);
  CHECK(lj_lock_release(first, NULL) == LJ_OK);
  lj_lock_destroy(first);
  lj_lock_acquisition_clear(&a);

  /* Bad arguments. */
  CHECK(lj_lock_acquire(NULL, &a, store, S("k"), S("p"), NULL, now_ms, &opts, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire(&first, NULL, store, S("k"), S("p"), NULL, now_ms, &opts, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire(&first, &a, NULL, S("k"), S("p"), NULL, now_ms, &opts, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire(&first, &a, store, NULL, 0, S("p"), NULL, now_ms, &opts, NULL) == LJ_EINVAL);
  CHECK(lj_lock_renew(NULL, now_ms, NULL) == LJ_EINVAL);
  CHECK(lj_lock_release(NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_revision(NULL) == 0);
  CHECK(lj_lock_renew_interval_ms(NULL) == 0);
  CHECK(lj_lock_id(&text, &len, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_body(NULL, &len, NULL, NULL) == LJ_EINVAL);
}

static void test_life(void) {
  lj_store_t *store = NULL;
  struct tiny t;
  lj_store_callbacks_t cb = tiny_callbacks();
  char dir[] = "/tmp/lj-capi-life-XXXXXX";
  char cmd[600];
  lj_lock_t *lock = NULL;
  lj_lock_acquisition_t a;
  lj_error_t *err = NULL;

  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  test_life_on(store);
  {
    lj_lock_verdict_t v;
    uint64_t judged = 7;
    char *body = NULL;
    size_t body_len = 0;
    CHECK(lj_lock_judge_stored(&v, &judged, &body, &body_len, store, S("locks/none"), now_ms, NULL, &err) ==
          LJ_ENOTFOUND);
    CHECK(body == NULL && judged == 7 && v.why == NULL && strstr(lj_error_message(err), "no lock at locks/none"));
    lj_error_destroy(err);
    err = NULL;
  }
  lj_store_destroy(store);

  CHECK(mkdtemp(dir) != NULL);
  CHECK(lj_store_file_open(&store, dir, strlen(dir), NULL) == LJ_OK);
  test_life_on(store);
  lj_store_destroy(store);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);

  memset(&t, 0, sizeof t);
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_OK);
  test_life_on(store);
  /* A failing store is an error, with nothing acquired. */
  t.fail_with = LJ_ESTORE;
  CHECK(lj_lock_acquire(&lock, &a, store, S("k"), S("p"), NULL, now_ms, NULL, &err) == LJ_ESTORE);
  CHECK(lock == NULL && a.has_verdict == 0);
  lj_error_destroy(err);
  t.fail_with = 0;
  lj_store_destroy(store);
}

int main(void) {
  test_life();
  return CHECK_SUMMARY();
}
