/*
 * The addon's hold part: lj_lock_acquire_wait on a worker thread (napi_async_work),
 * its promise settled on the main thread; a cancel flag the wait's `cancelled`
 * callback reads, set when the caller's AbortSignal aborts; and lj_lock_heartbeat_*
 * with its on_lost handed to a JavaScript function through a thread-safe function.
 * Every rule (backoff, deadline, renewal, loss) is the library's.
 */
#include "hold.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "store.h"

/* --- the cancel flag -------------------------------------------------------------------- */

/* Shared by a wait in flight and the JavaScript handle that cancels it: freed when both
 * are done with it (both on the main thread). */
typedef struct cancel_flag {
  atomic_int set;
  int refs;
} cancel_flag;

static const napi_type_tag cancel_tag = {0x6c6a2d63616e6365ULL, 0x6c2d6e6f64652d21ULL};

static void flag_drop(cancel_flag* f) {
  if (--f->refs == 0) free(f);
}

static void flag_collected(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  flag_drop((cancel_flag*)data);
}

static int flag_asked(void* payload) {
  return atomic_load(&((cancel_flag*)payload)->set);
}

/* lockWaitCancel(handle): the wait stops within 20 ms with LJ_EUSER. */
static napi_value wait_cancel(napi_env env, napi_callback_info info) {
  napi_value arg, undefined;
  size_t argc = 1;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  cancel_flag* flag = (cancel_flag*)ljn_external_of(env, argc < 1 ? NULL : arg, &cancel_tag,
                                                    "the handle must be a wait's cancel handle");
  if (flag == NULL) return NULL;
  atomic_store(&flag->set, 1);
  LJN_CALL(env, napi_get_undefined(env, &undefined));
  return undefined;
}

/* --- the wait ---------------------------------------------------------------------------- */

typedef struct wait_job {
  ljn_store* s; /* borrowed (s->locks) until complete */
  char* copy;   /* key, purpose and the execution's fields, one block */
  const char* key;
  size_t key_len;
  const char* purpose;
  size_t purpose_len;
  lj_lock_holder_t holder;
  lj_lock_wait_options_t wait;
  lj_lock_options_t opts;
  cancel_flag* flag;
  napi_deferred deferred;
  napi_async_work work;
  int rc; /* the answer, left by execute */
  lj_error_t* err;
  lj_lock_t* lock;
  lj_lock_acquisition_t acq;
} wait_job;

/* The job's texts copied (the wait outlives the call's arguments): 0, or LJ_ENOMEM. */
static int copy_texts(wait_job* job, const ljn_text* key, const ljn_text* purpose, const ljn_text ex[3]) {
  size_t total = key->len + purpose->len + ex[0].len + ex[1].len + ex[2].len + 1;
  char* p = (char*)malloc(total);
  if (p == NULL) return LJ_ENOMEM;
  job->copy = p;
  const ljn_text* from[5] = {key, purpose, &ex[0], &ex[1], &ex[2]};
  const char** to[5] = {&job->key, &job->purpose, &job->holder.execution.project_id, &job->holder.execution.region,
                        &job->holder.execution.name};
  for (int k = 0; k < 5; k++) {
    memcpy(p, from[k]->data, from[k]->len);
    *to[k] = p;
    p += from[k]->len;
  }
  job->key_len = key->len;
  job->purpose_len = purpose->len;
  return 0;
}

static void wait_execute(napi_env env, void* data) {
  wait_job* job = (wait_job*)data;
  (void)env;
  job->rc = lj_lock_acquire_wait(&job->lock, &job->acq, job->s->store, job->key, job->key_len, job->purpose,
                                 job->purpose_len, &job->holder, &job->wait, &job->opts, &job->err);
}

/* The value a wait settles with: the acquisition, or the error (rejected). */
static napi_value wait_answer(napi_env env, wait_job* job, bool* ok) {
  napi_value handle = NULL;
  *ok = false;
  if (job->rc != LJ_OK) {
    napi_value e = ljn_error(env, job->rc, job->err);
    job->err = NULL;
    return e;
  }
  if (job->lock != NULL) {
    handle = ljn_lock_wrap(env, job->lock, job->s);
    job->lock = NULL;
  } else if (napi_get_null(env, &handle) != napi_ok) {
    handle = NULL;
  }
  napi_value result = handle == NULL ? NULL : ljn_acquisition_object(env, &job->acq, handle);
  *ok = result != NULL;
  return result;
}

static void wait_complete(napi_env env, napi_status status, void* data) {
  wait_job* job = (wait_job*)data;
  bool ok = false;
  napi_value answer = NULL;
  job->s->locks--;
  if (status == napi_ok) answer = wait_answer(env, job, &ok);
  if (answer == NULL) {
    napi_value pending = NULL;
    /* What went wrong is the pending exception, else Node-API's own error. */
    if (napi_get_and_clear_last_exception(env, &pending) != napi_ok || ljn_type(env, pending) == napi_undefined)
      pending = ljn_error(env, LJ_EINTERNAL, NULL);
    answer = pending;
    ok = false;
  }
  if (ok) {
    napi_resolve_deferred(env, job->deferred, answer);
  } else {
    napi_reject_deferred(env, job->deferred, answer);
  }
  lj_lock_destroy(job->lock);
  lj_error_destroy(job->err);
  lj_lock_acquisition_clear(&job->acq);
  ljn_store_settle(job->s);
  flag_drop(job->flag);
  napi_delete_async_work(env, job->work);
  free(job->copy);
  free(job);
}

/* The job's arguments (args as lock_wait's); 0, or -1 after a thrown exception. */
static int wait_args(napi_env env, napi_value* args, wait_job* job) {
  ljn_text key, purpose, ex[3];
  int64_t numbers[4] = {0, 0, 0, 0};
  static const char* const names[4] = {"gcloudTimeoutMs", "timeoutMs", "pollMinMs", "pollMaxMs"};
  ljn_text_init(&key);
  ljn_text_init(&purpose);
  for (int k = 0; k < 3; k++) ljn_text_init(&ex[k]);
  if ((job->s = ljn_store_of(env, args[0])) == NULL) return -1;
  int bad = ljn_text_of(env, args[1], "key", LJN_TEXT_MAX, false, &key) != 0 ||
            ljn_text_of(env, args[2], "purpose", LJN_TEXT_MAX, false, &purpose) != 0 ||
            ljn_holder_of(env, args + 3, ex, &job->holder) != 0;
  for (int k = 0; k < 4 && !bad; k++) bad = ljn_int64_of(env, args[8 + k], names[k], &numbers[k]) != 0;
  int rc = bad ? LJ_OK : copy_texts(job, &key, &purpose, ex);
  ljn_text_release(&key);
  ljn_text_release(&purpose);
  ljn_texts_release(ex, 3);
  if (rc != LJ_OK) ljn_throw_code(env, rc, NULL);
  if (bad || rc != LJ_OK) return -1;
  lj_lock_options_init(&job->opts, LJ_LOCK_OPTIONS_VERSION);
  job->opts.gcloud_timeout_ms = numbers[0];
  lj_lock_wait_options_init(&job->wait, LJ_LOCK_WAIT_OPTIONS_VERSION);
  job->wait.wait_ms = numbers[1];
  job->wait.poll_min_ms = numbers[2];
  job->wait.poll_max_ms = numbers[3];
  job->wait.cancelled = flag_asked;
  return 0;
}

/* The job's cancel flag and its handle; NULL after a thrown exception. */
static napi_value wait_flag(napi_env env, wait_job* job) {
  napi_value handle;
  cancel_flag* f = (cancel_flag*)calloc(1, sizeof *f);
  if (f == NULL) return ljn_throw_code(env, LJ_ENOMEM, NULL);
  f->refs = 1;
  if (napi_create_external(env, f, flag_collected, NULL, &handle) != napi_ok) {
    free(f);
    return ljn_napi_failed(env);
  }
  LJN_CALL(env, napi_type_tag_object(env, handle, &cancel_tag));
  f->refs++;
  job->flag = f;
  job->wait.payload = f;
  return handle;
}

/* lockAcquireWait(store, key, purpose, holderKind, leaseMs, projectId, region, name,
 *                 gcloudTimeoutMs, timeoutMs, pollMinMs, pollMaxMs, cancelled):
 * [promise, cancel]; cancelled true: cancelled before the first try. */
static napi_value lock_wait(napi_env env, napi_callback_info info) {
  napi_value args[13], promise, handle, name, pair;
  size_t argc = 13;
  bool cancelled = false;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 13) return ljn_throw_type(env, "lockAcquireWait takes 13 arguments");
  if (napi_get_value_bool(env, args[12], &cancelled) != napi_ok)
    return ljn_throw_type(env, "cancelled must be a boolean");
  wait_job* job = (wait_job*)calloc(1, sizeof *job);
  if (job == NULL) return ljn_throw_code(env, LJ_ENOMEM, NULL);
  if (wait_args(env, args, job) != 0 || (handle = wait_flag(env, job)) == NULL) {
    free(job->copy);
    free(job);
    return NULL;
  }
  if (napi_create_string_utf8(env, "leasejudge.acquireLockWait", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_async_work(env, NULL, name, wait_execute, wait_complete, job, &job->work) != napi_ok) {
    flag_drop(job->flag);
    free(job->copy);
    free(job);
    return ljn_napi_failed(env);
  }
  atomic_store(&job->flag->set, cancelled ? 1 : 0);
  job->s->locks++; /* the store stays open while the wait runs */
  if (napi_queue_async_work(env, job->work) != napi_ok) return ljn_napi_failed(env);
  LJN_CALL(env, napi_create_array_with_length(env, 2, &pair));
  LJN_CALL(env, napi_set_element(env, pair, 0, promise));
  LJN_CALL(env, napi_set_element(env, pair, 1, handle));
  return pair;
}

/* --- the heartbeat ---------------------------------------------------------------------- */

typedef struct lost_note {
  int code;
  size_t len;
  char text[];
} lost_note;

/* On the heartbeat's thread: the loss queued for the main thread (never blocks). */
static void beat_lost(int code, const char* message, size_t message_len, void* payload) {
  napi_threadsafe_function fn = (napi_threadsafe_function)payload;
  lost_note* note = (lost_note*)malloc(sizeof *note + message_len + 1);
  if (note == NULL) return;
  note->code = code;
  note->len = message_len;
  memcpy(note->text, message, message_len);
  note->text[message_len] = '\0';
  if (napi_call_threadsafe_function(fn, note, napi_tsfn_nonblocking) != napi_ok) free(note);
}

/* On the main thread: onLost(code name, message). */
static void call_lost(napi_env env, napi_value js_fn, void* context, void* data) {
  lost_note* note = (lost_note*)data;
  (void)context;
  if (env != NULL && js_fn != NULL) {
    napi_value args[2], undefined, result;
    const char* name = ljn_code_name(note->code);
    if (napi_create_string_utf8(env, name, strlen(name), &args[0]) == napi_ok &&
        (args[1] = ljn_string(env, note->text, note->len)) != NULL && napi_get_undefined(env, &undefined) == napi_ok)
      napi_call_function(env, undefined, js_fn, 2, args, &result);
  }
  free(note);
}

/* The thread-safe function's end: after stop (b->beat NULL), or at the environment's
 * end with the heartbeat still running, which is stopped here first. */
static void beat_finalized(napi_env env, void* data, void* hint) {
  ljn_beat* b = (ljn_beat*)data;
  (void)env;
  (void)hint;
  if (b->beat != NULL) lj_lock_heartbeat_destroy(b->beat);
  if (b->lock != NULL) b->lock->beat = NULL;
  free(b);
}

/* lockHeartbeatStart(lock, onLost(code, message)). */
static napi_value beat_start(napi_env env, napi_callback_info info) {
  napi_value args[2], name, undefined;
  size_t argc = 2;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 2) return ljn_throw_type(env, "lockHeartbeatStart takes 2 arguments");
  ljn_lock* l = ljn_lock_of(env, args[0]);
  if (l == NULL || ljn_function_of(env, args[1], "onLost") != 0) return NULL;
  if (l->beat != NULL) return ljn_throw_code(env, LJ_EBUSY, NULL);
  ljn_beat* b = (ljn_beat*)calloc(1, sizeof *b);
  if (b == NULL) return ljn_throw_code(env, LJ_ENOMEM, NULL);
  if (napi_create_string_utf8(env, "leasejudge.heartbeat", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_threadsafe_function(env, args[1], NULL, name, 0, 1, b, beat_finalized, NULL, call_lost, &b->fn) !=
          napi_ok) {
    free(b);
    return ljn_napi_failed(env);
  }
  int rc = lj_lock_heartbeat_start(&b->beat, l->lock, beat_lost, b->fn, &err);
  if (rc != LJ_OK) {
    b->beat = NULL;
    napi_release_threadsafe_function(b->fn, napi_tsfn_release); /* frees b */
    return ljn_throw_code(env, rc, err);
  }
  b->lock = l;
  l->beat = b;
  /* A heartbeat does not keep the process alive; stop() or the lock's collection ends it. */
  LJN_CALL(env, napi_unref_threadsafe_function(env, b->fn));
  LJN_CALL(env, napi_get_undefined(env, &undefined));
  return undefined;
}

/* lockHeartbeatState(lock): { running, lost, renewals, retries }. */
static napi_value beat_state(napi_env env, napi_callback_info info) {
  napi_value arg, obj, running, lost, renewals, retries;
  size_t argc = 1;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  ljn_lock* l = ljn_lock_of(env, argc < 1 ? NULL : arg);
  if (l == NULL) return NULL;
  LJN_CALL(env, napi_create_object(env, &obj));
  const lj_lock_heartbeat_t* beat = l->beat != NULL ? l->beat->beat : NULL;
  LJN_CALL(env, napi_get_boolean(env, beat != NULL, &running));
  LJN_CALL(env, napi_get_boolean(env, lj_lock_heartbeat_lost(beat) != 0, &lost));
  LJN_CALL(env, napi_create_double(env, (double)lj_lock_heartbeat_renewals(beat), &renewals));
  LJN_CALL(env, napi_create_double(env, (double)lj_lock_heartbeat_retries(beat), &retries));
  if (ljn_set(env, obj, "running", running) != 0 || ljn_set(env, obj, "lost", lost) != 0 ||
      ljn_set(env, obj, "renewals", renewals) != 0 || ljn_set(env, obj, "retries", retries) != 0)
    return NULL;
  return obj;
}

/* lockHeartbeatStop(lock): waits for a renewal in flight; onLost is not called after. */
static napi_value beat_stop(napi_env env, napi_callback_info info) {
  napi_value arg, undefined;
  size_t argc = 1;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  ljn_lock* l = ljn_lock_of(env, argc < 1 ? NULL : arg);
  if (l == NULL) return NULL;
  ljn_lock_stop_beat(l);
  LJN_CALL(env, napi_get_undefined(env, &undefined));
  return undefined;
}

int ljn_hold_init(napi_env env, napi_value exports) {
  static const ljn_function fns[] = {
      {"lockAcquireWait", lock_wait},     {"lockWaitCancel", wait_cancel},  {"lockHeartbeatStart", beat_start},
      {"lockHeartbeatState", beat_state}, {"lockHeartbeatStop", beat_stop},
  };
  return ljn_define(env, exports, fns, sizeof fns / sizeof fns[0]);
}
