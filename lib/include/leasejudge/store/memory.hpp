// The memory store: a Store in this process, for tests and benchmarks. Thread-safe.
// Revisions are one counter across all keys, as a JetStream stream's sequence is.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "leasejudge/store.hpp"

namespace leasejudge {

class MemoryStore final : public Store {
 public:
  Result<std::vector<std::string>> keys() override;
  Result<std::optional<StoreEntry>> get(std::string_view key) override;
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override;
  Result<Revision> create(std::string_view key, std::string_view value) override;
  Status remove(std::string_view key, Revision revision) override;
  // Batch by batch, each copied under the lock; between batches the store is free,
  // and the scan goes on after the last key it handed over.
  Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options = {},
              ScanStats* stats = nullptr) override;

  // Write value whatever the key holds (a test's other writer); the new revision.
  Revision put(std::string_view key, std::string_view value);
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, StoreEntry, std::less<>> entries_;
  Revision last_ = 0;
};

}  // namespace leasejudge
