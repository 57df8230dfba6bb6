// The command's machinery (command.hpp): speaking, exit codes, arguments, stores.
#include "command.hpp"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace leasejudge::cli {

void Context::out(std::string_view line) const {
  progress_done();
  std::fwrite(line.data(), 1, line.size(), host_.out);
  std::fputc('\n', host_.out);
}

void Context::err_line(std::string_view line, Priority priority) const {
  progress_done();
  std::fflush(host_.out);  // the two keep their order on a shared terminal or file
  if (host_.err_is_journal != 0) fmt::print(host_.err, "<{}>", static_cast<int>(priority));
  std::fwrite(line.data(), 1, line.size(), host_.err);
  std::fputc('\n', host_.err);
  std::fflush(host_.err);
}

void Context::note(std::string_view line, Priority priority) const {
  err_line(fmt::format("leasejudge {}: {}", verb_.path, line), priority);
}

void Context::progress(std::string_view line) const {
  if (!host_.err_is_tty) return;
  fmt::print(host_.err, "\r\x1b[K{}", line);
  std::fflush(host_.err);
  progress_shown_ = true;
}

void Context::progress_done() const {
  if (!progress_shown_) return;
  fmt::print(host_.err, "\r\x1b[K");
  std::fflush(host_.err);
  progress_shown_ = false;
}

void Progress::tick(std::uint64_t done) {
  if (!cx_.host().err_is_tty) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  double s = std::chrono::duration<double>(now - start_).count();
  double rate = s > 0 ? static_cast<double>(done) / s : 0.0;
  std::string line = fmt::format("{}: {} {}", cx_.verb().path, done, unit_);
  if (total_ > 0) line = fmt::format("{}: {} of {} {}", cx_.verb().path, done, total_, unit_);
  line += fmt::format(", {:.0f} {}/s", rate, unit_);
  if (total_ > done && rate > 0)
    line += fmt::format(", {} left", duration_text(static_cast<std::int64_t>((total_ - done) / rate * 1000)));
  cx_.progress(line);
}

int Context::usage(std::string_view what) const {
  err_line(fmt::format("leasejudge {}: {} (see leasejudge {} --help)", verb_.path, what, verb_.path), Priority::error);
  return exit_usage;
}

int Context::failed(std::string_view doing, int code, lj_error_t* err) const {
  std::string message = err != nullptr ? lj_error_message(err) : "";
  lj_error_destroy(err);
  // The library's message may quote stored data or a tool's output: escaped, one line.
  note(fmt::format("{}: {}{}{}", terminal_text(doing), lj_strerror(code), message.empty() ? "" : ": ",
                   terminal_text(message)),
       Priority::error);
  return exit_of(code);
}

int Context::store_failed(std::string_view doing, int code, lj_error_t* err) const {
  int exit = failed(doing, code, err);
  return code == LJ_EINVAL || code == LJ_EVERSION ? exit_store : exit;
}

int Context::malformed(std::string_view what) const {
  note(what, Priority::error);
  return exit_failed;
}

LockWaitCalls::LockWaitCalls(const Context& c, std::int64_t wait_ms) : cx(&c), options(LJ_LOCK_WAIT_OPTIONS_INIT) {
  options.wait_ms = wait_ms;
  options.payload = this;
  options.cancelled = [](void* payload) {
    const lj_cli_host_t& host = static_cast<LockWaitCalls*>(payload)->cx->host();
    return host.interrupted != nullptr ? host.interrupted(host.payload) : 0;
  };
  options.note = [](const char* line, size_t len, void* payload) {
    static_cast<LockWaitCalls*>(payload)->cx->note(terminal_text(std::string_view(line, len)));
  };
}

int exit_of(int code) {
  switch (code) {
    case LJ_OK:
      return exit_ok;
    case LJ_EINVAL:
    case LJ_EVERSION:
      return exit_usage;
    case LJ_ESTORE:
      return exit_store;
    case LJ_ECHANGED:
      return exit_changed;
    case LJ_ETIMEOUT:
      return exit_unknown;
    case LJ_EUNKNOWN:
      return exit_uncertain;
    case LJ_ENOTFOUND:
    case LJ_EREFUSED:
    case LJ_EEXISTS:
    case LJ_EBUSY:
      return exit_no;
    case LJ_EUSER:
      return exit_interrupted;
    default:
      return exit_failed;
  }
}

std::string taken(char* p, size_t n) {
  std::string s(p != nullptr ? std::string(p, n) : std::string());
  lj_free(p);
  return s;
}

std::string counted(std::uint64_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::string quote(std::string_view text) {
  char* out = nullptr;
  size_t len = 0;
  if (lj_json_quote(&out, &len, text.data(), text.size(), nullptr) != LJ_OK) return "\"\"";
  std::string q(out, len);
  lj_free(out);
  return q;
}

namespace {

// The length of the UTF-8 sequence at p (at most n bytes) and its code point; 0 when
// the bytes there are no well-formed sequence (overlong, surrogate, past U+10FFFF).
std::size_t utf8_at(const unsigned char* p, std::size_t n, char32_t& cp) {
  unsigned char b = p[0];
  std::size_t len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || len > n) return 0;
  cp = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
  for (std::size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3Fu);
  }
  static constexpr char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

std::string cut_marker(std::size_t total) {
  return fmt::format(" [cut: {} bytes in all]", total);
}

}  // namespace

std::string terminal_text(std::string_view bytes, std::size_t cap) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t i = 0;
  while (i < bytes.size()) {
    char32_t cp = 0;
    std::size_t len = utf8_at(p + i, bytes.size() - i, cp);
    if (i + std::max<std::size_t>(len, 1) > cap) break;
    if (len == 0) {
      out += fmt::format("\\x{:02x}", p[i]);
      len = 1;
    } else if (cp == '\n' || cp == '\t' || cp == '\r') {
      out += cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else if (cp >= 0x80 && cp < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    } else {
      out.append(bytes.data() + i, len);
    }
    i += len;
  }
  if (i < bytes.size()) out += cut_marker(bytes.size());
  return out;
}

std::uint64_t lines_not_utf8(std::string_view text) {
  std::uint64_t lines = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  bool bad = false;
  for (std::size_t i = 0; i < text.size();) {
    if (p[i] < 0x80) {
      if (p[i] == '\n') lines += bad ? 1 : 0, bad = false;
      ++i;
      continue;
    }
    char32_t cp = 0;
    std::size_t len = utf8_at(p + i, text.size() - i, cp);
    bad = bad || len == 0;
    i += len == 0 ? 1 : len;
  }
  return lines + (bad ? 1 : 0);
}

std::string capped(std::string_view text, std::size_t cap) {
  if (text.size() <= cap) return std::string(text);
  std::size_t end = cap;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + cut_marker(text.size());
}

std::string duration_text(std::int64_t ms) {
  if (ms < 0) return "-" + duration_text(ms == INT64_MIN ? INT64_MAX : -ms);
  if (ms < 1000) return fmt::format("{}ms", ms);
  std::int64_t s = ms / 1000 + (ms % 1000 >= 500 ? 1 : 0);  // to the nearest second
  static constexpr std::pair<std::int64_t, const char*> units[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  std::string out;
  for (auto [size, name] : units) {
    if (s >= size) out += fmt::format("{}{}", s / size, name);
    s %= size;
  }
  return out;
}

std::string instant_text(std::int64_t ms) {
  char* out = nullptr;
  size_t len = 0;
  if (lj_lock_time_format(&out, &len, ms, nullptr) != LJ_OK) return fmt::format("{} ms since the epoch", ms);
  return taken(out, len);
}

std::string json_value(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(text.data(), text.size()).get(e) == simdjson::SUCCESS) return std::string(text);
  return quote(text);
}

std::optional<std::int64_t> time_arg(std::string_view text) {
  int64_t ns = 0;
  if (lj_step_time_parse(&ns, text.data(), text.size(), nullptr) != LJ_OK) return std::nullopt;
  return ns;
}

std::optional<std::int64_t> duration_ms_arg(std::string_view text) {
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || p == text.data() || n < 0) return std::nullopt;
  std::string_view unit(p, static_cast<std::size_t>(text.data() + text.size() - p));
  std::int64_t scale = unit.empty() || unit == "s" ? 1000
                       : unit == "ms"              ? 1
                       : unit == "m"               ? 60000
                       : unit == "h"               ? 3600000
                                                   : 0;
  if (scale == 0 || n > INT64_MAX / scale) return std::nullopt;
  return n * scale;
}

namespace {

constexpr std::int64_t day_ms = 86400000;

}  // namespace

int lease_ms_of(const Context& cx, const Args& args, std::int64_t& lease_ms) {
  lease_ms = LJ_LOCK_PROCESS_LEASE_MS;
  if (auto lease = args.value("--lease")) {
    auto ms = duration_ms_arg(*lease);
    if (!ms || *ms == 0 || *ms > day_ms)
      return cx.usage(fmt::format("--lease {} is no duration of up to a day", *lease));
    lease_ms = *ms;
  }
  return exit_ok;
}

int wait_ms_of(const Context& cx, const Args& args, std::int64_t& wait_ms) {
  wait_ms = 0;
  if (auto wait = args.value("--wait")) {
    auto ms = duration_ms_arg(*wait);
    if (!ms || *ms > day_ms) return cx.usage(fmt::format("--wait {} is no duration of up to a day", *wait));
    wait_ms = *ms;
  }
  return exit_ok;
}

const Option conflict_exit_option = {
    "--conflict-exit-code", "N", "exit N (1 to 255) when another holds the lock, as flock -E does"};

int conflict_exit_of(const Context& cx, const Args& args, int& conflict) {
  if (auto v = args.value("--conflict-exit-code")) {
    auto n = count_arg(*v, 255);
    if (!n) return cx.usage(fmt::format("--conflict-exit-code {} is no code from 1 to 255", terminal_text(*v)));
    conflict = static_cast<int>(*n);
  }
  return exit_ok;
}

std::optional<std::int32_t> pid_arg(std::string_view text) {
  std::int32_t pid = 0;
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc() || p != text.data() + text.size() || pid <= 0) return std::nullopt;
  return pid;
}

std::optional<std::uint64_t> count_arg(std::string_view text, std::uint64_t max) {
  std::uint64_t n = 0;
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || p != text.data() + text.size() || n == 0 || n > max) return std::nullopt;
  return n;
}

void note_terminal_stdin(const Context& cx) {
  if (::isatty(0) == 1) cx.note("reading stdin, a terminal (end with Ctrl-D; FILE reads a file)");
}

std::optional<std::string> read_input(const Context& cx, const std::optional<std::string>& path, std::size_t max) {
  int fd = 0;
  bool own = path && *path != "-";
  if (!own) note_terminal_stdin(cx);
  if (own) {
    fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      cx.note(fmt::format("{}: {}", *path, std::strerror(errno)));
      return std::nullopt;
    }
  }
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR && !cx.interrupted()) continue;
    if (got < 0) {
      cx.note(fmt::format("{}: {}", own ? *path : std::string("stdin"), std::strerror(errno)));
      if (own) ::close(fd);
      return std::nullopt;
    }
    if (got == 0) break;
    if (data.size() + static_cast<std::size_t>(got) > max) {
      cx.note(fmt::format("{}: larger than {} bytes", own ? *path : std::string("stdin"), max));
      if (own) ::close(fd);
      return std::nullopt;
    }
    data.append(buf, static_cast<std::size_t>(got));
  }
  if (own) ::close(fd);
  return data;
}

// --- stores ------------------------------------------------------------------------------

const std::vector<Option> store_options = {
    {"--store", "URL", "the store: mem:, file:DIR, nats://[user:pass@]host:port[,host:port...]/BUCKET"},
    {"--creds", "FILE", "NATS: a credentials file (user JWT and nkey seed)"},
    {"--tls-ca", "FILE", "NATS: the CA that verifies the server"},
    {"--tls-cert", "FILE", "NATS: this client's certificate"},
    {"--tls-key", "FILE", "NATS: this client's key"},
    {"--create-bucket", nullptr, "create the bucket (NATS) or the directory (file:) when it is missing"},
    {"--refuse-unfenced", nullptr,
     "NATS: refuse updates and deletes on a replicated bucket of a nats-server before 2.9.21, which does not "
     "fence other clients' writes"},
};

const std::vector<Option> rule_options = {
    {"--owner", "TOKEN", "this process's owner token (default: this shell's; none: rule provably-dead)"},
    {"--before", "TIME",
     "a step with no owner started before it was a previous process's (default: this shell's start)"},
    {"--now", "TIME", "now (RFC 3339; default: the clock)"},
    {"--bound", "SECONDS", "how long an asker waits for its ask (default 3600)"},
    {"--rule", "RULE",
     "by-owner (the default: not-self with --owner, else provably-dead), not-self (every other owner is gone) or "
     "provably-dead (only owners proven gone)"},
    {"--min-age", "DURATION",
     "a running step started less than DURATION ago is left, whoever owns it (90s, 5m; default: none)"},
};

const std::vector<StoreVariable> store_variables = {
    {"--store", "LEASEJUDGE_STORE"},   {"--creds", "LEASEJUDGE_CREDS"},       {"--tls-ca", "LEASEJUDGE_TLS_CA"},
    {"--tls-cert", "LEASEJUDGE_TLS_CERT"}, {"--tls-key", "LEASEJUDGE_TLS_KEY"},
};

std::optional<std::string> environment_value(const Context& cx, std::string_view name) {
  for (const char* const* e = cx.host().environment; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry = *e;
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=') {
      if (entry.size() == name.size() + 1) return std::nullopt;  // set but empty: as unset
      return std::string(entry.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

std::optional<std::string> store_value(const Context& cx, const Args& args, std::string_view option) {
  if (auto v = args.value(option)) return v;
  for (const auto& sv : store_variables)
    if (option == sv.option) return environment_value(cx, sv.variable);
  return std::nullopt;
}

lj_store_t* open_store(const Context& cx, const Args& args, int* exit, std::string* why) {
  auto url = store_value(cx, args, "--store");
  if (!url) {
    *exit = cx.usage("--store URL is required (or LEASEJUDGE_STORE in the environment)");
    return nullptr;
  }
  lj_store_url_options_t o = LJ_STORE_URL_OPTIONS_INIT;
  auto creds = store_value(cx, args, "--creds"), ca = store_value(cx, args, "--tls-ca"),
       cert = store_value(cx, args, "--tls-cert"), key = store_value(cx, args, "--tls-key");
  // The library's rule, said with the flags that mend it.
  const bool nats = url->rfind("nats://", 0) == 0 || url->rfind("tls://", 0) == 0;
  if (nats && cert.has_value() != key.has_value()) {
    *exit =
        cx.usage(fmt::format("{} FILE needs {} FILE too: a NATS client certificate needs both its certificate and "
                             "key files",
                             cert ? "--tls-cert" : "--tls-key", cert ? "--tls-key" : "--tls-cert"));
    return nullptr;
  }
  auto set = [](const std::optional<std::string>& v, const char*& p, size_t& n) {
    if (v) p = v->data(), n = v->size();
  };
  set(creds, o.credentials_file, o.credentials_file_len);
  set(ca, o.tls_ca_file, o.tls_ca_file_len);
  set(cert, o.tls_cert_file, o.tls_cert_file_len);
  set(key, o.tls_key_file, o.tls_key_file_len);
  o.create = args.has("--create-bucket") ? 1 : 0;
  static constexpr std::string_view create_flag = "--create-bucket";  // named where a missing store is refused
  o.create_name = create_flag.data();
  o.create_name_len = create_flag.size();
  o.refuse_unfenced = args.has("--refuse-unfenced") ? 1 : 0;
  // What the store says once of a server that does not fence other writers: on stderr.
  o.note = [](const char* line, size_t len, void* payload) {
    static_cast<const Context*>(payload)->warn(fmt::format("warning: {}", std::string_view(line, len)));
  };
  o.note_payload = const_cast<Context*>(&cx);
  lj_store_t* store = nullptr;
  lj_error_t* err = nullptr;
  int rc = lj_store_open_url(&store, url->data(), url->size(), &o, &err);
  if (rc == LJ_OK) return store;
  // The library's sentence names the store (a password shown as ***).
  std::string message = lj_error_message(err);
  lj_error_destroy(err);
  if (rc == LJ_EINVAL) {
    *exit = cx.usage(message);
  } else {
    if (why != nullptr)
      *why = std::move(message);
    else
      cx.note(message, Priority::error);
    *exit = exit_of(rc);
  }
  return nullptr;
}

}  // namespace leasejudge::cli

extern "C" int lj_cli_is_journal_stream(int fd, const char* journal_stream) {
  if (journal_stream == nullptr) return 0;
  // "<device>:<inode>", both decimal, as systemd writes it; anything else is no match.
  std::string_view v(journal_stream);
  auto colon = v.find(':');
  if (colon == std::string_view::npos) return 0;
  auto number = [](std::string_view digits, std::uint64_t& out) {
    if (digits.empty() || digits[0] < '0' || digits[0] > '9') return false;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return ec == std::errc() && p == digits.data() + digits.size();
  };
  std::uint64_t device = 0, inode = 0;
  if (!number(v.substr(0, colon), device) || !number(v.substr(colon + 1), inode)) return 0;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_dev) == device && static_cast<std::uint64_t>(st.st_ino) == inode ? 1 : 0;
}

extern "C" const char* lj_cli_exit_meaning(int code) {
  switch (code) {
    case LJ_CLI_EXIT_OK:
      return "done (lock judge: break)";
    case LJ_CLI_EXIT_NO:
      return "the answer is no: held, none, refused, not found";
    case LJ_CLI_EXIT_USAGE:
      return "a usage error: an option, operand or value refused";
    case LJ_CLI_EXIT_UNKNOWN:
      return "the evidence could not be gathered (lock judge: unknown)";
    case LJ_CLI_EXIT_STORE:
      return "the store failed: unreachable, missing, refusing a key or value";
    case LJ_CLI_EXIT_CHANGED:
      return "a write lost its race: the key moved since it was read";
    case LJ_CLI_EXIT_UNCERTAIN:
      return "a write's outcome is unknown: it may have landed";
    case LJ_CLI_EXIT_FAILED:
      return "failed: a file that cannot be read, a malformed input line, memory";
    case LJ_CLI_EXIT_WAIT_ENDED:
      return "a wait for a lock ended without it";
    case LJ_CLI_EXIT_LOCK_LOST:
      return "the lock was lost while it was held";
    case LJ_CLI_EXIT_INTERRUPTED:
      return "stopped by an interrupt (128 + the signal)";
    default:
      return nullptr;
  }
}
