// What the NATS store's parts share (private to lib/src/store/nats*.cpp): the KV layout
// on the wire, JetStream's answers to a conditional write, owning handles for what
// nats.c hands out, a live connection (Link), and the store's connection with the
// calls every part makes through it. The parts read as etcd's do:
//   nats.cpp           the connection: open, reconnecting, the servers' versions, failures
//   nats_write.cpp     single keys: get, and the writes each at its revision
//   nats_pipeline.cpp  the pipeline of async publishes
//   nats_scan.cpp      the bulk reads: the scan of a node's keys, keys() and entries()
//   nats_watch.cpp     the KV watches
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "leasejudge/store/nats.hpp"

namespace leasejudge::nats_store {

// The KV layout nats.c and every other client share: stream KV_<bucket>, subjects
// $KV.<bucket>.<key>, an operation header on markers.
inline constexpr const char* kOperationHeader = "KV-Operation";
inline constexpr const char* kDeleteOperation = "DEL";
inline constexpr const char* kPurgeOperation = "PURGE";
// Servers from 2.11 write markers of their own (a removed or aged-out message).
inline constexpr const char* kMarkerReasonHeader = "Nats-Marker-Reason";

// JetStream's answers to a write that expected a revision. 10071 (a wrong last
// sequence) is in nats.c; the others come from newer servers.
inline constexpr jsErrCode kInFlightWrongSequence =
    static_cast<jsErrCode>(10164);                                                // another write to the key in flight
inline constexpr jsErrCode kExpectationNotReady = static_cast<jsErrCode>(10163);  // a leader change: try later

inline bool lost_race(jsErrCode jerr) noexcept {
  return jerr == JSStreamWrongLastSequenceErr || jerr == kInFlightWrongSequence;
}

inline constexpr jsErrCode kNoJsError = static_cast<jsErrCode>(0);

// A bulk read's patience: how long one wait for the server lasts before it is noted.
inline constexpr int64_t kNoteAfterMs = 1000;

// Milliseconds on the monotonic clock, for every interval and deadline the store
// measures itself. nats.c's nats_Now() reads the wall clock: a step of it (NTP, a
// person) would end a wait at once or stretch it by the step, such as a lock wait's
// watch slice stuck for an hour after a step back of an hour.
int64_t steady_ms() noexcept;

inline bool key_byte(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '/' ||
         c == '_' || c == '=' || c == '.';
}

// nats.c reports the detail of a failure in a per-thread last error, prefixed with
// its own source location ("(conn.c:1905): "), which says nothing to a user.
std::string nats_detail(natsStatus s);

inline bool connection_lost(natsStatus s) noexcept {
  return s == NATS_CONNECTION_CLOSED || s == NATS_CONNECTION_DISCONNECTED || s == NATS_STALE_CONNECTION ||
         s == NATS_IO_ERROR || s == NATS_NO_SERVER || s == NATS_INSUFFICIENT_BUFFER;
}

// Owning handles for what nats.c hands out, each destroyed by nats.c's own function
// (which takes nullptr as nothing to destroy).
template <typename T, void (*Destroy)(T*)>
struct Owned {
  T* p = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { Destroy(p); }
};
using MsgHandle = Owned<natsMsg, natsMsg_Destroy>;
using PubAckHandle = Owned<jsPubAck, jsPubAck_Destroy>;
using StreamInfoHandle = Owned<jsStreamInfo, jsStreamInfo_Destroy>;
using SubHandle = Owned<natsSubscription, natsSubscription_Destroy>;
using ConsumerInfoHandle = Owned<jsConsumerInfo, jsConsumerInfo_Destroy>;
using MetaHandle = Owned<jsMsgMetaData, jsMsgMetaData_Destroy>;
using KvHandle = Owned<kvStore, kvStore_Destroy>;
using WatcherHandle = Owned<kvWatcher, kvWatcher_Destroy>;
using EntryHandle = Owned<kvEntry, kvEntry_Destroy>;
// A message list is handed over as a value.
struct MsgListHandle {
  natsMsgList v{};
  ~MsgListHandle() { natsMsgList_Destroy(&v); }
};

// One live connection and its JetStream context. Calls hold it while they run, so a
// reconnection by another thread never pulls it from under them.
struct Link {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  std::mutex kv_mu;       // guards kv
  kvStore* kv = nullptr;  // bound on the first scan
  Link() = default;
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;
  ~Link() {
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }
};

// A message is a marker (the key holds no value) when its operation says so.
bool is_marker(natsMsg* msg);

}  // namespace leasejudge::nats_store

namespace leasejudge {

struct NatsStore::Connection {
  using Link = nats_store::Link;
  using MsgHandle = nats_store::MsgHandle;

  natsOptions* opts = nullptr;  // kept for reconnecting; nats.c copies it per connection
  std::string bucket;
  std::string stream;   // KV_<bucket>
  std::string prefix;   // $KV.<bucket>.
  std::string servers;  // for messages
  int64_t request_ms = 0;
  int64_t list_ms = 0;
  int64_t reconnect_ms = 0;
  int64_t connect_ms = 0;
  bool direct_reads = false;
  bool refuse_unfenced = false;
  StoreNote note;
  // Whether every server the last connection found fences other writers (see the
  // header), and the lowest version read.
  std::atomic<bool> fenced{false};
  std::atomic<bool> warned{false};
  mutable std::mutex version_mu;
  std::string version;

  // A connection and when it was last tried. Requests and scans use one; pipelined
  // writes another, so that their acknowledgements never queue behind a scan's
  // values on the same socket.
  struct Slot {
    std::shared_ptr<Link> link;
    int64_t last_try = std::numeric_limits<int64_t>::min() / 2;  // never: the first call connects
  };
  enum Use { requests = 0, writes = 1 };
  std::mutex mu;  // guards slots
  Slot slots[2];

  Connection() = default;
  // Set up opts for o (open's first step after checking o), and find or create the
  // bucket over a first link (its last).
  Status configure(const NatsOptions& o);
  Status find_bucket(Link& link, const NatsOptions& o);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    for (auto& slot : slots) slot.link.reset();
    natsOptions_Destroy(opts);
  }

  std::string subject(std::string_view key) const {
    std::string s;
    s.reserve(prefix.size() + key.size());
    s += prefix;
    s += key;
    return s;
  }

  // --- the connection (nats.cpp) ---

  // Connect anew. The caller holds mu.
  Result<std::shared_ptr<Link>> connect_locked(Slot& slot);
  // The versions of the server l reached and of the others it names, each from its
  // INFO line, within connect_ms in all: fenced only when every one was read and is
  // 2.9.21 or later.
  void learn_servers(const Link& l);
  // Said once a store: the server does not fence writers that leave out the stream's
  // expectation.
  void warn_unfenced();
  // The bucket's stream has more than one replica now; a read that fails counts as
  // replicated.
  bool replicated_now(const Link& l) const;
  // The live connection, connecting again when the last one was lost; at most one
  // try per reconnect_ms, calls in between fail at once. note (optional) hears of a
  // connection made again.
  Result<std::shared_ptr<Link>> live(const StoreNote* note = nullptr, Use use = requests);
  // The key/value handle of a link, bound once.
  Result<kvStore*> kv_of(Link& l) const;
  // The sentence for a failure of the server, the connection or the bucket.
  Error failure(std::string_view doing, natsStatus s, jsErrCode jerr) const;

  // --- single keys (nats_write.cpp) ---

  // The key's last message (nullptr when the key has none) into out.
  Status last_message(const Link& l, std::string_view key, MsgHandle& out) const;

  struct Published {
    natsStatus status = NATS_OK;
    jsErrCode jerr = nats_store::kNoJsError;
    Revision revision = 0;
    std::optional<Error> said;  // the answer, where the store found it (over status and jerr)
  };

  // Publish value (or, with marker, the delete marker) on key's subject, expecting
  // the subject's last sequence to be `last` (0: no expectation) or, with none_before,
  // expecting the subject to hold no message; and, when stream_last is not 0, the
  // whole stream's last sequence to be stream_last.
  Published publish(const Link& l, std::string_view key, std::string_view value, Revision last, bool none_before,
                    bool marker, Revision stream_last = 0) const;
  // The stream's last sequence, as its leader answers it.
  natsStatus stream_last(const Link& l, Revision& out, jsErrCode& jerr) const;
  // A write expecting key's last sequence to be last (> 0): update, delete, create on
  // a delete marker. A server that fences other writers needs only that expectation;
  // any other gets the stream's too (the header says why).
  Published conditional(const Link& l, std::string_view key, std::string_view value, Revision last, bool marker);
  // The write with the stream's expectation: first the key's own revision (nothing
  // written since), else the last sequence the stream's leader gives; a miss of that
  // alone, the key still at last, tried again with a growing pause within request_ms.
  Published serial(const Link& l, std::string_view key, std::string_view value, Revision last, bool marker) const;
  // What became of a conditional write that did not land: a lost race (changed, or
  // exists for a create), no answer (unknown: it may have landed), or a failure.
  Error write_error(std::string_view doing, std::string_view key, Revision revision, const Published& p) const;
  // A create whose first publish (expecting no message) answered p: its revision, or,
  // where the subject holds a message, a value (the key exists) or a delete marker
  // (it does not, and the create lands on top of that very marker).
  Result<Revision> create_after(const Link& l, std::string_view key, std::string_view value, Published p);

  // --- bulk reads (nats_scan.cpp, their only user, defines these) ---

  // Walk the last message of every key (markers included: visit tells): see
  // nats_scan.cpp.
  template <typename Restart, typename Visit>
  natsStatus walk(const Link& l, bool meta_only, Restart&& restart, Visit&& visit) const;
  template <typename Visit>
  natsStatus walk_once(const Link& l, const std::string& filter, bool meta_only, int64_t patience, int64_t start,
                       Visit& visit) const;
  template <typename Visit>
  natsStatus walk_batches(natsSubscription* sub, uint64_t pending, int64_t patience, int64_t start, Visit& visit) const;
  template <typename Restart, typename Visit>
  Status walk_all(std::string_view doing, bool meta_only, Restart&& restart, Visit&& visit);
  // One scan of a prefix "<key>." over a KV watch.
  struct Scan;
};

}  // namespace leasejudge
