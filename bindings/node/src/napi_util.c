/*
 * What the addon's parts share: errors, argument conversions and results.
 */
#include "napi_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- errors ---------------------------------------------------------------------------- */

const char* ljn_code_name(int rc) {
  switch (rc) {
    case LJ_EINVAL:
      return "LJ_EINVAL";
    case LJ_ENOMEM:
      return "LJ_ENOMEM";
    case LJ_EPARSE:
      return "LJ_EPARSE";
    case LJ_ECHANGED:
      return "LJ_ECHANGED";
    case LJ_ENOTFOUND:
      return "LJ_ENOTFOUND";
    case LJ_EIO:
      return "LJ_EIO";
    case LJ_EVERSION:
      return "LJ_EVERSION";
    case LJ_EUSER:
      return "LJ_EUSER";
    case LJ_ETIMEOUT:
      return "LJ_ETIMEOUT";
    case LJ_EUNSUPPORTED:
      return "LJ_EUNSUPPORTED";
    case LJ_EEXISTS:
      return "LJ_EEXISTS";
    case LJ_EREFUSED:
      return "LJ_EREFUSED";
    case LJ_ESTORE:
      return "LJ_ESTORE";
    case LJ_EBUSY:
      return "LJ_EBUSY";
    case LJ_EINTERNAL:
      return "LJ_EINTERNAL";
    case LJ_EUNKNOWN:
      return "LJ_EUNKNOWN";
    default:
      return "LJ_E?";
  }
}

static bool pending(napi_env env) {
  bool is = false;
  return napi_is_exception_pending(env, &is) == napi_ok && is;
}

napi_value ljn_throw_type(napi_env env, const char* message) {
  if (!pending(env)) napi_throw_type_error(env, "LJ_EINVAL", message);
  return NULL;
}

napi_value ljn_throw_range(napi_env env, const char* message) {
  if (!pending(env)) napi_throw_range_error(env, "LJ_EINVAL", message);
  return NULL;
}

napi_value ljn_error(napi_env env, int rc, lj_error_t* err) {
  const char* message = err != NULL ? lj_error_message(err) : lj_strerror(rc);
  napi_value code, text, error = NULL;
  if (napi_create_string_utf8(env, ljn_code_name(rc), NAPI_AUTO_LENGTH, &code) != napi_ok ||
      napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text) != napi_ok ||
      napi_create_error(env, code, text, &error) != napi_ok)
    error = NULL;
  lj_error_destroy(err);
  return error;
}

napi_value ljn_throw_code(napi_env env, int rc, lj_error_t* err) {
  if (pending(env)) {
    lj_error_destroy(err);
    return NULL;
  }
  napi_value error = ljn_error(env, rc, err);
  if (error != NULL) {
    napi_throw(env, error);
  } else {
    napi_throw_error(env, ljn_code_name(rc), lj_strerror(rc));
  }
  return NULL;
}

napi_value ljn_napi_failed(napi_env env) {
  if (pending(env)) return NULL;
  const napi_extended_error_info* info = NULL;
  const char* message = "a Node-API call failed";
  if (napi_get_last_error_info(env, &info) == napi_ok && info != NULL && info->error_message != NULL)
    message = info->error_message;
  napi_throw_error(env, "LJ_EINTERNAL", message);
  return NULL;
}

/* --- arguments ------------------------------------------------------------------------ */

napi_valuetype ljn_type(napi_env env, napi_value v) {
  napi_valuetype type = napi_undefined;
  if (v == NULL || napi_typeof(env, v, &type) != napi_ok) return napi_undefined;
  return type;
}

void* ljn_external_of(napi_env env, napi_value v, const napi_type_tag* tag, const char* message) {
  bool tagged = false;
  void* data = NULL;
  if (ljn_type(env, v) != napi_external || napi_check_object_type_tag(env, v, tag, &tagged) != napi_ok || !tagged ||
      napi_get_value_external(env, v, &data) != napi_ok) {
    ljn_throw_type(env, message);
    return NULL;
  }
  return data;
}

static int type_error(napi_env env, const char* what, const char* must) {
  char message[160];
  snprintf(message, sizeof message, "%s must be %s", what, must);
  ljn_throw_type(env, message);
  return -1;
}

static int too_long(napi_env env, const char* what, size_t max) {
  char message[160];
  snprintf(message, sizeof message, "%s is longer than %zu MiB", what, max >> 20);
  ljn_throw_range(env, message);
  return -1;
}

int ljn_text_of(napi_env env, napi_value v, const char* what, size_t max, bool bytes_too, ljn_text* out) {
  ljn_text_init(out);
  /* A string is tried first (the judge's case): its own call says when it is none.
   * Written whole characters at a time: with room for one more (4 bytes) left over,
   * the whole string was written. */
  napi_status st =
      v == NULL ? napi_string_expected : napi_get_value_string_utf8(env, v, out->stack, sizeof out->stack, &out->len);
  if (st == napi_ok && out->len + 4 < sizeof out->stack - 1) return 0;
  if (st != napi_ok && st != napi_string_expected) {
    ljn_napi_failed(env);
    return -1;
  }
  napi_valuetype type = st == napi_ok ? napi_string : ljn_type(env, v);
  if (type == napi_string) {
    size_t bytes = 0;
    LJN_CHECK(env, napi_get_value_string_utf8(env, v, NULL, 0, &bytes));
    if (bytes > max) return too_long(env, what, max);
    out->heap = (char*)malloc(bytes + 1);
    if (out->heap == NULL) {
      ljn_throw_code(env, LJ_ENOMEM, NULL);
      return -1;
    }
    LJN_CHECK(env, napi_get_value_string_utf8(env, v, out->heap, bytes + 1, &out->len));
    out->data = out->heap;
    return 0;
  }
  if (bytes_too && type == napi_object) {
    /* A Buffer is a Uint8Array; napi_is_buffer would take any view. */
    bool is = false;
    void* data = NULL;
    size_t len = 0, offset = 0;
    napi_typedarray_type kind = napi_int8_array;
    napi_value ab;
    LJN_CHECK(env, napi_is_typedarray(env, v, &is));
    if (is) LJN_CHECK(env, napi_get_typedarray_info(env, v, &kind, &len, &data, &ab, &offset));
    if (!is || kind != napi_uint8_array) return type_error(env, what, "a string, a Buffer or a Uint8Array");
    if (len > max) return too_long(env, what, max);
    out->data = len == 0 ? "" : (const char*)data;
    out->len = len;
    return 0;
  }
  return type_error(env, what, bytes_too ? "a string, a Buffer or a Uint8Array" : "a string");
}

void ljn_text_init(ljn_text* t) {
  t->data = t->stack;
  t->len = 0;
  t->heap = NULL;
}

void ljn_text_release(ljn_text* t) {
  free(t->heap);
  t->heap = NULL;
}

void ljn_texts_release(ljn_text* texts, int n) {
  for (int k = 0; k < n; k++) ljn_text_release(&texts[k]);
}

int ljn_number_of(napi_env env, napi_value v, const char* what, double* out) {
  napi_status st = v == NULL ? napi_number_expected : napi_get_value_double(env, v, out);
  if (st == napi_number_expected) return type_error(env, what, "a number");
  LJN_CHECK(env, st);
  return 0;
}

int ljn_int_of(napi_env env, napi_value v, const char* what, int* out) {
  double d = 0;
  if (ljn_number_of(env, v, what, &d) != 0) return -1;
  if (!(d >= -2147483648.0 && d <= 2147483647.0) || d != floor(d)) {
    char message[160];
    snprintf(message, sizeof message, "%s must be a whole number", what);
    ljn_throw_range(env, message);
    return -1;
  }
  *out = (int)d;
  return 0;
}

int ljn_int64_of(napi_env env, napi_value v, const char* what, int64_t* out) {
  double d = 0;
  if (ljn_number_of(env, v, what, &d) != 0) return -1;
  /* Within +-2^63 and a whole number: exactly an int64. */
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d)) {
    char message[160];
    snprintf(message, sizeof message, "%s must be a whole number of milliseconds", what);
    ljn_throw_range(env, message);
    return -1;
  }
  *out = (int64_t)d;
  return 0;
}

int ljn_bigint_of(napi_env env, napi_value v, const char* what, int64_t* out) {
  bool lossless = false;
  if (ljn_type(env, v) != napi_bigint) return type_error(env, what, "a bigint");
  LJN_CHECK(env, napi_get_value_bigint_int64(env, v, out, &lossless));
  if (!lossless) {
    char message[160];
    snprintf(message, sizeof message, "%s is outside the 64-bit range", what);
    ljn_throw_range(env, message);
    return -1;
  }
  return 0;
}

int ljn_revision_of(napi_env env, napi_value v, const char* what, uint64_t* out) {
  napi_valuetype type = ljn_type(env, v);
  char message[160];
  if (type == napi_bigint) {
    bool lossless = false;
    LJN_CHECK(env, napi_get_value_bigint_uint64(env, v, out, &lossless));
    if (lossless) return 0;
  } else if (type == napi_number) {
    double d = 0;
    LJN_CHECK(env, napi_get_value_double(env, v, &d));
    if (d >= 0 && d <= 9007199254740991.0 && d == floor(d)) {
      *out = (uint64_t)d;
      return 0;
    }
  } else {
    return type_error(env, what, "a number or a bigint");
  }
  snprintf(message, sizeof message, "%s must be a non-negative whole number", what);
  ljn_throw_range(env, message);
  return -1;
}

int ljn_function_of(napi_env env, napi_value v, const char* what) {
  return ljn_type(env, v) == napi_function ? 0 : type_error(env, what, "a function");
}

/* --- results ------------------------------------------------------------------------ */

napi_value ljn_string(napi_env env, const char* s, size_t len) {
  napi_value v;
  LJN_CALL(env, napi_create_string_utf8(env, len == 0 ? "" : s, len, &v));
  return v;
}

/* One code point of WTF-8 at s[*i] (advancing *i), or U+FFFD for a byte that starts
 * none; a surrogate (ED A0..BF xx) is taken as the code unit it encodes. */
static uint32_t wtf8_next(const unsigned char* s, size_t len, size_t* i) {
  unsigned char c = s[*i];
  size_t need;
  uint32_t cp;
  if (c < 0x80) {
    *i += 1;
    return c;
  }
  if ((c & 0xE0) == 0xC0) {
    need = 1;
    cp = c & 0x1Fu;
  } else if ((c & 0xF0) == 0xE0) {
    need = 2;
    cp = c & 0x0Fu;
  } else if ((c & 0xF8) == 0xF0) {
    need = 3;
    cp = c & 0x07u;
  } else {
    *i += 1;
    return 0xFFFD;
  }
  if (len - *i <= need) {
    *i += 1;
    return 0xFFFD;
  }
  for (size_t k = 1; k <= need; k++) {
    if ((s[*i + k] & 0xC0) != 0x80) {
      *i += 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (s[*i + k] & 0x3Fu);
  }
  *i += need + 1;
  return cp;
}

napi_value ljn_wtf8_string(napi_env env, const char* s, size_t len) {
  char16_t stack[256];
  char16_t* units = len <= 128 ? stack : (char16_t*)malloc(len * sizeof(char16_t) + 1);
  size_t n = 0, i = 0;
  napi_value v = NULL;
  if (units == NULL) return ljn_throw_code(env, LJ_ENOMEM, NULL);
  while (i < len) {
    uint32_t cp = wtf8_next((const unsigned char*)s, len, &i);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      units[n++] = (char16_t)(0xD800 + (cp >> 10));
      units[n++] = (char16_t)(0xDC00 + (cp & 0x3FF));
    } else {
      units[n++] = (char16_t)cp;
    }
  }
  if (napi_create_string_utf16(env, units, n, &v) != napi_ok) v = ljn_napi_failed(env);
  if (units != stack) free(units);
  return v;
}

napi_value ljn_revision(napi_env env, uint64_t revision) {
  napi_value v;
  if (revision > UINT64_C(9007199254740991)) return ljn_throw_range(env, "a revision beyond 2^53 is no exact number");
  LJN_CALL(env, napi_create_double(env, (double)revision, &v));
  return v;
}

napi_value ljn_result(napi_env env, int rc, lj_error_t* err, napi_value result) {
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  return result;
}

int ljn_set(napi_env env, napi_value obj, const char* name, napi_value value) {
  if (value == NULL) return -1;
  LJN_CHECK(env, napi_set_named_property(env, obj, name, value));
  return 0;
}

int ljn_define(napi_env env, napi_value exports, const ljn_function* fns, size_t count) {
  for (size_t i = 0; i < count; i++) {
    napi_value fn;
    LJN_CHECK(env, napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].call, NULL, &fn));
    LJN_CHECK(env, napi_set_named_property(env, exports, fns[i].name, fn));
  }
  return 0;
}

/* --- the per-environment state ---------------------------------------------------------- */

void ljn_module_free(napi_env env, void* data, void* hint) {
  ljn_module* m = (ljn_module*)data;
  (void)hint;
  if (m->numbers_ref != NULL) napi_delete_reference(env, m->numbers_ref);
  free(m);
}

ljn_module* ljn_module_of(napi_env env) {
  void* data = NULL;
  if (napi_get_instance_data(env, &data) != napi_ok) return NULL;
  return (ljn_module*)data;
}
