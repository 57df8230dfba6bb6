// The C side of a step watch's stop: the library asks it, Go answers through the
// runtime/cgo.Handle in its payload (a number, never a Go pointer).
#include <stdint.h>

#include "leasejudge.h"
#include "_cgo_export.h"

static int lj_go_watch_stop(void *payload) {
  return goWatchStop((uintptr_t)payload);
}

int lj_go_watch_run(lj_step_watch_t *watch, lj_store_t *store, lj_step_watch_options_t *opts, uintptr_t handle,
                    lj_error_t **err) {
  opts->stop = lj_go_watch_stop;
  opts->payload = (void *)handle;
  return lj_step_watch_run(watch, store, opts, err);
}
