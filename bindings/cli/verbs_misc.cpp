// The verbs about processes and this machine, the lease directory, the version and
// the benchmark.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "command.hpp"

extern char** environ;

namespace leasejudge::cli {

namespace {

using PidText = int (*)(char** out, size_t* out_len, int32_t pid, lj_error_t** err);

// identity [PID] and owner [PID]: one line; 1 when the pid has none.
int pid_verb(Context& cx, const Args& args, PidText fn, const char* field) {
  if (args.operands.size() > 1) return cx.usage(fmt::format("one PID at most, not also {}", args.operands[1]));
  int32_t pid = cx.host().self_pid;
  if (!args.operands.empty()) {
    auto p = pid_arg(args.operands[0]);
    if (!p) return cx.usage(fmt::format("{} is not a pid", args.operands[0]));
    pid = *p;
  }
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = fn(&out, &len, pid, &err);
  if (rc == LJ_ENOTFOUND) {
    lj_error_destroy(err);
    cx.note(fmt::format("pid {} has no {} (no such process, or its start cannot be read)", pid, field));
    return exit_no;
  }
  if (rc != LJ_OK) return cx.failed(fmt::format("pid {}", pid), rc, err);
  std::string text = taken(out, len);
  cx.out(cx.json ? fmt::format("{{\"pid\":{},\"{}\":{}}}", pid, field, quote(text)) : text);
  return exit_ok;
}

int run_identity(Context& cx, const Args& args) {
  return pid_verb(cx, args, lj_lease_identity, "identity");
}
int run_owner(Context& cx, const Args& args) {
  return pid_verb(cx, args, lj_owner_token, "owner");
}

int run_machine_id(Context& cx, const Args& args) {
  if (!args.operands.empty()) return cx.usage(fmt::format("no operand is taken, not {}", args.operands[0]));
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_machine_id(&out, &len, &err);
  if (rc == LJ_ENOTFOUND) {
    lj_error_destroy(err);
    cx.note("this machine has no machine id (Cloud Run, or no network card that is up)");
    return exit_no;
  }
  if (rc != LJ_OK) return cx.failed("the machine id", rc, err);
  std::string id = taken(out, len);
  cx.out(cx.json ? fmt::format("{{\"machine_id\":{}}}", quote(id)) : id);
  return exit_ok;
}

int run_version(Context& cx, const Args& args) {
  if (!args.operands.empty()) return cx.usage(fmt::format("no operand is taken, not {}", args.operands[0]));
  cx.out(cx.json ? fmt::format("{{\"version\":{},\"abi\":{}}}", quote(lj_version()), LJ_VERSION_MAJOR)
                 : std::string(lj_version()));
  return exit_ok;
}

// lease ...: the gstack-lease verbs, their lines and exit codes as the script's.
// --json and --help after the verb are leasejudge's additions, taken out before the
// script's parser reads the rest.
struct LeaseRun {
  Context* cx = nullptr;
  std::string verb;  // touch, live, list
};

// A line of list (`<pid> <age>m <state>`) or live (`<pid> <age>m <command>`) as JSON.
std::string lease_json(std::string_view verb, std::string_view line) {
  auto first = line.find(' ');
  auto second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  std::string_view age = second == std::string_view::npos ? "" : line.substr(first + 1, second - first - 1);
  std::uint64_t minutes = 0;
  bool ok = age.size() >= 2 && age.back() == 'm';
  for (std::size_t i = 0; ok && i + 1 < age.size(); ++i) {
    ok = age[i] >= '0' && age[i] <= '9';
    minutes = minutes * 10 + static_cast<std::uint64_t>(age[i] - '0');
  }
  if (!ok) return fmt::format(R"({{"line":{}}})", quote(line));
  return fmt::format(R"({{"pid":{},"age_min":{},"{}":{}}})", quote(line.substr(0, first)), minutes,
                     verb == "list" ? "state" : "command", quote(line.substr(second + 1)));
}

int lease_line(int stream, const char* line, size_t len, void* payload) {
  auto* run = static_cast<LeaseRun*>(payload);
  std::string_view l(line, len);
  if (stream == LJ_LEASEDIR_STDERR)
    run->cx->err_line(l);
  else
    run->cx->out(run->cx->json ? lease_json(run->verb, l) : std::string(l));
  return 0;
}

const char* const lease_additions =
    "\nleasejudge adds, after the verb:\n"
    "  --json  list: {\"pid\",\"age_min\",\"state\"} a lease; live: {\"pid\",\"age_min\",\"command\"};\n"
    "          touch: {\"verb\":\"touch\",\"exit_code\":N}; the script's codes as ever\n"
    "  --help  this usage\n"
    "environment: LEASEJUDGE_LEASE_DIR (or GSTACK_LEASE_DIR) names the lease directory\n"
    "exit codes (the script's): 0 done, 1 live found none, 2 usage (not a checkout,\n"
    "nothing written), 3 the directory's lock could not be taken\n";

int lease_interrupted(void* payload) {
  return static_cast<Context*>(payload)->interrupted() ? 1 : 0;
}

int run_lease(Context& cx, const Args& args) {
  std::vector<const char*> argv;
  bool help = false;
  for (std::size_t i = 0; i < args.operands.size(); ++i) {
    const std::string& a = args.operands[i];
    if (i > 0 && a == "--json") {
      cx.json = true;
    } else if (i > 0 && (a == "--help" || a == "-h")) {
      help = true;
    } else {
      argv.push_back(a.c_str());
    }
  }
  if (help) {
    argv.assign({"--help"});
    cx.json = false;  // the usage is text
  }
  LeaseRun run;
  run.cx = &cx;
  run.verb = args.operands.empty() ? "" : args.operands[0];
  std::string pid = std::to_string(cx.host().self_pid);
  lj_leasedir_options_t opts = LJ_LEASEDIR_OPTIONS_INIT;
  opts.environment = cx.host().environment;
  opts.interrupted = lease_interrupted;
  opts.interrupted_payload = &cx;
  int code = exit_usage;
  lj_error_t* err = nullptr;
  int rc = lj_leasedir_run(&code, argv.data(), argv.size(), nullptr, pid.c_str(), lease_line, &run, &opts, &err);
  if (rc == LJ_EUSER) {
    lj_error_destroy(err);
    return exit_interrupted;
  }
  if (rc != LJ_OK) return cx.failed("running the verb", rc, err);
  if (help) std::fputs(lease_additions, cx.host().out);
  if (cx.json && run.verb == "touch") cx.out(fmt::format(R"({{"verb":"touch","exit_code":{}}})", code));
  return code;
}

// bench [bench/run's options]: the main job, bench/run over the build it was made in.
int run_bench(Context& cx, const Args& args) {
  const char* src = cx.host().source_dir;
  const char* build = cx.host().build_dir;
  if (src == nullptr || build == nullptr) {
    cx.note("the benchmark runs from a build tree (build/leasejudge bench), not from an installed copy");
    return exit_failed;
  }
  std::string run = fmt::format("{}/bench/run", src);
  if (::access(run.c_str(), R_OK) != 0) {
    cx.note(fmt::format("{} is not here: the benchmark runs from the build tree it was built in", run));
    return exit_failed;
  }
  std::vector<std::string> words = {"bash", run, "--build", build};
  // The main job: the 1,000,000-key comparison, unless other sizes are asked for.
  bool keys = false;
  for (const auto& a : args.operands) keys = keys || a == "--keys" || a.rfind("--keys=", 0) == 0;
  if (!keys) words.insert(words.end(), {"--keys", "1000000"});
  for (const auto& a : args.operands) words.push_back(a);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(cx.host().out);
  std::fflush(cx.host().err);
  pid_t pid = 0;
  char* const* env = cx.host().environment != nullptr ? const_cast<char* const*>(cx.host().environment) : environ;
  if (int e = posix_spawnp(&pid, "bash", nullptr, nullptr, argv.data(), env); e != 0) {
    cx.note(fmt::format("cannot run {}: {}", run, std::strerror(e)));
    return exit_failed;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return exit_failed;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

std::vector<Verb> misc_verbs() {
  return {
      {"lease",
       "touch|live|list [...]",
       "the workflow leases of a checkout, as the gstack-lease script keeps them",
       {},
       run_lease,
       "The verbs, their options, lines and exit codes are the script's (leasejudge lease --help\n"
       "prints its usage): touch records this shell by default, live prints the live leases and\n"
       "reclaims stale ones, list prints every lease with its state. The script and leasejudge\n"
       "share a lease directory byte for byte, at the same time.",
       true},
      {"identity", "[PID]", "the lease identity line of PID (default: this shell)", {}, run_identity},
      {"owner", "[PID]", "the step owner token of PID (default: this shell)", {}, run_owner},
      {"machine-id", "", "this machine's id (what a lock body's machine field holds)", {}, run_machine_id},
      {"version", "", "the library's version", {}, run_version},
      {"bench",
       "[bench/run options]",
       "the main job: sweep throughput over generated steps states",
       {},
       run_bench,
       "Runs bench/run over the build tree this command was built in (leasejudge bench --help\n"
       "shows bench/run's own options).",
       true},
  };
}

}  // namespace leasejudge::cli
