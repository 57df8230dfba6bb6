// What the sweep contenders share (leasejudge-bench-sweep): their options, what they
// measure, the repetitions and the per-key decisions written for the agreement check.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>

#include "alloc_count.hpp"
#include "bench_args.hpp"
#include "leasejudge/clock.hpp"
#include "leasejudge/step.hpp"
#include "step_lines.hpp"

namespace leasejudge::bench {

struct Options : RuleArgs {
  unsigned threads = 1;
  double min_time = 1.0;
  int max_reps = 5;
};

// What a contender measured.
struct Outcome {
  double seconds = std::numeric_limits<double>::infinity();
  int reps = 0;
  std::uint64_t end = 0, remove = 0, leave = 0;  // decisions (plan contenders)
  std::uint64_t running = 0, no_step = 0;        // what the raw pass saw
  Allocations first{}, last{};                   // during the first and the last repetition
  bool decided = false;                          // counts above are decisions
  long peak_rss_kb = 0;                          // ru_maxrss once the timing ended
};

// One key's decision as the seed's log would give it: action, why, what is said of the
// owner, tab-separated, one line per key in input order. Written after the clock stops.
class DecisionFile {
 public:
  explicit DecisionFile(const std::string& path) : path_(path) {}
  void add(std::string_view key, StepAction action, std::string_view why, std::string_view said) {
    if (path_.empty()) return;
    fmt::format_to(std::back_inserter(buf_), "{}\t{}\t{}\t{}\n", key, step_action_name(action), why, said);
  }
  bool write() const {
    if (path_.empty()) return true;
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) return false;
    bool ok = std::fwrite(buf_.data(), 1, buf_.size(), f) == buf_.size();
    return std::fclose(f) == 0 && ok;
  }
  bool wanted() const { return !path_.empty(); }

 private:
  std::string path_;
  fmt::memory_buffer buf_;
};

// Repeat one pass until min_time is spent (at least 3 times, at most max_reps times); setup
// runs untimed before each pass. Records the best time, the allocations of the first and
// the last pass, and the peak RSS once the passes are done.
void repeat(const Options& o, Outcome& out, const std::function<void()>& pass, const std::function<void()>& setup = {});

// lj_step_plan_batch, lj_step_plan_lines and lj_step_plan_lines_fd through the C ABI
// (capi_contender.cpp).
Outcome run_capi_batch(const Options& o, const StepLines& lines, DecisionFile& decisions);
// lj_step_plan_lines over the state's file read into memory, and lj_step_plan_lines_fd
// from the file, each before the state is read for the others: its answer.
Outcome run_capi_lines(const Options& o, std::string& answer);
Outcome run_capi_lines_fd(const Options& o, std::string& answer);
// The agreement check of either's answer.
void check_capi_lines(const Options& o, const StepLines& lines, std::string_view answer, DecisionFile& decisions);

}  // namespace leasejudge::bench
