//go:build nats

// Reference (d) of the NATS sweep benchmark: the seed's EndStale as a Go build module
// runs it today over nats.go's key/value bucket: every key listed (Keys), then for each
// key of the node a Get, the decision (decide, the same rules as reference (a)), and an
// Update or a Delete at the revision read, one request each. Built only with the tag
// `nats`, in GOPATH mode over Debian's golang-github-nats-io-go-nats-dev:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -tags nats -o go-nats-seed .
package main

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

func init() {
	natsSeed = runNatsSeed
	natsConsume = runNatsConsume
}

// runNatsConsume reads every message of the node's subjects in a bucket of history 1
// (each is a key's last value) with an ordered consumer, as nats.go delivers them,
// until none is pending; it decides and writes nothing.
func runNatsConsume(url, bucket, node string) {
	nc, js := connect(url)
	defer nc.Close()
	var keys, valueBytes int
	done := make(chan struct{})
	prefix := "$KV." + bucket + "."
	start := time.Now()
	sub, err := js.Subscribe(prefix+node+".>", func(m *nats.Msg) {
		keys++
		valueBytes += len(m.Subject) - len(prefix) + len(m.Data)
		if meta, err := m.Metadata(); err == nil && meta.NumPending == 0 {
			close(done)
		}
	}, nats.OrderedConsumer(), nats.DeliverAll())
	if err != nil {
		fail("subscribing: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		fail("the consumer did not finish within 10 minutes (%d keys read)", keys)
	}
	took := time.Since(start)
	_ = sub.Unsubscribe()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf(`{"contender":"go-nats-consumer","keys":%d,"threads":1,"seconds":%.9f,"reps":1,"value_bytes":%d,"peak_rss_kb":%d,"end":0,"delete":0,"leave":0,"writes":0,"writes_per_s":0}`+"\n",
		keys, took.Seconds(), valueBytes, ru.Maxrss)
}

// connect is a connection to url and its JetStream context, or the end of the program.
func connect(url string) (*nats.Conn, nats.JetStreamContext) {
	nc, err := nats.Connect(url)
	if err != nil {
		fail("connecting to %s: %v", url, err)
	}
	js, err := nc.JetStream()
	if err != nil {
		fail("JetStream: %v", err)
	}
	return nc, js
}

func runNatsSeed(url, bucket, node string, before time.Time, decisionsPath string) {
	nc, js := connect(url)
	defer nc.Close()
	kv, err := js.KeyValue(bucket)
	if err != nil {
		fail("the bucket %s: %v", bucket, err)
	}
	sweep := newSeedSweep(node, before)
	keys, err := kv.Keys()
	if err != nil && !errors.Is(err, nats.ErrNoKeysFound) {
		fail("listing the keys: %v", err)
	}
	for _, key := range keys {
		if !sweep.mine(key) {
			continue
		}
		got, err := kv.Get(key)
		if errors.Is(err, nats.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			fail("reading %s: %v", key, err)
		}
		revision := got.Revision()
		sweep.key(entry{Key: key, Revision: revision, Value: got.Value()},
			func(value []byte) error { _, err := kv.Update(key, value, revision); return err },
			func() error { return kv.Delete(key, nats.LastRevision(revision)) })
	}
	sweep.report("go-nats-seed", decisionsPath, len(keys))
}
