/* What the hostile-argument tests of the C ABI share: whether returned text is UTF-8
 * without NULs, whether a call was refused with a clean error, a big buffer of junk,
 * and the table of exported symbols to cases each runs. */
#ifndef LEASEJUDGE_TESTS_HOSTILE_H
#define LEASEJUDGE_TESTS_HOSTILE_H

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

/* Well-formed UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF). */
static inline int utf8(const char *s, size_t n) {
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
static inline int text(const char *s, size_t n) {
  return s != NULL && s[n] == '\0' && strlen(s) == n && utf8(s, n);
}

/* rc is code, and *errp (taken and destroyed) says so in a UTF-8 sentence. */
static inline int refused(int rc, int code, lj_error_t **errp) {
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

static inline char *big_junk(size_t n) {
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

static const char process_body[] =
    "{\"purpose\":\"p\",\"id\":\"i-1\",\"host\":\"h\",\"pid\":1,\"leaseUntil\":\"2024-05-01T12:10:00.000Z\"}";

/* Every way the judging options are out of range, through one call. */
static inline void bad_lock_options(int (*call)(const lj_lock_options_t *, lj_error_t **)) {
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

typedef void (*hostile_case)(void);
struct symbol_case {
  const char *symbol;
  hostile_case run;
};

/* Each case of the table once, in its order. */
static inline int hostile_run(const struct symbol_case *cases, size_t count) {
  size_t i, j, ran = 0;
  hostile_case done[64];
  for (i = 0; i < count && ran < sizeof done / sizeof done[0]; i++) {
    int seen = 0;
    for (j = 0; j < ran; j++) seen |= done[j] == cases[i].run;
    if (seen) continue;
    done[ran++] = cases[i].run;
    cases[i].run();
  }
  return CHECK_SUMMARY();
}

#endif
