// A nats-server's INFO line: read on a socket of its own, parsed with simdjson.
#include "nats_server_info.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <simdjson.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <tuple>

namespace leasejudge {

namespace {

constexpr std::size_t kMaxInfoBytes = 1 << 20;

// The leading number of text (and what follows it); -1 when there is none.
int leading_number(std::string_view& text) {
  int n = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc()) return -1;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return n;
}

// "2.10.27", "2.11.0-RC.1": major.minor.patch, each a number.
bool read_version(std::string_view v, NatsServerInfo& out) {
  out.major = leading_number(v);
  if (out.major < 0 || v.empty() || v.front() != '.') return false;
  v.remove_prefix(1);
  out.minor = leading_number(v);
  if (out.minor < 0 || v.empty() || v.front() != '.') return false;
  v.remove_prefix(1);
  out.patch = leading_number(v);
  return out.patch >= 0;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// A connected socket to host:port, or the reason none could be had.
Result<int> connect_within(const std::string& host, const std::string& port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Error{Errc::store, fmt::format("looking up {}: {}", host, ::gai_strerror(rc))};
  }
  std::string last = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Fd s;
    s.fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (s.fd < 0) continue;
    if (::connect(s.fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = std::strerror(errno);
      continue;
    }
    pollfd p{s.fd, POLLOUT, 0};
    int ready = ::poll(&p, 1, ms_left(deadline));
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (ready <= 0) {
      last = "no answer in time";
      continue;
    }
    if (::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
      last = std::strerror(soerr != 0 ? soerr : errno);
      continue;
    }
    ::freeaddrinfo(found);
    int fd = s.fd;
    s.fd = -1;
    return fd;
  }
  ::freeaddrinfo(found);
  return Error{Errc::store, last};
}

}  // namespace

bool fences_other_writers(const NatsServerInfo& info) noexcept {
  return std::tie(info.major, info.minor, info.patch) >= std::tie(kFencedMajor, kFencedMinor, kFencedPatch);
}

Result<NatsServerInfo> parse_nats_info(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  constexpr std::string_view verb = "INFO ";
  if (line.substr(0, verb.size()) != verb) {
    return Error{Errc::parse, "the server's first line is not INFO"};
  }
  line.remove_prefix(verb.size());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
    return Error{Errc::parse, "the server's INFO is not a JSON object"};
  }
  NatsServerInfo info;
  std::string_view v;
  if (doc["version"].get_string().get(v) != simdjson::SUCCESS) {
    return Error{Errc::parse, "the server's INFO has no version"};
  }
  info.version.assign(v);
  if (!read_version(v, info)) {
    return Error{Errc::parse, fmt::format("the server's version \"{}\" is not major.minor.patch", info.version)};
  }
  std::string_view name;
  if (doc["server_name"].get_string().get(name) == simdjson::SUCCESS) info.name.assign(name);
  simdjson::dom::array urls;
  if (doc["connect_urls"].get_array().get(urls) == simdjson::SUCCESS) {
    for (simdjson::dom::element u : urls) {
      std::string_view s;
      if (u.get_string().get(s) == simdjson::SUCCESS && !s.empty()) info.connect_urls.emplace_back(s);
    }
  }
  return info;
}

Result<std::string> nats_host_port(std::string_view url) {
  if (auto scheme = url.find("://"); scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  if (auto at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
  if (auto slash = url.find('/'); slash != std::string_view::npos) url = url.substr(0, slash);
  if (url.empty()) return Error{Errc::invalid_argument, "a NATS server URL names no host"};
  std::size_t host_end = url.front() == '[' ? url.find(']') : url.rfind(':');
  if (url.front() == '[') {
    if (host_end == std::string_view::npos) return Error{Errc::invalid_argument, "a NATS server URL's host is cut"};
    ++host_end;
  }
  if (host_end == std::string_view::npos || host_end >= url.size()) return fmt::format("{}:4222", url);
  if (host_end == 0) return Error{Errc::invalid_argument, "a NATS server URL names no host"};
  return std::string(url);
}

Result<NatsServerInfo> read_nats_info(std::string_view host_port, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::size_t colon = host_port.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == host_port.size()) {
    return Error{Errc::invalid_argument, fmt::format("\"{}\" is not host:port", host_port)};
  }
  std::string host(host_port.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string port(host_port.substr(colon + 1));
  auto fd = connect_within(host, port, deadline);
  if (!fd) return Error{Errc::store, fmt::format("reading the INFO of {}: {}", host_port, fd.error().message)};
  Fd s;
  s.fd = *fd;
  std::string line;
  char buf[4096];
  for (;;) {
    pollfd p{s.fd, POLLIN, 0};
    if (::poll(&p, 1, ms_left(deadline)) <= 0) {
      return Error{Errc::store, fmt::format("reading the INFO of {}: no line within {} ms", host_port,
                                            timeout.count())};
    }
    ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Error{Errc::store, fmt::format("reading the INFO of {}: the server closed", host_port)};
    line.append(buf, static_cast<std::size_t>(n));
    if (auto end = line.find('\n'); end != std::string::npos) return parse_nats_info(line.substr(0, end));
    if (line.size() > kMaxInfoBytes) {
      return Error{Errc::store, fmt::format("reading the INFO of {}: over {} bytes without a line end", host_port,
                                            kMaxInfoBytes)};
    }
  }
}

}  // namespace leasejudge
