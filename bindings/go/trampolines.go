package leasejudge

// The Go side of the callbacks the library makes: each exported function finds its
// Go value through the runtime/cgo.Handle it is given, copies what C lent it, and
// answers with a code. No Go pointer is handed to C to keep: values go back through
// the library's sinks, which copy.

/*
#include <stdint.h>
#include <stdlib.h>
#include "leasejudge.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// goBytes copies n bytes C lent for a call.
func goBytes(p *C.char, n C.size_t) []byte {
	if p == nil || n == 0 {
		return []byte{}
	}
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))...)
}

// goString copies n bytes C lent for a call, as a string.
func goString(p *C.char, n C.size_t) string {
	if p == nil || n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
}

// cBytes is the address of b's bytes for a call (b is not kept by C): nil for an
// empty b, which the library takes with a length of 0.
func cBytes(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

func backendOf(handle C.uintptr_t) *callbackStore {
	return cgo.Handle(handle).Value().(*callbackStore)
}

//export goStoreKeys
func goStoreKeys(sink *C.lj_store_sink_t, handle C.uintptr_t) (rc C.int) {
	s := backendOf(handle)
	defer func() {
		if r := recover(); r != nil {
			rc = s.fail(fmt.Errorf("leasejudge: a store callback panicked: %v", r))
		}
	}()
	keys, err := s.keys()
	if err != nil {
		return s.fail(err)
	}
	for _, k := range keys {
		p, n := cString(k)
		put := C.lj_store_sink_key(sink, p, n)
		C.free(unsafe.Pointer(p))
		if put != C.LJ_OK {
			return put
		}
	}
	return C.LJ_OK
}

//export goStoreGet
func goStoreGet(sink *C.lj_store_sink_t, key *C.char, keyLen C.size_t, handle C.uintptr_t) (rc C.int) {
	s := backendOf(handle)
	defer func() {
		if r := recover(); r != nil {
			rc = s.fail(fmt.Errorf("leasejudge: a store callback panicked: %v", r))
		}
	}()
	value, revision, err := s.get(goString(key, keyLen))
	if err != nil {
		return s.fail(err)
	}
	if value == nil {
		return C.LJ_OK // the key holds nothing
	}
	if revision == 0 {
		return s.fail(&Error{Code: ErrStore, Message: "the store gave a value at revision 0"})
	}
	return C.lj_store_sink_put(sink, cBytes(value), C.size_t(len(value)), C.uint64_t(revision))
}

//export goStoreUpdate
func goStoreUpdate(out *C.uint64_t, key *C.char, keyLen C.size_t, value *C.char, valueLen C.size_t, revision C.uint64_t, handle C.uintptr_t) (rc C.int) {
	s := backendOf(handle)
	defer func() {
		if r := recover(); r != nil {
			rc = s.fail(fmt.Errorf("leasejudge: a store callback panicked: %v", r))
		}
	}()
	next, err := s.update(goString(key, keyLen), goBytes(value, valueLen), uint64(revision))
	if err != nil {
		return s.fail(err)
	}
	*out = C.uint64_t(next)
	return C.LJ_OK
}

//export goStoreCreate
func goStoreCreate(out *C.uint64_t, key *C.char, keyLen C.size_t, value *C.char, valueLen C.size_t, handle C.uintptr_t) (rc C.int) {
	s := backendOf(handle)
	defer func() {
		if r := recover(); r != nil {
			rc = s.fail(fmt.Errorf("leasejudge: a store callback panicked: %v", r))
		}
	}()
	if s.create == nil {
		return s.fail(&Error{Code: ErrUnsupported, Message: "the store takes no create"})
	}
	next, err := s.create(goString(key, keyLen), goBytes(value, valueLen))
	if err != nil {
		return s.fail(err)
	}
	*out = C.uint64_t(next)
	return C.LJ_OK
}

//export goStoreRemove
func goStoreRemove(key *C.char, keyLen C.size_t, revision C.uint64_t, handle C.uintptr_t) (rc C.int) {
	s := backendOf(handle)
	defer func() {
		if r := recover(); r != nil {
			rc = s.fail(fmt.Errorf("leasejudge: a store callback panicked: %v", r))
		}
	}()
	if s.remove == nil {
		return s.fail(&Error{Code: ErrUnsupported, Message: "the steps state takes no delete"})
	}
	if err := s.remove(goString(key, keyLen), uint64(revision)); err != nil {
		return s.fail(err)
	}
	return C.LJ_OK
}

// errScanStopped is what a bulk read's each answers once the library asked it to
// stop (its code is the library's, handed back when the read returns).
type errScanStopped struct{ code C.int }

func (e errScanStopped) Error() string { return "leasejudge: the sweep stopped the read" }

//export goStoreScan
func goStoreScan(sink *C.lj_store_sink_t, prefix *C.char, prefixLen C.size_t, handle C.uintptr_t) (rc C.int) {
	s := backendOf(handle)
	defer func() {
		if r := recover(); r != nil {
			rc = s.fail(fmt.Errorf("leasejudge: a store callback panicked: %v", r))
		}
	}()
	err := s.scan(goString(prefix, prefixLen), func(key string, value []byte, revision uint64) error {
		if revision == 0 {
			return &Error{Code: ErrStore, Message: "the store gave " + key + " at revision 0"}
		}
		p, n := cString(key)
		put := C.lj_store_sink_entry(sink, p, n, cBytes(value), C.size_t(len(value)), C.uint64_t(revision))
		C.free(unsafe.Pointer(p))
		if put != C.LJ_OK {
			return errScanStopped{put}
		}
		return nil
	})
	var stopped errScanStopped
	if errors.As(err, &stopped) {
		return stopped.code
	}
	if err != nil {
		return s.fail(err)
	}
	return C.LJ_OK
}

//export goStoreRelease
func goStoreRelease(handle C.uintptr_t) {
	cgo.Handle(handle).Delete()
}

// lockCallbacks is the Go value behind a lock judgement's callbacks. A panic in a
// callback is caught and stops the work (the caller gets it as an error): it must
// never unwind through C frames.
type lockCallbacks struct {
	describe   Describer
	alive      func(pid float64) bool
	ownerState func(token string) HolderState

	mu     sync.Mutex
	failed error
}

// panicked keeps what a callback panicked with and answers the code that stops
// the work. (recover itself must be called by the deferred function.)
func (l *lockCallbacks) panicked(r any) C.int {
	l.mu.Lock()
	if l.failed == nil {
		l.failed = fmt.Errorf("leasejudge: a lock callback panicked: %v", r)
	}
	l.mu.Unlock()
	return 1
}

func (l *lockCallbacks) took() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

//export goLockDescribe
func goLockDescribe(state *C.lj_execution_state_t, project *C.char, projectLen C.size_t, region *C.char, regionLen C.size_t, name *C.char, nameLen C.size_t, handle C.uintptr_t) (rc C.int) {
	l := cgo.Handle(handle).Value().(*lockCallbacks)
	defer func() {
		if r := recover(); r != nil {
			rc = l.panicked(r)
		}
	}()
	s := l.describe(Execution{ProjectID: goString(project, projectLen), Region: goString(region, regionLen), Name: goString(name, nameLen)})
	d, n := cString(s.Detail)
	defer C.free(unsafe.Pointer(d))
	// A kind out of range is refused by the library: the verdict is then unknown.
	C.lj_execution_state_set(state, C.int(s.Kind), d, n)
	return 0
}

//export goLockAlive
func goLockAlive(out *C.int, pid C.double, handle C.uintptr_t) (rc C.int) {
	l := cgo.Handle(handle).Value().(*lockCallbacks)
	defer func() {
		if r := recover(); r != nil {
			rc = l.panicked(r)
		}
	}()
	*out = 0
	if l.alive(float64(pid)) {
		*out = 1
	}
	return 0
}

//export goLockOwnerState
func goLockOwnerState(out *C.lj_holder_state_t, token *C.char, tokenLen C.size_t, handle C.uintptr_t) (rc C.int) {
	l := cgo.Handle(handle).Value().(*lockCallbacks)
	defer func() {
		if r := recover(); r != nil {
			rc = l.panicked(r)
		}
	}()
	state := l.ownerState(goString(token, tokenLen))
	if state < HolderAlive || state > HolderUnknown {
		state = HolderUnknown // a state C does not know proves nothing
	}
	*out = C.lj_holder_state_t(state)
	return 0
}

//export goContextDone
func goContextDone(handle C.uintptr_t) C.int {
	if cgo.Handle(handle).Value().(context.Context).Err() != nil {
		return 1
	}
	return 0
}

// goLockLost tells a heartbeat's loss to the channel behind handle (buffered: it
// never blocks the heartbeat's thread).
//
//export goLockLost
func goLockLost(code C.int, message *C.char, n C.size_t, handle C.uintptr_t) {
	lost := cgo.Handle(handle).Value().(chan error)
	select {
	case lost <- &Error{Code: Code(code), Message: goString(message, n)}:
	default:
	}
}

// leaseCall is the Go value behind one lease directory verb: the lines it printed,
// and the context that may interrupt its wait for the directory lock.
type leaseCall struct {
	ctx context.Context
	out LeaseOutput
}

//export goLeaseLine
func goLeaseLine(stream C.int, line *C.char, n C.size_t, handle C.uintptr_t) C.int {
	c := cgo.Handle(handle).Value().(*leaseCall)
	text := goString(line, n)
	if stream == C.LJ_LEASEDIR_STDERR {
		c.out.Stderr = append(c.out.Stderr, text)
	} else {
		c.out.Stdout = append(c.out.Stdout, text)
	}
	return 0
}

//export goLeaseInterrupted
func goLeaseInterrupted(handle C.uintptr_t) C.int {
	if cgo.Handle(handle).Value().(*leaseCall).ctx.Err() != nil {
		return 1
	}
	return 0
}

//export goStoreKeyEach
func goStoreKeyEach(key *C.char, n C.size_t, handle C.uintptr_t) C.int {
	keys := cgo.Handle(handle).Value().(*[]string)
	*keys = append(*keys, goString(key, n))
	return 0
}

// stepCallbacks is the Go value behind a plan's or a sweep's callbacks. A panic is
// caught, kept, and stops the work.
type stepCallbacks struct {
	ownerState func(token string) HolderState
	log        func(line string)
	live       func(id string) bool
	onKey      func(SweepKey) error

	mu     sync.Mutex
	failed error
}

func (s *stepCallbacks) panicked(r any) C.int {
	s.mu.Lock()
	if s.failed == nil {
		s.failed = fmt.Errorf("leasejudge: a sweep callback panicked: %v", r)
	}
	s.mu.Unlock()
	return 1
}

func (s *stepCallbacks) took() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

//export goStepOwnerState
func goStepOwnerState(out *C.lj_holder_state_t, token *C.char, n C.size_t, handle C.uintptr_t) (rc C.int) {
	s := cgo.Handle(handle).Value().(*stepCallbacks)
	defer func() {
		if r := recover(); r != nil {
			rc = s.panicked(r)
		}
	}()
	state := s.ownerState(goString(token, n))
	if state < HolderAlive || state > HolderUnknown {
		state = HolderUnknown
	}
	*out = C.lj_holder_state_t(state)
	return 0
}

//export goSweepLog
func goSweepLog(line *C.char, n C.size_t, handle C.uintptr_t) (rc C.int) {
	s := cgo.Handle(handle).Value().(*stepCallbacks)
	defer func() {
		if r := recover(); r != nil {
			rc = s.panicked(r)
		}
	}()
	s.log(goString(line, n))
	return 0
}

//export goSweepLive
func goSweepLive(out *C.int, id *C.char, n C.size_t, handle C.uintptr_t) (rc C.int) {
	s := cgo.Handle(handle).Value().(*stepCallbacks)
	defer func() {
		if r := recover(); r != nil {
			rc = s.panicked(r)
		}
	}()
	*out = 0
	if s.live(goString(id, n)) {
		*out = 1
	}
	return 0
}

//export goSweepOnKey
func goSweepOnKey(key *C.lj_sweep_key_t, handle C.uintptr_t) (rc C.int) {
	s := cgo.Handle(handle).Value().(*stepCallbacks)
	defer func() {
		if r := recover(); r != nil {
			rc = s.panicked(r)
		}
	}()
	if err := s.onKey(sweepKeyOf(key)); err != nil {
		s.mu.Lock()
		if s.failed == nil {
			s.failed = err
		}
		s.mu.Unlock()
		return 1
	}
	return 0
}
