package leasejudge

// The step watch: a node's steps kept clean as a service, stopped by a context.

/*
#include <stdint.h>
#include <stdlib.h>
#include "leasejudge.h"
int lj_go_watch_run(lj_step_watch_t *watch, lj_store_t *store, lj_step_watch_options_t *opts, uintptr_t handle,
                    lj_error_t **err);
*/
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
	"time"
	"unsafe"
)

// WatchFigure names one of a StepWatch's figures; the numbers are the library's.
type WatchFigure int

const (
	WatchSweeps          WatchFigure = C.LJ_WATCH_SWEEPS             // whole sweeps: the start's, the rounds, after a gap
	WatchRounds          WatchFigure = C.LJ_WATCH_ROUNDS             // of those, the periodic rounds
	WatchChanges         WatchFigure = C.LJ_WATCH_CHANGES            // changes of keys the watch saw
	WatchEnds            WatchFigure = C.LJ_WATCH_ENDS               // steps ended
	WatchDeletes         WatchFigure = C.LJ_WATCH_DELETES            // asks deleted
	WatchChanged         WatchFigure = C.LJ_WATCH_CHANGED            // writes skipped: the key moved since it was read
	WatchUnknown         WatchFigure = C.LJ_WATCH_UNKNOWN            // writes whose acknowledgement never came
	WatchStoreErrors     WatchFigure = C.LJ_WATCH_STORE_ERRORS       // failed store calls
	WatchStoreTimeouts   WatchFigure = C.LJ_WATCH_STORE_TIMEOUTS     // waits past the store's patience, unknown writes
	WatchReconnects      WatchFigure = C.LJ_WATCH_RECONNECTS         // watches opened again after a failure
	WatchLastSweepNs     WatchFigure = C.LJ_WATCH_LAST_SWEEP_NS      // the last whole sweep's duration, in ns
	WatchLastSweepUnixNs WatchFigure = C.LJ_WATCH_LAST_SWEEP_UNIX_NS // when it ended (0: none yet)
	WatchLagNs           WatchFigure = C.LJ_WATCH_LAG_NS             // the last change's age when it was judged, in ns
	// When the last whole sweep that failed nothing ended (0: none yet).
	WatchLastCleanSweepUnixNs WatchFigure = C.LJ_WATCH_LAST_CLEAN_SWEEP_UNIX_NS
)

// WatchOptions are a StepWatch run's: the sweep's rules (nil: the package's, as for
// EndStaleWith), and its times (0: a round every minute, a polling store's scan
// every second, a backoff up to 30 s).
type WatchOptions struct {
	Sweep      *SweepOptions
	Interval   time.Duration
	Poll       time.Duration
	BackoffMax time.Duration
}

// StepWatch keeps a node's steps clean as a service: the start's sweep with its
// retries (EndStaleAtStart), each key judged as it changes (a KV watch on NATS,
// polling elsewhere), a whole sweep every interval. Each write lands at the revision
// read; a key moved since is skipped and counted. A lost store is logged and retried
// with backoff. Its figures may be read from any goroutine while it runs.
type StepWatch struct {
	p *C.lj_step_watch_t
}

// NewStepWatch is a watch of node's steps; before is this process's start, for steps
// with no owner (Boot when zero). Close releases it.
func NewStepWatch(node string, before time.Time) (*StepWatch, error) {
	if before.IsZero() {
		before = Boot
	}
	b, err := nsOf(before, "before")
	if err != nil {
		return nil, err
	}
	n, nn := cString(node)
	defer C.free(unsafe.Pointer(n))
	w := &StepWatch{}
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_step_watch_create(&w.p, n, nn, b, &cerr), cerr); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(w, (*StepWatch).Close)
	return w, nil
}

// Close releases the watch; not while it runs.
func (w *StepWatch) Close() {
	if w.p != nil {
		C.lj_step_watch_destroy(w.p)
		w.p = nil
	}
}

type watchStop struct{ ctx context.Context }

//export goWatchStop
func goWatchStop(handle C.uintptr_t) C.int {
	if cgo.Handle(handle).Value().(*watchStop).ctx.Err() != nil {
		return 1
	}
	return 0
}

func durationMs(d, fallback time.Duration) C.int64_t {
	if d == 0 {
		d = fallback
	}
	if d < time.Millisecond && d > 0 {
		d = time.Millisecond
	}
	return C.int64_t(d / time.Millisecond)
}

// Run watches through store until ctx is done (nil), logging through logf. The first
// run starts with the start's sweep; a later one (a store opened again) with a round.
// A failing store never ends it. An error for options it cannot use, or the error
// of a SweepOptions.OnKey that stopped it.
func (w *StepWatch) Run(ctx context.Context, store *Store, logf func(string, ...any), opts *WatchOptions) error {
	if w.p == nil {
		return &Error{Code: ErrInvalid, Message: "the watch is closed"}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var o WatchOptions
	if opts != nil {
		o = *opts
	}
	if o.Interval < 0 || o.Poll < 0 || o.BackoffMax < 0 {
		return &Error{Code: ErrInvalid, Message: "a watch's times are 0 (the defaults) or positive"}
	}
	so, cb, free, err := sweepOptions(o.Sweep, logf, nil)
	if err != nil {
		return err
	}
	defer free()
	c := (*C.lj_step_watch_options_t)(C.malloc(C.sizeof_lj_step_watch_options_t))
	defer C.free(unsafe.Pointer(c))
	C.lj_step_watch_options_init(c, C.LJ_STEP_WATCH_OPTIONS_VERSION)
	c.sweep = so
	c.interval_ms = durationMs(o.Interval, time.Minute)
	c.poll_ms = durationMs(o.Poll, time.Second)
	c.backoff_max_ms = durationMs(o.BackoffMax, 30*time.Second)
	h := cgo.NewHandle(&watchStop{ctx: ctx})
	defer h.Delete()
	err = store.use(func(p *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_go_watch_run(w.p, p, c, C.uintptr_t(h), &cerr), cerr)
	})
	runtime.KeepAlive(w)
	return sweepError(err, store, cb)
}

// Figure is one of the watch's figures, now.
func (w *StepWatch) Figure(f WatchFigure) uint64 {
	defer runtime.KeepAlive(w)
	return uint64(C.lj_step_watch_figure(w.p, C.int(f)))
}

// Judged is how many keys the watch judged with reason, in sweeps and as they changed.
func (w *StepWatch) Judged(r StepReason) uint64 {
	defer runtime.KeepAlive(w)
	return uint64(C.lj_step_watch_judged(w.p, C.int(r)))
}
