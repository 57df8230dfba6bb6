// Stores by their URL (leasejudge/store_url.hpp).
#include "leasejudge/store_url.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <vector>

#include "leasejudge/store/file.hpp"
#include "leasejudge/store/memory.hpp"
#if defined(LEASEJUDGE_HAVE_NATS)
#include "leasejudge/store/nats.hpp"
#endif
#if defined(LEASEJUDGE_HAVE_ETCD)
#include "leasejudge/store/etcd.hpp"
#endif

namespace leasejudge {

namespace {

constexpr const char* kForms =
    "mem:, file:DIR, nats://[user:pass@]host:port[,host:port...]/BUCKET, "
    "etcd://[user:pass@]host:port[,host:port...]/PREFIX";
constexpr const char* kEtcdForm = "etcd://[user:pass@]host:port[,host:port...]/PREFIX";

struct NatsUrl {
  std::vector<std::string> servers;
  std::string bucket;
  bool tls = false;
};

// nats:// or tls://, one or more servers, then /BUCKET; false for anything else.
bool parse_nats_url(std::string_view url, NatsUrl& out) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return false;
  std::string_view scheme = url.substr(0, scheme_end);
  out.tls = scheme == "tls";
  std::string_view rest = url.substr(scheme_end + 3);
  auto slash = rest.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == rest.size()) return false;
  out.bucket = std::string(rest.substr(slash + 1));
  std::string_view hosts = rest.substr(0, slash);
  std::string_view userinfo;
  if (auto at = hosts.find('@'); at != std::string_view::npos && at < hosts.find(',')) {
    userinfo = hosts.substr(0, at);
    hosts.remove_prefix(at + 1);
  }
  while (!hosts.empty()) {
    auto comma = hosts.find(',');
    std::string_view h = hosts.substr(0, comma);
    if (h.empty() || h.find('/') != std::string_view::npos) return false;
    std::string server = fmt::format("{}://", scheme);
    if (!userinfo.empty() && h.find('@') == std::string_view::npos) server += fmt::format("{}@", userinfo);
    server += h;
    out.servers.push_back(std::move(server));
    if (comma == std::string_view::npos) break;
    hosts.remove_prefix(comma + 1);
    if (hosts.empty()) return false;  // a trailing comma
  }
  return !out.servers.empty();
}

struct EtcdUrl {
  std::vector<std::string> endpoints;
  std::string user, password, prefix;
};

// host:port with a host and a port in 1..65535.
bool valid_endpoint(std::string_view e) {
  auto colon = e.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == e.size() || colon + 6 < e.size()) return false;
  if (e.find_first_of("/@?#") != std::string_view::npos) return false;
  unsigned port = 0;
  for (char ch : e.substr(colon + 1)) {
    if (ch < '0' || ch > '9') return false;
    port = port * 10 + static_cast<unsigned>(ch - '0');
  }
  return port >= 1 && port <= 65535;
}

// etcd://[user:pass@]host:port[,host:port...]/PREFIX; what is wrong, or "".
std::string parse_etcd_url(std::string_view url, EtcdUrl& out) {
  std::string_view rest = url.substr(7);
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    auto colon = userinfo.find(':');
    if (colon == 0 || userinfo.empty()) return "a user is empty";
    out.user = std::string(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) out.password = std::string(userinfo.substr(colon + 1));
    rest.remove_prefix(at + 1);
  }
  auto slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 == rest.size()) return "it names no prefix";
  out.prefix = std::string(rest.substr(slash + 1));
  std::string_view hosts = rest.substr(0, slash);
  for (;;) {
    auto comma = hosts.find(',');
    std::string_view h = hosts.substr(0, comma);
    if (!valid_endpoint(h)) return fmt::format("\"{}\" is not host:port (a port in 1..65535)", h);
    out.endpoints.emplace_back(h);
    if (comma == std::string_view::npos) return "";
    hosts.remove_prefix(comma + 1);
  }
}

Result<std::unique_ptr<Store>> open_etcd(std::string_view url, const StoreUrlOptions& o) {
  EtcdUrl parsed;
  if (std::string wrong = parse_etcd_url(url, parsed); !wrong.empty()) {
    return Error{Errc::invalid_argument, fmt::format("{}: it is not {}", wrong, kEtcdForm)};
  }
#if defined(LEASEJUDGE_HAVE_ETCD)
  EtcdOptions e;
  e.endpoints = std::move(parsed.endpoints);
  e.prefix = std::move(parsed.prefix);
  e.user = std::move(parsed.user);
  e.password = std::move(parsed.password);
  e.tls_ca_file = o.tls_ca_file;
  e.tls_cert_file = o.tls_cert_file;
  e.tls_key_file = o.tls_key_file;
  e.note = o.note;
  auto store = EtcdStore::open(e);
  if (!store) return std::move(store).error();
  return std::unique_ptr<Store>(std::move(store).value());
#else
  (void)o;
  return Error{Errc::unsupported, "this build of leasejudge has no etcd support (libcurl was not found)"};
#endif
}

Result<std::unique_ptr<Store>> open_file(std::string_view dir, const StoreUrlOptions& o) {
  if (dir.empty()) return Error{Errc::invalid_argument, "file: names no directory"};
  std::string path(dir);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT && !o.create) {
    return Error{Errc::store, fmt::format("the directory {} does not exist (nothing was made; {} makes it)", path,
                                          o.create_name.empty() ? "creation" : o.create_name)};
  }
  auto store = FileStore::open(path);
  if (!store) return std::move(store).error();
  return std::unique_ptr<Store>(std::move(store).value());
}

Result<std::unique_ptr<Store>> open_nats(std::string_view url, const StoreUrlOptions& o) {
  NatsUrl parsed;
  if (!parse_nats_url(url, parsed)) {
    return Error{Errc::invalid_argument, "it is not nats://[user:pass@]host:port[,host:port...]/BUCKET"};
  }
#if defined(LEASEJUDGE_HAVE_NATS)
  NatsOptions n;
  n.urls = std::move(parsed.servers);
  n.bucket = std::move(parsed.bucket);
  n.tls = parsed.tls;
  n.credentials_file = o.credentials_file;
  n.tls_ca_file = o.tls_ca_file;
  n.tls_cert_file = o.tls_cert_file;
  n.tls_key_file = o.tls_key_file;
  n.create_bucket = o.create;
  n.refuse_unfenced = o.refuse_unfenced;
  n.note = o.note;
  n.create_name = o.create_name;
  auto store = NatsStore::open(n);
  if (!store) return std::move(store).error();
  return std::unique_ptr<Store>(std::move(store).value());
#else
  (void)o;
  return Error{Errc::unsupported, "this build of leasejudge has no NATS support (libnats was not found)"};
#endif
}

}  // namespace

std::string shown_store_url(std::string_view url) {
  auto scheme = url.find("://");
  auto at = url.rfind('@');
  if (scheme == std::string_view::npos || at == std::string_view::npos || at < scheme) return std::string(url);
  return fmt::format("{}***{}", url.substr(0, scheme + 3), url.substr(at));
}

Result<std::unique_ptr<Store>> open_store_url(std::string_view url, const StoreUrlOptions& o) {
  if (url.find('\0') != std::string_view::npos) {
    return Error{Errc::invalid_argument, "a store URL holds a NUL byte"};
  }
  if (url == "mem:") return std::unique_ptr<Store>(std::make_unique<MemoryStore>());
  Result<std::unique_ptr<Store>> opened =
      url.substr(0, 5) == "file:"                                         ? open_file(url.substr(5), o)
      : url.substr(0, 7) == "nats://" || url.substr(0, 6) == "tls://" ? open_nats(url, o)
      : url.substr(0, 7) == "etcd://"                                     ? open_etcd(url, o)
                                                                          : Error{Errc::invalid_argument,
                                                                                  fmt::format("not a store URL ({})", kForms)};
  if (opened) return opened;
  // Every sentence names the store, as a user wrote it (a password as ***; cut when long).
  std::string shown = shown_store_url(url);
  if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
  Error e = std::move(opened).error();
  e.message = fmt::format("opening {}: {}", shown, e.message);
  return e;
}

}  // namespace leasejudge
