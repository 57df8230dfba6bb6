// The C ABI's store part: handles over the memory and file stores, a Store over
// the caller's callbacks, and the store operations.
#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "internal.hpp"
#include "leasejudge/store/file.hpp"
#include "leasejudge/store/memory.hpp"
#include "options.hpp"
#include "store_handle.hpp"

using leasejudge::Errc;
using leasejudge::Error;
using leasejudge::Result;
using leasejudge::Revision;
using leasejudge::Status;
using leasejudge::StoreEntry;
using namespace leasejudge::capi;

namespace {

// A scan callback's reading: the prefix, the batch it fills, and where it goes.
struct ScanReading {
  std::string_view prefix;
  const leasejudge::ScanOptions* options = nullptr;
  const leasejudge::ScanSink* sink = nullptr;
  leasejudge::ScanStats* stats = nullptr;
  leasejudge::ScanBuffer buffer;
  Status stopped;  // what stopped the reading (the sink's failure), when it did
  int stop_code = LJ_OK;

  // Hand the batch over; LJ_OK, or the code the callback is asked to return.
  int flush() {
    if (buffer.size() == 0 || stop_code != LJ_OK) return stop_code;
    ++stats->batches;
    try {
      stopped = (*sink)(buffer.batch());
    } catch (const std::bad_alloc&) {
      stopped = Status(Errc::no_memory, "out of memory");
    }
    buffer.clear();
    if (!stopped.ok()) stop_code = stopped.code() == Errc::user ? LJ_EUSER : static_cast<int>(stopped.code());
    return stop_code;
  }
};

}  // namespace

struct lj_store_sink_t {
  std::optional<StoreEntry>* entry = nullptr;  // a get callback's
  std::vector<std::string>* keys = nullptr;    // a keys callback's
  ScanReading* scan = nullptr;                 // a scan callback's
};

namespace {

const OptionsVersions<lj_store_callbacks_t, 2> store_callbacks_versions{
    "lj_store_callbacks_t",
    LJ_STORE_CALLBACKS_INIT,
    {offsetof(lj_store_callbacks_t, scan), sizeof(lj_store_callbacks_t)}};

// A callback's return as the Store interface says it: expected results keep their
// code, other negative codes are the store's failure, positive codes stop (EUSER).
Error callback_error(int rc, std::string_view what) {
  if (rc > 0) return Error{Errc::user, fmt::format("the store's {} callback asked to stop ({})", what, rc)};
  if (rc < static_cast<int>(leasejudge::lowest_errc)) {
    return Error{Errc::store, fmt::format("the store's {} callback failed with {}", what, rc)};
  }
  auto code = static_cast<Errc>(rc);
  return Error{code, fmt::format("the store's {} callback: {}", what, leasejudge::errc_message(code))};
}

class CallbackStore final : public leasejudge::Store {
 public:
  CallbackStore(const lj_store_callbacks_t& cb, void* payload) : cb_(cb), payload_(payload) {}
  ~CallbackStore() override {
    if (cb_.release != nullptr) cb_.release(payload_);
  }
  CallbackStore(const CallbackStore&) = delete;
  CallbackStore& operator=(const CallbackStore&) = delete;

  Result<std::vector<std::string>> keys() override {
    std::vector<std::string> keys;
    lj_store_sink_t sink;
    sink.keys = &keys;
    int rc = cb_.keys(&sink, payload_);
    if (rc != LJ_OK) return callback_error(rc, "keys");
    return keys;
  }

  Result<std::optional<StoreEntry>> get(std::string_view key) override {
    std::optional<StoreEntry> entry;
    lj_store_sink_t sink;
    sink.entry = &entry;
    int rc = cb_.get(&sink, key.data(), key.size(), payload_);
    if (rc != LJ_OK) return callback_error(rc, "get");
    return entry;
  }

  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
    uint64_t out = 0;
    int rc = cb_.update(&out, key.data(), key.size(), value.data(), value.size(), revision, payload_);
    if (rc != LJ_OK) return callback_error(rc, "update");
    if (out == 0) return Error{Errc::store, "the store's update callback gave no revision"};
    return Revision{out};
  }

  Result<Revision> create(std::string_view key, std::string_view value) override {
    uint64_t out = 0;
    int rc = cb_.create(&out, key.data(), key.size(), value.data(), value.size(), payload_);
    if (rc != LJ_OK) return callback_error(rc, "create");
    if (out == 0) return Error{Errc::store, "the store's create callback gave no revision"};
    return Revision{out};
  }

  Status remove(std::string_view key, Revision revision) override {
    int rc = cb_.remove(key.data(), key.size(), revision, payload_);
    if (rc != LJ_OK) return callback_error(rc, "remove");
    return Status::success();
  }

  // Through the scan callback where there is one, batches filled by its entries.
  Status scan(std::string_view prefix, const leasejudge::ScanSink& sink, const leasejudge::ScanOptions& options,
              leasejudge::ScanStats* stats) override {
    if (cb_.scan == nullptr) return Store::scan(prefix, sink, options, stats);
    leasejudge::ScanStats local;
    ScanReading reading;
    reading.prefix = prefix;
    reading.options = &options;
    reading.sink = &sink;
    reading.stats = stats != nullptr ? stats : &local;
    lj_store_sink_t s;
    s.scan = &reading;
    int rc = cb_.scan(&s, prefix.data(), prefix.size(), payload_);
    if (!reading.stopped.ok()) return reading.stopped;  // the reader's own stop, as it said it
    if (rc != LJ_OK) return callback_error(rc, "scan");
    reading.flush();
    return reading.stopped;
  }

 private:
  lj_store_callbacks_t cb_;
  void* payload_;
};

bool store_ok(lj_store_t* store) {
  return store != nullptr && store->store != nullptr;
}

}  // namespace

extern "C" {

LJ_API int lj_store_sink_put(lj_store_sink_t* sink, const char* value, size_t value_len, uint64_t revision) {
  if (sink == nullptr || sink->entry == nullptr) return LJ_EINVAL;
  if (revision == 0 || sink->entry->has_value()) return LJ_EINVAL;
  std::string_view v;
  if (!view_of(value, value_len, v)) return LJ_EINVAL;
  return guard(nullptr, [&] {
    *sink->entry = StoreEntry{std::string(v), revision};
    return LJ_OK;
  });
}

LJ_API int lj_store_sink_entry(lj_store_sink_t* sink, const char* key, size_t key_len, const char* value,
                               size_t value_len, uint64_t revision) {
  if (sink == nullptr || sink->scan == nullptr) return LJ_EINVAL;
  ScanReading& r = *sink->scan;
  if (r.stop_code != LJ_OK) return r.stop_code;
  std::string_view k, v;
  if (!view_of(key, key_len, k) || !view_of(value, value_len, v) || revision == 0) return LJ_EINVAL;
  if (k.substr(0, r.prefix.size()) != r.prefix) return LJ_EINVAL;
  if (k.size() > UINT32_MAX || v.size() > UINT32_MAX) return LJ_EINVAL;
  return guard(nullptr, [&] {
    r.buffer.add(k, v, revision);
    ++r.stats->keys;
    r.stats->bytes += k.size() + v.size();
    return r.buffer.full(*r.options) ? r.flush() : LJ_OK;
  });
}

LJ_API int lj_store_sink_key(lj_store_sink_t* sink, const char* key, size_t key_len) {
  if (sink == nullptr || sink->keys == nullptr) return LJ_EINVAL;
  std::string_view k;
  if (!view_of(key, key_len, k)) return LJ_EINVAL;
  return guard(nullptr, [&] {
    sink->keys->emplace_back(k);
    return LJ_OK;
  });
}

LJ_API int lj_store_callbacks_init(lj_store_callbacks_t* callbacks, uint32_t version) {
  return init_options(callbacks, version, store_callbacks_versions);
}

LJ_API int lj_store_from_callbacks(lj_store_t** out, const lj_store_callbacks_t* in, void* payload, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (in == nullptr) return fail(err, LJ_EINVAL, "callbacks is NULL");
  lj_store_callbacks_t read;
  if (int rc = read_options(read, in, store_callbacks_versions, err); rc != LJ_OK) return rc;
  const lj_store_callbacks_t* callbacks = &read;
  auto give_back = [&] {
    if (callbacks->release != nullptr) callbacks->release(payload);
  };
  if (callbacks->keys == nullptr || callbacks->get == nullptr || callbacks->update == nullptr ||
      callbacks->create == nullptr || callbacks->remove == nullptr) {
    give_back();
    return fail(err, LJ_EINVAL, "a store needs its keys, get, update, create and remove callbacks");
  }
  int rc = guard(err, [&] {
    *out = adopt_store(std::make_unique<CallbackStore>(*callbacks, payload));
    return LJ_OK;
  });
  // Out of memory before the store took the payload: release it here.
  if (rc != LJ_OK && *out == nullptr) give_back();
  return rc;
}

LJ_API int lj_store_memory_open(lj_store_t** out, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  return guard(err, [&] {
    *out = adopt_store(std::make_unique<leasejudge::MemoryStore>());
    return LJ_OK;
  });
}

LJ_API int lj_store_file_open(lj_store_t** out, const char* dir, size_t dir_len, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view d;
  if (!view_of(dir, dir_len, d) || d.empty()) return fail(err, LJ_EINVAL, "dir is empty");
  if (d.find('\0') != std::string_view::npos) return fail(err, LJ_EINVAL, "dir holds a NUL byte");
  return guard(err, [&] {
    auto store = leasejudge::FileStore::open(std::string(d));
    if (!store) return fail(err, store.error());
    *out = adopt_store(std::move(*store));
    return LJ_OK;
  });
}

LJ_API void lj_store_destroy(lj_store_t* store) {
  delete store;
}

LJ_API int lj_store_get(char** out_value, size_t* out_len, uint64_t* out_revision, lj_store_t* store, const char* key,
                        size_t key_len, lj_error_t** err) {
  reset(err);
  if (out_value == nullptr) return fail(err, LJ_EINVAL, "out_value is NULL");
  *out_value = nullptr;
  if (!store_ok(store)) return fail(err, LJ_EINVAL, "store is NULL");
  std::string_view k;
  if (!view_of(key, key_len, k)) return fail(err, LJ_EINVAL, "key is NULL");
  return guard(err, [&] {
    auto found = store->store->get(k);
    if (!found) return fail(err, found.error());
    if (!found->has_value()) return fail(err, LJ_ENOTFOUND, fmt::format("the key {} holds nothing", k));
    if (out_revision != nullptr) *out_revision = (*found)->revision;
    return give(out_value, out_len, (*found)->value, err);
  });
}

LJ_API int lj_store_create(uint64_t* out_revision, lj_store_t* store, const char* key, size_t key_len,
                           const char* value, size_t value_len, lj_error_t** err) {
  reset(err);
  if (!store_ok(store)) return fail(err, LJ_EINVAL, "store is NULL");
  std::string_view k, v;
  if (!view_of(key, key_len, k)) return fail(err, LJ_EINVAL, "key is NULL");
  if (!view_of(value, value_len, v)) return fail(err, LJ_EINVAL, "value is NULL");
  return guard(err, [&] {
    auto revision = store->store->create(k, v);
    if (!revision) return fail(err, revision.error());
    if (out_revision != nullptr) *out_revision = *revision;
    return LJ_OK;
  });
}

LJ_API int lj_store_update(uint64_t* out_revision, lj_store_t* store, const char* key, size_t key_len,
                           const char* value, size_t value_len, uint64_t revision, lj_error_t** err) {
  reset(err);
  if (!store_ok(store)) return fail(err, LJ_EINVAL, "store is NULL");
  std::string_view k, v;
  if (!view_of(key, key_len, k)) return fail(err, LJ_EINVAL, "key is NULL");
  if (!view_of(value, value_len, v)) return fail(err, LJ_EINVAL, "value is NULL");
  return guard(err, [&] {
    auto next = store->store->update(k, v, revision);
    if (!next) return fail(err, next.error());
    if (out_revision != nullptr) *out_revision = *next;
    return LJ_OK;
  });
}

LJ_API int lj_store_remove(lj_store_t* store, const char* key, size_t key_len, uint64_t revision, lj_error_t** err) {
  reset(err);
  if (!store_ok(store)) return fail(err, LJ_EINVAL, "store is NULL");
  std::string_view k;
  if (!view_of(key, key_len, k)) return fail(err, LJ_EINVAL, "key is NULL");
  return guard(err, [&] {
    Status removed = store->store->remove(k, revision);
    if (!removed) return fail(err, removed.error());
    return LJ_OK;
  });
}

LJ_API int lj_store_scan(lj_store_t* store, const char* prefix, size_t prefix_len, lj_store_batch_cb each,
                         void* payload, lj_error_t** err) {
  reset(err);
  if (!store_ok(store)) return fail(err, LJ_EINVAL, "store is NULL");
  if (each == nullptr) return fail(err, LJ_EINVAL, "each is NULL");
  std::string_view p;
  if (!view_of(prefix, prefix_len, p)) return fail(err, LJ_EINVAL, "prefix is NULL with a length");
  return guard(err, [&] {
    static_assert(sizeof(lj_step_entry_t) == sizeof(leasejudge::BatchEntry));
    int stopped = 0;
    Status read = store->store->scan(p, [&](const leasejudge::ScanBatch& b) -> Status {
      stopped = each(b.buffer.data(), b.buffer.size(), b.padding,
                     reinterpret_cast<const lj_step_entry_t*>(b.entries.data()), b.entries.size(), payload);
      if (stopped != 0) return Status(Errc::user, fmt::format("the batch callback asked to stop ({})", stopped));
      return Status::success();
    });
    if (!read) return fail(err, read.error());
    return LJ_OK;
  });
}

LJ_API int lj_store_keys(lj_store_t* store, lj_store_key_cb each, void* payload, lj_error_t** err) {
  reset(err);
  if (!store_ok(store)) return fail(err, LJ_EINVAL, "store is NULL");
  if (each == nullptr) return fail(err, LJ_EINVAL, "each is NULL");
  return guard(err, [&] {
    auto keys = store->store->keys();
    if (!keys) return fail(err, keys.error());
    for (const std::string& key : *keys) {
      int rc = each(key.c_str(), key.size(), payload);
      if (rc != 0) return fail(err, LJ_EUSER, fmt::format("the key callback asked to stop ({})", rc));
    }
    return LJ_OK;
  });
}

}  // extern "C"
