// The NATS store over nats.c (libnats). See leasejudge/store/nats.hpp for the rules.
//
// Writes go through js_PublishMsg rather than kvStore_Update and kvStore_Delete: only
// the publish calls hand back JetStream's error code, so a lost race (wrong last
// sequence, 10071) is told from a failure without reading error text, and only a
// publish can carry the delete marker with an expected sequence.
//
// The store reconnects by itself instead of letting nats.c do it: while nats.c
// reconnects it queues the first publish made meanwhile, whatever the size of its
// reconnect buffer, and sends it once a server is back, so a write its caller was
// told had failed could land later. With nats.c's reconnection off, a lost
// connection is closed, a call on it fails, and the next call connects anew.
#include "leasejudge/store/nats.hpp"

#include <fmt/format.h>
#include <nats/nats.h>
#include <openssl/evp.h>
#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <utility>

#include "leasejudge/clock.hpp"
#include "nats_server_info.hpp"

namespace leasejudge {
namespace {

// The KV layout nats.c and every other client share: stream KV_<bucket>, subjects
// $KV.<bucket>.<key>, an operation header on markers.
constexpr const char* kOperationHeader = "KV-Operation";
constexpr const char* kDeleteOperation = "DEL";
constexpr const char* kPurgeOperation = "PURGE";
// Servers from 2.11 write markers of their own (a removed or aged-out message).
constexpr const char* kMarkerReasonHeader = "Nats-Marker-Reason";

// Create-if-absent over delete markers retries while other writers keep moving the
// key between its reads; past this it reports the race as lost.
constexpr int kCreateTries = 16;
// A conditional write with the stream's expectation, while other keys' writes keep
// moving the stream's last sequence, pauses between tries from this, doubling up to
// the most, for up to the request timeout in all.
constexpr int64_t kSerialPauseMs = 1;
constexpr int64_t kSerialPauseMostMs = 64;
// A pipeline on a server that does not fence other writers reads the bucket's
// replicas again at most this often.
constexpr int64_t kReplicasCheckMs = 1000;

// JetStream's answers to a write that expected a revision. 10071 (a wrong last
// sequence) is in nats.c; the others come from newer servers.
constexpr jsErrCode kInFlightWrongSequence = static_cast<jsErrCode>(10164);  // another write to the key in flight
constexpr jsErrCode kExpectationNotReady = static_cast<jsErrCode>(10163);    // a leader change: try later

bool lost_race(jsErrCode jerr) noexcept {
  return jerr == JSStreamWrongLastSequenceErr || jerr == kInFlightWrongSequence;
}

// A key listing fetches this many keys per request.
constexpr int kListBatch = 256;

constexpr jsErrCode kNoJsError = static_cast<jsErrCode>(0);

// Milliseconds on the monotonic clock, for every interval and deadline the store
// measures itself. nats.c's nats_Now() reads the wall clock: a step of it (NTP, a
// person) would end a wait at once or stretch it by the step, such as a lock wait's
// watch slice stuck for an hour after a step back of an hour.
int64_t steady_ms() noexcept {
  return steady_now_ns() / 1'000'000;
}

bool key_byte(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '/' ||
         c == '_' || c == '=' || c == '.';
}

// nats.c reports the detail of a failure in a per-thread last error, prefixed with
// its own source location ("(conn.c:1905): "), which says nothing to a user.
std::string nats_detail(natsStatus s) {
  natsStatus last = NATS_OK;
  const char* text = nats_GetLastError(&last);
  if (text == nullptr || *text == '\0' || last != s) return natsStatus_GetText(s);
  std::string_view t(text);
  if (!t.empty() && t.front() == '(') {
    auto end = t.find("): ");
    if (end != std::string_view::npos) t.remove_prefix(end + 3);
  }
  return std::string(t);
}

bool connection_lost(natsStatus s) noexcept {
  return s == NATS_CONNECTION_CLOSED || s == NATS_CONNECTION_DISCONNECTED || s == NATS_STALE_CONNECTION ||
         s == NATS_IO_ERROR || s == NATS_NO_SERVER || s == NATS_INSUFFICIENT_BUFFER;
}

// Owning handles for what nats.c hands out.
struct MsgHandle {
  natsMsg* p = nullptr;
  ~MsgHandle() { natsMsg_Destroy(p); }
};
struct PubAckHandle {
  jsPubAck* p = nullptr;
  ~PubAckHandle() { jsPubAck_Destroy(p); }
};
struct OptionsHandle {
  natsOptions* p = nullptr;
  ~OptionsHandle() { natsOptions_Destroy(p); }
};
struct StreamInfoHandle {
  jsStreamInfo* p = nullptr;
  ~StreamInfoHandle() { jsStreamInfo_Destroy(p); }
};
struct SubHandle {
  natsSubscription* p = nullptr;
  ~SubHandle() { natsSubscription_Destroy(p); }
};
struct ConsumerInfoHandle {
  jsConsumerInfo* p = nullptr;
  ~ConsumerInfoHandle() { jsConsumerInfo_Destroy(p); }
};
struct MetaHandle {
  jsMsgMetaData* p = nullptr;
  ~MetaHandle() { jsMsgMetaData_Destroy(p); }
};
struct MsgListHandle {
  natsMsgList v{};
  ~MsgListHandle() { natsMsgList_Destroy(&v); }
};
struct KvHandle {
  kvStore* p = nullptr;
  ~KvHandle() { kvStore_Destroy(p); }
};
struct WatcherHandle {
  kvWatcher* p = nullptr;
  ~WatcherHandle() { kvWatcher_Destroy(p); }
};
struct EntryHandle {
  kvEntry* p = nullptr;
  ~EntryHandle() { kvEntry_Destroy(p); }
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
bool is_marker(natsMsg* msg) {
  const char* op = nullptr;
  if (natsMsgHeader_Get(msg, kOperationHeader, &op) == NATS_OK && op != nullptr) {
    return std::strcmp(op, kDeleteOperation) == 0 || std::strcmp(op, kPurgeOperation) == 0;
  }
  const char* reason = nullptr;
  return natsMsgHeader_Get(msg, kMarkerReasonHeader, &reason) == NATS_OK;
}

// What a JetStream message get (STREAM.MSG.GET) answered, as JSON: true when it holds
// a message that is no delete marker (the key holds a value), its sequence in found;
// false for a marker, no message, or an answer that is not one of these.
bool holds_value(std::string_view answer, simdjson::dom::parser& parser, Revision& found) {
  simdjson::dom::element doc, message;
  if (parser.parse(answer.data(), answer.size()).get(doc) != simdjson::SUCCESS ||
      doc["message"].get(message) != simdjson::SUCCESS || message["seq"].get(found) != simdjson::SUCCESS) {
    return false;
  }
  std::string_view hdrs;
  if (message["hdrs"].get(hdrs) != simdjson::SUCCESS || hdrs.empty()) return true;
  if (hdrs.size() % 4 != 0) return false;
  std::string block(hdrs.size() / 4 * 3, '\0');
  if (EVP_DecodeBlock(reinterpret_cast<unsigned char*>(block.data()),
                      reinterpret_cast<const unsigned char*>(hdrs.data()), static_cast<int>(hdrs.size())) < 0) {
    return false;
  }
  // "NATS/1.0\r\nName: value\r\n...": the names matched exactly, as nats.c matches them.
  std::string_view rest(block);
  for (std::size_t eol; (eol = rest.find("\r\n")) != std::string_view::npos; rest.remove_prefix(eol + 2)) {
    std::string_view line = rest.substr(0, eol);
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (name == kOperationHeader && (value == kDeleteOperation || value == kPurgeOperation)) return false;
    if (name == kMarkerReasonHeader) return false;
  }
  return true;
}

// The server list as messages show it: a user and password riding in a URL are
// replaced by "***", so no error message carries a secret.
std::string shown_urls(const std::vector<std::string>& urls) {
  std::string out;
  for (const auto& u : urls) {
    if (!out.empty()) out += ',';
    std::string_view v(u);
    auto scheme = v.find("://");
    std::size_t host_from = scheme == std::string_view::npos ? 0 : scheme + 3;
    auto at = v.rfind('@');
    if (at != std::string_view::npos && at >= host_from) {
      out.append(v.substr(0, host_from));
      out += "***";
      out.append(v.substr(at));
    } else {
      out.append(v);
    }
  }
  return out;
}

Status check_key(std::string_view key) {
  if (!NatsStore::valid_key(key)) {
    return Status(Errc::invalid_argument, fmt::format("\"{}\" is not a NATS key", key));
  }
  return Status::success();
}

Status check_write(std::string_view key, std::string_view value) {
  if (auto st = check_key(key); !st.ok()) return st;
  if (value.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return Status(Errc::invalid_argument, fmt::format("the value for {} is too large for NATS", key));
  }
  return Status::success();
}

}  // namespace

struct NatsStore::Connection {
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

  // Connect anew. The caller holds mu.
  Result<std::shared_ptr<Link>> connect_locked(Slot& slot) {
    slot.last_try = steady_ms();
    auto fresh = std::make_shared<Link>();
    natsStatus s = natsConnection_Connect(&fresh->nc, opts);
    if (s != NATS_OK) {
      std::string why = "the connection failed";
      if (s == NATS_NO_SERVER || s == NATS_TIMEOUT) why = "no server answers";
      if (s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED) why = "the server refused the credentials";
      if (s == NATS_SECURE_CONNECTION_WANTED) why = "TLS is required but the server does not offer it";
      if (s == NATS_SECURE_CONNECTION_REQUIRED || s == NATS_SSL_ERROR) why = "the TLS handshake failed";
      return Error{Errc::store, fmt::format("connecting to NATS at {}: {}: {}", servers, why, nats_detail(s))};
    }
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = request_ms;
    s = natsConnection_JetStream(&fresh->js, fresh->nc, &jo);
    if (s != NATS_OK) {
      return Error{Errc::store,
                   fmt::format("connecting to NATS at {}: opening JetStream: {}", servers, nats_detail(s))};
    }
    learn_servers(*fresh);
    slot.link = fresh;
    return fresh;
  }

  // The versions of the server l reached and of the others it names, each from its
  // INFO line, within connect_ms in all: fenced only when every one was read and is
  // 2.9.21 or later.
  void learn_servers(const Link& l) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(connect_ms);
    auto read = [&](std::string_view host_port) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      return read_nats_info(host_port, std::max(left, std::chrono::milliseconds(1)));
    };
    bool all_fenced = false;
    std::optional<NatsServerInfo> lowest;
    char url[1024] = {0};
    if (natsConnection_GetConnectedUrl(l.nc, url, sizeof url) == NATS_OK) {
      auto here = nats_host_port(url);
      auto first = here.ok() ? read(*here) : Result<NatsServerInfo>(here.error());
      if (first.ok()) {
        all_fenced = fences_other_writers(*first);
        lowest = *first;
        for (const std::string& other : first->connect_urls) {
          if (other == *here) continue;
          auto info = read(other);
          if (!info.ok()) {
            all_fenced = false;
            continue;
          }
          all_fenced = all_fenced && fences_other_writers(*info);
          if (std::tie(info->major, info->minor, info->patch) < std::tie(lowest->major, lowest->minor, lowest->patch))
            lowest = *info;
        }
      }
    }
    fenced = all_fenced;
    std::lock_guard lock(version_mu);
    version = lowest ? lowest->version : std::string();
  }

  // Said once a store: the server does not fence writers that leave out the stream's
  // expectation.
  void warn_unfenced() {
    if (fenced || warned.exchange(true) || !note) return;
    std::string v;
    {
      std::lock_guard lock(version_mu);
      v = version.empty() ? std::string("of a version that could not be read") : version;
    }
    note(fmt::format(
        "the NATS bucket {} at {} is replicated on nats-server {}, which checks a write's expected revision only "
        "before it proposes it (fixed in 2.9.21): leasejudge's writes are fenced from each other, but writers that "
        "do not send the stream's expectation (other clients' KV updates) are not fenced from them",
        bucket, servers, v));
  }

  // The bucket's stream has more than one replica now; a read that fails counts as
  // replicated.
  bool replicated_now(const Link& l) const {
    StreamInfoHandle si;
    jsErrCode jerr = kNoJsError;
    natsStatus s = js_GetStreamInfo(&si.p, l.js, stream.c_str(), nullptr, &jerr);
    return s != NATS_OK || si.p->Config == nullptr || si.p->Config->Replicas > 1;
  }

  // The live connection, connecting again when the last one was lost; at most one
  // try per reconnect_ms, calls in between fail at once. note (optional) hears of a
  // connection made again.
  Result<std::shared_ptr<Link>> live(const StoreNote* note = nullptr, Use use = requests) {
    std::shared_ptr<Link> dropped;  // destroyed outside the lock (it joins threads)
    std::unique_lock lock(mu);
    Slot& slot = slots[use];
    if (slot.link && natsConnection_Status(slot.link->nc) == NATS_CONN_STATUS_CONNECTED) return slot.link;
    dropped = std::move(slot.link);
    if (steady_ms() - slot.last_try < reconnect_ms) {
      return Error{Errc::store, fmt::format("the NATS bucket {} at {}: the connection to the server was lost; "
                                            "reconnecting",
                                            bucket, servers)};
    }
    bool again = dropped != nullptr;
    auto fresh = connect_locked(slot);
    lock.unlock();
    if (again && fresh.ok() && note != nullptr && *note)
      (*note)(fmt::format("the connection to NATS at {} was lost; connected again", servers));
    return fresh;
  }

  // The key/value handle of a link, bound once.
  Result<kvStore*> kv_of(Link& l) const {
    std::lock_guard lock(l.kv_mu);
    if (l.kv != nullptr) return l.kv;
    natsStatus s = js_KeyValue(&l.kv, l.js, bucket.c_str());
    if (s != NATS_OK) {
      l.kv = nullptr;
      return failure("binding the bucket", s, kNoJsError);
    }
    return l.kv;
  }

  // The sentence for a failure of the server, the connection or the bucket.
  Error failure(std::string_view doing, natsStatus s, jsErrCode jerr) const {
    std::string detail = nats_detail(s);
    if (s == NATS_NO_MEMORY) return Error{Errc::no_memory, "out of memory " + std::string(doing)};
    if (s == NATS_MAX_PAYLOAD) {
      return Error{Errc::invalid_argument,
                   fmt::format("{} in the NATS bucket {}: the value is larger than the server takes ({})", doing,
                               bucket, detail)};
    }
    std::string why;
    if (jerr == JSStreamNotFoundErr) {
      why = "the bucket does not exist";
    } else if (jerr == JSNotEnabledErr || jerr == JSNotEnabledForAccountErr) {
      why = "JetStream is not enabled on the server";
    } else if (s == NATS_NO_RESPONDERS) {
      why = "nothing answers for the bucket (it does not exist, or JetStream is off)";
    } else if (s == NATS_TIMEOUT) {
      why = fmt::format("the server did not answer within {} ms", request_ms);
    } else if (connection_lost(s)) {
      why = "the connection to the server was lost (the next call connects again)";
    } else if (jerr == JSClusterNotAvailErr || jerr == JSClusterNoPeersErr || jerr == JSClusterNotLeaderErr ||
               jerr == JSInsufficientResourcesErr) {
      why = "the JetStream cluster cannot serve the bucket now";
    } else {
      why = "the server refused";
    }
    if (jerr != 0) detail = fmt::format("{} (JetStream error {})", detail, static_cast<int>(jerr));
    return Error{Errc::store,
                 fmt::format("{} in the NATS bucket {} at {}: {}: {}", doing, bucket, servers, why, detail)};
  }

  // The key's last message (nullptr when the key has none) into out.
  Status last_message(const Link& l, std::string_view key, MsgHandle& out) const {
    std::string subj = subject(key);
    natsStatus s;
    jsErrCode jerr = kNoJsError;
    if (direct_reads) {
      jsDirectGetMsgOptions dg;
      jsDirectGetMsgOptions_Init(&dg);
      dg.LastBySubject = subj.c_str();
      s = js_DirectGetMsg(&out.p, l.js, stream.c_str(), nullptr, &dg);
      if (s == NATS_NOT_FOUND) return Status::success();
    } else {
      s = js_GetLastMsg(&out.p, l.js, stream.c_str(), subj.c_str(), nullptr, &jerr);
      if (s == NATS_NOT_FOUND && jerr != JSStreamNotFoundErr) return Status::success();
    }
    if (s != NATS_OK) return failure(fmt::format("reading the key {}", key), s, jerr);
    return Status::success();
  }

  struct Published {
    natsStatus status = NATS_OK;
    jsErrCode jerr = kNoJsError;
    Revision revision = 0;
    std::optional<Error> said;  // the answer, where the store found it (over status and jerr)
  };

  // Publish value (or, with marker, the delete marker) on key's subject, expecting
  // the subject's last sequence to be `last` (0: no expectation) or, with none_before,
  // expecting the subject to hold no message; and, when stream_last is not 0, the
  // whole stream's last sequence to be stream_last.
  Published publish(const Link& l, std::string_view key, std::string_view value, Revision last, bool none_before,
                    bool marker, Revision stream_last = 0) const {
    Published out;
    std::string subj = subject(key);
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.ExpectStream = stream.c_str();
    po.MaxWait = request_ms;
    if (none_before) {
      po.ExpectNoMessage = true;
    } else {
      po.ExpectLastSubjectSeq = last;
    }
    po.ExpectLastSeq = stream_last;
    PubAckHandle ack;
    MsgHandle msg;
    out.status = natsMsg_Create(&msg.p, subj.c_str(), nullptr, value.data(), static_cast<int>(value.size()));
    if (out.status == NATS_OK && marker) out.status = natsMsgHeader_Set(msg.p, kOperationHeader, kDeleteOperation);
    if (out.status == NATS_OK) out.status = js_PublishMsg(&ack.p, l.js, msg.p, &po, &out.jerr);
    if (out.status == NATS_OK) out.revision = ack.p->Sequence;
    return out;
  }

  // The stream's last sequence, as its leader answers it.
  natsStatus stream_last(const Link& l, Revision& out, jsErrCode& jerr) const {
    StreamInfoHandle si;
    natsStatus s = js_GetStreamInfo(&si.p, l.js, stream.c_str(), nullptr, &jerr);
    if (s == NATS_OK) out = si.p->State.LastSeq;
    return s;
  }

  // A write expecting key's last sequence to be last (> 0): update, delete, create on
  // a delete marker. A server that fences other writers needs only that expectation;
  // any other gets the stream's too (the header says why).
  Published conditional(const Link& l, std::string_view key, std::string_view value, Revision last, bool marker) {
    if (fenced) return publish(l, key, value, last, false, marker);
    if (refuse_unfenced && replicated_now(l)) {
      warn_unfenced();
      Published p;
      p.said = Error{Errc::unsupported,
                     fmt::format("the NATS bucket {} is replicated on a server that does not fence other writers "
                                 "(before 2.9.21), and writes there are refused as asked",
                                 bucket)};
      return p;
    }
    return serial(l, key, value, last, marker);
  }

  // The write with the stream's expectation: first the key's own revision (nothing
  // written since), else the last sequence the stream's leader gives; a miss of that
  // alone, the key still at last, tried again with a growing pause within request_ms.
  Published serial(const Link& l, std::string_view key, std::string_view value, Revision last, bool marker) const {
    const int64_t until = steady_ms() + request_ms;
    Revision expected_stream = last;
    int64_t pause = 0;
    thread_local std::minstd_rand jitter(std::random_device{}());
    for (int attempt = 1;; ++attempt) {
      Published p = publish(l, key, value, last, false, marker, expected_stream);
      if (p.status == NATS_OK || !lost_race(p.jerr)) return p;
      MsgHandle msg;
      if (Status st = last_message(l, key, msg); !st.ok()) {
        p.said = Error{st.code(), fmt::format("the write was refused as the stream moved, and reading the key again "
                                              "failed: {}",
                                              st.error().message)};
        return p;
      }
      if (msg.p == nullptr || natsMsg_GetSequence(msg.p) != last) return p;  // the key moved: changed
      if (steady_ms() >= until) {
        p.said = Error{Errc::store, fmt::format("other writes to the NATS bucket {} kept moving its stream for {} ms "
                                                "({} tries); the key {} is still at revision {} and the write did "
                                                "not land",
                                                bucket, request_ms, attempt, key, last)};
        return p;
      }
      if (pause > 0) {
        std::uniform_int_distribution<int64_t> d(pause / 2 + 1, pause);
        std::this_thread::sleep_for(std::chrono::milliseconds(d(jitter)));
      }
      pause = std::min(std::max(pause * 2, kSerialPauseMs), kSerialPauseMostMs);
      jsErrCode jerr = kNoJsError;
      if (natsStatus s = stream_last(l, expected_stream, jerr); s != NATS_OK) {
        p.said = failure("reading the stream's last revision", s, jerr);
        return p;
      }
    }
  }

  // What became of a conditional write that did not land: a lost race (changed, or
  // exists for a create), no answer (unknown: it may have landed), or a failure.
  Error write_error(std::string_view doing, std::string_view key, Revision revision, const Published& p) const {
    if (p.said) return *p.said;
    if (lost_race(p.jerr)) {
      return Error{Errc::changed, fmt::format("the key {} is no longer at revision {}", key, revision)};
    }
    if (p.status == NATS_NO_RESPONDERS) {
      return Error{Errc::unknown_outcome, fmt::format("{} in the NATS bucket {} at {}: nothing answered the write (a "
                                                      "leader change, or the bucket is gone)",
                                                      doing, bucket, servers)};
    }
    if (p.jerr == kExpectationNotReady || p.status == NATS_TIMEOUT || connection_lost(p.status)) {
      Error e = failure(doing, p.status, p.jerr);
      e.code = Errc::unknown_outcome;
      e.message += " (the write may have landed)";
      return e;
    }
    return failure(doing, p.status, p.jerr);
  }

  // A create whose first publish (expecting no message) answered p: its revision, or,
  // where the subject holds a message, a value (the key exists) or a delete marker
  // (it does not, and the create lands on top of that very marker).
  Result<Revision> create_after(const Link& l, std::string_view key, std::string_view value, Published p) {
    for (int attempt = 0; attempt < kCreateTries; ++attempt) {
      if (p.status == NATS_OK && !p.said) return p.revision;
      if (p.said || !lost_race(p.jerr)) return write_error(fmt::format("creating the key {}", key), key, 0, p);
      MsgHandle msg;
      if (auto st = last_message(l, key, msg); !st.ok()) return st.error();
      if (msg.p == nullptr) {
        p = publish(l, key, value, 0, true, false);  // purged meanwhile
      } else if (is_marker(msg.p)) {
        p = conditional(l, key, value, natsMsg_GetSequence(msg.p), false);
      } else {
        return Error{Errc::exists,
                     fmt::format("the key {} already holds a value (revision {})", key, natsMsg_GetSequence(msg.p))};
      }
    }
    if (p.status == NATS_OK && !p.said) return p.revision;
    return Error{Errc::changed, fmt::format("creating the key {}: other writers kept changing it", key)};
  }

  // Walk the last message of every key (markers included: visit tells) with an
  // ephemeral pull consumer that delivers the last message per subject, in batches
  // the store asks for, so nothing floods the client however large the bucket.
  // NATS_OK once the consumer has nothing pending.
  //
  // On a cluster that lost a node, the server may place the consumer on the dead
  // node, which never answers its creation nor delivers. So an attempt that goes
  // quiet for request_ms is abandoned and the walk starts over (after restart()
  // drops what was gathered). Every third attempt waits request_ms longer: a large
  // bucket takes the server a while to set a consumer up. The whole walk gives up
  // after list_ms.
  template <typename Restart, typename Visit>
  natsStatus walk(const Link& l, bool meta_only, Restart&& restart, Visit&& visit) const {
    std::string filter = prefix + ">";
    int64_t start = steady_ms();
    for (int attempt = 0;; ++attempt) {
      int64_t patience = std::min(list_ms, request_ms * (1 + attempt / 3));
      natsStatus s = walk_once(l, filter, meta_only, patience, start, visit);
      if (s != NATS_TIMEOUT || steady_ms() - start >= list_ms) return s;
      restart();
    }
  }

  template <typename Visit>
  natsStatus walk_once(const Link& l, const std::string& filter, bool meta_only, int64_t patience, int64_t start,
                       Visit& visit) const {
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = patience;
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream.c_str();
    so.Config.DeliverPolicy = js_DeliverLastPerSubject;
    so.Config.AckPolicy = js_AckNone;
    so.Config.HeadersOnly = meta_only;
    so.Config.MemoryStorage = true;
    // An abandoned consumer goes away by itself.
    so.Config.InactiveThreshold = std::max<int64_t>(2 * request_ms, 5000) * 1'000'000;
    SubHandle sub;
    jsErrCode jerr = kNoJsError;
    uint64_t pending = 0;
    natsStatus s = js_PullSubscribe(&sub.p, l.js, filter.c_str(), nullptr, &jo, &so, &jerr);
    if (s != NATS_OK) return s;
    {
      ConsumerInfoHandle ci;
      s = natsSubscription_GetConsumerInfo(&ci.p, sub.p, &jo, &jerr);
      if (s != NATS_OK) return s;
      pending = ci.p->NumPending;
    }
    if (pending == 0) {  // an empty bucket
      natsSubscription_Unsubscribe(sub.p);
      return NATS_OK;
    }
    for (;;) {
      int64_t left = list_ms - (steady_ms() - start);
      if (left <= 0) return NATS_TIMEOUT;
      int64_t wait = std::min(left, patience);
      // Never ask for more than is pending: a pull request waits for its batch to
      // fill until it expires.
      jsFetchRequest fr;
      jsFetchRequest_Init(&fr);
      fr.Batch = static_cast<int>(std::min<uint64_t>(kListBatch, pending));
      // No byte limit: nats-server 2.10 ends such a request early with a status that
      // nats.c 3.4 takes for a failure. The batch's count bounds it.
      fr.Expires = wait * 1'000'000;
      MsgListHandle list;
      s = natsSubscription_FetchRequest(&list.v, sub.p, &fr);
      if (s != NATS_OK) return s;
      bool done = false;
      for (int i = 0; i < list.v.Count; ++i) {
        natsMsg* m = list.v.Msgs[i];
        MetaHandle meta;
        s = natsMsg_GetMetaData(&meta.p, m);
        if (s != NATS_OK) return s;
        std::string_view subj = natsMsg_GetSubject(m);
        if (subj.size() > prefix.size()) visit(subj.substr(prefix.size()), m, meta.p->Sequence.Stream);
        pending = meta.p->NumPending;
        if (pending == 0) done = true;
      }
      if (done) {
        natsSubscription_Unsubscribe(sub.p);  // deletes the consumer
        return NATS_OK;
      }
    }
  }

  template <typename Restart, typename Visit>
  Status walk_all(std::string_view doing, bool meta_only, Restart&& restart, Visit&& visit) {
    auto l = live();
    if (!l.ok()) return std::move(l).error();
    natsStatus s = walk(**l, meta_only, restart, visit);
    if (s == NATS_OK) return Status::success();
    if (s == NATS_TIMEOUT) {
      return Status(Errc::store, fmt::format("{} of the NATS bucket {} at {}: not complete within {} ms", doing, bucket,
                                             servers, list_ms));
    }
    return failure(doing, s, kNoJsError);
  }
};

NatsStore::NatsStore(std::unique_ptr<Connection> connection) : c_(std::move(connection)) {}
NatsStore::~NatsStore() = default;

bool NatsStore::valid_key(std::string_view key) noexcept {
  if (key.empty() || key.front() == '.' || key.back() == '.') return false;
  char prev = '\0';
  for (char c : key) {
    if (!key_byte(c)) return false;
    if (c == '.' && prev == '.') return false;
    prev = c;
  }
  return true;
}

bool NatsStore::valid_bucket(std::string_view bucket) noexcept {
  if (bucket.empty()) return false;
  for (char c : bucket) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

const std::string& NatsStore::bucket() const noexcept {
  return c_->bucket;
}

NatsServerState NatsStore::server() const {
  NatsServerState s;
  s.fenced = c_->fenced;
  std::lock_guard lock(c_->version_mu);
  s.version = c_->version;
  return s;
}

namespace {

// What open refuses before it connects: a bucket name, history, replicas, timeouts, TLS
// files or server URLs out of range.
Status check_nats_options(const NatsOptions& o) {
  if (!NatsStore::valid_bucket(o.bucket)) {
    return Error{Errc::invalid_argument, fmt::format("the NATS bucket name \"{}\" is not [A-Za-z0-9_-]+", o.bucket)};
  }
  if (o.history < 1 || o.history > 64) {
    return Error{Errc::invalid_argument, fmt::format("the NATS bucket history {} is not 1 to 64", o.history)};
  }
  if (o.replicas < 1 || o.replicas > 5) {
    return Error{Errc::invalid_argument, fmt::format("the NATS bucket replicas {} is not 1 to 5", o.replicas)};
  }
  if (o.connect_timeout.count() <= 0 || o.request_timeout.count() <= 0 || o.list_timeout.count() <= 0 ||
      o.reconnect_wait.count() < 0) {
    return Error{Errc::invalid_argument, "the NATS timeouts must be positive"};
  }
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return Error{Errc::invalid_argument, "a NATS client certificate needs both its certificate and key files"};
  }
  for (const auto& u : o.urls) {
    if (u.empty() || u.find(',') != std::string::npos) {
      return Error{Errc::invalid_argument, fmt::format("\"{}\" is not one NATS server URL", shown_urls({u}))};
    }
  }

  return Status::success();
}

}  // namespace

// The client's options: servers in order, name, timeouts, no reconnecting of nats.c's
// own, credentials and TLS.
Status NatsStore::Connection::configure(const NatsOptions& o) {
  auto setup_error = [&](std::string_view what, natsStatus s) {
    return Error{Errc::store, fmt::format("connecting to NATS at {}: {}: {}", servers, what, nats_detail(s))};
  };

  natsStatus s = natsOptions_Create(&opts);
  if (s != NATS_OK) return setup_error("creating the options", s);
  std::vector<const char*> urls;
  if (o.urls.empty()) {
    urls.push_back("nats://127.0.0.1:4222");
  } else {
    for (const auto& u : o.urls) urls.push_back(u.c_str());
  }
  s = natsOptions_SetServers(opts, urls.data(), static_cast<int>(urls.size()));
  if (s != NATS_OK) {
    return Error{Errc::invalid_argument, fmt::format("the NATS server list {}: {}", servers, nats_detail(s))};
  }
  // Servers in the order given: the first is the one the caller means.
  s = natsOptions_SetNoRandomize(opts, true);
  if (s == NATS_OK) s = natsOptions_SetName(opts, o.name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, o.connect_timeout.count());
  // The store reconnects by itself (see the top of this file).
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, false);
  if (s != NATS_OK) return setup_error("setting the options", s);

  if (!o.credentials_file.empty()) {
    s = natsOptions_SetUserCredentialsFromFiles(opts, o.credentials_file.c_str(), nullptr);
    if (s != NATS_OK) return setup_error(fmt::format("the credentials file {}", o.credentials_file), s);
  }
  if (o.tls) {
    s = natsOptions_SetSecure(opts, true);
    if (s != NATS_OK) return setup_error("enabling TLS", s);
  }
  if (!o.tls_ca_file.empty()) {
    s = natsOptions_LoadCATrustedCertificates(opts, o.tls_ca_file.c_str());
    if (s != NATS_OK) return setup_error(fmt::format("the TLS CA file {}", o.tls_ca_file), s);
  }
  if (!o.tls_cert_file.empty()) {
    s = natsOptions_LoadCertificatesChain(opts, o.tls_cert_file.c_str(), o.tls_key_file.c_str());
    if (s != NATS_OK) {
      return setup_error(fmt::format("the TLS certificate {} and key {}", o.tls_cert_file, o.tls_key_file), s);
    }
  }
  return Status::success();
}

// The bucket: looked up first, so that an existing bucket is used as it is (never
// reconfigured by a client that happens to pass other settings); created only when
// asked to.
Status NatsStore::Connection::find_bucket(Link& link_, const NatsOptions& o) {
  StreamInfoHandle si;
  jsErrCode jerr = kNoJsError;
  natsStatus s = js_GetStreamInfo(&si.p, link_.js, stream.c_str(), nullptr, &jerr);
  bool missing = s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr;
  if (s != NATS_OK && !missing) return failure("looking the bucket up", s, jerr);
  if (missing && !o.create_bucket) {
    return Error{Errc::store, fmt::format("the NATS bucket {} does not exist at {} (nothing was made; {} makes it)",
                                          bucket, servers, o.create_name.empty() ? "creation" : o.create_name)};
  }
  if (missing) {
    kvConfig cfg;
    kvConfig_Init(&cfg);
    cfg.Bucket = bucket.c_str();
    cfg.History = static_cast<uint8_t>(o.history);
    cfg.Replicas = o.replicas;
    cfg.StorageType = js_FileStorage;
    KvHandle created;
    s = js_CreateKeyValue(&created.p, link_.js, &cfg);
    if (s != NATS_OK) {
      return failure(fmt::format("creating the bucket (history {}, replicas {})", o.history, o.replicas), s,
                     kNoJsError);
    }
  } else if (si.p->Config == nullptr || si.p->Config->MaxMsgsPerSubject < 1) {
    return Error{Errc::store, fmt::format("the stream {} at {} is not a key/value bucket", stream, servers)};
  }
  if (missing ? o.replicas > 1 : si.p->Config->Replicas > 1) warn_unfenced();
  return Status::success();
}

Result<std::unique_ptr<NatsStore>> NatsStore::open(const NatsOptions& o) {
  if (Status st = check_nats_options(o); !st.ok()) return st.error();
  auto c = std::make_unique<Connection>();
  c->bucket = o.bucket;
  c->stream = "KV_" + o.bucket;
  c->prefix = "$KV." + o.bucket + ".";
  c->servers = o.urls.empty() ? std::string("nats://127.0.0.1:4222") : shown_urls(o.urls);
  c->request_ms = o.request_timeout.count();
  c->list_ms = o.list_timeout.count();
  c->reconnect_ms = o.reconnect_wait.count();
  c->direct_reads = o.direct_reads;
  c->connect_ms = o.connect_timeout.count();
  c->refuse_unfenced = o.refuse_unfenced;
  c->note = o.note;

  if (Status st = c->configure(o); !st.ok()) return st.error();
  std::shared_ptr<Link> link;
  {
    std::lock_guard lock(c->mu);
    auto connected = c->connect_locked(c->slots[Connection::requests]);
    if (!connected.ok()) return std::move(connected).error();
    link = std::move(connected).value();
  }

  if (Status st = c->find_bucket(*link, o); !st.ok()) return st.error();
  return std::unique_ptr<NatsStore>(new NatsStore(std::move(c)));
}

Result<std::optional<StoreEntry>> NatsStore::get(std::string_view key) {
  if (auto st = check_key(key); !st.ok()) return st.error();
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  MsgHandle msg;
  if (auto st = c_->last_message(**l, key, msg); !st.ok()) return st.error();
  if (msg.p == nullptr || is_marker(msg.p)) return std::optional<StoreEntry>();
  StoreEntry e;
  const char* data = natsMsg_GetData(msg.p);
  int len = natsMsg_GetDataLength(msg.p);
  if (data != nullptr && len > 0) e.value.assign(data, static_cast<std::size_t>(len));
  e.revision = natsMsg_GetSequence(msg.p);
  if (e.revision == 0) {
    return Error{Errc::store,
                 fmt::format("reading the key {} in the NATS bucket {}: the server gave no revision", key, c_->bucket)};
  }
  return std::optional<StoreEntry>(std::move(e));
}

Result<Revision> NatsStore::update(std::string_view key, std::string_view value, Revision revision) {
  if (auto st = check_write(key, value); !st.ok()) return st.error();
  if (revision == 0) {
    return Error{Errc::changed, fmt::format("the key {} is not at revision 0: no stored value is", key)};
  }
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->conditional(**l, key, value, revision, false);
  if (p.status == NATS_OK && !p.said) return p.revision;
  return c_->write_error(fmt::format("updating the key {}", key), key, revision, p);
}

Result<Revision> NatsStore::create(std::string_view key, std::string_view value) {
  if (auto st = check_write(key, value); !st.ok()) return st.error();
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  return c_->create_after(**l, key, value, c_->publish(**l, key, value, 0, true, false));
}

Status NatsStore::remove(std::string_view key, Revision revision) {
  if (auto st = check_key(key); !st.ok()) return st;
  if (revision == 0) {
    return Status(Errc::changed, fmt::format("the key {} is not at revision 0: no stored value is", key));
  }
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->conditional(**l, key, {}, revision, true);
  if (p.status == NATS_OK && !p.said) return Status::success();
  return c_->write_error(fmt::format("deleting the key {}", key), key, revision, p);
}

Result<Revision> NatsStore::put(std::string_view key, std::string_view value) {
  if (auto st = check_write(key, value); !st.ok()) return st.error();
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->publish(**l, key, value, 0, false, false);
  if (p.status == NATS_OK) return p.revision;
  return c_->failure(fmt::format("writing the key {}", key), p.status, p.jerr);
}

namespace {

// A bulk read's patience: how long one wait for the server lasts before it is noted.
constexpr int64_t kNoteAfterMs = 1000;

// Writes in flight over one connection: JetStream async publishes, each carrying the
// expected last subject sequence (the revision read), acknowledged by the server in
// a callback on nats.c's thread. Outcomes are given back in the order sent.
//
// Every write registered here is resolved exactly once: by its acknowledgement (or
// nats.c's timeout for it, after request_ms), or by taking it back from nats.c with
// the pending list when the connection is lost or the pipeline closes. Nothing is
// resent: a write taken back is unknown.
//
// On a server that does not fence other writers (see the header), the pipeline is
// given `serial`, which performs one write with the stream's expectation, and
// `replicated`, which reads the bucket's replicas: it sends writes asynchronously
// while the bucket has one replica (read when it opens and at most a second apart),
// and each through `serial`, when it is sent, from the moment it has more.
//
// A create is sent expecting no message on the key's subject. When the subject holds
// one, whether it is a value (the key exists: the create's outcome) or a delete marker
// is read with a JetStream message get of the subject's last message, sent to an inbox
// of the pipeline's without waiting, all the refused creates' reads at once, their
// answers taken on the caller's thread as next() reaches them: an import of keys that
// exist waits about one read, not one a key. A marker, no message, or a read that
// failed hands the create to `create` (the store's own create, on the caller's
// thread): a delete marker is written over at its revision, a value is the key's
// existence. Nothing that may have landed goes there.
struct SerialHooks {
  std::function<WriteOutcome(std::string_view key, std::string_view value, Revision revision, bool marker)> serial;
  std::function<bool()> replicated;
  std::function<WriteOutcome(std::string_view key, std::string_view value)> create;
};

class NatsPipeline final : public WritePipeline {
 public:
  NatsPipeline(std::shared_ptr<Link> link, std::string prefix, std::string stream, std::string bucket,
               int64_t request_ms, const PipelineOptions& o, SerialHooks hooks = {})
      : link_(std::move(link)),
        prefix_(std::move(prefix)),
        stream_(std::move(stream)),
        bucket_(std::move(bucket)),
        request_ms_(request_ms),
        note_(o.note),
        hooks_(std::move(hooks)) {
    if (hooks_.replicated) {
      serial_now_ = hooks_.replicated();
      checked_ms_ = steady_ms();
    }
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = request_ms_;
    // The window is kept below; nats.c's own limit only backs it up, so never stalls.
    jo.PublishAsync.MaxPending = static_cast<int64_t>(std::max<std::size_t>(o.window, 1)) + 16;
    jo.PublishAsync.AckHandler = &NatsPipeline::on_ack;
    jo.PublishAsync.AckHandlerClosure = this;
    open_ = natsConnection_JetStream(&js_, link_->nc, &jo);
  }
  NatsPipeline(const NatsPipeline&) = delete;
  NatsPipeline& operator=(const NatsPipeline&) = delete;

  ~NatsPipeline() override {
    take_back("the store closed its pipeline before the acknowledgement came");
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return sent_.empty(); });  // a callback in progress finishes
    lock.unlock();
    if (reads_ != nullptr) {
      natsSubscription_Unsubscribe(reads_);
      natsSubscription_Destroy(reads_);
    }
    jsCtx_Destroy(js_);
  }

  void update(std::string_view key, std::string_view value, Revision revision) override {
    send(key, value, revision, false);
  }
  void remove(std::string_view key, Revision revision) override { send(key, {}, revision, true); }
  void create(std::string_view key, std::string_view value) override { send(key, value, 0, false, true); }

  std::size_t in_flight() const override {
    std::lock_guard lock(mu_);
    return slots_.size();
  }
  std::size_t ready() const override {
    std::lock_guard lock(mu_);
    return slots_.empty() || !slots_.front().resolved ? 0 : 1;
  }
  bool broken() const override {
    std::lock_guard lock(mu_);
    return broken_ || natsConnection_Status(link_->nc) != NATS_CONN_STATUS_CONNECTED;
  }

  std::optional<WriteOutcome> next() override {
    std::unique_lock lock(mu_);
    if (slots_.empty()) return std::nullopt;
    int64_t waited = 0;
    while (!slots_.front().resolved) {
      // nats.c times each write out after request_ms; a lost connection is noticed
      // here, and what it still holds is taken back at once.
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (slots_.front().resolved) break;
      waited += 100;
      if (natsConnection_Status(link_->nc) != NATS_CONN_STATUS_CONNECTED) {
        lock.unlock();
        take_back("the connection to the server was lost before the acknowledgement came");
        lock.lock();
        continue;
      }
      if (waited == kNoteAfterMs && note_) {
        std::string line = fmt::format(
            "waiting {} ms for the server to acknowledge the write to {} in the NATS bucket {} ({} in "
            "flight; it is unknown after {} ms)",
            waited, slots_.front().key, bucket_, slots_.size(), request_ms_);
        lock.unlock();
        note_(line);
        lock.lock();
      }
    }
    if (slots_.front().lookup != Lookup::none) {
      const std::uint64_t seq = slots_.front().seq;
      lock.unlock();
      look_up(seq);
      lock.lock();
    }
    Slot slot = std::move(slots_.front());
    slots_.pop_front();
    lock.unlock();
    if (slot.lookup == Lookup::value) {
      return WriteOutcome{
          WriteOutcome::Kind::changed, 0,
          Error{Errc::exists, fmt::format("the key {} already holds a value (revision {})", slot.key, slot.found)}};
    }
    if (slot.create && slot.outcome.kind == WriteOutcome::Kind::changed && hooks_.create) {
      return hooks_.create(slot.key, slot.value);  // a marker, or the read failed
    }
    return std::move(slot.outcome);
  }

 private:
  // Where the read of a refused create's subject is: wanted (refused, not asked
  // yet), asked, answered with a value (found: its revision), or with anything else.
  enum class Lookup : std::uint8_t { none, wanted, asked, value, other };

  struct Slot {
    std::uint64_t seq = 0;
    std::string key;
    std::string value;  // a create's, kept for its second try
    bool create = false;
    bool resolved = false;
    Lookup lookup = Lookup::none;
    Revision found = 0;
    WriteOutcome outcome;
  };

  // The slot of seq while it is in flight; nullptr once next() gave it. Under mu_.
  Slot* slot_of(std::uint64_t seq) {
    if (slots_.empty() || seq < slots_.front().seq || seq - slots_.front().seq >= slots_.size()) return nullptr;
    return &slots_[seq - slots_.front().seq];
  }

  // The answers to the reads of refused creates, until seq's came (or request_ms
  // passed, or the connection failed: the store's own create then reads again). Every
  // read wanted is asked first.
  void look_up(std::uint64_t seq) {
    ask_wanted();
    const int64_t until = nats_Now() + request_ms_;
    for (;;) {
      {
        std::lock_guard lock(mu_);
        const Slot* slot = slot_of(seq);
        if (slot == nullptr || slot->lookup != Lookup::asked) return;
      }
      const int64_t left = until - nats_Now();
      natsMsg* reply = nullptr;
      if (left <= 0 || reads_ == nullptr || natsSubscription_NextMsg(&reply, reads_, left) != NATS_OK) return;
      take_answer(reply);
      natsMsg_Destroy(reply);
    }
  }

  // Send the reads of the creates refused since the last call: a JetStream message get
  // of the subject's last message, answered to the inbox, under the slot's sequence.
  void ask_wanted() {
    std::vector<std::pair<std::uint64_t, std::string>> ask;
    {
      std::lock_guard lock(mu_);
      for (std::uint64_t seq : wanted_)
        if (const Slot* slot = slot_of(seq); slot != nullptr) ask.emplace_back(seq, slot->key);
      wanted_.clear();
    }
    if (ask.empty()) return;
    if (reads_ == nullptr) {
      natsInbox* inbox = nullptr;
      if (natsInbox_Create(&inbox) != NATS_OK) return;
      inbox_ = inbox;
      natsInbox_Destroy(inbox);
      if (natsConnection_SubscribeSync(&reads_, link_->nc, (inbox_ + ".*").c_str()) != NATS_OK) {
        reads_ = nullptr;
        return;
      }
    }
    const std::string api = "$JS.API.STREAM.MSG.GET." + stream_;
    for (const auto& [seq, key] : ask) {
      std::string body = fmt::format(R"({{"last_by_subj":"{}{}"}})", prefix_, key);
      std::string reply = fmt::format("{}.{}", inbox_, seq);
      if (natsConnection_PublishRequestString(link_->nc, api.c_str(), reply.c_str(), body.c_str()) != NATS_OK) continue;
      std::lock_guard lock(mu_);
      if (Slot* slot = slot_of(seq); slot != nullptr) slot->lookup = Lookup::asked;
    }
  }

  // An answer to a read: the slot its subject names learns whether its key holds a
  // value (a message that is no delete marker).
  void take_answer(natsMsg* reply) {
    std::string_view subject = natsMsg_GetSubject(reply);
    std::uint64_t seq = 0;
    if (subject.size() <= inbox_.size() + 1) return;
    subject.remove_prefix(inbox_.size() + 1);
    if (std::from_chars(subject.data(), subject.data() + subject.size(), seq).ec != std::errc()) return;
    Revision found = 0;
    const bool value =
        holds_value(std::string_view(natsMsg_GetData(reply), static_cast<std::size_t>(natsMsg_GetDataLength(reply))),
                    parser_, found);
    std::lock_guard lock(mu_);
    if (Slot* slot = slot_of(seq); slot != nullptr && slot->lookup == Lookup::asked) {
      slot->lookup = value ? Lookup::value : Lookup::other;
      slot->found = found;
    }
  }

  void send(std::string_view key, std::string_view value, Revision revision, bool marker, bool create = false) {
    const bool serial = serial_due();
    std::unique_lock lock(mu_);
    Slot& slot = slots_.emplace_back();
    slot.seq = next_seq_++;
    slot.key.assign(key);
    slot.create = create;
    if (create) slot.value.assign(value);
    if (open_ != NATS_OK) {
      resolve_locked(slot.seq,
                     failed(fmt::format("opening the write pipeline for the NATS bucket {}", bucket_), open_));
      return;
    }
    if (!NatsStore::valid_key(key)) {
      resolve_locked(slot.seq,
                     WriteOutcome{WriteOutcome::Kind::failed, 0,
                                  Error{Errc::invalid_argument, fmt::format("\"{}\" is not a NATS key", key)}});
      return;
    }
    if (revision == 0 && !create) {
      resolve_locked(slot.seq, WriteOutcome{WriteOutcome::Kind::changed, 0,
                                            Error{Errc::changed, fmt::format("the key {} is not at revision 0: no "
                                                                             "stored value is",
                                                                             key)}});
      return;
    }
    if (serial) {
      std::uint64_t seq = slot.seq;
      slot.create = false;  // the store's create below is the whole of it
      lock.unlock();
      WriteOutcome o = create ? hooks_.create(key, value) : hooks_.serial(key, value, revision, marker);
      lock.lock();
      resolve_locked(seq, std::move(o));
      return;
    }
    std::string subject = prefix_ + std::string(key);
    natsMsg* msg = nullptr;
    natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, value.data(), static_cast<int>(value.size()));
    if (s == NATS_OK && marker) s = natsMsgHeader_Set(msg, kOperationHeader, kDeleteOperation);
    if (s != NATS_OK) {
      natsMsg_Destroy(msg);
      resolve_locked(slot.seq, failed(fmt::format("writing the key {}", key), s));
      return;
    }
    sent_[msg] = slot.seq;  // before the publish: its acknowledgement may come first
    std::uint64_t seq = slot.seq;
    lock.unlock();
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.ExpectStream = stream_.c_str();
    if (create) {
      po.ExpectNoMessage = true;
    } else {
      po.ExpectLastSubjectSeq = revision;
    }
    po.MaxWait = request_ms_;
    natsMsg* handed = msg;
    s = js_PublishMsgAsync(js_, &handed, &po);
    if (s == NATS_OK) handed_any_ = true;
    if (s != NATS_OK) {
      // Not handed over (handed is still msg). A lost connection is no answer of the
      // server's: unknown, as every write the connection took with it; any other
      // refusal of nats.c's is a failure (it was never sent).
      lock.lock();
      sent_.erase(msg);
      WriteOutcome o = failed(fmt::format("writing the key {}", key), s);
      if (connection_lost(s)) {
        o.kind = WriteOutcome::Kind::unknown;
        o.error.code = Errc::unknown_outcome;
      }
      resolve_locked(seq, std::move(o));
      lock.unlock();
      natsMsg_Destroy(handed);
      cv_.notify_all();
    }
  }

  static void on_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
    auto* self = static_cast<NatsPipeline*>(closure);
    {
      std::lock_guard lock(self->mu_);
      auto it = self->sent_.find(msg);
      if (it != self->sent_.end()) {
        WriteOutcome o;
        if (pa != nullptr) {
          o.kind = WriteOutcome::Kind::done;
          o.revision = pa->Sequence;
        } else {
          o = self->refused(msg, pae);
          Slot* slot = self->slot_of(it->second);
          if (o.kind == WriteOutcome::Kind::changed && slot != nullptr && slot->create && self->hooks_.create) {
            slot->lookup = Lookup::wanted;
            self->wanted_.push_back(it->second);
          }
        }
        self->resolve_locked(it->second, std::move(o));
        self->sent_.erase(it);
      }
      self->cv_.notify_all();
    }
    natsMsg_Destroy(msg);
  }

  // What a negative acknowledgement means: a lost race, a refusal (the write did not
  // land), or no acknowledgement at all (it may have landed).
  WriteOutcome refused(natsMsg* msg, const jsPubAckErr* pae) const {
    std::string_view subject = natsMsg_GetSubject(msg);
    std::string key(subject.substr(std::min(subject.size(), prefix_.size())));
    WriteOutcome o;
    natsStatus s = pae != nullptr ? pae->Err : NATS_ERR;
    jsErrCode jerr = pae != nullptr ? pae->ErrCode : kNoJsError;
    std::string text = pae != nullptr && pae->ErrText != nullptr ? pae->ErrText : natsStatus_GetText(s);
    if (lost_race(jerr)) {
      o.kind = WriteOutcome::Kind::changed;
      o.error = Error{Errc::changed, fmt::format("the key {} is no longer at the revision read", key)};
    } else if (s == NATS_TIMEOUT) {
      o.kind = WriteOutcome::Kind::unknown;
      o.error = Error{Errc::unknown_outcome,
                      fmt::format("the server did not acknowledge the write to {} within {} ms", key, request_ms_)};
    } else if (jerr == kExpectationNotReady) {
      o.kind = WriteOutcome::Kind::unknown;
      o.error = Error{Errc::unknown_outcome,
                      fmt::format("the NATS bucket {} could not check the write to {} now (a leader change: "
                                  "JetStream error {}); it may have landed",
                                  bucket_, key, static_cast<int>(jerr))};
    } else if (s == NATS_NO_RESPONDERS) {
      // Nothing took the write: no stream leader now (a leader change), or no bucket.
      o.kind = WriteOutcome::Kind::unknown;
      o.error = Error{Errc::unknown_outcome,
                      fmt::format("nothing answered the write to {} in the NATS bucket {} (a leader change, or the "
                                  "bucket is gone)",
                                  key, bucket_)};
    } else if (jerr != kNoJsError) {
      o.kind = WriteOutcome::Kind::failed;
      o.error = Error{Errc::store,
                      fmt::format("the NATS bucket {} refused the write to {}: {}{}", bucket_, key, text,
                                  jerr != kNoJsError ? fmt::format(" (JetStream error {})", static_cast<int>(jerr))
                                                     : std::string())};
    } else {
      o.kind = WriteOutcome::Kind::unknown;
      o.error =
          Error{Errc::unknown_outcome, fmt::format("the write to {} in the NATS bucket {}: {}", key, bucket_, text)};
    }
    return o;
  }

  WriteOutcome failed(std::string doing, natsStatus s) const {
    return WriteOutcome{
        WriteOutcome::Kind::failed, 0,
        Error{Errc::store, fmt::format("{} in the NATS bucket {}: {}", doing, bucket_, nats_detail(s))}};
  }

  void resolve_locked(std::uint64_t seq, WriteOutcome o) {
    if (slots_.empty() || seq < slots_.front().seq) return;
    Slot& slot = slots_[seq - slots_.front().seq];
    slot.resolved = true;
    if (o.kind == WriteOutcome::Kind::failed || o.kind == WriteOutcome::Kind::unknown) broken_ = true;
    slot.outcome = std::move(o);
  }

  // Take every write nats.c still holds back from it: each is unknown (it may have
  // reached the server).
  void take_back(std::string_view why) {
    // nats.c keeps its pending list only from its first async publish on.
    if (js_ == nullptr || !handed_any_) return;
    MsgListHandle pending;
    if (js_PublishAsyncGetPendingList(&pending.v, js_) != NATS_OK) return;
    std::lock_guard lock(mu_);
    for (int i = 0; i < pending.v.Count; ++i) {
      auto it = sent_.find(pending.v.Msgs[i]);
      if (it == sent_.end()) continue;
      const Slot& slot =
          slots_.empty() || it->second < slots_.front().seq ? Slot{} : slots_[it->second - slots_.front().seq];
      resolve_locked(it->second,
                     WriteOutcome{WriteOutcome::Kind::unknown, 0,
                                  Error{Errc::unknown_outcome, fmt::format("the write to {} in the NATS bucket {}: {}",
                                                                           slot.key, bucket_, why)}});
      sent_.erase(it);
    }
    cv_.notify_all();
  }

  // Is this write to go through the serial hook? Reads the replicas again when a
  // second has passed since the last read; once replicated, always.
  bool serial_due() {
    if (!hooks_.serial) return false;
    if (!serial_now_ && steady_ms() - checked_ms_ >= kReplicasCheckMs) {
      serial_now_ = hooks_.replicated();
      checked_ms_ = steady_ms();
    }
    return serial_now_;
  }

  std::shared_ptr<Link> link_;
  std::string prefix_, stream_, bucket_;
  int64_t request_ms_;
  StoreNote note_;
  SerialHooks hooks_;
  bool serial_now_ = false;  // the caller's thread only
  int64_t checked_ms_ = 0;
  jsCtx* js_ = nullptr;
  natsStatus open_ = NATS_OK;
  bool handed_any_ = false;  // the caller's thread only
  bool broken_ = false;      // under mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Slot> slots_;  // in the order sent
  std::uint64_t next_seq_ = 0;
  std::unordered_map<natsMsg*, std::uint64_t> sent_;  // handed to nats.c, not resolved yet
  std::vector<std::uint64_t> wanted_;                 // refused creates whose reads are not sent yet (under mu_)
  natsSubscription* reads_ = nullptr;                 // the reads' answers (the caller's thread only)
  std::string inbox_;
  simdjson::dom::parser parser_;
};

}  // namespace

std::unique_ptr<WritePipeline> NatsStore::pipeline(const PipelineOptions& options) {
  auto l = c_->live(&options.note, Connection::writes);
  if (!l.ok()) {
    // Every write sent through it fails at once, saying why.
    class Down final : public WritePipeline {
     public:
      explicit Down(Error e) : e_(std::move(e)) {}
      void update(std::string_view, std::string_view, Revision) override { ++n_; }
      void remove(std::string_view, Revision) override { ++n_; }
      void create(std::string_view, std::string_view) override { ++n_; }
      std::size_t in_flight() const override { return n_; }
      std::size_t ready() const override { return n_; }
      std::optional<WriteOutcome> next() override {
        if (n_ == 0) return std::nullopt;
        --n_;
        return WriteOutcome{WriteOutcome::Kind::failed, 0, e_};
      }

     private:
      Error e_;
      std::size_t n_ = 0;
    };
    return std::make_unique<Down>(std::move(l).error());
  }
  SerialHooks hooks;
  if (!c_->fenced) {
    // A server that does not fence other writers (see the header): the bucket's
    // replicas decide, read on the requests' connection.
    Connection* c = c_.get();
    hooks.replicated = [c] {
      auto link = c->live();
      bool replicated = !link.ok() || c->replicated_now(**link);
      if (replicated) c->warn_unfenced();
      return replicated;
    };
    hooks.serial = [c](std::string_view key, std::string_view value, Revision revision, bool marker) {
      auto link = c->live();
      if (!link.ok()) return WriteOutcome{WriteOutcome::Kind::failed, 0, std::move(link).error()};
      auto p = c->conditional(**link, key, value, revision, marker);
      if (p.status == NATS_OK && !p.said) return WriteOutcome{WriteOutcome::Kind::done, marker ? 0 : p.revision, {}};
      Error e = c->write_error(fmt::format("writing the key {}", key), key, revision, p);
      auto kind = e.code == Errc::changed           ? WriteOutcome::Kind::changed
                  : e.code == Errc::unknown_outcome ? WriteOutcome::Kind::unknown
                                                    : WriteOutcome::Kind::failed;
      return WriteOutcome{kind, 0, std::move(e)};
    };
  }
  // A create the server refused for a message on the subject: read it, and write over
  // a marker (the store's create, from its first answer on).
  Connection* conn = c_.get();
  hooks.create = [conn](std::string_view key, std::string_view value) {
    auto link = conn->live();
    if (!link.ok()) return WriteOutcome{WriteOutcome::Kind::failed, 0, std::move(link).error()};
    Connection::Published refused;
    refused.status = NATS_ERR;
    refused.jerr = JSStreamWrongLastSequenceErr;
    auto r = conn->create_after(**link, key, value, std::move(refused));
    if (r) return WriteOutcome{WriteOutcome::Kind::done, *r, {}};
    auto kind = r.code() == Errc::changed || r.code() == Errc::exists ? WriteOutcome::Kind::changed
                : r.code() == Errc::unknown_outcome                   ? WriteOutcome::Kind::unknown
                                                                      : WriteOutcome::Kind::failed;
    return WriteOutcome{kind, 0, std::move(r).error()};
  };
  return std::make_unique<NatsPipeline>(std::move(l).value(), c_->prefix, c_->stream, c_->bucket, c_->request_ms,
                                        options, std::move(hooks));
}

Status NatsStore::scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options, ScanStats* stats) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  bool filterable = prefix.size() >= 2 && prefix.back() == '.' && valid_key(prefix.substr(0, prefix.size() - 1));
  if (!filterable) {
    // Keys hold only [-/_=.a-zA-Z0-9]: a prefix with another byte names none.
    for (char c : prefix)
      if (!key_byte(c)) return Status::success();
    return Store::scan(prefix, sink, options, stats);
  }
  const StoreNote* note = &options.note;
  auto l = c_->live(note);
  if (!l.ok()) return std::move(l).error();
  Link& link = **l;
  auto kv = c_->kv_of(link);
  if (!kv.ok()) return std::move(kv).error();
  std::string doing = fmt::format("reading the keys {}* of", prefix);
  // The bucket as of its last write now: keys written after it (this scan's caller's
  // own writes among them) are left to the next scan.
  StreamInfoHandle si;
  jsErrCode jerr = kNoJsError;
  natsStatus s = js_GetStreamInfo(&si.p, link.js, c_->stream.c_str(), nullptr, &jerr);
  if (s != NATS_OK) return c_->failure(fmt::format("{} the bucket", doing), s, jerr);
  const uint64_t last = si.p->State.LastSeq;
  // A bucket of history 1 holds one message per key, its last: every message of the
  // prefix, in the stream's order, is each key's last once. Asked for so (the watch's
  // history), the server streams them from the first; asked for each key's last, it
  // first works out the last of every key under the prefix (on 400k messages, most of
  // the read's time before the first value comes).
  const bool one_per_key = si.p->Config != nullptr && si.p->Config->MaxMsgsPerSubject == 1;
  const std::string filter = fmt::format("{}>", prefix);
  const int64_t start = steady_ms();
  auto say = [&](std::string line) {
    if (*note) (*note)(line);
  };
  WatcherHandle w;
  kvWatchOptions wo;
  kvWatchOptions_Init(&wo);
  wo.IgnoreDeletes = true;  // a deleted or purged key holds no value
  wo.IncludeHistory = one_per_key;
  for (int attempt = 1;; ++attempt) {
    s = kvStore_Watch(&w.p, *kv, filter.c_str(), &wo);
    if (s == NATS_OK) break;
    if (s != NATS_TIMEOUT || steady_ms() - start >= c_->list_ms)
      return c_->failure(fmt::format("{} the bucket", doing), s, kNoJsError);
    ++st.retries;
    say(fmt::format("{} the NATS bucket {}: the server did not start the read within {} ms (try {}); asking again",
                    doing, c_->bucket, c_->request_ms, attempt));
  }
  ScanBuffer buffer;
  auto flush = [&]() -> Status {
    if (buffer.size() == 0) return Status::success();
    ++st.batches;
    Status done = sink(buffer.batch());
    buffer.clear();
    return done;
  };
  for (;;) {
    EntryHandle e;
    s = kvWatcher_Next(&e.p, w.p, std::min<int64_t>(kNoteAfterMs, c_->request_ms));
    if (s == NATS_TIMEOUT) {
      int64_t waited = steady_ms() - start;
      ++st.waits;
      if (waited >= c_->list_ms) {
        return Status(Errc::store, fmt::format("{} the NATS bucket {} at {}: not complete within {} ms ({} keys read)",
                                               doing, c_->bucket, c_->servers, c_->list_ms, st.keys));
      }
      say(
          fmt::format("{} the NATS bucket {}: nothing came for {} ms ({} keys read so far); waiting up to {} ms in "
                      "all",
                      doing, c_->bucket, std::min<int64_t>(kNoteAfterMs, c_->request_ms), st.keys, c_->list_ms));
      continue;
    }
    if (s != NATS_OK) return c_->failure(fmt::format("{} the bucket", doing), s, kNoJsError);
    if (e.p == nullptr) break;  // the last of the values the bucket held
    Revision revision = kvEntry_Revision(e.p);
    if (revision > last) {
      ++st.skipped;
      continue;
    }
    std::string_view key = kvEntry_Key(e.p);
    if (!valid_key(key)) {
      // Another client wrote it; no write of this store can name it: left.
      if (st.rejected++ == 0)
        say(fmt::format("{} the NATS bucket {}: the key {} breaks the NATS key rules; it is left as it is", doing,
                        c_->bucket, key));
      continue;
    }
    const void* data = kvEntry_Value(e.p);
    int len = kvEntry_ValueLen(e.p);
    std::string_view value = data != nullptr && len > 0
                                 ? std::string_view(static_cast<const char*>(data), static_cast<std::size_t>(len))
                                 : std::string_view();
    buffer.add(key, value, revision);
    ++st.keys;
    st.bytes += key.size() + value.size();
    if (buffer.full(options)) {
      if (Status done = flush(); !done.ok()) return done;
    }
  }
  return flush();
}

namespace {

// A KV watch on one link: the initial values passed over, then every change.
class NatsKeyWatch final : public KeyWatch {
 public:
  // began_at: the stream's last sequence before the watch was made; what the watch
  // delivers as the bucket's values when it began, written after that, is a change.
  NatsKeyWatch(std::shared_ptr<Link> link, std::string doing, std::function<Error(natsStatus)> failure,
               Revision began_at)
      : link_(std::move(link)), doing_(std::move(doing)), failure_(std::move(failure)), began_at_(began_at) {}
  WatcherHandle w;

  Status next(std::vector<KeyChange>& out, std::int64_t wait_ns) override {
    if (!broken_.ok()) return broken_;
    const int64_t until = steady_ms() + std::max<int64_t>(wait_ns / 1000000, 0);
    const std::size_t had = out.size();
    for (;;) {
      // nats.c leaves a closed connection's subscription quiet: ask the connection.
      if (natsConnection_Status(link_->nc) != NATS_CONN_STATUS_CONNECTED)
        return broken_ = Status(Errc::store, fmt::format("{}: the connection to the server was lost", doing_));
      int64_t left = until - steady_ms();
      // Once a change came, what follows it at once comes in the same call.
      int64_t ms = out.size() > had ? 1 : std::clamp<int64_t>(left, 1, 250);
      EntryHandle e;
      natsStatus s = kvWatcher_Next(&e.p, w.p, ms);
      if (s == NATS_TIMEOUT) {
        if (out.size() > had || steady_ms() >= until) return Status::success();
        continue;
      }
      if (s != NATS_OK) return broken_ = failure_(s);
      if (e.p == nullptr) {  // the last of the values the bucket held when the watch began
        initial_done_ = true;
        continue;
      }
      // A value the bucket held when the watch began is no change; one written after
      // began_at is, though it came before the watch said its values were all there.
      if (!initial_done_ && kvEntry_Revision(e.p) <= began_at_) continue;
      std::string_view key = kvEntry_Key(e.p);
      if (!NatsStore::valid_key(key)) continue;  // another client's: no write of this store can name it
      KeyChange c;
      c.key = std::string(key);
      c.revision = kvEntry_Revision(e.p);
      c.written_unix_ns = kvEntry_Created(e.p);
      if (kvEntry_Operation(e.p) == kvOp_Put) {
        const void* data = kvEntry_Value(e.p);
        int len = kvEntry_ValueLen(e.p);
        c.value.emplace(data != nullptr && len > 0 ? std::string(static_cast<const char*>(data), len) : std::string());
      }
      out.push_back(std::move(c));
      if (out.size() - had >= 4096) return Status::success();
    }
  }

 private:
  std::shared_ptr<Link> link_;
  std::string doing_;
  std::function<Error(natsStatus)> failure_;
  Revision began_at_ = 0;
  bool initial_done_ = false;
  Status broken_;
};

}  // namespace

Result<std::unique_ptr<KeyWatch>> NatsStore::watch_key(std::string_view key, const KeyWatchOptions& options) {
  if (!valid_key(key)) return Error{Errc::invalid_argument, fmt::format("\"{}\" is not a NATS key", key)};
  return kv_watch(key, fmt::format("the key {}", key), options);
}

Result<std::unique_ptr<KeyWatch>> NatsStore::watch(std::string_view prefix, const KeyWatchOptions& options) {
  bool filterable = prefix.size() >= 2 && prefix.back() == '.' && valid_key(prefix.substr(0, prefix.size() - 1));
  if (!filterable) return Store::watch(prefix, options);
  return kv_watch(fmt::format("{}>", prefix), fmt::format("the keys {}*", prefix), options);
}

// A KV watch of the subjects filter names (below the bucket's), said as `named`.
Result<std::unique_ptr<KeyWatch>> NatsStore::kv_watch(std::string_view filter, std::string_view named,
                                                      const KeyWatchOptions& options) {
  auto l = c_->live(&options.note);
  if (!l.ok()) return std::move(l).error();
  auto kv = c_->kv_of(**l);
  if (!kv.ok()) return std::move(kv).error();
  std::string doing = fmt::format("watching {} of the NATS bucket {} at {}", named, c_->bucket, c_->servers);
  Connection* c = c_.get();
  std::string what = fmt::format("watching {}", named);
  // Read before the watch is made: a write after this read is a change, even one the
  // watch delivers among the bucket's values when it began.
  StreamInfoHandle si;
  jsErrCode jerr = kNoJsError;
  natsStatus got = js_GetStreamInfo(&si.p, (*l)->js, c_->stream.c_str(), nullptr, &jerr);
  if (got != NATS_OK) return c_->failure(what, got, jerr);
  auto w = std::make_unique<NatsKeyWatch>(
      *l, doing, [c, what](natsStatus s) { return c->failure(what, s, kNoJsError); }, si.p->State.LastSeq);
  kvWatchOptions wo;
  kvWatchOptions_Init(&wo);
  natsStatus s = kvStore_Watch(&w->w.p, *kv, std::string(filter).c_str(), &wo);
  if (s != NATS_OK) return c_->failure(what, s, kNoJsError);
  return std::unique_ptr<KeyWatch>(std::move(w));
}

Result<std::vector<std::string>> NatsStore::keys() {
  std::vector<std::string> out;
  auto st = c_->walk_all(
      "listing the keys", true, [&] { out.clear(); },
      [&](std::string_view key, natsMsg* m, Revision) {
        if (!is_marker(m)) out.emplace_back(key);
      });
  if (!st.ok()) return st.error();
  return out;
}

Result<std::vector<NatsEntry>> NatsStore::entries() {
  std::vector<NatsEntry> out;
  auto st = c_->walk_all(
      "reading every key", false, [&] { out.clear(); },
      [&](std::string_view key, natsMsg* m, Revision revision) {
        if (is_marker(m)) return;
        NatsEntry n;
        n.key = key;
        const char* v = natsMsg_GetData(m);
        int len = natsMsg_GetDataLength(m);
        if (v != nullptr && len > 0) n.value.assign(v, static_cast<std::size_t>(len));
        n.revision = revision;
        out.push_back(std::move(n));
      });
  if (!st.ok()) return st.error();
  return out;
}

}  // namespace leasejudge
