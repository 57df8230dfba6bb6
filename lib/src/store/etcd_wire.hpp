// etcd's v3 JSON gateway on the wire, as the etcd store's parts share it (private to
// lib/src/store/etcd*.cpp, defined in etcd_wire.cpp): base64 bytes, int64 fields
// written as strings, libcurl loaded at the first open and called through a table, one
// HTTP exchange and what became of it, a multi handle driving many. The store's
// connection is in etcd_store.hpp.
//
// libcurl is loaded when the first etcd store opens (dlopen), not linked: a process
// that never opens one never loads libcurl and its chain of libraries (TLS, Kerberos,
// LDAP...). Each curl_ call goes through the table load_curl() fills (the macros below).
#pragma once

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <fmt/format.h>
#include <simdjson.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/store/etcd.hpp"

namespace leasejudge::etcd_wire {

namespace dom = simdjson::dom;
using Clock = std::chrono::steady_clock;

// --- bytes: base64 (libcrypto), the JSON fields etcd reads ----------------------------

void base64_append(std::string& out, std::string_view bytes);
// Decode into out (cleared first; its capacity kept). False: not base64.
bool base64_decode(std::string_view text, std::string& out);
// "name":"<base64 of bytes>" (scratch holds the base64 text).
void append_bytes_field(std::string& out, std::string_view name, std::string_view bytes, std::string& scratch);
// "name":"<n>" (etcd's int64 fields are JSON strings).
void append_int_field(std::string& out, std::string_view name, std::uint64_t n);
// An int64 field as etcd writes it (a string; absent when 0).
std::uint64_t int_field(dom::element object, std::string_view name);
// A signed int64 field (a lease's TTL is -1 once it is gone); 0 when absent.
std::int64_t signed_field(dom::element object, std::string_view name);
bool bool_field(dom::element object, std::string_view name);
std::string_view string_field(dom::element object, std::string_view name);
// The smallest key after every key starting with prefix ("\0": no end).
std::string prefix_end(std::string_view prefix);

// --- libcurl, loaded on first use -----------------------------------------------------

struct CurlApi {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  CURLcode (*easy_perform)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  CURLM* (*multi_init)();
  CURLMcode (*multi_cleanup)(CURLM*);
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_perform)(CURLM*, int*);
  CURLMcode (*multi_poll)(CURLM*, struct curl_waitfd*, unsigned int, int, int*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...);
  struct curl_slist* (*slist_append)(struct curl_slist*, const char*);
  void (*slist_free_all)(struct curl_slist*);
};

// The table, or nullptr with why in *error when libcurl.so.4 cannot be loaded.
const CurlApi* load_curl(std::string* error);
// The table, once open() has loaded it.
inline const CurlApi& curl() {
  return *load_curl(nullptr);
}

#define curl_easy_init ::leasejudge::etcd_wire::curl().easy_init
#define curl_easy_cleanup ::leasejudge::etcd_wire::curl().easy_cleanup
#undef curl_easy_setopt
#define curl_easy_setopt ::leasejudge::etcd_wire::curl().easy_setopt
#undef curl_easy_getinfo
#define curl_easy_getinfo ::leasejudge::etcd_wire::curl().easy_getinfo
#define curl_easy_perform ::leasejudge::etcd_wire::curl().easy_perform
#define curl_easy_strerror ::leasejudge::etcd_wire::curl().easy_strerror
#define curl_multi_init ::leasejudge::etcd_wire::curl().multi_init
#define curl_multi_cleanup ::leasejudge::etcd_wire::curl().multi_cleanup
#define curl_multi_add_handle ::leasejudge::etcd_wire::curl().multi_add_handle
#define curl_multi_remove_handle ::leasejudge::etcd_wire::curl().multi_remove_handle
#define curl_multi_perform ::leasejudge::etcd_wire::curl().multi_perform
#define curl_multi_poll ::leasejudge::etcd_wire::curl().multi_poll
#define curl_multi_info_read ::leasejudge::etcd_wire::curl().multi_info_read
#undef curl_multi_setopt
#define curl_multi_setopt ::leasejudge::etcd_wire::curl().multi_setopt
#define curl_slist_append ::leasejudge::etcd_wire::curl().slist_append
#define curl_slist_free_all ::leasejudge::etcd_wire::curl().slist_free_all

// --- one HTTP exchange ----------------------------------------------------------------

// What became of one request: curl's code (and its sentence), the HTTP status, and
// whether curl sent it again (it resends a request on a fresh connection when the
// reused one it was sent on died before any answer: the first copy may have reached
// the server).
struct Transfer {
  CURLcode code = CURLE_OK;
  long http = 0;
  bool reconnected = false;
  bool sent = false;  // curl wrote request bytes
  std::string error;
};

// A keep-alive easy handle with its own answer buffer.
struct Http {
  CURL* easy = nullptr;
  std::string response;
  char errbuf[CURL_ERROR_SIZE] = {};
  bool warm = false;  // its last request went through: the next may reuse the connection
  // Requests sent for the transfer under way, where libcurl counts them (7.80 on);
  // else a connection made by a warm handle is taken for a resend.
  int sends = 0;
  bool counts_sends = false;
  Http();
  ~Http();
  Http(const Http&) = delete;
  Http& operator=(const Http&) = delete;
};

Transfer transfer_of(Http& h, CURLcode code);
// Nothing of the request reached a socket: no connection could be made, and curl
// sent no bytes.
bool not_sent(const Transfer& t);
// A failed exchange as a store error: a write that may have reached the cluster is
// unknown; a read that timed out a time-out; the rest a store failure.
Error transfer_error(const Transfer& t, const std::string& response, bool write, std::string_view where);
// The outcome of a one-key txn's answer: the new revision, or lost_race for a failed
// compare.
Result<Revision> txn_result(const Transfer& t, const std::string& response, dom::parser& parser, std::string_view where,
                            Errc lost_race);
// The body of a one-key txn: compare the key's MOD (or CREATE) revision, then put
// (bound to lease, when not 0) or delete.
void txn_body(std::string& out, std::string& scratch, std::string_view key, bool create, Revision revision,
              const std::string_view* value, std::int64_t lease = 0);
curl_slist* make_headers(const std::string& token);
// An endpoint as a URL: "host:port" gets http:// (https:// with tls).
std::string endpoint_url(std::string_view e, bool tls);
// A POST of request to url on h, its answer into h.response; timeout 0: none (a
// watch's stream).
void prepare_easy(Http& h, const std::string& url, curl_slist* headers, const EtcdOptions& o,
                  const std::string& request, std::chrono::milliseconds timeout);

// A multi handle and the easy handles it drives, with the endpoint and headers of the
// store's connection when it opened.
struct Multi {
  CURLM* multi = curl_multi_init();
  std::string url;
  curl_slist* headers = nullptr;
  EtcdOptions o;
  Multi(const EtcdStore::Connection& c, std::string_view path);  // etcd.cpp
  ~Multi() {
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
  }
  Multi(const Multi&) = delete;
  Multi& operator=(const Multi&) = delete;
  // Run transfers, waiting up to wait_ms for one to move; then each finished one to done.
  template <typename Done>
  void drive(int wait_ms, Done&& done) {
    int running = 0;
    curl_multi_perform(multi, &running);
    if (wait_ms > 0 && running > 0) {
      curl_multi_poll(multi, nullptr, 0, wait_ms, nullptr);
      curl_multi_perform(multi, &running);
    }
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      CURL* easy = m->easy_handle;
      CURLcode code = m->data.result;
      curl_multi_remove_handle(multi, easy);
      done(easy, code);
    }
  }
};

}  // namespace leasejudge::etcd_wire
