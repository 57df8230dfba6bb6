// The state of a lock holder that is a Cloud Run job execution, as gcloud tells it, and
// the describer that asks.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "leasejudge/error.hpp"
#include "leasejudge/lock_body.hpp"

namespace leasejudge {

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

}  // namespace leasejudge
