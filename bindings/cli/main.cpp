// The leasejudge command: the verbs of verbs.cpp, for any shell, a cron job or a
// service. "This shell" is the process that ran the command (its parent): the lease
// `lease touch` writes and the lock `lock acquire` takes are the caller's, as the
// builtin's are its shell's. SIGINT and SIGTERM stop a wait or a sweep between writes;
// SIGHUP tells a service (step watch) to open its store again. Run by systemd, a
// service tells it how it is through libsystemd (sd_notify), and its lines on a
// journal stream carry their priority.
#include <signal.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "cli.h"
#include "leasejudge.h"

extern char** environ;

namespace {

volatile sig_atomic_t stop_signal = 0;
std::atomic<int> hangups{0};
std::atomic<bool> hangup_armed{false};  // a service asked: until then SIGHUP ends the command as ever
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "a signal handler touches them");

void on_signal(int sig) {
  stop_signal = sig;
}

void on_hangup(int sig) {
  if (!hangup_armed.load()) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  hangups.fetch_add(1);
}

int interrupted(void*) {
  return stop_signal != 0 ? 1 : 0;
}

int hangup(void*) {
  hangup_armed.store(true);
  return hangups.exchange(0) != 0 ? 1 : 0;
}

int notify(const char* state, void*) {
  return sd_notify(0, state);
}

}  // namespace

int main(int argc, char** argv) {
  if (lj_version_number() / 10000 != LJ_VERSION_MAJOR) {
    std::fprintf(stderr, "leasejudge: libleasejudge %s does not match this command's ABI %d\n", lj_version(),
                 LJ_VERSION_MAJOR);
    return 7;
  }
  // No SA_RESTART: a blocking read returns EINTR, so the verb sees the stop.
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  struct sigaction hup {};
  hup.sa_handler = on_hangup;
  sigemptyset(&hup.sa_mask);
  sigaction(SIGHUP, &hup, nullptr);
  lj_cli_host_t host{};
  host.out = stdout;
  host.err = stderr;
  host.self_pid = static_cast<int32_t>(getppid());
  host.environment = const_cast<const char* const*>(environ);
  host.interrupted = interrupted;
  host.hangup = hangup;
  host.err_is_tty = isatty(2);
  host.runs_children = 1;
  host.notify = notify;
  uint64_t watchdog_usec = 0;
  if (sd_watchdog_enabled(0, &watchdog_usec) > 0) host.watchdog_usec = watchdog_usec;
  host.err_is_journal = lj_cli_is_journal_stream(2, std::getenv("JOURNAL_STREAM"));
#if defined(LEASEJUDGE_SOURCE_DIR) && defined(LEASEJUDGE_BUILD_DIR)
  host.source_dir = LEASEJUDGE_SOURCE_DIR;
  host.build_dir = LEASEJUDGE_BUILD_DIR;
#endif
  int rc = lj_cli_run(&host, argc - 1, argv + 1);
  if (rc == 130 && stop_signal != 0) rc = 128 + stop_signal;
  return rc;
}
