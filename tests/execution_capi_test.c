/* The C ABI's execution state, from C: set, parsed and described, with NULL and
 * out-of-range arguments.
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

int main(void) {
  test_execution_state();
  return CHECK_SUMMARY();
}
