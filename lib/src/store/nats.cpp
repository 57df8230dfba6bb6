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

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>

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
// Tries of a conditional write on a replicated stream while other keys' writes keep
// moving the stream's last sequence.
constexpr int kSerialTries = 32;

// A key listing fetches this many keys per request, or this many bytes of values.
constexpr int kListBatch = 1024;
constexpr int64_t kListBatchBytes = 8 * 1024 * 1024;

constexpr jsErrCode kNoJsError = static_cast<jsErrCode>(0);

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

// One live connection and its JetStream context. Calls hold it while they run, so a
// reconnection by another thread never pulls it from under them.
struct Link {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  Link() = default;
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;
  ~Link() {
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
  bool direct_reads = false;
  bool replicated = false;  // the bucket's stream has more than one replica

  std::mutex mu;  // guards link and last_try
  std::shared_ptr<Link> link;
  int64_t last_try = 0;

  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    link.reset();
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
  Result<std::shared_ptr<Link>> connect_locked() {
    last_try = nats_Now();
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
    link = fresh;
    return fresh;
  }

  // The live connection, connecting again when the last one was lost; at most one
  // try per reconnect_ms, calls in between fail at once.
  Result<std::shared_ptr<Link>> live() {
    std::shared_ptr<Link> dropped;  // destroyed outside the lock (it joins threads)
    std::unique_lock lock(mu);
    if (link && natsConnection_Status(link->nc) == NATS_CONN_STATUS_CONNECTED) return link;
    dropped = std::move(link);
    if (nats_Now() - last_try < reconnect_ms) {
      return Error{Errc::store, fmt::format("the NATS bucket {} at {}: the connection to the server was lost; "
                                            "reconnecting",
                                            bucket, servers)};
    }
    auto fresh = connect_locked();
    lock.unlock();
    return fresh;
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

  // A write expecting key's last sequence to be last (> 0): update, delete, create
  // on a delete marker. A replicated stream checks that expectation only before it
  // proposes the write (nats-server before 2.9.21), so two writes expecting the same
  // revision could both land. The stream-wide expectation is checked as writes are
  // applied, in their order: so the write also expects the stream's last sequence,
  // first the key's own revision (nothing written since), else the last sequence the
  // stream's leader gives; a miss of the stream's expectation alone, the key still at
  // last, is tried again.
  Published conditional(const Link& l, std::string_view key, std::string_view value, Revision last, bool marker) const {
    if (!replicated) return publish(l, key, value, last, false, marker);
    Revision expected_stream = last;
    Published p;
    for (int attempt = 0; attempt < kSerialTries; ++attempt) {
      p = publish(l, key, value, last, false, marker, expected_stream);
      if (p.status == NATS_OK || p.jerr != JSStreamWrongLastSequenceErr) return p;
      MsgHandle msg;
      if (!last_message(l, key, msg).ok()) return p;
      if (msg.p == nullptr || natsMsg_GetSequence(msg.p) != last) return p;  // the key moved
      jsErrCode jerr = kNoJsError;
      natsStatus s = stream_last(l, expected_stream, jerr);
      if (s != NATS_OK) return Published{s, jerr, 0};
    }
    return p;
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
    int64_t start = nats_Now();
    for (int attempt = 0;; ++attempt) {
      int64_t patience = std::min(list_ms, request_ms * (1 + attempt / 3));
      natsStatus s = walk_once(l, filter, meta_only, patience, start, visit);
      if (s != NATS_TIMEOUT || nats_Now() - start >= list_ms) return s;
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
      int64_t left = list_ms - (nats_Now() - start);
      if (left <= 0) return NATS_TIMEOUT;
      int64_t wait = std::min(left, patience);
      // Never ask for more than is pending: a pull request waits for its batch to
      // fill until it expires.
      jsFetchRequest fr;
      jsFetchRequest_Init(&fr);
      fr.Batch = static_cast<int>(std::min<uint64_t>(kListBatch, pending));
      fr.MaxBytes = kListBatchBytes;
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

Result<std::unique_ptr<NatsStore>> NatsStore::open(const NatsOptions& o) {
  if (!valid_bucket(o.bucket)) {
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

  auto c = std::make_unique<Connection>();
  c->bucket = o.bucket;
  c->stream = "KV_" + o.bucket;
  c->prefix = "$KV." + o.bucket + ".";
  c->servers = o.urls.empty() ? std::string("nats://127.0.0.1:4222") : shown_urls(o.urls);
  c->request_ms = o.request_timeout.count();
  c->list_ms = o.list_timeout.count();
  c->reconnect_ms = o.reconnect_wait.count();
  c->direct_reads = o.direct_reads;

  auto setup_error = [&](std::string_view what, natsStatus s) {
    return Error{Errc::store, fmt::format("connecting to NATS at {}: {}: {}", c->servers, what, nats_detail(s))};
  };

  natsStatus s = natsOptions_Create(&c->opts);
  if (s != NATS_OK) return setup_error("creating the options", s);
  natsOptions* opts = c->opts;
  std::vector<const char*> urls;
  if (o.urls.empty()) {
    urls.push_back("nats://127.0.0.1:4222");
  } else {
    for (const auto& u : o.urls) urls.push_back(u.c_str());
  }
  s = natsOptions_SetServers(opts, urls.data(), static_cast<int>(urls.size()));
  if (s != NATS_OK) {
    return Error{Errc::invalid_argument, fmt::format("the NATS server list {}: {}", c->servers, nats_detail(s))};
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

  std::shared_ptr<Link> link;
  {
    std::lock_guard lock(c->mu);
    auto connected = c->connect_locked();
    if (!connected.ok()) return std::move(connected).error();
    link = std::move(connected).value();
  }

  // Look the bucket up first: an existing bucket is used as it is, never
  // reconfigured by a client that happens to pass other settings.
  StreamInfoHandle si;
  jsErrCode jerr = kNoJsError;
  s = js_GetStreamInfo(&si.p, link->js, c->stream.c_str(), nullptr, &jerr);
  bool missing = s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr;
  if (s != NATS_OK && !missing) return c->failure("looking the bucket up", s, jerr);
  if (missing && !o.create_bucket) {
    return Error{Errc::store, fmt::format("the NATS bucket {} does not exist at {} (create it, or open with "
                                          "bucket creation on)",
                                          c->bucket, c->servers)};
  }
  if (missing) {
    kvConfig cfg;
    kvConfig_Init(&cfg);
    cfg.Bucket = c->bucket.c_str();
    cfg.History = static_cast<uint8_t>(o.history);
    cfg.Replicas = o.replicas;
    cfg.StorageType = js_FileStorage;
    KvHandle created;
    s = js_CreateKeyValue(&created.p, link->js, &cfg);
    if (s != NATS_OK) {
      return c->failure(fmt::format("creating the bucket (history {}, replicas {})", o.history, o.replicas), s,
                        kNoJsError);
    }
  } else if (si.p->Config == nullptr || si.p->Config->MaxMsgsPerSubject < 1) {
    return Error{Errc::store, fmt::format("the stream {} at {} is not a key/value bucket", c->stream, c->servers)};
  }
  c->replicated = missing ? o.replicas > 1 : si.p->Config->Replicas > 1;
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
  if (p.status == NATS_OK) return p.revision;
  if (p.jerr == JSStreamWrongLastSequenceErr) {
    return Error{Errc::changed, fmt::format("the key {} is no longer at revision {}", key, revision)};
  }
  return c_->failure(fmt::format("updating the key {}", key), p.status, p.jerr);
}

Result<Revision> NatsStore::create(std::string_view key, std::string_view value) {
  if (auto st = check_write(key, value); !st.ok()) return st.error();
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->publish(**l, key, value, 0, true, false);
  for (int attempt = 0; attempt < kCreateTries; ++attempt) {
    if (p.status == NATS_OK) return p.revision;
    if (p.jerr != JSStreamWrongLastSequenceErr) {
      return c_->failure(fmt::format("creating the key {}", key), p.status, p.jerr);
    }
    // The subject holds a message: a value (the key exists) or a delete marker
    // (it does not, and the create lands on top of that very marker).
    MsgHandle msg;
    if (auto st = c_->last_message(**l, key, msg); !st.ok()) return st.error();
    if (msg.p == nullptr) {
      p = c_->publish(**l, key, value, 0, true, false);  // purged meanwhile
    } else if (is_marker(msg.p)) {
      p = c_->conditional(**l, key, value, natsMsg_GetSequence(msg.p), false);
    } else {
      return Error{Errc::exists,
                   fmt::format("the key {} already holds a value (revision {})", key, natsMsg_GetSequence(msg.p))};
    }
  }
  if (p.status == NATS_OK) return p.revision;
  return Error{Errc::changed, fmt::format("creating the key {}: other writers kept changing it", key)};
}

Status NatsStore::remove(std::string_view key, Revision revision) {
  if (auto st = check_key(key); !st.ok()) return st;
  if (revision == 0) {
    return Status(Errc::changed, fmt::format("the key {} is not at revision 0: no stored value is", key));
  }
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->conditional(**l, key, {}, revision, true);
  if (p.status == NATS_OK) return Status::success();
  if (p.jerr == JSStreamWrongLastSequenceErr) {
    return Status(Errc::changed, fmt::format("the key {} is no longer at revision {}", key, revision));
  }
  return c_->failure(fmt::format("deleting the key {}", key), p.status, p.jerr);
}

Result<Revision> NatsStore::put(std::string_view key, std::string_view value) {
  if (auto st = check_write(key, value); !st.ok()) return st.error();
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->publish(**l, key, value, 0, false, false);
  if (p.status == NATS_OK) return p.revision;
  return c_->failure(fmt::format("writing the key {}", key), p.status, p.jerr);
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
