package leasejudge

/*
#include <stdlib.h>
#include "leasejudge.h"
*/
import "C"

import (
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// A holder process is named by its node's boot id, its pid and its start as the
// kernel recorded it, so that a pid reused after a reboot or a wrap is never taken
// for the holder. The step owner token is `<boot id>.<pid>.<start ms base 36>`, the
// lease identity `linux <boot id> <start ticks>` (or `ps <lstart>`).

// NoBootID is what a token holds where the node's boot id cannot be read.
const NoBootID = "no-boot-id"

// BootID is this node's boot id (/proc/sys/kernel/random/boot_id), or NoBootID
// where it cannot be read: Owner then tells processes apart by pid and start only.
var BootID = bootID()

// Owner is this process as a step's owner: `<boot id>.<pid>.<start>`, the node's
// boot id, the pid and the process's start in milliseconds since the epoch, base 36.
// The start is the kernel's record of it, so any process on the node can compute
// and check this token, not only this one. A running step whose owner is another is
// a previous process's.
var Owner = ownerToken()

// Boot is when this process began: the start Owner carries. A step with no owner
// (written by an older build) started at or after it is taken for this process's.
var Boot = startOf(Owner)

func bootID() string {
	var out *C.char
	var n C.size_t
	if C.lj_boot_id(&out, &n, nil) != C.LJ_OK {
		return NoBootID
	}
	return takeString(out, n)
}

func ownerToken() string {
	t, err := OwnerToken(0)
	if err != nil {
		// The library falls back on its own; an error here is out of memory.
		panic(err)
	}
	return t
}

// startOf is the start an owner token carries, or now when it carries none.
func startOf(token string) time.Time {
	if i := strings.LastIndexByte(token, '.'); i >= 0 {
		if ms, err := strconv.ParseInt(token[i+1:], 36, 64); err == nil {
			return time.UnixMilli(ms)
		}
	}
	return time.Now()
}

// cString is s as C memory for a (pointer, length) argument; the caller frees it
// with C.free (defer). Bytes after a NUL are kept: the length says where s ends.
func cString(s string) (*C.char, C.size_t) {
	return C.CString(s), C.size_t(len(s))
}

// cTexts holds the C copies of an options struct's optional strings until free.
type cTexts []unsafe.Pointer

// set points (p, n) at a C copy of s; an empty s leaves them unset.
func (t *cTexts) set(s string, p **C.char, n *C.size_t) {
	if s == "" {
		return
	}
	*p, *n = cString(s)
	*t = append(*t, unsafe.Pointer(*p))
}

func (t cTexts) free() {
	for _, p := range t {
		C.free(p)
	}
}

// OwnerToken is the step owner token of pid on this node (0: this process), from
// the kernel's record of its start. ErrNotFound when there is no such process.
func OwnerToken(pid int) (string, error) {
	if pid < 0 || pid > 1<<31-1 {
		return "", &Error{Code: ErrInvalid, Message: "pid " + strconv.Itoa(pid) + " is out of range"}
	}
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_owner_token(&out, &n, C.int32_t(pid), &cerr), cerr); err != nil {
		return "", err
	}
	return takeString(out, n), nil
}

// LeaseIdentity is the lease identity line of pid (0: this process) as the lease
// directory records it. ErrNotFound when the pid has no readable identity.
func LeaseIdentity(pid int) (string, error) {
	if pid < 0 || pid > 1<<31-1 {
		return "", &Error{Code: ErrInvalid, Message: "pid " + strconv.Itoa(pid) + " is out of range"}
	}
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_lease_identity(&out, &n, C.int32_t(pid), &cerr), cerr); err != nil {
		return "", err
	}
	return takeString(out, n), nil
}

// MachineID is this machine's id (32 lowercase hex): SHA-256 over the host name, the
// pid namespace and the MACs of the network cards that are up. ErrNotFound where
// the machine has none (Cloud Run, or no card up): a pid then proves nothing here.
func MachineID() (string, error) {
	var out *C.char
	var n C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_machine_id(&out, &n, &cerr), cerr); err != nil {
		return "", err
	}
	return takeString(out, n), nil
}

// HolderState says whether the process a token names is the one alive now.
type HolderState int

// The states of lj_holder_state_t.
const (
	HolderAlive     = HolderState(C.LJ_HOLDER_ALIVE)
	HolderDead      = HolderState(C.LJ_HOLDER_DEAD)
	HolderRecycled  = HolderState(C.LJ_HOLDER_RECYCLED) // the pid lives with another start
	HolderOtherBoot = HolderState(C.LJ_HOLDER_OTHER_BOOT)
	HolderUnknown   = HolderState(C.LJ_HOLDER_UNKNOWN) // the evidence could not be gathered
)

func (s HolderState) String() string {
	switch s {
	case HolderAlive:
		return "alive"
	case HolderDead:
		return "dead"
	case HolderRecycled:
		return "recycled"
	case HolderOtherBoot:
		return "other-boot"
	case HolderUnknown:
		return "unknown"
	}
	return "HolderState(" + strconv.Itoa(int(s)) + ")"
}

// HolderJudgement is a holder's state and the sentence naming the token, the pid
// and the deciding fact.
type HolderJudgement struct {
	State HolderState
	Why   string
}

// OwnerOptions tune JudgeOwner; the zero value is not the default, DefaultOwnerOptions is.
type OwnerOptions struct {
	// A start within this of the kernel's counts as the same process: the step-stale
	// Go code writes its own clock at package init, not the kernel's start.
	StartTolerance time.Duration
}

// DefaultOwnerOptions are the library's defaults (a start tolerance of 5 s).
func DefaultOwnerOptions() OwnerOptions {
	var o C.lj_owner_options_t
	C.lj_owner_options_init(&o, C.LJ_OWNER_OPTIONS_VERSION)
	return OwnerOptions{StartTolerance: time.Duration(o.start_tolerance_ms) * time.Millisecond}
}

// JudgeOwner says whether the process a step owner token names is alive now on
// this node; opts nil means the defaults. A malformed token is HolderUnknown, never
// an error and never dead.
func JudgeOwner(token string, opts *OwnerOptions) (HolderJudgement, error) {
	var o C.lj_owner_options_t
	C.lj_owner_options_init(&o, C.LJ_OWNER_OPTIONS_VERSION)
	if opts != nil {
		o.start_tolerance_ms = C.int64_t(opts.StartTolerance / time.Millisecond)
	}
	t, tn := cString(token)
	defer C.free(unsafe.Pointer(t))
	var state C.lj_holder_state_t
	var why *C.char
	var wn C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_owner_judge(&state, &why, &wn, t, tn, &o, &cerr), cerr); err != nil {
		return HolderJudgement{State: HolderUnknown}, err
	}
	return HolderJudgement{State: HolderState(state), Why: takeString(why, wn)}, nil
}

// JudgeLeaseIdentity is the lease directory's rule for pid and the identity its
// lease records, with the lease's age (whole minutes count): HolderDead when the pid
// is gone, HolderRecycled (the lease directory's "stale") only when two well-formed
// identities of one backend differ, or for an empty record once the lease is 120
// minutes old; anything unreadable keeps it HolderAlive.
func JudgeLeaseIdentity(pid int, record string, age time.Duration) (HolderJudgement, error) {
	if pid <= 0 || pid > 1<<31-1 {
		return HolderJudgement{State: HolderUnknown}, &Error{Code: ErrInvalid, Message: "pid " + strconv.Itoa(pid) + " is out of range"}
	}
	r, rn := cString(record)
	defer C.free(unsafe.Pointer(r))
	var state C.lj_holder_state_t
	var why *C.char
	var wn C.size_t
	var cerr *C.lj_error_t
	rc := C.lj_lease_identity_judge(&state, &why, &wn, C.int32_t(pid), r, rn, C.int64_t(age/time.Minute), &cerr)
	if err := errorOf(rc, cerr); err != nil {
		return HolderJudgement{State: HolderUnknown}, err
	}
	return HolderJudgement{State: HolderState(state), Why: takeString(why, wn)}, nil
}
