package leasejudge

/*
#include <stdlib.h>
#include "leasejudge.h"
*/
import "C"

import (
	"math"
	"time"
	"unsafe"
)

// NATSOptions say where a NATS JetStream key/value bucket is and how to reach it: the
// store a fleet of build nodes shares. Zero fields are the library's defaults.
//
// On that store a revision is the bucket stream's sequence of the key's last write;
// updates and deletes land only while the key is still at the revision read (a
// delete publishes the KV delete marker with that expectation, so a write landing
// between a read and a delete is never deleted); a lost race is ErrChanged. Keys
// follow the NATS KV rules ([-/_=.a-zA-Z0-9], no leading or trailing '.', no "..").
// A server down, a timeout, a missing bucket: ErrStore, with a sentence saying which.
type NATSOptions struct {
	URLs            string // "nats://host:4222,tls://other:4222"; "": nats://127.0.0.1:4222
	Bucket          string // required: [A-Za-z0-9_-]+
	CredentialsFile string // user JWT and nkey seed, for servers with accounts
	TLS             bool   // require TLS even where the server only offers it
	TLSCAFile       string // verifies the server; "": the system's trust store
	TLSCertFile     string // identifies the client, with TLSKeyFile
	TLSKeyFile      string
	Name            string        // the connection's name in the server's monitoring; "": leasejudge
	ConnectTimeout  time.Duration // 0: 2 s
	RequestTimeout  time.Duration // each read, write and lookup; 0: 5 s
	ListTimeout     time.Duration // a whole key listing; 0: 60 s
	ReconnectWait   time.Duration // least time between tries to connect again; 0: 500 ms
	DirectReads     bool          // let any replica answer reads (a read may miss the latest write)
	CreateBucket    bool          // create the bucket when missing, with History and Replicas
	History         int           // values kept per key, 1 to 64; 0: 1
	Replicas        int           // 1 to 5; 0: 1
}

// OpenNATSStore connects and binds to the bucket (creating it when asked).
// ErrUnsupported when the library was built without NATS.
func OpenNATSStore(opts NATSOptions) (*Store, error) {
	c := (*C.lj_nats_options_t)(C.malloc(C.sizeof_lj_nats_options_t))
	defer C.free(unsafe.Pointer(c))
	C.lj_nats_options_init(c, C.LJ_NATS_OPTIONS_VERSION)
	var texts cTexts
	defer texts.free()
	text := texts.set
	ms := func(d time.Duration, out *C.int64_t) {
		if d > 0 {
			*out = C.int64_t((d + time.Millisecond - 1) / time.Millisecond)
		}
	}
	text(opts.URLs, &c.urls, &c.urls_len)
	text(opts.Bucket, &c.bucket, &c.bucket_len)
	text(opts.CredentialsFile, &c.credentials_file, &c.credentials_file_len)
	text(opts.TLSCAFile, &c.tls_ca_file, &c.tls_ca_file_len)
	text(opts.TLSCertFile, &c.tls_cert_file, &c.tls_cert_file_len)
	text(opts.TLSKeyFile, &c.tls_key_file, &c.tls_key_file_len)
	text(opts.Name, &c.name, &c.name_len)
	c.tls = C.int32_t(flag(opts.TLS))
	ms(opts.ConnectTimeout, &c.connect_timeout_ms)
	ms(opts.RequestTimeout, &c.request_timeout_ms)
	ms(opts.ListTimeout, &c.list_timeout_ms)
	ms(opts.ReconnectWait, &c.reconnect_wait_ms)
	c.direct_reads = C.int32_t(flag(opts.DirectReads))
	c.create_bucket = C.int32_t(flag(opts.CreateBucket))
	count := func(n int, out *C.int32_t) {
		switch {
		case n > math.MaxInt32 || n < math.MinInt32:
			*out = -1 // out of range: the library refuses it, not a truncated value
		case n != 0:
			*out = C.int32_t(n)
		}
	}
	count(opts.History, &c.history)
	count(opts.Replicas, &c.replicas)
	var out *C.lj_store_t
	var cerr *C.lj_error_t
	if err := errorOf(C.lj_nats_store_open(&out, c, &cerr), cerr); err != nil {
		return nil, err
	}
	return newStore(out, nil), nil
}
