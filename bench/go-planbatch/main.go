// Command go-planbatch is the Go binding's contender of the sweep benchmarks: the same
// JSON lines as go-baseline, planned with leasejudge.PlanBatch, one cgo call per batch.
//
// It reads the lines and gathers every key and value into one buffer (untimed, as a
// caller fills its batch from a store), then times only PlanBatch, repeated until
// -min-time is spent (at least three times, at most -max-reps times). It writes the per-key
// decisions (-decisions: key, action, why, said, tab-separated, input order) for the
// agreement check, and one JSON object on stdout as go-baseline does, plus the Go heap
// allocations (runtime.MemStats.Mallocs) of the first and the last PlanBatch.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"leasejudge"
)

type line struct {
	Key      string          `json:"key"`
	Revision uint64          `json:"revision"`
	Value    json.RawMessage `json:"value"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-planbatch: "+format+"\n", args...)
	os.Exit(1)
}

func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

func main() {
	statePath := flag.String("state", "", "the JSON lines to plan")
	node := flag.String("node", "", "the sweeping node")
	owner := flag.String("owner", "", "this process's owner token")
	nowText := flag.String("now", "", "now, RFC 3339")
	beforeText := flag.String("before", "", "this process's start, RFC 3339")
	bound := flag.Int64("bound", 3600, "the step bound in seconds")
	threads := flag.Int("threads", 1, "split the batch over this many threads")
	decisionsPath := flag.String("decisions", "", "write the per-key decisions here")
	minTime := flag.Duration("min-time", time.Second, "repeat PlanBatch until this much time was spent")
	maxReps := flag.Int("max-reps", 5, "at most this many repetitions")
	flag.Parse()
	if *statePath == "" || *node == "" || *owner == "" || *nowText == "" || *beforeText == "" {
		fail("usage: go-planbatch -state FILE -node NODE -owner TOKEN -now ISO -before ISO [-bound S] [-threads T] [-decisions FILE]")
	}
	now, err := time.Parse(time.RFC3339Nano, *nowText)
	if err != nil {
		fail("-now: %v", err)
	}
	before, err := time.Parse(time.RFC3339Nano, *beforeText)
	if err != nil {
		fail("-before: %v", err)
	}

	// The lines are read one at a time into the batch, and the reader's garbage is
	// collected early, so the peak RSS is the batch's.
	debug.SetGCPercent(10)
	f, err := os.Open(*statePath)
	if err != nil {
		fail("%v", err)
	}
	var batch leasejudge.Batch
	if st, err := f.Stat(); err == nil {
		batch.Buffer = make([]byte, 0, st.Size()+64)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var valueBytes int64
	for n := 1; sc.Scan(); n++ {
		l := sc.Bytes()
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var e line
		if err := json.Unmarshal(l, &e); err != nil {
			fail("%s line %d: %v", *statePath, n, err)
		}
		// A JSON string holds the stored bytes themselves; no value is a key that holds none.
		value := []byte(e.Value)
		if len(value) > 0 && value[0] == '"' {
			var stored string
			if err := json.Unmarshal(value, &stored); err != nil {
				fail("%s line %d: %v", *statePath, n, err)
			}
			value = []byte(stored)
		}
		valueBytes += int64(len(value))
		batch.Add(e.Key, e.Revision, value)
	}
	if err := sc.Err(); err != nil {
		fail("%s: %v", *statePath, err)
	}
	f.Close()
	debug.SetGCPercent(100)
	runtime.GC()

	// The bench's rules, as every contender gets them (bench_args.hpp's step_rules).
	rules := leasejudge.Rules{Owner: *owner, Before: before, Now: now, Bound: time.Duration(*bound) * time.Second,
		Rule: leasejudge.RuleNotSelf}
	opts := &leasejudge.PlanOptions{Node: *node, Rules: rules, Threads: *threads}
	out := make([]leasejudge.Action, batch.Len())
	var summary leasejudge.PlanSummary
	best := time.Duration(1<<63 - 1)
	var spent time.Duration
	var allocFirst, allocLast uint64
	reps := 0
	for reps < *maxReps && (reps < 3 || spent < *minTime) {
		m0 := mallocs()
		start := time.Now()
		summary, err = leasejudge.PlanBatch(batch.Buffer, batch.Entries, out, opts)
		took := time.Since(start)
		m1 := mallocs()
		if err != nil {
			fail("PlanBatch: %v", err)
		}
		if reps == 0 {
			allocFirst = m1 - m0
		}
		allocLast = m1 - m0
		spent += took
		if took < best {
			best = took
		}
		reps++
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)

	if *decisionsPath != "" {
		f, err := os.Create(*decisionsPath)
		if err != nil {
			fail("%v", err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for i, a := range out[:batch.Len()] {
			w.Write(batch.Key(i))
			w.WriteByte('\t')
			w.WriteString(a.Kind.String())
			w.WriteByte('\t')
			if a.Kind != leasejudge.StepLeave {
				// The owner as Go decodes it: only steps are ended or deleted.
				var s struct {
					Owner string `json:"owner"`
				}
				if err := json.Unmarshal(batch.Value(i), &s); err != nil {
					fail("key %s: %v", batch.Key(i), err)
				}
				w.WriteString(a.Why())
				w.WriteByte('\t')
				w.WriteString(a.Said(s.Owner, *owner))
			} else {
				w.WriteByte('\t')
			}
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			fail("%v", err)
		}
		if err := f.Close(); err != nil {
			fail("%v", err)
		}
	}
	fmt.Printf(`{"contender":"go-planbatch","keys":%d,"threads":%d,"seconds":%.9f,"reps":%d,"value_bytes":%d,"peak_rss_kb":%d,"end":%d,"delete":%d,"leave":%d,"allocations_counted":true,"allocations_first":%d,"allocations":%d}`+"\n",
		batch.Len(), *threads, best.Seconds(), reps, valueBytes, ru.Maxrss, summary.Ends, summary.Deletes,
		summary.Leaves+summary.NoStep+summary.OtherNode, allocFirst, allocLast)
}
