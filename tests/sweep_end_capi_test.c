/* The C ABI's sweep that ends stale steps, from C: the stale steps of a store ended,
 * one step ended, a sweep at start and by rounds; failing stores included.
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
  o.rules.owner = SELF;
  o.rules.owner_len = strlen(SELF);
  o.rules.before_ns = BEFORE_NS;
  o.rules.now_ns = NOW_NS;
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
  CHECK(bad.attempts == 6 && bad.retry_ms == 5000 && bad.rules.bound_ms == 3600000 && bad.log == NULL);
  CHECK(lj_sweep_options_init(&bad, 0) == LJ_EVERSION);
  CHECK(lj_sweep_options_init(NULL, LJ_SWEEP_OPTIONS_VERSION) == LJ_EINVAL);

  CHECK(lj_sweep_end_stale(&report, store, S("n1"), LJ_TIME_DEFAULT, &o, &err) == LJ_OK);
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
  bad.rules.bound_ms = -5000;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rules.rule = 3;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rules.rule = LJ_STEP_RULE_NOT_SELF;
  bad.rules.owner = NULL;
  bad.rules.owner_len = 0;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), BEFORE_NS, &bad, &err), LJ_EINVAL, &err, NULL));
  bad = o;
  bad.rules.owner = NULL;
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
  o.rules.owner = "no-boot-id.4242.lvq1g2a8";
  o.rules.owner_len = strlen(o.rules.owner);
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

int main(void) {
  test_end_stale();
  test_end_one();
  test_start_and_round();
  return CHECK_SUMMARY();
}
