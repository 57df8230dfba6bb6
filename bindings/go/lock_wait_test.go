package leasejudge

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// flakyBackend is a memory store whose updates fail while failing is above 0 (each
// failure counts it down), or for good while it is below 0.
type flakyBackend struct {
	inner    *Store
	failing  atomic.Int32
	failures atomic.Int32
}

func (f *flakyBackend) Keys() ([]string, error) { return f.inner.Keys() }
func (f *flakyBackend) Get(key string) ([]byte, uint64, error) {
	return f.inner.Get(key)
}
func (f *flakyBackend) Update(key string, value []byte, revision uint64) (uint64, error) {
	if n := f.failing.Load(); n != 0 {
		if n > 0 {
			f.failing.Add(-1)
		}
		f.failures.Add(1)
		return 0, errors.New("the server is down")
	}
	return f.inner.Update(key, value, revision)
}
func (f *flakyBackend) Create(key string, value []byte) (uint64, error) {
	return f.inner.Create(key, value)
}
func (f *flakyBackend) Delete(key string, revision uint64) error {
	return f.inner.Delete(key, revision)
}

func newFlaky(t *testing.T) (*flakyBackend, *Store) {
	t.Helper()
	inner, err := OpenMemoryStore()
	must(t, err)
	t.Cleanup(func() { inner.Close() })
	f := &flakyBackend{inner: inner}
	s, err := NewStore(f)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return f, s
}

// A lock this process holds, alive: waits for it do not end by themselves.
func heldByUs(t *testing.T, s *Store, key string) *Lock {
	t.Helper()
	l, a, err := AcquireLock(s, key, "theirs", nil, time.Time{}, nil)
	must(t, err)
	if a.Outcome != Acquired {
		t.Fatalf("the first acquisition: %v", a.Outcome)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestAcquireWaitCancelled(t *testing.T) {
	s, err := OpenMemoryStore()
	must(t, err)
	defer s.Close()
	theirs := heldByUs(t, s, "k")

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	l, a, err := AcquireWait(ctx, s, "k", "mine", nil, nil)
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) || l != nil || a.Outcome != AcquireUnknown {
		t.Fatalf("cancelled: %v %v %v", l, a.Outcome, err)
	}
	if took < 100*time.Millisecond || took > time.Second {
		t.Fatalf("cancelled after 100 ms, returned after %v", took)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel2()
	start = time.Now()
	_, _, err = AcquireWait(ctx2, s, "k", "mine", nil, nil)
	took = time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past its deadline: %v", err)
	}
	if took < 150*time.Millisecond || took > time.Second {
		t.Fatalf("a 150 ms deadline returned after %v", took)
	}

	// Done before the call: not even one try.
	_, _, err = AcquireWait(ctx, s, "k", "mine", nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a context done already: %v", err)
	}
	var none context.Context
	if _, _, err := AcquireWait(none, s, "k", "mine", nil, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a nil context: %v", err)
	}
	if _, _, err := AcquireWait(context.Background(), nil, "k", "mine", nil, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a nil store: %v", err)
	}
	if _, _, err := AcquireWait(context.Background(), s, "", "mine", nil, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an empty key: %v", err)
	}
	if _, _, err := AcquireWait(context.Background(), s, "k\x00\xff", "mine\x00", nil, nil); err != nil {
		t.Fatalf("a key and purpose of any bytes: %v", err)
	}

	// Released during the wait: ours, with a larger fencing token.
	time.AfterFunc(100*time.Millisecond, func() { _ = theirs.Release() })
	ctx3, cancel3 := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel3()
	l, a, err = AcquireWait(ctx3, s, "k", "mine", nil, nil)
	must(t, err)
	defer l.Close()
	if a.Outcome != Acquired || l.Revision() <= theirs.Revision() || a.Revision != l.Revision() {
		t.Fatalf("after the release: %v, revision %d (theirs %d)", a.Outcome, l.Revision(), theirs.Revision())
	}
}

func TestHeartbeatSurvivesAFailedRenewal(t *testing.T) {
	f, s := newFlaky(t)
	lock, _, err := AcquireLock(s, "k", "beat", &LockHolder{Kind: LockHolderProcess, Lease: 300 * time.Millisecond}, time.Time{}, nil)
	must(t, err)
	defer lock.Close()
	first := lock.Revision()
	f.failing.Store(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lock.Heartbeat(ctx) }()
	// Renewed every 100 ms: three renewals past the failed one.
	deadline := time.Now().Add(10 * time.Second)
	for lock.Revision() < first+3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if lock.Revision() < first+3 {
		t.Fatalf("renewed to revision %d only (from %d)", lock.Revision(), first)
	}
	if n := f.failures.Load(); n != 1 {
		t.Fatalf("%d failed renewals, want 1", n)
	}
	select {
	case err := <-done:
		t.Fatalf("one failed renewal ended the heartbeat: %v", err)
	default:
	}
	if err := lock.Renew(time.Time{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("Renew while the heartbeat runs: %v", err)
	}
	if err := lock.Release(); !errors.Is(err, ErrBusy) {
		t.Fatalf("Release while the heartbeat runs: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("a cancelled heartbeat: %v", err)
	}
	_, rev, err := s.Get("k")
	must(t, err)
	if lock.Revision() != rev {
		t.Fatalf("the lock's revision %d, the store's %d", lock.Revision(), rev)
	}
	must(t, lock.Release())
}

func TestHeartbeatLostWhenTheLeaseEnds(t *testing.T) {
	f, s := newFlaky(t)
	lock, _, err := AcquireLock(s, "k", "beat", &LockHolder{Kind: LockHolderProcess, Lease: 300 * time.Millisecond}, time.Time{}, nil)
	must(t, err)
	defer lock.Close()
	f.failing.Store(-1)
	start := time.Now()
	err = lock.Heartbeat(context.Background())
	took := time.Since(start)
	var e *Error
	if !errors.Is(err, ErrTimeout) || !errors.As(err, &e) {
		t.Fatalf("a store down past the lease: %v", err)
	}
	if want := "the lock k was not renewed within its lease of 300 ms: the store's update callback: store error"; e.Message != want {
		t.Fatalf("message %q, want %q", e.Message, want)
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Fatalf("lost after %v, the lease is 300 ms", took)
	}
	// Tried at 100 ms, then every 25 ms until 300 ms: up to 8 tries, at least 2 on a busy machine.
	if n := f.failures.Load(); n < 2 || n > 8 {
		t.Fatalf("%d tries within the lease", n)
	}
}

func TestHeartbeatEndsWithItsStore(t *testing.T) {
	_, s := newFlaky(t)
	lock, _, err := AcquireLock(s, "k", "beat", &LockHolder{Kind: LockHolderProcess, Lease: time.Minute}, time.Time{}, nil)
	must(t, err)
	defer lock.Close()
	done := make(chan error, 1)
	go func() { done <- lock.Heartbeat(context.Background()) }()
	for {
		lock.mu.Lock()
		running := lock.beat != nil
		lock.mu.Unlock()
		if running {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := lock.Heartbeat(context.Background()); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second heartbeat: %v", err)
	}
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("the store closed under the heartbeat: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat outlived its store")
	}
	if err := lock.Heartbeat(context.Background()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a heartbeat on a closed store: %v", err)
	}
}
