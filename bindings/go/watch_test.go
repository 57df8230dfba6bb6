package leasejudge

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

const watchOther = `{"id":"x","tool":"go build","state":"running","owner":"o.1.2","started":"2024-05-01T10:00:00Z"}`

func watchState(t *testing.T, s *Store, key string) string {
	t.Helper()
	v, _, err := s.Get(key)
	if err != nil {
		return "absent"
	}
	switch {
	case strings.Contains(string(v), `"state":"failed"`):
		return "failed"
	case strings.Contains(string(v), `"state":"running"`):
		return "running"
	}
	return "other"
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 5 s", what)
}

func TestStepWatchEndsAtStartAndAsKeysChange(t *testing.T) {
	s, err := OpenMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Create("n1.first", []byte(watchOther)); err != nil {
		t.Fatal(err)
	}
	w, err := NewStepWatch("n1", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		lines = append(lines, format)
		mu.Unlock()
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, s, logf, &WatchOptions{Poll: 2 * time.Millisecond, Interval: time.Hour}) }()
	waitFor(t, "the start ends n1.first", func() bool { return watchState(t, s, "n1.first") == "failed" })
	if _, err := s.Create("n1.later", []byte(watchOther)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watch ends n1.later", func() bool { return watchState(t, s, "n1.later") == "failed" })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return within 2 s of its context's end")
	}
	if got := w.Figure(WatchEnds); got != 2 {
		t.Errorf("ends = %d, want 2", got)
	}
	if got := w.Figure(WatchSweeps); got != 1 {
		t.Errorf("sweeps = %d, want 1", got)
	}
	if got := w.Judged(StepOwnerNotSelf); got != 2 {
		t.Errorf("judged owner-not-self = %d, want 2", got)
	}
	if w.Figure(WatchLastSweepUnixNs) == 0 {
		t.Error("no last sweep time")
	}
}

func TestStepWatchBadInput(t *testing.T) {
	for _, node := range []string{"", "a.b"} {
		if _, err := NewStepWatch(node, time.Time{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewStepWatch(%q): %v, want ErrInvalid", node, err)
		}
	}
	s, err := OpenMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := NewStepWatch("n1", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background(), s, nil, &WatchOptions{Interval: -time.Second}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a negative interval: %v, want ErrInvalid", err)
	}
	if err := w.Run(context.Background(), s, nil, &WatchOptions{BackoffMax: time.Millisecond}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a backoff under 500 ms: %v, want ErrInvalid", err)
	}
	// An OnKey error stops the run and is what it returns.
	if _, err := s.Create("n1.k", []byte(watchOther)); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	err = w.Run(context.Background(), s, nil, &WatchOptions{Sweep: &SweepOptions{OnKey: func(SweepKey) error { return stop }}})
	if !errors.Is(err, stop) {
		t.Errorf("OnKey's error: %v, want it returned", err)
	}
	w.Close()
	w.Close()
	if err := w.Run(context.Background(), s, nil, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("a closed watch: %v, want ErrInvalid", err)
	}
	if w.Figure(WatchEnds) != 0 || w.Judged(StepOwnerNotSelf) != 0 {
		t.Error("a closed watch has figures")
	}
}
