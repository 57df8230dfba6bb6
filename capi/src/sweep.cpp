// The C ABI's sweep part: the seed's EndStale, EndOne, EndStaleAtStart and
// EndStaleRound over an lj_store_t.
#include "leasejudge/sweep.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstddef>
#include <limits>
#include <memory>

#include "internal.hpp"
#include "leasejudge/text.hpp"
#include "options.hpp"
#include "rule_options.hpp"
#include "step_handle.hpp"
#include "store_handle.hpp"
#include "sweep_call.hpp"

using namespace leasejudge;
using namespace leasejudge::capi;

struct lj_sweep_report_t {
  SweepReport report;
};

struct lj_sweep_signals_t {
  SweepSignals signals;
};

namespace {

constexpr std::string_view stop_message = sweep_stop_message;

}  // namespace

// What the on_key callback sees: the key, its texts made C strings when asked for.

struct lj_sweep_key_t {
  const SweepKey* key = nullptr;
  mutable std::string texts[LJ_SWEEP_KEY_ERROR + 1];
  mutable bool made[LJ_SWEEP_KEY_ERROR + 1] = {};
};

namespace {

const lj_sweep_options_t sweep_defaults = LJ_SWEEP_OPTIONS_INIT;

int read_sweep_options(lj_sweep_options_t& out, const lj_sweep_options_t* in, lj_error_t** err) {
  return read_rule_options(out, in, sweep_defaults, sweep_flat_versions, sweep_options_of, err);
}

}  // namespace

namespace leasejudge::capi {

int call_of(SweepCall& call, std::string_view node, const lj_sweep_options_t* in, bool in_process, lj_error_t** err) {
  lj_sweep_options_t read;
  if (int rc = read_sweep_options(read, in, err); rc != LJ_OK) return rc;
  const lj_sweep_options_t* c = &read;
  SweepOptions& o = call.options;
  if (int rc = step_rules_of(o.rules, c->rules, c->owner_state, c->payload, &call.stopped, err); rc != LJ_OK)
    return rc;
  // The sweep calls name their node; the rules may only repeat it.
  if (!o.rules.node.empty() && o.rules.node != node)
    return fail(err, LJ_EINVAL,
                fmt::format("the rules name the node {}, the sweep node {}", c_text_capped(o.rules.node, 80),
                            c_text_capped(node, 80)));
  o.in_process = in_process;
  // Refused here, before the sweep waits or reads, as the sweep would refuse them.
  if (auto resolved = sweep_rules(node, std::nullopt, o); !resolved) return fail(err, resolved.error());
  if (c->attempts <= 0) return fail(err, LJ_EINVAL, fmt::format("{} attempts is none", c->attempts));
  if (c->retry_ms < 0 || c->retry_ms > std::numeric_limits<std::int64_t>::max() / 1000000)
    return fail(err, LJ_EINVAL, fmt::format("a retry of {} ms is out of range", c->retry_ms));
  if (c->batch_keys == 0) return fail(err, LJ_EINVAL, "batch_keys is at least 1");
  o.attempts = c->attempts;
  o.retry_ns = c->retry_ms * 1000000;
  o.window = c->write_window;
  o.batch_keys = c->batch_keys;
  o.dry_run = c->dry_run != 0;
  if (c->on_key != nullptr) {
    auto fn = c->on_key;
    void* payload = c->payload;
    std::atomic<bool>* stopped = &call.stopped;
    o.on_key = [fn, payload, stopped](const SweepKey& k) {
      lj_sweep_key_t key;
      key.key = &k;
      if (fn(&key, payload) != 0) stopped->store(true);
    };
  }
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
  if (!view_of(p, len, node)) return fail(err, LJ_EINVAL, "the node is NULL with a length");
  return LJ_OK;
}

StoppableStore stoppable(Store& inner, SweepCall& call) {
  return StoppableStore(
      inner, [&call] { return call.stopped.load(); }, std::string(stop_message));
}

}  // namespace leasejudge::capi

namespace {

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
  return init_rule_options(opts, version, sweep_defaults, sweep_flat_versions);
}

LJ_API const char* lj_sweep_outcome_name(int outcome) {
  if (outcome < LJ_SWEEP_LEFT || outcome > LJ_SWEEP_NOT_SENT) return "";
  return sweep_outcome_name(static_cast<SweepOutcome>(outcome));
}

LJ_API const char* lj_sweep_key_text(const lj_sweep_key_t* key, int field, size_t* out_len) {
  if (out_len != nullptr) *out_len = 0;
  if (key == nullptr || key->key == nullptr || field < LJ_SWEEP_KEY_KEY || field > LJ_SWEEP_KEY_ERROR) return nullptr;
  if (!key->made[field]) {
    const SweepKey& k = *key->key;
    const std::string_view views[] = {k.key, k.id, k.tool, k.owner, k.why, k.said, k.error};
    if (guard(nullptr, [&] {
          key->texts[field].assign(views[field]);
          return LJ_OK;
        }) != LJ_OK)
      return nullptr;
    key->made[field] = true;
  }
  if (out_len != nullptr) *out_len = key->texts[field].size();
  return key->texts[field].c_str();
}

LJ_API int lj_sweep_key_verdict(lj_step_action_t* out, uint64_t* out_revision, int* out_outcome,
                                const lj_sweep_key_t* key) {
  if (key == nullptr || key->key == nullptr) return LJ_EINVAL;
  const SweepKey& k = *key->key;
  if (out != nullptr) {
    *out = lj_step_action_t{static_cast<uint8_t>(k.verdict.action), static_cast<uint8_t>(k.verdict.reason), 0,
                            k.verdict.bound_at.nsec, k.verdict.bound_at.sec};
  }
  if (out_revision != nullptr) *out_revision = k.revision;
  if (out_outcome != nullptr) *out_outcome = static_cast<int>(k.outcome);
  return LJ_OK;
}

LJ_API int lj_sweep_key_started(int64_t* out_sec, int32_t* out_nsec, const lj_sweep_key_t* key) {
  if (key == nullptr || key->key == nullptr || out_sec == nullptr || out_nsec == nullptr) return LJ_EINVAL;
  *out_sec = key->key->started.sec;
  *out_nsec = key->key->started.nsec;
  return LJ_OK;
}

LJ_API size_t lj_sweep_report_write_count(const lj_sweep_report_t* report) {
  return report == nullptr ? 0 : report->report.writes.size();
}

LJ_API int lj_sweep_report_write(const char** out_key, size_t* out_key_len, int* out_action, int* out_outcome,
                                 uint64_t* out_revision, const lj_sweep_report_t* report, size_t i) {
  if (report == nullptr || i >= report->report.writes.size()) return LJ_EINVAL;
  const SweepWrite w = report->report.writes[i];
  if (out_key != nullptr) *out_key = w.key.data();  // NUL-terminated: TextList's contract
  if (out_key_len != nullptr) *out_key_len = w.key.size();
  if (out_action != nullptr) *out_action = static_cast<int>(w.action);
  if (out_outcome != nullptr) *out_outcome = static_cast<int>(w.outcome);
  if (out_revision != nullptr) *out_revision = w.revision;
  return LJ_OK;
}

LJ_API uint64_t lj_sweep_report_stat(const lj_sweep_report_t* report, int stat) {
  if (report == nullptr) return 0;
  const SweepCounts& c = report->report.counts;
  const SweepStats& s = report->report.stats;
  auto ns = [](std::int64_t v) { return v < 0 ? std::uint64_t{0} : static_cast<std::uint64_t>(v); };
  switch (stat) {
    case LJ_SWEEP_STAT_FAILED:
      return c.failed;
    case LJ_SWEEP_STAT_UNKNOWN:
      return c.unknown;
    case LJ_SWEEP_STAT_NOT_SENT:
      return c.not_sent;
    case LJ_SWEEP_STAT_KEYS:
      return s.keys;
    case LJ_SWEEP_STAT_BYTES:
      return s.bytes;
    case LJ_SWEEP_STAT_BATCHES:
      return s.batches;
    case LJ_SWEEP_STAT_WRITES:
      return s.writes;
    case LJ_SWEEP_STAT_MAX_IN_FLIGHT:
      return s.max_in_flight;
    case LJ_SWEEP_STAT_WAITS:
      return s.waits;
    case LJ_SWEEP_STAT_RETRIES:
      return s.retries;
    case LJ_SWEEP_STAT_SKIPPED:
      return s.skipped;
    case LJ_SWEEP_STAT_REJECTED:
      return s.rejected;
    case LJ_SWEEP_STAT_READ_NS:
      return ns(s.read_ns);
    case LJ_SWEEP_STAT_PLAN_NS:
      return ns(s.plan_ns);
    case LJ_SWEEP_STAT_APPLY_NS:
      return ns(s.apply_ns);
    case LJ_SWEEP_STAT_TOTAL_NS:
      return ns(s.total_ns);
    default:
      return 0;
  }
}

LJ_API size_t lj_sweep_report_ended_count(const lj_sweep_report_t* report) {
  return report == nullptr ? 0 : report->report.ended.size();
}

LJ_API const char* lj_sweep_report_ended(const lj_sweep_report_t* report, size_t i, size_t* out_len) {
  if (out_len != nullptr) *out_len = 0;
  if (report == nullptr || i >= report->report.ended.size()) return nullptr;
  const std::string_view id = report->report.ended[i];
  if (out_len != nullptr) *out_len = id.size();
  return id.data();  // NUL-terminated: TextList's contract
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
  if (before_ns == LJ_TIME_DEFAULT) return lj_sweep_stale(out, store, node, node_len, opts, err);
  lj_sweep_options_t with;
  reset(err);
  if (out != nullptr) *out = nullptr;
  if (int rc = read_sweep_options(with, opts, err); rc != LJ_OK) return rc;
  with.rules.before_ns = before_ns;  // the argument stands for the rules' before, as it always did
  return lj_sweep_stale(out, store, node, node_len, &with, err);
}

LJ_API int lj_sweep_stale(lj_sweep_report_t** out, lj_store_t* store, const char* node, size_t node_len,
                          const lj_sweep_options_t* opts, lj_error_t** err) {
  reset(err);
  if (out != nullptr) *out = nullptr;
  return guard(err, [&] {
    if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "the store is NULL");
    std::string_view n;
    if (int rc = node_of(n, node, node_len, err); rc != LJ_OK) return rc;
    SweepCall call;
    if (int rc = call_of(call, n, opts, false, err); rc != LJ_OK) return rc;
    StoppableStore s = stoppable(*store->store, call);
    SweepReport report = end_stale(s, n, std::nullopt, call.log, call.options);
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
    if (int rc = call_of(call, n, opts, true, err); rc != LJ_OK) return rc;
    StoppableStore s = stoppable(*store->store, call);
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

}  // extern "C"

namespace {

// The prologue of the two calls with signals: a store, signals, a node and the options
// checked, then run (the seed's EndStaleAtStart or EndStaleRound) over the store.
template <typename Run>
int signals_call(lj_sweep_report_t** out, lj_store_t* store, const char* node, size_t node_len,
                 lj_sweep_signals_t* signals, const lj_sweep_options_t* opts, lj_error_t** err, Run run) {
  reset(err);
  if (out != nullptr) *out = nullptr;
  return guard(err, [&] {
    if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "the store is NULL");
    if (signals == nullptr) return fail(err, LJ_EINVAL, "the signals are NULL");
    std::string_view n;
    if (int rc = node_of(n, node, node_len, err); rc != LJ_OK) return rc;
    SweepCall call;
    if (int rc = call_of(call, n, opts, true, err); rc != LJ_OK) return rc;
    StoppableStore s = stoppable(*store->store, call);
    auto report = run(s, n, call, signals->signals);
    if (report && out != nullptr) *out = new lj_sweep_report_t{std::move(*report)};
    return LJ_OK;
  });
}

}  // namespace

extern "C" {

LJ_API int lj_sweep_end_stale_at_start(lj_sweep_report_t** out, lj_store_t* store, const char* node, size_t node_len,
                                       int64_t before_ns, lj_sweep_signals_t* signals, const lj_sweep_options_t* opts,
                                       lj_error_t** err) {
  return signals_call(out, store, node, node_len, signals, opts, err,
                      [&](Store& s, std::string_view n, SweepCall& call, SweepSignals& sig) {
                        return end_stale_at_start(s, n, time_of_ns(before_ns), call.log, sig, call.options);
                      });
}

LJ_API int lj_sweep_end_stale_round(lj_sweep_report_t** out, lj_store_t* store, const char* node, size_t node_len,
                                    lj_sweep_signals_t* signals, const lj_sweep_options_t* opts, lj_error_t** err) {
  return signals_call(out, store, node, node_len, signals, opts, err,
                      [&](Store& s, std::string_view n, SweepCall& call, SweepSignals& sig) {
                        return end_stale_round(s, n, call.log, sig, call.options);
                      });
}

}  // extern "C"
