package leasejudge

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A git checkout in a temporary directory, and its lease directory.
func leaseCheckout(t *testing.T) (root string, dir LeaseDir) {
	root = t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git init: %v %s (under CI=true a test that cannot run fails)", err, out)
		}
		t.Skipf("git init: %v %s", err, out)
	}
	// The lease directory must not come from the test's own environment.
	env := []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	d, err := LeaseDirOf(root, &LeaseOptions{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, ".git", "gstack-leases"); d.Path != want {
		t.Fatalf("LeaseDirOf = %q, want %q", d.Path, want)
	}
	return root, d
}

func TestLeaseDirVerbs(t *testing.T) {
	_, d := leaseCheckout(t)
	ctx := context.Background()
	self := os.Getpid()
	out, err := d.Touch(ctx, self)
	if err != nil || out.ExitCode != 0 || len(out.Stdout)+len(out.Stderr) != 0 {
		t.Fatalf("Touch = %+v, %v", out, err)
	}
	id, err := LeaseIdentity(self)
	must(t, err)
	if b, err := os.ReadFile(filepath.Join(d.Path, strconv.Itoa(self))); err != nil || string(b) != id+"\n" {
		t.Fatalf("the lease holds %q, %v; want %q", b, err, id+"\n")
	}
	// A lease of a child that then dies, and one whose record names another start.
	child, stop := startChild(t)
	if out, err := d.Touch(ctx, child); err != nil || out.ExitCode != 0 {
		t.Fatalf("Touch(child) = %+v, %v", out, err)
	}
	stop()
	pid1 := 1 // init lives; its record here names another start: stale
	if BootID != NoBootID {
		must(t, os.WriteFile(filepath.Join(d.Path, "1"), []byte("linux "+BootID+" 999999999999\n"), 0o644))
	}
	out, err = d.List(ctx)
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("List = %+v, %v", out, err)
	}
	// The shell's glob order: byte order of the names under LC_ALL=C.
	names := []string{"1", strconv.Itoa(child), strconv.Itoa(self)}
	if BootID == NoBootID {
		names = names[1:]
	}
	sortStrings(names)
	want := map[string]string{"1": "stale", strconv.Itoa(child): "dead", strconv.Itoa(self): "alive"}
	leases := out.Leases()
	if len(leases) != len(names) {
		t.Fatalf("List printed %q", out.Stdout)
	}
	for i, l := range leases {
		if l.PID != names[i] || l.Age != 0 || l.Note != want[l.PID] || out.Stdout[i] != l.PID+" 0m "+want[l.PID] {
			t.Errorf("line %d: %q", i, out.Stdout[i])
		}
	}
	// live: this process is printed, the dead child skipped, init's stale lease reclaimed.
	out, err = d.Live(ctx, 0, false)
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("Live = %+v, %v", out, err)
	}
	if len(out.Stdout) != 1 || out.Stdout[0] != strconv.Itoa(self)+" 0m "+filepath.Base(os.Args[0])[:min(15, len(filepath.Base(os.Args[0])))] {
		t.Errorf("Live printed %q", out.Stdout)
	}
	if BootID != NoBootID {
		if len(out.Stderr) != 1 || !hasPrefix(out.Stderr[0], "gstack-lease: reclaimed stale lease "+strconv.Itoa(pid1)+" (0m; recorded 'linux "+BootID+" 999999999999', pid 1 is now ") {
			t.Errorf("Live said %q", out.Stderr)
		}
		if _, err := os.Stat(filepath.Join(d.Path, "1")); !os.IsNotExist(err) {
			t.Errorf("the stale lease is still there: %v", err)
		}
	}
	// Excluding our own ancestry leaves nothing live.
	out, err = d.Live(ctx, self, false)
	if err != nil || out.ExitCode != 1 || len(out.Stdout) != 0 {
		t.Errorf("Live(excluding us) = %+v, %v", out, err)
	}
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// A live holder keeps the directory lock: touch gives up after its tries (exit 3,
// the script's message), and a cancelled context stops the wait.
func TestLeaseDirLocked(t *testing.T) {
	_, d := leaseCheckout(t)
	self := os.Getpid()
	must(t, os.MkdirAll(filepath.Join(d.Path, ".lock"), 0o755))
	id, err := LeaseIdentity(self)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(d.Path, ".lock", "owner"), []byte(strconv.Itoa(self)+" "+id+"\n"), 0o644))
	// SelfPID names another taker: the lock's holder (this process) is not it.
	child, _ := startChild(t)
	d.Options = &LeaseOptions{LockTries: 3, LockRetry: 10 * time.Millisecond, SelfPID: child}
	out, err := d.Touch(context.Background(), child)
	if err != nil || out.ExitCode != 3 || len(out.Stderr) != 1 ||
		out.Stderr[0] != "gstack-lease: the lease directory is locked by live process "+strconv.Itoa(self)+"; lease "+strconv.Itoa(child)+" not renewed" {
		t.Fatalf("Touch(locked) = %+v, %v", out, err)
	}
	d.Options = &LeaseOptions{LockTries: 1 << 30, LockTimeLimit: time.Hour, SelfPID: child}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = d.Touch(ctx, child)
	if !errors.Is(err, ErrUser) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Touch(locked, cancelled) = %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.Path, strconv.Itoa(child))); !os.IsNotExist(err) {
		t.Fatalf("a lease was written without the lock: %v", err)
	}
}

func TestRunLeaseCommand(t *testing.T) {
	root, d := leaseCheckout(t)
	ctx := context.Background()
	env := &LeaseOptions{Env: []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}}
	out, err := RunLeaseCommand(ctx, []string{"touch", "--pid", strconv.Itoa(os.Getpid())}, root, "", env)
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("touch = %+v, %v", out, err)
	}
	out, err = RunLeaseCommand(ctx, []string{"list", "--root", root}, "", "", env)
	if err != nil || out.ExitCode != 0 || len(out.Stdout) != 1 || out.Stdout[0] != strconv.Itoa(os.Getpid())+" 0m alive" {
		t.Fatalf("list = %+v, %v", out, err)
	}
	out, err = RunLeaseCommand(ctx, []string{"bogus"}, root, "", env)
	if err != nil || out.ExitCode != 2 || len(out.Stderr) != 1 || out.Stderr[0] != "gstack-lease: unknown verb 'bogus'" {
		t.Fatalf("bogus = %+v, %v", out, err)
	}
	notGit := t.TempDir()
	out, err = RunLeaseCommand(ctx, []string{"list", "--root", notGit}, "", "", env)
	if err != nil || out.ExitCode != 2 || len(out.Stderr) != 1 || out.Stderr[0] != "gstack-lease: "+notGit+" is not a git checkout" {
		t.Fatalf("not a checkout = %+v, %v", out, err)
	}
	if _, err := LeaseDirOf(notGit, env); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LeaseDirOf(not a checkout) = %v", err)
	}
	if _, err := RunLeaseCommand(ctx, []string{"list\x00"}, "", "", env); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a NUL in an argument = %v", err)
	}
	// GSTACK_LEASE_DIR names the directory.
	other := filepath.Join(t.TempDir(), "leases")
	dd, err := LeaseDirOf(root, &LeaseOptions{Env: []string{"GSTACK_LEASE_DIR=" + other}})
	if err != nil || dd.Path != other {
		t.Fatalf("LeaseDirOf with GSTACK_LEASE_DIR = %+v, %v", dd, err)
	}
	_ = d
}

func TestLeaseStateOf(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	id, err := LeaseIdentity(0)
	must(t, err)
	child, stop := startChild(t)
	stop()
	cases := []struct {
		pid, record string
		age         time.Duration
		want        LeaseState
	}{
		{self, id, 0, LeaseAlive},
		{self, "", 119 * time.Minute, LeaseAlive},
		{self, "", 120 * time.Minute, LeaseStale},
		{self, "garbage", 0, LeaseAlive},
		{strconv.Itoa(child), id, 0, LeaseDead},
	}
	if BootID != NoBootID {
		cases = append(cases, struct {
			pid, record string
			age         time.Duration
			want        LeaseState
		}{self, "linux " + BootID + " 1", 0, LeaseStale})
	}
	for _, c := range cases {
		got, err := LeaseStateOf(c.pid, c.record, c.age, nil)
		if err != nil || got != c.want {
			t.Errorf("LeaseStateOf(%s, %q, %v) = %v, %v; want %v", c.pid, c.record, c.age, got, err, c.want)
		}
	}
	for s, name := range map[LeaseState]string{LeaseAlive: "alive", LeaseDead: "dead", LeaseStale: "stale", 7: "LeaseState(7)"} {
		if s.String() != name {
			t.Errorf("%d: %q", int(s), s.String())
		}
	}
}
