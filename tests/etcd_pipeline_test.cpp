// The etcd store's pipeline on three etcd members (127.0.0.1, started here): writes go
// in txns of many keys. A txn some of whose keys another client moved between the read
// and the write reports those changed (exists, for creates) and writes every other key
// once, in a txn sent again; a txn whose answer is lost (a proxy that passes it on to
// etcd and drops etcd's answer) reports each of its keys unknown, and every key found
// written is among the done and the unknown; a txn larger than the cluster's
// --max-txn-ops is split, never refused. "Written once" is counted in revisions: etcd's
// revision moves by one for each txn that lands.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "etcd_server.hpp"
#include "leasejudge/store/etcd.hpp"

#if defined(LEASEJUDGE_HAVE_ETCD)

using namespace leasejudge;
using leasejudge::test::EtcdCluster;
using leasejudge::test::fresh_etcd_prefix;
using leasejudge::test::shared_etcd_cluster;

namespace {

std::unique_ptr<EtcdStore> open_on(const std::vector<std::string>& endpoints, const std::string& prefix,
                                   std::size_t txn_keys = 128,
                                   std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  EtcdOptions o;
  o.endpoints = endpoints;
  o.prefix = prefix;
  o.txn_keys = txn_keys;
  o.request_timeout = timeout;
  auto s = EtcdStore::open(o);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
  return std::move(s).value();
}

std::string key(int i) {
  return fmt::format("k.{:03}", i);
}

// RFC 4648 base64, as etcd's gateway reads a key (written out here, independently of
// the store's libcrypto encoder).
std::string base64(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    unsigned v = 0;
    for (std::size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? digits[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

// The cluster's revision now: a put of a probe key under another prefix (which moves it
// by one itself).
Revision revision_now(EtcdStore& probe) {
  auto r = probe.put("probe", "p");
  REQUIRE(r.ok());
  return *r;
}

// Every outcome of the pipeline, in the order sent.
std::vector<WriteOutcome> drain(WritePipeline& p) {
  std::vector<WriteOutcome> out;
  while (auto o = p.next()) out.push_back(*o);
  return out;
}

int count(const std::vector<WriteOutcome>& out, WriteOutcome::Kind kind) {
  int n = 0;
  for (const auto& o : out) n += o.kind == kind;
  return n;
}

}  // namespace

TEST_SUITE("etcd pipeline") {
  TEST_CASE("keys moved between the read and the write: those changed, every other key written once") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(3);
    const std::string prefix = fresh_etcd_prefix("b");
    auto s = open_on(c.endpoints(), prefix, 64);
    auto other = open_on({c.endpoint(2)}, prefix);
    auto probe = open_on(c.endpoints(), prefix + "-probe");
    std::vector<Revision> read;
    for (int i = 0; i < 40; ++i) {
      auto r = s->put(key(i), "v0");
      REQUIRE(r.ok());
      read.push_back(*r);
    }
    // Another client moves three keys after they were read: an update, a rewrite of a
    // key the pipeline deletes, and a deletion of one it updates.
    REQUIRE(other->put(key(3), "other").ok());
    REQUIRE(other->put(key(10), "other").ok());
    REQUIRE(other->remove(key(29), read[29]).ok());
    const EtcdWriteStats before_stats = s->write_stats();
    const Revision before = revision_now(*probe);
    auto p = s->pipeline();
    for (int i = 0; i < 40; ++i) {
      if (i % 10 == 0)
        p->remove(key(i), read[i]);
      else
        p->update(key(i), "v1", read[i]);
    }
    // The same key twice: etcd takes a key once a txn, so this goes in a txn of its own
    // (and finds the key moved by the write before it).
    p->update(key(1), "v2", read[1]);
    const auto out = drain(*p);
    const Revision after = revision_now(*probe);
    REQUIRE(out.size() == 41);
    CHECK(count(out, WriteOutcome::Kind::done) == 37);
    CHECK(count(out, WriteOutcome::Kind::changed) == 4);
    for (int i : {3, 10, 29, 40}) {
      CHECK(out[i].kind == WriteOutcome::Kind::changed);
      CHECK(out[i].error.code == Errc::changed);
    }
    // One txn with a failed compare (nothing written), the 37 again in one txn, the
    // same key's second write in one more (its compare failed): one revision landed.
    CHECK(after - before == 2);
    const EtcdWriteStats st = s->write_stats();
    CHECK(st.txns - before_stats.txns == 3);
    CHECK(st.resent - before_stats.resent == 37);
    for (int i = 0; i < 40; ++i) {
      auto got = s->get(key(i));
      REQUIRE(got.ok());
      if (i == 3 || i == 10) {
        REQUIRE(got->has_value());
        CHECK((**got).value == "other");
      } else if (i == 29 || i % 10 == 0) {
        CHECK_FALSE(got->has_value());
      } else {
        REQUIRE(got->has_value());
        CHECK((**got).value == "v1");
        CHECK((**got).revision == out[i].revision);
        CHECK((**got).revision == before + 1);
      }
      if (i % 10 == 0 && i != 10) CHECK(out[i].kind == WriteOutcome::Kind::done);
    }
  }

  TEST_CASE("creates where some keys hold a value: exists for exactly those, the others created once") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(3);
    const std::string prefix = fresh_etcd_prefix("b");
    auto s = open_on(c.endpoints(), prefix, 64);
    auto probe = open_on(c.endpoints(), prefix + "-probe");
    REQUIRE(s->put(key(5), "there").ok());
    REQUIRE(s->put(key(9), "there").ok());
    auto gone = s->put(key(12), "gone");  // deleted: no value, so created again
    REQUIRE(gone.ok());
    REQUIRE(s->remove(key(12), *gone).ok());
    const Revision before = revision_now(*probe);
    auto p = s->pipeline();
    for (int i = 0; i < 20; ++i) p->create(key(i), "new");
    const auto out = drain(*p);
    const Revision after = revision_now(*probe);
    REQUIRE(out.size() == 20);
    CHECK(count(out, WriteOutcome::Kind::done) == 18);
    CHECK(count(out, WriteOutcome::Kind::changed) == 2);
    CHECK(out[5].error.code == Errc::exists);
    CHECK(out[9].error.code == Errc::exists);
    CHECK(after - before == 2);  // the txn sent again, and the probe
    for (int i = 0; i < 20; ++i) {
      auto got = s->get(key(i));
      REQUIRE(got.ok());
      REQUIRE(got->has_value());
      CHECK((**got).value == (i == 5 || i == 9 ? "there" : "new"));
      if (i != 5 && i != 9) CHECK((**got).revision == out[i].revision);
    }
  }

  TEST_CASE("a txn whose answer is lost: each of its keys unknown, every key written is done or unknown") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(3);
    const std::string prefix = fresh_etcd_prefix("b");
    auto seed = open_on(c.endpoints(), prefix);
    std::vector<Revision> read;
    for (int i = 0; i < 60; ++i) {
      auto r = seed->put(key(i), "v0");
      REQUIRE(r.ok());
      read.push_back(*r);
    }
    // The proxy drops the answer to the txn holding k.025 (the second of three), found
    // by the key's base64 in the request.
    const std::string marker = base64(prefix + "/" + key(25));
    const std::string dir = test::make_temp_dir("etcd-lost"), port_file = dir + "/port";
    pid_t proxy = test::spawn_logged({test::find_executable("", "python3", "/usr/bin"),
                                      std::string(LEASEJUDGE_SOURCE_DIR) + "/tests/etcd_lost_answers.py",
                                      c.endpoint(0).substr(c.endpoint(0).find(':') + 1), port_file, marker},
                                     dir + "/proxy.log");
    REQUIRE(proxy > 0);
    std::string port;
    for (int i = 0; i < 100 && port.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream(port_file) >> port;
    }
    REQUIRE_FALSE(port.empty());
    auto s = open_on({"127.0.0.1:" + port}, prefix, 20, std::chrono::milliseconds(1500));
    auto p = s->pipeline();
    for (int i = 0; i < 60; ++i) p->update(key(i), "v1", read[i]);
    const auto out = drain(*p);
    test::end_process(proxy, SIGKILL, std::chrono::seconds(5));
    REQUIRE(out.size() == 60);
    CHECK(count(out, WriteOutcome::Kind::done) == 40);
    CHECK(count(out, WriteOutcome::Kind::unknown) == 20);
    for (int i = 20; i < 40; ++i) CHECK(out[i].kind == WriteOutcome::Kind::unknown);
    CHECK(p->broken());
    int written = 0, wrong = 0;
    for (int i = 0; i < 60; ++i) {
      auto got = seed->get(key(i));
      REQUIRE(got.ok());
      REQUIRE(got->has_value());
      if ((**got).revision == read[i]) continue;
      ++written;
      if (out[i].kind != WriteOutcome::Kind::done && out[i].kind != WriteOutcome::Kind::unknown) ++wrong;
    }
    CHECK(written == 60);  // the proxy passed every txn on: the unknown ones landed too
    CHECK(wrong == 0);
  }

  TEST_CASE("txns go to every endpoint in turn; one that refuses the connection is passed over") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster& c = shared_etcd_cluster(3);
    const std::string prefix = fresh_etcd_prefix("e");
    auto probe = open_on(c.endpoints(), prefix + "-probe");
    // Port 1 of the loopback: nothing listens there, the connection is refused.
    auto s = open_on({c.endpoint(0), "127.0.0.1:1", c.endpoint(1), c.endpoint(2)}, prefix, 8);
    std::vector<std::string> notes;
    long before[3];
    for (std::size_t i = 0; i < 3; ++i) REQUIRE((before[i] = c.txns_answered(i)) >= 0);
    const Revision from = revision_now(*probe);
    PipelineOptions po;
    po.note = [&](std::string_view note) { notes.emplace_back(note); };
    auto p = s->pipeline(po);
    for (int i = 0; i < 96; ++i) p->create(key(i), "v");
    const auto out = drain(*p);
    REQUIRE(out.size() == 96);
    CHECK(count(out, WriteOutcome::Kind::done) == 96);
    CHECK_FALSE(p->broken());
    // 12 txns of 8 keys, every one written once: the cluster moved by 12 revisions and
    // the probe's put.
    CHECK(revision_now(*probe) == from + 12 + 1);
    for (std::size_t i = 0; i < 3; ++i) CHECK(c.txns_answered(i) > before[i]);
    // One note of the endpoint passed over (a slow answer may add its own).
    const auto passed = std::find_if(notes.begin(), notes.end(), [](const std::string& n) {
      return n.find("http://127.0.0.1:1/v3/kv/txn") != std::string::npos;
    });
    REQUIRE(passed != notes.end());
    CHECK(passed->find("nothing was sent: the txns go to the other endpoints") != std::string::npos);
    CHECK(std::count_if(notes.begin(), notes.end(), [](const std::string& n) {
            return n.find("127.0.0.1:1/") != std::string::npos;
          }) == 1);
  }

  TEST_CASE("a txn larger than the cluster's --max-txn-ops is split, not refused") {
    SKIP_WITHOUT_ETCD();
    EtcdCluster c(3, {}, {"--max-txn-ops", "8"});
    REQUIRE(c.start());
    const std::string prefix = fresh_etcd_prefix("b");
    auto s = open_on(c.endpoints(), prefix, 64);
    auto probe = open_on(c.endpoints(), prefix + "-probe");
    std::vector<std::string> notes;
    PipelineOptions po;
    po.note = [&](std::string_view line) { notes.emplace_back(line); };
    const Revision before = revision_now(*probe);
    auto p = s->pipeline(po);
    for (int i = 0; i < 50; ++i) p->create(key(i), "new");
    const auto out = drain(*p);
    const Revision after = revision_now(*probe);
    REQUIRE(out.size() == 50);
    CHECK(count(out, WriteOutcome::Kind::done) == 50);
    const EtcdWriteStats st = s->write_stats();
    // 50 refused (25 a txn from then on), 25 refused (12), 12 refused (6): 6 keys a txn.
    CHECK(st.txn_keys == 6);
    CHECK(st.split >= 3);
    CHECK(after - before == st.txns - st.split + 1);  // each txn that was not refused landed once
    REQUIRE_FALSE(notes.empty());
    CHECK(notes[0].find("too many operations") != std::string::npos);
    for (int i = 0; i < 50; ++i) {
      auto got = s->get(key(i));
      REQUIRE(got.ok());
      REQUIRE(got->has_value());
      CHECK((**got).value == "new");
      CHECK((**got).revision == out[i].revision);
    }
    // A later pipeline of the store starts at the size learned.
    auto again = s->pipeline();
    for (int i = 0; i < 12; ++i) again->update(key(i), "v2", out[i].revision);
    const auto out2 = drain(*again);
    CHECK(count(out2, WriteOutcome::Kind::done) == 12);
    CHECK(s->write_stats().split == st.split);
    CHECK(s->write_stats().txns == st.txns + 2);
  }
}

#else

TEST_CASE("etcd pipeline: this build has no etcd store") {
  LJ_REQUIRE_OR_SKIP(false, "this build has no etcd store (libcurl4-openssl-dev was not found)");
}

#endif
