// The etcd store (leasejudge/store/etcd.hpp): etcd's v3 JSON gateway over libcurl.
// etcd_store.hpp tells its parts; this one is the connection: requests posted to the
// endpoints in turn, authentication, opening, and the multi handle's endpoint.
#include "leasejudge/store/etcd.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <mutex>

#include "etcd_store.hpp"
#include "etcd_wire.hpp"
#include "leasejudge/json_text.hpp"

namespace leasejudge {

using namespace etcd_wire;

// --- the connection -------------------------------------------------------------------

void EtcdStore::Connection::set_headers() {
  curl_slist_free_all(headers);
  headers = make_headers(token);
}

void EtcdStore::Connection::prepare(Http& h, std::string_view path, const std::string& request,
                                    std::chrono::milliseconds timeout) const {
  prepare_easy(h, endpoints[current] + std::string(path), headers, o, request, timeout);
}

Transfer EtcdStore::Connection::exchange(std::string_view path, const std::string& request,
                                         std::chrono::milliseconds timeout) {
  prepare(http, path, request, timeout);
  return transfer_of(http, curl_easy_perform(http.easy));
}

// POST request to path on the first endpoint that takes the connection (the
// current one first); the answer in http.response. An endpoint refusing the
// connection is passed over (nothing was sent); an expired token asked for again once.
Status EtcdStore::Connection::post(std::string_view path, const std::string& request, bool write,
                                   std::chrono::milliseconds timeout, std::string_view what, Transfer* out) {
  Transfer t;
  bool authenticated = false;
  for (std::size_t tried = 0; tried < endpoints.size(); ++tried) {
    t = exchange(path, request, timeout);
    if (not_sent(t) && tried + 1 < endpoints.size()) {
      if (o.note) o.note(where(fmt::format("{} (passed over for the next)", t.error)));
      current = (current + 1) % endpoints.size();
      continue;
    }
    if (t.code == CURLE_OK && t.http == 401 && !o.user.empty() && !authenticated &&
        http.response.find("invalid auth token") != std::string::npos) {
      if (Status s = authenticate(); !s) return s;
      authenticated = true;
      --tried;
      continue;
    }
    break;
  }
  if (out != nullptr) *out = t;
  if (t.code == CURLE_OK && t.http == 200) return Status::success();
  return transfer_error(t, http.response, write, where(what));
}

Status EtcdStore::Connection::authenticate() {
  token.clear();
  set_headers();
  std::string request = "{";
  append_json_string(request, "name");
  request += ':';
  append_json_string(request, o.user);
  request += ',';
  append_json_string(request, "password");
  request += ':';
  append_json_string(request, o.password);
  request += '}';
  Transfer t = exchange("/v3/auth/authenticate", request, o.request_timeout);
  if (t.code != CURLE_OK || t.http != 200) {
    Error e = transfer_error(t, http.response, false, where(fmt::format("authenticating as {}", o.user)));
    e.code = Errc::store;
    return e;
  }
  dom::element doc;
  if (parser.parse(http.response).get(doc) != simdjson::SUCCESS || string_field(doc, "token").empty()) {
    return Error{Errc::store, where(fmt::format("authenticating as {}: no token in the answer", o.user))};
  }
  token = std::string(string_field(doc, "token"));
  set_headers();
  return Status::success();
}

// --- opening --------------------------------------------------------------------------

EtcdStore::EtcdStore(std::unique_ptr<Connection> connection) : c_(std::move(connection)) {}
EtcdStore::~EtcdStore() = default;

Result<std::unique_ptr<EtcdStore>> EtcdStore::open(const EtcdOptions& options) {
  if (options.prefix.empty()) return Error{Errc::invalid_argument, "an etcd store needs a prefix"};
  if (options.connect_timeout.count() <= 0 || options.request_timeout.count() <= 0 ||
      options.list_timeout.count() <= 0) {
    return Error{Errc::invalid_argument, "etcd store timeouts must be positive"};
  }
  if (options.txn_keys == 0 || options.txns_in_flight == 0) {
    return Error{Errc::invalid_argument, "an etcd store's txn_keys and txns_in_flight must be at least 1"};
  }
  std::string no_curl;
  if (load_curl(&no_curl) == nullptr) return Error{Errc::unsupported, no_curl};
  auto c = std::make_unique<Connection>();
  c->o = options;
  bool tls = options.tls || !options.tls_ca_file.empty() || !options.tls_cert_file.empty();
  for (const std::string& e : options.endpoints) {
    if (e.empty()) return Error{Errc::invalid_argument, "an etcd endpoint is empty"};
    c->endpoints.push_back(endpoint_url(e, tls));
  }
  if (c->endpoints.empty()) c->endpoints.push_back(endpoint_url("127.0.0.1:2379", tls));
  c->key_prefix = options.prefix + "/";
  c->txn_keys = options.txn_keys;
  if (c->http.easy == nullptr) return Error{Errc::no_memory, "curl_easy_init failed"};
  c->set_headers();
  std::lock_guard lock(c->mu);
  if (!options.user.empty()) {
    if (Status s = c->authenticate(); !s) return s.error();
  }
  // Reach the cluster now: a store that cannot be reached fails at the open.
  std::string request = "{";
  append_bytes_field(request, "key", c->key_prefix, c->scratch);
  request += ",\"keys_only\":true,\"limit\":\"1\"}";
  if (Status s = c->post("/v3/kv/range", request, false, options.request_timeout, "reading the prefix"); !s) {
    Error e = s.error();
    if (e.code == Errc::timeout) e.code = Errc::store;
    return e;
  }
  return std::unique_ptr<EtcdStore>(new EtcdStore(std::move(c)));
}

std::string EtcdStore::endpoint() const {
  std::lock_guard lock(c_->mu);
  return c_->endpoints[c_->current];
}

namespace etcd_wire {

// A multi handle's endpoint and headers: the connection's as they are now.
Multi::Multi(const EtcdStore::Connection& c, std::string_view path) : o(c.o) {
  std::lock_guard lock(c.mu);
  url = c.endpoints[c.current] + std::string(path);
  headers = make_headers(c.token);
}

}  // namespace etcd_wire

}  // namespace leasejudge
