// The lock verdict: break, held or unknown, with its reason and why (lock_verdict.hpp).
#include "leasejudge/lock_verdict.hpp"

#include <unistd.h>
#include <uuid/uuid.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "leasejudge/text.hpp"
#include "lock_js.hpp"
#include "lock_read.hpp"

namespace leasejudge {

using namespace lock_read;

namespace {

// Text from outside (a describer's words) as UTF-8 without NUL (text.hpp), at most
// execution_detail_max bytes of it.
std::string text_of(std::string_view bytes) {
  return c_text_capped(bytes, execution_detail_max);
}

// A part of a why that is WTF-8 read from a body, written as UTF-8.
struct Utf8Of {
  std::string_view wtf8;
};

std::size_t size_of(std::string_view part) {
  return part.size();
}
std::size_t size_of(const Utf8Of& part) {
  return part.wtf8.size();
}  // a surrogate's 3 bytes become U+FFFD's 3
void append_part(std::string& out, std::string_view part) {
  out.append(part);
}
void append_part(std::string& out, const Utf8Of& part) {
  js::append_utf8(out, part.wtf8);
}

// out made kind, reason and manual, its why the parts joined in the room its why has
// (a judge writes a why per body, by the thousand). No part may view out's why.
template <typename... Parts>
void set_verdict(LockVerdict& out, LockVerdict::Kind kind, LockReason reason, bool manual, const Parts&... parts) {
  out.kind = kind;
  out.reason = reason;
  out.manual_removal = manual;
  out.why.clear();
  out.why.reserve((size_of(parts) + ...));
  (append_part(out.why, parts), ...);
}

// "purpose (run X, started T)" / "purpose (on host, pid N, started T)": the JS code's
// holder text, with JavaScript's truthiness (an empty host or start, a pid of 0).
std::string holder_text(const BodyView& body) {
  std::string who;
  who.reserve(body.purpose.size() + 64 + (body.host ? body.host->size() : 0) +
              (body.started_at ? body.started_at->size() : 0) + (body.execution ? body.execution->name.size() : 0));
  js::append_utf8(who, body.purpose);
  const std::size_t bare = who.size();
  auto open = [&] { who.append(who.size() == bare ? " (" : ", "); };
  if (body.execution) {
    open();
    who.append("run ");
    js::append_utf8(who, body.execution->name);
  } else if (body.host && !body.host->empty()) {
    open();
    who.append("on ");
    js::append_utf8(who, *body.host);
    if (body.pid && *body.pid != 0 && !std::isnan(*body.pid)) {
      who.append(", pid ");
      js::append_number(who, *body.pid);
    }
  }
  if (body.started_at && !body.started_at->empty()) {
    open();
    who.append("started ");
    js::append_utf8(who, *body.started_at);
  }
  if (who.size() != bare) who.push_back(')');
  return who;
}

// Whether the lock was taken where here can check its pid: the host names must
// match; a judge without a machine id (Cloud Run) trusts no pid; a body from
// before machine ids falls back to the host name; else the ids must match.
bool same_machine(const BodyView& body, const Here& here) {
  if (!body.host || *body.host != here.host) return false;
  if (here.machine.kind == MachineField::Kind::none) return false;
  if (body.machine == MachineField::Kind::absent) return true;
  return body.machine == MachineField::Kind::id && here.machine.kind == MachineField::Kind::id &&
         body.machine_id == here.machine.id;
}

void judge_process(LockVerdict& out, const BodyView& body, const std::string& who, std::int64_t now_ms,
                   const Here& here) {
  using K = LockVerdict::Kind;
  const bool here_too = same_machine(body, here);
  if (body.pid && here_too && here.alive && !here.alive(*body.pid)) {
    return set_verdict(out, K::break_lock, LockReason::process_gone, false, who,
                       " has ended (its process is gone on this machine)");
  }
  // Beyond the JS code: the owner token leasejudge writes names the holder's boot and
  // start, so a reboot or a reused pid is proof the holder is gone.
  if (body.owner && here_too && here.owner_state) {
    auto token = parse_owner_token(*body.owner);
    if (token && body.pid && static_cast<double>(token->pid) == *body.pid) {
      switch (here.owner_state(*body.owner)) {
        case HolderState::other_boot:
          return set_verdict(out, K::break_lock, LockReason::holder_rebooted, false, who,
                             " has ended (this machine has restarted since it took the lock)");
        case HolderState::recycled:
          return set_verdict(out, K::break_lock, LockReason::pid_reused, false, who,
                             " has ended (its pid now belongs to another process)");
        case HolderState::dead:
          return set_verdict(out, K::break_lock, LockReason::process_gone, false, who,
                             " has ended (its process is gone on this machine)");
        case HolderState::alive:
        case HolderState::unknown:
          break;
      }
    }
  }
  if (!body.lease_until) {
    // A lock without a lease, whose host may be another machine: only a person
    // may remove it.
    return set_verdict(out, K::held, LockReason::no_lease, true, "held by ", who);
  }
  auto lease_end = parse_js_date(*body.lease_until);
  if (!lease_end) {
    return set_verdict(out, K::held, LockReason::lease_unreadable, true, "held by ", who,
                       ", whose lock carries no readable lease");
  }
  const Utf8Of until{*body.lease_until};
  if (now_ms > *lease_end) {
    return set_verdict(out, K::break_lock, LockReason::lease_ended, false, who,
                       " stopped renewing its lock; its lease ended at ", until);
  }
  return set_verdict(out, K::held, LockReason::lease_runs, false, "held by ", who, "; its lease runs until ", until,
                     " unless renewed");
}

}  // namespace

const char* lock_reason_code(LockReason reason) noexcept {
  switch (reason) {
    case LockReason::not_readable:
      return "not_readable";
    case LockReason::execution_finished:
      return "execution_finished";
    case LockReason::execution_running:
      return "execution_running";
    case LockReason::execution_not_found_no_lease:
      return "execution_not_found_no_lease";
    case LockReason::execution_not_found_lease_ended:
      return "execution_not_found_lease_ended";
    case LockReason::execution_not_found_lease_runs:
      return "execution_not_found_lease_runs";
    case LockReason::execution_unknown:
      return "execution_unknown";
    case LockReason::process_gone:
      return "process_gone";
    case LockReason::no_lease:
      return "no_lease";
    case LockReason::lease_unreadable:
      return "lease_unreadable";
    case LockReason::lease_ended:
      return "lease_ended";
    case LockReason::lease_runs:
      return "lease_runs";
    case LockReason::holder_rebooted:
      return "holder_rebooted";
    case LockReason::pid_reused:
      return "pid_reused";
    case LockReason::store_lease_ended:
      return "store_lease_ended";
    case LockReason::store_lease_unknown:
      return "store_lease_unknown";
  }
  return "";
}

LockVerdict::Kind lock_reason_kind(LockReason reason) noexcept {
  switch (reason) {
    case LockReason::execution_finished:
    case LockReason::execution_not_found_lease_ended:
    case LockReason::process_gone:
    case LockReason::lease_ended:
    case LockReason::holder_rebooted:
    case LockReason::pid_reused:
    case LockReason::store_lease_ended:
      return LockVerdict::Kind::break_lock;
    case LockReason::execution_unknown:
    case LockReason::store_lease_unknown:
      return LockVerdict::Kind::unknown;
    case LockReason::not_readable:
    case LockReason::execution_running:
    case LockReason::execution_not_found_no_lease:
    case LockReason::execution_not_found_lease_runs:
    case LockReason::no_lease:
    case LockReason::lease_unreadable:
    case LockReason::lease_runs:
      break;
  }
  return LockVerdict::Kind::held;
}

bool lock_reason_manual(LockReason reason) noexcept {
  return reason == LockReason::not_readable || reason == LockReason::execution_not_found_no_lease ||
         reason == LockReason::no_lease || reason == LockReason::lease_unreadable;
}

const char* lock_verdict_kind_name(LockVerdict::Kind kind) noexcept {
  switch (kind) {
    case LockVerdict::Kind::break_lock:
      return "break";
    case LockVerdict::Kind::held:
      return "held";
    case LockVerdict::Kind::unknown:
      return "unknown";
  }
  return "";
}

bool process_alive(double pid) noexcept {
  // Only a positive 32-bit pid can be asked; any other number proves nothing.
  if (!(pid >= 1 && pid <= std::numeric_limits<Pid>::max()) || pid != std::floor(pid)) return true;
  return liveness(static_cast<Pid>(pid)) != Liveness::dead;
}

namespace {

Here machine_of(const MachineEvidence& evidence) {
  Here here;
  here.host = evidence.host;
  here.machine = MachineField::from(evidence.machine_id);
  here.alive = process_alive;
  here.owner_state = [](std::string_view owner) { return judge_owner_token(owner).state; };
  return here;
}

}  // namespace

Here this_machine() {
  return machine_of(*this_machine_evidence().get());
}

std::shared_ptr<const Here> this_machine_kept() {
  // A new Here for a new generation, never one changed in place: a judge still
  // holding the old one (a describer judging again, on this thread) keeps it whole.
  thread_local std::uint64_t seen = 0;
  thread_local std::shared_ptr<const Here> here;
  MachineEvidenceCache& cache = this_machine_evidence();
  if (here == nullptr || cache.generation() != seen) {
    const auto evidence = cache.get();
    here = std::make_shared<const Here>(machine_of(*evidence));
    seen = evidence->generation;
  }
  return here;
}

LockVerdict judge_lock(std::string_view text, const Describer& describe, Instant now, const Here& here) {
  LockVerdict v;
  judge_lock(v, text, describe, now, here);
  return v;
}

void judge_lock(LockVerdict& out, std::string_view text, const Describer& describe, Instant now, const Here& here) {
  using K = LockVerdict::Kind;
  JsonReader reader;
  Spill spill;
  BodyView body;
  if (!read_body(text, reader, spill, body)) {
    std::string storage;
    std::string quoted = js::slice_utf16(js::trim(js::decode_lossy(text, storage)), quoted_body_units);
    return set_verdict(out, K::held, LockReason::not_readable, true, "the lock's holder is not readable (",
                       quoted.empty() ? std::string_view("empty") : std::string_view(quoted), ")");
  }
  const std::string who = holder_text(body);
  const std::int64_t now_ms = now.unix_ms();
  if (!body.execution) return judge_process(out, body, who, now_ms, here);

  std::optional<std::int64_t> lease_end;
  if (body.lease_until && !body.lease_until->empty()) lease_end = parse_js_date(*body.lease_until);
  ExecutionState state =
      describe ? describe(ref_of(*body.execution)) : ExecutionState::unknown("no way to ask Cloud Run was given");
  switch (state.kind) {
    case ExecutionState::Kind::finished:
      return set_verdict(out, K::break_lock, LockReason::execution_finished, false, who, " has ", text_of(state.detail),
                         ", but its lock was left behind");
    case ExecutionState::Kind::running:
      return set_verdict(out, K::held, LockReason::execution_running, false, who, " is still running");
    case ExecutionState::Kind::not_found:
      if (!lease_end) {
        return set_verdict(out, K::held, LockReason::execution_not_found_no_lease, true, who,
                           " is unknown to Cloud Run and its lock carries no readable lease");
      }
      if (now_ms > *lease_end) {
        return set_verdict(out, K::break_lock, LockReason::execution_not_found_lease_ended, false, who,
                           " is unknown to Cloud Run and its lease ended at ", Utf8Of{*body.lease_until});
      }
      return set_verdict(out, K::held, LockReason::execution_not_found_lease_runs, false, who,
                         " is unknown to Cloud Run, but its lease runs until ", Utf8Of{*body.lease_until});
    case ExecutionState::Kind::unknown:
      break;
  }
  return set_verdict(out, K::unknown, LockReason::execution_unknown, false, "could not check whether ", who,
                     " is still running: ", text_of(state.detail));
}

std::string format_verdict_text(const LockVerdict& v) {
  std::string out = lock_verdict_kind_name(v.kind);
  out.push_back(' ');
  out.append(lock_reason_code(v.reason));
  out.push_back(' ');
  out.append(c_text(v.why));
  // What the JSON form says as manualRemoval: no judging will ever break this lock.
  if (v.manual_removal) out.append(v.why.empty() ? "(only a person can remove it)" : " (only a person can remove it)");
  return out;
}

std::string format_verdict_json(const LockVerdict& v) {
  std::string out = "{\"kind\":\"";
  out.append(lock_verdict_kind_name(v.kind));
  out.append("\",\"reason\":\"");
  out.append(lock_reason_code(v.reason));
  out.append("\",\"manualRemoval\":");
  out.append(v.manual_removal ? "true" : "false");
  out.append(",\"why\":");
  js::append_json_string(out, utf8_text(v.why));
  out.push_back('}');
  return out;
}

ThreadJudging::ThreadJudging() : slot_(thread_slot()), outer_(!slot_.busy) {
  slot_.busy = true;
}

ThreadJudging::~ThreadJudging() {
  if (!outer_) return;
  if (slot_.verdict.why.capacity() > kept_why_room) std::string().swap(slot_.verdict.why);
  slot_.busy = false;
}

const Here& ThreadJudging::machine() {
  if (!outer_) {
    own_machine_ = this_machine_kept();
    return *own_machine_;
  }
  const std::uint64_t generation = this_machine_evidence().generation();
  if (slot_.machine == nullptr || slot_.generation != generation) {
    slot_.machine = this_machine_kept();
    slot_.generation = generation;
  }
  return *slot_.machine;
}

ThreadJudging::Slot& ThreadJudging::thread_slot() {
  thread_local Slot slot;
  return slot;
}

}  // namespace leasejudge
