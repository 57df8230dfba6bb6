package leasejudge_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leasejudge"
)

// A build module's start: the steps its node left running by a previous process
// are ended (a pulled ask's is deleted: its stream redelivers it); its own are left.
func ExampleEndStale() {
	store, _ := leasejudge.OpenMemoryStore()
	defer store.Close()
	store.Create("build-eu-1.s1", []byte(`{"id":"s1","tool":"go test","state":"running",`+
		`"owner":"0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4243.lxb2k3a0","started":"2024-06-01T11:00:00Z"}`))
	store.Create("build-eu-1.s2", []byte(`{"id":"s2","tool":"go vet","state":"running","owner":"`+
		leasejudge.Owner+`","started":"2024-06-01T11:00:00Z"}`))

	ended, err := leasejudge.EndStale(leasejudge.ScanOfStore(store), "build-eu-1", leasejudge.Boot, nil)
	fmt.Println(ended, err)
	// Output: [s1] <nil>
}

// A module runs the start sweep once, in a goroutine, when its runtime serves.
func ExampleEndStaleAtStart() {
	store, _ := leasejudge.OpenMemoryStore()
	defer store.Close()
	leasejudge.StaleAttempts, leasejudge.StaleRetry = 6, 5*time.Second // the defaults
	done := make(chan struct{})
	go func() {
		defer close(done)
		leasejudge.EndStaleAtStart(context.Background(), leasejudge.ScanOfStore(store), "build-eu-1", leasejudge.Boot,
			func(format string, args ...any) { fmt.Printf(format+"\n", args...) })
	}()
	<-done
	// Output: 0 steps of build-eu-1 left running by a previous process ended
}

// Judging a lock body: a process holder whose lease has passed may be broken.
func ExampleJudgeLock() {
	body := []byte(`{"purpose":"deploy","id":"b2","host":"build-1","machine":"m1","pid":4242,` +
		`"startedAt":"2024-05-01T10:00:00.000Z","leaseUntil":"2024-05-01T10:15:00.000Z"}`)
	here := &leasejudge.Here{Host: "build-1", MachineKind: leasejudge.MachineWithID, Machine: "m1",
		Alive: func(pid float64) bool { return true }}
	v, _ := leasejudge.JudgeLock(body, time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC), &leasejudge.LockOptions{Here: here})
	fmt.Println(v.Kind, v.Reason)
	fmt.Println(v.Why)
	// Output:
	// break lease_ended
	// deploy (on build-1, pid 4242, started 2024-05-01T10:00:00.000Z) stopped renewing its lock; its lease ended at 2024-05-01T10:15:00.000Z
}

// Many keys planned in one call: the entries point into one buffer.
func ExamplePlanBatch() {
	var b leasejudge.Batch
	b.Add("build-eu-1.s1", 7, []byte(`{"id":"s1","tool":"lint","state":"running","started":"2024-06-01T09:00:00Z"}`))
	b.Add("build-eu-1.s2", 8, []byte(`{"id":"s2","tool":"lint","state":"succeeded"}`))
	b.Add("build-eu-2.s3", 9, []byte(`{"id":"s3","tool":"lint","state":"running"}`))
	actions, summary, _ := b.Plan(&leasejudge.PlanOptions{Node: "build-eu-1",
		Rules: leasejudge.Rules{Before: time.Date(2024, 6, 1, 11, 50, 0, 0, time.UTC),
			Now: time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)}})
	for i, a := range actions {
		fmt.Printf("%s %s %s %q\n", b.Key(i), a.Kind, a.Reason, a.Why())
	}
	fmt.Println(summary)
	// Output:
	// build-eu-1.s1 end started-before "the build module restarted while it ran"
	// build-eu-1.s2 leave not-running ""
	// build-eu-2.s3 leave other-node ""
	// step plan: 3 keys: 1 end, 0 delete, 1 leave, 0 no-step, 1 other-node, 0 malformed lines
}

// Errors wrap the library's codes: errors.Is tells a lost race from a failure.
func ExampleError() {
	store, _ := leasejudge.OpenMemoryStore()
	defer store.Close()
	rev, _ := store.Create("k", []byte("1"))
	store.Update("k", []byte("2"), rev)
	_, err := store.Update("k", []byte("3"), rev)
	fmt.Println(errors.Is(err, leasejudge.ErrChanged))
	var e *leasejudge.Error
	fmt.Println(errors.As(err, &e), e.Code.String())
	// Output:
	// true
	// true changed
}
