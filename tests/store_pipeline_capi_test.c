/* The store pipeline's C ABI, in C: creates in flight on a memory store, each outcome
 * a code in the order sent, the revision a read then gives, nothing overwritten. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "leasejudge.h"

static void test_creates(void) {
  lj_store_t *store = NULL;
  lj_store_pipeline_t *pipe = NULL;
  uint64_t held = 0, rev = 0, got_rev = 0;
  char *value = NULL;
  size_t len = 0;
  lj_error_t *err = NULL;
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  CHECK(lj_store_create(&held, store, S("k.held"), S("old"), NULL) == LJ_OK);
  CHECK(lj_store_pipeline_open(&pipe, store, 0, NULL) == LJ_OK);
  CHECK(lj_store_pipeline_window(pipe) == 256); /* a memory store's own */
  CHECK(lj_store_pipeline_create(pipe, S("k.new"), S("fresh")) == LJ_OK);
  CHECK(lj_store_pipeline_create(pipe, S("k.held"), S("overwrite?")) == LJ_OK);
  CHECK(lj_store_pipeline_in_flight(pipe) == 2);
  CHECK(lj_store_pipeline_next(&rev, pipe, NULL) == LJ_OK);
  CHECK(lj_store_pipeline_next(NULL, pipe, &err) == LJ_EEXISTS);
  CHECK(err != NULL && strstr(lj_error_message(err), "k.held") != NULL);
  lj_error_destroy(err);
  CHECK(lj_store_pipeline_next(NULL, pipe, NULL) == LJ_ENOTFOUND);
  CHECK(lj_store_get(&value, &len, &got_rev, store, S("k.new"), NULL) == LJ_OK);
  CHECK(len == 5 && memcmp(value, "fresh", 5) == 0 && got_rev == rev);
  lj_free(value);
  CHECK(lj_store_get(&value, &len, &got_rev, store, S("k.held"), NULL) == LJ_OK);
  CHECK(len == 3 && memcmp(value, "old", 3) == 0 && got_rev == held);
  lj_free(value);
  lj_store_pipeline_destroy(pipe);
  CHECK(lj_store_pipeline_open(&pipe, store, 8, NULL) == LJ_OK);
  CHECK(lj_store_pipeline_window(pipe) == 8);
  lj_store_pipeline_destroy(pipe);
  lj_store_destroy(store);
}

static void test_refusals(void) {
  lj_store_pipeline_t *pipe = NULL;
  CHECK(lj_store_pipeline_open(&pipe, NULL, 0, NULL) == LJ_EINVAL);
  CHECK(pipe == NULL);
  CHECK(lj_store_pipeline_open(NULL, NULL, 0, NULL) == LJ_EINVAL);
  CHECK(lj_store_pipeline_create(NULL, S("k"), S("v")) == LJ_EINVAL);
  CHECK(lj_store_pipeline_next(NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_store_pipeline_in_flight(NULL) == 0);
  CHECK(lj_store_pipeline_ready(NULL) == 0);
  CHECK(lj_store_pipeline_window(NULL) == 0);
  lj_store_pipeline_destroy(NULL);
}

int main(void) {
  test_creates();
  test_refusals();
  return CHECK_SUMMARY();
}
