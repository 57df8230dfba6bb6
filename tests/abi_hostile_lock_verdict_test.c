/* Every exported symbol of the C ABI's lock verdict part with hostile arguments (NULL, empty,
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

static const char execution_body[] =
    "{\"purpose\":\"p\",\"execution\":{\"projectId\":\"p\",\"region\":\"r\",\"name\":\"n\"},"
    "\"leaseUntil\":\"2024-05-01T12:10:00.000Z\"}";

static int describe_hostile(lj_execution_state_t *state, const lj_execution_ref_t *ref, void *payload) {
  int *checks = (int *)payload;
  (void)ref;
  if (lj_execution_state_set(NULL, LJ_EXECUTION_RUNNING, NULL, 0) == LJ_EINVAL) ++*checks;
  if (lj_execution_state_set(state, 4, NULL, 0) == LJ_EINVAL) ++*checks;
  if (lj_execution_state_set(state, -1, NULL, 0) == LJ_EINVAL) ++*checks;
  if (lj_execution_state_set(state, LJ_EXECUTION_UNKNOWN, NULL, 3) == LJ_EINVAL) ++*checks;
  return lj_execution_state_set(state, LJ_EXECUTION_UNKNOWN, "a\0\xff", 3);
}

static int call_judge(const lj_lock_options_t *o, lj_error_t **err) {
  lj_lock_verdict_t v;
  int rc = lj_lock_judge(&v, S(process_body), NOW_MS, o, err);
  lj_lock_verdict_clear(&v);
  return rc;
}

static void case_lock_verdicts(void) {
  lj_error_t *err = NULL;
  lj_lock_verdict_t v;
  lj_lock_options_t o = LJ_LOCK_OPTIONS_INIT;
  lj_lock_here_t h = LJ_LOCK_HERE_INIT;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  char *out = NULL;
  size_t len = 0;
  int checks = 0;

  CHECK(strcmp(lj_lock_reason_code(0), "") == 0 && strcmp(lj_lock_reason_code(17), "") == 0);
  CHECK(strcmp(lj_lock_reason_code(INT_MIN), "") == 0 && strcmp(lj_lock_reason_code(INT_MAX), "") == 0);
  CHECK(strcmp(lj_lock_kind_name(-1), "") == 0 && strcmp(lj_lock_kind_name(3), "") == 0);
  lj_lock_verdict_clear(NULL);

  memset(&v, 0, sizeof v);
  v.kind = LJ_LOCK_HELD;
  v.reason = LJ_LOCK_LEASE_RUNS;
  REFUSED(lj_lock_verdict_text(NULL, &len, &v, &err), LJ_EINVAL);
  REFUSED(lj_lock_verdict_text(&out, &len, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_verdict_json(NULL, &len, &v, &err), LJ_EINVAL);
  REFUSED(lj_lock_verdict_json(&out, &len, NULL, &err), LJ_EINVAL);
  v.why_len = 5; /* NULL with a length */
  REFUSED(lj_lock_verdict_json(&out, &len, &v, &err), LJ_EINVAL);
  v.why_len = 0;
  v.kind = LJ_LOCK_BREAK;
  REFUSED(lj_lock_verdict_json(&out, &len, &v, &err), LJ_EINVAL);
  REFUSED(lj_lock_verdict_text(&out, &len, &v, &err), LJ_EINVAL);
  v.kind = (lj_lock_kind_t)7;
  REFUSED(lj_lock_verdict_text(&out, &len, &v, &err), LJ_EINVAL);
  CHECK(out == NULL);

  REFUSED(lj_lock_here_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_lock_here_init(&h, 0), LJ_EVERSION);
  REFUSED(lj_lock_here_init(&h, LJ_LOCK_HERE_VERSION + 1), LJ_EVERSION);
  REFUSED(lj_lock_options_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_lock_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_lock_options_init(&o, LJ_LOCK_OPTIONS_VERSION + 1), LJ_EVERSION);
  REFUSED(lj_lock_holder_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_lock_holder_init(&holder, 0), LJ_EVERSION);
  REFUSED(lj_lock_holder_init(&holder, LJ_LOCK_HOLDER_VERSION + 1), LJ_EVERSION);
  CHECK(lj_lock_here_init(&h, 1) == LJ_OK && lj_lock_options_init(&o, 1) == LJ_OK &&
        lj_lock_holder_init(&holder, 1) == LJ_OK);

  bad_lock_options(call_judge);
  REFUSED(lj_lock_judge(NULL, S(process_body), NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_judge(&v, NULL, 4, NOW_MS, NULL, &err), LJ_EINVAL);
  CHECK(v.why == NULL);
  REFUSED(lj_lock_judge(&v, S(process_body), JS_LIMIT + 1, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_judge(&v, S(process_body), INT64_MAX, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_judge(&v, S(process_body), INT64_MIN + 1, NULL, &err), LJ_EINVAL);
  /* Unreadable bodies are a verdict: empty, NUL, non-UTF-8, 16 MiB. */
  h.host = "h";
  h.host_len = 1;
  o.here = &h;
  o.describe = describe_hostile;
  o.describe_payload = &checks;
  CHECK(lj_lock_judge(&v, NULL, 0, NOW_MS, &o, NULL) == LJ_OK && v.reason == LJ_LOCK_NOT_READABLE);
  CHECK(text(v.why, v.why_len));
  lj_lock_verdict_clear(&v);
  CHECK(lj_lock_judge(&v, "{\"purpose\":\"\0\xff\"}", 16, NOW_MS, &o, NULL) == LJ_OK);
  CHECK(v.reason == LJ_LOCK_NOT_READABLE && v.manual_removal == 1 && text(v.why, v.why_len));
  lj_lock_verdict_clear(&v);
  {
    char *big = big_junk(BIG);
    CHECK(lj_lock_judge(&v, big, BIG, NOW_MS, &o, NULL) == LJ_OK && v.reason == LJ_LOCK_NOT_READABLE);
    CHECK(text(v.why, v.why_len) && v.why_len < 1000);
    lj_lock_verdict_clear(&v);
    free(big);
  }
  CHECK(lj_lock_judge(&v, S(execution_body), NOW_MS, &o, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_UNKNOWN && checks == 4 && text(v.why, v.why_len));
  lj_lock_verdict_clear(&v);

  REFUSED(lj_execution_state_parse(NULL, &out, &len, 0, S("{}"), NULL, 0, &err), LJ_EINVAL);
  {
    lj_execution_kind_t kind = LJ_EXECUTION_RUNNING;
    lj_execution_ref_t ref = {"p", 1, "r", 1, "n", 1};
    REFUSED(lj_execution_state_parse(&kind, NULL, &len, 0, S("{}"), NULL, 0, &err), LJ_EINVAL);
    REFUSED(lj_execution_state_parse(&kind, &out, &len, 0, NULL, 2, NULL, 0, &err), LJ_EINVAL);
    REFUSED(lj_execution_state_parse(&kind, &out, &len, 1, NULL, 0, NULL, 2, &err), LJ_EINVAL);
    CHECK(out == NULL);
    CHECK(lj_execution_state_parse(&kind, &out, &len, INT_MIN, NULL, 0, "\0\xff", 2, NULL) == LJ_OK);
    CHECK(kind == LJ_EXECUTION_UNKNOWN && text(out, len));
    lj_free(out);
    REFUSED(lj_execution_describe(NULL, &out, &len, &ref, 100, &err), LJ_EINVAL);
    REFUSED(lj_execution_describe(&kind, NULL, &len, &ref, 100, &err), LJ_EINVAL);
    REFUSED(lj_execution_describe(&kind, &out, &len, NULL, 100, &err), LJ_EINVAL);
    REFUSED(lj_execution_describe(&kind, &out, &len, &ref, INT64_MAX, &err), LJ_EINVAL);
    ref.region = NULL;
    REFUSED(lj_execution_describe(&kind, &out, &len, &ref, 100, &err), LJ_EINVAL);
    CHECK(out == NULL);
    ref.region = "r";
    {
      /* With no gcloud to be found, the answer is unknown, not an error. */
      char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
      setenv("PATH", "/nonexistent", 1);
      CHECK(lj_execution_describe(&kind, &out, &len, &ref, INT64_MIN, NULL) == LJ_OK);
      CHECK(kind == LJ_EXECUTION_UNKNOWN && text(out, len));
      lj_free(out);
      if (old != NULL) setenv("PATH", old, 1);
      free(old);
    }
  }
}

static const struct symbol_case cases[] = {
    {"lj_lock_reason_code", case_lock_verdicts},
    {"lj_lock_kind_name", case_lock_verdicts},
    {"lj_lock_verdict_clear", case_lock_verdicts},
    {"lj_lock_verdict_text", case_lock_verdicts},
    {"lj_lock_verdict_json", case_lock_verdicts},
    {"lj_execution_state_set", case_lock_verdicts},
    {"lj_execution_state_parse", case_lock_verdicts},
    {"lj_execution_describe", case_lock_verdicts},
    {"lj_lock_here_init", case_lock_verdicts},
    {"lj_lock_options_init", case_lock_verdicts},
    {"lj_lock_holder_init", case_lock_verdicts},
    {"lj_lock_judge", case_lock_verdicts},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
