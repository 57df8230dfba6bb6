// The lease verbs (touch, live, list) as the script takes them: their usage, their
// arguments, their lines and exit codes.
#include <limits.h>
#include <unistd.h>

#include <span>
#include <string>
#include <string_view>

#include "leasedir_shell.hpp"
#include "leasejudge/leasedir.hpp"

namespace leasejudge {

std::string_view lease_command_usage() noexcept {
  return "leasejudge lease: the workflow leases several sessions keep on one shared checkout.\n"
         "Byte-compatible with gstack-lease: both can share one lease directory.\n"
         "\n"
         "Usage:\n"
         "  leasejudge lease touch [--root <checkout>] [--pid <p> | --from <pid>]\n"
         "      write <git dir>/gstack-leases/<pid> holding the pid's start identity\n"
         "      (default pid: this shell's, $$); prune leases older than 120 min.\n"
         "      Exits 3 and writes nothing when a live process holds the directory\n"
         "      lock or the lock cannot be taken; 2 when nothing can be written.\n"
         "  leasejudge lease live [--root <checkout>] [--exclude-ancestry-of <pid>] [--count-shared-harness]\n"
         "      print `<pid> <age>m <command>` per lease held by a live process that is\n"
         "      neither the given pid nor one of its ancestors; exit 0 when any live\n"
         "      lease exists, 1 when none. A stale lease is reclaimed (deleted, one\n"
         "      `gstack-lease: reclaimed ...` line on stderr). --count-shared-harness\n"
         "      still prints an ancestor that is the shared harness (capy-server, or\n"
         "      LEASEJUDGE_SHARED_HARNESS) while its lease is under 120 minutes old.\n"
         "  leasejudge lease list [--root <checkout>]\n"
         "      print `<pid> <age>m alive|dead|stale` for every lease.\n"
         "\n"
         "<checkout> defaults to the current directory's checkout. A root that is not a\n"
         "git checkout exits 2 and writes nothing. LEASEJUDGE_LEASE_DIR or\n"
         "GSTACK_LEASE_DIR overrides the lease directory; LEASEJUDGE_LEASE_LOCK_TRIES or\n"
         "GSTACK_LEASE_LOCK_TRIES the lock's tries (default 300, 0.1 s apart, 30 s at most).\n";
}

Result<int> run_lease_command(std::span<const std::string_view> args, const LeaseCommandDefaults& defaults,
                              const LeaseDirOptions& opts, const LeaseLineSink& sink) {
  auto say = [&](LeaseStream stream, std::string_view line) { return !sink || sink(stream, line); };
  std::string_view verb = args.empty() ? std::string_view() : args[0];
  std::string root, pid, exclude, from;
  bool shared = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string_view a = args[i];
    auto value = [&]() { return i + 1 < args.size() ? std::string(args[++i]) : (++i, std::string()); };
    if (a == "--root") {
      root = value();
    } else if (a == "--pid") {
      pid = value();
    } else if (a == "--from") {
      from = value();
    } else if (a == "--exclude-ancestry-of") {
      exclude = value();
    } else if (a == "--count-shared-harness") {
      shared = true;
    } else {
      if (!say(LeaseStream::err, opts.program + ": unknown argument '" + std::string(a) + "'"))
        return Error{Errc::user, "stopped by the caller"};
      return 2;
    }
  }
  if (verb == "-h" || verb == "--help" || verb.empty()) {
    std::string_view usage = defaults.usage.empty() ? lease_command_usage() : std::string_view(defaults.usage);
    while (!usage.empty()) {
      auto nl = usage.find('\n');
      if (!say(LeaseStream::out, usage.substr(0, nl))) return Error{Errc::user, "stopped by the caller"};
      if (nl == std::string_view::npos) break;
      usage.remove_prefix(nl + 1);
    }
    return 0;
  }
  if (verb != "touch" && verb != "live" && verb != "list") {
    if (!say(LeaseStream::err, opts.program + ": unknown verb '" + std::string(verb) + "'"))
      return Error{Errc::user, "stopped by the caller"};
    return 2;
  }
  if (root.empty()) root = defaults.root;
  if (root.empty()) {
    char buf[PATH_MAX];
    root = ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string(".");
  }
  auto dir = lease_dir_of(root, opts);
  if (!dir) {
    if (!say(LeaseStream::err, opts.program + ": " + root + " is not a git checkout"))
      return Error{Errc::user, "stopped by the caller"};
    return 2;
  }
  LeaseDir leases(std::move(*dir), opts);
  if (verb == "touch") {
    if (pid.empty()) pid = !from.empty() ? from : defaults.pid;
    if (pid.empty()) pid = std::to_string(::getppid());
    return leases.touch(pid, sink);
  }
  if (verb == "list") return leases.list(sink);
  return leases.live(exclude, shared, sink);
}

}  // namespace leasejudge
