// The lock's life on a store: taken (waiting, with a deadline, where asked), renewed
// by a heartbeat of its own, released; each write at the revision read, every break
// returning the revision it broke at (the next holder's fencing token is larger).
//
// On a store with leases of its own (Store::leases(): etcd) a process holder's key is
// also bound to a store lease of the lock's lease length: a holder that dies stops
// keeping it alive and the store deletes the key when its TTL runs out, on the
// store's clock, so the next acquire simply creates. Renewing keeps that lease alive;
// releasing deletes the key at its revision, then revokes the lease (never before:
// a revoke deletes without a revision check). The fencing token stays the store
// revision of the acquisition.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "leasejudge/clock.hpp"
#include "leasejudge/error.hpp"
#include "leasejudge/lock_body.hpp"
#include "leasejudge/lock_verdict.hpp"
#include "leasejudge/store.hpp"

namespace leasejudge {

// What acquiring needs besides the store and the key.
struct LockRequest {
  std::string purpose;
  LockHolder holder = ProcessHolder{};
  Describer describe;                // empty: gcloud_describer()
  std::optional<Here> here;          // nullopt: this_machine()
  std::optional<BodyAuthor> author;  // nullopt: this_author()
  std::string id;                    // empty: a fresh one
};

// A lock this process holds.
struct HeldLock {
  std::string key;
  std::string id;
  std::string body;
  Revision revision = 0;      // the store revision of our body: the fencing token
  std::int64_t lease_ms = 0;  // for renewal (0: nothing to renew)
  std::int64_t store_lease = 0;    // the store lease the key is bound to (0: none)
  std::int64_t store_lease_s = 0;  // the length it was granted for, in whole seconds
  // When the write that set the lease was sent (the acquisition's create, or the last
  // renewal that succeeded), on the steady clock in ns; 0: unknown (a lock read back
  // from the store), and a heartbeat counts from its own start.
  std::int64_t lease_from_ns = 0;
};

// A heartbeat counts a lock bound to a store lease as lost this long before the store
// can end that lease at the earliest (its TTL from the start of the write that kept
// it): the store counts the TTL from the keep-alive's arrival and may delete the key
// the moment it has run, so the holder's report of the loss, and the work it stops,
// must come before, not at the same time. A body's lease needs none: judges add
// lease_skew_ms to it.
inline constexpr std::int64_t store_lease_margin_ms = 250;

struct Acquisition {
  enum class Outcome : std::uint8_t {
    acquired,   // lock is ours
    held,       // a live (or not provably gone) holder keeps it: verdict says who
    unknown,    // the holder could not be checked: verdict says why
    lost_race,  // another writer moved the key between our read and our write
  };
  Outcome outcome = Outcome::lost_race;
  std::optional<LockVerdict> verdict;  // the verdict on the holder we found, if any
  Revision broke_at = 0;               // the revision of the body we broke; 0 when none (a
                                       // store lease that ended took the body with it)
  HeldLock lock;                       // acquired only
};
const char* acquisition_outcome_name(Acquisition::Outcome outcome) noexcept;

// The purpose a lock is taken with when its taker names none, the same from every
// door: "leasejudge lock KEY (pid PID)", PID the process the body names.
std::string default_lock_purpose(std::string_view key, std::int32_t pid);

// Take the lock at key: create it when absent; when held, judge the holder and,
// on break, delete the body at the revision judged, then create ours. A write that
// finds the key moved is lost_race: reported, never retried here. Store failures
// are errors.
Result<Acquisition> acquire_lock(Store& store, std::string_view key, const LockRequest& request, Instant now);

// The verdict on the lock entry read from store at key: when the entry is bound to a
// store lease, the store's word on it first (gone: break, store_lease_ended; not
// readable: unknown, store_lease_unknown); then, or for an entry bound to none,
// judge_lock on its body. A store lease that still runs outweighs a body whose lease
// ended by this machine's clock (held, lease_runs: the store's clock counts it).
LockVerdict judge_stored_lock(Store& store, std::string_view key, const StoreEntry& entry, const Describer& describe,
                              Instant now, const Here& here);

// Move our lease forward (update at our revision; on a store with leases the key's
// lease kept alive first, and a new one bound in the same revision-checked update
// when the lock's lease length no longer matches it). Errc::changed: the lock is no
// longer ours (broken, rewritten, or its store lease ended): stop the work it guarded.
Status renew_lock(Store& store, HeldLock& lock, Instant now);

// Remove the lock while its body's id is still ours. Errc::not_found: no lock;
// Errc::changed: someone else's body, or it moved while we looked.
Status release_lock(Store& store, const HeldLock& lock);

// The lock at key while its body is the one with acquisition id `id`, for renewing
// or releasing a lock taken before (by another run of the command). lease_ms is its
// lease for renewal (0: none); lease_as_taken: the lease the body records (its
// leaseMs), or process_lease_ms for a body that records none (the JavaScript code's).
// Errc::not_found: no lock; Errc::changed: someone else's body.
inline constexpr std::int64_t lease_as_taken = -1;
Result<HeldLock> held_lock(Store& store, std::string_view key, std::string_view id, std::int64_t lease_ms);

// How acquire_lock_wait waits: it tries, and while the lock is held (or its holder
// unknown, or a race lost) sleeps with a backoff (poll_min doubling up to poll_max)
// and tries again, until it is ours, the wait has run out or cancelled says stop.
// Where the store watches a key of its own (Store::watch_key: NATS, etcd), the wait
// watches the lock's key from before its first try and tries again as soon as the
// key changes or goes (a release wakes it), the backoff then only the fallback; a
// watch that cannot be opened or breaks leaves the backoff alone, said once.
struct LockWait {
  std::chrono::milliseconds wait{0};  // how long to keep trying; 0: one try
  std::function<bool()> cancelled;    // asked every few ms; true: stop (Errc::user)
  Clock clock;                        // now for each try's body; empty: system_clock()
  std::chrono::milliseconds poll_min{50};
  std::chrono::milliseconds poll_max{1000};
  // What the wait says as it goes: the watch it waits on (or why none), and what woke
  // each try after the first: the watch's event or the poll. Empty: nothing said.
  std::function<void(std::string_view line)> note;
};
// How often a sleeping wait asks cancelled.
inline constexpr std::chrono::milliseconds lock_wait_cancel_poll{20};

// acquire_lock, tried again while the lock is not ours until wait.wait has passed
// (measured on the steady clock; the last try is made at its end). The first
// acquired outcome, or the last try's outcome (held, unknown, lost_race) when the
// wait ran out. A live holder is waited on; a breakable one is broken as
// acquire_lock breaks it. Errc::user when cancelled (nothing of ours is left in the
// store: a cancel is only seen between tries); a store error ends the wait at once
// with that error (a write whose outcome is unknown is never tried again: it may
// have been our body). Errc::invalid_argument for a negative wait or poll.
Result<Acquisition> acquire_lock_wait(Store& store, std::string_view key, const LockRequest& request,
                                      const LockWait& wait);

// The heartbeat: renews a held lock every third of its lease on a thread of its
// own until stopped or lost. A renewal that fails is tried again every retry
// interval while the lease still runs (the lease counted from the start of the last
// write that set it, the acquisition's or a renewal's, or from the heartbeat's start
// when that is unknown or a lease ago, without the skew judges add; on a store
// lease, ending store_lease_margin_ms before the store's TTL from that start can):
// one failed renewal is no loss. The lock is lost when a renewal finds it changed (someone
// else's body now), or when the lease ends without a renewal that succeeded;
// on_lost then runs once, on that thread. A try again is an update at
// the revision last seen, never a blind write: when it finds the key moved, the
// key is read, and a body with our acquisition id (a renewal of ours that landed
// while its answer was lost) is taken at its revision and renewed on the next
// try; any other body, or none, is the lock lost. The store must outlive the
// renewal. A lock without a lease is never renewed.
class LockRenewal {
 public:
  LockRenewal(Store& store, HeldLock lock, Clock clock, std::function<void(const Error&)> on_lost);
  ~LockRenewal();  // stops
  LockRenewal(const LockRenewal&) = delete;
  LockRenewal& operator=(const LockRenewal&) = delete;

  // Stop renewing (waits for a renewal in flight). Idempotent.
  void stop();
  bool lost() const noexcept { return lost_.load(); }
  // Whether the lease has ended since the last renewal that succeeded: true once
  // lost, and also while a renewal is still in flight past the lease's end (a store
  // that hangs), so a caller polling it stops the work in time.
  bool expired() const noexcept;
  // The lock as last renewed: release it with this after stop().
  HeldLock lock() const;
  // Renewals done so far, and renewals that failed and were tried again.
  std::uint64_t renewals() const noexcept { return renewals_.load(); }
  std::uint64_t retries() const noexcept { return retries_.load(); }
  // The interval between renewals: a third of lease_ms (at least 1 ms).
  static std::chrono::milliseconds interval(std::int64_t lease_ms) noexcept;
  // The interval between tries of a failed renewal: a quarter of interval(), at
  // least 1 ms, at most 2 s.
  static std::chrono::milliseconds retry_interval(std::int64_t lease_ms) noexcept;

 private:
  void run();
  Status adopt_own_body();  // with mu_ held

  Store& store_;
  HeldLock lock_;  // guarded by mu_
  Clock clock_;
  std::function<void(const Error&)> on_lost_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<bool> lost_{false};
  std::atomic<std::int64_t> lease_end_ns_{0};  // steady clock: the last renewal's start + lease
  std::atomic<std::uint64_t> renewals_{0};
  std::atomic<std::uint64_t> retries_{0};
  std::thread thread_;
};

}  // namespace leasejudge
