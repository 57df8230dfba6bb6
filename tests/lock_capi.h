/* What the C tests of the lock share: the bodies, the clock, the describer and the here
 * (alive and owner-state callbacks) the verdicts are judged with. */
#ifndef LEASEJUDGE_TESTS_LOCK_CAPI_H
#define LEASEJUDGE_TESTS_LOCK_CAPI_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"

/* 2024-05-01T12:00:00.000Z */
static const int64_t now_ms = INT64_C(1714564800000);

static const char execution_body[] =
    "{\"purpose\":\"upgrade\",\"host\":\"localhost\",\"machine\":null,\"pid\":1,"
    "\"startedAt\":\"2024-05-01T11:00:00.000Z\",\"execution\":{\"projectId\":\"p\",\"region\":\"r\","
    "\"name\":\"job-abc\"},\"leaseUntil\":\"2024-05-01T12:00:00.000Z\"}";

static inline int str_is(const char *got, size_t len, const char *want) {
  return got != NULL && len == strlen(want) && memcmp(got, want, len) == 0 && got[len] == '\0';
}

struct describer {
  int calls;
  int kind;
  const char *detail;
  int stop;
  int set_nothing;
  char last_name[64];
};

static inline int describe(lj_execution_state_t *state, const lj_execution_ref_t *ref, void *payload) {
  struct describer *d = (struct describer *)payload;
  d->calls++;
  if (ref->name_len < sizeof d->last_name) {
    memcpy(d->last_name, ref->name, ref->name_len);
    d->last_name[ref->name_len] = '\0';
  }
  if (d->stop) return 7;
  if (d->set_nothing) return 0;
  return lj_execution_state_set(state, d->kind, d->detail, d->detail == NULL ? 0 : strlen(d->detail));
}

struct here_state {
  int alive_calls;
  int stop_alive;
  int stop_owner;
  int out_of_range;
  lj_holder_state_t owner;
};

static inline int alive(int *out_alive, double pid, void *payload) {
  struct here_state *h = (struct here_state *)payload;
  h->alive_calls++;
  if (h->stop_alive) return 1;
  *out_alive = !(pid == 200.0 || pid == 201.0);
  return 0;
}

static inline int owner_state(lj_holder_state_t *out, const char *token, size_t len, void *payload) {
  struct here_state *h = (struct here_state *)payload;
  (void)token;
  (void)len;
  if (h->stop_owner) return 2;
  if (h->out_of_range) {
    int bad = 42;
    memcpy(out, &bad, sizeof bad); /* a C caller may store anything in an enum field */
    return 0;
  }
  *out = h->owner;
  return 0;
}

static inline lj_lock_here_t test_here(struct here_state *state) {
  lj_lock_here_t here = LJ_LOCK_HERE_INIT;
  here.host = "build-7";
  here.host_len = 7;
  here.machine_kind = LJ_MACHINE_ID;
  here.machine = "m-aaa";
  here.machine_len = 5;
  here.alive = alive;
  here.owner_state = owner_state;
  here.payload = state;
  return here;
}

/* A one-key store in C, for the callback store. */
struct tiny {
  int has;
  char value[2048];
  size_t len;
  uint64_t revision;
  uint64_t last;
  int fail_with;
  int released;
  int fail_updates; /* the next this many updates fail (LJ_ESTORE) */
};

static inline int tiny_keys(lj_store_sink_t *sink, void *payload) {
  struct tiny *t = (struct tiny *)payload;
  if (t->fail_with) return t->fail_with;
  return t->has ? lj_store_sink_key(sink, "k", 1) : LJ_OK;
}

static inline int tiny_get(lj_store_sink_t *sink, const char *key, size_t key_len, void *payload) {
  struct tiny *t = (struct tiny *)payload;
  (void)key;
  (void)key_len;
  if (t->fail_with) return t->fail_with;
  if (!t->has) return LJ_OK;
  return lj_store_sink_put(sink, t->value, t->len, t->revision);
}

static inline int tiny_update(uint64_t *out, const char *key, size_t key_len, const char *value, size_t value_len,
                       uint64_t revision, void *payload) {
  struct tiny *t = (struct tiny *)payload;
  (void)key;
  (void)key_len;
  if (t->fail_with) return t->fail_with;
  if (t->fail_updates > 0) {
    t->fail_updates--;
    return LJ_ESTORE;
  }
  if (!t->has || t->revision != revision) return LJ_ECHANGED;
  if (value_len > sizeof t->value) return LJ_ESTORE;
  memcpy(t->value, value, value_len);
  t->len = value_len;
  t->revision = *out = ++t->last;
  return LJ_OK;
}

static inline int tiny_create(uint64_t *out, const char *key, size_t key_len, const char *value, size_t value_len,
                       void *payload) {
  struct tiny *t = (struct tiny *)payload;
  (void)key;
  (void)key_len;
  if (t->fail_with) return t->fail_with;
  if (t->has) return LJ_EEXISTS;
  if (value_len > sizeof t->value) return LJ_ESTORE;
  memcpy(t->value, value, value_len);
  t->len = value_len;
  t->has = 1;
  t->revision = *out = ++t->last;
  return LJ_OK;
}

static inline int tiny_remove(const char *key, size_t key_len, uint64_t revision, void *payload) {
  struct tiny *t = (struct tiny *)payload;
  (void)key;
  (void)key_len;
  if (t->fail_with) return t->fail_with;
  if (!t->has || t->revision != revision) return LJ_ECHANGED;
  t->has = 0;
  return LJ_OK;
}

static inline void tiny_release(void *payload) { ((struct tiny *)payload)->released++; }

static inline lj_store_callbacks_t tiny_callbacks(void) {
  lj_store_callbacks_t cb = LJ_STORE_CALLBACKS_INIT;
  cb.keys = tiny_keys;
  cb.get = tiny_get;
  cb.update = tiny_update;
  cb.create = tiny_create;
  cb.remove = tiny_remove;
  cb.release = tiny_release;
  return cb;
}

#endif
