/* Every exported symbol of the C ABI's store part with hostile arguments (NULL, empty,
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

struct cb_store {
  int released;
  int sink_checks;
};

static int cb_keys(lj_store_sink_t *sink, void *payload) {
  struct cb_store *s = (struct cb_store *)payload;
  if (lj_store_sink_key(sink, NULL, 2) == LJ_EINVAL) s->sink_checks++;
  if (lj_store_sink_put(sink, S("v"), 1) == LJ_EINVAL) s->sink_checks++; /* a keys sink takes no value */
  return lj_store_sink_key(sink, "k\0ey", 4);
}

static int cb_get(lj_store_sink_t *sink, const char *key, size_t key_len, void *payload) {
  struct cb_store *s = (struct cb_store *)payload;
  (void)key;
  (void)key_len;
  if (lj_store_sink_put(sink, S("v"), 0) == LJ_EINVAL) s->sink_checks++; /* revision 0 */
  if (lj_store_sink_put(sink, NULL, 1, 7) == LJ_EINVAL) s->sink_checks++;
  if (lj_store_sink_key(sink, S("k")) == LJ_EINVAL) s->sink_checks++; /* a get sink takes no key */
  if (lj_store_sink_put(sink, S("v"), 7) != LJ_OK) return -1;
  if (lj_store_sink_put(sink, S("w"), 8) == LJ_EINVAL) s->sink_checks++; /* a second value */
  return 0;
}

static int cb_update(uint64_t *out, const char *k, size_t kl, const char *v, size_t vl, uint64_t rev, void *p) {
  (void)k, (void)kl, (void)v, (void)vl, (void)p;
  if (rev != 7) return LJ_ECHANGED;
  *out = 8;
  return LJ_OK;
}

static int cb_create(uint64_t *out, const char *k, size_t kl, const char *v, size_t vl, void *p) {
  (void)out, (void)k, (void)kl, (void)v, (void)vl, (void)p;
  return 5; /* a positive value: stop */
}

static int cb_remove(const char *k, size_t kl, uint64_t rev, void *p) {
  (void)k, (void)kl, (void)rev, (void)p;
  return -99; /* no LJ_E* code */
}

static void cb_release(void *payload) { ((struct cb_store *)payload)->released++; }

static int stop_keys(const char *key, size_t key_len, void *payload) {
  (void)key, (void)key_len, (void)payload;
  return 1;
}

static void case_stores(void) {
  lj_error_t *err = NULL;
  lj_store_t *store = (lj_store_t *)1;
  lj_store_callbacks_t cb;
  struct cb_store st;
  char *value = (char *)1;
  size_t len = 0;
  uint64_t rev = 0;

  REFUSED(lj_store_callbacks_init(NULL, LJ_STORE_CALLBACKS_VERSION), LJ_EINVAL);
  REFUSED(lj_store_callbacks_init(&cb, 0), LJ_EVERSION);
  REFUSED(lj_store_callbacks_init(&cb, LJ_STORE_CALLBACKS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_store_callbacks_init(&cb, LJ_STORE_CALLBACKS_VERSION) == LJ_OK && cb.keys == NULL);

  memset(&st, 0, sizeof st);
  REFUSED(lj_store_from_callbacks(NULL, &cb, &st, &err), LJ_EINVAL);
  REFUSED(lj_store_from_callbacks(&store, NULL, &st, &err), LJ_EINVAL);
  CHECK(store == NULL);
  cb.release = cb_release;
  REFUSED(lj_store_from_callbacks(&store, &cb, &st, &err), LJ_EINVAL); /* no functions */
  CHECK(store == NULL && st.released == 1);                            /* release has the payload back */
  cb.keys = cb_keys;
  cb.get = cb_get;
  cb.update = cb_update;
  cb.create = cb_create;
  cb.remove = cb_remove;
  cb.version = 0;
  REFUSED(lj_store_from_callbacks(&store, &cb, &st, &err), LJ_EVERSION);
  cb.version = LJ_STORE_CALLBACKS_VERSION + 1;
  REFUSED(lj_store_from_callbacks(&store, &cb, &st, &err), LJ_EVERSION);
  cb.version = LJ_STORE_CALLBACKS_VERSION;
  st.released = 0;
  CHECK(lj_store_from_callbacks(&store, &cb, &st, NULL) == LJ_OK);
  CHECK(lj_store_get(&value, &len, &rev, store, S("k"), NULL) == LJ_OK && rev == 7 && len == 1);
  lj_free(value);
  CHECK(st.sink_checks == 4);
  REFUSED(lj_store_create(&rev, store, S("k"), S("v"), &err), LJ_EUSER);
  REFUSED(lj_store_update(&rev, store, S("k"), S("v"), 6, &err), LJ_ECHANGED);
  CHECK(lj_store_update(&rev, store, S("k"), S("v"), 7, NULL) == LJ_OK && rev == 8);
  /* A callback's code that is no LJ_E* code is no success either. */
  CHECK(lj_store_remove(store, S("k"), 7, &err) < 0);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_store_keys(store, stop_keys, NULL, &err) == LJ_EUSER);
  lj_error_destroy(err);
  err = NULL;
  CHECK(st.sink_checks == 6);
  lj_store_destroy(store);
  CHECK(st.released == 1);
  lj_store_destroy(NULL);
  CHECK(lj_store_sink_put(NULL, S("v"), 1) == LJ_EINVAL);
  CHECK(lj_store_sink_key(NULL, S("k")) == LJ_EINVAL);

  REFUSED(lj_store_memory_open(NULL, &err), LJ_EINVAL);
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  REFUSED(lj_store_get(NULL, &len, &rev, store, S("k"), &err), LJ_EINVAL);
  REFUSED(lj_store_get(&value, &len, &rev, NULL, S("k"), &err), LJ_EINVAL);
  REFUSED(lj_store_get(&value, &len, &rev, store, NULL, 1, &err), LJ_EINVAL);
  REFUSED(lj_store_get(&value, &len, &rev, store, S("absent"), &err), LJ_ENOTFOUND);
  CHECK(lj_store_create(NULL, store, S("k"), S("v"), NULL) == LJ_OK); /* out_revision may be NULL */
  REFUSED(lj_store_create(&rev, NULL, S("k"), S("v"), &err), LJ_EINVAL);
  REFUSED(lj_store_create(&rev, store, NULL, 1, S("v"), &err), LJ_EINVAL);
  REFUSED(lj_store_create(&rev, store, S("k"), NULL, 1, &err), LJ_EINVAL);
  CHECK(lj_store_create(&rev, store, "k\0\xff", 3, "v\0", 2, NULL) == LJ_OK && rev > 0);
  REFUSED(lj_store_create(&rev, store, "k\0\xff", 3, S("v"), &err), LJ_EEXISTS);
  CHECK(lj_store_get(&value, &len, &rev, store, "k\0\xff", 3, NULL) == LJ_OK && len == 2 && value[1] == '\0');
  lj_free(value);
  CHECK(lj_store_update(NULL, store, S("k"), S("v"), 1, NULL) == LJ_OK);
  REFUSED(lj_store_update(&rev, NULL, S("k"), S("v"), 1, &err), LJ_EINVAL);
  REFUSED(lj_store_update(&rev, store, NULL, 1, S("v"), 1, &err), LJ_EINVAL);
  REFUSED(lj_store_update(&rev, store, S("k"), NULL, 1, 1, &err), LJ_EINVAL);
  REFUSED(lj_store_update(&rev, store, "k\0\xff", 3, S("v"), 0, &err), LJ_ECHANGED);
  REFUSED(lj_store_update(&rev, store, "k\0\xff", 3, S("v"), UINT64_MAX, &err), LJ_ECHANGED);
  REFUSED(lj_store_remove(NULL, S("k"), 1, &err), LJ_EINVAL);
  REFUSED(lj_store_remove(store, NULL, 1, 1, &err), LJ_EINVAL);
  REFUSED(lj_store_remove(store, "k\0\xff", 3, 0, &err), LJ_ECHANGED);
  REFUSED(lj_store_keys(NULL, stop_keys, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_keys(store, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_keys(store, stop_keys, NULL, &err), LJ_EUSER);
  lj_store_destroy(store);

  REFUSED(lj_store_file_open(NULL, S("/tmp"), &err), LJ_EINVAL);
  REFUSED(lj_store_file_open(&store, NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_store_file_open(&store, NULL, 5, &err), LJ_EINVAL);
  REFUSED(lj_store_file_open(&store, "/tmp\0x", 6, &err), LJ_EINVAL);
  REFUSED(lj_store_file_open(&store, S("/proc/self/status"), &err), LJ_EIO);
  {
    char *long_dir = malloc(9000);
    memset(long_dir, 'd', 9000);
    long_dir[0] = '/';
    REFUSED(lj_store_file_open(&store, long_dir, 9000, &err), LJ_EIO);
    free(long_dir);
  }
  {
    char dir[] = "/tmp/lj-hostile-XXXXXX";
    char cmd[100];
    CHECK(mkdtemp(dir) != NULL);
    CHECK(lj_store_file_open(&store, dir, strlen(dir), NULL) == LJ_OK);
    REFUSED(lj_store_create(&rev, store, NULL, 0, S("v"), &err), LJ_EINVAL); /* an empty key */
    {
      char key[300];
      memset(key, 'k', sizeof key);
      REFUSED(lj_store_create(&rev, store, key, sizeof key, S("v"), &err), LJ_EINVAL); /* no file name */
    }
    CHECK(lj_store_create(&rev, store, "a/\0\xff", 4, S("v"), NULL) == LJ_OK);
    CHECK(lj_store_get(&value, &len, &rev, store, "a/\0\xff", 4, NULL) == LJ_OK && len == 1);
    lj_free(value);
    lj_store_destroy(store);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
  }
}

static const struct symbol_case cases[] = {
    {"lj_store_callbacks_init", case_stores},
    {"lj_store_from_callbacks", case_stores},
    {"lj_store_memory_open", case_stores},
    {"lj_store_file_open", case_stores},
    {"lj_store_destroy", case_stores},
    {"lj_store_get", case_stores},
    {"lj_store_create", case_stores},
    {"lj_store_update", case_stores},
    {"lj_store_remove", case_stores},
    {"lj_store_keys", case_stores},
    {"lj_store_sink_put", case_stores},
    {"lj_store_sink_key", case_stores},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
