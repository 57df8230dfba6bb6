/* The C ABI's seed forms of the lock, from C: the execution described from arguments,
 * a process alive, a body parsed.
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

/* The entry points a binding needs to give the JavaScript code's own answers. */
static void test_seed_forms(void) {
  char* out = NULL;
  size_t len = 0, count = 0;
  int alive = -1;
  lj_error_t* err = NULL;
  lj_execution_ref_t ref = {S("caelo-prod"), S("europe-west1"), S("job-x")};
  lj_execution_ref_t nul = {S("p"), S("r"), "a\0b", 3};
  lj_execution_ref_t hole = {NULL, 1, S("r"), S("n")};
  static const char args[] =
      "run\0jobs\0executions\0describe\0job-x\0--region=europe-west1\0--project=caelo-prod\0--format=json";

  CHECK(lj_execution_describe_args(&out, &len, &count, &ref, NULL) == LJ_OK);
  CHECK(count == 8 && len == sizeof args && memcmp(out, args, sizeof args) == 0);
  lj_free(out);
  CHECK(lj_execution_describe_args(&out, &len, NULL, &nul, NULL) == LJ_OK);
  CHECK(len > 34 && memcmp(out + 29,
                           "a\xEF\xBF\xBD"
                           "b",
                           5) == 0);
  lj_free(out);
  CHECK(lj_execution_describe_args(&out, &len, &count, &hole, &err) == LJ_EINVAL && out == NULL);
  CHECK(strcmp(lj_error_message(err), "ref has a NULL field") == 0);
  lj_error_destroy(err);
  CHECK(lj_execution_describe_args(&out, &len, &count, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_execution_describe_args(NULL, &len, &count, &ref, NULL) == LJ_EINVAL);

  CHECK(lj_process_alive(&alive, (double)getpid(), NULL) == LJ_OK && alive == 1);
  CHECK(lj_process_alive(&alive, 4194304.0 * 512, NULL) == LJ_OK && alive == 1); /* no 32-bit pid */
  CHECK(lj_process_alive(&alive, 1.5, NULL) == LJ_OK && alive == 1);
  CHECK(lj_process_alive(&alive, -1, NULL) == LJ_OK && alive == 1);
  CHECK(lj_process_alive(&alive, 0, NULL) == LJ_OK && alive == 1);
  alive = -1;
  CHECK(lj_process_alive(&alive, 2147483647.0, NULL) == LJ_OK && alive == 0); /* above pid_max */
  CHECK(lj_process_alive(NULL, 1, NULL) == LJ_EINVAL);

  /* Read back in the schema's order, unknown keys dropped, escapes as JSON.stringify
   * writes them; owner kept. */
  CHECK(lj_lock_body_parse(&out, &len,
                           S("{\"leaseUntil\":\"x\",\"owner\":\"o\",\"zz\":[1],\"execution\":{\"name\":\"n\","
                             "\"region\":\"r\",\"projectId\":\"p\",\"q\":1},\"pid\":1e21,\"machine\":null,"
                             "\"purpose\":\"a\\u0000\\ud800\\u00e9/\"}"),
                           NULL) == LJ_OK);
  CHECK(str_is(out, len,
               "{\"purpose\":\"a\\u0000\\ud800\xC3\xA9/\",\"machine\":null,\"pid\":1e+21,"
               "\"execution\":{\"projectId\":\"p\",\"region\":\"r\",\"name\":\"n\"},\"leaseUntil\":\"x\","
               "\"owner\":\"o\"}"));
  lj_free(out);
  CHECK(lj_lock_body_parse(&out, &len, S("{\"pid\":-0,\"purpose\":\"\\\"pid\\\":0\"}"), NULL) == LJ_OK);
  CHECK(str_is(out, len, "{\"purpose\":\"\\\"pid\\\":0\",\"pid\":-0}"));
  lj_free(out);
  CHECK(lj_lock_body_parse(&out, &len, S("{\"purpose\":1}"), &err) == LJ_EPARSE && out == NULL);
  lj_error_destroy(err);
  CHECK(lj_lock_body_parse(&out, &len, NULL, 0, NULL) == LJ_EPARSE);
  CHECK(lj_lock_body_parse(&out, &len, NULL, 3, NULL) == LJ_EINVAL);
  CHECK(lj_lock_body_parse(NULL, &len, S("{}"), NULL) == LJ_EINVAL);
}

int main(void) {
  test_seed_forms();
  return CHECK_SUMMARY();
}
