// The memory store: a Store in this process, for tests and benchmarks. Thread-safe.
// Revisions are one counter across all keys, as a JetStream stream's sequence is.
//
// A store can hold entries in place: adopt() takes a buffer of keys and values (a
// state read into memory) without copying it, and a scan hands those entries over
// in batches over that very buffer. A value written since lives in the store's own
// memory and is copied into the scan's batch as in any store. Keys are found by
// hash. A scan hands keys over in the order they were first written, as they sit
// in memory (a JetStream scan too follows its stream, not the keys' order: an
// adopted state read in key order scans in key order); keys() lists them sorted.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "leasejudge/store.hpp"

namespace leasejudge {

class MemoryStore final : public Store {
 public:
  MemoryStore() = default;
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  Result<std::vector<std::string>> keys() override;
  Result<std::optional<StoreEntry>> get(std::string_view key) override;
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override;
  Result<Revision> create(std::string_view key, std::string_view value) override;
  Status remove(std::string_view key, Revision revision) override;
  // Batch by batch, each read under the lock; between batches the store is free,
  // and the scan goes on where it stopped. A key first written after the scan began
  // is not handed over. Adopted entries come in batches over their own buffer, the
  // rest copied.
  Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options = {},
              ScanStats* stats = nullptr) override;

  // Write value whatever the key holds (a test's other writer); the new revision.
  Revision put(std::string_view key, std::string_view value);
  // Hold each entry's key and value where it sits in bytes, as put() would (a later
  // entry of the same key wins; a value of no bytes is an empty value), each at a
  // revision of the store's own. Nothing is copied: bytes, and `padding` readable
  // bytes after it, must stay as they are while the store lives (keep, when given,
  // is held that long). Errc::invalid_argument, and nothing held, when an entry lies
  // outside bytes.
  Status adopt(std::string_view bytes, std::size_t padding, std::span<const BatchEntry> entries,
               std::shared_ptr<const void> keep = {});
  std::size_t size() const;

 private:
  static constexpr std::size_t head_size = 16;
  // What a scan reads comes first, within one cache line.
  struct Item {
    std::string_view key, value;  // into an adopted buffer, or into own_key and own_value
    char head[head_size] = {};    // the key's first bytes: a scan's prefix test reads no key bytes
    Revision revision = 0;
    std::uint32_t buffer = 0;  // 1 + the adopted buffer holding key and value; 0: value is the store's
    bool live = true;
    std::size_t slot = 0;  // its place in the index, while live
    std::string own_key, own_value;
  };
  // The live items by key: open addressing with linear probing over a power-of-two
  // table kept at most half full, each slot a key's hash and its item. An item
  // knows its slot, so it leaves the index without a search.
  class KeyIndex {
   public:
    Item* find(std::string_view key) const;
    void insert(Item& item);  // an item whose key the index does not hold
    void erase(Item& item);
    void reserve(std::size_t items);
    std::size_t size() const noexcept { return live_; }

   private:
    struct Slot {
      std::uint64_t hash = 0;
      Item* item = nullptr;  // nullptr: empty; gone(): an item left
    };
    static Item* gone();
    void rehash(std::size_t capacity);
    void place(Item& item, std::uint64_t hash);
    std::vector<Slot> slots_;
    std::size_t live_ = 0, used_ = 0;  // used_: live and left slots
  };
  struct Adopted {
    std::string_view bytes;
    std::size_t padding = 0;
    std::shared_ptr<const void> keep;
  };
  struct Cursor;

  Item* find(std::string_view key) const;
  Item* find_written(std::string_view key);
  static bool has_prefix(const Item& item, std::string_view prefix);
  Item& insert(std::string_view key, bool own_key);
  void write(Item& item, std::string_view value);
  void drop(Item& item);
  std::size_t fill(Cursor& cursor, const ScanOptions& options, ScanBuffer& copied, std::vector<BatchEntry>& in_place,
                   ScanStats& st);
  void compact();

  mutable std::mutex mu_;
  std::deque<Item> items_;     // every item, at a stable address
  std::vector<Item*> free_;    // items dropped and out of order_: reused
  std::vector<Item*> order_;   // items as first written, some dropped since
  std::size_t dropped_in_order_ = 0;
  std::size_t scans_ = 0;      // scans under way: order_ is compacted only when none is
  KeyIndex index_;
  std::vector<Adopted> adopted_;
  // The items of the last batch handed over in place, by where their keys sit: a
  // sweep writes the keys of a batch in its order, with the batch's own key bytes,
  // so its writes find their items here, next to the one found before.
  std::vector<std::pair<const char*, Item*>> handed_;
  std::size_t handed_next_ = 0;
  Revision last_ = 0;
};

}  // namespace leasejudge
