/*
 * The addon's lock part: judging a body with JavaScript callbacks, bodies, execution
 * state, the gcloud arguments, this machine's id and the local pid check, and the
 * lock's life on a store (acquire, open, renew, release, its state).
 */
#include "lock.h"

#include <stdlib.h>
#include <string.h>

/* The tag that tells a lock's external from another (a store's has its own, store.c). */
static const napi_type_tag lock_tag = {0x6c6a2d6c6f636b21ULL, 0x6e6f64652d616464ULL};

/* --- the callbacks ------------------------------------------------------------------------ */

/* The kind of an ExecutionState object a describe callback returned; -1 for junk. */
static int execution_kind_of(napi_env env, napi_value state, napi_value* detail) {
  static const char* const kinds[] = {"running", "finished", "not-found", "unknown"};
  static const char* const details[] = {NULL, "how", NULL, "error"};
  napi_value kind;
  char text[16];
  size_t len = 0;
  *detail = NULL;
  if (ljn_type(env, state) != napi_object) return -1;
  if (napi_get_named_property(env, state, "kind", &kind) != napi_ok || ljn_type(env, kind) != napi_string) return -1;
  if (napi_get_value_string_utf8(env, kind, text, sizeof text, &len) != napi_ok) return -1;
  for (int k = 0; k < 4; k++) {
    if (strlen(kinds[k]) != len || memcmp(kinds[k], text, len) != 0) continue;
    if (details[k] != NULL) {
      if (napi_get_named_property(env, state, details[k], detail) != napi_ok) return -1;
      if (ljn_type(env, *detail) != napi_string) return -1;
    }
    return k;
  }
  return -1;
}

/* Calls describe(ref) with { projectId, region, name } and hands its answer on. */
static int call_describe(lj_execution_state_t* state, const lj_execution_ref_t* ref, void* payload) {
  ljn_judging* j = (ljn_judging*)payload;
  napi_env env = j->env;
  napi_value arg, undefined, result, detail;
  if (napi_create_object(env, &arg) != napi_ok || napi_get_undefined(env, &undefined) != napi_ok ||
      ljn_set(env, arg, "projectId", ljn_wtf8_string(env, ref->project_id, ref->project_id_len)) != 0 ||
      ljn_set(env, arg, "region", ljn_wtf8_string(env, ref->region, ref->region_len)) != 0 ||
      ljn_set(env, arg, "name", ljn_wtf8_string(env, ref->name, ref->name_len)) != 0) {
    ljn_napi_failed(env);
    return 1;
  }
  if (napi_call_function(env, undefined, j->describe, 1, &arg, &result) != napi_ok) {
    ljn_napi_failed(env); /* its exception stays the one thrown */
    return 1;
  }
  int kind = execution_kind_of(env, result, &detail);
  if (kind < 0) {
    ljn_throw_type(env,
                   "the describe callback must return an ExecutionState: { kind: \"running\" }, { kind: "
                   "\"finished\", how: string }, { kind: \"not-found\" } or { kind: \"unknown\", error: string }");
    return 1;
  }
  ljn_text text;
  ljn_text_init(&text);
  if (detail != NULL && ljn_text_of(env, detail, "an ExecutionState's how or error", LJN_TEXT_MAX, false, &text) != 0)
    return 1;
  int rc = lj_execution_state_set(state, kind, text.data, text.len);
  ljn_text_release(&text);
  if (rc != LJ_OK) {
    ljn_throw_code(env, rc, NULL);
    return 1;
  }
  return 0;
}

/* Calls here.alive(pid), which must say true or false. */
static int call_alive(int* out_alive, double pid, void* payload) {
  ljn_judging* j = (ljn_judging*)payload;
  napi_env env = j->env;
  napi_value arg, result;
  bool alive = true;
  if (napi_create_double(env, pid, &arg) != napi_ok ||
      napi_call_function(env, j->here, j->alive, 1, &arg, &result) != napi_ok) {
    ljn_napi_failed(env);
    return 1;
  }
  if (ljn_type(env, result) != napi_boolean) {
    ljn_throw_type(env, "the alive callback must return true or false");
    return 1;
  }
  if (napi_get_value_bool(env, result, &alive) != napi_ok) {
    ljn_napi_failed(env);
    return 1;
  }
  *out_alive = alive ? 1 : 0;
  return 0;
}

int ljn_judging_of(napi_env env, napi_value* args, ljn_judging* j) {
  ljn_text_init(&j->host);
  ljn_text_init(&j->machine);
  j->env = env;
  j->describe = j->here = j->alive = NULL;
  lj_lock_options_init(&j->opts, LJ_LOCK_OPTIONS_VERSION);
  napi_valuetype type = ljn_type(env, args[0]);
  if (type == napi_function) {
    j->describe = args[0];
    j->opts.describe = call_describe;
    j->opts.describe_payload = j;
  } else if (type != napi_undefined && type != napi_null) {
    return ljn_function_of(env, args[0], "describe");
  }
  if (ljn_type(env, args[1]) == napi_undefined) return 0; /* this machine */
  int machine_kind = 0;
  if (ljn_text_of(env, args[2], "here.host", LJN_TEXT_MAX, false, &j->host) != 0) return -1;
  if (ljn_int_of(env, args[3], "here.machine's kind", &machine_kind) != 0) return -1;
  lj_lock_here_init(&j->c_here, LJ_LOCK_HERE_VERSION);
  j->c_here.host = j->host.data;
  j->c_here.host_len = j->host.len;
  j->c_here.machine_kind = machine_kind;
  if (machine_kind == LJ_MACHINE_ID) {
    if (ljn_text_of(env, args[4], "here.machine", LJN_TEXT_MAX, false, &j->machine) != 0) return -1;
    j->c_here.machine = j->machine.data;
    j->c_here.machine_len = j->machine.len;
  }
  if (ljn_function_of(env, args[5], "here.alive") != 0) return -1;
  j->here = args[1];
  j->alive = args[5];
  j->c_here.alive = call_alive;
  j->c_here.payload = j;
  j->opts.here = &j->c_here;
  return 0;
}

void ljn_judging_release(ljn_judging* j) {
  ljn_text_release(&j->host);
  ljn_text_release(&j->machine);
}

/* --- judging ------------------------------------------------------------------------------- */

/* judge(text, nowMs, describe, here, host, machineKind, machine, alive): the why;
 * numbers[0..2] get the kind, the reason and manual removal. */
static napi_value judge(napi_env env, napi_callback_info info) {
  napi_value args[8];
  size_t argc = 8;
  int64_t now_ms = 0;
  ljn_text text;
  ljn_judging j;
  lj_lock_verdict_t verdict;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 8) return ljn_throw_type(env, "judge takes 8 arguments");
  if (ljn_int64_of(env, args[1], "now", &now_ms) != 0) return NULL;
  if (ljn_text_of(env, args[0], "the lock body", LJN_TEXT_MAX, true, &text) != 0) return NULL;
  if (ljn_judging_of(env, args + 2, &j) != 0) {
    ljn_text_release(&text);
    ljn_judging_release(&j);
    return NULL;
  }
  int rc = lj_lock_judge(&verdict, text.data, text.len, now_ms, &j.opts, &err);
  ljn_text_release(&text);
  ljn_judging_release(&j);
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  int32_t* numbers = ljn_module_of(env)->numbers;
  numbers[0] = verdict.kind;
  numbers[1] = verdict.reason;
  numbers[2] = verdict.manual_removal;
  napi_value why = ljn_string(env, verdict.why, verdict.why_len);
  lj_lock_verdict_clear(&verdict);
  return why;
}

/* --- bodies ----------------------------------------------------------------------------------- */

/* An out string of the library given to JS and freed; LJ_EPARSE answers null when
 * null_on_parse. */
static napi_value give(napi_env env, int rc, char* out, size_t len, lj_error_t* err, bool null_on_parse) {
  if (rc == LJ_EPARSE && null_on_parse) {
    lj_error_destroy(err);
    napi_value null;
    LJN_CALL(env, napi_get_null(env, &null));
    return null;
  }
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  napi_value v = ljn_string(env, out, len);
  lj_free(out);
  return v;
}

/* parseBody(text): the body as the schema keeps it, as JSON; null when not readable. */
static napi_value parse_body(napi_env env, napi_callback_info info) {
  napi_value arg;
  size_t argc = 1, len = 0;
  ljn_text text;
  char* out = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  if (ljn_text_of(env, argc < 1 ? NULL : arg, "the lock body", LJN_TEXT_MAX, true, &text) != 0) return NULL;
  int rc = lj_lock_body_parse(&out, &len, text.data, text.len, &err);
  ljn_text_release(&text);
  return give(env, rc, out, len, err, true);
}

/* renewBody(text, nowMs, leaseMs). */
static napi_value renew_body(napi_env env, napi_callback_info info) {
  napi_value args[3];
  size_t argc = 3, len = 0;
  int64_t now_ms = 0, lease_ms = 0;
  ljn_text text;
  char* out = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 3) return ljn_throw_type(env, "renewBody takes 3 arguments");
  if (ljn_int64_of(env, args[1], "now", &now_ms) != 0 || ljn_int64_of(env, args[2], "leaseMs", &lease_ms) != 0)
    return NULL;
  if (ljn_text_of(env, args[0], "the lock body", LJN_TEXT_MAX, true, &text) != 0) return NULL;
  int rc = lj_lock_body_renew(&out, &len, text.data, text.len, now_ms, lease_ms, &err);
  ljn_text_release(&text);
  return give(env, rc, out, len, err, false);
}

/* Reads an execution ref's three strings from args[0..2] into texts and ref. */
static int ref_of(napi_env env, napi_value* args, ljn_text texts[3], lj_execution_ref_t* ref) {
  static const char* const what[] = {"execution.projectId", "execution.region", "execution.name"};
  for (int k = 0; k < 3; k++) ljn_text_init(&texts[k]);
  for (int k = 0; k < 3; k++) {
    if (ljn_text_of(env, args[k], what[k], LJN_TEXT_MAX, false, &texts[k]) != 0) return -1;
  }
  ref->project_id = texts[0].data;
  ref->project_id_len = texts[0].len;
  ref->region = texts[1].data;
  ref->region_len = texts[1].len;
  ref->name = texts[2].data;
  ref->name_len = texts[2].len;
  return 0;
}

int ljn_holder_of(napi_env env, napi_value* args, ljn_text texts[3], lj_lock_holder_t* holder) {
  for (int k = 0; k < 3; k++) ljn_text_init(&texts[k]);
  lj_lock_holder_init(holder, LJ_LOCK_HOLDER_VERSION);
  if (ljn_int_of(env, args[0], "the holder's kind", &holder->kind) != 0) return -1;
  if (holder->kind == LJ_LOCK_HOLDER_NONE) return 0;
  if (ljn_int64_of(env, args[1], holder->kind == LJ_LOCK_HOLDER_EXECUTION ? "maxRuntimeMs" : "leaseMs",
                   &holder->lease_ms) != 0)
    return -1;
  if (holder->kind == LJ_LOCK_HOLDER_EXECUTION) return ref_of(env, args + 2, texts, &holder->execution);
  return 0;
}

/* newBody(purpose, nowMs, kind, leaseMs, projectId, region, name, id). */
static napi_value new_body(napi_env env, napi_callback_info info) {
  napi_value args[8];
  size_t argc = 8, len = 0;
  int64_t now_ms = 0;
  ljn_text purpose, id, texts[3];
  lj_lock_holder_t holder;
  char* out = NULL;
  lj_error_t* err = NULL;
  ljn_text_init(&purpose);
  ljn_text_init(&id);
  for (int k = 0; k < 3; k++) ljn_text_init(&texts[k]);
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 8) return ljn_throw_type(env, "newBody takes 8 arguments");
  int bad =
      ljn_int64_of(env, args[1], "now", &now_ms) != 0 || ljn_holder_of(env, args + 2, texts, &holder) != 0 ||
      ljn_text_of(env, args[0], "purpose", LJN_TEXT_MAX, false, &purpose) != 0 ||
      (ljn_type(env, args[7]) != napi_undefined && ljn_text_of(env, args[7], "id", LJN_TEXT_MAX, false, &id) != 0);
  int rc =
      bad ? LJ_OK : lj_lock_body_new(&out, &len, purpose.data, purpose.len, now_ms, &holder, id.data, id.len, &err);
  ljn_texts_release(texts, 3);
  ljn_text_release(&purpose);
  ljn_text_release(&id);
  if (bad) return NULL;
  return give(env, rc, out, len, err, false);
}

/* --- execution state, gcloud ------------------------------------------------------------------ */

/* The state's kind into numbers[0] and its detail as the result. */
static napi_value give_state(napi_env env, int rc, lj_execution_kind_t kind, char* detail, size_t len,
                             lj_error_t* err) {
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  ljn_module_of(env)->numbers[0] = kind;
  napi_value v = ljn_string(env, detail, len);
  lj_free(detail);
  return v;
}

/* executionState(exitCode, stdout, stderr): exit code 0 reads stdout. */
static napi_value execution_state(napi_env env, napi_callback_info info) {
  napi_value args[3];
  size_t argc = 3, len = 0;
  int code = 0;
  ljn_text out, errtext;
  lj_execution_kind_t kind = LJ_EXECUTION_UNKNOWN;
  char* detail = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 3) return ljn_throw_type(env, "executionState takes 3 arguments");
  if (ljn_int_of(env, args[0], "exitCode", &code) != 0) return NULL;
  ljn_text_init(&errtext);
  if (ljn_text_of(env, args[1], "stdout", LJN_TEXT_MAX, true, &out) != 0) return NULL;
  if (ljn_text_of(env, args[2], "stderr", LJN_TEXT_MAX, true, &errtext) != 0) {
    ljn_text_release(&out);
    return NULL;
  }
  int rc = lj_execution_state_parse(&kind, &detail, &len, code, out.data, out.len, errtext.data, errtext.len, &err);
  ljn_text_release(&out);
  ljn_text_release(&errtext);
  return give_state(env, rc, kind, detail, len, err);
}

/* describeExecution(projectId, region, name, timeoutMs): gcloud asked, now. */
static napi_value describe_execution(napi_env env, napi_callback_info info) {
  napi_value args[4];
  size_t argc = 4, len = 0;
  int64_t timeout_ms = 0;
  ljn_text texts[3];
  lj_execution_ref_t ref;
  lj_execution_kind_t kind = LJ_EXECUTION_UNKNOWN;
  char* detail = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 4) return ljn_throw_type(env, "describeExecution takes 4 arguments");
  if (ljn_int64_of(env, args[3], "timeoutMs", &timeout_ms) != 0) return NULL;
  if (ref_of(env, args, texts, &ref) != 0) {
    ljn_texts_release(texts, 3);
    return NULL;
  }
  int rc = lj_execution_describe(&kind, &detail, &len, &ref, timeout_ms, &err);
  ljn_texts_release(texts, 3);
  return give_state(env, rc, kind, detail, len, err);
}

/* describeArgs(projectId, region, name): the array of gcloud's arguments. */
static napi_value describe_args(napi_env env, napi_callback_info info) {
  napi_value args[3], array;
  size_t argc = 3, len = 0, count = 0;
  ljn_text texts[3];
  lj_execution_ref_t ref;
  char* out = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 3) return ljn_throw_type(env, "describeArgs takes 3 arguments");
  int rc = ref_of(env, args, texts, &ref) != 0 ? 1 : lj_execution_describe_args(&out, &len, &count, &ref, &err);
  ljn_texts_release(texts, 3);
  if (rc == 1) return NULL;
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  if (napi_create_array_with_length(env, count, &array) != napi_ok) {
    lj_free(out);
    return ljn_napi_failed(env);
  }
  size_t at = 0;
  for (uint32_t k = 0; k < count; k++) {
    size_t n = strlen(out + at);
    napi_value arg = ljn_string(env, out + at, n);
    if (arg == NULL || napi_set_element(env, array, k, arg) != napi_ok) {
      lj_free(out);
      return ljn_napi_failed(env);
    }
    at += n + 1;
  }
  lj_free(out);
  return array;
}

/* --- this machine ------------------------------------------------------------------------------- */

/* processAlive(pid): false only for a pid provably dead here. */
static napi_value process_alive(napi_env env, napi_callback_info info) {
  napi_value arg, result;
  size_t argc = 1;
  double pid = 0;
  int alive = 1;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  if (ljn_number_of(env, argc < 1 ? NULL : arg, "pid", &pid) != 0) return NULL;
  int rc = lj_process_alive(&alive, pid, NULL);
  if (rc != LJ_OK) return ljn_throw_code(env, rc, NULL);
  LJN_CALL(env, napi_get_boolean(env, alive != 0, &result));
  return result;
}

/* machineId(): this machine's id, or null where it has none. */
static napi_value machine_id(napi_env env, napi_callback_info info) {
  char* out = NULL;
  size_t len = 0;
  lj_error_t* err = NULL;
  (void)info;
  int rc = lj_machine_id(&out, &len, &err);
  if (rc == LJ_ENOTFOUND) {
    lj_error_destroy(err);
    napi_value null;
    LJN_CALL(env, napi_get_null(env, &null));
    return null;
  }
  return give(env, rc, out, len, err, false);
}

/* reasonCode(n), kindName(n): the library's names. */
static napi_value reason_code(napi_env env, napi_callback_info info) {
  napi_value arg;
  size_t argc = 1;
  int n = 0;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  if (ljn_int_of(env, argc < 1 ? NULL : arg, "reason", &n) != 0) return NULL;
  const char* code = lj_lock_reason_code(n);
  return ljn_string(env, code, strlen(code));
}

/* --- the lock's life ----------------------------------------------------------------------- */

ljn_lock* ljn_lock_of(napi_env env, napi_value v) {
  return (ljn_lock*)ljn_external_of(env, v, &lock_tag, "lock must be a HeldLock");
}

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
  int bad = ljn_store_args(env, args, argc, 16, &s, &key, NULL) != 0 ||
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
  int bad = ljn_store_args(env, args, argc, 4, &s, &key, NULL) != 0 ||
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
  return ljn_result(env, rc, err, undefined);
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
  return ljn_result(env, rc, err, undefined);
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

int ljn_lock_init(napi_env env, napi_value exports) {
  static const ljn_function fns[] = {
      {"judge", judge},
      {"parseBody", parse_body},
      {"renewBody", renew_body},
      {"newBody", new_body},
      {"executionState", execution_state},
      {"describeExecution", describe_execution},
      {"describeArgs", describe_args},
      {"processAlive", process_alive},
      {"machineId", machine_id},
      {"reasonCode", reason_code},
      {"lockAcquire", lock_acquire},
      {"lockRenew", lock_renew},
      {"lockRelease", lock_release},
      {"lockState", lock_state},
      {"lockOpen", lock_open},
  };
  return ljn_define(env, exports, fns, sizeof fns / sizeof fns[0]);
}
