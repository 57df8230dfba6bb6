// The lock judge on any body with fake evidence (a describer, a liveness and an
// owner-state callback the input steers), and the verdict forms on any verdict.
// Properties: a describer that says running or could not tell never gives break;
// every break has its evidence (a dead pid, a passed readable lease, a finished or
// unknown execution, a reused pid, another boot); an unreadable body is held for a
// person; kind, reason and manual removal agree; every why is UTF-8 without NUL;
// the text and JSON forms say the verdict exactly, the JSON valid.
#include <time.h>

#include <cmath>
#include <optional>

#include "fuzz.hpp"
#include "leasejudge/clock.hpp"
#include "leasejudge/lock.hpp"
#include "leasejudge/text.hpp"

namespace {

constexpr std::int64_t js_limit = 8'640'000'000'000'000;

// The reason table of lj_lock.h, written out again: kind, manual removal.
struct ReasonFacts {
  int kind;
  bool manual;
};
const ReasonFacts facts[17] = {{-1, false},           {LJ_LOCK_HELD, true},     {LJ_LOCK_BREAK, false},
                               {LJ_LOCK_HELD, false}, {LJ_LOCK_HELD, true},     {LJ_LOCK_BREAK, false},
                               {LJ_LOCK_HELD, false}, {LJ_LOCK_UNKNOWN, false}, {LJ_LOCK_BREAK, false},
                               {LJ_LOCK_HELD, true},  {LJ_LOCK_HELD, true},     {LJ_LOCK_BREAK, false},
                               {LJ_LOCK_HELD, false}, {LJ_LOCK_BREAK, false},   {LJ_LOCK_BREAK, false},
                               {LJ_LOCK_BREAK, false}, {LJ_LOCK_UNKNOWN, false}};
const char* const reason_codes[17] = {"",
                                      "not_readable",
                                      "execution_finished",
                                      "execution_running",
                                      "execution_not_found_no_lease",
                                      "execution_not_found_lease_ended",
                                      "execution_not_found_lease_runs",
                                      "execution_unknown",
                                      "process_gone",
                                      "no_lease",
                                      "lease_unreadable",
                                      "lease_ended",
                                      "lease_runs",
                                      "holder_rebooted",
                                      "pid_reused",
                                      "store_lease_ended",
                                      "store_lease_unknown"};
const char* const kind_names[3] = {"break", "held", "unknown"};

struct Evidence {
  int describe_mode = 0;  // 0..3 a kind, 4 sets nothing, 5 stops
  std::string_view detail;
  int alive_mode = 0;  // 0 alive, 1 dead, 2 stops
  int owner_mode = 0;  // 0..4 a holder state, 5 out of range, 6 stops
  int describe_calls = 0, alive_calls = 0, owner_calls = 0;
  bool stopped = false;
};

int describe(lj_execution_state_t* state, const lj_execution_ref_t* ref, void* payload) {
  auto* e = static_cast<Evidence*>(payload);
  ++e->describe_calls;
  FUZZ_CHECK(ref->name != nullptr && ref->name[ref->name_len] == '\0' && ref->name_len > 0);
  if (e->describe_mode == 5) {
    e->stopped = true;
    return 3;
  }
  if (e->describe_mode == 4) return 0;
  FUZZ_CHECK(lj_execution_state_set(state, e->describe_mode, e->detail.data(), e->detail.size()) == LJ_OK);
  return 0;
}

int alive(int* out_alive, double, void* payload) {
  auto* e = static_cast<Evidence*>(payload);
  ++e->alive_calls;
  if (e->alive_mode == 2) {
    e->stopped = true;
    return 1;
  }
  *out_alive = e->alive_mode == 0;
  return 0;
}

int owner_state(lj_holder_state_t* out, const char* token, size_t len, void* payload) {
  auto* e = static_cast<Evidence*>(payload);
  ++e->owner_calls;
  FUZZ_CHECK(token != nullptr && token[len] == '\0');
  if (e->owner_mode == 6) {
    e->stopped = true;
    return 1;
  }
  *out = static_cast<lj_holder_state_t>(e->owner_mode == 5 ? 9 : e->owner_mode);
  return 0;
}

// Checks the text and JSON forms of an accepted verdict.
void check_forms(const lj_lock_verdict_t& v, std::string_view why_written) {
  char* out = nullptr;
  size_t len = 0;
  FUZZ_CHECK(lj_lock_verdict_text(&out, &len, &v, nullptr) == LJ_OK);
  FUZZ_CHECK(fuzz::c_text(out, len));
  std::string want = std::string(kind_names[v.kind]) + " " + reason_codes[v.reason] + " " + std::string(why_written);
  if (v.manual_removal) want += why_written.empty() ? "(only a person can remove it)" : " (only a person can remove it)";
  FUZZ_CHECK(std::string_view(out, len) == want);
  lj_free(out);
  FUZZ_CHECK(lj_lock_verdict_json(&out, &len, &v, nullptr) == LJ_OK);
  FUZZ_CHECK(fuzz::c_text(out, len));
  simdjson::dom::parser parser;
  simdjson::padded_string padded(std::string_view(out, len));
  simdjson::dom::element doc;
  FUZZ_CHECK(parser.parse(padded).get(doc) == simdjson::SUCCESS);
  std::string_view kind, reason, why;
  bool manual = false;
  FUZZ_CHECK(doc["kind"].get(kind) == simdjson::SUCCESS && kind == kind_names[v.kind]);
  FUZZ_CHECK(doc["reason"].get(reason) == simdjson::SUCCESS && reason == reason_codes[v.reason]);
  FUZZ_CHECK(doc["manualRemoval"].get(manual) == simdjson::SUCCESS && manual == (v.manual_removal != 0));
  FUZZ_CHECK(doc["why"].get(why) == simdjson::SUCCESS);
  // The JSON keeps a NUL (escaped) where the text form shows U+FFFD.
  FUZZ_CHECK(leasejudge::c_text(why) == why_written);
  lj_free(out);
}

// Any kind, reason, manual removal and why bytes: refused exactly when no judging
// gives the pair, else both forms are exact and valid.
void fuzz_forms(fuzz::Input& in) {
  lj_lock_verdict_t v{};
  const int kind = static_cast<int>(in.byte() % 5) - 1;
  const int reason = static_cast<int>(in.byte() % 19) - 1;
  const int manual = static_cast<int>(in.byte() % 3) - 1;
  std::string why(in.small());
  std::memcpy(&v.kind, &kind, sizeof kind);
  std::memcpy(&v.reason, &reason, sizeof reason);
  v.manual_removal = manual;
  v.why = why.data();
  v.why_len = why.size();
  const bool valid = reason >= 1 && reason <= 16 && facts[reason].kind == kind && facts[reason].manual == (manual != 0);
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_lock_verdict_text(&out, &len, &v, &err);
  fuzz::check_error(err, rc);
  if (!valid) {
    FUZZ_CHECK(rc == LJ_EINVAL && out == nullptr);
    FUZZ_CHECK(lj_lock_verdict_json(&out, &len, &v, nullptr) == LJ_EINVAL && out == nullptr);
    return;
  }
  FUZZ_CHECK(rc == LJ_OK);
  lj_free(out);
  check_forms(v, leasejudge::c_text(why));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Date-times without an offset are local time: fix the zone.
  setenv("TZ", "UTC", 1);
  tzset();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  Evidence e;
  e.describe_mode = in.byte() % 6;
  e.alive_mode = in.byte() % 3;
  e.owner_mode = in.byte() % 7;
  const int machine_kind = in.byte() % 3;
  const int time_mode = in.byte() % 3;
  std::int64_t now_ms = 1714564800000;  // 2024-05-01T12:00:00.000Z
  if (time_mode == 1) now_ms = in.i64();
  if (time_mode == 2) now_ms = in.i64() % (js_limit + 1);
  if (now_ms == LJ_TIME_DEFAULT) now_ms += 1;  // the system clock is no input
  e.detail = in.small();
  if (in.flag()) fuzz_forms(in);
  std::string_view body = in.rest();

  lj_lock_here_t here = LJ_LOCK_HERE_INIT;
  here.host = "build-7";
  here.host_len = 7;
  here.machine_kind = machine_kind;
  here.machine = "m-aaa";
  here.machine_len = 5;
  here.alive = alive;
  here.owner_state = owner_state;
  here.payload = &e;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  opts.describe = describe;
  opts.describe_payload = &e;
  opts.here = &here;

  lj_lock_verdict_t v;
  lj_error_t* err = nullptr;
  int rc = lj_lock_judge(&v, body.data(), body.size(), now_ms, &opts, &err);
  fuzz::check_error(err, rc);
  if (now_ms < -js_limit || now_ms > js_limit) {
    FUZZ_CHECK(rc == LJ_EINVAL && v.why == nullptr);
    return 0;
  }
  if (e.stopped) {
    FUZZ_CHECK(rc == LJ_EUSER && v.why == nullptr);
    return 0;
  }
  FUZZ_CHECK(rc == LJ_OK);
  const int kind = v.kind, reason = v.reason;
  FUZZ_CHECK(reason >= 1 && reason <= 14);  // a body alone never gives a store lease's reasons (15, 16)
  FUZZ_CHECK(kind == facts[reason].kind);
  FUZZ_CHECK((v.manual_removal != 0) == facts[reason].manual);
  FUZZ_CHECK(fuzz::c_text(v.why, v.why_len));

  // The evidence behind the verdict, read again with the library's own parser.
  auto parsed = leasejudge::parse_lock_body(body);
  FUZZ_CHECK(parsed.ok() == (reason != LJ_LOCK_NOT_READABLE));
  const bool execution = parsed.ok() && parsed->execution.has_value();
  FUZZ_CHECK(e.describe_calls == (execution ? 1 : 0));
  if (execution) {
    switch (e.describe_mode) {
      case LJ_EXECUTION_RUNNING:
        FUZZ_CHECK(kind == LJ_LOCK_HELD && reason == LJ_LOCK_EXECUTION_RUNNING);
        break;
      case LJ_EXECUTION_FINISHED:
        FUZZ_CHECK(reason == LJ_LOCK_EXECUTION_FINISHED);
        break;
      case LJ_EXECUTION_NOT_FOUND:
        FUZZ_CHECK(reason >= LJ_LOCK_EXECUTION_NOT_FOUND_NO_LEASE && reason <= LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_RUNS);
        break;
      default:  // could not tell: unknown, never break
        FUZZ_CHECK(kind == LJ_LOCK_UNKNOWN && reason == LJ_LOCK_EXECUTION_UNKNOWN);
        break;
    }
  } else {
    FUZZ_CHECK(reason == LJ_LOCK_NOT_READABLE || reason >= LJ_LOCK_PROCESS_GONE);
  }
  std::optional<std::int64_t> lease_end;
  if (parsed.ok() && parsed->lease_until) lease_end = leasejudge::parse_js_date(*parsed->lease_until);
  switch (reason) {
    case LJ_LOCK_PROCESS_GONE:
      FUZZ_CHECK((e.alive_calls > 0 && e.alive_mode == 1) || (e.owner_calls > 0 && e.owner_mode == LJ_HOLDER_DEAD));
      break;
    case LJ_LOCK_PID_REUSED:
      FUZZ_CHECK(e.owner_calls > 0 && e.owner_mode == LJ_HOLDER_RECYCLED);
      break;
    case LJ_LOCK_HOLDER_REBOOTED:
      FUZZ_CHECK(e.owner_calls > 0 && e.owner_mode == LJ_HOLDER_OTHER_BOOT);
      break;
    case LJ_LOCK_LEASE_ENDED:
    case LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_ENDED:
      FUZZ_CHECK(lease_end.has_value() && now_ms > *lease_end);
      break;
    case LJ_LOCK_LEASE_RUNS:
    case LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_RUNS:
      FUZZ_CHECK(lease_end.has_value() && now_ms <= *lease_end);
      break;
    default:
      break;
  }
  // A judge without a machine id trusts no pid: no liveness is asked.
  if (machine_kind == LJ_MACHINE_NONE) FUZZ_CHECK(e.alive_calls == 0 && e.owner_calls == 0);
  check_forms(v, std::string_view(v.why, v.why_len));
  lj_lock_verdict_clear(&v);
  return 0;
}
