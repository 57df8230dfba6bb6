/* A lock holder for tests/lock_history_test.cpp and tests/etcd_lock_history_test.cpp,
 * in a process of its own and through the C ABI only: it takes the lock at KEY on a
 * NATS bucket (or any store by its URL) again and again, and writes every critical
 * section to LOG as it goes (one write(2) per line, so a SIGKILL loses nothing written):
 *   A <token> <start ns> <broke_at> <asked ns>
 *                                     acquired, the fencing token its revision; asked
 *                                     when the acquisition was asked for
 *   W <token> <ns>                    a write to the guarded resource, with the
 *                                     token it carries (the lock's revision now)
 *   R <token> <ns> <asked ns>         renewed: the new revision; asked when the renewal
 *                                     was asked for
 *   F <end ns>                        the section's work is done: the release follows
 *                                     (after a renewal that failed, <end ns> is when
 *                                     it was asked: nothing was written since, and a
 *                                     store that stalls the call keeps it from ending)
 *   E <end ns> <how>                  the section ended: released, lost (a renewal
 *                                     found the lock broken), changed (the release
 *                                     found it someone else's), error-<code>
 *   B <revision> <ns>                 an acquisition broke the body at revision but
 *                                     lost the race to take the lock after it
 *   X <ns> <code>                     an acquisition failed with an error (what it
 *                                     wrote may or may not have landed)
 * Times are CLOCK_REALTIME. The lock's own clock runs SCALE times as fast from T0,
 * so its lease (10 minutes and 5 of skew) lasts 0.9 s of real time at SCALE 1000.
 *
 * MODE real uses the NATS store as it is; MODE broken puts a store in front of it
 * whose update and remove skip the revision check (they write at whatever revision
 * the key has now): the lock the history checker must catch.
 *
 * With BUCKET "-", URLS is a store URL (etcd://host:port,.../PREFIX) opened by
 * lj_store_open_url, the one grammar of every door.
 *
 * LEASE_MS, when given, is the lease the lock is taken with, renewed every third of
 * it of real time: a store that binds the lock's key to a store lease (etcd) counts
 * that lease in real time, whatever the lock's clock says.
 *
 * usage: lock_history_holder URLS BUCKET KEY LOG T0_MS SCALE DEADLINE_MS STOPFILE MODE SEED [LEASE_MS] */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leasejudge.h"

static int log_fd = -1;
static int64_t t0_ms, scale;
static int64_t renew_scale; /* scale, or 1 for a lease of real time */
static unsigned seed;

static int64_t real_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The lock's clock: 2024-05-01T12:00:00Z at T0, SCALE times real time since. */
static int64_t lock_now_ms(void) {
  return INT64_C(1714564800000) + (real_ns() / 1000000 - t0_ms) * scale;
}

static void say(const char *fmt, ...) {
  char line[256];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof line - 1) n = (int)sizeof line - 2;
  line[n++] = '\n';
  if (write(log_fd, line, (size_t)n) != n) _exit(3);
}

static void sleep_ms(int ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (long)(ms % 1000) * 1000000;
  nanosleep(&ts, NULL);
}

static int rnd(int lo, int hi) {
  seed = seed * 1103515245u + 12345u;
  return lo + (int)((seed >> 16) % (unsigned)(hi - lo + 1));
}

/* --- the broken store: update and remove at whatever revision the key has now --------- */

static int fwd_keys(lj_store_sink_t *sink, void *payload) {
  (void)sink;
  (void)payload;
  return LJ_EUNSUPPORTED; /* the lock never lists */
}
static int fwd_get(lj_store_sink_t *sink, const char *key, size_t key_len, void *payload) {
  char *value = NULL;
  size_t len = 0;
  uint64_t rev = 0;
  int rc = lj_store_get(&value, &len, &rev, (lj_store_t *)payload, key, key_len, NULL);
  if (rc == LJ_ENOTFOUND) return LJ_OK;
  if (rc != LJ_OK) return rc;
  rc = lj_store_sink_put(sink, value, len, rev);
  lj_free(value);
  return rc;
}
static uint64_t revision_now(lj_store_t *store, const char *key, size_t key_len) {
  char *value = NULL;
  size_t len = 0;
  uint64_t rev = 0;
  if (lj_store_get(&value, &len, &rev, store, key, key_len, NULL) != LJ_OK) return 0;
  lj_free(value);
  return rev;
}
static int broken_update(uint64_t *out, const char *key, size_t key_len, const char *value, size_t value_len,
                         uint64_t revision, void *payload) {
  lj_store_t *store = (lj_store_t *)payload;
  uint64_t now = revision_now(store, key, key_len);
  (void)revision; /* the check this store skips */
  if (now == 0) return lj_store_create(out, store, key, key_len, value, value_len, NULL);
  return lj_store_update(out, store, key, key_len, value, value_len, now, NULL);
}
static int fwd_create(uint64_t *out, const char *key, size_t key_len, const char *value, size_t value_len,
                      void *payload) {
  return lj_store_create(out, (lj_store_t *)payload, key, key_len, value, value_len, NULL);
}
static int broken_remove(const char *key, size_t key_len, uint64_t revision, void *payload) {
  lj_store_t *store = (lj_store_t *)payload;
  uint64_t now = revision_now(store, key, key_len);
  (void)revision;
  if (now == 0) return LJ_OK;
  return lj_store_remove(store, key, key_len, now, NULL);
}

/* --- one critical section ------------------------------------------------------------- */

/* Holds the lock for a few writes (now and then long enough to renew), then
 * releases it, logging each step. */
static void critical_section(lj_lock_t *lock) {
  int writes = rnd(0, 15) == 0 ? rnd(80, 120) : rnd(1, 4);
  int64_t interval_ns = lj_lock_renew_interval_ms(lock) / renew_scale * 1000000;
  int64_t renewed = real_ns(), end = 0, asked;
  const char *how = "released";
  char how_buf[32];
  int i, rc;
  for (i = 0; i < writes; i++) {
    if (real_ns() - renewed >= interval_ns) {
      lj_error_t *err = NULL;
      asked = real_ns();
      rc = lj_lock_renew(lock, lock_now_ms(), &err);
      lj_error_destroy(err);
      if (rc == LJ_ECHANGED) {
        how = "lost";
        end = asked;
        break;
      }
      if (rc != LJ_OK) {
        snprintf(how_buf, sizeof how_buf, "error%d", rc);
        how = how_buf;
        end = asked;
        break;
      }
      renewed = real_ns();
      say("R %llu %lld %lld", (unsigned long long)lj_lock_revision(lock), (long long)renewed, (long long)asked);
    }
    say("W %llu %lld", (unsigned long long)lj_lock_revision(lock), (long long)real_ns());
    sleep_ms(rnd(1, 5));
  }
  if (end == 0) end = real_ns();
  if (strcmp(how, "lost") != 0) {
    say("F %lld", (long long)end);
    rc = lj_lock_release(lock, NULL);
    if (rc == LJ_ECHANGED) {
      how = "changed";
    } else if (rc != LJ_OK && strcmp(how, "released") == 0) {
      snprintf(how_buf, sizeof how_buf, "error%d", rc);
      how = how_buf;
    }
  }
  say("E %lld %s", (long long)end, how);
}

int main(int argc, char **argv) {
  lj_nats_options_t o = LJ_NATS_OPTIONS_INIT;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  const lj_lock_holder_t *taken_as = NULL; /* the default: a process, the default lease */
  lj_store_t *opened = NULL, *store = NULL;
  int64_t deadline_ms;
  const char *key, *stop_file;
  int broken;

  if (argc != 11 && argc != 12) {
    fprintf(stderr, "usage: %s URLS BUCKET KEY LOG T0_MS SCALE DEADLINE_MS STOPFILE MODE SEED [LEASE_MS]\n", argv[0]);
    return 2;
  }
  o.urls = argv[1];
  o.urls_len = strlen(argv[1]);
  o.bucket = argv[2];
  o.bucket_len = strlen(argv[2]);
  o.connect_timeout_ms = 1000;
  o.request_timeout_ms = 2000;
  o.reconnect_wait_ms = 100;
  key = argv[3];
  log_fd = open(argv[4], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  t0_ms = strtoll(argv[5], NULL, 10);
  scale = strtoll(argv[6], NULL, 10);
  deadline_ms = strtoll(argv[7], NULL, 10);
  stop_file = argv[8];
  broken = strcmp(argv[9], "broken") == 0;
  seed = (unsigned)strtoul(argv[10], NULL, 10) ^ (unsigned)getpid();
  renew_scale = scale;
  if (argc == 12) {
    holder.lease_ms = strtoll(argv[11], NULL, 10);
    taken_as = &holder;
    renew_scale = 1;
  }
  if (log_fd < 0 || scale <= 0 || holder.lease_ms <= 0) return 2;

  while ((strcmp(argv[2], "-") == 0 ? lj_store_open_url(&opened, argv[1], strlen(argv[1]), NULL, NULL)
                                    : lj_nats_store_open(&opened, &o, NULL)) != LJ_OK) {
    if (real_ns() / 1000000 > deadline_ms) return 1;
    sleep_ms(100);
  }
  store = opened;
  if (broken) {
    lj_store_callbacks_t cb = LJ_STORE_CALLBACKS_INIT;
    cb.keys = fwd_keys;
    cb.get = fwd_get;
    cb.update = broken_update;
    cb.create = fwd_create;
    cb.remove = broken_remove;
    if (lj_store_from_callbacks(&store, &cb, opened, NULL) != LJ_OK) return 1;
  }

  while (real_ns() / 1000000 < deadline_ms && access(stop_file, F_OK) != 0) {
    lj_lock_t *lock = NULL;
    lj_lock_acquisition_t a;
    lj_error_t *err = NULL;
    int64_t asked = real_ns();
    int rc = lj_lock_acquire(&lock, &a, store, key, strlen(key), "history", 7, taken_as, lock_now_ms(), NULL, &err);
    lj_error_destroy(err);
    if (rc != LJ_OK) {
      say("X %lld %d", (long long)real_ns(), rc);
      sleep_ms(rnd(20, 40));
      continue;
    }
    if (a.outcome == LJ_ACQUIRE_ACQUIRED) {
      say("A %llu %lld %llu %lld", (unsigned long long)a.revision, (long long)real_ns(),
          (unsigned long long)a.broke_at, (long long)asked);
      critical_section(lock);
      lj_lock_destroy(lock);
      lj_lock_acquisition_clear(&a);
      sleep_ms(rnd(1, 3));
      continue;
    }
    if (a.broke_at != 0)
      say("B %llu %lld", (unsigned long long)a.broke_at, (long long)real_ns());
    lj_lock_acquisition_clear(&a);
    sleep_ms(rnd(1, 4));
  }
  if (store != opened) lj_store_destroy(store);
  lj_store_destroy(opened);
  close(log_fd);
  return 0;
}
