/* Every exported symbol of capi/leasejudge.symbols with hostile arguments: NULL
 * pointers, NULL with a length, empty, huge and non-UTF-8 input, embedded NULs,
 * options of version 0 and of the newest + 1, enums and times out of range. Each
 * call must answer the clean error its comment names (with an error message that
 * is UTF-8), or the documented result; none LJ_OK on what its comment calls
 * invalid. The list of symbols is read from capi/leasejudge.symbols: a symbol
 * without a case here fails the test, so every new symbol gets one.
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


/* 2024-05-01T12:00:00Z */
#define NOW_MS INT64_C(1714564800000)
#define NOW_NS INT64_C(1714564800000000000)
#define JS_LIMIT INT64_C(8640000000000000)

/* --- helpers ------------------------------------------------------------------- */

/* Well-formed UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF). */
static int utf8(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return 0;
    }
    if (i + need >= n) return 0;
    if (p[i + 1] < lo || p[i + 1] > hi) return 0;
    {
      size_t k;
      for (k = 2; k <= need; k++)
        if (p[i + k] < 0x80 || p[i + k] > 0xBF) return 0;
    }
    i += need + 1;
  }
  return 1;
}

/* A returned string: NUL-terminated, no NUL inside, UTF-8. */
static int text(const char *s, size_t n) {
  return s != NULL && s[n] == '\0' && strlen(s) == n && utf8(s, n);
}

/* rc is code, and *errp (taken and destroyed) says so in a UTF-8 sentence. */
static int refused(int rc, int code, lj_error_t **errp) {
  lj_error_t *err = *errp;
  int ok;
  *errp = NULL;
  ok = rc == code && (err == NULL || (lj_error_code(err) == code && utf8(lj_error_message(err),
                                                                         strlen(lj_error_message(err)))));
  if (!ok) printf("# got %d (%s), wanted %d\n", rc, err ? lj_error_message(err) : "no error", code);
  lj_error_destroy(err);
  return ok;
}
#define REFUSED(call, code) CHECK(refused((call), (code), &err))

static char *big_junk(size_t n) {
  char *b = malloc(n);
  size_t i;
  unsigned s = 12345;
  for (i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    b[i] = (char)(s >> 16);
  }
  return b;
}
#define BIG ((size_t)16 << 20)

/* --- core and identity ------------------------------------------------------------- */

static void case_core(void) {
  char expected[32];
  snprintf(expected, sizeof expected, "%d.%d.%d", LJ_VERSION_MAJOR, LJ_VERSION_MINOR, LJ_VERSION_PATCH);
  CHECK(strcmp(lj_version(), expected) == 0);
  CHECK(lj_version_number() == LJ_VERSION_NUMBER);
  {
    int code;
    for (code = 0; code >= LJ_EUNKNOWN; code--) CHECK(strcmp(lj_strerror(code), "unknown error code") != 0);
    CHECK(strcmp(lj_strerror(1), "unknown error code") == 0);
    CHECK(strcmp(lj_strerror(LJ_EUNKNOWN - 1), "unknown error code") == 0);
    CHECK(strcmp(lj_strerror(INT_MIN), "unknown error code") == 0);
    CHECK(strcmp(lj_strerror(INT_MAX), "unknown error code") == 0);
  }
  CHECK(lj_error_code(NULL) == LJ_OK);
  CHECK(strcmp(lj_error_message(NULL), "") == 0);
  lj_error_destroy(NULL);
  lj_free(NULL);
}

static void case_identity(void) {
  lj_error_t *err = NULL;
  char *out = (char *)1;
  size_t len = 0;
  lj_holder_state_t state = LJ_HOLDER_ALIVE;
  lj_owner_options_t o;

  REFUSED(lj_boot_id(NULL, &len, &err), LJ_EINVAL);
  CHECK(lj_boot_id(&out, &len, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  REFUSED(lj_owner_token(NULL, &len, 0, &err), LJ_EINVAL);
  REFUSED(lj_owner_token(&out, &len, -1, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_owner_token(&out, &len, INT32_MIN, &err), LJ_EINVAL);
  REFUSED(lj_owner_token(&out, &len, INT32_MAX, &err), LJ_ENOTFOUND); /* beyond pid_max */
  REFUSED(lj_lease_identity(NULL, &len, 0, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity(&out, &len, -5, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity(&out, &len, INT32_MAX, &err), LJ_ENOTFOUND);
  REFUSED(lj_machine_id(NULL, &len, &err), LJ_EINVAL);

  REFUSED(lj_owner_options_init(NULL, LJ_OWNER_OPTIONS_VERSION), LJ_EINVAL);
  REFUSED(lj_owner_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_owner_options_init(&o, LJ_OWNER_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_owner_options_init(&o, LJ_OWNER_OPTIONS_VERSION) == LJ_OK && o.start_tolerance_ms == 5000);

  REFUSED(lj_owner_judge(NULL, NULL, NULL, S("x.1.2"), NULL, &err), LJ_EINVAL);
  REFUSED(lj_owner_judge(&state, &out, &len, NULL, 3, NULL, &err), LJ_EINVAL);
  CHECK(out == NULL);
  o.version = 0;
  REFUSED(lj_owner_judge(&state, &out, &len, S("x.1.2"), &o, &err), LJ_EVERSION);
  o.version = LJ_OWNER_OPTIONS_VERSION + 1;
  REFUSED(lj_owner_judge(&state, &out, &len, S("x.1.2"), &o, &err), LJ_EVERSION);
  o.version = LJ_OWNER_OPTIONS_VERSION;
  o.start_tolerance_ms = -1;
  REFUSED(lj_owner_judge(&state, &out, &len, S("x.1.2"), &o, &err), LJ_EINVAL);
  /* Malformed tokens are a verdict, never an error: empty, NUL, non-UTF-8, huge. */
  CHECK(lj_owner_judge(&state, &out, &len, NULL, 0, NULL, NULL) == LJ_OK && state == LJ_HOLDER_UNKNOWN);
  CHECK(text(out, len));
  lj_free(out);
  CHECK(lj_owner_judge(&state, &out, &len, "no-boot-id.1\0.0", 15, NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_UNKNOWN && text(out, len));
  lj_free(out);
  CHECK(lj_owner_judge(&state, &out, &len, S("\xff\xfe.1.0"), NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_UNKNOWN && text(out, len));
  lj_free(out);
  {
    char *big = big_junk(BIG);
    CHECK(lj_owner_judge(&state, &out, &len, big, BIG, NULL, NULL) == LJ_OK && state == LJ_HOLDER_UNKNOWN);
    CHECK(text(out, len));
    lj_free(out);
    free(big);
  }
  /* A pid that no process has, well formed: dead, not an error. */
  CHECK(lj_owner_judge(&state, NULL, NULL, S("no-boot-id.2147483647.0"), NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_DEAD);

  REFUSED(lj_lease_identity_judge(NULL, NULL, NULL, 1, S("x"), 0, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity_judge(&state, &out, &len, 0, S("x"), 0, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity_judge(&state, &out, &len, -1, S("x"), 0, &err), LJ_EINVAL);
  REFUSED(lj_lease_identity_judge(&state, &out, &len, 1, NULL, 4, 0, &err), LJ_EINVAL);
  CHECK(out == NULL);
  CHECK(lj_lease_identity_judge(&state, &out, &len, (int32_t)getpid(), "linux \0\xff", 8, INT64_MIN, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_ALIVE && text(out, len));
  lj_free(out);
  CHECK(lj_lease_identity_judge(&state, &out, &len, (int32_t)getpid(), NULL, 0, INT64_MAX, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_RECYCLED && text(out, len)); /* no identity, past 120 minutes */
  lj_free(out);
  CHECK(lj_lease_identity_judge(&state, NULL, NULL, INT32_MAX, S("ps x"), 0, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_DEAD);
}

/* --- stores ----------------------------------------------------------------------- */

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

/* Stores by URL: every bad URL and option is refused with a code, and a file: URL of
 * a directory that is not there opens nothing and makes nothing. */
static void case_store_url(void) {
  lj_error_t *err = NULL;
  lj_store_t *store = (lj_store_t *)1;
  lj_store_url_options_t o;
  char missing[64];
  char *junk = big_junk(1 << 20);
  struct stat st;
  static const char *const bad[] = {"", "mem", "mem:x", "MEM:", "file:", "nats://", "nats:///b", "nats://h:1/",
                                    "nats://h:1", "nats://h:1,/b", "nats://,h:1/b", "http://h/b", "file",
                                    "\xff\xfe:"};
  size_t i;

  REFUSED(lj_store_url_options_init(NULL, LJ_STORE_URL_OPTIONS_VERSION), LJ_EINVAL);
  REFUSED(lj_store_url_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_store_url_options_init(&o, LJ_STORE_URL_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_store_url_options_init(&o, LJ_STORE_URL_OPTIONS_VERSION) == LJ_OK && o.create == 0);

  REFUSED(lj_store_open_url(NULL, "mem:", 4, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_open_url(&store, NULL, 0, NULL, &err), LJ_EINVAL);
  CHECK(store == NULL);
  REFUSED(lj_store_open_url(&store, NULL, 4, NULL, &err), LJ_EINVAL);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    REFUSED(lj_store_open_url(&store, bad[i], strlen(bad[i]), NULL, &err), LJ_EINVAL);
    CHECK(store == NULL);
  }
  REFUSED(lj_store_open_url(&store, "mem:\0", 5, NULL, &err), LJ_EINVAL); /* embedded NUL */
  REFUSED(lj_store_open_url(&store, "file:/tmp\0/x", 12, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_open_url(&store, junk, 1 << 20, NULL, &err), LJ_EINVAL); /* huge */
  REFUSED(lj_store_open_url(&store, "mem:", 3, NULL, &err), LJ_EINVAL);    /* truncated */
  o.version = 0;
  REFUSED(lj_store_open_url(&store, "mem:", 4, &o, &err), LJ_EVERSION);
  o.version = LJ_STORE_URL_OPTIONS_VERSION;
  o.tls_ca_file = NULL;
  o.tls_ca_file_len = 3;
  REFUSED(lj_store_open_url(&store, "mem:", 4, &o, &err), LJ_EINVAL);
  o.tls_ca_file = "a\0b";
  REFUSED(lj_store_open_url(&store, "mem:", 4, &o, &err), LJ_EINVAL);
  o.tls_ca_file_len = 0;
  o.tls_ca_file = NULL;

  o.create_name = NULL; /* version 2's name of creation: NULL with a length, a NUL inside */
  o.create_name_len = 2;
  REFUSED(lj_store_open_url(&store, "mem:", 4, &o, &err), LJ_EINVAL);
  o.create_name = "--x\0y";
  o.create_name_len = 5;
  REFUSED(lj_store_open_url(&store, "mem:", 4, &o, &err), LJ_EINVAL);
  o.create_name = "--make-it";
  o.create_name_len = 9;

  snprintf(missing, sizeof missing, "file:/tmp/lj-hostile-missing-%ld", (long)getpid());
  CHECK(lj_store_open_url(&store, missing, strlen(missing), &o, &err) == LJ_ESTORE && store == NULL);
  CHECK(err != NULL && strstr(lj_error_message(err), "(nothing was made; --make-it makes it)") != NULL);
  lj_error_destroy(err);
  err = NULL;
  o.version = 1; /* a caller built against version 1: no name read past its struct */
  CHECK(lj_store_open_url(&store, missing, strlen(missing), &o, &err) == LJ_ESTORE && store == NULL);
  CHECK(err != NULL && strstr(lj_error_message(err), "(nothing was made; creation makes it)") != NULL);
  lj_error_destroy(err);
  err = NULL;
  o.version = LJ_STORE_URL_OPTIONS_VERSION;
  CHECK(stat(missing + 5, &st) != 0); /* nothing made */
  o.create = 1;
  CHECK(lj_store_open_url(&store, missing, strlen(missing), &o, NULL) == LJ_OK && store != NULL);
  lj_store_destroy(store);
  CHECK(stat(missing + 5, &st) == 0 && S_ISDIR(st.st_mode));
  rmdir(missing + 5);
  CHECK(lj_store_open_url(&store, "mem:", 4, NULL, NULL) == LJ_OK && store != NULL);
  lj_store_destroy(store);
  free(junk);
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

/* --- steps ------------------------------------------------------------------------- */

static lj_step_plan_options_t plan_options(void) {
  lj_step_plan_options_t o = LJ_STEP_PLAN_OPTIONS_INIT;
  o.node = "n1";
  o.node_len = 2;
  o.owner = "no-boot-id.1.2";
  o.owner_len = 14;
  o.now_ns = NOW_NS;
  o.before_ns = NOW_NS;
  return o;
}

/* Every way a set of plan options is out of range, through one call. */
static void bad_plan_options(int (*call)(const lj_step_plan_options_t *, lj_error_t **)) {
  lj_error_t *err = NULL;
  lj_step_plan_options_t o;
  REFUSED(call(NULL, &err), LJ_EINVAL);
  o = plan_options();
  o.version = 0;
  REFUSED(call(&o, &err), LJ_EVERSION);
  o.version = LJ_STEP_PLAN_OPTIONS_VERSION + 1;
  REFUSED(call(&o, &err), LJ_EVERSION);
  o = plan_options();
  o.node = NULL;
  o.node_len = 0;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.node = NULL;
  o.node_len = 2;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.node = "a.b";
  o.node_len = 3;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.owner = NULL;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.bound_seconds = 0;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.bound_seconds = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.bound_seconds = INT64_MAX;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.rule = 3;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.rule = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o = plan_options();
  o.start_tolerance_ms = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
}

static int call_plan(const lj_step_plan_options_t *o, lj_error_t **err) {
  lj_step_action_t a;
  return lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.x"), S("{}"), o, err);
}
static int call_batch(const lj_step_plan_options_t *o, lj_error_t **err) {
  lj_step_action_t a;
  lj_step_entry_t e = {0, 4, 4, 2, 1};
  return lj_step_plan_batch(&a, 1, NULL, S("n1.x{}"), 0, &e, 1, o, err);
}
static int call_lines(const lj_step_plan_options_t *o, lj_error_t **err) {
  char *out = NULL;
  size_t len = 0;
  int rc = lj_step_plan_lines(&out, &len, NULL, S("{\"key\":\"n1.x\"}\n"), o, err);
  lj_free(out);
  return rc;
}

static void case_step_names_and_texts(void) {
  lj_error_t *err = NULL;
  lj_step_action_t a;
  char why[LJ_STEP_WHY_MAX];
  char *out = NULL;
  size_t len = 0;
  lj_step_plan_summary_t sum;

  CHECK(strcmp(lj_step_action_name(-1), "") == 0 && strcmp(lj_step_action_name(3), "") == 0);
  CHECK(strcmp(lj_step_action_name(INT_MAX), "") == 0 && strcmp(lj_step_action_name(INT_MIN), "") == 0);
  CHECK(strcmp(lj_step_reason_name(-1), "") == 0 && strcmp(lj_step_reason_name(14), "") == 0);
  CHECK(strcmp(lj_step_reason_name(INT_MAX), "") == 0);
  CHECK(strcmp(lj_step_leave_why(INT_MAX), "") == 0 && strcmp(lj_step_leave_why(INT_MIN), "") == 0);

  memset(&a, 0, sizeof a);
  REFUSED(lj_step_why(NULL, sizeof why, &len, &a, &err), LJ_EINVAL);
  REFUSED(lj_step_why(why, sizeof why, &len, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_why(why, LJ_STEP_WHY_MAX - 1, &len, &a, &err), LJ_EINVAL);
  REFUSED(lj_step_why(why, 0, &len, &a, &err), LJ_EINVAL);
  a.reason = 14;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  a.reason = 255;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  a.reason = LJ_STEP_ASK_PAST_BOUND;
  a.action = 3;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  a.action = LJ_STEP_END;
  a.bound_nsec = -1;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  a.bound_nsec = 1000000000;
  REFUSED(lj_step_why(why, sizeof why, &len, &a, &err), LJ_EINVAL);
  /* Any second of the int64 range is a time Go writes: the why still fits. */
  a.bound_nsec = 999999999;
  a.bound_sec = INT64_MAX;
  CHECK(lj_step_why(why, sizeof why, &len, &a, NULL) == LJ_OK && text(why, len));
  a.bound_sec = INT64_MIN;
  CHECK(lj_step_why(why, sizeof why, NULL, &a, NULL) == LJ_OK && text(why, strlen(why)));

  memset(&a, 0, sizeof a);
  a.action = LJ_STEP_END;
  a.reason = LJ_STEP_OWNER_NOT_SELF;
  REFUSED(lj_step_said(NULL, &len, &a, S("o"), S("s"), &err), LJ_EINVAL);
  REFUSED(lj_step_said(&out, &len, NULL, S("o"), S("s"), &err), LJ_EINVAL);
  REFUSED(lj_step_said(&out, &len, &a, NULL, 1, S("s"), &err), LJ_EINVAL);
  REFUSED(lj_step_said(&out, &len, &a, S("o"), NULL, 1, &err), LJ_EINVAL);
  CHECK(out == NULL);
  a.reason = 14;
  REFUSED(lj_step_said(&out, &len, &a, S("o"), S("s"), &err), LJ_EINVAL);
  a.reason = LJ_STEP_OWNER_NOT_SELF;
  a.action = 9;
  REFUSED(lj_step_said(&out, &len, &a, S("o"), S("s"), &err), LJ_EINVAL);
  a.action = LJ_STEP_END;
  CHECK(lj_step_said(&out, &len, &a, "\0\xc3", 2, "\xed\xa0\x80", 3, NULL) == LJ_OK && text(out, len));
  lj_free(out);

  memset(&sum, 0, sizeof sum);
  REFUSED(lj_step_plan_summary_format(NULL, &len, &sum, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_summary_format(&out, &len, NULL, &err), LJ_EINVAL);
  sum.ends = UINT64_MAX;
  sum.deletes = 1;
  REFUSED(lj_step_plan_summary_format(&out, &len, &sum, &err), LJ_EINVAL);
  CHECK(out == NULL);
}

static void case_step_plans(void) {
  lj_error_t *err = NULL;
  lj_step_plan_options_t o = plan_options();
  lj_step_action_t a, acts[2];
  lj_step_entry_t e[2];
  lj_step_plan_summary_t sum;
  char *why = NULL, *said = NULL, *out = NULL;
  size_t why_len = 0, said_len = 0, len = 0;

  REFUSED(lj_step_plan_options_init(NULL, LJ_STEP_PLAN_OPTIONS_VERSION), LJ_EINVAL);
  REFUSED(lj_step_plan_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_step_plan_options_init(&o, LJ_STEP_PLAN_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_step_plan_options_init(&o, LJ_STEP_PLAN_OPTIONS_VERSION) == LJ_OK && o.bound_seconds == 3600);

  bad_plan_options(call_plan);
  bad_plan_options(call_batch);
  bad_plan_options(call_lines);

  o = plan_options();
  REFUSED(lj_step_plan(NULL, &why, &why_len, &said, &said_len, S("n1.x"), S("{}"), &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan(&a, &why, &why_len, &said, &said_len, NULL, 3, S("{}"), &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan(&a, &why, &why_len, &said, &said_len, S("n1.x"), NULL, 3, &o, &err), LJ_EINVAL);
  CHECK(why == NULL && said == NULL);
  /* Junk, NULs, non-UTF-8, 16 MiB: no step, not an error. */
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.x"), "{\"id\":\"a\0\"}", 11, &o, NULL) == LJ_OK);
  CHECK(a.action == LJ_STEP_LEAVE && a.reason == LJ_STEP_NO_STEP);
  CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, S("n1.x"), S("{\"id\":\"\xff\",\"state\":\"running\"}"), &o, NULL) ==
        LJ_OK);
  CHECK(a.action == LJ_STEP_END && a.reason == LJ_STEP_STARTED_BEFORE);
  {
    char *big = big_junk(BIG);
    CHECK(lj_step_plan(&a, &why, &why_len, &said, &said_len, S("n1.x"), big, BIG, &o, NULL) == LJ_OK);
    CHECK(a.reason == LJ_STEP_NO_STEP && text(why, why_len) && text(said, said_len));
    lj_free(why);
    lj_free(said);
    CHECK(lj_step_plan(&a, NULL, NULL, NULL, NULL, big, BIG, S("{}"), &o, NULL) == LJ_OK);
    CHECK(a.reason == LJ_STEP_OTHER_NODE);
    free(big);
  }

  /* Batches: entries outside the buffer, short outputs, NULLs. */
  memset(e, 0, sizeof e);
  e[0].key_offset = 0;
  e[0].key_len = 4;
  e[0].value_offset = 4;
  e[0].value_len = 2;
  REFUSED(lj_step_plan_entries(NULL, 1, NULL, S("n1.x{}"), e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_entries(acts, 0, NULL, S("n1.x{}"), e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_entries(acts, 1, NULL, NULL, 6, e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_entries(acts, 1, NULL, S("n1.x{}"), e, 1, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_batch(NULL, 1, NULL, S("n1.x{}"), 0, e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_batch(acts, 1, NULL, S("n1.x{}"), 0, NULL, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_batch(acts, 0, NULL, S("n1.x{}"), 0, e, 1, &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_batch(acts, 1, NULL, NULL, 6, 0, e, 1, &o, &err), LJ_EINVAL);
  e[1] = e[0];
  e[1].value_offset = 5; /* one past the end */
  REFUSED(lj_step_plan_batch(acts, 2, NULL, S("n1.x{}"), 0, e, 2, &o, &err), LJ_EINVAL);
  e[1].value_offset = UINT64_MAX;
  e[1].value_len = 2;
  REFUSED(lj_step_plan_batch(acts, 2, NULL, S("n1.x{}"), 0, e, 2, &o, &err), LJ_EINVAL);
  e[1] = e[0];
  e[1].key_offset = UINT64_MAX - 1;
  REFUSED(lj_step_plan_batch(acts, 2, NULL, S("n1.x{}"), 0, e, 2, &o, &err), LJ_EINVAL);
  e[1] = e[0];
  e[1].key_len = UINT32_MAX;
  REFUSED(lj_step_plan_batch(acts, 2, NULL, S("n1.x{}"), 0, e, 2, &o, &err), LJ_EINVAL);
  CHECK(lj_step_plan_batch(acts, 1, &sum, S("n1.x{}"), 0, e, 1, &o, NULL) == LJ_OK);
  CHECK(acts[0].reason == LJ_STEP_NOT_RUNNING && sum.leaves == 1);
  CHECK(lj_step_plan_batch(NULL, 0, &sum, NULL, 0, 0, NULL, 0, &o, NULL) == LJ_OK && sum.leaves == 0);
  /* However many threads are asked for, the plan is the same. */
  o.threads = UINT32_MAX;
  e[1] = e[0];
  CHECK(lj_step_plan_batch(acts, 2, &sum, S("n1.x{}"), 0, e, 2, &o, NULL) == LJ_OK);
  CHECK(acts[0].reason == LJ_STEP_NOT_RUNNING && acts[1].reason == LJ_STEP_NOT_RUNNING && sum.leaves == 2);
  o.threads = 1;

  REFUSED(lj_step_plan_lines(NULL, &len, NULL, S("{}"), &o, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_lines(&out, &len, NULL, NULL, 2, &o, &err), LJ_EINVAL);
  CHECK(out == NULL);
  CHECK(lj_step_plan_lines(&out, &len, &sum, S("\xff\n{\"key\":\"\\u0000\"}\n[\n\0\n"), &o, NULL) == LJ_OK);
  CHECK(text(out, len) && sum.malformed == 3 && sum.other_node == 1);
  lj_free(out);
  {
    char *big = big_junk(BIG);
    CHECK(lj_step_plan_lines(&out, &len, &sum, big, BIG, &o, NULL) == LJ_OK && text(out, len));
    lj_free(out);
    free(big);
  }
}

static void case_step_keys_and_codec(void) {
  lj_error_t *err = NULL;
  char *out = (char *)1;
  size_t len = 0, node_len = 0;
  int ask = 7;
  int64_t ns = 0, sec = 0;
  int32_t nsec = 0;
  lj_step_t *step = (lj_step_t *)1;

  REFUSED(lj_step_key(NULL, &len, S("n"), S("i"), &err), LJ_EINVAL);
  REFUSED(lj_step_key(&out, &len, NULL, 1, S("i"), &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_step_key(&out, &len, S("n"), NULL, 1, &err), LJ_EINVAL);
  REFUSED(lj_step_key(&out, &len, NULL, 0, S("i"), &err), LJ_EINVAL);
  REFUSED(lj_step_key(&out, &len, S("n"), NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_step_key(&out, &len, "n\0", 2, S("i"), &err), LJ_EINVAL);
  CHECK(lj_step_key(&out, &len, S("\xff"), S("\xc3.x"), NULL) == LJ_OK && len == 5); /* stored bytes, kept */
  lj_free(out);

  REFUSED(lj_step_key_parse(NULL, S("n.i"), &err), LJ_EINVAL);
  REFUSED(lj_step_key_parse(&node_len, NULL, 3, &err), LJ_EINVAL);
  REFUSED(lj_step_key_parse(&node_len, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_step_key_parse(&node_len, S(".i"), &err), LJ_EPARSE);
  REFUSED(lj_step_key_parse(&node_len, S("n."), &err), LJ_EPARSE);
  CHECK(lj_step_key_parse(&node_len, "n\0.\0", 4, NULL) == LJ_OK && node_len == 2);
  REFUSED(lj_step_ask_key_parse(NULL, S("n.i"), &err), LJ_EINVAL);
  REFUSED(lj_step_ask_key_parse(&node_len, NULL, 3, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_key_parse(&node_len, S("n.6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5"), &err), LJ_EPARSE);
  REFUSED(lj_step_ask_key_parse(&node_len, S("n.6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5g"), &err), LJ_EPARSE);
  CHECK(lj_step_ask_key_parse(&node_len, S("n.6F1C2D3E-4A5B-4C6D-8E7F-0A1B2C3D4E5F"), NULL) == LJ_OK);
  REFUSED(lj_step_is_ask(NULL, S("n.i"), S("x ask"), &err), LJ_EINVAL);
  REFUSED(lj_step_is_ask(&ask, NULL, 1, S("x ask"), &err), LJ_EINVAL);
  REFUSED(lj_step_is_ask(&ask, S("n.i"), NULL, 1, &err), LJ_EINVAL);
  CHECK(lj_step_is_ask(&ask, NULL, 0, NULL, 0, NULL) == LJ_OK && ask == 0);

  REFUSED(lj_step_time_parse(NULL, S("2024-05-01T12:00:00Z"), &err), LJ_EINVAL);
  REFUSED(lj_step_time_parse(&ns, NULL, 2, &err), LJ_EINVAL);
  REFUSED(lj_step_time_parse(&ns, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_step_time_parse(&ns, "2024-05-01T12:00:00Z\0", 21, &err), LJ_EPARSE);
  REFUSED(lj_step_time_parse(&ns, S("1677-09-21T00:12:43Z"), &err), LJ_EINVAL);
  REFUSED(lj_step_time_parse(&ns, S("2262-04-11T23:47:17Z"), &err), LJ_EINVAL);
  CHECK(lj_step_time_parse(&ns, S("2024-05-01T12:00:00Z"), NULL) == LJ_OK && ns == NOW_NS);

  REFUSED(lj_step_decode(NULL, S("{}"), &err), LJ_EINVAL);
  REFUSED(lj_step_decode(&step, NULL, 2, &err), LJ_EINVAL);
  CHECK(step == NULL);
  REFUSED(lj_step_decode(&step, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_step_decode(&step, S("{} x"), &err), LJ_EPARSE);
  REFUSED(lj_step_decode(&step, S("\xef\xbb\xbf{}"), &err), LJ_EPARSE);
  REFUSED(lj_step_decode(&step, S("{\"id\":1}"), &err), LJ_EPARSE);
  {
    char *big = big_junk(BIG);
    REFUSED(lj_step_decode(&step, big, BIG, &err), LJ_EPARSE);
    free(big);
  }
  CHECK(lj_step_decode(&step, S("{\"id\":\"a\\u0000b\",\"owner\":\"\xff\"}"), NULL) == LJ_OK);
  {
    const char *s = lj_step_string(step, LJ_STEP_FIELD_ID, &len);
    CHECK(s != NULL && len == 3 && s[1] == '\0' && s[3] == '\0'); /* documented: may hold NUL */
    s = lj_step_string(step, LJ_STEP_FIELD_OWNER, &len);
    CHECK(text(s, len)); /* decoded as Go does: U+FFFD */
  }
  CHECK(lj_step_string(step, -1, &len) == NULL && len == 0);
  CHECK(lj_step_string(step, 7, &len) == NULL && len == 0);
  CHECK(lj_step_string(step, LJ_STEP_FIELD_ASK_WHAT, &len) == NULL);
  CHECK(lj_step_string(NULL, LJ_STEP_FIELD_ID, &len) == NULL && len == 0);
  CHECK(lj_step_string(step, LJ_STEP_FIELD_ID, NULL) != NULL);
  REFUSED(lj_step_time(NULL, &nsec, step, LJ_STEP_STARTED, &err), LJ_EINVAL);
  REFUSED(lj_step_time(&sec, NULL, step, LJ_STEP_STARTED, &err), LJ_EINVAL);
  REFUSED(lj_step_time(&sec, &nsec, NULL, LJ_STEP_STARTED, &err), LJ_EINVAL);
  REFUSED(lj_step_time(&sec, &nsec, step, 2, &err), LJ_EINVAL);
  REFUSED(lj_step_time(&sec, &nsec, step, -1, &err), LJ_EINVAL);
  CHECK(lj_step_time(&sec, &nsec, step, LJ_STEP_ENDED, NULL) == LJ_OK && sec == INT64_C(-62135596800));
  lj_step_destroy(step);
  lj_step_destroy(NULL);

  REFUSED(lj_step_end_value(NULL, &len, S("{}"), S("why"), NOW_NS, &err), LJ_EINVAL);
  REFUSED(lj_step_end_value(&out, &len, NULL, 2, S("why"), NOW_NS, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_step_end_value(&out, &len, S("{}"), NULL, 3, NOW_NS, &err), LJ_EINVAL);
  REFUSED(lj_step_end_value(&out, &len, S("[]"), S("why"), NOW_NS, &err), LJ_EPARSE);
  REFUSED(lj_step_end_value(&out, &len, S("null"), S("why"), NOW_NS, &err), LJ_EPARSE);
  REFUSED(lj_step_end_value(&out, &len, NULL, 0, S("why"), NOW_NS, &err), LJ_EPARSE);
  CHECK(lj_step_end_value(&out, &len, S("{}"), "w\0\xff", 3, INT64_MAX, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  CHECK(lj_step_end_value(&out, &len, S("{}"), NULL, 0, INT64_MIN + 1, NULL) == LJ_OK && text(out, len));
  lj_free(out);

  REFUSED(lj_step_ask_what(NULL, &len, S("{}"), LJ_STEP_JSON_STEP, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_what(&out, &len, NULL, 2, LJ_STEP_JSON_STEP, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_what(&out, &len, S("{}"), 2, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_what(&out, &len, S("{}"), -1, &err), LJ_EINVAL);
  REFUSED(lj_step_ask_what(&out, &len, S("{}"), LJ_STEP_JSON_STEP, &err), LJ_ENOTFOUND);
  REFUSED(lj_step_ask_what(&out, &len, S("{} {}"), LJ_STEP_JSON_ASK, &err), LJ_EPARSE);
  REFUSED(lj_step_ask_what(&out, &len, S("[]"), LJ_STEP_JSON_ASK, &err), LJ_EPARSE);
  REFUSED(lj_step_ask_what(&out, &len, S("x"), LJ_STEP_JSON_STEP, &err), LJ_EPARSE);
  CHECK(out == NULL);
}

/* --- sweeps ------------------------------------------------------------------------ */

static lj_sweep_options_t sweep_options(void) {
  lj_sweep_options_t o = LJ_SWEEP_OPTIONS_INIT;
  o.owner = "no-boot-id.1.2";
  o.owner_len = 14;
  o.now_ns = NOW_NS;
  o.before_ns = NOW_NS;
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
  o.owner = NULL;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o = sweep_options();
  o.bound_seconds = 0;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o.bound_seconds = INT64_MAX;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o = sweep_options();
  o.rule = 5;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
  o = sweep_options();
  o.start_tolerance_ms = -1;
  REFUSED(lj_sweep_end_stale(&report, store, S("n1"), NOW_NS, &o, &err), LJ_EINVAL);
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

/* --- locks ------------------------------------------------------------------------- */

static const char process_body[] =
    "{\"purpose\":\"p\",\"id\":\"i-1\",\"host\":\"h\",\"pid\":1,\"leaseUntil\":\"2024-05-01T12:10:00.000Z\"}";
static const char execution_body[] =
    "{\"purpose\":\"p\",\"execution\":{\"projectId\":\"p\",\"region\":\"r\",\"name\":\"n\"},"
    "\"leaseUntil\":\"2024-05-01T12:10:00.000Z\"}";

static int describe_hostile(lj_execution_state_t *state, const lj_execution_ref_t *ref, void *payload) {
  int *checks = (int *)payload;
  (void)ref;
  if (lj_execution_state_set(NULL, LJ_EXECUTION_RUNNING, NULL, 0) == LJ_EINVAL) ++*checks;
  if (lj_execution_state_set(state, 4, NULL, 0) == LJ_EINVAL) ++*checks;
  if (lj_execution_state_set(state, -1, NULL, 0) == LJ_EINVAL) ++*checks;
  if (lj_execution_state_set(state, LJ_EXECUTION_UNKNOWN, NULL, 3) == LJ_EINVAL) ++*checks;
  return lj_execution_state_set(state, LJ_EXECUTION_UNKNOWN, "a\0\xff", 3);
}

/* Every way the judging options are out of range, through one call. */
static void bad_lock_options(int (*call)(const lj_lock_options_t *, lj_error_t **)) {
  lj_error_t *err = NULL;
  lj_lock_options_t o = LJ_LOCK_OPTIONS_INIT;
  lj_lock_here_t h = LJ_LOCK_HERE_INIT;
  o.version = 0;
  REFUSED(call(&o, &err), LJ_EVERSION);
  o.version = LJ_LOCK_OPTIONS_VERSION + 1;
  REFUSED(call(&o, &err), LJ_EVERSION);
  o.version = LJ_LOCK_OPTIONS_VERSION;
  o.gcloud_timeout_ms = INT64_MAX;
  REFUSED(call(&o, &err), LJ_EINVAL);
  o.gcloud_timeout_ms = 60000;
  o.here = &h;
  h.version = 0;
  REFUSED(call(&o, &err), LJ_EVERSION);
  h.version = LJ_LOCK_HERE_VERSION + 1;
  REFUSED(call(&o, &err), LJ_EVERSION);
  h.version = LJ_LOCK_HERE_VERSION;
  h.host_len = 3;
  REFUSED(call(&o, &err), LJ_EINVAL);
  h.host = "h";
  h.host_len = 1;
  h.machine_kind = 3;
  REFUSED(call(&o, &err), LJ_EINVAL);
  h.machine_kind = -1;
  REFUSED(call(&o, &err), LJ_EINVAL);
  h.machine_kind = LJ_MACHINE_ID;
  h.machine = NULL;
  h.machine_len = 4;
  REFUSED(call(&o, &err), LJ_EINVAL);
}

static int call_judge(const lj_lock_options_t *o, lj_error_t **err) {
  lj_lock_verdict_t v;
  int rc = lj_lock_judge(&v, S(process_body), NOW_MS, o, err);
  lj_lock_verdict_clear(&v);
  return rc;
}
static lj_store_t *life_store;
static int call_acquire(const lj_lock_options_t *o, lj_error_t **err) {
  lj_lock_t *lock = NULL;
  lj_lock_acquisition_t a;
  int rc = lj_lock_acquire(&lock, &a, life_store, S("k"), S("p"), NULL, NOW_MS, o, err);
  lj_lock_acquisition_clear(&a);
  if (lock != NULL) lj_lock_release(lock, NULL);
  lj_lock_destroy(lock);
  return rc;
}

static void case_lock_verdicts(void) {
  lj_error_t *err = NULL;
  lj_lock_verdict_t v;
  lj_lock_options_t o = LJ_LOCK_OPTIONS_INIT;
  lj_lock_here_t h = LJ_LOCK_HERE_INIT;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  char *out = NULL;
  size_t len = 0;
  int checks = 0;

  CHECK(strcmp(lj_lock_reason_code(0), "") == 0 && strcmp(lj_lock_reason_code(17), "") == 0);
  CHECK(strcmp(lj_lock_reason_code(INT_MIN), "") == 0 && strcmp(lj_lock_reason_code(INT_MAX), "") == 0);
  CHECK(strcmp(lj_lock_kind_name(-1), "") == 0 && strcmp(lj_lock_kind_name(3), "") == 0);
  lj_lock_verdict_clear(NULL);

  memset(&v, 0, sizeof v);
  v.kind = LJ_LOCK_HELD;
  v.reason = LJ_LOCK_LEASE_RUNS;
  REFUSED(lj_lock_verdict_text(NULL, &len, &v, &err), LJ_EINVAL);
  REFUSED(lj_lock_verdict_text(&out, &len, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_verdict_json(NULL, &len, &v, &err), LJ_EINVAL);
  REFUSED(lj_lock_verdict_json(&out, &len, NULL, &err), LJ_EINVAL);
  v.why_len = 5; /* NULL with a length */
  REFUSED(lj_lock_verdict_json(&out, &len, &v, &err), LJ_EINVAL);
  v.why_len = 0;
  v.kind = LJ_LOCK_BREAK;
  REFUSED(lj_lock_verdict_json(&out, &len, &v, &err), LJ_EINVAL);
  REFUSED(lj_lock_verdict_text(&out, &len, &v, &err), LJ_EINVAL);
  v.kind = (lj_lock_kind_t)7;
  REFUSED(lj_lock_verdict_text(&out, &len, &v, &err), LJ_EINVAL);
  CHECK(out == NULL);

  REFUSED(lj_lock_here_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_lock_here_init(&h, 0), LJ_EVERSION);
  REFUSED(lj_lock_here_init(&h, LJ_LOCK_HERE_VERSION + 1), LJ_EVERSION);
  REFUSED(lj_lock_options_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_lock_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_lock_options_init(&o, LJ_LOCK_OPTIONS_VERSION + 1), LJ_EVERSION);
  REFUSED(lj_lock_holder_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_lock_holder_init(&holder, 0), LJ_EVERSION);
  REFUSED(lj_lock_holder_init(&holder, LJ_LOCK_HOLDER_VERSION + 1), LJ_EVERSION);
  CHECK(lj_lock_here_init(&h, 1) == LJ_OK && lj_lock_options_init(&o, 1) == LJ_OK &&
        lj_lock_holder_init(&holder, 1) == LJ_OK);

  bad_lock_options(call_judge);
  REFUSED(lj_lock_judge(NULL, S(process_body), NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_judge(&v, NULL, 4, NOW_MS, NULL, &err), LJ_EINVAL);
  CHECK(v.why == NULL);
  REFUSED(lj_lock_judge(&v, S(process_body), JS_LIMIT + 1, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_judge(&v, S(process_body), INT64_MAX, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_judge(&v, S(process_body), INT64_MIN + 1, NULL, &err), LJ_EINVAL);
  /* Unreadable bodies are a verdict: empty, NUL, non-UTF-8, 16 MiB. */
  h.host = "h";
  h.host_len = 1;
  o.here = &h;
  o.describe = describe_hostile;
  o.describe_payload = &checks;
  CHECK(lj_lock_judge(&v, NULL, 0, NOW_MS, &o, NULL) == LJ_OK && v.reason == LJ_LOCK_NOT_READABLE);
  CHECK(text(v.why, v.why_len));
  lj_lock_verdict_clear(&v);
  CHECK(lj_lock_judge(&v, "{\"purpose\":\"\0\xff\"}", 16, NOW_MS, &o, NULL) == LJ_OK);
  CHECK(v.reason == LJ_LOCK_NOT_READABLE && v.manual_removal == 1 && text(v.why, v.why_len));
  lj_lock_verdict_clear(&v);
  {
    char *big = big_junk(BIG);
    CHECK(lj_lock_judge(&v, big, BIG, NOW_MS, &o, NULL) == LJ_OK && v.reason == LJ_LOCK_NOT_READABLE);
    CHECK(text(v.why, v.why_len) && v.why_len < 1000);
    lj_lock_verdict_clear(&v);
    free(big);
  }
  CHECK(lj_lock_judge(&v, S(execution_body), NOW_MS, &o, NULL) == LJ_OK);
  CHECK(v.kind == LJ_LOCK_UNKNOWN && checks == 4 && text(v.why, v.why_len));
  lj_lock_verdict_clear(&v);

  REFUSED(lj_execution_state_parse(NULL, &out, &len, 0, S("{}"), NULL, 0, &err), LJ_EINVAL);
  {
    lj_execution_kind_t kind = LJ_EXECUTION_RUNNING;
    lj_execution_ref_t ref = {"p", 1, "r", 1, "n", 1};
    REFUSED(lj_execution_state_parse(&kind, NULL, &len, 0, S("{}"), NULL, 0, &err), LJ_EINVAL);
    REFUSED(lj_execution_state_parse(&kind, &out, &len, 0, NULL, 2, NULL, 0, &err), LJ_EINVAL);
    REFUSED(lj_execution_state_parse(&kind, &out, &len, 1, NULL, 0, NULL, 2, &err), LJ_EINVAL);
    CHECK(out == NULL);
    CHECK(lj_execution_state_parse(&kind, &out, &len, INT_MIN, NULL, 0, "\0\xff", 2, NULL) == LJ_OK);
    CHECK(kind == LJ_EXECUTION_UNKNOWN && text(out, len));
    lj_free(out);
    REFUSED(lj_execution_describe(NULL, &out, &len, &ref, 100, &err), LJ_EINVAL);
    REFUSED(lj_execution_describe(&kind, NULL, &len, &ref, 100, &err), LJ_EINVAL);
    REFUSED(lj_execution_describe(&kind, &out, &len, NULL, 100, &err), LJ_EINVAL);
    REFUSED(lj_execution_describe(&kind, &out, &len, &ref, INT64_MAX, &err), LJ_EINVAL);
    ref.region = NULL;
    REFUSED(lj_execution_describe(&kind, &out, &len, &ref, 100, &err), LJ_EINVAL);
    CHECK(out == NULL);
    ref.region = "r";
    {
      /* With no gcloud to be found, the answer is unknown, not an error. */
      char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
      setenv("PATH", "/nonexistent", 1);
      CHECK(lj_execution_describe(&kind, &out, &len, &ref, INT64_MIN, NULL) == LJ_OK);
      CHECK(kind == LJ_EXECUTION_UNKNOWN && text(out, len));
      lj_free(out);
      if (old != NULL) setenv("PATH", old, 1);
      free(old);
    }
  }
}

static void case_lock_bodies(void) {
  lj_error_t *err = NULL;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  char *out = (char *)1;
  size_t len = 0;
  int64_t ms = 0;

  REFUSED(lj_lock_purpose_default(NULL, &len, S("k"), 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_purpose_default(&out, &len, NULL, 1, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_purpose_default(&out, &len, S(""), 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_purpose_default(&out, &len, S("k"), -1, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_lock_body_new(NULL, &len, S("p"), NOW_MS, NULL, NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, NULL, 1, NOW_MS, NULL, NULL, 0, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_lock_body_new(&out, &len, S("p\xff"), NOW_MS, NULL, NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, NULL, NULL, 3, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, NULL, S("\xc3"), &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, S("p"), JS_LIMIT + 1, NULL, NULL, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_new(&out, &len, S("p"), JS_LIMIT, NULL, NULL, 0, &err), LJ_EINVAL); /* its lease is past */
  holder.version = 0;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EVERSION);
  holder.version = LJ_LOCK_HOLDER_VERSION + 1;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EVERSION);
  holder.version = LJ_LOCK_HOLDER_VERSION;
  holder.kind = 3;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL);
  holder.kind = -1;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL);
  holder.kind = LJ_LOCK_HOLDER_PROCESS;
  holder.lease_ms = -1;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL);
  holder.lease_ms = INT64_MAX;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL);
  holder.kind = LJ_LOCK_HOLDER_EXECUTION;
  holder.lease_ms = 1000;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL); /* empty fields */
  holder.execution.project_id_len = 2;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL); /* NULL with a length */
  holder.execution.project_id = "\xff";
  holder.execution.project_id_len = 1;
  holder.execution.region = "r";
  holder.execution.region_len = 1;
  holder.execution.name = "n";
  holder.execution.name_len = 1;
  REFUSED(lj_lock_body_new(&out, &len, S("p"), NOW_MS, &holder, NULL, 0, &err), LJ_EINVAL); /* not UTF-8 */
  CHECK(out == NULL);
  CHECK(lj_lock_body_new(&out, &len, "p\0", 2, NOW_MS, NULL, "i\0d", 3, NULL) == LJ_OK && text(out, len));
  lj_free(out);

  REFUSED(lj_lock_body_renew(NULL, &len, S(process_body), NOW_MS, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_renew(&out, &len, NULL, 3, NOW_MS, 0, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_renew(&out, &len, S("{}"), NOW_MS, 0, &err), LJ_EPARSE);
  REFUSED(lj_lock_body_renew(&out, &len, NULL, 0, NOW_MS, 0, &err), LJ_EPARSE);
  REFUSED(lj_lock_body_renew(&out, &len, S(process_body), NOW_MS, -1, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_renew(&out, &len, S(process_body), NOW_MS, INT64_MAX, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_renew(&out, &len, S(process_body), INT64_MIN + 1, 0, &err), LJ_EINVAL);
  CHECK(out == NULL);

  REFUSED(lj_lock_body_id(NULL, &len, S(process_body), &err), LJ_EINVAL);
  REFUSED(lj_lock_body_id(&out, &len, NULL, 1, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_id(&out, &len, S("{\"purpose\":\"p\"}"), &err), LJ_ENOTFOUND);
  REFUSED(lj_lock_body_id(&out, &len, S("nope"), &err), LJ_EPARSE);
  CHECK(lj_lock_body_id(&out, &len, S("{\"purpose\":\"p\",\"id\":\"\\u0000\\ud800\"}"), NULL) == LJ_OK);
  CHECK(text(out, len) && len == 6);
  lj_free(out);

  REFUSED(lj_lock_time_format(NULL, &len, NOW_MS, &err), LJ_EINVAL);
  REFUSED(lj_lock_time_format(&out, &len, -JS_LIMIT - 1, &err), LJ_EINVAL);
  REFUSED(lj_lock_time_format(&out, &len, INT64_MAX, &err), LJ_EINVAL);
  CHECK(lj_lock_time_format(&out, &len, -JS_LIMIT, NULL) == LJ_OK && strcmp(out, "-271821-04-20T00:00:00.000Z") == 0);
  lj_free(out);
  REFUSED(lj_lock_time_parse(NULL, S("2024"), &err), LJ_EINVAL);
  REFUSED(lj_lock_time_parse(&ms, NULL, 4, &err), LJ_EINVAL);
  REFUSED(lj_lock_time_parse(&ms, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_lock_time_parse(&ms, S("+275760-09-13T00:00:00.001Z"), &err), LJ_EPARSE);
  REFUSED(lj_lock_time_parse(&ms, S("\xff"), &err), LJ_EPARSE);
}

static lj_store_t *wait_store;
static int call_acquire_wait(const lj_lock_options_t *o, lj_error_t **err) {
  lj_lock_t *lock = NULL;
  lj_lock_acquisition_t a;
  int rc = lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, NULL, o, err);
  lj_lock_acquisition_clear(&a);
  if (lock != NULL) lj_lock_release(lock, NULL);
  lj_lock_destroy(lock);
  return rc;
}

static int always_cancel(void *payload) {
  (void)payload;
  return 7;
}

/* Waiting for a lock and the heartbeat: bad options and waits, NULLs, a cancel at
 * once, a lock without a lease, a heartbeat started twice. */
static void case_lock_wait(void) {
  lj_error_t *err = NULL;
  lj_lock_t *lock = (lj_lock_t *)1, *held = NULL;
  lj_lock_acquisition_t a;
  lj_lock_wait_options_t w = LJ_LOCK_WAIT_OPTIONS_INIT;
  lj_lock_holder_t none = LJ_LOCK_HOLDER_INIT;
  lj_lock_heartbeat_t *beat = (lj_lock_heartbeat_t *)1, *second = NULL;
  char *junk = big_junk(BIG);

  CHECK(lj_store_memory_open(&wait_store, NULL) == LJ_OK);
  bad_lock_options(call_acquire_wait);
  CHECK(lj_lock_wait_options_init(NULL, LJ_LOCK_WAIT_OPTIONS_VERSION) == LJ_EINVAL);
  CHECK(lj_lock_wait_options_init(&w, 0) == LJ_EVERSION);
  CHECK(lj_lock_wait_options_init(&w, LJ_LOCK_WAIT_OPTIONS_VERSION + 1) == LJ_EVERSION);
  CHECK(lj_lock_wait_options_init(&w, LJ_LOCK_WAIT_OPTIONS_VERSION) == LJ_OK && w.poll_min_ms == 50);
  w.version = 0;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EVERSION);
  w.version = LJ_LOCK_WAIT_OPTIONS_VERSION + 1;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EVERSION);
  w.version = LJ_LOCK_WAIT_OPTIONS_VERSION;
  w.wait_ms = -1;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.wait_ms = INT64_MIN;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.wait_ms = INT64_MAX;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.wait_ms = 0;
  w.poll_min_ms = INT64_MIN;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.poll_min_ms = 0;
  w.poll_max_ms = INT64_MAX;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.poll_min_ms = 500;
  w.poll_max_ms = 499;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  w.poll_min_ms = w.poll_max_ms = 0;
  REFUSED(lj_lock_acquire_wait(NULL, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, NULL, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, NULL, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  CHECK(lock == NULL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, NULL, 1, S("p"), NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), NULL, 1, NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("\xff"), NULL, &w, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), junk, BIG, NULL, &w, NULL, &err), LJ_EINVAL);
  none.version = 0;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), &none, &w, NULL, &err), LJ_EVERSION);
  none.version = LJ_LOCK_HOLDER_VERSION;
  CHECK(lock == NULL && a.has_verdict == 0);
  /* Cancelled before its first try: nothing written. */
  w.cancelled = always_cancel;
  w.wait_ms = 86400000;
  REFUSED(lj_lock_acquire_wait(&lock, &a, wait_store, S("k"), S("p"), NULL, &w, NULL, &err), LJ_EUSER);
  CHECK(lock == NULL && a.revision == 0);

  /* The heartbeat. */
  REFUSED(lj_lock_heartbeat_start(NULL, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_heartbeat_start(&beat, NULL, NULL, NULL, &err), LJ_EINVAL);
  CHECK(beat == NULL);
  CHECK(lj_lock_heartbeat_lost(NULL) == 1);
  CHECK(lj_lock_heartbeat_renewals(NULL) == 0 && lj_lock_heartbeat_retries(NULL) == 0);
  lj_lock_heartbeat_destroy(NULL);
  none.kind = LJ_LOCK_HOLDER_NONE;
  CHECK(lj_lock_acquire(&held, &a, wait_store, S("plain"), S("p"), &none, NOW_MS, NULL, NULL) == LJ_OK);
  lj_lock_acquisition_clear(&a);
  REFUSED(lj_lock_heartbeat_start(&beat, held, NULL, NULL, &err), LJ_EINVAL);
  CHECK(beat == NULL && lj_lock_release(held, NULL) == LJ_OK);
  lj_lock_destroy(held);
  CHECK(lj_lock_acquire(&held, &a, wait_store, S("leased"), S("p"), NULL, LJ_LOCK_NOW, NULL, NULL) == LJ_OK);
  lj_lock_acquisition_clear(&a);
  CHECK(lj_lock_heartbeat_start(&beat, held, NULL, NULL, NULL) == LJ_OK && beat != NULL);
  REFUSED(lj_lock_heartbeat_start(&second, held, NULL, NULL, &err), LJ_EBUSY);
  REFUSED(lj_lock_renew(held, LJ_LOCK_NOW, &err), LJ_EBUSY);
  REFUSED(lj_lock_release(held, &err), LJ_EBUSY);
  CHECK(second == NULL && lj_lock_heartbeat_lost(beat) == 0);
  lj_lock_heartbeat_destroy(beat);
  CHECK(lj_lock_release(held, NULL) == LJ_OK);
  lj_lock_destroy(held);
  lj_store_destroy(wait_store);
  wait_store = NULL;
  free(junk);
}

static void case_lock_life(void) {
  lj_error_t *err = NULL;
  lj_lock_t *lock = (lj_lock_t *)1;
  lj_lock_acquisition_t a;
  lj_lock_holder_t none = LJ_LOCK_HOLDER_INIT;
  char *out = (char *)1;
  size_t len = 0;

  CHECK(lj_store_memory_open(&life_store, NULL) == LJ_OK);
  bad_lock_options(call_acquire);
  REFUSED(lj_lock_acquire(NULL, &a, life_store, S("k"), S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, NULL, life_store, S("k"), S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, NULL, S("k"), S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  CHECK(lock == NULL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, NULL, 0, S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, NULL, 1, S("p"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, S("k"), NULL, 1, NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, S("k"), S("\xff"), NULL, NOW_MS, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_acquire(&lock, &a, life_store, S("k"), S("p"), NULL, -JS_LIMIT - 1, NULL, &err), LJ_EINVAL);
  CHECK(lock == NULL && a.has_verdict == 0);

  REFUSED(lj_lock_renew(NULL, NOW_MS, &err), LJ_EINVAL);
  REFUSED(lj_lock_release(NULL, &err), LJ_EINVAL);
  CHECK(lj_lock_revision(NULL) == 0 && lj_lock_renew_interval_ms(NULL) == 0);
  REFUSED(lj_lock_id(NULL, &len, NULL, &err), LJ_EINVAL);
  REFUSED(lj_lock_id(&out, &len, NULL, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_lock_body(NULL, &len, NULL, &err), LJ_EINVAL);
  out = (char *)1;
  REFUSED(lj_lock_body(&out, &len, NULL, &err), LJ_EINVAL);
  CHECK(out == NULL);
  lj_lock_destroy(NULL);
  lj_lock_acquisition_clear(NULL);

  /* A lock without a lease has nothing to renew; a released lock is no one's. */
  none.kind = LJ_LOCK_HOLDER_NONE;
  CHECK(lj_lock_acquire(&lock, &a, life_store, "k\0\xff", 3, S("p"), &none, NOW_MS, NULL, NULL) == LJ_OK);
  CHECK(a.outcome == LJ_ACQUIRE_ACQUIRED && lock != NULL && lj_lock_renew_interval_ms(lock) == 0);
  REFUSED(lj_lock_renew(lock, NOW_MS, &err), LJ_EINVAL);
  REFUSED(lj_lock_renew(lock, INT64_MAX, &err), LJ_EINVAL);
  CHECK(lj_lock_id(&out, &len, lock, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  CHECK(lj_lock_body(&out, &len, lock, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  CHECK(lj_lock_release(lock, NULL) == LJ_OK);
  REFUSED(lj_lock_release(lock, &err), LJ_ENOTFOUND);
  lj_lock_destroy(lock);
  lj_lock_acquisition_clear(&a);
  lj_store_destroy(life_store);
  life_store = NULL;
}

/* --- lease directories -------------------------------------------------------------- */

static int lines_ok(int stream, const char *line, size_t len, void *payload) {
  int *bad = (int *)payload;
  if ((stream != LJ_LEASEDIR_STDOUT && stream != LJ_LEASEDIR_STDERR) || line == NULL || line[len] != '\0') ++*bad;
  return 0;
}

static void case_leasedir(void) {
  lj_error_t *err = NULL;
  lj_leasedir_options_t o = LJ_LEASEDIR_OPTIONS_INIT;
  lj_lease_state_t state = LJ_LEASE_DEAD;
  int code = -1, bad = 0;
  char *out = (char *)1;
  size_t len = 0;
  char dir[] = "/tmp/lj-hostile-lease-XXXXXX";
  char cmd[100];
  const char *help[] = {"--help"};
  const char *nul_arg[] = {"list", NULL};
  const char *bad_opt[] = {"list", "--root", "\xff\xfe", "--nope"};

  REFUSED(lj_leasedir_options_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_leasedir_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_leasedir_options_init(&o, LJ_LEASEDIR_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_leasedir_options_init(&o, LJ_LEASEDIR_OPTIONS_VERSION) == LJ_OK && o.lock_tries == -1);

  REFUSED(lj_leasedir_run(NULL, help, 1, NULL, NULL, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_run(&code, NULL, 1, NULL, NULL, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_run(&code, nul_arg, 2, NULL, NULL, NULL, NULL, NULL, &err), LJ_EINVAL);
  o.version = 0;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EVERSION);
  o.version = LJ_LEASEDIR_OPTIONS_VERSION + 1;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EVERSION);
  o.version = LJ_LEASEDIR_OPTIONS_VERSION;
  o.lock_tries = -2;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.lock_tries = -1;
  o.lock_time_limit_s = -1;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.lock_time_limit_s = 30;
  o.lock_retry_ms = 60001;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.lock_retry_ms = -1;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.lock_retry_ms = 100;
  o.self_pid = -1;
  REFUSED(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, &o, &err), LJ_EINVAL);
  o.self_pid = 0;
  CHECK(lj_leasedir_run(&code, help, 1, NULL, NULL, lines_ok, &bad, &o, NULL) == LJ_OK && code == 0 && bad == 0);
  CHECK(lj_leasedir_run(&code, NULL, 0, NULL, NULL, lines_ok, &bad, &o, NULL) == LJ_OK && code == 0);
  CHECK(lj_leasedir_run(&code, bad_opt, 4, NULL, NULL, lines_ok, &bad, &o, NULL) == LJ_OK && code == 2 && bad == 0);

  REFUSED(lj_leasedir_path(NULL, &len, S("/"), NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_path(&out, &len, NULL, 0, NULL, &err), LJ_EINVAL);
  CHECK(out == NULL);
  REFUSED(lj_leasedir_path(&out, &len, NULL, 3, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_path(&out, &len, "/\0x", 3, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_path(&out, &len, S("/nonexistent-root"), NULL, &err), LJ_ENOTFOUND);

  CHECK(mkdtemp(dir) != NULL);
  REFUSED(lj_leasedir_touch(NULL, S("/tmp"), S("1"), NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_touch(&code, NULL, 4, S("1"), NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_touch(&code, "/tmp\0", 5, S("1"), NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_touch(&code, dir, strlen(dir), NULL, 1, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_touch(&code, dir, strlen(dir), "1\0", 2, NULL, NULL, NULL, &err), LJ_EINVAL);
  o.version = 0;
  REFUSED(lj_leasedir_touch(&code, dir, strlen(dir), S("1"), NULL, NULL, &o, &err), LJ_EVERSION);
  REFUSED(lj_leasedir_live(&code, dir, strlen(dir), NULL, 0, 0, NULL, NULL, &o, &err), LJ_EVERSION);
  REFUSED(lj_leasedir_list(&code, dir, strlen(dir), NULL, NULL, &o, &err), LJ_EVERSION);
  o.version = LJ_LEASEDIR_OPTIONS_VERSION;
  REFUSED(lj_leasedir_live(NULL, S("/tmp"), NULL, 0, 0, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_live(&code, NULL, 2, NULL, 0, 0, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_live(&code, dir, strlen(dir), NULL, 3, 0, NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_list(NULL, S("/tmp"), NULL, NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_list(&code, NULL, 2, NULL, NULL, NULL, &err), LJ_EINVAL);
  /* A pid that is no process: the script's touch writes it an empty lease (0). */
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), S("\xff"), lines_ok, &bad, NULL, NULL) == LJ_OK);
  CHECK(code == 0 && bad == 0);
  CHECK(lj_leasedir_list(&code, dir, strlen(dir), lines_ok, &bad, NULL, NULL) == LJ_OK && code == 0 && bad == 0);
  CHECK(lj_leasedir_live(&code, dir, strlen(dir), S("\xff"), 1, lines_ok, &bad, NULL, NULL) == LJ_OK && code == 1);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);

  REFUSED(lj_leasedir_state(NULL, S("1"), S("x"), 0, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_state(&state, NULL, 0, S("x"), 0, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_state(&state, "1\0", 2, S("x"), 0, NULL, &err), LJ_EINVAL);
  REFUSED(lj_leasedir_state(&state, S("1"), NULL, 1, 0, NULL, &err), LJ_EINVAL);
  o.version = 0;
  REFUSED(lj_leasedir_state(&state, S("1"), S("x"), 0, &o, &err), LJ_EVERSION);
  CHECK(lj_leasedir_state(&state, S("2147483647"), "\0\xff", 2, INT64_MIN, NULL, NULL) == LJ_OK);
  CHECK(state == LJ_LEASE_DEAD);
}

/* --- the NATS store ------------------------------------------------------------------ */

static void case_nats(void) {
  lj_error_t *err = NULL;
  lj_nats_options_t o = LJ_NATS_OPTIONS_INIT;
  lj_store_t *store = (lj_store_t *)1;

  REFUSED(lj_nats_options_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_nats_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_nats_options_init(&o, LJ_NATS_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_nats_options_init(&o, LJ_NATS_OPTIONS_VERSION) == LJ_OK && o.connect_timeout_ms == 2000);

  REFUSED(lj_nats_store_open(NULL, &o, &err), LJ_EINVAL);
  REFUSED(lj_nats_store_open(&store, NULL, &err), LJ_EINVAL);
  CHECK(store == NULL);
  o.version = 0;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EVERSION);
  o.version = LJ_NATS_OPTIONS_VERSION + 1;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EVERSION);
  o.version = LJ_NATS_OPTIONS_VERSION;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL); /* no bucket */
  o.bucket = "a b";
  o.bucket_len = 3;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.bucket = "b\0";
  o.bucket_len = 2;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.bucket = NULL;
  o.bucket_len = 2;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.bucket = "b";
  o.bucket_len = 1;
  o.urls = "nats://127.0.0.1:1\0";
  o.urls_len = 19;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.urls = NULL;
  o.urls_len = 4;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.urls = "nats://127.0.0.1:1";
  o.urls_len = strlen(o.urls);
  o.connect_timeout_ms = -1;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.connect_timeout_ms = 200;
  o.request_timeout_ms = INT64_MIN;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.request_timeout_ms = 0;
  o.list_timeout_ms = INT64_MAX;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL); /* beyond a day */
  o.list_timeout_ms = 0;
  o.reconnect_wait_ms = INT64_MAX;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.reconnect_wait_ms = 0;
  {
    lj_nats_server_t info;
    lj_store_t *mem = NULL;
    REFUSED(lj_nats_store_server(NULL, &info, &err), LJ_EINVAL);
    REFUSED(lj_nats_store_server(NULL, NULL, &err), LJ_EINVAL);
    CHECK(lj_store_memory_open(&mem, NULL) == LJ_OK);
    REFUSED(lj_nats_store_server(mem, NULL, &err), LJ_EINVAL);
    REFUSED(lj_nats_store_server(mem, &info, &err), LJ_EINVAL); /* not a NATS store */
    lj_store_destroy(mem);
  }
  o.create_bucket = 1;
  o.history = 65;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.history = -1;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.history = 1;
  o.replicas = 6;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.replicas = -3;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.replicas = 1;
  o.credentials_file = NULL;
  o.credentials_file_len = 3;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.credentials_file_len = 0;
  /* Nothing listens on port 1: the store failed, said so. */
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_ESTORE);
  CHECK(store == NULL);
}

/* --- the table ------------------------------------------------------------------------ */


/* --- what came with the bulk read, the command and the lines -------------------------- */

static int stop_batch(const char *b, size_t n, size_t pad, const lj_step_entry_t *e, size_t c, void *p) {
  (void)b; (void)n; (void)pad; (void)e; (void)c; (void)p;
  return 1;
}
static int each_line(const char *k, size_t kl, uint64_t r, const char *v, size_t vl, const char *m, void *p) {
  (void)k; (void)kl; (void)r; (void)v; (void)vl; (void)m;
  ++*(int *)p;
  return 0;
}
static int write_none(const char *d, size_t n, void *p) {
  (void)d; (void)n; (void)p;
  return 1;
}
static int scan_bad(lj_store_sink_t *sink, const char *prefix, size_t n, void *p) {
  (void)prefix; (void)n; (void)p;
  /* Hostile entries are each refused; a key outside the prefix too. */
  if (lj_store_sink_entry(sink, NULL, 5, S("v"), 1) != LJ_EINVAL) return LJ_EINTERNAL;
  if (lj_store_sink_entry(sink, S("n1.k"), NULL, 5, 1) != LJ_EINVAL) return LJ_EINTERNAL;
  if (lj_store_sink_entry(sink, S("n1.k"), S("v"), 0) != LJ_EINVAL) return LJ_EINTERNAL;
  if (lj_store_sink_entry(sink, S("zz.k"), S("v"), 1) != LJ_EINVAL) return LJ_EINTERNAL;
  if (lj_store_sink_entry(NULL, S("n1.k"), S("v"), 1) != LJ_EINVAL) return LJ_EINTERNAL;
  return lj_store_sink_entry(sink, S("n1.k\0x"), S("v\xff"), 1); /* NUL and junk: taken as bytes */
}
static int no_keys(lj_store_sink_t *s, void *p) { (void)s; (void)p; return LJ_OK; }
static int no_get(lj_store_sink_t *s, const char *k, size_t n, void *p) { (void)s; (void)k; (void)n; (void)p; return LJ_OK; }
static int no_update(uint64_t *o, const char *k, size_t n, const char *v, size_t vn, uint64_t r, void *p) {
  (void)o; (void)k; (void)n; (void)v; (void)vn; (void)r; (void)p;
  return LJ_ESTORE;
}
static int no_create(uint64_t *o, const char *k, size_t n, const char *v, size_t vn, void *p) {
  (void)o; (void)k; (void)n; (void)v; (void)vn; (void)p;
  return LJ_ESTORE;
}
static int no_remove(const char *k, size_t n, uint64_t r, void *p) { (void)k; (void)n; (void)r; (void)p; return LJ_ESTORE; }

static void case_bulk_and_lines(void) {
  lj_error_t *err = NULL;
  char *out = NULL, *boot = NULL;
  size_t len = 0, boot_len = 0;
  int32_t pid = 0;
  int64_t start = 0;
  int kept = -1, lines = 0;
  lj_store_t *store = NULL;
  lj_store_callbacks_t cb = LJ_STORE_CALLBACKS_INIT;
  lj_step_plan_options_t po = LJ_STEP_PLAN_OPTIONS_INIT;
  lj_step_lines_plan_t *plan = NULL;
  lj_step_plan_summary_t sum;
  char *junk = big_junk(BIG);

  /* lj_json_quote: any bytes give one JSON string; NULL out or a NULL with a length is refused. */
  CHECK(lj_json_quote(&out, &len, junk, BIG, NULL) == LJ_OK && text(out, len) && out[0] == '"');
  lj_free(out);
  CHECK(lj_json_quote(&out, &len, S("a\0b\xff"), NULL) == LJ_OK && text(out, len));
  lj_free(out);
  CHECK(lj_json_quote(&out, &len, NULL, 0, NULL) == LJ_OK && len == 2);
  lj_free(out);
  REFUSED(lj_json_quote(NULL, &len, S("x"), &err), LJ_EINVAL);
  REFUSED(lj_json_quote(&out, &len, NULL, 4, &err), LJ_EINVAL);

  /* lj_owner_token_parse: what is no token is LJ_EPARSE, whatever its bytes. */
  CHECK(lj_owner_token_parse(&boot, &boot_len, &pid, &start, S("no-boot-id.42.z"), NULL) == LJ_OK);
  CHECK(text(boot, boot_len) && strcmp(boot, "no-boot-id") == 0 && pid == 42 && start == 35);
  lj_free(boot);
  CHECK(lj_owner_token_parse(NULL, NULL, NULL, NULL, S("no-boot-id.42.z"), NULL) == LJ_OK);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, S("no-boot-id.0.z"), &err), LJ_EPARSE);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, S("no-boot-id.4\0.z"), &err), LJ_EPARSE);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, junk, BIG, &err), LJ_EPARSE);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, NULL, 3, &err), LJ_EINVAL);
  CHECK(boot == NULL);

  /* lj_store_scan and lj_store_sink_entry. */
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  REFUSED(lj_store_scan(NULL, S("n1."), stop_batch, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_scan(store, S("n1."), NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_scan(store, NULL, 9, stop_batch, NULL, &err), LJ_EINVAL);
  CHECK(lj_store_scan(store, junk, BIG, stop_batch, NULL, NULL) == LJ_OK); /* a prefix no key has */
  lj_store_destroy(store);
  cb.keys = no_keys;
  cb.get = no_get;
  cb.update = no_update;
  cb.create = no_create;
  cb.remove = no_remove;
  cb.scan = scan_bad;
  CHECK(lj_store_from_callbacks(&store, &cb, NULL, NULL) == LJ_OK);
  REFUSED(lj_store_scan(store, S("n1."), stop_batch, NULL, &err), LJ_EUSER); /* the one good entry, stopped */
  lj_store_destroy(store);
  REFUSED(lj_store_sink_entry(NULL, S("k"), S("v"), 1), LJ_EINVAL);

  /* lj_step_lines_entry and lj_step_lines_read. */
  CHECK(lj_step_lines_entry(&out, &len, &kept, S("n1.k"), 7, junk, 4096, NULL) == LJ_OK && text(out, len) && kept == 0);
  lj_free(out);
  CHECK(lj_step_lines_entry(&out, &len, NULL, S("n1.\0k"), UINT64_MAX, NULL, 0, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  REFUSED(lj_step_lines_entry(NULL, &len, &kept, S("k"), 1, S("v"), &err), LJ_EINVAL);
  REFUSED(lj_step_lines_entry(&out, &len, &kept, NULL, 2, 1, S("v"), &err), LJ_EINVAL);
  REFUSED(lj_step_lines_entry(&out, &len, &kept, S("k"), 1, NULL, 2, &err), LJ_EINVAL);
  CHECK(lj_step_lines_read(junk, BIG, each_line, &lines, NULL) == LJ_OK && lines > 0); /* every line malformed */
  lines = 0;
  CHECK(lj_step_lines_read(S("\n  \n{\"key\":\"a\"}\0\n"), each_line, &lines, NULL) == LJ_OK && lines == 1);
  CHECK(lj_step_lines_read(NULL, 0, each_line, &lines, NULL) == LJ_OK);
  REFUSED(lj_step_lines_read(NULL, 2, each_line, &lines, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_read(S("x"), NULL, &lines, &err), LJ_EINVAL);

  /* The lines plan fed in pieces, and streamed between descriptors. */
  po.node = "n1";
  po.node_len = 2;
  REFUSED(lj_step_lines_plan_create(NULL, &po, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_create(&plan, NULL, &err), LJ_EINVAL);
  po.version = LJ_STEP_PLAN_OPTIONS_VERSION + 1;
  REFUSED(lj_step_lines_plan_create(&plan, &po, &err), LJ_EVERSION);
  po.version = LJ_STEP_PLAN_OPTIONS_VERSION;
  CHECK(lj_step_lines_plan_create(&plan, &po, NULL) == LJ_OK);
  REFUSED(lj_step_lines_plan_feed(NULL, S("x"), write_none, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_feed(plan, S("x"), NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_feed(plan, NULL, 3, write_none, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_feed(plan, junk, BIG, write_none, NULL, &err), LJ_EUSER);
  REFUSED(lj_step_lines_plan_finish(&sum, NULL, write_none, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_finish(&sum, plan, NULL, NULL, &err), LJ_EINVAL);
  lj_step_lines_plan_destroy(plan);
  lj_step_lines_plan_destroy(NULL);
  REFUSED(lj_step_plan_lines_fd(&sum, -1, 1, &po, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_lines_fd(&sum, 0, -5, &po, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_lines_fd(&sum, 0, 1, NULL, &err), LJ_EINVAL);
  free(junk);
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

static void case_lock_seed_forms(void) {
  lj_error_t *err = NULL;
  char *out = NULL;
  size_t len = 0, count = 0;
  int alive = -1;
  char *junk = big_junk(BIG);
  lj_execution_ref_t ref = {S("p\xff"), S("r\0"), S("n")};
  lj_execution_ref_t hole = {NULL, 3, S("r"), S("n")};
  /* Arguments are bytes (a NUL in a field given as U+FFFD, the rest as it is). */
  CHECK(lj_execution_describe_args(&out, &len, &count, &ref, NULL) == LJ_OK && count == 8 && out[len - 1] == 0);
  lj_free(out);
  REFUSED(lj_execution_describe_args(&out, &len, &count, &hole, &err), LJ_EINVAL);
  REFUSED(lj_execution_describe_args(&out, &len, &count, NULL, &err), LJ_EINVAL);
  REFUSED(lj_execution_describe_args(NULL, &len, &count, &ref, &err), LJ_EINVAL);
  CHECK(lj_process_alive(&alive, 1e300, NULL) == LJ_OK && alive == 1);
  CHECK(lj_process_alive(&alive, -1e300, NULL) == LJ_OK && alive == 1);
  REFUSED(lj_process_alive(NULL, 1, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_parse(&out, &len, junk, BIG, &err), LJ_EPARSE);
  REFUSED(lj_lock_body_parse(&out, &len, S("{\"purpose\":\"a\0b\"}"), &err), LJ_EPARSE);
  REFUSED(lj_lock_body_parse(&out, &len, NULL, 5, &err), LJ_EINVAL);
  REFUSED(lj_lock_body_parse(NULL, &len, S("{}"), &err), LJ_EINVAL);
  CHECK(out == NULL);
  {
    lj_store_t *store = NULL;
    lj_lock_t *lock = NULL;
    uint64_t rev = 0;
    CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
    CHECK(lj_store_create(&rev, store, S("held"), S("{\"purpose\":\"p\",\"id\":\"a\"}"), NULL) == LJ_OK);
    REFUSED(lj_lock_open(NULL, store, S("held"), S("a"), 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, NULL, S("held"), S("a"), 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, NULL, 4, S("a"), 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, S(""), S("a"), 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, S("held"), NULL, 0, 0, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, S("held"), S("a"), -2, &err), LJ_EINVAL);
    REFUSED(lj_lock_open(&lock, store, S("none"), S("a"), 0, &err), LJ_ENOTFOUND);
    REFUSED(lj_lock_open(&lock, store, S("held"), S("a\0"), 0, &err), LJ_ECHANGED);
    REFUSED(lj_lock_open(&lock, store, S("held"), junk, BIG, 0, &err), LJ_ECHANGED);
    CHECK(lock == NULL);
    CHECK(lj_lock_lease_ms(NULL) == 0);
    CHECK(lj_lock_open(&lock, store, S("held"), S("a"), 60000, NULL) == LJ_OK && lj_lock_revision(lock) == rev);
    CHECK(lj_lock_lease_ms(lock) == 60000);
    lj_lock_destroy(lock);
    /* The lease it was taken with: this body records none, so the process lease. */
    CHECK(lj_lock_open(&lock, store, S("held"), S("a"), LJ_LOCK_LEASE_AS_TAKEN, NULL) == LJ_OK);
    CHECK(lj_lock_lease_ms(lock) == LJ_LOCK_PROCESS_LEASE_MS);
    CHECK(lj_lock_release(lock, NULL) == LJ_OK);
    lj_lock_destroy(lock);
    lj_store_destroy(store);
  }
  {
    /* The stored lock judged: the key read once, its body and revision handed back. */
    lj_store_t *store = NULL;
    lj_lock_verdict_t v;
    lj_lock_options_t o = LJ_LOCK_OPTIONS_INIT;
    uint64_t rev = 0, judged = 0;
    char *body = NULL;
    size_t body_len = 0;
    CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
    CHECK(lj_store_create(&rev, store, S("ended"), S("{\"purpose\":\"p\",\"leaseUntil\":\"2000-01-01T00:00:00Z\"}"),
                          NULL) == LJ_OK);
    CHECK(lj_store_create(NULL, store, S("junk"), junk, BIG, NULL) == LJ_OK);
    REFUSED(lj_lock_judge_stored(NULL, NULL, NULL, NULL, store, S("ended"), NOW_MS, NULL, &err), LJ_EINVAL);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, NULL, S("ended"), NOW_MS, NULL, &err), LJ_EINVAL);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, NULL, 5, NOW_MS, NULL, &err), LJ_EINVAL);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, S(""), NOW_MS, NULL, &err), LJ_EINVAL);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, S("ended"), JS_LIMIT + 1, NULL, &err), LJ_EINVAL);
    o.version = LJ_LOCK_OPTIONS_VERSION + 1;
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, S("ended"), NOW_MS, &o, &err), LJ_EVERSION);
    REFUSED(lj_lock_judge_stored(&v, &judged, &body, &body_len, store, S("none"), NOW_MS, NULL, &err), LJ_ENOTFOUND);
    CHECK(body == NULL && judged == 0);
    REFUSED(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, junk, BIG, NOW_MS, NULL, &err), LJ_ENOTFOUND);
    CHECK(lj_lock_judge_stored(&v, &judged, &body, &body_len, store, S("ended"), NOW_MS, NULL, NULL) == LJ_OK);
    CHECK(v.kind == LJ_LOCK_BREAK && v.reason == LJ_LOCK_LEASE_ENDED && judged == rev && body_len == 51 &&
          memcmp(body, "{\"purpose\":\"p\",\"leaseUntil\":\"2000-01-01T00:00:00Z\"}", 51) == 0);
    lj_free(body);
    lj_lock_verdict_clear(&v);
    /* A value of 16 MiB of junk is no lock body: held for a person, never broken. */
    CHECK(lj_lock_judge_stored(&v, NULL, NULL, NULL, store, S("junk"), NOW_MS, NULL, NULL) == LJ_OK);
    CHECK(v.kind == LJ_LOCK_HELD && v.reason == LJ_LOCK_NOT_READABLE && v.manual_removal == 1);
    lj_lock_verdict_clear(&v);
    lj_store_destroy(store);
  }
  free(junk);
}

static int watch_stop_at_once(void *payload) {
  (void)payload;
  return 1;
}

static void case_watch(void) {
  lj_error_t *err = NULL;
  lj_step_watch_t *watch = NULL;
  lj_step_watch_options_t o;
  lj_store_t *store = NULL;
  char *junk = big_junk(BIG);
  REFUSED(lj_step_watch_options_init(NULL, LJ_STEP_WATCH_OPTIONS_VERSION), LJ_EINVAL);
  REFUSED(lj_step_watch_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_step_watch_options_init(&o, LJ_STEP_WATCH_OPTIONS_VERSION + 1), LJ_EVERSION);
  REFUSED(lj_step_watch_create(NULL, S("n1"), 0, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_create(&watch, NULL, 2, 0, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_create(&watch, S(""), 0, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_create(&watch, S("n.1"), 0, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_create(&watch, S("\xff."), 0, &err), LJ_EINVAL);
  CHECK(watch == NULL);
  /* A huge node of any bytes: refused for its '.', or taken. */
  {
    int rc = lj_step_watch_create(&watch, junk, BIG, 0, &err);
    CHECK(rc == LJ_OK || refused(rc, LJ_EINVAL, &err));
    lj_step_watch_destroy(watch);
    watch = NULL;
  }
  CHECK(lj_step_watch_create(&watch, S("n\0\xff"), LJ_STEP_DEFAULT_TIME, NULL) == LJ_OK);
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  REFUSED(lj_step_watch_run(NULL, store, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_watch_run(watch, NULL, NULL, &err), LJ_EINVAL);
  lj_step_watch_options_init(&o, LJ_STEP_WATCH_OPTIONS_VERSION);
  o.version = 0;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EVERSION);
  o.version = LJ_STEP_WATCH_OPTIONS_VERSION + 1;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EVERSION);
  lj_step_watch_options_init(&o, LJ_STEP_WATCH_OPTIONS_VERSION);
  o.interval_ms = INT64_MIN;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EINVAL);
  o.interval_ms = INT64_MAX;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EINVAL);
  o.interval_ms = 1000;
  o.poll_ms = -1;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EINVAL);
  o.poll_ms = 1000;
  o.backoff_max_ms = 0;
  REFUSED(lj_step_watch_run(watch, store, &o, &err), LJ_EINVAL);
  o.backoff_max_ms = 30000;
  o.stop = watch_stop_at_once;
  CHECK(lj_step_watch_run(watch, store, &o, NULL) == LJ_OK);
  CHECK(lj_step_watch_figure(watch, LJ_WATCH_ENDS) == 0);
  CHECK(lj_step_watch_figure(watch, INT_MIN) == 0 && lj_step_watch_figure(watch, INT_MAX) == 0);
  CHECK(lj_step_watch_judged(watch, INT_MIN) == 0 && lj_step_watch_judged(watch, INT_MAX) == 0);
  CHECK(lj_step_watch_figure(NULL, 0) == 0 && lj_step_watch_judged(NULL, 0) == 0);
  lj_step_watch_destroy(watch);
  lj_step_watch_destroy(NULL);
  lj_store_destroy(store);
  free(junk);
}

static void case_store_pipeline(void) {
  lj_error_t *err = NULL;
  lj_store_t *store = NULL;
  lj_store_pipeline_t *pipe = (lj_store_pipeline_t *)1;
  uint64_t rev = 7;
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  REFUSED(lj_store_pipeline_open(&pipe, NULL, 0, &err), LJ_EINVAL);
  CHECK(pipe == NULL);
  REFUSED(lj_store_pipeline_open(NULL, store, 0, &err), LJ_EINVAL);
  REFUSED(lj_store_pipeline_open(&pipe, store, (size_t)-1, &err), LJ_EINVAL);
  CHECK(lj_store_pipeline_open(&pipe, store, 1, NULL) == LJ_OK);
  CHECK(lj_store_pipeline_create(NULL, S("k"), S("v")) == LJ_EINVAL);
  CHECK(lj_store_pipeline_create(pipe, NULL, 1, S("v")) == LJ_EINVAL);
  CHECK(lj_store_pipeline_create(pipe, S("k"), NULL, 1) == LJ_EINVAL);
  CHECK(lj_store_pipeline_in_flight(pipe) == 0 && lj_store_pipeline_ready(pipe) == 0);
  REFUSED(lj_store_pipeline_next(&rev, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_pipeline_next(&rev, pipe, &err), LJ_ENOTFOUND);
  CHECK(rev == 7);
  CHECK(lj_store_pipeline_in_flight(NULL) == 0 && lj_store_pipeline_ready(NULL) == 0);
  lj_store_pipeline_destroy(pipe);
  lj_store_pipeline_destroy(NULL);
  lj_store_destroy(store);
}

typedef void (*hostile_case)(void);
struct symbol_case {
  const char *symbol;
  hostile_case run;
};

static const struct symbol_case cases[] = {
    {"lj_json_quote", case_bulk_and_lines},
    {"lj_owner_token_parse", case_bulk_and_lines},
    {"lj_store_scan", case_bulk_and_lines},
    {"lj_store_pipeline_open", case_store_pipeline},
    {"lj_store_pipeline_create", case_store_pipeline},
    {"lj_store_pipeline_next", case_store_pipeline},
    {"lj_store_pipeline_in_flight", case_store_pipeline},
    {"lj_store_pipeline_ready", case_store_pipeline},
    {"lj_store_pipeline_destroy", case_store_pipeline},
    {"lj_store_sink_entry", case_bulk_and_lines},
    {"lj_step_lines_entry", case_bulk_and_lines},
    {"lj_step_lines_read", case_bulk_and_lines},
    {"lj_step_lines_plan_create", case_bulk_and_lines},
    {"lj_step_lines_plan_feed", case_bulk_and_lines},
    {"lj_step_lines_plan_finish", case_bulk_and_lines},
    {"lj_step_lines_plan_destroy", case_bulk_and_lines},
    {"lj_step_plan_lines_fd", case_bulk_and_lines},
    {"lj_sweep_key_text", case_sweep_observers},
    {"lj_sweep_key_verdict", case_sweep_observers},
    {"lj_sweep_key_started", case_sweep_observers},
    {"lj_sweep_outcome_name", case_sweep_observers},
    {"lj_sweep_report_stat", case_sweep_observers},
    {"lj_sweep_report_write", case_sweep_observers},
    {"lj_sweep_report_write_count", case_sweep_observers},
    {"lj_execution_describe_args", case_lock_seed_forms},
    {"lj_process_alive", case_lock_seed_forms},
    {"lj_lock_body_parse", case_lock_seed_forms},
    {"lj_lock_open", case_lock_seed_forms},
    {"lj_lock_judge_stored", case_lock_seed_forms},
    {"lj_version", case_core},
    {"lj_version_number", case_core},
    {"lj_strerror", case_core},
    {"lj_error_code", case_core},
    {"lj_error_message", case_core},
    {"lj_error_destroy", case_core},
    {"lj_free", case_core},
    {"lj_boot_id", case_identity},
    {"lj_owner_token", case_identity},
    {"lj_lease_identity", case_identity},
    {"lj_machine_id", case_identity},
    {"lj_owner_options_init", case_identity},
    {"lj_owner_judge", case_identity},
    {"lj_lease_identity_judge", case_identity},
    {"lj_store_callbacks_init", case_stores},
    {"lj_store_from_callbacks", case_stores},
    {"lj_store_memory_open", case_stores},
    {"lj_store_file_open", case_stores},
    {"lj_store_open_url", case_store_url},
    {"lj_store_url_options_init", case_store_url},
    {"lj_store_destroy", case_stores},
    {"lj_store_get", case_stores},
    {"lj_store_create", case_stores},
    {"lj_store_update", case_stores},
    {"lj_store_remove", case_stores},
    {"lj_store_keys", case_stores},
    {"lj_store_sink_put", case_stores},
    {"lj_store_sink_key", case_stores},
    {"lj_step_action_name", case_step_names_and_texts},
    {"lj_step_reason_name", case_step_names_and_texts},
    {"lj_step_leave_why", case_step_names_and_texts},
    {"lj_step_why", case_step_names_and_texts},
    {"lj_step_said", case_step_names_and_texts},
    {"lj_step_plan_summary_format", case_step_names_and_texts},
    {"lj_step_plan_options_init", case_step_plans},
    {"lj_step_plan", case_step_plans},
    {"lj_step_plan_batch", case_step_plans},
    {"lj_step_plan_entries", case_step_plans},
    {"lj_step_plan_lines", case_step_plans},
    {"lj_step_key", case_step_keys_and_codec},
    {"lj_step_key_parse", case_step_keys_and_codec},
    {"lj_step_ask_key_parse", case_step_keys_and_codec},
    {"lj_step_is_ask", case_step_keys_and_codec},
    {"lj_step_time_parse", case_step_keys_and_codec},
    {"lj_step_decode", case_step_keys_and_codec},
    {"lj_step_string", case_step_keys_and_codec},
    {"lj_step_time", case_step_keys_and_codec},
    {"lj_step_destroy", case_step_keys_and_codec},
    {"lj_step_end_value", case_step_keys_and_codec},
    {"lj_step_ask_what", case_step_keys_and_codec},
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
    {"lj_lock_reason_code", case_lock_verdicts},
    {"lj_lock_kind_name", case_lock_verdicts},
    {"lj_lock_verdict_clear", case_lock_verdicts},
    {"lj_lock_verdict_text", case_lock_verdicts},
    {"lj_lock_verdict_json", case_lock_verdicts},
    {"lj_execution_state_set", case_lock_verdicts},
    {"lj_execution_state_parse", case_lock_verdicts},
    {"lj_execution_describe", case_lock_verdicts},
    {"lj_lock_here_init", case_lock_verdicts},
    {"lj_lock_options_init", case_lock_verdicts},
    {"lj_lock_holder_init", case_lock_verdicts},
    {"lj_lock_judge", case_lock_verdicts},
    {"lj_lock_body_new", case_lock_bodies},
    {"lj_lock_purpose_default", case_lock_bodies},
    {"lj_lock_body_renew", case_lock_bodies},
    {"lj_lock_body_id", case_lock_bodies},
    {"lj_lock_time_format", case_lock_bodies},
    {"lj_lock_time_parse", case_lock_bodies},
    {"lj_lock_acquire", case_lock_life},
    {"lj_lock_acquisition_clear", case_lock_life},
    {"lj_lock_renew", case_lock_life},
    {"lj_lock_release", case_lock_life},
    {"lj_lock_revision", case_lock_life},
    {"lj_lock_renew_interval_ms", case_lock_life},
    {"lj_lock_lease_ms", case_lock_life},
    {"lj_lock_id", case_lock_life},
    {"lj_lock_body", case_lock_life},
    {"lj_lock_destroy", case_lock_life},
    {"lj_lock_wait_options_init", case_lock_wait},
    {"lj_lock_acquire_wait", case_lock_wait},
    {"lj_lock_heartbeat_start", case_lock_wait},
    {"lj_lock_heartbeat_lost", case_lock_wait},
    {"lj_lock_heartbeat_renewals", case_lock_wait},
    {"lj_lock_heartbeat_retries", case_lock_wait},
    {"lj_lock_heartbeat_destroy", case_lock_wait},
    {"lj_leasedir_options_init", case_leasedir},
    {"lj_leasedir_run", case_leasedir},
    {"lj_leasedir_path", case_leasedir},
    {"lj_leasedir_touch", case_leasedir},
    {"lj_leasedir_live", case_leasedir},
    {"lj_leasedir_list", case_leasedir},
    {"lj_leasedir_state", case_leasedir},
    {"lj_nats_options_init", case_nats},
    {"lj_nats_store_open", case_nats},
    {"lj_nats_store_server", case_nats},
    {"lj_step_watch_create", case_watch},
    {"lj_step_watch_destroy", case_watch},
    {"lj_step_watch_figure", case_watch},
    {"lj_step_watch_judged", case_watch},
    {"lj_step_watch_options_init", case_watch},
    {"lj_step_watch_run", case_watch},
};
#define CASE_COUNT (sizeof cases / sizeof cases[0])

int main(void) {
  char path[4096], line[256];
  FILE *f;
  size_t i, j, symbols = 0;
  hostile_case done[CASE_COUNT];
  size_t ran = 0;

  /* Every exported symbol has a case. */
  snprintf(path, sizeof path, "%s/capi/leasejudge.symbols", LEASEJUDGE_SOURCE_DIR);
  f = fopen(path, "r");
  CHECK(f != NULL);
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    size_t n = strcspn(line, " \t\r\n");
    int found = 0;
    if (line[0] == '#' || n == 0) continue;
    line[n] = '\0';
    symbols++;
    for (i = 0; i < CASE_COUNT; i++) found |= strcmp(cases[i].symbol, line) == 0;
    if (!found) {
      check_failed++;
      printf("not ok - the exported symbol %s has no hostile-argument case\n", line);
    }
  }
  if (f != NULL) fclose(f);
  CHECK(symbols == CASE_COUNT);

  /* Each case once, in order. */
  for (i = 0; i < CASE_COUNT; i++) {
    int seen = 0;
    for (j = 0; j < ran; j++) seen |= done[j] == cases[i].run;
    if (seen) continue;
    done[ran++] = cases[i].run;
    cases[i].run();
  }
  return CHECK_SUMMARY();
}
