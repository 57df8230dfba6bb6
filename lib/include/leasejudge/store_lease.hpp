// A store lease: a lease the store itself keeps, to which a key is bound so that the
// store deletes the key when the lease runs out (etcd's leases). A store offers it
// through Store::leases(); the memory, file and NATS stores have none (nullptr).
//
// Rules it keeps:
// - A lease's time is the store's: the cluster counts a lease's TTL on its own clock
//   and ends it when no keep-alive came in time. Whether a lease has ended is
//   therefore evidence independent of any client's clock (no skew between the
//   holder's and the judge's clocks enters it), unlike a body's lease end.
// - A lease is granted for whole seconds: a length in ms rounded up, raised to the
//   store's minimum where the store has one (the grant says what it gave).
// - Every write here names the revision it read (create: none), as Store's do; a
//   write whose answer never came is Errc::unknown_outcome and is never sent again.
// - A revoke deletes every key bound to the lease without a revision check: revoke
//   a lease only once no key of someone else's can be bound to it (after the key's
//   own deletion at its revision landed, or when the create that would bind it
//   failed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "leasejudge/error.hpp"
#include "leasejudge/store.hpp"

namespace leasejudge {

using StoreLeaseId = std::int64_t;  // > 0 for a lease; 0: none

// A lease granted.
struct StoreLease {
  StoreLeaseId id = 0;
  std::int64_t ttl_s = 0;  // the length the store gave it
};

// What the store says of a lease now.
struct StoreLeaseLife {
  bool ended = false;      // the store no longer has it (its TTL ran out, or it was revoked)
  std::int64_t ttl_s = 0;  // seconds left (ended: -1)
  std::int64_t granted_s = 0;
  std::string answer;  // the store's answer, as a sentence ("TTL -1: the lease is gone")
};

// Whole seconds for a lease of lease_ms: rounded up, at least 1.
std::int64_t store_lease_seconds(std::int64_t lease_ms) noexcept;

class StoreLeases {
 public:
  virtual ~StoreLeases() = default;
  // A new lease of store_lease_seconds(lease_ms) (or the store's minimum).
  // Errc::invalid_argument for lease_ms <= 0; store errors as Store's.
  virtual Result<StoreLease> grant(std::int64_t lease_ms) = 0;
  // Restart the lease's TTL; the TTL it has now. Errc::not_found when the store no
  // longer has it (its keys are gone with it).
  virtual Result<std::int64_t> keep_alive(StoreLeaseId lease) = 0;
  // End the lease now (its keys are deleted with it, unchecked: see above).
  virtual Status revoke(StoreLeaseId lease) = 0;
  // What the store says of the lease now. A failure: nothing could be read.
  virtual Result<StoreLeaseLife> life(StoreLeaseId lease) = 0;
  // Store::create and Store::update whose value is bound to lease (the key leaves a
  // lease it was bound to before). Errc::exists / Errc::changed as theirs.
  virtual Result<Revision> create_bound(std::string_view key, std::string_view value, StoreLeaseId lease) = 0;
  virtual Result<Revision> update_bound(std::string_view key, std::string_view value, Revision revision,
                                        StoreLeaseId lease) = 0;
};

}  // namespace leasejudge
