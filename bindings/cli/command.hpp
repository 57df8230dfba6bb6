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

#include <chrono>
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

// What an exit code says: one meaning each (cli.h holds the table, the builtin's too).
enum Exit : int {
  exit_ok = LJ_CLI_EXIT_OK,
  exit_no = LJ_CLI_EXIT_NO,
  exit_usage = LJ_CLI_EXIT_USAGE,
  exit_unknown = LJ_CLI_EXIT_UNKNOWN,
  exit_store = LJ_CLI_EXIT_STORE,
  exit_changed = LJ_CLI_EXIT_CHANGED,
  exit_uncertain = LJ_CLI_EXIT_UNCERTAIN,
  exit_failed = LJ_CLI_EXIT_FAILED,
  exit_wait_ended = LJ_CLI_EXIT_WAIT_ENDED,
  exit_lease_lost = LJ_CLI_EXIT_LOCK_LOST,
  exit_interrupted = LJ_CLI_EXIT_INTERRUPTED
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

// A line's syslog priority, which it carries on the journal (sd-daemon.h's SD_ERR,
// SD_WARNING, SD_INFO): a failure, something gone wrong that is handled, a note.
enum class Priority : int { error = 3, warning = 4, info = 6 };

// What a verb is told: the host, its own name, and how to speak.
class Context {
 public:
  Context(const lj_cli_host_t& host, const Verb& verb) : host_(host), verb_(verb) {}
  const lj_cli_host_t& host() const noexcept { return host_; }
  const Verb& verb() const noexcept { return verb_; }
  bool json = false;

  // A line of output, and one on stderr ("leasejudge <verb>: " before it).
  void out(std::string_view line) const;
  void note(std::string_view line, Priority priority = Priority::info) const;
  void warn(std::string_view line) const { note(line, Priority::warning); }
  // A line on stderr as it is (on the journal, after its priority).
  void err_line(std::string_view line, Priority priority = Priority::info) const;
  // A progress line, only when stderr is a terminal (overwritten in place).
  void progress(std::string_view line) const;
  void progress_done() const;

  // A usage error: one line and the hint; exit_usage.
  int usage(std::string_view what) const;
  // What failed: the code's exit, its message said (err destroyed).
  int failed(std::string_view doing, int code, lj_error_t* err) const;
  // A store call that failed once the store was open: exit_store for a value or key
  // the store refused (LJ_EINVAL: no usage error of the command line), else exit_of.
  int store_failed(std::string_view doing, int code, lj_error_t* err) const;
  // Input that is no input of the verb (a malformed line, a body that is not one):
  // said, exit_failed, whichever verb reads it.
  int malformed(std::string_view what) const;
  bool interrupted() const { return host_.interrupted != nullptr && host_.interrupted(host_.payload) != 0; }

 private:
  const lj_cli_host_t& host_;
  const Verb& verb_;
  mutable bool progress_shown_ = false;
};

// A progress line of long work on stderr, only when it is a terminal: done of total
// (when the total is known), the rate and the time left; at most every 100 ms.
class Progress {
 public:
  Progress(const Context& cx, std::string_view unit, std::uint64_t total = 0)
      : cx_(cx), unit_(unit), total_(total), start_(std::chrono::steady_clock::now()) {}
  void tick(std::uint64_t done);

 private:
  const Context& cx_;
  std::string unit_;
  std::uint64_t total_;
  std::chrono::steady_clock::time_point start_, last_{};
};

// The exit code an LJ_E* code means.
int exit_of(int code);
// The exit codes a verb can give (the table in verbs.cpp), for its help and tests.
std::span<const int> exits_of(std::string_view path);

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
// text as a JSON value: as it is when it is one JSON value, else as a JSON string.
std::string json_value(std::string_view text);

// --- text for people ----------------------------------------------------------------------

// The cap of a text taken from stored data or a body (a purpose, a holder, a why) in
// text output, and of a why in every form, JSON included: 4096 bytes.
constexpr std::size_t text_cap = 4096;
// bytes for a terminal: each control byte (C0, DEL, C1) escaped (\n, \t, \r, \x1b,
// \u0085) and each byte of no UTF-8 sequence as \xNN, never raw; past cap bytes of
// input, cut at a character with " [cut: N bytes in all]".
std::string terminal_text(std::string_view bytes, std::size_t cap = text_cap);
// UTF-8 text cut to at most cap bytes at a character boundary, with the same marker
// when cut (for JSON, whose writer escapes the rest).
std::string capped(std::string_view text, std::size_t cap = text_cap);
// The lines of text (split at \n) that hold a byte of no UTF-8 sequence.
std::uint64_t lines_not_utf8(std::string_view text);
// A duration as people write it: 500ms under a second, else to the nearest second: 5s,
// 10m, 2h, 14m59s, 1d2h.
std::string duration_text(std::int64_t ms);
// An instant in ms since the epoch as RFC 3339 in UTC (2024-05-01T12:00:00.000Z).
std::string instant_text(std::int64_t ms);
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
// --conflict-exit-code N (flock's -E): the exit when another holds the lock (held,
// a race lost, a wait ended), 1 to 255; exit_ok with conflict set (unchanged when
// the option is absent), or a usage error said.
extern const Option conflict_exit_option;
int conflict_exit_of(const Context& cx, const Args& args, int& conflict);
// A count: a decimal in 1..max.
std::optional<std::uint64_t> count_arg(std::string_view text, std::uint64_t max);

// When stdin is a terminal, says on stderr that the verb reads it (and how to end).
void note_terminal_stdin(const Context& cx);

// The options of a verb's lock wait: wait_ms, the host's interrupt, and the wait's
// lines (the watch it waits on, what woke each try) as the verb's notes. Points at
// itself: it stays where it was made while the wait runs.
struct LockWaitCalls {
  LockWaitCalls(const Context& cx, std::int64_t wait_ms);
  LockWaitCalls(const LockWaitCalls&) = delete;
  LockWaitCalls& operator=(const LockWaitCalls&) = delete;
  const Context* cx;
  lj_lock_wait_options_t options;
};
// All of FILE (or stdin for "-" and none) as bytes, at most max bytes. nullopt after
// saying why (the caller returns exit_failed).
std::optional<std::string> read_input(const Context& cx, const std::optional<std::string>& path,
                                      std::size_t max = std::size_t{1} << 30);

// --- the options verbs share ----------------------------------------------------------

// --store URL and how to reach it: mem:, file:DIR, nats://[user:pass@]host:port[,..]/BUCKET.
extern const std::vector<Option> store_options;
// --owner, --before, --now, --bound, --rule: the sweep's rules.
extern const std::vector<Option> rule_options;

// The store options the environment gives when the flag is not: --store from
// LEASEJUDGE_STORE, --creds LEASEJUDGE_CREDS, --tls-ca/-cert/-key LEASEJUDGE_TLS_CA/
// _CERT/_KEY. A flag wins; a variable set but empty is as unset.
struct StoreVariable {
  const char* option;
  const char* variable;
};
extern const std::vector<StoreVariable> store_variables;
// The host environment's value of name (nullopt: unset or empty).
std::optional<std::string> environment_value(const Context& cx, std::string_view name);
// A store option's value: the flag's, else its variable's.
std::optional<std::string> store_value(const Context& cx, const Args& args, std::string_view option);

// The store the options (or the environment) name; nullptr after saying why (*exit set).
// With why, a store that cannot be opened (not a usage error) is not said but put there.
lj_store_t* open_store(const Context& cx, const Args& args, int* exit, std::string* why = nullptr);

// The verbs, by part (verbs_*.cpp), and the table of them all (verbs.cpp).
std::vector<Verb> step_verbs();
std::vector<Verb> watch_verbs();
std::vector<Verb> lock_verbs();
std::vector<Verb> lock_run_verbs();
std::vector<Verb> lock_show_verbs();
std::vector<Verb> misc_verbs();
std::span<const Verb> verbs();

}  // namespace leasejudge::cli
