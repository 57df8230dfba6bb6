// The command's machinery (command.hpp): speaking, exit codes, arguments, stores.
#include "command.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace leasejudge::cli {

void Context::out(std::string_view line) const {
  progress_done();
  std::fwrite(line.data(), 1, line.size(), host_.out);
  std::fputc('\n', host_.out);
}

void Context::err_line(std::string_view line) const {
  progress_done();
  std::fflush(host_.out);  // the two keep their order on a shared terminal or file
  std::fwrite(line.data(), 1, line.size(), host_.err);
  std::fputc('\n', host_.err);
  std::fflush(host_.err);
}

void Context::note(std::string_view line) const {
  err_line(fmt::format("leasejudge {}: {}", verb_.path, line));
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

int Context::usage(std::string_view what) const {
  err_line(fmt::format("leasejudge {}: {} (see leasejudge {} --help)", verb_.path, what, verb_.path));
  return exit_usage;
}

int Context::failed(std::string_view doing, int code, lj_error_t* err) const {
  std::string message = err != nullptr ? lj_error_message(err) : "";
  lj_error_destroy(err);
  note(fmt::format("{}: {}{}{}", doing, lj_strerror(code), message.empty() ? "" : ": ", message));
  return exit_of(code);
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

std::optional<std::string> read_input(const Context& cx, const std::optional<std::string>& path, std::size_t max) {
  int fd = 0;
  bool own = path && *path != "-";
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
    {"--rule", "RULE", "not-self (every other owner is gone) or provably-dead (only owners proven gone)"},
};

lj_store_t* open_store(const Context& cx, const Args& args, int* exit) {
  auto url = args.value("--store");
  if (!url) {
    *exit = cx.usage("--store URL is required");
    return nullptr;
  }
  lj_store_url_options_t o = LJ_STORE_URL_OPTIONS_INIT;
  auto creds = args.value("--creds"), ca = args.value("--tls-ca"), cert = args.value("--tls-cert"),
       key = args.value("--tls-key");
  auto set = [](const std::optional<std::string>& v, const char*& p, size_t& n) {
    if (v) p = v->data(), n = v->size();
  };
  set(creds, o.credentials_file, o.credentials_file_len);
  set(ca, o.tls_ca_file, o.tls_ca_file_len);
  set(cert, o.tls_cert_file, o.tls_cert_file_len);
  set(key, o.tls_key_file, o.tls_key_file_len);
  o.create = args.has("--create-bucket") ? 1 : 0;
  o.refuse_unfenced = args.has("--refuse-unfenced") ? 1 : 0;
  // What the store says once of a server that does not fence other writers: on stderr.
  o.note = [](const char* line, size_t len, void* payload) {
    static_cast<const Context*>(payload)->note(fmt::format("warning: {}", std::string_view(line, len)));
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
    cx.note(message);
    *exit = exit_of(rc);
  }
  return nullptr;
}

}  // namespace leasejudge::cli
