// Test fixture: a nats-server with JetStream that a test starts on a free 127.0.0.1
// port with its own temporary store directory, stops, kills and restarts; and a
// three-node cluster of them on loopback routes, or each node in a network namespace
// of its own (ServerPlace, tests/nemesis.sh). Private to the tests.
//
// nats-server is looked up in LEASEJUDGE_NATS_SERVER, then PATH, then /usr/sbin and
// /usr/local/sbin (Debian installs it in /usr/sbin, not always on a user's PATH).
// Where it is not installed, nats_server_path() is empty and tests skip, saying so
// (SKIP_WITHOUT_NATS_SERVER; a failure under CI=true).
// The nats.c helpers at the end exist only in builds with the NATS store.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#if defined(LEASEJUDGE_HAVE_NATS)
#include <nats/nats.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "leasejudge/store/nats.hpp"
#include "server_process.hpp"
#include "skip.hpp"

// In a test case: skip the rest of it where nats-server is not installed.
#define SKIP_WITHOUT_NATS_SERVER() \
  LJ_REQUIRE_OR_SKIP(::leasejudge::test::NatsServer::installed(), "nats-server is not installed")

namespace leasejudge::test {

inline std::string nats_server_path() {
  return find_executable("LEASEJUDGE_NATS_SERVER", "nats-server", "/usr/sbin:/usr/local/sbin");
}

// One nats-server process. Its port and store directory stay the same across
// restarts, so a restarted server finds its streams again.
class NatsServer {
 public:
  // extra: more command-line arguments (cluster settings). port: the client port (0:
  // a free one here, 4222 in a place of its own). place: where it runs.
  explicit NatsServer(std::vector<std::string> extra = {}, int port = 0, ServerPlace place = {})
      : exe_(nats_server_path()),
        port_(port != 0 ? port : place.here() ? free_port() : 4222),
        extra_(std::move(extra)),
        place_(std::move(place)) {
    dir_ = make_temp_dir("nats");
  }
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;
  ~NatsServer() {
    stop();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  static bool installed() { return !nats_server_path().empty(); }

  // Start with JetStream (the default) or without it.
  bool jetstream = true;

  int port() const { return port_; }
  std::string url() const { return "nats://" + place_.address + ":" + std::to_string(port_); }
  const std::string& dir() const { return dir_; }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Start and wait (up to 15 s) until the client port accepts connections.
  bool start() {
    if (exe_.empty() || dir_.empty() || port_ == 0 || pid_ > 0) return false;
    std::vector<std::string> args = {exe_, "-a", place_.address, "-p", std::to_string(port_)};
    if (jetstream) args.insert(args.end(), {"-js", "-sd", dir_ + "/store"});
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_t pid = spawn_logged(placed(place_, std::move(args)), dir_ + "/server.log");
    if (pid == 0) return false;
    pid_ = pid;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return false;
      }
      if (place_.here() ? port_accepts(port_) : port_accepts(place_.address, port_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill();
    return false;
  }

  // Stop gracefully (SIGTERM), killing it when it does not end within 10 s.
  void stop() { end(SIGTERM); }
  // SIGKILL: the server dies without a word to anyone.
  void kill() { end(SIGKILL); }
  bool restart() {
    stop();
    return start();
  }

 private:
  void end(int sig) {
    end_process(pid_, sig, std::chrono::seconds(10));
    pid_ = 0;
  }

  std::string exe_;
  int port_ = 0;
  std::vector<std::string> extra_;
  ServerPlace place_;
  std::string dir_;
  pid_t pid_ = 0;
};

// Three JetStream servers routed to each other on 127.0.0.1; or each in a place of
// its own (a network namespace and address), on the usual ports 4222 and 6222.
class NatsCluster {
 public:
  static constexpr int kNodes = 3;

  explicit NatsCluster(std::vector<ServerPlace> places = {}) {
    places.resize(kNodes);
    int client[kNodes];
    int route[kNodes];
    for (int i = 0; i < kNodes; ++i) {
      client[i] = places[i].here() ? free_port() : 4222;
      route[i] = places[i].here() ? free_port() : 6222;
    }
    std::string routes;
    for (int i = 0; i < kNodes; ++i) {
      if (!routes.empty()) routes += ',';
      routes += "nats://" + places[i].address + ":" + std::to_string(route[i]);
    }
    for (int i = 0; i < kNodes; ++i) {
      std::vector<std::string> extra = {"-n",
                                        "lj-node-" + std::to_string(i),
                                        "--cluster_name",
                                        "leasejudge",
                                        "--cluster",
                                        "nats://" + places[i].address + ":" + std::to_string(route[i]),
                                        "--routes",
                                        routes};
      nodes_.push_back(std::make_unique<NatsServer>(std::move(extra), client[i], places[i]));
    }
  }

  bool start() {
    for (auto& n : nodes_) {
      if (!n->start()) return false;
    }
    return true;
  }

  NatsServer& node(int i) { return *nodes_.at(static_cast<std::size_t>(i)); }
  std::vector<std::string> urls() const {
    std::vector<std::string> out;
    for (const auto& n : nodes_) out.push_back(n->url());
    return out;
  }

 private:
  std::vector<std::unique_ptr<NatsServer>> nodes_;
};

#if defined(LEASEJUDGE_HAVE_NATS)

// Open a store, retrying while a fresh server or cluster is still getting ready
// (a cluster elects its JetStream leaders after its ports open). Gives up after
// `patience` and returns the last result.
inline Result<std::unique_ptr<NatsStore>> open_when_ready(
    const NatsOptions& options, std::chrono::milliseconds patience = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    auto store = NatsStore::open(options);
    if (store.ok() || store.code() != Errc::store || std::chrono::steady_clock::now() > deadline) return store;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Fill a bucket fast for large tests: asynchronous publishes, many in flight, over a
// connection of its own (the store's own writes are one request each). Returns how
// many were acknowledged.
inline std::size_t seed_bucket(const std::string& url, const std::string& bucket,
                               const std::vector<std::pair<std::string, std::string>>& entries) {
  natsConnection* nc = nullptr;
  if (natsConnection_ConnectTo(&nc, url.c_str()) != NATS_OK) return 0;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = 4096;
  jo.PublishAsync.StallWait = 30000;  // a full window waits for acks, never fails
  jsCtx* js = nullptr;
  std::size_t sent = 0;
  if (natsConnection_JetStream(&js, nc, &jo) == NATS_OK) {
    std::string prefix = "$KV." + bucket + ".";
    for (const auto& [k, v] : entries) {
      std::string subject = prefix + k;
      if (js_PublishAsync(js, subject.c_str(), v.data(), static_cast<int>(v.size()), nullptr) != NATS_OK) break;
      ++sent;
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 60000;
    if (js_PublishAsyncComplete(js, &po) != NATS_OK) sent = 0;
    natsMsgList failed{};
    if (js_PublishAsyncGetPendingList(&failed, js) == NATS_OK) {
      sent -= static_cast<std::size_t>(failed.Count);
      natsMsgList_Destroy(&failed);
    }
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return sent;
}

// The index of the cluster node that leads stream (its name is lj-node-<i>), asked of
// the first node that answers; -1 when none can say.
inline int stream_leader(NatsCluster& cluster, const std::string& stream) {
  for (int i = 0; i < NatsCluster::kNodes; ++i) {
    if (!cluster.node(i).running()) continue;
    natsConnection* nc = nullptr;
    if (natsConnection_ConnectTo(&nc, cluster.node(i).url().c_str()) != NATS_OK) continue;
    jsCtx* js = nullptr;
    jsStreamInfo* si = nullptr;
    int leader = -1;
    if (natsConnection_JetStream(&js, nc, nullptr) == NATS_OK &&
        js_GetStreamInfo(&si, js, stream.c_str(), nullptr, nullptr) == NATS_OK && si->Cluster != nullptr &&
        si->Cluster->Leader != nullptr) {
      std::string name = si->Cluster->Leader;
      if (name.rfind("lj-node-", 0) == 0) leader = std::atoi(name.c_str() + 8);
    }
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    if (leader >= 0) return leader;
  }
  return -1;
}

// Scale stream to `replicas` (asked of the server at url), and wait until its leader
// and every replica are current. False when the server refuses or 30 s pass.
inline bool scale_stream(const std::string& url, const std::string& stream, int replicas) {
  natsConnection* nc = nullptr;
  if (natsConnection_ConnectTo(&nc, url.c_str()) != NATS_OK) return false;
  jsCtx* js = nullptr;
  bool ok = natsConnection_JetStream(&js, nc, nullptr) == NATS_OK;
  jsStreamInfo* si = nullptr;
  if (ok) ok = js_GetStreamInfo(&si, js, stream.c_str(), nullptr, nullptr) == NATS_OK;
  if (ok) {
    si->Config->Replicas = replicas;
    jsStreamInfo* updated = nullptr;
    ok = js_UpdateStream(&updated, js, si->Config, nullptr, nullptr) == NATS_OK;
    jsStreamInfo_Destroy(updated);
  }
  jsStreamInfo_Destroy(si);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ok) {
    jsStreamInfo* now = nullptr;
    bool current = false;
    if (js_GetStreamInfo(&now, js, stream.c_str(), nullptr, nullptr) == NATS_OK && now->Cluster != nullptr &&
        now->Cluster->Leader != nullptr && now->Config->Replicas == replicas &&
        now->Cluster->ReplicasLen == replicas - 1) {
      current = true;
      for (int i = 0; i < now->Cluster->ReplicasLen; ++i) current = current && now->Cluster->Replicas[i]->Current;
    }
    jsStreamInfo_Destroy(now);
    if (current) break;
    if (std::chrono::steady_clock::now() > deadline) ok = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return ok;
}

#endif  // LEASEJUDGE_HAVE_NATS

// The version the nats-server in use says of itself (`nats-server --version`:
// "nats-server: v2.10.27" -> "2.10.27"); "" when it cannot be run.
inline std::string nats_server_version() {
  std::string exe = nats_server_path();
  if (exe.empty()) return {};
  std::string cmd = "'" + exe + "' --version 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {};
  char buf[256] = {0};
  std::string out = std::fgets(buf, sizeof buf, p) != nullptr ? buf : "";
  ::pclose(p);
  auto v = out.find(" v");
  if (v == std::string::npos) return {};
  out = out.substr(v + 2);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace leasejudge::test
