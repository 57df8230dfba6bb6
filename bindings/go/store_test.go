package leasejudge

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// memBackend is a Backend in a Go map, with revisions from one counter, as a
// key/value bucket gives them. fail, when set, makes every call fail with it.
type memBackend struct {
	mu     sync.Mutex
	values map[string][]byte
	revs   map[string]uint64
	next   uint64
	fail   error
	calls  int
}

func newMemBackend() *memBackend {
	return &memBackend{values: map[string][]byte{}, revs: map[string]uint64{}}
}

func (m *memBackend) Keys() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.fail != nil {
		return nil, m.fail
	}
	keys := make([]string, 0, len(m.values))
	for k := range m.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

func (m *memBackend) Get(key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.fail != nil {
		return nil, 0, m.fail
	}
	v, ok := m.values[key]
	if !ok {
		return nil, 0, nil
	}
	return append([]byte{}, v...), m.revs[key], nil
}

func (m *memBackend) put(key string, value []byte) uint64 {
	m.next++
	m.values[key], m.revs[key] = append([]byte{}, value...), m.next
	return m.next
}

// set writes key at once, whatever it holds (a test's own writer).
func (m *memBackend) set(key string, value string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.put(key, []byte(value))
}

func (m *memBackend) value(key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[key]
	return string(v), ok
}

func (m *memBackend) Update(key string, value []byte, revision uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.fail != nil {
		return 0, m.fail
	}
	if _, ok := m.values[key]; !ok || m.revs[key] != revision {
		return 0, ErrChanged
	}
	return m.put(key, value), nil
}

func (m *memBackend) Create(key string, value []byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.fail != nil {
		return 0, m.fail
	}
	if _, ok := m.values[key]; ok {
		return 0, ErrExists
	}
	return m.put(key, value), nil
}

func (m *memBackend) Delete(key string, revision uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.fail != nil {
		return m.fail
	}
	if _, ok := m.values[key]; !ok || m.revs[key] != revision {
		return ErrChanged
	}
	delete(m.values, key)
	delete(m.revs, key)
	return nil
}

type panicBackend struct{ *memBackend }

func (panicBackend) Get(string) ([]byte, uint64, error) { panic("boom") }

// exerciseStore runs the store contract on s, the same for every kind of store.
func exerciseStore(t *testing.T, s *Store, binaryKeys bool) {
	t.Helper()
	if v, r, err := s.Get("lock"); v != nil || r != 0 || err != nil {
		t.Fatalf("Get(absent) = %q %d %v", v, r, err)
	}
	r1, err := s.Create("lock", []byte(`{"purpose":"a"}`))
	if err != nil || r1 == 0 {
		t.Fatalf("Create = %d %v", r1, err)
	}
	if _, err := s.Create("lock", []byte(`{}`)); !errors.Is(err, ErrExists) {
		t.Fatalf("Create(present) = %v", err)
	}
	if v, r, err := s.Get("lock"); string(v) != `{"purpose":"a"}` || r != r1 || err != nil {
		t.Fatalf("Get = %q %d %v", v, r, err)
	}
	r2, err := s.Update("lock", []byte(`{"purpose":"b"}`), r1)
	if err != nil || r2 <= r1 {
		t.Fatalf("Update = %d %v (after %d)", r2, err, r1)
	}
	if _, err := s.Update("lock", []byte(`{"purpose":"c"}`), r1); !errors.Is(err, ErrChanged) {
		t.Fatalf("Update at an old revision = %v", err)
	}
	if err := s.Delete("lock", r1); !errors.Is(err, ErrChanged) {
		t.Fatalf("Delete at an old revision = %v", err)
	}
	if v, _, _ := s.Get("lock"); string(v) != `{"purpose":"b"}` {
		t.Fatalf("a lost race wrote: %q", v)
	}
	if err := s.Delete("lock", r2); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	if err := s.Delete("lock", r2); !errors.Is(err, ErrChanged) {
		t.Fatalf("Delete(gone) = %v", err)
	}
	if _, err := s.Update("lock", []byte(`x`), r2); !errors.Is(err, ErrChanged) {
		t.Fatalf("Update(gone) = %v", err)
	}
	if !binaryKeys {
		return
	}
	// Empty values, binary keys and values: (pointer, length) all the way.
	r, err := s.Create("k\x00\xff", nil)
	if err != nil {
		t.Fatalf("Create(empty value) = %v", err)
	}
	if v, rr, err := s.Get("k\x00\xff"); v == nil || len(v) != 0 || rr != r || err != nil {
		t.Fatalf("Get(empty value) = %q %d %v", v, rr, err)
	}
	if _, err := s.Update("k\x00\xff", []byte("\x00\xff\xfe"), r); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := s.Get("k\x00\xff"); string(v) != "\x00\xff\xfe" {
		t.Fatalf("binary value: %q", v)
	}
}

func TestMemoryStore(t *testing.T) {
	s, err := OpenMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exerciseStore(t, s, true)
}

func TestFileStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	s, err := OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	exerciseStore(t, s, true)
	s.Close()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the directory: %v", err)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFileStore(notDir); !errors.Is(err, ErrIO) {
		t.Fatalf("OpenFileStore(a file) = %v", err)
	}
	if _, err := OpenFileStore(""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("OpenFileStore(\"\") = %v", err)
	}
	if _, err := OpenFileStore("a\x00b"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("OpenFileStore(NUL) = %v", err)
	}
}

func TestCallbackStore(t *testing.T) {
	m := newMemBackend()
	s, err := NewStore(m)
	if err != nil {
		t.Fatal(err)
	}
	exerciseStore(t, s, true)
	if m.calls == 0 {
		t.Fatal("the backend was never called")
	}
	// A backend that fails: ErrStore, its error under it.
	down := errors.New("the server is down")
	m.mu.Lock()
	m.fail = down
	m.mu.Unlock()
	_, err = s.Create("x", []byte("1"))
	var e *Error
	if !errors.Is(err, ErrStore) || !errors.Is(err, down) || !errors.As(err, &e) || e.Err != down {
		t.Fatalf("Create on a failing backend = %v", err)
	}
	if _, _, err := s.Get("x"); !errors.Is(err, ErrStore) || !errors.Is(err, down) {
		t.Fatalf("Get on a failing backend = %v", err)
	}
	// A backend's own code passes through as it is.
	m.mu.Lock()
	m.fail = &Error{Code: ErrTimeout, Message: "no answer"}
	m.mu.Unlock()
	if err := s.Delete("x", 1); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Delete on a timing-out backend = %v", err)
	}
	m.mu.Lock()
	m.fail = nil
	m.mu.Unlock()
	if _, err := s.Create("x", []byte("1")); err != nil {
		t.Fatalf("an earlier failure leaks into a later call: %v", err)
	}
	// A backend that panics: the panic stops at the trampoline, the call fails.
	p, err := NewStore(panicBackend{m})
	must(t, err)
	defer p.Close()
	if _, _, err := p.Get("x"); !errors.Is(err, ErrStore) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Get on a panicking backend = %v", err)
	}
	s.Close()
	if _, err := s.Create("y", nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Create after Close = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStore(nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("NewStore(nil) = %v", err)
	}
	var nilStore *Store
	if _, _, err := nilStore.Get("x"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil store: %v", err)
	}
}

// Stores that are dropped unclosed release their handles (the finalizer), and many
// goroutines may share one store.
func TestStoreConcurrentAndFinalized(t *testing.T) {
	s, err := NewStore(newMemBackend())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			key := string(rune('a' + g))
			rev, err := s.Create(key, []byte("0"))
			for i := 0; i < 200 && err == nil; i++ {
				rev, err = s.Update(key, []byte{byte(i)}, rev)
			}
			if err != nil {
				t.Error(err)
			}
		}(g)
	}
	wg.Wait()
	for i := 0; i < 100; i++ {
		if _, err := NewStore(newMemBackend()); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
}

func TestOpenStoreByURL(t *testing.T) {
	dir := t.TempDir()
	mem, err := OpenStore("mem:", StoreURLOptions{})
	must(t, err)
	mem.Close()
	// A mistyped directory is refused, and nothing is made, unless creation is asked.
	typo := filepath.Join(dir, "typo")
	if _, err := OpenStore("file:"+typo, StoreURLOptions{}); !errors.Is(err, ErrStore) {
		t.Fatalf("a missing directory: %v", err)
	}
	if _, err := os.Stat(typo); !os.IsNotExist(err) {
		t.Fatalf("the missing directory was made: %v", err)
	}
	made, err := OpenStore("file:"+typo, StoreURLOptions{Create: true})
	must(t, err)
	made.Close()
	if st, err := os.Stat(typo); err != nil || !st.IsDir() {
		t.Fatalf("the directory was not made: %v", err)
	}
	for _, bad := range []string{"", "memory", "mem:\x00", "file:", "nats://127.0.0.1:4222", "redis://x/y",
		"\xff\xfe", strings.Repeat("x", 1<<20)} {
		if _, err := OpenStore(bad, StoreURLOptions{}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%.40q: %v", bad, err)
		}
	}
	if _, err := OpenStore("mem:", StoreURLOptions{TLSCAFile: "a\x00b"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a TLS file with a NUL: %v", err)
	}
	if _, err := OpenStore("nats://127.0.0.1:1/bucket", StoreURLOptions{}); !errors.Is(err, ErrStore) {
		t.Fatalf("no server: %v", err)
	}
}
