// leasejudge-bench-sweep: one sweep contender over one steps state, in a process of its own
// (so its peak RSS is its own), timing only the decide loop.
//
//   leasejudge-bench-sweep --contender NAME --state FILE --node N --owner TOKEN --now ISO
//                          --before ISO [--bound S] [--threads T] [--decisions FILE]
//                          [--min-time SECONDS] [--max-reps N]
//
// Contenders:
//   plan          leasejudge::plan_batch over the whole state in one buffer (--threads T)
//   capi-batch    lj_step_plan_batch through the C ABI (libleasejudge.so) over the same
//                 buffer: one call per batch, as an FFI caller makes it
//   capi-lines    lj_step_plan_lines: the file's JSON lines in, the JSON lines of
//                 `leasejudge step plan` out (reading and writing them timed too)
//   capi-lines-fd lj_step_plan_lines_fd: the state's file streamed to a file
//   sweep-apply   leasejudge::end_stale on a MemoryStore holding the state where it was read
//                 (adopt): scan, plan, end or delete at the revision read, one log line per
//                 action (the store is made again, untimed, before each repetition)
//   simdjson-raw  reference (b): simdjson On-Demand reads every field of every value, the
//                 practical ceiling of any sweep that must read what it judges.
//   plan-floor    On-Demand reads only what the rules read (state, owner, tool, started
//                 by their exact names) and checks nothing else, then the rules: what a
//                 plan that validated nothing would cost. Its decisions are not checked
//                 (it takes values Go refuses).
// simdjson-raw and plan-floor read each value from a padded copy of its own (PaddedCopy).
// The lines are read before the clock starts; the loop is repeated until min-time has
// passed (at least three times, at most max-reps times) and the best repetition is reported, with
// the allocations the process made during the first and the last one (counted,
// alloc_count.hpp). The result is one JSON object on stdout; with --decisions, each key's
// action, why and what is said of its owner (tab-separated, input order) for the agreement
// check. --list-contenders names them.
#include <fmt/format.h>
#include <simdjson.h>
#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "alloc_count.hpp"
#include "contender.hpp"
#include "leasejudge/clock.hpp"
#include "leasejudge/step.hpp"
#include "leasejudge/store/memory.hpp"
#include "leasejudge/sweep.hpp"
#include "step_lines.hpp"

namespace leasejudge::bench {
namespace {

[[noreturn]] void usage(std::string_view why) {
  fmt::print(stderr, "leasejudge-bench-sweep: {}\n", why);
  fmt::print(
      stderr,
      "usage: leasejudge-bench-sweep --contender NAME --state FILE --node N --owner TOKEN --now ISO --before ISO\n"
      "                              [--bound S] [--threads T] [--decisions FILE] [--min-time S] [--max-reps N]\n");
  std::exit(2);
}

}  // namespace

void repeat(const Options& o, Outcome& out, const std::function<void()>& pass, const std::function<void()>& setup) {
  double spent = 0;
  // Three repetitions at least (when allowed): the last one's allocations are a warm
  // batch's, and a burst of load from elsewhere rarely hits all three.
  while (out.reps < o.max_reps && (out.reps < 3 || spent < o.min_time)) {
    if (setup) setup();
    Allocations a0 = allocations_so_far();
    auto t0 = std::chrono::steady_clock::now();
    pass();
    auto t1 = std::chrono::steady_clock::now();
    Allocations a1 = allocations_so_far();
    double s = std::chrono::duration<double>(t1 - t0).count();
    Allocations made{a1.count - a0.count, a1.bytes - a0.bytes};
    if (out.reps == 0) out.first = made;
    out.last = made;
    spent += s;
    if (s < out.seconds) out.seconds = s;
    ++out.reps;
  }
  // The peak before the decisions are written out: what the sweep itself needed.
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) == 0) out.peak_rss_kb = ru.ru_maxrss;
}

namespace {

// --- reference (b): the raw simdjson pass ------------------------------------------

struct RawTally {
  std::uint64_t scalars = 0, running = 0, no_step = 0;
};

simdjson::error_code visit(simdjson::ondemand::value v, RawTally& t);

simdjson::error_code visit_object(simdjson::ondemand::object obj, RawTally& t, bool top) {
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return e;
    simdjson::ondemand::value v;
    if (auto e = field.value().get(v)) return e;
    if (top && key == "state") {
      simdjson::ondemand::json_type type;
      if (auto e = v.type().get(type)) return e;
      if (type == simdjson::ondemand::json_type::string) {
        std::string_view s;
        if (auto e = v.get_string().get(s)) return e;
        ++t.scalars;
        if (s == "running") ++t.running;
        continue;
      }
    }
    if (auto e = visit(v, t)) return e;
  }
  return simdjson::SUCCESS;
}

simdjson::error_code visit(simdjson::ondemand::value v, RawTally& t) {
  simdjson::ondemand::json_type type;
  if (auto e = v.type().get(type)) return e;
  switch (type) {
    case simdjson::ondemand::json_type::object: {
      simdjson::ondemand::object o;
      if (auto e = v.get_object().get(o)) return e;
      return visit_object(o, t, false);
    }
    case simdjson::ondemand::json_type::array: {
      simdjson::ondemand::array a;
      if (auto e = v.get_array().get(a)) return e;
      for (auto element : a) {
        simdjson::ondemand::value x;
        if (auto e = element.get(x)) return e;
        if (auto e = visit(x, t)) return e;
      }
      return simdjson::SUCCESS;
    }
    case simdjson::ondemand::json_type::string: {
      std::string_view s;
      ++t.scalars;
      return v.get_string().get(s);
    }
    case simdjson::ondemand::json_type::number: {
      simdjson::ondemand::number n;
      ++t.scalars;
      return v.get_number().get(n);
    }
    case simdjson::ondemand::json_type::boolean: {
      bool b;
      ++t.scalars;
      return v.get_bool().get(b);
    }
    case simdjson::ondemand::json_type::null: {
      bool is_null = false;
      ++t.scalars;
      if (auto e = v.is_null().get(is_null)) return e;
      return is_null ? simdjson::SUCCESS : simdjson::INCORRECT_TYPE;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

// One value as a document: objects field by field; anything else is no step and is only
// checked to be one JSON value.
bool raw_value(simdjson::ondemand::parser& parser, simdjson::padded_string_view value, RawTally& t) {
  simdjson::ondemand::document doc;
  if (parser.iterate(value).get(doc)) return false;
  simdjson::ondemand::json_type type;
  if (doc.type().get(type)) return false;
  if (type == simdjson::ondemand::json_type::object) {
    simdjson::ondemand::object o;
    if (doc.get_object().get(o) || visit_object(o, t, true)) return false;
  } else if (type == simdjson::ondemand::json_type::array) {
    simdjson::ondemand::array a;
    if (doc.get_array().get(a)) return false;
    for (auto element : a) {
      simdjson::ondemand::value x;
      if (element.get(x) || visit(x, t)) return false;
    }
    return false;  // no step, read all the same
  } else {
    std::string_view raw;
    if (doc.raw_json_token().get(raw)) return false;
    return false;
  }
  return true;
}

// A value copied into a padded buffer of its own, for On-Demand: in the state's buffer a
// line's closing brace follows every value, and On-Demand rescans a whole document a '}'
// follows (to tell a balanced one). The copy (200 to 800 bytes) costs less than that.
class PaddedCopy {
 public:
  simdjson::padded_string_view of(std::string_view value) {
    if (buf_.size() < value.size() + simdjson::SIMDJSON_PADDING) buf_.assign(2 * value.size() + 4096, ' ');
    std::memcpy(buf_.data(), value.data(), value.size());
    buf_[value.size()] = ' ';
    return simdjson::padded_string_view(buf_.data(), value.size(), buf_.size());
  }

 private:
  std::string buf_;
};

Outcome run_simdjson_raw(const Options& o, const StepLines& lines) {
  Outcome out;
  simdjson::ondemand::parser parser;
  PaddedCopy copy;
  RawTally tally;
  repeat(o, out, [&] {
    tally = RawTally{};
    for (const StepLine& l : lines.lines) {
      simdjson::padded_string_view v = copy.of(lines.value(l));
      if (!raw_value(parser, v, tally)) ++tally.no_step;
    }
  });
  out.running = tally.running;
  out.no_step = tally.no_step;
  return out;
}

// --- decisions, for the agreement check --------------------------------------------

// --- the plan-like floor: what the rules read, nothing checked ---------------------------

// The fields the rules read, by their exact names, the rest skipped unread and unchecked
// (On-Demand does not look at what it skips). False when the value is no object.
bool floor_read(simdjson::ondemand::parser& parser, simdjson::padded_string_view value, StepView& view) {
  view = StepView{};
  simdjson::ondemand::document doc;
  simdjson::ondemand::object obj;
  if (parser.iterate(value).get(doc) || doc.get_object().get(obj)) return false;
  for (auto field : obj) {
    simdjson::ondemand::raw_json_string key;
    if (field.key().get(key)) return false;
    std::string_view* into = key.unsafe_is_equal("state")   ? &view.state
                             : key.unsafe_is_equal("owner") ? &view.owner
                             : key.unsafe_is_equal("tool")  ? &view.tool
                                                            : nullptr;
    if (into != nullptr) {
      if (field.value().get_string().get(*into)) *into = {};
    } else if (key.unsafe_is_equal("started")) {
      std::string_view text;
      if (!field.value().get_string().get(text)) {
        auto at = parse_rfc3339(text);
        view.started = at ? *at : go_zero_time;
      }
    }
  }
  return true;
}

Outcome run_plan_floor(const Options& o, const StepLines& lines) {
  Outcome out;
  out.decided = true;
  simdjson::ondemand::parser parser;
  PaddedCopy copy;
  StepRules rules = step_rules(o.rules);
  BatchSummary sum;
  repeat(o, out, [&] {
    sum = BatchSummary{};
    OwnerVerdicts cache;
    StepRead read;
    for (const StepLine& l : lines.lines) {
      read.key = lines.key(l);
      read.value = lines.value(l);
      read.shape = StepShape::no_step;
      if (is_step_key_of(read.key, rules.node) && !read.value.empty())
        read.shape = floor_read(parser, copy.of(read.value), read.view) ? StepShape::step : StepShape::no_step;
      sum.add(judge_step(read, rules, &cache));
    }
  });
  out.end = sum.end;
  out.remove = sum.remove;
  out.leave = sum.leave + sum.no_step + sum.other_node;
  return out;
}

// --- leasejudge's batch plan ----------------------------------------------------------

Outcome run_plan(const Options& o, const StepLines& lines, DecisionFile& decisions) {
  Outcome out;
  out.decided = true;
  std::vector<BatchEntry> entries;
  entries.reserve(lines.lines.size());
  for (const StepLine& l : lines.lines)
    entries.push_back({l.key_offset, l.value_offset, l.key_len, l.value_len, l.revision});
  std::vector<BatchVerdict> verdicts(entries.size());
  StepRules rules = step_rules(o.rules);
  BatchSummary summary;
  Status status;
  repeat(o, out, [&] {
    status = plan_batch(verdicts, lines.buffer(), entries, rules, o.threads, &summary);
  });
  if (!status) {
    fmt::print(stderr, "leasejudge-bench-sweep: plan_batch: {}\n", status.error().message);
    std::exit(1);
  }
  out.end = summary.end;
  out.remove = summary.remove;
  out.leave = summary.leave + summary.no_step + summary.other_node;
  if (decisions.wanted()) {
    StepCodec codec;
    char why[step_why_max];
    for (std::size_t i = 0; i < entries.size(); ++i) {
      StepVerdict v = to_verdict(verdicts[i]);
      std::string_view key = lines.key(lines.lines[i]);
      if (v.action == StepAction::leave) {
        decisions.add(key, v.action, "", "");
        continue;
      }
      StepView view;
      codec.read(lines.value(lines.lines[i]), view);
      std::size_t n = step_why(v, why);
      decisions.add(key, v.action, std::string_view(why, n), step_said(v, view.owner, rules.owner));
    }
  }
  return out;
}

// --- the full sweep on the memory store -------------------------------------------------

// "the step <key> (<tool>, started <time>) was left running and is <done>: <why>; <said>"
struct LoggedAction {
  std::string_view key, why, said;
};
std::optional<LoggedAction> parse_log_line(std::string_view line) {
  static constexpr std::string_view head = "the step ", mid = ") was left running and is ";
  static constexpr std::string_view ended = "ended: ", deleted = "deleted, left to the stream's redelivery: ";
  if (line.substr(0, head.size()) != head) return std::nullopt;
  std::size_t k = line.find(" (", head.size()), m = line.find(mid);
  if (k == std::string_view::npos || m == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(m + mid.size());
  if (rest.substr(0, ended.size()) == ended)
    rest.remove_prefix(ended.size());
  else if (rest.substr(0, deleted.size()) == deleted)
    rest.remove_prefix(deleted.size());
  else
    return std::nullopt;
  std::size_t semi = rest.find("; ");
  if (semi == std::string_view::npos) return std::nullopt;
  return LoggedAction{line.substr(head.size(), k - head.size()), rest.substr(0, semi), rest.substr(semi + 2)};
}

Outcome run_sweep_apply(const Options& o, const StepLines& lines, DecisionFile& decisions) {
  Outcome out;
  out.decided = true;
  std::unique_ptr<MemoryStore> store;
  // The log as a file logger keeps it: the lines' bytes one after another, and where
  // each ends (a line may hold any byte).
  std::string log_text;
  std::vector<std::size_t> log_ends;
  SweepOptions opts;
  opts.rules = step_rules(o.rules);
  SweepLog log = [&](std::string_view line) {
    log_text.append(line);
    log_ends.push_back(log_text.size());
  };
  SweepReport report;
  // The store holds the state where it was read (MemoryStore::adopt), as put() would.
  std::vector<BatchEntry> held(lines.lines.size());
  for (std::size_t i = 0; i < held.size(); ++i) {
    const StepLine& l = lines.lines[i];
    held[i] = BatchEntry{l.key_offset, l.value_offset, l.key_len, l.value_len, l.revision};
  }
  repeat(
      o, out, [&] { report = end_stale(*store, o.rules.node, o.rules.before, log, opts); },
      [&] {
        store = std::make_unique<MemoryStore>();
        if (Status s = store->adopt(lines.buffer(), StepLines::padding_bytes, held); !s.ok()) {
          fmt::print(stderr, "leasejudge-bench-sweep: adopt: {}\n", s.error().message);
          std::exit(1);
        }
        log_text.clear();
        log_text.reserve(lines.lines.size() * 64);
        log_ends.clear();
        log_ends.reserve(lines.lines.size() / 4);
      });
  if (!report.status) {
    fmt::print(stderr, "leasejudge-bench-sweep: end_stale: {}\n", report.status.error().message);
    std::exit(1);
  }
  out.end = report.counts.ends;
  out.remove = report.counts.deletes;
  out.leave = report.counts.left + report.counts.no_step + report.counts.other_node + report.counts.changed;
  if (decisions.wanted()) {
    // What was done, read back from the store; why and said from the log lines.
    std::unordered_map<std::string_view, LoggedAction> logged;
    for (std::size_t i = 0, begin = 0; i < log_ends.size(); begin = log_ends[i++]) {
      std::string_view line = std::string_view(log_text).substr(begin, log_ends[i] - begin);
      auto a = parse_log_line(line);
      if (!a) {
        fmt::print(stderr, "leasejudge-bench-sweep: a log line of another form: {}\n", line);
        std::exit(1);
      }
      logged.emplace(a->key, *a);
    }
    StepCodec codec;
    for (const StepLine& l : lines.lines) {
      std::string_view key = lines.key(l);
      auto now_held = store->get(key);
      if (!now_held) {
        fmt::print(stderr, "leasejudge-bench-sweep: reading {} back: {}\n", key, now_held.error().message);
        std::exit(1);
      }
      auto it = logged.find(key);
      StepAction action = !*now_held                             ? StepAction::remove
                          : (*now_held)->value != lines.value(l) ? StepAction::end
                                                                 : StepAction::leave;
      if (action == StepAction::leave) {
        decisions.add(key, action, it == logged.end() ? "" : "(logged but left)", "");
        continue;
      }
      if (it == logged.end()) {
        decisions.add(key, action, "(not logged)", "");
        continue;
      }
      if (action == StepAction::end) {
        auto ended = codec.decode((*now_held)->value);
        std::string_view reason = ended ? std::string_view(ended->reason) : std::string_view("(no step)");
        if (!ended || ended->state != step_failed) reason = "(not ended as failed)";
        decisions.add(key, action, reason == it->second.why ? it->second.why : reason, it->second.said);
      } else {
        decisions.add(key, action, it->second.why, it->second.said);
      }
    }
  }
  return out;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", a));
    const char* v = argv[++i];
    if (rule_arg(o, a, v, usage))
      continue;
    else if (a == "--threads")
      o.threads = static_cast<unsigned>(number_arg(a, v, usage));
    else if (a == "--min-time")
      o.min_time = std::strtod(v, nullptr);
    else if (a == "--max-reps")
      o.max_reps = static_cast<int>(number_arg(a, v, usage));
    else
      usage(fmt::format("unknown option {}", a));
  }
  if (o.contender.empty() || o.state.empty() || o.rules.node.empty() || o.rules.owner.empty() || !o.rules.have_now || !o.rules.have_before)
    usage("--contender, --state, --node, --owner, --now and --before are required");
  if (o.threads == 0) usage("--threads is at least 1");
  if (o.max_reps < 1) o.max_reps = 1;
  return o;
}

}  // namespace
}  // namespace leasejudge::bench

int main(int argc, char** argv) {
  using namespace leasejudge::bench;
  if (argc == 2 && std::string_view(argv[1]) == "--list-contenders") {
    for (const char* c :
         {"simdjson-raw", "plan-floor", "plan", "capi-batch", "capi-lines", "capi-lines-fd", "sweep-apply"})
      fmt::print("{}\n", c);
    return 0;
  }
  Options o = parse_options(argc, argv);
  // The lines plans run first: their peak RSS must not hold the state the others read.
  Outcome from_file;
  std::string file_answer;
  if (o.contender == "capi-lines") from_file = run_capi_lines(o, file_answer);
  if (o.contender == "capi-lines-fd") from_file = run_capi_lines_fd(o, file_answer);
  auto lines = read_step_lines(o.state);
  if (!lines) {
    fmt::print(stderr, "leasejudge-bench-sweep: {}\n", lines.error().message);
    return 1;
  }
  Outcome out;
  unsigned threads = 1;
  DecisionFile decisions(o.decisions);
  if (o.contender == "simdjson-raw") {
    out = run_simdjson_raw(o, *lines);
  } else if (o.contender == "plan-floor") {
    out = run_plan_floor(o, *lines);
  } else if (o.contender == "plan") {
    out = run_plan(o, *lines, decisions);
    threads = o.threads;
  } else if (o.contender == "capi-batch") {
    out = run_capi_batch(o, *lines, decisions);
    threads = o.threads;
  } else if (o.contender == "capi-lines" || o.contender == "capi-lines-fd") {
    out = from_file;
    if (o.contender == "capi-lines") threads = o.threads;
    check_capi_lines(o, *lines, file_answer, decisions);
  } else if (o.contender == "sweep-apply") {
    out = run_sweep_apply(o, *lines, decisions);
  } else {
    usage(fmt::format("unknown contender {:?}", o.contender));
  }
  if (!decisions.write()) {
    fmt::print(stderr, "leasejudge-bench-sweep: writing {}: {}\n", o.decisions, std::strerror(errno));
    return 1;
  }
  fmt::print(
      R"({{"contender":"{}","keys":{},"threads":{},"seconds":{:.9f},"reps":{},"value_bytes":{},"peak_rss_kb":{},)",
      o.contender, lines->lines.size(), threads, out.seconds, out.reps, lines->value_bytes, out.peak_rss_kb);
  if (out.decided)
    fmt::print(R"("end":{},"delete":{},"leave":{},)", out.end, out.remove, out.leave);
  else
    fmt::print(R"("running":{},"no_step":{},)", out.running, out.no_step);
  fmt::print(R"("allocations_counted":{},"allocations_first":{},"allocated_bytes_first":{},)"
             R"("allocations":{},"allocated_bytes":{}}})"
             "\n",
             allocations_counted(), out.first.count, out.first.bytes, out.last.count, out.last.bytes);
  return 0;
}
