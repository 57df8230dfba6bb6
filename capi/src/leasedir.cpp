// The C ABI of the lease directory: translation only (leasejudge/leasedir.hpp rules).
#include <string>
#include <string_view>
#include <vector>

#include "internal.hpp"
#include "options.hpp"
#include "leasejudge.h"
#include "leasejudge/leasedir.hpp"

using namespace leasejudge;
using namespace leasejudge::capi;

namespace {

const OptionsVersions<lj_leasedir_options_t, 1> leasedir_options_versions{
    "lj_leasedir_options_t", LJ_LEASEDIR_OPTIONS_INIT, {sizeof(lj_leasedir_options_t)}};

// The C options as the C++ ones; a message when they are not usable.
int options_of(const lj_leasedir_options_t* in, LeaseDirOptions& out, lj_error_t** err) {
  if (in == nullptr) return LJ_OK;
  lj_leasedir_options_t c;
  if (int rc = read_options(c, in, leasedir_options_versions, err); rc != LJ_OK) return rc;
  const lj_leasedir_options_t* o = &c;
  if (o->lock_tries < -1) return fail(err, LJ_EINVAL, "lock_tries must be -1 (from the environment) or >= 0");
  if (o->lock_time_limit_s < 0) return fail(err, LJ_EINVAL, "lock_time_limit_s must be >= 0");
  if (o->lock_retry_ms < 0 || o->lock_retry_ms > 60000)
    return fail(err, LJ_EINVAL, "lock_retry_ms must be within 0..60000");
  if (o->self_pid < 0) return fail(err, LJ_EINVAL, "self_pid must be 0 (this process) or a pid");
  out.lock_tries = o->lock_tries;
  out.lock_time_limit_s = o->lock_time_limit_s;
  out.lock_retry_ms = o->lock_retry_ms;
  if (o->shared_harness != nullptr) out.shared_harness = o->shared_harness;
  out.self = o->self_pid;
  out.environment = o->environment;
  if (o->interrupted != nullptr) {
    auto fn = o->interrupted;
    void* payload = o->interrupted_payload;
    out.interrupted = [fn, payload] { return fn(payload) != 0; };
  }
  return LJ_OK;
}

LeaseLineSink sink_of(lj_leasedir_line_fn line, void* payload) {
  if (line == nullptr) return {};
  return [line, payload](LeaseStream stream, std::string_view text) {
    std::string copy(text);  // NUL-terminated for C callers
    return line(static_cast<int>(stream), copy.c_str(), copy.size(), payload) == 0;
  };
}

// (ptr, len) as text that can name a file: no NUL inside.
bool name_of(const char* ptr, size_t len, std::string_view& out) {
  if (!view_of(ptr, len, out)) return false;
  return out.find('\0') == std::string_view::npos;
}

int result_code(const Result<int>& r, int* exit_code, lj_error_t** err) {
  if (!r) return fail(err, r.error());
  *exit_code = *r;
  return LJ_OK;
}

}  // namespace

extern "C" {

LJ_API int lj_leasedir_options_init(lj_leasedir_options_t* opts, uint32_t version) {
  return init_options(opts, version, leasedir_options_versions);
}

LJ_API int lj_leasedir_run(int* exit_code, const char* const* args, size_t nargs, const char* default_root,
                           const char* default_pid, lj_leasedir_line_fn line, void* payload,
                           const lj_leasedir_options_t* opts, lj_error_t** err) {
  reset(err);
  return guard(err, [&]() -> int {
    if (exit_code == nullptr) return fail(err, LJ_EINVAL, "exit_code is NULL");
    if (args == nullptr && nargs > 0) return fail(err, LJ_EINVAL, "args is NULL");
    std::vector<std::string_view> argv;
    argv.reserve(nargs);
    for (size_t i = 0; i < nargs; ++i) {
      if (args[i] == nullptr) return fail(err, LJ_EINVAL, "an argument is NULL");
      argv.emplace_back(args[i]);
    }
    LeaseDirOptions o;
    if (int rc = options_of(opts, o, err); rc != LJ_OK) return rc;
    LeaseCommandDefaults defaults;
    if (default_root != nullptr) defaults.root = default_root;
    if (default_pid != nullptr) defaults.pid = default_pid;
    return result_code(run_lease_command(argv, defaults, o, sink_of(line, payload)), exit_code, err);
  });
}

LJ_API int lj_leasedir_path(char** out, size_t* out_len, const char* root, size_t root_len,
                            const lj_leasedir_options_t* opts, lj_error_t** err) {
  reset(err);
  return guard(err, [&]() -> int {
    if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
    *out = nullptr;
    if (out_len != nullptr) *out_len = 0;
    std::string_view r;
    if (!name_of(root, root_len, r) || r.empty()) return fail(err, LJ_EINVAL, "root is NULL, empty or holds a NUL");
    LeaseDirOptions o;
    if (int rc = options_of(opts, o, err); rc != LJ_OK) return rc;
    auto dir = lease_dir_of(r, o);
    if (!dir) return fail(err, dir.error());
    return give(out, out_len, *dir, err);
  });
}

LJ_API int lj_leasedir_touch(int* exit_code, const char* dir, size_t dir_len, const char* pid, size_t pid_len,
                             lj_leasedir_line_fn line, void* payload, const lj_leasedir_options_t* opts,
                             lj_error_t** err) {
  reset(err);
  return guard(err, [&]() -> int {
    if (exit_code == nullptr) return fail(err, LJ_EINVAL, "exit_code is NULL");
    std::string_view d, p;
    if (!name_of(dir, dir_len, d) || d.empty()) return fail(err, LJ_EINVAL, "dir is NULL, empty or holds a NUL");
    if (!name_of(pid, pid_len, p) || p.empty()) return fail(err, LJ_EINVAL, "pid is NULL, empty or holds a NUL");
    LeaseDirOptions o;
    if (int rc = options_of(opts, o, err); rc != LJ_OK) return rc;
    LeaseDir leases{std::string(d), o};
    return result_code(leases.touch(p, sink_of(line, payload)), exit_code, err);
  });
}

LJ_API int lj_leasedir_live(int* exit_code, const char* dir, size_t dir_len, const char* exclude,
                            size_t exclude_len, int count_shared_harness, lj_leasedir_line_fn line, void* payload,
                            const lj_leasedir_options_t* opts, lj_error_t** err) {
  reset(err);
  return guard(err, [&]() -> int {
    if (exit_code == nullptr) return fail(err, LJ_EINVAL, "exit_code is NULL");
    std::string_view d, x;
    if (!name_of(dir, dir_len, d) || d.empty()) return fail(err, LJ_EINVAL, "dir is NULL, empty or holds a NUL");
    if (!view_of(exclude, exclude_len, x)) return fail(err, LJ_EINVAL, "exclude is NULL with a length");
    LeaseDirOptions o;
    if (int rc = options_of(opts, o, err); rc != LJ_OK) return rc;
    LeaseDir leases{std::string(d), o};
    return result_code(leases.live(x, count_shared_harness != 0, sink_of(line, payload)), exit_code, err);
  });
}

LJ_API int lj_leasedir_list(int* exit_code, const char* dir, size_t dir_len, lj_leasedir_line_fn line,
                            void* payload, const lj_leasedir_options_t* opts, lj_error_t** err) {
  reset(err);
  return guard(err, [&]() -> int {
    if (exit_code == nullptr) return fail(err, LJ_EINVAL, "exit_code is NULL");
    std::string_view d;
    if (!name_of(dir, dir_len, d) || d.empty()) return fail(err, LJ_EINVAL, "dir is NULL, empty or holds a NUL");
    LeaseDirOptions o;
    if (int rc = options_of(opts, o, err); rc != LJ_OK) return rc;
    LeaseDir leases{std::string(d), o};
    return result_code(leases.list(sink_of(line, payload)), exit_code, err);
  });
}

LJ_API int lj_leasedir_state(lj_lease_state_t* out, const char* pid, size_t pid_len, const char* record,
                             size_t record_len, int64_t age_min, const lj_leasedir_options_t* opts,
                             lj_error_t** err) {
  reset(err);
  return guard(err, [&]() -> int {
    if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
    std::string_view p, r;
    if (!name_of(pid, pid_len, p) || p.empty()) return fail(err, LJ_EINVAL, "pid is NULL, empty or holds a NUL");
    if (!view_of(record, record_len, r)) return fail(err, LJ_EINVAL, "record is NULL with a length");
    LeaseDirOptions o;
    if (int rc = options_of(opts, o, err); rc != LJ_OK) return rc;
    LeaseDir leases{std::string(), o};
    switch (leases.state_of(p, r, age_min)) {
      case LeaseState::alive: *out = LJ_LEASE_ALIVE; break;
      case LeaseState::dead: *out = LJ_LEASE_DEAD; break;
      case LeaseState::stale: *out = LJ_LEASE_STALE; break;
    }
    return LJ_OK;
  });
}

}  // extern "C"
