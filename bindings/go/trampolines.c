// The C side of the Go callbacks: functions of the shapes leasejudge.h asks for,
// each turning its void *payload back into the runtime/cgo.Handle it carries and
// calling the exported Go function of trampolines.go. C never holds a Go pointer:
// a payload is a handle, a number.
#include <stdint.h>

#include "leasejudge.h"
#include "trampolines.h"
#include "_cgo_export.h"

static int lj_go_store_keys(lj_store_sink_t *sink, void *payload) {
  return goStoreKeys(sink, (uintptr_t)payload);
}

static int lj_go_store_get(lj_store_sink_t *sink, const char *key, size_t key_len, void *payload) {
  return goStoreGet(sink, (char *)key, key_len, (uintptr_t)payload);
}

static int lj_go_store_update(uint64_t *out_revision, const char *key, size_t key_len, const char *value,
                              size_t value_len, uint64_t revision, void *payload) {
  return goStoreUpdate(out_revision, (char *)key, key_len, (char *)value, value_len, revision, (uintptr_t)payload);
}

static int lj_go_store_create(uint64_t *out_revision, const char *key, size_t key_len, const char *value,
                              size_t value_len, void *payload) {
  return goStoreCreate(out_revision, (char *)key, key_len, (char *)value, value_len, (uintptr_t)payload);
}

static int lj_go_store_remove(const char *key, size_t key_len, uint64_t revision, void *payload) {
  return goStoreRemove((char *)key, key_len, revision, (uintptr_t)payload);
}

static void lj_go_store_release(void *payload) { goStoreRelease((uintptr_t)payload); }

int lj_go_store_open(lj_store_t **out, uintptr_t handle, lj_error_t **err) {
  lj_store_callbacks_t callbacks = LJ_STORE_CALLBACKS_INIT;
  callbacks.keys = lj_go_store_keys;
  callbacks.get = lj_go_store_get;
  callbacks.update = lj_go_store_update;
  callbacks.create = lj_go_store_create;
  callbacks.remove = lj_go_store_remove;
  callbacks.release = lj_go_store_release;
  return lj_store_from_callbacks(out, &callbacks, (void *)handle, err);
}
