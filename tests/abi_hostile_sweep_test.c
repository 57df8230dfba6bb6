/* Every exported symbol of the C ABI's sweep part with hostile arguments (NULL, empty,
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

static lj_sweep_options_t sweep_options(void) {
  lj_sweep_options_t o = LJ_SWEEP_OPTIONS_INIT;
  o.rules.owner = "no-boot-id.1.2";
  o.rules.owner_len = 14;
  o.rules.now_ns = NOW_NS;
  o.rules.before_ns = NOW_NS;
  o.retry_ms = 0;
  o.attempts = 1;
  return o;
}

static void bad_sweep_options(lj_store_t *store) {
  lj_error_t *err = NULL;
  lj_sweep_report_t *report = (lj_sweep_report_t *)1;
  lj_sweep_options_t o = sweep_options();
  o.version = 0;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EVERSION);
  REFUSED(lj_sweep_stale(&report, store, S("n1"), &o, &err), LJ_EVERSION);
  REFUSED(lj_sweep_stale(&report, NULL, S("n1"), NULL, &err), LJ_EINVAL);
  REFUSED(lj_sweep_stale(&report, store, NULL, 2, NULL, &err), LJ_EINVAL);
  REFUSED(lj_sweep_stale(&report, store, S("a.b"), NULL, &err), LJ_EINVAL);
  o.version = LJ_SWEEP_OPTIONS_VERSION + 1;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EVERSION);
  o = sweep_options();
  o.rules.owner = NULL;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o = sweep_options();
  o.rules.bound_ms = 0;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o.rules.bound_ms = INT64_MAX;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o = sweep_options();
  o.rules.rule = 5;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o = sweep_options();
  o.rules.start_tolerance_ms = -1;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  /* The rules: of a version unknown, or naming another node than the sweep's; a
   * self_pid out of range or of no process. */
  o = sweep_options();
  o.rules.version = 0;
  REFUSED(lj_sweep_stale(&report, store, S("n1"), &o, &err), LJ_EVERSION);
  o = sweep_options();
  o.rules.node = "n2";
  o.rules.node_len = 2;
  REFUSED(lj_sweep_stale(&report, store, S("n1"), &o, &err), LJ_EINVAL);
  o = sweep_options();
  o.rules.owner = NULL;
  o.rules.owner_len = 0;
  o.rules.self_pid = -1;
  REFUSED(lj_sweep_stale(&report, store, S("n1"), &o, &err), LJ_EINVAL);
  o.rules.self_pid = INT32_MAX;
  REFUSED(lj_sweep_stale(&report, store, S("n1"), &o, &err), LJ_ENOTFOUND);
  o = sweep_options();
  o.attempts = 0;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o = sweep_options();
  o.retry_ms = -1;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o.retry_ms = INT64_MAX;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  CHECK(report == NULL || report == (lj_sweep_report_t *)1);
}

static void case_sweeps(void) {
  lj_error_t *err = NULL;
  lj_store_t *store = NULL;
  lj_sweep_report_t *report = NULL;
  lj_sweep_options_t o = sweep_options();
  lj_sweep_signals_t *signals = NULL;
  lj_sweep_counts_t counts;
  lj_step_t *step = NULL;
  char *value = NULL;
  size_t len = 0;
  uint64_t rev = 0;

  REFUSED(lj_sweep_options_init(NULL, LJ_SWEEP_OPTIONS_VERSION), LJ_EINVAL);
  REFUSED(lj_sweep_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_sweep_options_init(&o, LJ_SWEEP_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_sweep_options_init(&o, LJ_SWEEP_OPTIONS_VERSION) == LJ_OK && o.attempts == 6);

  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  CHECK(lj_store_create(&rev, store, S("n1.s\xff"), S("{\"id\":\"s\",\"state\":\"running\",\"owner\":\"o.1.2\"}"),
                        NULL) == LJ_OK);
  bad_sweep_options(store);
  o = sweep_options();
  REFUSED(lj_sweep_end_stale(&report, NULL, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_stale(&report, store, NULL, 2, NOW_NS, &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_stale(&report, store, NULL, 0, NOW_NS, &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_stale(&report, store, S("n.1"), NOW_NS, &o, &err), LJ_EINVAL);
  CHECK(lj_sweep_end_stale(&report, store, S("n1"), INT64_MAX, &o, NULL) == LJ_OK);
  CHECK(lj_sweep_report_ended_count(report) == 1);
  CHECK(lj_sweep_report_ended(report, 0, &len) != NULL && len == 1);
  CHECK(lj_sweep_report_ended(report, 1, &len) == NULL && len == 0);
  CHECK(lj_sweep_report_ended(report, SIZE_MAX, NULL) == NULL);
  CHECK(lj_sweep_report_counts(&counts, report) == LJ_OK && counts.ends == 1);
  CHECK(lj_sweep_report_counts(NULL, report) == LJ_EINVAL);
  CHECK(lj_sweep_report_code(report) == LJ_OK && strcmp(lj_sweep_report_message(report), "") == 0);
  lj_sweep_report_destroy(report);
  report = NULL;
  CHECK(lj_sweep_report_ended_count(NULL) == 0);
  CHECK(lj_sweep_report_ended(NULL, 0, &len) == NULL && len == 0);
  CHECK(lj_sweep_report_counts(&counts, NULL) == LJ_EINVAL);
  CHECK(lj_sweep_report_code(NULL) == LJ_EINVAL);
  CHECK(strcmp(lj_sweep_report_message(NULL), "") == 0);
  lj_sweep_report_destroy(NULL);

  REFUSED(lj_sweep_end_one(&step, &value, &len, NULL, S("n1"), S("s"), S("why"), &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("s"), NULL, 0, &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("s"), S("  "), &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_one(&step, &value, &len, store, S("n1"), NULL, 3, S("why"), &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("n2.s"), S("why"), &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("absent"), S("why"), &o, &err), LJ_ENOTFOUND);
  REFUSED(lj_sweep_end_one(&step, &value, &len, store, S("n.1"), S("s"), S("why"), &o, &err), LJ_EINVAL);
  o.version = 0;
  REFUSED(lj_sweep_end_one(&step, &value, &len, store, S("n1"), S("s"), S("why"), &o, &err), LJ_EVERSION);
  o = sweep_options();
  CHECK(step == NULL && value == NULL);

  REFUSED(lj_sweep_signals_create(NULL, &err), LJ_EINVAL);
  CHECK(lj_sweep_signals_serve(NULL) == LJ_EINVAL);
  CHECK(lj_sweep_signals_cancel(NULL) == LJ_EINVAL);
  lj_sweep_signals_destroy(NULL);
  CHECK(lj_sweep_signals_create(&signals, NULL) == LJ_OK);
  REFUSED(lj_sweep_end_stale_round(&report, store, S("n1"), NULL, &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_stale_round(&report, NULL, S("n1"), signals, &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_stale_round(&report, store, S(""), signals, &o, &err), LJ_EINVAL);
  CHECK(lj_sweep_end_stale_round(&report, store, S("n1"), signals, &o, NULL) == LJ_OK && report == NULL);
  REFUSED(lj_sweep_end_stale_at_start(&report, store, S("n1"), NOW_NS, NULL, &o, &err), LJ_EINVAL);
  REFUSED(lj_sweep_end_stale_at_start(&report, NULL, S("n1"), NOW_NS, signals, &o, &err), LJ_EINVAL);
  o.attempts = -1;
  REFUSED(lj_sweep_end_stale_at_start(&report, store, S("n1"), NOW_NS, signals, &o, &err), LJ_EINVAL);
  o = sweep_options();
  CHECK(lj_sweep_signals_cancel(signals) == LJ_OK);
  CHECK(lj_sweep_end_stale_at_start(&report, store, S("n1"), NOW_NS, signals, &o, NULL) == LJ_OK && report == NULL);
  lj_sweep_signals_destroy(signals);
  lj_store_destroy(store);
}

static void case_sweep_observers(void) {
  lj_error_t *err = NULL;
  lj_step_action_t a;
  uint64_t rev = 1;
  int outcome = -1, action = -1;
  int64_t sec = 1;
  int32_t nsec = 1;
  const char *key = "x";
  size_t len = 1;
  /* No key: NULL, LJ_EINVAL; no report: nothing, 0, LJ_EINVAL. */
  CHECK(lj_sweep_key_text(NULL, LJ_SWEEP_KEY_KEY, &len) == NULL && len == 0);
  CHECK(lj_sweep_key_verdict(&a, &rev, &outcome, NULL) == LJ_EINVAL);
  CHECK(lj_sweep_key_started(&sec, &nsec, NULL) == LJ_EINVAL);
  CHECK(lj_sweep_report_write_count(NULL) == 0);
  CHECK(lj_sweep_report_write(&key, &len, &action, &outcome, &rev, NULL, 0) == LJ_EINVAL);
  CHECK(lj_sweep_report_stat(NULL, LJ_SWEEP_STAT_KEYS) == 0);
  CHECK(strcmp(lj_sweep_outcome_name(-1), "") == 0 && strcmp(lj_sweep_outcome_name(INT_MAX), "") == 0);
  CHECK(strcmp(lj_sweep_outcome_name(LJ_SWEEP_DONE), "done") == 0);
  (void)err;
}

static const struct symbol_case cases[] = {
    {"lj_sweep_key_text", case_sweep_observers},
    {"lj_sweep_key_verdict", case_sweep_observers},
    {"lj_sweep_key_started", case_sweep_observers},
    {"lj_sweep_outcome_name", case_sweep_observers},
    {"lj_sweep_report_stat", case_sweep_observers},
    {"lj_sweep_report_write", case_sweep_observers},
    {"lj_sweep_report_write_count", case_sweep_observers},
    {"lj_sweep_options_init", case_sweeps},
    {"lj_sweep_end_stale", case_sweeps},
    {"lj_sweep_stale", case_sweeps},
    {"lj_sweep_end_one", case_sweeps},
    {"lj_sweep_end_stale_at_start", case_sweeps},
    {"lj_sweep_end_stale_round", case_sweeps},
    {"lj_sweep_report_code", case_sweeps},
    {"lj_sweep_report_counts", case_sweeps},
    {"lj_sweep_report_destroy", case_sweeps},
    {"lj_sweep_report_ended", case_sweeps},
    {"lj_sweep_report_ended_count", case_sweeps},
    {"lj_sweep_report_message", case_sweeps},
    {"lj_sweep_signals_cancel", case_sweeps},
    {"lj_sweep_signals_create", case_sweeps},
    {"lj_sweep_signals_destroy", case_sweeps},
    {"lj_sweep_signals_serve", case_sweeps},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
