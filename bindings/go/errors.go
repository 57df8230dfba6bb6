package leasejudge

/*
#include "leasejudge.h"
*/
import "C"

import (
	"errors"
	"strconv"
)

// Code is one of the C ABI's LJ_E* codes, whose numbers never change meaning. A Code
// is an error itself: the sentinels below are Codes, and every *Error this package
// returns matches its Code with errors.Is.
type Code int

// The codes of leasejudge.h, one for one.
const (
	ErrInvalid     = Code(C.LJ_EINVAL)       // a nil or empty argument, or one out of range
	ErrNoMemory    = Code(C.LJ_ENOMEM)       // out of memory
	ErrParse       = Code(C.LJ_EPARSE)       // bytes that are not what the format says
	ErrChanged     = Code(C.LJ_ECHANGED)     // a compare-and-swap lost: the key moved since it was read
	ErrNotFound    = Code(C.LJ_ENOTFOUND)    // no such key, pid, file or executable
	ErrIO          = Code(C.LJ_EIO)          // a system call or a child process failed
	ErrVersion     = Code(C.LJ_EVERSION)     // an options struct of an unknown version
	ErrUser        = Code(C.LJ_EUSER)        // a callback asked to stop
	ErrTimeout     = Code(C.LJ_ETIMEOUT)     // a child process or a lock did not answer in time
	ErrUnsupported = Code(C.LJ_EUNSUPPORTED) // the platform or the build lacks what is needed
	ErrExists      = Code(C.LJ_EEXISTS)      // create-if-absent found the key
	ErrRefused     = Code(C.LJ_EREFUSED)     // a rule refuses the action
	ErrStore       = Code(C.LJ_ESTORE)       // the store failed
	ErrBusy        = Code(C.LJ_EBUSY)        // a live holder keeps the lock
	ErrInternal    = Code(C.LJ_EINTERNAL)    // a bug in leasejudge
	ErrUnknown     = Code(C.LJ_EUNKNOWN)     // a write was sent and no answer came: it may have landed
)

// String is the library's short, stable name of the code ("changed", ...).
func (c Code) String() string { return C.GoString(C.lj_strerror(C.int(c))) }

// Error says the code's name.
func (c Code) Error() string { return "leasejudge: " + c.String() }

// Error is a failure the library (or a callback under it) reported: its code, the
// library's sentence, and, when a Go callback failed, that callback's error.
type Error struct {
	Code    Code
	Message string // the library's sentence naming what failed; may be empty
	Err     error  // the Go error that made a callback fail, or nil
}

func (e *Error) Error() string {
	s := "leasejudge: " + e.Code.String()
	if e.Message != "" {
		s = "leasejudge: " + e.Message
	}
	if e.Err != nil {
		cause := e.Err.Error()
		var inner *Error
		if errors.As(e.Err, &inner) && inner == e.Err && inner.Message != "" && inner.Err == nil {
			cause = inner.Message // one "leasejudge:" is enough
		}
		if cause != e.Message {
			s += ": " + cause
		}
	}
	return s
}

// Is makes errors.Is(err, ErrChanged) true for an *Error of that code.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// Unwrap is the callback's error, so errors.Is and errors.As reach it too.
func (e *Error) Unwrap() error { return e.Err }

// codeOf is the code a Go error stands for when it goes back to C: an error that
// wraps a Code (ErrChanged from a store callback, say) keeps it, any other error is
// the failure of what the callback stands for (fallback).
func codeOf(err error, fallback Code) Code {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) && e.Code < 0 {
		return e.Code
	}
	var c Code
	if errors.As(err, &c) && c < 0 {
		return c
	}
	// A failure must stay a failure in C, whatever the error claims.
	return fallback
}

// errorOf turns a code and an optional lj_error_t (which it destroys) into an *Error;
// nil for LJ_OK.
func errorOf(rc C.int, cerr *C.lj_error_t) error {
	if cerr != nil {
		defer C.lj_error_destroy(cerr)
	}
	if rc == C.LJ_OK {
		return nil
	}
	e := &Error{Code: Code(rc)}
	if cerr != nil {
		e.Message = C.GoString(C.lj_error_message(cerr))
		if c := C.lj_error_code(cerr); c != C.LJ_OK && c != rc {
			// The object and the return disagree: keep the return, say both.
			e.Message += " (" + Code(c).String() + ", code " + strconv.Itoa(int(c)) + ")"
		}
	}
	return e
}
