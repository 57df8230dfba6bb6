// The metrics endpoint: a libmicrohttpd daemon on its own thread, each scrape reading
// the watch's figures as they are then.
#include "metrics.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <type_traits>

#include "command.hpp"

namespace leasejudge::cli {

namespace {

// A label value as the text format writes it: backslash, quote and newline escaped.
std::string label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

struct Family {
  const char* name;
  const char* type;  // counter, gauge
  const char* help;
  int figure;  // lj_step_watch_figure_t
};

constexpr Family counters[] = {
    {"leasejudge_sweeps_total", "counter", "Whole sweeps of the node's steps: at start, the rounds, after a gap.",
     LJ_WATCH_SWEEPS},
    {"leasejudge_rounds_total", "counter", "Periodic rounds (a whole sweep every interval).", LJ_WATCH_ROUNDS},
    {"leasejudge_changes_total", "counter", "Changes of the node's keys the watch saw.", LJ_WATCH_CHANGES},
    {"leasejudge_ends_total", "counter", "Steps left running by a gone owner, ended as failed.", LJ_WATCH_ENDS},
    {"leasejudge_deletes_total", "counter", "Asks a gone owner held, deleted.", LJ_WATCH_DELETES},
    {"leasejudge_changed_total", "counter", "Ends and deletes skipped: the key moved since it was read.",
     LJ_WATCH_CHANGED},
    {"leasejudge_unknown_writes_total", "counter", "Ends and deletes whose acknowledgement never came.",
     LJ_WATCH_UNKNOWN},
    {"leasejudge_store_errors_total", "counter", "Failed store calls: a watch, a sweep's read, a write.",
     LJ_WATCH_STORE_ERRORS},
    {"leasejudge_store_timeouts_total", "counter",
     "Waits on the store past its patience, and writes whose acknowledgement never came.", LJ_WATCH_STORE_TIMEOUTS},
    {"leasejudge_watch_reconnects_total", "counter", "Watches of the node's keys opened again after a failure.",
     LJ_WATCH_RECONNECTS},
};

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

double seconds(uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

// HOST:PORT into an IPv4 address; false when malformed.
bool address_of(std::string_view addr, sockaddr_in& sa) {
  auto colon = addr.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string host(addr.substr(0, colon));
  std::string_view port = addr.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  unsigned p = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    p = p * 10 + static_cast<unsigned>(c - '0');
  }
  if (p > 65535) return false;
  std::memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(p));
  if (host.empty()) {
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    return true;
  }
  if (host == "localhost") host = "127.0.0.1";
  return ::inet_pton(AF_INET, host.c_str(), &sa.sin_addr) == 1;
}

// libmicrohttpd, loaded when metrics are first served: every other verb (and the bash
// builtin) starts without it and the TLS libraries it brings, some milliseconds of a
// command's start. Loaded once, for the life of the process.
struct Mhd {
  decltype(&MHD_start_daemon) start_daemon = nullptr;
  decltype(&MHD_stop_daemon) stop_daemon = nullptr;
  decltype(&MHD_get_daemon_info) get_daemon_info = nullptr;
  decltype(&MHD_create_response_from_buffer) create_response_from_buffer = nullptr;
  decltype(&MHD_add_response_header) add_response_header = nullptr;
  decltype(&MHD_queue_response) queue_response = nullptr;
  decltype(&MHD_destroy_response) destroy_response = nullptr;
  std::string why;  // why it could not be loaded; empty once loaded

  static const Mhd& get() {
    static const Mhd loaded = load();
    return loaded;
  }

 private:
  static Mhd load() {
    Mhd m;
    void* lib = ::dlopen(LEASEJUDGE_MICROHTTPD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = ::dlerror();
      m.why = fmt::format("{} cannot be loaded ({})", LEASEJUDGE_MICROHTTPD_SONAME, e != nullptr ? e : "no reason");
      return m;
    }
    bool all = true;
    auto bind = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
      if (fn == nullptr && all) {
        all = false;
        m.why = fmt::format("{} has no {}", LEASEJUDGE_MICROHTTPD_SONAME, name);
      }
    };
    bind(m.start_daemon, "MHD_start_daemon");
    bind(m.stop_daemon, "MHD_stop_daemon");
    bind(m.get_daemon_info, "MHD_get_daemon_info");
    bind(m.create_response_from_buffer, "MHD_create_response_from_buffer");
    bind(m.add_response_header, "MHD_add_response_header");
    bind(m.queue_response, "MHD_queue_response");
    bind(m.destroy_response, "MHD_destroy_response");
    return m;
  }
};

MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*,
                      const char*, size_t*, void**) {
  const auto* server = static_cast<const MetricsServer*>(cls);
  std::string body;
  bool text = false;
  int status = 500;
  try {
    status = server->answer(method, url, body, text);
  } catch (...) {
    body = "the metrics could not be read\n";
  }
  const Mhd& mhd = Mhd::get();  // loaded: the daemon that calls this was started through it
  MHD_Response* response = mhd.create_response_from_buffer(body.size(), body.data(), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  mhd.add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                          text ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) mhd.add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  MHD_Result queued = mhd.queue_response(connection, static_cast<unsigned>(status), response);
  mhd.destroy_response(response);
  return queued;
}

}  // namespace

std::string watch_metrics(const lj_step_watch_t* watch, std::string_view node) {
  std::string n = label(node);
  std::string out;
  for (const Family& f : counters) {
    family(out, f.name, f.type, f.help);
    out += fmt::format("{}{{node=\"{}\"}} {}\n", f.name, n, lj_step_watch_figure(watch, f.figure));
  }
  family(out, "leasejudge_keys_judged_total", "counter", "Keys judged, in sweeps and as they changed, by reason.");
  for (int r = LJ_STEP_OTHER_NODE; r <= LJ_STEP_STARTED_SINCE; ++r)
    out += fmt::format("leasejudge_keys_judged_total{{node=\"{}\",reason=\"{}\"}} {}\n", n, lj_step_reason_name(r),
                       lj_step_watch_judged(watch, r));
  family(out, "leasejudge_last_sweep_duration_seconds", "gauge", "The last whole sweep's duration.");
  out += fmt::format("leasejudge_last_sweep_duration_seconds{{node=\"{}\"}} {}\n", n,
                     seconds(lj_step_watch_figure(watch, LJ_WATCH_LAST_SWEEP_NS)));
  uint64_t at = lj_step_watch_figure(watch, LJ_WATCH_LAST_SWEEP_UNIX_NS);
  family(out, "leasejudge_last_sweep_timestamp_seconds", "gauge",
         "When the last whole sweep ended, in seconds since the Unix epoch (0: none yet).");
  out += fmt::format("leasejudge_last_sweep_timestamp_seconds{{node=\"{}\"}} {}\n", n, seconds(at));
  if (at > 0) {
    auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                   .count();
    double age = now > static_cast<int64_t>(at) ? seconds(static_cast<uint64_t>(now) - at) : 0.0;
    family(out, "leasejudge_last_sweep_age_seconds", "gauge", "How long ago the last whole sweep ended.");
    out += fmt::format("leasejudge_last_sweep_age_seconds{{node=\"{}\"}} {}\n", n, age);
  }
  family(out, "leasejudge_last_clean_sweep_timestamp_seconds", "gauge",
         "When the last whole sweep that failed nothing ended, in seconds since the Unix epoch (0: none yet).");
  out += fmt::format("leasejudge_last_clean_sweep_timestamp_seconds{{node=\"{}\"}} {}\n", n,
                     seconds(lj_step_watch_figure(watch, LJ_WATCH_LAST_CLEAN_SWEEP_UNIX_NS)));
  family(out, "leasejudge_watch_lag_seconds", "gauge",
         "The age of the last change the watch handed over when it was judged.");
  out += fmt::format("leasejudge_watch_lag_seconds{{node=\"{}\"}} {}\n", n,
                     seconds(lj_step_watch_figure(watch, LJ_WATCH_LAG_NS)));
  return out;
}

bool metrics_address_valid(std::string_view addr) {
  sockaddr_in sa{};
  return address_of(addr, sa);
}

struct MetricsServer::Daemon {
  MHD_Daemon* d = nullptr;
  ~Daemon() {
    if (d != nullptr) Mhd::get().stop_daemon(d);
  }
};

std::unique_ptr<MetricsServer> MetricsServer::start(std::string_view addr, const lj_step_watch_t* watch,
                                                    std::string node, std::string& why) {
  sockaddr_in sa{};
  if (!address_of(addr, sa)) {
    why = fmt::format("{} is no HOST:PORT (an IPv4 address or localhost, a port from 0 to 65535)", addr);
    return nullptr;
  }
  const Mhd& mhd = Mhd::get();
  if (!mhd.why.empty()) {
    why = fmt::format("serving the metrics: {}", mhd.why);
    return nullptr;
  }
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->watch_ = watch;
  server->node_ = std::move(node);
  server->daemon_ = std::make_unique<Daemon>();
  server->daemon_->d =
      mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, ntohs(sa.sin_port), nullptr, nullptr, on_request, server.get(),
                       MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&sa), MHD_OPTION_CONNECTION_TIMEOUT,
                       static_cast<unsigned>(10), MHD_OPTION_END);
  if (server->daemon_->d == nullptr) {
    why = fmt::format("serving the metrics on {}: the address cannot be bound (in use, or not this machine's)", addr);
    return nullptr;
  }
  const MHD_DaemonInfo* info = mhd.get_daemon_info(server->daemon_->d, MHD_DAEMON_INFO_BIND_PORT);
  server->port_ = info != nullptr ? info->port : ntohs(sa.sin_port);
  return server;
}

MetricsServer::~MetricsServer() = default;

int MetricsServer::answer(std::string_view method, std::string_view url, std::string& body, bool& text) const {
  if (url != "/metrics") {
    body = "not found: the metrics are on /metrics\n";
    return MHD_HTTP_NOT_FOUND;
  }
  if (method != "GET" && method != "HEAD") {
    body = "only GET and HEAD\n";
    return MHD_HTTP_METHOD_NOT_ALLOWED;
  }
  text = true;
  body = watch_metrics(watch_, node_);
  return MHD_HTTP_OK;
}

}  // namespace leasejudge::cli
