// The C ABI's step watch part: leasejudge::StepWatch over an lj_store_t.
#include "leasejudge/watch.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "internal.hpp"
#include "options.hpp"
#include "rule_options.hpp"
#include "step_handle.hpp"
#include "store_handle.hpp"
#include "sweep_call.hpp"

using namespace leasejudge;
using namespace leasejudge::capi;

struct lj_step_watch_t {
  StepWatch watch;
};

namespace {

const OptionsVersions<lj_step_watch_options_t, 1> watch_options_versions{
    "lj_step_watch_options_t", LJ_STEP_WATCH_OPTIONS_INIT, {sizeof(lj_step_watch_options_t)}};

constexpr std::int64_t max_ms = 86'400'000LL * 366;  // a year: no watch waits longer

int watch_options_of(StepWatchOptions& o, const lj_step_watch_options_t& c, lj_error_t** err) {
  if (c.interval_ms <= 0 || c.interval_ms > max_ms)
    return fail(err, LJ_EINVAL, fmt::format("an interval of {} ms is out of range", c.interval_ms));
  if (c.poll_ms <= 0 || c.poll_ms > max_ms)
    return fail(err, LJ_EINVAL, fmt::format("a poll of {} ms is out of range", c.poll_ms));
  if (c.backoff_max_ms < 500 || c.backoff_max_ms > max_ms)
    return fail(err, LJ_EINVAL,
                fmt::format("a longest backoff of {} ms is out of range (500 ms at least)", c.backoff_max_ms));
  o.interval_ns = c.interval_ms * 1'000'000;
  o.poll_ns = c.poll_ms * 1'000'000;
  o.backoff_max_ns = c.backoff_max_ms * 1'000'000;
  return LJ_OK;
}

}  // namespace

extern "C" {

LJ_API int lj_step_watch_options_init(lj_step_watch_options_t* opts, uint32_t version) {
  return init_options(opts, version, watch_options_versions);
}

LJ_API int lj_step_watch_create(lj_step_watch_t** out, const char* node, size_t node_len, int64_t before_ns,
                                lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  return guard(err, [&] {
    std::string_view n;
    if (int rc = node_of(n, node, node_len, err); rc != LJ_OK) return rc;
    // The node checked as every sweep of the watch resolves it; the default before is
    // left to the rules of each sweep (resolve(): self_pid's start).
    StepRules given;
    given.node = std::string(n);
    given.before = time_of_ns(before_ns);
    auto resolved = resolve(given, true);
    if (!resolved) return fail(err, resolved.error());
    *out = new lj_step_watch_t{StepWatch(std::string(n), given.before)};
    return LJ_OK;
  });
}

LJ_API int lj_step_watch_run(lj_step_watch_t* watch, lj_store_t* store, const lj_step_watch_options_t* opts,
                             lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    if (watch == nullptr) return fail(err, LJ_EINVAL, "the watch is NULL");
    if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "the store is NULL");
    lj_step_watch_options_t c;
    if (int rc = read_options(c, opts, watch_options_versions, err); rc != LJ_OK) return rc;
    auto call = std::make_unique<SweepCall>();
    if (int rc = call_of(*call, watch->watch.node(), c.sweep, false, err); rc != LJ_OK) return rc;
    StepWatchOptions o;
    o.sweep = call->options;
    if (int rc = watch_options_of(o, c, err); rc != LJ_OK) return rc;
    auto stop_fn = c.stop;
    void* payload = c.payload;
    std::atomic<bool> asked{false};  // the stop callback said so (not a sweep callback); two threads ask
    std::mutex stop_mu;              // the callback is asked from two threads, never at once
    std::function<bool()> stop = [&] {
      if (call->stopped.load()) return true;
      std::lock_guard lock(stop_mu);
      if (!asked.load() && stop_fn != nullptr && stop_fn(payload) != 0) asked.store(true);
      return asked.load();
    };
    Status st = watch->watch.run(*store->store, o, call->log, stop);
    if (!st.ok()) return fail(err, st.error());
    if (call->stopped.load() && !asked) return fail(err, LJ_EUSER, sweep_stop_message);
    return LJ_OK;
  });
}

LJ_API uint64_t lj_step_watch_figure(const lj_step_watch_t* watch, int figure) {
  if (watch == nullptr || figure < 0 || figure >= watch_figure_count) return 0;
  return watch->watch.figure(static_cast<WatchFigure>(figure));
}

LJ_API uint64_t lj_step_watch_judged(const lj_step_watch_t* watch, int reason) {
  if (watch == nullptr || reason < 0 || reason >= step_reason_count) return 0;
  return watch->watch.judged(static_cast<StepReason>(reason));
}

LJ_API void lj_step_watch_destroy(lj_step_watch_t* watch) {
  delete watch;
}

}  // extern "C"
