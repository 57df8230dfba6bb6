// The etcd store: a Store over an etcd v3 cluster, the other store a fleet that
// outgrows one machine already runs for its locks and leader election.
//
// The client is etcd's v3 JSON gateway (served on every member's client port:
// /v3/kv/range, /v3/kv/txn, /v3/watch, ...) over libcurl, its answers read with
// simdjson, its requests written with json_text and base64 from libcrypto: one more
// package (libcurl4-openssl-dev, 1.8 MB installed). The other client, gRPC C++,
// needs the API's .proto files, which only golang-etcd-server-dev installs, compiled
// at build time: apt counts 133 new packages, 423 MB installed, for libgrpc++-dev,
// protobuf-compiler-grpc and golang-etcd-server-dev on a Debian 12 that already has
// protobuf (6 of them, 49.2 MB, for gRPC alone), and generated C++ to compile on 2
// cores. Each write is a txn the cluster commits through its raft log either way.
//
// Rules it keeps:
// - Keys live under "<prefix>/" in etcd (the prefix namespaces keys as a NATS bucket
//   does); a key is any non-empty bytes. Values are bytes.
// - get() reads the etcd lease a key is bound to into StoreEntry::lease. update()
//   writes with none (etcd's put unbinds the key): a key bound to a lease is
//   rewritten with update_bound().
// - A revision is the key's mod_revision: the cluster's one counter, never 0 for a
//   stored value.
// - get() is a linearizable range read (the leader confirms it): a read after this
//   process's own write sees that write.
// - update() and remove() are one txn comparing the key's mod_revision with the
//   revision read; create() one comparing its create_revision with 0. A failed
//   compare is Errc::changed (Errc::exists for create), never an overwrite. A key gone
//   has mod_revision 0: changed. update() and remove() at revision 0 are changed
//   without a request (no stored value is at revision 0).
// - A pipeline (a sweep's ends and deletes, an import's creates) sends its writes in
//   txns of many keys, each key with its own compare; a key that moved is changed and
//   the others go again, known not written. The single-key calls (a lock's writes)
//   stay one txn each.
// - A write that was sent and got no answer (a time-out, a dropped connection, the
//   cluster saying it timed out or lost its leader meanwhile) is
//   Errc::unknown_outcome: it may have landed, and nothing resends it. A write the
//   cluster refused outright (no space left: the quota, a permission) is Errc::store.
// - With several endpoints a call goes to the first that accepts a connection; one
//   that refuses the connection (nothing was sent) is passed over for the next. A
//   request sent and not answered is never sent again elsewhere.
// - Every failure of the cluster or the connection is Errc::store (Errc::timeout for a
//   read that timed out) with a sentence naming the endpoint and what failed; a
//   password is never shown.
//
// Thread-safety: one EtcdStore may be used from several threads at once (each call
// takes the store's connection under a lock); a pipeline or a watch belongs to the
// thread that uses it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/store.hpp"
#include "leasejudge/store_lease.hpp"

namespace leasejudge {

struct EtcdOptions {
  // Members' client endpoints, "host:port" or "http(s)://host:port", tried in order.
  // Empty: 127.0.0.1:2379.
  std::vector<std::string> endpoints;
  // The namespace of the store's keys: each key is "<prefix>/<key>" in etcd. Required.
  std::string prefix;
  // etcd's own authentication (a token asked for at the open). Optional.
  std::string user, password;
  // TLS: https:// endpoints (or any endpoint when set) verified with the CA file
  // (default: the system's trust store); the certificate and key identify the client.
  bool tls = false;
  std::string tls_ca_file, tls_cert_file, tls_key_file;
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds request_timeout{5000};  // each get and write
  std::chrono::milliseconds list_timeout{60000};    // each page of a keys() listing or scan
  // A pipeline's writes go to the cluster in txns of up to txn_keys keys (1: a txn a
  // write), at most txns_in_flight at once. etcd commits a txn as one raft entry, so
  // a txn of many keys costs the members about what one of a key costs. etcd refuses
  // a txn of more operations than its --max-txn-ops (128 by default): the store then
  // lowers txn_keys for good and sends the refused writes again in smaller txns.
  std::size_t txn_keys = 128;
  std::size_t txns_in_flight = 16;
  // Slow answers, endpoints passed over.
  StoreNote note;
};

// What the store's pipelines did, since it opened.
struct EtcdWriteStats {
  std::uint64_t txns = 0;            // txns sent (a txn sent again counted again)
  std::uint64_t writes = 0;          // writes sent in them (a write sent again counted again)
  std::uint64_t resent = 0;          // writes sent again: their txn failed on another key's compare
  std::uint64_t split = 0;           // txns the cluster refused as too large, sent again in parts
  std::uint64_t most_in_flight = 0;  // txns in flight at once, at most
  std::size_t txn_keys = 0;          // keys a txn holds at most now
};

class EtcdStore final : public Store, public StoreLeases {
 public:
  // Check the options and reach one endpoint (authenticating where a user is given).
  // Errc::invalid_argument for options out of range; Errc::store when no endpoint
  // answers or the user is refused.
  static Result<std::unique_ptr<EtcdStore>> open(const EtcdOptions& options);
  ~EtcdStore() override;
  EtcdStore(const EtcdStore&) = delete;
  EtcdStore& operator=(const EtcdStore&) = delete;

  Result<std::vector<std::string>> keys() override;
  Result<std::optional<StoreEntry>> get(std::string_view key) override;
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override;
  Result<Revision> create(std::string_view key, std::string_view value) override;
  Status remove(std::string_view key, Revision revision) override;
  // A range read of "<prefix>/<prefix argument>" at one revision: the first page's
  // header revision, every later page read at it, pages of batch_keys keys continued
  // after the last key read. Keys written since the scan began are not seen (at that
  // revision they did not exist). A revision compacted between two pages fails the
  // scan (Errc::store, saying so): the caller scans again.
  Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options = {},
              ScanStats* stats = nullptr) override;
  // Writes grouped into txns of up to txn_keys keys, in the order sent, at most
  // txns_in_flight txns at once on a connection each (a curl multi handle); outcomes
  // in the order sent. A txn's success branch writes every key of it: an update or a
  // delete where the key's mod_revision is still the one read, a create where its
  // create_revision is 0 (none). When a compare fails nothing of the txn is written,
  // and its failure branch reads each key's revisions (keys only) at that same
  // revision: a key that moved is changed (Errc::exists for a create), and the others,
  // known not written, go again in a txn of their own. A txn is sent once it is full,
  // or when next() waits for one of its writes. A txn the cluster refuses as too
  // large goes again in parts. A txn whose answer is lost (a time-out, a dropped
  // connection, a request curl sent again) makes each of its writes unknown, never
  // sent again; a refusal (no space left) makes each failed. Either breaks the
  // pipeline: writes not sent yet fail, unsent. The txns go to the endpoints in turn;
  // one that refuses the connection (nothing sent) is passed over for the others.
  std::unique_ptr<WritePipeline> pipeline(const PipelineOptions& options = {}) override;
  // 8 txns of txn_keys (fewer with fewer txns_in_flight): 1024 writes by default. A
  // sweep of 100k keys of 400k on three members wrote 23.4k writes/s so, against 10.2k
  // with 256 (two txns).
  std::size_t write_window() const override;
  // What the store's pipelines did so far.
  EtcdWriteStats write_stats() const;
  // An etcd watch of the prefix from options.from_revision, or (0) from the revision
  // after the one the cluster is at when the watch is created (the call returns once
  // etcd confirmed it). A start revision etcd has compacted away cannot be watched
  // from: the watch then hands over a fresh scan of the prefix instead (every key
  // holding a value, as a change at the scan's revision: a key deleted meanwhile is
  // not seen), notes so once through options.note, and goes on from the revision
  // after the scan's. A dropped stream breaks it (next fails, saying so). The store
  // must outlive the watch (a compaction's scan reads through it).
  Result<std::unique_ptr<KeyWatch>> watch(std::string_view prefix, const KeyWatchOptions& options = {}) override;
  // The etcd watch of key as a prefix (its changes and those of keys starting with it).
  Result<std::unique_ptr<KeyWatch>> watch_key(std::string_view key, const KeyWatchOptions& options = {}) override {
    return watch(key, options);
  }

  // etcd leases (store_lease.hpp): /v3/lease/grant, keepalive, revoke, timetolive;
  // a write bound to a lease is a txn whose put carries it. A lease's TTL is counted
  // by the cluster's leader on its own clock (a new leader starts it again): a lease
  // that etcd says is gone (TTL -1) is evidence independent of every client's clock.
  // etcd raises a TTL below its minimum (about 1.5 election timeouts) to it.
  StoreLeases* leases() override { return this; }
  Result<StoreLease> grant(std::int64_t lease_ms) override;
  Result<std::int64_t> keep_alive(StoreLeaseId lease) override;
  Status revoke(StoreLeaseId lease) override;
  Result<StoreLeaseLife> life(StoreLeaseId lease) override;
  Result<Revision> create_bound(std::string_view key, std::string_view value, StoreLeaseId lease) override;
  Result<Revision> update_bound(std::string_view key, std::string_view value, Revision revision,
                                StoreLeaseId lease) override;

  // Write value whatever the key holds (a test's other writer); the new revision.
  Result<Revision> put(std::string_view key, std::string_view value);
  // Discard the cluster's history before revision (an operator's act, as etcdctl
  // compact; a watch from before it then starts from a scan).
  Status compact(Revision revision);
  // The endpoint the store's connection uses now ("http://host:port").
  std::string endpoint() const;

  struct Connection;

 private:
  explicit EtcdStore(std::unique_ptr<Connection> connection);
  std::unique_ptr<Connection> c_;
};

}  // namespace leasejudge
