// The C ABI contenders, through libleasejudge.so as an FFI caller uses it:
//   capi-batch  lj_step_plan_batch: one call per batch over the caller's buffer and entry
//               array, verdicts into the caller's action array;
//   capi-lines  lj_step_plan_lines: the JSON lines in, the JSON lines of `leasejudge step
//               plan` out, reading the lines and writing the answer timed with the plan;
//               the process holds the file's bytes and the answer, as a caller does (its
//               peak RSS is taken before the state is indexed for the agreement check);
//   capi-lines-fd  lj_step_plan_lines_fd: the same streamed from the state's file to a
//               file, the state never held (its peak RSS taken the same way).
#include <fcntl.h>
#include <fmt/format.h>
#include <simdjson.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "contender.hpp"
#include "leasejudge.h"
#include "plan_options.hpp"

namespace leasejudge::bench {
namespace {

[[noreturn]] void die(std::string_view what, int rc, lj_error_t* err) {
  fmt::print(stderr, "leasejudge-bench-sweep: {}: {} ({})\n", what, lj_strerror(rc),
             err != nullptr ? lj_error_message(err) : "");
  lj_error_destroy(err);
  std::exit(1);
}

// What the sweep's log says of the owner of the step at value (a step: it was ended or
// deleted), through the C ABI.
std::string said_of(const lj_step_action_t& a, std::string_view value, const Options& o) {
  lj_error_t* err = nullptr;
  lj_step_t* step = nullptr;
  int rc = lj_step_decode(&step, value.data(), value.size(), &err);
  if (rc != LJ_OK) die("lj_step_decode", rc, err);
  std::size_t owner_len = 0;
  const char* owner = lj_step_string(step, LJ_STEP_FIELD_OWNER, &owner_len);
  char* said = nullptr;
  std::size_t said_len = 0;
  rc =
      lj_step_said(&said, &said_len, &a, owner, owner == nullptr ? 0 : owner_len, o.rules.owner.data(), o.rules.owner.size(), &err);
  lj_step_destroy(step);
  if (rc != LJ_OK) die("lj_step_said", rc, err);
  std::string text(said, said_len);
  lj_free(said);
  return text;
}

}  // namespace

Outcome run_capi_batch(const Options& o, const StepLines& lines, DecisionFile& decisions) {
  Outcome out;
  out.decided = true;
  const std::vector<lj_step_entry_t> entries = plan_entries(lines);
  std::vector<lj_step_action_t> actions(entries.size());
  lj_step_plan_options_t opts = plan_options(o.rules, o.threads);
  std::string_view buf = lines.buffer();
  lj_step_plan_summary_t summary{};
  int rc = LJ_OK;
  lj_error_t* err = nullptr;
  repeat(o, out, [&] {
    rc = lj_step_plan_batch(actions.data(), actions.size(), &summary, buf.data(), buf.size(), StepLines::padding_bytes,
                            entries.data(), entries.size(), &opts, &err);
  });
  if (rc != LJ_OK) die("lj_step_plan_batch", rc, err);
  out.end = summary.ends;
  out.remove = summary.deletes;
  out.leave = summary.leaves + summary.no_step + summary.other_node;
  if (decisions.wanted()) {
    char why[LJ_STEP_WHY_MAX];
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const lj_step_action_t& a = actions[i];
      std::string_view key = lines.key(lines.lines[i]);
      auto action = static_cast<StepAction>(a.action);
      if (action == StepAction::leave) {
        decisions.add(key, action, "", "");
        continue;
      }
      std::size_t why_len = 0;
      if ((rc = lj_step_why(why, sizeof why, &why_len, &a, &err)) != LJ_OK) die("lj_step_why", rc, err);
      decisions.add(key, action, std::string_view(why, why_len), said_of(a, lines.value(lines.lines[i]), o));
    }
  }
  return out;
}

namespace {

void take_summary(Outcome& out, const lj_step_plan_summary_t& summary, std::string_view what) {
  if (summary.malformed != 0) {
    fmt::print(stderr, "leasejudge-bench-sweep: {} found {} malformed lines\n", what, summary.malformed);
    std::exit(1);
  }
  out.end = summary.ends;
  out.remove = summary.deletes;
  out.leave = summary.leaves + summary.no_step + summary.other_node;
}

// The decisions of an answer of `leasejudge step plan`: one line per entry, in order,
// {"key","action","reason","why"}.
void decide_from_answer(const Options& o, const StepLines& lines, std::string_view answer, DecisionFile& decisions) {
  simdjson::ondemand::parser parser;
  std::string padded(answer);
  padded.append(simdjson::SIMDJSON_PADDING, ' ');
  std::size_t at = 0, i = 0;
  while (at < answer.size()) {
    std::size_t nl = answer.find('\n', at);
    if (nl == std::string_view::npos) nl = answer.size();
    std::string_view key, action, reason, why;
    simdjson::ondemand::document doc;
    simdjson::ondemand::object obj;
    if (i >= lines.lines.size() ||
        parser.iterate(simdjson::padded_string_view(padded.data() + at, nl - at, padded.size() - at)).get(doc) ||
        doc.get_object().get(obj) || obj["key"].get_string().get(key) || key != lines.key(lines.lines[i]) ||
        obj["action"].get_string().get(action) || obj["reason"].get_string().get(reason) ||
        obj["why"].get_string().get(why)) {
      fmt::print(stderr, "leasejudge-bench-sweep: answer line {} is not the plan of key {}\n", i + 1, i);
      std::exit(1);
    }
    StepAction a = action == "end" ? StepAction::end : action == "delete" ? StepAction::remove : StepAction::leave;
    if (a == StepAction::leave) {
      decisions.add(key, a, "", "");  // the seed says nothing of a key it leaves
    } else {
      // What is said of the owner follows from the reason the answer gives.
      std::string_view value = lines.value(lines.lines[i]);
      lj_step_action_t act{};
      act.action = static_cast<std::uint8_t>(a);
      act.reason = 0xff;
      for (int r = 0; r <= LJ_STEP_STARTED_SINCE; ++r)
        if (reason == lj_step_reason_name(r)) act.reason = static_cast<std::uint8_t>(r);
      if (act.reason == 0xff) {
        fmt::print(stderr, "leasejudge-bench-sweep: answer line {} has no reason code\n", i + 1);
        std::exit(1);
      }
      decisions.add(key, a, why, said_of(act, value, o));
    }
    at = nl + 1;
    ++i;
  }
  if (i != lines.lines.size()) {
    fmt::print(stderr, "leasejudge-bench-sweep: {} answer lines for {} entries\n", i, lines.lines.size());
    std::exit(1);
  }
}

}  // namespace

Outcome run_capi_lines(const Options& o, std::string& answer) {
  Outcome out;
  out.decided = true;
  // The file's own bytes and nothing more, as `leasejudge step plan FILE` holds them.
  auto read = read_file(o.state);
  if (!read) {
    fmt::print(stderr, "leasejudge-bench-sweep: {}\n", read.error().message);
    std::exit(1);
  }
  std::string input = std::move(*read);
  lj_step_plan_options_t opts = plan_options(o.rules, o.threads);
  lj_step_plan_summary_t summary{};
  char* text = nullptr;
  std::size_t text_len = 0;
  int rc = LJ_OK;
  lj_error_t* err = nullptr;
  repeat(o, out, [&] {
    lj_free(text);
    text = nullptr;
    rc = lj_step_plan_lines(&text, &text_len, &summary, input.data(), input.size(), &opts, &err);
  });
  if (rc != LJ_OK) die("lj_step_plan_lines", rc, err);
  take_summary(out, summary, "lj_step_plan_lines");
  std::string().swap(input);
  answer.assign(text, text_len);
  lj_free(text);
  return out;
}

Outcome run_capi_lines_fd(const Options& o, std::string& answer) {
  Outcome out;
  out.decided = true;
  int in = ::open(o.state.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    fmt::print(stderr, "leasejudge-bench-sweep: opening {}: {}\n", o.state, std::strerror(errno));
    std::exit(1);
  }
  // The answer goes to a file of its own (unlinked), as `leasejudge step plan FILE >out`.
  std::FILE* sink = std::tmpfile();
  if (sink == nullptr) {
    fmt::print(stderr, "leasejudge-bench-sweep: a temporary file: {}\n", std::strerror(errno));
    std::exit(1);
  }
  int outfd = fileno(sink);
  lj_step_plan_options_t opts = plan_options(o.rules, o.threads);
  lj_step_plan_summary_t summary{};
  int rc = LJ_OK;
  lj_error_t* err = nullptr;
  repeat(
      o, out, [&] { rc = lj_step_plan_lines_fd(&summary, in, outfd, &opts, &err); },
      [&] {
        if (::lseek(in, 0, SEEK_SET) != 0 || ::ftruncate(outfd, 0) != 0 || ::lseek(outfd, 0, SEEK_SET) != 0) {
          fmt::print(stderr, "leasejudge-bench-sweep: rewinding: {}\n", std::strerror(errno));
          std::exit(1);
        }
      });
  if (rc != LJ_OK) die("lj_step_plan_lines_fd", rc, err);
  take_summary(out, summary, "lj_step_plan_lines_fd");
  off_t size = ::lseek(outfd, 0, SEEK_END);
  answer.resize(static_cast<std::size_t>(size < 0 ? 0 : size));
  if (size < 0 || ::pread(outfd, answer.data(), answer.size(), 0) != static_cast<ssize_t>(answer.size())) {
    fmt::print(stderr, "leasejudge-bench-sweep: reading the answer back: {}\n", std::strerror(errno));
    std::exit(1);
  }
  std::fclose(sink);
  ::close(in);
  return out;
}

void check_capi_lines(const Options& o, const StepLines& lines, std::string_view answer, DecisionFile& decisions) {
  if (decisions.wanted()) decide_from_answer(o, lines, answer, decisions);
}

}  // namespace leasejudge::bench
