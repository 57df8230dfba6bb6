/* The C ABI's lock wait and heartbeat, from C: acquiring with a wait, cancelled and
 * timed out, and the heartbeat that renews and reports a lost lock.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "lock_capi.h"

static int64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

struct canceller {
  int calls;
  int stop_at;          /* 0: never */
  int release_at;       /* 0: never; else release `holder` on that call */
  lj_lock_t *holder;
};

static int cancel_cb(void *payload) {
  struct canceller *c = (struct canceller *)payload;
  c->calls++;
  if (c->release_at != 0 && c->calls == c->release_at) CHECK(lj_lock_release(c->holder, NULL) == LJ_OK);
  return c->stop_at != 0 && c->calls >= c->stop_at;
}

static void test_wait(void) {
  lj_store_t *store = NULL;
  lj_lock_t *theirs = NULL, *mine = NULL;
  lj_lock_acquisition_t a;
  lj_lock_wait_options_t w = LJ_LOCK_WAIT_OPTIONS_INIT, defaults;
  struct canceller c;
  lj_error_t *err = NULL;
  int64_t start, took;

  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  /* Held by this process, alive: a wait for it runs out. */
  CHECK(lj_lock_acquire(&theirs, &a, store, S("w"), S("theirs"), NULL, LJ_TIME_DEFAULT, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED);
  lj_lock_acquisition_clear(&a);
  w.wait_ms = 150;
  w.poll_min_ms = 10;
  w.poll_max_ms = 20;
  start = monotonic_ms();
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_OK);
  took = monotonic_ms() - start;
  CHECK(a.outcome == LJ_ACQUIRE_HELD && mine == NULL && a.has_verdict == 1);
  CHECK(a.verdict.kind == LJ_LOCK_HELD && a.verdict.reason == LJ_LOCK_LEASE_RUNS);
  CHECK(took >= 150 && took < 2000);
  lj_lock_acquisition_clear(&a);

  /* NULL wait and a wait of 0: one try. */
  start = monotonic_ms();
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, NULL, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_HELD && mine == NULL);
  lj_lock_acquisition_clear(&a);
  w.wait_ms = 0;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_HELD && mine == NULL);
  lj_lock_acquisition_clear(&a);
  CHECK(monotonic_ms() - start < 1000);

  /* Cancelled: LJ_EUSER, nothing acquired, the acquisition zeroed. */
  memset(&c, 0, sizeof c);
  c.stop_at = 3;
  w.wait_ms = 60000;
  w.cancelled = cancel_cb;
  w.payload = &c;
  start = monotonic_ms();
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, &err) == LJ_EUSER);
  CHECK(monotonic_ms() - start < 2000);
  CHECK(mine == NULL && a.has_verdict == 0 && a.revision == 0 && c.calls == 3);
  CHECK(err != NULL && strcmp(lj_error_message(err), "the wait for the lock w was cancelled") == 0);
  lj_error_destroy(err);
  err = NULL;

  /* The holder releases during the wait: ours, with a larger token. */
  memset(&c, 0, sizeof c);
  c.release_at = 4;
  c.holder = theirs;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && mine != NULL && c.calls >= 4);
  CHECK(a.revision == lj_lock_revision(mine) && a.revision > lj_lock_revision(theirs));
  lj_lock_acquisition_clear(&a);
  CHECK(lj_lock_release(mine, NULL) == LJ_OK);
  lj_lock_destroy(mine);
  lj_lock_destroy(theirs);
  mine = theirs = NULL;

  /* Options: init, versions, ranges. */
  CHECK(lj_lock_wait_options_init(&defaults, 1) == LJ_OK);
  CHECK(defaults.version == 1 && defaults.wait_ms == 0 && defaults.poll_min_ms == 50 && defaults.poll_max_ms == 1000 &&
        defaults.cancelled == NULL && defaults.payload == NULL);
  CHECK(lj_lock_wait_options_init(NULL, 1) == LJ_EINVAL);
  CHECK(lj_lock_wait_options_init(&defaults, 0) == LJ_EVERSION);
  CHECK(lj_lock_wait_options_init(&defaults, 2) == LJ_OK);
  CHECK(defaults.version == 2 && defaults.wait_ms == 0 && defaults.poll_min_ms == 50 && defaults.poll_max_ms == 1000 &&
        defaults.cancelled == NULL && defaults.payload == NULL && defaults.note == NULL);
  CHECK(lj_lock_wait_options_init(&defaults, 3) == LJ_EVERSION);
  w.cancelled = NULL;
  w.wait_ms = 10;
  w.version = 0;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EVERSION);
  w.version = 99;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EVERSION);
  w.version = LJ_LOCK_WAIT_OPTIONS_VERSION;
  w.wait_ms = -1;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.wait_ms = INT64_MIN;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.wait_ms = INT64_C(86400001);
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.wait_ms = INT64_MAX;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.wait_ms = 10;
  w.poll_min_ms = -1;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.poll_min_ms = 100;
  w.poll_max_ms = 50;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.poll_max_ms = INT64_MAX;
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  w.poll_min_ms = 0;
  w.poll_max_ms = 0;
  CHECK(lj_lock_acquire_wait(NULL, &a, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, NULL, store, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, &a, NULL, S("w"), S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, &a, store, NULL, 0, S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, &a, store, S("w"), NULL, 3, NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_acquire_wait(&mine, &a, store, "", 0, S("mine"), NULL, &w, NULL, NULL) == LJ_EINVAL);
  CHECK(mine == NULL);
  /* A key with a NUL in it is a key like any other: the lock is free, so it is ours. */
  CHECK(lj_lock_acquire_wait(&mine, &a, store, "a\0b", 3, S("mine"), NULL, &w, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && mine != NULL);
  lj_lock_acquisition_clear(&a);
  CHECK(lj_lock_release(mine, NULL) == LJ_OK);
  lj_lock_destroy(mine);
  lj_store_destroy(store);
}

struct lost_report {
  int calls; /* written last, with release: a reader that sees it sees the rest */
  int code;
  char message[512];
};

/* Called on the heartbeat's thread. */
static void on_lost(int code, const char *message, size_t len, void *payload) {
  struct lost_report *r = (struct lost_report *)payload;
  r->code = code;
  if (len >= sizeof r->message) len = sizeof r->message - 1;
  memcpy(r->message, message, len);
  r->message[len] = '\0';
  __atomic_add_fetch(&r->calls, 1, __ATOMIC_RELEASE);
}

static int lost_calls(const struct lost_report *r) {
  return __atomic_load_n(&r->calls, __ATOMIC_ACQUIRE);
}

/* Polls cond for up to 5 s. */
#define WAIT_FOR(cond)                                                  \
  do {                                                                  \
    int waited_;                                                        \
    for (waited_ = 0; waited_ < 1000 && !(cond); ++waited_) sleep_ms(5); \
  } while (0)

static void test_heartbeat(void) {
  lj_store_t *store = NULL;
  struct tiny t;
  lj_store_callbacks_t cb = tiny_callbacks();
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  lj_lock_t *lock = NULL;
  lj_lock_heartbeat_t *beat = NULL, *second = NULL;
  lj_lock_acquisition_t a;
  struct lost_report r;
  char *text = NULL;
  size_t len = 0;
  uint64_t first;

  memset(&t, 0, sizeof t);
  memset(&r, 0, sizeof r);
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_OK);
  holder.lease_ms = 300; /* renewed every 100 ms, a failure tried again every 25 ms */
  CHECK(lj_lock_acquire(&lock, &a, store, S("k"), S("beat"), &holder, LJ_TIME_DEFAULT, NULL, NULL) == LJ_OK);
  CHECK(lock != NULL);
  lj_lock_acquisition_clear(&a);
  first = lj_lock_revision(lock);

  /* One failed renewal: tried again, no loss. */
  t.fail_updates = 1;
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_OK);
  CHECK(beat != NULL);
  CHECK(lj_lock_heartbeat_start(&second, lock, on_lost, &r, NULL) == LJ_EBUSY && second == NULL);
  CHECK(lj_lock_renew(lock, LJ_TIME_DEFAULT, NULL) == LJ_EBUSY);
  CHECK(lj_lock_release(lock, NULL) == LJ_EBUSY);
  WAIT_FOR(lj_lock_heartbeat_renewals(beat) >= 3);
  CHECK(lj_lock_heartbeat_renewals(beat) >= 3);
  CHECK(lj_lock_heartbeat_retries(beat) == 1);
  CHECK(lj_lock_heartbeat_lost(beat) == 0);
  CHECK(lj_lock_revision(lock) > first);
  CHECK(lj_lock_body(&text, &len, lock, NULL) == LJ_OK && strstr(text, "\"purpose\":\"beat\"") != NULL);
  lj_free(text);
  lj_lock_heartbeat_destroy(beat);
  CHECK(r.calls == 0);
  CHECK(t.fail_updates == 0 && lj_lock_revision(lock) == t.revision);

  /* Failing for good: lost when the lease ends, LJ_ETIMEOUT. lj_lock_heartbeat_lost says so
     once the lease's time is past, which may be before the thread has called on_lost: wait
     for the call itself (a heartbeat destroyed first stops without calling). */
  t.fail_updates = 1000000;
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_OK);
  WAIT_FOR(lost_calls(&r) == 1);
  CHECK(lj_lock_heartbeat_lost(beat) == 1);
  lj_lock_heartbeat_destroy(beat);
  CHECK(r.calls == 1 && r.code == LJ_ETIMEOUT);
  CHECK(strcmp(r.message,
               "the lock k was not renewed within its lease of 300 ms: the store's update callback: store error") == 0);
  t.fail_updates = 0;

  /* Someone else's body: lost at the first renewal, LJ_ECHANGED. */
  memset(&r, 0, sizeof r);
  t.revision = ++t.last;  /* the same body at a revision we never saw: ours, taken */
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_OK);
  WAIT_FOR(lj_lock_heartbeat_renewals(beat) >= 2);
  CHECK(lj_lock_heartbeat_renewals(beat) >= 2 && lj_lock_heartbeat_lost(beat) == 0);
  lj_lock_heartbeat_destroy(beat);
  CHECK(r.calls == 0 && lj_lock_revision(lock) == t.revision);
  {
    static const char thief[] = "{\"purpose\":\"thief\",\"id\":\"someone-else\"}";
    memcpy(t.value, thief, sizeof thief - 1);
    t.len = sizeof thief - 1;
    t.revision = ++t.last;
  }
  CHECK(lj_lock_heartbeat_start(&beat, lock, NULL, NULL, NULL) == LJ_OK); /* no callback: polled only */
  lj_lock_heartbeat_destroy(beat);
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_OK);
  WAIT_FOR(lost_calls(&r) == 1);
  CHECK(lj_lock_heartbeat_lost(beat) == 1);
  lj_lock_heartbeat_destroy(beat);
  CHECK(r.calls == 1 && r.code == LJ_ECHANGED);
  CHECK(strstr(r.message, "the lock k is no longer ours: it was broken or rewritten since revision ") == r.message);
  CHECK(lj_lock_release(lock, NULL) == LJ_ECHANGED);
  lj_lock_destroy(lock);

  /* Bad arguments, and a lock without a lease. */
  CHECK(lj_lock_heartbeat_start(NULL, lock, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_lock_heartbeat_start(&beat, NULL, NULL, NULL, NULL) == LJ_EINVAL && beat == NULL);
  holder.kind = LJ_LOCK_HOLDER_NONE;
  t.has = 0;
  CHECK(lj_lock_acquire(&lock, &a, store, S("k"), S("plain"), &holder, LJ_TIME_DEFAULT, NULL, NULL) == LJ_OK);
  lj_lock_acquisition_clear(&a);
  CHECK(lj_lock_heartbeat_start(&beat, lock, on_lost, &r, NULL) == LJ_EINVAL && beat == NULL);
  CHECK(lj_lock_release(lock, NULL) == LJ_OK);
  lj_lock_destroy(lock);
  CHECK(lj_lock_heartbeat_lost(NULL) == 1);
  CHECK(lj_lock_heartbeat_renewals(NULL) == 0 && lj_lock_heartbeat_retries(NULL) == 0);
  lj_lock_heartbeat_destroy(NULL);
  lj_store_destroy(store);
}

int main(void) {
  test_wait();
  test_heartbeat();
  return CHECK_SUMMARY();
}
