// The lock's life on a store: acquire, renew, release, the heartbeat (lock_life.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "leasejudge/lock_life.hpp"
#include "leasejudge/store_lease.hpp"

namespace leasejudge {

namespace {

std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::int64_t lease_of(const LockHolder& holder) {
  if (const auto* process = std::get_if<ProcessHolder>(&holder)) return process->lease_ms;
  if (const auto* execution = std::get_if<ExecutionHolder>(&holder)) return execution->max_runtime_ms;
  return 0;
}

Acquisition outcome_of(Acquisition::Outcome outcome, std::optional<LockVerdict> verdict = std::nullopt,
                       Revision broke_at = 0) {
  Acquisition a;
  a.outcome = outcome;
  a.verdict = std::move(verdict);
  a.broke_at = broke_at;
  return a;
}

// A renewal's update found the key moved: the lock is someone else's now.
Error lost_lock(const HeldLock& lock) {
  return Error{Errc::changed, fmt::format("the lock {} is no longer ours: it was broken or rewritten since revision {}",
                                          lock.key, lock.revision)};
}

// A key written for a lock: its revision (the fencing token), the store lease it is
// bound to (none: id 0), and when its write (and the lease's grant) was sent, on the
// steady clock: the lease runs from then at the latest.
struct Written {
  Revision revision = 0;
  StoreLease lease;
  std::int64_t sent_ns = 0;
};

// Create the lock's key; on a store with leases, a process holder's key bound to a
// fresh store lease of its lease length (an execution's runtime is Cloud Run's to
// judge, not a heartbeat's). A lease whose create did not land is revoked (nothing
// is bound to it), unless the create's outcome is unknown (it may be bound).
Result<Written> create_entry(Store& store, std::string_view key, std::string_view body, const LockHolder& holder) {
  const std::int64_t sent = steady_ns();
  const auto* process = std::get_if<ProcessHolder>(&holder);
  StoreLeases* leases = store.leases();
  if (leases == nullptr || process == nullptr || process->lease_ms <= 0) {
    auto created = store.create(key, body);
    if (!created) return std::move(created).error();
    return Written{*created, {}, sent};
  }
  auto lease = leases->grant(process->lease_ms);
  if (!lease) return std::move(lease).error();
  auto created = leases->create_bound(key, body, lease->id);
  if (!created) {
    if (created.code() != Errc::unknown_outcome) (void)leases->revoke(lease->id);
    return std::move(created).error();
  }
  return Written{*created, StoreLease{lease->id, store_lease_seconds(process->lease_ms)}, sent};
}

// A renewed body at our revision, on a key bound to a store lease: the lease kept
// alive first (gone: the store deleted the key with it, the lock is lost); a lease
// length that no longer fits the lock's replaced by a new lease bound in the same
// revision-checked update, the old one then revoked (nothing is bound to it).
Result<Revision> update_bound_entry(StoreLeases& leases, HeldLock& lock, std::string_view body) {
  auto kept = leases.keep_alive(lock.store_lease);
  if (!kept) {
    if (kept.code() != Errc::not_found) return std::move(kept).error();
    return Error{Errc::changed, fmt::format("the lock {} is no longer ours: its store lease {:x} has ended and the "
                                            "store deleted the key with it",
                                            lock.key, lock.store_lease)};
  }
  const std::int64_t seconds = store_lease_seconds(lock.lease_ms);
  if (seconds == lock.store_lease_s) {
    auto revision = leases.update_bound(lock.key, body, lock.revision, lock.store_lease);
    if (!revision && revision.code() == Errc::changed) return lost_lock(lock);
    return revision;
  }
  auto fresh = leases.grant(lock.lease_ms);
  if (!fresh) return std::move(fresh).error();
  auto revision = leases.update_bound(lock.key, body, lock.revision, fresh->id);
  if (!revision) {
    if (revision.code() != Errc::unknown_outcome) (void)leases.revoke(fresh->id);
    if (revision.code() == Errc::changed) return lost_lock(lock);
    return revision;
  }
  (void)leases.revoke(lock.store_lease);
  lock.store_lease = fresh->id;
  lock.store_lease_s = seconds;
  return revision;
}

}  // namespace

const char* acquisition_outcome_name(Acquisition::Outcome outcome) noexcept {
  switch (outcome) {
    case Acquisition::Outcome::acquired:
      return "acquired";
    case Acquisition::Outcome::held:
      return "held";
    case Acquisition::Outcome::unknown:
      return "unknown";
    case Acquisition::Outcome::lost_race:
      return "lost-race";
  }
  return "";
}

std::string default_lock_purpose(std::string_view key, std::int32_t pid) {
  return fmt::format("leasejudge lock {} (pid {})", key, pid);
}

Result<Acquisition> acquire_lock(Store& store, std::string_view key, const LockRequest& request, Instant now) {
  if (key.empty()) return Error{Errc::invalid_argument, "a lock needs a key"};
  const BodyAuthor author = request.author ? *request.author : this_author();
  const std::string id = request.id.empty() ? new_acquisition_id() : request.id;
  auto body = lock_body(request.purpose, now, request.holder, id, author);
  if (!body) return std::move(body).error();

  auto taken = [&](const Written& w, std::optional<LockVerdict> verdict, Revision broke_at) {
    Acquisition a = outcome_of(Acquisition::Outcome::acquired, std::move(verdict), broke_at);
    a.lock = HeldLock{std::string(key), id, *body, w.revision, lease_of(request.holder), w.lease.id, w.lease.ttl_s};
    a.lock.lease_from_ns = w.sent_ns;
    return a;
  };

  auto created = create_entry(store, key, *body, request.holder);
  if (created) return taken(*created, std::nullopt, 0);
  if (created.code() != Errc::exists) return std::move(created).error();

  auto found = store.get(key);
  if (!found) return std::move(found).error();
  // Released between our create and our read: someone else may be creating now.
  if (!found->has_value()) return outcome_of(Acquisition::Outcome::lost_race);
  const StoreEntry entry = std::move(**found);

  const Here here = request.here ? *request.here : this_machine();
  const Describer describe = request.describe ? request.describe : gcloud_describer();
  LockVerdict verdict = judge_stored_lock(store, key, entry, describe, now, here);
  switch (verdict.kind) {
    case LockVerdict::Kind::held:
      return outcome_of(Acquisition::Outcome::held, std::move(verdict));
    case LockVerdict::Kind::unknown:
      return outcome_of(Acquisition::Outcome::unknown, std::move(verdict));
    case LockVerdict::Kind::break_lock:
      break;
  }
  // Break exactly the body we judged: a holder that renewed since keeps its lock. A
  // store lease that ended took the key with it (its holder's release, or the store
  // when the holder stopped renewing): nothing is left to remove, and nothing was
  // broken by this acquire.
  const bool gone_with_lease = verdict.reason == LockReason::store_lease_ended;
  if (!gone_with_lease) {
    Status removed = store.remove(key, entry.revision);
    if (!removed) {
      if (removed.code() == Errc::changed) return outcome_of(Acquisition::Outcome::lost_race, std::move(verdict));
      return removed.error();
    }
  }
  const Revision broke_at = gone_with_lease ? 0 : entry.revision;
  auto recreated = create_entry(store, key, *body, request.holder);
  if (recreated) return taken(*recreated, std::move(verdict), broke_at);
  if (recreated.code() == Errc::exists) {
    return outcome_of(Acquisition::Outcome::lost_race, std::move(verdict), broke_at);
  }
  return std::move(recreated).error();
}

Status renew_lock(Store& store, HeldLock& lock, Instant now) {
  if (lock.lease_ms <= 0) return Error{Errc::invalid_argument, "a lock without a lease has nothing to renew"};
  const std::int64_t sent = steady_ns();
  auto body = parse_lock_body(lock.body);
  if (!body) return Error{Errc::invalid_argument, "the held lock's body is not readable: " + body.error().message};
  auto renewed = renewed_lock_body(*body, now, lock.lease_ms);
  if (!renewed) return std::move(renewed).error();
  StoreLeases* leases = lock.store_lease != 0 ? store.leases() : nullptr;
  auto revision = leases != nullptr ? update_bound_entry(*leases, lock, *renewed)
                                    : store.update(lock.key, *renewed, lock.revision);
  if (!revision) {
    if (revision.code() == Errc::changed && leases == nullptr) return lost_lock(lock);
    return std::move(revision).error();
  }
  lock.body = std::move(*renewed);
  lock.revision = *revision;
  lock.lease_from_ns = sent;
  return Status::success();
}

Status release_lock(Store& store, const HeldLock& lock) {
  auto found = store.get(lock.key);
  if (!found) return std::move(found).error();
  if (!found->has_value()) return Error{Errc::not_found, fmt::format("the lock {} is not held", lock.key)};
  const StoreEntry& entry = **found;
  auto body = parse_lock_body(entry.value);
  if (!body || body->id != lock.id) {
    return Error{Errc::changed, fmt::format("the lock {} is someone else's now", lock.key)};
  }
  Status removed = store.remove(lock.key, entry.revision);
  if (!removed && removed.code() == Errc::changed) {
    return Error{Errc::changed, fmt::format("the lock {} moved while it was released", lock.key)};
  }
  // The key is gone: its store lease binds nothing now. A revoke that fails leaves
  // the lease to run out by itself.
  if (removed && entry.lease != 0 && store.leases() != nullptr) (void)store.leases()->revoke(entry.lease);
  return removed;
}

LockVerdict judge_stored_lock(Store& store, std::string_view key, const StoreEntry& entry, const Describer& describe,
                              Instant now, const Here& here) {
  using K = LockVerdict::Kind;
  StoreLeases* leases = store.leases();
  if (entry.lease == 0 || leases == nullptr) return judge_lock(entry.value, describe, now, here);
  auto life = leases->life(entry.lease);
  if (!life) {
    return LockVerdict{K::unknown, LockReason::store_lease_unknown, false,
                       fmt::format("the lock {} is bound to the store lease {:x}, whose state could not be read: {}",
                                   key, entry.lease, life.error().message)};
  }
  if (life->ended) {
    return LockVerdict{K::break_lock, LockReason::store_lease_ended, false,
                       fmt::format("the holder of the lock {} stopped keeping its store lease {:x} alive: {}", key,
                                   entry.lease, life->answer)};
  }
  LockVerdict verdict = judge_lock(entry.value, describe, now, here);
  // The body's lease end is read against this machine's clock; the store lease is
  // counted on the store's: while the store says it runs, a skewed clock breaks nothing.
  if (verdict.reason == LockReason::lease_ended) {
    verdict = LockVerdict{K::held, LockReason::lease_runs, false,
                          fmt::format("held: the body of the lock {} says its lease ended, by this machine's clock, "
                                      "but its store lease {:x} still runs: {}",
                                      key, entry.lease, life->answer)};
  }
  return verdict;
}

Result<HeldLock> held_lock(Store& store, std::string_view key, std::string_view id, std::int64_t lease_ms) {
  auto found = store.get(key);
  if (!found) return std::move(found).error();
  if (!found->has_value()) return Error{Errc::not_found, fmt::format("the lock {} is not held", key)};
  const StoreEntry& entry = **found;
  auto body = parse_lock_body(entry.value);
  if (!body || body->id != id) return Error{Errc::changed, fmt::format("the lock {} is someone else's now", key)};
  if (lease_ms == lease_as_taken) lease_ms = body->lease_ms.value_or(process_lease_ms);
  HeldLock held{std::string(key), std::string(id), entry.value, entry.revision, lease_ms, entry.lease, 0};
  // The length the key's store lease was granted for; unread, a renewal binds a new one.
  if (entry.lease != 0 && store.leases() != nullptr) {
    auto life = store.leases()->life(entry.lease);
    if (life && !life->ended) held.store_lease_s = life->granted_s;
  }
  return held;
}

// --- the heartbeat -------------------------------------------------------------------

namespace {

// How long the holder counts its lease from the start of the write that set it: the
// lease; on a store lease, no longer than the store's TTL less the margin, so that
// the loss is reported before the store can end the lease and delete the key.
std::int64_t counted_lease_ns(const HeldLock& lock) {
  if (lock.store_lease == 0) return lock.lease_ms * 1'000'000;
  const std::int64_t ttl_ms = (lock.store_lease_s > 0 ? lock.store_lease_s : store_lease_seconds(lock.lease_ms)) * 1000;
  return std::max<std::int64_t>(1, std::min(lock.lease_ms, ttl_ms - store_lease_margin_ms)) * 1'000'000;
}

}  // namespace

LockRenewal::LockRenewal(Store& store, HeldLock lock, Clock clock, std::function<void(const Error&)> on_lost)
    : store_(store),
      lock_(std::move(lock)),
      clock_(clock ? std::move(clock) : system_clock()),
      on_lost_(std::move(on_lost)) {
  // A lock without a lease (the machine-local kind) has nothing to renew.
  if (lock_.lease_ms <= 0) return;
  // The lease runs from its acquisition's (or last renewal's) write, not from now: the
  // store counts it from then, however long the caller took to start this heartbeat.
  // A lease that had run out by then (or whose write time is unknown) is counted from
  // now, as before: its first renewal's revision check finds out whether the lock is
  // still ours.
  const std::int64_t started = steady_ns();
  if (lock_.lease_from_ns == 0 || lock_.lease_from_ns + counted_lease_ns(lock_) <= started)
    lock_.lease_from_ns = started;
  lease_end_ns_.store(lock_.lease_from_ns + counted_lease_ns(lock_));
  thread_ = std::thread([this] { run(); });
}

LockRenewal::~LockRenewal() {
  stop();
}

void LockRenewal::stop() {
  {
    std::lock_guard<std::mutex> guard(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool LockRenewal::expired() const noexcept {
  if (lost_.load()) return true;
  const std::int64_t end = lease_end_ns_.load();
  return end != 0 && steady_ns() >= end;
}

HeldLock LockRenewal::lock() const {
  std::lock_guard<std::mutex> guard(mu_);
  return lock_;
}

std::chrono::milliseconds LockRenewal::interval(std::int64_t lease_ms) noexcept {
  return std::chrono::milliseconds(std::max<std::int64_t>(1, lease_ms / 3));
}

std::chrono::milliseconds LockRenewal::retry_interval(std::int64_t lease_ms) noexcept {
  return std::chrono::milliseconds(std::clamp<std::int64_t>(interval(lease_ms).count() / 4, 1, 2000));
}

// A renewal whose answer was lost may have landed: the key then holds our own body
// at a revision we never saw. A body with our acquisition id is ours (only its
// holder writes that id): take its revision, and renew from it on the next try.
// Errc::changed or not_found: someone else's body, or none; the lock is lost.
Status LockRenewal::adopt_own_body() {
  auto own = held_lock(store_, lock_.key, lock_.id, lock_.lease_ms);
  if (!own) return std::move(own).error();
  lock_ = std::move(*own);
  return Status::success();
}

void LockRenewal::run() {
  using std::chrono::nanoseconds;
  using std::chrono::steady_clock;
  std::unique_lock<std::mutex> guard(mu_);
  const auto every = interval(lock_.lease_ms), retry = retry_interval(lock_.lease_ms);
  auto next = steady_clock::time_point(nanoseconds(lock_.lease_from_ns)) + every;
  Error last{Errc::internal, ""};
  while (true) {
    if (cv_.wait_until(guard, next, [this] { return stopping_; })) return;
    const std::int64_t tried_at = steady_ns();
    // Only a renewal started within the lease can keep it.
    if (tried_at >= lease_end_ns_.load()) {
      last = Error{Errc::timeout, fmt::format("the lock {} was not renewed within its lease of {} ms: {}", lock_.key,
                                              lock_.lease_ms, last.message)};
      break;
    }
    // Renew while holding mu_: lock() readers wait for a consistent revision.
    Status renewed = renew_lock(store_, lock_, clock_());
    if (renewed) {
      lease_end_ns_.store(tried_at + counted_lease_ns(lock_));
      renewals_.fetch_add(1);
      next = steady_clock::time_point(nanoseconds(tried_at)) + every;
      continue;
    }
    last = renewed.error();
    if (renewed.code() == Errc::changed) {
      Status own = adopt_own_body();
      if (!own && own.code() != Errc::io && own.code() != Errc::store && own.code() != Errc::timeout) break;
      if (!own) last = own.error();
    }
    retries_.fetch_add(1);
    next = std::min(steady_clock::now() + retry, steady_clock::time_point(nanoseconds(lease_end_ns_.load())));
  }
  lost_.store(true);
  guard.unlock();
  if (on_lost_) on_lost_(last);
}

}  // namespace leasejudge
