/* What the C tests of the ABI share: CHECK, counting passes and failures and printing
 * each failure TAP-style, and S(), a string literal as (pointer, length). A test's
 * main ends with CHECK_SUMMARY(). */
#ifndef LEASEJUDGE_TESTS_CHECK_H
#define LEASEJUDGE_TESTS_CHECK_H

#include <stdio.h>

#include "leasejudge.h"

static int check_passed, check_failed;
#define CHECK(cond)                                              \
  do {                                                           \
    if (cond) {                                                  \
      check_passed++;                                            \
    } else {                                                     \
      check_failed++;                                            \
      printf("not ok - %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    }                                                            \
  } while (0)
#define S(lit) lit, (sizeof(lit) - 1)
#define CHECK_SUMMARY() \
  (printf("%d passed, %d failed\n", check_passed, check_failed), check_failed == 0 ? 0 : 1)

/* A store over callbacks whose reads find nothing and whose writes fail. */
static inline int no_get(lj_store_sink_t *sink, const char *key, size_t len, void *payload) {
  (void)sink; (void)key; (void)len; (void)payload;
  return LJ_OK;
}
static inline int no_update(uint64_t *out, const char *key, size_t len, const char *v, size_t vl, uint64_t rev,
                            void *payload) {
  (void)out; (void)key; (void)len; (void)v; (void)vl; (void)rev; (void)payload;
  return LJ_ESTORE;
}
static inline int no_create(uint64_t *out, const char *key, size_t len, const char *v, size_t vl, void *payload) {
  (void)out; (void)key; (void)len; (void)v; (void)vl; (void)payload;
  return LJ_ESTORE;
}
static inline int no_remove(const char *key, size_t len, uint64_t rev, void *payload) {
  (void)key; (void)len; (void)rev; (void)payload;
  return LJ_ESTORE;
}

#endif
