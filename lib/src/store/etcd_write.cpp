// The etcd store's single keys (etcd_store.hpp): get, and the writes each a txn on the
// key's revision (update, create, remove) or none (put), and compaction.
#include <fmt/format.h>
#include <simdjson.h>

#include <mutex>

#include "etcd_store.hpp"
#include "etcd_wire.hpp"

namespace leasejudge {

using namespace etcd_wire;

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

// --- single keys ----------------------------------------------------------------------

void EtcdStore::Connection::open_key_body(std::string_view key) {
  body = "{";
  append_bytes_field(body, "key", full_key(key), scratch);
}

Result<std::optional<StoreEntry>> EtcdStore::get(std::string_view key) {
  if (key.empty()) return Error{Errc::invalid_argument, "an etcd store key is empty"};
  std::lock_guard lock(c_->mu);
  Connection& c = *c_;
  c.open_key_body(key);
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
  c.open_key_body(key);
  c.body += ',';
  append_bytes_field(c.body, "value", value, c.scratch);
  c.body += '}';
  std::string what = fmt::format("the put of {}", key);
  if (Status s = c.post("/v3/kv/put", c.body, true, c.o.request_timeout, what); !s) return s.error();
  dom::element doc, header;
  if (c.parser.parse(c.http.response).get(doc) != simdjson::SUCCESS || doc["header"].get(header) != simdjson::SUCCESS) {
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

}  // namespace leasejudge
