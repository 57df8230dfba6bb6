package leasejudge

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
)

// A Scan with a bulk read: the sweep reads the node's keys through Entries in one
// call, never through Keys or Get, and decides as it does key by key.
func TestEndStaleOverEntries(t *testing.T) {
	m := newMemBackend()
	fillState(t, func(key, v string) { m.set(key, v) })
	scan := scanOf(m)
	var prefixes []string
	keysCalls, getCalls := 0, 0
	scan.Keys = func() ([]string, error) { keysCalls++; return m.Keys() }
	inner := scan.Get
	scan.Get = func(key string) (json.RawMessage, uint64, error) { getCalls++; return inner(key) }
	scan.Entries = func(prefix string, each func(key string, value []byte, revision uint64) error) error {
		prefixes = append(prefixes, prefix)
		keys, err := m.Keys()
		if err != nil {
			return err
		}
		for _, k := range keys {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			v, rev, err := m.Get(k)
			if err != nil {
				return err
			}
			if err := each(k, v, rev); err != nil {
				return err
			}
		}
		return nil
	}
	var log logBook
	report, err := EndStaleWith(scan, node, at0(t, before0), log.logf, sweepOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(prefixes, ",") != node+"." || keysCalls != 0 || getCalls != 0 {
		t.Fatalf("Entries %q, Keys %d, Get %d: the bulk read was not the one used", prefixes, keysCalls, getCalls)
	}
	checkSwept(t, m.value, report, log.all())
	if report.Stats.Keys != 10 || report.Stats.Batches != 1 || report.Stats.Writes != 4 {
		t.Fatalf("stats %+v", report.Stats)
	}
	if len(report.Writes) != 4 || report.Writes[0].Outcome != SweepDone || report.Writes[0].Revision == 0 {
		t.Fatalf("writes %+v", report.Writes)
	}

	// An Entries that fails stops the sweep with its error.
	broken := errors.New("the state went away")
	scan.Entries = func(string, func(string, []byte, uint64) error) error { return broken }
	if _, err := EndStaleWith(scan, node, at0(t, before0), nil, sweepOpts(t)); !errors.Is(err, broken) {
		t.Fatalf("a failing Entries: %v", err)
	}
}

// The observer hears of every key with its verdict; a dry run writes nothing; an
// observer's error stops the sweep and is what it returns.
func TestEndStaleOnKeyAndDryRun(t *testing.T) {
	store, err := OpenMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fillState(t, func(key, v string) {
		if _, err := store.Create(key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	})
	opts := sweepOpts(t)
	opts.DryRun = true
	var seen []string
	opts.OnKey = func(k SweepKey) error {
		if k.Revision == 0 {
			t.Errorf("%s: no revision", k.Key)
		}
		seen = append(seen, k.Key+" "+k.Action.String()+" "+k.Reason.String()+" "+k.Outcome.String())
		return nil
	}
	report, err := EndStaleWith(ScanOfStore(store), node, at0(t, before0), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range stateCases() {
		if !strings.HasPrefix(c.key, node+".") {
			continue // another node's key is never read
		}
		outcome := "left"
		if c.action != StepLeave {
			outcome = "planned"
		}
		want = append(want, c.key+" "+c.action.String()+" "+c.reason.String()+" "+outcome)
	}
	sort.Strings(seen)
	sort.Strings(want)
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("seen:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if report.Ends != 3 || report.Deletes != 1 || len(report.Writes) != 0 || len(report.Ended) != 0 {
		t.Fatalf("a dry run's report %+v", report)
	}
	for _, c := range stateCases() {
		if v, _, _ := store.Get(c.key); string(v) != c.value {
			t.Fatalf("the dry run wrote %s", c.key)
		}
	}

	stop := errors.New("enough")
	opts.DryRun = false
	n := 0
	opts.OnKey = func(SweepKey) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	}
	if _, err := EndStaleWith(ScanOfStore(store), node, at0(t, before0), nil, opts); !errors.Is(err, stop) {
		t.Fatalf("an observer's stop: %v", err)
	}
	opts.WriteWindow = -1
	if _, err := EndStaleWith(ScanOfStore(store), node, at0(t, before0), nil, opts); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a negative window: %v", err)
	}
}

// errSeedChanged stands for the seed runtime's own "changed" sentinel.
var errSeedChanged = errors.New("stdio: the value changed")

type sentinelState struct {
	keptState
	raced string // Update of this key answers errSeedChanged
}

func (s *sentinelState) Update(key string, value any, revision uint64) (uint64, error) {
	if key == s.raced {
		return 0, errSeedChanged
	}
	return s.keptState.Update(key, value, revision)
}

// A state whose Update answers its own sentinel: named to ScanOf, the key is skipped
// as changed; not named, the sweep stops with it, as the seed's EndStale would.
func TestScanOfChangedSentinel(t *testing.T) {
	for _, named := range []bool{true, false} {
		s := &sentinelState{keptState: keptState{m: newMemBackend()}, raced: node + ".s2"}
		fillState(t, func(key, v string) { s.m.set(key, v) })
		var scan Scan
		if named {
			scan = ScanOf(s, errSeedChanged)
		} else {
			scan = ScanOf(s)
		}
		report, err := EndStaleWith(scan, node, at0(t, before0), nil, sweepOpts(t))
		if named {
			if err != nil || report.Changed != 1 || report.Ends != 2 || report.Deletes != 1 {
				t.Fatalf("named: %v, %+v", err, report)
			}
		} else if !errors.Is(err, errSeedChanged) || errors.Is(err, ErrChanged) {
			t.Fatalf("not named: %v", err)
		}
	}
	// The wrapped error is both.
	err := changedError{errSeedChanged}
	if !errors.Is(err, ErrChanged) || !errors.Is(err, errSeedChanged) {
		t.Fatal("changedError matches neither")
	}
}
