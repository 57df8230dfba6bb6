/*
 * What the Node-API addon's parts share: the per-environment state, errors, argument
 * conversions and results. Every native function
 * checks its arguments (a TypeError, code LJ_EINVAL, for a wrong type), calls the C
 * ABI and turns an LJ_E* code into a thrown Error whose `code` is the code's name.
 * A JavaScript callback that throws stops the C call (the callback returns non-zero,
 * the call LJ_EUSER) and its exception is the one the caller sees.
 */
#ifndef LEASEJUDGE_NODE_NAPI_UTIL_H
#define LEASEJUDGE_NODE_NAPI_UTIL_H

#include <node_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leasejudge.h"

/* The largest text a lock body, a parse or a gcloud answer may be: a lock body is a
 * few hundred bytes, and a text past this is refused before it is read. */
#define LJN_TEXT_MAX ((size_t)16 << 20)

/* The per-environment state: where judging and parsing leave their numbers (an
 * Int32Array the JavaScript side reads), kept alive by a reference. */
typedef struct ljn_module {
  int32_t* numbers;
  napi_ref numbers_ref;
} ljn_module;
enum { LJN_NUMBERS = 4 }; /* kind, reason, manual removal, spare */

ljn_module* ljn_module_of(napi_env env);
/* The instance data's finalizer. */
void ljn_module_free(napi_env env, void* data, void* hint);

/* --- errors: each returns NULL, for `return ljn_throw_...(...)` -------------------- */

/* A TypeError, code LJ_EINVAL. */
napi_value ljn_throw_type(napi_env env, const char* message);
/* A RangeError, code LJ_EINVAL. */
napi_value ljn_throw_range(napi_env env, const char* message);
/* An Error for rc (its code the LJ_E* name, its message err's or lj_strerror's);
 * destroys err. With an exception already pending (a callback threw), that one
 * stays and nothing else is thrown. */
napi_value ljn_throw_code(napi_env env, int rc, lj_error_t* err);
/* The same Error, made and not thrown (to reject a promise with); destroys err. NULL
 * when Node-API could not make it. */
napi_value ljn_error(napi_env env, int rc, lj_error_t* err);
/* A Node-API call failed: keep a pending exception, else throw what it said. */
napi_value ljn_napi_failed(napi_env env);
/* "LJ_EINVAL", ...; "LJ_E?" for a number that names none. */
const char* ljn_code_name(int rc);

#define LJN_CALL(env, call)                             \
  do {                                                  \
    if ((call) != napi_ok) return ljn_napi_failed(env); \
  } while (0)
/* The same in a function returning int: -1 after the exception. */
#define LJN_CHECK(env, call) \
  do {                       \
    if ((call) != napi_ok) { \
      ljn_napi_failed(env);  \
      return -1;             \
    }                        \
  } while (0)

/* --- arguments -------------------------------------------------------------------- */

/* Bytes of a string (as UTF-8; a lone surrogate becomes U+FFFD), a Buffer or a
 * Uint8Array (borrowed, not copied). Small strings sit in stack; release frees. */
typedef struct ljn_text {
  const char* data;
  size_t len;
  char* heap;
  char stack[2048];
} ljn_text;
/* 0, or -1 with a TypeError (not text; buffers only when bytes_too) or a RangeError
 * (longer than max bytes) thrown. */
int ljn_text_of(napi_env env, napi_value v, const char* what, size_t max, bool bytes_too, ljn_text* out);
void ljn_text_release(ljn_text* t);
/* An empty text that release may be called on. */
void ljn_text_init(ljn_text* t);
void ljn_texts_release(ljn_text* texts, int n);

/* A number argument: 0, or -1 with a TypeError thrown. */
int ljn_number_of(napi_env env, napi_value v, const char* what, double* out);
/* A whole number within int's range. */
int ljn_int_of(napi_env env, napi_value v, const char* what, int* out);
/* An integral number of milliseconds within int64 (times, leases). */
int ljn_int64_of(napi_env env, napi_value v, const char* what, int64_t* out);
/* A bigint within int64 (nanosecond times). */
int ljn_bigint_of(napi_env env, napi_value v, const char* what, int64_t* out);
/* A revision: a number that is a non-negative safe integer, or a bigint in uint64. */
int ljn_revision_of(napi_env env, napi_value v, const char* what, uint64_t* out);
/* The data of an external that carries tag (a handle this addon made); NULL after a
 * TypeError with message for anything else. */
void* ljn_external_of(napi_env env, napi_value v, const napi_type_tag* tag, const char* message);
/* A function argument (TypeError otherwise). */
int ljn_function_of(napi_env env, napi_value v, const char* what);
napi_valuetype ljn_type(napi_env env, napi_value v);

/* --- results ---------------------------------------------------------------------- */

/* A JS string of UTF-8 bytes. NULL after a thrown exception. */
napi_value ljn_string(napi_env env, const char* s, size_t len);
/* A JS string of WTF-8 bytes (UTF-8 that may hold a lone surrogate, as the library
 * keeps strings read from JSON): each code unit as it was. */
napi_value ljn_wtf8_string(napi_env env, const char* s, size_t len);
/* A revision as a number; a RangeError beyond 2^53. */
napi_value ljn_revision(napi_env env, uint64_t revision);
/* result when rc is LJ_OK; else the Error for rc thrown (err destroyed) and NULL. */
napi_value ljn_result(napi_env env, int rc, lj_error_t* err, napi_value result);
/* Set obj[name] = value; -1 after a thrown exception. */
int ljn_set(napi_env env, napi_value obj, const char* name, napi_value value);

/* The native functions of a part, defined on exports; -1 after a thrown exception. */
typedef struct ljn_function {
  const char* name;
  napi_callback call;
} ljn_function;
int ljn_define(napi_env env, napi_value exports, const ljn_function* fns, size_t count);

#endif
