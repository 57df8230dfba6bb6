// The C ABI's sweep part: the seed's EndStale, EndOne, EndStaleAtStart and
// EndStaleRound over an lj_store_t.
#include "leasejudge/sweep.hpp"

#include <fmt/format.h>

#include <atomic>
#include <limits>
#include <memory>

#include "internal.hpp"
#include "options.hpp"
#include "step_handle.hpp"
#include "store_handle.hpp"

using namespace leasejudge;
using namespace leasejudge::capi;

struct lj_sweep_report_t {
  SweepReport report;
};

struct lj_sweep_signals_t {
  SweepSignals signals;
};

namespace {

constexpr std::string_view stop_message = "a callback asked the sweep to stop";

// The store a sweep acts through: the handle's, refusing every call once a
// callback asked to stop, so that the sweep stops before its next store call.
class StoppableStore final : public Store {
 public:
  StoppableStore(Store& inner, const std::atomic<bool>& stopped) : inner_(inner), stopped_(stopped) {}
  Result<std::vector<std::string>> keys() override {
    if (stopped_) return Error{Errc::user, std::string(stop_message)};
    return inner_.keys();
  }
  Result<std::optional<StoreEntry>> get(std::string_view key) override {
    if (stopped_) return Error{Errc::user, std::string(stop_message)};
    return inner_.get(key);
  }
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
    if (stopped_) return Error{Errc::user, std::string(stop_message)};
    return inner_.update(key, value, revision);
  }
  Result<Revision> create(std::string_view key, std::string_view value) override {
    if (stopped_) return Error{Errc::user, std::string(stop_message)};
    return inner_.create(key, value);
  }
  Status remove(std::string_view key, Revision revision) override {
    if (stopped_) return Status(Errc::user, std::string(stop_message));
    return inner_.remove(key, revision);
  }

 private:
  Store& inner_;
  const std::atomic<bool>& stopped_;
};

// Everything a C sweep call resolves from its options.
struct SweepCall {
  SweepOptions options;
  SweepLog log;
  StepLive live;
  std::atomic<bool> stopped{false};
};

const OptionsVersions<lj_sweep_options_t, 1> sweep_options_versions{
    "lj_sweep_options_t", LJ_SWEEP_OPTIONS_INIT, {sizeof(lj_sweep_options_t)}};

int call_of(SweepCall& call, const lj_sweep_options_t* in, lj_error_t** err) {
  lj_sweep_options_t read;
  if (int rc = read_options(read, in, sweep_options_versions, err); rc != LJ_OK) return rc;
  const lj_sweep_options_t* c = &read;
  std::string_view owner;
  if (!view_of(c->owner, c->owner_len, owner)) return fail(err, LJ_EINVAL, "the owner is NULL with a length");
  if (c->bound_seconds <= 0 || c->bound_seconds > std::numeric_limits<std::int64_t>::max() / 1000000000)
    return fail(err, LJ_EINVAL, fmt::format("the step bound of {} seconds is out of range", c->bound_seconds));
  if (c->rule != LJ_STEP_RULE_NOT_SELF && c->rule != LJ_STEP_RULE_PROVABLY_DEAD)
    return fail(err, LJ_EINVAL, fmt::format("no rule {}", c->rule));
  // A negative tolerance would take every live owner for another process.
  if (c->start_tolerance_ms < 0) return fail(err, LJ_EINVAL, "start_tolerance_ms is negative");
  if (c->attempts <= 0) return fail(err, LJ_EINVAL, fmt::format("{} attempts is none", c->attempts));
  if (c->retry_ms < 0 || c->retry_ms > std::numeric_limits<std::int64_t>::max() / 1000000)
    return fail(err, LJ_EINVAL, fmt::format("a retry of {} ms is out of range", c->retry_ms));
  SweepOptions& o = call.options;
  o.owner = std::string(owner);
  if (c->boot_ns != LJ_STEP_DEFAULT_TIME) o.boot = instant_of_ns(c->boot_ns);
  if (c->now_ns != LJ_STEP_DEFAULT_TIME) o.clock = fixed_clock(instant_of_ns(c->now_ns));
  o.bound_ns = c->bound_seconds * 1000000000;
  o.rule = c->rule == LJ_STEP_RULE_PROVABLY_DEAD ? OwnerRule::provably_dead : OwnerRule::not_self;
  o.judge = owner_judge_of(c->owner_state, c->payload, c->start_tolerance_ms, &call.stopped);
  o.attempts = c->attempts;
  o.retry_ns = c->retry_ms * 1000000;
  if (c->log != nullptr) {
    auto fn = c->log;
    void* payload = c->payload;
    std::atomic<bool>* stopped = &call.stopped;
    call.log = [fn, payload, stopped](std::string_view line) {
      std::string text(line);  // NUL-terminated for the caller's convenience
      if (fn(text.c_str(), text.size(), payload) != 0) stopped->store(true);
    };
  }
  if (c->live != nullptr) {
    auto fn = c->live;
    void* payload = c->payload;
    std::atomic<bool>* stopped = &call.stopped;
    call.live = [fn, payload, stopped](std::string_view id) {
      std::string text(id);
      int live = 0;
      if (fn(&live, text.c_str(), text.size(), payload) != 0) {
        stopped->store(true);
        return true;  // refuse: the caller asked to stop
      }
      return live != 0;
    };
  }
  return LJ_OK;
}

int node_of(std::string_view& node, const char* p, size_t len, lj_error_t** err) {
  if (!view_of(p, len, node) || node.empty()) return fail(err, LJ_EINVAL, "no node is named");
  if (node.find('.') != std::string_view::npos)
    return fail(err, LJ_EINVAL, fmt::format("the node {} holds a '.', which ends a step key's node", node));
  return LJ_OK;
}

// Hand the report out (when wanted) and return its code.
int finish(lj_sweep_report_t** out, SweepReport report, bool stopped, lj_error_t** err) {
  if (stopped && report.status.ok()) report.status = Status(Errc::user, std::string(stop_message));
  int code = report.status.ok() ? LJ_OK : static_cast<int>(report.status.code());
  std::string message = report.status.ok() ? std::string() : report.status.error().message;
  if (out != nullptr) *out = new lj_sweep_report_t{std::move(report)};
  if (code != LJ_OK) return fail(err, code, message);
  return LJ_OK;
}

}  // namespace

extern "C" {

LJ_API int lj_sweep_options_init(lj_sweep_options_t* opts, uint32_t version) {
  return init_options(opts, version, sweep_options_versions);
}

LJ_API size_t lj_sweep_report_ended_count(const lj_sweep_report_t* report) {
  return report == nullptr ? 0 : report->report.ended.size();
}

LJ_API const char* lj_sweep_report_ended(const lj_sweep_report_t* report, size_t i, size_t* out_len) {
  if (out_len != nullptr) *out_len = 0;
  if (report == nullptr || i >= report->report.ended.size()) return nullptr;
  const std::string& id = report->report.ended[i];
  if (out_len != nullptr) *out_len = id.size();
  return id.c_str();
}

LJ_API int lj_sweep_report_counts(lj_sweep_counts_t* out, const lj_sweep_report_t* report) {
  if (out == nullptr || report == nullptr) return LJ_EINVAL;
  const SweepCounts& c = report->report.counts;
  *out = lj_sweep_counts_t{c.ends, c.deletes, c.changed, c.left, c.no_step, c.other_node};
  return LJ_OK;
}

LJ_API int lj_sweep_report_code(const lj_sweep_report_t* report) {
  if (report == nullptr) return LJ_EINVAL;
  return report->report.status.ok() ? LJ_OK : static_cast<int>(report->report.status.code());
}

LJ_API const char* lj_sweep_report_message(const lj_sweep_report_t* report) {
  if (report == nullptr || report->report.status.ok()) return "";
  return report->report.status.error().message.c_str();
}

LJ_API void lj_sweep_report_destroy(lj_sweep_report_t* report) {
  delete report;
}

LJ_API int lj_sweep_end_stale(lj_sweep_report_t** out, lj_store_t* store, const char* node, size_t node_len,
                              int64_t before_ns, const lj_sweep_options_t* opts, lj_error_t** err) {
  reset(err);
  if (out != nullptr) *out = nullptr;
  return guard(err, [&] {
    if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "the store is NULL");
    std::string_view n;
    if (int rc = node_of(n, node, node_len, err); rc != LJ_OK) return rc;
    SweepCall call;
    if (int rc = call_of(call, opts, err); rc != LJ_OK) return rc;
    StoppableStore s(*store->store, call.stopped);
    Instant before = before_ns == LJ_STEP_DEFAULT_TIME ? sweep_boot(call.options) : instant_of_ns(before_ns);
    SweepReport report = end_stale(s, n, before, call.log, call.options);
    return finish(out, std::move(report), call.stopped, err);
  });
}

LJ_API int lj_sweep_end_one(lj_step_t** out_step, char** out_value, size_t* out_value_len, lj_store_t* store,
                            const char* node, size_t node_len, const char* id, size_t id_len, const char* why,
                            size_t why_len, const lj_sweep_options_t* opts, lj_error_t** err) {
  reset(err);
  if (out_step != nullptr) *out_step = nullptr;
  if (out_value != nullptr) *out_value = nullptr;
  return guard(err, [&] {
    if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "the store is NULL");
    std::string_view n, i, w;
    if (int rc = node_of(n, node, node_len, err); rc != LJ_OK) return rc;
    if (!view_of(id, id_len, i) || !view_of(why, why_len, w))
      return fail(err, LJ_EINVAL, "a NULL id or why with a length");
    SweepCall call;
    if (int rc = call_of(call, opts, err); rc != LJ_OK) return rc;
    StoppableStore s(*store->store, call.stopped);
    std::string written;
    auto step = end_one(s, n, i, w, call.live, call.options, &written);
    if (call.stopped) return fail(err, LJ_EUSER, stop_message);
    if (!step) return fail(err, step.error());
    std::unique_ptr<lj_step_t> handle(out_step != nullptr ? new_step_handle(std::move(*step)) : nullptr);
    if (out_value != nullptr) {
      if (int rc = give(out_value, out_value_len, written, err); rc != LJ_OK) return rc;
    }
    if (out_step != nullptr) *out_step = handle.release();
    return LJ_OK;
  });
}

LJ_API int lj_sweep_signals_create(lj_sweep_signals_t** out, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    *out = new lj_sweep_signals_t;
    return LJ_OK;
  });
}

LJ_API int lj_sweep_signals_serve(lj_sweep_signals_t* signals) {
  if (signals == nullptr) return LJ_EINVAL;
  return guard(nullptr, [&] {
    signals->signals.serve();
    return LJ_OK;
  });
}

LJ_API int lj_sweep_signals_cancel(lj_sweep_signals_t* signals) {
  if (signals == nullptr) return LJ_EINVAL;
  return guard(nullptr, [&] {
    signals->signals.cancel();
    return LJ_OK;
  });
}

LJ_API void lj_sweep_signals_destroy(lj_sweep_signals_t* signals) {
  delete signals;
}

LJ_API int lj_sweep_end_stale_at_start(lj_sweep_report_t** out, lj_store_t* store, const char* node, size_t node_len,
                                       int64_t before_ns, lj_sweep_signals_t* signals, const lj_sweep_options_t* opts,
                                       lj_error_t** err) {
  reset(err);
  if (out != nullptr) *out = nullptr;
  return guard(err, [&] {
    if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "the store is NULL");
    if (signals == nullptr) return fail(err, LJ_EINVAL, "the signals are NULL");
    std::string_view n;
    if (int rc = node_of(n, node, node_len, err); rc != LJ_OK) return rc;
    SweepCall call;
    if (int rc = call_of(call, opts, err); rc != LJ_OK) return rc;
    StoppableStore s(*store->store, call.stopped);
    Instant before = before_ns == LJ_STEP_DEFAULT_TIME ? sweep_boot(call.options) : instant_of_ns(before_ns);
    auto report = end_stale_at_start(s, n, before, call.log, signals->signals, call.options);
    if (report && out != nullptr) *out = new lj_sweep_report_t{std::move(*report)};
    return LJ_OK;
  });
}

LJ_API int lj_sweep_end_stale_round(lj_sweep_report_t** out, lj_store_t* store, const char* node, size_t node_len,
                                    lj_sweep_signals_t* signals, const lj_sweep_options_t* opts, lj_error_t** err) {
  reset(err);
  if (out != nullptr) *out = nullptr;
  return guard(err, [&] {
    if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "the store is NULL");
    if (signals == nullptr) return fail(err, LJ_EINVAL, "the signals are NULL");
    std::string_view n;
    if (int rc = node_of(n, node, node_len, err); rc != LJ_OK) return rc;
    SweepCall call;
    if (int rc = call_of(call, opts, err); rc != LJ_OK) return rc;
    StoppableStore s(*store->store, call.stopped);
    auto report = end_stale_round(s, n, call.log, signals->signals, call.options);
    if (report && out != nullptr) *out = new lj_sweep_report_t{std::move(*report)};
    return LJ_OK;
  });
}

}  // extern "C"
