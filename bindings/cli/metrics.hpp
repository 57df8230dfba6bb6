// The metrics of a step watch in the Prometheus text format (version 0.0.4), served
// on /metrics over HTTP by libmicrohttpd, for a monitoring system to scrape.
//
// Names follow Prometheus's conventions: the leasejudge_ prefix, counters ending in
// _total, times in seconds; every family carries the node's label. A GET or HEAD of
// /metrics answers 200 with the text, any other path 404, any other method 405.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "leasejudge.h"

namespace leasejudge::cli {

// The text of a watch's figures (its node as a label), read now.
std::string watch_metrics(const lj_step_watch_t* watch, std::string_view node);

// Whether addr is an address start() takes (HOST:PORT as it says); a port that cannot
// be bound is found only when it is bound.
bool metrics_address_valid(std::string_view addr);

class MetricsServer {
 public:
  // Serve watch's figures on addr: "HOST:PORT" with an IPv4 address or "localhost"
  // for HOST ("" for every interface) and a PORT of 0 to 65535 (0: any free port).
  // nullptr with why set when addr is malformed or the port cannot be bound. watch
  // outlives the server.
  static std::unique_ptr<MetricsServer> start(std::string_view addr, const lj_step_watch_t* watch, std::string node,
                                              std::string& why);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  // The port it listens on.
  int port() const noexcept { return port_; }
  // What it says of a request to url by method: the HTTP status and the body.
  int answer(std::string_view method, std::string_view url, std::string& body, bool& text) const;

 private:
  MetricsServer() = default;
  struct Daemon;
  const lj_step_watch_t* watch_ = nullptr;
  std::string node_;
  int port_ = 0;
  std::unique_ptr<Daemon> daemon_;  // last: stopped before what its thread reads goes
};

}  // namespace leasejudge::cli
