/* The C ABI's step and sweep parts, from C: every entry point, NULL and bad
 * arguments included. TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L /* pipe, read, write, close */
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
/* The answer line of a line that is no entry. */
#define MALFORMED(key, what) \
  "{\"key\":" key ",\"action\":\"leave\",\"reason\":\"malformed\",\"why\":\"" what "\",\"malformed\":\"" what "\"}\n"

static lj_step_plan_options_t plan_options(void) {
  lj_step_plan_options_t o = LJ_STEP_PLAN_OPTIONS_INIT;
  o.node = "n1";
  o.node_len = 2;
  o.owner = SELF;
  o.owner_len = strlen(SELF);
  o.before_ns = BEFORE_NS;
  o.now_ns = NOW_NS;
  return o;
}

/* errp, not err: the call that sets *errp is an argument of the same call. */
static int expect_error(int rc, int code, lj_error_t **errp, const char *message) {
  lj_error_t *err = *errp;
  int ok;
  *errp = NULL;
  ok = rc == code && err != NULL && lj_error_code(err) == code &&
           (message == NULL || strcmp(lj_error_message(err), message) == 0);
  if (!ok && err != NULL) printf("# got %d: %s\n", rc, lj_error_message(err));
  lj_error_destroy(err);
  return ok;
}

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

/* The answers a plan fed in pieces hands out, gathered. */
struct answers {
  char text[4096];
  size_t len, calls, stop_after;
};
static int gather(const char *data, size_t len, void *payload) {
  struct answers *a = (struct answers *)payload;
  if (a->stop_after != 0 && a->calls == a->stop_after) return 1;
  a->calls++;
  if (a->len + len >= sizeof a->text) return 1;
  memcpy(a->text + a->len, data, len);
  a->len += len;
  a->text[a->len] = '\0';
  return 0;
}

/* The same lines fed in pieces of every size from one byte. */
static void test_lines_fed(const char *input, const char *expected, const lj_step_plan_options_t *o) {
  size_t piece, at, n = strlen(input);
  lj_step_lines_plan_t *plan = NULL;
  lj_step_plan_summary_t sum;
  lj_error_t *err = NULL;
  struct answers a;
  for (piece = 1; piece <= n + 1; piece += piece < 8 ? 1 : 97) {
    memset(&a, 0, sizeof a);
    CHECK(lj_step_lines_plan_create(&plan, o, &err) == LJ_OK);
    for (at = 0; at < n; at += piece)
      CHECK(lj_step_lines_plan_feed(plan, input + at, n - at < piece ? n - at : piece, gather, &a, &err) == LJ_OK);
    CHECK(lj_step_lines_plan_feed(plan, NULL, 0, gather, &a, &err) == LJ_OK);
    memset(&sum, 0xff, sizeof sum);
    CHECK(lj_step_lines_plan_finish(&sum, plan, gather, &a, &err) == LJ_OK);
    CHECK(strcmp(a.text, expected) == 0);
    CHECK(sum.ends == 3 && sum.deletes == 0 && sum.leaves == 0 && sum.no_step == 2 && sum.other_node == 1 &&
          sum.malformed == 4);
    lj_step_lines_plan_destroy(plan);
  }
  /* A write that asks to stop: LJ_EUSER, and nothing more is handed out. */
  memset(&a, 0, sizeof a);
  a.stop_after = 1;
  CHECK(lj_step_lines_plan_create(&plan, o, &err) == LJ_OK);
  CHECK(lj_step_lines_plan_feed(plan, input, 100, gather, &a, &err) == LJ_OK);
  CHECK(expect_error(lj_step_lines_plan_feed(plan, input + 100, n - 100, gather, &a, &err), LJ_EUSER, &err,
                     "the write callback asked to stop the plan"));
  CHECK(a.calls == 1);
  lj_step_lines_plan_destroy(plan);
  /* Bad arguments. */
  plan = (lj_step_lines_plan_t *)&a;
  CHECK(expect_error(lj_step_lines_plan_create(&plan, NULL, &err), LJ_EINVAL, &err, NULL));
  CHECK(plan == NULL);
  CHECK(expect_error(lj_step_lines_plan_create(NULL, o, &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_lines_plan_create(&plan, o, &err) == LJ_OK);
  CHECK(expect_error(lj_step_lines_plan_feed(NULL, input, n, gather, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_lines_plan_feed(plan, input, n, NULL, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_lines_plan_feed(plan, NULL, 3, gather, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_lines_plan_finish(&sum, NULL, gather, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_lines_plan_finish(&sum, plan, NULL, &a, &err), LJ_EINVAL, &err, NULL));
  lj_step_lines_plan_destroy(plan);
  lj_step_lines_plan_destroy(NULL);
}

/* The same lines streamed from a pipe to a pipe, and descriptors that cannot be used. */
static void test_lines_fd(const char *input, const char *expected, const lj_step_plan_options_t *o) {
  int in[2], out[2];
  char got[4096];
  size_t got_len = 0;
  ssize_t n;
  lj_step_plan_summary_t sum;
  lj_error_t *err = NULL;
  CHECK(pipe(in) == 0 && pipe(out) == 0);
  CHECK(write(in[1], input, strlen(input)) == (ssize_t)strlen(input));
  close(in[1]);
  memset(&sum, 0xff, sizeof sum);
  CHECK(lj_step_plan_lines_fd(&sum, in[0], out[1], o, &err) == LJ_OK);
  close(out[1]);
  while ((n = read(out[0], got + got_len, sizeof got - 1 - got_len)) > 0) got_len += (size_t)n;
  got[got_len] = '\0';
  CHECK(got_len == strlen(expected) && strcmp(got, expected) == 0);
  CHECK(sum.ends == 3 && sum.deletes == 0 && sum.leaves == 0 && sum.no_step == 2 && sum.other_node == 1 &&
        sum.malformed == 4);
  close(in[0]);
  close(out[0]);

  CHECK(expect_error(lj_step_plan_lines_fd(NULL, -1, 1, o, &err), LJ_EINVAL, &err,
                     "the file descriptors must not be negative"));
  CHECK(expect_error(lj_step_plan_lines_fd(NULL, 0, -2, o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_lines_fd(NULL, 0, 1, NULL, &err), LJ_EINVAL, &err, NULL));
  /* A descriptor closed already cannot be read; the read end of a pipe cannot be
   * written: each an I/O error, and the summary says what was planned before. */
  CHECK(pipe(in) == 0);
  close(in[0]);
  close(in[1]);
  CHECK(expect_error(lj_step_plan_lines_fd(&sum, in[0], 1, o, &err), LJ_EIO, &err, NULL));
  CHECK(sum.ends == 0 && sum.malformed == 0);
  CHECK(pipe(in) == 0 && pipe(out) == 0);
  CHECK(write(in[1], input, strlen(input)) == (ssize_t)strlen(input));
  close(in[1]);
  CHECK(expect_error(lj_step_plan_lines_fd(&sum, in[0], out[0], o, &err), LJ_EIO, &err, NULL));
  CHECK(sum.ends == 3 && sum.malformed == 4);
  close(in[0]);
  close(out[0]);
  close(out[1]);
}

/* An answer many times longer than its input (the answer's room is guessed from the
   input's size, then grown): every byte of it as one line's answer written n times. */
static void test_lines_long_answer(void) {
  enum { n = 200000 };
  static const char one[] = MALFORMED("null", "it names no key");
  const size_t one_len = sizeof one - 1;
  char *input = malloc(3 * n), *out = NULL;
  size_t out_len = 0, i;
  lj_step_plan_summary_t sum;
  lj_step_plan_options_t o = plan_options();
  int same = 1;
  CHECK(input != NULL);
  if (input == NULL) return;
  for (i = 0; i < n; ++i) memcpy(input + 3 * i, "{}\n", 3);
  CHECK(lj_step_plan_lines(&out, &out_len, &sum, input, 3 * n, &o, NULL) == LJ_OK);
  CHECK(out != NULL && out_len == n * one_len && out[out_len] == '\0');
  for (i = 0; out != NULL && out_len == n * one_len && i < n && same; ++i)
    same = memcmp(out + i * one_len, one, one_len) == 0;
  CHECK(same);
  CHECK(sum.malformed == n && sum.ends == 0 && sum.leaves == 0);
  lj_free(out);
  free(input);
}

/* Appends to a buffer that grows: the answers of a large plan. */
struct grown {
  char *text;
  size_t len, cap;
};
static int grow_append(const char *data, size_t len, void *payload) {
  struct grown *g = (struct grown *)payload;
  if (g->len + len + 1 > g->cap) {
    size_t cap = 2 * (g->len + len + 1);
    char *more = realloc(g->text, cap);
    if (more == NULL) return 1;
    g->text = more;
    g->cap = cap;
  }
  memcpy(g->text + g->len, data, len);
  g->len += len;
  g->text[g->len] = '\0';
  return 0;
}

/* The lines of test_lines, thousands of times over (megabytes: each piece of input is
 * shared between threads), planned over 1, 2 and 5 threads in memory, fed in pieces and
 * streamed between files (0 threads as one, UINT32_MAX as 64): the same answers as the
 * hand-written ones, as many times. */
static void test_lines_threads(const char *input, const char *expected) {
  enum { copies = 3000 };
  size_t in_len = strlen(input), ex_len = strlen(expected), i;
  char *big = malloc(copies * (in_len + 1)), *want = malloc(copies * ex_len + 1);
  uint32_t threads[] = {1, 2, 5, 0, UINT32_MAX}; /* 0: one; past 64: 64 */
  size_t t;
  CHECK(big != NULL && want != NULL);
  if (big == NULL || want == NULL) return;
  for (i = 0; i < copies; ++i) {
    memcpy(big + i * (in_len + 1), input, in_len);
    big[i * (in_len + 1) + in_len] = '\n';
    memcpy(want + i * ex_len, expected, ex_len);
  }
  want[copies * ex_len] = '\0';
  for (t = 0; t < sizeof threads / sizeof threads[0]; ++t) {
    lj_step_plan_options_t o = plan_options();
    lj_step_plan_summary_t sum;
    lj_step_lines_plan_t *plan = NULL;
    struct grown g = {NULL, 0, 0};
    char *out = NULL;
    size_t out_len = 0, at, piece = 700001;
    FILE *in_file = tmpfile(), *out_file = tmpfile();
    o.threads = threads[t];
    CHECK(lj_step_plan_lines(&out, &out_len, &sum, big, copies * (in_len + 1), &o, NULL) == LJ_OK);
    CHECK(out != NULL && out_len == copies * ex_len && memcmp(out, want, out_len) == 0);
    CHECK(sum.ends == 3 * copies && sum.no_step == 2 * copies && sum.other_node == copies && sum.malformed == 4 * copies);
    lj_free(out);
    CHECK(lj_step_lines_plan_create(&plan, &o, NULL) == LJ_OK);
    for (at = 0; at < copies * (in_len + 1); at += piece) {
      size_t n = copies * (in_len + 1) - at < piece ? copies * (in_len + 1) - at : piece;
      CHECK(lj_step_lines_plan_feed(plan, big + at, n, grow_append, &g, NULL) == LJ_OK);
    }
    memset(&sum, 0xff, sizeof sum);
    CHECK(lj_step_lines_plan_finish(&sum, plan, grow_append, &g, NULL) == LJ_OK);
    CHECK(g.len == copies * ex_len && g.text != NULL && strcmp(g.text, want) == 0);
    CHECK(sum.ends == 3 * copies && sum.malformed == 4 * copies);
    lj_step_lines_plan_destroy(plan);
    free(g.text);
    CHECK(in_file != NULL && out_file != NULL);
    if (in_file != NULL && out_file != NULL) {
      char *back = malloc(copies * ex_len + 1);
      CHECK(fwrite(big, 1, copies * (in_len + 1), in_file) == copies * (in_len + 1) && fflush(in_file) == 0);
      rewind(in_file);
      memset(&sum, 0xff, sizeof sum);
      CHECK(lj_step_plan_lines_fd(&sum, fileno(in_file), fileno(out_file), &o, NULL) == LJ_OK);
      CHECK(sum.ends == 3 * copies && sum.malformed == 4 * copies);
      rewind(out_file);
      CHECK(back != NULL && fread(back, 1, copies * ex_len + 1, out_file) == copies * ex_len);
      CHECK(back != NULL && memcmp(back, want, copies * ex_len) == 0);
      free(back);
    }
    if (in_file != NULL) fclose(in_file);
    if (out_file != NULL) fclose(out_file);
  }
  free(big);
  free(want);
}

static void test_lines(void) {
  const char *input =
      "{\"key\":\"n1.h\",\"revision\":3,\"value\":{\"id\":\"h\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\"}}\n"
      "\n"
      "  \r\n"
      "{\"key\":\"n2.x\",\"value\":{\"state\":\"running\"}}\n"
      "{\"key\":\"n1.q\",\"value\":\"{\\\"state\\\":\\\"running\\\",\\\"owner\\\":\\\"o\\\"\"}\n"
      "{\"key\":\"n1.e\"}\n"
      "not json\n"
      "{\"value\":{}}\n"
      "{\"key\":7}\n"
      "{\"key\":\"n1.r\",\"revision\":-1}\n"
      "{\"key\":\"n1.\xff\",\"value\":{\"state\":\"running\",\"owner\":\"\xfe\"}}\r\n"
      "{\"key\":\"n1.s\",\"value\":\"{\\\"state\\\":\\\"running\\\",\\\"owner\\\":\\\"o\\\"}\"}";
  const char *expected =
      "{\"key\":\"n1.h\",\"action\":\"end\",\"reason\":\"owner-not-self\",\"why\":\"" RESTART "\"}\n"
      "{\"key\":\"n2.x\",\"action\":\"leave\",\"reason\":\"other-node\",\"why\":\"the key is no step key of this node\"}\n"
      "{\"key\":\"n1.q\",\"action\":\"leave\",\"reason\":\"no-step\",\"why\":\"the value is no step (Go's decoder refuses it)\"}\n"
      "{\"key\":\"n1.e\",\"action\":\"leave\",\"reason\":\"no-value\",\"why\":\"the key holds no value\"}\n"
      MALFORMED("null", "the line is not one JSON value")
      MALFORMED("null", "it names no key")
      MALFORMED("null", "its key is no string")
      MALFORMED("\"n1.r\"", "its revision is no integer from 0 to 2^64-1")
      "{\"key\":\"n1.\xef\xbf\xbd\",\"action\":\"end\",\"reason\":\"owner-not-self\",\"why\":\"" RESTART "\"}\n"
      "{\"key\":\"n1.s\",\"action\":\"end\",\"reason\":\"owner-not-self\",\"why\":\"" RESTART "\"}\n";
  char *out = NULL, *line = NULL;
  size_t out_len = 0, line_len = 0;
  lj_step_plan_summary_t sum;
  lj_step_plan_options_t o = plan_options();
  lj_error_t *err = NULL;
  CHECK(lj_step_plan_lines(&out, &out_len, &sum, input, strlen(input), &o, &err) == LJ_OK);
  CHECK(out != NULL && strcmp(out, expected) == 0);
  if (out != NULL && strcmp(out, expected) != 0) printf("# got:\n%s", out);
  CHECK(out_len == strlen(expected));
  CHECK(sum.ends == 3 && sum.deletes == 0 && sum.leaves == 0 && sum.no_step == 2 && sum.other_node == 1 &&
        sum.malformed == 4);
  lj_free(out);
  CHECK(lj_step_plan_summary_format(&line, &line_len, &sum, &err) == LJ_OK);
  CHECK(strcmp(line, "step plan: 6 keys: 3 end, 0 delete, 0 leave, 2 no-step, 1 other-node, 4 malformed lines") == 0);
  CHECK(line_len == strlen(line));
  lj_free(line);
  {
    /* One key, one malformed line: singular nouns. */
    lj_step_plan_summary_t one;
    memset(&one, 0, sizeof one);
    one.leaves = 1;
    one.malformed = 1;
    CHECK(lj_step_plan_summary_format(&line, &line_len, &one, NULL) == LJ_OK);
    CHECK(strcmp(line, "step plan: 1 key: 0 end, 0 delete, 1 leave, 0 no-step, 0 other-node, 1 malformed line") == 0);
    lj_free(line);
  }
  CHECK(lj_step_plan_lines(&out, &out_len, NULL, NULL, 0, &o, NULL) == LJ_OK);
  CHECK(out_len == 0 && out != NULL && out[0] == '\0');
  lj_free(out);
  CHECK(expect_error(lj_step_plan_lines(NULL, &out_len, NULL, input, 3, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_lines(&out, &out_len, NULL, NULL, 3, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_lines(&out, &out_len, NULL, input, 3, NULL, &err), LJ_EINVAL, &err, NULL));
  CHECK(out == NULL);
  test_lines_fd(input, expected, &o);
  test_lines_fed(input, expected, &o);
  test_lines_threads(input, expected);
  CHECK(expect_error(lj_step_plan_summary_format(&line, NULL, NULL, &err), LJ_EINVAL, &err, NULL));
  CHECK(line == NULL);
  CHECK(expect_error(lj_step_plan_summary_format(NULL, NULL, &sum, &err), LJ_EINVAL, &err, NULL));
}

static void test_keys_and_times(void) {
  char *key = NULL;
  size_t len = 0, node_len = 0;
  int ask = -1;
  int64_t ns = 0;
  lj_error_t *err = NULL;
  CHECK(lj_step_key(&key, &len, S("n1"), S("a.b"), &err) == LJ_OK);
  CHECK(strcmp(key, "n1.a.b") == 0 && len == 6);
  lj_free(key);
  CHECK(expect_error(lj_step_key(&key, &len, S("n.1"), S("a"), &err), LJ_EINVAL, &err, NULL));
  CHECK(key == NULL);
  CHECK(expect_error(lj_step_key(&key, &len, S(""), S("a"), &err), LJ_EINVAL, &err, "a step's node is empty"));
  CHECK(expect_error(lj_step_key(&key, &len, S("n1"), S(""), &err), LJ_EINVAL, &err, "a step's id is empty"));
  CHECK(expect_error(lj_step_key(NULL, &len, S("n1"), S("a"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_key(&key, &len, NULL, 2, S("a"), &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_key_parse(&node_len, S("n1.a.b"), NULL) == LJ_OK && node_len == 2);
  CHECK(expect_error(lj_step_key_parse(&node_len, S("n1"), &err), LJ_EPARSE, &err, "the key n1 is no step key <node>.<id>"));
  CHECK(expect_error(lj_step_key_parse(&node_len, S(".a"), &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_key_parse(NULL, S("n1.a"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_key_parse(&node_len, NULL, 4, &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_ask_key_parse(&node_len, S("node7." ASK_ID), NULL) == LJ_OK && node_len == 5);
  CHECK(lj_step_ask_key_parse(&node_len, S("n1.6F1C2D3E-4A5B-4C6D-8E7F-0A1B2C3D4E5F"), NULL) == LJ_OK);
  CHECK(expect_error(lj_step_ask_key_parse(&node_len, S("n1.abc"), &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_ask_key_parse(NULL, S("n1.abc"), &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_is_ask(&ask, S("n1." ASK_ID), S("check ask"), NULL) == LJ_OK && ask == 1);
  CHECK(lj_step_is_ask(&ask, S("n1." ASK_ID), S("check"), NULL) == LJ_OK && ask == 0);
  CHECK(lj_step_is_ask(&ask, S("n1.a"), S("check ask"), NULL) == LJ_OK && ask == 0);
  CHECK(expect_error(lj_step_is_ask(NULL, S("n1.a"), S("x"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_is_ask(&ask, S("n1.a"), NULL, 1, &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_time_parse(&ns, S("2024-05-01T12:00:00Z"), &err) == LJ_OK && ns == NOW_NS);
  CHECK(lj_step_time_parse(&ns, S("2024-05-01T13:00:00.5+01:00"), NULL) == LJ_OK && ns == NOW_NS + 500000000);
  CHECK(expect_error(lj_step_time_parse(&ns, S("x"), &err), LJ_EPARSE, &err, "\"x\" is no RFC 3339 time"));
  CHECK(expect_error(lj_step_time_parse(&ns, S("2024-05-01"), &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_time_parse(&ns, S("3000-01-01T00:00:00Z"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_time_parse(NULL, S("x"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_time_parse(&ns, NULL, 1, &err), LJ_EINVAL, &err, NULL));
}

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
  CHECK(lj_step_end_value(&out, NULL, S("{}"), S("w"), LJ_STEP_DEFAULT_TIME, NULL) == LJ_OK);
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

/* --- sweeps ------------------------------------------------------------------------- */

struct log_lines {
  char lines[16][512];
  int count;
  int stop_at; /* return non-zero at this line (1-based); 0: never */
  int live;
  int live_calls;
  int live_stop;
};

static int log_line(const char *line, size_t len, void *payload) {
  struct log_lines *l = (struct log_lines *)payload;
  if (strlen(line) != len) return 1;
  if (l->count < 16) {
    snprintf(l->lines[l->count], sizeof l->lines[0], "%s", line);
  }
  l->count++;
  return l->stop_at != 0 && l->count >= l->stop_at;
}

static int live_of(int *out, const char *id, size_t len, void *payload) {
  struct log_lines *l = (struct log_lines *)payload;
  (void)len;
  l->live_calls++;
  if (strcmp(id, "h") != 0) return 1;
  *out = l->live;
  return l->live_stop;
}

static lj_sweep_options_t sweep_options(struct log_lines *l) {
  lj_sweep_options_t o = LJ_SWEEP_OPTIONS_INIT;
  o.owner = SELF;
  o.owner_len = strlen(SELF);
  o.before_ns = BEFORE_NS;
  o.now_ns = NOW_NS;
  o.log = log_line;
  o.live = live_of;
  o.payload = l;
  o.retry_ms = 1;
  return o;
}

static lj_store_t *filled_store(void) {
  lj_store_t *store = NULL;
  uint64_t rev = 0;
  const char *self_step_fmt = "{\"id\":\"own\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"%s\"}";
  char own[256];
  snprintf(own, sizeof own, self_step_fmt, SELF);
  /* In key order, the order the memory store's scan hands them over (as first written). */
  lj_store_memory_open(&store, NULL);
  lj_store_create(&rev, store, S("n1." ASK_ID),
                  S("{\"id\":\"" ASK_ID "\",\"tool\":\"check ask\",\"state\":\"running\",\"owner\":\"o.1.2\"}"), NULL);
  lj_store_create(&rev, store, S("n1.bad"), S("{\"state\":\"running\",\"owner\":\"o.1.2\"} trailing"), NULL);
  lj_store_create(&rev, store, S("n1.h"),
                  S("{\"id\":\"h\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\","
                    "\"started\":\"2024-05-01T11:30:00Z\",\"result\":[1]}"),
                  NULL);
  lj_store_create(&rev, store, S("n1.own"), own, strlen(own), NULL);
  lj_store_create(&rev, store, S("n2.h"), S("{\"id\":\"h\",\"state\":\"running\",\"owner\":\"o.1.2\"}"), NULL);
  return store;
}

static int failing_keys(lj_store_sink_t *sink, void *payload) {
  (void)sink;
  (void)payload;
  return LJ_ESTORE;
}
static int no_get(lj_store_sink_t *sink, const char *key, size_t len, void *payload) {
  (void)sink; (void)key; (void)len; (void)payload;
  return LJ_OK;
}
static int no_update(uint64_t *out, const char *key, size_t len, const char *v, size_t vl, uint64_t rev, void *payload) {
  (void)out; (void)key; (void)len; (void)v; (void)vl; (void)rev; (void)payload;
  return LJ_ESTORE;
}
static int no_create(uint64_t *out, const char *key, size_t len, const char *v, size_t vl, void *payload) {
  (void)out; (void)key; (void)len; (void)v; (void)vl; (void)payload;
  return LJ_ESTORE;
}
static int no_remove(const char *key, size_t len, uint64_t rev, void *payload) {
  (void)key; (void)len; (void)rev; (void)payload;
  return LJ_ESTORE;
}

static void test_end_stale(void) {
  struct log_lines l;
  lj_sweep_options_t o, bad;
  lj_sweep_report_t *report = NULL;
  lj_sweep_counts_t counts;
  lj_store_t *store = filled_store();
  lj_error_t *err = NULL;
  char *value = NULL;
  size_t len = 0;
  uint64_t rev = 0;
  memset(&l, 0, sizeof l);
  o = sweep_options(&l);

  CHECK(lj_sweep_options_init(&bad, LJ_SWEEP_OPTIONS_VERSION) == LJ_OK);
  CHECK(bad.attempts == 6 && bad.retry_ms == 5000 && bad.bound_seconds == 3600 && bad.log == NULL);
  CHECK(lj_sweep_options_init(&bad, 0) == LJ_EVERSION);
  CHECK(lj_sweep_options_init(NULL, LJ_SWEEP_OPTIONS_VERSION) == LJ_EINVAL);

  CHECK(lj_sweep_end_stale(&report, store, S("n1"), LJ_STEP_DEFAULT_TIME, &o, &err) == LJ_OK);
  CHECK(lj_sweep_report_code(report) == LJ_OK);
  CHECK(strcmp(lj_sweep_report_message(report), "") == 0);
  CHECK(lj_sweep_report_ended_count(report) == 2);
  CHECK(strcmp(lj_sweep_report_ended(report, 0, &len), ASK_ID) == 0 && len == 36);
  CHECK(strcmp(lj_sweep_report_ended(report, 1, NULL), "h") == 0);
  CHECK(lj_sweep_report_ended(report, 2, &len) == NULL && len == 0);
  CHECK(lj_sweep_report_counts(&counts, report) == LJ_OK);
  CHECK(counts.ends == 1 && counts.deletes == 1 && counts.changed == 0 && counts.leaves == 1 && counts.no_step == 1 &&
        counts.other_node == 0); /* the other node's key is never read */
  lj_sweep_report_destroy(report);
  CHECK(l.count == 2);
  CHECK(strcmp(l.lines[0], "the step n1." ASK_ID " (check ask, started 0001-01-01T00:00:00Z) was left running and is "
                           "deleted, left to the stream's redelivery: " RESTART "; its owner o.1.2 is not this process "
                           "0b5c3e0e-7d7a-4c4b-9d5e-1f2a3b4c5d6e.4242.lvq1g2a8") == 0);
  CHECK(strcmp(l.lines[1], "the step n1.h (go build, started 2024-05-01T11:30:00Z) was left running and is ended: " RESTART
                           "; its owner o.1.2 is not this process 0b5c3e0e-7d7a-4c4b-9d5e-1f2a3b4c5d6e.4242.lvq1g2a8") == 0);
  CHECK(lj_store_get(&value, &len, &rev, store, S("n1.h"), NULL) == LJ_OK);
  CHECK(strcmp(value, "{\"id\":\"h\",\"tool\":\"go build\",\"state\":\"failed\",\"owner\":\"o.1.2\",\"started\":"
                      "\"2024-05-01T11:30:00Z\",\"reason\":\"" RESTART "\",\"ended\":\"2024-05-01T12:00:00Z\"}") == 0);
  lj_free(value);
  CHECK(lj_store_get(&value, &len, &rev, store, S("n1." ASK_ID), NULL) == LJ_ENOTFOUND);
  CHECK(lj_store_get(&value, &len, &rev, store, S("n1.bad"), NULL) == LJ_OK);
  CHECK(strcmp(value, "{\"state\":\"running\",\"owner\":\"o.1.2\"} trailing") == 0);
  lj_free(value);
  lj_store_destroy(store);

  /* The log asks to stop: the sweep stops before its next store call. */
  store = filled_store();
  memset(&l, 0, sizeof l);
  l.stop_at = 1;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &o, &err), LJ_EUSER, &err, NULL));
  CHECK(lj_sweep_report_code(report) == LJ_EUSER);
  CHECK(lj_sweep_report_ended_count(report) == 1);
  lj_sweep_report_destroy(report);
  CHECK(lj_store_get(&value, &len, &rev, store, S("n1.h"), NULL) == LJ_OK);
  CHECK(strstr(value, "\"running\"") != NULL);
  lj_free(value);
  lj_store_destroy(store);

  /* A store that cannot list. */
  {
    lj_store_callbacks_t cb = LJ_STORE_CALLBACKS_INIT;
    cb.keys = failing_keys;
    cb.get = no_get;
    cb.update = no_update;
    cb.create = no_create;
    cb.remove = no_remove;
    CHECK(lj_store_from_callbacks(&store, &cb, NULL, NULL) == LJ_OK);
    CHECK(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, NULL, &err) == LJ_ESTORE);
    CHECK(err != NULL && strncmp(lj_error_message(err), "buildstep: listing the steps of n1: ", 36) == 0);
    lj_error_destroy(err);
    CHECK(lj_sweep_report_code(report) == LJ_ESTORE);
    CHECK(strncmp(lj_sweep_report_message(report), "buildstep: listing the steps of n1: ", 36) == 0);
    CHECK(lj_sweep_report_ended_count(report) == 0);
    lj_sweep_report_destroy(report);
    CHECK(lj_sweep_end_stale(NULL, store, S("n1"), BEFORE_NS, NULL, NULL) == LJ_ESTORE);
    lj_store_destroy(store);
  }

  /* Bad arguments. */
  store = filled_store();
  CHECK(expect_error(lj_sweep_end_stale(&report, NULL, S("n1"), BEFORE_NS, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(report == NULL);
  CHECK(expect_error(lj_sweep_end_stale(&report, store, NULL, 2, BEFORE_NS, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S(""), BEFORE_NS, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n.1"), BEFORE_NS, &o, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.version = 9;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EVERSION, &err, NULL));
  bad = o;
  bad.attempts = 0;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.retry_ms = -1;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.bound_seconds = -5;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rule = 3;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rule = LJ_STEP_RULE_NOT_SELF;
  bad.owner = NULL;
  bad.owner_len = 0;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.owner = NULL;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  lj_store_destroy(store);

  /* Report accessors on NULL. */
  CHECK(lj_sweep_report_ended_count(NULL) == 0);
  CHECK(lj_sweep_report_ended(NULL, 0, &len) == NULL && len == 0);
  CHECK(lj_sweep_report_counts(&counts, NULL) == LJ_EINVAL);
  CHECK(lj_sweep_report_counts(NULL, NULL) == LJ_EINVAL);
  CHECK(lj_sweep_report_code(NULL) == LJ_EINVAL);
  CHECK(strcmp(lj_sweep_report_message(NULL), "") == 0);
  lj_sweep_report_destroy(NULL);
}

static void test_end_one(void) {
  struct log_lines l;
  lj_sweep_options_t o;
  lj_store_t *store = filled_store();
  lj_step_t *step = NULL;
  char *value = NULL;
  size_t len = 0;
  lj_error_t *err = NULL;
  memset(&l, 0, sizeof l);
  o = sweep_options(&l);

  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("n2.h"), S("w"), &o, &err), LJ_EINVAL, &err,
                     "the step \"n2.h\" is of node \"n2\", this module runs on \"n1\""));
  CHECK(step == NULL && value == NULL);
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("h"), S(" "), &o, &err), LJ_EINVAL, &err,
                     "say why the step is ended (why)"));
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("zz"), S("w"), &o, &err), LJ_ENOTFOUND, &err,
                     "no step n1.zz in the steps state"));
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("bad"), S("w"), &o, &err), LJ_EPARSE, &err,
                     "the step n1.bad is no step: the value is not valid JSON"));
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("own"), S("w"), &o, &err), LJ_EREFUSED, &err,
                     "the step n1.own was started by this process and may run now; only a step a previous process "
                     "left is ended"));
  l.live = 1;
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("n1.h"), S("w"), &o, &err), LJ_EREFUSED, &err,
                     NULL));
  CHECK(l.live_calls == 1);
  l.live = 0;
  l.live_stop = 1;
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("n1.h"), S("w"), &o, &err), LJ_EUSER, &err,
                     NULL));
  l.live_stop = 0;
  CHECK(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S(" n1.h\n"), S("stuck"), &o, &err) == LJ_OK);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_STATE, NULL), "failed") == 0);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_REASON, NULL), "stuck") == 0);
  CHECK(strcmp(lj_step_string(step, LJ_STEP_FIELD_RESULT, NULL), "[1]") == 0);
  CHECK(strcmp(value, "{\"id\":\"h\",\"tool\":\"go build\",\"state\":\"failed\",\"owner\":\"o.1.2\",\"started\":"
                      "\"2024-05-01T11:30:00Z\",\"reason\":\"stuck\",\"ended\":\"2024-05-01T12:00:00Z\"}") == 0);
  CHECK(len == strlen(value));
  lj_step_destroy(step);
  lj_free(value);
  step = NULL;
  value = NULL;
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("h"), S("w"), &o, &err), LJ_EREFUSED, &err,
                     "the step n1.h is failed, not running"));
  CHECK(lj_sweep_end_one(NULL, NULL, NULL, store, S("n1"), S(ASK_ID), S("w"), NULL, &err) == LJ_OK);
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, NULL, S("n1"), S("h"), S("w"), &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, NULL, 0, S("h"), S("w"), &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), NULL, 1, S("w"), &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("h"), NULL, 1, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S(""), S("w"), &o, &err), LJ_EINVAL, &err,
                     "a step's id is empty"));
  lj_store_destroy(store);
}

static void test_start_and_round(void) {
  struct log_lines l;
  lj_sweep_options_t o;
  lj_sweep_signals_t *signals = NULL;
  lj_sweep_report_t *report = (lj_sweep_report_t *)1;
  lj_store_t *store = filled_store();
  lj_error_t *err = NULL;
  memset(&l, 0, sizeof l);
  o = sweep_options(&l);

  CHECK(lj_sweep_signals_create(&signals, &err) == LJ_OK);
  CHECK(expect_error(lj_sweep_signals_create(NULL, &err), LJ_EINVAL, &err, NULL));
  /* Not served: the round does nothing. */
  CHECK(lj_sweep_end_stale_round(&report, store, S("n1"), signals, &o, &err) == LJ_OK);
  CHECK(report == NULL && l.count == 0);
  CHECK(lj_sweep_signals_serve(signals) == LJ_OK);
  CHECK(lj_sweep_end_stale_at_start(&report, store, S("n1"), BEFORE_NS, signals, &o, &err) == LJ_OK);
  CHECK(report != NULL && lj_sweep_report_ended_count(report) == 2);
  CHECK(l.count == 3 && strcmp(l.lines[2], "2 steps of n1 left running by a previous process ended") == 0);
  lj_sweep_report_destroy(report);
  CHECK(lj_sweep_end_stale_round(&report, store, S("n1"), signals, &o, &err) == LJ_OK);
  CHECK(report != NULL && lj_sweep_report_ended_count(report) == 0);
  lj_sweep_report_destroy(report);
  CHECK(lj_sweep_end_stale_round(NULL, store, S("n1"), signals, NULL, NULL) == LJ_OK);
  /* The boot id note, from an owner without one. */
  memset(&l, 0, sizeof l);
  o.owner = "no-boot-id.4242.lvq1g2a8";
  o.owner_len = strlen(o.owner);
  CHECK(lj_sweep_end_stale_at_start(NULL, store, S("n1"), BEFORE_NS, signals, &o, NULL) == LJ_OK);
  CHECK(l.count == 2);
  CHECK(strcmp(l.lines[0], "the boot id of n1 cannot be read (/proc/sys/kernel/random/boot_id): its steps' owner is "
                           "no-boot-id.4242.lvq1g2a8, told apart by pid and start only") == 0);
  lj_sweep_signals_destroy(signals);
  /* Cancelled before serving: no sweep. */
  CHECK(lj_sweep_signals_create(&signals, NULL) == LJ_OK);
  CHECK(lj_sweep_signals_cancel(signals) == LJ_OK);
  memset(&l, 0, sizeof l);
  CHECK(lj_sweep_end_stale_at_start(&report, store, S("n1"), BEFORE_NS, signals, &o, &err) == LJ_OK);
  CHECK(report == NULL && l.count == 0);
  /* Bad arguments. */
  CHECK(expect_error(lj_sweep_end_stale_at_start(&report, store, S("n1"), BEFORE_NS, NULL, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_stale_at_start(&report, NULL, S("n1"), BEFORE_NS, signals, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_stale_at_start(&report, store, S(""), BEFORE_NS, signals, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_stale_round(&report, store, S("n1"), NULL, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_stale_round(&report, NULL, S("n1"), signals, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_sweep_end_stale_round(&report, store, S("a.b"), signals, &o, &err), LJ_EINVAL, &err, NULL));
  o.version = 0;
  CHECK(expect_error(lj_sweep_end_stale_round(&report, store, S("n1"), signals, &o, &err), LJ_EVERSION, &err, NULL));
  CHECK(lj_sweep_signals_serve(NULL) == LJ_EINVAL);
  CHECK(lj_sweep_signals_cancel(NULL) == LJ_EINVAL);
  lj_sweep_signals_destroy(signals);
  lj_sweep_signals_destroy(NULL);
  lj_store_destroy(store);
}

/* --- hostile input: returned text holds no NUL and is UTF-8 ----------------------- */

static int c_string_is(const char *got, size_t len, const char *want) {
  return got != NULL && len == strlen(want) && strlen(got) == len && memcmp(got, want, len) == 0;
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
  test_lines();
  test_lines_long_answer();
  test_keys_and_times();
  test_codec();
  test_end_stale();
  test_end_one();
  test_start_and_round();
  test_text_out();
  test_summary_bounds();
  return CHECK_SUMMARY();
}
