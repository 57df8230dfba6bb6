/*
 * The addon's module: its registration, the library version check, and each part's
 * functions defined on its exports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hold.h"
#include "lock.h"
#include "napi_util.h"
#include "step.h"
#include "store.h"

static napi_value init(napi_env env, napi_value exports) {
  /* The library must be of the ABI this addon was built for. */
  unsigned runtime = lj_version_number();
  if (runtime / 10000 != LJ_VERSION_MAJOR || runtime < LJ_VERSION_NUMBER) {
    char message[160];
    snprintf(message, sizeof message, "libleasejudge %s is not of the ABI this addon was built for (%d.%d)",
             lj_version(), LJ_VERSION_MAJOR, LJ_VERSION_MINOR);
    napi_throw_error(env, "LJ_EVERSION", message);
    return NULL;
  }
  ljn_module* m = (ljn_module*)calloc(1, sizeof *m);
  if (m == NULL) return ljn_throw_code(env, LJ_ENOMEM, NULL);
  if (napi_set_instance_data(env, m, ljn_module_free, NULL) != napi_ok) {
    free(m);
    return ljn_napi_failed(env);
  }
  napi_value buffer, numbers, version;
  void* data = NULL;
  LJN_CALL(env, napi_create_arraybuffer(env, LJN_NUMBERS * sizeof(int32_t), &data, &buffer));
  LJN_CALL(env, napi_create_reference(env, buffer, 1, &m->numbers_ref));
  m->numbers = (int32_t*)data;
  LJN_CALL(env, napi_create_typedarray(env, napi_int32_array, LJN_NUMBERS, buffer, 0, &numbers));
  LJN_CALL(env, napi_set_named_property(env, exports, "numbers", numbers));
  if (ljn_set(env, exports, "version", ljn_string(env, lj_version(), strlen(lj_version()))) != 0) return NULL;
  LJN_CALL(env, napi_create_uint32(env, runtime, &version));
  LJN_CALL(env, napi_set_named_property(env, exports, "versionNumber", version));
  napi_value lease, skew, as_taken;
  LJN_CALL(env, napi_create_double(env, LJ_LOCK_PROCESS_LEASE_MS, &lease));
  LJN_CALL(env, napi_create_double(env, LJ_LOCK_LEASE_SKEW_MS, &skew));
  LJN_CALL(env, napi_create_double(env, LJ_LOCK_LEASE_AS_TAKEN, &as_taken));
  LJN_CALL(env, napi_set_named_property(env, exports, "lockLeaseAsTaken", as_taken));
  LJN_CALL(env, napi_set_named_property(env, exports, "processLeaseMs", lease));
  LJN_CALL(env, napi_set_named_property(env, exports, "leaseSkewMs", skew));
  if (ljn_lock_init(env, exports) != 0 || ljn_store_init(env, exports) != 0 || ljn_step_init(env, exports) != 0 ||
      ljn_hold_init(env, exports) != 0)
    return NULL;
  return exports;
}

NAPI_MODULE(leasejudge, init)
