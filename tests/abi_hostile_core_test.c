/* Every exported symbol of the C ABI's core part with hostile arguments (NULL, empty,
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

static const struct symbol_case cases[] = {
    {"lj_version", case_core},
    {"lj_version_number", case_core},
    {"lj_strerror", case_core},
    {"lj_error_code", case_core},
    {"lj_error_message", case_core},
    {"lj_error_destroy", case_core},
    {"lj_free", case_core},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
