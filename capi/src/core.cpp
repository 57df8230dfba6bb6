// The C ABI's core and identity part: versions, errors, lj_free, tokens, machine id.
#include <unistd.h>

#include <cstdlib>

#include "internal.hpp"
#include "leasejudge/identity.hpp"
#include "leasejudge/json_text.hpp"
#include "options.hpp"

using leasejudge::Errc;
using namespace leasejudge::capi;

extern "C" {

LJ_API const char* lj_version(void) {
#define LJ_STR2(x) #x
#define LJ_STR(x) LJ_STR2(x)
  return LJ_STR(LJ_VERSION_MAJOR) "." LJ_STR(LJ_VERSION_MINOR) "." LJ_STR(LJ_VERSION_PATCH);
#undef LJ_STR
#undef LJ_STR2
}

LJ_API unsigned lj_version_number(void) {
  return LJ_VERSION_NUMBER;
}

LJ_API const char* lj_strerror(int code) {
  if (code > 0 || code < static_cast<int>(leasejudge::lowest_errc)) return "unknown error code";
  return leasejudge::errc_message(static_cast<Errc>(code));
}

LJ_API int lj_error_code(const lj_error_t* err) {
  return err == nullptr ? LJ_OK : err->code;
}

LJ_API const char* lj_error_message(const lj_error_t* err) {
  return err == nullptr ? "" : err->message.c_str();
}

LJ_API void lj_error_destroy(lj_error_t* err) {
  delete err;
}

LJ_API void lj_free(void* ptr) {
  std::free(ptr);
}

LJ_API int lj_json_quote(char** out, size_t* out_len, const char* text, size_t text_len, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view t;
  if (!view_of(text, text_len, t)) return fail(err, LJ_EINVAL, "text is NULL with a length");
  return guard(err, [&] { return give(out, out_len, leasejudge::json_quote(t), err); });
}

LJ_API int lj_boot_id(char** out, size_t* out_len, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  return guard(err, [&] { return give(out, out_len, leasejudge::boot_id(), err); });
}

LJ_API int lj_owner_token(char** out, size_t* out_len, int32_t pid, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (pid < 0) return fail(err, LJ_EINVAL, "pid is negative");
  return guard(err, [&] {
    if (pid == 0) return give(out, out_len, leasejudge::self_owner_token(), err);
    auto token = leasejudge::owner_token_of(pid);
    if (!token) return fail(err, token.error());
    return give(out, out_len, *token, err);
  });
}

LJ_API int lj_lease_identity(char** out, size_t* out_len, int32_t pid, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (pid < 0) return fail(err, LJ_EINVAL, "pid is negative");
  return guard(err, [&] {
    leasejudge::Pid p = pid == 0 ? static_cast<leasejudge::Pid>(::getpid()) : pid;
    std::string id = leasejudge::lease_identity_of(p);
    if (id.empty()) return fail(err, LJ_ENOTFOUND, "the process has no readable start identity");
    return give(out, out_len, id, err);
  });
}

LJ_API int lj_machine_id(char** out, size_t* out_len, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  return guard(err, [&] {
    auto id = leasejudge::machine_id();
    if (!id) {
      return fail(err, LJ_ENOTFOUND,
                  "this machine has no machine id (CLOUD_RUN_EXECUTION or K_SERVICE is set, or no network card is up)");
    }
    return give(out, out_len, *id, err);
  });
}

LJ_API int lj_owner_token_parse(char** out_boot_id, size_t* out_boot_id_len, int32_t* out_pid, int64_t* out_start_ms,
                                const char* token, size_t token_len, lj_error_t** err) {
  reset(err);
  if (out_boot_id != nullptr) *out_boot_id = nullptr;
  std::string_view text;
  if (!view_of(token, token_len, text)) return fail(err, LJ_EINVAL, "token is NULL with a non-zero length");
  return guard(err, [&] {
    auto parsed = leasejudge::parse_owner_token(text);
    if (!parsed) return fail(err, LJ_EPARSE, "the text is no owner token <boot id>.<pid>.<start ms base 36>");
    if (out_pid != nullptr) *out_pid = parsed->pid;
    if (out_start_ms != nullptr) *out_start_ms = parsed->start_ms;
    if (out_boot_id != nullptr) return give(out_boot_id, out_boot_id_len, parsed->boot_id, err);
    return LJ_OK;
  });
}

namespace {
const leasejudge::capi::OptionsVersions<lj_owner_options_t, 1> owner_options_versions{
    "lj_owner_options_t", LJ_OWNER_OPTIONS_INIT, {sizeof(lj_owner_options_t)}};
}  // namespace

LJ_API int lj_owner_options_init(lj_owner_options_t* opts, uint32_t version) {
  return leasejudge::capi::init_options(opts, version, owner_options_versions);
}

namespace {
lj_holder_state_t to_c(leasejudge::HolderState s) {
  switch (s) {
    case leasejudge::HolderState::alive:
      return LJ_HOLDER_ALIVE;
    case leasejudge::HolderState::dead:
      return LJ_HOLDER_DEAD;
    case leasejudge::HolderState::recycled:
      return LJ_HOLDER_RECYCLED;
    case leasejudge::HolderState::other_boot:
      return LJ_HOLDER_OTHER_BOOT;
    case leasejudge::HolderState::unknown:
      return LJ_HOLDER_UNKNOWN;
  }
  return LJ_HOLDER_UNKNOWN;
}
}  // namespace

LJ_API int lj_owner_judge(lj_holder_state_t* state, char** why, size_t* why_len, const char* token, size_t token_len,
                          const lj_owner_options_t* opts, lj_error_t** err) {
  reset(err);
  if (state == nullptr) return fail(err, LJ_EINVAL, "state is NULL");
  if (why != nullptr) *why = nullptr;
  std::string_view text;
  if (!view_of(token, token_len, text)) return fail(err, LJ_EINVAL, "token is NULL with a non-zero length");
  lj_owner_options_t c;
  if (int rc = leasejudge::capi::read_options(c, opts, owner_options_versions, err); rc != LJ_OK) return rc;
  if (c.start_tolerance_ms < 0) return fail(err, LJ_EINVAL, "start_tolerance_ms is negative");
  leasejudge::OwnerJudgeOptions o;
  o.start_tolerance_ms = c.start_tolerance_ms;
  return guard(err, [&] {
    auto j = leasejudge::judge_owner_token(text, o);
    *state = to_c(j.state);
    if (why != nullptr) return give_text(why, why_len, j.why, err);
    return LJ_OK;
  });
}

LJ_API int lj_lease_identity_judge(lj_holder_state_t* state, char** why, size_t* why_len, int32_t pid,
                                   const char* record, size_t record_len, int64_t age_min, lj_error_t** err) {
  reset(err);
  if (state == nullptr) return fail(err, LJ_EINVAL, "state is NULL");
  if (why != nullptr) *why = nullptr;
  std::string_view text;
  if (!view_of(record, record_len, text)) return fail(err, LJ_EINVAL, "record is NULL with a non-zero length");
  if (pid <= 0) return fail(err, LJ_EINVAL, "pid must be positive");
  return guard(err, [&] {
    auto j = leasejudge::judge_lease_identity(pid, text, age_min);
    *state = to_c(j.state);
    if (why != nullptr) return give_text(why, why_len, j.why, err);
    return LJ_OK;
  });
}

}  // extern "C"
