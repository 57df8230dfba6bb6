package leasejudge

/*
#include <stdlib.h>
#include "leasejudge.h"
#include "trampolines.h"
*/
import "C"

import (
	"context"
	"errors"
	"math"
	"runtime"
	"runtime/cgo"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// A lock is one store key whose body (JSON) names its holder: a Cloud Run job
// execution with a lease of its longest run, or a process (host, machine id, pid)
// with a short lease it renews while it runs. Bodies are read and written exactly as
// the JavaScript lock-lease code does, so both can share a lock.
//
// The verdict on a held lock is LockBreak (the holder is provably gone), LockHeld
// (alive, or not provably gone; ManualRemoval says only a person can clear it) or
// LockUnknown (Cloud Run could not be asked: report it, never treat it as gone),
// with a stable reason and a sentence naming the holder. Judging never breaks on
// missing evidence.

// ProcessLease is a process holder's default lease, renewed every third of it.
const ProcessLease = time.Duration(C.LJ_LOCK_PROCESS_LEASE_MS) * time.Millisecond

// LeaseSkew is added to every lease for clock skew between holder and judge.
const LeaseSkew = time.Duration(C.LJ_LOCK_LEASE_SKEW_MS) * time.Millisecond

// LockKind is what a verdict allows.
type LockKind int

// The kinds of lj_lock_kind_t.
const (
	LockBreak   = LockKind(C.LJ_LOCK_BREAK)
	LockHeld    = LockKind(C.LJ_LOCK_HELD)
	LockUnknown = LockKind(C.LJ_LOCK_UNKNOWN)
)

// String is "break", "held" or "unknown".
func (k LockKind) String() string {
	if s := C.GoString(C.lj_lock_kind_name(C.int(k))); s != "" {
		return s
	}
	return "LockKind(" + strconv.Itoa(int(k)) + ")"
}

// LockReason is why a verdict is what it is; the numbers never change.
type LockReason int

// The reasons of lj_lock_reason_t.
const (
	LockNotReadable                 = LockReason(C.LJ_LOCK_NOT_READABLE)                    // held, manual removal: not a lock body
	LockExecutionFinished           = LockReason(C.LJ_LOCK_EXECUTION_FINISHED)              // break
	LockExecutionRunning            = LockReason(C.LJ_LOCK_EXECUTION_RUNNING)               // held, whatever its lease
	LockExecutionNotFoundNoLease    = LockReason(C.LJ_LOCK_EXECUTION_NOT_FOUND_NO_LEASE)    // held, manual removal
	LockExecutionNotFoundLeaseEnded = LockReason(C.LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_ENDED) // break
	LockExecutionNotFoundLeaseRuns  = LockReason(C.LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_RUNS)  // held
	LockExecutionUnknown            = LockReason(C.LJ_LOCK_EXECUTION_UNKNOWN)               // unknown
	LockProcessGone                 = LockReason(C.LJ_LOCK_PROCESS_GONE)                    // break: its pid is dead here
	LockNoLease                     = LockReason(C.LJ_LOCK_NO_LEASE)                        // held, manual removal
	LockLeaseUnreadable             = LockReason(C.LJ_LOCK_LEASE_UNREADABLE)                // held, manual removal
	LockLeaseEnded                  = LockReason(C.LJ_LOCK_LEASE_ENDED)                     // break: it stopped renewing
	LockLeaseRuns                   = LockReason(C.LJ_LOCK_LEASE_RUNS)                      // held
	LockHolderRebooted              = LockReason(C.LJ_LOCK_HOLDER_REBOOTED)                 // break: this machine restarted since
	LockPidReused                   = LockReason(C.LJ_LOCK_PID_REUSED)                      // break: its pid is another process now
	LockStoreLeaseEnded             = LockReason(C.LJ_LOCK_STORE_LEASE_ENDED)               // break: the store (etcd) ended the key's lease
	LockStoreLeaseUnknown           = LockReason(C.LJ_LOCK_STORE_LEASE_UNKNOWN)             // unknown: the key's store lease could not be read
)

// String is the reason's stable snake_case code ("lease_ended").
func (r LockReason) String() string {
	if s := C.GoString(C.lj_lock_reason_code(C.int(r))); s != "" {
		return s
	}
	return "LockReason(" + strconv.Itoa(int(r)) + ")"
}

// LockVerdict is a judgement of a lock body.
type LockVerdict struct {
	Kind          LockKind
	Reason        LockReason
	ManualRemoval bool   // held only: only a person can clear the lock
	Why           string // names the holder, its start and the deciding fact
}

// cVerdict is v for a call that reads it; free with C.free of its why.
func (v LockVerdict) cVerdict() C.lj_lock_verdict_t {
	var c C.lj_lock_verdict_t
	c.kind = C.lj_lock_kind_t(v.Kind)
	c.reason = C.lj_lock_reason_t(v.Reason)
	if v.ManualRemoval {
		c.manual_removal = 1
	}
	c.why, c.why_len = cString(v.Why)
	return c
}

// Text is the verdict as `<kind> <reason code> <why>`.
func (v LockVerdict) Text() (string, error) {
	c := v.cVerdict()
	defer C.free(unsafe.Pointer(c.why))
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_lock_verdict_text(&out, &n, &c, &cerr), cerr); err != nil {
		return "", err
	}
	return takeString(out, n), nil
}

// JSON is the verdict as {"kind","reason","manualRemoval","why"}.
func (v LockVerdict) JSON() ([]byte, error) {
	c := v.cVerdict()
	defer C.free(unsafe.Pointer(c.why))
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_lock_verdict_json(&out, &n, &c, &cerr), cerr); err != nil {
		return nil, err
	}
	return []byte(takeString(out, n)), nil
}

// takeVerdict copies a verdict the library filled and clears it.
func takeVerdict(c *C.lj_lock_verdict_t) LockVerdict {
	v := LockVerdict{Kind: LockKind(c.kind), Reason: LockReason(c.reason), ManualRemoval: c.manual_removal != 0,
		Why: goString(c.why, c.why_len)}
	C.lj_lock_verdict_clear(c)
	return v
}

// Execution is a Cloud Run job execution, fully addressed.
type Execution struct {
	ProjectID, Region string
	Name              string // the execution's short name (CLOUD_RUN_EXECUTION)
}

// ExecutionKind is what Cloud Run says of an execution.
type ExecutionKind int

// The kinds of lj_execution_kind_t.
const (
	ExecutionRunning  = ExecutionKind(C.LJ_EXECUTION_RUNNING)
	ExecutionFinished = ExecutionKind(C.LJ_EXECUTION_FINISHED)  // Detail: how ("succeeded", "cancelled", ...)
	ExecutionNotFound = ExecutionKind(C.LJ_EXECUTION_NOT_FOUND) // Cloud Run does not know it
	ExecutionUnknown  = ExecutionKind(C.LJ_EXECUTION_UNKNOWN)   // Cloud Run could not be asked; Detail: why
)

// ExecutionState is an execution's state and its detail.
type ExecutionState struct {
	Kind   ExecutionKind
	Detail string
}

// A Describer looks an execution up. It is called only for a body naming an
// execution; a Kind out of range counts as ExecutionUnknown.
type Describer func(Execution) ExecutionState

func execRef(e Execution) (C.lj_execution_ref_t, func()) {
	var r C.lj_execution_ref_t
	r.project_id, r.project_id_len = cString(e.ProjectID)
	r.region, r.region_len = cString(e.Region)
	r.name, r.name_len = cString(e.Name)
	return r, func() {
		C.free(unsafe.Pointer(r.project_id))
		C.free(unsafe.Pointer(r.region))
		C.free(unsafe.Pointer(r.name))
	}
}

// DescribeExecution runs `gcloud run jobs executions describe` (gcloud on PATH, no
// shell) with a timeout (<= 0: 60 s) and reads its answer. A gcloud that cannot be
// run or times out is ExecutionUnknown with the reason, not an error.
func DescribeExecution(e Execution, timeout time.Duration) (ExecutionState, error) {
	ref, free := execRef(e)
	defer free()
	var kind C.lj_execution_kind_t
	var detail *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_execution_describe(&kind, &detail, &n, &ref, C.int64_t(timeout/time.Millisecond), &cerr), cerr); err != nil {
		return ExecutionState{Kind: ExecutionUnknown}, err
	}
	return ExecutionState{Kind: ExecutionKind(kind), Detail: takeString(detail, n)}, nil
}

// ParseExecutionState reads what `gcloud run jobs executions describe
// --format=json` answered, as the JavaScript code does: exit code 0 reads stdout,
// any other lets stderr decide between ExecutionNotFound and ExecutionUnknown.
func ParseExecutionState(exitCode int, stdout, stderr []byte) (ExecutionState, error) {
	var kind C.lj_execution_kind_t
	var detail *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	// A nil slice is taken with a length of 0; empty and absent are the same here.
	rc := C.lj_execution_state_parse(&kind, &detail, &n, C.int(exitCode), nonNil(stdout), C.size_t(len(stdout)),
		nonNil(stderr), C.size_t(len(stderr)), &cerr)
	if err := errorOf(rc, cerr); err != nil {
		return ExecutionState{Kind: ExecutionUnknown}, err
	}
	return ExecutionState{Kind: ExecutionKind(kind), Detail: takeString(detail, n)}, nil
}

// nonNil is the address of b's bytes, or of a static empty string for an empty b:
// some entry points refuse a NULL pointer even with a length of 0.
func nonNil(b []byte) *C.char {
	if len(b) == 0 {
		return emptyC
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

var emptyC = C.CString("")

// MachineKind says what a judge knows of its machine.
type MachineKind int

// The kinds of lj_machine_kind_t.
const (
	MachineAbsent = MachineKind(C.LJ_MACHINE_ABSENT) // no machine id stated: host names are compared
	MachineNone   = MachineKind(C.LJ_MACHINE_NONE)   // no machine id (Cloud Run): a pid is never trusted
	MachineWithID = MachineKind(C.LJ_MACHINE_ID)     // Machine is its id
)

// Here is the judging machine, for tests and for judging on another's behalf.
type Here struct {
	Host        string
	MachineKind MachineKind
	Machine     string // with MachineWithID
	// Alive says whether pid lives (or cannot be told dead); nil: kill(pid, 0) here.
	Alive func(pid float64) bool
	// OwnerState judges an owner token; nil: judged on this machine.
	OwnerState func(token string) HolderState
}

// LockOptions tune judging and acquiring; nil means the defaults.
type LockOptions struct {
	Describe      Describer     // nil: gcloud on PATH
	GcloudTimeout time.Duration // <= 0: 60 s
	Here          *Here         // nil: this machine
}

// lockSetup is opts for a C call; done frees it and says what a callback failed with.
func lockSetup(opts *LockOptions) (setup C.lj_go_lock_setup_t, cb *lockCallbacks, done func()) {
	var frees []unsafe.Pointer
	free := func() {
		for _, p := range frees {
			C.free(p)
		}
	}
	if opts == nil {
		return setup, nil, free
	}
	cb = &lockCallbacks{describe: opts.Describe}
	setup.gcloud_timeout_ms = C.int64_t(opts.GcloudTimeout / time.Millisecond)
	if opts.Describe != nil {
		setup.describe = 1
	}
	if h := opts.Here; h != nil {
		setup.has_here = 1
		setup.host, setup.host_len = cString(h.Host)
		setup.machine, setup.machine_len = cString(h.Machine)
		frees = append(frees, unsafe.Pointer(setup.host), unsafe.Pointer(setup.machine))
		setup.machine_kind = C.int(h.MachineKind)
		if h.Alive != nil {
			setup.alive, cb.alive = 1, h.Alive
		}
		if h.OwnerState != nil {
			setup.owner_state, cb.ownerState = 1, h.OwnerState
		}
	}
	handle := cgo.NewHandle(cb)
	setup.handle = C.uintptr_t(handle)
	return setup, cb, func() {
		handle.Delete()
		free()
	}
}

// msOf is t in milliseconds since the epoch; the zero time is the library's now.
func msOf(t time.Time) C.int64_t {
	if t.IsZero() {
		return C.int64_t(math.MinInt64) // LJ_TIME_DEFAULT
	}
	return C.int64_t(t.UnixMilli())
}

// JudgeLock decides whether the lock with this body may be broken, at now (the zero
// time: the clock). A body that is not readable is a held verdict, not an error.
// An error means a callback stopped the work (it panicked) or bad options.
func JudgeLock(body []byte, now time.Time, opts *LockOptions) (LockVerdict, error) {
	setup, cb, done := lockSetup(opts)
	defer done()
	var v C.lj_lock_verdict_t
	var cerr *C.lj_error_t
	rc := C.lj_go_lock_judge(&v, nonNil(body), C.size_t(len(body)), msOf(now), &setup, &cerr)
	if err := errorOf(rc, cerr); err != nil {
		return LockVerdict{Kind: LockUnknown}, withCallbackError(err, cb.took())
	}
	return takeVerdict(&v), nil
}

// withCallbackError puts what a Go callback failed with under err.
func withCallbackError(err, cause error) error {
	var e *Error
	if cause != nil && errors.As(err, &e) && e.Err == nil {
		e.Err = cause
	}
	return err
}

// LockHolderKind says who holds a lock a body is made for.
type LockHolderKind int

// The kinds of lj_lock_holder_kind_t.
const (
	LockHolderNone      = LockHolderKind(C.LJ_LOCK_HOLDER_NONE)      // no lease: judged by its pid alone
	LockHolderProcess   = LockHolderKind(C.LJ_LOCK_HOLDER_PROCESS)   // Lease is its lease
	LockHolderExecution = LockHolderKind(C.LJ_LOCK_HOLDER_EXECUTION) // Lease is its longest run
)

// LockHolder is who takes a lock; nil means a process with ProcessLease.
type LockHolder struct {
	Kind      LockHolderKind
	Lease     time.Duration
	Execution Execution // with LockHolderExecution
}

func cHolder(h *LockHolder) (*C.lj_lock_holder_t, func()) {
	if h == nil {
		return nil, func() {}
	}
	c := (*C.lj_lock_holder_t)(C.malloc(C.sizeof_lj_lock_holder_t))
	C.lj_lock_holder_init(c, C.LJ_LOCK_HOLDER_VERSION)
	c.kind = C.int(h.Kind)
	c.lease_ms = C.int64_t(h.Lease / time.Millisecond)
	ref, free := execRef(h.Execution)
	c.execution = ref
	return c, func() {
		free()
		C.free(unsafe.Pointer(c))
	}
}

// NewLockBody is a new body for this process taking a lock: purpose, id (empty: a
// fresh UUID), host, machine id, pid, the start now, the lease (now + lease + skew).
// ErrInvalid for text that is not UTF-8 or an execution with an empty field.
func NewLockBody(purpose string, now time.Time, holder *LockHolder, id string) ([]byte, error) {
	p, pn := cString(purpose)
	defer C.free(unsafe.Pointer(p))
	i, in := cString(id)
	defer C.free(unsafe.Pointer(i))
	h, free := cHolder(holder)
	defer free()
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_lock_body_new(&out, &n, p, pn, msOf(now), h, i, in, &cerr), cerr); err != nil {
		return nil, err
	}
	return []byte(takeString(out, n)), nil
}

// RenewLockBody is body with its lease moved to now + lease + skew, the rest kept.
// ErrParse when body is not a readable lock body.
func RenewLockBody(body []byte, now time.Time, lease time.Duration) ([]byte, error) {
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	rc := C.lj_lock_body_renew(&out, &n, nonNil(body), C.size_t(len(body)), msOf(now), C.int64_t(lease/time.Millisecond), &cerr)
	if err := errorOf(rc, cerr); err != nil {
		return nil, err
	}
	return []byte(takeString(out, n)), nil
}

// LockBodyID is a body's acquisition id. ErrParse: not readable; ErrNotFound: no id.
func LockBodyID(body []byte) (string, error) {
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_lock_body_id(&out, &n, nonNil(body), C.size_t(len(body)), &cerr), cerr); err != nil {
		return "", err
	}
	return takeString(out, n), nil
}

// FormatLockTime is t as lock bodies write it (JavaScript's toISOString()).
func FormatLockTime(t time.Time) (string, error) {
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_lock_time_format(&out, &n, C.int64_t(t.UnixMilli()), &cerr), cerr); err != nil {
		return "", err
	}
	return takeString(out, n), nil
}

// ParseLockTime reads a time as lock bodies are read (JavaScript's Date.parse, ISO
// forms only). ErrParse when text is no readable time.
func ParseLockTime(text string) (time.Time, error) {
	p, n := cString(text)
	defer C.free(unsafe.Pointer(p))
	var ms C.int64_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_lock_time_parse(&ms, p, n, &cerr), cerr); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(ms)).UTC(), nil
}

// --- the lock's life on a store ---------------------------------------------------

// AcquireOutcome is what an acquisition came to.
type AcquireOutcome int

// The outcomes of lj_lock_outcome_t.
const (
	Acquired        = AcquireOutcome(C.LJ_ACQUIRE_ACQUIRED)  // the lock is ours
	AcquireHeld     = AcquireOutcome(C.LJ_ACQUIRE_HELD)      // a live (or not provably gone) holder keeps it
	AcquireUnknown  = AcquireOutcome(C.LJ_ACQUIRE_UNKNOWN)   // the holder could not be checked
	AcquireLostRace = AcquireOutcome(C.LJ_ACQUIRE_LOST_RACE) // another writer moved the key meanwhile: not retried
)

func (o AcquireOutcome) String() string {
	switch o {
	case Acquired:
		return "acquired"
	case AcquireHeld:
		return "held"
	case AcquireUnknown:
		return "unknown"
	case AcquireLostRace:
		return "lost-race"
	}
	return "AcquireOutcome(" + strconv.Itoa(int(o)) + ")"
}

// Acquisition says what taking a lock found and did.
type Acquisition struct {
	Outcome  AcquireOutcome
	Verdict  *LockVerdict // the verdict on the holder found, or nil when there was none
	BrokeAt  uint64       // the revision of the body broken; 0 when none
	Revision uint64       // Acquired: our body's revision, the fencing token
}

// A Lock is a lock this process holds on a store. It keeps its store open; Close it
// (after Release) to forget it. Its methods may be called from several goroutines.
type Lock struct {
	mu    sync.Mutex
	ptr   *C.lj_lock_t
	beat  *C.lj_lock_heartbeat_t // while Heartbeat runs
	ended chan struct{}          // closed when that heartbeat is stopped
	store *Store
}

// AcquireLock takes the lock at key in store for purpose: creates it when absent;
// when held, judges the holder and on a break deletes its body at the revision judged,
// then creates ours. The *Lock is non-nil only when the outcome is Acquired; every
// outcome is a nil error. Errors are the store's, or a callback that panicked.
func AcquireLock(store *Store, key, purpose string, holder *LockHolder, now time.Time, opts *LockOptions) (*Lock, Acquisition, error) {
	args := newAcquireArgs(key, purpose, holder, opts)
	defer args.free()
	var out *C.lj_lock_t
	var acq C.lj_lock_acquisition_t
	err := store.use(func(sp *C.lj_store_t) error {
		var cerr *C.lj_error_t
		rc := C.lj_go_lock_acquire(&out, &acq, sp, args.key, args.keyLen, args.purpose, args.purposeLen, args.holder,
			msOf(now), &args.setup, &cerr)
		return withCallbackError(errorOf(rc, cerr), args.cb.took())
	})
	defer C.lj_lock_acquisition_clear(&acq)
	if err != nil {
		return nil, Acquisition{Outcome: AcquireUnknown}, err
	}
	l, a := acquired(store, out, &acq)
	return l, a, nil
}

// LockLeaseAsTaken is OpenLock's lease for the lease the lock was taken with, which the
// bodies leasejudge writes record (the C ABI's LJ_LOCK_LEASE_AS_TAKEN).
const LockLeaseAsTaken = time.Duration(C.LJ_LOCK_LEASE_AS_TAKEN) * time.Millisecond

// OpenLock is a handle for the lock at key while its body is the one with acquisition
// id (a Lock's ID), to renew or release a lock taken before, by another process or run:
// lease is its lease for renewal in whole milliseconds (0: none), or LockLeaseAsTaken.
// ErrNotFound: no lock; ErrChanged: someone else's body now; ErrInvalid for an empty
// key or id, or a lease the C ABI refuses.
func OpenLock(store *Store, key, id string, lease time.Duration) (*Lock, error) {
	k, kn := cString(key)
	defer C.free(unsafe.Pointer(k))
	i, in := cString(id)
	defer C.free(unsafe.Pointer(i))
	var out *C.lj_lock_t
	err := store.use(func(sp *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_lock_open(&out, sp, k, kn, i, in, C.int64_t(lease/time.Millisecond), &cerr), cerr)
	})
	if err != nil {
		return nil, err
	}
	l := &Lock{ptr: out, store: store}
	runtime.SetFinalizer(l, (*Lock).Close)
	return l, nil
}

// An acquisition's arguments as the C ABI takes them; free releases them.
type acquireArgs struct {
	key, purpose       *C.char
	keyLen, purposeLen C.size_t
	holder             *C.lj_lock_holder_t
	setup              C.lj_go_lock_setup_t
	cb                 *lockCallbacks
	free               func()
}

func newAcquireArgs(key, purpose string, holder *LockHolder, opts *LockOptions) *acquireArgs {
	a := &acquireArgs{}
	a.key, a.keyLen = cString(key)
	a.purpose, a.purposeLen = cString(purpose)
	var freeHolder, done func()
	a.holder, freeHolder = cHolder(holder)
	a.setup, a.cb, done = lockSetup(opts)
	a.free = func() {
		done()
		freeHolder()
		C.free(unsafe.Pointer(a.purpose))
		C.free(unsafe.Pointer(a.key))
	}
	return a
}

// What an acquisition answered, its verdict taken (acq is still the caller's to
// clear), and the lock when it was taken.
func acquired(store *Store, out *C.lj_lock_t, acq *C.lj_lock_acquisition_t) (*Lock, Acquisition) {
	a := Acquisition{Outcome: AcquireOutcome(acq.outcome), BrokeAt: uint64(acq.broke_at), Revision: uint64(acq.revision)}
	if acq.has_verdict != 0 {
		v := takeVerdict(&acq.verdict)
		a.Verdict = &v
	}
	if out == nil {
		return nil, a
	}
	l := &Lock{ptr: out, store: store}
	runtime.SetFinalizer(l, (*Lock).Close)
	return l, a
}

// The longest wait one call of the C ABI takes (a day): AcquireWait waits longer in
// turns of it.
const waitTurn = 24 * time.Hour

// AcquireWait takes the lock as AcquireLock does (with the clock's now), trying
// again with a backoff (50 ms doubling up to 1 s) while a live holder keeps it, its
// holder is unknown or a race is lost, until the lock is ours or ctx is done. A
// holder provably gone is broken at once. ctx's end is seen within 20 ms: it returns
// ctx.Err() then, with nothing of ours left in the store. Errors are the store's (a
// write whose outcome is unknown ends the wait: it is never tried again), or a
// callback that panicked.
func AcquireWait(ctx context.Context, store *Store, key, purpose string, holder *LockHolder, opts *LockOptions) (*Lock, Acquisition, error) {
	if ctx == nil {
		return nil, Acquisition{Outcome: AcquireUnknown}, &Error{Code: ErrInvalid, Message: "the context is nil"}
	}
	if err := ctx.Err(); err != nil {
		return nil, Acquisition{Outcome: AcquireUnknown}, err
	}
	args := newAcquireArgs(key, purpose, holder, opts)
	defer args.free()
	ch := cgo.NewHandle(ctx)
	defer ch.Delete()
	for {
		var out *C.lj_lock_t
		var acq C.lj_lock_acquisition_t
		err := store.use(func(sp *C.lj_store_t) error {
			var cerr *C.lj_error_t
			rc := C.lj_go_lock_acquire_wait(&out, &acq, sp, args.key, args.keyLen, args.purpose, args.purposeLen,
				args.holder, C.int64_t(waitTurn/time.Millisecond), C.uintptr_t(ch), &args.setup, &cerr)
			return withCallbackError(errorOf(rc, cerr), args.cb.took())
		})
		if err != nil {
			C.lj_lock_acquisition_clear(&acq)
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ErrUser) {
				return nil, Acquisition{Outcome: AcquireUnknown}, ctxErr
			}
			return nil, Acquisition{Outcome: AcquireUnknown}, err
		}
		l, a := acquired(store, out, &acq)
		C.lj_lock_acquisition_clear(&acq)
		if l != nil {
			return l, a, nil
		}
	}
}

var errLockClosed = &Error{Code: ErrInvalid, Message: "the lock is closed"}

// use runs f with the lock's object and its store's while both are open.
func (l *Lock) use(f func(*C.lj_lock_t) error) error {
	if l == nil {
		return &Error{Code: ErrInvalid, Message: "the lock is nil"}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ptr == nil {
		return errLockClosed
	}
	return l.store.use(func(*C.lj_store_t) error { return f(l.ptr) })
}

// Renew moves our lease forward from now (the zero time: the clock). ErrChanged: the
// lock is no longer ours (broken or rewritten): stop the work it guarded.
// ErrInvalid for a lock without a lease.
func (l *Lock) Renew(now time.Time) error {
	return l.use(func(p *C.lj_lock_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_lock_renew(p, msOf(now), &cerr), cerr)
	})
}

// Release removes the lock while its body's id is still ours. ErrNotFound: no lock;
// ErrChanged: someone else's now.
func (l *Lock) Release() error {
	return l.use(func(p *C.lj_lock_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_lock_release(p, &cerr), cerr)
	})
}

// Revision is our body's revision: the fencing token. 0 once closed.
func (l *Lock) Revision() uint64 {
	var r uint64
	_ = l.use(func(p *C.lj_lock_t) error { r = uint64(C.lj_lock_revision(p)); return nil })
	return r
}

// RenewInterval is how often to renew: a third of the lease (0 without a lease).
func (l *Lock) RenewInterval() time.Duration {
	var d time.Duration
	_ = l.use(func(p *C.lj_lock_t) error {
		d = time.Duration(C.lj_lock_renew_interval_ms(p)) * time.Millisecond
		return nil
	})
	return d
}

// ID is our acquisition id.
func (l *Lock) ID() (string, error) {
	var s string
	err := l.use(func(p *C.lj_lock_t) error {
		var out *C.char
		var n C.size_t
		var cerr *C.lj_error_t
		if err := errorOf(C.lj_lock_id(&out, &n, p, &cerr), cerr); err != nil {
			return err
		}
		s = takeString(out, n)
		return nil
	})
	return s, err
}

// Body is our current body.
func (l *Lock) Body() ([]byte, error) {
	var b []byte
	err := l.use(func(p *C.lj_lock_t) error {
		var out *C.char
		var n C.size_t
		var cerr *C.lj_error_t
		if err := errorOf(C.lj_lock_body(&out, &n, p, &cerr), cerr); err != nil {
			return err
		}
		b = []byte(takeString(out, n))
		return nil
	})
	return b, err
}

// Heartbeat renews the lock every RenewInterval on a thread of the library until
// ctx is done (nil) or the lock is lost (its error: stop the work it guarded). A
// renewal that fails is tried again while the lease still runs, counted from the
// start of the last renewal that succeeded (client-go's renew deadline): one failed
// renewal is no loss. Lost is ErrChanged (the lock is someone else's now) or
// ErrTimeout (the lease ended without a renewal). While it runs, Revision, ID and
// Body read the lock as last renewed and Renew and Release are ErrBusy. ErrInvalid
// for a lock without a lease; ErrBusy when a heartbeat runs already.
func (l *Lock) Heartbeat(ctx context.Context) error {
	if l.RenewInterval() <= 0 {
		return &Error{Code: ErrInvalid, Message: "the lock has no lease to renew"}
	}
	lost := make(chan error, 1)
	h := cgo.NewHandle(lost)
	defer h.Delete()
	var beat *C.lj_lock_heartbeat_t
	err := l.use(func(p *C.lj_lock_t) error {
		var cerr *C.lj_error_t
		if err := errorOf(C.lj_go_lock_heartbeat_start(&beat, p, C.uintptr_t(h), &cerr), cerr); err != nil {
			return err
		}
		// Held under the store's read lock: its Close waits for this, then stops it.
		if !l.store.addBeat(l) {
			C.lj_lock_heartbeat_destroy(beat)
			return errClosed
		}
		l.beat = beat
		l.ended = make(chan struct{})
		return nil
	})
	if err != nil {
		return err
	}
	l.mu.Lock()
	ended := l.ended
	l.mu.Unlock()
	// Stopped before the handle goes (defers run last first); Close, of the lock or
	// of its store, may have stopped it.
	defer l.stopBeat()
	select {
	case <-ctx.Done():
		return nil
	case err := <-lost:
		return err
	case <-ended:
		return &Error{Code: ErrInvalid, Message: "the lock or its store was closed while its heartbeat ran"}
	}
}

// stopBeat stops the lock's heartbeat, if one runs.
func (l *Lock) stopBeat() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopBeatLocked()
}

func (l *Lock) stopBeatLocked() {
	if l.beat != nil {
		C.lj_lock_heartbeat_destroy(l.beat)
		l.beat = nil
		close(l.ended)
		l.store.dropBeat(l)
	}
}

// Close forgets the lock (it stays in the store: Release it first), stopping its
// heartbeat. Closing twice is fine.
func (l *Lock) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopBeatLocked()
	if l.ptr != nil {
		C.lj_lock_destroy(l.ptr)
		l.ptr = nil
		runtime.SetFinalizer(l, nil)
	}
	return nil
}
