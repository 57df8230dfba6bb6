/* The C ABI's lock and store parts, from C: judging with C callbacks, verdict forms,
 * execution state, bodies, stores (memory, file, callbacks) and the lock's life,
 * with NULL, out-of-range and failing callbacks. TAP-style output, a closing
 * "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "dead_pid.h"



/* 2024-05-01T12:00:00.000Z */
static const int64_t now_ms = INT64_C(1714564800000);

static const char process_body[] =
    "{\"purpose\":\"deploy\",\"id\":\"i-1\",\"host\":\"build-7\",\"machine\":\"m-aaa\",\"pid\":200,"
    "\"startedAt\":\"2024-05-01T11:00:00.000Z\",\"leaseUntil\":\"2024-05-01T12:15:00.000Z\"}";
static const char execution_body[] =
    "{\"purpose\":\"upgrade\",\"host\":\"localhost\",\"machine\":null,\"pid\":1,"
    "\"startedAt\":\"2024-05-01T11:00:00.000Z\",\"execution\":{\"projectId\":\"p\",\"region\":\"r\","
    "\"name\":\"job-abc\"},\"leaseUntil\":\"2024-05-01T12:00:00.000Z\"}";

static int str_is(const char *got, size_t len, const char *want) {
  return got != NULL && len == strlen(want) && memcmp(got, want, len) == 0 && got[len] == '\0';
}

/* --- callbacks ------------------------------------------------------------------ */

struct describer {
  int calls;
  int kind;
  const char *detail;
  int stop;
  int set_nothing;
  char last_name[64];
};

static int describe(lj_execution_state_t *state, const lj_execution_ref_t *ref, void *payload) {
  struct describer *d = (struct describer *)payload;
  d->calls++;
  if (ref->name_len < sizeof d->last_name) {
    memcpy(d->last_name, ref->name, ref->name_len);
    d->last_name[ref->name_len] = '\0';
  }
  if (d->stop) return 7;
  if (d->set_nothing) return 0;
  return lj_execution_state_set(state, d->kind, d->detail, d->detail == NULL ? 0 : strlen(d->detail));
}

struct here_state {
  int alive_calls;
  int stop_alive;
  int stop_owner;
  int out_of_range;
  lj_holder_state_t owner;
};

static int alive(int *out_alive, double pid, void *payload) {
  struct here_state *h = (struct here_state *)payload;
  h->alive_calls++;
  if (h->stop_alive) return 1;
  *out_alive = !(pid == 200.0 || pid == 201.0);
  return 0;
}

static int owner_state(lj_holder_state_t *out, const char *token, size_t len, void *payload) {
  struct here_state *h = (struct here_state *)payload;
  (void)token;
  (void)len;
  if (h->stop_owner) return 2;
  if (h->out_of_range) {
    int bad = 42;
    memcpy(out, &bad, sizeof bad); /* a C caller may store anything in an enum field */
    return 0;
  }
  *out = h->owner;
  return 0;
}

static lj_lock_here_t test_here(struct here_state *state) {
  lj_lock_here_t here = LJ_LOCK_HERE_INIT;
  here.host = "build-7";
  here.host_len = 7;
  here.machine_kind = LJ_MACHINE_ID;
  here.machine = "m-aaa";
  here.machine_len = 5;
  here.alive = alive;
  here.owner_state = owner_state;
  here.payload = state;
  return here;
}

/* --- the verdict -------------------------------------------------------------------- */

static void test_names(void) {
  CHECK(strcmp(lj_lock_reason_code(LJ_LOCK_NOT_READABLE), "not_readable") == 0);
  CHECK(strcmp(lj_lock_reason_code(LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_ENDED), "execution_not_found_lease_ended") == 0);
  CHECK(strcmp(lj_lock_reason_code(LJ_LOCK_PROCESS_GONE), "process_gone") == 0);
  CHECK(strcmp(lj_lock_reason_code(LJ_LOCK_PID_REUSED), "pid_reused") == 0);
  CHECK(strcmp(lj_lock_reason_code(0), "") == 0);
  CHECK(strcmp(lj_lock_reason_code(LJ_LOCK_STORE_LEASE_ENDED), "store_lease_ended") == 0);
  CHECK(strcmp(lj_lock_reason_code(LJ_LOCK_STORE_LEASE_UNKNOWN), "store_lease_unknown") == 0);
  CHECK(LJ_LOCK_STORE_LEASE_ENDED == 15 && LJ_LOCK_STORE_LEASE_UNKNOWN == 16);
  CHECK(strcmp(lj_lock_reason_code(17), "") == 0);
  CHECK(strcmp(lj_lock_kind_name(LJ_LOCK_BREAK), "break") == 0);
  CHECK(strcmp(lj_lock_kind_name(LJ_LOCK_HELD), "held") == 0);
  CHECK(strcmp(lj_lock_kind_name(LJ_LOCK_UNKNOWN), "unknown") == 0);
  CHECK(strcmp(lj_lock_kind_name(3), "") == 0);
  CHECK(strcmp(lj_lock_kind_name(-1), "") == 0);
}

static void test_judge(void) {
  struct describer d;
  struct here_state hs;
  lj_lock_here_t here;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  lj_lock_verdict_t v;
  lj_error_t *err = NULL;
  char *out = NULL;
  size_t len = 0;

  memset(&d, 0, sizeof d);
  memset(&hs, 0, sizeof hs);
  hs.owner = LJ_HOLDER_UNKNOWN;
  here = test_here(&hs);
  opts.describe = describe;
  opts.describe_payload = &d;
  opts.here = &here;

  /* A process holder whose pid is dead here: break, and Cloud Run is never asked. */
  CHECK(lj_lock_judge(&v, S(process_body), now_ms, &opts, &err) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_PROCESS_GONE && v.manual_removal == 0);
  CHECK(str_is(v.why, v.why_len,
               "deploy (on build-7, pid 200, started 2024-05-01T11:00:00.000Z) has ended (its process is gone on "
               "this machine)"));
  CHECK(d.calls == 0);
  CHECK(hs.alive_calls == 1);
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len,
               "break process_gone deploy (on build-7, pid 200, started 2024-05-01T11:00:00.000Z) has ended (its "
               "process is gone on this machine)"));
  lj_free(out);
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len,
               "{\"kind\":\"break\",\"reason\":\"process_gone\",\"manualRemoval\":false,\"why\":\"deploy (on build-7, "
               "pid 200, started 2024-05-01T11:00:00.000Z) has ended (its process is gone on this machine)\"}"));
  lj_free(out);
  lj_lock_verdict_clear(&v);
  CHECK(v.why == NULL && v.why_len == 0);
  lj_lock_verdict_clear(NULL);

  /* Exactly at the lease end: not expired. */
  CHECK(lj_lock_judge(&v, S("{\"purpose\":\"p\",\"leaseUntil\":\"2024-05-01T12:00:00.000Z\"}"), now_ms, &opts, NULL) ==
        LJ_OK);
  CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_LEASE_RUNS && v.manual_removal == 0);
  CHECK(str_is(v.why, v.why_len, "held by p; its lease runs until 2024-05-01T12:00:00.000Z unless renewed"));
  lj_lock_verdict_clear(&v);
  CHECK(lj_lock_judge(&v, S("{\"purpose\":\"p\",\"leaseUntil\":\"2024-05-01T12:00:00.000Z\"}"), now_ms + 1, &opts,
                      NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_LEASE_ENDED);
  lj_lock_verdict_clear(&v);

  /* Not readable: a verdict, not an error; a NUL quoted from the body is U+FFFD. */
  CHECK(lj_lock_judge(&v, "{\"a\0", 4, now_ms, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_NOT_READABLE && v.manual_removal == 1);
  CHECK(str_is(v.why, v.why_len, "the lock's holder is not readable ({\"a\xEF\xBF\xBD)"));
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len,
               "{\"kind\":\"held\",\"reason\":\"not_readable\",\"manualRemoval\":true,\"why\":\"the lock's holder is "
               "not readable ({\\\"a\xEF\xBF\xBD)\"}"));
  lj_free(out);
  lj_lock_verdict_clear(&v);
  CHECK(lj_lock_judge(&v, NULL, 0, now_ms, &opts, NULL) == LJ_OK);
  CHECK(str_is(v.why, v.why_len, "the lock's holder is not readable (empty)"));
  lj_lock_verdict_clear(&v);
  CHECK(lj_lock_judge(&v, S("\xff\xfe"), now_ms, &opts, NULL) == LJ_OK);
  CHECK(str_is(v.why, v.why_len, "the lock's holder is not readable (\xEF\xBF\xBD\xEF\xBF\xBD)"));
  lj_lock_verdict_clear(&v);

  /* An execution holder: the describer decides. */
  d.kind = LJ_EXECUTION_FINISHED;
  d.detail = "succeeded";
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
  CHECK(d.calls == 1 && strcmp(d.last_name, "job-abc") == 0);
  CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_EXECUTION_FINISHED);
  CHECK(str_is(v.why, v.why_len,
               "upgrade (run job-abc, started 2024-05-01T11:00:00.000Z) has succeeded, but its lock was left behind"));
  lj_lock_verdict_clear(&v);
  d.kind = LJ_EXECUTION_RUNNING;
  d.detail = NULL;
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms + 86400000, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_EXECUTION_RUNNING && v.manual_removal == 0);
  lj_lock_verdict_clear(&v);
  d.kind = LJ_EXECUTION_NOT_FOUND;
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_RUNS);
  lj_lock_verdict_clear(&v);
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms + 1, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_ENDED);
  lj_lock_verdict_clear(&v);
  d.kind = LJ_EXECUTION_UNKNOWN;
  d.detail = "PERMISSION_DENIED";
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_UNKNOWN && v.reason == LJ_LOCK_EXECUTION_UNKNOWN);
  CHECK(str_is(v.why, v.why_len,
               "could not check whether upgrade (run job-abc, started 2024-05-01T11:00:00.000Z) is still running: "
               "PERMISSION_DENIED"));
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_OK);
  CHECK(strncmp(out, "unknown execution_unknown could not check", 41) == 0);
  lj_free(out);
  lj_lock_verdict_clear(&v);
  d.set_nothing = 1;
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_UNKNOWN);
  CHECK(strstr(v.why, "is still running: the describer gave no state") != NULL);
  lj_lock_verdict_clear(&v);
  d.set_nothing = 0;

  /* The owner token (leasejudge's extra field) proves a reboot. */
  hs.owner = LJ_HOLDER_OTHER_BOOT;
  CHECK(lj_lock_judge(&v,
                      S("{\"purpose\":\"p\",\"host\":\"build-7\",\"machine\":\"m-aaa\",\"pid\":300,"
                        "\"owner\":\"11111111-2222-3333-4444-555555555555.300.lv9w0lds\"}"),
                      now_ms, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_HOLDER_REBOOTED);
  CHECK(str_is(v.why, v.why_len, "p (on build-7, pid 300) has ended (this machine has restarted since it took the lock)"));
  lj_lock_verdict_clear(&v);
  /* An owner state out of range counts as unknown: the lease decides. */
  hs.out_of_range = 1;
  CHECK(lj_lock_judge(&v,
                      S("{\"purpose\":\"p\",\"host\":\"build-7\",\"machine\":\"m-aaa\",\"pid\":300,"
                        "\"owner\":\"11111111-2222-3333-4444-555555555555.300.lv9w0lds\"}"),
                      now_ms, &opts, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_NO_LEASE);
  lj_lock_verdict_clear(&v);
  hs.out_of_range = 0;

  /* Callbacks that stop: LJ_EUSER, and nothing to free. */
  d.stop = 1;
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, &err) == LJ_EUSER);
  CHECK(lj_error_code(err) == LJ_EUSER);
  CHECK(strcmp(lj_error_message(err), "the describe callback asked to stop (7)") == 0);
  CHECK(v.why == NULL);
  lj_error_destroy(err);
  err = NULL;
  d.stop = 0;
  hs.stop_alive = 1;
  CHECK(lj_lock_judge(&v, S(process_body), now_ms, &opts, NULL) == LJ_EUSER);
  hs.stop_alive = 0;
  hs.stop_owner = 1;
  CHECK(lj_lock_judge(&v,
                      S("{\"purpose\":\"p\",\"host\":\"build-7\",\"machine\":\"m-aaa\",\"pid\":300,"
                        "\"owner\":\"11111111-2222-3333-4444-555555555555.300.lv9w0lds\"}"),
                      now_ms, &opts, NULL) == LJ_EUSER);
  hs.stop_owner = 0;

  /* Bad arguments. */
  CHECK(lj_lock_judge(NULL, S(process_body), now_ms, &opts, NULL) == LJ_EINVAL);
  CHECK(lj_lock_judge(&v, NULL, 3, now_ms, &opts, NULL) == LJ_EINVAL);
  opts.version = 99;
  CHECK(lj_lock_judge(&v, S(process_body), now_ms, &opts, &err) == LJ_EVERSION);
  CHECK(strcmp(lj_error_message(err), "lj_lock_options_t version 99 is unknown (this library reads versions 1 to 1)") == 0);
  lj_error_destroy(err);
  err = NULL;
  opts.version = LJ_LOCK_OPTIONS_VERSION;
  here.version = 0;
  CHECK(lj_lock_judge(&v, S(process_body), now_ms, &opts, NULL) == LJ_EVERSION);
  here.version = LJ_LOCK_HERE_VERSION;
  here.machine_kind = 9;
  CHECK(lj_lock_judge(&v, S(process_body), now_ms, &opts, NULL) == LJ_EINVAL);
  here.machine_kind = LJ_MACHINE_ID;
  here.machine = NULL;
  CHECK(lj_lock_judge(&v, S(process_body), now_ms, &opts, NULL) == LJ_EINVAL);
  here.machine = "m-aaa";
  here.host = NULL;
  CHECK(lj_lock_judge(&v, S(process_body), now_ms, &opts, NULL) == LJ_EINVAL);
  here.host = "build-7";

  /* Option structs initialise to the documented defaults. */
  {
    lj_lock_options_t o;
    lj_lock_here_t h;
    lj_lock_holder_t hold;
    CHECK(lj_lock_options_init(&o, LJ_LOCK_OPTIONS_VERSION) == LJ_OK);
    CHECK(o.version == LJ_LOCK_OPTIONS_VERSION && o.describe == NULL && o.gcloud_timeout_ms == 60000 && o.here == NULL &&
          o.gcloud_env == NULL);
    CHECK(lj_lock_options_init(&o, 2) == LJ_EVERSION);
    CHECK(lj_lock_options_init(NULL, LJ_LOCK_OPTIONS_VERSION) == LJ_EINVAL);
    CHECK(lj_lock_here_init(&h, LJ_LOCK_HERE_VERSION) == LJ_OK);
    CHECK(h.machine_kind == LJ_MACHINE_NONE && h.alive == NULL);
    CHECK(lj_lock_here_init(&h, 0) == LJ_EVERSION);
    CHECK(lj_lock_holder_init(&hold, LJ_LOCK_HOLDER_VERSION) == LJ_OK);
    CHECK(hold.kind == LJ_LOCK_HOLDER_PROCESS && hold.lease_ms == LJ_LOCK_PROCESS_LEASE_MS);
    CHECK(lj_lock_holder_init(&hold, 5) == LJ_EVERSION);
    CHECK(lj_lock_holder_init(NULL, 1) == LJ_EINVAL);
  }

  /* Verdict forms refuse what is out of range. */
  {
    lj_lock_verdict_t bad;
    memset(&bad, 0, sizeof bad);
    bad.kind = LJ_LOCK_HELD;
    bad.reason = (lj_lock_reason_t)0;
    CHECK(lj_lock_verdict_json(&out, &len, &bad, NULL) == LJ_EINVAL);
    CHECK(out == NULL);
    bad.reason = (lj_lock_reason_t)99;
    CHECK(lj_lock_verdict_json(&out, &len, &bad, NULL) == LJ_EINVAL);
    bad.reason = LJ_LOCK_NO_LEASE;
    bad.kind = (lj_lock_kind_t)9;
    CHECK(lj_lock_verdict_text(&out, &len, &bad, NULL) == LJ_EINVAL);
    bad.kind = LJ_LOCK_HELD;
    bad.reason = LJ_LOCK_NO_LEASE;
    bad.why = NULL;
    bad.why_len = 4;
    CHECK(lj_lock_verdict_text(&out, &len, &bad, NULL) == LJ_EINVAL);
    bad.why_len = 0;
    bad.manual_removal = 1;
    CHECK(lj_lock_verdict_text(&out, &len, &bad, NULL) == LJ_OK);
    CHECK(str_is(out, len, "held no_lease (only a person can remove it)"));
    lj_free(out);
    CHECK(lj_lock_verdict_text(NULL, &len, &bad, NULL) == LJ_EINVAL);
    CHECK(lj_lock_verdict_json(&out, &len, NULL, NULL) == LJ_EINVAL);
  }
}

/* --- execution state --------------------------------------------------------------------- */

static void test_execution_state(void) {
  lj_execution_kind_t kind = LJ_EXECUTION_RUNNING;
  char *detail = NULL;
  size_t len = 0;
  lj_execution_ref_t ref;
  const char *old_path = getenv("PATH");
  char path[4096];

  CHECK(lj_execution_state_parse(&kind, &detail, &len, 0,
                                 S("{\"status\":{\"conditions\":[{\"type\":\"Completed\",\"status\":\"False\","
                                   "\"reason\":\"Cancelled\"}]}}"),
                                 NULL, 0, NULL) == LJ_OK);
  CHECK(kind == LJ_EXECUTION_FINISHED && str_is(detail, len, "cancelled"));
  lj_free(detail);
  CHECK(lj_execution_state_parse(&kind, &detail, &len, 1, NULL, 0, S("ERROR: NOT_FOUND"), NULL) == LJ_OK);
  CHECK(kind == LJ_EXECUTION_NOT_FOUND && str_is(detail, len, ""));
  lj_free(detail);
  CHECK(lj_execution_state_parse(&kind, &detail, &len, 1, NULL, 0, "denied\0here", 11, NULL) == LJ_OK);
  CHECK(kind == LJ_EXECUTION_UNKNOWN && str_is(detail, len, "denied\xEF\xBF\xBDhere"));
  lj_free(detail);
  CHECK(lj_execution_state_parse(&kind, &detail, &len, 4, NULL, 0, NULL, 0, NULL) == LJ_OK);
  CHECK(kind == LJ_EXECUTION_UNKNOWN && str_is(detail, len, "gcloud exited 4"));
  lj_free(detail);
  CHECK(lj_execution_state_parse(&kind, &detail, &len, 0, S("{}"), NULL, 0, NULL) == LJ_OK);
  CHECK(kind == LJ_EXECUTION_RUNNING);
  lj_free(detail);
  CHECK(lj_execution_state_parse(NULL, &detail, &len, 0, S("{}"), NULL, 0, NULL) == LJ_EINVAL);
  CHECK(lj_execution_state_parse(&kind, &detail, &len, 0, NULL, 2, NULL, 0, NULL) == LJ_EINVAL);
  CHECK(lj_execution_state_set(NULL, LJ_EXECUTION_RUNNING, NULL, 0) == LJ_EINVAL);

  /* Through the fake gcloud on PATH. */
  snprintf(path, sizeof path, "%s/tests/fixtures/lock:%s", LEASEJUDGE_SOURCE_DIR, old_path ? old_path : "/usr/bin:/bin");
  setenv("PATH", path, 1);
  ref.project_id = "proj";
  ref.project_id_len = 4;
  ref.region = "r1";
  ref.region_len = 2;
  ref.name = "job-x";
  ref.name_len = 5;
  setenv("LJ_FAKE_GCLOUD", "failed", 1);
  CHECK(lj_execution_describe(&kind, &detail, &len, &ref, 20000, NULL) == LJ_OK);
  CHECK(kind == LJ_EXECUTION_FINISHED && str_is(detail, len, "nonzeroexitcode"));
  lj_free(detail);
  setenv("LJ_FAKE_GCLOUD", "hang", 1);
  CHECK(lj_execution_describe(&kind, &detail, &len, &ref, 200, NULL) == LJ_OK);
  CHECK(kind == LJ_EXECUTION_UNKNOWN && str_is(detail, len, "gcloud did not finish within 200 ms and was killed"));
  lj_free(detail);
  CHECK(lj_execution_describe(&kind, &detail, &len, NULL, 200, NULL) == LJ_EINVAL);
  ref.name = NULL;
  CHECK(lj_execution_describe(&kind, &detail, &len, &ref, 200, NULL) == LJ_EINVAL);
  ref.name = "job-x";

  /* The judge with no describer runs gcloud itself. */
  {
    struct here_state hs;
    lj_lock_here_t here;
    lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
    lj_lock_verdict_t v;
    memset(&hs, 0, sizeof hs);
    here = test_here(&hs);
    opts.here = &here;
    opts.gcloud_timeout_ms = 20000;
    setenv("LJ_FAKE_GCLOUD", "cancelled", 1);
    CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
    CHECK(v.kind == LJ_LOCK_BREAK);
    CHECK(str_is(v.why, v.why_len,
                 "upgrade (run job-abc, started 2024-05-01T11:00:00.000Z) has cancelled, but its lock was left behind"));
    lj_lock_verdict_clear(&v);
    /* gcloud runs in the environment given (a shell's exports), not the process's. */
    {
      char env_path[4200];
      char env_mode[] = "LJ_FAKE_GCLOUD=running";
      char *env[3];
      snprintf(env_path, sizeof env_path, "PATH=%s", path);
      env[0] = env_path;
      env[1] = env_mode;
      env[2] = NULL;
      opts.gcloud_env = env;
      CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
      CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_EXECUTION_RUNNING);
      lj_lock_verdict_clear(&v);
    }
  }
  unsetenv("LJ_FAKE_GCLOUD");
  setenv("PATH", old_path ? old_path : "/usr/bin:/bin", 1);
}

/* --- bodies and times --------------------------------------------------------------------- */

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
  CHECK(lj_lock_body_new(&out, &len, S("p"), LJ_LOCK_NOW, NULL, NULL, 0, NULL) == LJ_OK);
  lj_free(out);

  CHECK(lj_lock_time_format(&out, &len, now_ms, NULL) == LJ_OK);
  CHECK(str_is(out, len, "2024-05-01T12:00:00.000Z"));
  lj_free(out);
  CHECK(lj_lock_time_format(&out, &len, INT64_C(8640000000000001), NULL) == LJ_EINVAL);
  CHECK(lj_lock_time_parse(&ms, S("2024-05-01T14:00:00+02:00"), NULL) == LJ_OK && ms == now_ms);
  CHECK(lj_lock_time_parse(&ms, S("May 1 2024"), NULL) == LJ_EPARSE);
  CHECK(lj_lock_time_parse(NULL, S("2024"), NULL) == LJ_EINVAL);
}

/* --- stores ------------------------------------------------------------------------------------ */

/* A one-key store in C, for the callback store. */
struct tiny {
  int has;
  char value[2048];
  size_t len;
  uint64_t revision;
  uint64_t last;
  int fail_with;
  int released;
  int fail_updates; /* the next this many updates fail (LJ_ESTORE) */
};

static int tiny_keys(lj_store_sink_t *sink, void *payload) {
  struct tiny *t = (struct tiny *)payload;
  if (t->fail_with) return t->fail_with;
  return t->has ? lj_store_sink_key(sink, "k", 1) : LJ_OK;
}
static int tiny_get(lj_store_sink_t *sink, const char *key, size_t key_len, void *payload) {
  struct tiny *t = (struct tiny *)payload;
  (void)key;
  (void)key_len;
  if (t->fail_with) return t->fail_with;
  if (!t->has) return LJ_OK;
  return lj_store_sink_put(sink, t->value, t->len, t->revision);
}
static int tiny_update(uint64_t *out, const char *key, size_t key_len, const char *value, size_t value_len,
                       uint64_t revision, void *payload) {
  struct tiny *t = (struct tiny *)payload;
  (void)key;
  (void)key_len;
  if (t->fail_with) return t->fail_with;
  if (t->fail_updates > 0) {
    t->fail_updates--;
    return LJ_ESTORE;
  }
  if (!t->has || t->revision != revision) return LJ_ECHANGED;
  if (value_len > sizeof t->value) return LJ_ESTORE;
  memcpy(t->value, value, value_len);
  t->len = value_len;
  t->revision = *out = ++t->last;
  return LJ_OK;
}
static int tiny_create(uint64_t *out, const char *key, size_t key_len, const char *value, size_t value_len,
                       void *payload) {
  struct tiny *t = (struct tiny *)payload;
  (void)key;
  (void)key_len;
  if (t->fail_with) return t->fail_with;
  if (t->has) return LJ_EEXISTS;
  if (value_len > sizeof t->value) return LJ_ESTORE;
  memcpy(t->value, value, value_len);
  t->len = value_len;
  t->has = 1;
  t->revision = *out = ++t->last;
  return LJ_OK;
}
static int tiny_remove(const char *key, size_t key_len, uint64_t revision, void *payload) {
  struct tiny *t = (struct tiny *)payload;
  (void)key;
  (void)key_len;
  if (t->fail_with) return t->fail_with;
  if (!t->has || t->revision != revision) return LJ_ECHANGED;
  t->has = 0;
  return LJ_OK;
}
static void tiny_release(void *payload) { ((struct tiny *)payload)->released++; }

static lj_store_callbacks_t tiny_callbacks(void) {
  lj_store_callbacks_t cb = LJ_STORE_CALLBACKS_INIT;
  cb.keys = tiny_keys;
  cb.get = tiny_get;
  cb.update = tiny_update;
  cb.create = tiny_create;
  cb.remove = tiny_remove;
  cb.release = tiny_release;
  return cb;
}

struct listing {
  int count;
  char first[64];
  int stop;
};

static int list_key(const char *key, size_t key_len, void *payload) {
  struct listing *l = (struct listing *)payload;
  if (l->count == 0 && key_len < sizeof l->first) {
    memcpy(l->first, key, key_len);
    l->first[key_len] = '\0';
  }
  l->count++;
  return l->stop;
}

static void test_store_ops(lj_store_t *store) {
  uint64_t r1 = 0, r2 = 0, rev = 0;
  char *value = NULL;
  size_t len = 0;
  struct listing l;
  memset(&l, 0, sizeof l);
  CHECK(lj_store_keys(store, list_key, &l, NULL) == LJ_OK && l.count == 0);
  CHECK(lj_store_get(&value, &len, &rev, store, S("k"), NULL) == LJ_ENOTFOUND);
  CHECK(value == NULL);
  CHECK(lj_store_create(&r1, store, S("k"), S("v1"), NULL) == LJ_OK && r1 > 0);
  CHECK(lj_store_create(&r2, store, S("k"), S("v2"), NULL) == LJ_EEXISTS);
  CHECK(lj_store_keys(store, list_key, &l, NULL) == LJ_OK && l.count == 1 && strcmp(l.first, "k") == 0);
  l.stop = 3;
  CHECK(lj_store_keys(store, list_key, &l, NULL) == LJ_EUSER && l.count == 2);
  CHECK(lj_store_keys(store, NULL, &l, NULL) == LJ_EINVAL);
  CHECK(lj_store_keys(NULL, list_key, &l, NULL) == LJ_EINVAL);
  CHECK(lj_store_get(&value, &len, &rev, store, S("k"), NULL) == LJ_OK);
  CHECK(str_is(value, len, "v1") && rev == r1);
  lj_free(value);
  CHECK(lj_store_update(&r2, store, S("k"), S("v2"), r1 + 100, NULL) == LJ_ECHANGED);
  CHECK(lj_store_update(&r2, store, S("k"), S("v2"), r1, NULL) == LJ_OK && r2 > r1);
  CHECK(lj_store_remove(store, S("k"), r1, NULL) == LJ_ECHANGED);
  CHECK(lj_store_remove(store, S("k"), r2, NULL) == LJ_OK);
  CHECK(lj_store_get(&value, &len, &rev, store, S("k"), NULL) == LJ_ENOTFOUND);
  CHECK(lj_store_get(NULL, &len, &rev, store, S("k"), NULL) == LJ_EINVAL);
  CHECK(lj_store_get(&value, &len, &rev, NULL, S("k"), NULL) == LJ_EINVAL);
  CHECK(lj_store_create(&r1, store, NULL, 1, S("v"), NULL) == LJ_EINVAL);
  CHECK(lj_store_update(&r1, store, S("k"), NULL, 1, 1, NULL) == LJ_EINVAL);
  CHECK(lj_store_remove(NULL, S("k"), 1, NULL) == LJ_EINVAL);
}

static void test_stores(void) {
  lj_store_t *store = NULL;
  lj_error_t *err = NULL;
  struct tiny t;
  lj_store_callbacks_t cb;
  char dir[] = "/tmp/lj-capi-store-XXXXXX";
  char file[600];
  FILE *f;

  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  test_store_ops(store);
  lj_store_destroy(store);
  lj_store_destroy(NULL);
  CHECK(lj_store_memory_open(NULL, NULL) == LJ_EINVAL);

  CHECK(mkdtemp(dir) != NULL);
  CHECK(lj_store_file_open(&store, dir, strlen(dir), NULL) == LJ_OK);
  test_store_ops(store);
  lj_store_destroy(store);
  snprintf(file, sizeof file, "%s/plain", dir);
  f = fopen(file, "w");
  CHECK(f != NULL);
  if (f != NULL) fclose(f);
  CHECK(lj_store_file_open(&store, file, strlen(file), &err) == LJ_EIO);
  CHECK(store == NULL);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_store_file_open(&store, NULL, 0, NULL) == LJ_EINVAL);
  CHECK(lj_store_file_open(&store, "a\0b", 3, NULL) == LJ_EINVAL);

  memset(&t, 0, sizeof t);
  cb = tiny_callbacks();
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_OK);
  test_store_ops(store);
  t.fail_with = LJ_ESTORE;
  CHECK(lj_store_create(NULL, store, S("k"), S("v"), &err) == LJ_ESTORE);
  CHECK(strncmp(lj_error_message(err), "the store's create callback: ", 29) == 0);
  lj_error_destroy(err);
  err = NULL;
  t.fail_with = 5;
  CHECK(lj_store_remove(store, S("k"), 1, NULL) == LJ_EUSER);
  t.fail_with = 0;
  lj_store_destroy(store);
  CHECK(t.released == 1);

  /* Bad callback sets: the payload is still given back. */
  cb.remove = NULL;
  store = (lj_store_t *)&t;
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_EINVAL);
  CHECK(store == NULL && t.released == 2);
  cb = tiny_callbacks();
  cb.version = 3;
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_EVERSION);
  CHECK(lj_store_from_callbacks(&store, NULL, &t, NULL) == LJ_EINVAL);
  CHECK(lj_store_callbacks_init(&cb, LJ_STORE_CALLBACKS_VERSION) == LJ_OK && cb.get == NULL);
  CHECK(lj_store_callbacks_init(&cb, 0) == LJ_EVERSION);
  CHECK(lj_store_sink_put(NULL, "x", 1, 1) == LJ_EINVAL);
  CHECK(lj_store_sink_key(NULL, "x", 1) == LJ_EINVAL);

  snprintf(file, sizeof file, "rm -rf '%s'", dir);
  CHECK(system(file) == 0);
}

/* --- the lock's life ----------------------------------------------------------------------------- */

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

/* --- waiting for a lock, and the heartbeat -------------------------------------------------- */

static int64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

struct canceller {
  int calls;
  int stop_at;          /* 0: never */
  int release_at;       /* 0: never; else release `holder` on that call */
  lj_lock_t *holder;
};

static int cancel_cb(void *payload) {
  struct canceller *c = (struct canceller *)payload;
  c->calls++;
  if (c->release_at != 0 && c->calls == c->release_at) CHECK(lj_lock_release(c->holder, NULL) == LJ_OK);
  return c->stop_at != 0 && c->calls >= c->stop_at;
}

static void test_wait(void) {
  lj_store_t *store = NULL;
  lj_lock_t *theirs = NULL, *mine = NULL;
  lj_lock_acquisition_t a;
  lj_lock_wait_options_t w = LJ_LOCK_WAIT_OPTIONS_INIT, defaults;
  struct canceller c;
  lj_error_t *err = NULL;
  int64_t start, took;

  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  /* Held by this process, alive: a wait for it runs out. */
  CHECK(lj_lock_acquire(&theirs, &a, store, S("w"), S("theirs"), NULL, LJ_LOCK_NOW, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED);
  lj_lock_acquisition_clear(&a);
  w.wait_ms = 150;
  w.poll_min_ms = 10;
  w.poll_max_ms = 20;
  start = monotonic_ms();
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_OK);
  took = monotonic_ms() - start;
  CHECK(a.outcome == LJ_ACQUIRE_HELD && mine == NULL && a.has_verdict == 1);
  CHECK(a.verdict.kind == LJ_LOCK_HELD && a.verdict.reason == LJ_LOCK_LEASE_RUNS);
  CHECK(took >= 150 && took < 2000);
  lj_lock_acquisition_clear(&a);

  /* NULL wait and a wait of 0: one try. */
  start = monotonic_ms();
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, NULL, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_HELD && mine == NULL);
  lj_lock_acquisition_clear(&a);
  w.wait_ms = 0;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_HELD && mine == NULL);
  lj_lock_acquisition_clear(&a);
  CHECK(monotonic_ms() - start < 1000);

  /* Cancelled: LJ_EUSER, nothing acquired, the acquisition zeroed. */
  memset(&c, 0, sizeof c);
  c.stop_at = 3;
  w.wait_ms = 60000;
  w.cancelled = cancel_cb;
  w.payload = &c;
  start = monotonic_ms();
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, &err) == LJ_EUSER);
  CHECK(monotonic_ms() - start < 2000);
  CHECK(mine == NULL && a.has_verdict == 0 && a.revision == 0 && c.calls == 3);
  CHECK(err != NULL && strcmp(lj_error_message(err), "the wait for the lock w was cancelled") == 0);
  lj_error_destroy(err);
  err = NULL;

  /* The holder releases during the wait: ours, with a larger token. */
  memset(&c, 0, sizeof c);
  c.release_at = 4;
  c.holder = theirs;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && mine != NULL && c.calls >= 4);
  CHECK(a.revision == lj_lock_revision(mine) && a.revision > lj_lock_revision(theirs));
  lj_lock_acquisition_clear(&a);
  CHECK(lj_lock_release(mine, NULL) == LJ_OK);
  lj_lock_destroy(mine);
  lj_lock_destroy(theirs);
  mine = theirs = NULL;

  /* Options: init, versions, ranges. */
  CHECK(lj_lock_wait_options_init(&defaults, 1) == LJ_OK);
  CHECK(defaults.version == 1 && defaults.wait_ms == 0 && defaults.poll_min_ms == 50 && defaults.poll_max_ms == 1000 &&
        defaults.cancelled == NULL && defaults.payload == NULL);
  CHECK(lj_lock_wait_options_init(NULL, 1) == LJ_EINVAL);
  CHECK(lj_lock_wait_options_init(&defaults, 0) == LJ_EVERSION);
  CHECK(lj_lock_wait_options_init(&defaults, 2) == LJ_OK);
  CHECK(defaults.version == 2 && defaults.wait_ms == 0 && defaults.poll_min_ms == 50 && defaults.poll_max_ms == 1000 &&
        defaults.cancelled == NULL && defaults.payload == NULL && defaults.note == NULL);
  CHECK(lj_lock_wait_options_init(&defaults, 3) == LJ_EVERSION);
  w.cancelled = NULL;
  w.wait_ms = 10;
  w.version = 0;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EVERSION);
  w.version = 99;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EVERSION);
  w.version = LJ_LOCK_WAIT_OPTIONS_VERSION;
  w.wait_ms = -1;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.wait_ms = INT64_MIN;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.wait_ms = INT64_C(86400001);
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.wait_ms = INT64_MAX;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.wait_ms = 10;
  w.poll_min_ms = -1;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.poll_min_ms = 100;
  w.poll_max_ms = 50;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.poll_max_ms = INT64_MAX;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.poll_min_ms = 0;
  w.poll_max_ms = 0;
  CHECK(lj_lock_acquire_wait(NULL, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, NULL, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, &a, NULL, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, &a, store, NULL, 0, S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), NULL, 3, NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, &a, store, "", 0, S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(mine == NULL);
  /* A key with a NUL in it is a key like any other: the lock is free, so it is ours. */
  CHECK(lj_lock_acquire_wait(&mine, &a, store, "a\0b", 3, S("mine"), NULL, &w, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && mine != NULL);
  lj_lock_acquisition_clear(&a);
  CHECK(lj_lock_release(mine, NULL) == LJ_OK);
  lj_lock_destroy(mine);
  lj_store_destroy(store);
}

struct lost_report {
  int calls; /* written last, with release: a reader that sees it sees the rest */
  int code;
  char message[512];
};

/* Called on the heartbeat's thread. */
static void on_lost(int code, const char *message, size_t len, void *payload) {
  struct lost_report *r = (struct lost_report *)payload;
  r->code = code;
  if (len >= sizeof r->message) len = sizeof r->message - 1;
  memcpy(r->message, message, len);
  r->message[len] = '\0';
  __atomic_add_fetch(&r->calls, 1, __ATOMIC_RELEASE);
}

static int lost_calls(const struct lost_report *r) {
  return __atomic_load_n(&r->calls, __ATOMIC_ACQUIRE);
}

/* Polls cond for up to 5 s. */
#define WAIT_FOR(cond)                                                  \
  do {                                                                  \
    int waited_;                                                        \
    for (waited_ = 0; waited_ < 1000 && !(cond); ++waited_) sleep_ms(5); \
  } while (0)

static void test_heartbeat(void) {
  lj_store_t *store = NULL;
  struct tiny t;
  lj_store_callbacks_t cb = tiny_callbacks();
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  lj_lock_t *lock = NULL;
  lj_lock_heartbeat_t *beat = NULL, *second = NULL;
  lj_lock_acquisition_t a;
  struct lost_report r;
  char *text = NULL;
  size_t len = 0;
  uint64_t first;

  memset(&t, 0, sizeof t);
  memset(&r, 0, sizeof r);
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_OK);
  holder.lease_ms = 300; /* renewed every 100 ms, a failure tried again every 25 ms */
  CHECK(lj_lock_acquire(&lock, &a, store, S("k"), S("beat"), &holder, LJ_LOCK_NOW, NULL, NULL) == LJ_OK);
  CHECK(lock != NULL);
  lj_lock_acquisition_clear(&a);
  first = lj_lock_revision(lock);

  /* One failed renewal: tried again, no loss. */
  t.fail_updates = 1;
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_OK);
  CHECK(beat != NULL);
  CHECK(lj_lock_heartbeat_start(&second, lock, on_lost, &r, NULL) == LJ_EBUSY && second == NULL);
  CHECK(lj_lock_renew(lock, LJ_LOCK_NOW, NULL) == LJ_EBUSY);
  CHECK(lj_lock_release(lock, NULL) == LJ_EBUSY);
  WAIT_FOR(lj_lock_heartbeat_renewals(beat) >= 3);
  CHECK(lj_lock_heartbeat_renewals(beat) >= 3);
  CHECK(lj_lock_heartbeat_retries(beat) == 1);
  CHECK(lj_lock_heartbeat_lost(beat) == 0);
  CHECK(lj_lock_revision(lock) > first);
  CHECK(lj_lock_body(&text, &len, lock, NULL) == LJ_OK && strstr(text, "\"purpose\":\"beat\"") != NULL);
  lj_free(text);
  lj_lock_heartbeat_destroy(beat);
  CHECK(r.calls == 0);
  CHECK(t.fail_updates == 0 && lj_lock_revision(lock) == t.revision);

  /* Failing for good: lost when the lease ends, LJ_ETIMEOUT. lj_lock_heartbeat_lost says so
     once the lease's time is past, which may be before the thread has called on_lost: wait
     for the call itself (a heartbeat destroyed first stops without calling). */
  t.fail_updates = 1000000;
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_OK);
  WAIT_FOR(lost_calls(&r) == 1);
  CHECK(lj_lock_heartbeat_lost(beat) == 1);
  lj_lock_heartbeat_destroy(beat);
  CHECK(r.calls == 1 && r.code == LJ_ETIMEOUT);
  CHECK(strcmp(r.message,
               "the lock k was not renewed within its lease of 300 ms: the store's update callback: store error") == 0);
  t.fail_updates = 0;

  /* Someone else's body: lost at the first renewal, LJ_ECHANGED. */
  memset(&r, 0, sizeof r);
  t.revision = ++t.last;  /* the same body at a revision we never saw: ours, taken */
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_OK);
  WAIT_FOR(lj_lock_heartbeat_renewals(beat) >= 2);
  CHECK(lj_lock_heartbeat_renewals(beat) >= 2 && lj_lock_heartbeat_lost(beat) == 0);
  lj_lock_heartbeat_destroy(beat);
  CHECK(r.calls == 0 && lj_lock_revision(lock) == t.revision);
  {
    static const char thief[] = "{\"purpose\":\"thief\",\"id\":\"someone-else\"}";
    memcpy(t.value, thief, sizeof thief - 1);
    t.len = sizeof thief - 1;
    t.revision = ++t.last;
  }
  CHECK(lj_lock_heartbeat_start(&beat, lock, NULL, NULL, NULL) == LJ_OK); /* no callback: polled only */
  lj_lock_heartbeat_destroy(beat);
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_OK);
  WAIT_FOR(lost_calls(&r) == 1);
  CHECK(lj_lock_heartbeat_lost(beat) == 1);
  lj_lock_heartbeat_destroy(beat);
  CHECK(r.calls == 1 && r.code == LJ_ECHANGED);
  CHECK(strstr(r.message, "the lock k is no longer ours: it was broken or rewritten since revision ") == r.message);
  CHECK(lj_lock_release(lock, NULL) == LJ_ECHANGED);
  lj_lock_destroy(lock);

  /* Bad arguments, and a lock without a lease. */
  CHECK(lj_lock_heartbeat_start(NULL, lock, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_heartbeat_start(&beat, NULL, NULL, NULL, NULL) == LJ_EINVAL && beat == NULL);
  holder.kind = LJ_LOCK_HOLDER_NONE;
  t.has = 0;
  CHECK(lj_lock_acquire(&lock, &a, store, S("k"), S("plain"), &holder, LJ_LOCK_NOW, NULL, NULL) == LJ_OK);
  lj_lock_acquisition_clear(&a);
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_EINVAL && beat == NULL);
  CHECK(lj_lock_release(lock, NULL) == LJ_OK);
  lj_lock_destroy(lock);
  CHECK(lj_lock_heartbeat_lost(NULL) == 1);
  CHECK(lj_lock_heartbeat_renewals(NULL) == 0 && lj_lock_heartbeat_retries(NULL) == 0);
  lj_lock_heartbeat_destroy(NULL);
  lj_store_destroy(store);
}

/* The entry points a binding needs to give the JavaScript code's own answers. */
static void test_seed_forms(void) {
  char* out = NULL;
  size_t len = 0, count = 0;
  int alive = -1;
  lj_error_t* err = NULL;
  lj_execution_ref_t ref = {S("caelo-prod"), S("europe-west1"), S("job-x")};
  lj_execution_ref_t nul = {S("p"), S("r"), "a\0b", 3};
  lj_execution_ref_t hole = {NULL, 1, S("r"), S("n")};
  static const char args[] =
      "run\0jobs\0executions\0describe\0job-x\0--region=europe-west1\0--project=caelo-prod\0--format=json";

  CHECK(lj_execution_describe_args(&out, &len, &count, &ref, NULL) == LJ_OK);
  CHECK(count == 8 && len == sizeof args && memcmp(out, args, sizeof args) == 0);
  lj_free(out);
  CHECK(lj_execution_describe_args(&out, &len, NULL, &nul, NULL) == LJ_OK);
  CHECK(len > 34 && memcmp(out + 29,
                           "a\xEF\xBF\xBD"
                           "b",
                           5) == 0);
  lj_free(out);
  CHECK(lj_execution_describe_args(&out, &len, &count, &hole, &err) == LJ_EINVAL && out == NULL);
  CHECK(strcmp(lj_error_message(err), "ref has a NULL field") == 0);
  lj_error_destroy(err);
  CHECK(lj_execution_describe_args(&out, &len, &count, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_execution_describe_args(NULL, &len, &count, &ref, NULL) == LJ_EINVAL);

  CHECK(lj_process_alive(&alive, (double)getpid(), NULL) == LJ_OK && alive == 1);
  CHECK(lj_process_alive(&alive, 4194304.0 * 512, NULL) == LJ_OK && alive == 1); /* no 32-bit pid */
  CHECK(lj_process_alive(&alive, 1.5, NULL) == LJ_OK && alive == 1);
  CHECK(lj_process_alive(&alive, -1, NULL) == LJ_OK && alive == 1);
  CHECK(lj_process_alive(&alive, 0, NULL) == LJ_OK && alive == 1);
  alive = -1;
  CHECK(lj_process_alive(&alive, 2147483647.0, NULL) == LJ_OK && alive == 0); /* above pid_max */
  CHECK(lj_process_alive(NULL, 1, NULL) == LJ_EINVAL);

  /* Read back in the schema's order, unknown keys dropped, escapes as JSON.stringify
   * writes them; owner kept. */
  CHECK(lj_lock_body_parse(&out, &len,
                           S("{\"leaseUntil\":\"x\",\"owner\":\"o\",\"zz\":[1],\"execution\":{\"name\":\"n\","
                             "\"region\":\"r\",\"projectId\":\"p\",\"q\":1},\"pid\":1e21,\"machine\":null,"
                             "\"purpose\":\"a\\u0000\\ud800\\u00e9/\"}"),
                           NULL) == LJ_OK);
  CHECK(str_is(out, len,
               "{\"purpose\":\"a\\u0000\\ud800\xC3\xA9/\",\"machine\":null,\"pid\":1e+21,"
               "\"execution\":{\"projectId\":\"p\",\"region\":\"r\",\"name\":\"n\"},\"leaseUntil\":\"x\","
               "\"owner\":\"o\"}"));
  lj_free(out);
  CHECK(lj_lock_body_parse(&out, &len, S("{\"pid\":-0,\"purpose\":\"\\\"pid\\\":0\"}"), NULL) == LJ_OK);
  CHECK(str_is(out, len, "{\"purpose\":\"\\\"pid\\\":0\",\"pid\":-0}"));
  lj_free(out);
  CHECK(lj_lock_body_parse(&out, &len, S("{\"purpose\":1}"), &err) == LJ_EPARSE && out == NULL);
  lj_error_destroy(err);
  CHECK(lj_lock_body_parse(&out, &len, NULL, 0, NULL) == LJ_EPARSE);
  CHECK(lj_lock_body_parse(&out, &len, NULL, 3, NULL) == LJ_EINVAL);
  CHECK(lj_lock_body_parse(NULL, &len, S("{}"), NULL) == LJ_EINVAL);
}

/* --- hostile input: times, whys, leases, details ---------------------------------- */

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

/* The verdict forms take any why bytes and still write one valid line; a pair of
 * kind and reason that no judging gives is refused. */
static void test_verdict_forms_any_why(void) {
  /* x C0 " , " k i n d " : " b r e a k: a lead byte 0xC0 before a quote. */
  static const char why[] = "x\xc0\",\"kind\":\"break";
  lj_lock_verdict_t v;
  char *out = NULL;
  size_t len = 0;

  memset(&v, 0, sizeof v);
  v.kind = LJ_LOCK_HELD;
  v.reason = LJ_LOCK_LEASE_RUNS;
  v.why = (char *)why;
  v.why_len = sizeof why - 1;
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len,
               "{\"kind\":\"held\",\"reason\":\"lease_runs\",\"manualRemoval\":false,"
               "\"why\":\"x\xEF\xBF\xBD\\\",\\\"kind\\\":\\\"break\"}"));
  lj_free(out);
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len, "held lease_runs x\xEF\xBF\xBD\",\"kind\":\"break"));
  lj_free(out);
  /* A NUL in the why: escaped in JSON, U+FFFD in the text, so neither has a NUL. */
  v.why = (char *)"a\0b";
  v.why_len = 3;
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len, "{\"kind\":\"held\",\"reason\":\"lease_runs\",\"manualRemoval\":false,\"why\":\"a\\u0000b\"}"));
  lj_free(out);
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len, "held lease_runs a\xEF\xBF\xBD" "b"));
  lj_free(out);

  v.why = NULL;
  v.why_len = 0;
  v.kind = LJ_LOCK_BREAK; /* break with lease_runs: no judging says it */
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_EINVAL);
  CHECK(out == NULL);
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_EINVAL);
  v.kind = LJ_LOCK_UNKNOWN;
  v.reason = LJ_LOCK_EXECUTION_FINISHED;
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_EINVAL);
  v.kind = LJ_LOCK_HELD;
  v.reason = LJ_LOCK_LEASE_RUNS;
  v.manual_removal = 1; /* lease_runs is never a manual removal */
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_EINVAL);
  v.reason = LJ_LOCK_LEASE_UNREADABLE;
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len, "held lease_unreadable (only a person can remove it)"));
  lj_free(out);
  v.manual_removal = 0; /* lease_unreadable always is */
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_EINVAL);
  v.kind = LJ_LOCK_BREAK;
  v.reason = LJ_LOCK_PID_REUSED;
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len, "{\"kind\":\"break\",\"reason\":\"pid_reused\",\"manualRemoval\":false,\"why\":\"\"}"));
  lj_free(out);  v.reason = LJ_LOCK_STORE_LEASE_ENDED;
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len, "break store_lease_ended "));
  lj_free(out);
  v.kind = LJ_LOCK_HELD; /* store_lease_ended is always a break */
  CHECK(lj_lock_verdict_text(&out, &len, &v, NULL) == LJ_EINVAL);
  v.kind = LJ_LOCK_UNKNOWN;
  v.reason = LJ_LOCK_STORE_LEASE_UNKNOWN;
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_OK);
  CHECK(str_is(out, len, "{\"kind\":\"unknown\",\"reason\":\"store_lease_unknown\",\"manualRemoval\":false,\"why\":\"\"}"));
  lj_free(out);
  v.kind = LJ_LOCK_BREAK; /* store_lease_unknown is never a break */
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_EINVAL);
  v.reason = 17; /* no reason */
  CHECK(lj_lock_verdict_json(&out, &len, &v, NULL) == LJ_EINVAL);
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

static int describe_long(lj_execution_state_t *state, const lj_execution_ref_t *ref, void *payload) {
  (void)ref;
  return lj_execution_state_set(state, LJ_EXECUTION_UNKNOWN, (const char *)payload, 10000);
}

/* Details are capped at 4096 bytes, cut at a character and marked; so are the whys
 * that quote them. A gcloud_env without PATH finds no gcloud. */
static void test_details_capped(void) {
  char *big = malloc(10000), *want = malloc(4400);
  lj_execution_kind_t kind = LJ_EXECUTION_RUNNING;
  char *detail = NULL;
  size_t len = 0;
  lj_lock_verdict_t v;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  struct here_state hs;
  lj_lock_here_t here;

  memset(big, 'e', 10000);
  memcpy(want, big, 4096);
  strcpy(want + 4096, " [cut: 5904 more bytes]");
  CHECK(lj_execution_state_parse(&kind, &detail, &len, 1, NULL, 0, big, 10000, NULL) == LJ_OK);
  CHECK(kind == LJ_EXECUTION_UNKNOWN && str_is(detail, len, want));
  lj_free(detail);
  /* A reason in a Completed condition is capped too (lowered first). */
  {
    char *json = malloc(10100);
    int n = sprintf(json, "{\"status\":{\"conditions\":[{\"type\":\"Completed\",\"status\":\"False\",\"reason\":\"");
    memset(json + n, 'R', 10000);
    strcpy(json + n + 10000, "\"}]}}");
    memset(want, 'r', 4096);
    CHECK(lj_execution_state_parse(&kind, &detail, &len, 0, json, strlen(json), NULL, 0, NULL) == LJ_OK);
    CHECK(kind == LJ_EXECUTION_FINISHED && str_is(detail, len, want));
    lj_free(detail);
    free(json);
  }
  /* 4095 'e' then a two-byte character: the cut backs off before it. */
  memcpy(big + 4095, "\xC3\xA9", 2);
  memcpy(want, big, 4095);
  strcpy(want + 4095, " [cut: 5905 more bytes]");
  CHECK(lj_execution_state_parse(&kind, &detail, &len, 1, NULL, 0, big, 10000, NULL) == LJ_OK);
  CHECK(str_is(detail, len, want));
  lj_free(detail);

  memset(&hs, 0, sizeof hs);
  here = test_here(&hs);
  opts.here = &here;
  memset(big, 'd', 10000);
  opts.describe = describe_long;
  opts.describe_payload = big;
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
  strcpy(want, "could not check whether upgrade (run job-abc, started 2024-05-01T11:00:00.000Z) is still running: ");
  len = strlen(want);
  memset(want + len, 'd', 4096);
  strcpy(want + len + 4096, " [cut: 5904 more bytes]");
  CHECK(v.kind == LJ_LOCK_UNKNOWN && str_is(v.why, v.why_len, want));
  lj_lock_verdict_clear(&v);

  /* An environment without PATH: no gcloud is looked for anywhere, so none answers. */
  {
    char home[] = "HOME=/nonexistent";
    char *env[2];
    env[0] = home;
    env[1] = NULL;
    opts.describe = NULL;
    opts.describe_payload = NULL;
    opts.gcloud_env = env;
    CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
    CHECK(v.kind == LJ_LOCK_UNKNOWN && v.reason == LJ_LOCK_EXECUTION_UNKNOWN);
    CHECK(str_is(v.why, v.why_len,
                 "could not check whether upgrade (run job-abc, started 2024-05-01T11:00:00.000Z) is still running: "
                 "gcloud is not on PATH: the environment given has no PATH"));
    lj_lock_verdict_clear(&v);
  }
  /* Timeouts beyond a day are refused. */
  opts.gcloud_env = NULL;
  opts.gcloud_timeout_ms = INT64_C(86400001);
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_EINVAL);
  {
    lj_execution_ref_t ref = {"p", 1, "r", 1, "n", 1};
    CHECK(lj_execution_describe(&kind, &detail, &len, &ref, INT64_MAX, NULL) == LJ_EINVAL);
    CHECK(detail == NULL);
  }
  free(big);
  free(want);
}

/* A describer that judges another body on the same thread, inside the judging that
 * called it: both verdicts whole. Then a why of 200,000 bytes and short ones after it on
 * the same thread, each exact. */
struct nested {
  int calls;
  int inner_rc;
  lj_lock_kind_t inner_kind;
  char inner_why[256];
};

static int judge_inside(lj_execution_state_t *state, const lj_execution_ref_t *ref, void *payload) {
  struct nested *n = (struct nested *)payload;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  lj_lock_verdict_t v;
  (void)ref;
  n->calls++;
  /* No describer inside: the process body alone, judged where no pid is asked. */
  n->inner_rc = lj_lock_judge(&v, S("{\"purpose\":\"inner\",\"leaseUntil\":\"2024-05-01T12:30:00.000Z\"}"),
                              now_ms, &opts, NULL);
  if (n->inner_rc == LJ_OK) {
    n->inner_kind = v.kind;
    snprintf(n->inner_why, sizeof n->inner_why, "%s", v.why);
    lj_lock_verdict_clear(&v);
  }
  return lj_execution_state_set(state, LJ_EXECUTION_FINISHED, "succeeded", 9);
}

static void test_judge_again_and_long_whys(void) {
  struct nested n;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  lj_lock_verdict_t v;
  memset(&n, 0, sizeof n);
  opts.describe = judge_inside;
  opts.describe_payload = &n;
  CHECK(lj_lock_judge(&v, S(execution_body), now_ms, &opts, NULL) == LJ_OK);
  CHECK(n.calls == 1 && n.inner_rc == LJ_OK && n.inner_kind == LJ_LOCK_HELD);
  CHECK(strcmp(n.inner_why, "held by inner; its lease runs until 2024-05-01T12:30:00.000Z unless renewed") == 0);
  CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_EXECUTION_FINISHED);
  CHECK(str_is(v.why, v.why_len,
               "upgrade (run job-abc, started 2024-05-01T11:00:00.000Z) has succeeded, but its lock was left behind"));
  lj_lock_verdict_clear(&v);

  const size_t purpose = 200000;
  const char head[] = "{\"purpose\":\"", tail[] = "\"}";
  char *body = malloc(sizeof head - 1 + purpose + sizeof tail);
  CHECK(body != NULL);
  if (body == NULL) return;
  memcpy(body, head, sizeof head - 1);
  memset(body + sizeof head - 1, 'p', purpose);
  memcpy(body + sizeof head - 1 + purpose, tail, sizeof tail);
  lj_lock_options_t plain = LJ_LOCK_OPTIONS_INIT;
  for (int round = 0; round < 2; ++round) {
    CHECK(lj_lock_judge(&v, body, strlen(body), now_ms, &plain, NULL) == LJ_OK);
    CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_NO_LEASE && v.manual_removal == 1);
    int whole = v.why_len == 8 + purpose && memcmp(v.why, "held by ", 8) == 0 && v.why[v.why_len] == '\0';
    for (size_t i = 8; whole && i < v.why_len; ++i) whole = v.why[i] == 'p';
    CHECK(whole);
    lj_lock_verdict_clear(&v);
    CHECK(lj_lock_judge(&v, S("{\"purpose\":\"p\"}"), now_ms, &plain, NULL) == LJ_OK);
    CHECK(str_is(v.why, v.why_len, "held by p"));
    lj_lock_verdict_clear(&v);
    CHECK(lj_lock_judge(&v, S(""), now_ms, &plain, NULL) == LJ_OK);
    CHECK(str_is(v.why, v.why_len, "the lock's holder is not readable (empty)"));
    lj_lock_verdict_clear(&v);
  }
  free(body);
}

/* Without a here, a judge reads this machine's kept evidence, and sees it change within
 * about a second: with K_SERVICE set (Cloud Run) this machine has no id and trusts no
 * pid, so a body of this host and id whose pid is gone is held while its lease runs,
 * where it breaks before and after. Where the machine has no id at all, every pid is
 * untrusted and the lease decides each time. */
static void test_kept_evidence_followed(void) {
  char host[256] = "";
  char *id = NULL;
  size_t id_len = 0;
  const struct timespec past_recheck = {1, 300000000};
  /* Neither Cloud Run variable set to begin with, whatever the test's environment. */
  const char *k_service = getenv("K_SERVICE"), *execution = getenv("CLOUD_RUN_EXECUTION");
  char *kept_service = k_service != NULL ? strdup(k_service) : NULL;
  char *kept_execution = execution != NULL ? strdup(execution) : NULL;
  if (kept_service != NULL || kept_execution != NULL) {
    unsetenv("K_SERVICE");
    unsetenv("CLOUD_RUN_EXECUTION");
    nanosleep(&past_recheck, NULL);
  }
  CHECK(gethostname(host, sizeof host - 1) == 0);
  int has_id = lj_machine_id(&id, &id_len, NULL) == LJ_OK;
  const int dead = (int)dead_pid();
  char body[512];
  snprintf(body, sizeof body,
           "{\"purpose\":\"p\",\"host\":\"%s\",\"machine\":\"%s\",\"pid\":%d,"
           "\"leaseUntil\":\"2024-05-01T12:15:00.000Z\"}",
           host, has_id ? id : "", dead);
  lj_free(id);
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  const lj_lock_reason_t here_first = has_id ? LJ_LOCK_PROCESS_GONE : LJ_LOCK_LEASE_RUNS;
  const lj_lock_reason_t want[3] = {here_first, LJ_LOCK_LEASE_RUNS, here_first};
  for (int step = 0; step < 3; ++step) {
    if (step == 1) setenv("K_SERVICE", "svc", 1);
    if (step == 2) unsetenv("K_SERVICE");
    if (step > 0) nanosleep(&past_recheck, NULL);
    lj_lock_verdict_t v;
    CHECK(lj_lock_judge(&v, body, strlen(body), now_ms, &opts, NULL) == LJ_OK);
    CHECK(v.reason == want[step]);
    if (v.reason != want[step]) printf("# step %d: %s\n", step, v.why);
    lj_lock_verdict_clear(&v);
  }
  if (kept_service != NULL) setenv("K_SERVICE", kept_service, 1);
  if (kept_execution != NULL) setenv("CLOUD_RUN_EXECUTION", kept_execution, 1);
  free(kept_service);
  free(kept_execution);
}

int main(void) {
  test_seed_forms();
  test_names();
  test_judge();
  test_execution_state();
  test_bodies();
  test_stores();
  test_life();
  test_wait();
  test_heartbeat();
  test_times_out_of_range();
  test_verdict_forms_any_why();
  test_negative_leases();
  test_details_capped();
  test_judge_again_and_long_whys();
  test_kept_evidence_followed();
  return CHECK_SUMMARY();
}
