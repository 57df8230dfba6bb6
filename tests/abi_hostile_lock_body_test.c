/* Every exported symbol of the C ABI's lock body part with hostile arguments (NULL, empty,
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

static void case_lock_bodies(void) {
  lj_error_t *err = NULL;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  char *out = (char *)1;
  size_t len = 0;
  int64_t ms = 0;

  REFUSED(lj_lock_purpose_default(NULL, &len, S("k"), 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_purpose_default(&out, &len, NULL, 1, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_purpose_default(&out, &len, S(""), 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_purpose_default(&out, &len, S("k"), -1, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_lock_body_new(NULL, &len, S("p"), NOW_MS, NULL, NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, NULL, 1, NOW_MS, NULL, NULL, 0, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_lock_body_new(&out, &len, S("p\xff"), NOW_MS, NULL, NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, NULL, NULL, 3, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, NULL, S("\xc3"), &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, S("p"), JS_LIMIT + 1, NULL, NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, S("p"), JS_LIMIT, NULL, NULL, 0, &err), LJ_EINVAL); /* its lease is past */
  holder.version = 0;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EVERSION);
  holder.version = LJ_LOCK_HOLDER_VERSION + 1;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EVERSION);
  holder.version = LJ_LOCK_HOLDER_VERSION;
  holder.kind = 3;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL);
  holder.kind = -1;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL);
  holder.kind = LJ_LOCK_HOLDER_PROCESS;
  holder.lease_ms = -1;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL);
  holder.lease_ms = INT64_MAX;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL);
  holder.kind = LJ_LOCK_HOLDER_EXECUTION;
  holder.lease_ms = 1000;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL); /* empty fields */
  holder.execution.project_id_len = 2;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL); /* NULL with a length */
  holder.execution.project_id = "\xff";
  holder.execution.project_id_len = 1;
  holder.execution.region = "r";
  holder.execution.region_len = 1;
  holder.execution.name = "n";
  holder.execution.name_len = 1;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL); /* not UTF-8 */
  CHECK(out == NULL);
  CHECK(lj_lock_body_new(&out, &len, "p\0", 2, NOW_MS, NULL, "i\0d", 3, NULL) == LJ_OK && text(out, len));
  lj_free(out);

  REFUSED(lj_lock_body_renew(NULL, &len, S(process_body), NOW_MS, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_renew(&out, &len, NULL, 3, NOW_MS, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_renew(&out, &len, S("{}"), NOW_MS, 0, &err), LJ_EPARSE);
  REFUSED(lj_lock_body_renew(&out, &len, NULL, 0, NOW_MS, 0, &err), LJ_EPARSE);
  REFUSED(lj_lock_body_renew(&out, &len, S(process_body), NOW_MS, -1, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_renew(&out, &len, S(process_body), NOW_MS, INT64_MAX, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_renew(&out, &len, S(process_body), INT64_MIN + 1, 0, &err), LJ_EINVAL);
  CHECK(out == NULL);

  REFUSED(lj_lock_body_id(NULL, &len, S(process_body), &err), LJ_EINVAL);
  REFUSED(lj_lock_body_id(&out, &len, NULL, 1, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_id(&out, &len, S("{\"purpose\":\"p\"}"), &err), LJ_ENOTFOUND);
  REFUSED(lj_lock_body_id(&out, &len, S("nope"), &err), LJ_EPARSE);
  CHECK(lj_lock_body_id(&out, &len, S("{\"purpose\":\"p\",\"id\":\"\\u0000\\ud800\"}"), NULL) == LJ_OK);
  CHECK(text(out, len) && len == 6);
  lj_free(out);

  REFUSED(lj_lock_time_format(NULL, &len, NOW_MS, &err), LJ_EINVAL);
  REFUSED(lj_lock_time_format(&out, &len, -JS_LIMIT - 1, &err), LJ_EINVAL);
  REFUSED(lj_lock_time_format(&out, &len, INT64_MAX, &err), LJ_EINVAL);
  CHECK(lj_lock_time_format(&out, &len, -JS_LIMIT, NULL) == LJ_OK && strcmp(out, "-271821-04-20T00:00:00.000Z") == 0);
  lj_free(out);
  REFUSED(lj_lock_time_parse(NULL, S("2024"), &err), LJ_EINVAL);
  REFUSED(lj_lock_time_parse(&ms, NULL, 4, &err), LJ_EINVAL);
  REFUSED(lj_lock_time_parse(&ms, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_lock_time_parse(&ms, S("+275760-09-13T00:00:00.001Z"), &err), LJ_EPARSE);
  REFUSED(lj_lock_time_parse(&ms, S("\xff"), &err), LJ_EPARSE);
}

static const struct symbol_case cases[] = {
    {"lj_lock_body_new", case_lock_bodies},
    {"lj_lock_purpose_default", case_lock_bodies},
    {"lj_lock_body_renew", case_lock_bodies},
    {"lj_lock_body_id", case_lock_bodies},
    {"lj_lock_time_format", case_lock_bodies},
    {"lj_lock_time_parse", case_lock_bodies},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
