#include "leasejudge/store/memory.hpp"

#include <fmt/format.h>

namespace leasejudge {

Result<std::vector<std::string>> MemoryStore::keys() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [k, e] : entries_) out.push_back(k);
  return out;
}

Result<std::optional<StoreEntry>> MemoryStore::get(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::optional<StoreEntry>();
  return std::optional<StoreEntry>(it->second);
}

Result<Revision> MemoryStore::update(std::string_view key, std::string_view value, Revision revision) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.revision != revision) {
    return Error{Errc::changed, fmt::format("the key {} is no longer at revision {}", key, revision)};
  }
  it->second.value.assign(value);
  it->second.revision = ++last_;
  return it->second.revision;
}

Result<Revision> MemoryStore::create(std::string_view key, std::string_view value) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = entries_.try_emplace(std::string(key));
  if (!inserted) return Error{Errc::exists, fmt::format("the key {} exists", key)};
  it->second.value.assign(value);
  it->second.revision = ++last_;
  return it->second.revision;
}

Status MemoryStore::remove(std::string_view key, Revision revision) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.revision != revision) {
    return Status(Errc::changed, fmt::format("the key {} is no longer at revision {}", key, revision));
  }
  entries_.erase(it);
  ++last_;
  return Status::success();
}

Status MemoryStore::scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options, ScanStats* stats) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  ScanBuffer buffer;
  std::string after;  // the last key handed over
  bool first = true;
  for (;;) {
    bool done = false;
    {
      std::lock_guard lock(mu_);
      auto it = first ? entries_.lower_bound(prefix) : entries_.upper_bound(after);
      for (; it != entries_.end() && !buffer.full(options); ++it) {
        if (it->first.compare(0, prefix.size(), prefix) != 0) break;
        buffer.add(it->first, it->second.value, it->second.revision);
        ++st.keys;
        st.bytes += it->first.size() + it->second.value.size();
      }
      done = it == entries_.end() || it->first.compare(0, prefix.size(), prefix) != 0;
    }
    if (buffer.size() > 0) {
      ScanBatch batch = buffer.batch();
      const BatchEntry& last = batch.entries.back();
      after.assign(batch.buffer.substr(last.key_offset, last.key_len));
      ++st.batches;
      if (Status s = sink(batch); !s.ok()) return s;
      buffer.clear();
    }
    if (done) return Status::success();
    first = false;
  }
}

Revision MemoryStore::put(std::string_view key, std::string_view value) {
  std::lock_guard lock(mu_);
  auto& e = entries_[std::string(key)];
  e.value.assign(value);
  e.revision = ++last_;
  return e.revision;
}

std::size_t MemoryStore::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace leasejudge
