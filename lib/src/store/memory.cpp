#include "leasejudge/store/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>

namespace leasejudge {

namespace {

bool inside(std::string_view bytes, std::uint64_t offset, std::uint64_t len) {
  return offset <= bytes.size() && len <= bytes.size() - offset;
}

}  // namespace

// Where a scan is in order_, which no scan under way sees move: what it has left is
// order_[pos, end), end fixed when it began.
struct MemoryStore::Cursor {
  std::string_view prefix;
  std::size_t pos = 0, end = 0;
};

// --- the index -----------------------------------------------------------------

MemoryStore::Item* MemoryStore::KeyIndex::gone() {
  static Item left;
  return &left;
}

MemoryStore::Item* MemoryStore::KeyIndex::find(std::string_view key) const {
  if (slots_.empty()) return nullptr;
  const std::uint64_t hash = std::hash<std::string_view>{}(key);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.item == nullptr) return nullptr;
    if (s.hash == hash && s.item != gone() && s.item->key == key) return s.item;
  }
}

void MemoryStore::KeyIndex::place(Item& item, std::uint64_t hash) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (slots_[i].item != nullptr && slots_[i].item != gone()) i = (i + 1) & mask;
  if (slots_[i].item == nullptr) ++used_;
  slots_[i] = Slot{hash, &item};
  item.slot = i;
}

void MemoryStore::KeyIndex::rehash(std::size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  used_ = 0;
  for (const Slot& s : old)
    if (s.item != nullptr && s.item != gone()) place(*s.item, s.hash);
}

void MemoryStore::KeyIndex::reserve(std::size_t items) {
  if (items * 2 <= slots_.size() && used_ * 2 <= slots_.size()) return;
  rehash(std::bit_ceil(std::max<std::size_t>(16, items * 2)));
}

void MemoryStore::KeyIndex::insert(Item& item) {
  if ((used_ + 1) * 2 > slots_.size()) rehash(std::bit_ceil(std::max<std::size_t>(16, (live_ + 1) * 4)));
  place(item, std::hash<std::string_view>{}(item.key));
  ++live_;
}

void MemoryStore::KeyIndex::erase(Item& item) {
  slots_[item.slot].item = gone();
  --live_;
}

// --- the store -----------------------------------------------------------------

MemoryStore::Item* MemoryStore::find(std::string_view key) const {
  return index_.find(key);
}

// The item of key, for a write: looked for among the items last handed over, from
// the one found before, by the address of the key's bytes (a live item whose key
// sits at the same address, of the same length, is that key's), else by hash.
MemoryStore::Item* MemoryStore::find_written(std::string_view key) {
  for (std::size_t i = handed_next_; i < handed_.size(); ++i) {
    if (handed_[i].first != key.data()) continue;
    Item* item = handed_[i].second;
    if (!item->live || item->key.data() != key.data() || item->key.size() != key.size()) break;
    handed_next_ = i + 1;
    return item;
  }
  return find(key);
}

bool MemoryStore::has_prefix(const Item& item, std::string_view prefix) {
  if (prefix.empty()) return true;
  if (item.key.size() < prefix.size()) return false;
  if (prefix.size() <= head_size) return std::memcmp(item.head, prefix.data(), prefix.size()) == 0;
  return item.key.starts_with(prefix);
}

MemoryStore::Item& MemoryStore::insert(std::string_view key, bool own_key) {
  if (dropped_in_order_ > 64 && dropped_in_order_ * 2 > order_.size()) compact();
  Item* item;
  if (!free_.empty()) {
    item = free_.back();
    free_.pop_back();
    *item = Item{};
  } else {
    item = &items_.emplace_back();
  }
  if (own_key) {
    item->own_key.assign(key);
    item->key = item->own_key;
  } else {
    item->key = key;
  }
  if (!key.empty()) std::memcpy(item->head, key.data(), std::min(key.size(), head_size));  // an empty view may be null
  order_.push_back(item);
  index_.insert(*item);
  return *item;
}

void MemoryStore::write(Item& item, std::string_view value) {
  item.own_value.assign(value);
  item.value = item.own_value;
  item.buffer = 0;
  item.revision = ++last_;
}

void MemoryStore::drop(Item& item) {
  index_.erase(item);
  item.live = false;
  item.value = {};
  std::string().swap(item.own_value);
  ++dropped_in_order_;
  ++last_;
}

// Drop the items no longer live from order_: only while no scan is under way, and
// only then are their items reused.
void MemoryStore::compact() {
  if (dropped_in_order_ == 0 || scans_ > 0) return;
  std::size_t kept = 0;
  for (Item* item : order_) {
    if (item->live)
      order_[kept++] = item;
    else
      free_.push_back(item);
  }
  order_.resize(kept);
  dropped_in_order_ = 0;
  handed_.clear();
  handed_next_ = 0;
}

Result<std::vector<std::string>> MemoryStore::keys() {
  std::vector<std::string> out;
  {
    std::lock_guard lock(mu_);
    out.reserve(index_.size());
    for (const Item* item : order_)
      if (item->live) out.emplace_back(item->key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::optional<StoreEntry>> MemoryStore::get(std::string_view key) {
  std::lock_guard lock(mu_);
  const Item* item = find(key);
  if (item == nullptr) return std::optional<StoreEntry>();
  return std::optional<StoreEntry>(StoreEntry{std::string(item->value), item->revision});
}

Result<Revision> MemoryStore::update(std::string_view key, std::string_view value, Revision revision) {
  std::lock_guard lock(mu_);
  Item* item = find_written(key);
  if (item == nullptr || item->revision != revision) {
    return Error{Errc::changed, fmt::format("the key {} is no longer at revision {}", key, revision)};
  }
  write(*item, value);
  return item->revision;
}

Result<Revision> MemoryStore::create(std::string_view key, std::string_view value) {
  std::lock_guard lock(mu_);
  if (find(key) != nullptr) return Error{Errc::exists, fmt::format("the key {} exists", key)};
  Item& item = insert(key, true);
  write(item, value);
  return item.revision;
}

Status MemoryStore::remove(std::string_view key, Revision revision) {
  std::lock_guard lock(mu_);
  Item* item = find_written(key);
  if (item == nullptr || item->revision != revision) {
    return Status(Errc::changed, fmt::format("the key {} is no longer at revision {}", key, revision));
  }
  drop(*item);
  return Status::success();
}

Revision MemoryStore::put(std::string_view key, std::string_view value) {
  std::lock_guard lock(mu_);
  Item* item = find(key);
  if (item == nullptr) item = &insert(key, true);
  write(*item, value);
  return item->revision;
}

Status MemoryStore::adopt(std::string_view bytes, std::size_t padding, std::span<const BatchEntry> entries,
                          std::shared_ptr<const void> keep) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BatchEntry& e = entries[i];
    if (!inside(bytes, e.key_offset, e.key_len) || !inside(bytes, e.value_offset, e.value_len))
      return Status(Errc::invalid_argument,
                    fmt::format("entry {} lies outside the buffer of {} bytes", i, bytes.size()));
  }
  std::lock_guard lock(mu_);
  adopted_.push_back(Adopted{bytes, padding, std::move(keep)});
  const auto buffer = static_cast<std::uint32_t>(adopted_.size());
  index_.reserve(index_.size() + entries.size());
  for (const BatchEntry& e : entries) {
    std::string_view key = bytes.substr(e.key_offset, e.key_len);
    Item* item = find(key);
    if (item == nullptr) item = &insert(key, false);
    // The index's key may stay where it was (those bytes are kept); the item's is now here.
    item->key = key;
    item->value = bytes.substr(e.value_offset, e.value_len);
    std::string().swap(item->own_value);
    item->buffer = buffer;
    item->revision = ++last_;
  }
  return Status::success();
}

std::size_t MemoryStore::size() const {
  std::lock_guard lock(mu_);
  return index_.size();
}

// Under the lock: the next batch's entries from where cursor is, into in_place (the
// entries of one adopted buffer, whose number it returns) or into copied, never both.
std::size_t MemoryStore::fill(Cursor& cursor, const ScanOptions& options, ScanBuffer& copied,
                              std::vector<BatchEntry>& in_place, ScanStats& st) {
  const std::size_t max_keys = std::max<std::size_t>(options.batch_keys, 1);
  std::size_t from = 0, in_place_bytes = 0;
  handed_.clear();
  handed_next_ = 0;
  for (; cursor.pos < cursor.end; ++cursor.pos) {
    Item* item = order_[cursor.pos];
    if (!item->live || !has_prefix(*item, cursor.prefix)) continue;
    if (in_place.size() >= max_keys || in_place_bytes >= options.batch_bytes || copied.full(options)) break;
    if (item->buffer != 0) {
      if (copied.size() > 0 || (from != 0 && item->buffer != from)) break;
      from = item->buffer;
      std::string_view bytes = adopted_[from - 1].bytes;
      BatchEntry e;
      e.key_offset = static_cast<std::uint64_t>(item->key.data() - bytes.data());
      e.key_len = static_cast<std::uint32_t>(item->key.size());
      e.value_offset = static_cast<std::uint64_t>(item->value.data() - bytes.data());
      e.value_len = static_cast<std::uint32_t>(item->value.size());
      e.revision = item->revision;
      in_place.push_back(e);
      handed_.emplace_back(item->key.data(), item);
      in_place_bytes += item->key.size() + item->value.size();
    } else {
      if (!in_place.empty()) break;
      copied.add(item->key, item->value, item->revision);
    }
    ++st.keys;
    st.bytes += item->key.size() + item->value.size();
  }
  return from;
}

Status MemoryStore::scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options, ScanStats* stats) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  Cursor cursor;
  cursor.prefix = prefix;
  {
    std::lock_guard lock(mu_);
    compact();
    ++scans_;
    cursor.end = order_.size();  // keys first written since are not this scan's
  }
  struct Done {
    MemoryStore& store;
    ~Done() {
      std::lock_guard lock(store.mu_);
      --store.scans_;
    }
  } done{*this};
  ScanBuffer copied;
  std::vector<BatchEntry> in_place;
  for (;;) {
    ScanBatch batch;
    {
      std::lock_guard lock(mu_);
      std::size_t from = fill(cursor, options, copied, in_place, st);
      if (from != 0) batch = ScanBatch{adopted_[from - 1].bytes, adopted_[from - 1].padding, in_place};
    }
    if (in_place.empty()) {
      if (copied.size() == 0) return Status::success();
      batch = copied.batch();
    }
    ++st.batches;
    if (Status s = sink(batch); !s.ok()) return s;
    copied.clear();
    in_place.clear();
  }
}

}  // namespace leasejudge
