// A service's notifications to its manager (service.hpp).
#include "service.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "command.hpp"

namespace leasejudge::cli {

namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A status is one line of sd_notify's text: a newline would start another assignment.
std::string status_line(std::string_view line) {
  return "STATUS=" + terminal_text(line, 1024);
}

}  // namespace

void ServiceNotice::send(const std::string& state) {
  std::lock_guard<std::mutex> g(send_mu_);
  send_locked(state);
}

void ServiceNotice::send_locked(const std::string& state) {
  if (host_.notify != nullptr) host_.notify(state.c_str(), host_.payload);
}

void ServiceNotice::status(std::string_view line) {
  send(status_line(line));
}

void ServiceNotice::ready(std::string_view status) {
  {
    // Ready is said before any ping can be: the flag is set once READY=1 is sent.
    std::lock_guard<std::mutex> g(send_mu_);
    if (ready_.load()) return;
    send_locked("READY=1\n" + status_line(status));
    ready_.store(true);
  }
  alive();
}

void ServiceNotice::alive() {
  if (host_.watchdog_usec == 0 || !ready_.load() || stopping_.load()) return;
  const std::int64_t now = steady_ns();
  std::int64_t due = next_ping_ns_.load();
  if (now < due) return;
  // Twice an interval, as sd_watchdog_enabled(3) advises; one thread sends each ping.
  constexpr std::uint64_t most_usec = INT64_MAX / 500;  // a year is 3e13 µs: any sane interval fits
  const auto half_ns = static_cast<std::int64_t>(std::min<std::uint64_t>(host_.watchdog_usec, most_usec) * 500);
  if (!next_ping_ns_.compare_exchange_strong(due, now + half_ns)) return;
  send("WATCHDOG=1");
}

void ServiceNotice::stopping() {
  if (stopping_.exchange(true)) return;
  send("STOPPING=1");
}

}  // namespace leasejudge::cli
