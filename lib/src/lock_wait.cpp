// Waiting for a lock: acquire_lock tried again with a backoff until a deadline or a
// cancel (lock_life.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "leasejudge/lock_life.hpp"

namespace leasejudge {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Sleep until `until`, asking cancelled every lock_wait_cancel_poll; false when it
// said stop.
bool sleep_until(steady_clock::time_point until, const std::function<bool()>& cancelled) {
  while (true) {
    if (cancelled && cancelled()) return false;
    const auto now = steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<steady_clock::duration>(until - now, lock_wait_cancel_poll));
  }
}

Error cancelled_error(std::string_view key) {
  return Error{Errc::user, fmt::format("the wait for the lock {} was cancelled", key)};
}

}  // namespace

Result<Acquisition> acquire_lock_wait(Store& store, std::string_view key, const LockRequest& request,
                                      const LockWait& wait) {
  if (wait.wait.count() < 0) return Error{Errc::invalid_argument, "a lock wait cannot be negative"};
  if (wait.poll_min.count() <= 0 || wait.poll_max < wait.poll_min)
    return Error{Errc::invalid_argument, "a lock wait's poll needs 0 < poll_min <= poll_max"};
  const Clock clock = wait.clock ? wait.clock : system_clock();
  // One id for every try: a body of ours found later is recognisably ours.
  LockRequest once = request;
  if (once.id.empty()) once.id = new_acquisition_id();
  const auto deadline = steady_clock::now() + wait.wait;
  milliseconds backoff = wait.poll_min;
  while (true) {
    if (wait.cancelled && wait.cancelled()) return cancelled_error(key);
    auto got = acquire_lock(store, key, once, clock());
    if (!got || got->outcome == Acquisition::Outcome::acquired) return got;
    const auto now = steady_clock::now();
    if (now >= deadline) return got;
    if (!sleep_until(std::min(now + backoff, deadline), wait.cancelled)) return cancelled_error(key);
    backoff = std::min(backoff * 2, wait.poll_max);
  }
}

}  // namespace leasejudge
