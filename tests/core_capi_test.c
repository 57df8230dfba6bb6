/* The C ABI's core and identity part, from C: every entry point, NULL and bad
 * arguments included. TAP-style output, a closing "N passed, N failed" line. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"


static void test_versions_and_errors(void) {
  char expected[32];
  lj_error_t *err = NULL;
  char *out = (char *)1;
  snprintf(expected, sizeof expected, "%d.%d.%d", LJ_VERSION_MAJOR, LJ_VERSION_MINOR, LJ_VERSION_PATCH);
  CHECK(strcmp(lj_version(), expected) == 0);
  CHECK(lj_version_number() == LJ_VERSION_NUMBER);
  CHECK(strcmp(lj_strerror(LJ_OK), "ok") == 0);
  CHECK(strcmp(lj_strerror(LJ_ECHANGED), "changed") == 0);
  CHECK(strcmp(lj_strerror(1), "unknown error code") == 0);
  CHECK(strcmp(lj_strerror(-1000), "unknown error code") == 0);
  CHECK(lj_error_code(NULL) == LJ_OK);
  CHECK(strcmp(lj_error_message(NULL), "") == 0);
  lj_error_destroy(NULL);
  lj_free(NULL);
  /* An error object from a failing call. */
  CHECK(lj_boot_id(NULL, NULL, &err) == LJ_EINVAL);
  CHECK(err != NULL);
  CHECK(lj_error_code(err) == LJ_EINVAL);
  CHECK(strcmp(lj_error_message(err), "out is NULL") == 0);
  lj_error_destroy(err);
  /* err may be NULL. */
  CHECK(lj_owner_token(&out, NULL, -1, NULL) == LJ_EINVAL);
  CHECK(out == NULL);
}

static void test_identity(void) {
  char *out = NULL, *token = NULL, *why = NULL;
  size_t len = 0, token_len = 0, why_len = 0;
  lj_error_t *err = NULL;
  lj_holder_state_t state = LJ_HOLDER_UNKNOWN;
  lj_owner_options_t opts = LJ_OWNER_OPTIONS_INIT;
  FILE *f;
  char boot[64] = {0};
  pid_t child;

  f = fopen("/proc/sys/kernel/random/boot_id", "r");
  CHECK(f != NULL && fgets(boot, sizeof boot, f) != NULL);
  if (f) fclose(f);
  boot[strcspn(boot, "\n")] = '\0';
  CHECK(lj_boot_id(&out, &len, &err) == LJ_OK);
  CHECK(len == 36 && strcmp(out, boot) == 0);
  lj_free(out);

  CHECK(lj_owner_token(&token, &token_len, 0, &err) == LJ_OK);
  CHECK(token_len > 38 && strncmp(token, boot, 36) == 0 && strlen(token) == token_len);
  CHECK(lj_owner_judge(&state, &why, &why_len, token, token_len, NULL, &err) == LJ_OK);
  CHECK(state == LJ_HOLDER_ALIVE);
  CHECK(why != NULL && strlen(why) == why_len);
  lj_free(why);
  why = NULL;
  /* Same token, asked for by pid. */
  CHECK(lj_owner_token(&out, &len, (int32_t)getpid(), &err) == LJ_OK);
  CHECK(len == token_len && memcmp(out, token, len) == 0);
  lj_free(out);

  CHECK(lj_owner_judge(NULL, NULL, NULL, token, token_len, NULL, &err) == LJ_EINVAL);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_owner_judge(&state, NULL, NULL, NULL, 5, NULL, &err) == LJ_EINVAL);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_owner_judge(&state, NULL, NULL, NULL, 0, NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_UNKNOWN);
  CHECK(lj_owner_judge(&state, NULL, NULL, "\xff\xfe", 2, NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_UNKNOWN);
  opts.version = 99;
  CHECK(lj_owner_judge(&state, NULL, NULL, token, token_len, &opts, &err) == LJ_EVERSION);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_owner_options_init(&opts, LJ_OWNER_OPTIONS_VERSION) == LJ_OK);
  CHECK(opts.version == LJ_OWNER_OPTIONS_VERSION && opts.start_tolerance_ms == 5000);
  CHECK(lj_owner_options_init(&opts, 2) == LJ_EVERSION);
  CHECK(lj_owner_options_init(NULL, LJ_OWNER_OPTIONS_VERSION) == LJ_EINVAL);
  opts.start_tolerance_ms = -1;
  CHECK(lj_owner_judge(&state, NULL, NULL, token, token_len, &opts, NULL) == LJ_EINVAL);
  lj_free(token);

  /* Lease identity of this process and of a dead one. */
  CHECK(lj_lease_identity(&out, &len, 0, &err) == LJ_OK);
  CHECK(strncmp(out, "linux ", 6) == 0 && strncmp(out + 6, boot, 36) == 0);
  CHECK(lj_lease_identity_judge(&state, &why, &why_len, (int32_t)getpid(), out, len, 0, &err) == LJ_OK);
  CHECK(state == LJ_HOLDER_ALIVE);
  lj_free(why);
  why = NULL;
  child = fork();
  if (child == 0) _exit(0);
  waitpid(child, NULL, 0);
  CHECK(lj_lease_identity_judge(&state, NULL, NULL, (int32_t)child, out, len, 0, &err) == LJ_OK);
  CHECK(state == LJ_HOLDER_DEAD);
  lj_free(out);
  out = NULL;
  CHECK(lj_lease_identity(&out, &len, (int32_t)child, &err) == LJ_ENOTFOUND);
  CHECK(out == NULL && lj_error_code(err) == LJ_ENOTFOUND);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_owner_token(&out, &len, (int32_t)child, &err) == LJ_ENOTFOUND);
  lj_error_destroy(err);
  err = NULL;
  CHECK(lj_lease_identity(NULL, &len, 0, NULL) == LJ_EINVAL);
  CHECK(lj_lease_identity(&out, &len, -4, NULL) == LJ_EINVAL);
  CHECK(lj_lease_identity_judge(&state, NULL, NULL, 0, "", 0, 0, NULL) == LJ_EINVAL);
  CHECK(lj_lease_identity_judge(&state, NULL, NULL, 1, NULL, 3, 0, NULL) == LJ_EINVAL);
  CHECK(lj_lease_identity_judge(NULL, NULL, NULL, 1, "", 0, 0, NULL) == LJ_EINVAL);

  /* Machine id: 32 lowercase hex, or LJ_ENOTFOUND where there is none. */
  {
    int rc = lj_machine_id(&out, &len, &err);
    CHECK(rc == LJ_OK || rc == LJ_ENOTFOUND);
    if (rc == LJ_OK) {
      CHECK(len == 32 && strspn(out, "0123456789abcdef") == 32);
      lj_free(out);
    } else {
      CHECK(out == NULL);
      lj_error_destroy(err);
      err = NULL;
    }
    setenv("K_SERVICE", "svc", 1);
    CHECK(lj_machine_id(&out, &len, NULL) == LJ_ENOTFOUND);
    unsetenv("K_SERVICE");
    CHECK(lj_machine_id(NULL, &len, NULL) == LJ_EINVAL);
  }
}

/* The owner judge's why quotes the token as text: UTF-8 without NUL. */
static void test_owner_why_text(void) {
  lj_holder_state_t state = LJ_HOLDER_ALIVE;
  char *why = NULL;
  size_t len = 0;
  static const char want[] = "the owner 'a\xEF\xBF\xBD\xEF\xBF\xBD' is not a well-formed owner token";
  CHECK(lj_owner_judge(&state, &why, &len, "a\0\xff", 3, NULL, NULL) == LJ_OK);
  CHECK(state == LJ_HOLDER_UNKNOWN);
  CHECK(why != NULL && len == sizeof want - 1 && strlen(why) == len && memcmp(why, want, len) == 0);
  lj_free(why);
}

int main(void) {
  test_versions_and_errors();
  test_identity();
  test_owner_why_text();
  return CHECK_SUMMARY();
}
