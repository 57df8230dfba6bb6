package leasejudge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The conformance table (tests/conformance/scenarios.json) through this package: one
// answer line per scenario, "<name>\t<JSON>", written to LEASEJUDGE_CONFORMANCE_OUT for
// tests/conformance/check.py to compare. It runs only when the checker names the table
// (LEASEJUDGE_CONFORMANCE_TABLE).

type conformanceScenario struct {
	Name    string          `json:"name"`
	Kind    string          `json:"kind"`
	Node    string          `json:"node"`
	Lines   []string        `json:"lines"`
	Owner   *string         `json:"owner"`
	Rule    *string         `json:"rule"`
	MinAge  int64           `json:"min_age_ms"`
	Now     string          `json:"now"`
	Before  string          `json:"before"`
	URL     string          `json:"url"`
	Create  bool            `json:"create"`
	Probe   string          `json:"probe"`
	Key     string          `json:"key"`
	LeaseMs int64           `json:"lease_ms"`
	WaitMs  int64           `json:"wait_ms"`
	Now0    string          `json:"now0"`
	Now1    string          `json:"now1"`
	Holder  json.RawMessage `json:"holder"`
	Body    string          `json:"body"`
	Case    string          `json:"case"`
}

func conformanceClass(err error) map[string]any {
	var e *Error
	if errors.As(err, &e) {
		switch e.Code {
		case ErrInvalid:
			return map[string]any{"error": "invalid"}
		case ErrStore:
			return map[string]any{"error": "store"}
		case ErrIO:
			return map[string]any{"error": "io"}
		case ErrChanged:
			return map[string]any{"error": "changed"}
		case ErrNotFound:
			return map[string]any{"error": "notfound"}
		}
		return map[string]any{"error": e.Code.String()}
	}
	return map[string]any{"error": err.Error()}
}

func conformanceTime(text string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		panic(err)
	}
	return t
}

// The rule by its name; a name the package has no constant for is passed as a number
// out of range, for the library to refuse.
func conformanceRule(name string) OwnerRule {
	switch name {
	case "not-self":
		return RuleNotSelf
	case "provably-dead":
		return RuleProvablyDead
	case "by-owner":
		return RuleByOwner
	}
	return OwnerRule(99)
}

func conformancePlan(s conformanceScenario) any {
	var in strings.Builder
	for _, l := range s.Lines {
		in.WriteString(strings.ReplaceAll(l, "{{SELF}}", Owner) + "\n")
	}
	opts := PlanOptions{Node: s.Node, Rules: Rules{Now: conformanceTime(s.Now), Before: conformanceTime(s.Before)}}
	if s.Owner != nil {
		opts.Owner = *s.Owner
	}
	if s.Rule != nil {
		opts.Rule = conformanceRule(*s.Rule)
	}
	opts.MinAge = time.Duration(s.MinAge) * time.Millisecond
	out, _, err := PlanLines([]byte(in.String()), &opts)
	if err != nil {
		return conformanceClass(err)
	}
	if s.Kind == "owner" {
		return map[string]any{"owner": "accepted"}
	}
	rows := [][]any{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var d struct {
			Key    *string `json:"key"`
			Action string  `json:"action"`
			Reason string  `json:"reason"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return map[string]any{"error": err.Error()}
		}
		var key any
		if d.Key != nil {
			key = *d.Key
		}
		rows = append(rows, []any{key, d.Action, d.Reason})
	}
	return map[string]any{"plan": rows}
}

func conformanceOpen(s conformanceScenario) any {
	answer := map[string]any{"opened": true}
	st, err := OpenStore(s.URL, StoreURLOptions{Create: s.Create})
	if err != nil {
		answer = conformanceClass(err)
	} else {
		st.Close()
	}
	if s.Probe != "" {
		_, err := os.Stat(s.Probe)
		answer["exists_after"] = err == nil
	}
	return answer
}

func conformanceUntil(l *Lock) string {
	body, err := l.Body()
	if err != nil {
		return err.Error()
	}
	var b struct {
		LeaseUntil string `json:"leaseUntil"`
	}
	json.Unmarshal(body, &b)
	return b.LeaseUntil
}

func conformanceLease(s conformanceScenario) any {
	st, err := OpenStore(s.URL, StoreURLOptions{Create: true})
	if err != nil {
		return conformanceClass(err)
	}
	defer st.Close()
	holder := &LockHolder{Kind: LockHolderProcess, Lease: time.Duration(s.LeaseMs) * time.Millisecond}
	l, _, err := AcquireLock(st, s.Key, "conformance lease", holder, conformanceTime(s.Now0), nil)
	if err != nil || l == nil {
		return map[string]any{"error": fmt.Sprint("not acquired: ", err)}
	}
	defer l.Close()
	first := conformanceUntil(l)
	if s.Kind == "lease-reopen" { // another run renews it: only the key and the acquisition id are known
		id, _ := l.ID()
		if l, err = OpenLock(st, s.Key, id, LockLeaseAsTaken); err != nil {
			return conformanceClass(err)
		}
		defer l.Close()
	}
	if err := l.Renew(conformanceTime(s.Now1)); err != nil {
		return conformanceClass(err)
	}
	return map[string]any{"leaseUntil": []string{first, conformanceUntil(l)}}
}

// seed creates the holder's body at the key, with this machine's name and id.
func conformanceSeed(st *Store, s conformanceScenario) error {
	if len(s.Holder) == 0 {
		return nil
	}
	host, _ := os.Hostname()
	machine, _ := MachineID()
	body := strings.ReplaceAll(strings.ReplaceAll(string(s.Holder), "{{HOST}}", host), "{{MACHINE}}", machine)
	_, err := st.Create(s.Key, []byte(body))
	return err
}

func conformanceLock(s conformanceScenario) any {
	st, err := OpenStore(s.URL, StoreURLOptions{Create: true})
	if err != nil {
		return conformanceClass(err)
	}
	defer st.Close()
	if err := conformanceSeed(st, s); err != nil {
		return conformanceClass(err)
	}
	holder := &LockHolder{Kind: LockHolderProcess, Lease: time.Duration(s.LeaseMs) * time.Millisecond}
	if s.Kind == "wait" {
		return conformanceWait(st, s, holder)
	}
	l, a, err := AcquireLock(st, s.Key, "conformance lock", holder, conformanceTime(s.Now), nil)
	if err != nil {
		return conformanceClass(err)
	}
	answer := map[string]any{"outcome": a.Outcome.String()}
	if l != nil {
		answer["broke"] = a.BrokeAt != 0
		l.Release()
		l.Close()
	}
	if a.Verdict != nil {
		answer["reason"] = a.Verdict.Reason.String()
	}
	return answer
}

// After a wait that ends at its deadline: is the lock ours, and does the key still
// hold the holder's body?
func conformanceWait(st *Store, s conformanceScenario, holder *LockHolder) any {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.WaitMs)*time.Millisecond)
	defer cancel()
	l, _, err := AcquireWait(ctx, st, s.Key, "conformance lock", holder, nil)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return conformanceClass(err)
	}
	if l != nil {
		defer l.Close()
		defer l.Release()
	}
	var h struct {
		ID string `json:"id"`
	}
	json.Unmarshal(s.Holder, &h)
	kept := false
	if body, _, err := st.Get(s.Key); err == nil {
		id, _ := LockBodyID(body)
		kept = id == h.ID
	}
	return map[string]any{"acquired": l != nil, "holder_kept": kept}
}

// A body's verdict at now: kind, reason code, whether only a person can clear it.
func conformanceJudge(s conformanceScenario) any {
	host, _ := os.Hostname()
	machine, _ := MachineID()
	self, _ := OwnerToken(0)
	body := strings.NewReplacer("{{HOST}}", host, "{{MACHINE}}", machine, "{{SELF}}", self).Replace(s.Body)
	v, err := JudgeLock([]byte(body), conformanceTime(s.Now), nil)
	if err != nil {
		return conformanceClass(err)
	}
	return map[string]any{"kind": v.Kind.String(), "reason": v.Reason.String(), "manual": v.ManualRemoval}
}

// release: our lock released while ours, after another writer took its key (another),
// or after its key was removed (gone); loss: renewed after another writer took its key.
func conformanceRelease(s conformanceScenario) any {
	st, err := OpenStore(s.URL, StoreURLOptions{Create: true})
	if err != nil {
		return conformanceClass(err)
	}
	defer st.Close()
	holder := &LockHolder{Kind: LockHolderProcess, Lease: time.Duration(s.LeaseMs) * time.Millisecond}
	l, _, err := AcquireLock(st, s.Key, "conformance release", holder, time.Time{}, nil)
	if err != nil || l == nil {
		return map[string]any{"error": fmt.Sprint("not acquired: ", err)}
	}
	defer l.Close()
	switch s.Case {
	case "", "another":
		body, _ := NewLockBody("another writer", time.Now(), nil, "")
		_, err = st.Update(s.Key, body, l.Revision())
	case "gone":
		err = st.Delete(s.Key, l.Revision())
	}
	if err != nil {
		return map[string]any{"error": fmt.Sprint("disturbing: ", err)}
	}
	if s.Kind == "loss" {
		if err := l.Renew(time.Time{}); err != nil {
			return conformanceClass(err)
		}
		return map[string]any{"renewed": true}
	}
	if err := l.Release(); err != nil {
		return conformanceClass(err)
	}
	return map[string]any{"released": true}
}

func conformanceAnswer(s conformanceScenario) any {
	switch s.Kind {
	case "plan", "plan-self", "owner":
		return conformancePlan(s)
	case "open":
		return conformanceOpen(s)
	case "lease", "lease-reopen":
		return conformanceLease(s)
	case "lock", "wait":
		return conformanceLock(s)
	case "judge":
		return conformanceJudge(s)
	case "release", "loss":
		return conformanceRelease(s)
	}
	return nil
}

func TestConformanceTable(t *testing.T) {
	path, out := os.Getenv("LEASEJUDGE_CONFORMANCE_TABLE"), os.Getenv("LEASEJUDGE_CONFORMANCE_OUT")
	if path == "" || out == "" {
		t.Skip("run by tests/conformance/check.py (LEASEJUDGE_CONFORMANCE_TABLE)")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Scenarios []conformanceScenario `json:"scenarios"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, s := range table.Scenarios {
		a := conformanceAnswer(s)
		if a == nil {
			fmt.Fprintf(&b, "%s\tunsupported\n", s.Name)
			continue
		}
		text, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\t%s\n", s.Name, text)
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
