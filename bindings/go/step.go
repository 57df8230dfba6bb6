package leasejudge

/*
#include <stdlib.h>
#include "leasejudge.h"
#include "trampolines.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"runtime/cgo"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// A step is the record a build module keeps of each tool run, under the key
// `<node>.<id>` of a steps state, as a JSON value. A module that stops while a step
// runs leaves its key running for good; at its start it ends the steps its node left
// running by another process (EndStale: every step names its owner, Owner), and
// ends one by hand with EndOne. The rules are the step-stale Go code's, exactly:
//   - a hand-started step whose owner is not this process is ended failed with
//     RestartReason at once, whatever its age;
//   - a pulled ask's step (its id a UUID, its tool "<kind> ask") whose owner is not
//     this process is deleted, not ended: its stream redelivers it;
//   - a step this process owns is left: it may run now;
//   - a step with no owner (an older build) is ended when it is an ask past the step
//     bound ("past the step bound: its asker stopped waiting at <time>") or a
//     hand-started step started before `before`; else left.
// Values that are no step (Go's encoding/json would not decode them), steps not
// running and keys of other nodes are never touched. Every write is a
// compare-and-swap at the revision read; a key another writer moved since is skipped.

// StepBound is how long an asker waits for its ask's end (the build SDK's StepBound).
var StepBound = time.Hour

// StaleAttempts and StaleRetry bound EndStaleAtStart's tries: the steps state is
// readable once the runtime serves.
var (
	StaleAttempts = 6
	StaleRetry    = 5 * time.Second
)

// StaleServed is what EndStaleAtStart waits for before it reads the steps state, and
// what EndStaleRound checks: the runtime serving. Set it to the runtime's signal
// (the build SDK's stdio.Served); the default is served from the start.
var StaleServed = func() <-chan struct{} { return servedAlready }

var servedAlready = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// OwnerRule says which owners a sweep takes for gone.
type OwnerRule int

// The rules of lj_step_rule_t. The zero value is the library's default.
const (
	// RuleByOwner, the library's default: RuleNotSelf for a caller that names its
	// owner token (and in the seed's in-process sweeps, whose owner is this
	// process), RuleProvablyDead for one that names none, so that a plan run from
	// outside the owners' processes never ends a step whose owner is alive.
	RuleByOwner OwnerRule = iota
	// RuleNotSelf: every owner but the caller's is gone (the step-stale Go code).
	// A plan needs the owner named.
	RuleNotSelf
	// RuleProvablyDead: only an owner proven gone (dead, its pid reused, another
	// boot), for nodes that run several processes of one module at once.
	RuleProvablyDead
)

// c is the rule as lj_step_rule_t; a value out of range goes as it is, for the
// library to refuse.
func (r OwnerRule) c() C.int {
	switch r {
	case RuleByOwner:
		return C.LJ_STEP_RULE_BY_OWNER
	case RuleNotSelf:
		return C.LJ_STEP_RULE_NOT_SELF
	case RuleProvablyDead:
		return C.LJ_STEP_RULE_PROVABLY_DEAD
	}
	return C.int(r)
}

// Step is a step value as the build SDK's delivery.Step holds it.
type Step struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	State   string          `json:"state"`
	Owner   string          `json:"owner,omitempty"`
	Started time.Time       `json:"started"`
	Ended   time.Time       `json:"ended"`
	Reason  string          `json:"reason,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Ask     *StepAsk        `json:"ask,omitempty"`
}

// StepAsk is a pulled ask: its kind and one of check, build or compose.
type StepAsk struct {
	Kind    string       `json:"kind"`
	Check   *StepCheck   `json:"check,omitempty"`
	Build   *StepBuild   `json:"build,omitempty"`
	Compose *StepCompose `json:"compose,omitempty"`
}

// StepCheck is a check ask: what to fetch, its levels and run.
type StepCheck struct {
	Fetch  map[string]any `json:"fetch"`
	Levels []string       `json:"levels"`
	Run    string         `json:"run,omitempty"`
}

// StepBuild is a build ask: its module, what to fetch and its fingerprint.
type StepBuild struct {
	Module string         `json:"module"`
	Fetch  map[string]any `json:"fetch,omitempty"`
	FP     string         `json:"fp,omitempty"`
}

// StepCompose is a compose ask: what to fetch.
type StepCompose struct {
	Fetch map[string]any `json:"fetch"`
}

// AskWhat says what an ask is, in one line: its kind, and its repository, head and
// levels, or its module and fingerprint. It reads the Go values themselves, as the
// step-stale code does: a fetch field that is no Go string counts as empty, a head is
// cut at 12 bytes (not runes), and nothing is encoded first, so a value JSON cannot
// hold (a NaN, a channel, bytes that are no UTF-8) changes nothing.
func AskWhat(a StepAsk) string {
	head := func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	}
	text := func(fetch map[string]any, name string) string {
		s, _ := fetch[name].(string)
		return s
	}
	at := func(fetch map[string]any) string {
		return text(fetch, "repository") + "@" + head(text(fetch, "commit"))
	}
	parts := []string{a.Kind + " ask"}
	if c := a.Check; c != nil {
		parts = append(parts, at(c.Fetch), "levels "+strings.Join(c.Levels, ","))
		if c.Run != "" {
			parts = append(parts, "run "+c.Run)
		}
	} else if b := a.Build; b != nil {
		parts = append(parts, "module "+b.Module)
		if text(b.Fetch, "repository") != "" {
			parts = append(parts, at(b.Fetch))
		}
		if b.FP != "" {
			parts = append(parts, "fp "+head(b.FP))
		}
	} else if c := a.Compose; c != nil {
		parts = append(parts, "compose", at(c.Fetch))
	}
	return strings.Join(parts, ", ")
}

// Scan reads and writes a steps state with its revisions: its keys, a key's stored
// value and revision (nil and 0 for none), a write that lands only while the key is
// still at the revision read, and a delete of a key still at the revision read; both
// fail with an error matching ErrChanged (errors.Is) when another writer was first.
// Delete may be nil: asks a gone owner held are then not deleted (the sweep says so).
//
// Entries, optional, is a bulk read: every key starting with prefix (a node's
// "<node>.") that holds a value, each handed to each once with its value and
// revision; it stops (returning each's error) when each fails. With it, a sweep reads
// the node's keys in one pass, batch by batch, instead of Keys and a Get per key.
type Scan struct {
	Keys    func() ([]string, error)
	Get     func(key string) (json.RawMessage, uint64, error)
	Update  func(key string, value any, revision uint64) (uint64, error)
	Delete  func(key string, revision uint64) error
	Entries ScanEntries

	store *Store // ScanOfStore's: sweeps act on it without crossing back into Go
}

// ScanEntries is a bulk read (Scan.Entries).
type ScanEntries func(prefix string, each func(key string, value []byte, revision uint64) error) error

// KeptEntry is a value a kept state holds and its revision.
type KeptEntry struct {
	Value    json.RawMessage
	Revision uint64
}

// KeptState is a key/value state a process keeps, as the build SDK's runtime gives
// it: Update writes only at the revision read and fails with an error matching
// ErrChanged when another writer was first; Delete takes no revision.
type KeptState interface {
	Keys() ([]string, error)
	Get(key string) (*KeptEntry, error)
	Update(key string, value any, revision uint64) (uint64, error)
	Delete(key string) error
}

// ScanOf is the Scan of a state the process keeps, key by key as the seed reads it.
//
// changed names the errors the state's Update answers when another writer was first
// (the seed's runtime has its own sentinel, stdio.ErrChanged): an error matching one
// of them (errors.Is) is ErrChanged to the sweep, which skips the key instead of
// stopping. ErrChanged itself always is. Migrating from the seed:
//
//	leasejudge.EndStale(leasejudge.ScanOf(state, stdio.ErrChanged), node, before, logf)
//
// Its Delete reads the key again and deletes it only while it is still at the
// revision read: the state's Delete takes no revision, so a write landing between
// that read and the delete (a few milliseconds) is deleted with it. A store with a
// revision-checked delete (ScanOfStore over NATS) closes that window.
func ScanOf(s KeptState, changed ...error) Scan {
	get := func(key string) (json.RawMessage, uint64, error) {
		e, err := s.Get(key)
		if err != nil || e == nil {
			return nil, 0, err
		}
		return e.Value, e.Revision, nil
	}
	update := func(key string, value any, revision uint64) (uint64, error) {
		next, err := s.Update(key, value, revision)
		for _, c := range changed {
			if c != nil && err != nil && errors.Is(err, c) && !errors.Is(err, ErrChanged) {
				return 0, changedError{err}
			}
		}
		return next, err
	}
	return Scan{Keys: s.Keys, Update: update, Get: get, Delete: func(key string, revision uint64) error {
		_, rev, err := get(key)
		if err != nil {
			return err
		}
		if rev != revision {
			return ErrChanged
		}
		return s.Delete(key)
	}}
}

// changedError is a state's own "changed" error (ScanOf's changed), which matches
// ErrChanged too.
type changedError struct{ err error }

func (e changedError) Error() string        { return e.err.Error() }
func (e changedError) Unwrap() error        { return e.err }
func (e changedError) Is(target error) bool { return target == ErrChanged }
func (e changedError) As(target any) bool {
	if c, ok := target.(*Code); ok {
		*c = ErrChanged
		return true
	}
	return false
}

// ScanOfStore is the Scan of a Store; EndStale and EndOne on it act on the store
// directly, without a callback per key.
func ScanOfStore(s *Store) Scan {
	return Scan{
		Keys: s.Keys,
		Get: func(key string) (json.RawMessage, uint64, error) {
			v, rev, err := s.Get(key)
			if v == nil {
				return nil, rev, err
			}
			return json.RawMessage(v), rev, err
		},
		Update: func(key string, value any, revision uint64) (uint64, error) {
			raw, err := valueBytes(value)
			if err != nil {
				return 0, err
			}
			return s.Update(key, raw, revision)
		},
		Delete: s.Delete,
		store:  s,
	}
}

// valueBytes is what a Scan's Update writes: raw JSON as it is, anything else as
// encoding/json writes it.
func valueBytes(value any) ([]byte, error) {
	switch v := value.(type) {
	case json.RawMessage:
		return v, nil
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	}
	return json.Marshal(value)
}

// scanStore is the store a sweep acts on for scan: its own Store, or one over its
// functions (closed by the caller's done).
func scanStore(scan Scan) (store *Store, done func(), err error) {
	if scan.store != nil {
		return scan.store, func() {}, nil
	}
	if scan.Keys == nil || scan.Get == nil || scan.Update == nil {
		return nil, nil, &Error{Code: ErrInvalid, Message: "the scan needs its Keys, Get and Update"}
	}
	cb := &callbackStore{
		keys: scan.Keys,
		get: func(key string) ([]byte, uint64, error) {
			v, rev, err := scan.Get(key)
			if err != nil || len(v) == 0 {
				// An empty value holds no step: the sweep leaves it, as the seed does.
				return nil, 0, err
			}
			return v, rev, nil
		},
		update: func(key string, value []byte, revision uint64) (uint64, error) {
			return scan.Update(key, json.RawMessage(value), revision)
		},
	}
	if scan.Delete != nil {
		cb.remove = scan.Delete
	}
	cb.scan = scan.Entries
	ptr, err := openCallbackStore(cb)
	if err != nil {
		return nil, nil, err
	}
	s := newStore(ptr, cb)
	return s, func() { s.Close() }, nil
}

// SweepOptions are the Rules a sweep judges by (Owner for a zero Owner, and
// RuleByOwner, which in these in-process sweeps is RuleNotSelf, the seed's rule) and
// how it writes. Rules.Before is this process's start (Boot for zero): EndOne's and
// the round's before.
type SweepOptions struct {
	Rules
	// WriteWindow is how many ends and deletes may be in flight at once (0: the
	// store's own, 1024 on etcd and 256 on the others; 1: one at a time); BatchKeys how
	// many keys are read and planned at once (0: 4096).
	WriteWindow int
	BatchKeys   int
	// DryRun plans only: nothing is written, every end and delete is reported planned.
	DryRun bool
	// OnKey hears of every key the sweep reads: a key left when planned, an end or a
	// delete when its outcome is known. An error stops the sweep before its next
	// write and is what the sweep returns.
	OnKey func(SweepKey) error
}

// SweepOutcome is what became of a key a sweep read; the numbers are the library's.
type SweepOutcome int

const (
	SweepLeft    SweepOutcome = C.LJ_SWEEP_LEFT     // nothing to do
	SweepPlanned SweepOutcome = C.LJ_SWEEP_PLANNED  // a dry run's end or delete
	SweepDone    SweepOutcome = C.LJ_SWEEP_DONE     // ended or deleted
	SweepChanged SweepOutcome = C.LJ_SWEEP_CHANGED  // skipped: the key moved since it was read
	SweepFailed  SweepOutcome = C.LJ_SWEEP_FAILED   // the write did not land
	SweepUnknown SweepOutcome = C.LJ_SWEEP_UNKNOWN  // no acknowledgement came: it may have landed
	SweepNotSent SweepOutcome = C.LJ_SWEEP_NOT_SENT // the sweep had stopped before it
)

func (o SweepOutcome) String() string { return C.GoString(C.lj_sweep_outcome_name(C.int(o))) }

// SweepKey is a key a sweep read (SweepOptions.OnKey), its verdict and outcome.
type SweepKey struct {
	Key      string
	Revision uint64
	Action   StepAction
	Reason   StepReason
	ID, Tool string
	Owner    string
	Started  time.Time
	Why      string
	Said     string // what the sweep's log says of the owner
	Outcome  SweepOutcome
	Error    string // SweepFailed, SweepUnknown: what the store said
}

// SweepWrite is one end or delete a sweep sent, and its outcome.
type SweepWrite struct {
	Key      string
	Action   StepAction
	Outcome  SweepOutcome
	Revision uint64 // the revision it was sent at
}

// SweepStats is what a sweep measured.
type SweepStats struct {
	Keys, Bytes, Batches uint64 // read
	Writes, MaxInFlight  uint64 // sent
	Waits, Retries       uint64 // the store's waits past its patience and reads started again, each logged
	Skipped              uint64 // keys written while they were read, left to the next sweep
	Rejected             uint64 // keys the store cannot write (its key rules), left
	Read, Plan, Apply    time.Duration
	Total                time.Duration
}

// SweepReport is what a sweep did: the ids it ended or deleted, in order, and its
// counts. Every key read lands in exactly one count.
type SweepReport struct {
	Ended     []string
	Ends      uint64 // rewritten as failed
	Deletes   uint64 // deleted (asks a gone owner held)
	Changed   uint64 // skipped: the key moved since it was read
	Leaves    uint64 // steps of the node left as they are
	NoStep    uint64 // no value, or a value that is no step
	OtherNode uint64 // keys read that are no step key of the node
	Failed    uint64 // ends and deletes that did not land (they stopped the sweep)
	Unknown   uint64 // ends and deletes whose acknowledgement never came
	NotSent   uint64 // ends and deletes planned after the sweep stopped
	Writes    []SweepWrite
	Stats     SweepStats
}

// nsOf is t in nanoseconds since the epoch for the library, or an error where
// nanoseconds cannot hold it (before 1678 or after 2261).
func nsOf(t time.Time, what string) (C.int64_t, error) {
	if y := t.Year(); y < 1678 || y > 2261 {
		return 0, &Error{Code: ErrInvalid, Message: what + " " + t.String() + " is outside 1678..2261"}
	}
	return C.int64_t(t.UnixNano()), nil
}

// sweepOptions is opts (and what the package's variables say) as C memory, its
// callbacks wired through a handle; free releases all of it.
func sweepOptions(opts *SweepOptions, logf func(string, ...any), live func(id string) bool) (*C.lj_sweep_options_t, *stepCallbacks, func(), error) {
	var o SweepOptions
	if opts != nil {
		o = *opts
	}
	if o.Owner == "" && o.SelfPID == 0 {
		o.Owner = Owner
	}
	c := (*C.lj_sweep_options_t)(C.malloc(C.sizeof_lj_sweep_options_t))
	C.lj_sweep_options_init(c, C.LJ_SWEEP_OPTIONS_VERSION)
	freeRules, err := o.Rules.into(&c.rules)
	free := func() {
		freeRules()
		C.free(unsafe.Pointer(c))
	}
	fail := func(err error) (*C.lj_sweep_options_t, *stepCallbacks, func(), error) {
		free()
		return nil, nil, nil, err
	}
	if err != nil {
		return fail(err)
	}
	switch {
	case StaleAttempts > math.MaxInt32:
		c.attempts = math.MaxInt32
	case StaleAttempts > 0:
		c.attempts = C.int32_t(StaleAttempts)
	default:
		c.attempts = 1 // the seed tries once however few attempts it is given
	}
	c.retry_ms = C.int64_t(StaleRetry / time.Millisecond)
	if c.retry_ms < 0 {
		c.retry_ms = 0
	}
	if o.WriteWindow < 0 || o.WriteWindow > math.MaxUint32 || o.BatchKeys < 0 || o.BatchKeys > math.MaxUint32 {
		return fail(&Error{Code: ErrInvalid, Message: "WriteWindow and BatchKeys are 0 (the defaults) or a count"})
	}
	if o.WriteWindow > 0 {
		c.write_window = C.uint32_t(o.WriteWindow)
	}
	if o.BatchKeys > 0 {
		c.batch_keys = C.uint32_t(o.BatchKeys)
	}
	if o.DryRun {
		c.dry_run = 1
	}
	cb := &stepCallbacks{ownerState: o.OwnerState, live: live, onKey: o.OnKey}
	if logf != nil {
		cb.log = func(line string) { logf("%s", line) }
	}
	h := cgo.NewHandle(cb)
	C.lj_go_sweep_wire(c, C.uintptr_t(h), flag(cb.ownerState != nil), flag(cb.log != nil), flag(live != nil),
		flag(cb.onKey != nil))
	return c, cb, func() { h.Delete(); free() }, nil
}

func flag(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// takeReport copies a sweep report and destroys it.
func takeReport(r *C.lj_sweep_report_t) SweepReport {
	var out SweepReport
	if r == nil {
		return out
	}
	defer C.lj_sweep_report_destroy(r)
	n := int(C.lj_sweep_report_ended_count(r))
	for i := 0; i < n; i++ {
		var l C.size_t
		p := C.lj_sweep_report_ended(r, C.size_t(i), &l)
		out.Ended = append(out.Ended, goString(p, l))
	}
	var c C.lj_sweep_counts_t
	if C.lj_sweep_report_counts(&c, r) == C.LJ_OK {
		out.Ends, out.Deletes, out.Changed = uint64(c.ends), uint64(c.deletes), uint64(c.changed)
		out.Leaves, out.NoStep, out.OtherNode = uint64(c.leaves), uint64(c.no_step), uint64(c.other_node)
	}
	stat := func(s C.int) uint64 { return uint64(C.lj_sweep_report_stat(r, s)) }
	out.Failed, out.Unknown, out.NotSent = stat(C.LJ_SWEEP_STAT_FAILED), stat(C.LJ_SWEEP_STAT_UNKNOWN), stat(C.LJ_SWEEP_STAT_NOT_SENT)
	out.Stats = SweepStats{
		Keys: stat(C.LJ_SWEEP_STAT_KEYS), Bytes: stat(C.LJ_SWEEP_STAT_BYTES), Batches: stat(C.LJ_SWEEP_STAT_BATCHES),
		Writes: stat(C.LJ_SWEEP_STAT_WRITES), MaxInFlight: stat(C.LJ_SWEEP_STAT_MAX_IN_FLIGHT),
		Waits: stat(C.LJ_SWEEP_STAT_WAITS), Retries: stat(C.LJ_SWEEP_STAT_RETRIES),
		Skipped: stat(C.LJ_SWEEP_STAT_SKIPPED), Rejected: stat(C.LJ_SWEEP_STAT_REJECTED),
		Read: time.Duration(stat(C.LJ_SWEEP_STAT_READ_NS)), Plan: time.Duration(stat(C.LJ_SWEEP_STAT_PLAN_NS)),
		Apply: time.Duration(stat(C.LJ_SWEEP_STAT_APPLY_NS)), Total: time.Duration(stat(C.LJ_SWEEP_STAT_TOTAL_NS)),
	}
	n = int(C.lj_sweep_report_write_count(r))
	for i := 0; i < n; i++ {
		var key *C.char
		var l C.size_t
		var action, outcome C.int
		var rev C.uint64_t
		if C.lj_sweep_report_write(&key, &l, &action, &outcome, &rev, r, C.size_t(i)) == C.LJ_OK {
			out.Writes = append(out.Writes, SweepWrite{goString(key, l), StepAction(action), SweepOutcome(outcome), uint64(rev)})
		}
	}
	return out
}

// sweepKeyOf copies what the library says of a key a sweep read.
func sweepKeyOf(k *C.lj_sweep_key_t) SweepKey {
	text := func(f C.int) string {
		var n C.size_t
		p := C.lj_sweep_key_text(k, f, &n)
		return goString(p, n)
	}
	var a C.lj_step_action_t
	var rev C.uint64_t
	var outcome C.int
	C.lj_sweep_key_verdict(&a, &rev, &outcome, k)
	var sec C.int64_t
	var nsec C.int32_t
	C.lj_sweep_key_started(&sec, &nsec, k)
	return SweepKey{
		Key: text(C.LJ_SWEEP_KEY_KEY), Revision: uint64(rev), Action: StepAction(a.action), Reason: StepReason(a.reason),
		ID: text(C.LJ_SWEEP_KEY_ID), Tool: text(C.LJ_SWEEP_KEY_TOOL), Owner: text(C.LJ_SWEEP_KEY_OWNER),
		Started: time.Unix(int64(sec), int64(nsec)).UTC(), Why: text(C.LJ_SWEEP_KEY_WHY), Said: text(C.LJ_SWEEP_KEY_SAID),
		Outcome: SweepOutcome(outcome), Error: text(C.LJ_SWEEP_KEY_ERROR),
	}
}

// sweepError is err with what a Go callback failed with under it: a Scan function's
// error, or a panic.
func sweepError(err error, store *Store, cb *stepCallbacks) error {
	if err == nil {
		return nil
	}
	if cause := cb.took(); cause != nil {
		return withCallbackError(err, cause)
	}
	return store.withCause(err)
}

// EndStale ends this node's running steps that no process of this module runs any
// more, and answers their ids (also those done before an error stopped it). Only
// keys of node are read; a value that is no step is left alone. Each end and delete
// is logged through logf, naming the step, its owner and why; a key written by
// another writer since it was read is skipped. before is the start of this process,
// for steps with no owner (Boot).
func EndStale(scan Scan, node string, before time.Time, logf func(string, ...any)) ([]string, error) {
	r, err := EndStaleWith(scan, node, before, logf, nil)
	return r.Ended, err
}

// EndStaleWith is EndStale with options, and its report.
func EndStaleWith(scan Scan, node string, before time.Time, logf func(string, ...any), opts *SweepOptions) (SweepReport, error) {
	store, done, err := scanStore(scan)
	if err != nil {
		return SweepReport{}, err
	}
	defer done()
	b, err := nsOf(before, "before")
	if err != nil {
		return SweepReport{}, err
	}
	c, cb, free, err := sweepOptions(opts, logf, nil)
	if err != nil {
		return SweepReport{}, err
	}
	defer free()
	n, nn := cString(node)
	defer C.free(unsafe.Pointer(n))
	var report *C.lj_sweep_report_t
	err = store.use(func(p *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_sweep_end_stale(&report, p, n, nn, b, c, &cerr), cerr)
	})
	return takeReport(report), sweepError(err, store, cb)
}

// EndOne ends this node's running step id (or the key <node>.<id>) as failed with
// why, and answers it. A step that is not running is refused (ErrRefused), and so is
// one this process owns (Owner; for a step with no owner, one started since Boot: it
// may still run), one live reports as held, and one whose key changed since it was
// read (ErrChanged). Another node's key or no why: ErrInvalid; no step there:
// ErrNotFound; a value that is no step: ErrParse.
func EndOne(scan Scan, node, id, why string, live func(id string) bool) (Step, error) {
	return EndOneWith(scan, node, id, why, live, nil)
}

// EndOneWith is EndOne with options.
func EndOneWith(scan Scan, node, id, why string, live func(id string) bool, opts *SweepOptions) (Step, error) {
	store, done, err := scanStore(scan)
	if err != nil {
		return Step{}, err
	}
	defer done()
	c, cb, free, err := sweepOptions(opts, nil, live)
	if err != nil {
		return Step{}, err
	}
	defer free()
	n, nn := cString(node)
	defer C.free(unsafe.Pointer(n))
	i, in := cString(id)
	defer C.free(unsafe.Pointer(i))
	w, wn := cString(why)
	defer C.free(unsafe.Pointer(w))
	var step *C.lj_step_t
	var value *C.char
	var vn C.size_t
	err = store.use(func(p *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_sweep_end_one(&step, &value, &vn, p, n, nn, i, in, w, wn, c, &cerr), cerr)
	})
	if err != nil {
		return Step{}, sweepError(err, store, cb)
	}
	defer C.lj_step_destroy(step)
	return stepOf(step, []byte(takeString(value, vn))), nil
}

// DecodeStep reads a step value as Go's encoding/json decodes the build SDK's step
// (one JSON value, only white space after it, every known field of its type, field
// names matched exactly or case-folded, the last duplicate winning). ErrParse, with
// why, when the value is no step; the JSON null is a step with every field empty.
func DecodeStep(value []byte) (Step, error) {
	var s *C.lj_step_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_step_decode(&s, nonNil(value), C.size_t(len(value)), &cerr), cerr); err != nil {
		return Step{}, err
	}
	defer C.lj_step_destroy(s)
	return stepOf(s, value), nil
}

// stepOf copies a decoded step; its ask comes from the value, read by encoding/json
// (the library decodes every field as encoding/json does, so the two agree).
func stepOf(s *C.lj_step_t, value []byte) Step {
	field := func(f C.int) string {
		var n C.size_t
		return goString(C.lj_step_string(s, f, &n), n)
	}
	moment := func(which C.int) time.Time {
		var sec C.int64_t
		var nsec C.int32_t
		if C.lj_step_time(&sec, &nsec, s, which, nil) != C.LJ_OK {
			return time.Time{}
		}
		return time.Unix(int64(sec), int64(nsec)).UTC()
	}
	out := Step{ID: field(C.LJ_STEP_FIELD_ID), Tool: field(C.LJ_STEP_FIELD_TOOL), State: field(C.LJ_STEP_FIELD_STATE),
		Owner: field(C.LJ_STEP_FIELD_OWNER), Reason: field(C.LJ_STEP_FIELD_REASON),
		Started: moment(C.LJ_STEP_STARTED), Ended: moment(C.LJ_STEP_ENDED)}
	var n C.size_t
	if r := C.lj_step_string(s, C.LJ_STEP_FIELD_RESULT, &n); r != nil {
		out.Result = json.RawMessage(goString(r, n))
	}
	// The ask, and the times with the offset they were written with (the seed's step
	// keeps it: encoding/json gives a time in the value's zone, not in UTC).
	var kept struct {
		Ask     *StepAsk  `json:"ask"`
		Started time.Time `json:"started"`
		Ended   time.Time `json:"ended"`
	}
	if json.Unmarshal(value, &kept) == nil {
		out.Ask = kept.Ask
		if kept.Started.Equal(out.Started) {
			out.Started = kept.Started
		}
		if kept.Ended.Equal(out.Ended) {
			out.Ended = kept.Ended
		}
	}
	return out
}

// EndStaleAtStart is what a build module runs once at its start, in a goroutine: it
// waits for the runtime to serve (StaleServed), then ends this node's steps a previous
// process left running (EndStale), trying again StaleRetry apart, StaleAttempts times
// in all, when the state cannot be read yet. A step names its owner, so before (the
// start of this process) matters only for a step with no owner. When the node's boot
// id cannot be read it says so once. ctx ends the wait and the retries.
func EndStaleAtStart(ctx context.Context, scan Scan, node string, before time.Time, logf func(string, ...any)) {
	_, _ = EndStaleAtStartWith(ctx, scan, node, before, logf, nil)
}

// EndStaleAtStartWith is EndStaleAtStart with options; the last sweep's report (nil
// when ctx ended the wait before any), or an error for options it cannot use.
func EndStaleAtStartWith(ctx context.Context, scan Scan, node string, before time.Time, logf func(string, ...any), opts *SweepOptions) (*SweepReport, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	store, done, err := scanStore(scan)
	if err != nil {
		return nil, err
	}
	defer done()
	b, err := nsOf(before, "before")
	if err != nil {
		return nil, err
	}
	c, _, free, err := sweepOptions(opts, logf, nil)
	if err != nil {
		return nil, err
	}
	defer free()
	var signals *C.lj_sweep_signals_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_sweep_signals_create(&signals, &cerr), cerr); err != nil {
		return nil, err
	}
	// The runtime's signal and ctx reach the waiting sweep through its signals; they
	// are destroyed only once the sweep returned and this goroutine is gone.
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		served := StaleServed()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				C.lj_sweep_signals_cancel(signals)
				return
			case <-served:
				C.lj_sweep_signals_serve(signals)
				served = nil
			}
		}
	}()
	n, nn := cString(node)
	defer C.free(unsafe.Pointer(n))
	var report *C.lj_sweep_report_t
	err = store.use(func(p *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_sweep_end_stale_at_start(&report, p, n, nn, b, signals, c, &cerr), cerr)
	})
	close(stop)
	<-watched
	C.lj_sweep_signals_destroy(signals)
	if report == nil {
		return nil, err
	}
	r := takeReport(report)
	return &r, err
}

// EndStaleRound is EndStale as the module's periodic round runs it: at once, and
// only when the runtime serves (StaleServed; a round before that is skipped, the
// start's EndStaleAtStart and the next round cover it). It ends the steps a previous
// process left and the asks past StepBound; its error is logged.
func EndStaleRound(scan Scan, node string, logf func(string, ...any)) {
	select {
	case <-StaleServed():
	default:
		return
	}
	if _, err := EndStale(scan, node, Boot, logf); err != nil && logf != nil {
		logf("ending the steps left running: %v", err)
	}
}

// --- keys -------------------------------------------------------------------------

// StepKey is `<node>.<id>`. ErrInvalid for an empty node, a node holding '.', or an
// empty id.
func StepKey(node, id string) (string, error) {
	n, nn := cString(node)
	defer C.free(unsafe.Pointer(n))
	i, in := cString(id)
	defer C.free(unsafe.Pointer(i))
	var out *C.char
	var l C.size_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_step_key(&out, &l, n, nn, i, in, &cerr), cerr); err != nil {
		return "", err
	}
	return takeString(out, l), nil
}

// ParseStepKey splits key at its first '.'. ErrParse when it has none or a side is empty.
func ParseStepKey(key string) (node, id string, err error) {
	return parseKey(key, false)
}

// ParseAskStepKey is ParseStepKey for an ask's key, whose id is a canonical UUID.
func ParseAskStepKey(key string) (node, id string, err error) {
	return parseKey(key, true)
}

func parseKey(key string, ask bool) (string, string, error) {
	k, kn := cString(key)
	defer C.free(unsafe.Pointer(k))
	var n C.size_t
	var cerr *C.lj_error_t
	var rc C.int
	if ask {
		rc = C.lj_step_ask_key_parse(&n, k, kn, &cerr)
	} else {
		rc = C.lj_step_key_parse(&n, k, kn, &cerr)
	}
	if err := errorOf(rc, cerr); err != nil {
		return "", "", err
	}
	return key[:n], key[n+1:], nil
}

// IsAsk says a step is a pulled ask's: its key is <node>.<UUID> and its tool ends in
// " ask" (a hand-started step has the tool's name).
func IsAsk(key, tool string) bool {
	k, kn := cString(key)
	defer C.free(unsafe.Pointer(k))
	t, tn := cString(tool)
	defer C.free(unsafe.Pointer(t))
	var out C.int
	return C.lj_step_is_ask(&out, k, kn, t, tn, nil) == C.LJ_OK && out != 0
}

// --- verdicts ---------------------------------------------------------------------

// StepAction is what a sweep does with a key.
type StepAction uint8

// The actions of lj_step_action_kind_t.
const (
	StepLeave  = StepAction(C.LJ_STEP_LEAVE)
	StepEnd    = StepAction(C.LJ_STEP_END)    // rewritten as failed
	StepDelete = StepAction(C.LJ_STEP_DELETE) // a pulled ask, left to its stream's redelivery
)

// String is "leave", "end" or "delete".
func (a StepAction) String() string {
	if s := C.GoString(C.lj_step_action_name(C.int(a))); s != "" {
		return s
	}
	return "StepAction(" + strconv.Itoa(int(a)) + ")"
}

// StepReason is why a key got its action; the numbers never change.
type StepReason uint8

// The reasons of lj_step_reason_t.
const (
	StepOtherNode      = StepReason(C.LJ_STEP_OTHER_NODE)       // no step key of this node: untouched
	StepNoValue        = StepReason(C.LJ_STEP_NO_VALUE)         // the key holds no value
	StepNoStep         = StepReason(C.LJ_STEP_NO_STEP)          // Go's decoder fails on the value: untouched
	StepNotRunning     = StepReason(C.LJ_STEP_NOT_RUNNING)      // a step, not running
	StepOwnedBySelf    = StepReason(C.LJ_STEP_OWNED_BY_SELF)    // this process owns it: leave
	StepOwnerNotSelf   = StepReason(C.LJ_STEP_OWNER_NOT_SELF)   // another owner (RuleNotSelf): end or delete
	StepOwnerGone      = StepReason(C.LJ_STEP_OWNER_GONE)       // an owner proven gone (RuleProvablyDead)
	StepOwnerAlive     = StepReason(C.LJ_STEP_OWNER_ALIVE)      // RuleProvablyDead: its owner runs: leave
	StepOwnerUnknown   = StepReason(C.LJ_STEP_OWNER_UNKNOWN)    // RuleProvablyDead: its owner cannot be judged
	StepAskWithinBound = StepReason(C.LJ_STEP_ASK_WITHIN_BOUND) // no owner, an ask its asker still waits for
	StepAskPastBound   = StepReason(C.LJ_STEP_ASK_PAST_BOUND)   // no owner, an ask past the step bound: end
	StepStartedBefore  = StepReason(C.LJ_STEP_STARTED_BEFORE)   // no owner, hand-started before `before`: end
	StepStartedSince   = StepReason(C.LJ_STEP_STARTED_SINCE)    // no owner, started since `before`: leave
	StepUnderMinAge    = StepReason(C.LJ_STEP_UNDER_MIN_AGE)    // started less than Rules.MinAge ago: leave
)

// String is the reason's stable name ("owner-not-self").
func (r StepReason) String() string {
	if s := C.GoString(C.lj_step_reason_name(C.int(r))); s != "" {
		return s
	}
	return "StepReason(" + strconv.Itoa(int(r)) + ")"
}

// RestartReason is why a step a previous process left running is ended.
const RestartReason = C.LJ_STEP_RESTART_REASON
