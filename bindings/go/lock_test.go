package leasejudge

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func at(t *testing.T, iso string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const execBody = `{"purpose":"caelo upgrader job","id":"a1","host":"localhost","machine":null,"pid":1,` +
	`"startedAt":"2024-05-01T10:00:00.000Z","execution":{"projectId":"proj","region":"europe-west1","name":"upgrader-x7"},` +
	`"leaseUntil":"2024-05-01T11:05:00.000Z"}`

const execWho = "caelo upgrader job (run upgrader-x7, started 2024-05-01T10:00:00.000Z)"

func TestJudgeLockExecution(t *testing.T) {
	noLease := strings.Replace(execBody, `,"leaseUntil":"2024-05-01T11:05:00.000Z"`, "", 1)
	cases := []struct {
		name  string
		body  string
		state ExecutionState
		now   string
		want  LockVerdict
	}{
		{"finished", execBody, ExecutionState{ExecutionFinished, "succeeded"}, "2024-05-01T10:30:00Z",
			LockVerdict{LockBreak, LockExecutionFinished, false, execWho + " has succeeded, but its lock was left behind"}},
		{"running past its lease", execBody, ExecutionState{Kind: ExecutionRunning}, "2024-06-01T00:00:00Z",
			LockVerdict{LockHeld, LockExecutionRunning, false, execWho + " is still running"}},
		{"not found, now at the lease end", execBody, ExecutionState{Kind: ExecutionNotFound}, "2024-05-01T11:05:00Z",
			LockVerdict{LockHeld, LockExecutionNotFoundLeaseRuns, false, execWho + " is unknown to Cloud Run, but its lease runs until 2024-05-01T11:05:00.000Z"}},
		{"not found, a millisecond past", execBody, ExecutionState{Kind: ExecutionNotFound}, "2024-05-01T11:05:00.001Z",
			LockVerdict{LockBreak, LockExecutionNotFoundLeaseEnded, false, execWho + " is unknown to Cloud Run and its lease ended at 2024-05-01T11:05:00.000Z"}},
		{"not found, no lease", noLease, ExecutionState{Kind: ExecutionNotFound}, "2024-05-01T11:05:00Z",
			LockVerdict{LockHeld, LockExecutionNotFoundNoLease, true, execWho + " is unknown to Cloud Run and its lock carries no readable lease"}},
		{"unknown", execBody, ExecutionState{ExecutionUnknown, "PERMISSION_DENIED"}, "2024-05-01T10:30:00Z",
			LockVerdict{LockUnknown, LockExecutionUnknown, false, "could not check whether " + execWho + " is still running: PERMISSION_DENIED"}},
	}
	for _, c := range cases {
		var asked []Execution
		describe := func(e Execution) ExecutionState { asked = append(asked, e); return c.state }
		v, err := JudgeLock([]byte(c.body), at(t, c.now), &LockOptions{Describe: describe})
		if err != nil || v != c.want {
			t.Errorf("%s:\n got %+v, %v\nwant %+v", c.name, v, err, c.want)
		}
		if len(asked) != 1 || asked[0] != (Execution{ProjectID: "proj", Region: "europe-west1", Name: "upgrader-x7"}) {
			t.Errorf("%s: the describer was asked %+v", c.name, asked)
		}
	}
}

func processBody(extra string) string {
	return `{"purpose":"deploy","id":"b2","host":"build-1","machine":"m1","pid":4242,` +
		`"startedAt":"2024-05-01T10:00:00.000Z"` + extra + `}`
}

const processWho = "deploy (on build-1, pid 4242, started 2024-05-01T10:00:00.000Z)"

func TestJudgeLockProcess(t *testing.T) {
	lease := `,"leaseUntil":"2024-05-01T10:15:00.000Z"`
	dead := func(pid float64) bool { return pid != 4242 }
	alive := func(float64) bool { return true }
	owner := `,"owner":"00000000-0000-4000-8000-000000000000.4242.lvn5ww0w"`
	cases := []struct {
		name string
		body string
		here Here
		now  string
		want LockVerdict
	}{
		{"its pid is dead here", processBody(lease), Here{"build-1", MachineWithID, "m1", dead, nil}, "2024-05-01T10:01:00Z",
			LockVerdict{LockBreak, LockProcessGone, false, processWho + " has ended (its process is gone on this machine)"}},
		{"its pid is dead on another machine", processBody(lease), Here{"build-1", MachineWithID, "m2", dead, nil}, "2024-05-01T10:01:00Z",
			LockVerdict{LockHeld, LockLeaseRuns, false, "held by " + processWho + "; its lease runs until 2024-05-01T10:15:00.000Z unless renewed"}},
		{"a judge without a machine id trusts no pid", processBody(lease), Here{"build-1", MachineNone, "", dead, nil}, "2024-05-01T10:01:00Z",
			LockVerdict{LockHeld, LockLeaseRuns, false, "held by " + processWho + "; its lease runs until 2024-05-01T10:15:00.000Z unless renewed"}},
		{"lease ended", processBody(lease), Here{"build-1", MachineWithID, "m1", alive, nil}, "2024-05-01T10:15:00.001Z",
			LockVerdict{LockBreak, LockLeaseEnded, false, processWho + " stopped renewing its lock; its lease ended at 2024-05-01T10:15:00.000Z"}},
		{"no lease", processBody(""), Here{"build-1", MachineWithID, "m1", alive, nil}, "2030-01-01T00:00:00Z",
			LockVerdict{LockHeld, LockNoLease, true, "held by " + processWho}},
		{"a lease V8's ISO reader cannot read", processBody(`,"leaseUntil":"Jan 1 2024"`), Here{"build-1", MachineWithID, "m1", alive, nil}, "2030-01-01T00:00:00Z",
			LockVerdict{LockHeld, LockLeaseUnreadable, true, "held by " + processWho + ", whose lock carries no readable lease"}},
		{"its machine rebooted", processBody(lease + owner), Here{"build-1", MachineWithID, "m1", alive, func(string) HolderState { return HolderOtherBoot }}, "2024-05-01T10:01:00Z",
			LockVerdict{LockBreak, LockHolderRebooted, false, processWho + " has ended (this machine has restarted since it took the lock)"}},
		{"its pid was reused", processBody(lease + owner), Here{"build-1", MachineWithID, "m1", alive, func(string) HolderState { return HolderRecycled }}, "2024-05-01T10:01:00Z",
			LockVerdict{LockBreak, LockPidReused, false, processWho + " has ended (its pid now belongs to another process)"}},
		{"not readable", "  [1,2]\n", Here{}, "2024-05-01T10:01:00Z",
			LockVerdict{LockHeld, LockNotReadable, true, "the lock's holder is not readable ([1,2])"}},
		{"empty", "", Here{}, "2024-05-01T10:01:00Z",
			LockVerdict{LockHeld, LockNotReadable, true, "the lock's holder is not readable (empty)"}},
		{"pid as a string", strings.Replace(processBody(lease), `4242`, `"4242"`, 1), Here{}, "2024-05-01T10:01:00Z",
			LockVerdict{LockHeld, LockNotReadable, true, "the lock's holder is not readable (" + strings.Replace(processBody(lease), `4242`, `"4242"`, 1) + ")"}},
	}
	for _, c := range cases {
		here := c.here
		describe := func(Execution) ExecutionState {
			t.Errorf("%s: the describer was called for a process holder", c.name)
			return ExecutionState{Kind: ExecutionRunning}
		}
		v, err := JudgeLock([]byte(c.body), at(t, c.now), &LockOptions{Describe: describe, Here: &here})
		if err != nil || v != c.want {
			t.Errorf("%s:\n got %+v, %v\nwant %+v", c.name, v, err, c.want)
		}
	}
	// Non-UTF-8 and NUL bytes, and a 10 MB body: the not-readable verdict, no crash.
	for _, body := range [][]byte{[]byte("\xff\xfe{"), []byte("{\x00}"), []byte(strings.Repeat("[", 10<<20))} {
		v, err := JudgeLock(body, at(t, "2024-05-01T10:01:00Z"), &LockOptions{Here: &Here{}})
		if err != nil || v.Kind != LockHeld || v.Reason != LockNotReadable || !v.ManualRemoval || len(v.Why) > 300 {
			t.Errorf("bad body %.20q: %v %v %.80q, %v", body, v.Kind, v.Reason, v.Why, err)
		}
	}
}

func TestJudgeLockCallbackPanics(t *testing.T) {
	_, err := JudgeLock([]byte(execBody), at(t, "2024-05-01T10:01:00Z"), &LockOptions{
		Describe: func(Execution) ExecutionState { panic("describer broke") }})
	if !errors.Is(err, ErrUser) || err == nil || !strings.Contains(err.Error(), "describer broke") {
		t.Fatalf("a panicking describer: %v", err)
	}
	_, err = JudgeLock([]byte(processBody("")), at(t, "2024-05-01T10:01:00Z"), &LockOptions{
		Here: &Here{Host: "build-1", MachineKind: MachineWithID, Machine: "m1", Alive: func(float64) bool { panic("alive broke") }}})
	if !errors.Is(err, ErrUser) || !strings.Contains(err.Error(), "alive broke") {
		t.Fatalf("a panicking liveness check: %v", err)
	}
	// A describer's kind out of range is no verdict of its own: unknown.
	v, err := JudgeLock([]byte(execBody), at(t, "2024-05-01T10:01:00Z"), &LockOptions{
		Describe: func(Execution) ExecutionState { return ExecutionState{Kind: 99} }})
	if err != nil || v.Kind != LockUnknown {
		t.Fatalf("a describer's kind out of range: %+v %v", v, err)
	}
}

// Reason codes and kinds: the Go constants are the header's, one for one.
func TestLockConstantsMatchHeader(t *testing.T) {
	reasons := map[string]LockReason{
		"LJ_LOCK_NOT_READABLE": LockNotReadable, "LJ_LOCK_EXECUTION_FINISHED": LockExecutionFinished,
		"LJ_LOCK_EXECUTION_RUNNING": LockExecutionRunning, "LJ_LOCK_EXECUTION_NOT_FOUND_NO_LEASE": LockExecutionNotFoundNoLease,
		"LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_ENDED": LockExecutionNotFoundLeaseEnded,
		"LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_RUNS":  LockExecutionNotFoundLeaseRuns,
		"LJ_LOCK_EXECUTION_UNKNOWN":               LockExecutionUnknown, "LJ_LOCK_PROCESS_GONE": LockProcessGone,
		"LJ_LOCK_NO_LEASE": LockNoLease, "LJ_LOCK_LEASE_UNREADABLE": LockLeaseUnreadable,
		"LJ_LOCK_LEASE_ENDED": LockLeaseEnded, "LJ_LOCK_LEASE_RUNS": LockLeaseRuns,
		"LJ_LOCK_HOLDER_REBOOTED": LockHolderRebooted, "LJ_LOCK_PID_REUSED": LockPidReused,
		"LJ_LOCK_STORE_LEASE_ENDED": LockStoreLeaseEnded, "LJ_LOCK_STORE_LEASE_UNKNOWN": LockStoreLeaseUnknown,
	}
	// The enum's members: every LJ_LOCK_ name given a value with '=' in lj_lock.h.
	header := headerConstants(t, `LJ_LOCK_[A-Z_]+`)
	for name := range header {
		if !strings.HasPrefix(name, "LJ_LOCK_HOLDER_") || name == "LJ_LOCK_HOLDER_REBOOTED" {
			continue
		}
		delete(header, name) // the holder kinds
	}
	for _, other := range []string{"LJ_LOCK_BREAK", "LJ_LOCK_HELD", "LJ_LOCK_UNKNOWN", "LJ_LOCK_PROCESS_LEASE_MS",
		"LJ_LOCK_LEASE_SKEW_MS", "LJ_LOCK_OPTIONS_VERSION", "LJ_LOCK_HERE_VERSION", "LJ_LOCK_HOLDER_VERSION",
		"LJ_LOCK_WAIT_OPTIONS_VERSION", "LJ_LOCK_LEASE_AS_TAKEN"} {
		delete(header, other)
	}
	if len(header) != len(reasons) {
		t.Errorf("the header has %d reasons, Go %d: %v", len(header), len(reasons), header)
	}
	seen := map[string]bool{}
	for name, v := range header {
		r, ok := reasons[name]
		if !ok || int(r) != v {
			t.Errorf("%s = %d in the header; Go %d (%v)", name, v, int(r), ok)
		}
		code := strings.ToLower(strings.TrimPrefix(name, "LJ_LOCK_"))
		if r.String() != code || seen[code] {
			t.Errorf("%s is named %q, want %q", name, r.String(), code)
		}
		seen[code] = true
	}
	if LockReason(0).String() != "LockReason(0)" || LockKind(7).String() != "LockKind(7)" {
		t.Errorf("out of range: %q %q", LockReason(0).String(), LockKind(7).String())
	}
	kinds := headerConstants(t, `LJ_LOCK_(?:BREAK|HELD|UNKNOWN)`)
	if kinds["LJ_LOCK_BREAK"] != int(LockBreak) || kinds["LJ_LOCK_HELD"] != int(LockHeld) || kinds["LJ_LOCK_UNKNOWN"] != int(LockUnknown) ||
		LockBreak.String() != "break" || LockHeld.String() != "held" || LockUnknown.String() != "unknown" {
		t.Errorf("kinds: %v", kinds)
	}
	if ProcessLease != 10*time.Minute || LeaseSkew != 5*time.Minute {
		t.Errorf("ProcessLease %v, LeaseSkew %v", ProcessLease, LeaseSkew)
	}
}

func TestLockVerdictForms(t *testing.T) {
	v := LockVerdict{LockHeld, LockLeaseRuns, false, `held by "x"`}
	if s, err := v.Text(); err != nil || s != `held lease_runs held by "x"` {
		t.Errorf("Text = %q, %v", s, err)
	}
	b, err := v.JSON()
	var back struct {
		Kind, Reason, Why string
		ManualRemoval     bool
	}
	if err != nil || json.Unmarshal(b, &back) != nil || back.Kind != "held" || back.Reason != "lease_runs" || back.Why != `held by "x"` || back.ManualRemoval {
		t.Errorf("JSON = %s, %v", b, err)
	}
	if _, err := (LockVerdict{Kind: 9, Reason: LockLeaseRuns}).Text(); !errors.Is(err, ErrInvalid) {
		t.Errorf("a kind out of range: %v", err)
	}
}

func TestLockBodiesAndTimes(t *testing.T) {
	now := at(t, "2024-05-01T10:00:00Z")
	body, err := NewLockBody("deploy", now, nil, "fixed-id")
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	if b["purpose"] != "deploy" || b["id"] != "fixed-id" || b["pid"] != float64(os.Getpid()) || b["startedAt"] != "2024-05-01T10:00:00.000Z" ||
		b["leaseUntil"] != "2024-05-01T10:15:00.000Z" || b["owner"] != Owner {
		t.Fatalf("NewLockBody = %s", body)
	}
	if id, err := LockBodyID(body); err != nil || id != "fixed-id" {
		t.Fatalf("LockBodyID = %q, %v", id, err)
	}
	renewed, err := RenewLockBody(body, now.Add(time.Minute), time.Minute)
	if err != nil || !strings.Contains(string(renewed), `"leaseUntil":"2024-05-01T10:07:00.000Z"`) || !strings.Contains(string(renewed), `"id":"fixed-id"`) {
		t.Fatalf("RenewLockBody = %s, %v", renewed, err)
	}
	if _, err := RenewLockBody([]byte("[]"), now, time.Minute); !errors.Is(err, ErrParse) {
		t.Fatalf("RenewLockBody(not a body) = %v", err)
	}
	if _, err := LockBodyID([]byte(`{"purpose":"p"}`)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LockBodyID(no id) = %v", err)
	}
	exec, err := NewLockBody("job", now, &LockHolder{Kind: LockHolderExecution, Lease: time.Hour,
		Execution: Execution{ProjectID: "p", Region: "r", Name: "n"}}, "")
	if err != nil || !strings.Contains(string(exec), `"execution":{"projectId":"p","region":"r","name":"n"}`) ||
		!strings.Contains(string(exec), `"leaseUntil":"2024-05-01T11:05:00.000Z"`) {
		t.Fatalf("an execution body: %s, %v", exec, err)
	}
	if id, _ := LockBodyID(exec); len(id) != 36 {
		t.Fatalf("a fresh id: %q", id)
	}
	if _, err := NewLockBody("job", now, &LockHolder{Kind: LockHolderExecution, Lease: time.Hour}, ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an execution with empty fields: %v", err)
	}
	if _, err := NewLockBody("\xff", now, nil, ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a purpose that is not UTF-8: %v", err)
	}
	if s, err := FormatLockTime(at(t, "2024-05-01T10:00:00.123456Z")); err != nil || s != "2024-05-01T10:00:00.123Z" {
		t.Fatalf("FormatLockTime = %q, %v", s, err)
	}
	for text, want := range map[string]string{"2024-02-30": "2024-03-01T00:00:00Z", "2024-05-01T10:00:00.1239Z": "2024-05-01T10:00:00.123Z",
		"2024-05-01T10:00:00+02:00": "2024-05-01T08:00:00Z"} {
		if got, err := ParseLockTime(text); err != nil || !got.Equal(at(t, want)) {
			t.Errorf("ParseLockTime(%q) = %v, %v; want %s", text, got, err, want)
		}
	}
	if _, err := ParseLockTime("Jan 1 2024"); !errors.Is(err, ErrParse) {
		t.Errorf("ParseLockTime(legacy) = %v", err)
	}
}

func TestParseExecutionState(t *testing.T) {
	cases := []struct {
		exit           int
		stdout, stderr string
		want           ExecutionState
	}{
		{0, `{"status":{"conditions":[{"type":"Completed","status":"True"}]}}`, "", ExecutionState{ExecutionFinished, "succeeded"}},
		{0, `{"status":{"conditions":[{"type":"Completed","status":"False","reason":"Cancelled"}]}}`, "", ExecutionState{ExecutionFinished, "cancelled"}},
		{0, `{"status":{"completionTime":"2024-05-01T10:00:00Z"}}`, "", ExecutionState{ExecutionFinished, "completed"}},
		{0, `{"status":{}}`, "", ExecutionState{Kind: ExecutionRunning}},
		{0, `not json`, "", ExecutionState{ExecutionUnknown, "gcloud returned no JSON for the execution"}},
		{1, "", "ERROR: (gcloud) NOT_FOUND: nope", ExecutionState{Kind: ExecutionNotFound}},
		{1, "", "  denied \n", ExecutionState{ExecutionUnknown, "denied"}},
		{3, "", "", ExecutionState{ExecutionUnknown, "gcloud exited 3"}},
	}
	for _, c := range cases {
		got, err := ParseExecutionState(c.exit, []byte(c.stdout), []byte(c.stderr))
		if err != nil || got != c.want {
			t.Errorf("ParseExecutionState(%d, %q, %q) = %+v, %v; want %+v", c.exit, c.stdout, c.stderr, got, err, c.want)
		}
	}
}

// The lock's life on each kind of store.
func TestLockOnStores(t *testing.T) {
	open := map[string]func(t *testing.T) *Store{
		"memory": func(t *testing.T) *Store { s, err := OpenMemoryStore(); must(t, err); return s },
		"file":   func(t *testing.T) *Store { s, err := OpenFileStore(t.TempDir()); must(t, err); return s },
		"go":     func(t *testing.T) *Store { s, err := NewStore(newMemBackend()); must(t, err); return s },
	}
	for name, o := range open {
		t.Run(name, func(t *testing.T) { exerciseLock(t, o(t)) })
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func exerciseLock(t *testing.T, s *Store) {
	defer s.Close()
	lock, acq, err := AcquireLock(s, "state.lock", "deploy", nil, time.Time{}, nil)
	if err != nil || lock == nil || acq.Outcome != Acquired || acq.Verdict != nil || acq.BrokeAt != 0 || acq.Revision == 0 {
		t.Fatalf("AcquireLock(free) = %v %+v %v", lock, acq, err)
	}
	defer lock.Close()
	if lock.Revision() != acq.Revision || lock.RenewInterval() != ProcessLease/3 {
		t.Fatalf("revision %d interval %v", lock.Revision(), lock.RenewInterval())
	}
	body, err := lock.Body()
	must(t, err)
	if stored, rev, _ := s.Get("state.lock"); string(stored) != string(body) || rev != acq.Revision {
		t.Fatalf("the store holds %q at %d", stored, rev)
	}
	id, err := lock.ID()
	if bodyID, _ := LockBodyID(body); err != nil || id != bodyID || id == "" {
		t.Fatalf("ID %q, body's %q, %v", id, bodyID, err)
	}
	// Ours is alive: a second acquisition finds it held.
	other, acq2, err := AcquireLock(s, "state.lock", "deploy", nil, time.Time{}, nil)
	if err != nil || other != nil || acq2.Outcome != AcquireHeld || acq2.Verdict == nil || acq2.Verdict.Kind != LockHeld {
		t.Fatalf("AcquireLock(held) = %v %+v %v", other, acq2, err)
	}
	must(t, lock.Renew(time.Time{}))
	if lock.Revision() <= acq.Revision {
		t.Fatalf("renewing kept revision %d", lock.Revision())
	}
	// Someone rewrites it: ours is lost, renew and release say so and write nothing.
	_, rev, _ := s.Get("state.lock")
	if _, err := s.Update("state.lock", []byte(`{"purpose":"theirs","id":"z"}`), rev); err != nil {
		t.Fatal(err)
	}
	if err := lock.Renew(time.Time{}); !errors.Is(err, ErrChanged) {
		t.Fatalf("Renew after a rewrite = %v", err)
	}
	if err := lock.Release(); !errors.Is(err, ErrChanged) {
		t.Fatalf("Release after a rewrite = %v", err)
	}
	if stored, _, _ := s.Get("state.lock"); string(stored) != `{"purpose":"theirs","id":"z"}` {
		t.Fatalf("theirs was overwritten: %q", stored)
	}
	// A body whose process is gone on this machine is broken at once, fenced.
	pid, stop := startChild(t)
	stop()
	gone, err := NewLockBody("old run", time.Now(), nil, "gone-id")
	must(t, err)
	var fields map[string]any
	must(t, json.Unmarshal(gone, &fields))
	fields["pid"] = pid
	delete(fields, "owner")
	gone, _ = json.Marshal(fields)
	_, rev, _ = s.Get("state.lock")
	goneRev, err := s.Update("state.lock", gone, rev)
	must(t, err)
	lock2, acq3, err := AcquireLock(s, "state.lock", "deploy", nil, time.Time{}, nil)
	if err != nil || lock2 == nil || acq3.Outcome != Acquired || acq3.Verdict == nil || acq3.Verdict.Reason != LockProcessGone ||
		acq3.BrokeAt != goneRev || acq3.Revision <= goneRev {
		t.Fatalf("AcquireLock(gone holder) = %+v %+v %v", acq3, acq3.Verdict, err)
	}
	must(t, lock2.Release())
	if v, _, _ := s.Get("state.lock"); v != nil {
		t.Fatalf("released, the key holds %q", v)
	}
	if err := lock2.Release(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Release twice = %v", err)
	}
	lock2.Close()
	if err := lock2.Renew(time.Time{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Renew after Close = %v", err)
	}
	// An execution holder: the describer decides; it runs, so the lock is held.
	var asked int32
	describe := func(Execution) ExecutionState {
		atomic.AddInt32(&asked, 1)
		return ExecutionState{Kind: ExecutionRunning}
	}
	job := &LockHolder{Kind: LockHolderExecution, Lease: time.Hour, Execution: Execution{"p", "r", "job-1"}}
	lock3, acq4, err := AcquireLock(s, "job.lock", "job", job, time.Time{}, &LockOptions{Describe: describe})
	if err != nil || acq4.Outcome != Acquired {
		t.Fatalf("AcquireLock(job) = %+v %v", acq4, err)
	}
	defer lock3.Close()
	_, acq5, err := AcquireLock(s, "job.lock", "job", job, time.Time{}, &LockOptions{Describe: describe})
	if err != nil || acq5.Outcome != AcquireHeld || acq5.Verdict.Reason != LockExecutionRunning || atomic.LoadInt32(&asked) != 1 {
		t.Fatalf("AcquireLock(job held) = %+v %v, asked %d", acq5, err, asked)
	}
	_, acq6, err := AcquireLock(s, "job.lock", "job", job, time.Time{}, &LockOptions{
		Describe: func(Execution) ExecutionState { return ExecutionState{ExecutionUnknown, "no access"} }})
	if err != nil || acq6.Outcome != AcquireUnknown || acq6.Verdict.Kind != LockUnknown {
		t.Fatalf("AcquireLock(job unknown) = %+v %v", acq6, err)
	}
	s.Close()
	if err := lock3.Renew(time.Time{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Renew on a closed store = %v", err)
	}
	if _, _, err := AcquireLock(s, "x", "p", nil, time.Time{}, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("AcquireLock on a closed store = %v", err)
	}
}

func TestLockHeartbeat(t *testing.T) {
	s, err := OpenMemoryStore()
	must(t, err)
	defer s.Close()
	lock, _, err := AcquireLock(s, "k", "beat", &LockHolder{Kind: LockHolderProcess, Lease: 150 * time.Millisecond}, time.Time{}, nil)
	must(t, err)
	defer lock.Close()
	if lock.RenewInterval() != 50*time.Millisecond {
		t.Fatalf("RenewInterval = %v", lock.RenewInterval())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	first := lock.Revision()
	go func() { done <- lock.Heartbeat(ctx) }()
	for lock.Revision() == first {
		time.Sleep(10 * time.Millisecond)
	}
	// Taken from under it: the heartbeat says the lock is lost.
	_, rev, _ := s.Get("k")
	for {
		if _, err := s.Update("k", []byte(`{"purpose":"thief"}`), rev); err == nil {
			break
		}
		_, rev, _ = s.Get("k")
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrChanged) {
			t.Fatalf("Heartbeat = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the heartbeat never saw the lock lost")
	}
	// A cancelled heartbeat returns nil.
	lock2, _, err := AcquireLock(s, "k2", "beat", nil, time.Time{}, nil)
	must(t, err)
	defer lock2.Close()
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := lock2.Heartbeat(ctx2); err != nil {
		t.Fatalf("a cancelled heartbeat: %v", err)
	}
	none, _, err := AcquireLock(s, "k3", "local", &LockHolder{Kind: LockHolderNone}, time.Time{}, nil)
	must(t, err)
	defer none.Close()
	if err := none.Heartbeat(ctx); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a heartbeat without a lease: %v", err)
	}
}

// A lock taken at 12:00:00 with a 30 s lease runs to now + lease + the 5-minute skew
// (lj_lock.h): 12:05:30; opened by key and id and renewed at 12:00:10 with the lease
// it was taken with, to 12:05:40; with 60 s of its own, to 12:06:10.
func TestOpenLock(t *testing.T) {
	s, err := OpenMemoryStore()
	must(t, err)
	defer s.Close()
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	holder := &LockHolder{Kind: LockHolderProcess, Lease: 30 * time.Second}
	first, acq, err := AcquireLock(s, "k", "deploy", holder, now, nil)
	if err != nil || acq.Outcome != Acquired {
		t.Fatalf("AcquireLock: %+v %v", acq, err)
	}
	defer first.Close()
	id, err := first.ID()
	must(t, err)
	until := func(l *Lock) string {
		body, err := l.Body()
		must(t, err)
		var b struct {
			LeaseUntil string `json:"leaseUntil"`
		}
		must(t, json.Unmarshal(body, &b))
		return b.LeaseUntil
	}
	for _, c := range []struct {
		lease time.Duration
		want  string
	}{{LockLeaseAsTaken, "2024-06-01T12:05:40.000Z"}, {time.Minute, "2024-06-01T12:06:10.000Z"}} {
		l, err := OpenLock(s, "k", id, c.lease)
		must(t, err)
		must(t, l.Renew(now.Add(10*time.Second)))
		if got := until(l); got != c.want {
			t.Errorf("renewed with %v: %s, want %s", c.lease, got, c.want)
		}
		l.Close()
	}
	l, err := OpenLock(s, "k", id, 0)
	must(t, err)
	must(t, l.Release())
	l.Close()
	if v, _, err := s.Get("k"); err != nil || v != nil {
		t.Fatalf("after release: %q %v", v, err)
	}

	// Gone, someone else's, bad arguments, a closed store.
	if _, err := OpenLock(s, "k", id, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("no lock: %v", err)
	}
	other, _, err := AcquireLock(s, "k", "deploy", holder, now, nil)
	must(t, err)
	defer other.Close()
	for _, c := range []struct {
		key, id string
		lease   time.Duration
		want    error
	}{
		{"k", id, 0, ErrChanged}, {"", id, 0, ErrInvalid}, {"k", "", 0, ErrInvalid},
		{"k", id, -2 * time.Millisecond, ErrInvalid}, {"k\x00", id, 0, ErrNotFound}, {"k\xff", id, 0, ErrNotFound},
	} {
		if _, err := OpenLock(s, c.key, c.id, c.lease); !errors.Is(err, c.want) {
			t.Errorf("OpenLock(%q, %q, %v): %v, want %v", c.key, c.id, c.lease, err, c.want)
		}
	}
	if _, err := OpenLock(nil, "k", id, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("a nil store: %v", err)
	}
	s2, err := OpenMemoryStore()
	must(t, err)
	s2.Close()
	if _, err := OpenLock(s2, "k", id, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("a closed store: %v", err)
	}
}
