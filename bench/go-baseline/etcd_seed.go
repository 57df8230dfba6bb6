//go:build etcd

// The reference of the etcd sweep benchmark: the seed's EndStale as a Go build module
// would run it over etcd with clientv3, its Scan backed by etcd: Keys one keys-only
// range of the prefix, Get one range of a key, Update and Delete one Txn each that
// lands only while the key's mod revision is the revision read. Every key listed, then
// for each key of the node a Get, the decision (decide, the same rules as reference
// (a)), and an Update or a Delete. Built only with the tag `etcd`, in GOPATH mode over
// Debian's golang-etcd-server-dev:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -tags etcd -o go-etcd-seed .
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/clientv3"
)

func init() {
	etcdSeed = runEtcdSeed
	etcdLoad = runEtcdLoad
}

func etcdClient(endpoints string) *clientv3.Client {
	c, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), DialTimeout: 5 * time.Second})
	if err != nil {
		fail("connecting to %s: %v", endpoints, err)
	}
	return c
}

// runEtcdLoad writes every key of the state under prefix, whatever it holds now (a key
// a sweep deleted is written again; keys under prefix that are not the state's are
// left): Txns of 128 puts, 8 at once; then a compaction, so that a sweep reads a settled
// keyspace. Its JSON gives the puts' time alone (put_s: from the first Txn sent to the
// last answered).
func runEtcdLoad(endpoints, prefix, state string) {
	c := etcdClient(endpoints)
	defer c.Close()
	entries, _ := readState(state)
	ctx := context.Background()
	began := time.Now()
	var wg sync.WaitGroup
	batches := make(chan []entry)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				ops := make([]clientv3.Op, 0, len(b))
				for _, e := range b {
					ops = append(ops, clientv3.OpPut(prefix+"/"+e.Key, string(e.Value)))
				}
				if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
					fail("loading: %v", err)
				}
			}
		}()
	}
	for i := 0; i < len(entries); i += 128 {
		j := i + 128
		if j > len(entries) {
			j = len(entries)
		}
		batches <- entries[i:j]
	}
	close(batches)
	wg.Wait()
	putSeconds := time.Since(began).Seconds()
	got, err := c.Get(ctx, prefix+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		fail("counting: %v", err)
	}
	if _, err := c.Compact(ctx, got.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		fail("compacting: %v", err)
	}
	fmt.Printf(`{"loaded":%d,"put_s":%.6f}`+"\n", got.Count, putSeconds)
}

// etcdScan is the seed's Scan over etcd with clientv3.
type etcdScan struct {
	c      *clientv3.Client
	prefix string
}

func (s etcdScan) Keys() ([]string, error) {
	got, err := s.c.Get(context.Background(), s.prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(got.Kvs))
	for _, kv := range got.Kvs {
		keys = append(keys, string(kv.Key[len(s.prefix):]))
	}
	return keys, nil
}

func (s etcdScan) Get(key string) ([]byte, uint64, error) {
	got, err := s.c.Get(context.Background(), s.prefix+key)
	if err != nil || len(got.Kvs) == 0 {
		return nil, 0, err
	}
	return got.Kvs[0].Value, uint64(got.Kvs[0].ModRevision), nil
}

// write is an Update (value) or a Delete (value nil) that lands only at revision.
func (s etcdScan) write(key string, value []byte, revision uint64) error {
	op := clientv3.OpDelete(s.prefix + key)
	if value != nil {
		op = clientv3.OpPut(s.prefix+key, string(value))
	}
	got, err := s.c.Txn(context.Background()).
		If(clientv3.Compare(clientv3.ModRevision(s.prefix+key), "=", int64(revision))).Then(op).Commit()
	if err == nil && !got.Succeeded {
		err = fmt.Errorf("the key changed since it was read")
	}
	return err
}

func runEtcdSeed(endpoints, prefix, node string, before time.Time, decisionsPath string) {
	c := etcdClient(endpoints)
	defer c.Close()
	scan := etcdScan{c, prefix + "/"}
	sweep := newSeedSweep(node, before)
	keys, err := scan.Keys()
	if err != nil {
		fail("listing the keys: %v", err)
	}
	for _, key := range keys {
		if !sweep.mine(key) {
			continue
		}
		value, revision, err := scan.Get(key)
		if err != nil {
			fail("reading %s: %v", key, err)
		}
		if revision == 0 {
			continue
		}
		sweep.key(entry{Key: key, Revision: revision, Value: value},
			func(value []byte) error { return scan.write(key, value, revision) },
			func() error { return scan.write(key, nil, revision) })
	}
	sweep.report("go-etcd-seed", decisionsPath, len(keys))
}
