// The verdict on a held lock: break, held or unknown, with a reason and a why. It
// never breaks on missing evidence:
//   - an execution holder: finished -> break; running -> held (never broken, not
//     even past its lease); unknown to Cloud Run -> break once a readable lease has
//     passed, held before, held for a person to remove without a readable lease;
//     Cloud Run could not be asked -> unknown;
//   - a process holder: its pid dead on THIS machine -> break; no lease -> held for
//     a person; a lease that cannot be read -> held for a person; a lease passed
//     (now strictly after its end) -> break; else held;
//   - a body that is not readable -> held for a person;
//   - a key bound to a store lease (etcd, judged by lock_life's judge_stored_lock):
//     the store says the lease is gone -> break; cannot say -> unknown; else the
//     body is judged as above.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "leasejudge/clock.hpp"
#include "leasejudge/execution.hpp"
#include "leasejudge/identity.hpp"
#include "leasejudge/lock_body.hpp"

namespace leasejudge {

// Stable reason codes: the numbers are the C ABI's LJ_LOCK_* and never change.
enum class LockReason : int {
  not_readable = 1,                     // held, manual removal
  execution_finished = 2,               // break
  execution_running = 3,                // held
  execution_not_found_no_lease = 4,     // held, manual removal
  execution_not_found_lease_ended = 5,  // break
  execution_not_found_lease_runs = 6,   // held
  execution_unknown = 7,                // unknown
  process_gone = 8,                     // break
  no_lease = 9,                         // held, manual removal
  lease_unreadable = 10,                // held, manual removal
  lease_ended = 11,                     // break
  lease_runs = 12,                      // held
  holder_rebooted = 13,                 // break (owner token: another boot)
  pid_reused = 14,                      // break (owner token: another process)
  store_lease_ended = 15,               // break (the store ended the key's lease: etcd, TTL -1)
  store_lease_unknown = 16,             // unknown (the key's store lease could not be read)
};
// The snake_case name of a reason ("lease_ended"); "" for a value out of range.
const char* lock_reason_code(LockReason reason) noexcept;

struct LockVerdict {
  enum class Kind : std::uint8_t { break_lock, held, unknown };
  Kind kind = Kind::held;
  LockReason reason = LockReason::not_readable;
  bool manual_removal = false;  // held only: nothing but a person clears it
  std::string why;              // names the holder, its start and the deciding fact
};
// "break", "held", "unknown".
const char* lock_verdict_kind_name(LockVerdict::Kind kind) noexcept;
// The kind every verdict with this reason has, and whether it is a manual removal
// (held for a person: not_readable, execution_not_found_no_lease, no_lease,
// lease_unreadable).
LockVerdict::Kind lock_reason_kind(LockReason reason) noexcept;
bool lock_reason_manual(LockReason reason) noexcept;

// The judging run's own machine and how it checks a local pid.
struct Here {
  std::string host;
  // The judge's machine id: none never trusts a pid (Cloud Run); absent compares
  // host names only for bodies from before machine ids.
  MachineField machine;
  // Whether pid lives on this machine. Unknown liveness must answer true: only
  // proof of death breaks a lock.
  std::function<bool(double pid)> alive;
  // The state of the holder an owner token names (judge_owner_token's); empty:
  // owner tokens are not judged.
  std::function<HolderState(std::string_view owner)> owner_state;
};
// Whether pid lives on this machine, as the judge asks it: kill(pid, 0), where only
// ESRCH is dead; a pid that is no positive 32-bit integer is never dead (no process
// it names can be proved gone).
bool process_alive(double pid) noexcept;
// This machine: its kept evidence (this_machine_evidence(): the host name and machine
// id, read again at most once a second, never per call), process_alive and
// judge_owner_token.
Here this_machine();
// The same, kept per thread and made again only when the kept evidence changes: for
// a judge that judges many locks.
std::shared_ptr<const Here> this_machine_kept();

// Decide whether the lock with body text may be broken, at now, judged from here.
// describe is called only when the body names an execution.
LockVerdict judge_lock(std::string_view text, const Describer& describe, Instant now, const Here& here);
// The same into out, whose why keeps its room: judging many bodies into one verdict
// allocates no why once the room suffices. text may not view out's why; out is left
// unspecified when judging throws.
void judge_lock(LockVerdict& out, std::string_view text, const Describer& describe, Instant now, const Here& here);

// What a thread keeps from one judge_lock call to the next (a C ABI judging many
// bodies): the verdict judged
// into, whose why keeps its room (no allocation for it once the room suffices; a room
// beyond kept_why_room is given back, a body's purpose may be megabytes), and this
// machine's kept evidence, taken again only when its generation changed. Both are the
// outermost call's: a call made inside another's describer gets its own of each, so
// nothing the outer call holds changes under it.
class ThreadJudging {
 public:
  ThreadJudging();
  ~ThreadJudging();
  ThreadJudging(const ThreadJudging&) = delete;
  ThreadJudging& operator=(const ThreadJudging&) = delete;

  // The verdict to judge into.
  LockVerdict& verdict() noexcept { return outer_ ? slot_.verdict : own_verdict_; }
  // This machine's kept evidence.
  const Here& machine();

 private:
  static constexpr std::size_t kept_why_room = 4096;
  struct Slot {
    LockVerdict verdict;
    std::shared_ptr<const Here> machine;
    std::uint64_t generation = 0;
    bool busy = false;
  };
  static Slot& thread_slot();

  Slot& slot_;
  bool outer_;
  LockVerdict own_verdict_;
  std::shared_ptr<const Here> own_machine_;
};

// One-line forms of a verdict: `<kind> <reason code> <why>`, and the JSON object
// {"kind","reason","manualRemoval","why"} (reason as its code name). The why may be
// any bytes: the text writes it as text.hpp's c_text makes it (UTF-8 without NUL),
// the JSON as utf8_text makes it (a NUL escaped), so it is valid JSON whatever the
// why holds.
std::string format_verdict_text(const LockVerdict& verdict);
std::string format_verdict_json(const LockVerdict& verdict);

}  // namespace leasejudge
