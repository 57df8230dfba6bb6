/* The C ABI's stores, from C: memory, file and callbacks, each read, created, updated,
 * removed and listed, with failing callbacks.
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

struct listing {
  int count;
  char first[64];
  int stop;
};

static int list_key(const char *key, size_t key_len, void *payload) {
  struct listing *l = (struct listing *)payload;
  if (l->count == 0 && key_len < sizeof l->first) {
    memcpy(l->first, key, key_len);
    l->first[key_len] = '\0';
  }
  l->count++;
  return l->stop;
}

static void test_store_ops(lj_store_t *store) {
  uint64_t r1 = 0, r2 = 0, rev = 0;
  char *value = NULL;
  size_t len = 0;
  struct listing l;
  memset(&l, 0, sizeof l);
  CHECK(lj_store_keys(store, list_key, &l, NULL) == LJ_OK && l.count == 0);
  CHECK(lj_store_get(&value, &len, &rev, store, S("k"), NULL) == LJ_ENOTFOUND);
  CHECK(value == NULL);
  CHECK(lj_store_create(&r1, store, S("k"), S("v1"), NULL) == LJ_OK && r1 > 0);
  CHECK(lj_store_create(&r2, store, S("k"), S("v2"), NULL) == LJ_EEXISTS);
  CHECK(lj_store_keys(store, list_key, &l, NULL) == LJ_OK && l.count == 1 && strcmp(l.first, "k") == 0);
  l.stop = 3;
  CHECK(lj_store_keys(store, list_key, &l, NULL) == LJ_EUSER && l.count == 2);
  CHECK(lj_store_keys(store, NULL, &l, NULL) == LJ_EINVAL);
  CHECK(lj_store_keys(NULL, list_key, &l, NULL) == LJ_EINVAL);
  CHECK(lj_store_get(&value, &len, &rev, store, S("k"), NULL) == LJ_OK);
  CHECK(str_is(value, len, "v1") && rev == r1);
  lj_free(value);
  CHECK(lj_store_update(&r2, store, S("k"), S("v2"), r1 + 100, NULL) == LJ_ECHANGED);
  CHECK(lj_store_update(&r2, store, S("k"), S("v2"), r1, NULL) == LJ_OK && r2 > r1);
  CHECK(lj_store_remove(store, S("k"), r1, NULL) == LJ_ECHANGED);
  CHECK(lj_store_remove(store, S("k"), r2, NULL) == LJ_OK);
  CHECK(lj_store_get(&value, &len, &rev, store, S("k"), NULL) == LJ_ENOTFOUND);
  CHECK(lj_store_get(NULL, &len, &rev, store, S("k"), NULL) == LJ_EINVAL);
  CHECK(lj_store_get(&value, &len, &rev, NULL, S("k"), NULL) == LJ_EINVAL);
  CHECK(lj_store_create(&r1, store, NULL, 1, S("v"), NULL) == LJ_EINVAL);
  CHECK(lj_store_update(&r1, store, S("k"), NULL, 1, 1, NULL) == LJ_EINVAL);
  CHECK(lj_store_remove(NULL, S("k"), 1, NULL) == LJ_EINVAL);
}

static void test_stores(void) {
  lj_store_t *store = NULL;
  lj_error_t *err = NULL;
  struct tiny t;
  lj_store_callbacks_t cb;
  char dir[] = "/tmp/lj-capi-store-XXXXXX";
  char file[600];
  FILE *f;

  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  test_store_ops(store);
  lj_store_destroy(store);
  lj_store_destroy(NULL);
  CHECK(lj_store_memory_open(NULL, NULL) == LJ_EINVAL);

  CHECK(mkdtemp(dir) != NULL);
  CHECK(lj_store_file_open(&store, dir, strlen(dir), NULL) == LJ_OK);
  test_store_ops(store);
  lj_store_destroy(store);
  snprintf(file, sizeof file, "%s/plain", dir);
  f = fopen(file, "w");
  CHECK(f != NULL);
  if (f != NULL) fclose(f);
  CHECK(lj_store_file_open(&store, file, strlen(file), &err) == LJ_EIO);
  CHECK(store == NULL);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_store_file_open(&store, NULL, 0, NULL) == LJ_EINVAL);
  CHECK(lj_store_file_open(&store, "a\0b", 3, NULL) == LJ_EINVAL);

  memset(&t, 0, sizeof t);
  cb = tiny_callbacks();
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_OK);
  test_store_ops(store);
  t.fail_with = LJ_ESTORE;
  CHECK(lj_store_create(NULL, store, S("k"), S("v"), &err) == LJ_ESTORE);
  CHECK(strncmp(lj_error_message(err), "the store's create callback: ", 29) == 0);
  lj_error_destroy(err);
  err = NULL;
  t.fail_with = 5;
  CHECK(lj_store_remove(store, S("k"), 1, NULL) == LJ_EUSER);
  t.fail_with = 0;
  lj_store_destroy(store);
  CHECK(t.released == 1);

  /* Bad callback sets: the payload is still given back. */
  cb.remove = NULL;
  store = (lj_store_t *)&t;
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_EINVAL);
  CHECK(store == NULL && t.released == 2);
  cb = tiny_callbacks();
  cb.version = 3;
  CHECK(lj_store_from_callbacks(&store, &cb, &t, NULL) == LJ_EVERSION);
  CHECK(lj_store_from_callbacks(&store, NULL, &t, NULL) == LJ_EINVAL);
  CHECK(lj_store_callbacks_init(&cb, LJ_STORE_CALLBACKS_VERSION) == LJ_OK && cb.get == NULL);
  CHECK(lj_store_callbacks_init(&cb, 0) == LJ_EVERSION);
  CHECK(lj_store_sink_put(NULL, "x", 1, 1) == LJ_EINVAL);
  CHECK(lj_store_sink_key(NULL, "x", 1) == LJ_EINVAL);

  snprintf(file, sizeof file, "rm -rf '%s'", dir);
  CHECK(system(file) == 0);
}

int main(void) {
  test_stores();
  return CHECK_SUMMARY();
}
