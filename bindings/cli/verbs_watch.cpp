// The step watch verb: a node's steps kept clean as a service, with its metrics, and
// what it tells a service manager (service.hpp) when systemd runs it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "command.hpp"
#include "metrics.hpp"
#include "service.hpp"
#include "step_rules.hpp"

namespace leasejudge::cli {

namespace {

struct WatchHandle {
  lj_step_watch_t* p = nullptr;
  ~WatchHandle() { lj_step_watch_destroy(p); }
};

// What the callbacks of a run share: how to speak, and why the run stopped.
struct WatchRun {
  Context* cx = nullptr;
  const lj_step_watch_t* watch = nullptr;
  Progress* progress = nullptr;  // the first sweep's, on a terminal
  ServiceNotice* service = nullptr;
  std::string serving;  // the status once ready
  std::uint64_t first_keys = 0;
  bool first_done = false;
  bool interrupted = false;  // SIGINT, SIGTERM: the watch ends
  bool hangup = false;       // SIGHUP: the store is opened again
};

// Asked between store calls and every tick while the watch waits: a stop, a hangup,
// and the service's state (ready once a whole sweep read the store; the watchdog fed
// while the loop turns).
int stop_run(void* payload) {
  auto* run = static_cast<WatchRun*>(payload);
  if (run->cx->interrupted() && !run->interrupted) {
    run->interrupted = true;
    run->service->stopping();
  }
  if (!run->interrupted && run->cx->host().hangup(run->cx->host().payload) != 0) run->hangup = true;
  if (!run->service->is_ready() && lj_step_watch_figure(run->watch, LJ_WATCH_LAST_CLEAN_SWEEP_UNIX_NS) != 0)
    run->service->ready(run->serving);
  run->service->alive();
  return run->interrupted || run->hangup ? 1 : 0;
}

// The journal's rank of a line of the watch's log: the watch's own news of service (the
// start's count, a watch back after a gap) is a note; every other line tells of a
// store that failed, a write with no answer or a key passed over, which the watch
// handles but an operator should see: a warning.
Priority priority_of(std::string_view line) {
  auto has = [&](std::string_view part) { return line.find(part) != std::string_view::npos; };
  bool news = has(" left running by a previous process ended") ||
              (line.rfind("watching the keys of ", 0) == 0 && has(" again; a sweep reads what changed meanwhile"));
  return news ? Priority::info : Priority::warning;
}

// The sweep's log lines: the actions on stdout in text, every other line a note (and
// the service's status).
int on_log(const char* line, size_t len, void* payload) {
  auto* run = static_cast<WatchRun*>(payload);
  std::string_view l(line, len);
  if (l.rfind("the step ", 0) == 0 && !run->cx->json) {
    run->cx->out(terminal_text(l, l.size()));
    std::fflush(run->cx->host().out);  // a service's lines are read as they come
  } else if (l.rfind("the step ", 0) != 0) {
    run->cx->note(terminal_text(l, l.size()), priority_of(l));
    run->service->status(l);
  }
  run->service->alive();
  return 0;
}

std::string key_text(const lj_sweep_key_t* k, int field) {
  size_t n = 0;
  const char* p = lj_sweep_key_text(k, field, &n);
  return p == nullptr ? std::string() : std::string(p, n);
}

// --json: one line per end or delete with its outcome (the keys left are counted only).
int on_key(const lj_sweep_key_t* k, void* payload) {
  auto* run = static_cast<WatchRun*>(payload);
  run->service->alive();   // a sweep of many keys turns the loop too
  if (!run->first_done) {  // the first sweep's progress, until a sweep has ended
    if (lj_step_watch_figure(run->watch, LJ_WATCH_SWEEPS) == 0) {
      run->progress->tick(++run->first_keys);
    } else {
      run->first_done = true;
      run->cx->progress_done();
    }
  }
  lj_step_action_t a{};
  uint64_t revision = 0;
  int outcome = 0;
  lj_sweep_key_verdict(&a, &revision, &outcome, k);
  if (!run->cx->json || a.action == LJ_STEP_LEAVE) return 0;
  std::string line = fmt::format(
      R"({{"key":{},"revision":{},"action":"{}","reason":"{}","why":{},"owner":{},"outcome":"{}")",
      quote(key_text(k, LJ_SWEEP_KEY_KEY)), revision, lj_step_action_name(a.action), lj_step_reason_name(a.reason),
      quote(key_text(k, LJ_SWEEP_KEY_WHY)), quote(key_text(k, LJ_SWEEP_KEY_OWNER)), lj_sweep_outcome_name(outcome));
  std::string error = key_text(k, LJ_SWEEP_KEY_ERROR);
  if (!error.empty()) line += fmt::format(R"(,"error":{})", quote(error));
  run->cx->out(line + "}");
  std::fflush(run->cx->host().out);
  return 0;
}

// The last line: what the watch did.
void say_done(Context& cx, const lj_step_watch_t* w, std::string_view node) {
  auto f = [w](int figure) { return lj_step_watch_figure(w, figure); };
  uint64_t judged = 0;
  for (int r = LJ_STEP_OTHER_NODE; r <= LJ_STEP_STARTED_SINCE; ++r) judged += lj_step_watch_judged(w, r);
  if (cx.json)
    cx.out(fmt::format(
        R"({{"node":{},"outcome":"stopped","sweeps":{},"rounds":{},"changes":{},"judged":{},"ends":{},"deletes":{},"changed":{},"unknown":{},"store_errors":{},"reconnects":{}}})",
        quote(node), f(LJ_WATCH_SWEEPS), f(LJ_WATCH_ROUNDS), f(LJ_WATCH_CHANGES), judged, f(LJ_WATCH_ENDS),
        f(LJ_WATCH_DELETES), f(LJ_WATCH_CHANGED), f(LJ_WATCH_UNKNOWN), f(LJ_WATCH_STORE_ERRORS),
        f(LJ_WATCH_RECONNECTS)));
  cx.note(fmt::format(
      "stopped: {} sweeps ({} rounds), {} changes seen, {} keys judged, {} ended, {} deleted, {} changed, {} "
      "unknown, {} store errors, {} reconnects",
      f(LJ_WATCH_SWEEPS), f(LJ_WATCH_ROUNDS), f(LJ_WATCH_CHANGES), judged, f(LJ_WATCH_ENDS), f(LJ_WATCH_DELETES),
      f(LJ_WATCH_CHANGED), f(LJ_WATCH_UNKNOWN), f(LJ_WATCH_STORE_ERRORS), f(LJ_WATCH_RECONNECTS)));
}

// A duration option in ms: its value, the default when absent, nullopt after a usage error.
std::optional<int64_t> ms_option(const Context& cx, const Args& args, const char* name, int64_t fallback, int64_t least,
                                 int& exit) {
  auto v = args.value(name);
  if (!v) return fallback;
  auto ms = duration_ms_arg(*v);
  if (!ms || *ms < least || *ms > 86'400'000LL * 366) {
    exit = cx.usage(fmt::format("{} {} is no duration from {} ms to a year (90, 90s, 500ms, 5m, 2h)", name, *v, least));
    return std::nullopt;
  }
  return *ms;
}

// The store the options name; with --wait-for-store, one that cannot be opened is
// tried again (a backoff doubling from 0.5 s up to 30 s, each failure said and made
// the service's status) until it opens or the watch is stopped (nullptr, exit_ok).
std::unique_ptr<StoreHandle> open_watched(Context& cx, const Args& args, ServiceNotice& service, int& exit) {
  auto store = std::make_unique<StoreHandle>();
  const bool wait = args.has("--wait-for-store");
  std::string why;
  for (std::int64_t backoff_ms = 500;; backoff_ms = std::min<std::int64_t>(backoff_ms * 2, 30000)) {
    if ((store->p = open_store(cx, args, &exit, wait ? &why : nullptr)) != nullptr) return store;
    if (!wait || exit != exit_store) return nullptr;
    std::string line = fmt::format("{}; trying again in {}", terminal_text(why), duration_text(backoff_ms));
    cx.warn(line);
    service.status(line);
    for (std::int64_t slept = 0; slept < backoff_ms; slept += 100) {
      if (cx.interrupted()) {
        service.stopping();
        cx.note("stopped before the store could be opened");
        exit = exit_ok;
        return nullptr;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

int run_watch(Context& cx, const Args& args) {
  if (cx.host().hangup == nullptr)
    return cx.usage("step watch runs as a service, from the leasejudge command; the builtin cannot host it");
  if (!args.operands.empty()) return cx.usage(fmt::format("no operand is taken, not {}", args.operands[0]));
  std::string node;
  if (int rc = node_of(cx, args, node); rc != exit_ok) return rc;
  Rules r;
  if (int rc = rules_of(cx, args, node, r); rc != exit_ok) return rc;
  int exit = exit_ok;
  auto interval = ms_option(cx, args, "--interval", 60000, 1, exit);
  if (!interval) return exit;
  auto poll = ms_option(cx, args, "--poll", 1000, 1, exit);
  if (!poll) return exit;
  if (auto addr = args.value("--metrics"); addr && !metrics_address_valid(*addr))
    return cx.usage(fmt::format("--metrics {} is no HOST:PORT (an IPv4 address or localhost, a port from 0 to 65535)", *addr));
  uint32_t window = 0;  // the store's own
  if (auto w = args.value("--window")) {
    auto n = count_arg(*w, 65536);
    if (!n) return cx.usage(fmt::format("--window {} is no count from 1 to 65536", *w));
    window = static_cast<uint32_t>(*n);
  }
  ServiceNotice service(cx.host());
  auto store = open_watched(cx, args, service, exit);
  if (store == nullptr) return exit;
  WatchHandle watch;
  lj_error_t* err = nullptr;
  if (int rc = lj_step_watch_create(&watch.p, node.data(), node.size(), LJ_TIME_DEFAULT, &err); rc != LJ_OK)
    return cx.failed("starting the watch", rc, err);
  std::unique_ptr<MetricsServer> metrics;
  if (auto addr = args.value("--metrics")) {
    std::string why;
    if ((metrics = MetricsServer::start(*addr, watch.p, node, why)) == nullptr) {
      cx.note(why, Priority::error);
      return exit_failed;
    }
    cx.note(fmt::format("metrics on port {} (/metrics)", metrics->port()));
  }
  WatchRun run;
  run.cx = &cx;
  run.watch = watch.p;
  Progress progress(cx, "keys");
  run.progress = &progress;
  run.service = &service;
  run.serving = fmt::format("watching the steps of {}, a round every {}", node, duration_text(*interval));
  cx.host().hangup(cx.host().payload);  // armed: a hangup from now on opens the store again
  lj_sweep_options_t so = sweep_options(r);
  so.log = on_log;
  so.on_key = on_key;
  so.payload = &run;
  so.write_window = window;
  lj_step_watch_options_t wo = LJ_STEP_WATCH_OPTIONS_INIT;
  wo.sweep = &so;
  wo.interval_ms = *interval;
  wo.poll_ms = *poll;
  wo.stop = stop_run;
  wo.payload = &run;
  cx.note(r.note);
  cx.note(run.serving);
  service.status(fmt::format("the start's sweep of the steps of {}", node));
  for (;;) {
    run.hangup = false;
    int rc = lj_step_watch_run(watch.p, store->p, &wo, &err);
    if (rc != LJ_OK) return cx.store_failed("watching", rc, err);
    if (run.interrupted) break;
    // A hangup: the store opened again; the old one is kept when the new one fails.
    cx.note("hangup: opening the store again");
    int reopen = exit_ok;
    auto fresh = std::make_unique<StoreHandle>();
    if ((fresh->p = open_store(cx, args, &reopen)) == nullptr)
      cx.note("the store could not be opened again; the one open goes on");
    else
      store = std::move(fresh);
  }
  say_done(cx, watch.p, node);
  return exit_ok;
}

}  // namespace

std::vector<Verb> watch_verbs() {
  std::vector<Option> options = {
      {"--node", "N", "the node whose steps are watched (keys <node>.<id>)"},
      {"--interval", "D", "a whole sweep every D: 90, 90s, 500ms, 5m, 2h (default 60s)"},
      {"--metrics", "ADDR", "serve Prometheus metrics on http://ADDR/metrics (HOST:PORT; PORT 0: any)"},
      {"--poll", "D", "file and memory stores: a scan per D to see what changed (default 1s)"},
      {"--window", "N", "ends and deletes in flight at once (default: the store's, 1024 on etcd, else 256)"},
      {"--wait-for-store", nullptr,
       "a store that cannot be opened at the start is tried again (0.5 s, doubling up to 30 s) rather than exit 4"},
  };
  options.insert(options.end(), rule_options.begin(), rule_options.end());
  options.insert(options.end(), store_options.begin(), store_options.end());
  return {
      {"step watch", "", "keep the node's steps clean as a service: a sweep at start, each change, every interval",
       std::move(options), run_watch,
       "A sweep at start (with the seed's retries), then each key of the node judged as it\n"
       "changes (NATS: a KV watch; file and memory stores: polling), and a whole sweep every\n"
       "interval. Every write lands at the revision read: a key moved since is skipped and\n"
       "counted. A lost store is logged and retried with backoff. SIGTERM and SIGINT stop it\n"
       "between writes (exit 0) with a last line of what it did; SIGHUP opens the store again.\n"
       "Without --owner the rule is provably-dead (see step plan). Not in the bash builtin.\n"
       "Run by systemd (leasejudge-step-watch@NODE.service, Type=notify), it says READY=1 once\n"
       "a whole sweep read the store, WATCHDOG=1 while its loop turns (WatchdogSec), STOPPING=1\n"
       "on SIGTERM and its last line as STATUS=; on the journal each line carries its priority."},
  };
}

}  // namespace leasejudge::cli
