/* Every exported symbol of the C ABI's step codec part with hostile arguments (NULL, empty,
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

static void case_step_keys_and_codec(void) {
  lj_error_t *err = NULL;
  char *out = (char *)1;
  size_t len = 0, node_len = 0;
  int ask = 7;
  int64_t ns = 0, sec = 0;
  int32_t nsec = 0;
  lj_step_t *step = (lj_step_t *)1;

  REFUSED(lj_step_key(NULL, &len, S("n"), S("i"), &err), LJ_EINVAL);
  REFUSED(lj_step_key(&out, &len, NULL, 1, S("i"), &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_step_key(&out, &len, S("n"), NULL, 1, &err), LJ_EINVAL);
  REFUSED(lj_step_key(&out, &len, NULL, 0, S("i"), &err), LJ_EINVAL);
  REFUSED(lj_step_key(&out, &len, S("n"), NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_step_key(&out, &len, "n\0", 2, S("i"), &err), LJ_EINVAL);
  CHECK(lj_step_key(&out, &len, S("\xff"), S("\xc3.x"), NULL) == LJ_OK && len == 5); /* stored bytes, kept */
  lj_free(out);

  REFUSED(lj_step_key_parse(NULL, S("n.i"), &err), LJ_EINVAL);
  REFUSED(lj_step_key_parse(&node_len, NULL, 3, &err), LJ_EINVAL);
  REFUSED(lj_step_key_parse(&node_len, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_step_key_parse(&node_len, S(".i"), &err), LJ_EPARSE);
  REFUSED(lj_step_key_parse(&node_len, S("n."), &err), LJ_EPARSE);
  CHECK(lj_step_key_parse(&node_len, "n\0.\0", 4, NULL) == LJ_OK && node_len == 2);
  REFUSED(lj_step_ask_key_parse(NULL, S("n.i"), &err), LJ_EINVAL);
  REFUSED(lj_step_ask_key_parse(&node_len, NULL, 3, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_key_parse(&node_len, S("n.6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5"), &err), LJ_EPARSE);
  REFUSED(lj_step_ask_key_parse(&node_len, S("n.6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5g"), &err), LJ_EPARSE);
  CHECK(lj_step_ask_key_parse(&node_len, S("n.6F1C2D3E-4A5B-4C6D-8E7F-0A1B2C3D4E5F"), NULL) == LJ_OK);
  REFUSED(lj_step_is_ask(NULL, S("n.i"), S("x ask"), &err), LJ_EINVAL);
  REFUSED(lj_step_is_ask(&ask, NULL, 1, S("x ask"), &err), LJ_EINVAL);
  REFUSED(lj_step_is_ask(&ask, S("n.i"), NULL, 1, &err), LJ_EINVAL);
  CHECK(lj_step_is_ask(&ask, NULL, 0, NULL, 0, NULL) == LJ_OK && ask == 0);

  REFUSED(lj_step_time_parse(NULL, S("2024-05-01T12:00:00Z"), &err), LJ_EINVAL);
  REFUSED(lj_step_time_parse(&ns, NULL, 2, &err), LJ_EINVAL);
  REFUSED(lj_step_time_parse(&ns, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_step_time_parse(&ns, "2024-05-01T12:00:00Z\0", 21, &err), LJ_EPARSE);
  REFUSED(lj_step_time_parse(&ns, S("1677-09-21T00:12:43Z"), &err), LJ_EINVAL);
  REFUSED(lj_step_time_parse(&ns, S("2262-04-11T23:47:17Z"), &err), LJ_EINVAL);
  CHECK(lj_step_time_parse(&ns, S("2024-05-01T12:00:00Z"), NULL) == LJ_OK && ns == NOW_NS);

  REFUSED(lj_step_decode(NULL, S("{}"), &err), LJ_EINVAL);
  REFUSED(lj_step_decode(&step, NULL, 2, &err), LJ_EINVAL);
  CHECK(step == NULL);
  REFUSED(lj_step_decode(&step, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_step_decode(&step, S("{} x"), &err), LJ_EPARSE);
  REFUSED(lj_step_decode(&step, S("\xef\xbb\xbf{}"), &err), LJ_EPARSE);
  REFUSED(lj_step_decode(&step, S("{\"id\":1}"), &err), LJ_EPARSE);
  {
    char *big = big_junk(BIG);
    REFUSED(lj_step_decode(&step, big, BIG, &err), LJ_EPARSE);
    free(big);
  }
  CHECK(lj_step_decode(&step, S("{\"id\":\"a\\u0000b\",\"owner\":\"\xff\"}"), NULL) == LJ_OK);
  {
    const char *s = lj_step_string(step, LJ_STEP_FIELD_ID, &len);
    CHECK(s != NULL && len == 3 && s[1] == '\0' && s[3] == '\0'); /* documented: may hold NUL */
    s = lj_step_string(step, LJ_STEP_FIELD_OWNER, &len);
    CHECK(text(s, len)); /* decoded as Go does: U+FFFD */
  }
  CHECK(lj_step_string(step, -1, &len) == NULL && len == 0);
  CHECK(lj_step_string(step, 7, &len) == NULL && len == 0);
  CHECK(lj_step_string(step, LJ_STEP_FIELD_ASK_WHAT, &len) == NULL);
  CHECK(lj_step_string(NULL, LJ_STEP_FIELD_ID, &len) == NULL && len == 0);
  CHECK(lj_step_string(step, LJ_STEP_FIELD_ID, NULL) != NULL);
  REFUSED(lj_step_time(NULL, &nsec, step, LJ_STEP_STARTED, &err), LJ_EINVAL);
  REFUSED(lj_step_time(&sec, NULL, step, LJ_STEP_STARTED, &err), LJ_EINVAL);
  REFUSED(lj_step_time(&sec, &nsec, NULL, LJ_STEP_STARTED, &err), LJ_EINVAL);
  REFUSED(lj_step_time(&sec, &nsec, step, 2, &err), LJ_EINVAL);
  REFUSED(lj_step_time(&sec, &nsec, step, -1, &err), LJ_EINVAL);
  CHECK(lj_step_time(&sec, &nsec, step, LJ_STEP_ENDED, NULL) == LJ_OK && sec == INT64_C(-62135596800));
  lj_step_destroy(step);
  lj_step_destroy(NULL);

  REFUSED(lj_step_end_value(NULL, &len, S("{}"), S("why"), NOW_NS, &err), LJ_EINVAL);
  REFUSED(lj_step_end_value(&out, &len, NULL, 2, S("why"), NOW_NS, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_step_end_value(&out, &len, S("{}"), NULL, 3, NOW_NS, &err), LJ_EINVAL);
  REFUSED(lj_step_end_value(&out, &len, S("[]"), S("why"), NOW_NS, &err), LJ_EPARSE);
  REFUSED(lj_step_end_value(&out, &len, S("null"), S("why"), NOW_NS, &err), LJ_EPARSE);
  REFUSED(lj_step_end_value(&out, &len, NULL, 0, S("why"), NOW_NS, &err), LJ_EPARSE);
  CHECK(lj_step_end_value(&out, &len, S("{}"), "w\0\xff", 3, INT64_MAX, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  CHECK(lj_step_end_value(&out, &len, S("{}"), NULL, 0, INT64_MIN + 1, NULL) == LJ_OK && text(out, len));
  lj_free(out);

  REFUSED(lj_step_ask_what(NULL, &len, S("{}"), LJ_STEP_JSON_STEP, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_what(&out, &len, NULL, 2, LJ_STEP_JSON_STEP, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_what(&out, &len, S("{}"), 2, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_what(&out, &len, S("{}"), -1, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_what(&out, &len, S("{}"), LJ_STEP_JSON_STEP, &err), LJ_ENOTFOUND);
  REFUSED(lj_step_ask_what(&out, &len, S("{} {}"), LJ_STEP_JSON_ASK, &err), LJ_EPARSE);
  REFUSED(lj_step_ask_what(&out, &len, S("[]"), LJ_STEP_JSON_ASK, &err), LJ_EPARSE);
  REFUSED(lj_step_ask_what(&out, &len, S("x"), LJ_STEP_JSON_STEP, &err), LJ_EPARSE);
  CHECK(out == NULL);
}

static const struct symbol_case cases[] = {
    {"lj_step_key", case_step_keys_and_codec},
    {"lj_step_key_parse", case_step_keys_and_codec},
    {"lj_step_ask_key_parse", case_step_keys_and_codec},
    {"lj_step_is_ask", case_step_keys_and_codec},
    {"lj_step_time_parse", case_step_keys_and_codec},
    {"lj_step_decode", case_step_keys_and_codec},
    {"lj_step_string", case_step_keys_and_codec},
    {"lj_step_time", case_step_keys_and_codec},
    {"lj_step_destroy", case_step_keys_and_codec},
    {"lj_step_end_value", case_step_keys_and_codec},
    {"lj_step_ask_what", case_step_keys_and_codec},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
