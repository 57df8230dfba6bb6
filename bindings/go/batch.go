package leasejudge

/*
#include <stdlib.h>
#include "leasejudge.h"
#include "trampolines.h"
*/
import "C"

import (
	"runtime/cgo"
	"time"
	"unsafe"
)

// The batch path: a sweep's plan over many keys crosses cgo once per batch, not once
// per key. The keys and values sit back to back in one buffer, each entry says where
// its key and value are, and the verdicts land in an array the caller owns; nothing
// is copied or allocated per key on either side.

// Entry says where one key and its value sit in a batch buffer (offsets from its
// start). Its layout is lj_step_entry_t's, so a slice of them goes to C as it is.
type Entry struct {
	KeyOffset   uint64
	ValueOffset uint64
	KeyLen      uint32
	ValueLen    uint32 // 0: the key holds no value
	Revision    uint64
}

// Action is one key's verdict. Its layout is lj_step_action_t's (16 bytes).
type Action struct {
	Kind      StepAction
	Reason    StepReason
	reserved  uint16
	BoundNsec int32 // with StepAskPastBound, StepAskWithinBound: when its asker stops waiting
	BoundSec  int64
}

// The layouts above are C's, field by field: a mismatch does not compile (an index
// out of range of a one-element array, or a negative constant).
var (
	_ = [1]byte{}[unsafe.Sizeof(Entry{})-C.sizeof_lj_step_entry_t]
	_ = [1]byte{}[C.sizeof_lj_step_entry_t-unsafe.Sizeof(Entry{})]
	_ = [1]byte{}[unsafe.Offsetof(Entry{}.ValueOffset)-unsafe.Offsetof(C.lj_step_entry_t{}.value_offset)]
	_ = [1]byte{}[unsafe.Offsetof(Entry{}.KeyLen)-unsafe.Offsetof(C.lj_step_entry_t{}.key_len)]
	_ = [1]byte{}[unsafe.Offsetof(Entry{}.ValueLen)-unsafe.Offsetof(C.lj_step_entry_t{}.value_len)]
	_ = [1]byte{}[unsafe.Offsetof(Entry{}.Revision)-unsafe.Offsetof(C.lj_step_entry_t{}.revision)]
	_ = [1]byte{}[unsafe.Sizeof(Action{})-C.sizeof_lj_step_action_t]
	_ = [1]byte{}[C.sizeof_lj_step_action_t-unsafe.Sizeof(Action{})]
	_ = [1]byte{}[unsafe.Offsetof(Action{}.Reason)-unsafe.Offsetof(C.lj_step_action_t{}.reason)]
	_ = [1]byte{}[unsafe.Offsetof(Action{}.BoundNsec)-unsafe.Offsetof(C.lj_step_action_t{}.bound_nsec)]
	_ = [1]byte{}[unsafe.Offsetof(Action{}.BoundSec)-unsafe.Offsetof(C.lj_step_action_t{}.bound_sec)]
)

// Why is the action's why: RestartReason, "past the step bound: its asker stopped
// waiting at <time>", or "" for leave.
func (a Action) Why() string {
	var buf [C.LJ_STEP_WHY_MAX]C.char
	var n C.size_t
	c := a.cAction()
	if C.lj_step_why(&buf[0], C.size_t(len(buf)), &n, &c, nil) != C.LJ_OK {
		return ""
	}
	return C.GoStringN(&buf[0], C.int(n))
}

// Said is what the sweep's log says of the step's owner ("its owner <owner> is not
// this process <self>", ...; "" for leave). self "": Owner.
func (a Action) Said(owner, self string) string {
	if self == "" {
		self = Owner
	}
	o, on := cString(owner)
	defer C.free(unsafe.Pointer(o))
	s, sn := cString(self)
	defer C.free(unsafe.Pointer(s))
	c := a.cAction()
	var out *C.char
	var n C.size_t
	if C.lj_step_said(&out, &n, &c, o, on, s, sn, nil) != C.LJ_OK {
		return ""
	}
	return takeString(out, n)
}

func (a Action) cAction() C.lj_step_action_t {
	return *(*C.lj_step_action_t)(unsafe.Pointer(&a))
}

// BoundAt is when the asker of an ask stops (or stopped) waiting, for
// StepAskPastBound and StepAskWithinBound; the zero time otherwise.
func (a Action) BoundAt() time.Time {
	if a.Reason != StepAskPastBound && a.Reason != StepAskWithinBound {
		return time.Time{}
	}
	return time.Unix(a.BoundSec, int64(a.BoundNsec)).UTC()
}

// PlanSummary counts a plan: Ends + Deletes + Leaves + NoStep + OtherNode is the
// number of keys.
type PlanSummary struct {
	Ends, Deletes, Leaves, NoStep, OtherNode uint64
	Malformed                                uint64 // PlanLines: lines that are no entry
}

// Rules are whose steps a plan or a sweep judges and by which rules: built once and
// handed to a plan (PlanOptions) and a sweep (SweepOptions) alike. A zero field is the
// seed's package variable where it has one (Owner for a sweep, Boot for before,
// StepBound) and the library's default otherwise: the system clock, RuleByOwner, a start
// tolerance of 5 s, owners judged on this node. Resolve says what the library makes of
// them.
type Rules struct {
	// Node is the node whose keys are judged: a plan's (PlanOptions.Node, when set,
	// stands for it); a sweep names its node itself, and Node must then be "" or the
	// same.
	Node string
	// Owner is the caller's owner token (Owner for this process's), or "": none
	// named, and the default rule, RuleByOwner, is then RuleProvablyDead for a plan.
	// A token of another shape is refused (ErrInvalid).
	Owner          string
	Before         time.Time // a step with no owner started before it is ended
	Now            time.Time // fixed: every verdict and end time uses it (tests)
	Bound          time.Duration
	Rule           OwnerRule
	StartTolerance time.Duration
	// OwnerState judges an owner token under RuleProvablyDead; with Threads > 1 it is
	// called from several threads at once.
	OwnerState func(token string) HolderState
	// MinAge: a running step started less than MinAge before now is left, whoever
	// owns it (StepUnderMinAge): a guard when a node's boot time is in doubt.
	MinAge time.Duration
	// SelfPID is whose owner token "self" is when Owner is "", and whose start a zero
	// Before stands for (the package's Owner and Boot are this process's): 0, this
	// process.
	SelfPID int
}

// into writes r into c (initialised by the caller), the package's variables standing
// for the zero fields it names; free releases the C strings it made (also on an
// error).
func (r Rules) into(c *C.lj_step_rules_t) (free func(), err error) {
	if r.Before.IsZero() && r.SelfPID == 0 {
		r.Before = Boot
	}
	if r.Bound == 0 {
		r.Bound = StepBound
	}
	node, owner := C.CString(r.Node), C.CString(r.Owner)
	free = func() {
		C.free(unsafe.Pointer(node))
		C.free(unsafe.Pointer(owner))
	}
	c.node, c.node_len = node, C.size_t(len(r.Node))
	c.owner, c.owner_len = owner, C.size_t(len(r.Owner))
	if !r.Before.IsZero() {
		if c.before_ns, err = nsOf(r.Before, "before"); err != nil {
			return free, err
		}
	}
	if !r.Now.IsZero() {
		if c.now_ns, err = nsOf(r.Now, "now"); err != nil {
			return free, err
		}
	}
	if r.Bound > 0 && r.Bound < time.Millisecond {
		return free, &Error{Code: ErrInvalid, Message: "a step bound of " + r.Bound.String() + " is under a millisecond"}
	}
	c.bound_ms = C.int64_t(r.Bound / time.Millisecond) // a negative one is the library's to refuse
	c.rule = r.Rule.c()
	if r.StartTolerance != 0 {
		c.start_tolerance_ms = C.int64_t(r.StartTolerance / time.Millisecond)
	}
	if r.MinAge != 0 {
		c.min_age_ms = C.int64_t(r.MinAge / time.Millisecond)
	}
	c.self_pid = C.int64_t(r.SelfPID)
	return free, nil
}

// Resolved is what the library makes of Rules: the rule it judges by, the owner
// token "self" is, and why, as a person reads it.
type Resolved struct {
	Rule  OwnerRule // RuleNotSelf or RuleProvablyDead
	Owner string
	Why   string // "rule provably-dead (no owner named): only owners proven gone ..."
}

// Resolve says which rule the library judges r by and why, as a plan resolves them
// (out of the owners' processes): ErrInvalid for rules a plan refuses (no Node, a
// Node holding '.', an Owner that is no owner token, RuleNotSelf with no Owner, ...),
// ErrNotFound for a SelfPID of no process.
func (r Rules) Resolve() (Resolved, error) {
	c := (*C.lj_step_rules_t)(C.malloc(C.sizeof_lj_step_rules_t))
	defer C.free(unsafe.Pointer(c))
	C.lj_step_rules_init(c, C.LJ_STEP_RULES_VERSION)
	free, err := r.into(c)
	defer free()
	if err != nil {
		return Resolved{}, err
	}
	var rule C.int
	var owner, why *C.char
	var ownerLen, whyLen C.size_t
	var cerr *C.lj_error_t
	if rc := C.lj_step_rules_resolve(&rule, &owner, &ownerLen, &why, &whyLen, c, &cerr); rc != C.LJ_OK {
		return Resolved{}, errorOf(rc, cerr)
	}
	defer C.lj_free(unsafe.Pointer(owner))
	defer C.lj_free(unsafe.Pointer(why))
	out := Resolved{Rule: RuleNotSelf, Owner: C.GoStringN(owner, C.int(ownerLen)), Why: C.GoStringN(why, C.int(whyLen))}
	if rule == C.LJ_STEP_RULE_PROVABLY_DEAD {
		out.Rule = RuleProvablyDead
	}
	return out, nil
}

// PlanOptions say whose steps a plan judges, by which Rules, on how many threads.
type PlanOptions struct {
	Node string // the node whose keys are judged; "": Rules.Node
	Rules
	Threads int
}

// planOptions is opts as C memory, its callback wired through a handle.
func planOptions(opts *PlanOptions) (*C.lj_step_plan_options_t, *stepCallbacks, func(), error) {
	if opts == nil || (opts.Node == "" && opts.Rules.Node == "") {
		return nil, nil, nil, &Error{Code: ErrInvalid, Message: "the plan names no node"}
	}
	o := *opts
	if o.Node != "" {
		o.Rules.Node = o.Node
	}
	c := (*C.lj_step_plan_options_t)(C.malloc(C.sizeof_lj_step_plan_options_t))
	C.lj_step_plan_options_init(c, C.LJ_STEP_PLAN_OPTIONS_VERSION)
	freeRules, err := o.Rules.into(&c.rules)
	free := func() {
		freeRules()
		C.free(unsafe.Pointer(c))
	}
	if err != nil {
		free()
		return nil, nil, nil, err
	}
	if o.Threads > 1 {
		c.threads = C.uint32_t(o.Threads)
	}
	cb := &stepCallbacks{ownerState: o.OwnerState}
	h := cgo.NewHandle(cb)
	C.lj_go_plan_wire(c, C.uintptr_t(h), flag(o.OwnerState != nil))
	return c, cb, func() { h.Delete(); free() }, nil
}

// PlanBatch plans every entry of buffer into out[i], in one call into the library:
// out must hold at least len(entries) actions. Values are read where they are, without a
// copy, and no byte past len(buffer) is read. ErrInvalid for an entry outside the
// buffer, a short out, or no node. Empty entries plan nothing and do not call the library.
func PlanBatch(buffer []byte, entries []Entry, out []Action, opts *PlanOptions) (PlanSummary, error) {
	if len(out) < len(entries) {
		return PlanSummary{}, &Error{Code: ErrInvalid, Message: "out holds fewer actions than there are entries"}
	}
	c, cb, free, err := planOptions(opts)
	if err != nil {
		return PlanSummary{}, err
	}
	defer free()
	if len(entries) == 0 {
		return PlanSummary{}, nil
	}
	var base *C.char
	if len(buffer) > 0 {
		base = (*C.char)(unsafe.Pointer(&buffer[0]))
	} else {
		base = emptyC
	}
	var s C.lj_step_plan_summary_t
	var cerr *C.lj_error_t
	rc := C.lj_step_plan_batch((*C.lj_step_action_t)(unsafe.Pointer(&out[0])), C.size_t(len(out)), &s,
		base, C.size_t(len(buffer)), 0,
		(*C.lj_step_entry_t)(unsafe.Pointer(&entries[0])), C.size_t(len(entries)), c, &cerr)
	if err := errorOf(rc, cerr); err != nil {
		return PlanSummary{}, withCallbackError(err, cb.took())
	}
	return summaryOf(&s), nil
}

func summaryOf(s *C.lj_step_plan_summary_t) PlanSummary {
	return PlanSummary{Ends: uint64(s.ends), Deletes: uint64(s.deletes), Leaves: uint64(s.leaves),
		NoStep: uint64(s.no_step), OtherNode: uint64(s.other_node), Malformed: uint64(s.malformed)}
}

// Batch gathers keys and values into one buffer and its entries, for PlanBatch. Reset
// reuses it.
type Batch struct {
	Buffer  []byte
	Entries []Entry
	out     []Action
}

// Add appends a key, the revision it was read at and its value (nil: none).
func (b *Batch) Add(key string, revision uint64, value []byte) {
	need := len(b.Buffer) + len(key) + len(value)
	if cap(b.Buffer) < need {
		grown := make([]byte, len(b.Buffer), 2*need)
		copy(grown, b.Buffer)
		b.Buffer = grown
	}
	e := Entry{KeyOffset: uint64(len(b.Buffer)), KeyLen: uint32(len(key)), Revision: revision}
	b.Buffer = append(b.Buffer, key...)
	e.ValueOffset, e.ValueLen = uint64(len(b.Buffer)), uint32(len(value))
	b.Buffer = append(b.Buffer, value...)
	b.Entries = append(b.Entries, e)
}

// Len is the number of entries.
func (b *Batch) Len() int { return len(b.Entries) }

// Key and Value are entry i's, pointing into the buffer.
func (b *Batch) Key(i int) []byte {
	e := b.Entries[i]
	return b.Buffer[e.KeyOffset : e.KeyOffset+uint64(e.KeyLen)]
}

func (b *Batch) Value(i int) []byte {
	e := b.Entries[i]
	return b.Buffer[e.ValueOffset : e.ValueOffset+uint64(e.ValueLen)]
}

// Reset empties the batch and keeps its memory.
func (b *Batch) Reset() {
	b.Buffer, b.Entries = b.Buffer[:0], b.Entries[:0]
}

// Plan is PlanBatch over the batch; the actions are the batch's, valid until the next
// Plan or Reset.
func (b *Batch) Plan(opts *PlanOptions) ([]Action, PlanSummary, error) {
	if cap(b.out) < len(b.Entries) {
		b.out = make([]Action, len(b.Entries))
	}
	out := b.out[:len(b.Entries)]
	s, err := PlanBatch(b.Buffer, b.Entries, out, opts)
	return out, s, err
}

// PlanLines is the plan of `leasejudge step plan` over JSON lines
// {"key":..,"revision":..,"value":..}: one line out per line in,
// {"key","action","reason","why"}, in order (a leave's why says why it is left).
func PlanLines(input []byte, opts *PlanOptions) ([]byte, PlanSummary, error) {
	c, cb, free, err := planOptions(opts)
	if err != nil {
		return nil, PlanSummary{}, err
	}
	defer free()
	var out *C.char
	var n C.size_t
	var s C.lj_step_plan_summary_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_step_plan_lines(&out, &n, &s, nonNil(input), C.size_t(len(input)), c, &cerr), cerr); err != nil {
		return nil, PlanSummary{}, withCallbackError(err, cb.took())
	}
	defer C.lj_free(unsafe.Pointer(out))
	return goBytes(out, n), summaryOf(&s), nil
}

// String is the summary line `leasejudge step plan` writes on stderr.
func (s PlanSummary) String() string {
	c := C.lj_step_plan_summary_t{ends: C.uint64_t(s.Ends), deletes: C.uint64_t(s.Deletes), leaves: C.uint64_t(s.Leaves),
		no_step: C.uint64_t(s.NoStep), other_node: C.uint64_t(s.OtherNode), malformed: C.uint64_t(s.Malformed)}
	var out *C.char
	var n C.size_t
	if C.lj_step_plan_summary_format(&out, &n, &c, nil) != C.LJ_OK {
		return ""
	}
	return takeString(out, n)
}
