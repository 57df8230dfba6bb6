package leasejudge

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sourceDir is the repository root: LEASEJUDGE_SOURCE_DIR, or two levels up from the
// package (go test runs in bindings/go).
func sourceDir(t testing.TB) string {
	if d := os.Getenv("LEASEJUDGE_SOURCE_DIR"); d != "" {
		return d
	}
	d, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// headerText is leasejudge.h and every part it includes, concatenated.
func headerText(t testing.TB) string {
	dir := filepath.Join(sourceDir(t), "capi", "include")
	files, err := filepath.Glob(filepath.Join(dir, "leasejudge", "*.h"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	files = append([]string{filepath.Join(dir, "leasejudge.h")}, files...)
	var b strings.Builder
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(text)
		b.WriteByte('\n')
	}
	return b.String()
}

// headerConstants are the `#define NAME (value)` and enum `NAME = value` lines of the
// header whose NAME matches the regular expression name, name to value.
func headerConstants(t testing.TB, name string) map[string]int {
	re := regexp.MustCompile(`(?m)^\s*(?:#define\s+(` + name + `)\s+\(?\s*(-?\d+)\s*\)?|(` + name + `)\s*=\s*\(?\s*(-?\d+)\s*\)?\s*,?)\s*(?:/[*/].*)?$`)
	out := map[string]int{}
	for _, m := range re.FindAllStringSubmatch(headerText(t), -1) {
		name, value := m[1], m[2]
		if name == "" {
			name, value = m[3], m[4]
		}
		v, err := strconv.Atoi(value)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = v
	}
	return out
}

func TestVersion(t *testing.T) {
	want := strconv.Itoa(HeaderVersion/10000) + "." + strconv.Itoa(HeaderVersion/100%100) + "." + strconv.Itoa(HeaderVersion%100)
	if Version() != want || VersionNumber() != HeaderVersion {
		t.Fatalf("library %s (%d), header %d", Version(), VersionNumber(), HeaderVersion)
	}
	consts := headerConstants(t, `LJ_VERSION_[A-Z]+`)
	if got := consts["LJ_VERSION_MAJOR"]*10000 + consts["LJ_VERSION_MINOR"]*100 + consts["LJ_VERSION_PATCH"]; got != HeaderVersion {
		t.Fatalf("header text says %d, cgo says %d", got, HeaderVersion)
	}
	for _, c := range []struct {
		runtime, header int
		ok              bool
	}{
		{100, 100, true}, {101, 100, true}, {199, 100, true}, {10100, 10100, true},
		{99, 100, false},      // older than the header
		{10000, 100, false},   // a newer major
		{100, 10000, false},   // an older major
		{20000, 10000, false}, // a newer major again
	} {
		if err := checkVersion(c.runtime, c.header); (err == nil) != c.ok {
			t.Errorf("checkVersion(%d, %d) = %v, want ok %v", c.runtime, c.header, err, c.ok)
		}
	}
}

// The Go codes are the header's, by name and number, and every one has a name.
func TestCodesMatchHeader(t *testing.T) {
	goCodes := map[string]Code{
		"LJ_EINVAL": ErrInvalid, "LJ_ENOMEM": ErrNoMemory, "LJ_EPARSE": ErrParse,
		"LJ_ECHANGED": ErrChanged, "LJ_ENOTFOUND": ErrNotFound, "LJ_EIO": ErrIO,
		"LJ_EVERSION": ErrVersion, "LJ_EUSER": ErrUser, "LJ_ETIMEOUT": ErrTimeout,
		"LJ_EUNSUPPORTED": ErrUnsupported, "LJ_EEXISTS": ErrExists, "LJ_EREFUSED": ErrRefused,
		"LJ_ESTORE": ErrStore, "LJ_EBUSY": ErrBusy, "LJ_EINTERNAL": ErrInternal, "LJ_EUNKNOWN": ErrUnknown,
	}
	header := headerConstants(t, `LJ_E[A-Z]+`)
	for name, v := range header {
		if v >= 0 {
			delete(header, name) // another family sharing the prefix (LJ_EXECUTION_...)
		}
	}
	if len(header) != len(goCodes) {
		t.Errorf("the header has %d codes, the package %d: %v", len(header), len(goCodes), header)
	}
	for name, v := range header {
		c, ok := goCodes[name]
		if !ok {
			t.Errorf("%s (%d) has no Go sentinel", name, v)
		} else if int(c) != v {
			t.Errorf("%s is %d in the header, %d in Go", name, v, int(c))
		}
	}
	seen := map[string]bool{}
	for name, c := range goCodes {
		s := c.String()
		if s == "" || s == "unknown error code" || seen[s] {
			t.Errorf("%s has the name %q", name, s)
		}
		seen[s] = true
		if c.Error() != "leasejudge: "+s {
			t.Errorf("%s.Error() = %q", name, c.Error())
		}
	}
	if ErrChanged.String() != "changed" || Code(1).String() != "unknown error code" {
		t.Errorf("names: %q %q", ErrChanged.String(), Code(1).String())
	}
}

func TestErrors(t *testing.T) {
	// A code the library returns, with its sentence: no process has pid 2^31-1.
	_, err := OwnerToken(1<<31 - 1)
	var e *Error
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrChanged) || !errors.As(err, &e) {
		t.Fatalf("OwnerToken(2^31-1) = %v", err)
	}
	if e.Code != ErrNotFound || e.Message == "" || e.Err != nil || e.Error() != "leasejudge: "+e.Message {
		t.Fatalf("%#v", e)
	}
	// A callback's error is kept under the code.
	cause := errors.New("the server is down")
	wrapped := &Error{Code: ErrStore, Message: "listing keys", Err: cause}
	if !errors.Is(wrapped, ErrStore) || !errors.Is(wrapped, cause) || wrapped.Error() != "leasejudge: listing keys: the server is down" {
		t.Fatalf("%v", wrapped)
	}
	if (&Error{Code: ErrBusy}).Error() != "leasejudge: busy" {
		t.Fatalf("%v", &Error{Code: ErrBusy})
	}
	// What a Go error becomes in C.
	for _, c := range []struct {
		err  error
		want Code
	}{
		{nil, 0},
		{ErrChanged, ErrChanged},
		{wrapped, ErrStore},
		{errors.New("x"), ErrUser},
		{&Error{Code: ErrExists}, ErrExists},
		{Code(0), ErrUser},
		{Code(5), ErrUser},
		{&Error{Code: 0}, ErrUser},
		{fmt.Errorf("wrapped: %w", ErrChanged), ErrChanged},
	} {
		if got := codeOf(c.err, ErrUser); got != c.want {
			t.Errorf("codeOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
