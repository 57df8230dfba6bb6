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
	"runtime/cgo"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// A lease directory holds the workflow leases several sessions keep on one shared
// checkout: a file <dir>/<pid> holding the pid's start identity, written under the
// directory's lock. It is byte-compatible with the gstack-lease script, so both can
// share one directory at once: the verbs print the script's lines and return its
// exit codes (touch: 0, 2, 3; live: 0 when a live lease was printed, 1 when none;
// list: 0). A lease is stale only on proof; anything unreadable keeps it.

// LeaseOptions tune the lease directory; nil or the zero value are the defaults.
type LeaseOptions struct {
	// Lock tries before giving up on a live holder; 0: LEASEJUDGE_LEASE_LOCK_TRIES,
	// else GSTACK_LEASE_LOCK_TRIES, else 300.
	LockTries int
	// The lock gives up after this long; 0: 30 s.
	LockTimeLimit time.Duration
	// Pause between tries; 0: 100 ms.
	LockRetry time.Duration
	// The shared harness's process name; "": LEASEJUDGE_SHARED_HARNESS, else "capy-server".
	SharedHarness string
	// The process that takes the lock and is named in its token; 0: this process.
	SelfPID int
	// The environment to read and to give to git and ps (KEY=VALUE); nil: this
	// process's.
	Env []string
}

// cLeaseOptions is opts in C memory; free releases it.
func cLeaseOptions(opts *LeaseOptions) (*C.lj_leasedir_options_t, func()) {
	c := (*C.lj_leasedir_options_t)(C.malloc(C.sizeof_lj_leasedir_options_t))
	C.lj_leasedir_options_init(c, C.LJ_LEASEDIR_OPTIONS_VERSION)
	var frees []unsafe.Pointer
	free := func() {
		for _, p := range frees {
			C.free(p)
		}
		C.free(unsafe.Pointer(c))
	}
	if opts == nil {
		return c, free
	}
	if opts.LockTries > 0 {
		c.lock_tries = C.int64_t(opts.LockTries)
	}
	if opts.LockTimeLimit > 0 {
		c.lock_time_limit_s = C.int64_t((opts.LockTimeLimit + time.Second - 1) / time.Second)
	}
	if opts.LockRetry > 0 {
		c.lock_retry_ms = C.int64_t((opts.LockRetry + time.Millisecond - 1) / time.Millisecond)
	}
	if opts.SharedHarness != "" {
		c.shared_harness = C.CString(opts.SharedHarness)
		frees = append(frees, unsafe.Pointer(c.shared_harness))
	}
	c.self_pid = C.int32_t(opts.SelfPID)
	if opts.Env != nil {
		env := cStrings(opts.Env)
		frees = append(frees, env.frees...)
		c.environment = env.array
	}
	return c, free
}

// cStringArray is a NULL-terminated array of C strings in C memory.
type cStringArray struct {
	array **C.char
	frees []unsafe.Pointer
}

func cStrings(list []string) cStringArray {
	size := C.size_t(unsafe.Sizeof((*C.char)(nil)))
	array := (**C.char)(C.malloc(size * C.size_t(len(list)+1)))
	slots := unsafe.Slice(array, len(list)+1)
	out := cStringArray{array: array, frees: []unsafe.Pointer{unsafe.Pointer(array)}}
	for i, s := range list {
		slots[i] = C.CString(s)
		out.frees = append(out.frees, unsafe.Pointer(slots[i]))
	}
	slots[len(list)] = nil
	return out
}

// LeaseOutput is what a verb printed, line by line without newlines, and the exit
// code the script would give.
type LeaseOutput struct {
	ExitCode int
	Stdout   []string
	Stderr   []string
}

// Lease is one line of list (`<pid> <age>m <state>`) or live (`<pid> <age>m <command>`).
type Lease struct {
	PID  string
	Age  int    // minutes
	Note string // list: alive, dead or stale; live: the holder's command name
}

// Leases reads the stdout lines of list or live; a line of another shape is skipped.
func (o LeaseOutput) Leases() []Lease {
	var out []Lease
	for _, line := range o.Stdout {
		pid, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		age, note, _ := strings.Cut(rest, " ")
		minutes, err := strconv.Atoi(strings.TrimSuffix(age, "m"))
		if err != nil || !strings.HasSuffix(age, "m") {
			continue
		}
		out = append(out, Lease{PID: pid, Age: minutes, Note: note})
	}
	return out
}

// leaseVerb runs one verb with a fresh line sink and ctx as its interruption.
func leaseVerb(ctx context.Context, opts *LeaseOptions, run func(handle C.uintptr_t, o *C.lj_leasedir_options_t, exit *C.int, cerr **C.lj_error_t) C.int) (LeaseOutput, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	call := &leaseCall{ctx: ctx}
	h := cgo.NewHandle(call)
	defer h.Delete()
	o, free := cLeaseOptions(opts)
	defer free()
	var exit C.int
	var cerr *C.lj_error_t
	err := errorOf(run(C.uintptr_t(h), o, &exit, &cerr), cerr)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == ErrUser && ctx.Err() != nil {
			e.Err = ctx.Err()
		}
		return call.out, err
	}
	call.out.ExitCode = int(exit)
	return call.out, nil
}

// RunLeaseCommand runs the lease command as the script parses its arguments: the verb
// first (touch, live, list; -h, --help or none prints the usage), then its options
// (--root R, --pid P, --from P, --exclude-ancestry-of P, --count-shared-harness).
// defaultRoot ("": the current directory) serves without --root, defaultPID ("": the
// parent process) touch without --pid and --from. A usage error is exit code 2, not an
// error. ctx stops a wait for the directory lock (an error wrapping ctx.Err()).
func RunLeaseCommand(ctx context.Context, args []string, defaultRoot, defaultPID string, opts *LeaseOptions) (LeaseOutput, error) {
	for _, a := range append([]string{defaultRoot, defaultPID}, args...) {
		if strings.IndexByte(a, 0) >= 0 {
			return LeaseOutput{}, &Error{Code: ErrInvalid, Message: "an argument holds a NUL byte"}
		}
	}
	argv := cStrings(args)
	defer func() {
		for _, p := range argv.frees {
			C.free(p)
		}
	}()
	root := C.CString(defaultRoot)
	defer C.free(unsafe.Pointer(root))
	pid := C.CString(defaultPID)
	defer C.free(unsafe.Pointer(pid))
	return leaseVerb(ctx, opts, func(h C.uintptr_t, o *C.lj_leasedir_options_t, exit *C.int, cerr **C.lj_error_t) C.int {
		return C.lj_go_leasedir_run(exit, argv.array, C.size_t(len(args)), root, pid, h, o, cerr)
	})
}

// LeaseDir is a lease directory and the options its verbs run with.
type LeaseDir struct {
	Path    string
	Options *LeaseOptions
}

// LeaseDirOf is the lease directory of the checkout at root: LEASEJUDGE_LEASE_DIR or
// GSTACK_LEASE_DIR when set and non-empty, else <git dir>/gstack-leases. ErrNotFound
// when root is not a git checkout.
func LeaseDirOf(root string, opts *LeaseOptions) (LeaseDir, error) {
	r, rn := cString(root)
	defer C.free(unsafe.Pointer(r))
	o, free := cLeaseOptions(opts)
	defer free()
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_leasedir_path(&out, &n, r, rn, o, &cerr), cerr); err != nil {
		return LeaseDir{}, err
	}
	return LeaseDir{Path: takeString(out, n), Options: opts}, nil
}

// Touch writes pid's identity as its lease and prunes old leases, under the lock.
// Exit code 0; 2 when it cannot write; 3 when the lock could not be taken.
func (d LeaseDir) Touch(ctx context.Context, pid int) (LeaseOutput, error) {
	dir, dn := cString(d.Path)
	defer C.free(unsafe.Pointer(dir))
	p, pn := cString(strconv.Itoa(pid))
	defer C.free(unsafe.Pointer(p))
	return leaseVerb(ctx, d.Options, func(h C.uintptr_t, o *C.lj_leasedir_options_t, exit *C.int, cerr **C.lj_error_t) C.int {
		return C.lj_go_leasedir_touch(exit, dir, dn, p, pn, h, o, cerr)
	})
}

// Live prints `<pid> <age>m <command>` for each lease held by a live process outside
// the ancestry of exclude (0: none), reclaiming stale leases with one stderr line
// each; countSharedHarness counts the shared harness too. Exit code 0 when one was
// printed, 1 when none.
func (d LeaseDir) Live(ctx context.Context, exclude int, countSharedHarness bool) (LeaseOutput, error) {
	dir, dn := cString(d.Path)
	defer C.free(unsafe.Pointer(dir))
	ex := ""
	if exclude != 0 {
		ex = strconv.Itoa(exclude)
	}
	e, en := cString(ex)
	defer C.free(unsafe.Pointer(e))
	shared := C.int(0)
	if countSharedHarness {
		shared = 1
	}
	return leaseVerb(ctx, d.Options, func(h C.uintptr_t, o *C.lj_leasedir_options_t, exit *C.int, cerr **C.lj_error_t) C.int {
		return C.lj_go_leasedir_live(exit, dir, dn, e, en, shared, h, o, cerr)
	})
}

// List prints `<pid> <age>m alive|dead|stale` for every lease. Exit code 0.
func (d LeaseDir) List(ctx context.Context) (LeaseOutput, error) {
	dir, dn := cString(d.Path)
	defer C.free(unsafe.Pointer(dir))
	return leaseVerb(ctx, d.Options, func(h C.uintptr_t, o *C.lj_leasedir_options_t, exit *C.int, cerr **C.lj_error_t) C.int {
		return C.lj_go_leasedir_list(exit, dir, dn, h, o, cerr)
	})
}

// LeaseState is a lease's state as list judges it.
type LeaseState int

// The states of lj_lease_state_t.
const (
	LeaseAlive = LeaseState(C.LJ_LEASE_ALIVE)
	LeaseDead  = LeaseState(C.LJ_LEASE_DEAD)
	LeaseStale = LeaseState(C.LJ_LEASE_STALE)
)

func (s LeaseState) String() string {
	switch s {
	case LeaseAlive:
		return "alive"
	case LeaseDead:
		return "dead"
	case LeaseStale:
		return "stale"
	}
	return "LeaseState(" + strconv.Itoa(int(s)) + ")"
}

// LeaseStateOf judges one lease: pid (its file name), its record (first line) and its
// age (whole minutes count).
func LeaseStateOf(pid, record string, age time.Duration, opts *LeaseOptions) (LeaseState, error) {
	p, pn := cString(pid)
	defer C.free(unsafe.Pointer(p))
	r, rn := cString(record)
	defer C.free(unsafe.Pointer(r))
	o, free := cLeaseOptions(opts)
	defer free()
	var state C.lj_lease_state_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_leasedir_state(&state, p, pn, r, rn, C.int64_t(age/time.Minute), o, &cerr), cerr); err != nil {
		return LeaseAlive, err
	}
	return LeaseState(state), nil
}
