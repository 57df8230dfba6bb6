// What the lease directory's rules see of files and processes, read the way the
// gstack-lease script's tools read them (bash's tests, head, find, stat, mv, rm, kill,
// ps), so that leasejudge's verdicts match the script's byte for byte. Implemented in
// lib/src/leasedir_shell.cpp; private to the lease directory's sources and their tests.
#pragma once

#include <dirent.h>
#include <locale.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/clock.hpp"
#include "leasejudge/identity.hpp"

namespace leasejudge::shell {

// A directory stream closed on every path.
struct DirStream {
  DIR* d = nullptr;
  explicit DirStream(const char* path) : d(::opendir(path)) {}
  ~DirStream() {
    if (d != nullptr) ::closedir(d);
  }
  DirStream(const DirStream&) = delete;
  DirStream& operator=(const DirStream&) = delete;
};

// A file descriptor closed on every path.
struct FileFd {
  int fd = -1;
  ~FileFd() {
    if (fd >= 0) ::close(fd);
  }
};

// strerror's words in English, as the tools print them in the C and C.UTF-8 locales.
std::string error_text(int err);
// $(cmd) of a child's output: NULs dropped, trailing newlines dropped.
std::string substitution(std::string text);

// --- words -------------------------------------------------------------------

// A canonical pid: a positive decimal without a leading zero that fits a Pid.
std::optional<Pid> canonical_pid(std::string_view text) noexcept;
// bash's legal_number as its kill reads a pid: optional blanks, a sign, decimal digits,
// trailing spaces or tabs, within intmax_t; kill then needs it to fit pid_t.
std::optional<std::intmax_t> bash_number(std::string_view text) noexcept;
// ${token%% *}: the token up to its first space (all of it when it has none).
std::string_view token_pid(std::string_view token) noexcept;
// ${token#* }: the token after its first space (all of it when it has none).
std::string_view token_identity(std::string_view token) noexcept;
// "gone" as holder_gone decides it from the pid alone: empty, not all digits, or
// starting with '0' (the state check comes after).
bool token_pid_malformed(std::string_view pid) noexcept;

// --- the environment ------------------------------------------------------------

// The value of name in env (KEY=VALUE entries, NULL-terminated; nullptr: getenv).
std::optional<std::string_view> env_value(const char* const* env, std::string_view name);
// The first of names set and non-empty in env.
std::optional<std::string_view> env_first(const char* const* env, std::initializer_list<std::string_view> names);

// The locale the script's tools would run in (LC_ALL, else LC_CTYPE / LC_COLLATE, else
// LANG; C when unset or unknown): ps escapes command names with its character
// classes, bash sorts globs with its collation.
class EnvLocale {
 public:
  explicit EnvLocale(const char* const* env);
  ~EnvLocale();
  EnvLocale(const EnvLocale&) = delete;
  EnvLocale& operator=(const EnvLocale&) = delete;
  locale_t get() const noexcept { return loc_; }
  bool utf8() const noexcept { return utf8_; }

 private:
  locale_t loc_ = static_cast<locale_t>(nullptr);
  bool utf8_ = false;
};

// --- files -----------------------------------------------------------------------

bool path_exists(const std::string& path) noexcept;   // [ -e ]
bool path_is_link(const std::string& path) noexcept;  // [ -L ]
bool path_is_dir(const std::string& path) noexcept;   // [ -d ]
bool path_is_file(const std::string& path) noexcept;  // [ -f ]

// The first line of a file as $(head -1 FILE) gives it: without its newline, NUL bytes
// dropped, at most 1 MiB. nullopt where head fails (missing, unreadable, a directory)
// and for a FIFO (never opened for reading: head would block).
std::optional<std::string> first_line(const std::string& path);
// $(readlink PATH): the link's target without trailing newlines; nullopt on failure.
std::optional<std::string> link_target(const std::string& path);

// stat -c %Y (the file itself, not a link's target); nullopt when it cannot be read.
std::optional<std::int64_t> mtime_seconds(const std::string& path) noexcept;
// find PATH -mmin +N / -mmin -N on the file itself: its mtime more than (resp. less
// than) N minutes before now, in full precision. False when it cannot be read.
bool modified_before(const std::string& path, Instant now, std::int64_t minutes) noexcept;
bool modified_within(const std::string& path, Instant now, std::int64_t minutes) noexcept;
// $(find PATH -mmin -N) is non-empty: PATH or, for a directory, anything below it (not
// following links) was modified within N minutes.
bool find_prints_within(const std::string& path, Instant now, std::int64_t minutes);

// The names in dir that the glob "<prefix>*" (infix empty) or "<prefix>*<infix>*"
// matches, as bash expands it: a leading '.' only when prefix has one, sorted as bash
// sorts globs (strcoll in loc). Empty when dir cannot be read.
std::vector<std::string> glob_names(const std::string& dir, std::string_view prefix, std::string_view infix,
                                    locale_t loc);

// The outcome of a file operation the script runs without silencing its errors: the
// message that tool would print on stderr, empty when it printed none.
struct ToolOutcome {
  bool ok = true;
  std::string message;
};
// mv -f SRC DST for a file or directory in one file system: into DST when DST is a
// directory. no_replace: never replace an existing DST (renameat2 RENAME_NOREPLACE).
ToolOutcome move_path(const std::string& src, const std::string& dst, bool no_replace, bool utf8_quotes);
// rm -rf PATH (links not followed).
ToolOutcome remove_tree(const std::string& path, bool utf8_quotes);
// mkdir -p PATH (mode 0777 less the umask).
ToolOutcome make_dirs(const std::string& path, bool utf8_quotes);
// `‘text’` in a UTF-8 locale, `'text'` otherwise: how coreutils quotes a file name.
std::string tool_quote(std::string_view text, bool utf8_quotes);

// --- processes ---------------------------------------------------------------------

// What a tool the script runs printed on stdout and how it ended, as the shell sees it.
struct ToolRun {
  int status = 127;  // its exit code; 128 + signal when killed; 127 when it could not run
  std::string out;   // at most 1 MiB
};
// Run argv[0] (looked up in env's PATH when it has no '/'; env nullptr: environ) with
// extra (KEY=VALUE entries that replace env's), through child.hpp's run_child.
ToolRun run_tool(const std::vector<std::string>& argv, const char* const* env,
                 const std::vector<std::string>& extra = {});

// kill -0 NAME 2>/dev/null || ps -p NAME: does NAME name a live process for the script?
bool name_alive(std::string_view name, const char* const* env);
// The script's identity NAME: the lease identity line of the process NAME names, "" when
// unknown.
std::string name_identity(std::string_view name, const char* const* env);
// $(ps -o comm= -p NAME 2>/dev/null | head -1): the command name as ps prints it.
std::string name_command(std::string_view name, const char* const* env, const EnvLocale& loc);
// $(ps -o ppid= -p NAME 2>/dev/null | tr -d ' '), for an all-digits NAME.
std::string name_parent(std::string_view name, const char* const* env);
// ps's rendering of a raw command name (/proc/<pid>/stat's comm) in a locale: printable
// characters kept, others '?'; from the first byte that is not valid UTF-8 on (or
// everywhere outside UTF-8 locales), controls are '.' and bytes >= 0x80 '?'.
std::string ps_command_text(std::string_view raw, const EnvLocale& loc);

}  // namespace leasejudge::shell
