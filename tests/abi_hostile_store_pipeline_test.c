/* Every exported symbol of the C ABI's store pipeline part with hostile arguments (NULL, empty,
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

static const struct symbol_case cases[] = {
    {"lj_store_pipeline_open", case_store_pipeline},
    {"lj_store_pipeline_create", case_store_pipeline},
    {"lj_store_pipeline_next", case_store_pipeline},
    {"lj_store_pipeline_in_flight", case_store_pipeline},
    {"lj_store_pipeline_ready", case_store_pipeline},
    {"lj_store_pipeline_destroy", case_store_pipeline},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
