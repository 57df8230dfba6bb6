/* What the C tests of the step share: the owner, the times and the plan options they
 * plan with, and the error they expect. */
#ifndef LEASEJUDGE_TESTS_STEP_CAPI_H
#define LEASEJUDGE_TESTS_STEP_CAPI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"

static const char *SELF = "0b5c3e0e-7d7a-4c4b-9d5e-1f2a3b4c5d6e.4242.lvq1g2a8";

#define NOW_NS INT64_C(1714564800000000000)    /* 2024-05-01T12:00:00Z */
#define BEFORE_NS INT64_C(1714561200000000000) /* 2024-05-01T11:00:00Z */
#define ASK_ID "6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f"
#define RESTART "the build module restarted while it ran"

static inline lj_step_plan_options_t plan_options(void) {
  lj_step_plan_options_t o = LJ_STEP_PLAN_OPTIONS_INIT;
  o.rules.node = "n1";
  o.rules.node_len = 2;
  o.rules.owner = SELF;
  o.rules.owner_len = strlen(SELF);
  o.rules.before_ns = BEFORE_NS;
  o.rules.now_ns = NOW_NS;
  return o;
}

/* errp, not err: the call that sets *errp is an argument of the same call. */
static inline int expect_error(int rc, int code, lj_error_t **errp, const char *message) {
  lj_error_t *err = *errp;
  int ok;
  *errp = NULL;
  ok = rc == code && err != NULL && lj_error_code(err) == code &&
           (message == NULL || strcmp(lj_error_message(err), message) == 0);
  if (!ok && err != NULL) printf("# got %d: %s\n", rc, lj_error_message(err));
  lj_error_destroy(err);
  return ok;
}

static inline int c_string_is(const char *got, size_t len, const char *want) {
  return got != NULL && len == strlen(want) && strlen(got) == len && memcmp(got, want, len) == 0;
}

#endif
