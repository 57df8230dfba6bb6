// Lock bodies and the lock verdict (lock.hpp).
#include "leasejudge/lock.hpp"

#include <unistd.h>
#include <uuid/uuid.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "leasejudge/text.hpp"
#include "lock_js.hpp"

namespace leasejudge {

namespace {

namespace od = simdjson::ondemand;
using js::JsonReader;
using js::Read;

// JS's Date range: a time value beyond +-8.64e15 ms is no Date.
constexpr std::int64_t js_time_limit = 8'640'000'000'000'000;

// One field as the last of its duplicates left it: JSON.parse keeps only the last,
// and only the last is checked by the schema.
template <typename T>
struct Slot {
  bool present = false;
  bool valid = false;
  T value{};

  void set(Read read, T v) {
    present = true;
    valid = read == Read::ok;
    value = valid ? std::move(v) : T{};
  }
};

// Read for a field handler: a wrong type is recorded in the slot, never stops the
// reading (a later duplicate may fix it); only bad JSON stops.
Read go_on(Read read) {
  return read == Read::bad_json ? Read::bad_json : Read::ok;
}

Read read_string_slot(od::value v, Slot<std::string>& slot) {
  std::string s;
  Read r = JsonReader::string(v, s);
  slot.set(r, std::move(s));
  return go_on(r);
}

struct MachineSlot {
  bool present = false;
  bool valid = false;
  MachineField value;
};

struct ExecutionSlot {
  bool present = false;
  bool valid = false;  // an object whose three fields are non-empty strings
  ExecutionRef value;
};

Read read_execution(od::value v, int depth, ExecutionSlot& slot) {
  slot = ExecutionSlot{};
  slot.present = true;
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) return Read::bad_json;
  if (type != od::json_type::object)
    return go_on(JsonReader::skip(v, depth) == Read::ok ? Read::wrong_type : Read::bad_json);
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return Read::bad_json;
  Slot<std::string> project, region, name;
  Read r = JsonReader::fields(obj, depth, [&](std::string_view key, od::value inner, int d) {
    if (key == "projectId") return read_string_slot(inner, project);
    if (key == "region") return read_string_slot(inner, region);
    if (key == "name") return read_string_slot(inner, name);
    return JsonReader::skip(inner, d);
  });
  if (r != Read::ok) return Read::bad_json;
  // z.string().min(1): at least one UTF-16 code unit, that is, not empty.
  auto good = [](const Slot<std::string>& s) { return s.present && s.valid && !s.value.empty(); };
  slot.valid = good(project) && good(region) && good(name);
  if (slot.valid) slot.value = ExecutionRef{project.value, region.value, name.value};
  return Read::ok;
}

std::string to_utf8(std::string_view wtf8) {
  std::string out;
  js::append_utf8(out, wtf8);
  return out;
}

// Text from outside (a describer's words) as UTF-8 without NUL (text.hpp), at most
// execution_detail_max bytes of it.
std::string text_of(std::string_view bytes) {
  return c_text_capped(bytes, execution_detail_max);
}

bool is_utf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

// "purpose (run X, started T)" / "purpose (on host, pid N, started T)": the JS code's
// holder text, with JavaScript's truthiness (an empty host or start, a pid of 0).
std::string holder_text(const LockBody& body) {
  std::string parts;
  auto add = [&](std::string_view part) {
    if (!parts.empty()) parts.append(", ");
    parts.append(part);
  };
  if (body.execution) {
    add("run " + to_utf8(body.execution->name));
  } else if (body.host && !body.host->empty()) {
    std::string on = "on " + to_utf8(*body.host);
    if (body.pid && *body.pid != 0 && !std::isnan(*body.pid)) {
      on.append(", pid ");
      js::append_number(on, *body.pid);
    }
    add(on);
  }
  if (body.started_at && !body.started_at->empty()) add("started " + to_utf8(*body.started_at));
  std::string who = to_utf8(body.purpose);
  if (!parts.empty()) {
    who.append(" (");
    who.append(parts);
    who.push_back(')');
  }
  return who;
}

// Whether the lock was taken where here can check its pid: the host names must
// match; a judge without a machine id (Cloud Run) trusts no pid; a body from
// before machine ids falls back to the host name; else the ids must match.
bool same_machine(const LockBody& body, const Here& here) {
  if (!body.host || *body.host != here.host) return false;
  if (here.machine.kind == MachineField::Kind::none) return false;
  if (body.machine.kind == MachineField::Kind::absent) return true;
  return body.machine.kind == MachineField::Kind::id && here.machine.kind == MachineField::Kind::id &&
         body.machine.id == here.machine.id;
}

LockVerdict verdict(LockVerdict::Kind kind, LockReason reason, bool manual, std::string why) {
  return LockVerdict{kind, reason, manual, std::move(why)};
}

LockVerdict judge_process(const LockBody& body, const std::string& who, std::int64_t now_ms, const Here& here) {
  using K = LockVerdict::Kind;
  const bool here_too = same_machine(body, here);
  if (body.pid && here_too && here.alive && !here.alive(*body.pid)) {
    return verdict(K::break_lock, LockReason::process_gone, false,
                   who + " has ended (its process is gone on this machine)");
  }
  // Beyond the JS code: the owner token leasejudge writes names the holder's boot and
  // start, so a reboot or a reused pid is proof the holder is gone.
  if (body.owner && here_too && here.owner_state) {
    auto token = parse_owner_token(*body.owner);
    if (token && body.pid && static_cast<double>(token->pid) == *body.pid) {
      switch (here.owner_state(*body.owner)) {
        case HolderState::other_boot:
          return verdict(K::break_lock, LockReason::holder_rebooted, false,
                         who + " has ended (this machine has restarted since it took the lock)");
        case HolderState::recycled:
          return verdict(K::break_lock, LockReason::pid_reused, false,
                         who + " has ended (its pid now belongs to another process)");
        case HolderState::dead:
          return verdict(K::break_lock, LockReason::process_gone, false,
                         who + " has ended (its process is gone on this machine)");
        case HolderState::alive:
        case HolderState::unknown:
          break;
      }
    }
  }
  if (!body.lease_until) {
    // A lock without a lease, whose host may be another machine: only a person
    // may remove it.
    return verdict(K::held, LockReason::no_lease, true, "held by " + who);
  }
  auto lease_end = parse_js_date(*body.lease_until);
  if (!lease_end) {
    return verdict(K::held, LockReason::lease_unreadable, true,
                   "held by " + who + ", whose lock carries no readable lease");
  }
  const std::string until = to_utf8(*body.lease_until);
  if (now_ms > *lease_end) {
    return verdict(K::break_lock, LockReason::lease_ended, false,
                   who + " stopped renewing its lock; its lease ended at " + until);
  }
  return verdict(K::held, LockReason::lease_runs, false,
                 "held by " + who + "; its lease runs until " + until + " unless renewed");
}

bool add_ms(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_add_overflow(a, b, &out) && out >= -js_time_limit && out <= js_time_limit;
}

}  // namespace

// --- the body ------------------------------------------------------------------

Result<LockBody> parse_lock_body(std::string_view bytes) {
  std::string storage;
  std::string_view text = js::decode_lossy(bytes, storage);
  JsonReader reader;
  od::object root;
  Read opened = reader.open_object(text, root);
  if (opened == Read::bad_json) return Error{Errc::parse, "the lock body is not JSON"};
  if (opened == Read::wrong_type) return Error{Errc::parse, "the lock body is not a JSON object"};

  Slot<std::string> purpose, id, host, started_at, lease_until, owner;
  Slot<double> pid;
  MachineSlot machine;
  ExecutionSlot execution;
  Read r = JsonReader::fields(root, 0, [&](std::string_view key, od::value v, int depth) -> Read {
    if (key == "purpose") return read_string_slot(v, purpose);
    if (key == "id") return read_string_slot(v, id);
    if (key == "host") return read_string_slot(v, host);
    if (key == "startedAt") return read_string_slot(v, started_at);
    if (key == "leaseUntil") return read_string_slot(v, lease_until);
    if (key == "owner") return read_string_slot(v, owner);
    if (key == "pid") {
      double d = 0;
      Read read = JsonReader::number(v, d);
      // zod 4's z.number() takes every finite number; JSON.parse gives +-Infinity
      // for literals beyond the double range, which it refuses.
      if (read == Read::ok && !std::isfinite(d)) read = Read::wrong_type;
      pid.set(read, d);
      return go_on(read);
    }
    if (key == "machine") {
      machine = MachineSlot{};
      machine.present = true;
      od::json_type type;
      if (v.type().get(type) != simdjson::SUCCESS) return Read::bad_json;
      if (type == od::json_type::null) {
        bool is_null = false;
        if (v.is_null().get(is_null) != simdjson::SUCCESS || !is_null) return Read::bad_json;
        machine.valid = true;
        machine.value = MachineField::none();
        return Read::ok;
      }
      std::string s;
      Read read = JsonReader::string(v, s);
      machine.valid = read == Read::ok;
      if (machine.valid) machine.value = MachineField::of(std::move(s));
      return go_on(read);
    }
    if (key == "execution") return read_execution(v, depth, execution);
    return JsonReader::skip(v, depth);
  });
  if (r != Read::ok || reader.finish() != Read::ok) return Error{Errc::parse, "the lock body is not JSON"};

  auto wrong = [](std::string_view field, std::string_view type) {
    return Error{Errc::parse, "the lock body's " + std::string(field) + " is not " + std::string(type)};
  };
  if (!purpose.present) return Error{Errc::parse, "the lock body has no purpose"};
  if (!purpose.valid) return wrong("purpose", "a string");
  if (id.present && !id.valid) return wrong("id", "a string");
  if (host.present && !host.valid) return wrong("host", "a string");
  if (machine.present && !machine.valid) return wrong("machine", "a string or null");
  if (pid.present && !pid.valid) return wrong("pid", "a finite number");
  if (started_at.present && !started_at.valid) return wrong("startedAt", "a string");
  if (execution.present && !execution.valid) {
    return wrong("execution", "an object of non-empty strings projectId, region and name");
  }
  if (lease_until.present && !lease_until.valid) return wrong("leaseUntil", "a string");

  LockBody body;
  body.purpose = std::move(purpose.value);
  if (id.present) body.id = std::move(id.value);
  if (host.present) body.host = std::move(host.value);
  if (machine.present) body.machine = std::move(machine.value);
  if (pid.present) body.pid = pid.value;
  if (started_at.present) body.started_at = std::move(started_at.value);
  if (execution.present) body.execution = std::move(execution.value);
  if (lease_until.present) body.lease_until = std::move(lease_until.value);
  if (owner.present && owner.valid) body.owner = std::move(owner.value);
  return body;
}

std::string format_lock_body(const LockBody& body) {
  std::string out;
  out.reserve(256 + body.purpose.size());
  out.append("{\"purpose\":");
  js::append_json_string(out, body.purpose);
  auto text_field = [&](std::string_view name, const std::optional<std::string>& value) {
    if (!value) return;
    out.append(",\"");
    out.append(name);
    out.append("\":");
    js::append_json_string(out, *value);
  };
  text_field("id", body.id);
  text_field("host", body.host);
  switch (body.machine.kind) {
    case MachineField::Kind::absent:
      break;
    case MachineField::Kind::none:
      out.append(",\"machine\":null");
      break;
    case MachineField::Kind::id:
      out.append(",\"machine\":");
      js::append_json_string(out, body.machine.id);
      break;
  }
  if (body.pid) {
    out.append(",\"pid\":");
    js::append_json_number(out, *body.pid);
  }
  text_field("startedAt", body.started_at);
  if (body.execution) {
    out.append(",\"execution\":{\"projectId\":");
    js::append_json_string(out, body.execution->project_id);
    out.append(",\"region\":");
    js::append_json_string(out, body.execution->region);
    out.append(",\"name\":");
    js::append_json_string(out, body.execution->name);
    out.push_back('}');
  }
  text_field("leaseUntil", body.lease_until);
  text_field("owner", body.owner);
  out.push_back('}');
  return out;
}

BodyAuthor this_author() {
  BodyAuthor author;
  author.host = host_name();
  author.machine = machine_id();
  author.pid = static_cast<double>(::getpid());
  const std::string& token = self_owner_token();
  if (!token.empty()) author.owner = token;
  return author;
}

std::string new_acquisition_id() {
  uuid_t uuid;
  uuid_generate_random(uuid);
  char text[37];
  uuid_unparse_lower(uuid, text);
  return std::string(text, 36);
}

Result<std::string> lock_body(std::string_view purpose, Instant now, const LockHolder& holder, std::string_view id,
                              const BodyAuthor& author) {
  const std::int64_t now_ms = now.unix_ms();
  if (now_ms < -js_time_limit || now_ms > js_time_limit) {
    return Error{Errc::invalid_argument, "the lock's start is outside JavaScript's Date range"};
  }
  // What a new body says must read back as it was given: UTF-8 text, and an
  // execution the schema accepts (three non-empty strings).
  const ExecutionHolder* exec = std::get_if<ExecutionHolder>(&holder);
  if (!is_utf8(purpose) || !is_utf8(id) || !is_utf8(author.host) || (author.machine && !is_utf8(*author.machine)) ||
      (author.owner && !is_utf8(*author.owner)) ||
      (exec &&
       (!is_utf8(exec->execution.project_id) || !is_utf8(exec->execution.region) || !is_utf8(exec->execution.name)))) {
    return Error{Errc::invalid_argument, "a lock body's text must be UTF-8"};
  }
  if (exec && (exec->execution.project_id.empty() || exec->execution.region.empty() || exec->execution.name.empty())) {
    return Error{Errc::invalid_argument, "an execution needs its project, region and name"};
  }
  LockBody body;
  body.purpose = std::string(purpose);
  body.id = id.empty() ? new_acquisition_id() : std::string(id);
  body.host = author.host;
  body.machine = MachineField::from(author.machine);
  body.pid = author.pid;
  body.started_at = format_js_iso(now_ms);
  std::optional<std::int64_t> lease_ms;
  if (const auto* process = std::get_if<ProcessHolder>(&holder)) {
    lease_ms = process->lease_ms;
    body.owner = author.owner;
  } else if (const auto* execution = std::get_if<ExecutionHolder>(&holder)) {
    lease_ms = execution->max_runtime_ms;
    body.execution = execution->execution;
  } else {
    body.owner = author.owner;
  }
  if (lease_ms) {
    std::int64_t with_skew = 0, until = 0;
    if (__builtin_add_overflow(*lease_ms, lease_skew_ms, &with_skew) || !add_ms(now_ms, with_skew, until)) {
      return Error{Errc::invalid_argument, "the lock's lease ends outside JavaScript's Date range"};
    }
    body.lease_until = format_js_iso(until);
  }
  return format_lock_body(body);
}

Result<std::string> lock_body(std::string_view purpose, Instant now, const LockHolder& holder) {
  return lock_body(purpose, now, holder, {}, this_author());
}

Result<std::string> renewed_lock_body(const LockBody& body, Instant now, std::int64_t lease_ms) {
  std::int64_t with_skew = 0, until = 0;
  if (__builtin_add_overflow(lease_ms, lease_skew_ms, &with_skew) || !add_ms(now.unix_ms(), with_skew, until)) {
    return Error{Errc::invalid_argument, "the renewed lease ends outside JavaScript's Date range"};
  }
  LockBody renewed = body;
  renewed.lease_until = format_js_iso(until);
  return format_lock_body(renewed);
}

// --- the verdict -------------------------------------------------------------------

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
      return LockVerdict::Kind::break_lock;
    case LockReason::execution_unknown:
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

Here this_machine() {
  Here here;
  here.host = host_name();
  here.machine = MachineField::from(machine_id());
  here.alive = [](double pid) {
    // Only a positive 32-bit pid can be asked; any other number proves nothing.
    if (!(pid >= 1 && pid <= std::numeric_limits<Pid>::max()) || pid != std::floor(pid)) return true;
    return liveness(static_cast<Pid>(pid)) != Liveness::dead;
  };
  here.owner_state = [](std::string_view owner) { return judge_owner_token(owner).state; };
  return here;
}

LockVerdict judge_lock(std::string_view text, const Describer& describe, Instant now, const Here& here) {
  using K = LockVerdict::Kind;
  auto parsed = parse_lock_body(text);
  if (!parsed) {
    std::string storage;
    std::string quoted = js::slice_utf16(js::trim(js::decode_lossy(text, storage)), quoted_body_units);
    return verdict(K::held, LockReason::not_readable, true,
                   "the lock's holder is not readable (" + (quoted.empty() ? std::string("empty") : quoted) + ")");
  }
  const LockBody& body = *parsed;
  const std::string who = holder_text(body);
  const std::int64_t now_ms = now.unix_ms();
  if (!body.execution) return judge_process(body, who, now_ms, here);

  std::optional<std::int64_t> lease_end;
  if (body.lease_until && !body.lease_until->empty()) lease_end = parse_js_date(*body.lease_until);
  ExecutionState state =
      describe ? describe(*body.execution) : ExecutionState::unknown("no way to ask Cloud Run was given");
  switch (state.kind) {
    case ExecutionState::Kind::finished:
      return verdict(K::break_lock, LockReason::execution_finished, false,
                     who + " has " + text_of(state.detail) + ", but its lock was left behind");
    case ExecutionState::Kind::running:
      return verdict(K::held, LockReason::execution_running, false, who + " is still running");
    case ExecutionState::Kind::not_found:
      if (!lease_end) {
        return verdict(K::held, LockReason::execution_not_found_no_lease, true,
                       who + " is unknown to Cloud Run and its lock carries no readable lease");
      }
      if (now_ms > *lease_end) {
        return verdict(K::break_lock, LockReason::execution_not_found_lease_ended, false,
                       who + " is unknown to Cloud Run and its lease ended at " + to_utf8(*body.lease_until));
      }
      return verdict(K::held, LockReason::execution_not_found_lease_runs, false,
                     who + " is unknown to Cloud Run, but its lease runs until " + to_utf8(*body.lease_until));
    case ExecutionState::Kind::unknown:
      break;
  }
  return verdict(K::unknown, LockReason::execution_unknown, false,
                 "could not check whether " + who + " is still running: " + text_of(state.detail));
}

std::string format_verdict_text(const LockVerdict& v) {
  std::string out = lock_verdict_kind_name(v.kind);
  out.push_back(' ');
  out.append(lock_reason_code(v.reason));
  out.push_back(' ');
  out.append(c_text(v.why));
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

}  // namespace leasejudge
