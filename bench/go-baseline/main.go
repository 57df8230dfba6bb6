// Command go-baseline is reference (a) of the sweep benchmarks: the step-stale rules as a
// Go build module runs them today, with encoding/json, so that leasejudge's plan can be
// measured against what a user would otherwise run and checked to decide exactly the same.
//
// It reads the JSON lines of `leasejudge step plan` ({"key","revision","value"} per line;
// a value given as a JSON string holds the stored bytes themselves, and a line without a
// value is a key that holds none), decodes each line's envelope (untimed), then times only the decide loop: per key, the
// key's node, json.Unmarshal of the value into the step struct (DecodeStep), the running
// check, staleWhy and the end-or-delete choice, exactly as EndStale decides them. The
// per-key decisions are written afterwards (-decisions) for the agreement check, one line
// per key in input order: key, action (end|delete|leave), why, said, tab-separated.
//
// The result is one JSON object on stdout: contender, keys, threads, seconds (the best
// repetition), reps, value_bytes, peak_rss_kb (ru_maxrss once the timing ended), the count
// of each action, and the Go heap objects allocated (runtime.MemStats.Mallocs) during the
// first and the last repetition.
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
	"sort"
	"strings"
	"syscall"
	"time"
)

// Step is the step value as the seed's delivery.Step holds it (DESIGN.md, "Step JSON").
// Result is kept raw: the rules never read it, and a raw message is the cheapest way for
// encoding/json to check it is JSON, which is what a value must be to be a step.
type Step struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	State   string          `json:"state"`
	Owner   string          `json:"owner,omitempty"`
	Started time.Time       `json:"started"`
	Ended   time.Time       `json:"ended"`
	Reason  string          `json:"reason,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Ask     *StepAsk        `json:"ask,omitempty"`
}

// StepAsk is a pulled ask: its kind and one of check, build or compose.
type StepAsk struct {
	Kind    string       `json:"kind"`
	Check   *StepCheck   `json:"check,omitempty"`
	Build   *StepBuild   `json:"build,omitempty"`
	Compose *StepCompose `json:"compose,omitempty"`
}

type StepCheck struct {
	Fetch  map[string]any `json:"fetch"`
	Levels []string       `json:"levels"`
	Run    string         `json:"run,omitempty"`
}

type StepBuild struct {
	Module string         `json:"module"`
	Fetch  map[string]any `json:"fetch,omitempty"`
	FP     string         `json:"fp,omitempty"`
}

type StepCompose struct {
	Fetch map[string]any `json:"fetch"`
}

const (
	stepRunning   = "running"
	restartReason = "the build module restarted while it ran"
)

// The rules' inputs, fixed for a run (the seed reads Owner, now() and StepBound).
var (
	owner     string
	nowTime   time.Time
	stepBound time.Duration
)

func now() time.Time { return nowTime }

// natsSeed is reference (d), the seed's EndStale over a NATS bucket (nats_seed.go, built
// with the tag nats); nil in the plain build.
var natsSeed func(url, bucket, node string, before time.Time, decisions string)

// natsConsume reads the node's keys with a bare ordered consumer (nats_seed.go): the
// server's own delivery rate, the ceiling of any read of them; nil in the plain build.
var natsConsume func(url, bucket, node string)

// etcdSeed is the seed's EndStale over an etcd cluster's keys with clientv3, and etcdLoad
// loads a state there (etcd_seed.go, built with the tag etcd); nil in the plain build.
var etcdSeed func(endpoints, prefix, node string, before time.Time, decisions string)
var etcdLoad func(endpoints, prefix, state string)

// DecodeStep decodes a step value as the seed does: encoding/json into the struct.
func DecodeStep(raw []byte) (Step, error) {
	var s Step
	err := json.Unmarshal(raw, &s)
	return s, err
}

// ParseStepKey splits <node>.<id> at the first '.'; neither side is empty (DESIGN.md,
// "Step keys", and leasejudge's parse_step_key).
func ParseStepKey(key string) (node, id string, err error) {
	n, id, ok := strings.Cut(key, ".")
	if !ok || n == "" || id == "" {
		return "", "", fmt.Errorf("%q is no step key <node>.<id>", key)
	}
	return n, id, nil
}

// canonicalUUID is libuuid's uuid_parse: 36 characters, '-' at 8, 13, 18 and 23, hex
// digits of either case elsewhere.
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ParseAskStepKey is ParseStepKey for an ask's key: its id is a canonical UUID.
func ParseAskStepKey(key string) (node, id string, err error) {
	n, id, err := ParseStepKey(key)
	if err != nil {
		return "", "", err
	}
	if !canonicalUUID(id) {
		return "", "", fmt.Errorf("%q is no ask step key: its id is no UUID", key)
	}
	return n, id, nil
}

func isAsk(key string, s Step) bool {
	_, _, err := ParseAskStepKey(key)
	return err == nil && strings.HasSuffix(s.Tool, " ask")
}

func staleWhy(key string, step Step, before time.Time) (why, said string) {
	switch {
	case step.Owner == owner:
		return "", ""
	case step.Owner != "":
		return restartReason, "its owner " + step.Owner + " is not this process " + owner
	case isAsk(key, step):
		if !step.Started.Add(stepBound).Before(now()) {
			return "", ""
		}
		return "past the step bound: its asker stopped waiting at " + step.Started.Add(stepBound).UTC().Format("2006-01-02T15:04:05Z"),
			"it names no owner (an older build wrote it)"
	case step.Started.Before(before):
		return restartReason, "it names no owner (an older build wrote it) and started before this process"
	}
	return "", ""
}

type action uint8

const (
	leave action = iota
	end
	remove
)

var actionNames = [...]string{"leave", "end", "delete"}

type decision struct {
	action    action
	why, said string
}

type entry struct {
	Key      string          `json:"key"`
	Revision uint64          `json:"revision"`
	Value    json.RawMessage `json:"value"`
}

// keyDecision is one key's decision, as the seeds over a store write them.
type keyDecision struct {
	key string
	d   decision
}

// writeKeyDecisions writes each key's action, why and said to path, sorted by key
// (nothing when path is "").
func writeKeyDecisions(path string, out []keyDecision) {
	if path == "" {
		return
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	f, err := os.Create(path)
	if err != nil {
		fail("%v", err)
	}
	w := bufio.NewWriter(f)
	for _, o := range out {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", o.key, actionNames[o.d.action], o.d.why, o.d.said)
	}
	if err := w.Flush(); err != nil {
		fail("%v", err)
	}
	f.Close()
}

// readState reads a state's JSON lines into entries (their values copied, as a Scan's
// Get hands them out), and counts the values' bytes. The lines are read one at a time:
// only the entries stay, and the reader's garbage is collected early, so the peak RSS
// is the state's.
func readState(statePath string) ([]entry, int64) {
	debug.SetGCPercent(10)
	f, err := os.Open(statePath)
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var entries []entry
	var valueBytes int64
	for line := 1; sc.Scan(); line++ {
		l := sc.Bytes()
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var e entry
		if err := json.Unmarshal(l, &e); err != nil {
			fail("%s line %d: %v", statePath, line, err)
		}
		// As for `leasejudge step plan`: a JSON string holds the stored bytes themselves
		// (a value that is not JSON); no value is a key that holds none.
		if len(e.Value) > 0 && e.Value[0] == '"' {
			var stored string
			if err := json.Unmarshal(e.Value, &stored); err != nil {
				fail("%s line %d: %v", statePath, line, err)
			}
			e.Value = json.RawMessage(stored)
		}
		valueBytes += int64(len(e.Value))
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		fail("%s: %v", statePath, err)
	}
	return entries, valueBytes
}

// decide is EndStale's choice for one key, without the store's writes.
func decide(node string, before time.Time, e *entry) decision {
	n, _, perr := ParseStepKey(e.Key)
	if perr != nil || n != node {
		return decision{}
	}
	if len(e.Value) == 0 {
		return decision{}
	}
	step, err := DecodeStep(e.Value)
	if err != nil || step.State != stepRunning {
		return decision{}
	}
	why, said := staleWhy(e.Key, step, before)
	if why == "" {
		return decision{}
	}
	if step.Owner != "" && isAsk(e.Key, step) {
		return decision{remove, why, said}
	}
	return decision{end, why, said}
}

// mallocs is the number of Go heap objects allocated so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-baseline: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	statePath := flag.String("state", "", "the JSON lines to sweep")
	node := flag.String("node", "", "the sweeping node")
	flag.StringVar(&owner, "owner", "", "this process's owner token")
	nowText := flag.String("now", "", "now, RFC 3339")
	beforeText := flag.String("before", "", "this process's start, RFC 3339")
	bound := flag.Int64("bound", 3600, "the step bound in seconds")
	decisionsPath := flag.String("decisions", "", "write the per-key decisions here")
	minTime := flag.Duration("min-time", 2*time.Second, "repeat the decide loop until this much time was spent")
	maxReps := flag.Int("max-reps", 5, "at most this many repetitions")
	natsURL := flag.String("nats", "", "sweep this NATS server's bucket as the seed does (built with -tags nats)")
	bucket := flag.String("bucket", "bench", "the bucket -nats sweeps")
	consume := flag.Bool("consume", false, "with -nats: only read the node's keys with a bare ordered consumer")
	etcdEndpoints := flag.String("etcd", "", "sweep the keys under -prefix of these etcd endpoints (comma-separated; built with -tags etcd)")
	prefix := flag.String("prefix", "bench", "the prefix -etcd sweeps (its keys are PREFIX/KEY)")
	load := flag.Bool("load", false, "with -etcd: write every key of -state under -prefix")
	flag.Parse()
	if *etcdEndpoints != "" && *load {
		if etcdLoad == nil || *statePath == "" {
			fail("-etcd -load needs the build with -tags etcd, and -state")
		}
		etcdLoad(*etcdEndpoints, *prefix, *statePath)
		return
	}
	if *natsURL != "" && *consume {
		if natsConsume == nil || *node == "" {
			fail("-nats -consume needs the build with -tags nats, and -node")
		}
		natsConsume(*natsURL, *bucket, *node)
		return
	}
	if *etcdEndpoints != "" {
		if etcdSeed == nil || *node == "" || owner == "" || *nowText == "" || *beforeText == "" {
			fail("-etcd needs the build with -tags etcd, and -node, -owner, -now and -before")
		}
	} else if *natsURL != "" {
		if natsSeed == nil || *node == "" || owner == "" || *nowText == "" || *beforeText == "" {
			fail("-nats needs the build with -tags nats, and -node, -owner, -now and -before")
		}
	} else if *statePath == "" || *node == "" || owner == "" || *nowText == "" || *beforeText == "" {
		fail("usage: go-baseline -state FILE -node NODE -owner TOKEN -now ISO -before ISO [-bound S] [-decisions FILE]")
	}
	var err error
	if nowTime, err = time.Parse(time.RFC3339Nano, *nowText); err != nil {
		fail("-now: %v", err)
	}
	before, err := time.Parse(time.RFC3339Nano, *beforeText)
	if err != nil {
		fail("-before: %v", err)
	}
	stepBound = time.Duration(*bound) * time.Second
	if *natsURL != "" {
		natsSeed(*natsURL, *bucket, *node, before, *decisionsPath)
		return
	}
	if *etcdEndpoints != "" {
		etcdSeed(*etcdEndpoints, *prefix, *node, before, *decisionsPath)
		return
	}

	entries, valueBytes := readState(*statePath)
	debug.SetGCPercent(100)
	runtime.GC()

	decisions := make([]decision, len(entries))
	best := time.Duration(1<<63 - 1)
	var spent time.Duration
	reps := 0
	var allocFirst, allocLast uint64
	for reps < *maxReps && (reps == 0 || spent < *minTime) {
		m0 := mallocs()
		start := time.Now()
		for i := range entries {
			decisions[i] = decide(*node, before, &entries[i])
		}
		took := time.Since(start)
		m1 := mallocs()
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

	// The peak before the decisions are written out: what the sweep itself needed.
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)

	var counts [3]int
	for _, d := range decisions {
		counts[d.action]++
	}
	if *decisionsPath != "" {
		f, err := os.Create(*decisionsPath)
		if err != nil {
			fail("%v", err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for i, d := range decisions {
			w.WriteString(entries[i].Key)
			w.WriteByte('\t')
			w.WriteString(actionNames[d.action])
			w.WriteByte('\t')
			w.WriteString(d.why)
			w.WriteByte('\t')
			w.WriteString(d.said)
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			fail("%v", err)
		}
		if err := f.Close(); err != nil {
			fail("%v", err)
		}
	}
	fmt.Printf(`{"contender":"go-encoding-json","keys":%d,"threads":1,"seconds":%.9f,"reps":%d,"value_bytes":%d,"peak_rss_kb":%d,"end":%d,"delete":%d,"leave":%d,"allocations_counted":true,"allocations_first":%d,"allocations":%d}`+"\n",
		len(entries), best.Seconds(), reps, valueBytes, ru.Maxrss, counts[end], counts[remove], counts[leave], allocFirst, allocLast)
}
