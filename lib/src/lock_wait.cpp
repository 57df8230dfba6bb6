// Waiting for a lock: acquire_lock tried again until a deadline or a cancel, woken by
// a watch of the lock's key where the store has one, else by a backoff
// (lock_life.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "leasejudge/lock_life.hpp"

namespace leasejudge {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

enum class Wake : std::uint8_t { poll, event, cancelled };

// What a sleeping wait waits on: the watch of the lock's key, while it works.
class KeyWaker {
 public:
  KeyWaker(Store& store, std::string_view key, const LockWait& wait) : key_(key), wait_(wait) {
    auto w = store.watch_key(key);
    if (w) {
      watch_ = std::move(w).value();
      say(fmt::format("waiting on a watch of {}: a release wakes the wait (its poll, {} ms to {} ms, the fallback)",
                      key, wait.poll_min.count(), wait.poll_max.count()));
    } else {
      say(fmt::format("no watch of {} ({}): the wait polls, {} ms to {} ms apart", key, w.error().message,
                      wait.poll_min.count(), wait.poll_max.count()));
    }
  }

  // Sleep until `until`, asking cancelled every lock_wait_cancel_poll; an event of the
  // key's ends it early.
  Wake sleep_until(steady_clock::time_point until) {
    while (true) {
      if (wait_.cancelled && wait_.cancelled()) return Wake::cancelled;
      const auto now = steady_clock::now();
      if (now >= until) return Wake::poll;
      const auto slice = std::min<steady_clock::duration>(until - now, lock_wait_cancel_poll);
      if (!watch_) {
        std::this_thread::sleep_for(slice);
        continue;
      }
      changes_.clear();
      Status st = watch_->next(changes_, std::chrono::duration_cast<std::chrono::nanoseconds>(slice).count());
      if (!st) {
        say(fmt::format("the watch of {} broke ({}): the wait polls from now on", key_, st.error().message));
        watch_.reset();
        continue;
      }
      for (const KeyChange& c : changes_) {
        if (c.key != key_) continue;
        event_ = c.value ? fmt::format("{} written (revision {})", key_, c.revision) : fmt::format("{} gone", key_);
        return Wake::event;
      }
    }
  }

  void woken(Wake how, milliseconds slept) {
    say(how == Wake::event ? fmt::format("woken by a watch event ({}) after {} ms: trying again", event_, slept.count())
                           : fmt::format("woken by its poll after {} ms: trying again", slept.count()));
  }

 private:
  void say(const std::string& line) const {
    if (wait_.note) wait_.note(line);
  }
  std::string key_;
  const LockWait& wait_;
  std::unique_ptr<KeyWatch> watch_;
  std::vector<KeyChange> changes_;
  std::string event_;
};

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
  // Opened before the first try, so that a release between a try and the sleep after
  // it still wakes the sleep.
  std::optional<KeyWaker> waker;
  if (wait.wait.count() > 0) waker.emplace(store, key, wait);
  milliseconds backoff = wait.poll_min;
  while (true) {
    if (wait.cancelled && wait.cancelled()) return cancelled_error(key);
    auto got = acquire_lock(store, key, once, clock());
    if (!got || got->outcome == Acquisition::Outcome::acquired) return got;
    const auto now = steady_clock::now();
    if (now >= deadline) return got;
    Wake how = waker->sleep_until(std::min(now + backoff, deadline));
    if (how == Wake::cancelled) return cancelled_error(key);
    waker->woken(how, std::chrono::duration_cast<milliseconds>(steady_clock::now() - now));
    backoff = std::min(backoff * 2, wait.poll_max);
  }
}

}  // namespace leasejudge
