// leasejudge-bench-lock: lock judgments per second (Google Benchmark).
//
// Each benchmark judges one kind of lock body with judge_lock, as this machine judges it
// (this_machine(): host, machine id, kill(pid, 0), owner tokens read from /proc), with an
// in-process describer standing for Cloud Run (gcloud's own time is not leasejudge's):
//   process/alive       a process holder on this machine, this very process: held
//   process/dead        a process holder on this machine whose pid is gone: break
//   process/elsewhere   a process holder on another machine, lease running: held
//   process/expired     a process holder on another machine, lease ended: break
//   process/owner       written by leasejudge with an owner token of another boot: break
//   execution/running   an execution Cloud Run says runs: held
//   execution/finished  an execution that finished: break
//   unreadable          a body that is no lock body: held, for a person
//   mix                 all of the above in turn: the figure bench/run reports
// judge_capi/<body> judges the same bodies through the C ABI (lj_lock_judge of
// libleasejudge.so, no here: this machine's kept evidence; a C describer), verdict
// and why given back as C text: what every binding pays before its own crossing.
// bench/run runs it with --benchmark_format=json and reads items_per_second of the
// two mixes (their medians, when run with repetitions).
// --write-mix FILE writes the bodies instead, one `name<TAB>breaks (0 or 1)<TAB>body`
// line each, this process's pid written @SELF@, for the rows of the other bindings
// (bench/lock_rows.sh), which put their own pid there.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge.h"
#include "leasejudge/identity.hpp"
#include "leasejudge/lock.hpp"

namespace {

using namespace leasejudge;

// 2024-06-01T12:00:00Z: bodies are written relative to it and judged at it.
constexpr Instant kNow{1717243200, 0};

struct Body {
  const char* name;
  std::string text;
};

// A pid that names no process now: the highest pid the kernel hands out, or the first
// free one below it.
Pid dead_pid() {
  for (Pid p = 4194303; p > 1000; --p)
    if (liveness(p) == Liveness::dead) return p;
  return 4194303;
}

std::string process_body(const std::string& host, std::optional<std::string> machine, double pid, Instant started,
                         std::int64_t lease_ms, std::optional<std::string> owner = std::nullopt) {
  BodyAuthor author{host, std::move(machine), pid, std::move(owner)};
  auto body = lock_body("deploy hq", started, ProcessHolder{lease_ms}, "", author);
  if (!body) {
    std::fprintf(stderr, "leasejudge-bench-lock: %s\n", body.error().message.c_str());
    std::exit(1);
  }
  return *body;
}

std::string execution_body(const std::string& name, Instant started) {
  ExecutionHolder holder{ExecutionRef{"novox-build", "europe-west1", name}, 3600'000};
  auto body = lock_body("publish release", started, holder, "", BodyAuthor{"localhost", std::nullopt, 1, std::nullopt});
  if (!body) {
    std::fprintf(stderr, "leasejudge-bench-lock: %s\n", body.error().message.c_str());
    std::exit(1);
  }
  return *body;
}

const std::vector<Body>& bodies() {
  static const std::vector<Body> all = [] {
    Here here = this_machine();
    std::optional<std::string> machine =
        here.machine.kind == MachineField::Kind::id ? std::optional<std::string>(here.machine.id) : std::nullopt;
    Instant minute_ago = kNow.plus_ns(-60'000'000'000LL), day_ago = kNow.plus_ns(-86400'000'000'000LL);
    std::string other_boot = "00000000-0000-4000-8000-000000000000." + std::to_string(getpid()) + ".lx0abc12";
    return std::vector<Body>{
        {"process/alive", process_body(here.host, machine, getpid(), minute_ago, process_lease_ms)},
        {"process/dead", process_body(here.host, machine, dead_pid(), minute_ago, process_lease_ms)},
        {"process/elsewhere",
         process_body("build-eu-7", "0123456789abcdef0123456789abcdef", 4242, minute_ago, process_lease_ms)},
        {"process/expired",
         process_body("build-eu-7", "0123456789abcdef0123456789abcdef", 4242, day_ago, process_lease_ms)},
        {"process/owner", process_body(here.host, machine, getpid(), minute_ago, process_lease_ms, other_boot)},
        {"execution/running", execution_body("publish-release-abc12", minute_ago)},
        {"execution/finished", execution_body("publish-release-done1", minute_ago)},
        {"unreadable", R"({"purpose":42,"pid":"12"})"},
    };
  }();
  return all;
}

ExecutionState fake_cloud_run(const ExecutionRef& ref) {
  if (ref.name.ends_with("done1")) return ExecutionState::finished("succeeded");
  return ExecutionState::running();
}

void judge(benchmark::State& state, std::size_t first, std::size_t count) {
  const auto& all = bodies();
  Here here = this_machine();
  Describer describe = fake_cloud_run;
  std::size_t i = 0, judged = 0, broken = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& text = all[first + i].text;
    bytes += text.size();
    LockVerdict v = judge_lock(text, describe, kNow, here);
    broken += v.kind == LockVerdict::Kind::break_lock;
    benchmark::DoNotOptimize(v);
    if (++i == count) i = 0;
    ++judged;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(judged));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["breaks"] = static_cast<double>(broken);
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) == 0) state.counters["peak_rss_kb"] = static_cast<double>(ru.ru_maxrss);
}

// The C ABI's describer: the same answers as fake_cloud_run.
int fake_cloud_run_c(lj_execution_state_t* state, const lj_execution_ref_t* ref, void*) {
  if (std::string_view(ref->name, ref->name_len).ends_with("done1"))
    return lj_execution_state_set(state, LJ_EXECUTION_FINISHED, "succeeded", 9);
  return lj_execution_state_set(state, LJ_EXECUTION_RUNNING, nullptr, 0);
}

// One lj_lock_judge call as a binding makes it: options, the call, the verdict freed.
int judge_c(const std::string& text, lj_lock_kind_t* kind, std::string* why) {
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  opts.describe = fake_cloud_run_c;
  lj_lock_verdict_t v;
  int rc = lj_lock_judge(&v, text.data(), text.size(), kNow.unix_ms(), &opts, nullptr);
  if (rc != LJ_OK) return rc;
  *kind = v.kind;
  if (why != nullptr) why->assign(v.why, v.why_len);
  lj_lock_verdict_clear(&v);
  return LJ_OK;
}

void judge_capi(benchmark::State& state, std::size_t first, std::size_t count) {
  const auto& all = bodies();
  std::size_t i = 0, judged = 0, broken = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& text = all[first + i].text;
    bytes += text.size();
    lj_lock_kind_t kind = LJ_LOCK_UNKNOWN;
    if (judge_c(text, &kind, nullptr) != LJ_OK) {
      state.SkipWithError("lj_lock_judge failed");
      break;
    }
    broken += kind == LJ_LOCK_BREAK;
    if (++i == count) i = 0;
    ++judged;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(judged));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["breaks"] = static_cast<double>(broken);
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) == 0) state.counters["peak_rss_kb"] = static_cast<double>(ru.ru_maxrss);
}

void register_all() {
  const auto& all = bodies();
  for (std::size_t k = 0; k < all.size(); ++k)
    benchmark::RegisterBenchmark((std::string("judge_lock/") + all[k].name).c_str(),
                                 [k](benchmark::State& s) { judge(s, k, 1); });
  benchmark::RegisterBenchmark("judge_lock/mix", [n = all.size()](benchmark::State& s) { judge(s, 0, n); });
  for (std::size_t k = 0; k < all.size(); ++k)
    benchmark::RegisterBenchmark((std::string("judge_capi/") + all[k].name).c_str(),
                                 [k](benchmark::State& s) { judge_capi(s, k, 1); });
  benchmark::RegisterBenchmark("judge_capi/mix", [n = all.size()](benchmark::State& s) { judge_capi(s, 0, n); });
}

}  // namespace

bool breaks(std::string_view name) {
  return name == "process/dead" || name == "process/expired" || name == "process/owner" || name == "execution/finished";
}

int write_mix(const char* path) {
  std::FILE* out = std::fopen(path, "w");
  if (out == nullptr) return 2;
  const std::string self = std::to_string(getpid());
  for (const Body& b : bodies()) {
    std::string text = b.text;
    for (std::size_t at = 0; (at = text.find(self, at)) != std::string::npos;) {
      // Only the pid itself: "pid":N and the owner token's ".N.".
      const bool whole =
          (at > 0 && (text[at - 1] == ':' || text[at - 1] == '.')) &&
          (at + self.size() < text.size() && (text[at + self.size()] == ',' || text[at + self.size()] == '.'));
      if (whole) {
        text.replace(at, self.size(), "@SELF@");
        at += 6;
      } else {
        at += self.size();
      }
    }
    std::fprintf(out, "%s\t%d\t%s\n", b.name, breaks(b.name) ? 1 : 0, text.c_str());
  }
  return std::fclose(out) == 0 ? 0 : 2;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--write-mix") return write_mix(argv[2]);
  // The verdicts the bodies are meant to get, checked once: a benchmark of the wrong
  // branch would measure nothing.
  {
    Here here = this_machine();
    for (const Body& b : bodies()) {
      LockVerdict v = judge_lock(b.text, fake_cloud_run, kNow, here);
      bool want_break = breaks(b.name);
      if ((v.kind == LockVerdict::Kind::break_lock) != want_break) {
        std::fprintf(stderr, "leasejudge-bench-lock: %s is judged %s: %s\n", b.name, lock_verdict_kind_name(v.kind),
                     v.why.c_str());
        return 1;
      }
      // The C ABI must say the same, word for word.
      lj_lock_kind_t kind = LJ_LOCK_UNKNOWN;
      std::string why;
      if (int rc = judge_c(b.text, &kind, &why);
          rc != LJ_OK || static_cast<int>(kind) != static_cast<int>(v.kind) || why != v.why) {
        std::fprintf(stderr, "leasejudge-bench-lock: %s through the C ABI: %s (%d): %s\n", b.name,
                     lj_lock_kind_name(kind), rc, why.c_str());
        return 1;
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
