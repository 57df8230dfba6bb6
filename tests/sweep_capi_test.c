/* The C ABI's bulk read and its sweep over a store, from C: lj_store_scan over the
 * memory store and over callbacks (with and without their scan), the sweep options of
 * version 2 (a window, a dry run, the observer of every key) and of version 1 (a copy
 * of the version-1 struct, as a program built against the older header passes it),
 * the report's writes and figures; NULL, zero and bad arguments for each. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "leasejudge.h"

static const char* SELF = "0b5c3e0e-7d7a-4c4b-9d5e-1f2a3b4c5d6e.4242.lvq1g2a8";
#define NOW_NS INT64_C(1714564800000000000)    /* 2024-05-01T12:00:00Z */
#define BEFORE_NS INT64_C(1714561200000000000) /* 2024-05-01T11:00:00Z */
#define OTHER "{\"id\":\"x\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\"}"
#define DONE "{\"id\":\"y\",\"tool\":\"go build\",\"state\":\"succeeded\"}"

/* lj_sweep_options_t as versions 1 to 3 declared it, the rule fields side by side and
 * the bound in seconds: what a program built against those headers holds and passes.
 * Version 1 ends before write_window (sweep_options_v1), version 2 before min_age_ms. */
typedef struct sweep_options_v3 {
  uint32_t version;
  const char* owner;
  size_t owner_len;
  int64_t before_ns;
  int64_t now_ns;
  int64_t bound_seconds;
  int rule;
  int64_t start_tolerance_ms;
  int (*owner_state)(lj_holder_state_t* out_state, const char* token, size_t token_len, void* payload);
  int (*log)(const char* line, size_t line_len, void* payload);
  int (*live)(int* out_live, const char* id, size_t id_len, void* payload);
  void* payload;
  int32_t attempts;
  int64_t retry_ms;
  uint32_t write_window; /* version 2 */
  uint32_t batch_keys;
  int dry_run;
  int (*on_key)(const lj_sweep_key_t* key, void* payload);
  int64_t min_age_ms; /* version 3 */
} sweep_options_v3;
typedef struct sweep_options_v1 {
  uint32_t version;
  const char* owner;
  size_t owner_len;
  int64_t before_ns;
  int64_t now_ns;
  int64_t bound_seconds;
  int rule;
  int64_t start_tolerance_ms;
  int (*owner_state)(lj_holder_state_t* out_state, const char* token, size_t token_len, void* payload);
  int (*log)(const char* line, size_t line_len, void* payload);
  int (*live)(int* out_live, const char* id, size_t id_len, void* payload);
  void* payload;
  int32_t attempts;
  int64_t retry_ms;
} sweep_options_v1;

/* lj_store_callbacks_t as version 1 declared it. */
typedef struct store_callbacks_v1 {
  uint32_t version;
  int (*keys)(lj_store_sink_t* sink, void* payload);
  int (*get)(lj_store_sink_t* sink, const char* key, size_t key_len, void* payload);
  int (*update)(uint64_t* out_revision, const char* key, size_t key_len, const char* value, size_t value_len,
                uint64_t revision, void* payload);
  int (*create)(uint64_t* out_revision, const char* key, size_t key_len, const char* value, size_t value_len,
                void* payload);
  int (*remove)(const char* key, size_t key_len, uint64_t revision, void* payload);
  void (*release)(void* payload);
} store_callbacks_v1;

static int expect_error(int rc, int code, lj_error_t** errp) {
  lj_error_t* err = *errp;
  int ok = rc == code && err != NULL && lj_error_code(err) == code;
  if (!ok && err != NULL) printf("# got %d: %s\n", rc, lj_error_message(err));
  *errp = NULL;
  lj_error_destroy(err);
  return ok;
}

/* n1.k00 .. n1.k<n-1>: every third a step another owner left running (ended), the rest
 * finished (left); and n2.k00 of another node. */
static lj_store_t* filled(int n) {
  lj_store_t* store = NULL;
  uint64_t rev = 0;
  char key[32];
  int i;
  lj_store_memory_open(&store, NULL);
  for (i = 0; i < n; i++) {
    snprintf(key, sizeof key, "n1.k%02d", i);
    if (i % 3 == 0)
      lj_store_create(&rev, store, key, strlen(key), S(OTHER), NULL);
    else
      lj_store_create(&rev, store, key, strlen(key), S(DONE), NULL);
  }
  lj_store_create(&rev, store, S("n2.k00"), S(OTHER), NULL);
  return store;
}

/* --- lj_store_scan ----------------------------------------------------------------- */

struct seen {
  int batches, entries, stop_after;
  int padded; /* every batch had LJ_STEP_PADDING readable bytes after it */
  char keys[2048];
};

static int each_batch(const char* buffer, size_t len, size_t padding, const lj_step_entry_t* entries, size_t count,
                      void* payload) {
  struct seen* s = (struct seen*)payload;
  size_t i;
  s->batches++;
  if (padding < LJ_STEP_PADDING) s->padded = 0;
  for (i = 0; i < count; i++) {
    const lj_step_entry_t* e = &entries[i];
    if (e->key_offset + e->key_len > len || e->value_offset + e->value_len > len) return 99;
    strncat(s->keys, buffer + e->key_offset, e->key_len);
    strcat(s->keys, " ");
    s->entries++;
  }
  return s->stop_after > 0 && s->batches >= s->stop_after ? 7 : 0;
}

static void test_scan_memory(void) {
  lj_store_t* store = filled(4);
  lj_error_t* err = NULL;
  struct seen s;
  memset(&s, 0, sizeof s);
  s.padded = 1;
  CHECK(lj_store_scan(store, S("n1."), each_batch, &s, &err) == LJ_OK && err == NULL);
  CHECK(s.batches == 1 && s.entries == 4 && s.padded);
  CHECK(strcmp(s.keys, "n1.k00 n1.k01 n1.k02 n1.k03 ") == 0);
  memset(&s, 0, sizeof s);
  CHECK(lj_store_scan(store, NULL, 0, each_batch, &s, &err) == LJ_OK); /* no prefix: every key */
  CHECK(s.entries == 5);
  memset(&s, 0, sizeof s);
  CHECK(lj_store_scan(store, S("n3."), each_batch, &s, &err) == LJ_OK && s.batches == 0);
  memset(&s, 0, sizeof s);
  s.stop_after = 1;
  CHECK(expect_error(lj_store_scan(store, S("n1."), each_batch, &s, &err), LJ_EUSER, &err));
  CHECK(expect_error(lj_store_scan(NULL, S("n1."), each_batch, &s, &err), LJ_EINVAL, &err));
  CHECK(expect_error(lj_store_scan(store, S("n1."), NULL, &s, &err), LJ_EINVAL, &err));
  CHECK(expect_error(lj_store_scan(store, NULL, 3, each_batch, &s, &err), LJ_EINVAL, &err));
  CHECK(lj_store_scan(store, S("n1."), each_batch, &s, NULL) == LJ_EUSER); /* err is optional */
  lj_store_destroy(store);
}

/* A callback store over a memory store: its scan callback (when set) walks the
 * inner store's keys through lj_store_sink_entry. */
struct over {
  lj_store_t* inner;
  int scans, gets, bad_entries;
};

static int over_keys(lj_store_sink_t* sink, void* payload);
static int key_to_sink(const char* key, size_t len, void* payload) {
  return lj_store_sink_key((lj_store_sink_t*)payload, key, len);
}
static int over_keys(lj_store_sink_t* sink, void* payload) {
  return lj_store_keys(((struct over*)payload)->inner, key_to_sink, sink, NULL);
}
static int over_get(lj_store_sink_t* sink, const char* key, size_t len, void* payload) {
  struct over* o = (struct over*)payload;
  char* value = NULL;
  size_t vlen = 0;
  uint64_t rev = 0;
  int rc = lj_store_get(&value, &vlen, &rev, o->inner, key, len, NULL);
  o->gets++;
  if (rc == LJ_ENOTFOUND) return LJ_OK;
  if (rc != LJ_OK) return rc;
  rc = lj_store_sink_put(sink, value, vlen, rev);
  lj_free(value);
  return rc;
}
static int over_update(uint64_t* out, const char* key, size_t len, const char* v, size_t vl, uint64_t rev,
                       void* payload) {
  return lj_store_update(out, ((struct over*)payload)->inner, key, len, v, vl, rev, NULL);
}
static int over_create(uint64_t* out, const char* key, size_t len, const char* v, size_t vl, void* payload) {
  return lj_store_create(out, ((struct over*)payload)->inner, key, len, v, vl, NULL);
}
static int over_remove(const char* key, size_t len, uint64_t rev, void* payload) {
  return lj_store_remove(((struct over*)payload)->inner, key, len, rev, NULL);
}
struct entry_sink {
  lj_store_sink_t* sink;
  struct over* over;
  int rc;
};
static int batch_to_sink(const char* buffer, size_t len, size_t padding, const lj_step_entry_t* entries, size_t count,
                         void* payload) {
  struct entry_sink* es = (struct entry_sink*)payload;
  size_t i;
  (void)len;
  (void)padding;
  for (i = 0; i < count; i++) {
    es->rc = lj_store_sink_entry(es->sink, buffer + entries[i].key_offset, entries[i].key_len,
                                 buffer + entries[i].value_offset, entries[i].value_len, entries[i].revision);
    if (es->rc != LJ_OK) return 1;
  }
  return 0;
}
static int over_scan(lj_store_sink_t* sink, const char* prefix, size_t len, void* payload) {
  struct over* o = (struct over*)payload;
  struct entry_sink es;
  o->scans++;
  /* Bad entries are refused, and do not count. */
  if (lj_store_sink_entry(sink, S("elsewhere.k"), S("{}"), 1) == LJ_EINVAL) o->bad_entries++;
  if (lj_store_sink_entry(sink, S("n1.zero"), S("{}"), 0) == LJ_EINVAL) o->bad_entries++;
  if (lj_store_sink_entry(sink, NULL, 3, S("{}"), 1) == LJ_EINVAL) o->bad_entries++;
  if (lj_store_sink_entry(NULL, S("n1.k"), S("{}"), 1) == LJ_EINVAL) o->bad_entries++;
  es.sink = sink;
  es.over = o;
  es.rc = LJ_OK;
  lj_store_scan(o->inner, prefix, len, batch_to_sink, &es, NULL);
  return es.rc == LJ_OK ? LJ_OK : es.rc;
}

static lj_store_t* over_store(struct over* o, int with_scan) {
  lj_store_callbacks_t cb = LJ_STORE_CALLBACKS_INIT;
  lj_store_t* store = NULL;
  cb.keys = over_keys;
  cb.get = over_get;
  cb.update = over_update;
  cb.create = over_create;
  cb.remove = over_remove;
  if (with_scan) cb.scan = over_scan;
  CHECK(lj_store_from_callbacks(&store, &cb, o, NULL) == LJ_OK);
  return store;
}

static void test_scan_callbacks(void) {
  struct over o;
  struct seen s;
  lj_store_t* store;
  lj_error_t* err = NULL;
  lj_store_t* plain;
  store_callbacks_v1 v1;
  memset(&o, 0, sizeof o);
  o.inner = filled(4);
  store = over_store(&o, 1);
  memset(&s, 0, sizeof s);
  CHECK(lj_store_scan(store, S("n1."), each_batch, &s, &err) == LJ_OK);
  CHECK(o.scans == 1 && o.gets == 0 && o.bad_entries == 4);
  CHECK(strcmp(s.keys, "n1.k00 n1.k01 n1.k02 n1.k03 ") == 0);
  /* The reader's stop reaches the scan callback, which stops too. */
  memset(&s, 0, sizeof s);
  s.stop_after = 1;
  CHECK(expect_error(lj_store_scan(store, S("n1."), each_batch, &s, &err), LJ_EUSER, &err));
  lj_store_destroy(store);

  /* Without a scan callback (and from a version-1 struct, which has none): keys and
   * a get of each key under the prefix. */
  memset(&v1, 0, sizeof v1);
  v1.version = 1;
  v1.keys = over_keys;
  v1.get = over_get;
  v1.update = over_update;
  v1.create = over_create;
  v1.remove = over_remove;
  o.scans = o.gets = 0;
  CHECK(lj_store_from_callbacks(&plain, (const lj_store_callbacks_t*)&v1, &o, NULL) == LJ_OK);
  memset(&s, 0, sizeof s);
  CHECK(lj_store_scan(plain, S("n1."), each_batch, &s, &err) == LJ_OK);
  CHECK(o.scans == 0 && o.gets == 4 && s.entries == 4 && s.batches == 4); /* key by key */
  lj_store_destroy(plain);
  v1.version = 3;
  CHECK(expect_error(lj_store_from_callbacks(&plain, (const lj_store_callbacks_t*)&v1, &o, &err), LJ_EVERSION, &err));
  lj_store_destroy(o.inner);
}

/* --- the sweep -------------------------------------------------------------------------- */

struct observed {
  int keys, planned, done, left, stop_at;
  char last_why[256];
};

static int on_key(const lj_sweep_key_t* key, void* payload) {
  struct observed* o = (struct observed*)payload;
  lj_step_action_t a;
  uint64_t rev = 0;
  int outcome = -1;
  size_t len = 99;
  const char* k = lj_sweep_key_text(key, LJ_SWEEP_KEY_KEY, &len);
  o->keys++;
  if (k == NULL || len != strlen(k) || strncmp(k, "n1.k", 4) != 0) return 1;
  if (lj_sweep_key_text(key, 7, &len) != NULL || len != 0) return 1;
  if (lj_sweep_key_text(key, -1, NULL) != NULL) return 1;
  if (lj_sweep_key_verdict(&a, &rev, &outcome, key) != LJ_OK || rev == 0) return 1;
  if (outcome == LJ_SWEEP_PLANNED) o->planned++;
  if (outcome == LJ_SWEEP_DONE) o->done++;
  if (outcome == LJ_SWEEP_LEFT) o->left++;
  if (a.action == LJ_STEP_END) {
    const char* why = lj_sweep_key_text(key, LJ_SWEEP_KEY_WHY, NULL);
    if (why == NULL || strcmp(lj_sweep_key_text(key, LJ_SWEEP_KEY_ID, NULL), "x") != 0) return 1;
    snprintf(o->last_why, sizeof o->last_why, "%s", why);
  }
  return o->stop_at > 0 && o->keys >= o->stop_at;
}

static lj_sweep_options_t options(struct observed* o) {
  lj_sweep_options_t opts = LJ_SWEEP_OPTIONS_INIT;
  opts.rules.owner = SELF;
  opts.rules.owner_len = strlen(SELF);
  opts.rules.before_ns = BEFORE_NS;
  opts.rules.now_ns = NOW_NS;
  opts.on_key = on_key;
  opts.payload = o;
  return opts;
}

static void test_sweep_v2(void) {
  lj_store_t* store = filled(30);
  lj_sweep_report_t* report = NULL;
  lj_error_t* err = NULL;
  struct observed o;
  lj_sweep_options_t opts;
  lj_sweep_counts_t counts;
  const char* key = NULL;
  size_t key_len = 0;
  int action = -1, outcome = -1;
  uint64_t rev = 0;
  char* value = NULL;
  size_t vlen = 0;

  /* A dry run: every key planned or left, nothing written. */
  memset(&o, 0, sizeof o);
  opts = options(&o);
  opts.dry_run = 1;
  CHECK(lj_sweep_stale(&report, store, S("n1"), &opts, &err) == LJ_OK);
  CHECK(o.keys == 30 && o.planned == 10 && o.left == 20 && o.done == 0);
  lj_sweep_report_destroy(report);
  /* The deprecated lj_sweep_end_stale: its before_ns stands for the options'; LJ_TIME_DEFAULT leaves theirs. */
  memset(&o, 0, sizeof o);
  CHECK(lj_sweep_end_stale(&report, store, S("n1"), opts.rules.before_ns, &opts, &err) == LJ_OK);
  CHECK(o.keys == 30 && o.planned == 10 && o.left == 20 && o.done == 0);
  lj_sweep_report_destroy(report);
  memset(&o, 0, sizeof o);
  CHECK(lj_sweep_end_stale(&report, store, S("n1"), LJ_TIME_DEFAULT, &opts, &err) == LJ_OK);
  CHECK(o.keys == 30 && o.planned == 10 && o.left == 20 && o.done == 0);
  CHECK(strcmp(o.last_why, "the build module restarted while it ran") == 0);
  CHECK(lj_sweep_report_counts(&counts, report) == LJ_OK && counts.ends == 10 && counts.leaves == 20);
  CHECK(lj_sweep_report_write_count(report) == 0 && lj_sweep_report_ended_count(report) == 0);
  CHECK(lj_sweep_report_stat(report, LJ_SWEEP_STAT_KEYS) == 30);
  CHECK(lj_sweep_report_stat(report, LJ_SWEEP_STAT_WRITES) == 0);
  lj_sweep_report_destroy(report);
  CHECK(lj_store_get(&value, &vlen, &rev, store, S("n1.k00"), NULL) == LJ_OK);
  CHECK(vlen == strlen(OTHER) && memcmp(value, OTHER, vlen) == 0);
  lj_free(value);

  /* The sweep, one write at a time and eight at a time: the same ends. */
  memset(&o, 0, sizeof o);
  opts = options(&o);
  opts.write_window = 8;
  opts.batch_keys = 7;
  CHECK(lj_sweep_end_stale(&report, store, S("n1"), LJ_TIME_DEFAULT, &opts, &err) == LJ_OK);
  CHECK(o.done == 10 && o.left == 20);
  CHECK(lj_sweep_report_write_count(report) == 10);
  CHECK(lj_sweep_report_write(&key, &key_len, &action, &outcome, &rev, report, 0) == LJ_OK);
  CHECK(key_len == 6 && strcmp(key, "n1.k00") == 0 && action == LJ_STEP_END && outcome == LJ_SWEEP_DONE && rev > 0);
  CHECK(lj_sweep_report_write(NULL, NULL, NULL, NULL, NULL, report, 9) == LJ_OK);
  CHECK(lj_sweep_report_write(&key, &key_len, &action, &outcome, &rev, report, 10) == LJ_EINVAL);
  CHECK(lj_sweep_report_write(&key, &key_len, &action, &outcome, &rev, NULL, 0) == LJ_EINVAL);
  CHECK(lj_sweep_report_stat(report, LJ_SWEEP_STAT_BATCHES) == 5); /* 30 keys, 7 a batch */
  CHECK(lj_sweep_report_stat(report, LJ_SWEEP_STAT_WRITES) == 10);
  CHECK(lj_sweep_report_stat(report, LJ_SWEEP_STAT_MAX_IN_FLIGHT) == 1); /* memory: each known at once */
  CHECK(lj_sweep_report_stat(report, LJ_SWEEP_STAT_UNKNOWN) == 0);
  CHECK(lj_sweep_report_stat(report, 16) == 0 && lj_sweep_report_stat(report, -1) == 0);
  CHECK(lj_sweep_report_stat(NULL, LJ_SWEEP_STAT_KEYS) == 0);
  lj_sweep_report_destroy(report);

  /* The observer's stop: before the next write, LJ_EUSER. */
  lj_store_destroy(store);
  store = filled(30);
  memset(&o, 0, sizeof o);
  o.stop_at = 3;
  opts = options(&o);
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), LJ_TIME_DEFAULT, &opts, &err), LJ_EUSER, &err));
  CHECK(lj_sweep_report_code(report) == LJ_EUSER);
  CHECK(lj_sweep_report_ended_count(report) == 1); /* k00 ended, then k01, k02 left and the stop */
  lj_sweep_report_destroy(report);

  /* Out of range. */
  opts = options(&o);
  opts.batch_keys = 0;
  CHECK(expect_error(lj_sweep_end_stale(&report, store, S("n1"), LJ_TIME_DEFAULT, &opts, &err), LJ_EINVAL, &err));
  opts.version = LJ_SWEEP_OPTIONS_VERSION + 1;
  CHECK(
      expect_error(lj_sweep_end_stale(&report, store, S("n1"), LJ_TIME_DEFAULT, &opts, &err), LJ_EVERSION, &err));
  opts.version = 0;
  CHECK(
      expect_error(lj_sweep_end_stale(&report, store, S("n1"), LJ_TIME_DEFAULT, &opts, &err), LJ_EVERSION, &err));
  CHECK(lj_sweep_key_text(NULL, LJ_SWEEP_KEY_KEY, NULL) == NULL);
  CHECK(lj_sweep_key_verdict(NULL, NULL, NULL, NULL) == LJ_EINVAL);
  {
    int64_t sec = 0;
    int32_t nsec = 0;
    CHECK(lj_sweep_key_started(&sec, &nsec, NULL) == LJ_EINVAL);
  }
  CHECK(strcmp(lj_sweep_outcome_name(LJ_SWEEP_LEFT), "left") == 0);
  CHECK(strcmp(lj_sweep_outcome_name(LJ_SWEEP_UNKNOWN), "unknown") == 0);
  CHECK(strcmp(lj_sweep_outcome_name(LJ_SWEEP_NOT_SENT), "not-sent") == 0);
  CHECK(strcmp(lj_sweep_outcome_name(7), "") == 0 && strcmp(lj_sweep_outcome_name(-1), "") == 0);
  lj_store_destroy(store);
}

/* Every value of store's node n1 (k00..k<n-1>), one after another. */
static void values_of(lj_store_t* store, int n, char* out, size_t cap) {
  char key[32];
  int i;
  out[0] = '\0';
  for (i = 0; i < n; i++) {
    char* value = NULL;
    size_t len = 0;
    snprintf(key, sizeof key, "n1.k%02d", i);
    if (lj_store_get(&value, &len, NULL, store, key, strlen(key), NULL) == LJ_OK && strlen(out) + len + 2 < cap) {
      strncat(out, value, len);
      strcat(out, "\n");
    }
    lj_free(value);
  }
}

/* The sweep by opts of a store filled(9) and a step another owner started a minute
 * before now (n1.k09): its counts, ended ids and the values after. */
static void swept_by(const void* opts, lj_sweep_counts_t* counts, char* ended, char* values, size_t cap) {
  lj_store_t* store = filled(9);
  lj_sweep_report_t* report = NULL;
  size_t i;
  lj_store_create(NULL, store, S("n1.k09"),
                  S("{\"id\":\"z\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"o.1.2\","
                    "\"started\":\"2024-05-01T11:59:00Z\"}"),
                  NULL);
  memset(counts, 0, sizeof *counts);
  ended[0] = '\0';
  CHECK(lj_sweep_stale(&report, store, S("n1"), (const lj_sweep_options_t*)opts, NULL) == LJ_OK);
  lj_sweep_report_counts(counts, report);
  for (i = 0; i < lj_sweep_report_ended_count(report); i++) {
    strcat(ended, lj_sweep_report_ended(report, i, NULL));
    strcat(ended, " ");
  }
  lj_sweep_report_destroy(report);
  values_of(store, 10, values, cap);
  lj_store_destroy(store);
}

static void test_sweep_old_layouts(void) {
  /* A caller built against version 1 or 3: the flat layout, read by its version; the
   * sweep decides and writes exactly as with today's struct of the same rules. */
  sweep_options_v1* v1 = (sweep_options_v1*)malloc(sizeof(sweep_options_v1)); /* exactly its size */
  sweep_options_v3 v3;
  lj_sweep_options_t v4 = LJ_SWEEP_OPTIONS_INIT, v2;
  lj_sweep_counts_t c4, c;
  char e4[256], e[256], w4[4096], w[4096];
  CHECK(lj_sweep_options_init((lj_sweep_options_t*)&v3, 3) == LJ_OK);
  CHECK(v3.version == 3 && v3.bound_seconds == 3600 && v3.rule == LJ_STEP_RULE_BY_OWNER && v3.attempts == 6 &&
        v3.retry_ms == 5000 && v3.write_window == 256 && v3.batch_keys == 4096 && v3.min_age_ms == 0);
  v3.owner = SELF;
  v3.owner_len = strlen(SELF);
  v3.before_ns = BEFORE_NS;
  v3.now_ns = NOW_NS;
  v4.rules.owner = SELF;
  v4.rules.owner_len = strlen(SELF);
  v4.rules.before_ns = BEFORE_NS;
  v4.rules.now_ns = NOW_NS;
  CHECK(sizeof(sweep_options_v1) == offsetof(sweep_options_v3, write_window));
  memcpy(v1, &v3, sizeof *v1);
  v1->version = 1;
  swept_by(&v4, &c4, e4, w4, sizeof w4);
  /* k00, k03, k06 and k09 another owner's (ended), the rest finished (left). */
  CHECK(strcmp(e4, "x x x z ") == 0 && c4.ends == 4 && c4.leaves == 6 && c4.other_node == 0);
  CHECK(strstr(w4, "\"state\":\"failed\",\"owner\":\"o.1.2\"") != NULL);
  swept_by(&v3, &c, e, w, sizeof w);
  CHECK(memcmp(&c, &c4, sizeof c) == 0 && strcmp(e, e4) == 0 && strcmp(w, w4) == 0);
  swept_by(v1, &c, e, w, sizeof w);
  CHECK(memcmp(&c, &c4, sizeof c) == 0 && strcmp(e, e4) == 0 && strcmp(w, w4) == 0);
  /* Version 3's minimum age, two minutes: the step started a minute ago is left. */
  v3.min_age_ms = v4.rules.min_age_ms = 120000;
  swept_by(&v4, &c4, e4, w4, sizeof w4);
  CHECK(strcmp(e4, "x x x ") == 0 && c4.ends == 3 && c4.leaves == 7);
  swept_by(&v3, &c, e, w, sizeof w);
  CHECK(memcmp(&c, &c4, sizeof c) == 0 && strcmp(e, e4) == 0 && strcmp(w, w4) == 0);
  /* lj_sweep_options_init fills only what an older version has. */
  memset(v1, 0x5a, sizeof *v1);
  CHECK(lj_sweep_options_init((lj_sweep_options_t*)v1, 1) == LJ_OK);
  CHECK(v1->version == 1 && v1->bound_seconds == 3600 && v1->attempts == 6 && v1->retry_ms == 5000);
  CHECK(lj_sweep_options_init(&v2, 4) == LJ_OK && v2.rules.version == LJ_STEP_RULES_VERSION &&
        v2.rules.bound_ms == 3600000 && v2.write_window == 0 && v2.batch_keys == 4096);
  CHECK(lj_sweep_options_init(&v2, 5) == LJ_EVERSION && lj_sweep_options_init(&v2, 0) == LJ_EVERSION);
  free(v1);
}

int main(void) {
  test_scan_memory();
  test_scan_callbacks();
  test_sweep_v2();
  test_sweep_old_layouts();
  return CHECK_SUMMARY();
}
