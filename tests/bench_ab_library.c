/* Builds of libleasejudge.so that tests/bench_ab_test.sh hands leasejudge-bench-ab, to
 * prove that it fails when it should. Compiled twice:
 *  - bench_ab_other_plan.so: lj_step_plan_batch of the library LEASEJUDGE_AB_LIBRARY names,
 *    with the key LEASEJUDGE_AB_KEY decided otherwise (an end where that library leaves it,
 *    a leave where it ends or deletes it): a build that differs in one key;
 *  - bench_ab_no_plan.so (LEASEJUDGE_AB_NO_PLAN): a library with no lj_step_plan_batch. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "leasejudge.h"

#ifdef LEASEJUDGE_AB_NO_PLAN

int leasejudge_ab_no_plan(void);
int leasejudge_ab_no_plan(void) { return 0; }

#else

typedef int (*plan_batch_fn)(lj_step_action_t *, size_t, lj_step_plan_summary_t *, const char *, size_t, size_t,
                             const lj_step_entry_t *, size_t, const lj_step_plan_options_t *, lj_error_t **);

int lj_step_plan_batch(lj_step_action_t *out, size_t out_count, lj_step_plan_summary_t *summary, const char *buffer,
                       size_t buffer_len, size_t buffer_padding, const lj_step_entry_t *entries, size_t entry_count,
                       const lj_step_plan_options_t *opts, lj_error_t **err) {
  static plan_batch_fn plan = NULL;
  const char *key = getenv("LEASEJUDGE_AB_KEY");
  size_t i, key_len;
  int rc;
  if (plan == NULL) {
    const char *path = getenv("LEASEJUDGE_AB_LIBRARY");
    void *lib = path != NULL ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    void *sym = lib != NULL ? dlsym(lib, "lj_step_plan_batch") : NULL;
    if (sym == NULL) return LJ_EINVAL;
    memcpy(&plan, &sym, sizeof plan); /* ISO C has no cast from an object pointer to a function's */
  }
  rc = plan(out, out_count, summary, buffer, buffer_len, buffer_padding, entries, entry_count, opts, err);
  if (rc != LJ_OK || key == NULL) return rc;
  key_len = strlen(key);
  for (i = 0; i < entry_count; ++i) {
    if (entries[i].key_len != key_len || memcmp(buffer + entries[i].key_offset, key, key_len) != 0) continue;
    out[i].action = out[i].action == LJ_STEP_LEAVE ? LJ_STEP_END : LJ_STEP_LEAVE;
  }
  return rc;
}

#endif
