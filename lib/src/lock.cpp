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

// Where the strings a body is read into live: the reader's parser, and spill for the
// few that keep a lone surrogate.
using Spill = std::forward_list<std::string>;

Read read_string_slot(od::value v, Slot<std::string_view>& slot, Spill& spill) {
  std::string_view s;
  Read r = JsonReader::text(v, s, spill);
  slot.set(r, s);
  return go_on(r);
}

struct MachineSlot {
  bool present = false;
  bool valid = false;
  MachineField::Kind kind = MachineField::Kind::absent;
  std::string_view id;
};

struct ExecutionView {
  std::string_view project_id;
  std::string_view region;
  std::string_view name;
};

struct ExecutionSlot {
  bool present = false;
  bool valid = false;  // an object whose three fields are non-empty strings
  ExecutionView value;
};

Read read_execution(od::value v, int depth, ExecutionSlot& slot, Spill& spill) {
  slot = ExecutionSlot{};
  slot.present = true;
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) return Read::bad_json;
  if (type != od::json_type::object)
    return go_on(JsonReader::skip(v, depth) == Read::ok ? Read::wrong_type : Read::bad_json);
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return Read::bad_json;
  Slot<std::string_view> project, region, name;
  Read r = JsonReader::fields(obj, depth, [&](std::string_view key, od::value inner, int d) {
    if (key == "projectId") return read_string_slot(inner, project, spill);
    if (key == "region") return read_string_slot(inner, region, spill);
    if (key == "name") return read_string_slot(inner, name, spill);
    return JsonReader::skip(inner, d);
  });
  if (r != Read::ok) return Read::bad_json;
  // z.string().min(1): at least one UTF-16 code unit, that is, not empty.
  auto good = [](const Slot<std::string_view>& s) { return s.present && s.valid && !s.value.empty(); };
  slot.valid = good(project) && good(region) && good(name);
  if (slot.valid) slot.value = ExecutionView{project.value, region.value, name.value};
  return Read::ok;
}

// A lock body as the schema reads it, its strings viewing where they were read into
// (the reader and the spill it was read with must outlive it). The judge reads
// bodies by the thousand and needs no copy of them; parse_lock_body copies.
struct BodyView {
  std::string_view purpose;
  std::optional<std::string_view> id, host, started_at, lease_until, owner;
  MachineField::Kind machine = MachineField::Kind::absent;
  std::string_view machine_id;
  std::optional<double> pid;
  std::optional<ExecutionView> execution;
};

// Text from outside (a describer's words) as UTF-8 without NUL (text.hpp), at most
// execution_detail_max bytes of it.
std::string text_of(std::string_view bytes) {
  return c_text_capped(bytes, execution_detail_max);
}

bool is_utf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
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

// The parts joined, in one allocation: a judge writes a why per body, by the thousand.
template <typename... Parts>
std::string join(const Parts&... parts) {
  std::string out;
  out.reserve((size_of(parts) + ...));
  (append_part(out, parts), ...);
  return out;
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

LockVerdict verdict(LockVerdict::Kind kind, LockReason reason, bool manual, std::string why) {
  return LockVerdict{kind, reason, manual, std::move(why)};
}

LockVerdict judge_process(const BodyView& body, const std::string& who, std::int64_t now_ms, const Here& here) {
  using K = LockVerdict::Kind;
  const bool here_too = same_machine(body, here);
  if (body.pid && here_too && here.alive && !here.alive(*body.pid)) {
    return verdict(K::break_lock, LockReason::process_gone, false,
                   join(who, " has ended (its process is gone on this machine)"));
  }
  // Beyond the JS code: the owner token leasejudge writes names the holder's boot and
  // start, so a reboot or a reused pid is proof the holder is gone.
  if (body.owner && here_too && here.owner_state) {
    auto token = parse_owner_token(*body.owner);
    if (token && body.pid && static_cast<double>(token->pid) == *body.pid) {
      switch (here.owner_state(*body.owner)) {
        case HolderState::other_boot:
          return verdict(K::break_lock, LockReason::holder_rebooted, false,
                         join(who, " has ended (this machine has restarted since it took the lock)"));
        case HolderState::recycled:
          return verdict(K::break_lock, LockReason::pid_reused, false,
                         join(who, " has ended (its pid now belongs to another process)"));
        case HolderState::dead:
          return verdict(K::break_lock, LockReason::process_gone, false,
                         join(who, " has ended (its process is gone on this machine)"));
        case HolderState::alive:
        case HolderState::unknown:
          break;
      }
    }
  }
  if (!body.lease_until) {
    // A lock without a lease, whose host may be another machine: only a person
    // may remove it.
    return verdict(K::held, LockReason::no_lease, true, join("held by ", who));
  }
  auto lease_end = parse_js_date(*body.lease_until);
  if (!lease_end) {
    return verdict(K::held, LockReason::lease_unreadable, true,
                   join("held by ", who, ", whose lock carries no readable lease"));
  }
  const Utf8Of until{*body.lease_until};
  if (now_ms > *lease_end) {
    return verdict(K::break_lock, LockReason::lease_ended, false,
                   join(who, " stopped renewing its lock; its lease ended at ", until));
  }
  return verdict(K::held, LockReason::lease_runs, false,
                 join("held by ", who, "; its lease runs until ", until, " unless renewed"));
}

bool add_ms(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_add_overflow(a, b, &out) && out >= -js_time_limit && out <= js_time_limit;
}

}  // namespace

// --- the body ------------------------------------------------------------------

namespace {

// Read a body as the JavaScript code does (see parse_lock_body) into body, with
// reader and spill holding its strings.
Status read_body(std::string_view bytes, JsonReader& reader, Spill& spill, BodyView& body) {
  std::string storage;
  std::string_view text = js::decode_lossy(bytes, storage);
  od::object root;
  Read opened = reader.open_object(text, root);
  if (opened == Read::bad_json) return Error{Errc::parse, "the lock body is not JSON"};
  if (opened == Read::wrong_type) return Error{Errc::parse, "the lock body is not a JSON object"};

  Slot<std::string_view> purpose, id, host, started_at, lease_until, owner;
  Slot<double> pid;
  MachineSlot machine;
  ExecutionSlot execution;
  Read r = JsonReader::fields(root, 0, [&](std::string_view key, od::value v, int depth) -> Read {
    if (key == "purpose") return read_string_slot(v, purpose, spill);
    if (key == "id") return read_string_slot(v, id, spill);
    if (key == "host") return read_string_slot(v, host, spill);
    if (key == "startedAt") return read_string_slot(v, started_at, spill);
    if (key == "leaseUntil") return read_string_slot(v, lease_until, spill);
    if (key == "owner") return read_string_slot(v, owner, spill);
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
        machine.kind = MachineField::Kind::none;
        return Read::ok;
      }
      Read read = JsonReader::text(v, machine.id, spill);
      machine.valid = read == Read::ok;
      if (machine.valid) machine.kind = MachineField::Kind::id;
      return go_on(read);
    }
    if (key == "execution") return read_execution(v, depth, execution, spill);
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

  body.purpose = purpose.value;
  if (id.present) body.id = id.value;
  if (host.present) body.host = host.value;
  if (machine.present) {
    body.machine = machine.kind;
    body.machine_id = machine.id;
  }
  if (pid.present) body.pid = pid.value;
  if (started_at.present) body.started_at = started_at.value;
  if (execution.present) body.execution = execution.value;
  if (lease_until.present) body.lease_until = lease_until.value;
  if (owner.present && owner.valid) body.owner = owner.value;
  return Status::success();
}

std::optional<std::string> copy_of(const std::optional<std::string_view>& v) {
  return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

ExecutionRef ref_of(const ExecutionView& e) {
  return ExecutionRef{std::string(e.project_id), std::string(e.region), std::string(e.name)};
}

}  // namespace

Result<LockBody> parse_lock_body(std::string_view bytes) {
  JsonReader reader;
  Spill spill;
  BodyView view;
  if (Status read = read_body(bytes, reader, spill, view); !read) return read.error();
  LockBody body;
  body.purpose = std::string(view.purpose);
  body.id = copy_of(view.id);
  body.host = copy_of(view.host);
  body.machine = view.machine == MachineField::Kind::id     ? MachineField::of(std::string(view.machine_id))
                 : view.machine == MachineField::Kind::none ? MachineField::none()
                                                            : MachineField::absent();
  body.pid = view.pid;
  body.started_at = copy_of(view.started_at);
  if (view.execution) body.execution = ref_of(*view.execution);
  body.lease_until = copy_of(view.lease_until);
  body.owner = copy_of(view.owner);
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
  const auto evidence = this_machine_evidence().get();
  BodyAuthor author;
  author.host = evidence->host;
  author.machine = evidence->machine_id;
  author.pid = static_cast<double>(::getpid());
  const std::string& token = self_owner_token();
  if (!token.empty()) author.owner = token;
  return author;
}

Result<BodyAuthor> author_of(Pid pid) {
  auto token = owner_token_of(pid);
  if (!token) return Error{Errc::not_found, "pid " + std::to_string(pid) + " names no process"};
  BodyAuthor author = this_author();
  author.pid = static_cast<double>(pid);
  author.owner = std::move(*token);
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
  using K = LockVerdict::Kind;
  JsonReader reader;
  Spill spill;
  BodyView body;
  if (!read_body(text, reader, spill, body)) {
    std::string storage;
    std::string quoted = js::slice_utf16(js::trim(js::decode_lossy(text, storage)), quoted_body_units);
    return verdict(K::held, LockReason::not_readable, true,
                   "the lock's holder is not readable (" + (quoted.empty() ? std::string("empty") : quoted) + ")");
  }
  const std::string who = holder_text(body);
  const std::int64_t now_ms = now.unix_ms();
  if (!body.execution) return judge_process(body, who, now_ms, here);

  std::optional<std::int64_t> lease_end;
  if (body.lease_until && !body.lease_until->empty()) lease_end = parse_js_date(*body.lease_until);
  ExecutionState state =
      describe ? describe(ref_of(*body.execution)) : ExecutionState::unknown("no way to ask Cloud Run was given");
  switch (state.kind) {
    case ExecutionState::Kind::finished:
      return verdict(K::break_lock, LockReason::execution_finished, false,
                     join(who, " has ", text_of(state.detail), ", but its lock was left behind"));
    case ExecutionState::Kind::running:
      return verdict(K::held, LockReason::execution_running, false, join(who, " is still running"));
    case ExecutionState::Kind::not_found:
      if (!lease_end) {
        return verdict(K::held, LockReason::execution_not_found_no_lease, true,
                       join(who, " is unknown to Cloud Run and its lock carries no readable lease"));
      }
      if (now_ms > *lease_end) {
        return verdict(K::break_lock, LockReason::execution_not_found_lease_ended, false,
                       join(who, " is unknown to Cloud Run and its lease ended at ", Utf8Of{*body.lease_until}));
      }
      return verdict(K::held, LockReason::execution_not_found_lease_runs, false,
                     join(who, " is unknown to Cloud Run, but its lease runs until ", Utf8Of{*body.lease_until}));
    case ExecutionState::Kind::unknown:
      break;
  }
  return verdict(K::unknown, LockReason::execution_unknown, false,
                 join("could not check whether ", who, " is still running: ", text_of(state.detail)));
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

}  // namespace leasejudge
