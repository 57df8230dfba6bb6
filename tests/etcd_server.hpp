// Test fixture: a cluster of 1 or 3 etcd members (/usr/bin/etcd, never the packaged
// service) on free 127.0.0.1 ports, or each in a network namespace of its own
// (ServerPlace, tests/nemesis.sh), each with its data in a temporary directory,
// started, killed (SIGKILL, also when the test fails: the destructor) and restarted.
// Private to the tests. leader() needs the test linked with libcurl
// (LEASEJUDGE_ETCD_STATUS); the others do not.
//
// etcd is looked up in LEASEJUDGE_ETCD, then PATH, then /usr/bin. Where it is not
// installed, tests skip (SKIP_WITHOUT_ETCD; a failure under CI=true).
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(LEASEJUDGE_ETCD_STATUS)
#include <curl/curl.h>
#include <simdjson.h>
#endif

#include "leasejudge/store/etcd.hpp"
#include "server_process.hpp"
#include "skip.hpp"

#define SKIP_WITHOUT_ETCD() LJ_REQUIRE_OR_SKIP(!::leasejudge::test::etcd_path().empty(), "etcd is not installed")

namespace leasejudge::test {

inline std::string etcd_path() {
  return find_executable("LEASEJUDGE_ETCD", "etcd", "/usr/bin");
}

class EtcdCluster {
 public:
  // places: where each member runs (none: every one here, on 127.0.0.1 and free
  // ports; in a place of its own, on its address and the usual ports 2379 and 2380);
  // extra: more flags for every member (e.g. {"--max-txn-ops", "8"}).
  explicit EtcdCluster(int members, std::vector<ServerPlace> places = {}, std::vector<std::string> extra = {})
      : exe_(etcd_path()), dir_(make_temp_dir("etcd")), places_(std::move(places)), extra_(std::move(extra)) {
    places_.resize(static_cast<std::size_t>(members));
    for (int i = 0; i < members; ++i) {
      const bool here = places_[static_cast<std::size_t>(i)].here();
      client_.push_back(here ? free_port() : 2379);
      peer_.push_back(here ? free_port() : 2380);
      pid_.push_back(0);
    }
  }
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;
  ~EtcdCluster() {
    for (std::size_t i = 0; i < pid_.size(); ++i) kill(i);
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  std::size_t size() const { return client_.size(); }
  std::string endpoint(std::size_t i) const { return places_[i].address + ":" + std::to_string(client_[i]); }
  std::vector<std::string> endpoints() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < size(); ++i) out.push_back(endpoint(i));
    return out;
  }
  // etcd://host:port,.../prefix
  std::string url(const std::string& prefix) const {
    std::string u = "etcd://";
    for (std::size_t i = 0; i < size(); ++i) u += (i > 0 ? "," : "") + endpoint(i);
    return u + "/" + prefix;
  }
  pid_t pid(std::size_t i) const { return pid_[i]; }

  // Start every member and wait (up to 30 s) until the cluster answers a linearizable read.
  bool start() {
    if (exe_.empty() || dir_.empty()) return false;
    for (std::size_t i = 0; i < size(); ++i) {
      if (!start_member(i)) return false;
    }
    return healthy(std::chrono::seconds(30));
  }
  bool start_member(std::size_t i) {
    if (pid_[i] > 0) return true;
    std::vector<std::string> args = member_args(i);
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_t pid = spawn_logged(placed(places_[i], std::move(args)), dir_ + "/member" + std::to_string(i) + ".log");
    if (pid == 0) return false;
    pid_[i] = pid;
    return true;
  }
  // SIGSTOP / SIGCONT one member: it keeps its sockets and answers nothing meanwhile;
  // pause: once every thread of it is stopped (false when that does not come in 2 s).
  bool pause(std::size_t i) const { return stop_process(pid_[i]); }
  void resume(std::size_t i) const {
    if (pid_[i] > 0) ::kill(pid_[i], SIGCONT);
  }
  // SIGKILL one member and reap it.
  void kill(std::size_t i) {
    end_process(pid_[i], SIGKILL, std::chrono::seconds(10));
    pid_[i] = 0;
  }
  bool healthy(std::chrono::seconds patience) const {
    auto deadline = std::chrono::steady_clock::now() + patience;
    while (std::chrono::steady_clock::now() < deadline) {
      EtcdOptions o;
      o.endpoints = endpoints();
      o.prefix = "health";
      o.request_timeout = std::chrono::milliseconds(1000);
      if (auto s = EtcdStore::open(o); s.ok() && (*s)->get("probe").ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

#if defined(LEASEJUDGE_ETCD_STATUS)
  // The index of the member that leads, as the first running member that answers
  // POST /v3/maintenance/status says (its `leader` is the header's member_id of one of
  // them); -1 when none can say.
  int leader() const {
    std::vector<std::string> ids(size());
    std::string leader_id;
    for (std::size_t i = 0; i < size(); ++i) {
      if (pid_[i] <= 0) continue;
      std::string body = post(endpoint(i), "/v3/maintenance/status");
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      std::string_view id, leads;
      if (parser.parse(body).get(doc) != simdjson::SUCCESS) continue;
      if (doc["header"]["member_id"].get(id) != simdjson::SUCCESS) continue;
      ids[i] = std::string(id);
      if (leader_id.empty() && doc["leader"].get(leads) == simdjson::SUCCESS) leader_id = std::string(leads);
    }
    for (std::size_t i = 0; i < size(); ++i)
      if (!leader_id.empty() && ids[i] == leader_id) return static_cast<int>(i);
    return -1;
  }
  // The txns member i has answered OK so far, as its /metrics counts them (etcd's
  // gateway hands each JSON request to the member's own gRPC server); -1 when it cannot
  // say.
  long txns_answered(std::size_t i) const {
    const std::string body = post(endpoint(i), "/metrics", false);
    const std::string name =
        R"(grpc_server_handled_total{grpc_code="OK",grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} )";
    const std::size_t at = body.find(name);
    return at == std::string::npos ? -1 : std::stol(body.substr(at + name.size()));
  }
#endif

 private:
#if defined(LEASEJUDGE_ETCD_STATUS)
  // The body of a POST of "{}" to path on endpoint, or of a GET ("" when it fails or
  // takes 1 s).
  static std::string post(const std::string& endpoint, const char* path, bool posted = true) {
    std::string out;
    CURL* curl = curl_easy_init();
    if (curl == nullptr) return out;
    std::string url = "http://" + endpoint + path;
    auto sink = +[](char* p, size_t size, size_t n, void* user) {
      static_cast<std::string*>(user)->append(p, size * n);
      return size * n;
    };
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    if (posted) curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "{}");
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 1000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out);
    if (curl_easy_perform(curl) != CURLE_OK) out.clear();
    curl_easy_cleanup(curl);
    return out;
  }
#endif

  std::vector<std::string> member_args(std::size_t i) const {
    std::string cluster;
    for (std::size_t j = 0; j < size(); ++j) {
      cluster += (j > 0 ? "," : "") + name(j) + "=" + peer_url(j);
    }
    std::string client = "http://" + endpoint(i);
    std::string peer = peer_url(i);
    return {exe_,
            "--name",
            name(i),
            "--data-dir",
            dir_ + "/" + name(i),
            "--listen-client-urls",
            client,
            "--advertise-client-urls",
            client,
            "--listen-peer-urls",
            peer,
            "--initial-advertise-peer-urls",
            peer,
            "--initial-cluster",
            cluster,
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            "leasejudge-test",
            "--heartbeat-interval",
            "50",
            "--election-timeout",
            "500",
            "--logger",
            "zap",
            "--log-outputs",
            "stderr"};
  }
  static std::string name(std::size_t i) {
    return "m" + std::to_string(i);
  }
  std::string peer_url(std::size_t i) const {
    return "http://" + places_[i].address + ":" + std::to_string(peer_[i]);
  }

  std::string exe_, dir_;
  std::vector<ServerPlace> places_;
  std::vector<std::string> extra_;
  std::vector<int> client_, peer_;
  std::vector<pid_t> pid_;
};

// One cluster of each size for the whole test program, started on first use.
inline EtcdCluster& shared_etcd_cluster(int members) {
  static std::map<int, std::unique_ptr<EtcdCluster>> clusters;
  auto& c = clusters[members];
  if (!c) {
    c = std::make_unique<EtcdCluster>(members);
    REQUIRE_MESSAGE(c->start(), "etcd cluster of " << members << " did not start");
  }
  return *c;
}

// A prefix of keys no other test of the program uses: tag, this process's pid, a count.
inline std::string fresh_etcd_prefix(std::string_view tag) {
  static int n = 0;
  return std::string(tag) + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

}  // namespace leasejudge::test
