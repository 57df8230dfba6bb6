// leasejudge-bench-ab: two builds of libleasejudge.so compared in one process. Each is
// loaded on its own (dlopen, RTLD_LOCAL | RTLD_DEEPBIND) and lj_step_plan_batch of each plans
// the same state chunk by chunk, the two taking turns at every chunk (which goes first
// alternating), so a change of the host's speed falls on both alike: on a shared machine
// that runs at two speeds, runs of whole processes differ by more than a change worth
// making. Prints each build's time, the ratio B/A over the whole run, each round's and
// their median, and fails when the two decide any key differently.
//
//   leasejudge-bench-ab --a LIB --b LIB --state FILE --node N --owner TOKEN --now ISO
//                       --before ISO [--bound S] [--rounds N] [--chunk K]
#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench_args.hpp"
#include "leasejudge.h"
#include "plan_options.hpp"
#include "step_lines.hpp"

namespace leasejudge::bench {
namespace {

// lj_step_plan_options_t at version 1, the layout every build since the plan's options
// were versioned reads (a build's header has only its newest layout): the rule fields
// side by side, the bound in seconds.
struct PlanOptionsV1 {
  std::uint32_t version;
  const char* node;
  size_t node_len;
  const char* owner;
  size_t owner_len;
  std::int64_t before_ns;
  std::int64_t now_ns;
  std::int64_t bound_seconds;
  int rule;
  std::int64_t start_tolerance_ms;
  int (*owner_state)(lj_holder_state_t*, const char*, size_t, void*);
  void* payload;
  std::uint32_t threads;
};

// The rules at version 1, on one thread.
PlanOptionsV1 plan_options_v1(const Rules& rules) {
  return PlanOptionsV1{1,
                       rules.node.data(),
                       rules.node.size(),
                       rules.owner.data(),
                       rules.owner.size(),
                       ns_of(rules.before),
                       ns_of(rules.now),
                       rules.bound_ms / 1000,
                       LJ_STEP_RULE_NOT_SELF,
                       5000,
                       nullptr,
                       nullptr,
                       1};
}

using PlanBatch = int (*)(lj_step_action_t*, size_t, lj_step_plan_summary_t*, const char*, size_t, size_t,
                          const lj_step_entry_t*, size_t, const PlanOptionsV1*, lj_error_t**);

[[noreturn]] void usage(std::string_view why) {
  fmt::print(stderr,
             "leasejudge-bench-ab: {}\n"
             "usage: leasejudge-bench-ab --a LIB --b LIB --state FILE --node N --owner TOKEN --now ISO --before ISO\n"
             "                           [--bound S] [--rounds N] [--chunk K]\n",
             why);
  std::exit(2);
}

PlanBatch load(const std::string& path) {
  // Each build keeps its own symbols: the second's are not bound to the first's.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (lib == nullptr) {
    fmt::print(stderr, "leasejudge-bench-ab: {}\n", dlerror());
    std::exit(1);
  }
  auto plan = reinterpret_cast<PlanBatch>(dlsym(lib, "lj_step_plan_batch"));
  if (plan == nullptr) {
    fmt::print(stderr, "leasejudge-bench-ab: {} has no lj_step_plan_batch\n", path);
    std::exit(1);
  }
  return plan;
}

struct Build {
  PlanBatch plan = nullptr;
  std::vector<lj_step_action_t> actions;
  double seconds = 0;
};

// Plans entries [b, e) with one build, timed.
void plan_chunk(Build& build, const StepLines& lines, const std::vector<lj_step_entry_t>& entries, std::size_t b,
                std::size_t e, const PlanOptionsV1& opts) {
  lj_error_t* err = nullptr;
  std::string_view buf = lines.buffer();
  const auto t0 = std::chrono::steady_clock::now();
  int rc = build.plan(build.actions.data() + b, e - b, nullptr, buf.data(), buf.size(), StepLines::padding_bytes,
                      entries.data() + b, e - b, &opts, &err);
  const auto t1 = std::chrono::steady_clock::now();
  if (rc != LJ_OK) {  // err is that build's to read and free: the process ends here
    fmt::print(stderr, "leasejudge-bench-ab: lj_step_plan_batch returned {}\n", rc);
    std::exit(1);
  }
  build.seconds += std::chrono::duration<double>(t1 - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool same(const lj_step_action_t& x, const lj_step_action_t& y) {
  return x.action == y.action && x.reason == y.reason && x.bound_sec == y.bound_sec && x.bound_nsec == y.bound_nsec;
}

int run(int argc, char** argv) {
  RuleArgs args;
  std::string lib_a, lib_b;
  long rounds = 3, chunk = 5000;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", flag));
    const char* value = argv[++i];
    if (flag == "--a") {
      lib_a = value;
    } else if (flag == "--b") {
      lib_b = value;
    } else if (flag == "--rounds") {
      rounds = number_arg(flag, value, usage);
    } else if (flag == "--chunk") {
      chunk = number_arg(flag, value, usage);
    } else if (!rule_arg(args, flag, value, usage)) {
      usage(fmt::format("unknown option {}", flag));
    }
  }
  if (lib_a.empty() || lib_b.empty() || args.state.empty() || args.rules.node.empty() ||
      args.rules.owner.empty() || !args.rules.have_now || !args.rules.have_before)
    usage("--a, --b, --state, --node, --owner, --now and --before are needed");
  if (rounds < 1 || chunk < 1) usage("--rounds and --chunk must be at least 1");

  Result<StepLines> read = read_step_lines(args.state);
  if (!read) {
    fmt::print(stderr, "leasejudge-bench-ab: {}\n", read.error().message);
    return 1;
  }
  const StepLines& lines = *read;
  const std::vector<lj_step_entry_t> entries = plan_entries(lines);

  // The options at version 1, which every build reads (a later version's fields, such
  // as min_age_ms, are at their defaults): an older build refuses a version it does not
  // know.
  const PlanOptionsV1 opts = plan_options_v1(args.rules);

  Build a{load(lib_a), std::vector<lj_step_action_t>(entries.size()), 0};
  Build b{load(lib_b), std::vector<lj_step_action_t>(entries.size()), 0};
  const auto per = static_cast<std::size_t>(chunk);
  std::vector<double> ratios;
  for (long r = 0; r < rounds; ++r) {
    const double a_before = a.seconds, b_before = b.seconds;
    for (std::size_t s = 0, k = 0; s < entries.size(); s += per, ++k) {
      const std::size_t e = std::min(entries.size(), s + per);
      const bool a_first = (k + static_cast<std::size_t>(r)) % 2 == 0;
      plan_chunk(a_first ? a : b, lines, entries, s, e, opts);
      plan_chunk(a_first ? b : a, lines, entries, s, e, opts);
    }
    ratios.push_back((b.seconds - b_before) / (a.seconds - a_before));
  }
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!same(a.actions[i], b.actions[i])) {
      fmt::print(stderr, "leasejudge-bench-ab: the builds decide key {} ({}) differently\n", i + 1,
                 lines.key(lines.lines[i]));
      return 1;
    }
  const double keys = static_cast<double>(rounds) * static_cast<double>(entries.size());
  fmt::print("A {:.3f} s ({:.0f} ns a key), B {:.3f} s ({:.0f} ns a key): B/A {:.4f} over {} keys, {} rounds\n",
             a.seconds, a.seconds * 1e9 / keys, b.seconds, b.seconds * 1e9 / keys, b.seconds / a.seconds,
             entries.size(), rounds);
  // Each round's ratio too: a slow stretch of the host weighs on the sums more than on the
  // median of the rounds, the figure bench/README gives.
  fmt::print("B/A by round: {:.4f}; median {:.4f}\n", fmt::join(ratios, " "), median(ratios));
  return 0;
}

}  // namespace
}  // namespace leasejudge::bench

int main(int argc, char** argv) {
  return leasejudge::bench::run(argc, argv);
}
