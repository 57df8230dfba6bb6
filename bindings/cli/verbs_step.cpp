// The step verbs: plan, sweep, end, export, import.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>

#include "command.hpp"
#include "read_ahead.hpp"
#include "step_rules.hpp"

namespace leasejudge::cli {

int rules_of(const Context& cx, const Args& args, const std::string& node, Rules& r) {
  r.node = node;
  lj_step_rules_t& g = r.given;
  if (auto owner = args.value("--owner")) {
    if (owner->empty()) return cx.usage("--owner is empty");
    r.owner = *owner;
  } else {
    // No owner named: "self" is the shell that ran the command, whose start is the
    // default before. With --owner the default before stays this process's start.
    g.self_pid = cx.host().self_pid;
  }
  if (auto rule = args.value("--rule")) {
    if (*rule == "not-self")
      g.rule = LJ_STEP_RULE_NOT_SELF;
    else if (*rule == "provably-dead")
      g.rule = LJ_STEP_RULE_PROVABLY_DEAD;
    else if (*rule != "by-owner")  // the default, named
      return cx.usage(fmt::format("--rule is by-owner, not-self or provably-dead, not {}", *rule));
  }
  if (auto before = args.value("--before")) {
    auto ns = time_arg(*before);
    if (!ns) return cx.usage(fmt::format("--before {} is no RFC 3339 time", *before));
    g.before_ns = *ns;
  }
  if (auto now = args.value("--now")) {
    auto ns = time_arg(*now);
    if (!ns) return cx.usage(fmt::format("--now {} is no RFC 3339 time", *now));
    g.now_ns = *ns;
  }
  if (auto bound = args.value("--bound")) {
    auto s = count_arg(*bound, INT64_MAX / 1000000000);
    if (!s) return cx.usage(fmt::format("--bound {} is no positive number of seconds", *bound));
    g.bound_ms = static_cast<int64_t>(*s) * 1000;
  }
  if (auto age = args.value("--min-age")) {
    auto ms = duration_ms_arg(*age);
    if (!ms) return cx.usage(fmt::format("--min-age {} is no duration (90s, 5m)", *age));
    g.min_age_ms = *ms;
  }
  lj_step_rules_t c = r.c();
  int rule = 0;
  char* why = nullptr;
  size_t why_len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_step_rules_resolve(&rule, nullptr, nullptr, &why, &why_len, &c, &err);
  if (rc == LJ_EINVAL) {
    std::string message = lj_error_message(err);
    lj_error_destroy(err);
    return cx.usage(message);
  }
  if (rc != LJ_OK) return cx.failed(fmt::format("the owner token of pid {}", cx.host().self_pid), rc, err);
  r.note.assign(why, why_len);
  lj_free(why);
  // The library's words, with the option that names an owner.
  constexpr std::string_view unnamed = "(no owner named)";
  if (auto at = r.note.find(unnamed); at != std::string::npos) r.note.replace(at, unnamed.size(), "(no --owner)");
  // The rule chosen out of the owners' processes, for every call: the command is never
  // the owner's process, also where the library sweeps as one (end_one).
  g.rule = rule;
  return exit_ok;
}

int node_of(const Context& cx, const Args& args, std::string& node) {
  auto n = args.value("--node");
  if (!n || n->empty()) return cx.usage("--node N is required");
  node = *n;
  return exit_ok;
}

namespace {

// The plan options of r.
lj_step_plan_options_t plan_options(const Rules& r) {
  lj_step_plan_options_t o = LJ_STEP_PLAN_OPTIONS_INIT;
  o.rules = r.c();
  return o;
}

// --- a sweep's keys, as JSON lines or text ---------------------------------------------

struct SweepOut {
  Context* cx = nullptr;
  bool dry_run = false;
  std::uint64_t keys = 0;
  Progress* progress = nullptr;
};

std::string key_text(const lj_sweep_key_t* k, int field) {
  size_t n = 0;
  const char* p = lj_sweep_key_text(k, field, &n);
  return p == nullptr ? std::string() : std::string(p, n);
}

int on_key(const lj_sweep_key_t* k, void* payload) {
  auto* so = static_cast<SweepOut*>(payload);
  Context& cx = *so->cx;
  lj_step_action_t a{};
  uint64_t revision = 0;
  int outcome = 0;
  lj_sweep_key_verdict(&a, &revision, &outcome, k);
  ++so->keys;
  std::string key = key_text(k, LJ_SWEEP_KEY_KEY), why = key_text(k, LJ_SWEEP_KEY_WHY);
  if (a.action == LJ_STEP_LEAVE && why.empty()) why = lj_step_leave_why(a.reason);  // as step plan says it
  if (cx.json) {
    std::string line = fmt::format(
        R"({{"key":{},"revision":{},"action":"{}","reason":"{}","why":{},"owner":{},"said":{},"outcome":"{}")",
        quote(key), revision, lj_step_action_name(a.action), lj_step_reason_name(a.reason), quote(why),
        quote(key_text(k, LJ_SWEEP_KEY_OWNER)), quote(key_text(k, LJ_SWEEP_KEY_SAID)), lj_sweep_outcome_name(outcome));
    std::string error = key_text(k, LJ_SWEEP_KEY_ERROR);
    if (!error.empty()) line += fmt::format(R"(,"error":{})", quote(error));
    cx.out(line + "}");
  } else if (so->dry_run && a.action != LJ_STEP_LEAVE) {
    cx.out(fmt::format("{} {} ({}): {}; {}", lj_step_action_name(a.action), terminal_text(key),
                       lj_step_reason_name(a.reason), terminal_text(why), terminal_text(key_text(k, LJ_SWEEP_KEY_SAID))));
  } else if (outcome == LJ_SWEEP_CHANGED || outcome == LJ_SWEEP_FAILED || outcome == LJ_SWEEP_UNKNOWN) {
    cx.out(fmt::format("{} {}: {}{}{}", lj_sweep_outcome_name(outcome), terminal_text(key),
                       lj_step_action_name(a.action),
                       outcome == LJ_SWEEP_CHANGED ? " skipped, the key moved since it was read" : ": ",
                       outcome == LJ_SWEEP_CHANGED ? "" : terminal_text(key_text(k, LJ_SWEEP_KEY_ERROR))));
  }
  so->progress->tick(so->keys);
  return cx.interrupted() ? 1 : 0;
}

// The seed's log lines of a sweep: its own output in text, notes in JSON.
int on_log(const char* line, size_t len, void* payload) {
  auto* so = static_cast<SweepOut*>(payload);
  std::string_view l(line, len);
  bool action = l.rfind("the step ", 0) == 0;
  if (action && !so->cx->json)
    so->cx->out(l);
  else if (!action)
    so->cx->note(l);
  return so->cx->interrupted() ? 1 : 0;
}

// end_stale over the store the options name, dry or not; its summary on stderr.
int sweep(Context& cx, const Args& args, bool dry_run) {
  std::string node;
  if (int rc = node_of(cx, args, node); rc != exit_ok) return rc;
  Rules r;
  if (int rc = rules_of(cx, args, node, r); rc != exit_ok) return rc;
  uint32_t window = 0;  // the store's own
  if (auto w = args.value("--window")) {
    auto n = count_arg(*w, 65536);
    if (!n) return cx.usage(fmt::format("--window {} is no count from 1 to 65536", *w));
    window = static_cast<uint32_t>(*n);
  }
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  SweepOut so;
  so.cx = &cx;
  so.dry_run = dry_run;
  Progress progress(cx, "keys");
  so.progress = &progress;
  lj_sweep_options_t o = sweep_options(r);
  o.log = on_log;
  o.on_key = on_key;
  o.payload = &so;
  o.write_window = window;
  o.dry_run = dry_run ? 1 : 0;
  cx.note(r.note);
  lj_sweep_report_t* report = nullptr;
  lj_error_t* err = nullptr;
  int rc = lj_sweep_stale(&report, store.p, node.data(), node.size(), &o, &err);
  cx.progress_done();
  lj_sweep_counts_t c{};
  if (report != nullptr) lj_sweep_report_counts(&c, report);
  auto stat = [&](int s) { return report != nullptr ? lj_sweep_report_stat(report, s) : 0; };
  cx.note(fmt::format(
      "{} of {}: {} end, {} delete{}, {} changed, {} leave, {} no-step{}{}{}", counted(stat(LJ_SWEEP_STAT_KEYS), "key"),
      node, c.ends, c.deletes, dry_run ? " (planned, none written)" : "", c.changed, c.leaves, c.no_step,
      stat(LJ_SWEEP_STAT_UNKNOWN) > 0 ? fmt::format(", {} unknown", stat(LJ_SWEEP_STAT_UNKNOWN)) : "",
      stat(LJ_SWEEP_STAT_FAILED) > 0 ? fmt::format(", {} failed", stat(LJ_SWEEP_STAT_FAILED)) : "",
      stat(LJ_SWEEP_STAT_NOT_SENT) > 0 ? fmt::format(", {} not sent", stat(LJ_SWEEP_STAT_NOT_SENT)) : ""));
  bool uncertain = stat(LJ_SWEEP_STAT_UNKNOWN) > 0;
  lj_sweep_report_destroy(report);
  if (rc == LJ_EUSER) {
    lj_error_destroy(err);
    cx.note("stopped by an interrupt; every write sent was waited for");
    return exit_interrupted;
  }
  if (rc != LJ_OK) {
    int code = cx.failed("the sweep stopped", rc, err);
    return uncertain ? exit_uncertain : code;
  }
  return exit_ok;
}

// --- the verbs ---------------------------------------------------------------------------

struct PlanOut {
  Context* cx = nullptr;
  int failed = 0;
};
int write_answer(const char* data, size_t len, void* payload) {
  auto* p = static_cast<PlanOut*>(payload);
  if (std::fwrite(data, 1, len, p->cx->host().out) != len) return p->failed = 1;
  return p->cx->interrupted() ? 1 : 0;
}

// Feed the lines read from fd (path: its name, or stdin) to plan as they come. Read 512
// KiB at a time: a piece that stays in cache while it is planned; a file is read a
// piece ahead, as the one before is planned. exit_ok, or how the read ended; rc holds
// the last feed's code.
int feed_lines(Context& cx, lj_step_lines_plan_t* plan, int fd, const std::optional<std::string>& path, PlanOut& po,
               int& rc, lj_error_t** err) {
  struct stat st {};
  Progress progress(cx, "bytes", ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0);
  std::uint64_t fed = 0;
  ReadAhead in(fd, 512 << 10);
  for (;;) {
    const char* data = nullptr;
    ssize_t got = in.next(&data);
    if (got < 0 && errno == EINTR && !cx.interrupted()) continue;
    if (got < 0) {
      int exit = errno == EINTR ? exit_interrupted : exit_failed;
      if (errno != EINTR) cx.note(fmt::format("{}: {}", path ? *path : "stdin", std::strerror(errno)));
      return exit;
    }
    if (got == 0) return exit_ok;
    if ((rc = lj_step_lines_plan_feed(plan, data, static_cast<size_t>(got), write_answer, &po, err)) != LJ_OK)
      return exit_ok;
    progress.tick(fed += static_cast<std::uint64_t>(got));
  }
}

// --threads N into o.threads (default: the cores, at most 64); a usage error's exit.
int plan_threads(const Context& cx, const Args& args, lj_step_plan_options_t& o) {
  o.threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 64u));
  if (auto t = args.value("--threads")) {
    auto n = count_arg(*t, 64);
    if (!n) return cx.usage(fmt::format("--threads {} is no count from 1 to 64", *t));
    o.threads = static_cast<uint32_t>(*n);
  }
  return exit_ok;
}

int run_plan(Context& cx, const Args& args) {
  if (args.has("--store")) {
    if (!args.operands.empty()) return cx.usage("a plan reads FILE or --store, not both");
    if (args.has("--threads")) return cx.usage("--threads plans the lines of a FILE; a store's keys are read in turn");
    cx.json = true;  // the plan of a store is written as the plan of lines is
    return sweep(cx, args, true);
  }
  if (args.operands.size() > 1) return cx.usage(fmt::format("one FILE at most, not also {}", args.operands[1]));
  std::string node;
  if (int rc = node_of(cx, args, node); rc != exit_ok) return rc;
  Rules r;
  if (int rc = rules_of(cx, args, node, r); rc != exit_ok) return rc;
  lj_step_plan_options_t o = plan_options(r);
  if (int rc = plan_threads(cx, args, o); rc != exit_ok) return rc;
  std::optional<std::string> path;
  if (!args.operands.empty()) path = args.operands[0];
  int fd = 0;
  if (path && *path != "-") {
    fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      cx.note(fmt::format("{}: {}", *path, std::strerror(errno)));
      return exit_failed;
    }
  }
  if (fd == 0) note_terminal_stdin(cx);
  lj_step_lines_plan_t* plan = nullptr;
  lj_error_t* err = nullptr;
  int rc = lj_step_lines_plan_create(&plan, &o, &err);
  if (rc != LJ_OK) {
    if (fd != 0) ::close(fd);
    return cx.failed("planning the lines", rc, err);
  }
  cx.note(r.note);
  // The lines planned as they are read, the answers written as they come: a state of
  // any size in bounded memory.
  PlanOut po;
  po.cx = &cx;
  int exit = feed_lines(cx, plan, fd, path, po, rc, &err);
  lj_step_plan_summary_t summary{};
  if (exit == exit_ok && rc == LJ_OK) rc = lj_step_lines_plan_finish(&summary, plan, write_answer, &po, &err);
  lj_step_lines_plan_destroy(plan);
  if (fd != 0) ::close(fd);
  if (exit != exit_ok) return exit;
  if (rc != LJ_OK) {
    if (po.failed) {
      lj_error_destroy(err);
      cx.note("writing the plan failed");
      return exit_failed;
    }
    return cx.failed("planning the lines", rc, err);
  }
  char* line = nullptr;
  size_t len = 0;
  if (lj_step_plan_summary_format(&line, &len, &summary, nullptr) == LJ_OK) {
    cx.err_line(std::string_view(line, len));
    lj_free(line);
  }
  // A malformed line fails the plan as it fails an import (the summary counts them).
  return summary.malformed > 0 ? exit_failed : exit_ok;
}

int run_sweep(Context& cx, const Args& args) {
  if (!args.operands.empty()) return cx.usage(fmt::format("no operand is taken, not {}", args.operands[0]));
  return sweep(cx, args, args.has("--dry-run"));
}

int run_end(Context& cx, const Args& args) {
  if (args.operands.size() != 1) return cx.usage("one step ID (or <node>.<id>) is required");
  std::string id = args.operands[0];
  auto why = args.value("--why");
  if (!why || why->empty()) return cx.usage("--why TEXT is required: say why the step is ended");
  std::string node;
  if (auto dot = id.find('.'); dot != std::string::npos && !args.has("--node")) {
    node = id.substr(0, dot);
  } else if (!args.has("--node")) {
    return cx.usage(fmt::format("the key {} has no node: give <node>.<id>, or the id with --node N", id));
  } else if (int rc = node_of(cx, args, node); rc != exit_ok) {
    return rc;
  }
  Rules r;
  if (int rc = rules_of(cx, args, node, r); rc != exit_ok) return rc;
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  lj_sweep_options_t o = sweep_options(r);
  lj_step_t* step = nullptr;
  char* value = nullptr;
  size_t value_len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_sweep_end_one(&step, &value, &value_len, store.p, node.data(), node.size(), id.data(), id.size(),
                            why->data(), why->size(), &o, &err);
  if (rc != LJ_OK) {
    // The seed's refusals are answers: no, with its sentence.
    int code = rc == LJ_EPARSE || rc == LJ_EREFUSED || rc == LJ_ENOTFOUND ? exit_no : exit_of(rc);
    cx.failed(fmt::format("ending {}", id.find('.') != std::string::npos ? id : fmt::format("{}.{}", node, id)), rc,
              err);
    return code;
  }
  size_t n = 0;
  const char* sid = lj_step_string(step, LJ_STEP_FIELD_ID, &n);
  std::string step_id = sid != nullptr ? std::string(sid, n) : std::string();
  const char* tool = lj_step_string(step, LJ_STEP_FIELD_TOOL, &n);
  std::string tool_text = tool != nullptr ? std::string(tool, n) : std::string();
  lj_step_destroy(step);
  std::string key = id.find('.') != std::string::npos ? id : fmt::format("{}.{}", node, id);
  if (cx.json)
    cx.out(fmt::format(R"({{"key":{},"id":{},"tool":{},"action":"end","state":"failed","why":{},"value":{}}})",
                       quote(key), quote(step_id), quote(tool_text), quote(*why),
                       json_value(std::string_view(value, value_len))));
  else
    cx.out(fmt::format("ended {} ({}): failed, {}", terminal_text(key), terminal_text(tool_text), terminal_text(*why)));
  lj_free(value);
  return exit_ok;
}

struct ExportOut {
  Context* cx = nullptr;
  std::uint64_t lines = 0, lossy = 0;
  Progress* progress = nullptr;
};
int export_batch(const char* buffer, size_t, size_t, const lj_step_entry_t* entries, size_t count, void* payload) {
  auto* eo = static_cast<ExportOut*>(payload);
  for (size_t i = 0; i < count; ++i) {
    const lj_step_entry_t& e = entries[i];
    char* line = nullptr;
    size_t len = 0;
    int kept = 1;
    if (lj_step_lines_entry(&line, &len, &kept, buffer + e.key_offset, e.key_len, e.revision, buffer + e.value_offset,
                            e.value_len, nullptr) != LJ_OK)
      return 1;
    std::fwrite(line, 1, len, eo->cx->host().out);
    lj_free(line);
    ++eo->lines;
    if (!kept) ++eo->lossy;
  }
  eo->progress->tick(eo->lines);
  return eo->cx->interrupted() ? 1 : 0;
}

int run_export(Context& cx, const Args& args) {
  if (!args.operands.empty()) return cx.usage(fmt::format("no operand is taken, not {}", args.operands[0]));
  std::string prefix;
  if (args.has("--node")) {
    std::string node;
    if (int rc = node_of(cx, args, node); rc != exit_ok) return rc;
    // The prefix of the node's keys, as the library makes a key of it ("<node>.id").
    char* key = nullptr;
    size_t len = 0;
    lj_error_t* err = nullptr;
    if (lj_step_key(&key, &len, node.data(), node.size(), "id", 2, &err) != LJ_OK) {
      std::string message = lj_error_message(err);
      lj_error_destroy(err);
      return cx.usage(message);
    }
    prefix.assign(key, len - 2);
    lj_free(key);
  }
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  ExportOut eo;
  eo.cx = &cx;
  Progress progress(cx, "keys");
  eo.progress = &progress;
  lj_error_t* err = nullptr;
  int rc = lj_store_scan(store.p, prefix.data(), prefix.size(), export_batch, &eo, &err);
  if (rc == LJ_EUSER && cx.interrupted()) {
    lj_error_destroy(err);
    return exit_interrupted;
  }
  if (rc != LJ_OK) return cx.store_failed("reading the store", rc, err);
  if (eo.lossy > 0)
    cx.note(fmt::format("{} {} bytes that are no UTF-8: written with U+FFFD, they do not import back the same",
                        counted(eo.lossy, "key"), eo.lossy == 1 ? "holds" : "hold"));
  cx.note(fmt::format("{} exported", counted(eo.lines, "key")));
  return exit_ok;
}

// The pipeline a run of step import sends its creates through; closed before its store.
struct PipelineHandle {
  lj_store_pipeline_t* p = nullptr;
  PipelineHandle() = default;
  PipelineHandle(const PipelineHandle&) = delete;
  PipelineHandle& operator=(const PipelineHandle&) = delete;
  ~PipelineHandle() { lj_store_pipeline_destroy(p); }
};

// Lines read, creates in flight through the store's pipeline, and what each came to.
// A failure or an unknown outcome stops the sending; what is in flight is still
// counted. Nothing is sent twice.
struct ImportIn {
  Context* cx = nullptr;
  lj_store_pipeline_t* pipe = nullptr;
  std::size_t window = 0;  // lj_store_pipeline_window
  std::uint64_t created = 0, existed = 0, malformed = 0, unknown = 0, failed_writes = 0, line = 0;
  Progress* progress = nullptr;
  int failed = LJ_OK;  // the first failure's code (LJ_EUNKNOWN: an answer lost)
  std::uint64_t failed_line = 0;
  std::string failure;
  struct Sent {
    std::uint64_t line = 0;
    std::string key;  // --json only
  };
  std::deque<Sent> sent;
};

// Take the oldest create's outcome (waiting for it) into the counts.
void import_outcome(ImportIn& in) {
  uint64_t revision = 0;
  lj_error_t* err = nullptr;
  int rc = lj_store_pipeline_next(&revision, in.pipe, &err);
  ImportIn::Sent s = std::move(in.sent.front());
  in.sent.pop_front();
  const char* outcome = rc == LJ_OK ? "created" : rc == LJ_EEXISTS ? "exists" : rc == LJ_EUNKNOWN ? "unknown" : "failed";
  if (rc == LJ_OK) ++in.created;
  if (rc == LJ_EEXISTS) ++in.existed;
  if (rc != LJ_OK && rc != LJ_EEXISTS) {
    ++(rc == LJ_EUNKNOWN ? in.unknown : in.failed_writes);
    std::string why = err != nullptr ? lj_error_message(err) : lj_strerror(rc);
    in.cx->note(fmt::format("line {}: {}", s.line, terminal_text(why)));
    if (in.failed == LJ_OK || (rc == LJ_EUNKNOWN && in.failed != LJ_EUNKNOWN)) {
      in.failed = rc;
      in.failed_line = s.line;
    }
  }
  lj_error_destroy(err);
  if (in.cx->json)
    in.cx->out(fmt::format(R"({{"line":{},"key":{},"revision":{},"outcome":"{}"}})", s.line, quote(s.key),
                           rc == LJ_OK ? std::to_string(revision) : "null", outcome));
}

int import_line(const char* key, size_t key_len, uint64_t, const char* value, size_t value_len, const char* malformed,
                void* payload) {
  auto* in = static_cast<ImportIn*>(payload);
  in->progress->tick(++in->line);
  if (malformed != nullptr || key == nullptr) {
    ++in->malformed;
    std::string why = malformed != nullptr ? malformed : "it names no key";
    in->cx->note(fmt::format("line {}: {}", in->line, terminal_text(why)));
    if (in->cx->json) {
      while (!in->sent.empty()) import_outcome(*in);  // the output keeps the lines' order
      in->cx->out(fmt::format(R"({{"line":{},"key":null,"revision":null,"outcome":"malformed","why":{}}})", in->line,
                              quote(capped(why))));
    }
    return 0;
  }
  while (lj_store_pipeline_ready(in->pipe) > 0 || lj_store_pipeline_in_flight(in->pipe) >= in->window)
    import_outcome(*in);
  if (in->failed != LJ_OK) return 1;  // a failure or a lost answer: nothing more is sent
  if (int rc = lj_store_pipeline_create(in->pipe, key, key_len, value, value_len); rc != LJ_OK) {
    in->failed = rc;
    in->failed_line = in->line;
    in->failure = lj_strerror(rc);
    return 1;
  }
  in->sent.push_back({in->line, in->cx->json ? std::string(key, key_len) : std::string()});
  return in->cx->interrupted() ? 1 : 0;
}

// The summary of an import on stderr, and its exit code: an answer lost is 6 (the
// write may have landed), then a store's failure, an interrupt, malformed lines.
int import_summary(Context& cx, const ImportIn& in, std::string_view input, int rc, lj_error_t* err) {
  if (!in.failure.empty()) cx.note(fmt::format("stopped at line {}: {}", in.failed_line, in.failure));
  if (std::uint64_t lossy = lines_not_utf8(input); lossy > 0)
    cx.note(fmt::format("{} {} bytes that are no UTF-8: written with U+FFFD, they do not export back the same",
                        counted(lossy, "line"), lossy == 1 ? "holds" : "hold"));
  std::string tail;
  if (in.unknown > 0) tail += fmt::format(", {} unknown (they may have landed)", in.unknown);
  if (in.failed_writes > 0) tail += fmt::format(", {} failed", in.failed_writes);
  if (in.failed != LJ_OK) tail += fmt::format(", stopped at line {}", in.failed_line);
  cx.note(fmt::format("{} created, {} already held a value (left as they are), {} malformed{}",
                      counted(in.created, "key"), in.existed, counted(in.malformed, "line"), tail));
  if (in.failed != LJ_OK) {
    lj_error_destroy(err);
    if (in.unknown > 0) return exit_uncertain;
    // The store refused the write or failed: a store failure, whatever its code.
    return in.failed == LJ_EINVAL || in.failed == LJ_EVERSION ? exit_store : exit_of(in.failed);
  }
  if (rc == LJ_EUSER) {
    lj_error_destroy(err);
    return exit_interrupted;
  }
  if (rc != LJ_OK) return cx.failed("reading the lines", rc, err);
  return in.malformed > 0 ? exit_failed : exit_ok;
}

int run_import(Context& cx, const Args& args) {
  if (args.operands.size() > 1) return cx.usage(fmt::format("one FILE at most, not also {}", args.operands[1]));
  std::size_t window = 0;  // the store's own
  if (auto w = args.value("--window")) {
    auto n = count_arg(*w, 65536);
    if (!n) return cx.usage(fmt::format("--window {} is no count from 1 to 65536", *w));
    window = static_cast<std::size_t>(*n);
  }
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  std::optional<std::string> path;
  if (!args.operands.empty()) path = args.operands[0];
  auto input = read_input(cx, path);
  if (!input) return cx.interrupted() ? exit_interrupted : exit_failed;
  lj_error_t* err = nullptr;
  PipelineHandle pipe;
  if (int rc = lj_store_pipeline_open(&pipe.p, store.p, window, &err); rc != LJ_OK)
    return cx.store_failed("opening the store's pipeline", rc, err);
  ImportIn in;
  in.cx = &cx;
  in.pipe = pipe.p;
  in.window = lj_store_pipeline_window(pipe.p);
  Progress progress(cx, "lines", static_cast<std::uint64_t>(std::count(input->begin(), input->end(), '\n')));
  in.progress = &progress;
  int rc = lj_step_lines_read(input->data(), input->size(), import_line, &in, &err);
  while (!in.sent.empty()) import_outcome(in);
  return import_summary(cx, in, *input, rc, err);
}

std::vector<Option> with(std::vector<Option> a, const std::vector<Option>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

std::vector<Verb> step_verbs() {
  const Option node = {"--node", "N", "the node whose steps are judged (keys <node>.<id>)"};
  return {
      {"step plan", "[FILE|-]", "plan a sweep: one JSON line per key, what a sweep would do and why",
       with(with({node, {"--threads", "N", "plan the lines over N threads (default: one a processor, at most 64)"}},
                 rule_options),
            store_options),
       run_plan,
       "Reads the JSON lines {\"key\",\"revision\",\"value\"} of a steps state (FILE or stdin;\n"
       "step export writes them), or the node's keys in a store (--store URL), and writes one\n"
       "line {\"key\",\"action\",\"reason\",\"why\"} per key, in order, with a summary on stderr.\n"
       "Without --owner the rule is provably-dead: a plan made outside the module never ends a\n"
       "step whose owner is alive on this node. --owner TOKEN --rule not-self plans as the\n"
       "module's own sweep does."},
      {"step sweep", "", "end or delete the node's steps no live process runs any more",
       with(with(with({node,
                       {"--dry-run", nullptr, "plan only: write nothing"},
                       {"--window", "N", "ends and deletes in flight at once (default: the store's, 1024 on etcd, else 256)"}},
                      rule_options),
                 store_options),
            {}),
       run_sweep,
       "Reads the node's keys in one pass, and ends (or, for an ask, deletes) each step left\n"
       "running by a gone owner, each write at the revision read: a key moved since is skipped.\n"
       "Text: the sweep's log lines; --json: one line per key with its outcome. Without --owner\n"
       "the rule is provably-dead (see step plan). Exit 6 when a write's outcome is unknown."},
      {"step end", "ID", "end one running step as failed, saying why (the seed's EndOne)",
       with(with({node, {"--why", "TEXT", "why the step is ended (required)"}}, rule_options), store_options), run_end,
       "ID is the step's id (with --node) or its key <node>.<id>. Refused (exit 1) when the step\n"
       "is not running, is this process's, or (rule provably-dead) its owner is not proven gone."},
      {"step export", "", "the store's steps as JSON lines (what step plan and step import read)",
       with({{"--node", "N", "only the keys of node N"}}, store_options), run_export},
      {"step import", "[FILE|-]", "JSON lines into a store, each key created only where it holds none",
       with({{"--window", "N", "creates in flight at once (default: the store's, 1024 on etcd, else 256)"}}, store_options), run_import,
       "For tests, migrations and replays: a key that holds a value is left as it is. The\n"
       "creates go through the store's pipeline, N in flight at once. Exit 7 when a line is\n"
       "malformed (the others are imported); exit 6 when a create's answer is lost (it may\n"
       "have landed: it is not sent again, and nothing after it is)."},
  };
}

}  // namespace leasejudge::cli
