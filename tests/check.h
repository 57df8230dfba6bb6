/* What the C tests of the ABI share: CHECK, counting passes and failures and printing
 * each failure TAP-style, and S(), a string literal as (pointer, length). A test's
 * main ends with CHECK_SUMMARY(). */
#ifndef LEASEJUDGE_TESTS_CHECK_H
#define LEASEJUDGE_TESTS_CHECK_H

#include <stdio.h>

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

#endif
