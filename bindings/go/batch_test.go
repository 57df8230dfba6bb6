package leasejudge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func planOpts(t testing.TB) *PlanOptions {
	return &PlanOptions{Node: node, Rules: testRules(t)}
}

func stateBatch() *Batch {
	var b Batch
	for i, c := range stateCases() {
		b.Add(c.key, uint64(i+1), []byte(c.value))
	}
	return &b
}

func checkActions(t *testing.T, actions []Action) {
	t.Helper()
	cases := stateCases()
	if len(actions) != len(cases) {
		t.Fatalf("%d actions for %d keys", len(actions), len(cases))
	}
	for i, c := range cases {
		a := actions[i]
		var s Step
		_ = json.Unmarshal([]byte(c.value), &s)
		if a.Kind != c.action || a.Reason != c.reason || a.Why() != c.why || a.Said(s.Owner, self) != c.said {
			t.Errorf("%s: %v %v %q %q; want %v %v %q %q", c.key, a.Kind, a.Reason, a.Why(), a.Said(s.Owner, self),
				c.action, c.reason, c.why, c.said)
		}
	}
}

func TestPlanBatch(t *testing.T) {
	b := stateBatch()
	actions, sum, err := b.Plan(planOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	checkActions(t, actions)
	want := PlanSummary{Ends: 3, Deletes: 1, Leaves: 4, NoStep: 2, OtherNode: 1}
	if sum != want {
		t.Fatalf("summary %+v, want %+v", sum, want)
	}
	if s := sum.String(); s != "step plan: 11 keys: 3 end, 1 delete, 4 leave, 2 no-step, 1 other-node, 0 malformed lines" {
		t.Errorf("summary line %q", s)
	}
	if at := actions[3].BoundAt(); !at.Equal(at0(t, "2024-06-01T11:00:00Z")) {
		t.Errorf("BoundAt = %v", at)
	}
	if at := actions[4].BoundAt(); !at.Equal(at0(t, "2024-06-01T12:50:00Z")) {
		t.Errorf("BoundAt (within) = %v", at)
	}
	if !actions[0].BoundAt().IsZero() {
		t.Errorf("BoundAt of a leave = %v", actions[0].BoundAt())
	}
	// The same over a buffer without spare bytes (values copied by the library), over
	// two threads, and with the keys' order reversed.
	exact := append(make([]byte, 0, len(b.Buffer)), b.Buffer...)
	out := make([]Action, b.Len())
	if _, err := PlanBatch(exact, b.Entries, out, planOpts(t)); err != nil {
		t.Fatal(err)
	}
	checkActions(t, out)
	opts := planOpts(t)
	opts.Threads = 2
	if _, err := PlanBatch(b.Buffer, b.Entries, out, opts); err != nil {
		t.Fatal(err)
	}
	checkActions(t, out)
	if string(b.Key(1)) != node+".s2" || !strings.HasPrefix(string(b.Value(1)), `{"id":"s2"`) {
		t.Errorf("Key/Value: %q %q", b.Key(1), b.Value(1))
	}
	b.Reset()
	if b.Len() != 0 || len(b.Buffer) != 0 {
		t.Error("Reset kept entries")
	}
}

func TestPlanBatchEdges(t *testing.T) {
	opts := planOpts(t)
	// Empty input: nothing planned, no call into the library.
	if s, err := PlanBatch(nil, nil, nil, opts); err != nil || s != (PlanSummary{}) {
		t.Fatalf("empty: %+v %v", s, err)
	}
	var empty Batch
	if a, s, err := empty.Plan(opts); err != nil || len(a) != 0 || s != (PlanSummary{}) {
		t.Fatalf("empty batch: %v %+v %v", a, s, err)
	}
	b := stateBatch()
	b.Add(node+".novalue", 99, nil)
	b.Add("", 100, nil)
	actions, sum, err := b.Plan(opts)
	if err != nil || actions[len(actions)-2].Reason != StepNoValue || actions[len(actions)-1].Reason != StepOtherNode ||
		sum.NoStep != 3 || sum.OtherNode != 2 {
		t.Fatalf("no value, no key: %v %v %+v %v", actions[len(actions)-2], actions[len(actions)-1], sum, err)
	}
	if _, err := PlanBatch(b.Buffer, b.Entries, make([]Action, 3), opts); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a short out: %v", err)
	}
	bad := append([]Entry(nil), b.Entries...)
	bad[0].ValueOffset = uint64(len(b.Buffer)) + 100
	if _, err := PlanBatch(b.Buffer, bad, make([]Action, len(bad)), opts); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an entry outside the buffer: %v", err)
	}
	bad[0] = Entry{KeyOffset: ^uint64(0) - 1, KeyLen: 10}
	if _, err := PlanBatch(b.Buffer, bad, make([]Action, len(bad)), opts); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an offset that wraps: %v", err)
	}
	if _, err := PlanBatch(b.Buffer, b.Entries, make([]Action, len(b.Entries)), &PlanOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no node: %v", err)
	}
	if _, err := PlanBatch(b.Buffer, b.Entries, make([]Action, len(b.Entries)), nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no options: %v", err)
	}
	// Rule provably-dead with an owner judge that panics: the plan stops, the panic said.
	pd := planOpts(t)
	pd.Rule = RuleProvablyDead
	pd.OwnerState = func(string) HolderState { panic("judge broke") }
	if _, _, err := b.Plan(pd); !errors.Is(err, ErrUser) || !strings.Contains(err.Error(), "judge broke") {
		t.Fatalf("a panicking owner judge: %v", err)
	}
	pd.OwnerState = func(string) HolderState { return HolderDead }
	actions, _, err = b.Plan(pd)
	if err != nil || actions[1].Reason != StepOwnerGone || actions[1].Kind != StepEnd || actions[2].Kind != StepDelete {
		t.Fatalf("provably dead: %v %v %v", actions[1], actions[2], err)
	}
	// Non-UTF-8 keys and values are planned like any other bytes.
	var odd Batch
	odd.Add(node+".\xff\xfe", 1, []byte("{\"id\":\"\xff\",\"state\":\"running\",\"owner\":\""+other+"\",\"tool\":\"t\"}"))
	odd.Add(node+".huge", 2, bytes.Repeat([]byte("["), 100000))
	if actions, _, err := odd.Plan(opts); err != nil || actions[0].Kind != StepEnd || actions[1].Reason != StepNoStep {
		t.Fatalf("odd bytes: %v %v", actions, err)
	}
}

func TestPlanLines(t *testing.T) {
	var in bytes.Buffer
	for i, c := range stateCases() {
		fmt.Fprintf(&in, `{"key":%q,"revision":%d,"value":%s}`+"\n", c.key, i+1, c.value)
	}
	in.WriteString("not json\n")
	out, sum, err := PlanLines(in.Bytes(), planOpts(t))
	if err != nil || sum.Malformed != 2 || sum.Ends != 3 || sum.Deletes != 1 {
		t.Fatalf("PlanLines: %+v %v", sum, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	// The values ending in trailing bytes are no JSON inside the envelope: malformed
	// lines too; the others decide as the batch does.
	cases := stateCases()
	if len(lines) != len(cases)+1 {
		t.Fatalf("%d lines out for %d in:\n%s", len(lines), len(cases)+1, out)
	}
	for i, c := range cases {
		var got struct{ Key, Action, Reason, Why string }
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if strings.HasSuffix(c.value, " x") {
			continue
		}
		// A leave says why in a sentence of its reason; an end or a delete says the sweep's why.
		if got.Key != c.key || got.Action != c.action.String() || got.Reason != c.reason.String() ||
			(c.action != StepLeave && got.Why != c.why) || (c.action == StepLeave && got.Why == "") {
			t.Errorf("line %d: %s", i, lines[i])
		}
	}
	if _, _, err := PlanLines(nil, &PlanOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no node: %v", err)
	}
	if out, _, err := PlanLines(nil, planOpts(t)); err != nil || len(out) != 0 {
		t.Fatalf("no input: %q %v", out, err)
	}
}

// --- the benchmark --------------------------------------------------------------------

// benchState is the steps state a benchmark plans: the JSON lines of
// LEASEJUDGE_BENCH_STATE (bench/'s generator, {"key","revision","value"} per line)
// when set, else n keys made here, a mix of every kind, values of 200 to 800 bytes.
func benchState(b *testing.B, n int) *Batch {
	var batch Batch
	if path := os.Getenv("LEASEJUDGE_BENCH_STATE"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var line struct {
				Key      string          `json:"key"`
				Revision uint64          `json:"revision"`
				Value    json.RawMessage `json:"value"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			v := []byte(line.Value)
			var s string
			if json.Unmarshal(line.Value, &s) == nil {
				v = []byte(s) // a value carried as its stored bytes
			}
			batch.Add(line.Key, line.Revision, v)
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		return &batch
	}
	pad := strings.Repeat("x", 600)
	for i := 0; i < n; i++ {
		id := strconv.Itoa(i)
		key := node + "." + id
		var v string
		switch i % 10 {
		case 0, 1, 2, 3, 4, 5:
			v = `{"id":"` + id + `","tool":"go test","state":"succeeded","owner":"` + other + `","started":"2024-06-01T10:00:00.123456789Z","ended":"2024-06-01T10:05:00Z","result":{"log":"` + pad[:200+i%400] + `"}}`
		case 6:
			v = `{"id":"` + id + `","tool":"go build","state":"running","owner":"` + self + `","started":"2024-06-01T11:55:00Z","result":{"log":"` + pad[:150+i%300] + `"}}`
		case 7:
			v = `{"id":"` + id + `","tool":"go vet","state":"running","owner":"` + other + `","started":"2024-06-01T11:00:00Z","note":"` + pad[:200+i%300] + `"}`
		case 8:
			v = `{"id":"` + id + `","tool":"lint","state":"running","started":"2024-06-01T09:00:00Z","note":"` + pad[:200+i%300] + `"}`
		case 9:
			key = "build-eu-2." + id
			v = `{"id":"` + id + `","tool":"go build","state":"running","owner":"` + other + `","note":"` + pad[:200] + `"}`
		}
		batch.Add(key, uint64(i+1), []byte(v))
	}
	return &batch
}

func benchmarkPlanBatch(b *testing.B, n int) {
	batch := benchState(b, n)
	var bytes int64
	for i := range batch.Entries {
		bytes += int64(batch.Entries[i].ValueLen)
	}
	out := make([]Action, batch.Len())
	opts := &PlanOptions{Node: node, Rules: Rules{Owner: self, Before: time.Date(2024, 6, 1, 11, 50, 0, 0, time.UTC),
		Now: time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)}}
	if _, err := PlanBatch(batch.Buffer, batch.Entries, out, opts); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := PlanBatch(batch.Buffer, batch.Entries, out, opts); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(batch.Len())*float64(b.N)/elapsed.Seconds(), "keys/s")
}

func BenchmarkPlanBatch100k(b *testing.B) { benchmarkPlanBatch(b, 100_000) }
func BenchmarkPlanBatch1M(b *testing.B)   { benchmarkPlanBatch(b, 1_000_000) }

// MinAge: a step another owner started a minute ago is left under a MinAge of two
// minutes (StepUnderMinAge, its reason said), and judged under one of 30 s.
func TestPlanMinAge(t *testing.T) {
	started := at0(t, nowISO).Add(-time.Minute).Format(time.RFC3339)
	in := []byte(`{"key":"` + node + `.y","value":{"id":"y","tool":"t","state":"running","owner":"` + other +
		`","started":"` + started + `"}}` + "\n")
	for _, c := range []struct {
		minAge time.Duration
		want   string
	}{
		{2 * time.Minute, `{"key":"` + node + `.y","action":"leave","reason":"under-min-age","why":"it started less than the minimum age (--min-age) ago"}`},
		{30 * time.Second, `{"key":"` + node + `.y","action":"end","reason":"owner-not-self","why":"the build module restarted while it ran"}`},
	} {
		opts := planOpts(t)
		opts.MinAge = c.minAge
		out, _, err := PlanLines(in, opts)
		if err != nil || strings.TrimSuffix(string(out), "\n") != c.want {
			t.Errorf("MinAge %v: %s %v; want %s", c.minAge, out, err, c.want)
		}
	}
	if StepUnderMinAge.String() != "under-min-age" {
		t.Errorf("StepUnderMinAge is %q", StepUnderMinAge.String())
	}
}

func TestRulesResolve(t *testing.T) {
	const gone = "only owners proven gone (dead, recycled, rebooted) are ended"
	cases := []struct {
		rules Rules
		want  Resolved
	}{
		{Rules{Node: node}, Resolved{RuleProvablyDead, Owner,
			"rule provably-dead (no owner named): " + gone + ", never a step whose owner is alive on this node"}},
		{Rules{Node: node, Owner: self}, Resolved{RuleNotSelf, self, "rule not-self: every owner but " + self + " is taken for gone"}},
		{Rules{Node: node, Owner: self, Rule: RuleProvablyDead}, Resolved{RuleProvablyDead, self, "rule provably-dead: " + gone}},
		{Rules{Node: node, SelfPID: os.Getpid()}, Resolved{RuleProvablyDead, Owner,
			"rule provably-dead (no owner named): " + gone + ", never a step whose owner is alive on this node"}},
	}
	for _, c := range cases {
		if got, err := c.rules.Resolve(); err != nil || got != c.want {
			t.Errorf("%+v: %+v, %v; want %+v", c.rules, got, err, c.want)
		}
	}
	// The library refuses what a plan refuses, and says so.
	for _, bad := range []Rules{{}, {Node: "a.b"}, {Node: node, Rule: RuleNotSelf},
		{Node: node, Rule: OwnerRule(7)}, {Node: node, Owner: "garbage"}, {Node: node, Bound: -time.Second},
		{Node: node, MinAge: -time.Second}, {Node: node, SelfPID: -1}, {Node: node, SelfPID: 1 << 40}} {
		if _, err := bad.Resolve(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := (Rules{Node: node, SelfPID: 1<<31 - 2}).Resolve(); !errors.Is(err, ErrNotFound) {
		t.Errorf("a self pid of no process: %v, want ErrNotFound", err)
	}
	// One Rules, resolved once, planned by: the plan takes its node.
	r := Rules{Node: node, Owner: self, Now: time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)}
	line := `{"key":"` + node + `.s1","value":{"id":"s1","tool":"x","state":"running","owner":"` + other + `","started":"2024-06-01T11:00:00Z"}}`
	got, _, err := PlanLines([]byte(line), &PlanOptions{Rules: r})
	want := `{"key":"` + node + `.s1","action":"end","reason":"owner-not-self","why":"the build module restarted while it ran"}` + "\n"
	if err != nil || string(got) != want {
		t.Fatalf("a plan by Rules.Node: %q, %v; want %q", got, err, want)
	}
}
