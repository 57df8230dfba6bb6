// A store: keys with values and revisions, where every write names the revision it
// read and a lost race says `changed` instead of overwriting.
//
// Sweeps and locks act only through this interface. Implementations: memory (tests,
// benchmarks), file (locks on one machine), nats (JetStream key/value, a fleet).
//
// Besides the five single-key calls a store offers two for sweeps, each with a
// default built on the single-key calls, so that every store can serve a sweep:
// - scan: every key under a prefix with its revision and value, in batches whose
//   bytes sit in one buffer the store reuses from batch to batch. The default lists
//   the keys and reads each (keys() + get()); the memory, file and NATS stores read
//   natively (the NATS store in one server-side filtered pass).
// - pipeline: writes in flight at once, each at the revision read, each with its own
//   outcome, given back in the order the writes were sent. The default performs each
//   write as it is sent. A write is an update, a remove or a create (where the key
//   holds none). An outcome is done, changed (another writer was first, or a create
//   found a value: the write did not land), failed (it did not land) or unknown (its acknowledgement
//   never came: it may have landed). Nothing is ever retried.
//
// And one for a sweep that runs as a service: watch, the changes of the keys under a
// prefix as they come (key, revision, value or none), from the moment the watch
// begins: what the keys held before is for a scan to read. The default polls with
// scan and hands over what moved between two polls; the NATS store watches natively
// (a KV watch). A watch whose store is lost (a dropped connection) fails and gives
// nothing more: the caller opens another and reads again what it may have missed.
//
// And one capability only some stores have: leases() (store_lease.hpp), leases the
// store keeps on its own clock and deletes bound keys with (etcd); nullptr elsewhere.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/error.hpp"

namespace leasejudge {

using Revision = std::uint64_t;

struct StoreEntry {
  std::string value;
  Revision revision = 0;  // > 0 for a stored value
  std::int64_t lease = 0;  // the store lease the key is bound to (store_lease.hpp); 0: none
};

// Where one entry's key and value sit in a batch buffer (offsets from its start). The
// layout of the C ABI's lj_step_entry_t.
struct BatchEntry {
  std::uint64_t key_offset = 0;
  std::uint64_t value_offset = 0;
  std::uint32_t key_len = 0;
  std::uint32_t value_len = 0;  // 0: the key holds no value (or an empty one)
  Revision revision = 0;
};

// One batch of a scan: the entries' keys and values sit in buffer, and at least
// `padding` readable bytes (of any content) follow it, so values can be parsed in
// place. Valid only during the call it is passed to.
struct ScanBatch {
  std::string_view buffer;
  std::size_t padding = 0;
  std::span<const BatchEntry> entries;
};

// A line a store says about a wait, a retry or a reconnection, as it happens.
using StoreNote = std::function<void(std::string_view line)>;

struct ScanOptions {
  std::size_t batch_keys = 4096;              // entries per batch, at most
  std::size_t batch_bytes = 4 * 1024 * 1024;  // and about this many bytes (a larger value comes alone)
  StoreNote note;
};

// What a scan did.
struct ScanStats {
  std::uint64_t keys = 0;   // entries handed over
  std::uint64_t bytes = 0;  // their keys' and values' bytes
  std::uint64_t batches = 0;
  std::uint64_t waits = 0;     // times the store waited past its patience (each noted)
  std::uint64_t retries = 0;   // reads started again before anything was handed over (each noted)
  std::uint64_t skipped = 0;   // keys written since the scan began, left to the next scan
  std::uint64_t rejected = 0;  // keys breaking the store's key rules (another client's): left unread
  std::string failed_key;      // a failed scan: the key whose read failed ("": the listing)
};

// Receives each batch; a failed status stops the scan, which returns it as it is.
using ScanSink = std::function<Status(const ScanBatch& batch)>;

// What became of one write of a pipeline.
struct WriteOutcome {
  enum class Kind : std::uint8_t {
    done = 0,     // it landed
    changed = 1,  // the key moved since it was read (or is gone): it did not land
    failed = 2,   // it did not land, for the reason in error
    unknown = 3,  // no acknowledgement came: it may have landed
  };
  Kind kind = Kind::done;
  Revision revision = 0;  // done: the key's new revision (0 for a delete)
  Error error;            // changed, failed, unknown: what the store said
};
const char* write_outcome_name(WriteOutcome::Kind kind) noexcept;  // "done", "changed", ...

struct PipelineOptions {
  std::size_t window = 256;  // writes in flight at once, at most
  StoreNote note;            // slow acknowledgements, lost connections
};

class WritePipeline {
 public:
  virtual ~WritePipeline() = default;
  // Send a write: value at key while the key is still at revision, or the key's
  // deletion while it is. Its outcome comes from next(), in the order sent. Blocks
  // while the window is full only in stores that cannot queue more. The bytes key and
  // value view are copied before update or remove returns: the caller may reuse them.
  virtual void update(std::string_view key, std::string_view value, Revision revision) = 0;
  virtual void remove(std::string_view key, Revision revision) = 0;
  // Send a create: value at key while the key holds none. Its outcome is done with the
  // new revision, or changed with Errc::exists when the key holds a value (left as it
  // is), or failed or unknown as any write's: a create whose answer was lost is never
  // sent again.
  virtual void create(std::string_view key, std::string_view value) = 0;
  // Writes sent whose outcome next() has not given yet.
  virtual std::size_t in_flight() const = 0;
  // Of those, how many next() gives without waiting (the oldest ones, known now).
  virtual std::size_t ready() const = 0;
  // True once a write in flight failed or is unknown (or the store cannot write now):
  // a caller that stops at a failure sends nothing more.
  virtual bool broken() const { return false; }
  // The outcome of the oldest write in flight, waiting for it (within the store's
  // timeouts: a write whose acknowledgement does not come is unknown); nullopt when
  // none is in flight.
  virtual std::optional<WriteOutcome> next() = 0;
};

// A change a watch saw: the key's revision and value, or none (deleted or purged).
struct KeyChange {
  std::string key;
  Revision revision = 0;
  std::optional<std::string> value;
  // When the key was written, in ns since the Unix epoch, as the store says (a
  // polling watch: the poll before, no later than the write); 0: unknown.
  std::int64_t written_unix_ns = 0;
};

struct KeyWatchOptions {
  std::int64_t poll_ns = 1'000'000'000;  // a polling watch's time between two scans
  StoreNote note;
  // The first revision to see (a scan read at R watches from R + 1 and misses
  // nothing between); 0: from now. Only a store that keeps its history (etcd) honours
  // it; the others start from now.
  Revision from_revision = 0;
};

class KeyWatch {
 public:
  virtual ~KeyWatch() = default;
  // Append to out the changes seen since the last call, in the order they happened
  // to each key, waiting up to wait_ns for the first. Success with none: nothing
  // changed meanwhile. A failure: the watch is broken (the store was lost) and stays
  // so: open another.
  virtual Status next(std::vector<KeyChange>& out, std::int64_t wait_ns) = 0;
};

class StoreLeases;

class Store {
 public:
  virtual ~Store() = default;
  // Every key that holds a value now.
  virtual Result<std::vector<std::string>> keys() = 0;
  // The value and revision of key; nullopt when it holds none.
  virtual Result<std::optional<StoreEntry>> get(std::string_view key) = 0;
  // Write value while key is still at revision; the new revision. Errc::changed when
  // another writer was first (or the key is gone).
  virtual Result<Revision> update(std::string_view key, std::string_view value, Revision revision) = 0;
  // Write value where key holds none; the new revision. Errc::exists when it does.
  virtual Result<Revision> create(std::string_view key, std::string_view value) = 0;
  // Delete key while it is still at revision. Errc::changed when it moved or is gone.
  virtual Status remove(std::string_view key, Revision revision) = 0;

  // Every key starting with prefix that holds a value, each once, with the value and
  // revision it had when read, into sink batch by batch. Keys the sink's own writes
  // touch are not handed over again. The default lists the keys (keys()) and hands
  // each over as soon as its get() read it, a batch of one: a sweep over a store
  // without a bulk read keeps the order read, judge, write, key by key.
  virtual Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options = {},
                      ScanStats* stats = nullptr);
  // Writes in flight. The default performs each write when it is sent (an
  // Errc::timeout or Errc::unknown_outcome from the store is an unknown outcome, an
  // Errc::changed or Errc::exists a change, any other error a failure).
  virtual std::unique_ptr<WritePipeline> pipeline(const PipelineOptions& options = {});
  // The writes a pipeline's caller keeps in flight when it is not told how many: where
  // the store's writes go fastest. 256 by default; an etcd store's fills 8 of its txns.
  virtual std::size_t write_window() const { return 256; }
  // A watch of the keys starting with prefix, from now on. The default polls: it
  // scans once now (that scan's failure is the call's), then once per poll_ns at
  // most, and hands over each key whose revision moved or that went since the scan
  // before (a key written and deleted between two polls is not seen at all).
  virtual Result<std::unique_ptr<KeyWatch>> watch(std::string_view prefix, const KeyWatchOptions& options = {});
  // The store's leases (store_lease.hpp), living as long as the store; nullptr: the
  // store has none (the default).
  virtual StoreLeases* leases() { return nullptr; }
  // A watch of one key by the store's own means, from now on: what a lock wait wakes
  // on. Its changes are key's, and may include keys that start with key (the caller
  // picks key's). Errc::unsupported where the store has no watch but the polling one
  // (the default: memory and file).
  virtual Result<std::unique_ptr<KeyWatch>> watch_key(std::string_view key, const KeyWatchOptions& options = {});
};

// The bytes of a scan's batches: keys and values appended into one buffer that
// keeps its capacity from batch to batch, padded for in-place parsing.
class ScanBuffer {
 public:
  static constexpr std::size_t padding = 64;
  void clear() noexcept;
  void add(std::string_view key, std::string_view value, Revision revision);
  std::size_t size() const noexcept { return entries_.size(); }
  std::size_t byte_size() const noexcept { return bytes_.size() - (padded_ ? padding : 0); }
  bool full(const ScanOptions& options) const noexcept;
  // The batch (valid until the next change), its padding written now.
  ScanBatch batch();
  // The batch handed to sink and counted in stats, then cleared; nothing when empty.
  // The sink's status.
  Status hand_over(const ScanSink& sink, ScanStats& stats);

 private:
  std::string bytes_;
  std::vector<BatchEntry> entries_;
  bool padded_ = false;
};

}  // namespace leasejudge
