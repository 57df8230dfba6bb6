#include "leasejudge/leasedir.hpp"

#include <dirent.h>
#include <fcntl.h>
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <inttypes.h>
#include <condition_variable>
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

std::string error_text(int err) {
  // English, as the tools print it in the C and C.UTF-8 locales.
  const char* d = strerrordesc_np(err);
  return d != nullptr ? std::string(d) : "Unknown error " + std::to_string(err);
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

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

struct FileFd {
  int fd = -1;
  ~FileFd() {
    if (fd >= 0) ::close(fd);
  }
};

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

// $(cmd) of a child's output: trailing newlines dropped.
std::string substitution(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '\0'), text.end());
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

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
  if (negative) return v == static_cast<unsigned __int128>(INTMAX_MAX) + 1 ? INTMAX_MIN : -static_cast<std::intmax_t>(v);
  return static_cast<std::intmax_t>(v);
}

std::string_view token_pid(std::string_view token) noexcept { return token.substr(0, token.find(' ')); }

std::string_view token_identity(std::string_view token) noexcept {
  auto sp = token.find(' ');
  return sp == std::string_view::npos ? token : token.substr(sp + 1);
}

bool token_pid_malformed(std::string_view pid) noexcept { return !all_digits(pid) || pid[0] == '0'; }

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
    rc = static_cast<int>(::syscall(SYS_renameat2, AT_FDCWD, src.c_str(), AT_FDCWD, target.c_str(), 1 /* RENAME_NOREPLACE */));
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
  if (path.empty()) return {false, "mkdir: cannot create directory " + tool_quote("", utf8_quotes) + ": " + error_text(ENOENT)};
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

// =====================================================================================
// the lease directory
// =====================================================================================

const char* lease_state_name(LeaseState state) noexcept {
  switch (state) {
    case LeaseState::alive: return "alive";
    case LeaseState::dead: return "dead";
    case LeaseState::stale: return "stale";
  }
  return "alive";
}

namespace {

// Threads of one process take the lock one at a time: their token is the same. A
// thread that already has the turn (through another LeaseDir) is told so at once.
class ProcessTurn {
 public:
  enum class Outcome { taken, waited_out, own };
  Outcome acquire(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> guard(m_);
    if (taken_ && owner_ == std::this_thread::get_id()) return Outcome::own;
    if (!cv_.wait_for(guard, wait, [this] { return !taken_; })) return Outcome::waited_out;
    taken_ = true;
    owner_ = std::this_thread::get_id();
    return Outcome::taken;
  }
  void release() {
    {
      std::lock_guard<std::mutex> guard(m_);
      taken_ = false;
      owner_ = std::thread::id();
    }
    cv_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool taken_ = false;
  std::thread::id owner_;
};

ProcessTurn& process_turn() {
  static ProcessTurn turn;
  return turn;
}

Instant realtime_now() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return Instant{static_cast<std::int64_t>(ts.tv_sec), static_cast<std::int32_t>(ts.tv_nsec)};
}

// ${VAR:-300} with anything but digits meaning 300; a count too large for any
// comparison (bash's test refuses it) never ends the tries.
std::int64_t tries_from(std::optional<std::string_view> text) {
  if (!text || text->empty()) return 300;
  if (!std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; })) return 300;
  std::int64_t v = 0;
  for (char c : *text) {
    if (v > (INT64_MAX - 9) / 10) return INT64_MAX;
    v = v * 10 + (c - '0');
  }
  return v;
}

struct Stop {};  // a sink asked to stop: unwinds to the verb, which reports Errc::user

}  // namespace

struct LeaseDir::Impl {
  std::string dir;
  LeaseDirOptions opts;
  Pid self = 0;
  std::string lock_path;
  shell::EnvLocale loc;
  std::string token;
  bool token_ready = false;
  std::string lock_owner;
  bool has_turn = false;  // this LeaseDir has the process's turn: it holds, or takes, the lock
  const LeaseLineSink* sink = nullptr;

  Impl(std::string d, LeaseDirOptions o)
      : dir(std::move(d)), opts(std::move(o)), self(opts.self > 0 ? opts.self : ::getpid()),
        lock_path(dir + "/.lock"), loc(opts.environment) {}

  const char* const* env() const noexcept { return opts.environment; }
  Instant now() const { return opts.clock ? opts.clock() : realtime_now(); }
  std::int64_t now_sec() const { return now().sec; }

  void emit(LeaseStream stream, std::string_view line) {
    if (sink != nullptr && *sink && !(*sink)(stream, line)) throw Stop{};
  }
  void tool(const shell::ToolOutcome& o) {
    if (!o.message.empty()) emit(LeaseStream::err, o.message);
  }

  const std::string& my_token() {
    if (!token_ready) {
      token = std::to_string(self) + " " + lease_identity_of(self);
      token_ready = true;
    }
    return token;
  }

  // --- the script's judgements ---

  LeaseState state(std::string_view name, std::string_view record, std::int64_t age_min) {
    if (auto pid = shell::canonical_pid(name)) {
      switch (judge_lease_identity(*pid, record, age_min).state) {
        case HolderState::dead: return LeaseState::dead;
        case HolderState::recycled:
        case HolderState::other_boot: return LeaseState::stale;
        case HolderState::alive:
        case HolderState::unknown: return LeaseState::alive;
      }
      return LeaseState::alive;
    }
    if (!shell::name_alive(name, env())) return LeaseState::dead;
    if (record.empty()) return age_min >= 120 ? LeaseState::stale : LeaseState::alive;
    std::string now_id = shell::name_identity(name, env());
    if (valid_lease_identity(record) && !now_id.empty() &&
        lease_identity_backend(record) == lease_identity_backend(now_id) && record != now_id)
      return LeaseState::stale;
    return LeaseState::alive;
  }

  bool holder_gone(std::string_view token_text) {
    std::string_view pid = shell::token_pid(token_text);
    if (shell::token_pid_malformed(pid)) return true;
    LeaseState s = state(pid, shell::token_identity(token_text), 0);
    return s == LeaseState::dead || s == LeaseState::stale;
  }

  bool abandoned(const std::string& claim, std::string_view token_text) {
    return shell::token_identity(token_text).empty() && !shell::find_prints_within(claim, now(), 2);
  }

  std::int64_t age_min(const std::string& file) {
    std::int64_t m = shell::mtime_seconds(file).value_or(0);
    return (now_sec() - m) / 60;
  }

  // --- the lock protocol ---

  std::string owner_of(const std::string& path) {
    if (shell::path_is_link(path)) return shell::link_target(path).value_or("");
    return shell::first_line(path + "/owner").value_or("");
  }

  std::pair<std::string, std::string> split_path(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return {".", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
  }

  bool take(const std::string& path) {
    if (shell::path_exists(path) || shell::path_is_link(path)) return false;
    std::string claim = path + ".claim." + std::to_string(self);
    {
      shell::FileFd f{::open(claim.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666)};
      std::string text = my_token() + "\n";
      bool written = f.fd >= 0 && ::write(f.fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      if (!written) {
        ::unlink(claim.c_str());
        return false;
      }
    }
    if (::mkdir(path.c_str(), 0777) == 0) {
      std::string owner = path + "/owner";
      if (!shell::path_exists(owner)) {
        auto moved = shell::move_path(claim, owner, true, loc.utf8());
        tool(moved);
        if (moved.ok) return true;
      }
      if (!shell::path_exists(owner)) tool(shell::remove_tree(path, loc.utf8()));
    }
    ::unlink(claim.c_str());
    return false;
  }

  bool orphaned(const std::string& path) {
    std::int64_t clock = now_sec();
    if (!shell::path_exists(path) || shell::path_is_link(path)) return false;
    auto om = shell::mtime_seconds(path);
    if (!om) return false;
    auto [parent, base] = split_path(path);
    for (const auto& name : shell::glob_names(parent, base + ".claim.", "", loc.get())) {
      std::string claim = parent + "/" + name;
      std::string t = shell::first_line(claim).value_or("");
      if (abandoned(claim, t)) continue;
      if (!t.empty() && !holder_gone(t)) return false;
    }
    if (shell::path_is_dir(path) && shell::path_exists(path + "/owner")) {
      auto o = shell::first_line(path + "/owner");
      if (!o || !o->empty()) return false;
    }
    auto again = shell::mtime_seconds(path);
    if (!again || *again != *om) return false;
    std::int64_t age = clock - *om;
    return age >= 2 || age <= -60;
  }

  bool drop(const std::string& path) {
    if (shell::path_is_link(path)) return ::unlink(path.c_str()) == 0 || errno == ENOENT;
    std::string gone = path + ".gone." + std::to_string(self);
    if (!shell::move_path(path, gone, false, loc.utf8()).ok) return false;
    shell::remove_tree(gone, loc.utf8());  // its messages go to /dev/null in the script
    return true;
  }

  // drop PATH || rm -rf PATH
  bool drop_or_remove(const std::string& path) {
    if (drop(path)) return true;
    auto removed = shell::remove_tree(path, loc.utf8());
    tool(removed);
    return removed.ok;
  }

  bool break_lock(const std::string& owner) {
    std::string brk = lock_path + ".break";
    if (!take(brk)) {
      std::string b = owner_of(brk);
      if (!b.empty()) {
        if (holder_gone(b) && owner_of(brk) == b) drop(brk);
      } else if (orphaned(brk)) {
        drop(brk);
      }
      return false;
    }
    bool kept = false;
    if (!owner.empty()) {
      if (owner_of(lock_path) == owner) kept = !drop_or_remove(lock_path);
    } else if (orphaned(lock_path)) {
      kept = !drop_or_remove(lock_path);
    }
    drop(brk);
    return !kept;
  }

  bool interrupted() const { return opts.interrupted && opts.interrupted(); }

  // LEASEJUDGE_LEASE_TRACE=<file>: one line `<pid> lock|unlock <seconds.micros>` appended
  // as the lock is taken and released, so that a test (or a person) can prove that no
  // two holders were ever inside at once. LEASEJUDGE_LEASE_TRACE_HOLD_MS widens each
  // hold, for tests that kill holders inside the lock.
  void trace(std::string_view what) {
    auto path = shell::env_first(env(), {"LEASEJUDGE_LEASE_TRACE"});
    if (!path) return;
    Instant t = realtime_now();
    char stamp[48];
    std::snprintf(stamp, sizeof stamp, "%lld.%06d", static_cast<long long>(t.sec), t.nsec / 1000);
    std::string line = std::to_string(self) + " " + std::string(what) + " " + stamp + "\n";
    shell::FileFd f{::open(std::string(*path).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666)};
    if (f.fd >= 0 && ::write(f.fd, line.data(), line.size()) < 0) return;
    if (what == "lock") {
      auto hold = shell::env_first(env(), {"LEASEJUDGE_LEASE_TRACE_HOLD_MS"});
      std::int64_t ms = hold && std::all_of(hold->begin(), hold->end(), [](char c) { return c >= '0' && c <= '9'; })
                            ? tries_from(hold)
                            : 0;
      if (ms > 0 && ms < 60000) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
  }

  // lock(): true once held; false when it could not be taken. Throws Stop when
  // interrupted.
  bool lock() {
    lock_owner.clear();
    std::int64_t start = now_sec();
    std::int64_t limit = opts.lock_time_limit_s;
    // Another thread of this process holds it: wait for our turn within the same bound.
    if (has_turn) {  // held by this LeaseDir already
      lock_owner = my_token();
      return false;
    }
    while (true) {
      auto turn = process_turn().acquire(std::chrono::milliseconds(100));
      if (turn == ProcessTurn::Outcome::taken) break;
      if (turn == ProcessTurn::Outcome::own || now_sec() - start >= limit) {
        lock_owner = my_token();
        return false;
      }
      if (interrupted()) throw Stop{};
    }
    has_turn = true;
    my_token();
    std::int64_t max = opts.lock_tries;
    if (max < 0) {
      auto text = shell::env_first(env(), {"LEASEJUDGE_LEASE_LOCK_TRIES"});
      if (!text) text = shell::env_value(env(), "GSTACK_LEASE_LOCK_TRIES");
      max = tries_from(text);
    }
    std::int64_t tries = 0, gone = 0;
    while (true) {
      if (take(lock_path)) {
        trace("lock");
        return true;
      }
      lock_owner = owner_of(lock_path);
      if (!shell::path_exists(lock_path) && !shell::path_is_link(lock_path)) {
        // Released since take, or take cannot work here: never wait out the tries for a
        // lock nobody holds.
        if (++gone >= 10) break;
        continue;
      }
      gone = 0;
      ++tries;
      if (!lock_owner.empty()) {
        if (holder_gone(lock_owner) && break_lock(lock_owner)) continue;
      } else if (orphaned(lock_path)) {
        if (break_lock("")) continue;
      }
      if (tries >= max) break;
      if (now_sec() - start >= limit) break;
      if (interrupted()) {
        release_turn();
        throw Stop{};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(opts.lock_retry_ms));
      if (interrupted()) {
        release_turn();
        throw Stop{};
      }
    }
    release_turn();
    return false;
  }

  void release_turn() {
    if (!has_turn) return;
    has_turn = false;
    process_turn().release();
  }

  void unlock() {
    if (!has_turn) return;
    if (owner_of(lock_path) == my_token()) {
      trace("unlock");
      drop_or_remove(lock_path);
    }
    release_turn();
  }

  // Releases the lock when a verb leaves early.
  struct Held {
    Impl& impl;
    ~Held() {
      if (impl.has_turn) {
        try {
          impl.sink = nullptr;
          impl.unlock();
        } catch (...) {
          // unlock failing while unwinding leaves the lock for the breakers
        }
      }
    }
  };

  bool reclaim(const std::string& file, std::string_view record) {
    if (!lock()) return false;
    Held held{*this};
    bool same = shell::first_line(file).value_or("") == record;
    if (same) ::unlink(file.c_str());
    unlock();
    return same;
  }

  // --- the verbs ---

  int touch(std::string_view pid) {
    std::string name(pid);
    auto made = shell::make_dirs(dir, loc.utf8());
    if (!made.ok) {
      tool(made);
      return 2;
    }
    if (!lock()) {
      if (!lock_owner.empty() && !holder_gone(lock_owner)) {
        emit(LeaseStream::err, opts.program + ": the lease directory is locked by live process " +
                                   std::string(shell::token_pid(lock_owner)) + "; lease " + name + " not renewed");
      } else {
        emit(LeaseStream::err,
             opts.program + ": cannot take the lease directory lock " + lock_path + "; lease " + name + " not renewed");
      }
      return 3;
    }
    Held held{*this};
    std::string tmp = dir + "/." + name + "." + std::to_string(self);
    std::string id = shell::name_identity(name, env());
    bool written = false;
    {
      shell::FileFd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666)};
      if (f.fd < 0) {
        emit(LeaseStream::err, opts.program + ": " + tmp + ": " + shell::error_text(errno));
      } else {
        std::string text = id.empty() ? std::string() : id + "\n";
        written = text.empty() || ::write(f.fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        if (::close(f.fd) != 0) written = false;
        f.fd = -1;
      }
    }
    if (written) {
      auto moved = shell::move_path(tmp, dir + "/" + name, false, loc.utf8());
      tool(moved);
      written = moved.ok;
    }
    if (!written) {
      ::unlink(tmp.c_str());
      unlock();
      return 2;
    }
    prune();
    unlock();
    return 0;
  }

  void prune() {
    Instant t = now();
    {
      shell::DirStream d(dir.c_str());
      std::vector<std::string> old;
      if (d.d != nullptr) {
        while (dirent* e = ::readdir(d.d)) {
          std::string_view n = e->d_name;
          if (n == "." || n == ".." || n.substr(0, 5) == ".lock") continue;
          std::string full = dir + "/" + std::string(n);
          struct stat st {};
          if (::lstat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
          if (shell::modified_before(full, t, 120)) old.push_back(std::move(full));
        }
      }
      for (const auto& f : old) ::unlink(f.c_str());
    }
    for (const auto& name : shell::glob_names(dir, ".lock", ".claim.", loc.get())) {
      std::string claim = dir + "/" + name;
      if (!shell::path_is_file(claim)) continue;
      std::string t2 = shell::first_line(claim).value_or("");
      if (shell::modified_before(claim, now(), 2) && (abandoned(claim, t2) || holder_gone(t2))) ::unlink(claim.c_str());
    }
    for (const auto& name : shell::glob_names(dir, ".lock", ".gone.", loc.get()))
      shell::remove_tree(dir + "/" + name, loc.utf8());
  }

  std::vector<std::string> lease_files() {
    std::vector<std::string> out;
    for (auto& name : shell::glob_names(dir, "", "", loc.get()))
      if (shell::path_is_file(dir + "/" + name)) out.push_back(std::move(name));
    return out;
  }

  int list() {
    for (const auto& name : shell::glob_names(dir, "", "", loc.get())) {
      std::string file = dir + "/" + name;
      if (!shell::path_is_file(file)) continue;
      std::int64_t age = age_min(file);
      std::string record = shell::first_line(file).value_or("");
      emit(LeaseStream::out, name + " " + std::to_string(age) + "m " + lease_state_name(state(name, record, age)));
    }
    return 0;
  }

  std::string harness_name() const {
    if (!opts.shared_harness.empty()) return opts.shared_harness;
    auto v = shell::env_first(env(), {"LEASEJUDGE_SHARED_HARNESS"});
    return v ? std::string(*v) : std::string("capy-server");
  }

  bool shared_harness(std::string_view name) {
    std::string comm = shell::name_command(name, env(), loc);
    auto slash = comm.rfind('/');
    std::string_view base = slash == std::string::npos ? std::string_view(comm) : std::string_view(comm).substr(slash + 1);
    if (!base.empty() && base.front() == '-') base.remove_prefix(1);
    return base == harness_name();
  }

  int live(std::string_view exclude, bool count_shared) {
    std::string ancestry = " ";
    std::string p(exclude);
    for (int hops = 0; !p.empty() && hops < 64; ++hops) {
      if (!std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }) || p == "0" || p == "1")
        break;
      ancestry += p + " ";
      p = shell::name_parent(p, env());
    }
    int found = 1;
    for (const auto& name : shell::glob_names(dir, "", "", loc.get())) {
      std::string file = dir + "/" + name;
      if (!shell::path_is_file(file)) continue;
      std::int64_t age = age_min(file);
      if (ancestry.find(" " + name + " ") != std::string::npos) {
        if (!(count_shared && age < 120 && shared_harness(name))) continue;
      }
      std::string record = shell::first_line(file).value_or("");
      LeaseState s = state(name, record, age);
      if (s == LeaseState::dead) continue;
      if (s == LeaseState::stale && reclaim(file, record)) {
        std::string comm = shell::name_command(name, env(), loc);
        std::string now_id = shell::name_identity(name, env());
        emit(LeaseStream::err, opts.program + ": reclaimed stale lease " + name + " (" + std::to_string(age) +
                                   "m; recorded '" + record + "', pid " + name + " is now " + comm + " '" + now_id +
                                   "')");
        continue;
      }
      std::string comm = shell::name_command(name, env(), loc);
      auto slash = comm.rfind('/');
      if (slash != std::string::npos) comm.erase(0, slash + 1);
      emit(LeaseStream::out, name + " " + std::to_string(age_min(file)) + "m " + comm);
      found = 0;
    }
    return found;
  }

  template <typename Body>
  Result<int> run(const LeaseLineSink& s, Body&& body) {
    sink = &s;
    try {
      int code = body();
      sink = nullptr;
      return code;
    } catch (const Stop&) {
      sink = nullptr;
      if (has_turn) unlock();
      return Error{Errc::user, "stopped by the caller"};
    }
  }
};

// --- LeaseDir ----------------------------------------------------------------------

LeaseDir::LeaseDir(std::string path, LeaseDirOptions opts) : impl_(std::make_unique<Impl>(std::move(path), std::move(opts))) {}
LeaseDir::~LeaseDir() {
  if (impl_ && impl_->has_turn) {
    impl_->sink = nullptr;
    impl_->unlock();
  }
}

const std::string& LeaseDir::path() const noexcept { return impl_->dir; }

Result<int> LeaseDir::touch(std::string_view pid, const LeaseLineSink& sink) {
  return impl_->run(sink, [&] { return impl_->touch(pid); });
}

Result<int> LeaseDir::live(std::string_view exclude_ancestry_of, bool count_shared_harness, const LeaseLineSink& sink) {
  return impl_->run(sink, [&] { return impl_->live(exclude_ancestry_of, count_shared_harness); });
}

Result<int> LeaseDir::list(const LeaseLineSink& sink) {
  return impl_->run(sink, [&] { return impl_->list(); });
}

std::vector<LeaseEntry> LeaseDir::entries() {
  std::vector<LeaseEntry> out;
  for (auto& name : impl_->lease_files()) {
    std::string file = impl_->dir + "/" + name;
    LeaseEntry e;
    e.age_min = impl_->age_min(file);
    e.record = shell::first_line(file).value_or("");
    e.state = impl_->state(name, e.record, e.age_min);
    e.pid = std::move(name);
    out.push_back(std::move(e));
  }
  return out;
}

LeaseState LeaseDir::state_of(std::string_view pid, std::string_view record, std::int64_t age_min) {
  return impl_->state(pid, record, age_min);
}

Result<bool> LeaseDir::lock() {
  impl_->sink = nullptr;
  try {
    return impl_->lock();
  } catch (const Stop&) {
    return Error{Errc::user, "interrupted while waiting for the lease directory lock"};
  }
}

const std::string& LeaseDir::lock_owner() const noexcept { return impl_->lock_owner; }

void LeaseDir::unlock() {
  impl_->sink = nullptr;
  impl_->unlock();
}

const std::string& LeaseDir::token() { return impl_->my_token(); }

// --- the directory of a checkout -----------------------------------------------------

Result<std::string> checkout_git_dir(std::string_view root, const LeaseDirOptions& opts) {
  auto run = shell::run_tool({"git", "-C", std::string(root), "rev-parse", "--absolute-git-dir"}, opts.environment);
  if (run.status != 0) return Error{Errc::not_found, std::string(root) + " is not a git checkout"};
  return shell::substitution(std::move(run.out));
}

Result<std::string> lease_dir_of(std::string_view root, const LeaseDirOptions& opts) {
  auto git_dir = checkout_git_dir(root, opts);
  if (!git_dir) return git_dir.error();
  if (auto v = shell::env_first(opts.environment, {"LEASEJUDGE_LEASE_DIR", "GSTACK_LEASE_DIR"})) return std::string(*v);
  return *git_dir + "/gstack-leases";
}

// --- the command ---------------------------------------------------------------------

std::string_view lease_command_usage() noexcept {
  return "leasejudge lease: the workflow leases several sessions keep on one shared checkout.\n"
         "Byte-compatible with gstack-lease: both can share one lease directory.\n"
         "\n"
         "Usage:\n"
         "  leasejudge lease touch [--root <checkout>] [--pid <p> | --from <pid>]\n"
         "      write <git dir>/gstack-leases/<pid> holding the pid's start identity\n"
         "      (default pid: this shell's, $$); prune leases older than 120 min.\n"
         "      Exits 3 and writes nothing when a live process holds the directory\n"
         "      lock or the lock cannot be taken; 2 when nothing can be written.\n"
         "  leasejudge lease live [--root <checkout>] [--exclude-ancestry-of <pid>] [--count-shared-harness]\n"
         "      print `<pid> <age>m <command>` per lease held by a live process that is\n"
         "      neither the given pid nor one of its ancestors; exit 0 when any live\n"
         "      lease exists, 1 when none. A stale lease is reclaimed (deleted, one\n"
         "      `gstack-lease: reclaimed ...` line on stderr). --count-shared-harness\n"
         "      still prints an ancestor that is the shared harness (capy-server, or\n"
         "      LEASEJUDGE_SHARED_HARNESS) while its lease is under 120 minutes old.\n"
         "  leasejudge lease list [--root <checkout>]\n"
         "      print `<pid> <age>m alive|dead|stale` for every lease.\n"
         "\n"
         "<checkout> defaults to the current directory's checkout. A root that is not a\n"
         "git checkout exits 2 and writes nothing. LEASEJUDGE_LEASE_DIR or\n"
         "GSTACK_LEASE_DIR overrides the lease directory; LEASEJUDGE_LEASE_LOCK_TRIES or\n"
         "GSTACK_LEASE_LOCK_TRIES the lock's tries (default 300, 0.1 s apart, 30 s at most).\n";
}

Result<int> run_lease_command(std::span<const std::string_view> args, const LeaseCommandDefaults& defaults,
                              const LeaseDirOptions& opts, const LeaseLineSink& sink) {
  auto say = [&](LeaseStream stream, std::string_view line) { return !sink || sink(stream, line); };
  std::string_view verb = args.empty() ? std::string_view() : args[0];
  std::string root, pid, exclude, from;
  bool shared = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string_view a = args[i];
    auto value = [&]() { return i + 1 < args.size() ? std::string(args[++i]) : (++i, std::string()); };
    if (a == "--root") {
      root = value();
    } else if (a == "--pid") {
      pid = value();
    } else if (a == "--from") {
      from = value();
    } else if (a == "--exclude-ancestry-of") {
      exclude = value();
    } else if (a == "--count-shared-harness") {
      shared = true;
    } else {
      if (!say(LeaseStream::err, opts.program + ": unknown argument '" + std::string(a) + "'"))
        return Error{Errc::user, "stopped by the caller"};
      return 2;
    }
  }
  if (verb == "-h" || verb == "--help" || verb.empty()) {
    std::string_view usage = defaults.usage.empty() ? lease_command_usage() : std::string_view(defaults.usage);
    while (!usage.empty()) {
      auto nl = usage.find('\n');
      if (!say(LeaseStream::out, usage.substr(0, nl))) return Error{Errc::user, "stopped by the caller"};
      if (nl == std::string_view::npos) break;
      usage.remove_prefix(nl + 1);
    }
    return 0;
  }
  if (verb != "touch" && verb != "live" && verb != "list") {
    if (!say(LeaseStream::err, opts.program + ": unknown verb '" + std::string(verb) + "'"))
      return Error{Errc::user, "stopped by the caller"};
    return 2;
  }
  if (root.empty()) root = defaults.root;
  if (root.empty()) {
    char buf[PATH_MAX];
    root = ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string(".");
  }
  auto dir = lease_dir_of(root, opts);
  if (!dir) {
    if (!say(LeaseStream::err, opts.program + ": " + root + " is not a git checkout"))
      return Error{Errc::user, "stopped by the caller"};
    return 2;
  }
  LeaseDir leases(std::move(*dir), opts);
  if (verb == "touch") {
    if (pid.empty()) pid = !from.empty() ? from : defaults.pid;
    if (pid.empty()) pid = std::to_string(::getppid());
    return leases.touch(pid, sink);
  }
  if (verb == "list") return leases.list(sink);
  return leases.live(exclude, shared, sink);
}

}  // namespace leasejudge
