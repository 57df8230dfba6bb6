// An execution's state from gcloud (execution.hpp).
#include <fmt/format.h>

#include <cstring>

#include "child.hpp"
#include "leasejudge/execution.hpp"
#include "leasejudge/text.hpp"
#include "lock_js.hpp"

namespace leasejudge {

namespace {

namespace od = simdjson::ondemand;
using js::JsonReader;
using js::Read;

struct Condition {
  std::string type;
  std::string status;
  std::optional<std::string> reason;
};

// The JS code's execution status schema, each level letting the last duplicate win:
// {status?: {completionTime?: string, conditions?: [{type, status, reason?}]}}.
struct StatusRead {
  bool fits = true;  // false once the last status does not fit the schema
  bool has_status = false;
  std::optional<std::string> completion_time;
  std::vector<Condition> conditions;
};

Read read_condition(od::value v, int depth, Condition& out, bool& fits) {
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) return Read::bad_json;
  if (type != od::json_type::object) {
    fits = false;
    return JsonReader::skip(v, depth);
  }
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return Read::bad_json;
  // Per field: 0 absent, 1 a string, 2 something else (the last one counts).
  int type_seen = 0, status_seen = 0, reason_seen = 0;
  Read r = JsonReader::fields(obj, depth, [&](std::string_view key, od::value inner, int d) {
    auto text = [&](std::string& dst, int& seen) {
      Read got = JsonReader::string(inner, dst);
      seen = got == Read::ok ? 1 : 2;
      return got == Read::bad_json ? Read::bad_json : Read::ok;
    };
    if (key == "type") return text(out.type, type_seen);
    if (key == "status") return text(out.status, status_seen);
    if (key == "reason") {
      std::string reason;
      Read got = text(reason, reason_seen);
      out.reason = reason_seen == 1 ? std::optional<std::string>(std::move(reason)) : std::nullopt;
      return got;
    }
    return JsonReader::skip(inner, d);
  });
  if (r != Read::ok) return Read::bad_json;
  if (type_seen != 1 || status_seen != 1 || reason_seen == 2) fits = false;
  return Read::ok;
}

Read read_status(od::value v, int depth, StatusRead& out) {
  out = StatusRead{};
  out.has_status = true;
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) return Read::bad_json;
  if (type != od::json_type::object) {  // null included: the schema's status is not nullable
    out.fits = false;
    return JsonReader::skip(v, depth);
  }
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return Read::bad_json;
  bool completion_fits = true, conditions_fit = true;
  Read r = JsonReader::fields(obj, depth, [&](std::string_view key, od::value inner, int d) -> Read {
    if (key == "completionTime") {
      std::string s;
      Read got = JsonReader::string(inner, s);
      completion_fits = got == Read::ok;
      out.completion_time = completion_fits ? std::optional<std::string>(std::move(s)) : std::nullopt;
      return got == Read::bad_json ? Read::bad_json : Read::ok;
    }
    if (key == "conditions") {
      out.conditions.clear();
      conditions_fit = true;
      od::json_type t;
      if (inner.type().get(t) != simdjson::SUCCESS) return Read::bad_json;
      if (t != od::json_type::array) {
        conditions_fit = false;
        return JsonReader::skip(inner, d);
      }
      od::array arr;
      if (inner.get_array().get(arr) != simdjson::SUCCESS) return Read::bad_json;
      for (auto element : arr) {
        od::value item;
        if (element.get(item) != simdjson::SUCCESS) return Read::bad_json;
        Condition c;
        if (read_condition(item, d + 1, c, conditions_fit) != Read::ok) return Read::bad_json;
        out.conditions.push_back(std::move(c));
      }
      return Read::ok;
    }
    return JsonReader::skip(inner, d);
  });
  if (r != Read::ok) return Read::bad_json;
  out.fits = completion_fits && conditions_fit;
  return Read::ok;
}

}  // namespace

const char* execution_state_name(ExecutionState::Kind kind) noexcept {
  switch (kind) {
    case ExecutionState::Kind::running:
      return "running";
    case ExecutionState::Kind::finished:
      return "finished";
    case ExecutionState::Kind::not_found:
      return "not-found";
    case ExecutionState::Kind::unknown:
      return "unknown";
  }
  return "";
}

ExecutionState parse_execution_state(const GcloudResult& result) {
  if (!result.ok) {
    const std::string& err = result.err;
    // The JS code's /NOT_FOUND|not found|could not be found|does not exist/i.
    if (js::contains_ascii_nocase(err, "NOT_FOUND") || js::contains_ascii_nocase(err, "not found") ||
        js::contains_ascii_nocase(err, "could not be found") || js::contains_ascii_nocase(err, "does not exist")) {
      return ExecutionState::not_found();
    }
    std::string storage;
    std::string_view trimmed = js::trim(js::decode_lossy(err, storage));
    if (!trimmed.empty()) return ExecutionState::unknown(c_text_capped(trimmed, execution_detail_max));
    return ExecutionState::unknown(fmt::format("gcloud exited {}", result.exit_code));
  }
  std::string storage;
  std::string_view text = js::decode_lossy(result.out, storage);
  JsonReader reader;
  od::object root;
  Read opened = reader.open_object(text, root);
  const ExecutionState no_json = ExecutionState::unknown("gcloud returned no JSON for the execution");
  const ExecutionState no_status = ExecutionState::unknown("gcloud returned an execution without a readable status");
  if (opened == Read::bad_json) return no_json;
  if (opened == Read::wrong_type) return no_status;
  StatusRead status;
  Read r = JsonReader::fields(root, 0, [&](std::string_view key, od::value v, int depth) {
    if (key == "status") return read_status(v, depth, status);
    return JsonReader::skip(v, depth);
  });
  if (r != Read::ok || reader.finish() != Read::ok) return no_json;
  if (!status.fits) return no_status;

  for (const Condition& c : status.conditions) {
    if (c.type != "Completed") continue;
    // Only the first Completed condition counts, decided or not.
    if (c.status == "True") return ExecutionState::finished("succeeded");
    if (c.status == "False") {
      if (!c.reason) return ExecutionState::finished("failed");
      // The reason as text for people: UTF-8, a lone surrogate as U+FFFD.
      std::string how;
      js::append_utf8(how, js::to_lower(*c.reason));
      return ExecutionState::finished(c_text_capped(how, execution_detail_max));
    }
    break;
  }
  if (status.completion_time && !status.completion_time->empty()) return ExecutionState::finished("completed");
  return ExecutionState::running();
}

std::vector<std::string> describe_execution_args(const ExecutionRef& ref) {
  return {"run",
          "jobs",
          "executions",
          "describe",
          ref.name,
          "--region=" + ref.region,
          "--project=" + ref.project_id,
          "--format=json"};
}

Result<GcloudResult> run_gcloud(const std::vector<std::string>& args, const GcloudOptions& opts) {
  if (opts.base_env != nullptr && opts.program.find('/') == std::string::npos) {
    bool has_path = false;
    for (char* const* e = opts.base_env; *e != nullptr && !has_path; ++e) has_path = std::strncmp(*e, "PATH=", 5) == 0;
    if (!has_path) {
      return Error{Errc::not_found, fmt::format("{} is not on PATH: the environment given has no PATH", opts.program)};
    }
  }
  ChildRun run;
  run.argv.reserve(args.size() + 1);
  run.argv.push_back(opts.program);
  run.argv.insert(run.argv.end(), args.begin(), args.end());
  run.timeout = opts.timeout;
  run.max_output = opts.max_output;
  run.base_env = opts.base_env;
  auto done = run_child(run);
  if (!done) return std::move(done).error();
  if (done->signal != 0) {
    return Error{Errc::io, fmt::format("{} was killed by signal {}", opts.program, done->signal)};
  }
  GcloudResult result;
  result.exit_code = done->exit_code;
  result.ok = done->exit_code == 0;
  result.out = std::move(done->out);
  result.err = std::move(done->err);
  return result;
}

ExecutionState describe_execution(const ExecutionRef& ref, const GcloudOptions& opts) {
  auto result = run_gcloud(describe_execution_args(ref), opts);
  // A gcloud that could not be run says nothing about the execution: unknown,
  // never matched against the not-found pattern ("gcloud is not on PATH").
  if (!result) return ExecutionState::unknown(result.error().message);
  return parse_execution_state(*result);
}

Describer gcloud_describer(GcloudOptions opts) {
  return [opts = std::move(opts)](const ExecutionRef& ref) { return describe_execution(ref, opts); };
}

}  // namespace leasejudge
