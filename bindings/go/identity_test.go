package leasejudge

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The kernel's record of pid's start, read here without the library: btime of
// /proc/stat plus field 22 of /proc/<pid>/stat in ticks of 1/100 s (USER_HZ is
// 100 on Linux), as milliseconds and as ticks.
func kernelStart(t *testing.T, pid int) (ms int64, ticks string) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	ticks = fields[22-3] // after ')' the fields start at 3 (state)
	n, err := strconv.ParseInt(ticks, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	procStat, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^btime (\d+)$`).FindSubmatch(procStat)
	btime, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return btime*1000 + n*10, ticks
}

func readBootID(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if id := strings.TrimSpace(string(b)); err == nil && id != "" {
		return id
	}
	return NoBootID
}

// startChild starts `sleep 1000`; stop kills and reaps it.
func startChild(t *testing.T) (pid int, stop func()) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	return cmd.Process.Pid, stop
}

func TestOwnerAndBoot(t *testing.T) {
	ms, _ := kernelStart(t, os.Getpid())
	boot := readBootID(t)
	want := boot + "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(ms, 36)
	if Owner != want {
		t.Fatalf("Owner = %q, want %q", Owner, want)
	}
	if BootID != boot {
		t.Fatalf("BootID = %q, want %q", BootID, boot)
	}
	if Boot.UnixMilli() != ms {
		t.Fatalf("Boot = %v (%d ms), want %d ms", Boot, Boot.UnixMilli(), ms)
	}
	if tok, err := OwnerToken(0); err != nil || tok != Owner {
		t.Fatalf("OwnerToken(0) = %q, %v", tok, err)
	}
	if tok, err := OwnerToken(os.Getpid()); err != nil || tok != Owner {
		t.Fatalf("OwnerToken(self) = %q, %v", tok, err)
	}
	if got := startOf("x.1.zz"); got.UnixMilli() != 35*36+35 {
		t.Fatalf("startOf = %v", got)
	}
	if got := startOf("no dots"); time.Since(got) > time.Minute {
		t.Fatalf("startOf without a start = %v", got)
	}
}

func TestOwnerTokenOfAnotherProcess(t *testing.T) {
	pid, stop := startChild(t)
	ms, _ := kernelStart(t, pid)
	tok, err := OwnerToken(pid)
	want := readBootID(t) + "." + strconv.Itoa(pid) + "." + strconv.FormatInt(ms, 36)
	if err != nil || tok != want {
		t.Fatalf("OwnerToken(child) = %q, %v; want %q", tok, err, want)
	}
	j, err := JudgeOwner(tok, nil)
	if err != nil || j.State != HolderAlive || !strings.Contains(j.Why, strconv.Itoa(pid)) {
		t.Fatalf("the live child: %+v, %v", j, err)
	}
	stop()
	j, err = JudgeOwner(tok, nil)
	if err != nil || j.State != HolderDead || !strings.Contains(j.Why, strconv.Itoa(pid)) {
		t.Fatalf("the dead child: %+v, %v", j, err)
	}
	if _, err := OwnerToken(pid); !errors.Is(err, ErrNotFound) {
		t.Fatalf("OwnerToken(dead child) = %v", err)
	}
	for _, pid := range []int{-1, 1 << 31} {
		if _, err := OwnerToken(pid); !errors.Is(err, ErrInvalid) {
			t.Errorf("OwnerToken(%d) = %v", pid, err)
		}
		if _, err := LeaseIdentity(pid); !errors.Is(err, ErrInvalid) {
			t.Errorf("LeaseIdentity(%d) = %v", pid, err)
		}
	}
}

func TestJudgeOwner(t *testing.T) {
	ms, _ := kernelStart(t, os.Getpid())
	self := func(boot string, startMs int64) string {
		return boot + "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(startMs, 36)
	}
	zero := OwnerOptions{}
	cases := []struct {
		name  string
		token string
		opts  *OwnerOptions
		want  HolderState
	}{
		{"this process", Owner, nil, HolderAlive},
		{"a start 4 s off, within the default 5 s", self(BootID, ms+4000), nil, HolderAlive},
		{"a start 1 s off with no tolerance", self(BootID, ms+1000), &zero, HolderRecycled},
		{"an hour earlier", self(BootID, ms-3600_000), nil, HolderRecycled},
		{"malformed", "not a token", nil, HolderUnknown},
		{"empty", "", nil, HolderUnknown},
		{"non-UTF-8", "\xff\xfe.1.1", nil, HolderUnknown},
		{"a NUL inside", Owner + "\x00", nil, HolderUnknown},
	}
	if BootID != NoBootID {
		cases = append(cases, struct {
			name  string
			token string
			opts  *OwnerOptions
			want  HolderState
		}{"another boot", self("00000000-0000-4000-8000-000000000000", ms), nil, HolderOtherBoot})
	}
	for _, c := range cases {
		j, err := JudgeOwner(c.token, c.opts)
		if err != nil || j.State != c.want || j.Why == "" {
			t.Errorf("%s: JudgeOwner(%q) = %v %q, %v; want %v", c.name, c.token, j.State, j.Why, err, c.want)
		}
	}
	if d := DefaultOwnerOptions(); d.StartTolerance != 5*time.Second {
		t.Errorf("DefaultOwnerOptions = %+v", d)
	}
	if _, err := JudgeOwner(Owner, &OwnerOptions{StartTolerance: -time.Second}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a negative tolerance: %v", err)
	}
}

func TestLeaseIdentity(t *testing.T) {
	_, ticks := kernelStart(t, os.Getpid())
	id, err := LeaseIdentity(0)
	if BootID != NoBootID {
		if want := "linux " + BootID + " " + ticks; err != nil || id != want {
			t.Fatalf("LeaseIdentity(0) = %q, %v; want %q", id, err, want)
		}
	}
	if self, err := LeaseIdentity(os.Getpid()); err != nil || self != id {
		t.Fatalf("LeaseIdentity(self) = %q, %v", self, err)
	}
	pid, stop := startChild(t)
	childID, err := LeaseIdentity(pid)
	if err != nil || childID == id || !strings.HasPrefix(childID, "linux ") {
		t.Fatalf("LeaseIdentity(child) = %q, %v", childID, err)
	}
	cases := []struct {
		name   string
		pid    int
		record string
		age    time.Duration
		want   HolderState
	}{
		{"this process, its identity", os.Getpid(), id, 0, HolderAlive},
		{"this process, another start", os.Getpid(), "linux " + BootID + " 1", 0, HolderRecycled},
		{"another backend is no proof", os.Getpid(), "ps Mon Jan  1 00:00:00 2024", 0, HolderAlive},
		{"unreadable is no proof", os.Getpid(), "garbage", 500 * time.Minute, HolderAlive},
		{"empty, 119 minutes", os.Getpid(), "", 119*time.Minute + 59*time.Second, HolderAlive},
		{"empty, 120 minutes", os.Getpid(), "", 120 * time.Minute, HolderRecycled},
		{"the child, its identity", pid, childID, 0, HolderAlive},
	}
	for _, c := range cases {
		j, err := JudgeLeaseIdentity(c.pid, c.record, c.age)
		if err != nil || j.State != c.want {
			t.Errorf("%s: %v %q, %v; want %v", c.name, j.State, j.Why, err, c.want)
		}
	}
	stop()
	if j, err := JudgeLeaseIdentity(pid, childID, 0); err != nil || j.State != HolderDead {
		t.Errorf("the dead child: %v %q, %v", j.State, j.Why, err)
	}
	if _, err := LeaseIdentity(pid); !errors.Is(err, ErrNotFound) {
		t.Errorf("LeaseIdentity(dead child) = %v", err)
	}
	for _, bad := range []int{0, -1, 1 << 31} {
		if _, err := JudgeLeaseIdentity(bad, id, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("JudgeLeaseIdentity(%d) = %v", bad, err)
		}
	}
}

func TestMachineID(t *testing.T) {
	id, err := MachineID()
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err == nil && !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
		t.Fatalf("MachineID() = %q", id)
	}
	if again, err2 := MachineID(); again != id || (err2 == nil) != (err == nil) {
		t.Fatalf("MachineID() changed: %q %v, %q %v", id, err, again, err2)
	}
	// Inside Cloud Run there is none: pids prove nothing there.
	t.Setenv("K_SERVICE", "svc")
	if id, err := MachineID(); !errors.Is(err, ErrNotFound) || id != "" {
		t.Fatalf("MachineID() with K_SERVICE = %q, %v", id, err)
	}
}

func TestHolderStateNames(t *testing.T) {
	for s, want := range map[HolderState]string{HolderAlive: "alive", HolderDead: "dead", HolderRecycled: "recycled",
		HolderOtherBoot: "other-boot", HolderUnknown: "unknown", HolderState(9): "HolderState(9)"} {
		if s.String() != want {
			t.Errorf("%d: %q", int(s), s.String())
		}
	}
	consts := headerConstants(t, `LJ_HOLDER_[A-Z_]+`)
	for name, s := range map[string]HolderState{"LJ_HOLDER_ALIVE": HolderAlive, "LJ_HOLDER_DEAD": HolderDead,
		"LJ_HOLDER_RECYCLED": HolderRecycled, "LJ_HOLDER_OTHER_BOOT": HolderOtherBoot, "LJ_HOLDER_UNKNOWN": HolderUnknown} {
		if v, ok := consts[name]; !ok || v != int(s) {
			t.Errorf("%s: header %d (%v), Go %d", name, v, ok, int(s))
		}
	}
	if len(consts) != 5 {
		t.Errorf("the header has %d holder states: %v", len(consts), consts)
	}
}
