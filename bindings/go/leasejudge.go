// Package leasejudge decides whether the holder of a lock, a lease or a running step
// is still alive, with a stable reason code and a sentence saying why, and reclaims
// what a dead holder left behind without ever breaking a live holder's claim.
//
// It is a thin layer over leasejudge's C ABI (libleasejudge.so, leasejudge.h):
//   - every failure is an *Error wrapping a Code, so errors.Is(err, ErrChanged) and
//     errors.As(err, &e) work on whatever the package returns;
//   - no Go value points into memory C owns: strings and bytes C returns are copied
//     and freed at once; the library's objects (a Store, a Lock) sit in unexported
//     fields only, freed by Close (or, forgotten, by a finalizer);
//   - Go callbacks reach C as a runtime/cgo.Handle, and C keeps no Go pointer;
//   - a batch crosses cgo once, with its entries in one buffer.
//
// Where the step-stale Go code it replaces has an API (Owner, Boot, RestartReason,
// Scan, ScanOf, EndStale, EndOne, EndStaleAtStart, EndStaleRound, AskWhat), this
// package has the same names and behaviour.
//
// # Migrating from step-stale
//
// Change the import and keep the calls. Two things to name:
//   - the state's own "changed" error: a KeptState's Update that reports a lost race
//     with its runtime's sentinel (stdio.ErrChanged) must say so, or the sweep stops
//     at that key instead of skipping it:
//     leasejudge.EndStale(leasejudge.ScanOf(state, stdio.ErrChanged), node, before, logf);
//   - a state leasejudge opens itself (OpenMemoryStore, OpenFileStore, OpenNatsStore)
//     is swept through ScanOfStore: the whole sweep runs in the library, one cgo
//     crossing per batch, its writes pipelined, each at the revision read.
//
// Steps come back as the seed's do: times keep the offset they were stored with, an
// ask's Fetch is read as Go values (AskWhat encodes nothing first), and an error
// matches ErrChanged, ErrNotFound, ErrRefused or ErrInvalid with errors.Is.
//
// The cgo flags come from pkg-config (the package leasejudge): the build tree
// generates one for bindings/go, an install ships one in <libdir>/pkgconfig.
package leasejudge

/*
#cgo pkg-config: leasejudge
#include <stdlib.h>
#include "leasejudge.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// HeaderVersion is the LJ_VERSION_NUMBER of the leasejudge.h this package was built
// against (major*10000 + minor*100 + patch).
const HeaderVersion = int(C.LJ_VERSION_NUMBER)

// Version is the version of the library loaded at run time, "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.lj_version()) }

// VersionNumber is the LJ_VERSION_NUMBER of the library loaded at run time.
func VersionNumber() int { return int(C.lj_version_number()) }

// checkVersion says why a library of version runtime cannot serve a package built
// against the header of version header, or nil: the major must be the same (the
// SONAME's promise) and the library no older than the header, which may declare
// what an older library lacks.
func checkVersion(runtime, header int) error {
	if runtime/10000 != header/10000 {
		return fmt.Errorf("leasejudge: the library loaded is version %d, of another ABI major than leasejudge.h %d", runtime, header)
	}
	if runtime < header {
		return fmt.Errorf("leasejudge: the library loaded is version %d, older than leasejudge.h %d", runtime, header)
	}
	return nil
}

func init() {
	// A mismatch would make every verdict suspect: refuse to run at all.
	if err := checkVersion(VersionNumber(), HeaderVersion); err != nil {
		panic(err)
	}
}

// takeString copies a string the library returned and frees it.
func takeString(p *C.char, n C.size_t) string {
	if p == nil {
		return ""
	}
	defer C.lj_free(unsafe.Pointer(p))
	return string(unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
}
