package leasejudge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The sweep's fixed inputs, and a steps state that holds one key of every kind. The
// expected verdicts are the step-stale Go code's, worked out by hand.
const (
	node    = "build-eu-1"
	self    = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4242.lxb2k3a0"
	other   = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4243.lxb2k3a0"
	askID   = "6f1c0a52-3b7e-4d0a-9c11-2f5e8d7b6a01"
	askID2  = "7a2d1b63-4c8f-4e1b-8d22-3a6f9e8c7b12"
	askID3  = "8b3e2c74-5d9a-4f2c-9e33-4b7a0f9d8c23"
	nowISO  = "2024-06-01T12:00:00Z"
	before0 = "2024-06-01T11:50:00Z"
)

type stateCase struct {
	key, value string
	action     StepAction
	reason     StepReason
	why, said  string
}

func stateCases() []stateCase {
	running := func(id, tool, owner, started string) string {
		o := ""
		if owner != "" {
			o = `,"owner":"` + owner + `"`
		}
		return `{"id":"` + id + `","tool":"` + tool + `","state":"running"` + o + `,"started":"` + started + `","x-extra":[1, 2]}`
	}
	noOwner := "it names no owner (an older build wrote it)"
	return []stateCase{
		{node + ".s1", running("s1", "go build", self, "2024-06-01T11:55:00Z"), StepLeave, StepOwnedBySelf, "", ""},
		{node + ".s2", running("s2", "go test", other, "2024-06-01T11:00:00Z"), StepEnd, StepOwnerNotSelf, RestartReason,
			"its owner " + other + " is not this process " + self},
		{node + "." + askID, running(askID, "check ask", other, "2024-06-01T11:58:00Z"), StepDelete, StepOwnerNotSelf, RestartReason,
			"its owner " + other + " is not this process " + self},
		{node + "." + askID2, running(askID2, "check ask", "", "2024-06-01T10:00:00Z"), StepEnd, StepAskPastBound,
			"past the step bound: its asker stopped waiting at 2024-06-01T11:00:00Z", noOwner},
		{node + "." + askID3, running(askID3, "check ask", "", "2024-06-01T11:50:00Z"), StepLeave, StepAskWithinBound, "", ""},
		{node + ".s3", running("s3", "lint", "", "2024-06-01T11:49:59Z"), StepEnd, StepStartedBefore, RestartReason,
			noOwner + " and started before this process"},
		{node + ".s4", running("s4", "lint", "", before0), StepLeave, StepStartedSince, "", ""},
		{node + ".s5", `{"id":"s5","tool":"go vet","state":"succeeded","owner":"` + other + `"}`, StepLeave, StepNotRunning, "", ""},
		{"build-eu-2.s6", running("s6", "go build", other, "2024-06-01T11:00:00Z"), StepLeave, StepOtherNode, "", ""},
		{node + ".s7", `{"id":"s7","state":"running","started":5}`, StepLeave, StepNoStep, "", ""},
		{node + ".s8", `{"id":"s8","state":"running","owner":"` + other + `"} x`, StepLeave, StepNoStep, "", ""},
	}
}

func at0(t testing.TB, iso string) time.Time {
	v, err := time.Parse(time.RFC3339, iso)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// testRules are the rules every plan and sweep here judges by: built once, handed to
// both (planOpts, sweepOpts).
func testRules(t testing.TB) Rules {
	return Rules{Owner: self, Now: at0(t, nowISO), Before: at0(t, before0)}
}

func sweepOpts(t testing.TB) *SweepOptions {
	return &SweepOptions{Rules: testRules(t)}
}

// scanOf is the Scan of a memBackend, as a module's own state would give it.
func scanOf(m *memBackend) Scan {
	return Scan{
		Keys: m.Keys,
		Get: func(key string) (json.RawMessage, uint64, error) {
			v, r, err := m.Get(key)
			return json.RawMessage(v), r, err
		},
		Update: func(key string, value any, revision uint64) (uint64, error) {
			raw, ok := value.(json.RawMessage)
			if !ok {
				return 0, fmt.Errorf("an update of %T", value)
			}
			return m.Update(key, raw, revision)
		},
		Delete: m.Delete,
	}
}

func fillState(t testing.TB, put func(key, value string)) {
	for _, c := range stateCases() {
		put(c.key, c.value)
	}
}

// checkSwept holds a state after a sweep of stateCases to what the rules say: ends
// rewritten (state failed, the why, ended now, every other byte kept), deletes gone,
// everything else as it was.
func checkSwept(t *testing.T, get func(key string) (string, bool), report SweepReport, lines []string) {
	t.Helper()
	var ended []string
	var wantLines []string
	for _, c := range stateCases() {
		got, ok := get(c.key)
		switch c.action {
		case StepLeave:
			if !ok || got != c.value {
				t.Errorf("%s was touched: %q", c.key, got)
			}
		case StepDelete:
			if ok {
				t.Errorf("%s was not deleted: %q", c.key, got)
			}
		case StepEnd:
			var s Step
			if err := json.Unmarshal([]byte(got), &s); err != nil || s.State != "failed" || s.Reason != c.why ||
				!s.Ended.Equal(at0(t, nowISO)) || !strings.Contains(got, `"x-extra":[1, 2]`) {
				t.Errorf("%s was ended as %q (%v)", c.key, got, err)
			}
		}
		if c.action != StepLeave {
			var s Step
			_ = json.Unmarshal([]byte(c.value), &s)
			ended = append(ended, s.ID)
			done := "ended"
			if c.action == StepDelete {
				done = "deleted, left to the stream's redelivery"
			}
			wantLines = append(wantLines, fmt.Sprintf("the step %s (%s, started %s) was left running and is %s: %s; %s",
				c.key, s.Tool, s.Started.UTC().Format(time.RFC3339), done, c.why, c.said))
		}
	}
	sort.Strings(ended)
	got := append([]string(nil), report.Ended...)
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(ended, ",") {
		t.Errorf("ended %q, want %q", report.Ended, ended)
	}
	// A sweep reads only its node's keys: the other node's are never counted.
	if report.Ends != 3 || report.Deletes != 1 || report.Changed != 0 || report.Leaves != 4 || report.NoStep != 2 || report.OtherNode != 0 {
		t.Errorf("counts %+v", report)
	}
	sort.Strings(lines)
	sort.Strings(wantLines)
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
}

type logBook struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBook) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logBook) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func TestEndStaleOverScan(t *testing.T) {
	m := newMemBackend()
	fillState(t, func(k, v string) { m.set(k, v) })
	var log logBook
	report, err := EndStaleWith(scanOf(m), node, at0(t, before0), log.logf, sweepOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	checkSwept(t, m.value, report, log.all())
}

func TestEndStaleOverStore(t *testing.T) {
	s, err := OpenMemoryStore()
	must(t, err)
	defer s.Close()
	fillState(t, func(k, v string) {
		if _, err := s.Create(k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	})
	var log logBook
	report, err := EndStaleWith(ScanOfStore(s), node, at0(t, before0), log.logf, sweepOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	checkSwept(t, func(k string) (string, bool) {
		v, _, err := s.Get(k)
		return string(v), err == nil && v != nil
	}, report, log.all())
	if keys, err := s.Keys(); err != nil || len(keys) != len(stateCases())-1 {
		t.Errorf("Keys = %q, %v", keys, err)
	}
}

// The seed's EndStale with the package's own Owner and Boot: a step another owner
// left is ended, this process's is left.
func TestEndStaleDefaults(t *testing.T) {
	m := newMemBackend()
	m.set(node+".mine", `{"id":"mine","tool":"t","state":"running","owner":"`+Owner+`","started":"2024-06-01T11:00:00Z"}`)
	m.set(node+".theirs", `{"id":"theirs","tool":"t","state":"running","owner":"`+other+`","started":"2024-06-01T11:00:00Z"}`)
	ended, err := EndStale(scanOf(m), node, Boot, nil)
	if err != nil || len(ended) != 1 || ended[0] != "theirs" {
		t.Fatalf("EndStale = %q, %v", ended, err)
	}
	if v, _ := m.value(node + ".mine"); !strings.Contains(v, `"state":"running"`) {
		t.Fatalf("this process's step was touched: %s", v)
	}
	// Nothing left to end: nil, as the seed answers.
	if ended, err := EndStale(scanOf(m), node, Boot, nil); err != nil || ended != nil {
		t.Fatalf("EndStale again = %#v, %v", ended, err)
	}
}

// A write another writer made first is skipped and counted, never overwritten.
func TestEndStaleRace(t *testing.T) {
	m := newMemBackend()
	fillState(t, func(k, v string) { m.set(k, v) })
	scan := scanOf(m)
	get := scan.Get
	scan.Get = func(key string) (json.RawMessage, uint64, error) {
		v, r, err := get(key)
		if key == node+".s2" {
			m.set(key, `{"id":"s2","tool":"go test","state":"succeeded"}`) // its real end lands first
		}
		return v, r, err
	}
	report, err := EndStaleWith(scan, node, at0(t, before0), nil, sweepOpts(t))
	if err != nil || report.Changed != 1 || report.Ends != 2 || strings.Contains(strings.Join(report.Ended, ","), "s2") {
		t.Fatalf("report %+v, %v", report, err)
	}
	if v, _ := m.value(node + ".s2"); v != `{"id":"s2","tool":"go test","state":"succeeded"}` {
		t.Fatalf("the real end was overwritten: %s", v)
	}
}

func TestEndStaleErrors(t *testing.T) {
	down := errors.New("the server is down")
	m := newMemBackend()
	fillState(t, func(k, v string) { m.set(k, v) })
	scan := scanOf(m)
	scan.Keys = func() ([]string, error) { return nil, down }
	_, err := EndStale(scan, node, at0(t, before0), nil)
	var e *Error
	if !errors.Is(err, down) || !errors.As(err, &e) || !strings.HasPrefix(e.Message, "buildstep: listing the steps of "+node+": ") {
		t.Fatalf("a failing Keys: %v", err)
	}
	// Get fails on one key: what was done before is answered with the error.
	scan = scanOf(m)
	failing := node + ".s7" // after the asks and s2, s3 in the keys' order
	get := scan.Get
	scan.Get = func(key string) (json.RawMessage, uint64, error) {
		if key == failing {
			return nil, 0, down
		}
		return get(key)
	}
	report, err := EndStaleWith(scan, node, at0(t, before0), nil, sweepOpts(t))
	if !errors.Is(err, down) || !errors.As(err, &e) || e.Message == "" || !strings.Contains(e.Message, "buildstep: reading the step "+failing) {
		t.Fatalf("a failing Get: %v", err)
	}
	if report.Ends+report.Deletes == 0 || len(report.Ended) != int(report.Ends+report.Deletes) {
		t.Fatalf("nothing done before the failure: %+v", report)
	}
	// No Delete: an ask another owner held cannot be deleted; the sweep says so.
	m2 := newMemBackend()
	fillState(t, func(k, v string) { m2.set(k, v) })
	scan = scanOf(m2)
	scan.Delete = nil
	_, err = EndStaleWith(scan, node, at0(t, before0), nil, sweepOpts(t))
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "the steps state takes no delete") {
		t.Fatalf("no Delete: %v", err)
	}
	// A panicking log stops the sweep with the panic.
	m3 := newMemBackend()
	fillState(t, func(k, v string) { m3.set(k, v) })
	_, err = EndStaleWith(scanOf(m3), node, at0(t, before0), func(string, ...any) { panic("log broke") }, sweepOpts(t))
	if !errors.Is(err, ErrUser) || !strings.Contains(err.Error(), "log broke") {
		t.Fatalf("a panicking log: %v", err)
	}
	// Bad input.
	if _, err := EndStale(Scan{}, node, Boot, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an empty Scan: %v", err)
	}
	if _, err := EndStale(scanOf(m), node, time.Time{}, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("before the zero time: %v", err)
	}
	if _, err := EndStale(scanOf(m), "a.b", Boot, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a node holding '.': %v", err)
	}
	for _, bound := range []time.Duration{time.Microsecond, -time.Second} {
		if _, err := EndStaleWith(scanOf(m), node, Boot, nil, &SweepOptions{Rules: Rules{Bound: bound}}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("a bound of %v: %v", bound, err)
		}
	}
	// The rules may name the sweep's node, and no other.
	if _, err := EndStaleWith(scanOf(m), node, Boot, nil, &SweepOptions{Rules: Rules{Node: "other"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("rules naming another node: %v", err)
	}
}

func TestEndStaleProvablyDead(t *testing.T) {
	m := newMemBackend()
	fillState(t, func(k, v string) { m.set(k, v) })
	opts := sweepOpts(t)
	opts.Rule = RuleProvablyDead
	var judged []string
	var mu sync.Mutex
	opts.OwnerState = func(token string) HolderState {
		mu.Lock()
		judged = append(judged, token)
		mu.Unlock()
		return HolderAlive
	}
	report, err := EndStaleWith(scanOf(m), node, at0(t, before0), nil, opts)
	// Only the steps with no owner end; the live owner's are left.
	if err != nil || report.Ends != 2 || report.Deletes != 0 || len(judged) == 0 {
		t.Fatalf("report %+v, %v, judged %q", report, err, judged)
	}
	for _, tok := range judged {
		if tok != other {
			t.Fatalf("judged %q", tok)
		}
	}
}

func TestEndOne(t *testing.T) {
	m := newMemBackend()
	fillState(t, func(k, v string) { m.set(k, v) })
	m.set(node+".young", `{"id":"young","tool":"t","state":"running","started":"2024-06-01T11:59:00Z"}`)
	m.set(node+".live", `{"id":"live","tool":"t","state":"running","owner":"`+other+`","started":"2024-06-01T11:00:00Z"}`)
	scan := scanOf(m)
	opts := sweepOpts(t)
	live := func(id string) bool { return id == "live" }
	step, err := EndOneWith(scan, node, node+".s2", "stuck for a day", live, opts)
	if err != nil || step.ID != "s2" || step.State != "failed" || step.Reason != "stuck for a day" || step.Tool != "go test" ||
		step.Owner != other || !step.Started.Equal(at0(t, "2024-06-01T11:00:00Z")) || !step.Ended.IsZero() || step.Ask != nil {
		t.Fatalf("EndOne = %+v, %v", step, err)
	}
	if v, _ := m.value(node + ".s2"); !strings.Contains(v, `"reason":"stuck for a day"`) || !strings.Contains(v, `"state":"failed"`) {
		t.Fatalf("the value written: %s", v)
	}
	// The stored offset kept, as encoding/json keeps it for the seed: not turned to UTC.
	m.set(node+".zoned", `{"id":"zoned","tool":"t","state":"running","owner":"`+other+`","started":"2024-06-01T13:00:00.5+02:00"}`)
	step, err = EndOneWith(scan, node, "zoned", "gone", nil, opts)
	var seedStarted time.Time
	if e := seedStarted.UnmarshalJSON([]byte(`"2024-06-01T13:00:00.5+02:00"`)); e != nil {
		t.Fatal(e)
	}
	if _, off := step.Started.Zone(); err != nil || off != 2*3600 || !step.Started.Equal(seedStarted) ||
		step.Started.String() != seedStarted.String() {
		t.Fatalf("EndOne(zoned).Started = %v (%v), want %v", step.Started, err, seedStarted)
	}
	if !step.Ended.IsZero() || step.Ended != (time.Time{}) {
		t.Fatalf("EndOne(zoned).Ended = %#v, want the zero time as encoding/json leaves it", step.Ended)
	}
	// An ask: its ask comes back too.
	step, err = EndOneWith(scan, node, askID, "gone", nil, opts)
	if err != nil || step.Ask != nil || step.Tool != "check ask" {
		t.Fatalf("EndOne(ask) = %+v, %v", step, err)
	}
	m.set(node+".withask", `{"id":"withask","tool":"build ask","state":"running","owner":"`+other+`","ask":{"kind":"build","build":{"module":"m","fp":"0123456789abcdef0"}},"result":{"a":1}}`)
	step, err = EndOneWith(scan, node, "withask", "gone", nil, opts)
	if err != nil || step.Ask == nil || step.Ask.Build == nil || step.Ask.Build.Module != "m" || string(step.Result) != `{"a":1}` ||
		AskWhat(*step.Ask) != "build ask, module m, fp 0123456789ab" {
		t.Fatalf("EndOne(withask) = %+v, %v", step, err)
	}
	refusals := []struct {
		name, id, why string
		want          Code
	}{
		{"another node's key", "build-eu-2.s6", "x", ErrInvalid},
		{"no why", "s3", "  ", ErrInvalid},
		{"no such step", "nothing", "x", ErrNotFound},
		{"no step", "s7", "x", ErrParse},
		{"not running", "s5", "x", ErrRefused},
		{"this process's", "s1", "x", ErrRefused},
		{"no owner, started since Boot", "young", "x", ErrRefused},
		{"live", "live", "x", ErrRefused},
	}
	for _, r := range refusals {
		before, _ := m.value(node + "." + strings.TrimPrefix(r.id, node+"."))
		_, err := EndOneWith(scan, node, r.id, r.why, live, opts)
		var e *Error
		if !errors.Is(err, r.want) || !errors.As(err, &e) || e.Message == "" {
			t.Errorf("%s: %v, want %v", r.name, err, r.want)
		}
		if after, _ := m.value(node + "." + strings.TrimPrefix(r.id, node+".")); after != before {
			t.Errorf("%s: the value changed to %s", r.name, after)
		}
	}
	// Moved while it was ended.
	scan.Update = func(string, any, uint64) (uint64, error) { return 0, ErrChanged }
	if _, err := EndOneWith(scan, node, "s3", "x", nil, opts); !errors.Is(err, ErrChanged) {
		t.Errorf("moved while ended: %v", err)
	}
}

func TestEndStaleAtStart(t *testing.T) {
	defer func(a int, r time.Duration, s func() <-chan struct{}) {
		StaleAttempts, StaleRetry, StaleServed = a, r, s
	}(StaleAttempts, StaleRetry, StaleServed)
	StaleAttempts, StaleRetry = 4, 10*time.Millisecond
	m := newMemBackend()
	fillState(t, func(k, v string) { m.set(k, v) })
	scan := scanOf(m)
	var calls int32
	keys := scan.Keys
	scan.Keys = func() ([]string, error) {
		if atomic.AddInt32(&calls, 1) <= 2 {
			return nil, errors.New("not served yet")
		}
		return keys()
	}
	served := make(chan struct{})
	StaleServed = func() <-chan struct{} { return served }
	var log logBook
	done := make(chan *SweepReport)
	go func() {
		r, err := EndStaleAtStartWith(context.Background(), scan, node, at0(t, before0), log.logf, sweepOpts(t))
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	time.Sleep(50 * time.Millisecond)
	if atomic.LoadInt32(&calls) != 0 {
		t.Fatal("the state was read before the runtime served")
	}
	close(served)
	r := <-done
	if r == nil || r.Ends != 3 || r.Deletes != 1 || atomic.LoadInt32(&calls) != 3 {
		t.Fatalf("report %+v after %d calls", r, calls)
	}
	lines := log.all()
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "ending the steps left running (try 1 of 4): ") ||
		!strings.HasPrefix(lines[1], "ending the steps left running (try 2 of 4): ") ||
		lines[len(lines)-1] != "4 steps of "+node+" left running by a previous process ended" {
		t.Fatalf("logged %q", lines)
	}
	// Never served: a cancel ends the wait, nothing is read.
	StaleServed = func() <-chan struct{} { return make(chan struct{}) }
	atomic.StoreInt32(&calls, 0)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if r, err := EndStaleAtStartWith(ctx, scan, node, at0(t, before0), nil, sweepOpts(t)); r != nil || err != nil || atomic.LoadInt32(&calls) != 0 {
		t.Fatalf("cancelled: %+v %v after %d calls", r, err, calls)
	}
	// Every try fails: StaleAttempts tries, each logged, then it gives up.
	StaleServed = func() <-chan struct{} { return servedAlready }
	scan.Keys = func() ([]string, error) { return nil, errors.New("down") }
	var log2 logBook
	EndStaleAtStart(context.Background(), scan, node, at0(t, before0), log2.logf)
	if lines := log2.all(); len(lines) < 4 || !strings.HasPrefix(lines[len(lines)-1], "ending the steps left running (try 4 of 4): ") {
		t.Fatalf("logged %q", lines)
	}
}

func TestEndStaleRound(t *testing.T) {
	defer func(s func() <-chan struct{}) { StaleServed = s }(StaleServed)
	m := newMemBackend()
	m.set(node+".theirs", `{"id":"theirs","tool":"t","state":"running","owner":"`+other+`","started":"2024-06-01T11:00:00Z"}`)
	StaleServed = func() <-chan struct{} { return make(chan struct{}) }
	EndStaleRound(scanOf(m), node, nil)
	if v, _ := m.value(node + ".theirs"); !strings.Contains(v, `"running"`) {
		t.Fatal("a round before the runtime served swept")
	}
	StaleServed = func() <-chan struct{} { return servedAlready }
	var log logBook
	EndStaleRound(scanOf(m), node, log.logf)
	if v, _ := m.value(node + ".theirs"); !strings.Contains(v, `"failed"`) || len(log.all()) != 1 {
		t.Fatalf("the round: %s, logged %q", v, log.all())
	}
	s := scanOf(m)
	s.Keys = func() ([]string, error) { return nil, errors.New("down") }
	var log2 logBook
	EndStaleRound(s, node, log2.logf)
	if l := log2.all(); len(l) != 1 || !strings.HasPrefix(l[0], "ending the steps left running: ") || !strings.HasSuffix(l[0], "down") {
		t.Fatalf("logged %q", l)
	}
}

func TestScanOf(t *testing.T) {
	k := &keptState{m: newMemBackend()}
	scan := ScanOf(k)
	rev := k.m.set("a.b", `{"id":"b"}`)
	if v, r, err := scan.Get("a.b"); string(v) != `{"id":"b"}` || r != rev || err != nil {
		t.Fatalf("Get = %s %d %v", v, r, err)
	}
	if v, r, err := scan.Get("a.none"); v != nil || r != 0 || err != nil {
		t.Fatalf("Get(none) = %s %d %v", v, r, err)
	}
	// Delete re-reads: a key moved since the read is not deleted.
	k.m.set("a.b", `{"id":"b2"}`)
	if err := scan.Delete("a.b", rev); !errors.Is(err, ErrChanged) {
		t.Fatalf("Delete(moved) = %v", err)
	}
	_, rev, _ = scan.Get("a.b")
	if err := scan.Delete("a.b", rev); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.m.value("a.b"); ok {
		t.Fatal("not deleted")
	}
	// A sweep through it.
	fillState(t, func(key, v string) { k.m.set(key, v) })
	var log logBook
	report, err := EndStaleWith(scan, node, at0(t, before0), log.logf, sweepOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	checkSwept(t, k.m.value, report, log.all())
}

// keptState is a KeptState over a memBackend (its Delete takes no revision).
type keptState struct{ m *memBackend }

func (k *keptState) Keys() ([]string, error) { return k.m.Keys() }
func (k *keptState) Get(key string) (*KeptEntry, error) {
	v, r, err := k.m.Get(key)
	if err != nil || v == nil {
		return nil, err
	}
	return &KeptEntry{Value: v, Revision: r}, nil
}
func (k *keptState) Update(key string, value any, revision uint64) (uint64, error) {
	raw, err := valueBytes(value)
	if err != nil {
		return 0, err
	}
	return k.m.Update(key, raw, revision)
}
func (k *keptState) Delete(key string) error {
	_, r, _ := k.m.Get(key)
	return k.m.Delete(key, r)
}

func TestAskWhat(t *testing.T) {
	fetch := func(repo, commit string) map[string]any { return map[string]any{"repository": repo, "commit": commit} }
	cases := []struct {
		ask  StepAsk
		want string
	}{
		{StepAsk{Kind: "check", Check: &StepCheck{Fetch: fetch("org/repo", "0123456789abcdef"), Levels: []string{"unit", "lint"}, Run: "r1"}},
			"check ask, org/repo@0123456789ab, levels unit,lint, run r1"},
		{StepAsk{Kind: "check", Check: &StepCheck{Fetch: fetch("org/repo", "abc")}}, "check ask, org/repo@abc, levels "},
		{StepAsk{Kind: "build", Build: &StepBuild{Module: "mod", Fetch: fetch("o/r", "fedcba9876543210"), FP: "0123456789abcdef"}},
			"build ask, module mod, o/r@fedcba987654, fp 0123456789ab"},
		{StepAsk{Kind: "build", Build: &StepBuild{Module: "mod"}}, "build ask, module mod"},
		{StepAsk{Kind: "compose", Compose: &StepCompose{Fetch: fetch("o/r", "c")}}, "compose ask, compose, o/r@c"},
		{StepAsk{Kind: "other"}, "other ask"},
		{StepAsk{Kind: "check", Check: &StepCheck{Fetch: map[string]any{"repository": 7, "commit": "c"}}}, "check ask, @c, levels "},
		// What JSON cannot hold changes nothing: the Go values are read as they are.
		{StepAsk{Kind: "odd", Check: &StepCheck{Fetch: map[string]any{"x": make(chan int)}}}, "odd ask, @, levels "},
		{StepAsk{Kind: "check", Check: &StepCheck{Fetch: map[string]any{"repository": "o/r", "commit": "c", "n": math.NaN()}}},
			"check ask, o/r@c, levels "},
		// A head is cut at 12 bytes, not runes, and bytes that are no UTF-8 stay as they are.
		{StepAsk{Kind: "check", Check: &StepCheck{Fetch: fetch("o/\xff", "ééééééé"), Levels: []string{"\xfe"}}},
			"check ask, o/\xff@éééééé, levels \xfe"},
		{StepAsk{Kind: "build", Build: &StepBuild{Module: "m", FP: "ñññññññ"}}, "build ask, module m, fp ññññññ"},
		{StepAsk{Kind: "compose", Compose: &StepCompose{Fetch: fetch("o/r", "0123456789a\u00e9")}}, "compose ask, compose, o/r@0123456789a\xc3"},
		// A repository that is no Go string (a json.RawMessage, say) is empty, as the seed's type assertion makes it.
		{StepAsk{Kind: "build", Build: &StepBuild{Module: "m", Fetch: map[string]any{"repository": json.RawMessage(`"o/r"`)}}},
			"build ask, module m"},
		{StepAsk{Kind: "check", Check: &StepCheck{Fetch: map[string]any{"repository": json.RawMessage(`"o/r"`), "commit": "c"}}},
			"check ask, @c, levels "},
	}
	for _, c := range cases {
		if got := AskWhat(c.ask); got != c.want {
			t.Errorf("AskWhat(%+v) = %q, want %q", c.ask, got, c.want)
		}
	}
}

func TestStepKeys(t *testing.T) {
	if k, err := StepKey(node, "s1"); err != nil || k != node+".s1" {
		t.Fatalf("StepKey = %q, %v", k, err)
	}
	for _, bad := range [][2]string{{"", "x"}, {"a.b", "x"}, {"a", ""}} {
		if _, err := StepKey(bad[0], bad[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("StepKey(%q, %q) = %v", bad[0], bad[1], err)
		}
	}
	if n, id, err := ParseStepKey("a.b.c"); err != nil || n != "a" || id != "b.c" {
		t.Fatalf("ParseStepKey = %q %q %v", n, id, err)
	}
	for _, bad := range []string{"", "ab", ".b", "a."} {
		if _, _, err := ParseStepKey(bad); !errors.Is(err, ErrParse) {
			t.Errorf("ParseStepKey(%q) = %v", bad, err)
		}
	}
	if _, _, err := ParseAskStepKey(node + ".s1"); !errors.Is(err, ErrParse) {
		t.Errorf("ParseAskStepKey(not a UUID) = %v", err)
	}
	if n, id, err := ParseAskStepKey(node + "." + strings.ToUpper(askID)); err != nil || n != node || id != strings.ToUpper(askID) {
		t.Errorf("ParseAskStepKey = %q %q %v", n, id, err)
	}
	if !IsAsk(node+"."+askID, "check ask") || IsAsk(node+"."+askID, "check") || IsAsk(node+".s1", "check ask") {
		t.Error("IsAsk")
	}
}

// Reason codes, actions and rules: the Go constants are the header's, one for one.
func TestStepConstantsMatchHeader(t *testing.T) {
	reasons := map[string]StepReason{
		"LJ_STEP_OTHER_NODE": StepOtherNode, "LJ_STEP_NO_VALUE": StepNoValue, "LJ_STEP_NO_STEP": StepNoStep,
		"LJ_STEP_NOT_RUNNING": StepNotRunning, "LJ_STEP_OWNED_BY_SELF": StepOwnedBySelf,
		"LJ_STEP_OWNER_NOT_SELF": StepOwnerNotSelf, "LJ_STEP_OWNER_GONE": StepOwnerGone,
		"LJ_STEP_OWNER_ALIVE": StepOwnerAlive, "LJ_STEP_OWNER_UNKNOWN": StepOwnerUnknown,
		"LJ_STEP_ASK_WITHIN_BOUND": StepAskWithinBound, "LJ_STEP_ASK_PAST_BOUND": StepAskPastBound,
		"LJ_STEP_STARTED_BEFORE": StepStartedBefore, "LJ_STEP_STARTED_SINCE": StepStartedSince,
		"LJ_STEP_UNDER_MIN_AGE": StepUnderMinAge,
	}
	// The enum lj_step_reason_t: the members between its braces.
	text := headerText(t)
	i := strings.Index(text, "typedef enum lj_step_reason_t {")
	j := strings.Index(text[i:], "}")
	if i < 0 || j < 0 {
		t.Fatal("no lj_step_reason_t in the header")
	}
	header := map[string]int{}
	for name, v := range headerConstants(t, `LJ_STEP_[A-Z_]+`) {
		if strings.Contains(text[i:i+j], name+" =") {
			header[name] = v
		}
	}
	if len(header) != len(reasons) {
		t.Errorf("the header has %d reasons, Go %d: %v", len(header), len(reasons), header)
	}
	for name, v := range header {
		r, ok := reasons[name]
		if !ok || int(r) != v {
			t.Errorf("%s = %d in the header; Go %d (%v)", name, v, int(r), ok)
		}
		want := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "LJ_STEP_")), "_", "-")
		if r.String() != want {
			t.Errorf("%s is named %q, want %q", name, r.String(), want)
		}
	}
	consts := headerConstants(t, `LJ_STEP_(?:LEAVE|END|DELETE|RULE_NOT_SELF|RULE_PROVABLY_DEAD|RULE_BY_OWNER)`)
	if consts["LJ_STEP_LEAVE"] != int(StepLeave) || consts["LJ_STEP_END"] != int(StepEnd) || consts["LJ_STEP_DELETE"] != int(StepDelete) ||
		consts["LJ_STEP_RULE_NOT_SELF"] != int(RuleNotSelf.c()) || consts["LJ_STEP_RULE_PROVABLY_DEAD"] != int(RuleProvablyDead.c()) ||
		consts["LJ_STEP_RULE_BY_OWNER"] != int(RuleByOwner.c()) || OwnerRule(0) != RuleByOwner || int(OwnerRule(7).c()) != 7 {
		t.Errorf("actions and rules: %v", consts)
	}
	if StepLeave.String() != "leave" || StepEnd.String() != "end" || StepDelete.String() != "delete" ||
		StepAction(9).String() != "StepAction(9)" || StepReason(99).String() != "StepReason(99)" {
		t.Error("action names")
	}
	if RestartReason != "the build module restarted while it ran" {
		t.Errorf("RestartReason = %q", RestartReason)
	}
}

func TestDecodeStep(t *testing.T) {
	v := `{"id":"s1","Tool":"go test","state":"running","owner":"o","started":"2024-06-01T11:00:00.5Z",` +
		`"ended":null,"reason":"r","result":[1, 2],"ask":{"kind":"check","check":{"fetch":{"repository":"o/r","commit":"c"},"levels":["unit"]}},"id":"s2"}`
	s, err := DecodeStep([]byte(v))
	if err != nil || s.ID != "s2" || s.Tool != "go test" || s.State != "running" || s.Owner != "o" || s.Reason != "r" ||
		!s.Started.Equal(at0(t, "2024-06-01T11:00:00Z").Add(500*time.Millisecond)) || !s.Ended.IsZero() ||
		string(s.Result) != "[1, 2]" || s.Ask == nil || s.Ask.Check == nil || AskWhat(*s.Ask) != "check ask, o/r@c, levels unit" {
		t.Fatalf("DecodeStep = %+v, %v", s, err)
	}
	// What encoding/json says of the same bytes, field by field.
	var g Step
	must(t, json.Unmarshal([]byte(v), &g))
	if g.ID != s.ID || g.Tool != s.Tool || !g.Started.Equal(s.Started) || string(g.Result) != string(s.Result) {
		t.Fatalf("encoding/json reads %+v", g)
	}
	for _, bad := range []string{`{"id":"x"} x`, `{"started":5}`, `[1]`, "\xef\xbb\xbf{}", `{"state":"running"`, ""} {
		var e *Error
		if _, err := DecodeStep([]byte(bad)); !errors.Is(err, ErrParse) || !errors.As(err, &e) || e.Message == "" {
			t.Errorf("DecodeStep(%q) = %v", bad, err)
		}
		if json.Unmarshal([]byte(bad), new(Step)) == nil {
			t.Errorf("encoding/json decodes %q", bad)
		}
	}
	if s, err := DecodeStep([]byte("null")); err != nil || s.ID != "" || !s.Started.IsZero() {
		t.Errorf("DecodeStep(null) = %+v, %v", s, err)
	}
}
