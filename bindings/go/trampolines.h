// The C functions of trampolines.c that Go calls: each wires the library's callbacks
// to the exported Go functions of trampolines.go, with a cgo.Handle as the payload.
#ifndef LEASEJUDGE_GO_TRAMPOLINES_H
#define LEASEJUDGE_GO_TRAMPOLINES_H

#include <stdint.h>

#include "leasejudge.h"

// A store over the Go backend behind handle; the store's release deletes the handle
// (also when opening fails).
int lj_go_store_open(lj_store_t **out, uintptr_t handle, lj_error_t **err);
// The same, with the backend's bulk read as the store's scan callback.
int lj_go_store_open_scan(lj_store_t **out, uintptr_t handle, lj_error_t **err);

// What Go says of a lock's options: plain values and C strings only, so Go can pass
// it on its stack; the wrappers below build lj_lock_options_t and lj_lock_here_t on
// the C stack from it (a struct holding a pointer to another must not be Go memory).
typedef struct lj_go_lock_setup_t {
  uintptr_t handle;   // the *lockCallbacks behind the callbacks (0: none)
  int describe;       // 1: call the Go describer; 0: gcloud on PATH
  int64_t gcloud_timeout_ms;
  int has_here;       // 0: this machine
  const char *host;
  size_t host_len;
  int machine_kind;
  const char *machine;
  size_t machine_len;
  int alive;          // 1: call the Go liveness check
  int owner_state;    // 1: call the Go owner judge
} lj_go_lock_setup_t;

int lj_go_lock_judge(lj_lock_verdict_t *out, const char *body, size_t body_len, int64_t now_ms,
                     const lj_go_lock_setup_t *setup, lj_error_t **err);
int lj_go_lock_acquire(lj_lock_t **out, lj_lock_acquisition_t *acquisition, lj_store_t *store, const char *key,
                       size_t key_len, const char *purpose, size_t purpose_len, const lj_lock_holder_t *holder,
                       int64_t now_ms, const lj_go_lock_setup_t *setup, lj_error_t **err);
// lj_lock_acquire_wait for up to wait_ms, cancelled once the context.Context behind
// ctx_handle is done.
int lj_go_lock_acquire_wait(lj_lock_t **out, lj_lock_acquisition_t *acquisition, lj_store_t *store, const char *key,
                            size_t key_len, const char *purpose, size_t purpose_len, const lj_lock_holder_t *holder,
                            int64_t wait_ms, uintptr_t ctx_handle, const lj_go_lock_setup_t *setup, lj_error_t **err);
// A heartbeat whose loss is told to the Go channel behind handle.
int lj_go_lock_heartbeat_start(lj_lock_heartbeat_t **out, lj_lock_t *lock, uintptr_t handle, lj_error_t **err);
// The lease directory verbs with the Go line sink and interruption behind handle
// (opts is C memory, its interrupted callback set here).
int lj_go_leasedir_run(int *exit_code, const char *const *args, size_t nargs, const char *default_root,
                       const char *default_pid, uintptr_t handle, lj_leasedir_options_t *opts, lj_error_t **err);
int lj_go_leasedir_touch(int *exit_code, const char *dir, size_t dir_len, const char *pid, size_t pid_len,
                         uintptr_t handle, lj_leasedir_options_t *opts, lj_error_t **err);
int lj_go_leasedir_live(int *exit_code, const char *dir, size_t dir_len, const char *exclude, size_t exclude_len,
                        int count_shared_harness, uintptr_t handle, lj_leasedir_options_t *opts, lj_error_t **err);
int lj_go_leasedir_list(int *exit_code, const char *dir, size_t dir_len, uintptr_t handle,
                        lj_leasedir_options_t *opts, lj_error_t **err);

// Every key of store, each handed to the Go slice behind handle.
int lj_go_store_keys_list(lj_store_t *store, uintptr_t handle, lj_error_t **err);

// The step options' callbacks, set to the Go functions behind handle (the options
// are C memory); each flag says whether Go has that callback.
void lj_go_plan_wire(lj_step_plan_options_t *opts, uintptr_t handle, int owner_state);
void lj_go_sweep_wire(lj_sweep_options_t *opts, uintptr_t handle, int owner_state, int log, int live, int on_key);

#endif
