// Lock bodies: read as JSON.parse and the schema read them, written as JSON.stringify
// writes them (lock_body.hpp).
#include "leasejudge/lock_body.hpp"

#include <unistd.h>
#include <uuid/uuid.h>

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <cstdint>
#include <limits>

#include "leasejudge/text.hpp"
#include "lock_js.hpp"
#include "lock_read.hpp"

namespace leasejudge {

using namespace lock_read;

namespace {

// Read for a field handler: a wrong type is recorded in the slot, never stops the
// reading (a later duplicate may fix it); only bad JSON stops.
Read go_on(Read read) {
  return read == Read::bad_json ? Read::bad_json : Read::ok;
}

Read read_string_slot(od::value v, Slot<std::string_view>& slot, Spill& spill) {
  std::string_view s;
  Read r = JsonReader::text(v, s, spill);
  slot.set(r, s);
  return go_on(r);
}

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

bool is_utf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

bool add_ms(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_add_overflow(a, b, &out) && out >= -js_time_limit && out <= js_time_limit;
}

std::optional<std::string> copy_of(const std::optional<std::string_view>& v) {
  return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

}  // namespace

namespace lock_read {

Status read_body(std::string_view bytes, JsonReader& reader, Spill& spill, BodyView& body) {
  std::string storage;
  std::string_view text = js::decode_lossy(bytes, storage);
  od::object root;
  Read opened = reader.open_object(text, root);
  if (opened == Read::bad_json) return Error{Errc::parse, "the lock body is not JSON"};
  if (opened == Read::wrong_type) return Error{Errc::parse, "the lock body is not a JSON object"};

  Slot<std::string_view> purpose, id, host, started_at, lease_until, owner;
  Slot<double> pid;
  std::optional<std::int64_t> lease_ms;
  MachineSlot machine;
  ExecutionSlot execution;
  Read r = JsonReader::fields(root, 0, [&](std::string_view key, od::value v, int depth) -> Read {
    if (key == "purpose") return read_string_slot(v, purpose, spill);
    if (key == "id") return read_string_slot(v, id, spill);
    if (key == "host") return read_string_slot(v, host, spill);
    if (key == "startedAt") return read_string_slot(v, started_at, spill);
    if (key == "leaseUntil") return read_string_slot(v, lease_until, spill);
    if (key == "owner") return read_string_slot(v, owner, spill);
    if (key == "leaseMs") {
      // leasejudge's own, ignored by the schema: kept only when a whole number of ms
      // a lease can be.
      double d = 0;
      lease_ms.reset();
      if (JsonReader::number(v, d) == Read::ok && d >= 1 && d <= max_lease_ms && d == std::floor(d))
        lease_ms = static_cast<std::int64_t>(d);
      return Read::ok;
    }
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
  body.lease_ms = lease_ms;
  return Status::success();
}

}  // namespace lock_read

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
  body.lease_ms = view.lease_ms;
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
  if (body.lease_ms) fmt::format_to(std::back_inserter(out), ",\"leaseMs\":{}", *body.lease_ms);
  out.push_back('}');
  return out;
}

std::string format_parsed_lock_body(const LockBody& body) {
  std::string text = format_lock_body(body);
  // The key is found as written: a quote inside a string value is always escaped.
  if (body.pid && *body.pid == 0 && std::signbit(*body.pid)) {
    if (auto at = text.find("\"pid\":0"); at != std::string::npos) text.insert(at + 6, 1, '-');
  }
  return text;
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
    if (author.owner && process->lease_ms >= 1 && process->lease_ms <= max_lease_ms) body.lease_ms = process->lease_ms;
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
  if (renewed.lease_ms || renewed.owner) {
    renewed.lease_ms = lease_ms >= 1 && lease_ms <= max_lease_ms ? std::optional(lease_ms) : std::nullopt;
  }
  return format_lock_body(renewed);
}

}  // namespace leasejudge
