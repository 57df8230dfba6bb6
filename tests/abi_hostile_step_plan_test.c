/* Every exported symbol of the C ABI's step plan part with hostile arguments (NULL, empty,
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

static lj_step_plan_options_t plan_options(void) {
  lj_step_plan_options_t o = LJ_STEP_PLAN_OPTIONS_INIT;
  o.rules.node = "n1";
  o.rules.node_len = 2;
  o.rules.owner = "no-boot-id.1.2";
  o.rules.owner_len = 14;
  o.rules.now_ns = NOW_NS;
  o.rules.before_ns = NOW_NS;
  return o;
}

/* Every way a set of plan options is out of range, through one call. */
static void bad_plan_options(int (*call)(const lj_step_plan_options_t *, lj_error_t **)) {
  lj_error_t *err = NULL;
  lj_step_plan_options_t o;
  REFUSED(call(NULL, &err), LJ_EINVAL);
  o = plan_options();
  o.version = 0;
  REFUSED(call(&o, &err), LJ_EVERSION);
  o.version = LJ_STEP_PLAN_OPTIONS_VERSION + 1;
  REFUSED(call(&o, &err), LJ_EVERSION);
  o = plan_options();
  o.rules.node = NULL;
  o.rules.node_len = 0;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.rules.node = NULL;
  o.rules.node_len = 2;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.rules.node = "a.b";
  o.rules.node_len = 3;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.rules.owner = NULL;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.rules.bound_ms = 0;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.rules.bound_ms = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.rules.bound_ms = INT64_MAX;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.rules.rule = 3;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.rules.rule = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.rules.start_tolerance_ms = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.rules.version = 0;
  REFUSED(call(&o, &err), LJ_EVERSION);
  o.rules.version = LJ_STEP_RULES_VERSION + 1;
  REFUSED(call(&o, &err), LJ_EVERSION);
  o = plan_options();
  o.rules.min_age_ms = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.rules.self_pid = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
}

/* The rules alone, as lj_step_rules_resolve takes them. */
static lj_step_rules_t rules(void) {
  return plan_options().rules;
}

static void case_step_rules(void) {
  lj_error_t *err = NULL;
  lj_step_rules_t r;
  int rule = -1;
  char *owner = NULL, *why = NULL;
  size_t owner_len = 0, why_len = 0;
  /* Each way the rules are out of range, and the code it gets. */
  static const struct {
    int field; /* 0 node, 1 owner, 2 bound_ms, 3 rule, 4 start_tolerance_ms, 5 min_age_ms, 6 self_pid, 7 version */
    const char *text;
    size_t len;
    int64_t number;
    int code;
  } bad[] = {
      {0, NULL, 0, 0, LJ_EINVAL},        {0, NULL, 2, 0, LJ_EINVAL},      {0, "a.b", 3, 0, LJ_EINVAL},
      {1, NULL, 5, 0, LJ_EINVAL},      {1, "garbage", 7, 0, LJ_EINVAL},
      {2, NULL, 0, -1, LJ_EINVAL},       {2, NULL, 0, 0, LJ_EINVAL},      {2, NULL, 0, INT64_MAX, LJ_EINVAL},
      {3, NULL, 0, 3, LJ_EINVAL},        {3, NULL, 0, -1, LJ_EINVAL},     {4, NULL, 0, -1, LJ_EINVAL},
      {5, NULL, 0, -1, LJ_EINVAL},       {5, NULL, 0, INT64_MAX, LJ_EINVAL}, {6, NULL, 0, -1, LJ_EINVAL},
      {6, NULL, 0, INT64_MAX, LJ_EINVAL}, {6, NULL, 0, (int64_t)INT32_MAX + 1, LJ_EINVAL},
      {6, NULL, 0, INT32_MAX, LJ_ENOTFOUND}, /* past any pid_max: no process */
      {7, NULL, 0, 0, LJ_EVERSION},      {7, NULL, 0, LJ_STEP_RULES_VERSION + 1, LJ_EVERSION},
  };
  size_t i;

  REFUSED(lj_step_rules_init(NULL, LJ_STEP_RULES_VERSION), LJ_EINVAL);
  REFUSED(lj_step_rules_init(&r, 0), LJ_EVERSION);
  REFUSED(lj_step_rules_init(&r, LJ_STEP_RULES_VERSION + 1), LJ_EVERSION);
  CHECK(lj_step_rules_init(&r, LJ_STEP_RULES_VERSION) == LJ_OK && r.bound_ms == 3600000 && r.self_pid == 0);

  REFUSED(lj_step_rules_resolve(&rule, &owner, &owner_len, &why, &why_len, NULL, &err), LJ_EINVAL);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    r = rules();
    switch (bad[i].field) {
      case 0:
        r.node = bad[i].text;
        r.node_len = bad[i].len;
        break;
      case 1:
        r.owner = bad[i].text;
        r.owner_len = bad[i].len;
        break;
      case 2:
        r.bound_ms = bad[i].number;
        break;
      case 3:
        r.rule = (int)bad[i].number;
        break;
      case 4:
        r.start_tolerance_ms = bad[i].number;
        break;
      case 5:
        r.min_age_ms = bad[i].number;
        break;
      case 6:
        r.owner = NULL; /* self_pid stands for the owner not named */
        r.owner_len = 0;
        r.self_pid = bad[i].number;
        break;
      default:
        r.version = (uint32_t)bad[i].number;
    }
    REFUSED(lj_step_rules_resolve(&rule, &owner, &owner_len, &why, &why_len, &r, &err), bad[i].code);
    CHECK(owner == NULL && why == NULL && rule == -1);
  }
  /* Not-self with no owner named: every owner would be taken for gone. */
  r = rules();
  r.owner = NULL;
  r.owner_len = 0;
  r.rule = LJ_STEP_RULE_NOT_SELF;
  REFUSED(lj_step_rules_resolve(&rule, &owner, &owner_len, &why, &why_len, &r, &err), LJ_EINVAL);
  /* A node holding a NUL is a node (keys are bytes); every out may be NULL; what is
   * asked for is text. */
  r = rules();
  r.node = "a\0b";
  r.node_len = 3;
  CHECK(lj_step_rules_resolve(&rule, NULL, NULL, NULL, NULL, &r, NULL) == LJ_OK && rule == LJ_STEP_RULE_NOT_SELF);
  r = rules();
  CHECK(lj_step_rules_resolve(NULL, NULL, NULL, NULL, NULL, &r, NULL) == LJ_OK);
  CHECK(lj_step_rules_resolve(&rule, &owner, &owner_len, &why, &why_len, &r, NULL) == LJ_OK);
  CHECK(rule == LJ_STEP_RULE_NOT_SELF && text(owner, owner_len) && text(why, why_len));
  lj_free(owner);
  lj_free(why);
}

static int call_plan(const lj_step_plan_options_t *o, lj_error_t **err) {
  lj_step_action_t a;
  return lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.x"), S("{}"), o, err);
}

static int call_batch(const lj_step_plan_options_t *o, lj_error_t **err) {
  lj_step_action_t a;
  lj_step_entry_t e = {0, 4, 4, 2, 1};
  return lj_step_plan_batch(&a, 1, NULL, S("n1.x{}"), 0, &e, 1, o, err);
}

static int call_lines(const lj_step_plan_options_t *o, lj_error_t **err) {
  char *out = NULL;
  size_t len = 0;
  int rc = lj_step_plan_lines(&out, &len, NULL, S("{\"key\":\"n1.x\"}\n"), o, err);
  lj_free(out);
  return rc;
}

static void case_step_names_and_texts(void) {
  lj_error_t *err = NULL;
  lj_step_action_t a;
  char why[LJ_STEP_WHY_MAX];
  char *out = NULL;
  size_t len = 0;
  lj_step_plan_summary_t sum;

  CHECK(strcmp(lj_step_action_name(-1), "") == 0 && strcmp(lj_step_action_name(3), "") == 0);
  CHECK(strcmp(lj_step_action_name(INT_MAX), "") == 0 && strcmp(lj_step_action_name(INT_MIN), "") == 0);
  CHECK(strcmp(lj_step_reason_name(-1), "") == 0 && strcmp(lj_step_reason_name(14), "") == 0);
  CHECK(strcmp(lj_step_reason_name(INT_MAX), "") == 0);
  CHECK(strcmp(lj_step_leave_why(INT_MAX), "") == 0 && strcmp(lj_step_leave_why(INT_MIN), "") == 0);

  memset(&a, 0, sizeof a);
  REFUSED(lj_step_why(NULL, sizeof why, &len, &a, &err), LJ_EINVAL);
  REFUSED(lj_step_why(why, sizeof why, &len, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_why(why, LJ_STEP_WHY_MAX - 1, &len, &a, &err), LJ_EINVAL);
  REFUSED(lj_step_why(why, 0, &len, &a, &err), LJ_EINVAL);
  a.reason = 14;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  a.reason = 255;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  a.reason = LJ_STEP_ASK_PAST_BOUND;
  a.action = 3;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  a.action = LJ_STEP_END;
  a.bound_nsec = -1;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  a.bound_nsec = 1000000000;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  /* Any second of the int64 range is a time Go writes: the why still fits. */
  a.bound_nsec = 999999999;
  a.bound_sec = INT64_MAX;
  CHECK(lj_step_why(why, sizeof why, &len, &a, NULL) == LJ_OK && text(why, len));
  a.bound_sec = INT64_MIN;
  CHECK(lj_step_why(why, sizeof why, NULL, &a, NULL) == LJ_OK && text(why, strlen(why)));

  memset(&a, 0, sizeof a);
  a.action = LJ_STEP_END;
  a.reason = LJ_STEP_OWNER_NOT_SELF;
  REFUSED(lj_step_said(NULL, &len, &a, S("o"), S("s"), &err), LJ_EINVAL);
  REFUSED(lj_step_said(&out, &len, NULL, S("o"), S("s"), &err), LJ_EINVAL);
  REFUSED(lj_step_said(&out, &len, &a, NULL, 1, S("s"), &err), LJ_EINVAL);
  REFUSED(lj_step_said(&out, &len, &a, S("o"), NULL, 1, &err), LJ_EINVAL);
  CHECK(out == NULL);
  a.reason = 14;
  REFUSED(lj_step_said(&out, &len, &a, S("o"), S("s"), &err), LJ_EINVAL);
  a.reason = LJ_STEP_OWNER_NOT_SELF;
  a.action = 9;
  REFUSED(lj_step_said(&out, &len, &a, S("o"), S("s"), &err), LJ_EINVAL);
  a.action = LJ_STEP_END;
  CHECK(lj_step_said(&out, &len, &a, "\0\xc3", 2, "\xed\xa0\x80", 3, NULL) == LJ_OK && text(out, len));
  lj_free(out);

  memset(&sum, 0, sizeof sum);
  REFUSED(lj_step_plan_summary_format(NULL, &len, &sum, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_summary_format(&out, &len, NULL, &err), LJ_EINVAL);
  sum.ends = UINT64_MAX;
  sum.deletes = 1;
  REFUSED(lj_step_plan_summary_format(&out, &len, &sum, &err), LJ_EINVAL);
  CHECK(out == NULL);
}

static void case_step_plans(void) {
  lj_error_t *err = NULL;
  lj_step_plan_options_t o = plan_options();
  lj_step_action_t a, acts[2];
  lj_step_entry_t e[2];
  lj_step_plan_summary_t sum;
  char *why = NULL, *said = NULL, *out = NULL;
  size_t why_len = 0, said_len = 0, len = 0;

  REFUSED(lj_step_plan_options_init(NULL, LJ_STEP_PLAN_OPTIONS_VERSION), LJ_EINVAL);
  REFUSED(lj_step_plan_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_step_plan_options_init(&o, LJ_STEP_PLAN_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_step_plan_options_init(&o, LJ_STEP_PLAN_OPTIONS_VERSION) == LJ_OK && o.rules.bound_ms == 3600000);

  bad_plan_options(call_plan);
  bad_plan_options(call_batch);
  bad_plan_options(call_lines);

  o = plan_options();
  REFUSED(lj_step_plan(NULL, &why, &why_len, &said, &said_len, S("n1.x"), S("{}"), &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan(&a, &why, &why_len, &said, &said_len, NULL, 3, S("{}"), &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan(&a, &why, &why_len, &said, &said_len, S("n1.x"), NULL, 3, &o, &err), LJ_EINVAL);
  CHECK(why == NULL && said == NULL);
  /* Junk, NULs, non-UTF-8, 16 MiB: no step, not an error. */
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.x"), "{\"id\":\"a\0\"}", 11, &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_NO_STEP);
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.x"), S("{\"id\":\"\xff\",\"state\":\"running\"}"), &o, NULL) ==
        LJ_OK);
  CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_STARTED_BEFORE);
  {
    char *big = big_junk(BIG);
    CHECK(lj_step_plan(&a, &why, &why_len, &said, &said_len, S("n1.x"), big, BIG, &o, NULL) == LJ_OK);
    CHECK(a.reason == LJ_STEP_NO_STEP && text(why, why_len) && text(said, said_len));
    lj_free(why);
    lj_free(said);
    CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, big, BIG, S("{}"), &o, NULL) == LJ_OK);
    CHECK(a.reason == LJ_STEP_OTHER_NODE);
    free(big);
  }

  /* Batches: entries outside the buffer, short outputs, NULLs. */
  memset(e, 0, sizeof e);
  e[0].key_offset = 0;
  e[0].key_len = 4;
  e[0].value_offset = 4;
  e[0].value_len = 2;
  REFUSED(lj_step_plan_entries(NULL, 1, NULL, S("n1.x{}"), e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_entries(acts, 0, NULL, S("n1.x{}"), e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_entries(acts, 1, NULL, NULL, 6, e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_entries(acts, 1, NULL, S("n1.x{}"), e, 1, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_batch(NULL, 1, NULL, S("n1.x{}"), 0, e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_batch(acts, 1, NULL, S("n1.x{}"), 0, NULL, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_batch(acts, 0, NULL, S("n1.x{}"), 0, e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_batch(acts, 1, NULL, NULL, 6, 0, e, 1, &o, &err), LJ_EINVAL);
  e[1] = e[0];
  e[1].value_offset = 5; /* one past the end */
  REFUSED(lj_step_plan_batch(acts, 2, NULL, S("n1.x{}"), 0, e, 2, &o, &err), LJ_EINVAL);
  e[1].value_offset = UINT64_MAX;
  e[1].value_len = 2;
  REFUSED(lj_step_plan_batch(acts, 2, NULL, S("n1.x{}"), 0, e, 2, &o, &err), LJ_EINVAL);
  e[1] = e[0];
  e[1].key_offset = UINT64_MAX - 1;
  REFUSED(lj_step_plan_batch(acts, 2, NULL, S("n1.x{}"), 0, e, 2, &o, &err), LJ_EINVAL);
  e[1] = e[0];
  e[1].key_len = UINT32_MAX;
  REFUSED(lj_step_plan_batch(acts, 2, NULL, S("n1.x{}"), 0, e, 2, &o, &err), LJ_EINVAL);
  CHECK(lj_step_plan_batch(acts, 1, &sum, S("n1.x{}"), 0, e, 1, &o, NULL) == LJ_OK);
  CHECK(acts[0].reason == LJ_STEP_NOT_RUNNING && sum.leaves == 1);
  CHECK(lj_step_plan_batch(NULL, 0, &sum, NULL, 0, 0, NULL, 0, &o, NULL) == LJ_OK && sum.leaves == 0);
  /* However many threads are asked for, the plan is the same. */
  o.threads = UINT32_MAX;
  e[1] = e[0];
  CHECK(lj_step_plan_batch(acts, 2, &sum, S("n1.x{}"), 0, e, 2, &o, NULL) == LJ_OK);
  CHECK(acts[0].reason == LJ_STEP_NOT_RUNNING && acts[1].reason == LJ_STEP_NOT_RUNNING && sum.leaves == 2);
  o.threads = 1;

  REFUSED(lj_step_plan_lines(NULL, &len, NULL, S("{}"), &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_lines(&out, &len, NULL, NULL, 2, &o, &err), LJ_EINVAL);
  CHECK(out == NULL);
  CHECK(lj_step_plan_lines(&out, &len, &sum, S("\xff\n{\"key\":\"\\u0000\"}\n[\n\0\n"), &o, NULL) == LJ_OK);
  CHECK(text(out, len) && sum.malformed == 3 && sum.other_node == 1);
  lj_free(out);
  {
    char *big = big_junk(BIG);
    CHECK(lj_step_plan_lines(&out, &len, &sum, big, BIG, &o, NULL) == LJ_OK && text(out, len));
    lj_free(out);
    free(big);
  }
}

static const struct symbol_case cases[] = {
    {"lj_step_action_name", case_step_names_and_texts},
    {"lj_step_reason_name", case_step_names_and_texts},
    {"lj_step_leave_why", case_step_names_and_texts},
    {"lj_step_why", case_step_names_and_texts},
    {"lj_step_said", case_step_names_and_texts},
    {"lj_step_plan_summary_format", case_step_names_and_texts},
    {"lj_step_plan_options_init", case_step_plans},
    {"lj_step_rules_init", case_step_rules},
    {"lj_step_rules_resolve", case_step_rules},
    {"lj_step_plan", case_step_plans},
    {"lj_step_plan_batch", case_step_plans},
    {"lj_step_plan_entries", case_step_plans},
    {"lj_step_plan_lines", case_step_plans},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
