// A verb run as a service by a service manager (systemd, Type=notify), and what it tells
// the manager through the host's notify (libsystemd's sd_notify in the command):
//   - STATUS=<line>: the last thing the service said, so `systemctl status` shows why
//     it is not ready yet, or what went wrong last;
//   - READY=1 once it serves (step watch: once a whole sweep read the store);
//   - WATCHDOG=1 twice an interval the manager asked for (WatchdogSec), only from the
//     service's loop and only once ready, so that a loop that stops turning is
//     restarted while a store that is down (which the loop waits out) is not;
//   - STOPPING=1 once asked to stop.
// Any thread may call it. Where the host has no notify (the builtin) or no manager
// listens (no NOTIFY_SOCKET), every call does nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "cli.h"

namespace leasejudge::cli {

class ServiceNotice {
 public:
  explicit ServiceNotice(const lj_cli_host_t& host) : host_(host) {}
  ServiceNotice(const ServiceNotice&) = delete;
  ServiceNotice& operator=(const ServiceNotice&) = delete;

  void status(std::string_view line);
  // READY=1 with its status, once.
  void ready(std::string_view status);
  bool is_ready() const noexcept { return ready_.load(); }
  // The loop turned: WATCHDOG=1 when one is due (half the asked interval since the last).
  void alive();
  // STOPPING=1, once.
  void stopping();

 private:
  void send(const std::string& state);
  void send_locked(const std::string& state);  // send_mu_ held

  const lj_cli_host_t& host_;
  std::mutex send_mu_;  // one notification at a time, in order
  std::atomic<bool> ready_{false}, stopping_{false};
  std::atomic<std::int64_t> next_ping_ns_{0};
};

}  // namespace leasejudge::cli
