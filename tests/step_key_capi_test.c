/* The C ABI's step keys and times, from C: keys made and parsed, ask keys, times
 * parsed; NULL and bad arguments included.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "step_capi.h"

static void test_keys_and_times(void) {
  char *key = NULL;
  size_t len = 0, node_len = 0;
  int ask = -1;
  int64_t ns = 0;
  lj_error_t *err = NULL;
  CHECK(lj_step_key(&key, &len, S("n1"), S("a.b"), &err) == LJ_OK);
  CHECK(strcmp(key, "n1.a.b") == 0 && len == 6);
  lj_free(key);
  CHECK(expect_error(lj_step_key(&key, &len, S("n.1"), S("a"), &err), LJ_EINVAL, &err, NULL));
  CHECK(key == NULL);
  CHECK(expect_error(lj_step_key(&key, &len, S(""), S("a"), &err), LJ_EINVAL, &err, "a step's node is empty"));
  CHECK(expect_error(lj_step_key(&key, &len, S("n1"), S(""), &err), LJ_EINVAL, &err, "a step's id is empty"));
  CHECK(expect_error(lj_step_key(NULL, &len, S("n1"), S("a"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_key(&key, &len, NULL, 2, S("a"), &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_key_parse(&node_len, S("n1.a.b"), NULL) == LJ_OK && node_len == 2);
  CHECK(expect_error(lj_step_key_parse(&node_len, S("n1"), &err), LJ_EPARSE, &err, "the key n1 is no step key <node>.<id>"));
  CHECK(expect_error(lj_step_key_parse(&node_len, S(".a"), &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_key_parse(NULL, S("n1.a"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_key_parse(&node_len, NULL, 4, &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_ask_key_parse(&node_len, S("node7." ASK_ID), NULL) == LJ_OK && node_len == 5);
  CHECK(lj_step_ask_key_parse(&node_len, S("n1.6F1C2D3E-4A5B-4C6D-8E7F-0A1B2C3D4E5F"), NULL) == LJ_OK);
  CHECK(expect_error(lj_step_ask_key_parse(&node_len, S("n1.abc"), &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_ask_key_parse(NULL, S("n1.abc"), &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_is_ask(&ask, S("n1." ASK_ID), S("check ask"), NULL) == LJ_OK && ask == 1);
  CHECK(lj_step_is_ask(&ask, S("n1." ASK_ID), S("check"), NULL) == LJ_OK && ask == 0);
  CHECK(lj_step_is_ask(&ask, S("n1.a"), S("check ask"), NULL) == LJ_OK && ask == 0);
  CHECK(expect_error(lj_step_is_ask(NULL, S("n1.a"), S("x"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_is_ask(&ask, S("n1.a"), NULL, 1, &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_time_parse(&ns, S("2024-05-01T12:00:00Z"), &err) == LJ_OK && ns == NOW_NS);
  CHECK(lj_step_time_parse(&ns, S("2024-05-01T13:00:00.5+01:00"), NULL) == LJ_OK && ns == NOW_NS + 500000000);
  CHECK(expect_error(lj_step_time_parse(&ns, S("x"), &err), LJ_EPARSE, &err, "\"x\" is no RFC 3339 time"));
  CHECK(expect_error(lj_step_time_parse(&ns, S("2024-05-01"), &err), LJ_EPARSE, &err, NULL));
  CHECK(expect_error(lj_step_time_parse(&ns, S("3000-01-01T00:00:00Z"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_time_parse(NULL, S("x"), &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_time_parse(&ns, NULL, 1, &err), LJ_EINVAL, &err, NULL));
}

int main(void) {
  test_keys_and_times();
  return CHECK_SUMMARY();
}
