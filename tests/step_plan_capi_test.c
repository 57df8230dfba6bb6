/* The C ABI's step plan, from C: action and reason names, why and said, one step and a
 * batch planned, the summary's bounds; NULL and bad arguments included.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* lj_step_plan_options_t as versions 1 and 2 of the header declared it: the rule fields
 * side by side, the bound in seconds; version 1 ends before min_age_ms. */
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
  int64_t min_age_ms; /* version 2 */
} plan_options_v2;

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
  CHECK(bad.rules.bound_ms == 3600000 && bad.rules.rule == LJ_STEP_RULE_BY_OWNER &&
        bad.rules.now_ns == LJ_TIME_DEFAULT);
  CHECK(lj_step_plan_options_init(&bad, 99) == LJ_EVERSION);
  CHECK(lj_step_plan_options_init(NULL, LJ_STEP_PLAN_OPTIONS_VERSION) == LJ_EINVAL);

  CHECK(lj_step_plan(&a, &why, &why_len, &said, &said_len, S("n1.h"), other, strlen(other), &o, &err) == LJ_OK);
  CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_OWNER_NOT_SELF);
  /* The default rule, by-owner: not-self with an owner named (above), provably-dead
   * without one: another owner that cannot be proven gone keeps its step. */
  bad = o;
  bad.rules.owner = NULL;
  bad.rules.owner_len = 0;
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, strlen(other), &bad, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_OWNER_UNKNOWN);
  /* Not-self needs the owner named: without it every owner would be taken for gone. */
  bad.rules.rule = LJ_STEP_RULE_NOT_SELF;
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
  o.rules.bound_ms = 7200000;
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask), &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_ASK_WITHIN_BOUND && a.bound_sec == INT64_C(1714568399));
  o.rules.bound_ms = 3600000;
  /* min_age_ms: a step started less than that before now is left, whoever owns it (the
   * ask started 10:59:59, now is 12:00:00). */
  o.rules.min_age_ms = INT64_C(3601001);
  CHECK(lj_step_plan(&a, &why, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask), &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_UNDER_MIN_AGE);
  CHECK(strcmp(why, "") == 0); /* a leave's why is its reason's (lj_step_leave_why) */
  CHECK(strcmp(lj_step_leave_why(LJ_STEP_UNDER_MIN_AGE), "it started less than the minimum age (--min-age) ago") == 0);
  lj_free(why);
  o.rules.min_age_ms = INT64_C(3601000); /* exactly its age: the minimum is met */
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1." ASK_ID), old_ask, strlen(old_ask), &o, NULL) == LJ_OK);
  CHECK(a.reason == LJ_STEP_ASK_PAST_BOUND);
  o.rules.min_age_ms = -1;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, strlen(other), &o, &err), LJ_EINVAL,
                     &err, "the minimum age of -1000000 ns is negative"));
  o.rules.min_age_ms = INT64_MAX;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, strlen(other), &o, &err), LJ_EINVAL,
                     &err, NULL));
  o.rules.min_age_ms = 0;
  {
    /* lj_step_plan_options_init of an older version fills only that layout's bytes. */
    plan_options_v1 *v1 = (plan_options_v1 *)malloc(sizeof(plan_options_v1)); /* exactly its size */
    plan_options_v2 v2;
    CHECK(sizeof(plan_options_v1) == offsetof(plan_options_v2, min_age_ms));
    memset(v1, 0x5a, sizeof *v1);
    CHECK(lj_step_plan_options_init((lj_step_plan_options_t *)v1, 1) == LJ_OK && v1->version == 1 &&
          v1->bound_seconds == 3600 && v1->rule == LJ_STEP_RULE_BY_OWNER && v1->start_tolerance_ms == 5000 &&
          v1->threads == 1 && v1->before_ns == LJ_TIME_DEFAULT && v1->node == NULL);
    CHECK(lj_step_plan_options_init((lj_step_plan_options_t *)&v2, 2) == LJ_OK && v2.version == 2 &&
          v2.bound_seconds == 3600 && v2.min_age_ms == 0);
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
  o.rules.rule = LJ_STEP_RULE_PROVABLY_DEAD;
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
  bad.rules.node_len = 0;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err,
                     "the rules name no node"));
  bad.rules.node = "a.b";
  bad.rules.node_len = 3;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rules.bound_ms = 0;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rules.rule = 7;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rules.owner = NULL;
  CHECK(expect_error(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), other, 3, &bad, &err), LJ_EINVAL, &err, NULL));
  /* Defaults: this process's token, start and clock. A step this very process owns is left. */
  {
    char *token = NULL;
    size_t token_len = 0;
    char value[256];
    lj_step_plan_options_t d;
    lj_step_plan_options_init(&d, LJ_STEP_PLAN_OPTIONS_VERSION);
    d.rules.node = "n1";
    d.rules.node_len = 2;
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

/* The JSON-lines plan of lines by opts: its answer bytes and summary. */
static char *plan_of(const char *lines, const void *opts, lj_step_plan_summary_t *summary) {
  char *out = NULL;
  size_t len = 0;
  if (lj_step_plan_lines(&out, &len, summary, lines, strlen(lines), (const lj_step_plan_options_t *)opts, NULL) != LJ_OK)
    return NULL;
  return out;
}

static void test_old_layouts(void) {
  /* A program built against version 1 or 2 passes the flat layout; the library reads it
   * by its version: the same bytes and verdicts as today's struct with the same rules.
   * The lines: another owner's step (ended, not-self), this process's (left), an ask
   * past the bound of an hour and one within two hours (bound 7200 s: left), a step
   * started a minute ago (min age 2 min in version 2: left), no step, another node. */
  static const char lines[] =
      "{\"key\":\"n1.a\",\"value\":{\"id\":\"a\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"o.1.2\","
      "\"started\":\"2024-05-01T10:00:00Z\"}}\n"
      "{\"key\":\"n1.b\",\"value\":{\"id\":\"b\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"0b5c3e0e-7d7a-"
      "4c4b-9d5e-1f2a3b4c5d6e.4242.lvq1g2a8\"}}\n"
      "{\"key\":\"n1." ASK_ID "\",\"value\":{\"id\":\"" ASK_ID "\",\"tool\":\"check ask\",\"state\":\"running\","
      "\"started\":\"2024-05-01T10:30:00Z\"}}\n"
      "{\"key\":\"n1.c\",\"value\":{\"id\":\"c\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"o.1.2\","
      "\"started\":\"2024-05-01T11:59:00Z\"}}\n"
      "{\"key\":\"n1.d\",\"value\":\"no step\"}\n"
      "{\"key\":\"n2.e\",\"value\":{\"id\":\"e\",\"state\":\"running\"}}\n";
  lj_step_plan_options_t now = plan_options();
  plan_options_v1 *v1 = (plan_options_v1 *)malloc(sizeof(plan_options_v1)); /* exactly its size */
  plan_options_v2 v2;
  lj_step_plan_summary_t s_now, s_old;
  char *want, *got;
  int bound;
  memset(&v2, 0, sizeof v2);
  v2.version = 2;
  v2.node = "n1";
  v2.node_len = 2;
  v2.owner = SELF;
  v2.owner_len = strlen(SELF);
  v2.before_ns = BEFORE_NS;
  v2.now_ns = NOW_NS;
  v2.rule = LJ_STEP_RULE_BY_OWNER;
  v2.start_tolerance_ms = 5000;
  v2.threads = 1;
  for (bound = 3600; bound <= 7200; bound += 3600) {
    now.rules.bound_ms = (int64_t)bound * 1000;
    now.rules.min_age_ms = 0;
    v2.bound_seconds = bound;
    v2.min_age_ms = 0;
    memcpy(v1, &v2, sizeof *v1);
    v1->version = 1;
    want = plan_of(lines, &now, &s_now);
    got = plan_of(lines, v1, &s_old);
    CHECK(want != NULL && got != NULL && strcmp(want, got) == 0 && memcmp(&s_now, &s_old, sizeof s_now) == 0);
    CHECK(s_now.ends == (bound == 3600 ? 3u : 2u) && s_now.leaves == (bound == 3600 ? 1u : 2u) &&
          s_now.no_step == 1 && s_now.other_node == 1);
    lj_free(got);
    got = plan_of(lines, &v2, &s_old);
    CHECK(got != NULL && strcmp(want, got) == 0 && memcmp(&s_now, &s_old, sizeof s_now) == 0);
    lj_free(got);
    lj_free(want);
    /* Version 2's minimum age: the step started a minute ago is left under two. */
    now.rules.min_age_ms = v2.min_age_ms = 120000;
    want = plan_of(lines, &now, &s_now);
    got = plan_of(lines, &v2, &s_old);
    CHECK(want != NULL && got != NULL && strcmp(want, got) == 0 && memcmp(&s_now, &s_old, sizeof s_now) == 0);
    CHECK(strstr(want, "{\"key\":\"n1.c\",\"action\":\"leave\",\"reason\":\"under-min-age\"") != NULL);
    lj_free(got);
    lj_free(want);
  }
  /* An old layout out of range is refused as today's is. */
  v2.bound_seconds = 0;
  CHECK(plan_of(lines, &v2, &s_old) == NULL);
  free(v1);
}

/* RFC 3339 of ms since the epoch, UTC. */
static void rfc3339_ms(char *out, size_t cap, int64_t ms) {
  time_t sec = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&sec, &tm);
  snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
           tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static void test_rules_resolve(void) {
  static const char gone[] = "only owners proven gone (dead, recycled, rebooted) are ended";
  lj_step_rules_t r;
  int rule = -1;
  char *owner = NULL, *why = NULL, *token = NULL, *parent = NULL, want[256];
  size_t owner_len = 0, why_len = 0, token_len = 0, parent_len = 0;
  int64_t own_start = 0, parent_start = 0;
  CHECK(lj_step_rules_init(&r, LJ_STEP_RULES_VERSION) == LJ_OK);
  CHECK(r.version == 1 && r.node == NULL && r.owner == NULL && r.before_ns == LJ_TIME_DEFAULT &&
        r.now_ns == LJ_TIME_DEFAULT && r.bound_ms == 3600000 && r.rule == LJ_STEP_RULE_BY_OWNER &&
        r.start_tolerance_ms == 5000 && r.min_age_ms == 0 && r.self_pid == 0);
  r.node = "n1";
  r.node_len = 2;
  /* No owner named: provably-dead, "self" this process's token. */
  CHECK(lj_owner_token(&token, &token_len, 0, NULL) == LJ_OK);
  CHECK(lj_step_rules_resolve(&rule, &owner, &owner_len, &why, &why_len, &r, NULL) == LJ_OK);
  snprintf(want, sizeof want, "rule provably-dead (no owner named): %s, never a step whose owner is alive on this node",
           gone);
  CHECK(rule == LJ_STEP_RULE_PROVABLY_DEAD && strcmp(owner, token) == 0 && owner_len == token_len);
  CHECK(strcmp(why, want) == 0 && why_len == strlen(want));
  lj_free(owner);
  lj_free(why);
  /* Named: not-self; provably-dead when asked. */
  r.owner = SELF;
  r.owner_len = strlen(SELF);
  CHECK(lj_step_rules_resolve(&rule, &owner, NULL, &why, NULL, &r, NULL) == LJ_OK);
  snprintf(want, sizeof want, "rule not-self: every owner but %s is taken for gone", SELF);
  CHECK(rule == LJ_STEP_RULE_NOT_SELF && strcmp(owner, SELF) == 0 && strcmp(why, want) == 0);
  lj_free(owner);
  lj_free(why);
  r.rule = LJ_STEP_RULE_PROVABLY_DEAD;
  CHECK(lj_step_rules_resolve(&rule, NULL, NULL, &why, NULL, &r, NULL) == LJ_OK);
  snprintf(want, sizeof want, "rule provably-dead: %s", gone);
  CHECK(rule == LJ_STEP_RULE_PROVABLY_DEAD && strcmp(why, want) == 0);
  lj_free(why);
  /* self_pid: the parent's token is "self", its start the default before. */
  r = plan_options().rules;
  r.owner = NULL;
  r.owner_len = 0;
  r.before_ns = LJ_TIME_DEFAULT;
  r.self_pid = getppid();
  CHECK(lj_owner_token(&parent, &parent_len, (int32_t)getppid(), NULL) == LJ_OK);
  CHECK(lj_step_rules_resolve(&rule, &owner, &owner_len, NULL, NULL, &r, NULL) == LJ_OK);
  CHECK(owner != NULL && strcmp(owner, parent) == 0 && owner_len == parent_len);
  lj_free(owner);
  CHECK(lj_owner_token_parse(NULL, NULL, NULL, &own_start, token, token_len, NULL) == LJ_OK);
  CHECK(lj_owner_token_parse(NULL, NULL, NULL, &parent_start, parent, parent_len, NULL) == LJ_OK);
  if (parent_start < own_start) {
    /* A hand-started step with no owner, started when the parent did: not before the
     * parent's start (left), before this process's (ended). */
    lj_step_plan_options_t o = plan_options();
    lj_step_action_t a;
    char started[64], step[256];
    rfc3339_ms(started, sizeof started, parent_start);
    snprintf(step, sizeof step, "{\"id\":\"h\",\"tool\":\"lint\",\"state\":\"running\",\"started\":\"%s\"}",
             started);
    o.rules = r;
    CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), step, strlen(step), &o, NULL) == LJ_OK);
    CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_STARTED_SINCE);
    o.rules.self_pid = 0;
    CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.h"), step, strlen(step), &o, NULL) == LJ_OK);
    CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_STARTED_BEFORE);
  }
  lj_free(token);
  lj_free(parent);
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
  test_old_layouts();
  test_rules_resolve();
  test_names();
  test_why_and_said();
  test_plan_one();
  test_batch();
  test_summary_bounds();
  return CHECK_SUMMARY();
}
