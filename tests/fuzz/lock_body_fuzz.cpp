// The lock body producers and the renewal on any bytes. Properties: a renewal is
// refused exactly for bodies the judge cannot read (and for times and leases out of
// range); a renewed body is valid JSON, keeps its id, reads back with the lease it
// was given and renews again to the same bytes; a new body is made exactly from
// UTF-8 text, carries the id given and its lease, and the judge holds it while the
// lease runs; the id read back is UTF-8 without NUL.
#include <time.h>

#include <optional>

#include "fuzz.hpp"
#include "leasejudge/clock.hpp"
#include "leasejudge/lock.hpp"

namespace {

constexpr std::int64_t js_limit = 8'640'000'000'000'000;
constexpr std::int64_t skew = LJ_LOCK_LEASE_SKEW_MS;

int alive_always(int* out_alive, double, void*) {
  *out_alive = 1;
  return 0;
}
int owner_unknown(lj_holder_state_t* out, const char*, size_t, void*) {
  *out = LJ_HOLDER_UNKNOWN;
  return 0;
}
int describe_running(lj_execution_state_t* state, const lj_execution_ref_t*, void*) {
  return lj_execution_state_set(state, LJ_EXECUTION_RUNNING, nullptr, 0);
}

// Judged by a live holder's machine (every pid alive) at now.
lj_lock_verdict_t judge(std::string_view body, std::int64_t now_ms) {
  lj_lock_here_t here = LJ_LOCK_HERE_INIT;
  here.host = "build-7";
  here.host_len = 7;
  here.machine_kind = LJ_MACHINE_ABSENT;
  here.alive = alive_always;
  here.owner_state = owner_unknown;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  opts.here = &here;
  opts.describe = describe_running;
  lj_lock_verdict_t v;
  FUZZ_CHECK(lj_lock_judge(&v, body.data(), body.size(), now_ms, &opts, nullptr) == LJ_OK);
  return v;
}

std::optional<std::string> body_id(std::string_view body) {
  char* out = nullptr;
  size_t len = 0;
  int rc = lj_lock_body_id(&out, &len, body.data(), body.size(), nullptr);
  if (rc != LJ_OK) {
    FUZZ_CHECK(out == nullptr && (rc == LJ_EPARSE || rc == LJ_ENOTFOUND));
    return std::nullopt;
  }
  FUZZ_CHECK(fuzz::c_text(out, len));
  std::string id(out, len);
  lj_free(out);
  return id;
}

std::int64_t lease_until_ms(std::string_view body) {
  auto parsed = leasejudge::parse_lock_body(body);
  FUZZ_CHECK(parsed.ok() && parsed->lease_until.has_value());
  auto end = leasejudge::parse_js_date(*parsed->lease_until);
  FUZZ_CHECK(end.has_value());
  return *end;
}

void fuzz_renew(std::string_view body, std::int64_t now_ms, std::int64_t lease_ms) {
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_lock_body_renew(&out, &len, body.data(), body.size(), now_ms, lease_ms, &err);
  fuzz::check_error(err, rc);
  const bool time_ok = now_ms >= -js_limit && now_ms <= js_limit;
  if (!time_ok || lease_ms < 0) {
    FUZZ_CHECK(rc == LJ_EINVAL && out == nullptr);
    return;
  }
  const bool readable = leasejudge::parse_lock_body(body).ok();
  std::int64_t end = 0;
  const bool end_ok = !__builtin_add_overflow(now_ms, lease_ms, &end) && !__builtin_add_overflow(end, skew, &end) &&
                      end >= -js_limit && end <= js_limit;
  if (!readable) {
    FUZZ_CHECK(rc == LJ_EPARSE && out == nullptr);
    lj_lock_verdict_t v = judge(body, 0);
    FUZZ_CHECK(v.reason == LJ_LOCK_NOT_READABLE);
    lj_lock_verdict_clear(&v);
    return;
  }
  if (!end_ok) {
    FUZZ_CHECK(rc == LJ_EINVAL && out == nullptr);
    return;
  }
  FUZZ_CHECK(rc == LJ_OK);
  std::string renewed(out, len);
  lj_free(out);
  FUZZ_CHECK(fuzz::valid_json_grammar(renewed));
  FUZZ_CHECK(body_id(renewed) == body_id(body));
  FUZZ_CHECK(lease_until_ms(renewed) == end);
  // Renewing what was renewed, with the same now, gives the same bytes.
  FUZZ_CHECK(lj_lock_body_renew(&out, &len, renewed.data(), renewed.size(), now_ms, lease_ms, nullptr) == LJ_OK);
  FUZZ_CHECK(std::string_view(out, len) == renewed);
  lj_free(out);
  // While the lease runs nothing breaks it: every pid lives, executions run.
  lj_lock_verdict_t v = judge(renewed, now_ms);
  FUZZ_CHECK(v.kind == LJ_LOCK_HELD);
  FUZZ_CHECK(v.reason == LJ_LOCK_LEASE_RUNS || v.reason == LJ_LOCK_EXECUTION_RUNNING);
  lj_lock_verdict_clear(&v);
}

void fuzz_new(fuzz::Input& in, std::int64_t now_ms) {
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  holder.kind = in.byte() % 4;
  holder.lease_ms = in.flag() ? in.i64() : static_cast<std::int64_t>(in.byte()) * 1000;
  std::string_view project = in.small(), region = in.small(), name = in.small();
  holder.execution =
      lj_execution_ref_t{project.data(), project.size(), region.data(), region.size(), name.data(), name.size()};
  std::string_view purpose = in.small(), id = in.small();
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_lock_body_new(&out, &len, purpose.data(), purpose.size(), now_ms, &holder, id.data(), id.size(), &err);
  fuzz::check_error(err, rc);
  if (holder.kind > LJ_LOCK_HOLDER_EXECUTION) {
    FUZZ_CHECK(rc == LJ_EINVAL && out == nullptr);
    return;
  }
  const bool has_lease = holder.kind != LJ_LOCK_HOLDER_NONE;
  const bool execution = holder.kind == LJ_LOCK_HOLDER_EXECUTION;
  std::int64_t end = 0;
  bool ok = now_ms >= -js_limit && now_ms <= js_limit && fuzz::utf8(purpose) && fuzz::utf8(id);
  if (has_lease) {
    ok = ok && holder.lease_ms >= 0 && !__builtin_add_overflow(now_ms, holder.lease_ms, &end) &&
         !__builtin_add_overflow(end, skew, &end) && end >= -js_limit && end <= js_limit;
  }
  if (execution) {
    ok = ok && fuzz::utf8(project) && fuzz::utf8(region) && fuzz::utf8(name) && !project.empty() && !region.empty() &&
         !name.empty();
  }
  if (!ok) {
    FUZZ_CHECK(rc == LJ_EINVAL && out == nullptr);
    return;
  }
  FUZZ_CHECK(rc == LJ_OK);
  std::string body(out, len);
  lj_free(out);
  FUZZ_CHECK(fuzz::valid_json_grammar(body));
  auto parsed = leasejudge::parse_lock_body(body);
  FUZZ_CHECK(parsed.ok());
  FUZZ_CHECK(parsed->purpose == purpose);
  FUZZ_CHECK(parsed->id.has_value());
  if (!id.empty()) FUZZ_CHECK(*parsed->id == id);
  if (id.empty()) FUZZ_CHECK(parsed->id->size() == 36);
  FUZZ_CHECK(parsed->execution.has_value() == execution);
  if (execution) {
    FUZZ_CHECK(parsed->execution->project_id == project && parsed->execution->region == region &&
               parsed->execution->name == name);
  }
  FUZZ_CHECK(parsed->lease_until.has_value() == has_lease);
  if (has_lease) FUZZ_CHECK(lease_until_ms(body) == end);
  lj_lock_verdict_t v = judge(body, now_ms);
  FUZZ_CHECK(v.kind == LJ_LOCK_HELD);
  if (execution) {
    FUZZ_CHECK(v.reason == LJ_LOCK_EXECUTION_RUNNING);
  } else if (has_lease) {
    FUZZ_CHECK(v.reason == LJ_LOCK_LEASE_RUNS);
  } else {
    FUZZ_CHECK(v.reason == LJ_LOCK_NO_LEASE && v.manual_removal == 1);
  }
  lj_lock_verdict_clear(&v);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TZ", "UTC", 1);
  tzset();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const int mode = in.byte();
  std::int64_t now_ms = 1714564800000;
  if (mode & 1) now_ms = in.i64();
  if (mode & 2) now_ms = in.i64() % (js_limit + 1);
  if (now_ms == LJ_TIME_DEFAULT) now_ms += 1;
  std::int64_t lease_ms = (mode & 4) ? in.i64() : LJ_LOCK_PROCESS_LEASE_MS;
  if (mode & 8) fuzz_new(in, now_ms);
  fuzz_renew(in.rest(), now_ms, lease_ms);
  return 0;
}
