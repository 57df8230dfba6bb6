// Command go-lockjudge is the Go binding's row of the lock-judge benchmark:
// leasejudge.JudgeLock over the body mix leasejudge-bench-lock writes (--write-mix),
// this process's pid put where the mix says @SELF@, judged on this machine's evidence
// with an in-process describer standing for Cloud Run, as the C++ rows are.
//
// It checks each body's verdict once (break or not, as the mix says), then judges the
// mix in turn until -min-time is spent and prints one JSON object:
// {"judgments_per_s":N,"judgments":N,"seconds":S}.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"leasejudge"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-lockjudge: "+format+"\n", args...)
	os.Exit(1)
}

type body struct {
	name   string
	breaks bool
	text   []byte
}

func readMix(path string) []body {
	f, err := os.Open(path)
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	self := strconv.Itoa(os.Getpid())
	var mix []body
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		parts := strings.SplitN(s.Text(), "\t", 3)
		if len(parts) != 3 {
			fail("%s: a line is not name, breaks, body", path)
		}
		mix = append(mix, body{parts[0], parts[1] == "1", []byte(strings.ReplaceAll(parts[2], "@SELF@", self))})
	}
	if err := s.Err(); err != nil || len(mix) == 0 {
		fail("%s: no bodies (%v)", path, err)
	}
	return mix
}

func main() {
	mixPath := flag.String("mix", "", "the body mix (leasejudge-bench-lock --write-mix)")
	minTime := flag.Float64("min-time", 1, "seconds to judge for")
	flag.Parse()
	mix := readMix(*mixPath)
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	opts := &leasejudge.LockOptions{Describe: func(e leasejudge.Execution) leasejudge.ExecutionState {
		if strings.HasSuffix(e.Name, "done1") {
			return leasejudge.ExecutionState{Kind: leasejudge.ExecutionFinished, Detail: "succeeded"}
		}
		return leasejudge.ExecutionState{Kind: leasejudge.ExecutionRunning}
	}}
	for _, b := range mix {
		v, err := leasejudge.JudgeLock(b.text, now, opts)
		if err != nil || (v.Kind == leasejudge.LockBreak) != b.breaks {
			fail("%s is judged %v (%v): %s", b.name, v.Kind, err, v.Why)
		}
	}
	var judged int
	start := time.Now()
	limit := time.Duration(*minTime * float64(time.Second))
	for time.Since(start) < limit {
		for _, b := range mix {
			if _, err := leasejudge.JudgeLock(b.text, now, opts); err != nil {
				fail("%s: %v", b.name, err)
			}
		}
		judged += len(mix)
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("{\"judgments_per_s\":%.0f,\"judgments\":%d,\"seconds\":%.3f}\n", float64(judged)/secs, judged, secs)
}
