/* The C ABI's lock body, from C: new and renewed bodies, their id and times, every
 * time beyond JavaScript's Date range and every negative lease refused.
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

static void test_bodies(void) {
  char *out = NULL, *renewed = NULL, *id = NULL;
  size_t len = 0, renewed_len = 0, id_len = 0;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  lj_error_t *err = NULL;
  char host[256] = {0};
  char expected[1024];
  int64_t ms = 0;
  static const char fixture_renewed[] =
      "{\"purpose\":\"caelo state lock\",\"id\":\"5f0c6f7e-3a1b-4c2d-9e8f-0a1b2c3d4e5f\",\"host\":\"devbox\","
      "\"machine\":\"0123456789abcdef0123456789abcdef\",\"pid\":48213,\"startedAt\":\"2024-05-01T11:55:00.000Z\","
      "\"leaseUntil\":\"2024-05-01T12:15:00.000Z\"}";
  static const char fixture[] =
      "{\"purpose\":\"caelo state lock\",\"id\":\"5f0c6f7e-3a1b-4c2d-9e8f-0a1b2c3d4e5f\",\"host\":\"devbox\","
      "\"machine\":\"0123456789abcdef0123456789abcdef\",\"pid\":48213,\"startedAt\":\"2024-05-01T11:55:00.000Z\","
      "\"leaseUntil\":\"2024-05-01T12:10:00.000Z\"}";

  CHECK(lj_lock_body_renew(&renewed, &renewed_len, S(fixture), now_ms, LJ_LOCK_PROCESS_LEASE_MS, NULL) == LJ_OK);
  CHECK(str_is(renewed, renewed_len, fixture_renewed));
  lj_free(renewed);
  CHECK(lj_lock_body_renew(&renewed, &renewed_len, S("[]"), now_ms, 1000, &err) == LJ_EPARSE);
  CHECK(strcmp(lj_error_message(err), "the lock body is not a JSON object") == 0);
  lj_error_destroy(err);
  err = NULL;
  CHECK(renewed == NULL);
  CHECK(lj_lock_body_renew(&renewed, &renewed_len, S(fixture), INT64_C(8640000000000000), 1000, NULL) == LJ_EINVAL);

  CHECK(lj_lock_body_id(&id, &id_len, S(fixture), NULL) == LJ_OK);
  CHECK(str_is(id, id_len, "5f0c6f7e-3a1b-4c2d-9e8f-0a1b2c3d4e5f"));
  lj_free(id);
  CHECK(lj_lock_body_id(&id, &id_len, S("{\"purpose\":\"p\"}"), NULL) == LJ_ENOTFOUND);
  CHECK(lj_lock_body_id(&id, &id_len, S("{\"purpose\":\"p\",\"id\":\"a\\u0000b\\ud800c\"}"), NULL) == LJ_OK);
  CHECK(str_is(id, id_len, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c"));
  lj_free(id);
  CHECK(lj_lock_body_id(&id, &id_len, S("nope"), NULL) == LJ_EPARSE);
  CHECK(lj_lock_body_id(NULL, &id_len, S("nope"), NULL) == LJ_EINVAL);

  /* The purpose a lock is taken with when none is named: one text for every door. */
  CHECK(lj_lock_purpose_default(&id, &id_len, S("deploy/main"), 48213, NULL) == LJ_OK);
  CHECK(str_is(id, id_len, "leasejudge lock deploy/main (pid 48213)"));
  lj_free(id);
  CHECK(lj_lock_purpose_default(&id, &id_len, S("k"), 0, NULL) == LJ_OK);
  snprintf(expected, sizeof expected, "leasejudge lock k (pid %ld)", (long)getpid());
  CHECK(str_is(id, id_len, expected));
  lj_free(id);

  /* A new body for this process: its host and pid, the lease from now. */
  CHECK(gethostname(host, sizeof host - 1) == 0);
  holder.lease_ms = 1000;
  CHECK(lj_lock_body_new(&out, &len, S("deploy"), now_ms, &holder, S("id-9"), NULL) == LJ_OK);
  snprintf(expected, sizeof expected, "{\"purpose\":\"deploy\",\"id\":\"id-9\",\"host\":\"%s\",\"machine\":", host);
  CHECK(out != NULL && strncmp(out, expected, strlen(expected)) == 0);
  snprintf(expected, sizeof expected,
           ",\"pid\":%ld,\"startedAt\":\"2024-05-01T12:00:00.000Z\",\"leaseUntil\":\"2024-05-01T12:05:01.000Z\"",
           (long)getpid());
  CHECK(out != NULL && strstr(out, expected) != NULL);
  CHECK(out != NULL && strstr(out, ",\"owner\":\"") != NULL);
  lj_free(out);
  holder.kind = LJ_LOCK_HOLDER_EXECUTION;
  holder.lease_ms = 3600000;
  holder.execution.project_id = "p";
  holder.execution.project_id_len = 1;
  holder.execution.region = "r";
  holder.execution.region_len = 1;
  holder.execution.name = "n";
  holder.execution.name_len = 1;
  CHECK(lj_lock_body_new(&out, &len, S("up"), now_ms, &holder, NULL, 0, NULL) == LJ_OK);
  CHECK(out != NULL && strstr(out, ",\"execution\":{\"projectId\":\"p\",\"region\":\"r\",\"name\":\"n\"},"
                                   "\"leaseUntil\":\"2024-05-01T13:05:00.000Z\"}") != NULL);
  CHECK(out != NULL && strstr(out, "owner") == NULL);
  CHECK(lj_lock_body_id(&id, &id_len, out, len, NULL) == LJ_OK && id_len == 36);
  lj_free(id);
  lj_free(out);
  holder.execution.name_len = 0;
  CHECK(lj_lock_body_new(&out, &len, S("up"), now_ms, &holder, NULL, 0, &err) == LJ_EINVAL);
  CHECK(strcmp(lj_error_message(err), "an execution needs its project, region and name") == 0);
  lj_error_destroy(err);
  err = NULL;
  holder.execution.name = NULL;
  holder.execution.name_len = 1;
  CHECK(lj_lock_body_new(&out, &len, S("up"), now_ms, &holder, NULL, 0, NULL) == LJ_EINVAL);
  holder.kind = 9;
  CHECK(lj_lock_body_new(&out, &len, S("up"), now_ms, &holder, NULL, 0, NULL) == LJ_EINVAL);
  holder.kind = LJ_LOCK_HOLDER_NONE;
  CHECK(lj_lock_body_new(&out, &len, S("up"), now_ms, &holder, NULL, 0, NULL) == LJ_OK);
  CHECK(out != NULL && strstr(out, "leaseUntil") == NULL);
  lj_free(out);
  holder.version = LJ_LOCK_HOLDER_VERSION + 1;
  CHECK(lj_lock_body_new(&out, &len, S("up"), now_ms, &holder, NULL, 0, NULL) == LJ_EVERSION);
  /* Version 2's pid: the body names that process (its pid and owner token). */
  holder.version = LJ_LOCK_HOLDER_VERSION;
  holder.kind = LJ_LOCK_HOLDER_PROCESS;
  holder.pid = (int32_t)getppid();
  CHECK(lj_lock_body_new(&out, &len, S("up"), now_ms, &holder, NULL, 0, NULL) == LJ_OK);
  {
    char pid_field[32];
    snprintf(pid_field, sizeof pid_field, "\"pid\":%d,", (int)getppid());
    CHECK(out != NULL && strstr(out, pid_field) != NULL);
  }
  lj_free(out);
  holder.pid = -3;
  CHECK(lj_lock_body_new(&out, &len, S("up"), now_ms, &holder, NULL, 0, NULL) == LJ_EINVAL);
  holder.pid = 0;
  CHECK(lj_lock_body_new(&out, &len, S("\xff"), now_ms, NULL, NULL, 0, NULL) == LJ_EINVAL);
  CHECK(lj_lock_body_new(&out, &len, NULL, 1, now_ms, NULL, NULL, 0, NULL) == LJ_EINVAL);
  CHECK(lj_lock_body_new(&out, &len, S("p"), LJ_TIME_DEFAULT, NULL, NULL, 0, NULL) == LJ_OK);
  lj_free(out);

  CHECK(lj_lock_time_format(&out, &len, now_ms, NULL) == LJ_OK);
  CHECK(str_is(out, len, "2024-05-01T12:00:00.000Z"));
  lj_free(out);
  CHECK(lj_lock_time_format(&out, &len, INT64_C(8640000000000001), NULL) == LJ_EINVAL);
  CHECK(lj_lock_time_parse(&ms, S("2024-05-01T14:00:00+02:00"), NULL) == LJ_OK && ms == now_ms);
  CHECK(lj_lock_time_parse(&ms, S("May 1 2024"), NULL) == LJ_EPARSE);
  CHECK(lj_lock_time_parse(NULL, S("2024"), NULL) == LJ_EINVAL);
}

/* Every time argument beyond JavaScript's Date range is refused before any
 * arithmetic is done on it (INT64_MIN + 1 once overflowed a multiplication). */
static void test_times_out_of_range(void) {
  static const char body[] = "{\"purpose\":\"p\",\"host\":\"h\",\"pid\":1,\"leaseUntil\":\"2024-05-01T12:10:00.000Z\"}";
  const int64_t limit = INT64_C(8640000000000000);
  const int64_t bad[] = {INT64_MIN + 1, INT64_MIN + 807, -limit - 1, limit + 1, INT64_MAX};
  lj_lock_verdict_t v;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  struct here_state hs;
  lj_lock_here_t here;
  lj_store_t *store = NULL;
  lj_lock_t *lock = NULL;
  lj_lock_acquisition_t a;
  lj_error_t *err = NULL;
  char *out = NULL;
  size_t len = 0, i;

  memset(&hs, 0, sizeof hs);
  here = test_here(&hs);
  opts.here = &here;
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(lj_lock_judge(&v, S(body), bad[i], &opts, &err) == LJ_EINVAL);
    CHECK(v.why == NULL);
    CHECK(strcmp(lj_error_message(err), "the time is outside JavaScript's Date range (+-8.64e15 ms)") == 0);
    lj_error_destroy(err);
    err = NULL;
    CHECK(lj_lock_body_renew(&out, &len, S(body), bad[i], 1000, NULL) == LJ_EINVAL);
    CHECK(out == NULL);
    CHECK(lj_lock_body_new(&out, &len, S("p"), bad[i], NULL, NULL, 0, NULL) == LJ_EINVAL);
    CHECK(out == NULL);
    CHECK(lj_lock_time_format(&out, &len, bad[i], NULL) == LJ_EINVAL);
    CHECK(lj_lock_acquire(&lock, &a, store, S("k"), S("p"), NULL, bad[i], &opts, NULL) == LJ_EINVAL);
    CHECK(lock == NULL && a.has_verdict == 0);
  }
  /* The range's ends are times: 8.64e15 ms is +275760-09-13T00:00:00.000Z. */
  CHECK(lj_lock_judge(&v, S(body), limit, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_LEASE_ENDED);
  lj_lock_verdict_clear(&v);
  CHECK(lj_lock_judge(&v, S(body), -limit, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_LEASE_RUNS);
  lj_lock_verdict_clear(&v);
  /* A renewal beyond the range is refused too; the held lock stays as it was. */
  CHECK(lj_lock_acquire(&lock, &a, store, S("k"), S("p"), NULL, now_ms, &opts, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && lock != NULL);
  CHECK(lj_lock_renew(lock, INT64_MIN + 1, NULL) == LJ_EINVAL);
  CHECK(lj_lock_revision(lock) == a.revision);
  CHECK(lj_lock_release(lock, NULL) == LJ_OK);
  lj_lock_destroy(lock);
  lj_lock_acquisition_clear(&a);
  lj_store_destroy(store);
}

/* A negative lease is refused by every producer. */
static void test_negative_leases(void) {
  static const char body[] = "{\"purpose\":\"p\",\"leaseUntil\":\"2024-05-01T12:10:00.000Z\"}";
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  lj_store_t *store = NULL;
  lj_lock_t *lock = NULL;
  lj_lock_acquisition_t a;
  char *out = NULL;
  size_t len = 0;
  lj_error_t *err = NULL;

  holder.lease_ms = -1;
  CHECK(lj_lock_body_new(&out, &len, S("p"), now_ms, &holder, S("id-1"), &err) == LJ_EINVAL);
  CHECK(out == NULL && strcmp(lj_error_message(err), "the lease is negative") == 0);
  lj_error_destroy(err);
  CHECK(lj_lock_body_renew(&out, &len, S(body), now_ms, -1, NULL) == LJ_EINVAL);
  CHECK(out == NULL);
  holder.kind = LJ_LOCK_HOLDER_EXECUTION;
  holder.execution.project_id = "p";
  holder.execution.project_id_len = 1;
  holder.execution.region = "r";
  holder.execution.region_len = 1;
  holder.execution.name = "n";
  holder.execution.name_len = 1;
  holder.lease_ms = INT64_MIN;
  CHECK(lj_lock_body_new(&out, &len, S("p"), now_ms, &holder, S("id-1"), NULL) == LJ_EINVAL);
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  CHECK(lj_lock_acquire(&lock, &a, store, S("k"), S("p"), &holder, now_ms, NULL, NULL) == LJ_EINVAL);
  CHECK(lock == NULL);
  lj_store_destroy(store);
  /* A lease of 0 is a lease: it ends with the skew. */
  holder.kind = LJ_LOCK_HOLDER_PROCESS;
  holder.lease_ms = 0;
  CHECK(lj_lock_body_renew(&out, &len, S(body), now_ms, 0, NULL) == LJ_OK);
  CHECK(str_is(out, len, "{\"purpose\":\"p\",\"leaseUntil\":\"2024-05-01T12:05:00.000Z\"}"));
  lj_free(out);
}

int main(void) {
  test_bodies();
  test_times_out_of_range();
  test_negative_leases();
  return CHECK_SUMMARY();
}
