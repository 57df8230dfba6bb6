// The NATS store: a Store over a NATS JetStream key/value bucket, the store a fleet of
// build nodes shares for its steps and locks.
//
// Rules it keeps:
// - A revision is the bucket stream's sequence number of the key's last write: one
//   counter across all keys, as the memory store's, and never 0 for a stored value.
// - get() reads the key's last message from the stream leader, so a read after this
//   process's own write sees that write, on one server and on a cluster alike. A key
//   whose last message is a delete or purge marker holds no value (nullopt).
// - update() and remove() write only while the key's last message is still the one
//   at the revision read (JetStream's expected last subject sequence); create() writes
//   only where the key holds no message, or only a delete marker. A lost race is
//   Errc::changed (Errc::exists for create), never an overwrite and never an error
//   text to parse. remove() publishes the KV delete marker with that expectation, so
//   a write landing between the read and the delete is never deleted with it.
// - The write path follows the server, never the bucket as it was at the open. The
//   store reads the version of every server it connects to, and of the cluster's
//   other servers that server names, from their INFO line (on a socket of its own,
//   at each connection, reconnections included); the lowest one counts.
//   - 2.9.21 and later: the stream leader checks a write's expected last subject
//     sequence as it applies the write, on one server and on a replicated bucket
//     alike, so that expectation fences every writer that sends it (nats.go's and
//     nats.c's KV update and create among them). Every write carries only it, and
//     the pipeline keeps many in flight, whatever the bucket's replicas.
//   - Before 2.9.21 (Debian 12's 2.9.10), or a version that could not be read: on a
//     replicated bucket the server checks that expectation only before it proposes
//     the write (nats-server issue 4320), so two writes expecting the same revision
//     could both land: two holders of one lock. So every update() and remove()
//     there, whatever the replicas (a bucket can be scaled while a store is open),
//     also expects the stream's last sequence, which the server checks as it
//     applies writes, in order: first the key's own revision, else the last
//     sequence the stream's leader reports. A miss of that expectation alone, the
//     key still at the revision read, is tried again with a growing pause for up
//     to request_timeout, then reported as a store failure (the write did not
//     land), never as changed; a re-read that fails is that failure. The pipeline
//     reads the bucket's replicas when it opens and at most a second apart while
//     writes are sent, and sends each write this way, one at a time, from the
//     moment the bucket is replicated. Writers that do not send the stream's
//     expectation (other clients) are not fenced by such a server: the store says
//     so once through NatsOptions::note, and refuse_unfenced refuses conditional
//     writes on a replicated bucket there instead (Errc::unsupported). During a
//     rolling upgrade the servers of the cluster the connected one names are
//     all read: one before 2.9.21 keeps the old path.
//   A create where the key holds no message needs neither: the server checks that
//   one as it applies it.
// - A write that was sent and got no answer (a time-out, a lost connection, a
//   leader change: JetStream error 10163) is Errc::unknown_outcome: it may have
//   landed, and nothing resends it. A second write in flight to one key (JetStream
//   error 10164, nats-server 2.11) is a lost race like a wrong last sequence.
// - update() and remove() at revision 0 are Errc::changed without a request, as the
//   memory store answers (no stored value is at revision 0): JetStream would take 0
//   as "no expectation" and overwrite whatever the key holds.
// - Keys follow the NATS KV rules: non-empty, only [-/_=.a-zA-Z0-9], no leading or
//   trailing '.', no empty token (".."); any other key is Errc::invalid_argument,
//   before anything is sent. Bucket names are [A-Za-z0-9_-]+.
// - Every failure of the server, the connection or the bucket (down, unreachable,
//   timed out, missing bucket, JetStream off) is Errc::store with a sentence naming
//   the bucket and what failed (a password in a URL shown as ***).
// - A lost connection is never replaced behind the caller's back with writes queued
//   on it: the call that finds it lost fails, and a later call connects again (at
//   most one try per reconnect_wait; calls in between fail at once). So a write
//   reported as failed never lands later; only one the server took just before the
//   connection dropped may have landed, and its revision check keeps a retry safe.
//
// Thread-safety: one NatsStore may be used from several threads at once (nats.c's
// connection and JetStream context are thread-safe, and the store keeps no other
// mutable state). A sweep calling it from one thread needs nothing more.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/store.hpp"

namespace leasejudge {

struct NatsOptions {
  // Servers to connect to, "nats://host:port" (or "tls://..."); user and password may
  // ride in the URL. Tried in order; the cluster's other servers are learnt from it.
  // Empty: nats://127.0.0.1:4222.
  std::vector<std::string> urls;
  // The key/value bucket. Required.
  std::string bucket;
  // A credentials file (user JWT and nkey seed), for servers with accounts. Optional.
  std::string credentials_file;
  // TLS. The client switches to TLS by itself when the server requires it; `tls`
  // makes it required even where the server offers it only. The CA file verifies the
  // server (default: the system's trust store); the certificate and key files
  // identify the client where the server asks for a client certificate.
  bool tls = false;
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // The connection's name in the server's monitoring.
  std::string name = "leasejudge";
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds request_timeout{5000};  // each get, write and lookup
  std::chrono::milliseconds list_timeout{60000};    // a whole keys() listing
  // After the connection is lost: the least time between two tries to connect again.
  std::chrono::milliseconds reconnect_wait{500};
  // Read from the stream's leader (false, the default: a read sees every write
  // acknowledged before it) or let any replica answer (true: faster on a cluster,
  // but a read may miss the latest write; a write at a stale revision is still
  // refused as changed).
  bool direct_reads = false;
  // Create the bucket when it does not exist, with this history (values kept per
  // key, 1 to 64) and replica count (1 to 5; a cluster needs as many servers). An
  // existing bucket is used as it is.
  bool create_bucket = false;
  // How the caller asks for create_bucket, named where a missing bucket is refused;
  // empty: "creation".
  std::string create_name;
  int history = 1;
  int replicas = 1;
  // Refuse update() and remove() (and the pipeline's writes) on a replicated bucket
  // of a server that does not fence other writers (before 2.9.21), with
  // Errc::unsupported, rather than fence only the writers that send the stream's
  // expectation.
  bool refuse_unfenced = false;
  // What the store says once about such a server, on the thread of the call that
  // finds it. Optional.
  StoreNote note;
};

// The servers the store writes through, as their INFO lines said.
struct NatsServerState {
  std::string version;  // the lowest version read ("" when none could be read)
  bool fenced = false;  // every server read is 2.9.21 or later: writes need only the key's expectation
};

// One (key, value, revision) of a whole-bucket read.
struct NatsEntry {
  std::string key;
  std::string value;
  Revision revision = 0;
};

class NatsStore final : public Store {
 public:
  // Connect and bind to the bucket (creating it when asked). Errc::invalid_argument
  // for options out of range or a bad bucket name; Errc::store when no server
  // answers, the credentials or TLS files cannot be used, JetStream is off or the
  // bucket is missing.
  static Result<std::unique_ptr<NatsStore>> open(const NatsOptions& options);
  ~NatsStore() override;
  NatsStore(const NatsStore&) = delete;
  NatsStore& operator=(const NatsStore&) = delete;

  Result<std::vector<std::string>> keys() override;
  Result<std::optional<StoreEntry>> get(std::string_view key) override;
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override;
  Result<Revision> create(std::string_view key, std::string_view value) override;
  Status remove(std::string_view key, Revision revision) override;
  // One server-side filtered pass over the bucket for a prefix "<key>." (a node's
  // keys): a KV watch (an ordered consumer with flow control delivering each key's
  // last write once), ending with the last value the bucket held. Deleted and purged
  // keys hold no value. Keys written after the scan began (it reads the bucket's last
  // revision first) are left to the next scan, counted as skipped; keys another client
  // wrote that break the key rules are left, counted as rejected (the first noted). A server slow to
  // start the read is asked again, a quiet one waited for, each noted, within
  // list_timeout in all. Any other prefix: keys() and get().
  Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options = {},
              ScanStats* stats = nullptr) override;
  // JetStream async publishes, each with the expected last subject sequence (the
  // revision read; a delete is the KV delete marker), at most options.window in
  // flight. Each acknowledgement is checked: a wrong last sequence is changed, a
  // refusal failed; no acknowledgement within request_timeout, or a connection lost
  // first, is unknown. Nothing is resent. An acknowledgement slower than a second is
  // noted once. On a replicated bucket of a server before 2.9.21 writes are sent one
  // at a time with the stream's expectation (above).
  std::unique_ptr<WritePipeline> pipeline(const PipelineOptions& options = {}) override;
  // For a prefix "<key>." (a node's keys): a KV watch of "<key>.>", handing over the
  // writes, deletes and purges made after it began (the values the bucket held when
  // it began are passed over: a scan reads those), each with the time the server
  // stored it. A lost connection breaks it (next fails, saying so), never a silent
  // stall: the caller opens another, on a connection made again. Any other prefix:
  // the polling watch.
  Result<std::unique_ptr<KeyWatch>> watch(std::string_view prefix, const KeyWatchOptions& options = {}) override;
  // A KV watch of the key's own subject.
  Result<std::unique_ptr<KeyWatch>> watch_key(std::string_view key, const KeyWatchOptions& options = {}) override;

  // Write value whatever the key holds (a test's other writer, or seeding a bucket);
  // the new revision.
  Result<Revision> put(std::string_view key, std::string_view value);
  // Every key that holds a value now, with its value and revision, read in one pass
  // over the bucket (no request per key): what a sweep of a large bucket reads. Each
  // entry is the key's last write at some moment of the pass; a write at its revision
  // is still checked as any other.
  Result<std::vector<NatsEntry>> entries();

  const std::string& bucket() const noexcept;
  // The servers as the last connection found them.
  NatsServerState server() const;

  // Does key follow the NATS KV key rules above?
  static bool valid_key(std::string_view key) noexcept;
  static bool valid_bucket(std::string_view bucket) noexcept;

 private:
  Result<std::unique_ptr<KeyWatch>> kv_watch(std::string_view filter, std::string_view named,
                                             const KeyWatchOptions& options);
  struct Connection;
  explicit NatsStore(std::unique_ptr<Connection> connection);
  std::unique_ptr<Connection> c_;
};

}  // namespace leasejudge
