// Store leases (store_lease.hpp): the length of a lease in the store's whole seconds.
#include "leasejudge/store_lease.hpp"

namespace leasejudge {

std::int64_t store_lease_seconds(std::int64_t lease_ms) noexcept {
  if (lease_ms <= 1000) return 1;
  return lease_ms / 1000 + (lease_ms % 1000 != 0 ? 1 : 0);
}

}  // namespace leasejudge
