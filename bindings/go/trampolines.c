// The C side of the Go callbacks: functions of the shapes leasejudge.h asks for,
// each turning its void *payload back into the runtime/cgo.Handle it carries and
// calling the exported Go function of trampolines.go. C never holds a Go pointer:
// a payload is a handle, a number.
#include <stdint.h>

#include "leasejudge.h"
#include "trampolines.h"
#include "_cgo_export.h"

static int lj_go_store_keys(lj_store_sink_t *sink, void *payload) {
  return goStoreKeys(sink, (uintptr_t)payload);
}

static int lj_go_store_get(lj_store_sink_t *sink, const char *key, size_t key_len, void *payload) {
  return goStoreGet(sink, (char *)key, key_len, (uintptr_t)payload);
}

static int lj_go_store_update(uint64_t *out_revision, const char *key, size_t key_len, const char *value,
                              size_t value_len, uint64_t revision, void *payload) {
  return goStoreUpdate(out_revision, (char *)key, key_len, (char *)value, value_len, revision, (uintptr_t)payload);
}

static int lj_go_store_create(uint64_t *out_revision, const char *key, size_t key_len, const char *value,
                              size_t value_len, void *payload) {
  return goStoreCreate(out_revision, (char *)key, key_len, (char *)value, value_len, (uintptr_t)payload);
}

static int lj_go_store_remove(const char *key, size_t key_len, uint64_t revision, void *payload) {
  return goStoreRemove((char *)key, key_len, revision, (uintptr_t)payload);
}

static void lj_go_store_release(void *payload) { goStoreRelease((uintptr_t)payload); }

static int lj_go_store_scan(lj_store_sink_t *sink, const char *prefix, size_t prefix_len, void *payload) {
  return goStoreScan(sink, (char *)prefix, prefix_len, (uintptr_t)payload);
}

static int lj_go_store_open_with(lj_store_t **out, uintptr_t handle, int scan, lj_error_t **err) {
  lj_store_callbacks_t callbacks = LJ_STORE_CALLBACKS_INIT;
  callbacks.keys = lj_go_store_keys;
  callbacks.get = lj_go_store_get;
  callbacks.update = lj_go_store_update;
  callbacks.create = lj_go_store_create;
  callbacks.remove = lj_go_store_remove;
  callbacks.release = lj_go_store_release;
  if (scan) callbacks.scan = lj_go_store_scan;
  return lj_store_from_callbacks(out, &callbacks, (void *)handle, err);
}

int lj_go_store_open(lj_store_t **out, uintptr_t handle, lj_error_t **err) {
  return lj_go_store_open_with(out, handle, 0, err);
}

int lj_go_store_open_scan(lj_store_t **out, uintptr_t handle, lj_error_t **err) {
  return lj_go_store_open_with(out, handle, 1, err);
}

static int lj_go_lock_describe(lj_execution_state_t *state, const lj_execution_ref_t *ref, void *payload) {
  return goLockDescribe(state, (char *)ref->project_id, ref->project_id_len, (char *)ref->region, ref->region_len,
                        (char *)ref->name, ref->name_len, (uintptr_t)payload);
}

static int lj_go_lock_alive(int *out_alive, double pid, void *payload) {
  return goLockAlive(out_alive, pid, (uintptr_t)payload);
}

static int lj_go_lock_owner_state(lj_holder_state_t *out_state, const char *token, size_t token_len,
                                  void *payload) {
  return goLockOwnerState(out_state, (char *)token, token_len, (uintptr_t)payload);
}

// Build the options of setup into opts and here (both the caller's, on its stack).
static void lj_go_lock_options(lj_lock_options_t *opts, lj_lock_here_t *here, const lj_go_lock_setup_t *setup) {
  lj_lock_options_init(opts, LJ_LOCK_OPTIONS_VERSION);
  lj_lock_here_init(here, LJ_LOCK_HERE_VERSION);
  if (setup == NULL) return;
  void *payload = (void *)setup->handle;
  if (setup->describe) {
    opts->describe = lj_go_lock_describe;
    opts->describe_payload = payload;
  }
  if (setup->gcloud_timeout_ms > 0) opts->gcloud_timeout_ms = setup->gcloud_timeout_ms;
  if (setup->has_here) {
    here->host = setup->host;
    here->host_len = setup->host_len;
    here->machine_kind = setup->machine_kind;
    here->machine = setup->machine;
    here->machine_len = setup->machine_len;
    if (setup->alive) here->alive = lj_go_lock_alive;
    if (setup->owner_state) here->owner_state = lj_go_lock_owner_state;
    here->payload = payload;
    opts->here = here;
  }
}

int lj_go_lock_judge(lj_lock_verdict_t *out, const char *body, size_t body_len, int64_t now_ms,
                     const lj_go_lock_setup_t *setup, lj_error_t **err) {
  lj_lock_options_t opts;
  lj_lock_here_t here;
  lj_go_lock_options(&opts, &here, setup);
  return lj_lock_judge(out, body, body_len, now_ms, &opts, err);
}

int lj_go_lock_acquire(lj_lock_t **out, lj_lock_acquisition_t *acquisition, lj_store_t *store, const char *key,
                       size_t key_len, const char *purpose, size_t purpose_len, const lj_lock_holder_t *holder,
                       int64_t now_ms, const lj_go_lock_setup_t *setup, lj_error_t **err) {
  lj_lock_options_t opts;
  lj_lock_here_t here;
  lj_go_lock_options(&opts, &here, setup);
  return lj_lock_acquire(out, acquisition, store, key, key_len, purpose, purpose_len, holder, now_ms, &opts, err);
}

static int lj_go_context_done(void *payload) { return goContextDone((uintptr_t)payload); }

int lj_go_lock_acquire_wait(lj_lock_t **out, lj_lock_acquisition_t *acquisition, lj_store_t *store, const char *key,
                            size_t key_len, const char *purpose, size_t purpose_len, const lj_lock_holder_t *holder,
                            int64_t wait_ms, uintptr_t ctx_handle, const lj_go_lock_setup_t *setup, lj_error_t **err) {
  lj_lock_options_t opts;
  lj_lock_here_t here;
  lj_lock_wait_options_t wait = LJ_LOCK_WAIT_OPTIONS_INIT;
  lj_go_lock_options(&opts, &here, setup);
  wait.wait_ms = wait_ms;
  wait.cancelled = lj_go_context_done;
  wait.payload = (void *)ctx_handle;
  return lj_lock_acquire_wait(out, acquisition, store, key, key_len, purpose, purpose_len, holder, &wait, &opts, err);
}

static void lj_go_lock_lost(int code, const char *message, size_t len, void *payload) {
  goLockLost(code, (char *)message, len, (uintptr_t)payload);
}

int lj_go_lock_heartbeat_start(lj_lock_heartbeat_t **out, lj_lock_t *lock, uintptr_t handle, lj_error_t **err) {
  return lj_lock_heartbeat_start(out, lock, lj_go_lock_lost, (void *)handle, err);
}

static int lj_go_lease_line(int stream, const char *line, size_t len, void *payload) {
  return goLeaseLine(stream, (char *)line, len, (uintptr_t)payload);
}

static int lj_go_lease_interrupted(void *payload) { return goLeaseInterrupted((uintptr_t)payload); }

static void lj_go_lease_wire(lj_leasedir_options_t *opts, uintptr_t handle) {
  opts->interrupted = lj_go_lease_interrupted;
  opts->interrupted_payload = (void *)handle;
}

int lj_go_leasedir_run(int *exit_code, const char *const *args, size_t nargs, const char *default_root,
                       const char *default_pid, uintptr_t handle, lj_leasedir_options_t *opts, lj_error_t **err) {
  lj_go_lease_wire(opts, handle);
  return lj_leasedir_run(exit_code, args, nargs, default_root, default_pid, lj_go_lease_line, (void *)handle, opts,
                         err);
}

int lj_go_leasedir_touch(int *exit_code, const char *dir, size_t dir_len, const char *pid, size_t pid_len,
                         uintptr_t handle, lj_leasedir_options_t *opts, lj_error_t **err) {
  lj_go_lease_wire(opts, handle);
  return lj_leasedir_touch(exit_code, dir, dir_len, pid, pid_len, lj_go_lease_line, (void *)handle, opts, err);
}

int lj_go_leasedir_live(int *exit_code, const char *dir, size_t dir_len, const char *exclude, size_t exclude_len,
                        int count_shared_harness, uintptr_t handle, lj_leasedir_options_t *opts, lj_error_t **err) {
  lj_go_lease_wire(opts, handle);
  return lj_leasedir_live(exit_code, dir, dir_len, exclude, exclude_len, count_shared_harness, lj_go_lease_line,
                          (void *)handle, opts, err);
}

int lj_go_leasedir_list(int *exit_code, const char *dir, size_t dir_len, uintptr_t handle,
                        lj_leasedir_options_t *opts, lj_error_t **err) {
  lj_go_lease_wire(opts, handle);
  return lj_leasedir_list(exit_code, dir, dir_len, lj_go_lease_line, (void *)handle, opts, err);
}

static int lj_go_store_key_each(const char *key, size_t key_len, void *payload) {
  return goStoreKeyEach((char *)key, key_len, (uintptr_t)payload);
}

int lj_go_store_keys_list(lj_store_t *store, uintptr_t handle, lj_error_t **err) {
  return lj_store_keys(store, lj_go_store_key_each, (void *)handle, err);
}

static int lj_go_step_owner_state(lj_holder_state_t *out_state, const char *token, size_t token_len, void *payload) {
  return goStepOwnerState(out_state, (char *)token, token_len, (uintptr_t)payload);
}

static int lj_go_sweep_log(const char *line, size_t line_len, void *payload) {
  return goSweepLog((char *)line, line_len, (uintptr_t)payload);
}

static int lj_go_sweep_live(int *out_live, const char *id, size_t id_len, void *payload) {
  return goSweepLive(out_live, (char *)id, id_len, (uintptr_t)payload);
}

void lj_go_plan_wire(lj_step_plan_options_t *opts, uintptr_t handle, int owner_state) {
  opts->owner_state = owner_state ? lj_go_step_owner_state : NULL;
  opts->payload = (void *)handle;
}

static int lj_go_sweep_on_key(const lj_sweep_key_t *key, void *payload) {
  return goSweepOnKey((lj_sweep_key_t *)key, (uintptr_t)payload);
}

void lj_go_sweep_wire(lj_sweep_options_t *opts, uintptr_t handle, int owner_state, int log, int live, int on_key) {
  opts->owner_state = owner_state ? lj_go_step_owner_state : NULL;
  opts->log = log ? lj_go_sweep_log : NULL;
  opts->live = live ? lj_go_sweep_live : NULL;
  opts->on_key = on_key ? lj_go_sweep_on_key : NULL;
  opts->payload = (void *)handle;
}
