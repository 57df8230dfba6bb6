// Owner tokens and lease identities on any bytes. Properties: a token the strict
// parser takes is exactly the canonical text of what it read; one it refuses is
// judged unknown, never dead or gone; this process's own token, its start moved by
// d ms, is alive exactly when |d| is within the tolerance (recycled otherwise) and
// of another boot when its boot id differs; the lease-identity rule agrees with an
// independent reading of the seed's valid_identity and state(); every why is UTF-8
// without NUL.
#include <unistd.h>

#include <optional>

#include "fuzz.hpp"
#include "leasejudge/identity.hpp"

namespace {

// The seed's valid_identity, read again: a text starting "linux " of which some line
// is `linux <36 of [0-9a-f-]> <digits>` (the seed pipes it to grep), or "ps " and at
// least one character that is not a space.
bool valid_identity_reference(std::string_view text) {
  if (text.size() > 3 && text.substr(0, 3) == "ps " && text.find_first_not_of(' ', 3) != std::string_view::npos)
    return true;
  if (text.substr(0, 6) != "linux ") return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (line.size() > 6 + 36 + 1 && line.substr(0, 6) == "linux " && line[42] == ' ') {
      bool ok = true;
      for (char c : line.substr(6, 36)) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-');
      for (char c : line.substr(43)) ok = ok && c >= '0' && c <= '9';
      if (ok) return true;
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return false;
}

std::string base36(std::int64_t v) {
  if (v == 0) return "0";
  std::string s;
  while (v > 0) {
    s.insert(s.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
    v /= 36;
  }
  return s;
}

lj_holder_state_t judge(std::string_view token, std::int64_t tolerance, int* rc_out) {
  lj_owner_options_t o = LJ_OWNER_OPTIONS_INIT;
  o.start_tolerance_ms = tolerance;
  lj_holder_state_t state = LJ_HOLDER_ALIVE;
  char* why = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_owner_judge(&state, &why, &len, token.data(), token.size(), &o, &err);
  fuzz::check_error(err, rc);
  *rc_out = rc;
  if (rc != LJ_OK) {
    FUZZ_CHECK(why == nullptr);
    return LJ_HOLDER_UNKNOWN;
  }
  FUZZ_CHECK(fuzz::c_text(why, len));
  lj_free(why);
  const int s = state;
  FUZZ_CHECK(s >= LJ_HOLDER_ALIVE && s <= LJ_HOLDER_UNKNOWN);
  return state;
}

void fuzz_token(std::string_view token, std::int64_t tolerance) {
  int rc = 0;
  lj_holder_state_t state = judge(token, tolerance, &rc);
  if (tolerance < 0) {
    FUZZ_CHECK(rc == LJ_EINVAL);
    return;
  }
  FUZZ_CHECK(rc == LJ_OK);
  auto parsed = leasejudge::parse_owner_token(token);
  if (!parsed) {
    FUZZ_CHECK(state == LJ_HOLDER_UNKNOWN);
    return;
  }
  FUZZ_CHECK(parsed->pid > 0 && parsed->start_ms >= 0);
  FUZZ_CHECK(leasejudge::format_owner_token(parsed->boot_id, parsed->pid, parsed->start_ms) == token);
  FUZZ_CHECK(parsed->boot_id + "." + std::to_string(parsed->pid) + "." + base36(parsed->start_ms) == token);
}

// This process's token with its start moved by delta ms (and its boot id changed
// when other_boot): the judge knows exactly what to say.
void fuzz_self(std::int64_t delta, std::int64_t tolerance, bool other_boot) {
  const std::string& self = leasejudge::self_owner_token();
  auto t = leasejudge::parse_owner_token(self);
  FUZZ_CHECK(t.has_value());
  const std::int64_t start = t->start_ms + delta;
  if (start < 0) return;
  std::string boot = t->boot_id;
  const bool has_boot = boot != "no-boot-id";
  if (other_boot && has_boot) boot[0] = boot[0] == '0' ? '1' : '0';
  int rc = 0;
  lj_holder_state_t state = judge(leasejudge::format_owner_token(boot, t->pid, start), tolerance, &rc);
  FUZZ_CHECK(rc == LJ_OK);
  if (other_boot && has_boot) {
    FUZZ_CHECK(state == LJ_HOLDER_OTHER_BOOT);
    return;
  }
  const std::int64_t d = delta < 0 ? -delta : delta;
  FUZZ_CHECK(state == (d <= tolerance ? LJ_HOLDER_ALIVE : LJ_HOLDER_RECYCLED));
}

void fuzz_lease_identity(std::int32_t pid, std::string_view record, std::int64_t age_min) {
  FUZZ_CHECK(leasejudge::valid_lease_identity(record) == valid_identity_reference(record));
  lj_holder_state_t state = LJ_HOLDER_UNKNOWN;
  char* why = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_lease_identity_judge(&state, &why, &len, pid, record.data(), record.size(), age_min, &err);
  fuzz::check_error(err, rc);
  if (pid <= 0) {
    FUZZ_CHECK(rc == LJ_EINVAL && why == nullptr);
    return;
  }
  FUZZ_CHECK(rc == LJ_OK);
  FUZZ_CHECK(fuzz::c_text(why, len));
  lj_free(why);
  const int s = state;
  FUZZ_CHECK(s == LJ_HOLDER_ALIVE || s == LJ_HOLDER_DEAD || s == LJ_HOLDER_RECYCLED);
  if (pid != ::getpid()) return;
  // This process lives: only an empty record past 120 minutes, or a well-formed
  // record of the same backend that differs, makes it stale.
  const std::string ours = leasejudge::lease_identity_of(pid);
  bool stale = false;
  if (record.empty()) {
    stale = age_min >= 120;
  } else {
    stale = valid_identity_reference(record) && leasejudge::lease_identity_backend(record) == "linux" &&
            record != ours && ours.substr(0, 6) == "linux ";
  }
  FUZZ_CHECK(state == (stale ? LJ_HOLDER_RECYCLED : LJ_HOLDER_ALIVE));
  // Its lease-file form: the same state through the lease directory's rule.
  lj_lease_state_t lease = LJ_LEASE_DEAD;
  const std::string name = std::to_string(pid);
  FUZZ_CHECK(lj_leasedir_state(&lease, name.data(), name.size(), record.data(), record.size(), age_min, nullptr,
                               nullptr) == LJ_OK);
  FUZZ_CHECK(lease == (stale ? LJ_LEASE_STALE : LJ_LEASE_ALIVE));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t mode = in.byte();
  std::int64_t tolerance = (mode & 1) ? in.i64() : 5000;
  if (mode & 2) {
    const std::int64_t delta = static_cast<std::int64_t>(static_cast<std::int16_t>(in.u64() >> 48)) * 7;
    fuzz_self(delta, tolerance < 0 ? 5000 : tolerance % 100000, (mode & 4) != 0);
  }
  if (mode & 8) {
    std::int32_t pid = (mode & 16) ? in.i32() : static_cast<std::int32_t>(::getpid());
    if (mode & 32) pid = 1;
    std::int64_t age = in.i64();
    if (mode & 64) age = in.byte();
    fuzz_lease_identity(pid, in.small(), age);
  }
  fuzz_token(in.rest(), tolerance);
  return 0;
}
