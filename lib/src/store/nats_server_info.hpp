// What a nats-server says of itself when a client connects: its INFO line, read on a
// connection of its own, before any CONNECT. The NATS store picks its write path by
// the version found there (leasejudge/store/nats.hpp).
//
// Private to the NATS store and its tests.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/error.hpp"

namespace leasejudge {

struct NatsServerInfo {
  std::string version;  // as the server gives it: "2.10.27", "2.11.0-RC.1"
  int major = 0, minor = 0, patch = 0;
  std::string name;                       // the server's name ("" when it has none)
  std::vector<std::string> connect_urls;  // the cluster's other servers, "host:port"
};

// The first version whose stream leader checks a write's expected last subject
// sequence as it applies the write (nats-server issue 4320): from it on, a
// replicated bucket fences every writer that sends the expectation.
inline constexpr int kFencedMajor = 2, kFencedMinor = 9, kFencedPatch = 21;
bool fences_other_writers(const NatsServerInfo& info) noexcept;

// Read "INFO {json}\r\n" (the line, with or without its end). Errc::parse, naming
// what is wrong, for anything else: another verb, JSON that is not an object, a
// missing or unreadable version.
Result<NatsServerInfo> parse_nats_info(std::string_view line);

// "host:port" of a server URL ("nats://user:pass@host:4222" -> "host:4222", a
// bracketed IPv6 host kept); a URL without a port gets 4222. Errc::invalid_argument
// for a URL with no host.
Result<std::string> nats_host_port(std::string_view url);

// Connect to host:port and read the INFO line the server sends first, within
// timeout (connecting included). Errc::store naming the address for a server that
// does not answer, closes, or sends more than 1 MiB without a line end; the
// parse's error for a line that is no INFO.
Result<NatsServerInfo> read_nats_info(std::string_view host_port, std::chrono::milliseconds timeout);

}  // namespace leasejudge
