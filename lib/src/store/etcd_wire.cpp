// etcd's v3 JSON gateway on the wire (etcd_wire.hpp): base64 bytes and the JSON
// fields etcd reads, libcurl loaded on first use, one HTTP exchange and what became
// of it.
#include "etcd_wire.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <mutex>

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

Http::~Http() {
  curl_easy_cleanup(easy);
}

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
bool not_sent(const Transfer& t) {
  return not_sent(t.code) && !t.sent;
}

// A failed exchange as a store error: a write that may have reached the cluster is
// unknown; a read that timed out a time-out; the rest a store failure.
Error transfer_error(const Transfer& t, const std::string& response, bool write, std::string_view where) {
  if (t.code != CURLE_OK) {
    Errc code = not_sent(t)                          ? Errc::store
                : write                              ? Errc::unknown_outcome
                : t.code == CURLE_OPERATION_TIMEDOUT ? Errc::timeout
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
Result<Revision> txn_result(const Transfer& t, const std::string& response, dom::parser& parser, std::string_view where,
                            Errc lost_race) {
  if (t.code != CURLE_OK || t.http != 200) return transfer_error(t, response, true, where);
  dom::element doc;
  if (parser.parse(response).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
    return Error{Errc::unknown_outcome,
                 fmt::format("{}: an answer that is not etcd's (the write may have landed)", where)};
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

}  // namespace leasejudge
