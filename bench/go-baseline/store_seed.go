// What the seed's EndStale over a store's Go client (nats_seed.go, etcd_seed.go) does with
// each key it read, and the line such a run prints: the clients differ only in how they
// list, read and write a key.
package main

import (
	"encoding/json"
	"fmt"
	"syscall"
	"time"
)

// seedSweep is one run of the seed's EndStale over a store: each key of the node read is
// decided and, when it is to end or go, written at the revision read.
type seedSweep struct {
	node               string
	before             time.Time
	start              time.Time
	out                []keyDecision
	counts             [3]int
	writes, valueBytes int
}

func newSeedSweep(node string, before time.Time) *seedSweep {
	return &seedSweep{node: node, before: before, start: time.Now()}
}

// mine is whether key is a step of the node swept.
func (s *seedSweep) mine(key string) bool {
	n, _, err := ParseStepKey(key)
	return err == nil && n == s.node
}

// key decides e and writes its end (update: the step's value) or its removal (del),
// each at e.Revision, with the client's own calls.
func (s *seedSweep) key(e entry, update func(value []byte) error, del func() error) {
	s.valueBytes += len(e.Value)
	d := decide(s.node, s.before, &e)
	s.counts[d.action]++
	s.out = append(s.out, keyDecision{e.Key, d})
	switch d.action {
	case end:
		step, _ := DecodeStep(e.Value)
		step.State, step.Reason, step.Ended, step.Result = "failed", d.why, now(), nil
		raw, err := json.Marshal(step)
		if err != nil {
			fail("encoding %s: %v", e.Key, err)
		}
		if err := update(raw); err != nil {
			fail("ending %s: %v", e.Key, err)
		}
		s.writes++
	case remove:
		if err := del(); err != nil {
			fail("deleting %s: %v", e.Key, err)
		}
		s.writes++
	}
}

// report writes the decisions to decisionsPath and prints the run's line as contender.
func (s *seedSweep) report(contender, decisionsPath string, bucketKeys int) {
	took := time.Since(s.start)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	writeKeyDecisions(decisionsPath, s.out)
	fmt.Printf(`{"contender":"%s","keys":%d,"threads":1,"seconds":%.9f,"reps":1,"value_bytes":%d,"peak_rss_kb":%d,"end":%d,"delete":%d,"leave":%d,"writes":%d,"writes_per_s":0,"bucket_keys":%d}`+"\n",
		contender, len(s.out), took.Seconds(), s.valueBytes, ru.Maxrss, s.counts[end], s.counts[remove], s.counts[leave],
		s.writes, bucketKeys)
}
