// The etcd store's range reads (etcd_store.hpp): keys() and the scan, paginated ranges
// of a prefix at one revision.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <mutex>

#include "etcd_store.hpp"
#include "etcd_wire.hpp"

namespace leasejudge {

using namespace etcd_wire;

// --- range reads: keys() and the scan -------------------------------------------------

// One page of [start, end) at revision at (0: now), at most limit keys, its answer
// swapped into out.
Status EtcdStore::Connection::range_page(std::string_view start, std::string_view end, Revision at, std::size_t limit,
                                         bool keys_only, std::string& out, std::string_view what) {
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
  auto flush = [&] { return buffer.hand_over(sink, st); };
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

}  // namespace leasejudge
