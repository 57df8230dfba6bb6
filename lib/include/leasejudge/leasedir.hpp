// The lease directory: the workflow leases several sessions keep on one shared checkout,
// and the lock that orders their writes.
//
// A lease is a file <dir>/<pid> holding the pid's start identity (one line, see
// identity.hpp) or nothing when the identity is unknown; its age is its mtime. The
// directory is <git dir>/gstack-leases of a checkout, or LEASEJUDGE_LEASE_DIR /
// GSTACK_LEASE_DIR (the first one set and non-empty). Everything here is
// byte-compatible with the gstack-lease script, so that the script and leasejudge can
// share one directory at the same time: the same file names, contents, lock protocol,
// ages, prune rules, stdout and stderr lines and exit codes.
//
// The rules it keeps:
//  - A lease is written atomically (a temporary `.<pid>.<taker pid>`, then a rename)
//    and only under the directory lock; touch prunes, under the same lock, regular
//    files (not `.lock*`) last modified more than 120 minutes ago, claims older than 2
//    minutes that are abandoned or whose holder is gone, and `.lock*.gone.*` leftovers.
//  - State of a lease: dead when its pid does not exist; for an empty record, stale
//    once 120 minutes old; otherwise stale only on proof: the record and the identity
//    read now are both well formed, of the same backend, and differ. Anything that
//    cannot be read keeps the lease (never reclaim a live session on missing evidence).
//    A stale lease is deleted only under the lock and only while its first line is
//    still the record judged stale.
//  - The lock is a directory `.lock` whose `owner` names its holder as
//    `<pid> <identity>`. A taker writes its token to `.lock.claim.<pid>`, makes the
//    directory, and renames the claim into it as the owner. A lock is broken only when
//    its holder is provably gone (pid not a positive decimal without a leading zero,
//    dead, or stale), or when it is ownerless, has no live claimant, and is at least
//    2 s old and unchanged while checked (or 60 s or more in the future); breakers
//    serialise on a second lock `.lock.break` and reread the owner under it. A claim
//    without an identity is abandoned after 2 minutes. A lock is removed by renaming it
//    aside (`.gone.<pid>`) then deleting it. Unlock removes only the caller's own lock.
//    A live holder makes taking give up after the tries (LEASEJUDGE_LEASE_LOCK_TRIES,
//    else GSTACK_LEASE_LOCK_TRIES, default 300, anything not all digits is 300) 0.1 s
//    apart, or after 30 s.
//  - Times follow the tools the script uses: ages in minutes are (now - mtime) / 60
//    in whole seconds, truncated toward zero; "older than 2 / 120 minutes" is find's
//    -mmin (now - mtime in full precision, strictly); the lock's age uses whole seconds.
//  - Iteration order is the shell's glob order of <dir>/*: names not starting with '.',
//    sorted by the collation of the environment's locale (byte order in C and
//    C.UTF-8), regular files only (symbolic links followed).
//  - Lease names that are canonical pids (a positive decimal without a leading zero) are
//    judged from /proc without a child process. Any other name is judged as the script
//    judges it: kill(2) where bash's kill reads it as a number, else the real `ps`.
//
// Diagnostics: with LEASEJUDGE_LEASE_TRACE=<file> in the environment, every taking and
// release of the lock appends a line `<pid> lock|unlock <seconds>.<microseconds>` to the
// file, so that a run can be checked for two holders inside at once;
// LEASEJUDGE_LEASE_TRACE_HOLD_MS=<n> keeps each hold n ms longer (for tests that kill
// holders inside the lock).
//
// The script's known limits, and what leasejudge does with each:
//  - "A taker stalled over 2 minutes between its mkdir and its owner rename (on a host
//    where a claim records no identity) can be broken and then publish into its
//    successor's lock": closed between leasejudge takers, kept against the script.
//    leasejudge publishes its owner with a rename that never replaces (renameat2
//    RENAME_NOREPLACE, on file systems that have it), so of two takers publishing into
//    one lock directory only one succeeds; the script's `mv -f` still overwrites. On
//    Linux claims always carry an identity, so the case needs /proc to be unreadable.
//  - "An older gstack's `ln -s` onto a directory lock links inside it and succeeds":
//    kept. leasejudge honours a symbolic-link `.lock` (its target names the holder) as
//    the script does, and cannot change what older code does.
//  - "Clearing a `.lock.break` whose holder is gone is check-then-remove, so a breaker
//    killed while holding it, followed by two live breakers clearing it at once, can let
//    both break": kept, since the script clears it the same way in the same directory;
//    the reread of the owner under `.lock.break` still bounds the damage to that race.
//
// Where leasejudge differs from the script on purpose:
//  - A write error while writing the temporary lease exits 2 and keeps the old lease
//    (the script would install a truncated file).
//  - First lines are read up to 1 MiB; NUL bytes are dropped (as bash drops them), but
//    bash's warning about them is not printed.
//  - A FIFO is never read (the script's `head` would block on one).
//  - The lease name `self` (or `thread-self`) reads this process's start where the
//    script reads that of its `cat`: neither names a lease holder.
//  - mkdir's error message names the first path component that could not be made, in
//    the coreutils form and quotes of the environment's locale.
//  - Lease names that bash's kill reads as options (`-l`, `-s`, ...) are judged as
//    names, where the script would print kill's signal list into its output.
//  - Several threads of one process take the lock one at a time (the token names the
//    process, so the script's protocol cannot tell them apart).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/clock.hpp"
#include "leasejudge/error.hpp"
#include "leasejudge/identity.hpp"

namespace leasejudge {

enum class LeaseState { alive, dead, stale };
// "alive", "dead", "stale": the words the list verb prints.
const char* lease_state_name(LeaseState state) noexcept;

enum class LeaseStream { out = 1, err = 2 };
// Receives each line a verb prints (without its newline). Returning false stops the
// verb, which then fails with Errc::user (after releasing the lock if it held it).
using LeaseLineSink = std::function<bool(LeaseStream stream, std::string_view line)>;

struct LeaseDirOptions {
  // Lock tries before giving up on a live holder. -1: from the environment
  // (LEASEJUDGE_LEASE_LOCK_TRIES, else GSTACK_LEASE_LOCK_TRIES), default 300.
  std::int64_t lock_tries = -1;
  // The lock gives up after this many whole seconds (the script's SECONDS test).
  std::int64_t lock_time_limit_s = 30;
  // Pause between tries.
  std::int64_t lock_retry_ms = 100;
  // The shared harness's process name for live --count-shared-harness. Empty: from
  // LEASEJUDGE_SHARED_HARNESS, else "capy-server".
  std::string shared_harness;
  // The process that takes the lock and names itself in its token and claim; 0: this
  // process. Must be a live process for as long as the lock is held.
  Pid self = 0;
  // The prefix of every message ("<program>: ...").
  std::string program = "gstack-lease";
  // The environment the verbs read (KEY=VALUE, NULL-terminated) and give to the
  // children they run (git, ps); nullptr: this process's environ.
  const char* const* environment = nullptr;
  // Polled while the lock is awaited; true stops the wait (Errc::user).
  std::function<bool()> interrupted;
  // Now; empty: CLOCK_REALTIME. File ages compare it with the files' mtimes.
  Clock clock;
};

// One lease as the list verb sees it.
struct LeaseEntry {
  std::string pid;        // the file name
  std::int64_t age_min = 0;
  std::string record;     // its first line
  LeaseState state = LeaseState::alive;
};

// The absolute git dir of the checkout at root, as `git -C root rev-parse
// --absolute-git-dir` prints it (git is run, found on the environment's PATH).
// Errc::not_found when root is not a git checkout (or git cannot run).
Result<std::string> checkout_git_dir(std::string_view root, const LeaseDirOptions& opts = {});

// The lease directory of the checkout at root: LEASEJUDGE_LEASE_DIR or GSTACK_LEASE_DIR
// when set and non-empty, else <git dir>/gstack-leases. The root must be a checkout
// even when the environment names the directory (Errc::not_found otherwise).
Result<std::string> lease_dir_of(std::string_view root, const LeaseDirOptions& opts = {});

class LeaseDir {
 public:
  explicit LeaseDir(std::string path, LeaseDirOptions opts = {});
  ~LeaseDir();
  LeaseDir(const LeaseDir&) = delete;
  LeaseDir& operator=(const LeaseDir&) = delete;

  const std::string& path() const noexcept;

  // The verbs. Each returns the script's exit code: touch 0 (renewed), 2 (the directory
  // or the lease could not be written), 3 (the lock could not be taken); live 0 when it
  // printed a lease, 1 when none; list 0. Errors: Errc::user when the sink or the
  // interrupted callback stopped it.
  // touch: write pid's identity as its lease, prune, under the lock.
  Result<int> touch(std::string_view pid, const LeaseLineSink& sink);
  // live: `<pid> <age>m <command>` per lease of a live process outside the ancestry of
  // exclude_ancestry_of (up to 64 hops; the shared harness still counts with
  // count_shared_harness while its lease is under 120 minutes old); a stale lease is
  // reclaimed with one stderr line instead.
  Result<int> live(std::string_view exclude_ancestry_of, bool count_shared_harness, const LeaseLineSink& sink);
  // list: `<pid> <age>m alive|dead|stale` per lease.
  Result<int> list(const LeaseLineSink& sink);

  // The leases as list judges them, in list's order.
  std::vector<LeaseEntry> entries();
  // The state of the lease named pid with its record and age.
  LeaseState state_of(std::string_view pid, std::string_view record, std::int64_t age_min);

  // The lock, for callers that need it around their own work. lock() returns true once
  // held; false when it could not be taken (lock_owner() then says who held it, "" when
  // nobody could be named); Errc::user when interrupted.
  Result<bool> lock();
  const std::string& lock_owner() const noexcept;
  // Release the lock if it still names this process's token.
  void unlock();
  // This process's lock token: "<pid> <identity>".
  const std::string& token();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The lease command exactly as the script parses it: args are the verb and its options
// (`touch|live|list [--root R] [--pid P | --from P] [--exclude-ancestry-of P]
// [--count-shared-harness]`; -h, --help or no verb prints the usage). default_root is
// used when --root is absent (empty: the current directory), default_pid when touch
// gets neither --pid nor --from. Returns the exit code (0, 1, 2 or 3).
struct LeaseCommandDefaults {
  std::string root;
  std::string pid;
  // The usage text printed for -h, --help or no verb (empty: a built-in one).
  std::string usage;
};
Result<int> run_lease_command(std::span<const std::string_view> args, const LeaseCommandDefaults& defaults,
                              const LeaseDirOptions& opts, const LeaseLineSink& sink);

// The built-in usage of the lease command.
std::string_view lease_command_usage() noexcept;

}  // namespace leasejudge
