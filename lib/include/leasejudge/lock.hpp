// Lock leases: the lock body, the holder's execution state, the lock verdict and
// the lock's life on a store.
//
// A lock is one store key whose value (the body) names its holder: a Cloud Run job
// execution (project, region, name) with a lease of its start plus its longest run,
// or a process (host, machine id, pid) with a short lease it renews while it runs.
// Bodies are JSON, written and read exactly as the JavaScript lock-lease code does,
// so that both can share one lock: JSON.parse then a schema (purpose a string; id,
// host, startedAt, leaseUntil optional strings; pid an optional number; machine an
// optional string or null; execution an optional object of three non-empty
// strings; unknown keys ignored), JSON.stringify to write, toISOString() times.
//
// The verdict on a held lock never breaks on missing evidence:
//   - an execution holder: finished -> break; running -> held (never broken, not
//     even past its lease); unknown to Cloud Run -> break once a readable lease has
//     passed, held before, held for a person to remove without a readable lease;
//     Cloud Run could not be asked -> unknown;
//   - a process holder: its pid dead on THIS machine -> break; no lease -> held for
//     a person; a lease that cannot be read -> held for a person; a lease passed
//     (now strictly after its end) -> break; else held;
//   - a body that is not readable -> held for a person.
// Beyond the JavaScript code: a body leasejudge writes also carries the holder's
// owner token (`"owner"`, ignored by the schema), so that a holder on this machine
// whose boot differs, or whose pid now names another process, is provably gone at
// once; and every break on a store returns the revision it broke at, so the next
// holder can prove it came after.
//
// Strings read from a body are kept as WTF-8: UTF-8 that may also hold a lone
// UTF-16 surrogate (JSON.parse keeps "\ud800"), so a body read and written back
// loses no code unit. Whys are plain UTF-8 (a lone surrogate shows as U+FFFD).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "leasejudge/clock.hpp"
#include "leasejudge/error.hpp"
#include "leasejudge/identity.hpp"
#include "leasejudge/store.hpp"

namespace leasejudge {

// The lease of a process holder's lock; renewed every third of it.
inline constexpr std::int64_t process_lease_ms = 10 * 60'000;
// Added to every lease for clock skew between the holder and its judge.
inline constexpr std::int64_t lease_skew_ms = 5 * 60'000;
// How much of an unreadable body the verdict quotes, in UTF-16 code units.
inline constexpr std::size_t quoted_body_units = 200;

// --- the body ------------------------------------------------------------------

// A Cloud Run job execution, fully addressed.
struct ExecutionRef {
  std::string project_id;
  std::string region;
  std::string name;  // the execution's short name (CLOUD_RUN_EXECUTION)

  friend bool operator==(const ExecutionRef&, const ExecutionRef&) = default;
};

// A machine id as a body or a judge states it: left out (a body written before
// machine ids), null (a writer that has none: Cloud Run), or an id.
struct MachineField {
  enum class Kind : std::uint8_t { absent, none, id };
  Kind kind = Kind::absent;
  std::string id;

  static MachineField absent() { return {}; }
  static MachineField none() { return {Kind::none, {}}; }
  static MachineField of(std::string id) { return {Kind::id, std::move(id)}; }
  // none for nullopt, else the id.
  static MachineField from(const std::optional<std::string>& id) { return id ? of(*id) : none(); }

  friend bool operator==(const MachineField&, const MachineField&) = default;
};

// A lock body as the schema reads it; unknown keys are dropped (owner aside).
struct LockBody {
  std::string purpose;
  std::optional<std::string> id;  // unique per acquisition
  std::optional<std::string> host;
  MachineField machine;
  std::optional<double> pid;  // any JSON number, as z.number() takes it
  std::optional<std::string> started_at;
  std::optional<ExecutionRef> execution;
  std::optional<std::string> lease_until;  // as written; read with parse_js_date
  // leasejudge's extra field: the holder's owner token (identity.hpp).
  std::optional<std::string> owner;
};

// Parse a body as the JavaScript code does, from the bytes its caller decoded into
// a JS string (Node's Buffer.toString): ill-formed UTF-8 is read as U+FFFD, and a
// leading byte-order mark is kept, so JSON.parse refuses it. JSON.parse's rules
// hold (the last of duplicate keys wins; numbers beyond the double range are
// +-Infinity, which z.number() of zod 4 refuses); nesting deeper than 1000 levels
// is not read (V8 would read it: not readable is the safe direction). Errc::parse,
// with what is wrong, when the body is not readable: not JSON, not an object, or
// not the schema. A body whose `owner` is not a string is still readable (the
// schema ignores it) but carries no owner.
Result<LockBody> parse_lock_body(std::string_view text);

// JSON.stringify of the body in the schema's key order (purpose, id, host,
// machine, pid, startedAt, execution, leaseUntil), fields left out when absent,
// then owner when present. A pid that is not finite is written as null.
std::string format_lock_body(const LockBody& body);

// Who takes a lock: a renewing process, or a Cloud Run execution and its longest
// run. none: the machine-local lock judged by its pid alone (no lease).
struct ProcessHolder {
  std::int64_t lease_ms = process_lease_ms;
};
struct ExecutionHolder {
  ExecutionRef execution;
  std::int64_t max_runtime_ms = 0;
};
using LockHolder = std::variant<std::monostate, ProcessHolder, ExecutionHolder>;

// What a new body says about its writer.
struct BodyAuthor {
  std::string host;
  std::optional<std::string> machine;  // nullopt: written as null
  double pid = 0;
  std::optional<std::string> owner;  // the owner token; nullopt: left out
};
// This process: the host name and machine id of this_machine_evidence(), getpid()
// and its owner token.
BodyAuthor this_author();
// Another process of this machine (a command taking a lock for the shell that ran
// it): this machine's host and machine id, pid and the owner token of pid.
// Errc::not_found when pid names no process.
Result<BodyAuthor> author_of(Pid pid);

// A fresh acquisition id: a random UUID, lowercase (libuuid).
std::string new_acquisition_id();

// The body a new lock is written with: startedAt now, leaseUntil now + lease (or
// max runtime) + lease_skew_ms, both as toISOString(); execution only for an
// execution holder; owner only for a process holder or none. An empty id takes a
// fresh one. Errc::invalid_argument when a time falls outside JS's Date range.
Result<std::string> lock_body(std::string_view purpose, Instant now, const LockHolder& holder, std::string_view id,
                              const BodyAuthor& author);
Result<std::string> lock_body(std::string_view purpose, Instant now, const LockHolder& holder);

// The same body with its lease moved to now + lease_ms + lease_skew_ms: the
// heartbeat. Everything else is kept; unknown keys are dropped (owner aside).
Result<std::string> renewed_lock_body(const LockBody& body, Instant now, std::int64_t lease_ms);

// --- execution state -------------------------------------------------------------

// What Cloud Run says about an execution.
struct ExecutionState {
  enum class Kind : std::uint8_t { running, finished, not_found, unknown };
  Kind kind = Kind::unknown;
  std::string detail;  // finished: how ("succeeded", "cancelled", ...); unknown: the error

  static ExecutionState running() { return {Kind::running, {}}; }
  static ExecutionState finished(std::string how) { return {Kind::finished, std::move(how)}; }
  static ExecutionState not_found() { return {Kind::not_found, {}}; }
  static ExecutionState unknown(std::string error) { return {Kind::unknown, std::move(error)}; }

  friend bool operator==(const ExecutionState&, const ExecutionState&) = default;
};
const char* execution_state_name(ExecutionState::Kind kind) noexcept;  // "not-found", ...

// What a gcloud call gave back.
struct GcloudResult {
  bool ok = false;  // exited 0
  std::string out;  // stdout
  std::string err;  // stderr
  int exit_code = -1;
};

// The most of an execution state's detail kept (a finished reason, an error from
// stderr), in bytes: a longer one is cut at a character boundary and ends in
// " [cut: N more bytes]". Whys quoting a describer's detail keep the same bound.
inline constexpr std::size_t execution_detail_max = 4096;

// Read an execution's state from `gcloud run jobs executions describe
// --format=json` as the JavaScript code does. A failed call: not_found when stderr
// matches /NOT_FOUND|not found|could not be found|does not exist/i, else unknown
// with stderr trimmed (or "gcloud exited N"). Output that is not JSON, or whose
// status does not fit (status an object with an optional completionTime string
// and optional conditions of {type, status, reason?} strings), is unknown. The
// first condition of type "Completed" whose status is "True" is finished
// "succeeded", "False" finished with its reason lowercased (as JS's toLowerCase,
// through the C library's Unicode tables) or "failed"; else a completionTime is finished "completed"; else running.
// The detail is UTF-8 without NUL (text.hpp) and at most execution_detail_max bytes
// of its source.
ExecutionState parse_execution_state(const GcloudResult& result);

// The arguments after `gcloud`: run jobs executions describe NAME --region=R
// --project=P --format=json.
std::vector<std::string> describe_execution_args(const ExecutionRef& ref);

struct GcloudOptions {
  std::string program = "gcloud";  // looked up on PATH unless it holds a '/'
  std::chrono::milliseconds timeout{60'000};
  std::size_t max_output = 16u << 20;  // bytes kept of each stream; the rest is dropped
  // The environment gcloud runs in ("NAME=value", NULL-terminated; PATH is looked up
  // in it; one without PATH finds no gcloud: the caller's environment says where
  // gcloud is, and another gcloud could answer for another account); nullptr: the
  // process's environ. A bash builtin passes the shell's
  // exported variables. Borrowed: it must outlive every call made with these options.
  char* const* base_env = nullptr;
};

// Run gcloud with args: no shell, stdin /dev/null, stdout and stderr captured, in
// its own process group, killed (the whole group) when it outlives the timeout.
// Errc::not_found when the program is not on PATH, Errc::timeout, Errc::io (it
// could not start, or a signal ended it).
Result<GcloudResult> run_gcloud(const std::vector<std::string>& args, const GcloudOptions& opts = {});

// Ask Cloud Run about ref through gcloud. A gcloud that cannot be run, times out
// or is killed is unknown with the reason (never matched against the
// not-found pattern: a missing gcloud is not a missing execution).
ExecutionState describe_execution(const ExecutionRef& ref, const GcloudOptions& opts = {});

// Looks an execution up; called by the judge only when a body names one.
using Describer = std::function<ExecutionState(const ExecutionRef&)>;
Describer gcloud_describer(GcloudOptions opts = {});

// --- the verdict -------------------------------------------------------------------

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

// One-line forms of a verdict: `<kind> <reason code> <why>`, and the JSON object
// {"kind","reason","manualRemoval","why"} (reason as its code name). The why may be
// any bytes: the text writes it as text.hpp's c_text makes it (UTF-8 without NUL),
// the JSON as utf8_text makes it (a NUL escaped), so it is valid JSON whatever the
// why holds.
std::string format_verdict_text(const LockVerdict& verdict);
std::string format_verdict_json(const LockVerdict& verdict);

// --- the lock's life on a store --------------------------------------------------

// What acquiring needs besides the store and the key.
struct LockRequest {
  std::string purpose;
  LockHolder holder = ProcessHolder{};
  Describer describe;                // empty: gcloud_describer()
  std::optional<Here> here;          // nullopt: this_machine()
  std::optional<BodyAuthor> author;  // nullopt: this_author()
  std::string id;                    // empty: a fresh one
};

// A lock this process holds.
struct HeldLock {
  std::string key;
  std::string id;
  std::string body;
  Revision revision = 0;      // the store revision of our body: the fencing token
  std::int64_t lease_ms = 0;  // for renewal (0: nothing to renew)
};

struct Acquisition {
  enum class Outcome : std::uint8_t {
    acquired,   // lock is ours
    held,       // a live (or not provably gone) holder keeps it: verdict says who
    unknown,    // the holder could not be checked: verdict says why
    lost_race,  // another writer moved the key between our read and our write
  };
  Outcome outcome = Outcome::lost_race;
  std::optional<LockVerdict> verdict;  // the verdict on the holder we found, if any
  Revision broke_at = 0;               // the revision of the body we broke; 0 when none
  HeldLock lock;                       // acquired only
};
const char* acquisition_outcome_name(Acquisition::Outcome outcome) noexcept;

// Take the lock at key: create it when absent; when held, judge the holder and,
// on break, delete the body at the revision judged, then create ours. A write that
// finds the key moved is lost_race: reported, never retried here. Store failures
// are errors.
Result<Acquisition> acquire_lock(Store& store, std::string_view key, const LockRequest& request, Instant now);

// Move our lease forward (update at our revision). Errc::changed: the lock is no
// longer ours (broken, or rewritten): stop the work it guarded.
Status renew_lock(Store& store, HeldLock& lock, Instant now);

// Remove the lock while its body's id is still ours. Errc::not_found: no lock;
// Errc::changed: someone else's body, or it moved while we looked.
Status release_lock(Store& store, const HeldLock& lock);

// The lock at key while its body is the one with acquisition id `id`, for renewing
// or releasing a lock taken before (by another run of the command). lease_ms is its
// lease for renewal. Errc::not_found: no lock; Errc::changed: someone else's body.
Result<HeldLock> held_lock(Store& store, std::string_view key, std::string_view id, std::int64_t lease_ms);

// How acquire_lock_wait waits: it tries, and while the lock is held (or its holder
// unknown, or a race lost) sleeps with a backoff (poll_min doubling up to poll_max)
// and tries again, until it is ours, the wait has run out or cancelled says stop.
struct LockWait {
  std::chrono::milliseconds wait{0};  // how long to keep trying; 0: one try
  std::function<bool()> cancelled;    // asked every few ms; true: stop (Errc::user)
  Clock clock;                        // now for each try's body; empty: system_clock()
  std::chrono::milliseconds poll_min{50};
  std::chrono::milliseconds poll_max{1000};
};
// How often a sleeping wait asks cancelled.
inline constexpr std::chrono::milliseconds lock_wait_cancel_poll{20};

// acquire_lock, tried again while the lock is not ours until wait.wait has passed
// (measured on the steady clock; the last try is made at its end). The first
// acquired outcome, or the last try's outcome (held, unknown, lost_race) when the
// wait ran out. A live holder is waited on; a breakable one is broken as
// acquire_lock breaks it. Errc::user when cancelled (nothing of ours is left in the
// store: a cancel is only seen between tries); a store error ends the wait at once
// with that error (a write whose outcome is unknown is never tried again: it may
// have been our body). Errc::invalid_argument for a negative wait or poll.
Result<Acquisition> acquire_lock_wait(Store& store, std::string_view key, const LockRequest& request,
                                      const LockWait& wait);

// The heartbeat: renews a held lock every third of its lease on a thread of its
// own until stopped or lost. A renewal that fails is tried again every retry
// interval while the lease still runs (the lease counted from the start of the last
// renewal that succeeded, or from the heartbeat's start, without the skew judges
// add): one failed renewal is no loss. The lock is lost when a renewal finds it
// changed (someone else's body now), or when the lease ends without a renewal that
// succeeded; on_lost then runs once, on that thread. A try again is an update at
// the revision last seen, never a blind write: when it finds the key moved, the
// key is read, and a body with our acquisition id (a renewal of ours that landed
// while its answer was lost) is taken at its revision and renewed on the next
// try; any other body, or none, is the lock lost. The store must outlive the
// renewal. A lock without a lease is never renewed.
class LockRenewal {
 public:
  LockRenewal(Store& store, HeldLock lock, Clock clock, std::function<void(const Error&)> on_lost);
  ~LockRenewal();  // stops
  LockRenewal(const LockRenewal&) = delete;
  LockRenewal& operator=(const LockRenewal&) = delete;

  // Stop renewing (waits for a renewal in flight). Idempotent.
  void stop();
  bool lost() const noexcept { return lost_.load(); }
  // Whether the lease has ended since the last renewal that succeeded: true once
  // lost, and also while a renewal is still in flight past the lease's end (a store
  // that hangs), so a caller polling it stops the work in time.
  bool expired() const noexcept;
  // The lock as last renewed: release it with this after stop().
  HeldLock lock() const;
  // Renewals done so far, and renewals that failed and were tried again.
  std::uint64_t renewals() const noexcept { return renewals_.load(); }
  std::uint64_t retries() const noexcept { return retries_.load(); }
  // The interval between renewals: a third of lease_ms (at least 1 ms).
  static std::chrono::milliseconds interval(std::int64_t lease_ms) noexcept;
  // The interval between tries of a failed renewal: a quarter of interval(), at
  // least 1 ms, at most 2 s.
  static std::chrono::milliseconds retry_interval(std::int64_t lease_ms) noexcept;

 private:
  void run();
  Status adopt_own_body();  // with mu_ held

  Store& store_;
  HeldLock lock_;  // guarded by mu_
  Clock clock_;
  std::function<void(const Error&)> on_lost_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<bool> lost_{false};
  std::atomic<std::int64_t> lease_end_ns_{0};  // steady clock: the last renewal's start + lease
  std::atomic<std::uint64_t> renewals_{0};
  std::atomic<std::uint64_t> retries_{0};
  std::thread thread_;
};

}  // namespace leasejudge
