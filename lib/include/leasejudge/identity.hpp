// Process identity: who a holder is, and whether the process a token names is the
// one alive now.
//
// A pid alone names no holder: pids are reused after a reboot, in another pid
// namespace, or when the table wraps. A holder is named by its node's boot id, its
// pid and its start as the kernel recorded it (field 22 of /proc/<pid>/stat, ticks
// since boot). Three token forms carry that:
//   - the step owner  `<boot id>.<pid>.<start ms since the epoch, base 36>`;
//   - the lease identity `linux <boot id> <start ticks>` or `ps <lstart text>`;
//   - the machine id, which says on which machine (and pid namespace) a pid means
//     anything at all.
// Judging a token never says "dead" on missing evidence: a start that cannot be read
// now gives `unknown`, never `dead` or `recycled`.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/error.hpp"

namespace leasejudge {

using Pid = std::int32_t;

// What the step owner holds where /proc/sys/kernel/random/boot_id cannot be read.
inline constexpr std::string_view no_boot_id = "no-boot-id";

// This node's boot id, read now: the trimmed content of
// /proc/sys/kernel/random/boot_id, or no_boot_id when it is unreadable or empty.
std::string read_boot_id();
// The same, read once per process and kept.
const std::string& boot_id();

// --- processes ---------------------------------------------------------------

enum class Liveness { alive, dead, unknown };
// kill(pid, 0): success or EPERM (someone else's process) is alive, ESRCH is dead,
// anything else (or pid <= 0) unknown. A zombie is alive to kill(); see process_start.
Liveness liveness(Pid pid) noexcept;

// Field 22 (starttime, clock ticks since boot) of a /proc/<pid>/stat line, read
// after the LAST ')' since the command name may hold spaces and parentheses.
std::optional<std::uint64_t> parse_stat_start_ticks(std::string_view stat_line) noexcept;
// Field 4 (ppid) of a /proc/<pid>/stat line, read the same way.
std::optional<Pid> parse_stat_ppid(std::string_view stat_line) noexcept;

struct ProcessStart {
  std::uint64_t ticks = 0;     // since boot, /proc/<pid>/stat field 22
  std::int64_t unix_ms = 0;    // btime of /proc/stat + ticks / _SC_CLK_TCK
};
// The kernel's record of pid's start. Where pidfd_open exists, the pid is pinned by a
// pidfd while its stat is read and checked alive after, so a pid recycled during the
// read is never reported as the original (Errc::not_found instead). Errc::not_found
// when the pid does not exist; Errc::io when /proc cannot be read.
Result<ProcessStart> process_start(Pid pid);
// btime of /proc/stat in milliseconds since the epoch.
Result<std::int64_t> boot_time_ms();

// The parent of pid (/proc/<pid>/stat field 4).
Result<Pid> parent_of(Pid pid);
// pid and its ancestors, nearest first, at most max_hops entries; the walk stops at
// pid 0 or 1 (never listed) or at a parent that cannot be read. Empty for pid <= 1.
std::vector<Pid> parent_chain(Pid pid, std::size_t max_hops = 64);

// --- step owner tokens -------------------------------------------------------

struct OwnerToken {
  std::string boot_id;       // 36-character boot id or "no-boot-id"
  Pid pid = 0;               // > 0
  std::int64_t start_ms = 0; // >= 0
};
// `<boot id>.<pid>.<start_ms base 36, lowercase>`, as the step seed writes it.
std::string format_owner_token(std::string_view boot_id, Pid pid, std::int64_t start_ms);
// Strict: exactly three '.'-separated fields; the boot id is "no-boot-id" or 36
// characters of [0-9a-f-]; the pid a decimal in 1..2^31-1 without sign or leading
// zero; the start lowercase base 36 without sign or leading zero (or "0").
std::optional<OwnerToken> parse_owner_token(std::string_view text);
// The owner token of any process on this node, from the kernel's record of its start.
Result<std::string> owner_token_of(Pid pid);
// This process's owner token (computed once).
const std::string& self_owner_token();

// --- lease identities ----------------------------------------------------------

// Exactly the lease-directory seed's valid_identity: some line of text matches
// `^linux [0-9a-f-]{36} [0-9]+$`, or text is "ps " followed by at least one
// character that is not a space.
bool valid_lease_identity(std::string_view text) noexcept;
// The identity's backend: "linux" or "ps", the text before the first space
// (the whole text when it has none).
std::string_view lease_identity_backend(std::string_view text) noexcept;
// `linux <boot id> <start ticks>` where /proc/<pid>/stat and the boot id are
// readable, else `ps <lstart>` from ps -o lstart= (LC_ALL=C, TZ=UTC0); "" when
// neither yields a valid identity (the pid is gone, say), as the seed's identity().
std::string lease_identity_of(Pid pid);

// --- judgement -----------------------------------------------------------------

enum class HolderState {
  alive,       // the pid lives and its start matches the token
  dead,        // the pid does not exist
  recycled,    // the pid lives with another start: the holder is gone
  other_boot,  // the token was written under another boot of this node
  unknown,     // the evidence could not be gathered
};
const char* holder_state_name(HolderState s) noexcept;  // "alive", "other-boot", ...

struct HolderJudgement {
  HolderState state = HolderState::unknown;
  std::string why;  // names the token, the pid and the deciding fact
};

struct OwnerJudgeOptions {
  // A start within this many ms of the kernel's counts as the same process: the
  // step seed writes its own clock at package init, not the kernel's start.
  std::int64_t start_tolerance_ms = 5000;
};
// Is the process this owner token names the one alive now, on this node?
// A malformed token is unknown (never dead). other_boot needs both boot ids known.
HolderJudgement judge_owner_token(std::string_view token, const OwnerJudgeOptions& opts = {});

// The lease-directory seed's state() for pid and its recorded identity (the lease
// file's first line) with the lease's age in minutes: dead when the pid is gone;
// for an empty record, recycled ("stale") once age >= 120 else alive; otherwise
// recycled only when both identities are well formed, of the same backend, and
// differ; anything unreadable keeps it alive.
HolderJudgement judge_lease_identity(Pid pid, std::string_view record, std::int64_t age_min);

// --- machine id ----------------------------------------------------------------

// One network address of an interface as Node's os.networkInterfaces() lists it:
// interfaces that are up and running with an IPv4 or IPv6 address.
struct NetCard {
  std::string name;
  std::string mac;    // lowercase "aa:bb:cc:dd:ee:ff"; all zeros when none
  bool internal = false;  // loopback

  friend bool operator==(const NetCard&, const NetCard&) = default;
};
// This machine's cards, read with getifaddrs as libuv (Node) reads them.
std::vector<NetCard> net_cards();
// The lock seed's machine id over given facts: SHA-256 of host, pid namespace link
// and the sorted distinct non-internal non-zero MACs joined by '\n', lowercase hex,
// first 32 characters; nullopt when there is no such MAC.
std::optional<std::string> machine_id_of(std::string_view host, std::string_view pid_namespace,
                                         const std::vector<NetCard>& cards);
// This machine's id: nullopt when CLOUD_RUN_EXECUTION or K_SERVICE is set and
// non-empty, or when no card qualifies.
std::optional<std::string> machine_id();
// gethostname(), as Node's os.hostname().
std::string host_name();

// --- this machine's evidence, kept ------------------------------------------------

// What this machine's id is made of, read now: gethostname(), the /proc/self/ns/pid
// link, the cards (net_cards()) and whether CLOUD_RUN_EXECUTION or K_SERVICE is set
// and non-empty. Reading them costs a few system calls (getifaddrs opens a netlink
// socket); hashing them is left to machine_id_of.
struct MachineFacts {
  std::string host;
  std::string pid_namespace;
  std::vector<NetCard> cards;
  bool cloud_run = false;

  friend bool operator==(const MachineFacts&, const MachineFacts&) = default;
};
MachineFacts read_machine_facts();
// The machine id these facts give: nullopt on Cloud Run or without a card that
// qualifies. machine_id() is machine_id_of(read_machine_facts()).
std::optional<std::string> machine_id_of(const MachineFacts& facts);

// This machine as a judge states it: its host name and machine id.
struct MachineEvidence {
  std::string host;
  std::optional<std::string> machine_id;
  std::uint64_t generation = 0;  // 1 for the first evidence a cache made, 2 for the next...
};

// This machine's evidence, computed once and kept, for judging many locks: a judge
// asks for it on every judgment and must not pay the system calls each time.
// The rule: a call reads the (coarse, monotonic) clock; once `recheck` (default 1 s) has passed since the
// facts were last read, that call reads them again, and the id is computed again only
// when they changed (a new host name, a card up or down or with another address, a
// change of pid namespace or of the Cloud Run variables). So a change shows within
// about a second, and between checks a call costs a clock read and a lock. The
// source and the clock are given for tests. Thread-safe.
class MachineEvidenceCache {
 public:
  using Source = std::function<MachineFacts()>;
  using Ticks = std::function<std::chrono::steady_clock::time_point()>;
  // The steady clock as CLOCK_MONOTONIC_COARSE reads it (a few ms of resolution, a
  // fraction of the cost): plenty for a rule of a second.
  static std::chrono::steady_clock::time_point coarse_ticks() noexcept;

  explicit MachineEvidenceCache(Source source = read_machine_facts, Ticks ticks = coarse_ticks,
                                std::chrono::nanoseconds recheck = std::chrono::seconds(1));
  MachineEvidenceCache(const MachineEvidenceCache&) = delete;
  MachineEvidenceCache& operator=(const MachineEvidenceCache&) = delete;

  // The evidence as of the last check; the same object until the facts change.
  std::shared_ptr<const MachineEvidence> get();
  // The generation of what get() would give now, checked by the same rule; between
  // checks it takes no lock: a caller that keeps what it made from one generation
  // asks this first.
  std::uint64_t generation();
  // How often the facts were read, and how often an id was computed from them.
  std::uint64_t reads() const;
  std::uint64_t computations() const;

 private:
  Source source_;
  Ticks ticks_;
  std::chrono::nanoseconds recheck_;
  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point next_check_{};  // guarded by mu_
  MachineFacts facts_;                                  // guarded by mu_
  std::shared_ptr<const MachineEvidence> evidence_;     // guarded by mu_
  std::uint64_t reads_ = 0, computations_ = 0;          // guarded by mu_
  // Copies of next_check_ (ticks since the clock's epoch) and of the evidence's
  // generation, written under mu_ (the generation first), read without it.
  std::atomic<std::int64_t> next_check_ticks_{0};
  std::atomic<std::uint64_t> generation_{0};
};

// The process's own cache (the real facts, the steady clock, 1 s): what the lock
// judge's this_machine() and this_author() read.
MachineEvidenceCache& this_machine_evidence();

}  // namespace leasejudge
