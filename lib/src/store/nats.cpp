// The NATS store over nats.c (libnats). See leasejudge/store/nats.hpp for the rules,
// nats_store.hpp for its parts. This one: the connection (open, its options, the
// bucket, reconnecting, the servers' versions) and the sentences for failures.
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
#include <chrono>
#include <cstring>
#include <tuple>

#include "leasejudge/clock.hpp"
#include "nats_server_info.hpp"
#include "nats_store.hpp"

namespace leasejudge {
namespace nats_store {

int64_t steady_ms() noexcept {
  return steady_now_ns() / 1'000'000;
}

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

bool is_marker(natsMsg* msg) {
  const char* op = nullptr;
  if (natsMsgHeader_Get(msg, kOperationHeader, &op) == NATS_OK && op != nullptr) {
    return std::strcmp(op, kDeleteOperation) == 0 || std::strcmp(op, kPurgeOperation) == 0;
  }
  const char* reason = nullptr;
  return natsMsgHeader_Get(msg, kMarkerReasonHeader, &reason) == NATS_OK;
}

}  // namespace nats_store

using namespace nats_store;

namespace {

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

}  // namespace

Result<std::shared_ptr<Link>> NatsStore::Connection::connect_locked(Slot& slot) {
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
    return Error{Errc::store, fmt::format("connecting to NATS at {}: opening JetStream: {}", servers, nats_detail(s))};
  }
  learn_servers(*fresh);
  slot.link = fresh;
  return fresh;
}

void NatsStore::Connection::learn_servers(const Link& l) {
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

void NatsStore::Connection::warn_unfenced() {
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

bool NatsStore::Connection::replicated_now(const Link& l) const {
  StreamInfoHandle si;
  jsErrCode jerr = kNoJsError;
  natsStatus s = js_GetStreamInfo(&si.p, l.js, stream.c_str(), nullptr, &jerr);
  return s != NATS_OK || si.p->Config == nullptr || si.p->Config->Replicas > 1;
}

Result<std::shared_ptr<Link>> NatsStore::Connection::live(const StoreNote* note, Use use) {
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

Result<kvStore*> NatsStore::Connection::kv_of(Link& l) const {
  std::lock_guard lock(l.kv_mu);
  if (l.kv != nullptr) return l.kv;
  natsStatus s = js_KeyValue(&l.kv, l.js, bucket.c_str());
  if (s != NATS_OK) {
    l.kv = nullptr;
    return failure("binding the bucket", s, kNoJsError);
  }
  return l.kv;
}

Error NatsStore::Connection::failure(std::string_view doing, natsStatus s, jsErrCode jerr) const {
  std::string detail = nats_detail(s);
  if (s == NATS_NO_MEMORY) return Error{Errc::no_memory, "out of memory " + std::string(doing)};
  if (s == NATS_MAX_PAYLOAD) {
    return Error{
        Errc::invalid_argument,
        fmt::format("{} in the NATS bucket {}: the value is larger than the server takes ({})", doing, bucket, detail)};
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
  return Error{Errc::store, fmt::format("{} in the NATS bucket {} at {}: {}: {}", doing, bucket, servers, why, detail)};
}

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

}  // namespace leasejudge
