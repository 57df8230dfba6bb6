// The etcd store's connection, shared by its parts (private to lib/src/store/etcd*.cpp).
// The parts read as the NATS store's do:
//   etcd_wire.cpp      etcd's JSON gateway on the wire, libcurl (etcd_wire.hpp)
//   etcd.cpp           the connection: posting to the endpoints, authenticating, open
//   etcd_write.cpp     single keys: get, and the writes each a txn at its revision
//   etcd_lease.cpp     leases, and keys bound to them
//   etcd_pipeline.cpp  the pipeline of txns of many keys
//   etcd_scan.cpp      the range reads: keys() and the scan
//   etcd_watch.cpp     the watch
#pragma once

#include <fmt/format.h>
#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "etcd_wire.hpp"
#include "leasejudge/store/etcd.hpp"

namespace leasejudge {

// The store's connection: its options, endpoints and token, one keep-alive handle for
// the single-key calls, and what the store's pipelines learned and did.
struct EtcdStore::Connection {
  EtcdOptions o;
  std::vector<std::string> endpoints;
  std::string key_prefix;  // "<prefix>/"
  mutable std::mutex mu;   // the fields below
  std::size_t current = 0;
  std::string token;
  etcd_wire::Http http;
  curl_slist* headers = nullptr;
  std::string body, scratch, decoded;
  etcd_wire::dom::parser parser;
  // Keys a pipeline's txn holds at most: options' txn_keys, lowered for good when the
  // cluster refuses a txn of that many operations.
  std::atomic<std::size_t> txn_keys{0};
  mutable std::mutex stats_mu;
  EtcdWriteStats stats;  // under stats_mu

  ~Connection() { curl_slist_free_all(headers); }

  std::string full_key(std::string_view key) const { return key_prefix + std::string(key); }
  std::string where(std::string_view what) const {
    return fmt::format("etcd at {} (prefix {}): {}", endpoints[current], o.prefix, what);
  }
  void set_headers();
  void prepare(etcd_wire::Http& h, std::string_view path, const std::string& request,
               std::chrono::milliseconds timeout) const;
  etcd_wire::Transfer exchange(std::string_view path, const std::string& request, std::chrono::milliseconds timeout);
  Status post(std::string_view path, const std::string& request, bool write, std::chrono::milliseconds timeout,
              std::string_view what, etcd_wire::Transfer* out = nullptr);
  Status authenticate();
  // body = {"key":"<the full key in base64>", the object left open for the request's
  // other fields (the caller holds mu).
  void open_key_body(std::string_view key);
  Result<Revision> txn(std::string_view key, bool create, Revision revision, const std::string_view* value,
                       std::string_view what, Errc lost_race, std::int64_t lease = 0);
  Result<etcd_wire::dom::element> lease_call(std::string_view path, StoreLeaseId lease, std::string_view what,
                                             bool write);
  Status range_page(std::string_view start, std::string_view end, Revision at, std::size_t limit, bool keys_only,
                    std::string& out, std::string_view what);
  template <typename OnKv>
  Status range_all(std::string_view prefix, std::size_t limit, bool keys_only, std::string_view what, OnKv&& on_kv,
                   Revision* read_at = nullptr);
};

// Every key starting with prefix at one revision (the first page's), page by page
// (each continued after the last key read), each kv to on_kv. The store's lock is
// held only while a page is read: on_kv may call the store.
template <typename OnKv>
Status EtcdStore::Connection::range_all(std::string_view prefix, std::size_t limit, bool keys_only,
                                        std::string_view what, OnKv&& on_kv, Revision* read_at) {
  std::string start(prefix), end = etcd_wire::prefix_end(prefix), page, last;
  etcd_wire::dom::parser page_parser;
  Revision at = 0;
  for (;;) {
    if (Status s = range_page(start, end, at, limit, keys_only, page, what); !s) return s;
    etcd_wire::dom::element doc;
    etcd_wire::dom::array kvs;
    if (page_parser.parse(page).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
      std::lock_guard lock(mu);
      return Error{Errc::store, where(fmt::format("{}: an answer that is not etcd's", what))};
    }
    if (at == 0) {
      etcd_wire::dom::element header;
      if (doc["header"].get(header) == simdjson::SUCCESS) at = etcd_wire::int_field(header, "revision");
      if (read_at != nullptr) *read_at = at;
    }
    if (doc["kvs"].get(kvs) != simdjson::SUCCESS) return Status::success();
    for (etcd_wire::dom::element kv : kvs) {
      if (Status s = on_kv(kv); !s) return s;
    }
    if (!etcd_wire::bool_field(doc, "more") || kvs.size() == 0) return Status::success();
    if (!etcd_wire::base64_decode(etcd_wire::string_field(kvs.at(kvs.size() - 1), "key"), last)) {
      return Error{Errc::store, fmt::format("etcd: {}: a key that is not base64", what)};
    }
    start = last + std::string(1, '\0');
  }
}

}  // namespace leasejudge
