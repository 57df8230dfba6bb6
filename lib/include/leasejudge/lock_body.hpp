// The lock body: the JSON value of a lock key that names its holder, a Cloud Run job
// execution (project, region, name) with a lease of its start plus its longest run, or
// a process (host, machine id, pid) with a short lease it renews while it runs.
// Bodies are JSON, written and read exactly as the JavaScript lock-lease code does,
// so that both can share one lock: JSON.parse then a schema (purpose a string; id,
// host, startedAt, leaseUntil optional strings; pid an optional number; machine an
// optional string or null; execution an optional object of three non-empty
// strings; unknown keys ignored), JSON.stringify to write, toISOString() times.
//
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

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "leasejudge/clock.hpp"
#include "leasejudge/error.hpp"
#include "leasejudge/identity.hpp"

namespace leasejudge {

// The lease of a process holder's lock; renewed every third of it.
inline constexpr std::int64_t process_lease_ms = 10 * 60'000;
// Added to every lease for clock skew between the holder and its judge: a body's
// leaseUntil is its writer's now + lease + lease_skew_ms.
inline constexpr std::int64_t lease_skew_ms = 5 * 60'000;
// The longest lease a body records (a year).
inline constexpr std::int64_t max_lease_ms = 366LL * 24 * 3600 * 1000;
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
  // leasejudge's extra fields, which the schema ignores: the holder's owner token
  // (identity.hpp), and the lease a process holder took the lock with (`leaseMs`,
  // without the skew), so that a renewal by another run keeps it. A leaseMs that is
  // not a whole number in 1..max_lease_ms is left out.
  std::optional<std::string> owner;
  std::optional<std::int64_t> lease_ms;
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
// then owner and leaseMs when present. A pid that is not finite is written as null.
std::string format_lock_body(const LockBody& body);
// The body as JSON.parse gave it, as JSON whose JSON.parse gives it again: format_lock_body
// but a pid of -0 written -0 (JSON.stringify writes 0).
std::string format_parsed_lock_body(const LockBody& body);

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
// execution holder; owner only for a process holder or none, and leaseMs only for
// a process holder whose author has an owner token (an author without one writes
// the JavaScript code's body, byte for byte). An empty id takes a fresh one. Errc::invalid_argument when a time falls outside JS's Date range.
Result<std::string> lock_body(std::string_view purpose, Instant now, const LockHolder& holder, std::string_view id,
                              const BodyAuthor& author);
Result<std::string> lock_body(std::string_view purpose, Instant now, const LockHolder& holder);

// The same body with its lease moved to now + lease_ms + lease_skew_ms: the
// heartbeat. Everything else is kept; unknown keys are dropped (owner aside). A
// body of leasejudge's (one with an owner or a leaseMs) records lease_ms as its
// leaseMs; a body without either (the JavaScript code's) stays without.
Result<std::string> renewed_lock_body(const LockBody& body, Instant now, std::int64_t lease_ms);

}  // namespace leasejudge
