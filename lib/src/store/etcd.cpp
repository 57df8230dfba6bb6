// The etcd store (leasejudge/store/etcd.hpp): etcd's v3 JSON gateway over libcurl.
#include "leasejudge/store/etcd.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <deque>
#include <mutex>

#include "etcd_wire.hpp"
#include "leasejudge/json_text.hpp"

namespace leasejudge {

namespace etcd_wire {

// --- bytes: base64 (libcrypto), the JSON fields etcd reads -----------------------

void base64_append(std::string& out, std::string_view bytes) {
  std::size_t at = out.size();
  out.resize(at + 4 * ((bytes.size() + 2) / 3) + 1);
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + at),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(at + static_cast<std::size_t>(n));
}

// Decode into out (cleared first; its capacity kept). False: not base64.
bool base64_decode(std::string_view text, std::string& out) {
  out.clear();
  if (text.empty()) return true;
  if (text.size() % 4 != 0) return false;
  out.resize(text.size() / 4 * 3);
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return false;
  std::size_t pad = text.back() != '=' ? 0 : text[text.size() - 2] == '=' ? 2 : 1;
  out.resize(static_cast<std::size_t>(n) - pad);
  return true;
}

// "name":"<base64 of bytes>" (scratch holds the base64 text).
void append_bytes_field(std::string& out, std::string_view name, std::string_view bytes, std::string& scratch) {
  append_json_string(out, name);
  out += ':';
  scratch.clear();
  base64_append(scratch, bytes);
  append_json_string(out, scratch);
}

// "name":"<n>" (etcd's int64 fields are JSON strings).
void append_int_field(std::string& out, std::string_view name, std::uint64_t n) {
  append_json_string(out, name);
  out += ':';
  append_json_string(out, fmt::format("{}", n));
}

// The smallest key after every key starting with prefix ("\0": no end).
std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

// An int64 field as etcd writes it (a string; absent when 0).
std::uint64_t int_field(dom::element object, std::string_view name) {
  dom::element v;
  if (object[name].get(v) != simdjson::SUCCESS) return 0;
  std::string_view s;
  if (v.get(s) == simdjson::SUCCESS) {
    std::uint64_t n = 0;
    std::from_chars(s.data(), s.data() + s.size(), n);
    return n;
  }
  std::uint64_t n = 0;
  return v.get(n) == simdjson::SUCCESS ? n : 0;
}

// A signed int64 field (a lease's TTL is -1 once it is gone); 0 when absent.
std::int64_t signed_field(dom::element object, std::string_view name) {
  std::string_view s;
  std::int64_t n = 0;
  if (object[name].get(s) == simdjson::SUCCESS) {
    std::from_chars(s.data(), s.data() + s.size(), n);
    return n;
  }
  return object[name].get(n) == simdjson::SUCCESS ? n : 0;
}

bool bool_field(dom::element object, std::string_view name) {
  bool b = false;
  return object[name].get(b) == simdjson::SUCCESS && b;
}

std::string_view string_field(dom::element object, std::string_view name) {
  std::string_view s;
  return object[name].get(s) == simdjson::SUCCESS ? s : std::string_view();
}

// --- libcurl, loaded on first use ---------------------------------------------------------

// The table, or nullptr with why in *error when libcurl.so.4 cannot be loaded.
const CurlApi* load_curl(std::string* error) {
  static CurlApi api{};
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = ::dlerror();
      failure = std::string("the etcd store needs libcurl (Debian: libcurl4): ") + (e ? e : "libcurl.so.4 not found");
      return;
    }
    bool all = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
      all = all && fn != nullptr;
    };
    sym(api.global_init, "curl_global_init");
    sym(api.easy_init, "curl_easy_init");
    sym(api.easy_cleanup, "curl_easy_cleanup");
    sym(api.easy_setopt, "curl_easy_setopt");
    sym(api.easy_getinfo, "curl_easy_getinfo");
    sym(api.easy_perform, "curl_easy_perform");
    sym(api.easy_strerror, "curl_easy_strerror");
    sym(api.multi_init, "curl_multi_init");
    sym(api.multi_cleanup, "curl_multi_cleanup");
    sym(api.multi_add_handle, "curl_multi_add_handle");
    sym(api.multi_remove_handle, "curl_multi_remove_handle");
    sym(api.multi_perform, "curl_multi_perform");
    sym(api.multi_poll, "curl_multi_poll");
    sym(api.multi_info_read, "curl_multi_info_read");
    sym(api.multi_setopt, "curl_multi_setopt");
    sym(api.slist_append, "curl_slist_append");
    sym(api.slist_free_all, "curl_slist_free_all");
    if (!all) {
      failure = "the libcurl.so.4 found lacks a function the etcd store calls (libcurl 7.66 or later is needed)";
      return;
    }
    api.global_init(CURL_GLOBAL_DEFAULT);
  });
  if (!failure.empty()) {
    if (error != nullptr) *error = failure;
    return nullptr;
  }
  return &api;
}

// --- one HTTP exchange --------------------------------------------------------------

std::size_t append_to_string(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// Counts the requests curl sends for one transfer (CURLOPT_PREREQFUNCTION: called
// each time a request is about to go out on a connection, a resend included).
int count_request(void* sends, char*, char*, int, int) {
  ++*static_cast<int*>(sends);
  return CURL_PREREQFUNC_OK;
}

Http::Http() : easy(curl_easy_init()) {
  counts_sends = curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, count_request) == CURLE_OK &&
                 curl_easy_setopt(easy, CURLOPT_PREREQDATA, static_cast<void*>(&sends)) == CURLE_OK;
}

Http::~Http() { curl_easy_cleanup(easy); }

Transfer transfer_of(Http& h, CURLcode code) {
  Transfer t;
  t.code = code;
  curl_easy_getinfo(h.easy, CURLINFO_RESPONSE_CODE, &t.http);
  long connects = 0;
  curl_easy_getinfo(h.easy, CURLINFO_NUM_CONNECTS, &connects);
  t.reconnected = h.counts_sends ? h.sends > 1 : h.warm && connects > 0;
  long request_bytes = 0;
  curl_easy_getinfo(h.easy, CURLINFO_REQUEST_SIZE, &request_bytes);
  t.sent = request_bytes > 0;
  t.error = h.errbuf[0] != '\0' ? h.errbuf : curl_easy_strerror(code);
  h.warm = code == CURLE_OK;
  return t;
}

bool not_sent(CURLcode code) {
  return code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST;
}

// Nothing of the request reached a socket: no connection could be made, and curl
// sent no bytes (it resends a request once on a fresh connection when a reused one
// died under it: a refusal then may follow a request that was sent).
bool not_sent(const Transfer& t) { return not_sent(t.code) && !t.sent; }

// A failed exchange as a store error: a write that may have reached the cluster is
// unknown; a read that timed out a time-out; the rest a store failure.
Error transfer_error(const Transfer& t, const std::string& response, bool write, std::string_view where) {
  if (t.code != CURLE_OK) {
    Errc code = not_sent(t)                              ? Errc::store
                : write                                  ? Errc::unknown_outcome
                : t.code == CURLE_OPERATION_TIMEDOUT     ? Errc::timeout
                                                         : Errc::store;
    return Error{code, fmt::format("{}: {}{}", where, t.error,
                                   code == Errc::unknown_outcome ? " (the write may have landed)" : "")};
  }
  dom::parser parser;
  dom::element doc;
  std::string_view message = "an answer that is not etcd's";
  std::uint64_t grpc = 0;
  if (parser.parse(response).get(doc) == simdjson::SUCCESS && doc.is_object()) {
    if (auto m = string_field(doc, "message"); !m.empty()) message = m;
    grpc = int_field(doc, "code");
  }
  // gRPC's DeadlineExceeded (4) and Unavailable (14): etcd timed out or lost its
  // leader with the request proposed, or may have.
  bool lost = grpc == 4 || grpc == 14;
  Errc code = write && lost ? Errc::unknown_outcome : !write && grpc == 4 ? Errc::timeout : Errc::store;
  return Error{code, fmt::format("{}: HTTP {}: {}{}", where, t.http, message,
                                 code == Errc::unknown_outcome ? " (the write may have landed)" : "")};
}

std::string endpoint_url(std::string_view e, bool tls) {
  if (e.find("://") != std::string_view::npos) return std::string(e);
  return fmt::format("{}://{}", tls ? "https" : "http", e);
}

// The outcome of a txn's answer: the new revision, or lost_race for a failed compare.
Result<Revision> txn_result(const Transfer& t, const std::string& response, dom::parser& parser,
                            std::string_view where, Errc lost_race) {
  if (t.code != CURLE_OK || t.http != 200) return transfer_error(t, response, true, where);
  dom::element doc;
  if (parser.parse(response).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
    return Error{Errc::unknown_outcome, fmt::format("{}: an answer that is not etcd's (the write may have landed)", where)};
  }
  dom::element header;
  Revision revision = doc["header"].get(header) == simdjson::SUCCESS ? int_field(header, "revision") : 0;
  if (bool_field(doc, "succeeded")) return revision;
  if (t.reconnected) {
    return Error{Errc::unknown_outcome, fmt::format("{}: the compare failed on a request curl sent again on a new "
                                                    "connection: an earlier copy may have landed",
                                                    where)};
  }
  return Error{lost_race, fmt::format("{}: the key moved since it was read", where)};
}

// The body of a txn: compare the key's MOD (or CREATE) revision, then put (bound to
// lease, when not 0) or delete.
void txn_body(std::string& out, std::string& scratch, std::string_view key, bool create, Revision revision,
              const std::string_view* value, std::int64_t lease) {
  out.clear();
  out += "{\"compare\":[{";
  append_bytes_field(out, "key", key, scratch);
  out += ",\"result\":\"EQUAL\",\"target\":";
  append_json_string(out, create ? "CREATE" : "MOD");
  out += ',';
  append_int_field(out, create ? "create_revision" : "mod_revision", revision);
  out += "}],\"success\":[{";
  out += value != nullptr ? "\"request_put\":{" : "\"request_delete_range\":{";
  append_bytes_field(out, "key", key, scratch);
  if (value != nullptr) {
    out += ',';
    append_bytes_field(out, "value", *value, scratch);
    if (lease != 0) {
      out += ',';
      append_int_field(out, "lease", static_cast<std::uint64_t>(lease));
    }
  }
  out += "}}]}";
}

curl_slist* make_headers(const std::string& token) {
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Expect:");
  if (!token.empty()) headers = curl_slist_append(headers, ("Authorization: " + token).c_str());
  return headers;
}

// A POST of request to url on h, its answer into h.response; timeout 0: none (a watch's
// stream).
void prepare_easy(Http& h, const std::string& url, curl_slist* headers, const EtcdOptions& o,
                  const std::string& request, std::chrono::milliseconds timeout) {
  CURL* easy = h.easy;
  std::string& out = h.response;
  char* errbuf = h.errbuf;
  h.sends = 0;
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.c_str());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.size()));
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_to_string);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout.count()));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  if (!o.tls_ca_file.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, o.tls_ca_file.c_str());
  if (!o.tls_cert_file.empty()) curl_easy_setopt(easy, CURLOPT_SSLCERT, o.tls_cert_file.c_str());
  if (!o.tls_key_file.empty()) curl_easy_setopt(easy, CURLOPT_SSLKEY, o.tls_key_file.c_str());
  errbuf[0] = '\0';
  out.clear();
}

}  // namespace etcd_wire

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

Result<Revision> EtcdStore::Connection::txn(std::string_view key, bool create, Revision revision,
                                            const std::string_view* value, std::string_view what, Errc lost_race,
                                            std::int64_t lease) {
  if (key.empty()) return Error{Errc::invalid_argument, "an etcd store key is empty"};
  std::lock_guard lock(mu);
  txn_body(body, scratch, full_key(key), create, revision, value, lease);
  Transfer t;
  std::string message = fmt::format("{} of {}", what, key);
  Status s = post("/v3/kv/txn", body, true, o.request_timeout, message, &t);
  if (!s) return s.error();
  return txn_result(t, http.response, parser, where(message), lost_race);
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

// --- single keys ----------------------------------------------------------------------

Result<std::optional<StoreEntry>> EtcdStore::get(std::string_view key) {
  if (key.empty()) return Error{Errc::invalid_argument, "an etcd store key is empty"};
  std::lock_guard lock(c_->mu);
  Connection& c = *c_;
  c.body = "{";
  append_bytes_field(c.body, "key", c.full_key(key), c.scratch);
  c.body += '}';
  std::string what = fmt::format("reading {}", key);
  if (Status s = c.post("/v3/kv/range", c.body, false, c.o.request_timeout, what); !s) return s.error();
  dom::element doc;
  if (c.parser.parse(c.http.response).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
    return Error{Errc::store, c.where(what + ": an answer that is not etcd's")};
  }
  dom::array kvs;
  if (doc["kvs"].get(kvs) != simdjson::SUCCESS || kvs.size() == 0) return std::optional<StoreEntry>();
  dom::element kv = kvs.at(0);
  StoreEntry entry;
  if (!base64_decode(string_field(kv, "value"), entry.value)) {
    return Error{Errc::store, c.where(what + ": a value that is not base64")};
  }
  entry.revision = int_field(kv, "mod_revision");
  entry.lease = static_cast<std::int64_t>(int_field(kv, "lease"));
  return std::optional<StoreEntry>(std::move(entry));
}

Result<Revision> EtcdStore::update(std::string_view key, std::string_view value, Revision revision) {
  if (revision == 0 && !key.empty()) {
    return Error{Errc::changed, fmt::format("the key {} is not at revision 0 (no stored value is)", key)};
  }
  return c_->txn(key, false, revision, &value, "the update", Errc::changed);
}

Result<Revision> EtcdStore::create(std::string_view key, std::string_view value) {
  return c_->txn(key, true, 0, &value, "the creation", Errc::exists);
}

Status EtcdStore::remove(std::string_view key, Revision revision) {
  if (revision == 0 && !key.empty()) {
    return Error{Errc::changed, fmt::format("the key {} is not at revision 0 (no stored value is)", key)};
  }
  auto r = c_->txn(key, false, revision, nullptr, "the deletion", Errc::changed);
  if (!r) return r.error();
  return Status::success();
}

Result<Revision> EtcdStore::put(std::string_view key, std::string_view value) {
  if (key.empty()) return Error{Errc::invalid_argument, "an etcd store key is empty"};
  std::lock_guard lock(c_->mu);
  Connection& c = *c_;
  c.body = "{";
  append_bytes_field(c.body, "key", c.full_key(key), c.scratch);
  c.body += ',';
  append_bytes_field(c.body, "value", value, c.scratch);
  c.body += '}';
  std::string what = fmt::format("the put of {}", key);
  if (Status s = c.post("/v3/kv/put", c.body, true, c.o.request_timeout, what); !s) return s.error();
  dom::element doc, header;
  if (c.parser.parse(c.http.response).get(doc) != simdjson::SUCCESS ||
      doc["header"].get(header) != simdjson::SUCCESS) {
    return Error{Errc::unknown_outcome, c.where(what + ": an answer that is not etcd's")};
  }
  return int_field(header, "revision");
}

Status EtcdStore::compact(Revision revision) {
  std::lock_guard lock(c_->mu);
  Connection& c = *c_;
  c.body = "{";
  append_int_field(c.body, "revision", revision);
  c.body += ",\"physical\":true}";
  return c.post("/v3/kv/compaction", c.body, true, c.o.request_timeout, fmt::format("compacting at {}", revision));
}

// --- leases: /v3/lease/* --------------------------------------------------------------

// POST {"ID":"<lease>"} to path; the answer parsed by the connection's parser (the
// caller holds mu). An answer that is not an object is a store error, or an unknown
// outcome for a write.
Result<dom::element> EtcdStore::Connection::lease_call(std::string_view path, StoreLeaseId lease,
                                                       std::string_view what, bool write) {
  if (lease <= 0) return Error{Errc::invalid_argument, fmt::format("{}: {} is no etcd lease id", what, lease)};
  body = "{";
  append_int_field(body, "ID", static_cast<std::uint64_t>(lease));
  body += '}';
  Transfer t;
  if (Status s = post(path, body, write, o.request_timeout, what, &t); !s) {
    if (t.code == CURLE_OK && t.http == 404) return Error{Errc::not_found, s.error().message};
    return s.error();
  }
  dom::element doc;
  if (parser.parse(http.response).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
    return Error{write ? Errc::unknown_outcome : Errc::store, where(fmt::format("{}: an answer that is not etcd's", what))};
  }
  return doc;
}

Result<StoreLease> EtcdStore::grant(std::int64_t lease_ms) {
  if (lease_ms <= 0) return Error{Errc::invalid_argument, "an etcd lease needs a positive length"};
  std::lock_guard lock(c_->mu);
  Connection& c = *c_;
  const std::int64_t ttl = store_lease_seconds(lease_ms);
  c.body = "{";
  append_int_field(c.body, "TTL", static_cast<std::uint64_t>(ttl));
  c.body += '}';
  std::string what = fmt::format("granting a lease of {} s", ttl);
  if (Status s = c.post("/v3/lease/grant", c.body, true, c.o.request_timeout, what); !s) return s.error();
  dom::element doc;
  if (c.parser.parse(c.http.response).get(doc) != simdjson::SUCCESS || !doc.is_object() ||
      signed_field(doc, "ID") <= 0) {
    return Error{Errc::unknown_outcome, c.where(what + ": an answer that is not etcd's (a lease may have been granted)")};
  }
  return StoreLease{signed_field(doc, "ID"), signed_field(doc, "TTL")};
}

Result<std::int64_t> EtcdStore::keep_alive(StoreLeaseId lease) {
  std::lock_guard lock(c_->mu);
  std::string what = fmt::format("keeping the lease {:x} alive", lease);
  auto doc = c_->lease_call("/v3/lease/keepalive", lease, what, false);
  if (!doc) return std::move(doc).error();
  dom::element result;
  std::int64_t ttl = (*doc)["result"].get(result) == simdjson::SUCCESS ? signed_field(result, "TTL") : 0;
  if (ttl <= 0) return Error{Errc::not_found, c_->where(fmt::format("{}: etcd no longer has it", what))};
  return ttl;
}

Status EtcdStore::revoke(StoreLeaseId lease) {
  std::lock_guard lock(c_->mu);
  auto doc = c_->lease_call("/v3/lease/revoke", lease, fmt::format("revoking the lease {:x}", lease), true);
  if (!doc) return std::move(doc).error();
  return Status::success();
}

Result<StoreLeaseLife> EtcdStore::life(StoreLeaseId lease) {
  std::lock_guard lock(c_->mu);
  auto doc = c_->lease_call("/v3/lease/timetolive", lease, fmt::format("reading the lease {:x}", lease), false);
  if (!doc) return std::move(doc).error();
  StoreLeaseLife life;
  life.ttl_s = signed_field(*doc, "TTL");
  life.granted_s = signed_field(*doc, "grantedTTL");
  life.ended = life.ttl_s < 0;
  life.answer = life.ended ? fmt::format("etcd at {} answers TTL {}: it no longer has the lease",
                                         c_->endpoints[c_->current], life.ttl_s)
                           : fmt::format("etcd at {} answers TTL {} of {} s", c_->endpoints[c_->current],
                                         life.ttl_s, life.granted_s);
  return life;
}

Result<Revision> EtcdStore::create_bound(std::string_view key, std::string_view value, StoreLeaseId lease) {
  if (lease <= 0) return Error{Errc::invalid_argument, fmt::format("{} is no etcd lease id", lease)};
  return c_->txn(key, true, 0, &value, "the creation", Errc::exists, lease);
}

Result<Revision> EtcdStore::update_bound(std::string_view key, std::string_view value, Revision revision,
                                         StoreLeaseId lease) {
  if (lease <= 0) return Error{Errc::invalid_argument, fmt::format("{} is no etcd lease id", lease)};
  if (revision == 0 && !key.empty()) {
    return Error{Errc::changed, fmt::format("the key {} is not at revision 0 (no stored value is)", key)};
  }
  return c_->txn(key, false, revision, &value, "the update", Errc::changed, lease);
}

// --- range reads: keys() and the scan -------------------------------------------------

// One page of [start, end) at revision at (0: now), at most limit keys, its answer
// swapped into out.
Status EtcdStore::Connection::range_page(std::string_view start, std::string_view end, Revision at,
                                         std::size_t limit, bool keys_only, std::string& out,
                                         std::string_view what) {
  std::lock_guard lock(mu);
  body = "{";
  append_bytes_field(body, "key", start, scratch);
  body += ',';
  append_bytes_field(body, "range_end", end, scratch);
  body += ',';
  append_int_field(body, "limit", limit);
  if (at != 0) {
    body += ',';
    append_int_field(body, "revision", at);
  }
  if (keys_only) body += ",\"keys_only\":true";
  body += '}';
  if (Status s = post("/v3/kv/range", body, false, o.list_timeout, what); !s) return s;
  std::swap(out, http.response);
  return Status::success();
}

// Every key starting with prefix at one revision (the first page's), page by page
// (each continued after the last key read), each kv to on_kv. The store's lock is
// held only while a page is read: on_kv may call the store.
template <typename OnKv>
Status EtcdStore::Connection::range_all(std::string_view prefix, std::size_t limit, bool keys_only,
                                        std::string_view what, OnKv&& on_kv, Revision* read_at) {
  std::string start(prefix), end = prefix_end(prefix), page, last;
  dom::parser page_parser;
  Revision at = 0;
  for (;;) {
    if (Status s = range_page(start, end, at, limit, keys_only, page, what); !s) return s;
    dom::element doc;
    dom::array kvs;
    if (page_parser.parse(page).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
      std::lock_guard lock(mu);
      return Error{Errc::store, where(fmt::format("{}: an answer that is not etcd's", what))};
    }
    if (at == 0) {
      dom::element header;
      if (doc["header"].get(header) == simdjson::SUCCESS) at = int_field(header, "revision");
      if (read_at != nullptr) *read_at = at;
    }
    if (doc["kvs"].get(kvs) != simdjson::SUCCESS) return Status::success();
    for (dom::element kv : kvs) {
      if (Status s = on_kv(kv); !s) return s;
    }
    if (!bool_field(doc, "more") || kvs.size() == 0) return Status::success();
    if (!base64_decode(string_field(kvs.at(kvs.size() - 1), "key"), last)) {
      return Error{Errc::store, fmt::format("etcd: {}: a key that is not base64", what)};
    }
    start = last + std::string(1, '\0');
  }
}

Result<std::vector<std::string>> EtcdStore::keys() {
  std::vector<std::string> out;
  std::string key;
  const std::size_t skip = c_->key_prefix.size();
  Status s = c_->range_all(c_->key_prefix, 10000, true, "listing the keys", [&](dom::element kv) -> Status {
    if (!base64_decode(string_field(kv, "key"), key) || key.size() <= skip) {
      return Error{Errc::store, "etcd: listing the keys: a key that is not base64"};
    }
    out.emplace_back(key, skip);
    return Status::success();
  });
  if (!s) return s.error();
  return out;
}

Status EtcdStore::scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options, ScanStats* stats) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  ScanBuffer buffer;
  std::string key, value;
  const std::size_t skip = c_->key_prefix.size();
  auto flush = [&]() -> Status {
    if (buffer.size() == 0) return Status::success();
    ++st.batches;
    Status s = sink(buffer.batch());
    buffer.clear();
    return s;
  };
  std::size_t limit = std::max<std::size_t>(options.batch_keys, 1);
  Status s = c_->range_all(c_->full_key(prefix), limit, false, "the scan", [&](dom::element kv) -> Status {
    if (!base64_decode(string_field(kv, "key"), key) || key.size() <= skip ||
        !base64_decode(string_field(kv, "value"), value)) {
      return Error{Errc::store, "etcd: the scan: a key or value that is not base64"};
    }
    std::string_view k = std::string_view(key).substr(skip);
    buffer.add(k, value, int_field(kv, "mod_revision"));
    ++st.keys;
    st.bytes += k.size() + value.size();
    return buffer.full(options) ? flush() : Status::success();
  });
  if (!s) return s;
  return flush();
}


namespace {

// --- the watch: /v3/watch, a stream of JSON lines ----------------------------------------

class EtcdWatch final : public KeyWatch {
 public:
  EtcdWatch(EtcdStore::Connection& c, std::string_view prefix, const KeyWatchOptions& options);
  ~EtcdWatch() override;
  Status begin();
  Status next(std::vector<KeyChange>& out, std::int64_t wait_ns) override;

 private:
  void drive(int wait_ms);
  Status read_lines(std::vector<KeyChange>& out);
  Status read_result(dom::element result, std::vector<KeyChange>& out);
  Status resume_after_compaction(std::vector<KeyChange>& out);

  EtcdStore::Connection& c_;
  Multi m_;
  Http http_;
  std::string key_prefix_, prefix_, body_, scratch_, key_, value_;
  KeyWatchOptions options_;
  dom::parser parser_;
  Revision from_ = 0;       // the start revision asked of etcd (0: now)
  Revision compacted_ = 0;  // etcd canceled the watch: it keeps revisions from this one on
  bool created_ = false, ended_ = false, added_ = false;
  Transfer end_;
  Status broken_;
};

EtcdWatch::EtcdWatch(EtcdStore::Connection& c, std::string_view prefix, const KeyWatchOptions& options)
    : c_(c),
      m_(c, "/v3/watch"),
      key_prefix_(c.key_prefix),
      prefix_(c.key_prefix + std::string(prefix)),
      options_(options),
      from_(options.from_revision) {
  if (!options_.note) options_.note = c.o.note;
}

EtcdWatch::~EtcdWatch() {
  if (added_) curl_multi_remove_handle(m_.multi, http_.easy);
}

// Open the stream (again, after a compaction) from from_, and wait for etcd's word.
Status EtcdWatch::begin() {
  if (added_) curl_multi_remove_handle(m_.multi, http_.easy);
  added_ = created_ = ended_ = false;
  body_ = "{\"create_request\":{";
  append_bytes_field(body_, "key", prefix_, scratch_);
  body_ += ',';
  append_bytes_field(body_, "range_end", prefix_end(prefix_), scratch_);
  if (from_ != 0) {
    body_ += ',';
    append_int_field(body_, "start_revision", from_);
  }
  body_ += "}}";
  prepare_easy(http_, m_.url, m_.headers, m_.o, body_, std::chrono::milliseconds(0));
  curl_multi_add_handle(m_.multi, http_.easy);
  added_ = true;
  auto deadline = Clock::now() + m_.o.request_timeout;
  std::vector<KeyChange> none;
  while (!created_) {
    if (!broken_) return broken_;
    if (Clock::now() > deadline) {
      return Error{Errc::store, fmt::format("etcd at {}: the watch was not confirmed within {} ms", m_.url,
                                            m_.o.request_timeout.count())};
    }
    drive(100);
    if (ended_ && (end_.code != CURLE_OK || end_.http != 200)) {
      return transfer_error(end_, http_.response, false, fmt::format("etcd at {}: the watch", m_.url));
    }
    if (Status s = read_lines(none); !s) return s;
  }
  return Status::success();
}

void EtcdWatch::drive(int wait_ms) {
  m_.drive(wait_ms, [this](CURL*, CURLcode code) {
    added_ = false;
    ended_ = true;
    end_ = transfer_of(http_, code);
  });
}

Status EtcdWatch::next(std::vector<KeyChange>& out, std::int64_t wait_ns) {
  if (!broken_) return broken_;
  std::size_t had = out.size();
  auto deadline = Clock::now() + std::chrono::nanoseconds(std::max<std::int64_t>(wait_ns, 0));
  for (;;) {
    if (Status s = read_lines(out); !s) return broken_ = s;
    if (compacted_ != 0) {
      if (Status s = resume_after_compaction(out); !s) return broken_ = s;
    }
    if (out.size() > had) return Status::success();
    if (ended_) {
      broken_ = Error{Errc::store, fmt::format("etcd at {}: the watch stream ended: {}", m_.url,
                                               end_.code != CURLE_OK ? end_.error : "the member closed it")};
      return broken_;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Status::success();
    drive(static_cast<int>(std::min<long long>(left, 100)));
  }
}

// Each complete line of the stream so far (a JSON object) into out.
Status EtcdWatch::read_lines(std::vector<KeyChange>& out) {
  std::string& stream = http_.response;
  std::size_t at = 0;
  for (std::size_t nl; compacted_ == 0 && (nl = stream.find('\n', at)) != std::string::npos; at = nl + 1) {
    std::string_view line(stream.data() + at, nl - at);
    if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
    dom::element doc, result;
    if (parser_.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS) {
      return Error{Errc::store, fmt::format("etcd at {}: the watch sent a line that is not JSON", m_.url)};
    }
    if (doc["result"].get(result) != simdjson::SUCCESS) {
      dom::element error;
      std::string_view message = doc["error"].get(error) == simdjson::SUCCESS ? string_field(error, "message") : "";
      return Error{Errc::store, fmt::format("etcd at {}: the watch failed: {}", m_.url, message)};
    }
    if (Status s = read_result(result, out); !s) return s;
  }
  stream.erase(0, at);
  return Status::success();
}

Status EtcdWatch::read_result(dom::element result, std::vector<KeyChange>& out) {
  if (bool_field(result, "created")) created_ = true;
  if (bool_field(result, "canceled") && int_field(result, "compact_revision") != 0) {
    compacted_ = int_field(result, "compact_revision");
    return Status::success();
  }
  if (bool_field(result, "canceled")) {
    return Error{Errc::store, fmt::format("etcd at {}: the watch was canceled (compacted at revision {}): {}", m_.url,
                                          int_field(result, "compact_revision"), string_field(result, "cancel_reason"))};
  }
  dom::array events;
  if (result["events"].get(events) != simdjson::SUCCESS) return Status::success();
  for (dom::element ev : events) {
    dom::element kv;
    if (ev["kv"].get(kv) != simdjson::SUCCESS || !base64_decode(string_field(kv, "key"), key_) ||
        key_.size() < key_prefix_.size() || !base64_decode(string_field(kv, "value"), value_)) {
      return Error{Errc::store, fmt::format("etcd at {}: the watch sent an event without a key", m_.url)};
    }
    KeyChange change;
    change.key = key_.substr(key_prefix_.size());
    change.revision = int_field(kv, "mod_revision");
    if (string_field(ev, "type") != "DELETE") change.value = value_;
    out.push_back(std::move(change));
  }
  return Status::success();
}

// etcd compacted the revisions the watch was to start from: what changed in them can
// no longer be read. Every key of the prefix as it is now (a scan) stands in for
// them, and the watch goes on from the revision after the scan's.
Status EtcdWatch::resume_after_compaction(std::vector<KeyChange>& out) {
  const Revision compacted = compacted_, asked = from_;
  compacted_ = 0;
  Revision at = 0;
  const std::size_t skip = key_prefix_.size();
  std::vector<KeyChange> scanned;
  Status s = c_.range_all(prefix_, 1000, false, "the watch's scan after a compaction", [&](dom::element kv) -> Status {
    if (!base64_decode(string_field(kv, "key"), key_) || key_.size() < skip ||
        !base64_decode(string_field(kv, "value"), value_)) {
      return Error{Errc::store, fmt::format("etcd at {}: the watch's scan read a key that is not base64", m_.url)};
    }
    scanned.push_back(KeyChange{key_.substr(skip), int_field(kv, "mod_revision"), value_, 0});
    return Status::success();
  }, &at);
  if (!s) return s;
  out.insert(out.end(), std::make_move_iterator(scanned.begin()), std::make_move_iterator(scanned.end()));
  if (options_.note) {
    options_.note(fmt::format("etcd at {}: the watch's start revision {} was compacted (etcd keeps revisions from "
                              "{} on): a scan at revision {} ({} keys) stands for the changes since, and the watch "
                              "goes on from revision {}",
                              m_.url, asked, compacted, at, scanned.size(), at + 1));
  }
  from_ = at + 1;
  return begin();
}

}  // namespace

namespace etcd_wire {

Multi::Multi(const EtcdStore::Connection& c, std::string_view path) : o(c.o) {
  std::lock_guard lock(c.mu);
  url = c.endpoints[c.current] + std::string(path);
  headers = make_headers(c.token);
}

}  // namespace etcd_wire

Result<std::unique_ptr<KeyWatch>> EtcdStore::watch(std::string_view prefix, const KeyWatchOptions& options) {
  if (options.from_revision > static_cast<Revision>(INT64_MAX)) {
    return Error{Errc::invalid_argument,
                 fmt::format("a watch cannot start from revision {}: etcd's revisions are at most {}",
                             options.from_revision, INT64_MAX)};
  }
  auto w = std::make_unique<EtcdWatch>(*c_, prefix, options);
  if (Status s = w->begin(); !s) return s.error();
  return std::unique_ptr<KeyWatch>(std::move(w));
}

}  // namespace leasejudge
