package leasejudge

/*
#include <stdlib.h>
#include "leasejudge.h"
#include "trampolines.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// A Store holds keys with values and revisions. Every write names the revision it
// read, and a write that finds the key moved fails with ErrChanged instead of
// overwriting; Create fails with ErrExists where the key holds a value. Sweeps and
// locks act only through a store: one in memory (tests), a directory of files (locks
// on one machine), NATS JetStream (a fleet), or any the caller has (NewStore).
//
// A Store may be used from several goroutines; Close it when done (a Store that is
// garbage collected unclosed is closed then).
type Store struct {
	mu  sync.RWMutex
	ptr *C.lj_store_t // the library's object; nil once closed
	cb  *callbackStore

	// The locks whose heartbeats renew through this store: stopped before it closes.
	beatsMu sync.Mutex
	beats   map[*Lock]struct{}
	closing bool
}

// addBeat registers l's heartbeat, or refuses once the store is closing.
func (s *Store) addBeat(l *Lock) bool {
	s.beatsMu.Lock()
	defer s.beatsMu.Unlock()
	if s.closing {
		return false
	}
	if s.beats == nil {
		s.beats = map[*Lock]struct{}{}
	}
	s.beats[l] = struct{}{}
	return true
}

func (s *Store) dropBeat(l *Lock) {
	s.beatsMu.Lock()
	defer s.beatsMu.Unlock()
	delete(s.beats, l)
}

// Backend is a store the caller has, for NewStore. Get answers nil (and revision 0)
// for a key that holds nothing; revisions are the backend's own, > 0, growing for a
// key. Update and Delete fail with an error matching ErrChanged (errors.Is) when the
// key is not at revision, Create with one matching ErrExists when it holds a value.
// Any other error fails the operation with ErrStore, the error kept under it. Its
// methods may be called from several goroutines at once.
type Backend interface {
	Keys() ([]string, error)
	Get(key string) (value []byte, revision uint64, err error)
	Update(key string, value []byte, revision uint64) (uint64, error)
	Create(key string, value []byte) (uint64, error)
	Delete(key string, revision uint64) error
}

// callbackStore is the Go value behind a callback store's handle.
type callbackStore struct {
	keys   func() ([]string, error)
	get    func(key string) ([]byte, uint64, error)
	update func(key string, value []byte, revision uint64) (uint64, error)
	create func(key string, value []byte) (uint64, error) // nil: unsupported
	remove func(key string, revision uint64) error        // nil: unsupported
	scan   ScanEntries                                    // nil: keys and a get of each

	mu   sync.Mutex
	last error // the latest failure a callback reported, for the Go caller
}

// fail keeps err for the Go caller and answers its code: the codes a store says
// (changed, exists, ...) as they are, anything else as the store's failure.
func (s *callbackStore) fail(err error) C.int {
	s.mu.Lock()
	s.last = err
	s.mu.Unlock()
	return C.int(codeOf(err, ErrStore))
}

// took is the failure a callback reported since the last call, cleared.
func (s *callbackStore) took() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.last
	s.last = nil
	return err
}

// openCallbackStore makes an lj_store_t over s; the caller destroys it.
func openCallbackStore(s *callbackStore) (*C.lj_store_t, error) {
	h := cgo.NewHandle(s) // deleted by the store's release, also on failure
	var out *C.lj_store_t
	var cerr *C.lj_error_t
	if s.scan != nil {
		if err := errorOf(C.lj_go_store_open_scan(&out, C.uintptr_t(h), &cerr), cerr); err != nil {
			return nil, err
		}
		return out, nil
	}
	if err := errorOf(C.lj_go_store_open(&out, C.uintptr_t(h), &cerr), cerr); err != nil {
		return nil, err
	}
	return out, nil
}

func newStore(ptr *C.lj_store_t, cb *callbackStore) *Store {
	s := &Store{ptr: ptr, cb: cb}
	runtime.SetFinalizer(s, (*Store).Close)
	return s
}

// NewStore is a Store over b: the library's sweeps and locks act on b through it.
func NewStore(b Backend) (*Store, error) {
	if b == nil {
		return nil, &Error{Code: ErrInvalid, Message: "the backend is nil"}
	}
	cb := &callbackStore{keys: b.Keys, get: b.Get, update: b.Update, create: b.Create, remove: b.Delete}
	ptr, err := openCallbackStore(cb)
	if err != nil {
		return nil, err
	}
	return newStore(ptr, cb), nil
}

// OpenMemoryStore is an empty store in this process.
func OpenMemoryStore() (*Store, error) {
	var out *C.lj_store_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_store_memory_open(&out, &cerr), cerr); err != nil {
		return nil, err
	}
	return newStore(out, nil), nil
}

// OpenFileStore is the store in the directory dir (made, one level, when missing):
// one file per key, for locks on one machine. ErrIO when dir cannot be made or is
// not a directory. It is lj_store_file_open's, for callers that make their
// directory on purpose; OpenStore("file:"+dir, StoreURLOptions{}) is the store
// URL's rule every door shares, which refuses a missing directory (a mistyped path
// would give a second, empty lock directory) unless Create is set.
func OpenFileStore(dir string) (*Store, error) {
	d, n := cString(dir)
	defer C.free(unsafe.Pointer(d))
	var out *C.lj_store_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_store_file_open(&out, d, n, &cerr), cerr); err != nil {
		return nil, err
	}
	return newStore(out, nil), nil
}

// StoreURLOptions are what OpenStore takes beside the URL. Zero fields are the
// library's defaults.
type StoreURLOptions struct {
	// Create makes a missing file: directory or NATS bucket; otherwise it is refused
	// (ErrStore), and nothing is made.
	Create bool
	// NATS: a credentials file and TLS files.
	CredentialsFile, TLSCAFile, TLSCertFile, TLSKeyFile string
	// RefuseUnfenced refuses writes on a replicated bucket of a nats-server before
	// 2.9.21, which does not fence other clients' writes.
	RefuseUnfenced bool
}

// OpenStore opens the store url names, the library's one grammar (the command's
// --store): "mem:", "file:DIR" or "nats://[user:pass@]host:port[,...]/BUCKET" (tls://
// too). ErrInvalid for any other text; ErrStore for a store that is not there or
// cannot be reached.
func OpenStore(url string, opts StoreURLOptions) (*Store, error) {
	c := (*C.lj_store_url_options_t)(C.malloc(C.sizeof_lj_store_url_options_t))
	defer C.free(unsafe.Pointer(c))
	C.lj_store_url_options_init(c, C.LJ_STORE_URL_OPTIONS_VERSION)
	var texts cTexts
	defer texts.free()
	text := texts.set
	text(opts.CredentialsFile, &c.credentials_file, &c.credentials_file_len)
	text(opts.TLSCAFile, &c.tls_ca_file, &c.tls_ca_file_len)
	text(opts.TLSCertFile, &c.tls_cert_file, &c.tls_cert_file_len)
	text(opts.TLSKeyFile, &c.tls_key_file, &c.tls_key_file_len)
	c.create = C.int32_t(flag(opts.Create))
	c.refuse_unfenced = C.int32_t(flag(opts.RefuseUnfenced))
	u, n := cString(url)
	defer C.free(unsafe.Pointer(u))
	var out *C.lj_store_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_store_open_url(&out, u, n, c, &cerr), cerr); err != nil {
		return nil, err
	}
	return newStore(out, nil), nil
}

// Close closes the store; later calls fail with ErrInvalid. Closing twice is fine.
func (s *Store) Close() error {
	// A heartbeat renews on a thread of its own: stop each before the store goes.
	s.beatsMu.Lock()
	s.closing = true
	locks := make([]*Lock, 0, len(s.beats))
	for l := range s.beats {
		locks = append(locks, l)
	}
	s.beatsMu.Unlock()
	for _, l := range locks {
		l.stopBeat()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr != nil {
		C.lj_store_destroy(s.ptr)
		s.ptr = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

var errClosed = &Error{Code: ErrInvalid, Message: "the store is closed"}

// use runs f with the store's object while it is open.
func (s *Store) use(f func(*C.lj_store_t) error) error {
	if s == nil {
		return &Error{Code: ErrInvalid, Message: "the store is nil"}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.ptr == nil {
		return errClosed
	}
	s.cb.took() // a failure of an earlier call is not this one's
	err := f(s.ptr)
	return s.withCause(err)
}

// withCause puts the Go error of the backend under err, when a callback failed.
func (s *Store) withCause(err error) error {
	cause := s.cb.took()
	var e *Error
	if err != nil && cause != nil && errors.As(err, &e) && e.Err == nil {
		e.Err = cause
	}
	return err
}

// Get is key's value and revision; nil and 0 when the key holds nothing.
func (s *Store) Get(key string) (value []byte, revision uint64, err error) {
	k, kn := cString(key)
	defer C.free(unsafe.Pointer(k))
	err = s.use(func(p *C.lj_store_t) error {
		var out *C.char
		var n C.size_t
		var rev C.uint64_t
		var cerr *C.lj_error_t
		if err := errorOf(C.lj_store_get(&out, &n, &rev, p, k, kn, &cerr), cerr); err != nil {
			return err
		}
		value, revision = goBytes(out, n), uint64(rev)
		C.lj_free(unsafe.Pointer(out))
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil, 0, nil
	}
	return value, revision, err
}

// Create writes value where key holds none; the new revision. ErrExists when it does.
func (s *Store) Create(key string, value []byte) (uint64, error) {
	k, kn := cString(key)
	defer C.free(unsafe.Pointer(k))
	var rev C.uint64_t
	err := s.use(func(p *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_store_create(&rev, p, k, kn, cBytes(value), C.size_t(len(value)), &cerr), cerr)
	})
	return uint64(rev), err
}

// Update writes value while key is still at revision; the new revision. ErrChanged
// when another writer was first or the key is gone.
func (s *Store) Update(key string, value []byte, revision uint64) (uint64, error) {
	k, kn := cString(key)
	defer C.free(unsafe.Pointer(k))
	var rev C.uint64_t
	err := s.use(func(p *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_store_update(&rev, p, k, kn, cBytes(value), C.size_t(len(value)), C.uint64_t(revision), &cerr), cerr)
	})
	return uint64(rev), err
}

// Delete deletes key while it is still at revision. ErrChanged when it moved or is gone.
func (s *Store) Delete(key string, revision uint64) error {
	k, kn := cString(key)
	defer C.free(unsafe.Pointer(k))
	return s.use(func(p *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_store_remove(p, k, kn, C.uint64_t(revision), &cerr), cerr)
	})
}

// Keys lists every key that holds a value now.
func (s *Store) Keys() ([]string, error) {
	var keys []string
	h := cgo.NewHandle(&keys)
	defer h.Delete()
	err := s.use(func(p *C.lj_store_t) error {
		var cerr *C.lj_error_t
		return errorOf(C.lj_go_store_keys_list(p, C.uintptr_t(h), &cerr), cerr)
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}
