/* The C ABI's step plan, from C: action and reason names, why and said, one step and a
 * batch planned, the summary's bounds; NULL and bad arguments included.
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

static void test_names(void) {
  CHECK(strcmp(lj_step_action_name(LJ_STEP_LEAVE), "leave") == 0);
  CHECK(strcmp(lj_step_action_name(LJ_STEP_END), "end") == 0);
  CHECK(strcmp(lj_step_action_name(LJ_STEP_DELETE), "delete") == 0);
  CHECK(strcmp(lj_step_action_name(3), "") == 0);
  CHECK(strcmp(lj_step_action_name(-1), "") == 0);
  CHECK(strcmp(lj_step_reason_name(LJ_STEP_OTHER_NODE), "other-node") == 0);
  CHECK(strcmp(lj_step_reason_name(LJ_STEP_ASK_PAST_BOUND), "ask-past-bound") == 0);
  CHECK(strcmp(lj_step_reason_name(LJ_STEP_STARTED_SINCE), "started-since") == 0);
  CHECK(strcmp(lj_step_leave_why(LJ_STEP_NOT_RUNNING), "the step is not running") == 0);
  CHECK(strcmp(lj_step_leave_why(LJ_STEP_OWNER_ALIVE), "its owner is alive") == 0);
  CHECK(strcmp(lj_step_leave_why(LJ_STEP_OTHER_NODE), "the key is no step key of this node") == 0);
  CHECK(strcmp(lj_step_leave_why(LJ_STEP_OWNER_GONE), "") == 0); /* an end's reason: no leave why */
  CHECK(strcmp(lj_step_leave_why(-1), "") == 0);
  CHECK(strcmp(lj_step_leave_why(1000), "") == 0);
  CHECK(strcmp(lj_step_reason_name(LJ_STEP_UNDER_MIN_AGE), "under-min-age") == 0);
  CHECK(strcmp(lj_step_reason_name(14), "") == 0);
  CHECK(strcmp(lj_step_reason_name(-1), "") == 0);
  CHECK(sizeof(lj_step_action_t) == 16);
  CHECK(sizeof(lj_step_entry_t) == 32);
}

static void test_why_and_said(void) {
  char buf[LJ_STEP_WHY_MAX];
  size_t len = 0;
  char *said = (char *)1;
  size_t said_len = 0;
  lj_error_t *err = NULL;
  lj_step_action_t a = {LJ_STEP_END, LJ_STEP_ASK_PAST_BOUND, 0, 0, INT64_C(1714564799)};
  CHECK(lj_step_why(buf, sizeof buf, &len, &a, &err) == LJ_OK);
  CHECK(strcmp(buf, "past the step bound: its asker stopped waiting at 2024-05-01T11:59:59Z") == 0);
  CHECK(len == strlen(buf));
  a.reason = LJ_STEP_OWNER_NOT_SELF;
  CHECK(lj_step_why(buf, sizeof buf, NULL, &a, NULL) == LJ_OK);
  CHECK(strcmp(buf, RESTART) == 0);
  a.action = LJ_STEP_LEAVE;
  a.reason = LJ_STEP_OWNED_BY_SELF;
  CHECK(lj_step_why(buf, sizeof buf, &len, &a, NULL) == LJ_OK);
  CHECK(len == 0 && buf[0] == '\0');
  CHECK(expect_error(lj_step_why(buf, LJ_STEP_WHY_MAX - 1, &len, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_why(NULL, sizeof buf, &len, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_why(buf, sizeof buf, &len, NULL, &err), LJ_EINVAL, &err, NULL));
  a.reason = 40;
  CHECK(expect_error(lj_step_why(buf, sizeof buf, &len, &a, &err), LJ_EINVAL, &err, NULL));
  a.reason = LJ_STEP_ASK_PAST_BOUND;
  a.bound_nsec = 1000000000;
  CHECK(expect_error(lj_step_why(buf, sizeof buf, &len, &a, &err), LJ_EINVAL, &err, NULL));
  a.bound_nsec = 0;

  a.action = LJ_STEP_END;
  a.reason = LJ_STEP_OWNER_NOT_SELF;
  CHECK(lj_step_said(&said, &said_len, &a, S("o.1.2"), S("me.1.2"), &err) == LJ_OK);
  CHECK(strcmp(said, "its owner o.1.2 is not this process me.1.2") == 0);
  CHECK(said_len == strlen(said));
  lj_free(said);
  CHECK(lj_step_said(&said, NULL, &a, S("o.1.2"), NULL, 0, NULL) == LJ_OK);
  CHECK(strncmp(said, "its owner o.1.2 is not this process ", 36) == 0 && strlen(said) > 40);
  lj_free(said);
  a.reason = LJ_STEP_STARTED_BEFORE;
  CHECK(lj_step_said(&said, NULL, &a, NULL, 0, S("me"), NULL) == LJ_OK);
  CHECK(strcmp(said, "it names no owner (an older build wrote it) and started before this process") == 0);
  lj_free(said);
  CHECK(expect_error(lj_step_said(NULL, NULL, &a, NULL, 0, NULL, 0, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_said(&said, NULL, NULL, NULL, 0, NULL, 0, &err), LJ_EINVAL, &err, NULL));
  CHECK(said == NULL);
  CHECK(expect_error(lj_step_said(&said, NULL, &a, NULL, 3, NULL, 0, &err), LJ_EINVAL, &err, NULL));
}

static int judge_dead(lj_holder_state_t *out, const char *token, size_t len, void *payload) {
  (void)token;
  (void)len;
  ++*(int *)payload;
  *out = LJ_HOLDER_DEAD;
  return 0;
}

static int judge_stop(lj_holder_state_t *out, const char *token, size_t len, void *payload) {
  (void)out;
  (void)token;
  (void)len;
  (void)payload;
  return 1;
}

/* lj_step_plan_options_t as version 1 of the header declared it. */
typedef struct {
  uint32_t version;
  const char *node;
  size_t node_len;
  const char *owner;
  size_t owner_len;
  int64_t before_ns, now_ns, bound_seconds;
  int rule;
  int64_t start_tolerance_ms;
  int (*owner_state)(lj_holder_state_t *out_state, const char *token, size_t token_len, void *payload);
  void *payload;
  uint32_t threads;
} plan_options_v1;

static void test_plan_one(void) {
  lj_step_plan_options_t o = plan_options(), bad;
  lj_step_action_t a;
  char *why = NULL, *said = NULL;
  size_t why_len = 0, said_len = 0;
  lj_error_t *err = NULL;
  int judged = 0;
  const char *other = "{\"id\":\"h\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\"}";
  const char *old_ask = "{\"id\":\"x\",\"tool\":\"check ask\",\"state\":\"running\",\"started\":\"2024-05-01T10:59:59Z\"}";

  CHECK(lj_step_plan_options_init(&bad, LJ_STEP_PLAN_OPTIONS_VERSION) == LJ_OK);
  CHECK(bad.bound_seconds == 3600 && bad.rule == LJ_STEP_RULE_BY_OWNER && bad.now_ns == LJ_STEP_DEFAULT_TIME);
  CHECK(lj_step_plan_options_init(&bad, 99) == LJ_EVERSION);
  CHECK(lj_step_plan_options_init(NULL, LJ_STEP_PLAN_OPTIONS_VERSION) == LJ_EINVAL);

  CHECK(lj_step_plan(&a, &why, &why_len, &said, &said_len, S("n1.h"), other, strlen(other), &o, &err) == LJ_OK);
  CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_OWNER_NOT_SELF);
  /* The default rule, by-owner: not-self with an owner named (above), provably-dead
   * without one: another owner that cannot be proven gone keeps its step. */
  bad = o;
  bad.owner = NULL;
  bad.owner_len = 0;
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, strlen(other), &bad, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_OWNER_UNKNOWN);
  /* Not-self needs the owner named: without it every owner would be taken for gone. */
  bad.rule = LJ_STEP_RULE_NOT_SELF;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, strlen(other), &bad, &err),
                     LJ_EINVAL, &err, NULL));
  CHECK(strcmp(why, RESTART) == 0 && why_len == strlen(RESTART));
  CHECK(strncmp(said, "its owner o.1.2 is not this process 0b5c3e0e-", 45) == 0 && said_len == strlen(said));
  lj_free(why);
  lj_free(said);
  CHECK(lj_step_plan(&a, &why, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask), &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_ASK_PAST_BOUND);
  CHECK(a.bound_sec == INT64_C(1714564799) && a.bound_nsec == 0);
  CHECK(strcmp(why, "past the step bound: its asker stopped waiting at 2024-05-01T11:59:59Z") == 0);
  lj_free(why);
  o.bound_seconds = 7200;
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask), &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_ASK_WITHIN_BOUND && a.bound_sec == INT64_C(1714568399));
  o.bound_seconds = 3600;
  /* min_age_ms: a step started less than that before now is left, whoever owns it (the
   * ask started 10:59:59, now is 12:00:00). */
  o.min_age_ms = INT64_C(3601001);
  CHECK(lj_step_plan(&a, &why, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask), &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_UNDER_MIN_AGE);
  CHECK(strcmp(why, "") == 0); /* a leave's why is its reason's (lj_step_leave_why) */
  CHECK(strcmp(lj_step_leave_why(LJ_STEP_UNDER_MIN_AGE), "it started less than the minimum age (--min-age) ago") == 0);
  lj_free(why);
  o.min_age_ms = INT64_C(3601000); /* exactly its age: the minimum is met */
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask), &o, NULL) == LJ_OK);
  CHECK(a.reason == LJ_STEP_ASK_PAST_BOUND);
  o.min_age_ms = -1;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, strlen(other), &o, &err), LJ_EINVAL,
                     &err, "the minimum age of -1000000 ns is negative"));
  o.min_age_ms = INT64_MAX;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, strlen(other), &o, &err), LJ_EINVAL,
                     &err, NULL));
  {
    /* A caller built against version 1: its struct ends before min_age_ms, and is read
     * as it is, the same verdicts. */
    plan_options_v1 *v1 = (plan_options_v1 *)malloc(sizeof(plan_options_v1)); /* exactly its size */
    lj_step_action_t b;
    CHECK(sizeof(plan_options_v1) == offsetof(lj_step_plan_options_t, min_age_ms));
    o.min_age_ms = 0;
    memcpy(v1, &o, sizeof *v1);
    v1->version = 1;
    CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask),
                       (const lj_step_plan_options_t *)v1, NULL) == LJ_OK);
    CHECK(lj_step_plan(&b, NULL, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask), &o, NULL) == LJ_OK);
    CHECK(memcmp(&a, &b, sizeof a) == 0 && a.reason == LJ_STEP_ASK_PAST_BOUND);
    memset(v1, 0x5a, sizeof *v1);
    CHECK(lj_step_plan_options_init((lj_step_plan_options_t *)v1, 1) == LJ_OK && v1->version == 1 &&
          v1->bound_seconds == 3600);
    free(v1);
  }
  /* Untouched: no value, no step, other node, and bytes that are not UTF-8. */
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), NULL, 0, &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_NO_VALUE);
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), S("{\"state\":\"running\"}\xff"), &o, NULL) == LJ_OK);
  CHECK(a.reason == LJ_STEP_NO_STEP);
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), S("{\"state\":\"running\",\"owner\":\"\xff\"}"), &o, NULL) ==
        LJ_OK);
  CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_OWNER_NOT_SELF);
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n2.h"), other, strlen(other), &o, NULL) == LJ_OK);
  CHECK(a.reason == LJ_STEP_OTHER_NODE);
  /* The rule provably-dead, with the caller's judge. */
  o.rule = LJ_STEP_RULE_PROVABLY_DEAD;
  o.owner_state = judge_dead;
  o.payload = &judged;
  CHECK(lj_step_plan(&a, NULL, NULL, &said, NULL, S("n1.h"), other, strlen(other), &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_OWNER_GONE && judged == 1);
  CHECK(strcmp(said, "its owner o.1.2 is provably gone: the caller judged its owner dead") == 0);
  lj_free(said);
  o.owner_state = judge_stop;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, strlen(other), &o, &err), LJ_EUSER,
                     &err, NULL));
  o = plan_options();
  /* Bad arguments. */
  CHECK(expect_error(lj_step_plan(NULL, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, NULL, 3, other, 3, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), NULL, 3, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, NULL, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.version = LJ_STEP_PLAN_OPTIONS_VERSION + 1;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EVERSION, &err, NULL));
  bad = o;
  bad.node_len = 0;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err,
                     "the rules name no node"));
  bad.node = "a.b";
  bad.node_len = 3;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.bound_seconds = 0;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rule = 7;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.owner = NULL;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err, NULL));
  /* Defaults: this process's token, start and clock. A step this very process owns is left. */
  {
    char *token = NULL;
    size_t token_len = 0;
    char value[256];
    lj_step_plan_options_t d;
    lj_step_plan_options_init(&d, LJ_STEP_PLAN_OPTIONS_VERSION);
    d.node = "n1";
    d.node_len = 2;
    CHECK(lj_owner_token(&token, &token_len, 0, NULL) == LJ_OK);
    snprintf(value, sizeof value, "{\"state\":\"running\",\"owner\":\"%s\"}", token);
    CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), value, strlen(value), &d, NULL) == LJ_OK);
    CHECK(a.reason == LJ_STEP_OWNED_BY_SELF);
    CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), S("{\"state\":\"running\",\"started\":\"2999-01-01T00:00:00Z\"}"),
                       &d, NULL) == LJ_OK);
    CHECK(a.reason == LJ_STEP_STARTED_SINCE);
    CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), S("{\"state\":\"running\",\"started\":\"2001-01-01T00:00:00Z\"}"),
                       &d, NULL) == LJ_OK);
    CHECK(a.reason == LJ_STEP_STARTED_BEFORE);
    lj_free(token);
  }
}

static void test_batch(void) {
  const char *values[] = {
      "{\"id\":\"a\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\"}",
      "{\"id\":\"b\",\"tool\":\"check ask\",\"state\":\"running\",\"owner\":\"o.1.2\"}",
      "{\"id\":\"c\",\"tool\":\"go build\",\"state\":\"succeeded\"}",
      "{\"id\":\"d\",\"state\":\"running\"",
      "",
      "{\"id\":\"f\",\"state\":\"running\",\"owner\":\"o\"}",
  };
  const char *keys[] = {"n1.a", "n1." ASK_ID, "n1.c", "n1.d", "n1.e", "n2.f"};
  char buffer[1024];
  size_t len = 0, i;
  lj_step_entry_t entries[6];
  lj_step_action_t out[6];
  lj_step_plan_summary_t sum;
  lj_step_plan_options_t o = plan_options();
  lj_error_t *err = NULL;
  for (i = 0; i < 6; i++) {
    entries[i].key_offset = len;
    entries[i].key_len = (uint32_t)strlen(keys[i]);
    memcpy(buffer + len, keys[i], entries[i].key_len);
    len += entries[i].key_len;
    entries[i].value_offset = len;
    entries[i].value_len = (uint32_t)strlen(values[i]);
    memcpy(buffer + len, values[i], entries[i].value_len);
    len += entries[i].value_len;
    entries[i].revision = i + 1;
  }
  memset(out, 0xAB, sizeof out);
  CHECK(lj_step_plan_batch(out, 6, &sum, buffer, len, sizeof buffer - len, entries, 6, &o, &err) == LJ_OK);
  CHECK(out[0].action == LJ_STEP_END && out[0].reason == LJ_STEP_OWNER_NOT_SELF && out[0].reserved == 0);
  CHECK(out[1].action == LJ_STEP_DELETE && out[1].reason == LJ_STEP_OWNER_NOT_SELF);
  CHECK(out[2].action == LJ_STEP_LEAVE && out[2].reason == LJ_STEP_NOT_RUNNING);
  CHECK(out[3].action == LJ_STEP_LEAVE && out[3].reason == LJ_STEP_NO_STEP);
  CHECK(out[4].action == LJ_STEP_LEAVE && out[4].reason == LJ_STEP_NO_VALUE);
  CHECK(out[5].action == LJ_STEP_LEAVE && out[5].reason == LJ_STEP_OTHER_NODE);
  CHECK(sum.ends == 1 && sum.deletes == 1 && sum.leaves == 1 && sum.no_step == 2 && sum.other_node == 1 &&
        sum.malformed == 0);
  {
    /* lj_step_plan_entries, without the deprecated padding: the same verdicts. */
    lj_step_action_t again[6];
    lj_step_plan_summary_t sum2;
    memset(again, 0xCD, sizeof again);
    CHECK(lj_step_plan_entries(again, 6, &sum2, buffer, len, entries, 6, &o, &err) == LJ_OK);
    CHECK(memcmp(again, out, sizeof again) == 0 && memcmp(&sum2, &sum, sizeof sum) == 0);
    CHECK(expect_error(lj_step_plan_entries(again, 5, NULL, buffer, len, entries, 6, &o, &err), LJ_EINVAL, &err,
                       NULL));
  }
  o.threads = 2;
  CHECK(lj_step_plan_batch(out, 6, NULL, buffer, len, 0, entries, 6, &o, NULL) == LJ_OK);
  CHECK(out[1].action == LJ_STEP_DELETE);
  CHECK(lj_step_plan_batch(NULL, 0, NULL, NULL, 0, 0, NULL, 0, &o, NULL) == LJ_OK);
  CHECK(expect_error(lj_step_plan_batch(out, 5, NULL, buffer, len, 0, entries, 6, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_batch(NULL, 6, NULL, buffer, len, 0, entries, 6, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_batch(out, 6, NULL, buffer, len, 0, NULL, 6, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_batch(out, 6, NULL, NULL, len, 0, entries, 6, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_batch(out, 6, NULL, buffer, 10, 0, entries, 6, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_batch(out, 6, NULL, buffer, len, 0, entries, 6, NULL, &err), LJ_EINVAL, &err, NULL));
  entries[2].value_offset = UINT64_MAX - 2;
  CHECK(expect_error(lj_step_plan_batch(out, 6, NULL, buffer, len, 0, entries, 6, &o, &err), LJ_EINVAL, &err, NULL));
}

/* The summary's key count never wraps: counts no plan gives are refused. */
static void test_summary_bounds(void) {
  lj_step_plan_summary_t sum;
  char *out = NULL;
  size_t len = 0;
  lj_error_t *err = NULL;
  memset(&sum, 0, sizeof sum);
  sum.ends = UINT64_MAX;
  CHECK(lj_step_plan_summary_format(&out, &len, &sum, NULL) == LJ_OK);
  CHECK(c_string_is(out, len,
                    "step plan: 18446744073709551615 keys: 18446744073709551615 end, 0 delete, 0 leave, 0 no-step, "
                    "0 other-node, 0 malformed lines"));
  lj_free(out);
  sum.other_node = 1;
  CHECK(expect_error(lj_step_plan_summary_format(&out, &len, &sum, &err), LJ_EINVAL, &err,
                     "the summary's counts add up to more keys than 2^64-1: no plan gives it"));
  CHECK(out == NULL);
  sum.ends = 0;
  sum.other_node = UINT64_MAX;
  sum.malformed = UINT64_MAX; /* malformed lines are no keys: not added */
  CHECK(lj_step_plan_summary_format(&out, &len, &sum, NULL) == LJ_OK);
  CHECK(c_string_is(out, len,
                    "step plan: 18446744073709551615 keys: 0 end, 0 delete, 0 leave, 0 no-step, "
                    "18446744073709551615 other-node, 18446744073709551615 malformed lines"));
  lj_free(out);
}

int main(void) {
  test_names();
  test_why_and_said();
  test_plan_one();
  test_batch();
  test_summary_bounds();
  return CHECK_SUMMARY();
}
