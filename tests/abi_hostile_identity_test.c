/* Every exported symbol of the C ABI's identity part with hostile arguments (NULL, empty,
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

static void case_identity(void) {
  lj_error_t *err = NULL;
  char *out = (char *)1;
  size_t len = 0;
  lj_holder_state_t state = LJ_HOLDER_ALIVE;
  lj_owner_options_t o;

  REFUSED(lj_boot_id(NULL, &len, &err), LJ_EINVAL);
  CHECK(lj_boot_id(&out, &len, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  REFUSED(lj_owner_token(NULL, &len, 0, &err), LJ_EINVAL);
  REFUSED(lj_owner_token(&out, &len, -1, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_owner_token(&out, &len, INT32_MIN, &err), LJ_EINVAL);
  REFUSED(lj_owner_token(&out, &len, INT32_MAX, &err), LJ_ENOTFOUND); /* beyond pid_max */
  REFUSED(lj_lease_identity(NULL, &len, 0, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity(&out, &len, -5, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity(&out, &len, INT32_MAX, &err), LJ_ENOTFOUND);
  REFUSED(lj_machine_id(NULL, &len, &err), LJ_EINVAL);

  REFUSED(lj_owner_options_init(NULL, LJ_OWNER_OPTIONS_VERSION), LJ_EINVAL);
  REFUSED(lj_owner_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_owner_options_init(&o, LJ_OWNER_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_owner_options_init(&o, LJ_OWNER_OPTIONS_VERSION) == LJ_OK && o.start_tolerance_ms == 5000);

  REFUSED(lj_owner_judge(NULL, NULL, NULL, S("x.1.2"), NULL, &err), LJ_EINVAL);
  REFUSED(lj_owner_judge(&state, &out, &len, NULL, 3, NULL, &err), LJ_EINVAL);
  CHECK(out == NULL);
  o.version = 0;
  REFUSED(lj_owner_judge(&state, &out, &len, S("x.1.2"), &o, &err), LJ_EVERSION);
  o.version = LJ_OWNER_OPTIONS_VERSION + 1;
  REFUSED(lj_owner_judge(&state, &out, &len, S("x.1.2"), &o, &err), LJ_EVERSION);
  o.version = LJ_OWNER_OPTIONS_VERSION;
  o.start_tolerance_ms = -1;
  REFUSED(lj_owner_judge(&state, &out, &len, S("x.1.2"), &o, &err), LJ_EINVAL);
  /* Malformed tokens are a verdict, never an error: empty, NUL, non-UTF-8, huge. */
  CHECK(lj_owner_judge(&state, &out, &len, NULL, 0, NULL, NULL) == LJ_OK && state == LJ_HOLDER_UNKNOWN);
  CHECK(text(out, len));
  lj_free(out);
  CHECK(lj_owner_judge(&state, &out, &len, "no-boot-id.1\0.0", 15, NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_UNKNOWN && text(out, len));
  lj_free(out);
  CHECK(lj_owner_judge(&state, &out, &len, S("\xff\xfe.1.0"), NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_UNKNOWN && text(out, len));
  lj_free(out);
  {
    char *big = big_junk(BIG);
    CHECK(lj_owner_judge(&state, &out, &len, big, BIG, NULL, NULL) == LJ_OK && state == LJ_HOLDER_UNKNOWN);
    CHECK(text(out, len));
    lj_free(out);
    free(big);
  }
  /* A pid that no process has, well formed: dead, not an error. */
  CHECK(lj_owner_judge(&state, NULL, NULL, S("no-boot-id.2147483647.0"), NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_DEAD);

  REFUSED(lj_lease_identity_judge(NULL, NULL, NULL, 1, S("x"), 0, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity_judge(&state, &out, &len, 0, S("x"), 0, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity_judge(&state, &out, &len, -1, S("x"), 0, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity_judge(&state, &out, &len, 1, NULL, 4, 0, &err), LJ_EINVAL);
  CHECK(out == NULL);
  CHECK(lj_lease_identity_judge(&state, &out, &len, (int32_t)getpid(), "linux \0\xff", 8, INT64_MIN, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_ALIVE && text(out, len));
  lj_free(out);
  CHECK(lj_lease_identity_judge(&state, &out, &len, (int32_t)getpid(), NULL, 0, INT64_MAX, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_RECYCLED && text(out, len)); /* no identity, past 120 minutes */
  lj_free(out);
  CHECK(lj_lease_identity_judge(&state, NULL, NULL, INT32_MAX, S("ps x"), 0, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_DEAD);
}

static const struct symbol_case cases[] = {
    {"lj_boot_id", case_identity},
    {"lj_owner_token", case_identity},
    {"lj_lease_identity", case_identity},
    {"lj_machine_id", case_identity},
    {"lj_owner_options_init", case_identity},
    {"lj_owner_judge", case_identity},
    {"lj_lease_identity_judge", case_identity},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
