// A store: keys with values and revisions, where every write names the revision it
// read and a lost race says `changed` instead of overwriting.
//
// Sweeps and locks act only through this interface. Implementations: memory (tests,
// benchmarks), file (locks on one machine), nats (JetStream key/value, a fleet).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/error.hpp"

namespace leasejudge {

using Revision = std::uint64_t;

struct StoreEntry {
  std::string value;
  Revision revision = 0;  // > 0 for a stored value
};

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
};

}  // namespace leasejudge
