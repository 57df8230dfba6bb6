/* The C ABI's step watch, from C: a run over the memory store ends a step of another
 * owner at the start and one written while it runs, stopped by its stop callback
 * (LJ_OK) and by a sweep callback (LJ_EUSER); its figures; a second run; NULL, zero,
 * out-of-range and wrong-version arguments for each entry point. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "leasejudge.h"

static const char* SELF = "0b5c3e0e-7d7a-4c4b-9d5e-1f2a3b4c5d6e.4242.lvq1g2a8";
#define BEFORE_NS INT64_C(1714561200000000000) /* 2024-05-01T11:00:00Z */
#define OTHER(id)                                                                   \
  "{\"id\":\"" id                                                                   \
  "\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\",\"started\":" \
  "\"2024-05-01T10:00:00Z\"}"

/* What the callbacks see: the store to write to while the watch runs, and when to stop. */
struct run_state {
  lj_store_t* store;
  int calls;
  int wrote;
  int stop_after_ends;
  const lj_step_watch_t* watch;
};

static int stop_cb(void* payload) {
  struct run_state* rs = (struct run_state*)payload;
  uint64_t rev = 0;
  rs->calls++;
  /* Once the start's sweep is done, another owner's step is written, as a module would. */
  if (!rs->wrote && lj_step_watch_figure(rs->watch, LJ_WATCH_SWEEPS) == 1) {
    rs->wrote = 1;
    lj_store_create(&rev, rs->store, S("n1.later"), S(OTHER("later")), NULL);
  }
  if ((int)lj_step_watch_figure(rs->watch, LJ_WATCH_ENDS) >= rs->stop_after_ends) return 1;
  return rs->calls > 20000; /* a bound: never hang */
}

static int stop_on_key(const lj_sweep_key_t* key, void* payload) {
  (void)key;
  (void)payload;
  return 1;
}

static int stale_value(lj_store_t* store, const char* key, size_t key_len) {
  char* value = NULL;
  size_t len = 0;
  uint64_t rev = 0;
  int failed = 0;
  if (lj_store_get(&value, &len, &rev, store, key, key_len, NULL) != LJ_OK || value == NULL) return -1;
  failed = strstr(value, "\"state\":\"failed\"") != NULL;
  lj_free(value);
  return failed;
}

int main(void) {
  lj_store_t* store = NULL;
  lj_step_watch_t* watch = NULL;
  lj_error_t* err = NULL;
  lj_step_watch_options_t wo;
  lj_sweep_options_t so = LJ_SWEEP_OPTIONS_INIT;
  struct run_state rs;
  uint64_t rev = 0;

  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  CHECK(lj_store_create(&rev, store, S("n1.first"), S(OTHER("first")), NULL) == LJ_OK);

  /* Options: init, versions. */
  CHECK(lj_step_watch_options_init(&wo, LJ_STEP_WATCH_OPTIONS_VERSION) == LJ_OK);
  CHECK(wo.interval_ms == 60000 && wo.poll_ms == 1000 && wo.backoff_max_ms == 30000 && wo.sweep == NULL);
  CHECK(lj_step_watch_options_init(NULL, 1) == LJ_EINVAL);
  CHECK(lj_step_watch_options_init(&wo, 0) == LJ_EVERSION);
  CHECK(lj_step_watch_options_init(&wo, 99) == LJ_EVERSION);

  /* Create: bad nodes and NULLs. */
  CHECK(lj_step_watch_create(NULL, S("n1"), BEFORE_NS, &err) == LJ_EINVAL);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_step_watch_create(&watch, NULL, 3, BEFORE_NS, NULL) == LJ_EINVAL && watch == NULL);
  CHECK(lj_step_watch_create(&watch, S(""), BEFORE_NS, NULL) == LJ_EINVAL && watch == NULL);
  CHECK(lj_step_watch_create(&watch, S("n1.x"), BEFORE_NS, &err) == LJ_EINVAL && watch == NULL);
  CHECK(err != NULL && strstr(lj_error_message(err), "'.'") != NULL);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_step_watch_create(&watch, "n\0x", 3, BEFORE_NS, NULL) == LJ_OK); /* a NUL is a byte of the name */
  lj_step_watch_destroy(watch);
  watch = NULL;
  CHECK(lj_step_watch_create(&watch, S("n1"), BEFORE_NS, &err) == LJ_OK && watch != NULL);

  /* Run: NULLs, a wrong version, options out of range; nothing read. */
  CHECK(lj_step_watch_run(NULL, store, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_step_watch_run(watch, NULL, NULL, NULL) == LJ_EINVAL);
  lj_step_watch_options_init(&wo, LJ_STEP_WATCH_OPTIONS_VERSION);
  wo.version = 7;
  CHECK(lj_step_watch_run(watch, store, &wo, NULL) == LJ_EVERSION);
  lj_step_watch_options_init(&wo, LJ_STEP_WATCH_OPTIONS_VERSION);
  wo.interval_ms = 0;
  CHECK(lj_step_watch_run(watch, store, &wo, &err) == LJ_EINVAL);
  CHECK(err != NULL && strstr(lj_error_message(err), "interval") != NULL);
  lj_error_destroy(err);
  err = NULL;
  wo.interval_ms = -5;
  CHECK(lj_step_watch_run(watch, store, &wo, NULL) == LJ_EINVAL);
  wo.interval_ms = INT64_MAX;
  CHECK(lj_step_watch_run(watch, store, &wo, NULL) == LJ_EINVAL);
  wo.interval_ms = 60000;
  wo.poll_ms = 0;
  CHECK(lj_step_watch_run(watch, store, &wo, NULL) == LJ_EINVAL);
  wo.poll_ms = 1000;
  wo.backoff_max_ms = 499;
  CHECK(lj_step_watch_run(watch, store, &wo, NULL) == LJ_EINVAL);
  wo.backoff_max_ms = 30000;
  so.rules.rule = 9; /* the sweep options are checked as a sweep checks them */
  wo.sweep = &so;
  CHECK(lj_step_watch_run(watch, store, &wo, NULL) == LJ_EINVAL);
  so.rules.rule = LJ_STEP_RULE_NOT_SELF;
  so.version = 0;
  CHECK(lj_step_watch_run(watch, store, &wo, NULL) == LJ_EVERSION);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_SWEEPS) == 0);
  CHECK(stale_value(store, S("n1.first")) == 0);

  /* A run: the start ends n1.first, the watch n1.later; the stop callback ends it. */
  so.version = LJ_SWEEP_OPTIONS_VERSION;
  so.rules.owner = SELF;
  so.rules.owner_len = strlen(SELF);
  so.rules.before_ns = BEFORE_NS;
  so.retry_ms = 1;
  wo.sweep = &so;
  wo.poll_ms = 2;
  memset(&rs, 0, sizeof rs);
  rs.store = store;
  rs.watch = watch;
  rs.stop_after_ends = 2;
  wo.stop = stop_cb;
  wo.payload = &rs;
  CHECK(lj_step_watch_run(watch, store, &wo, &err) == LJ_OK);
  CHECK(err == NULL);
  CHECK(stale_value(store, S("n1.first")) == 1);
  CHECK(stale_value(store, S("n1.later")) == 1);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_ENDS) == 2);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_DELETES) == 0);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_SWEEPS) == 1);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_STORE_ERRORS) == 0);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_LAST_SWEEP_UNIX_NS) > 0);
  CHECK(lj_step_watch_judged(watch, LJ_STEP_OWNER_NOT_SELF) == 2);
  CHECK(lj_step_watch_figure(watch, -1) == 0);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_LAST_CLEAN_SWEEP_UNIX_NS) ==
        lj_step_watch_figure(watch, LJ_WATCH_LAST_SWEEP_UNIX_NS));
  CHECK(lj_step_watch_figure(watch, 14) == 0);
  CHECK(lj_step_watch_judged(watch, -1) == 0);
  CHECK(lj_step_watch_judged(watch, 13) == 0);
  CHECK(lj_step_watch_figure(NULL, LJ_WATCH_ENDS) == 0);
  CHECK(lj_step_watch_judged(NULL, LJ_STEP_OWNER_NOT_SELF) == 0);

  /* A second run starts with a round; a sweep callback's stop is LJ_EUSER. */
  CHECK(lj_store_create(&rev, store, S("n1.third"), S(OTHER("third")), NULL) == LJ_OK);
  so.on_key = stop_on_key;
  so.payload = NULL;
  wo.stop = NULL;
  CHECK(lj_step_watch_run(watch, store, &wo, &err) == LJ_EUSER);
  CHECK(err != NULL && strstr(lj_error_message(err), "callback") != NULL);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_SWEEPS) == 2);

  lj_step_watch_destroy(watch);
  lj_step_watch_destroy(NULL);
  lj_store_destroy(store);
  return CHECK_SUMMARY();
}
