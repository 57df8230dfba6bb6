/* Every exported symbol of the C ABI's store url part with hostile arguments (NULL, empty,
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

static const struct symbol_case cases[] = {
    {"lj_store_open_url", case_store_url},
    {"lj_store_url_options_init", case_store_url},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
