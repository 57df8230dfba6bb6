/* The C ABI's lock verdict, from C: reason and kind names, judging with C callbacks
 * (alive, owner state, execution describers), the verdict's forms (text, JSON, any why),
 * details capped, judging again from inside a describer, evidence kept in the
 * environment followed; NULL, out-of-range and failing callbacks.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "dead_pid.h"
#include "lock_capi.h"

static const char process_body[] =
    "{\"purpose\":\"deploy\",\"id\":\"i-1\",\"host\":\"build-7\",\"machine\":\"m-aaa\",\"pid\":200,"
    "\"startedAt\":\"2024-05-01T11:00:00.000Z\",\"leaseUntil\":\"2024-05-01T12:15:00.000Z\"}";

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
  test_names();
  test_judge();
  test_verdict_forms_any_why();
  test_details_capped();
  test_judge_again_and_long_whys();
  test_kept_evidence_followed();
  return CHECK_SUMMARY();
}
