/* Every exported symbol of the C ABI's lock seed part with hostile arguments (NULL, empty,
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

static void case_lock_seed_forms(void) {
  lj_error_t *err = NULL;
  char *out = NULL;
  size_t len = 0, count = 0;
  int alive = -1;
  char *junk = big_junk(BIG);
  lj_execution_ref_t ref = {S("p\xff"), S("r\0"), S("n")};
  lj_execution_ref_t hole = {NULL, 3, S("r"), S("n")};
  /* Arguments are bytes (a NUL in a field given as U+FFFD, the rest as it is). */
  CHECK(lj_execution_describe_args(&out, &len, &count, &ref, NULL) == LJ_OK && count == 8 && out[len - 1] == 0);
  lj_free(out);
  REFUSED(lj_execution_describe_args(&out, &len, &count, &hole, &err), LJ_EINVAL);
  REFUSED(lj_execution_describe_args(&out, &len, &count, NULL, &err), LJ_EINVAL);
  REFUSED(lj_execution_describe_args(NULL, &len, &count, &ref, &err), LJ_EINVAL);
  CHECK(lj_process_alive(&alive, 1e300, NULL) == LJ_OK && alive == 1);
  CHECK(lj_process_alive(&alive, -1e300, NULL) == LJ_OK && alive == 1);
  REFUSED(lj_process_alive(NULL, 1, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_parse(&out, &len, junk, BIG, &err), LJ_EPARSE);
  REFUSED(lj_lock_body_parse(&out, &len, S("{\"purpose\":\"a\0b\"}"), &err), LJ_EPARSE);
  REFUSED(lj_lock_body_parse(&out, &len, NULL, 5, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_parse(NULL, &len, S("{}"), &err), LJ_EINVAL);
  CHECK(out == NULL);
  {
    lj_store_t *store = NULL;
    lj_lock_t *lock = NULL;
    uint64_t rev = 0;
    CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
    CHECK(lj_store_create(&rev, store, S("held"), S("{\"purpose\":\"p\",\"id\":\"a\"}"), NULL) == LJ_OK);
    REFUSED(lj_lock_open(NULL, store, S("held"), S("a"), 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, NULL, S("held"), S("a"), 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, NULL, 4, S("a"), 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, S(""), S("a"), 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, S("held"), NULL, 0, 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, S("held"), S("a"), -2, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, S("none"), S("a"), 0, &err), LJ_ENOTFOUND);
    REFUSED(lj_lock_open(&lock, store, S("held"), S("a\0"), 0, &err), LJ_ECHANGED);
    REFUSED(lj_lock_open(&lock, store, S("held"), junk, BIG, 0, &err), LJ_ECHANGED);
    CHECK(lock == NULL);
    CHECK(lj_lock_lease_ms(NULL) == 0);
    CHECK(lj_lock_open(&lock, store, S("held"), S("a"), 60000, NULL) == LJ_OK && lj_lock_revision(lock) == rev);
    CHECK(lj_lock_lease_ms(lock) == 60000);
    lj_lock_destroy(lock);
    /* The lease it was taken with: this body records none, so the process lease. */
    CHECK(lj_lock_open(&lock, store, S("held"), S("a"), LJ_LOCK_LEASE_AS_TAKEN, NULL) == LJ_OK);
    CHECK(lj_lock_lease_ms(lock) == LJ_LOCK_PROCESS_LEASE_MS);
    CHECK(lj_lock_release(lock, NULL) == LJ_OK);
    lj_lock_destroy(lock);
    lj_store_destroy(store);
  }
  {
    /* The stored lock judged: the key read once, its body and revision handed back. */
    lj_store_t *store = NULL;
    lj_lock_verdict_t v;
    lj_lock_options_t o = LJ_LOCK_OPTIONS_INIT;
    uint64_t rev = 0, judged = 0;
    char *body = NULL;
    size_t body_len = 0;
    CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
    CHECK(lj_store_create(&rev, store, S("ended"), S("{\"purpose\":\"p\",\"leaseUntil\":\"2000-01-01T00:00:00Z\"}"),
                          NULL) == LJ_OK);
    CHECK(lj_store_create(NULL, store, S("junk"), junk, BIG, NULL) == LJ_OK);
    REFUSED(lj_lock_judge_stored(NULL, NULL, NULL, NULL, store, S("ended"), NOW_MS, NULL, &err), LJ_EINVAL);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, NULL, S("ended"), NOW_MS, NULL, &err), LJ_EINVAL);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, NULL, 5, NOW_MS, NULL, &err), LJ_EINVAL);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, S(""), NOW_MS, NULL, &err), LJ_EINVAL);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, S("ended"), JS_LIMIT + 1, NULL, &err), LJ_EINVAL);
    o.version = LJ_LOCK_OPTIONS_VERSION + 1;
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, S("ended"), NOW_MS, &o, &err), LJ_EVERSION);
    REFUSED(lj_lock_judge_stored(&v, &judged, &body, &body_len, store, S("none"), NOW_MS, NULL, &err), LJ_ENOTFOUND);
    CHECK(body == NULL && judged == 0);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, junk, BIG, NOW_MS, NULL, &err), LJ_ENOTFOUND);
    CHECK(lj_lock_judge_stored(&v, &judged, &body, &body_len, store, S("ended"), NOW_MS, NULL, NULL) == LJ_OK);
    CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_LEASE_ENDED && judged == rev && body_len == 51 &&
          memcmp(body, "{\"purpose\":\"p\",\"leaseUntil\":\"2000-01-01T00:00:00Z\"}", 51) == 0);
    lj_free(body);
    lj_lock_verdict_clear(&v);
    /* A value of 16 MiB of junk is no lock body: held for a person, never broken. */
    CHECK(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, S("junk"), NOW_MS, NULL, NULL) == LJ_OK);
    CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_NOT_READABLE && v.manual_removal == 1);
    lj_lock_verdict_clear(&v);
    lj_store_destroy(store);
  }
  free(junk);
}

static const struct symbol_case cases[] = {
    {"lj_execution_describe_args", case_lock_seed_forms},
    {"lj_process_alive", case_lock_seed_forms},
    {"lj_lock_body_parse", case_lock_seed_forms},
    {"lj_lock_open", case_lock_seed_forms},
    {"lj_lock_judge_stored", case_lock_seed_forms},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
