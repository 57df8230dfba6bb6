package leasejudge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The left-running case, with a real process: a child (this test binary run again)
// writes running steps with its own owner token into a shared store and is
// SIGKILLed; the parent's start sweep then ends or deletes them as the rules say,
// and leaves the parent's own running step.

const conformanceChildEnv = "LEASEJUDGE_GO_CONFORMANCE_CHILD"

const (
	childHandID = "child-hand"
	childAskID  = "9c4f3d85-6e0b-4a3d-8f44-5c8b1a0e9d34"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(conformanceChildEnv); dir != "" {
		os.Exit(conformanceChild(dir))
	}
	os.Exit(m.Run())
}

// conformanceChild is the child's side: two running steps owned by this process, a
// hand-started one and a pulled ask's, then "ready" and a wait for the kill.
func conformanceChild(dir string) int {
	s, err := OpenFileStore(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	started := time.Now().UTC().Format(time.RFC3339Nano)
	for id, tool := range map[string]string{childHandID: "go test", childAskID: "check ask"} {
		v, _ := json.Marshal(map[string]any{"id": id, "tool": tool, "state": "running", "owner": Owner, "started": started})
		if _, err := s.Create(node+"."+id, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println("ready " + Owner)
	time.Sleep(10 * time.Minute) // killed long before
	return 2
}

func TestConformanceLeftRunning(t *testing.T) {
	for _, rule := range []OwnerRule{RuleNotSelf, RuleProvablyDead} {
		t.Run(map[OwnerRule]string{RuleNotSelf: "not-self", RuleProvablyDead: "provably-dead"}[rule], func(t *testing.T) {
			conformance(t, rule)
		})
	}
}

func conformance(t *testing.T, rule OwnerRule) {
	dir := t.TempDir()
	store, err := OpenFileStore(dir)
	must(t, err)
	defer store.Close()
	now := time.Now().UTC()
	put := func(key string, v map[string]any) string {
		raw, _ := json.Marshal(v)
		if _, err := store.Create(key, raw); err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	// This process's own running step, and steps of every other kind.
	own := put(node+".own", map[string]any{"id": "own", "tool": "go build", "state": "running", "owner": Owner,
		"started": now.Format(time.RFC3339Nano)})
	put(node+".old", map[string]any{"id": "old", "tool": "lint", "state": "running", "started": "2020-01-01T00:00:00Z"})
	put(node+"."+askID2, map[string]any{"id": askID2, "tool": "check ask", "state": "running", "started": "2020-01-01T00:00:00Z"})
	young := put(node+"."+askID3, map[string]any{"id": askID3, "tool": "check ask", "state": "running",
		"started": now.Add(-time.Minute).Format(time.RFC3339Nano)})
	done := put(node+".done", map[string]any{"id": "done", "tool": "go vet", "state": "succeeded", "owner": other})
	theirs := put("build-eu-2.x", map[string]any{"id": "x", "tool": "go build", "state": "running", "owner": other})
	// A live process other than this one owns a step too: a sleep.
	sleeper, stopSleeper := startChild(t)
	defer stopSleeper()
	sleeperToken, err := OwnerToken(sleeper)
	must(t, err)
	alive := put(node+".alive", map[string]any{"id": "alive", "tool": "go run", "state": "running", "owner": sleeperToken,
		"started": now.Format(time.RFC3339Nano)})

	// The child writes its steps and is killed.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), conformanceChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child: %v", err)
	}
	childToken := strings.TrimSpace(strings.TrimPrefix(line, "ready "))
	if want, err := OwnerToken(cmd.Process.Pid); err != nil || childToken != want {
		t.Fatalf("the child's owner %q, its token %q (%v)", childToken, want, err)
	}
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the child ended with %v", err)
	}
	if j, err := JudgeOwner(childToken, nil); err != nil || j.State != HolderDead {
		t.Fatalf("the killed child is %v (%q, %v)", j.State, j.Why, err)
	}
	childHand, _, _ := store.Get(node + "." + childHandID)
	var childStep Step
	must(t, json.Unmarshal(childHand, &childStep))

	// The start sweep, as a module runs it.
	defer func(s func() <-chan struct{}) { StaleServed = s }(StaleServed)
	StaleServed = func() <-chan struct{} { return servedAlready }
	var log logBook
	report, err := EndStaleAtStartWith(context.Background(), ScanOfStore(store), node, Boot, log.logf, &SweepOptions{Rules: Rules{Rule: rule}})
	if err != nil || report == nil {
		t.Fatalf("EndStaleAtStart: %+v %v", report, err)
	}

	get := func(key string) (string, bool) {
		v, _, err := store.Get(key)
		must(t, err)
		return string(v), v != nil
	}
	ended := func(key, why string) {
		t.Helper()
		v, ok := get(key)
		var s Step
		if !ok || json.Unmarshal([]byte(v), &s) != nil || s.State != "failed" || s.Reason != why || s.Ended.Before(now) {
			t.Errorf("%s is %s; want it ended: %s", key, v, why)
		}
	}
	left := func(key, want string) {
		t.Helper()
		if v, ok := get(key); !ok || v != want {
			t.Errorf("%s is %q; want it left as %q", key, v, want)
		}
	}
	// The child's: its hand-started step ended, its ask deleted (its stream redelivers it).
	ended(node+"."+childHandID, RestartReason)
	if v, ok := get(node + "." + childAskID); ok {
		t.Errorf("the child's ask is still there: %s", v)
	}
	// No owner: the old hand-started step and the ask past its bound end.
	ended(node+".old", RestartReason)
	ended(node+"."+askID2, "past the step bound: its asker stopped waiting at 2020-01-01T01:00:00Z")
	// This process's own step, the young ask, the finished one and another node's: left.
	left(node+".own", own)
	left(node+"."+askID3, young)
	left(node+".done", done)
	left("build-eu-2.x", theirs)
	// The live sleeper's: ended under not-self (the seed's rule), left under provably-dead.
	if rule == RuleNotSelf {
		ended(node+".alive", RestartReason)
	} else {
		left(node+".alive", alive)
	}
	wantEnds, wantLeaves := uint64(4), uint64(3)
	if rule == RuleProvablyDead {
		wantEnds, wantLeaves = 3, 4
	}
	// A sweep reads only its node's keys: the other node's are never counted.
	if report.Ends != wantEnds || report.Deletes != 1 || report.Leaves != wantLeaves || report.OtherNode != 0 || report.Changed != 0 {
		t.Errorf("report %+v", report)
	}
	said := "its owner " + childToken + " is not this process " + Owner
	if rule == RuleProvablyDead {
		said = "its owner " + childToken + " is provably gone: "
	}
	wantLine := "the step " + node + "." + childHandID + " (go test, started " + childStep.Started.UTC().Format(time.RFC3339) +
		") was left running and is ended: " + RestartReason + "; " + said
	lines := log.all()
	found := false
	for _, l := range lines {
		found = found || strings.HasPrefix(l, wantLine)
	}
	if !found || lines[len(lines)-1] != strconv.Itoa(int(wantEnds+1))+" steps of "+node+" left running by a previous process ended" {
		t.Errorf("logged:\n%s\nwant a line starting %q", strings.Join(lines, "\n"), wantLine)
	}
}
