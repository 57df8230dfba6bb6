// The etcd store's leases (etcd_store.hpp, leasejudge/store_lease.hpp): /v3/lease/*,
// and keys written bound to a lease.
#include <fmt/format.h>
#include <simdjson.h>

#include <mutex>

#include "etcd_store.hpp"
#include "etcd_wire.hpp"

namespace leasejudge {

using namespace etcd_wire;

// --- leases: /v3/lease/* --------------------------------------------------------------

// POST {"ID":"<lease>"} to path; the answer parsed by the connection's parser (the
// caller holds mu). An answer that is not an object is a store error, or an unknown
// outcome for a write.
Result<dom::element> EtcdStore::Connection::lease_call(std::string_view path, StoreLeaseId lease, std::string_view what,
                                                       bool write) {
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
    return Error{write ? Errc::unknown_outcome : Errc::store,
                 where(fmt::format("{}: an answer that is not etcd's", what))};
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
    return Error{Errc::unknown_outcome,
                 c.where(what + ": an answer that is not etcd's (a lease may have been granted)")};
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
  life.answer =
      life.ended
          ? fmt::format("etcd at {} answers TTL {}: it no longer has the lease", c_->endpoints[c_->current], life.ttl_s)
          : fmt::format("etcd at {} answers TTL {} of {} s", c_->endpoints[c_->current], life.ttl_s, life.granted_s);
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

}  // namespace leasejudge
