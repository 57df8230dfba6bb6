/*
 * The addon's store part: stores (memory, file, NATS) as externals, their
 * operations, and the lock's life on them (acquire, renew, release). See store.h.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "lock.h"

/* Tags that tell a store's external from a lock's. */
static const napi_type_tag store_tag = {0x6c6a2d73746f7265ULL, 0x6e6f64652d616464ULL};
static const napi_type_tag lock_tag = {0x6c6a2d6c6f636b21ULL, 0x6e6f64652d616464ULL};

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
  bool tagged = false;
  void* data = NULL;
  if (ljn_type(env, v) != napi_external || napi_check_object_type_tag(env, v, &store_tag, &tagged) != napi_ok ||
      !tagged || napi_get_value_external(env, v, &data) != napi_ok) {
    ljn_throw_type(env, "store must be a Store");
    return NULL;
  }
  ljn_store* s = (ljn_store*)data;
  if (s->closed) {
    napi_throw_error(env, "LJ_EINVAL", "the store is closed");
    return NULL;
  }
  return s;
}

ljn_lock* ljn_lock_of(napi_env env, napi_value v) {
  bool tagged = false;
  void* data = NULL;
  if (ljn_type(env, v) != napi_external || napi_check_object_type_tag(env, v, &lock_tag, &tagged) != napi_ok ||
      !tagged || napi_get_value_external(env, v, &data) != napi_ok) {
    ljn_throw_type(env, "lock must be a HeldLock");
    return NULL;
  }
  return (ljn_lock*)data;
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

/* The store, key and (with value) value of args; -1 after an exception. */
static int op_args(napi_env env, napi_value* args, size_t argc, size_t need, ljn_store** s, ljn_text* key,
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

static napi_value done(napi_env env, int rc, lj_error_t* err, napi_value result) {
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  return result;
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
  if (op_args(env, args, argc, 2, &s, &key, NULL) != 0) {
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
  int rc = op_args(env, args, argc, 3, &s, &key, &value) != 0
               ? 1
               : lj_store_create(&revision, s->store, key.data, key.len, value.data, value.len, &err);
  ljn_text_release(&key);
  ljn_text_release(&value);
  if (rc == 1) return NULL;
  return done(env, rc, err, rc == LJ_OK ? ljn_revision(env, revision) : NULL);
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
  int rc = op_args(env, args, argc, 4, &s, &key, &value) != 0 || ljn_revision_of(env, args[3], "revision", &at) != 0
               ? 1
               : lj_store_update(&revision, s->store, key.data, key.len, value.data, value.len, at, &err);
  ljn_text_release(&key);
  ljn_text_release(&value);
  if (rc == 1) return NULL;
  return done(env, rc, err, rc == LJ_OK ? ljn_revision(env, revision) : NULL);
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
  int rc = op_args(env, args, argc, 3, &s, &key, NULL) != 0 || ljn_revision_of(env, args[2], "revision", &at) != 0
               ? 1
               : lj_store_remove(s->store, key.data, key.len, at, &err);
  ljn_text_release(&key);
  if (rc == 1) return NULL;
  LJN_CALL(env, napi_get_undefined(env, &undefined));
  return done(env, rc, err, undefined);
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
  return done(env, rc, err, l.array);
}

/* --- the lock's life ----------------------------------------------------------------------- */

void ljn_lock_stop_beat(ljn_lock* l) {
  ljn_beat* b = l->beat;
  if (b == NULL) return;
  lj_lock_heartbeat_destroy(b->beat); /* on_lost is not called after this */
  b->beat = NULL;
  b->lock = NULL;
  l->beat = NULL;
  napi_release_threadsafe_function(b->fn, napi_tsfn_release); /* its finalizer frees b */
}

static void lock_collected(napi_env env, void* data, void* hint) {
  ljn_lock* l = (ljn_lock*)data;
  (void)env;
  (void)hint;
  ljn_lock_stop_beat(l);
  lj_lock_destroy(l->lock);
  l->store->locks--;
  ljn_store_settle(l->store);
  free(l);
}

static napi_value verdict_object(napi_env env, const lj_lock_verdict_t* v) {
  napi_value obj, kind, reason, manual;
  LJN_CALL(env, napi_create_object(env, &obj));
  LJN_CALL(env, napi_create_int32(env, v->kind, &kind));
  LJN_CALL(env, napi_create_int32(env, v->reason, &reason));
  LJN_CALL(env, napi_get_boolean(env, v->manual_removal != 0, &manual));
  if (ljn_set(env, obj, "kind", kind) != 0 || ljn_set(env, obj, "reason", reason) != 0 ||
      ljn_set(env, obj, "manualRemoval", manual) != 0 ||
      ljn_set(env, obj, "why", ljn_string(env, v->why, v->why_len)) != 0)
    return NULL;
  return obj;
}

napi_value ljn_lock_wrap(napi_env env, lj_lock_t* lock, ljn_store* s) {
  napi_value ext;
  ljn_lock* l = (ljn_lock*)calloc(1, sizeof *l);
  if (l == NULL) {
    lj_lock_destroy(lock);
    return ljn_throw_code(env, LJ_ENOMEM, NULL);
  }
  l->lock = lock;
  l->store = s;
  s->locks++;
  if (napi_create_external(env, l, lock_collected, NULL, &ext) != napi_ok) {
    lock_collected(env, l, NULL);
    return ljn_napi_failed(env);
  }
  LJN_CALL(env, napi_type_tag_object(env, ext, &lock_tag));
  return ext;
}

napi_value ljn_acquisition_object(napi_env env, const lj_lock_acquisition_t* a, napi_value lock) {
  napi_value obj, outcome, verdict;
  LJN_CALL(env, napi_create_object(env, &obj));
  LJN_CALL(env, napi_create_int32(env, a->outcome, &outcome));
  if (a->has_verdict) {
    verdict = verdict_object(env, &a->verdict);
  } else {
    LJN_CALL(env, napi_get_null(env, &verdict));
  }
  if (ljn_set(env, obj, "outcome", outcome) != 0 || ljn_set(env, obj, "verdict", verdict) != 0 ||
      ljn_set(env, obj, "brokeAt", ljn_revision(env, a->broke_at)) != 0 ||
      ljn_set(env, obj, "revision", ljn_revision(env, a->revision)) != 0 || ljn_set(env, obj, "lock", lock) != 0)
    return NULL;
  return obj;
}

/* lockAcquire(store, key, purpose, holderKind, leaseMs, projectId, region, name,
 *             nowMs, describe, here, host, machineKind, machine, alive, gcloudTimeoutMs). */
static napi_value lock_acquire(napi_env env, napi_callback_info info) {
  napi_value args[16], result = NULL;
  size_t argc = 16;
  ljn_store* s;
  ljn_text key, purpose, texts[3];
  lj_lock_holder_t holder;
  ljn_judging j;
  int64_t now_ms = 0, timeout_ms = 0;
  lj_lock_t* lock = NULL;
  lj_lock_acquisition_t a;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  ljn_text_init(&purpose);
  ljn_text_init(&j.host);
  ljn_text_init(&j.machine);
  for (int k = 0; k < 3; k++) ljn_text_init(&texts[k]);
  int bad = op_args(env, args, argc, 16, &s, &key, NULL) != 0 ||
            ljn_text_of(env, args[2], "purpose", LJN_TEXT_MAX, false, &purpose) != 0 ||
            ljn_holder_of(env, args + 3, texts, &holder) != 0 || ljn_int64_of(env, args[8], "now", &now_ms) != 0 ||
            ljn_judging_of(env, args + 9, &j) != 0 || ljn_int64_of(env, args[15], "gcloudTimeoutMs", &timeout_ms) != 0;
  if (!bad) {
    j.opts.gcloud_timeout_ms = timeout_ms;
    int rc = lj_lock_acquire(&lock, &a, s->store, key.data, key.len, purpose.data, purpose.len, &holder, now_ms,
                             &j.opts, &err);
    if (rc != LJ_OK) {
      ljn_throw_code(env, rc, err);
    } else {
      napi_value handle = NULL;
      if (lock != NULL) {
        handle = ljn_lock_wrap(env, lock, s);
      } else if (napi_get_null(env, &handle) != napi_ok) {
        handle = ljn_napi_failed(env);
      }
      if (handle != NULL) result = ljn_acquisition_object(env, &a, handle);
      lj_lock_acquisition_clear(&a);
    }
  }
  ljn_text_release(&key);
  ljn_text_release(&purpose);
  ljn_texts_release(texts, 3);
  ljn_judging_release(&j);
  return result;
}

/* lockOpen(store, key, id, leaseMs): the lock at key while its body is the one with
 * acquisition id `id` (lj_lock_open), as a handle. */
static napi_value lock_open(napi_env env, napi_callback_info info) {
  napi_value args[4], result = NULL;
  size_t argc = 4;
  ljn_store* s;
  ljn_text key, id;
  int64_t lease_ms = 0;
  lj_lock_t* lock = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  ljn_text_init(&id);
  int bad = op_args(env, args, argc, 4, &s, &key, NULL) != 0 ||
            ljn_text_of(env, args[2], "id", LJN_TEXT_MAX, false, &id) != 0 ||
            ljn_int64_of(env, args[3], "leaseMs", &lease_ms) != 0;
  if (!bad) {
    int rc = lj_lock_open(&lock, s->store, key.data, key.len, id.data, id.len, lease_ms, &err);
    result = rc != LJ_OK ? ljn_throw_code(env, rc, err) : ljn_lock_wrap(env, lock, s);
  }
  ljn_text_release(&key);
  ljn_text_release(&id);
  return result;
}

/* lockRenew(lock, nowMs). */
static napi_value lock_renew(napi_env env, napi_callback_info info) {
  napi_value args[2], undefined;
  size_t argc = 2;
  int64_t now_ms = 0;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 2) return ljn_throw_type(env, "lockRenew takes 2 arguments");
  ljn_lock* l = ljn_lock_of(env, args[0]);
  if (l == NULL || ljn_int64_of(env, args[1], "now", &now_ms) != 0) return NULL;
  int rc = lj_lock_renew(l->lock, now_ms, &err);
  LJN_CALL(env, napi_get_undefined(env, &undefined));
  return done(env, rc, err, undefined);
}

/* lockRelease(lock). */
static napi_value lock_release(napi_env env, napi_callback_info info) {
  napi_value arg, undefined;
  size_t argc = 1;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  ljn_lock* l = ljn_lock_of(env, argc < 1 ? NULL : arg);
  if (l == NULL) return NULL;
  int rc = lj_lock_release(l->lock, &err);
  LJN_CALL(env, napi_get_undefined(env, &undefined));
  return done(env, rc, err, undefined);
}

/* lockState(lock): { id, body, revision, renewIntervalMs }. */
static napi_value lock_state(napi_env env, napi_callback_info info) {
  napi_value arg, obj, interval;
  size_t argc = 1, id_len = 0, body_len = 0;
  char *id = NULL, *body = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  ljn_lock* l = ljn_lock_of(env, argc < 1 ? NULL : arg);
  if (l == NULL) return NULL;
  int rc = lj_lock_id(&id, &id_len, l->lock, &err);
  if (rc == LJ_OK) rc = lj_lock_body(&body, &body_len, l->lock, &err);
  if (rc != LJ_OK) {
    lj_free(id);
    return ljn_throw_code(env, rc, err);
  }
  napi_value id_v = ljn_string(env, id, id_len), body_v = ljn_string(env, body, body_len);
  lj_free(id);
  lj_free(body);
  if (id_v == NULL || body_v == NULL) return NULL;
  LJN_CALL(env, napi_create_object(env, &obj));
  LJN_CALL(env, napi_create_double(env, (double)lj_lock_renew_interval_ms(l->lock), &interval));
  if (ljn_set(env, obj, "id", id_v) != 0 || ljn_set(env, obj, "body", body_v) != 0 ||
      ljn_set(env, obj, "revision", ljn_revision(env, lj_lock_revision(l->lock))) != 0 ||
      ljn_set(env, obj, "renewIntervalMs", interval) != 0)
    return NULL;
  return obj;
}

int ljn_store_init(napi_env env, napi_value exports) {
  static const ljn_function fns[] = {
      {"storeMemory", store_memory},    {"storeFile", store_file},     {"storeNats", store_nats},
      {"storeOpenUrl", store_open_url}, {"storeClose", store_close},   {"storeGet", store_get},
      {"storeCreate", store_create},    {"storeUpdate", store_update}, {"storeRemove", store_remove},
      {"storeKeys", store_keys},        {"lockAcquire", lock_acquire}, {"lockRenew", lock_renew},
      {"lockRelease", lock_release},    {"lockState", lock_state},     {"lockOpen", lock_open},
  };
  return ljn_define(env, exports, fns, sizeof fns / sizeof fns[0]);
}
