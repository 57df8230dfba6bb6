/* The C ABI's step codec, from C: a step decoded and its string, time and end value;
 * returned text holds no NUL and is UTF-8.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "step_capi.h"

static void test_codec(void) {
  const char *value =
      "{\"id\":\"s\\u0031\",\"tool\":\"check ask\",\"state\":\"running\",\"owner\":\"o\",\"reason\":\"r\","
      "\"started\":\"2024-05-01T10:00:00.25Z\",\"result\":{\"a\": [1]},\"ask\":{\"kind\":\"check\",\"check\":{"
      "\"fetch\":{\"repository\":\"git.x/r\",\"commit\":\"0123456789abcdef\"},\"levels\":[\"unit\"]}}}";
  lj_step_t *step = NULL;
  const char *s;
  size_t len = 0;
  int64_t sec = 0;
  int32_t nsec = -1;
  char *out = NULL;
  size_t out_len = 0;
  lj_error_t *err = NULL;
  CHECK(lj_step_decode(&step, value, strlen(value), &err) == LJ_OK);
  s = lj_step_string(step, LJ_STEP_FIELD_ID, &len);
  CHECK(s != NULL && strcmp(s, "s1") == 0 && len == 2);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_TOOL, NULL), "check ask") == 0);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_STATE, NULL), "running") == 0);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_OWNER, NULL), "o") == 0);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_REASON, NULL), "r") == 0);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_RESULT, NULL), "{\"a\": [1]}") == 0);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_ASK_WHAT, NULL), "check ask, git.x/r@0123456789ab, levels unit") == 0);
  CHECK(lj_step_string(step, 7, &len) == NULL && len == 0);
  CHECK(lj_step_string(NULL, LJ_STEP_FIELD_ID, &len) == NULL);
  CHECK(lj_step_time(&sec, &nsec, step, LJ_STEP_STARTED, &err) == LJ_OK);
  CHECK(sec == INT64_C(1714557600) && nsec == 250000000);
  CHECK(lj_step_time(&sec, &nsec, step, LJ_STEP_ENDED, NULL) == LJ_OK);
  CHECK(sec == INT64_C(-62135596800) && nsec == 0);
  CHECK(expect_error(lj_step_time(&sec, &nsec, step, 2, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_time(NULL, &nsec, step, 0, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_time(&sec, &nsec, NULL, 0, &err), LJ_EINVAL, &err, NULL));
  lj_step_destroy(step);
  lj_step_destroy(NULL);
  CHECK(lj_step_decode(&step, S("null"), NULL) == LJ_OK);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_STATE, NULL), "") == 0);
  CHECK(lj_step_string(step, LJ_STEP_FIELD_RESULT, NULL) == NULL);
  CHECK(lj_step_string(step, LJ_STEP_FIELD_ASK_WHAT, NULL) == NULL);
  lj_step_destroy(step);
  CHECK(expect_error(lj_step_decode(&step, S("{\"state\":1}"), &err), LJ_EPARSE, &err,
                     "the value is no step: its state is no string"));
  CHECK(step == NULL);
  CHECK(expect_error(lj_step_decode(&step, S("\xef\xbb\xbf{}"), &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_decode(&step, S(""), &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_decode(NULL, S("{}"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_decode(&step, NULL, 2, &err), LJ_EINVAL, &err, NULL));

  CHECK(lj_step_end_value(&out, &out_len, S("{ \"state\" : \"running\",\"result\":1 ,\"x\":\"\\u00e9\"}"), S("w <"),
                          NOW_NS + 500000000, &err) == LJ_OK);
  CHECK(strcmp(out, "{ \"state\" : \"failed\" ,\"x\":\"\\u00e9\",\"reason\":\"w \\u003c\",\"ended\":\"2024-05-01T12:00:00.5Z\"}") == 0);
  CHECK(out_len == strlen(out));
  lj_free(out);
  CHECK(lj_step_end_value(&out, NULL, S("{}"), S("w"), LJ_TIME_DEFAULT, NULL) == LJ_OK);
  CHECK(strncmp(out, "{\"state\":\"failed\",\"reason\":\"w\",\"ended\":\"20", 42) == 0);
  lj_free(out);
  CHECK(expect_error(lj_step_end_value(&out, NULL, S("{\"state\":"), S("w"), NOW_NS, &err), LJ_EPARSE, &err, NULL));
  CHECK(out == NULL);
  CHECK(expect_error(lj_step_end_value(&out, NULL, S("null"), S("w"), NOW_NS, &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_end_value(NULL, NULL, S("{}"), S("w"), NOW_NS, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_end_value(&out, NULL, S("{}"), NULL, 1, NOW_NS, &err), LJ_EINVAL, &err, NULL));

  CHECK(lj_step_ask_what(&out, &out_len, value, strlen(value), LJ_STEP_JSON_STEP, &err) == LJ_OK);
  CHECK(strcmp(out, "check ask, git.x/r@0123456789ab, levels unit") == 0);
  lj_free(out);
  CHECK(lj_step_ask_what(&out, NULL, S(" {\"kind\":\"build\",\"build\":{\"module\":\"m\",\"fp\":\"0123456789abcdef\"}} "),
                         LJ_STEP_JSON_ASK, NULL) == LJ_OK);
  CHECK(strcmp(out, "build ask, module m, fp 0123456789ab") == 0);
  lj_free(out);
  CHECK(expect_error(lj_step_ask_what(&out, NULL, S("{\"id\":\"x\"}"), LJ_STEP_JSON_STEP, &err), LJ_ENOTFOUND, &err,
                     "the step has no ask"));
  CHECK(expect_error(lj_step_ask_what(&out, NULL, S("{\"kind\":1}"), LJ_STEP_JSON_ASK, &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_ask_what(&out, NULL, S("{\"kind\":\"a\"},\"state\":\"x\""), LJ_STEP_JSON_ASK, &err),
                     LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_ask_what(&out, NULL, S("[]"), LJ_STEP_JSON_ASK, &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_ask_what(&out, NULL, S("{"), LJ_STEP_JSON_STEP, &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_ask_what(&out, NULL, S("{}"), 2, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_ask_what(NULL, NULL, S("{}"), 0, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_ask_what(&out, NULL, NULL, 2, 0, &err), LJ_EINVAL, &err, NULL));
}

static void test_text_out(void) {
  lj_step_plan_options_t o = plan_options();
  lj_step_action_t a;
  lj_step_t *step = NULL;
  char *out = NULL, *why = NULL, *said = NULL;
  size_t len = 0, why_len = 0, said_len = 0;
  lj_error_t *err = NULL;
  const char *field;

  /* AskWhat keeps the seed's 12-byte cut; what the cut splits, and a NUL, is U+FFFD. */
  CHECK(lj_step_ask_what(&out, &len, S("{\"kind\":\"build\",\"build\":{\"module\":\"m\",\"fp\":\"a\\u0000b\"}}"),
                         LJ_STEP_JSON_ASK, NULL) == LJ_OK);
  CHECK(c_string_is(out, len, "build ask, module m, fp a\xEF\xBF\xBD" "b"));
  lj_free(out);
  CHECK(lj_step_ask_what(&out, &len, S("{\"kind\":\"build\",\"build\":{\"module\":\"m\",\"fp\":\"12345678901\\u00e9\"}}"),
                         LJ_STEP_JSON_ASK, NULL) == LJ_OK);
  CHECK(c_string_is(out, len, "build ask, module m, fp 12345678901\xEF\xBF\xBD"));
  lj_free(out);
  /* The same line through the decoded step's field. */
  CHECK(lj_step_decode(&step, S("{\"id\":\"x\",\"ask\":{\"kind\":\"build\",\"build\":{\"module\":\"m\","
                                 "\"fp\":\"12345678901\\u00e9\"}}}"),
                       NULL) == LJ_OK);
  field = lj_step_string(step, LJ_STEP_FIELD_ASK_WHAT, &len);
  CHECK(c_string_is(field, len, "build ask, module m, fp 12345678901\xEF\xBF\xBD"));
  lj_step_destroy(step);

  /* said quotes the owner: its NUL is U+FFFD, from lj_step_said and from the plan. */
  memset(&a, 0, sizeof a);
  a.action = LJ_STEP_END;
  a.reason = LJ_STEP_OWNER_NOT_SELF;
  CHECK(lj_step_said(&out, &len, &a, "a\0b", 3, S("s"), NULL) == LJ_OK);
  CHECK(c_string_is(out, len, "its owner a\xEF\xBF\xBD" "b is not this process s"));
  lj_free(out);
  CHECK(lj_step_said(&out, &len, &a, S("a\xFF"), S("s\xC3"), NULL) == LJ_OK);
  CHECK(c_string_is(out, len, "its owner a\xEF\xBF\xBD is not this process s\xEF\xBF\xBD"));
  lj_free(out);
  CHECK(lj_step_plan(&a, &why, &why_len, &said, &said_len, S("n1.x"),
                     S("{\"id\":\"x\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"a\\u0000b\"}"), &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_OWNER_NOT_SELF);
  CHECK(c_string_is(why, why_len, RESTART));
  {
    char want[200];
    snprintf(want, sizeof want, "its owner a\xEF\xBF\xBD" "b is not this process %s", SELF);
    CHECK(c_string_is(said, said_len, want));
  }
  lj_free(why);
  lj_free(said);

  /* A key is a C string: a NUL in its node or id makes none. */
  CHECK(expect_error(lj_step_key(&out, &len, "a\0b", 3, S("id"), &err), LJ_EINVAL, &err,
                     "a node or id holding a NUL makes no key"));
  CHECK(out == NULL);
  CHECK(expect_error(lj_step_key(&out, &len, S("n1"), "i\0d", 3, &err), LJ_EINVAL, &err, NULL));
  /* Error messages quote arguments as text too. */
  CHECK(expect_error(lj_step_key(&out, &len, S("n.\xFF"), S("id"), &err), LJ_EINVAL, &err, NULL));
}

int main(void) {
  test_codec();
  test_text_out();
  return CHECK_SUMMARY();
}
