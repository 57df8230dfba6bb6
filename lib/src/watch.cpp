// The step watch: the start's sweep, each change judged, a round every interval.
#include "leasejudge/watch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "leasejudge/stoppable_store.hpp"

namespace leasejudge {

namespace {

constexpr std::string_view stop_message = "the watch was asked to stop";

std::string seconds_text(std::int64_t ns) {
  return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
}

Status check(const StepWatchOptions& o) {
  if (o.interval_ns <= 0 || o.poll_ns <= 0 || o.tick_ns <= 0)
    return Status(Errc::invalid_argument, "a watch's interval, poll and tick are longer than nothing");
  if (o.backoff_min_ns <= 0 || o.backoff_max_ns < o.backoff_min_ns)
    return Status(Errc::invalid_argument, "a watch's backoff runs from a positive least wait up to a longest");
  return Status::success();
}

}  // namespace

const char* watch_figure_name(WatchFigure f) noexcept {
  static constexpr const char* names[watch_figure_count] = {
      "sweeps",  "rounds",       "changes",        "ends",       "deletes",       "changed",
      "unknown", "store-errors", "store-timeouts", "reconnects", "last-sweep-ns", "last-sweep-unix-ns",
      "lag-ns",  "last-clean-sweep-unix-ns"};
  auto i = static_cast<std::size_t>(f);
  return i < watch_figure_count ? names[i] : "";
}

// One run: the store it acts through, its rules, what it saw of each key, its watch.
struct StepWatch::Run {
  StepWatch& w;
  const StepWatchOptions& opts;
  const SweepLog& log;
  const std::function<bool()>& stop;
  StoppableStore store;
  SweepOptions sweep;
  StepCodec codec;
  std::unordered_map<std::string, Revision> seen;  // the last revision judged, per key
  std::unique_ptr<KeyWatch> watch;
  std::int64_t backoff_ns = 0, retry_at = 0, next_round = 0;
  bool lost = false;  // a watch failed: the next one opened is followed by a sweep

  Run(StepWatch& watch_of, Store& inner, const StepWatchOptions& o, const SweepLog& l, const std::function<bool()>& s)
      : w(watch_of), opts(o), log(l), stop(s), store(inner, s, std::string(stop_message)), sweep(o.sweep) {
    backoff_ns = opts.backoff_min_ns;
    SweepObserver user = o.sweep.on_key;
    sweep.on_key = [this, user](const SweepKey& k) {
      w.count_key(k);
      Revision& r = seen[std::string(k.key)];
      r = std::max(r, k.revision);
      if (user) user(k);
    };
  }

  void say(std::string_view line) const {
    if (log) log(line);
  }

  // The watch of the node's keys, opened (again) when it is due; a sweep after a gap.
  void open() {
    if (steady_now_ns() < retry_at) return;
    KeyWatchOptions ko;
    ko.poll_ns = opts.poll_ns;
    ko.note = log;
    auto opened = store.watch(fmt::format("{}.", w.node_), ko);
    if (!opened) {
      if (opened.code() == Errc::user) return;  // stopping
      failed(fmt::format("watching the keys of {}: {}", w.node_, opened.error().message));
      return;
    }
    watch = std::move(opened).value();
    if (lost) {
      lost = false;
      w.add(WatchFigure::reconnects);
      say(fmt::format("watching the keys of {} again; a sweep reads what changed meanwhile", w.node_));
      round(false);
    }
  }

  // A failure of the store: said, counted, and the watch opened again after a backoff.
  void failed(std::string_view why) {
    w.add(WatchFigure::store_errors);
    say(fmt::format("{}; trying again in {}", why, seconds_text(backoff_ns)));
    watch.reset();
    lost = true;
    retry_at = steady_now_ns() + backoff_ns;
    backoff_ns = std::min(opts.backoff_max_ns, backoff_ns * 2);
  }

  // The seed's EndStaleAtStart, its retries' waits cut short by a stop.
  void start() {
    SweepSignals signals;
    signals.serve();
    std::atomic<bool> done{false};
    std::thread canceller([&] {
      while (!done.load()) {
        if (stop()) {
          signals.cancel();
          return;
        }
        std::this_thread::sleep_for(std::chrono::nanoseconds(opts.tick_ns));
      }
    });
    auto report = end_stale_at_start(store, w.node_, w.before_, log, signals, sweep);
    done.store(true);
    canceller.join();
    if (report) w.count_report(*report, report->stats.total_ns);
  }

  // A whole sweep: the seed's EndStaleRound (its failure logged by it).
  void round(bool periodic) {
    SweepSignals signals;
    signals.serve();
    auto report = end_stale_round(store, w.node_, log, signals, sweep);
    if (!report) return;
    w.count_report(*report, report->stats.total_ns);
    if (periodic) w.add(WatchFigure::rounds);
  }

  // One change of a key, judged as a sweep judges it, written at its revision.
  void judge(const KeyChange& c) {
    w.add(WatchFigure::changes);
    if (!c.value) {
      seen.erase(c.key);
      return;
    }
    auto it = seen.find(c.key);
    if (it != seen.end() && it->second >= c.revision) return;  // judged at this revision or later
    seen[c.key] = c.revision;
    if (c.written_unix_ns > 0) w.set(WatchFigure::lag_ns, std::max<std::int64_t>(0, unix_now_ns() - c.written_unix_ns));
    SweepEntry e{c.key, c.revision, *c.value};
    auto resolved = sweep_rules(w.node_, w.before_, sweep);
    if (!resolved) {
      say(resolved.error().message);
      return;
    }
    const StepRules& rules = *resolved;
    StepVerdict v = judge_step(read_step(e.key, e.value, rules.node, codec), rules);
    if (v.action == StepAction::leave) {
      w.judged_[static_cast<std::size_t>(v.reason)].fetch_add(1, std::memory_order_relaxed);
      return;
    }
    SweepPlan plan = plan_sweep(std::span<const SweepEntry>(&e, 1), rules);
    SweepReport report = apply_sweep(store, std::span<const SweepEntry>(&e, 1), plan, log, sweep);
    if (!report.status.ok() && report.status.code() != Errc::user) say(report.status.error().message);
  }

  // Each change the watch hands over, until a stop; a failed watch opened again.
  void drain() {
    std::vector<KeyChange> changes;
    Status st = watch->next(changes, opts.tick_ns);
    for (const KeyChange& c : changes) {
      if (stop()) return;
      judge(c);
    }
    if (!st.ok())
      failed(st.error().message);
    else
      backoff_ns = opts.backoff_min_ns;  // a watch that serves: the next failure waits the least again
  }

  void loop() {
    next_round = steady_now_ns() + opts.interval_ns;
    while (!stop()) {
      if (!watch) open();
      if (watch)
        drain();
      else
        std::this_thread::sleep_for(std::chrono::nanoseconds(opts.tick_ns));
      if (!stop() && steady_now_ns() >= next_round) {
        round(true);
        next_round = steady_now_ns() + opts.interval_ns;
      }
    }
  }
};

StepWatch::StepWatch(std::string node, std::optional<Instant> before) : node_(std::move(node)), before_(before) {}

Status StepWatch::run(Store& store, const StepWatchOptions& opts, const SweepLog& log,
                      const std::function<bool()>& stop) {
  if (Status st = check(opts); !st.ok()) return st;
  Run r(*this, store, opts, log, stop);
  // The watch first, so that what changes during the first sweep is seen after it.
  r.open();
  if (!stop()) {
    if (!started_)
      r.start();
    else
      r.round(false);
    started_ = true;
  }
  r.loop();
  return Status::success();
}

std::uint64_t StepWatch::figure(WatchFigure f) const noexcept {
  auto i = static_cast<std::size_t>(f);
  return i < figures_.size() ? figures_[i].load(std::memory_order_relaxed) : 0;
}

std::uint64_t StepWatch::judged(StepReason reason) const noexcept {
  auto i = static_cast<std::size_t>(reason);
  return i < judged_.size() ? judged_[i].load(std::memory_order_relaxed) : 0;
}

void StepWatch::add(WatchFigure f, std::uint64_t n) noexcept {
  figures_[static_cast<std::size_t>(f)].fetch_add(n, std::memory_order_relaxed);
}

void StepWatch::set(WatchFigure f, std::uint64_t v) noexcept {
  figures_[static_cast<std::size_t>(f)].store(v, std::memory_order_relaxed);
}

void StepWatch::count_key(const SweepKey& k) {
  judged_[static_cast<std::size_t>(k.verdict.reason)].fetch_add(1, std::memory_order_relaxed);
  switch (k.outcome) {
    case SweepOutcome::done:
      add(k.verdict.action == StepAction::remove ? WatchFigure::deletes : WatchFigure::ends);
      break;
    case SweepOutcome::changed:
      add(WatchFigure::changed);
      break;
    case SweepOutcome::unknown:
      add(WatchFigure::unknown);
      add(WatchFigure::store_timeouts);
      break;
    case SweepOutcome::failed:
      if (k.error != stop_message) add(WatchFigure::store_errors);
      break;
    default:
      break;
  }
}

void StepWatch::count_report(const SweepReport& report, std::int64_t took_ns) {
  add(WatchFigure::sweeps);
  add(WatchFigure::store_timeouts, report.stats.waits);
  // A failed write was counted with its key; a failed read is the report's own.
  if (!report.status.ok() && report.status.code() != Errc::user && report.counts.failed == 0 &&
      report.counts.unknown == 0)
    add(WatchFigure::store_errors);
  set(WatchFigure::last_sweep_ns, static_cast<std::uint64_t>(std::max<std::int64_t>(0, took_ns)));
  const auto ended = static_cast<std::uint64_t>(unix_now_ns());
  set(WatchFigure::last_sweep_unix_ns, ended);
  // Every key read and every write's outcome known: the store serves the watch (a
  // service is ready once one such sweep has ended).
  if (report.status.ok()) set(WatchFigure::last_clean_sweep_unix_ns, ended);
}

}  // namespace leasejudge
