/* Every exported symbol of the C ABI's nats part with hostile arguments (NULL, empty,
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

static void case_nats(void) {
  lj_error_t *err = NULL;
  lj_nats_options_t o = LJ_NATS_OPTIONS_INIT;
  lj_store_t *store = (lj_store_t *)1;

  REFUSED(lj_nats_options_init(NULL, 1), LJ_EINVAL);
  REFUSED(lj_nats_options_init(&o, 0), LJ_EVERSION);
  REFUSED(lj_nats_options_init(&o, LJ_NATS_OPTIONS_VERSION + 1), LJ_EVERSION);
  CHECK(lj_nats_options_init(&o, LJ_NATS_OPTIONS_VERSION) == LJ_OK && o.connect_timeout_ms == 2000);

  REFUSED(lj_nats_store_open(NULL, &o, &err), LJ_EINVAL);
  REFUSED(lj_nats_store_open(&store, NULL, &err), LJ_EINVAL);
  CHECK(store == NULL);
  o.version = 0;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EVERSION);
  o.version = LJ_NATS_OPTIONS_VERSION + 1;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EVERSION);
  o.version = LJ_NATS_OPTIONS_VERSION;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL); /* no bucket */
  o.bucket = "a b";
  o.bucket_len = 3;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.bucket = "b\0";
  o.bucket_len = 2;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.bucket = NULL;
  o.bucket_len = 2;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.bucket = "b";
  o.bucket_len = 1;
  o.urls = "nats://127.0.0.1:1\0";
  o.urls_len = 19;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.urls = NULL;
  o.urls_len = 4;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.urls = "nats://127.0.0.1:1";
  o.urls_len = strlen(o.urls);
  o.connect_timeout_ms = -1;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.connect_timeout_ms = 200;
  o.request_timeout_ms = INT64_MIN;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.request_timeout_ms = 0;
  o.list_timeout_ms = INT64_MAX;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL); /* beyond a day */
  o.list_timeout_ms = 0;
  o.reconnect_wait_ms = INT64_MAX;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.reconnect_wait_ms = 0;
  {
    lj_nats_server_t info;
    lj_store_t *mem = NULL;
    REFUSED(lj_nats_store_server(NULL, &info, &err), LJ_EINVAL);
    REFUSED(lj_nats_store_server(NULL, NULL, &err), LJ_EINVAL);
    CHECK(lj_store_memory_open(&mem, NULL) == LJ_OK);
    REFUSED(lj_nats_store_server(mem, NULL, &err), LJ_EINVAL);
    REFUSED(lj_nats_store_server(mem, &info, &err), LJ_EINVAL); /* not a NATS store */
    lj_store_destroy(mem);
  }
  o.create_bucket = 1;
  o.history = 65;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.history = -1;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.history = 1;
  o.replicas = 6;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.replicas = -3;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.replicas = 1;
  o.credentials_file = NULL;
  o.credentials_file_len = 3;
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_EINVAL);
  o.credentials_file_len = 0;
  /* Nothing listens on port 1: the store failed, said so. */
  REFUSED(lj_nats_store_open(&store, &o, &err), LJ_ESTORE);
  CHECK(store == NULL);
}

static const struct symbol_case cases[] = {
    {"lj_nats_options_init", case_nats},
    {"lj_nats_store_open", case_nats},
    {"lj_nats_store_server", case_nats},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
