/*
 * The addon's store part: stores (memory, file, NATS) as externals and their
 * operations. See store.h.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>

/* The tag that tells a store's external from another (a lock's has its own, lock.c). */
static const napi_type_tag store_tag = {0x6c6a2d73746f7265ULL, 0x6e6f64652d616464ULL};

void ljn_store_settle(ljn_store* s) {
  if (s->store != NULL && s->closed && s->locks == 0) {
    lj_store_destroy(s->store);
    s->store = NULL;
  }
  if (!s->handle && s->locks == 0) free(s);
}

static void store_collected(napi_env env, void* data, void* hint) {
  ljn_store* s = (ljn_store*)data;
  (void)env;
  (void)hint;
  s->handle = false;
  s->closed = true;
  ljn_store_settle(s);
}

static napi_value wrap_store(napi_env env, int rc, lj_store_t* store, lj_error_t* err) {
  napi_value ext;
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  ljn_store* s = (ljn_store*)calloc(1, sizeof *s);
  if (s == NULL) {
    lj_store_destroy(store);
    return ljn_throw_code(env, LJ_ENOMEM, NULL);
  }
  s->store = store;
  s->handle = true;
  if (napi_create_external(env, s, store_collected, NULL, &ext) != napi_ok) {
    s->handle = false;
    s->closed = true;
    ljn_store_settle(s);
    return ljn_napi_failed(env);
  }
  LJN_CALL(env, napi_type_tag_object(env, ext, &store_tag));
  return ext;
}

ljn_store* ljn_store_of(napi_env env, napi_value v) {
  ljn_store* s = (ljn_store*)ljn_external_of(env, v, &store_tag, "store must be a Store");
  if (s == NULL) return NULL;
  if (s->closed) {
    napi_throw_error(env, "LJ_EINVAL", "the store is closed");
    return NULL;
  }
  return s;
}

/* --- opening ------------------------------------------------------------------------------ */

static napi_value store_memory(napi_env env, napi_callback_info info) {
  lj_store_t* store = NULL;
  lj_error_t* err = NULL;
  (void)info;
  int rc = lj_store_memory_open(&store, &err);
  return wrap_store(env, rc, store, err);
}

static napi_value store_file(napi_env env, napi_callback_info info) {
  napi_value arg;
  size_t argc = 1;
  ljn_text dir;
  lj_store_t* store = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  if (ljn_text_of(env, argc < 1 ? NULL : arg, "dir", LJN_TEXT_MAX, false, &dir) != 0) return NULL;
  int rc = lj_store_file_open(&store, dir.data, dir.len, &err);
  ljn_text_release(&dir);
  return wrap_store(env, rc, store, err);
}

/* The NATS options' strings, in the order of the struct's (pointer, length) pairs. */
static const char* const nats_texts[] = {"urls",       "bucket", "credentialsFile", "tlsCaFile", "tlsCertFile",
                                         "tlsKeyFile", "name"};
enum { NATS_TEXTS = sizeof nats_texts / sizeof nats_texts[0] };

static int nats_text(napi_env env, napi_value opts, int k, ljn_text* t, const char** ptr, size_t* len) {
  napi_value v;
  LJN_CHECK(env, napi_get_named_property(env, opts, nats_texts[k], &v));
  if (ljn_type(env, v) == napi_undefined) return 0;
  if (ljn_text_of(env, v, nats_texts[k], LJN_TEXT_MAX, false, t) != 0) return -1;
  *ptr = t->data;
  *len = t->len;
  return 0;
}

/* An optional number option (a whole number in int64) into *out. */
static int nats_number(napi_env env, napi_value opts, const char* name, int64_t* out) {
  napi_value v;
  LJN_CHECK(env, napi_get_named_property(env, opts, name, &v));
  napi_valuetype type = ljn_type(env, v);
  if (type == napi_undefined) return 0;
  if (type == napi_boolean) {
    bool b = false;
    LJN_CHECK(env, napi_get_value_bool(env, v, &b));
    *out = b ? 1 : 0;
    return 0;
  }
  return ljn_int64_of(env, v, name, out);
}

static int nats_options_of(napi_env env, napi_value opts, lj_nats_options_t* o, ljn_text texts[NATS_TEXTS]) {
  const char** ptrs[NATS_TEXTS] = {
      &o->urls, &o->bucket, &o->credentials_file, &o->tls_ca_file, &o->tls_cert_file, &o->tls_key_file, &o->name};
  size_t* lens[NATS_TEXTS] = {&o->urls_len,        &o->bucket_len,        &o->credentials_file_len,
                              &o->tls_ca_file_len, &o->tls_cert_file_len, &o->tls_key_file_len,
                              &o->name_len};
  static const char* const ints[] = {"tls", "directReads", "createBucket", "history", "replicas"};
  int32_t* int_fields[] = {&o->tls, &o->direct_reads, &o->create_bucket, &o->history, &o->replicas};
  static const char* const times[] = {"connectTimeoutMs", "requestTimeoutMs", "listTimeoutMs", "reconnectWaitMs"};
  int64_t* time_fields[] = {&o->connect_timeout_ms, &o->request_timeout_ms, &o->list_timeout_ms, &o->reconnect_wait_ms};
  for (int k = 0; k < NATS_TEXTS; k++) {
    if (nats_text(env, opts, k, &texts[k], ptrs[k], lens[k]) != 0) return -1;
  }
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
    int64_t v = *int_fields[k];
    if (nats_number(env, opts, ints[k], &v) != 0) return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
      ljn_throw_range(env, "a NATS option is out of range");
      return -1;
    }
    *int_fields[k] = (int32_t)v;
  }
  for (size_t k = 0; k < sizeof times / sizeof times[0]; k++) {
    if (nats_number(env, opts, times[k], time_fields[k]) != 0) return -1;
  }
  return 0;
}

/* storeNats({ urls, bucket, ... }). */
static napi_value store_nats(napi_env env, napi_callback_info info) {
  napi_value arg;
  size_t argc = 1;
  lj_nats_options_t opts;
  ljn_text texts[NATS_TEXTS];
  lj_store_t* store = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  if (argc < 1 || ljn_type(env, arg) != napi_object) return ljn_throw_type(env, "the NATS options must be an object");
  lj_nats_options_init(&opts, LJ_NATS_OPTIONS_VERSION);
  for (int k = 0; k < NATS_TEXTS; k++) ljn_text_init(&texts[k]);
  int rc = nats_options_of(env, arg, &opts, texts) != 0 ? 1 : lj_nats_store_open(&store, &opts, &err);
  ljn_texts_release(texts, NATS_TEXTS);
  if (rc == 1) return NULL;
  return wrap_store(env, rc, store, err);
}

/* storeOpenUrl(url, { create, credentialsFile, tlsCaFile, tlsCertFile, tlsKeyFile,
 * refuseUnfenced }): the library's one URL grammar and its rules. */
static napi_value store_open_url(napi_env env, napi_callback_info info) {
  napi_value args[2];
  size_t argc = 2;
  ljn_text url, texts[4];
  lj_store_url_options_t opts;
  lj_store_t* store = NULL;
  lj_error_t* err = NULL;
  static const char* const names[] = {"credentialsFile", "tlsCaFile", "tlsCertFile", "tlsKeyFile"};
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  lj_store_url_options_init(&opts, LJ_STORE_URL_OPTIONS_VERSION);
  const char** ptrs[4] = {&opts.credentials_file, &opts.tls_ca_file, &opts.tls_cert_file, &opts.tls_key_file};
  size_t* lens[4] = {&opts.credentials_file_len, &opts.tls_ca_file_len, &opts.tls_cert_file_len,
                     &opts.tls_key_file_len};
  ljn_text_init(&url);
  for (int k = 0; k < 4; k++) ljn_text_init(&texts[k]);
  int failed = ljn_text_of(env, argc < 1 ? NULL : args[0], "url", LJN_TEXT_MAX, false, &url) != 0;
  if (!failed && argc >= 2 && ljn_type(env, args[1]) != napi_undefined) {
    if (ljn_type(env, args[1]) != napi_object) {
      ljn_throw_type(env, "the store options must be an object");
      failed = 1;
    }
    for (int k = 0; k < 4 && !failed; k++) {
      napi_value v;
      if (napi_get_named_property(env, args[1], names[k], &v) != napi_ok) failed = 1;
      if (!failed && ljn_type(env, v) != napi_undefined) {
        failed = ljn_text_of(env, v, names[k], LJN_TEXT_MAX, false, &texts[k]) != 0;
        *ptrs[k] = texts[k].data;
        *lens[k] = texts[k].len;
      }
    }
    int64_t create = 0, refuse = 0;
    if (!failed) failed = nats_number(env, args[1], "create", &create) != 0;
    if (!failed) failed = nats_number(env, args[1], "refuseUnfenced", &refuse) != 0;
    opts.create = create != 0;
    opts.refuse_unfenced = refuse != 0;
  }
  int rc = failed ? 1 : lj_store_open_url(&store, url.data, url.len, &opts, &err);
  ljn_text_release(&url);
  ljn_texts_release(texts, 4);
  if (rc == 1) return NULL;
  return wrap_store(env, rc, store, err);
}

static napi_value store_close(napi_env env, napi_callback_info info) {
  napi_value arg, undefined;
  size_t argc = 1;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  ljn_store* s = ljn_store_of(env, argc < 1 ? NULL : arg);
  if (s == NULL) return NULL;
  s->closed = true;
  ljn_store_settle(s);
  LJN_CALL(env, napi_get_undefined(env, &undefined));
  return undefined;
}

/* --- operations ---------------------------------------------------------------------------- */

int ljn_store_args(napi_env env, napi_value* args, size_t argc, size_t need, ljn_store** s, ljn_text* key,
                   ljn_text* value) {
  ljn_text_init(key);
  if (value != NULL) ljn_text_init(value);
  if (argc < need) {
    ljn_throw_type(env, "too few arguments");
    return -1;
  }
  if ((*s = ljn_store_of(env, args[0])) == NULL) return -1;
  if (ljn_text_of(env, args[1], "key", LJN_TEXT_MAX, false, key) != 0) return -1;
  if (value != NULL && ljn_text_of(env, args[2], "value", (size_t)1 << 30, true, value) != 0) return -1;
  return 0;
}

/* storeGet(store, key): null, or [value Buffer, revision]. */
static napi_value store_get(napi_env env, napi_callback_info info) {
  napi_value args[2], result = NULL, buffer;
  size_t argc = 2, len = 0;
  ljn_store* s;
  ljn_text key;
  char* value = NULL;
  uint64_t revision = 0;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (ljn_store_args(env, args, argc, 2, &s, &key, NULL) != 0) {
    ljn_text_release(&key);
    return NULL;
  }
  int rc = lj_store_get(&value, &len, &revision, s->store, key.data, key.len, &err);
  ljn_text_release(&key);
  if (rc == LJ_ENOTFOUND) {
    lj_error_destroy(err);
    LJN_CALL(env, napi_get_null(env, &result));
    return result;
  }
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  napi_status st = napi_create_buffer_copy(env, len, len == 0 ? "" : value, NULL, &buffer);
  lj_free(value);
  if (st != napi_ok) return ljn_napi_failed(env);
  napi_value rev = ljn_revision(env, revision);
  if (rev == NULL) return NULL;
  LJN_CALL(env, napi_create_array_with_length(env, 2, &result));
  LJN_CALL(env, napi_set_element(env, result, 0, buffer));
  LJN_CALL(env, napi_set_element(env, result, 1, rev));
  return result;
}

/* storeCreate(store, key, value): the new revision. */
static napi_value store_create(napi_env env, napi_callback_info info) {
  napi_value args[3];
  size_t argc = 3;
  ljn_store* s;
  ljn_text key, value;
  uint64_t revision = 0;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  int rc = ljn_store_args(env, args, argc, 3, &s, &key, &value) != 0
               ? 1
               : lj_store_create(&revision, s->store, key.data, key.len, value.data, value.len, &err);
  ljn_text_release(&key);
  ljn_text_release(&value);
  if (rc == 1) return NULL;
  return ljn_result(env, rc, err, rc == LJ_OK ? ljn_revision(env, revision) : NULL);
}

/* storeUpdate(store, key, value, revision): the new revision. */
static napi_value store_update(napi_env env, napi_callback_info info) {
  napi_value args[4];
  size_t argc = 4;
  ljn_store* s;
  ljn_text key, value;
  uint64_t at = 0, revision = 0;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  int rc =
      ljn_store_args(env, args, argc, 4, &s, &key, &value) != 0 || ljn_revision_of(env, args[3], "revision", &at) != 0
          ? 1
          : lj_store_update(&revision, s->store, key.data, key.len, value.data, value.len, at, &err);
  ljn_text_release(&key);
  ljn_text_release(&value);
  if (rc == 1) return NULL;
  return ljn_result(env, rc, err, rc == LJ_OK ? ljn_revision(env, revision) : NULL);
}

/* storeRemove(store, key, revision). */
static napi_value store_remove(napi_env env, napi_callback_info info) {
  napi_value args[3], undefined;
  size_t argc = 3;
  ljn_store* s;
  ljn_text key;
  uint64_t at = 0;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  int rc =
      ljn_store_args(env, args, argc, 3, &s, &key, NULL) != 0 || ljn_revision_of(env, args[2], "revision", &at) != 0
          ? 1
          : lj_store_remove(s->store, key.data, key.len, at, &err);
  ljn_text_release(&key);
  if (rc == 1) return NULL;
  LJN_CALL(env, napi_get_undefined(env, &undefined));
  return ljn_result(env, rc, err, undefined);
}

struct key_list {
  napi_env env;
  napi_value array;
  uint32_t count;
};

static int list_key(const char* key, size_t key_len, void* payload) {
  struct key_list* l = (struct key_list*)payload;
  napi_value v = ljn_string(l->env, key, key_len);
  if (v == NULL || napi_set_element(l->env, l->array, l->count++, v) != napi_ok) return 1;
  return 0;
}

/* storeKeys(store): every key that holds a value. */
static napi_value store_keys(napi_env env, napi_callback_info info) {
  napi_value arg;
  size_t argc = 1;
  struct key_list l = {env, NULL, 0};
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  ljn_store* s = ljn_store_of(env, argc < 1 ? NULL : arg);
  if (s == NULL) return NULL;
  LJN_CALL(env, napi_create_array(env, &l.array));
  int rc = lj_store_keys(s->store, list_key, &l, &err);
  return ljn_result(env, rc, err, l.array);
}

int ljn_store_init(napi_env env, napi_value exports) {
  static const ljn_function fns[] = {
      {"storeMemory", store_memory},    {"storeFile", store_file},     {"storeNats", store_nats},
      {"storeOpenUrl", store_open_url}, {"storeClose", store_close},   {"storeGet", store_get},
      {"storeCreate", store_create},    {"storeUpdate", store_update}, {"storeRemove", store_remove},
      {"storeKeys", store_keys},
  };
  return ljn_define(env, exports, fns, sizeof fns / sizeof fns[0]);
}
