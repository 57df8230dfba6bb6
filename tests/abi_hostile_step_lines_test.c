/* Every exported symbol of the C ABI's step lines part with hostile arguments (NULL, empty,
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

static int stop_batch(const char *b, size_t n, size_t pad, const lj_step_entry_t *e, size_t c, void *p) {
  (void)b; (void)n; (void)pad; (void)e; (void)c; (void)p;
  return 1;
}

static int each_line(const char *k, size_t kl, uint64_t r, const char *v, size_t vl, const char *m, void *p) {
  (void)k; (void)kl; (void)r; (void)v; (void)vl; (void)m;
  ++*(int *)p;
  return 0;
}

static int write_none(const char *d, size_t n, void *p) {
  (void)d; (void)n; (void)p;
  return 1;
}

static int scan_bad(lj_store_sink_t *sink, const char *prefix, size_t n, void *p) {
  (void)prefix; (void)n; (void)p;
  /* Hostile entries are each refused; a key outside the prefix too. */
  if (lj_store_sink_entry(sink, NULL, 5, S("v"), 1) != LJ_EINVAL) return LJ_EINTERNAL;
  if (lj_store_sink_entry(sink, S("n1.k"), NULL, 5, 1) != LJ_EINVAL) return LJ_EINTERNAL;
  if (lj_store_sink_entry(sink, S("n1.k"), S("v"), 0) != LJ_EINVAL) return LJ_EINTERNAL;
  if (lj_store_sink_entry(sink, S("zz.k"), S("v"), 1) != LJ_EINVAL) return LJ_EINTERNAL;
  if (lj_store_sink_entry(NULL, S("n1.k"), S("v"), 1) != LJ_EINVAL) return LJ_EINTERNAL;
  return lj_store_sink_entry(sink, S("n1.k\0x"), S("v\xff"), 1); /* NUL and junk: taken as bytes */
}

static int no_keys(lj_store_sink_t *s, void *p) { (void)s; (void)p; return LJ_OK; }

static void case_bulk_and_lines(void) {
  lj_error_t *err = NULL;
  char *out = NULL, *boot = NULL;
  size_t len = 0, boot_len = 0;
  int32_t pid = 0;
  int64_t start = 0;
  int kept = -1, lines = 0;
  lj_store_t *store = NULL;
  lj_store_callbacks_t cb = LJ_STORE_CALLBACKS_INIT;
  lj_step_plan_options_t po = LJ_STEP_PLAN_OPTIONS_INIT;
  lj_step_lines_plan_t *plan = NULL;
  lj_step_plan_summary_t sum;
  char *junk = big_junk(BIG);

  /* lj_json_quote: any bytes give one JSON string; NULL out or a NULL with a length is refused. */
  CHECK(lj_json_quote(&out, &len, junk, BIG, NULL) == LJ_OK && text(out, len) && out[0] == '"');
  lj_free(out);
  CHECK(lj_json_quote(&out, &len, S("a\0b\xff"), NULL) == LJ_OK && text(out, len));
  lj_free(out);
  CHECK(lj_json_quote(&out, &len, NULL, 0, NULL) == LJ_OK && len == 2);
  lj_free(out);
  REFUSED(lj_json_quote(NULL, &len, S("x"), &err), LJ_EINVAL);
  REFUSED(lj_json_quote(&out, &len, NULL, 4, &err), LJ_EINVAL);

  /* lj_owner_token_parse: what is no token is LJ_EPARSE, whatever its bytes. */
  CHECK(lj_owner_token_parse(&boot, &boot_len, &pid, &start, S("no-boot-id.42.z"), NULL) == LJ_OK);
  CHECK(text(boot, boot_len) && strcmp(boot, "no-boot-id") == 0 && pid == 42 && start == 35);
  lj_free(boot);
  CHECK(lj_owner_token_parse(NULL, NULL, NULL, NULL, S("no-boot-id.42.z"), NULL) == LJ_OK);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, S("no-boot-id.0.z"), &err), LJ_EPARSE);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, S("no-boot-id.4\0.z"), &err), LJ_EPARSE);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, junk, BIG, &err), LJ_EPARSE);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, NULL, 0, &err), LJ_EPARSE);
  REFUSED(lj_owner_token_parse(&boot, &boot_len, &pid, &start, NULL, 3, &err), LJ_EINVAL);
  CHECK(boot == NULL);

  /* lj_store_scan and lj_store_sink_entry. */
  CHECK(lj_store_memory_open(&store, NULL) == LJ_OK);
  REFUSED(lj_store_scan(NULL, S("n1."), stop_batch, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_scan(store, S("n1."), NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_store_scan(store, NULL, 9, stop_batch, NULL, &err), LJ_EINVAL);
  CHECK(lj_store_scan(store, junk, BIG, stop_batch, NULL, NULL) == LJ_OK); /* a prefix no key has */
  lj_store_destroy(store);
  cb.keys = no_keys;
  cb.get = no_get;
  cb.update = no_update;
  cb.create = no_create;
  cb.remove = no_remove;
  cb.scan = scan_bad;
  CHECK(lj_store_from_callbacks(&store, &cb, NULL, NULL) == LJ_OK);
  REFUSED(lj_store_scan(store, S("n1."), stop_batch, NULL, &err), LJ_EUSER); /* the one good entry, stopped */
  lj_store_destroy(store);
  REFUSED(lj_store_sink_entry(NULL, S("k"), S("v"), 1), LJ_EINVAL);

  /* lj_step_lines_entry and lj_step_lines_read. */
  CHECK(lj_step_lines_entry(&out, &len, &kept, S("n1.k"), 7, junk, 4096, NULL) == LJ_OK && text(out, len) && kept == 0);
  lj_free(out);
  CHECK(lj_step_lines_entry(&out, &len, NULL, S("n1.\0k"), UINT64_MAX, NULL, 0, NULL) == LJ_OK && text(out, len));
  lj_free(out);
  REFUSED(lj_step_lines_entry(NULL, &len, &kept, S("k"), 1, S("v"), &err), LJ_EINVAL);
  REFUSED(lj_step_lines_entry(&out, &len, &kept, NULL, 2, 1, S("v"), &err), LJ_EINVAL);
  REFUSED(lj_step_lines_entry(&out, &len, &kept, S("k"), 1, NULL, 2, &err), LJ_EINVAL);
  CHECK(lj_step_lines_read(junk, BIG, each_line, &lines, NULL) == LJ_OK && lines > 0); /* every line malformed */
  lines = 0;
  CHECK(lj_step_lines_read(S("\n  \n{\"key\":\"a\"}\0\n"), each_line, &lines, NULL) == LJ_OK && lines == 1);
  CHECK(lj_step_lines_read(NULL, 0, each_line, &lines, NULL) == LJ_OK);
  REFUSED(lj_step_lines_read(NULL, 2, each_line, &lines, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_read(S("x"), NULL, &lines, &err), LJ_EINVAL);

  /* The lines plan fed in pieces, and streamed between descriptors. */
  po.rules.node = "n1";
  po.rules.node_len = 2;
  REFUSED(lj_step_lines_plan_create(NULL, &po, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_create(&plan, NULL, &err), LJ_EINVAL);
  po.version = LJ_STEP_PLAN_OPTIONS_VERSION + 1;
  REFUSED(lj_step_lines_plan_create(&plan, &po, &err), LJ_EVERSION);
  po.version = LJ_STEP_PLAN_OPTIONS_VERSION;
  CHECK(lj_step_lines_plan_create(&plan, &po, NULL) == LJ_OK);
  REFUSED(lj_step_lines_plan_feed(NULL, S("x"), write_none, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_feed(plan, S("x"), NULL, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_feed(plan, NULL, 3, write_none, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_feed(plan, junk, BIG, write_none, NULL, &err), LJ_EUSER);
  REFUSED(lj_step_lines_plan_finish(&sum, NULL, write_none, NULL, &err), LJ_EINVAL);
  REFUSED(lj_step_lines_plan_finish(&sum, plan, NULL, NULL, &err), LJ_EINVAL);
  lj_step_lines_plan_destroy(plan);
  lj_step_lines_plan_destroy(NULL);
  REFUSED(lj_step_plan_lines_fd(&sum, -1, 1, &po, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_lines_fd(&sum, 0, -5, &po, &err), LJ_EINVAL);
  REFUSED(lj_step_plan_lines_fd(&sum, 0, 1, NULL, &err), LJ_EINVAL);
  free(junk);
}

static const struct symbol_case cases[] = {
    {"lj_json_quote", case_bulk_and_lines},
    {"lj_owner_token_parse", case_bulk_and_lines},
    {"lj_store_scan", case_bulk_and_lines},
    {"lj_store_sink_entry", case_bulk_and_lines},
    {"lj_step_lines_entry", case_bulk_and_lines},
    {"lj_step_lines_read", case_bulk_and_lines},
    {"lj_step_lines_plan_create", case_bulk_and_lines},
    {"lj_step_lines_plan_feed", case_bulk_and_lines},
    {"lj_step_lines_plan_finish", case_bulk_and_lines},
    {"lj_step_lines_plan_destroy", case_bulk_and_lines},
    {"lj_step_plan_lines_fd", case_bulk_and_lines},
};

int main(void) { return hostile_run(cases, sizeof cases / sizeof cases[0]); }
