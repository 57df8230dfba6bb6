// The leasejudge command's machinery, shared by every verb: the table's entries, the
// options each verb takes, what a verb is told (Context) and the exit codes.
//
// Conventions (etcdctl's and flock(1)'s): `--help` on every verb prints its usage on
// stdout, exit 0; a usage error is one line naming what is wrong and a hint to
// --help, exit 2; `--json` on every verb writes one JSON object per line instead of
// text; a progress line goes to stderr only when it is a terminal; every exit code
// means one thing (leasejudge.1).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"
#include "leasejudge.h"

namespace leasejudge::cli {

// What an exit code says: one meaning each.
enum Exit : int {
  exit_ok = 0,            // done (lock judge: break)
  exit_no = 1,            // the answer is no: held, none, refused, not found
  exit_usage = 2,         // a usage error
  exit_unknown = 3,       // the evidence could not be gathered (lock judge: unknown)
  exit_store = 4,         // the store failed: unreachable, missing, refused
  exit_changed = 5,       // a write lost its race: the key moved since it was read
  exit_uncertain = 6,     // a write's outcome is unknown: it may have landed
  exit_failed = 7,        // anything else failed: a file, memory, a child
  exit_wait_ended = 8,    // a wait for a lock ended without it (lock run: the command never ran)
  exit_lease_lost = 9,    // lock run: the lock was lost while the command ran (it was signalled)
  exit_interrupted = 130  // stopped by an interrupt (128 + SIGINT)
};

// One option of a verb: a flag (value nullptr) or one that takes a value.
struct Option {
  const char* name;   // "--store"
  const char* value;  // "URL"
  const char* help;
};

// A verb's arguments once parsed: operands in order, option values by name.
class Args {
 public:
  std::vector<std::string> operands;
  std::map<std::string, std::string, std::less<>> values;  // flags hold ""
  bool has(std::string_view name) const { return values.find(name) != values.end(); }
  std::optional<std::string> value(std::string_view name) const {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
};

class Context;
using VerbRun = int (*)(Context& cx, const Args& args);

struct Verb {
  const char* path;      // "step sweep"
  const char* operands;  // what follows the options in the synopsis, "" for none
  const char* summary;   // one line
  std::vector<Option> options;
  VerbRun run;
  const char* details = "";  // more lines of help
  bool raw_args = false;     // the verb reads its arguments itself (lease)
};

// What a verb is told: the host, its own name, and how to speak.
class Context {
 public:
  Context(const lj_cli_host_t& host, const Verb& verb) : host_(host), verb_(verb) {}
  const lj_cli_host_t& host() const noexcept { return host_; }
  const Verb& verb() const noexcept { return verb_; }
  bool json = false;

  // A line of output, and one on stderr ("leasejudge <verb>: " before it).
  void out(std::string_view line) const;
  void note(std::string_view line) const;
  // A line on stderr as it is.
  void err_line(std::string_view line) const;
  // A progress line, only when stderr is a terminal (overwritten in place).
  void progress(std::string_view line) const;
  void progress_done() const;

  // A usage error: one line and the hint; exit_usage.
  int usage(std::string_view what) const;
  // What failed: the code's exit, its message said (err destroyed).
  int failed(std::string_view doing, int code, lj_error_t* err) const;
  bool interrupted() const { return host_.interrupted != nullptr && host_.interrupted(host_.payload) != 0; }

 private:
  const lj_cli_host_t& host_;
  const Verb& verb_;
  mutable bool progress_shown_ = false;
};

// The exit code an LJ_E* code means.
int exit_of(int code);

// The JSON string of text (lj_json_quote).
// The library's handles a verb holds, destroyed on every path.
struct StoreHandle {
  lj_store_t* p = nullptr;
  StoreHandle() = default;
  StoreHandle(const StoreHandle&) = delete;
  StoreHandle& operator=(const StoreHandle&) = delete;
  ~StoreHandle() { lj_store_destroy(p); }
};
struct LockHandle {
  lj_lock_t* p = nullptr;
  LockHandle() = default;
  LockHandle(const LockHandle&) = delete;
  LockHandle& operator=(const LockHandle&) = delete;
  ~LockHandle() { lj_lock_destroy(p); }
};

// A text the library gave (NULL: ""), as a string; the library's copy freed.
std::string taken(char* p, size_t n);

std::string quote(std::string_view text);
// "1 key", "2 keys": a count and its noun, singular for one.
std::string counted(std::uint64_t n, std::string_view noun);

// An RFC 3339 time (as Go's time.Parse reads it) in ns since the epoch.
std::optional<std::int64_t> time_arg(std::string_view text);
// A duration: "90", "90s", "500ms", "5m", "2h"; in ms. nullopt for anything else.
std::optional<std::int64_t> duration_ms_arg(std::string_view text);
// A pid: a decimal in 1..INT32_MAX.
std::optional<std::int32_t> pid_arg(std::string_view text);
// --lease D (default 10 minutes) and --wait D (default 0) as the lock verbs take
// them, up to a day; exit_ok, or a usage error said.
int lease_ms_of(const Context& cx, const Args& args, std::int64_t& lease_ms);
int wait_ms_of(const Context& cx, const Args& args, std::int64_t& wait_ms);
// A count: a decimal in 1..max.
std::optional<std::uint64_t> count_arg(std::string_view text, std::uint64_t max);

// All of FILE (or stdin for "-" and none) as bytes, at most max bytes. nullopt after
// saying why (the caller returns exit_failed).
std::optional<std::string> read_input(const Context& cx, const std::optional<std::string>& path,
                                      std::size_t max = std::size_t{1} << 30);

// --- the options verbs share ----------------------------------------------------------

// --store URL and how to reach it: mem:, file:DIR, nats://[user:pass@]host:port[,..]/BUCKET.
extern const std::vector<Option> store_options;
// --owner, --before, --now, --bound, --rule: the sweep's rules.
extern const std::vector<Option> rule_options;

// The store the options name; nullptr after saying why (*exit set).
lj_store_t* open_store(const Context& cx, const Args& args, int* exit);

// The verbs, by part (verbs_*.cpp), and the table of them all (verbs.cpp).
std::vector<Verb> step_verbs();
std::vector<Verb> watch_verbs();
std::vector<Verb> lock_verbs();
std::vector<Verb> lock_run_verbs();
std::vector<Verb> misc_verbs();
std::span<const Verb> verbs();

}  // namespace leasejudge::cli
