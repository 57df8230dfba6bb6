// The shell layer of the lease directory: the script's tools (words, the environment,
// files, processes) read the way the script reads them.
#include "leasedir_shell.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <langinfo.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>

#include "child.hpp"
#include "leasedir_shell.hpp"

namespace leasejudge {

// =====================================================================================
// shell: the script's tools, read the way the script reads them
// =====================================================================================
namespace shell {
namespace {

constexpr std::size_t line_cap = 1u << 20;

bool all_digits(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The age of a file's own mtime at now, in nanoseconds; nullopt when unreadable.
std::optional<__int128> age_ns(const std::string& path, Instant now) noexcept {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  __int128 n = static_cast<__int128>(now.sec) * 1000000000 + now.nsec;
  __int128 m = static_cast<__int128>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return n - m;
}

bool find_within_at(int dirfd, const char* name, Instant now, std::int64_t minutes, int depth) {
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  __int128 n = static_cast<__int128>(now.sec) * 1000000000 + now.nsec;
  __int128 m = static_cast<__int128>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (n - m < static_cast<__int128>(minutes) * 60 * 1000000000) return true;
  if (!S_ISDIR(st.st_mode) || depth > 64) return false;
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return false;
  }
  bool found = false;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (find_within_at(fd, e->d_name, now, minutes, depth + 1)) {
      found = true;
      break;
    }
  }
  ::closedir(d);
  return found;
}

// rm -rf below dirfd/name; the first failure is kept in failed_path / failed_errno.
bool remove_at(int dirfd, const char* name, const std::string& shown, std::string& failed_path, int& failed_errno,
               int depth) {
  if (::unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return true;
  if (errno != EISDIR && errno != EPERM) {
    failed_path = shown;
    failed_errno = errno;
    return false;
  }
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    failed_path = shown;
    failed_errno = errno == ENOTDIR ? EPERM : errno;
    return false;
  }
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    failed_path = shown;
    failed_errno = errno;
    return false;
  }
  bool ok = true;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  for (const auto& child : names) {
    if (depth > 256 || !remove_at(fd, child.c_str(), shown + "/" + child, failed_path, failed_errno, depth + 1))
      ok = false;
  }
  ::closedir(d);
  if (::unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
    if (ok) {
      failed_path = shown;
      failed_errno = errno;
    }
    return false;
  }
  return ok;
}

// procps' table for bytes outside a UTF-8 rendering: controls '.', high bytes '?'.
char ps_byte(unsigned char c) noexcept {
  if (c < 0x20 || c == 0x7f) return '.';
  if (c >= 0x80) return '?';
  return static_cast<char>(c);
}

// /proc/<pid>/status says the pid is a thread-group leader: what ps -p can list.
bool listed_by_ps(Pid pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/status";
  FileFd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return false;
  char buf[4096];
  std::string text;
  while (text.size() < 16384) {
    ssize_t got = ::read(f.fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buf, static_cast<std::size_t>(got));
    if (text.find("\nTgid:") != std::string::npos && text.find('\n', text.find("\nTgid:") + 1) != std::string::npos)
      break;
  }
  auto at = text.find("\nTgid:");
  if (at == std::string::npos) return false;
  std::size_t i = at + 6;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  std::size_t j = i;
  while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
  return text.substr(i, j - i) == std::to_string(pid);
}

// The raw /proc/<pid>/stat line.
std::optional<std::string> stat_line(std::string_view name) {
  std::string path = "/proc/" + std::string(name) + "/stat";
  FileFd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return std::nullopt;
  std::string text;
  char buf[1024];
  while (text.size() < 65536) {
    ssize_t got = ::read(f.fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;
    if (got == 0) break;
    text.append(buf, static_cast<std::size_t>(got));
  }
  return text;
}

}  // namespace

std::string error_text(int err) {
  // English, as the tools print it in the C and C.UTF-8 locales.
  const char* d = strerrordesc_np(err);
  return d != nullptr ? std::string(d) : "Unknown error " + std::to_string(err);
}

std::string substitution(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '\0'), text.end());
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// --- words -------------------------------------------------------------------

std::optional<Pid> canonical_pid(std::string_view text) noexcept {
  if (!all_digits(text) || text[0] == '0' || text.size() > 10) return std::nullopt;
  std::int64_t v = 0;
  for (char c : text) v = v * 10 + (c - '0');
  if (v > INT32_MAX) return std::nullopt;
  return static_cast<Pid>(v);
}

std::optional<std::intmax_t> bash_number(std::string_view text) noexcept {
  // strtoimax: leading white space (isspace), a sign, decimal digits.
  std::size_t i = 0;
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  while (i < text.size() && space(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::size_t digits_at = i;
  unsigned __int128 v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    v = v * 10 + static_cast<unsigned>(text[i] - '0');
    if (v > static_cast<unsigned __int128>(INTMAX_MAX) + 1) return std::nullopt;  // ERANGE
    ++i;
  }
  if (i == digits_at) return std::nullopt;
  if (!negative && v > static_cast<unsigned __int128>(INTMAX_MAX)) return std::nullopt;
  // then only blanks (bash's whitespace: space and tab).
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i != text.size()) return std::nullopt;
  if (negative)
    return v == static_cast<unsigned __int128>(INTMAX_MAX) + 1 ? INTMAX_MIN : -static_cast<std::intmax_t>(v);
  return static_cast<std::intmax_t>(v);
}

std::string_view token_pid(std::string_view token) noexcept {
  return token.substr(0, token.find(' '));
}

std::string_view token_identity(std::string_view token) noexcept {
  auto sp = token.find(' ');
  return sp == std::string_view::npos ? token : token.substr(sp + 1);
}

bool token_pid_malformed(std::string_view pid) noexcept {
  return !all_digits(pid) || pid[0] == '0';
}

// --- the environment ------------------------------------------------------------

std::optional<std::string_view> env_value(const char* const* env, std::string_view name) {
  if (env == nullptr) {
    const char* v = ::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string_view(v);
  }
  for (const char* const* e = env; *e != nullptr; ++e) {
    std::string_view kv = *e;
    if (kv.size() > name.size() && kv.compare(0, name.size(), name) == 0 && kv[name.size()] == '=')
      return kv.substr(name.size() + 1);
  }
  return std::nullopt;
}

std::optional<std::string_view> env_first(const char* const* env, std::initializer_list<std::string_view> names) {
  for (auto name : names) {
    auto v = env_value(env, name);
    if (v && !v->empty()) return v;
  }
  return std::nullopt;
}

EnvLocale::EnvLocale(const char* const* env) {
  auto name_for = [&](std::string_view category) {
    auto v = env_first(env, {"LC_ALL", category, "LANG"});
    return v ? std::string(*v) : std::string("C");
  };
  std::string ctype = name_for("LC_CTYPE");
  std::string collate = name_for("LC_COLLATE");
  loc_ = ::newlocale(LC_CTYPE_MASK, ctype.c_str(), static_cast<locale_t>(nullptr));
  if (loc_ == static_cast<locale_t>(nullptr)) loc_ = ::newlocale(LC_CTYPE_MASK, "C", static_cast<locale_t>(nullptr));
  if (loc_ != static_cast<locale_t>(nullptr)) {
    locale_t both = ::newlocale(LC_COLLATE_MASK, collate.c_str(), loc_);
    if (both != static_cast<locale_t>(nullptr)) loc_ = both;  // loc_ was consumed by newlocale
    const char* codeset = ::nl_langinfo_l(CODESET, loc_);
    utf8_ = codeset != nullptr && ::strcasecmp(codeset, "UTF-8") == 0;
  }
}

EnvLocale::~EnvLocale() {
  if (loc_ != static_cast<locale_t>(nullptr)) ::freelocale(loc_);
}

// --- files -----------------------------------------------------------------------

bool path_exists(const std::string& path) noexcept {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool path_is_link(const std::string& path) noexcept {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool path_is_dir(const std::string& path) noexcept {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool path_is_file(const std::string& path) noexcept {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::optional<std::string> first_line(const std::string& path) {
  FileFd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
  if (f.fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISDIR(st.st_mode)) return std::nullopt;
  std::string line;
  char buf[4096];
  while (line.size() < line_cap) {
    ssize_t got = ::read(f.fd, buf, std::min(sizeof buf, line_cap - line.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;
    if (got == 0) break;
    const char* nl = static_cast<const char*>(std::memchr(buf, '\n', static_cast<std::size_t>(got)));
    line.append(buf, nl != nullptr ? static_cast<std::size_t>(nl - buf) : static_cast<std::size_t>(got));
    if (nl != nullptr) break;
  }
  line.erase(std::remove(line.begin(), line.end(), '\0'), line.end());
  return line;
}

std::optional<std::string> link_target(const std::string& path) {
  std::string buf(256, '\0');
  while (true) {
    ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) return std::nullopt;
    if (static_cast<std::size_t>(n) < buf.size()) {
      buf.resize(static_cast<std::size_t>(n));
      break;
    }
    if (buf.size() >= line_cap) break;
    buf.resize(buf.size() * 2);
  }
  while (!buf.empty() && buf.back() == '\n') buf.pop_back();
  return buf;
}

std::optional<std::int64_t> mtime_seconds(const std::string& path) noexcept {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec);
}

bool modified_before(const std::string& path, Instant now, std::int64_t minutes) noexcept {
  auto age = age_ns(path, now);
  return age && *age > static_cast<__int128>(minutes) * 60 * 1000000000;
}

bool modified_within(const std::string& path, Instant now, std::int64_t minutes) noexcept {
  auto age = age_ns(path, now);
  return age && *age < static_cast<__int128>(minutes) * 60 * 1000000000;
}

bool find_prints_within(const std::string& path, Instant now, std::int64_t minutes) {
  return find_within_at(AT_FDCWD, path.c_str(), now, minutes, 0);
}

std::vector<std::string> glob_names(const std::string& dir, std::string_view prefix, std::string_view infix,
                                    locale_t loc) {
  std::vector<std::string> names;
  DirStream d(dir.empty() ? "." : dir.c_str());
  if (d.d == nullptr) return names;
  bool dot_pattern = !prefix.empty() && prefix[0] == '.';
  while (dirent* e = ::readdir(d.d)) {
    std::string_view n = e->d_name;
    if (n.empty() || (n[0] == '.' && !dot_pattern) || n == "." || n == "..") continue;
    if (n.substr(0, prefix.size()) != prefix) continue;
    if (!infix.empty() && n.find(infix, prefix.size()) == std::string_view::npos) continue;
    names.emplace_back(n);
  }
  std::sort(names.begin(), names.end(), [loc](const std::string& a, const std::string& b) {
    int c = loc != static_cast<locale_t>(nullptr) ? ::strcoll_l(a.c_str(), b.c_str(), loc)
                                                  : std::strcmp(a.c_str(), b.c_str());
    return c != 0 ? c < 0 : a < b;
  });
  return names;
}

std::string tool_quote(std::string_view text, bool utf8_quotes) {
  return utf8_quotes ? "\u2018" + std::string(text) + "\u2019" : "'" + std::string(text) + "'";
}

ToolOutcome move_path(const std::string& src, const std::string& dst, bool no_replace, bool utf8_quotes) {
  std::string target = dst;
  if (path_is_dir(dst)) target = dst + "/" + base_name(src);
  int rc = -1;
  if (no_replace) {
    rc = static_cast<int>(
        ::syscall(SYS_renameat2, AT_FDCWD, src.c_str(), AT_FDCWD, target.c_str(), 1 /* RENAME_NOREPLACE */));
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
      // A file system without it: the plain rename after a check, as mv -f would.
      rc = path_exists(target) || path_is_link(target) ? (errno = EEXIST, -1) : ::rename(src.c_str(), target.c_str());
    }
    if (rc != 0 && errno == EEXIST) return {false, ""};  // what mv -f would have overwritten
  } else {
    rc = ::rename(src.c_str(), target.c_str());
  }
  if (rc == 0) return {true, ""};
  int err = errno;
  struct stat st {};
  if (::lstat(src.c_str(), &st) != 0)
    return {false, "mv: cannot stat " + tool_quote(src, utf8_quotes) + ": " + error_text(errno)};
  return {false, "mv: cannot move " + tool_quote(src, utf8_quotes) + " to " + tool_quote(target, utf8_quotes) + ": " +
                     error_text(err)};
}

ToolOutcome remove_tree(const std::string& path, bool utf8_quotes) {
  std::string failed;
  int err = 0;
  if (remove_at(AT_FDCWD, path.c_str(), path, failed, err, 0)) return {true, ""};
  return {false, "rm: cannot remove " + tool_quote(failed, utf8_quotes) + ": " + error_text(err)};
}

ToolOutcome make_dirs(const std::string& path, bool utf8_quotes) {
  if (path.empty())
    return {false, "mkdir: cannot create directory " + tool_quote("", utf8_quotes) + ": " + error_text(ENOENT)};
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::size_t slash = path.find('/', pos);
    std::size_t end = slash == std::string::npos ? path.size() : slash;
    if (end > pos) {
      std::string prefix = path.substr(0, end);
      bool last = path.find_first_not_of('/', end) == std::string::npos;
      if (::mkdir(prefix.c_str(), 0777) != 0) {
        int err = errno;
        if (err == EEXIST) {
          if (!path_is_dir(prefix))
            return {false, "mkdir: cannot create directory " + tool_quote(prefix, utf8_quotes) + ": " +
                               error_text(last ? EEXIST : ENOTDIR)};
        } else {
          return {false, "mkdir: cannot create directory " + tool_quote(prefix, utf8_quotes) + ": " + error_text(err)};
        }
      }
    }
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return {true, ""};
}

// --- processes ---------------------------------------------------------------------

ToolRun run_tool(const std::vector<std::string>& argv, const char* const* env, const std::vector<std::string>& extra) {
  ToolRun result;
  ChildRun run;
  run.argv = argv;
  run.base_env = const_cast<char* const*>(env);  // read, never written
  for (const auto& kv : extra) {
    auto eq = kv.find('=');
    run.env.emplace_back(kv.substr(0, eq), eq == std::string::npos ? std::string() : kv.substr(eq + 1));
  }
  run.max_output = line_cap;
  auto done = run_child(run);
  if (!done) return result;  // not found, not started, timed out: what a shell reports as 127
  result.status = done->signal != 0 ? 128 + done->signal : done->exit_code;
  result.out = std::move(done->out);
  return result;
}

bool name_alive(std::string_view name, const char* const* env) {
  if (auto pid = canonical_pid(name)) {
    // kill -0 succeeds, or fails with EPERM where ps -p lists the pid.
    if (::kill(*pid, 0) == 0 || errno == EPERM) return true;
    return false;
  }
  if (all_digits(name) && name[0] != '0') return false;  // beyond any pid: kill and ps refuse it
  if (auto n = bash_number(name)) {
    if (*n == static_cast<pid_t>(*n) && ::kill(static_cast<pid_t>(*n), 0) == 0) return true;
  }
  return run_tool({"ps", "-p", std::string(name)}, env).status == 0;
}

std::string name_identity(std::string_view name, const char* const* env) {
  if (auto pid = canonical_pid(name)) return lease_identity_of(*pid);
  std::string stat_path = "/proc/" + std::string(name) + "/stat";
  if (name.find('\0') == std::string_view::npos && ::access(stat_path.c_str(), R_OK) == 0 &&
      ::access("/proc/sys/kernel/random/boot_id", R_OK) == 0) {
    auto line = stat_line(name);
    if (!line) return "";
    auto ticks = parse_stat_start_ticks(*line);
    std::string id = "linux " + read_boot_id() + " " + (ticks ? std::to_string(*ticks) : std::string());
    return valid_lease_identity(id) ? id : "";
  }
  auto ps = run_tool({"ps", "-o", "lstart=", "-p", std::string(name)}, env, {"LC_ALL=C", "TZ=UTC0"});
  // sed 's/^ *//; s/ *$//' on each line, then $( ) drops the trailing newlines.
  std::string trimmed;
  std::string_view rest = ps.out;
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
    trimmed.append(line);
    if (nl == std::string_view::npos) break;
    trimmed.push_back('\n');
    rest.remove_prefix(nl + 1);
  }
  std::string id = "ps " + substitution(std::move(trimmed));
  return valid_lease_identity(id) ? id : "";
}

std::string ps_command_text(std::string_view raw, const EnvLocale& loc) {
  std::string out;
  out.reserve(raw.size());
  std::size_t i = 0;
  if (loc.utf8() && loc.get() != static_cast<locale_t>(nullptr)) {
    locale_t old = ::uselocale(loc.get());
    std::mbstate_t st{};
    while (i < raw.size() && raw[i] != '\0') {
      wchar_t wc = 0;
      std::size_t len = std::mbrtowc(&wc, raw.data() + i, raw.size() - i, &st);
      if (len == static_cast<std::size_t>(-1) || len == static_cast<std::size_t>(-2)) break;  // the table from here
      if (len == 0) break;
      if (len == 1) {
        out.push_back(std::isprint(static_cast<unsigned char>(raw[i])) ? raw[i] : '?');
      } else if (!std::iswprint(static_cast<wint_t>(wc))) {
        out.push_back('?');
      } else {
        out.append(raw.substr(i, len));
      }
      i += len;
    }
    ::uselocale(old);
  }
  for (; i < raw.size() && raw[i] != '\0'; ++i) out.push_back(ps_byte(static_cast<unsigned char>(raw[i])));
  return out;
}

std::string name_command(std::string_view name, const char* const* env, const EnvLocale& loc) {
  if (auto pid = canonical_pid(name)) {
    auto line = stat_line(name);
    if (!line || !listed_by_ps(*pid)) return "";
    auto open = line->find('(');
    auto close = line->rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return "";
    return ps_command_text(std::string_view(*line).substr(open + 1, close - open - 1), loc);
  }
  if (all_digits(name) && name[0] != '0') return "";
  std::string out = run_tool({"ps", "-o", "comm=", "-p", std::string(name)}, env).out;
  return substitution(out.substr(0, out.find('\n')));
}

std::string name_parent(std::string_view name, const char* const* env) {
  if (auto pid = canonical_pid(name)) {
    auto line = stat_line(name);
    if (!line || !listed_by_ps(*pid)) return "";
    auto ppid = parse_stat_ppid(*line);
    return ppid ? std::to_string(*ppid) : std::string();
  }
  if (all_digits(name) && name[0] != '0') return "";
  std::string out = run_tool({"ps", "-o", "ppid=", "-p", std::string(name)}, env).out;
  out.erase(std::remove(out.begin(), out.end(), ' '), out.end());
  return substitution(std::move(out));
}

}  // namespace shell

}  // namespace leasejudge
