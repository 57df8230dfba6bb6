// The C ABI's lock part: verdicts, execution state, bodies and the lock's life.
#include "leasejudge/lock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include <unistd.h>

#include "internal.hpp"
#include "leasejudge/clock.hpp"
#include "leasejudge/identity.hpp"
#include "options.hpp"
#include "store_handle.hpp"

using leasejudge::c_text;
using leasejudge::Errc;
using leasejudge::Error;
using leasejudge::ExecutionRef;
using leasejudge::ExecutionState;
using leasejudge::Instant;
using leasejudge::LockReason;
using leasejudge::LockVerdict;
using namespace leasejudge::capi;

struct lj_execution_state_t {
  ExecutionState state;
  bool set = false;
};

struct lj_lock_t {
  leasejudge::Store* store = nullptr;
  leasejudge::HeldLock lock;
  // While a heartbeat runs, it holds the lock as last renewed.
  leasejudge::LockRenewal* beat = nullptr;

  leasejudge::HeldLock current() const { return beat != nullptr ? beat->lock() : lock; }
};

struct lj_lock_heartbeat_t {
  lj_lock_t* lock = nullptr;
  std::unique_ptr<leasejudge::LockRenewal> renewal;
};

namespace {

constexpr int reason_min = static_cast<int>(LockReason::not_readable);
constexpr int reason_max = static_cast<int>(LockReason::store_lease_unknown);

// The C enums are the C++ ones, number for number: the casts below rely on it.
static_assert(LJ_LOCK_LEASE_AS_TAKEN == leasejudge::lease_as_taken);
static_assert(LJ_LOCK_BREAK == static_cast<int>(LockVerdict::Kind::break_lock));
static_assert(LJ_LOCK_HELD == static_cast<int>(LockVerdict::Kind::held));
static_assert(LJ_LOCK_UNKNOWN == static_cast<int>(LockVerdict::Kind::unknown));
static_assert(LJ_LOCK_NOT_READABLE == static_cast<int>(LockReason::not_readable));
static_assert(LJ_LOCK_EXECUTION_FINISHED == static_cast<int>(LockReason::execution_finished));
static_assert(LJ_LOCK_EXECUTION_RUNNING == static_cast<int>(LockReason::execution_running));
static_assert(LJ_LOCK_EXECUTION_NOT_FOUND_NO_LEASE == static_cast<int>(LockReason::execution_not_found_no_lease));
static_assert(LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_ENDED == static_cast<int>(LockReason::execution_not_found_lease_ended));
static_assert(LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_RUNS == static_cast<int>(LockReason::execution_not_found_lease_runs));
static_assert(LJ_LOCK_EXECUTION_UNKNOWN == static_cast<int>(LockReason::execution_unknown));
static_assert(LJ_LOCK_PROCESS_GONE == static_cast<int>(LockReason::process_gone));
static_assert(LJ_LOCK_NO_LEASE == static_cast<int>(LockReason::no_lease));
static_assert(LJ_LOCK_LEASE_UNREADABLE == static_cast<int>(LockReason::lease_unreadable));
static_assert(LJ_LOCK_LEASE_ENDED == static_cast<int>(LockReason::lease_ended));
static_assert(LJ_LOCK_LEASE_RUNS == static_cast<int>(LockReason::lease_runs));
static_assert(LJ_LOCK_HOLDER_REBOOTED == static_cast<int>(LockReason::holder_rebooted));
static_assert(LJ_LOCK_PID_REUSED == static_cast<int>(LockReason::pid_reused));
static_assert(LJ_LOCK_STORE_LEASE_ENDED == static_cast<int>(LockReason::store_lease_ended));
static_assert(LJ_LOCK_STORE_LEASE_UNKNOWN == static_cast<int>(LockReason::store_lease_unknown));
static_assert(LJ_EXECUTION_RUNNING == static_cast<int>(ExecutionState::Kind::running));
static_assert(LJ_EXECUTION_FINISHED == static_cast<int>(ExecutionState::Kind::finished));
static_assert(LJ_EXECUTION_NOT_FOUND == static_cast<int>(ExecutionState::Kind::not_found));
static_assert(LJ_EXECUTION_UNKNOWN == static_cast<int>(ExecutionState::Kind::unknown));
static_assert(LJ_ACQUIRE_ACQUIRED == static_cast<int>(leasejudge::Acquisition::Outcome::acquired));
static_assert(LJ_ACQUIRE_HELD == static_cast<int>(leasejudge::Acquisition::Outcome::held));
static_assert(LJ_ACQUIRE_UNKNOWN == static_cast<int>(leasejudge::Acquisition::Outcome::unknown));
static_assert(LJ_ACQUIRE_LOST_RACE == static_cast<int>(leasejudge::Acquisition::Outcome::lost_race));
static_assert(LJ_HOLDER_ALIVE == static_cast<int>(leasejudge::HolderState::alive));
static_assert(LJ_HOLDER_DEAD == static_cast<int>(leasejudge::HolderState::dead));
static_assert(LJ_HOLDER_RECYCLED == static_cast<int>(leasejudge::HolderState::recycled));
static_assert(LJ_HOLDER_OTHER_BOOT == static_cast<int>(leasejudge::HolderState::other_boot));
static_assert(LJ_HOLDER_UNKNOWN == static_cast<int>(leasejudge::HolderState::unknown));

// JavaScript's Date range: a lock time beyond it is no time a body can hold.
constexpr int64_t js_time_limit = 8'640'000'000'000'000;
// The longest a gcloud call may be given: a day.
constexpr int64_t timeout_limit_ms = 86'400'000;

// Call only with a time check_time accepts.
Instant instant_of(int64_t now_ms) {
  return now_ms == LJ_TIME_DEFAULT ? leasejudge::system_now() : Instant::from_unix_ms(now_ms);
}

// A time argument is LJ_TIME_DEFAULT or within JavaScript's Date range; anything else is
// refused before any arithmetic is done on it.
int check_time(int64_t now_ms, lj_error_t** err) {
  if (now_ms == LJ_TIME_DEFAULT || (now_ms >= -js_time_limit && now_ms <= js_time_limit)) return LJ_OK;
  return fail(err, LJ_EINVAL, "the time is outside JavaScript's Date range (+-8.64e15 ms)");
}

int check_lease(int64_t lease_ms, lj_error_t** err) {
  if (lease_ms >= 0) return LJ_OK;
  return fail(err, LJ_EINVAL, "the lease is negative");
}

// Whether text is already C text: no NUL, and no lead byte of a surrogate.
bool is_c_text(std::string_view text) {
  return std::memchr(text.data(), '\0', text.size()) == nullptr &&
         std::memchr(text.data(), '\xED', text.size()) == nullptr;
}

int put_verdict(lj_lock_verdict_t* out, const LockVerdict& v, lj_error_t** err) {
  lj_lock_verdict_t c{};
  c.kind = static_cast<lj_lock_kind_t>(static_cast<int>(v.kind));
  c.reason = static_cast<lj_lock_reason_t>(static_cast<int>(v.reason));
  c.manual_removal = v.manual_removal ? 1 : 0;
  int rc = is_c_text(v.why) ? give(&c.why, &c.why_len, v.why, err) : give(&c.why, &c.why_len, c_text(v.why), err);
  if (rc != LJ_OK) return rc;
  *out = c;
  return LJ_OK;
}

// The int a C enum field holds, whatever it is (read through its bytes).
template <typename Enum>
int enum_value(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int));
  int value = 0;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

bool verdict_of(const lj_lock_verdict_t* c, LockVerdict& v) {
  // C may store any int in an enum field: read it as an int before the range check
  // (loading an out-of-range value as the enum type is undefined in C++).
  const int kind = enum_value(c->kind);
  const int reason = enum_value(c->reason);
  if (kind < LJ_LOCK_BREAK || kind > LJ_LOCK_UNKNOWN) return false;
  if (reason < reason_min || reason > reason_max) return false;
  std::string_view why;
  if (!view_of(c->why, c->why_len, why)) return false;
  // A pair no judging gives (break with lease_runs, a manual removal the reason does
  // not call for) is no verdict.
  const auto r = static_cast<LockReason>(reason);
  if (static_cast<int>(leasejudge::lock_reason_kind(r)) != kind) return false;
  if ((c->manual_removal != 0) != leasejudge::lock_reason_manual(r)) return false;
  v.kind = static_cast<LockVerdict::Kind>(kind);
  v.reason = r;
  v.manual_removal = c->manual_removal != 0;
  v.why = std::string(why);
  return true;
}

bool ref_of(const lj_execution_ref_t* c, ExecutionRef& ref) {
  std::string_view p, r, n;
  if (!view_of(c->project_id, c->project_id_len, p) || !view_of(c->region, c->region_len, r) ||
      !view_of(c->name, c->name_len, n)) {
    return false;
  }
  ref = ExecutionRef{std::string(p), std::string(r), std::string(n)};
  return true;
}

int put_state(lj_execution_kind_t* out_kind, char** out_detail, size_t* out_len, const ExecutionState& s,
              lj_error_t** err) {
  int rc = give(out_detail, out_len, c_text(s.detail), err);
  if (rc != LJ_OK) return rc;
  *out_kind = static_cast<lj_execution_kind_t>(static_cast<int>(s.kind));
  return LJ_OK;
}

const OptionsVersions<lj_lock_options_t, 1> lock_options_versions{
    "lj_lock_options_t", LJ_LOCK_OPTIONS_INIT, {sizeof(lj_lock_options_t)}};
const OptionsVersions<lj_lock_here_t, 1> lock_here_versions{
    "lj_lock_here_t", LJ_LOCK_HERE_INIT, {sizeof(lj_lock_here_t)}};
const OptionsVersions<lj_lock_holder_t, 2> lock_holder_versions{
    "lj_lock_holder_t", LJ_LOCK_HOLDER_INIT, {offsetof(lj_lock_holder_t, pid), sizeof(lj_lock_holder_t)}};

// A call's options, read as their versions say; o.here points at here, or is NULL.
struct LockCall {
  lj_lock_options_t o;
  lj_lock_here_t here;
};

int check_options(const lj_lock_options_t* opts, LockCall& call, lj_error_t** err) {
  if (int rc = read_options(call.o, opts, lock_options_versions, err); rc != LJ_OK) return rc;
  if (call.o.gcloud_timeout_ms > timeout_limit_ms) {
    return fail(err, LJ_EINVAL, "gcloud_timeout_ms is over a day");
  }
  if (call.o.here != nullptr) {
    if (int rc = read_options(call.here, call.o.here, lock_here_versions, err); rc != LJ_OK) return rc;
    call.o.here = &call.here;
    std::string_view s;
    if (!view_of(call.here.host, call.here.host_len, s)) return fail(err, LJ_EINVAL, "here->host is NULL");
    const int kind = enum_value(call.here.machine_kind);
    if (kind < LJ_MACHINE_ABSENT || kind > LJ_MACHINE_ID) {
      return fail(err, LJ_EINVAL, "here->machine_kind is out of range");
    }
    if (kind == LJ_MACHINE_ID && !view_of(call.here.machine, call.here.machine_len, s)) {
      return fail(err, LJ_EINVAL, "here->machine is NULL");
    }
  }
  return LJ_OK;
}

// What judging needs from a call's options, with a flag a callback sets to stop.
// The callbacks below capture only this object, so making them allocates nothing.
struct Judging {
  const LockCall* call = nullptr;
  leasejudge::Describer describe;
  std::optional<leasejudge::Here> given;         // the caller's here, when it gave one
  std::shared_ptr<const leasejudge::Here> kept;  // else this machine's
  const leasejudge::Here* here = nullptr;        // given or kept
  bool stopped = false;
  std::string stop_reason;

  void stop(std::string reason) {
    stopped = true;
    stop_reason = std::move(reason);
  }
};

// A caller's here, used as given: its host and machine are never checked against
// this machine's, and this machine's evidence is not read for it.
void prepare_here(Judging& j, const lj_lock_here_t& h) {
  leasejudge::Here& given = j.given.emplace();
  j.here = &given;
  given.host = std::string(h.host == nullptr ? "" : std::string_view(h.host, h.host_len));
  switch (enum_value(h.machine_kind)) {
    case LJ_MACHINE_ABSENT:
      given.machine = leasejudge::MachineField::absent();
      break;
    case LJ_MACHINE_NONE:
      given.machine = leasejudge::MachineField::none();
      break;
    default:
      given.machine = leasejudge::MachineField::of(
          std::string(h.machine == nullptr ? "" : std::string_view(h.machine, h.machine_len)));
      break;
  }
  if (h.alive != nullptr) {
    given.alive = [&j](double pid) {
      if (j.stopped) return true;
      const lj_lock_here_t& here = *j.call->o.here;
      int alive = 1;
      if (int rc = here.alive(&alive, pid, here.payload); rc != 0) {
        j.stop(fmt::format("the alive callback asked to stop ({})", rc));
        return true;
      }
      return alive != 0;
    };
  } else {
    given.alive = leasejudge::process_alive;
  }
  if (h.owner_state != nullptr) {
    given.owner_state = [&j](std::string_view token) {
      if (j.stopped) return leasejudge::HolderState::unknown;
      const lj_lock_here_t& here = *j.call->o.here;
      lj_holder_state_t state = LJ_HOLDER_UNKNOWN;
      const std::string text(token);  // the callback gets a C string, as every text the ABI hands over
      if (int rc = here.owner_state(&state, text.c_str(), text.size(), here.payload); rc != 0) {
        j.stop(fmt::format("the owner state callback asked to stop ({})", rc));
        return leasejudge::HolderState::unknown;
      }
      const int value = enum_value(state);
      if (value < LJ_HOLDER_ALIVE || value > LJ_HOLDER_UNKNOWN) return leasejudge::HolderState::unknown;
      return static_cast<leasejudge::HolderState>(value);
    };
  } else {
    given.owner_state = [](std::string_view token) { return leasejudge::judge_owner_token(token).state; };
  }
}

// Call after check_options. The callbacks never throw into C; a non-zero return
// marks the judging stopped and answers the safe way (alive, unknown). Without a
// here, `machine` is used, or else this machine's kept evidence (read again at most
// once a second).
void prepare(Judging& j, const LockCall& call, const leasejudge::Here* machine = nullptr) {
  j.call = &call;
  if (call.o.here == nullptr) {
    if (machine == nullptr) {
      j.kept = leasejudge::this_machine_kept();
      machine = j.kept.get();
    }
    j.here = machine;
  } else {
    prepare_here(j, *call.o.here);
  }
  if (call.o.describe != nullptr) {
    j.describe = [&j](const ExecutionRef& ref) {
      if (j.stopped) return ExecutionState::unknown("stopped");
      lj_execution_ref_t c{ref.project_id.c_str(), ref.project_id.size(), ref.region.c_str(),
                           ref.region.size(),      ref.name.c_str(),      ref.name.size()};
      lj_execution_state_t state;
      if (int rc = j.call->o.describe(&state, &c, j.call->o.describe_payload); rc != 0) {
        j.stop(fmt::format("the describe callback asked to stop ({})", rc));
        return ExecutionState::unknown("stopped");
      }
      if (!state.set) return ExecutionState::unknown("the describer gave no state");
      return std::move(state.state);
    };
  } else {
    // gcloud's options are made only when a body names an execution.
    j.describe = [&j](const ExecutionRef& ref) {
      leasejudge::GcloudOptions gcloud;
      if (j.call->o.gcloud_timeout_ms > 0) gcloud.timeout = std::chrono::milliseconds(j.call->o.gcloud_timeout_ms);
      gcloud.base_env = j.call->o.gcloud_env;
      return leasejudge::describe_execution(ref, gcloud);
    };
  }
}

// The holder, and the author its body names: this process, or holder->pid's.
int check_holder(const lj_lock_holder_t* in, leasejudge::LockHolder& out, std::optional<leasejudge::BodyAuthor>& author,
                 lj_error_t** err) {
  author.reset();
  if (in == nullptr) {
    out = leasejudge::ProcessHolder{};
    return LJ_OK;
  }
  lj_lock_holder_t c;
  if (int rc = read_options(c, in, lock_holder_versions, err); rc != LJ_OK) return rc;
  const lj_lock_holder_t* holder = &c;
  if (holder->pid < 0) return fail(err, LJ_EINVAL, "holder->pid is negative");
  if (holder->pid > 0) {
    auto of = leasejudge::author_of(holder->pid);
    if (!of) return fail(err, of.error());
    author = std::move(*of);
  }
  switch (holder->kind) {
    case LJ_LOCK_HOLDER_NONE:
      out = std::monostate{};
      return LJ_OK;
    case LJ_LOCK_HOLDER_PROCESS:
      if (int rc = check_lease(holder->lease_ms, err); rc != LJ_OK) return rc;
      out = leasejudge::ProcessHolder{holder->lease_ms};
      return LJ_OK;
    case LJ_LOCK_HOLDER_EXECUTION: {
      ExecutionRef ref;
      if (int rc = check_lease(holder->lease_ms, err); rc != LJ_OK) return rc;
      if (!ref_of(&holder->execution, ref)) return fail(err, LJ_EINVAL, "holder->execution has a NULL field");
      out = leasejudge::ExecutionHolder{std::move(ref), holder->lease_ms};
      return LJ_OK;
    }
    default:
      return fail(err, LJ_EINVAL, "holder->kind is out of range");
  }
}

}  // namespace

extern "C" {

// --- the verdict -------------------------------------------------------------------

LJ_API const char* lj_lock_reason_code(int reason) {
  if (reason < reason_min || reason > reason_max) return "";
  return leasejudge::lock_reason_code(static_cast<LockReason>(reason));
}

LJ_API const char* lj_lock_kind_name(int kind) {
  if (kind < LJ_LOCK_BREAK || kind > LJ_LOCK_UNKNOWN) return "";
  return leasejudge::lock_verdict_kind_name(static_cast<LockVerdict::Kind>(kind));
}

LJ_API void lj_lock_verdict_clear(lj_lock_verdict_t* verdict) {
  if (verdict == nullptr) return;
  std::free(verdict->why);
  *verdict = lj_lock_verdict_t{};
}

namespace {

// The one prologue of the verdict's two forms: the verdict checked, then formatted.
int format_verdict(char** out, size_t* out_len, const lj_lock_verdict_t* verdict, lj_error_t** err,
                   std::string (*form)(const LockVerdict&)) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (verdict == nullptr) return fail(err, LJ_EINVAL, "verdict is NULL");
  return guard(err, [&] {
    LockVerdict v;
    if (!verdict_of(verdict, v)) return fail(err, LJ_EINVAL, "the verdict's kind, reason or why is out of range");
    return give(out, out_len, form(v), err);
  });
}

}  // namespace

LJ_API int lj_lock_verdict_text(char** out, size_t* out_len, const lj_lock_verdict_t* verdict, lj_error_t** err) {
  return format_verdict(out, out_len, verdict, err, leasejudge::format_verdict_text);
}

LJ_API int lj_lock_verdict_json(char** out, size_t* out_len, const lj_lock_verdict_t* verdict, lj_error_t** err) {
  return format_verdict(out, out_len, verdict, err, leasejudge::format_verdict_json);
}

// --- execution state -------------------------------------------------------------

LJ_API int lj_execution_state_set(lj_execution_state_t* state, int kind, const char* detail, size_t detail_len) {
  if (state == nullptr) return LJ_EINVAL;
  if (kind < LJ_EXECUTION_RUNNING || kind > LJ_EXECUTION_UNKNOWN) return LJ_EINVAL;
  std::string_view d;
  if (!view_of(detail, detail_len, d)) return LJ_EINVAL;
  return guard(nullptr, [&] {
    state->state = ExecutionState{static_cast<ExecutionState::Kind>(kind), std::string(d)};
    state->set = true;
    return LJ_OK;
  });
}

LJ_API int lj_execution_state_parse(lj_execution_kind_t* out_kind, char** out_detail, size_t* out_detail_len,
                                    int exit_code, const char* out_text, size_t out_text_len, const char* err_text,
                                    size_t err_text_len, lj_error_t** err) {
  reset(err);
  if (out_kind == nullptr || out_detail == nullptr) return fail(err, LJ_EINVAL, "out_kind or out_detail is NULL");
  *out_detail = nullptr;
  std::string_view o, e;
  if (!view_of(out_text, out_text_len, o)) return fail(err, LJ_EINVAL, "out_text is NULL");
  if (!view_of(err_text, err_text_len, e)) return fail(err, LJ_EINVAL, "err_text is NULL");
  return guard(err, [&] {
    leasejudge::GcloudResult result;
    result.ok = exit_code == 0;
    result.exit_code = exit_code;
    result.out = std::string(o);
    result.err = std::string(e);
    return put_state(out_kind, out_detail, out_detail_len, leasejudge::parse_execution_state(result), err);
  });
}

LJ_API int lj_execution_describe(lj_execution_kind_t* out_kind, char** out_detail, size_t* out_detail_len,
                                 const lj_execution_ref_t* ref, int64_t timeout_ms, lj_error_t** err) {
  reset(err);
  if (out_kind == nullptr || out_detail == nullptr) return fail(err, LJ_EINVAL, "out_kind or out_detail is NULL");
  *out_detail = nullptr;
  if (ref == nullptr) return fail(err, LJ_EINVAL, "ref is NULL");
  if (timeout_ms > timeout_limit_ms) return fail(err, LJ_EINVAL, "timeout_ms is over a day");
  return guard(err, [&] {
    ExecutionRef r;
    if (!ref_of(ref, r)) return fail(err, LJ_EINVAL, "ref has a NULL field");
    leasejudge::GcloudOptions opts;
    if (timeout_ms > 0) opts.timeout = std::chrono::milliseconds(timeout_ms);
    return put_state(out_kind, out_detail, out_detail_len, leasejudge::describe_execution(r, opts), err);
  });
}

LJ_API int lj_execution_describe_args(char** out, size_t* out_len, size_t* out_count, const lj_execution_ref_t* ref,
                                      lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (ref == nullptr) return fail(err, LJ_EINVAL, "ref is NULL");
  return guard(err, [&] {
    ExecutionRef r;
    if (!ref_of(ref, r)) return fail(err, LJ_EINVAL, "ref has a NULL field");
    const std::vector<std::string> args = leasejudge::describe_execution_args(r);
    std::string joined;
    for (const std::string& arg : args) {
      joined.append(is_c_text(arg) ? arg : c_text(arg));
      joined.push_back('\0');
    }
    if (int rc = give(out, out_len, joined, err); rc != LJ_OK) return rc;
    if (out_count != nullptr) *out_count = args.size();
    return LJ_OK;
  });
}

// --- judging ---------------------------------------------------------------------------

LJ_API int lj_process_alive(int* out, double pid, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = leasejudge::process_alive(pid) ? 1 : 0;
  return LJ_OK;
}

LJ_API int lj_lock_here_init(lj_lock_here_t* here, uint32_t version) {
  return init_options(here, version, lock_here_versions);
}

LJ_API int lj_lock_options_init(lj_lock_options_t* opts, uint32_t version) {
  return init_options(opts, version, lock_options_versions);
}

LJ_API int lj_lock_judge(lj_lock_verdict_t* out, const char* body, size_t body_len, int64_t now_ms,
                         const lj_lock_options_t* opts, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = lj_lock_verdict_t{};
  std::string_view text;
  if (!view_of(body, body_len, text)) return fail(err, LJ_EINVAL, "body is NULL");
  if (int rc = check_time(now_ms, err); rc != LJ_OK) return rc;
  LockCall call;
  if (int rc = check_options(opts, call, err); rc != LJ_OK) return rc;
  return guard(err, [&] {
    leasejudge::ThreadJudging thread;
    Judging j;
    prepare(j, call, call.o.here == nullptr ? &thread.machine() : nullptr);
    LockVerdict& v = thread.verdict();
    leasejudge::judge_lock(v, text, j.describe, instant_of(now_ms), *j.here);
    if (j.stopped) return fail(err, LJ_EUSER, j.stop_reason);
    return put_verdict(out, v, err);
  });
}

// --- bodies --------------------------------------------------------------------------------

LJ_API int lj_lock_holder_init(lj_lock_holder_t* holder, uint32_t version) {
  return init_options(holder, version, lock_holder_versions);
}

LJ_API int lj_lock_purpose_default(char** out, size_t* out_len, const char* key, size_t key_len, int32_t pid,
                                   lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view k;
  if (!view_of(key, key_len, k) || k.empty()) return fail(err, LJ_EINVAL, "key is empty");
  if (pid < 0) return fail(err, LJ_EINVAL, "pid is negative");
  return guard(err, [&] {
    return give(out, out_len, leasejudge::default_lock_purpose(k, pid == 0 ? ::getpid() : pid), err);
  });
}

LJ_API int lj_lock_body_new(char** out, size_t* out_len, const char* purpose, size_t purpose_len, int64_t now_ms,
                            const lj_lock_holder_t* holder, const char* id, size_t id_len, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view p, i;
  if (!view_of(purpose, purpose_len, p)) return fail(err, LJ_EINVAL, "purpose is NULL");
  if (!view_of(id, id_len, i)) return fail(err, LJ_EINVAL, "id is NULL with a length");
  if (int rc = check_time(now_ms, err); rc != LJ_OK) return rc;
  return guard(err, [&] {
    leasejudge::LockHolder h;
    std::optional<leasejudge::BodyAuthor> author;
    if (int rc = check_holder(holder, h, author, err); rc != LJ_OK) return rc;
    auto made = leasejudge::lock_body(p, instant_of(now_ms), h, i, author ? *author : leasejudge::this_author());
    if (!made) return fail(err, made.error());
    return give(out, out_len, *made, err);
  });
}

LJ_API int lj_lock_body_renew(char** out, size_t* out_len, const char* body, size_t body_len, int64_t now_ms,
                              int64_t lease_ms, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view b;
  if (!view_of(body, body_len, b)) return fail(err, LJ_EINVAL, "body is NULL");
  if (int rc = check_time(now_ms, err); rc != LJ_OK) return rc;
  if (int rc = check_lease(lease_ms, err); rc != LJ_OK) return rc;
  return guard(err, [&] {
    auto parsed = leasejudge::parse_lock_body(b);
    if (!parsed) return fail(err, parsed.error());
    auto renewed = leasejudge::renewed_lock_body(*parsed, instant_of(now_ms), lease_ms);
    if (!renewed) return fail(err, renewed.error());
    return give(out, out_len, *renewed, err);
  });
}

LJ_API int lj_lock_body_parse(char** out, size_t* out_len, const char* body, size_t body_len, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view b;
  if (!view_of(body, body_len, b)) return fail(err, LJ_EINVAL, "body is NULL");
  return guard(err, [&] {
    auto parsed = leasejudge::parse_lock_body(b);
    if (!parsed) return fail(err, parsed.error());
    return give(out, out_len, leasejudge::format_parsed_lock_body(*parsed), err);
  });
}

LJ_API int lj_lock_body_id(char** out, size_t* out_len, const char* body, size_t body_len, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view b;
  if (!view_of(body, body_len, b)) return fail(err, LJ_EINVAL, "body is NULL");
  return guard(err, [&] {
    auto parsed = leasejudge::parse_lock_body(b);
    if (!parsed) return fail(err, parsed.error());
    if (!parsed->id) return fail(err, LJ_ENOTFOUND, "the lock body has no id");
    return give(out, out_len, c_text(*parsed->id), err);
  });
}

LJ_API int lj_lock_time_format(char** out, size_t* out_len, int64_t unix_ms, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (int rc = check_time(unix_ms, err); rc != LJ_OK) return rc;
  return guard(err, [&] { return give(out, out_len, leasejudge::format_js_iso(instant_of(unix_ms).unix_ms()), err); });
}

LJ_API int lj_lock_time_parse(int64_t* out_ms, const char* text, size_t text_len, lj_error_t** err) {
  reset(err);
  if (out_ms == nullptr) return fail(err, LJ_EINVAL, "out_ms is NULL");
  std::string_view t;
  if (!view_of(text, text_len, t)) return fail(err, LJ_EINVAL, "text is NULL");
  return guard(err, [&] {
    auto ms = leasejudge::parse_js_date(t);
    if (!ms) return fail(err, LJ_EPARSE, "not a time as JavaScript's Date.parse reads the ISO format");
    *out_ms = *ms;
    return LJ_OK;
  });
}

// --- the lock's life ------------------------------------------------------------------------

LJ_API void lj_lock_acquisition_clear(lj_lock_acquisition_t* acquisition) {
  if (acquisition == nullptr) return;
  std::free(acquisition->verdict.why);
  *acquisition = lj_lock_acquisition_t{};
}

}  // extern "C"

namespace {

using Acquire = std::function<leasejudge::Result<leasejudge::Acquisition>(leasejudge::Store&, std::string_view,
                                                                          const leasejudge::LockRequest&)>;

// lj_lock_acquire and lj_lock_acquire_wait past their own arguments: the checks they
// share, the acquisition made by acquire, and what it gives back.
int acquire_with(lj_lock_t** out, lj_lock_acquisition_t* acquisition, lj_store_t* store, const char* key,
                 size_t key_len, const char* purpose, size_t purpose_len, const lj_lock_holder_t* holder,
                 const lj_lock_options_t* opts, lj_error_t** err, const std::function<int()>& check,
                 const Acquire& acquire) {
  if (out == nullptr || acquisition == nullptr) return fail(err, LJ_EINVAL, "out or acquisition is NULL");
  *out = nullptr;
  *acquisition = lj_lock_acquisition_t{};
  if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "store is NULL");
  std::string_view k, p;
  if (!view_of(key, key_len, k) || k.empty()) return fail(err, LJ_EINVAL, "key is empty");
  if (!view_of(purpose, purpose_len, p)) return fail(err, LJ_EINVAL, "purpose is NULL");
  if (int rc = check(); rc != LJ_OK) return rc;
  LockCall call;
  if (int rc = check_options(opts, call, err); rc != LJ_OK) return rc;
  return guard(err, [&] {
    leasejudge::LockRequest request;
    if (int rc = check_holder(holder, request.holder, request.author, err); rc != LJ_OK) return rc;
    request.purpose = std::string(p);
    Judging j;
    prepare(j, call);
    request.describe = j.describe;
    request.here = *j.here;
    auto got = acquire(*store->store, k, request);
    if (j.stopped) return fail(err, LJ_EUSER, j.stop_reason);
    if (!got) return fail(err, got.error());
    lj_lock_acquisition_t a{};
    a.outcome = static_cast<lj_lock_outcome_t>(static_cast<int>(got->outcome));
    a.broke_at = got->broke_at;
    if (got->verdict) {
      if (int rc = put_verdict(&a.verdict, *got->verdict, err); rc != LJ_OK) return rc;
      a.has_verdict = 1;
    }
    if (got->outcome == leasejudge::Acquisition::Outcome::acquired) {
      a.revision = got->lock.revision;
      auto held = std::make_unique<lj_lock_t>();
      held->store = store->store;
      held->lock = std::move(got->lock);
      *out = held.release();
    }
    *acquisition = a;
    return LJ_OK;
  });
}

const OptionsVersions<lj_lock_wait_options_t, 2> lock_wait_versions{
    "lj_lock_wait_options_t",
    LJ_LOCK_WAIT_OPTIONS_INIT,
    {offsetof(lj_lock_wait_options_t, note), sizeof(lj_lock_wait_options_t)}};

int check_wait(const lj_lock_wait_options_t* in, lj_lock_wait_options_t& w, lj_error_t** err) {
  if (int rc = read_options(w, in, lock_wait_versions, err); rc != LJ_OK) return rc;
  if (w.wait_ms < 0) return fail(err, LJ_EINVAL, "wait_ms is negative");
  if (w.wait_ms > timeout_limit_ms) return fail(err, LJ_EINVAL, "wait_ms is over a day");
  if (w.poll_min_ms < 0 || w.poll_max_ms < 0) return fail(err, LJ_EINVAL, "a poll interval is negative");
  if (w.poll_min_ms > timeout_limit_ms || w.poll_max_ms > timeout_limit_ms)
    return fail(err, LJ_EINVAL, "a poll interval is over a day");
  if (w.poll_min_ms == 0) w.poll_min_ms = 50;
  if (w.poll_max_ms == 0) w.poll_max_ms = std::max<int64_t>(1000, w.poll_min_ms);
  if (w.poll_max_ms < w.poll_min_ms) return fail(err, LJ_EINVAL, "poll_max_ms is below poll_min_ms");
  return LJ_OK;
}

}  // namespace

extern "C" {

LJ_API int lj_lock_acquire(lj_lock_t** out, lj_lock_acquisition_t* acquisition, lj_store_t* store, const char* key,
                           size_t key_len, const char* purpose, size_t purpose_len, const lj_lock_holder_t* holder,
                           int64_t now_ms, const lj_lock_options_t* opts, lj_error_t** err) {
  reset(err);
  return acquire_with(
      out, acquisition, store, key, key_len, purpose, purpose_len, holder, opts, err,
      [&] { return check_time(now_ms, err); },
      [&](leasejudge::Store& s, std::string_view k, const leasejudge::LockRequest& r) {
        return leasejudge::acquire_lock(s, k, r, instant_of(now_ms));
      });
}

LJ_API int lj_lock_wait_options_init(lj_lock_wait_options_t* opts, uint32_t version) {
  return init_options(opts, version, lock_wait_versions);
}

LJ_API int lj_lock_acquire_wait(lj_lock_t** out, lj_lock_acquisition_t* acquisition, lj_store_t* store, const char* key,
                                size_t key_len, const char* purpose, size_t purpose_len, const lj_lock_holder_t* holder,
                                const lj_lock_wait_options_t* wait, const lj_lock_options_t* opts, lj_error_t** err) {
  reset(err);
  lj_lock_wait_options_t w{};
  return acquire_with(
      out, acquisition, store, key, key_len, purpose, purpose_len, holder, opts, err,
      [&] { return check_wait(wait, w, err); },
      [&](leasejudge::Store& s, std::string_view k, const leasejudge::LockRequest& r) {
        leasejudge::LockWait lw;
        lw.wait = std::chrono::milliseconds(w.wait_ms);
        lw.poll_min = std::chrono::milliseconds(w.poll_min_ms);
        lw.poll_max = std::chrono::milliseconds(w.poll_max_ms);
        if (w.cancelled != nullptr) lw.cancelled = [&w] { return w.cancelled(w.payload) != 0; };
        if (w.note != nullptr) lw.note = [&w](std::string_view line) { w.note(line.data(), line.size(), w.payload); };
        return leasejudge::acquire_lock_wait(s, k, r, lw);
      });
}

LJ_API int lj_lock_renew(lj_lock_t* lock, int64_t now_ms, lj_error_t** err) {
  reset(err);
  if (lock == nullptr || lock->store == nullptr) return fail(err, LJ_EINVAL, "lock is NULL");
  if (lock->beat != nullptr) return fail(err, LJ_EBUSY, "the lock's heartbeat renews it");
  if (int rc = check_time(now_ms, err); rc != LJ_OK) return rc;
  return guard(err, [&] {
    leasejudge::Status renewed = leasejudge::renew_lock(*lock->store, lock->lock, instant_of(now_ms));
    if (!renewed) return fail(err, renewed.error());
    return LJ_OK;
  });
}

LJ_API int lj_lock_release(lj_lock_t* lock, lj_error_t** err) {
  reset(err);
  if (lock == nullptr || lock->store == nullptr) return fail(err, LJ_EINVAL, "lock is NULL");
  if (lock->beat != nullptr) return fail(err, LJ_EBUSY, "the lock's heartbeat runs: destroy it first");
  return guard(err, [&] {
    leasejudge::Status released = leasejudge::release_lock(*lock->store, lock->lock);
    if (!released) return fail(err, released.error());
    return LJ_OK;
  });
}

LJ_API int lj_lock_open(lj_lock_t** out, lj_store_t* store, const char* key, size_t key_len, const char* id,
                        size_t id_len, int64_t lease_ms, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "store is NULL");
  std::string_view k, i;
  if (!view_of(key, key_len, k) || k.empty()) return fail(err, LJ_EINVAL, "key is empty");
  if (!view_of(id, id_len, i) || i.empty()) return fail(err, LJ_EINVAL, "id is empty");
  if (lease_ms != LJ_LOCK_LEASE_AS_TAKEN) {
    if (int rc = check_lease(lease_ms, err); rc != LJ_OK) return rc;
  }
  return guard(err, [&] {
    auto held = leasejudge::held_lock(*store->store, k, i, lease_ms);
    if (!held) return fail(err, held.error());
    auto handle = std::make_unique<lj_lock_t>();
    handle->store = store->store;
    handle->lock = std::move(*held);
    *out = handle.release();
    return LJ_OK;
  });
}

LJ_API int lj_lock_judge_stored(lj_lock_verdict_t* out, uint64_t* out_revision, char** out_body, size_t* out_body_len,
                                lj_store_t* store, const char* key, size_t key_len, int64_t now_ms,
                                const lj_lock_options_t* opts, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = lj_lock_verdict_t{};
  if (out_body != nullptr) *out_body = nullptr;
  if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "store is NULL");
  std::string_view k;
  if (!view_of(key, key_len, k) || k.empty()) return fail(err, LJ_EINVAL, "key is empty");
  if (int rc = check_time(now_ms, err); rc != LJ_OK) return rc;
  LockCall call;
  if (int rc = check_options(opts, call, err); rc != LJ_OK) return rc;
  return guard(err, [&] {
    auto found = store->store->get(k);
    if (!found) return fail(err, found.error());
    if (!found->has_value()) return fail(err, LJ_ENOTFOUND, fmt::format("no lock at {}", c_text(k)));
    const leasejudge::StoreEntry& entry = **found;
    Judging j;
    prepare(j, call);
    const LockVerdict v =
        leasejudge::judge_stored_lock(*store->store, k, entry, j.describe, instant_of(now_ms), *j.here);
    if (j.stopped) return fail(err, LJ_EUSER, j.stop_reason);
    if (out_body != nullptr) {
      if (int rc = give(out_body, out_body_len, entry.value, err); rc != LJ_OK) return rc;
    }
    if (int rc = put_verdict(out, v, err); rc != LJ_OK) {
      if (out_body != nullptr) {
        lj_free(*out_body);
        *out_body = nullptr;
      }
      return rc;
    }
    if (out_revision != nullptr) *out_revision = entry.revision;
    return LJ_OK;
  });
}

LJ_API uint64_t lj_lock_revision(const lj_lock_t* lock) {
  if (lock == nullptr) return 0;
  try {
    return lock->current().revision;
  } catch (...) {
    return 0;
  }
}

LJ_API int64_t lj_lock_renew_interval_ms(const lj_lock_t* lock) {
  if (lock == nullptr || lock->lock.lease_ms <= 0) return 0;
  return leasejudge::LockRenewal::interval(lock->lock.lease_ms).count();
}

LJ_API int64_t lj_lock_lease_ms(const lj_lock_t* lock) {
  if (lock == nullptr || lock->lock.lease_ms <= 0) return 0;
  return lock->lock.lease_ms;
}

LJ_API int lj_lock_id(char** out, size_t* out_len, const lj_lock_t* lock, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (lock == nullptr) return fail(err, LJ_EINVAL, "lock is NULL");
  return guard(err, [&] { return give(out, out_len, lock->current().id, err); });
}

LJ_API int lj_lock_body(char** out, size_t* out_len, const lj_lock_t* lock, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (lock == nullptr) return fail(err, LJ_EINVAL, "lock is NULL");
  return guard(err, [&] { return give(out, out_len, lock->current().body, err); });
}

LJ_API void lj_lock_destroy(lj_lock_t* lock) {
  delete lock;
}

LJ_API int lj_lock_heartbeat_start(lj_lock_heartbeat_t** out, lj_lock_t* lock, lj_lock_lost_cb on_lost, void* payload,
                                   lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (lock == nullptr || lock->store == nullptr) return fail(err, LJ_EINVAL, "lock is NULL");
  if (lock->lock.lease_ms <= 0) return fail(err, LJ_EINVAL, "a lock without a lease has nothing to renew");
  if (lock->beat != nullptr) return fail(err, LJ_EBUSY, "the lock has a heartbeat already");
  return guard(err, [&] {
    auto hb = std::make_unique<lj_lock_heartbeat_t>();
    hb->lock = lock;
    auto lost = [on_lost, payload](const Error& e) {
      if (on_lost == nullptr) return;
      try {
        const std::string message = c_text(e.message);
        on_lost(static_cast<int>(e.code), message.c_str(), message.size(), payload);
      } catch (...) {
        on_lost(static_cast<int>(e.code), "", 0, payload);
      }
    };
    hb->renewal = std::make_unique<leasejudge::LockRenewal>(*lock->store, lock->lock, leasejudge::system_clock(),
                                                            std::move(lost));
    lock->beat = hb->renewal.get();
    *out = hb.release();
    return LJ_OK;
  });
}

LJ_API int lj_lock_heartbeat_lost(const lj_lock_heartbeat_t* heartbeat) {
  if (heartbeat == nullptr) return 1;
  return heartbeat->renewal->expired() ? 1 : 0;
}

LJ_API uint64_t lj_lock_heartbeat_renewals(const lj_lock_heartbeat_t* heartbeat) {
  return heartbeat == nullptr ? 0 : heartbeat->renewal->renewals();
}

LJ_API uint64_t lj_lock_heartbeat_retries(const lj_lock_heartbeat_t* heartbeat) {
  return heartbeat == nullptr ? 0 : heartbeat->renewal->retries();
}

LJ_API void lj_lock_heartbeat_destroy(lj_lock_heartbeat_t* heartbeat) {
  if (heartbeat == nullptr) return;
  heartbeat->renewal->stop();
  try {
    heartbeat->lock->lock = heartbeat->renewal->lock();
  } catch (...) {
    // Out of memory copying the body: the lock keeps its older revision, so a
    // release finds it moved and refuses (the safe direction).
  }
  heartbeat->lock->beat = nullptr;
  delete heartbeat;
}

}  // extern "C"
