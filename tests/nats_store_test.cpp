// The NATS store against real nats-server processes the tests start themselves.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "leasejudge/store/nats.hpp"
#include "nats_server.hpp"
#include "store_contract.hpp"

#if defined(LEASEJUDGE_HAVE_NATS)

using namespace leasejudge;
using leasejudge::test::NatsCluster;
using leasejudge::test::NatsServer;

namespace {

NatsOptions options_for(const std::string& url, const std::string& bucket = "steps", bool create = true) {
  NatsOptions o;
  o.urls = {url};
  o.bucket = bucket;
  o.create_bucket = create;
  o.request_timeout = std::chrono::milliseconds(3000);
  o.reconnect_wait = std::chrono::milliseconds(100);
  return o;
}

std::unique_ptr<NatsStore> open_store(const NatsOptions& o) {
  auto s = test::open_when_ready(o);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
  return std::move(s).value();
}

// Retry op until it succeeds or patience runs out: what a caller does while a
// connection comes back. The last result is returned.
template <typename Op>
auto until_ok(Op op, std::chrono::milliseconds patience = std::chrono::seconds(30)) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    auto r = op();
    if (r.ok() || std::chrono::steady_clock::now() > deadline) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::set<std::string> as_set(const std::vector<std::string>& v) {
  return {v.begin(), v.end()};
}

// The bucket's stream configuration as the server reports it.
struct StreamFacts {
  int64_t history = -1;
  int64_t replicas = -1;
};
StreamFacts stream_facts(const std::string& url, const std::string& bucket) {
  StreamFacts f;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  jsStreamInfo* si = nullptr;
  if (natsConnection_ConnectTo(&nc, url.c_str()) == NATS_OK && natsConnection_JetStream(&js, nc, nullptr) == NATS_OK &&
      js_GetStreamInfo(&si, js, ("KV_" + bucket).c_str(), nullptr, nullptr) == NATS_OK) {
    f.history = si->Config->MaxMsgsPerSubject;
    f.replicas = si->Config->Replicas;
  }
  jsStreamInfo_Destroy(si);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return f;
}

}  // namespace

TEST_SUITE("nats store") {
  TEST_CASE("key and bucket rules are the NATS KV rules") {
    CHECK(NatsStore::valid_key("node-1.4f0c6a2e-1b7d-4c1e-9d1a-5e2f3a4b5c6d"));
    CHECK(NatsStore::valid_key("a"));
    CHECK(NatsStore::valid_key("A/b_c=d-e.f"));
    CHECK(NatsStore::valid_key("0"));
    CHECK_FALSE(NatsStore::valid_key(""));
    CHECK_FALSE(NatsStore::valid_key(".a"));
    CHECK_FALSE(NatsStore::valid_key("a."));
    CHECK_FALSE(NatsStore::valid_key("."));
    CHECK_FALSE(NatsStore::valid_key("a..b"));
    CHECK_FALSE(NatsStore::valid_key("a b"));
    CHECK_FALSE(NatsStore::valid_key("a*"));
    CHECK_FALSE(NatsStore::valid_key("a>"));
    CHECK_FALSE(NatsStore::valid_key("a\\b"));
    CHECK_FALSE(NatsStore::valid_key("caf\xc3\xa9"));
    CHECK_FALSE(NatsStore::valid_key(std::string_view("a\0b", 3)));
    CHECK_FALSE(NatsStore::valid_key("a\tb"));

    CHECK(NatsStore::valid_bucket("steps"));
    CHECK(NatsStore::valid_bucket("build_steps-2"));
    CHECK_FALSE(NatsStore::valid_bucket(""));
    CHECK_FALSE(NatsStore::valid_bucket("a.b"));
    CHECK_FALSE(NatsStore::valid_bucket("a/b"));
    CHECK_FALSE(NatsStore::valid_bucket("a b"));
    CHECK_FALSE(NatsStore::valid_bucket("a*"));
  }

  TEST_CASE("options out of range are refused before any connection") {
    NatsOptions o;
    o.urls = {"nats://127.0.0.1:1"};
    o.bucket = "bad.name";
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.bucket = "";
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.bucket = "steps";
    o.history = 0;
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.history = 65;
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.history = 1;
    o.replicas = 0;
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.replicas = 6;
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.replicas = 1;
    o.request_timeout = std::chrono::milliseconds(0);
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.request_timeout = std::chrono::milliseconds(1000);
    o.urls = {"nats://a:1,nats://b:2"};
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.urls = {""};
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);
    o.urls = {"nats://127.0.0.1:1"};
    o.tls_cert_file = "/nonexistent/cert.pem";
    CHECK(NatsStore::open(o).code() == Errc::invalid_argument);  // a certificate without its key
  }

  TEST_CASE("no server: a clear store error") {
    NatsOptions o;
    o.urls = {"nats://127.0.0.1:" + std::to_string(test::free_port())};
    o.bucket = "steps";
    o.connect_timeout = std::chrono::milliseconds(500);
    auto s = NatsStore::open(o);
    REQUIRE(s.code() == Errc::store);
    CHECK(s.error().message.find(o.urls[0]) != std::string::npos);
    CHECK(s.error().message.find("no server answers") != std::string::npos);
  }

  TEST_CASE("a missing bucket is a store error; creation on request") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());

    auto missing = NatsStore::open(options_for(server.url(), "steps", false));
    REQUIRE(missing.code() == Errc::store);
    CHECK(missing.error().message == "the NATS bucket steps does not exist at " + server.url() +
                                         " (nothing was made; creation makes it)");
    NatsOptions named = options_for(server.url(), "steps", false);
    named.create_name = "--create-bucket";  // the caller's own words for creation
    auto said = NatsStore::open(named);
    REQUIRE(said.code() == Errc::store);
    CHECK(said.error().message == "the NATS bucket steps does not exist at " + server.url() +
                                      " (nothing was made; --create-bucket makes it)");

    NatsOptions o = options_for(server.url(), "steps", true);
    o.history = 5;
    auto store = open_store(o);
    CHECK(store->bucket() == "steps");
    StreamFacts f = stream_facts(server.url(), "steps");
    CHECK(f.history == 5);
    CHECK(f.replicas == 1);

    // An existing bucket is used as it is, whatever the settings passed.
    NatsOptions again = options_for(server.url(), "steps", true);
    again.history = 2;
    auto second = open_store(again);
    CHECK(stream_facts(server.url(), "steps").history == 5);
    auto plain = NatsStore::open(options_for(server.url(), "steps", false));
    CHECK(plain.ok());

    // Three replicas on a server that is no cluster: refused, said as a store error.
    NatsOptions r3 = options_for(server.url(), "replicated", true);
    r3.replicas = 3;
    auto refused = NatsStore::open(r3);
    CHECK(refused.code() == Errc::store);
  }

  TEST_CASE("a server without JetStream: a clear store error") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    server.jetstream = false;
    REQUIRE(server.start());
    auto s = NatsStore::open(options_for(server.url()));
    REQUIRE(s.code() == Errc::store);
    CHECK(s.error().message.find("JetStream") != std::string::npos);
  }

  TEST_CASE("create, get, update, remove with revisions") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for(server.url()));

    SUBCASE("an empty bucket") {
      auto keys = store->keys();
      REQUIRE(keys.ok());
      CHECK(keys->empty());
      auto got = store->get("node.a");
      REQUIRE(got.ok());
      CHECK_FALSE(got->has_value());
      auto entries = store->entries();
      REQUIRE(entries.ok());
      CHECK(entries->empty());
    }

    SUBCASE("the whole life of a key") {
      // A fresh stream numbers its messages 1, 2, 3, ... across all keys.
      auto r1 = store->create("node.a", "one");
      REQUIRE(r1.ok());
      CHECK(*r1 == 1);
      auto rb = store->create("node.b", "bee");
      REQUIRE(rb.ok());
      CHECK(*rb == 2);

      auto got = store->get("node.a");
      REQUIRE(got.ok());
      REQUIRE(got->has_value());
      CHECK((*got)->value == "one");
      CHECK((*got)->revision == 1);

      auto exists = store->create("node.a", "again");
      CHECK(exists.code() == Errc::exists);

      auto r3 = store->update("node.a", "two", 1);
      REQUIRE(r3.ok());
      CHECK(*r3 == 3);
      CHECK(store->update("node.a", "stale", 1).code() == Errc::changed);
      CHECK(store->update("node.a", "other key's revision", 2).code() == Errc::changed);
      got = store->get("node.a");
      REQUIRE(got->has_value());
      CHECK((*got)->value == "two");
      CHECK((*got)->revision == 3);

      CHECK(store->remove("node.a", 1).code() == Errc::changed);
      got = store->get("node.a");
      REQUIRE(got->has_value());
      CHECK((*got)->value == "two");

      REQUIRE(store->remove("node.a", 3).ok());  // the delete marker is revision 4
      got = store->get("node.a");
      REQUIRE(got.ok());
      CHECK_FALSE(got->has_value());
      CHECK(as_set(*store->keys()) == std::set<std::string>{"node.b"});

      // A key whose last message is already a delete marker: every write at an old
      // revision is a lost race, and a second delete is one too.
      CHECK(store->remove("node.a", 3).code() == Errc::changed);
      CHECK(store->update("node.a", "ghost", 3).code() == Errc::changed);
      CHECK_FALSE(store->get("node.a")->has_value());

      // Create lands on top of the marker.
      auto r5 = store->create("node.a", "reborn");
      REQUIRE(r5.ok());
      CHECK(*r5 == 5);
      got = store->get("node.a");
      REQUIRE(got->has_value());
      CHECK((*got)->value == "reborn");
      CHECK((*got)->revision == 5);
      CHECK(store->create("node.a", "again").code() == Errc::exists);

      auto entries = store->entries();
      REQUIRE(entries.ok());
      REQUIRE(entries->size() == 2);
      std::map<std::string, std::pair<std::string, Revision>> seen;
      for (const auto& e : *entries) seen[e.key] = {e.value, e.revision};
      CHECK(seen["node.a"] == std::pair<std::string, Revision>("reborn", 5));
      CHECK(seen["node.b"] == std::pair<std::string, Revision>("bee", 2));
    }

    SUBCASE("revision 0 never writes") {
      REQUIRE(store->create("k", "v").ok());
      CHECK(store->update("k", "w", 0).code() == Errc::changed);
      CHECK(store->remove("k", 0).code() == Errc::changed);
      CHECK(store->update("absent", "w", 0).code() == Errc::changed);
      CHECK((*store->get("k"))->value == "v");
      CHECK_FALSE(store->get("absent")->has_value());
    }

    SUBCASE("a write at a revision of an absent key is a lost race") {
      CHECK(store->update("never", "v", 7).code() == Errc::changed);
      CHECK(store->remove("never", 7).code() == Errc::changed);
      CHECK_FALSE(store->get("never")->has_value());
      CHECK(store->keys()->empty());
    }

    SUBCASE("values are bytes") {
      std::string binary("a\0b\xff\n\"{", 8);
      auto r = store->create("bin", binary);
      REQUIRE(r.ok());
      CHECK((*store->get("bin"))->value == binary);
      REQUIRE(store->create("empty", "").ok());
      auto empty = store->get("empty");
      REQUIRE(empty->has_value());
      CHECK((*empty)->value.empty());
      std::string big(200 * 1024, 'x');
      big[12345] = 'y';
      REQUIRE(store->put("big", big).ok());
      CHECK((*store->get("big"))->value == big);
      // Past the server's maximum payload (1 MB by default): refused, nothing written.
      std::string huge(2 * 1024 * 1024, 'z');
      CHECK(store->put("huge", huge).code() == Errc::invalid_argument);
      CHECK_FALSE(store->get("huge")->has_value());
    }

    SUBCASE("invalid keys are refused before anything is sent") {
      for (std::string_view bad :
           {std::string_view(""), std::string_view(".a"), std::string_view("a."), std::string_view("a..b"),
            std::string_view("a b"), std::string_view("a*"), std::string_view("a>"), std::string_view("a\0b", 3),
            std::string_view("caf\xc3\xa9")}) {
        CAPTURE(bad);
        CHECK(store->get(bad).code() == Errc::invalid_argument);
        CHECK(store->create(bad, "v").code() == Errc::invalid_argument);
        CHECK(store->update(bad, "v", 1).code() == Errc::invalid_argument);
        CHECK(store->remove(bad, 1).code() == Errc::invalid_argument);
        CHECK(store->put(bad, "v").code() == Errc::invalid_argument);
      }
      CHECK(store->keys()->empty());
    }
  }

  TEST_CASE("pipelined creates: created, exists, a deleted key created again, in the order sent") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for(server.url()));
    test::contract_pipeline_create(*store);
  }

  TEST_CASE("a re-import: creates of keys that hold a value are exists, markers are written over, each key once") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for(server.url(), "steps"));
    auto key = [](int i) { return fmt::format("k.{:03}", i); };
    std::vector<Revision> held;
    for (int i = 0; i < 300; ++i) held.push_back(*store->create(key(i), "old"));
    REQUIRE(store->remove(key(10), held[10]).ok());  // our marker
    REQUIRE(store->remove(key(20), held[20]).ok());
    natsConnection* nc = nullptr;  // nats.c's delete and purge, as another program writes them
    jsCtx* js = nullptr;
    kvStore* kv = nullptr;
    REQUIRE(natsConnection_ConnectTo(&nc, server.url().c_str()) == NATS_OK);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
    REQUIRE(js_KeyValue(&kv, js, "steps") == NATS_OK);
    CHECK(kvStore_Delete(kv, key(30).c_str()) == NATS_OK);
    CHECK(kvStore_Purge(kv, key(40).c_str(), nullptr) == NATS_OK);
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    const std::set<int> markers = {10, 20, 30, 40};

    PipelineOptions po;
    po.window = 512;
    auto p = store->pipeline(po);
    for (int i = 0; i < 350; ++i) p->create(key(i), "new");
    std::vector<WriteOutcome> out;
    while (auto o = p->next()) out.push_back(*o);
    REQUIRE(out.size() == 350);
    int exists = 0, done = 0;
    for (int i = 0; i < 350; ++i) {
      const bool holds = i < 300 && markers.count(i) == 0;
      auto got = store->get(key(i));
      REQUIRE(got.ok());
      REQUIRE(got->has_value());
      if (holds) {
        exists += out[i].kind == WriteOutcome::Kind::changed && out[i].error.code == Errc::exists;
        CHECK((**got).value == "old");
        CHECK((**got).revision == held[i]);
      } else {
        done += out[i].kind == WriteOutcome::Kind::done;
        CHECK((**got).value == "new");
        CHECK((**got).revision == out[i].revision);
      }
    }
    CHECK(exists == 296);
    CHECK(done == 54);
    CHECK_FALSE(p->broken());
  }

  TEST_CASE("markers written by other clients") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for(server.url(), "steps"));
    REQUIRE(store->create("gone.deleted", "v").ok());
    REQUIRE(store->create("gone.purged", "v").ok());
    REQUIRE(store->create("kept", "v").ok());

    // nats.c's own delete and purge, as another program would write them.
    natsConnection* nc = nullptr;
    jsCtx* js = nullptr;
    kvStore* kv = nullptr;
    REQUIRE(natsConnection_ConnectTo(&nc, server.url().c_str()) == NATS_OK);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
    REQUIRE(js_KeyValue(&kv, js, "steps") == NATS_OK);
    CHECK(kvStore_Delete(kv, "gone.deleted") == NATS_OK);
    CHECK(kvStore_Purge(kv, "gone.purged", nullptr) == NATS_OK);
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);

    CHECK_FALSE(store->get("gone.deleted")->has_value());
    CHECK_FALSE(store->get("gone.purged")->has_value());
    CHECK(as_set(*store->keys()) == std::set<std::string>{"kept"});
    CHECK(store->remove("gone.deleted", 1).code() == Errc::changed);
    CHECK(store->update("gone.purged", "v2", 2).code() == Errc::changed);
    auto again = store->create("gone.purged", "back");
    REQUIRE(again.ok());
    CHECK((*store->get("gone.purged"))->revision == *again);
    REQUIRE(store->create("gone.deleted", "back").ok());
    CHECK(as_set(*store->keys()) == std::set<std::string>{"kept", "gone.deleted", "gone.purged"});
  }

  TEST_CASE("our delete marker is a delete to other clients") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for(server.url(), "steps"));
    Revision r = *store->create("gone", "v");
    REQUIRE(store->create("kept", "v").ok());
    REQUIRE(store->remove("gone", r).ok());

    natsConnection* nc = nullptr;
    jsCtx* js = nullptr;
    kvStore* kv = nullptr;
    REQUIRE(natsConnection_ConnectTo(&nc, server.url().c_str()) == NATS_OK);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
    REQUIRE(js_KeyValue(&kv, js, "steps") == NATS_OK);
    kvEntry* e = nullptr;
    CHECK(kvStore_Get(&e, kv, "gone") == NATS_NOT_FOUND);
    kvEntry_Destroy(e);
    kvKeysList keys{};
    REQUIRE(kvStore_Keys(&keys, kv, nullptr) == NATS_OK);
    REQUIRE(keys.Count == 1);
    CHECK(std::string(keys.Keys[0]) == "kept");
    kvKeysList_Destroy(&keys);
    // nats.c's own create lands on our marker, as ours lands on its.
    uint64_t rev = 0;
    CHECK(kvStore_CreateString(&rev, kv, "gone", "theirs") == NATS_OK);
    CHECK(rev == r + 3);  // kept, our marker, then this
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    auto got = store->get("gone");
    REQUIRE(got->has_value());
    CHECK((*got)->value == "theirs");
  }

  TEST_CASE("direct reads answer as leader reads do") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    NatsOptions o = options_for(server.url());
    o.direct_reads = true;
    auto store = open_store(o);
    CHECK_FALSE(store->get("k")->has_value());
    Revision r = *store->create("k", "v");
    auto got = store->get("k");
    REQUIRE(got->has_value());
    CHECK((*got)->value == "v");
    CHECK((*got)->revision == r);
    CHECK(store->create("k", "w").code() == Errc::exists);  // create reads the marker directly too
    REQUIRE(store->remove("k", r).ok());
    CHECK_FALSE(store->get("k")->has_value());
    auto again = store->create("k", "w");
    REQUIRE(again.ok());
    CHECK(*again == r + 2);
    CHECK((*store->get("k"))->revision == *again);
  }

  TEST_CASE("races: every lost race is changed or exists, never an overwrite") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto mine = open_store(options_for(server.url()));
    auto theirs = open_store(options_for(server.url()));

    SUBCASE("update with a stale revision") {
      Revision r = *mine->create("k", "0");
      Revision theirs_r = *theirs->update("k", "theirs", r);
      CHECK(mine->update("k", "mine", r).code() == Errc::changed);
      auto got = mine->get("k");
      CHECK((*got)->value == "theirs");
      CHECK((*got)->revision == theirs_r);
    }
    SUBCASE("delete with a stale revision: the write landing in between is kept") {
      Revision r = *mine->create("k", "running");
      auto read = mine->get("k");
      REQUIRE((*read)->revision == r);
      Revision theirs_r = *theirs->put("k", "restarted");
      CHECK(mine->remove("k", r).code() == Errc::changed);
      auto got = mine->get("k");
      REQUIRE(got->has_value());
      CHECK((*got)->value == "restarted");
      CHECK((*got)->revision == theirs_r);
    }
    SUBCASE("delete after another deleted") {
      Revision r = *mine->create("k", "v");
      REQUIRE(theirs->remove("k", r).ok());
      CHECK(mine->remove("k", r).code() == Errc::changed);
      CHECK_FALSE(mine->get("k")->has_value());
    }
    SUBCASE("create where another created first") {
      REQUIRE(theirs->create("k", "theirs").ok());
      CHECK(mine->create("k", "mine").code() == Errc::exists);
      CHECK((*mine->get("k"))->value == "theirs");
    }
    SUBCASE("a racing writer: no increment lost") {
      // Two stores bump one counter with read / update-if-revision; every bump that
      // succeeds is in the final count, every lost race said changed.
      REQUIRE(mine->create("counter", "0").ok());
      constexpr int kBumps = 200;
      std::atomic<int> conflicts{0};
      std::atomic<int> failures{0};
      auto bump = [&](NatsStore& s) {
        for (int done = 0; done < kBumps;) {
          auto got = s.get("counter");
          if (!got.ok() || !got->has_value()) {
            ++failures;
            return;
          }
          int n = std::stoi((*got)->value);
          auto w = s.update("counter", std::to_string(n + 1), (*got)->revision);
          if (w.ok()) {
            ++done;
          } else if (w.code() == Errc::changed) {
            ++conflicts;
          } else {
            ++failures;
            return;
          }
        }
      };
      std::thread a([&] { bump(*mine); });
      std::thread b([&] { bump(*theirs); });
      a.join();
      b.join();
      CHECK(failures == 0);
      CHECK((*mine->get("counter"))->value == std::to_string(2 * kBumps));
      MESSAGE("lost races said changed: " << conflicts.load());
    }
    SUBCASE("one store from several threads") {
      std::vector<std::thread> threads;
      std::atomic<int> failures{0};
      for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
          for (int i = 0; i < 50; ++i) {
            std::string key = "t" + std::to_string(t) + "." + std::to_string(i);
            auto r = mine->create(key, key);
            if (!r.ok()) ++failures;
            auto got = mine->get(key);
            if (!got.ok() || !got->has_value() || (*got)->value != key || (*got)->revision != *r) ++failures;
          }
        });
      }
      for (auto& t : threads) t.join();
      CHECK(failures == 0);
      CHECK(mine->keys()->size() == 200);
    }
  }

  TEST_CASE("the server going away and coming back") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for(server.url()));
    Revision r = *store->create("k", "before");

    SUBCASE("killed: calls fail cleanly, then work once it is back") {
      server.kill();
      auto got = store->get("k");
      CHECK(got.code() == Errc::store);
      CHECK(store->update("k", "while down", r).code() == Errc::store);
      CHECK(store->create("new", "while down").code() == Errc::store);
      CHECK(store->remove("k", r).code() == Errc::store);
      CHECK(store->keys().code() == Errc::store);
      REQUIRE(server.start());
      auto back = until_ok([&] { return store->get("k"); });
      REQUIRE(back.ok());
      REQUIRE(back->has_value());
      CHECK((*back)->value == "before");
      CHECK((*back)->revision == r);
      // Nothing written while down landed later.
      CHECK_FALSE(store->get("new")->has_value());
      auto w = store->update("k", "after", r);
      REQUIRE(w.ok());
      CHECK(as_set(*store->keys()) == std::set<std::string>{"k"});
    }
    SUBCASE("restarted gracefully: the next call works") {
      REQUIRE(server.restart());
      auto w = until_ok([&] { return store->update("k", "after", r); });
      REQUIRE(w.ok());
      CHECK((*store->get("k"))->value == "after");
    }
  }

  TEST_CASE("credentials: user and password in the URL; a refusal is a clear error") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server({"--user", "builder", "--pass", "s3cret"});
    REQUIRE(server.start());
    std::string port = std::to_string(server.port());
    auto store = open_store(options_for("nats://builder:s3cret@127.0.0.1:" + port));
    REQUIRE(store->create("k", "v").ok());

    auto wrong = NatsStore::open(options_for("nats://builder:wrong@127.0.0.1:" + port));
    REQUIRE(wrong.code() == Errc::store);
    CHECK(wrong.error().message.find("refused the credentials") != std::string::npos);
    CHECK(wrong.error().message.find("nats://***@127.0.0.1:" + port) != std::string::npos);
    CHECK(wrong.error().message.find("wrong") == std::string::npos);  // no password in a message
    CHECK(wrong.error().message.find("builder") == std::string::npos);
    auto none = NatsStore::open(options_for(server.url()));
    CHECK(none.code() == Errc::store);

    NatsOptions creds = options_for(server.url());
    creds.credentials_file = server.dir() + "/no-such.creds";
    auto missing = NatsStore::open(creds);
    REQUIRE(missing.code() == Errc::store);
  }

  TEST_CASE("TLS when the server asks for it") {
    SKIP_WITHOUT_NATS_SERVER();
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
      MESSAGE("openssl is not installed: skipping the TLS test");
      return;
    }
    std::string dir = test::make_temp_dir("tls");
    REQUIRE(!dir.empty());
    std::string cert = dir + "/server.pem";
    std::string key = dir + "/server.key";
    std::string make =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
        "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
        key + " -out " + cert + " >/dev/null 2>&1";
    REQUIRE(std::system(make.c_str()) == 0);
    {
      NatsServer server({"--tls", "--tlscert", cert, "--tlskey", key});
      REQUIRE(server.start());

      // A plain nats:// URL: the server requires TLS and the client follows.
      NatsOptions o = options_for(server.url());
      o.tls_ca_file = cert;
      auto store = open_store(o);
      REQUIRE(store->create("k", "over tls").ok());
      CHECK((*store->get("k"))->value == "over tls");

      // A server whose certificate nothing vouches for is refused.
      auto untrusted = NatsStore::open(options_for(server.url()));
      CHECK(untrusted.code() == Errc::store);
      NatsOptions bad_ca = options_for(server.url());
      bad_ca.tls_ca_file = dir + "/missing.pem";
      auto no_file = NatsStore::open(bad_ca);
      REQUIRE(no_file.code() == Errc::store);
      CHECK(no_file.error().message.find("missing.pem") != std::string::npos);
    }
    {
      // TLS required by the client, a server without it: refused.
      NatsServer plain;
      REQUIRE(plain.start());
      NatsOptions o = options_for(plain.url());
      o.tls = true;
      o.tls_ca_file = cert;
      auto refused = NatsStore::open(o);
      REQUIRE(refused.code() == Errc::store);
      CHECK(refused.error().message.find("TLS") != std::string::npos);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  TEST_CASE("100k keys are listed exactly") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for(server.url()));
    constexpr int kKeys = 100000;
    std::vector<std::pair<std::string, std::string>> seed;
    seed.reserve(kKeys);
    for (int i = 0; i < kKeys; ++i)
      seed.emplace_back("node" + std::to_string(i % 7) + ".k" + std::to_string(i), std::to_string(i));
    REQUIRE(test::seed_bucket(server.url(), "steps", seed) == kKeys);
    // A few deleted: left out of the listing.
    for (int i = 0; i < kKeys; i += 10000) {
      auto got = store->get(seed[static_cast<std::size_t>(i)].first);
      REQUIRE(got->has_value());
      REQUIRE(store->remove(seed[static_cast<std::size_t>(i)].first, (*got)->revision).ok());
    }
    auto keys = store->keys();
    REQUIRE_MESSAGE(keys.ok(), (keys.ok() ? std::string() : keys.error().message));
    CHECK(keys->size() == kKeys - 10);
    std::set<std::string> listed = as_set(*keys);
    CHECK(listed.size() == keys->size());  // no key twice
    for (int i = 0; i < kKeys; ++i) {
      bool deleted = i % 10000 == 0;
      if (listed.count(seed[static_cast<std::size_t>(i)].first) != (deleted ? 0u : 1u)) {
        FAIL("key " << seed[static_cast<std::size_t>(i)].first << (deleted ? " listed" : " missing"));
      }
    }
    auto entries = store->entries();
    REQUIRE_MESSAGE(entries.ok(), (entries.ok() ? std::string() : entries.error().message));
    CHECK(entries->size() == kKeys - 10);
    std::size_t wrong = 0;
    for (const auto& e : *entries) {
      int i = std::stoi(e.key.substr(e.key.find(".k") + 2));
      if (e.value != std::to_string(i) || e.revision != static_cast<Revision>(i + 1)) ++wrong;
    }
    CHECK(wrong == 0);
  }

  TEST_CASE("a scan reads each key's last value once, whatever the bucket's history") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    for (int history : {1, 5}) {
      CAPTURE(history);
      NatsOptions o = options_for(server.url(), "history" + std::to_string(history));
      o.history = history;
      auto store = open_store(o);
      REQUIRE(stream_facts(server.url(), o.bucket).history == history);
      // Keys written once, updated twice, deleted, deleted and created again; and
      // another node's keys between them. The expected state is the writes' own.
      std::map<std::string, std::pair<std::string, Revision>> expected;
      for (int i = 0; i < 300; ++i) {
        const std::string key = "node1.k" + std::to_string(i);
        auto rev = store->create(key, "v0-" + std::to_string(i));
        REQUIRE(rev.ok());
        REQUIRE(store->create("node2.k" + std::to_string(i), "other").ok());
        std::string value = "v0-" + std::to_string(i);
        if (i % 3 == 0) {
          for (int u = 1; u <= 2; ++u) {
            value = "v" + std::to_string(u) + "-" + std::to_string(i);
            rev = store->update(key, value, *rev);
            REQUIRE(rev.ok());
          }
        }
        if (i % 5 == 0) {
          REQUIRE(store->remove(key, *rev).ok());
          if (i % 10 != 0) continue;
          value = "again-" + std::to_string(i);
          rev = store->create(key, value);
          REQUIRE(rev.ok());
        }
        expected[key] = {value, *rev};
      }
      std::map<std::string, std::pair<std::string, Revision>> read;
      std::size_t handed = 0;
      ScanOptions so;
      so.batch_keys = 64;
      ScanStats stats;
      Status done = store->scan(
          "node1.",
          [&](const ScanBatch& batch) {
            for (const BatchEntry& e : batch.entries) {
              ++handed;
              read[std::string(batch.buffer.substr(e.key_offset, e.key_len))] = {
                  std::string(batch.buffer.substr(e.value_offset, e.value_len)), e.revision};
            }
            return Status::success();
          },
          so, &stats);
      REQUIRE_MESSAGE(done.ok(), (done.ok() ? std::string() : done.error().message));
      CHECK(handed == expected.size());  // no key twice
      CHECK(stats.keys == expected.size());
      CHECK(stats.batches == (expected.size() + 63) / 64);
      CHECK(read == expected);
    }
  }

  TEST_CASE("a three-node cluster with a replicated bucket survives a node killed") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsCluster cluster;
    REQUIRE(cluster.start());
    NatsOptions o;
    o.urls = cluster.urls();
    o.bucket = "steps";
    o.create_bucket = true;
    o.replicas = 3;
    o.request_timeout = std::chrono::milliseconds(2000);
    o.reconnect_wait = std::chrono::milliseconds(100);
    auto store = open_store(o);
    CHECK(stream_facts(cluster.node(1).url(), "steps").replicas == 3);
    Revision a = *store->create("node.a", "1");
    Revision b = *store->create("node.b", "1");

    // The first URL is the node the store is connected to: kill it.
    cluster.node(0).kill();
    auto w = until_ok([&] { return store->update("node.a", "2", a); });
    // A write the dying node took but never answered shows as changed on the retry:
    // read it back either way.
    REQUIRE((w.ok() || w.code() == Errc::changed));
    auto got = until_ok([&] { return store->get("node.a"); });
    REQUIRE(got.ok());
    CHECK((*got)->value == "2");
    REQUIRE(until_ok([&] { return store->remove("node.b", b); }).ok());
    CHECK_FALSE(store->get("node.b")->has_value());
    REQUIRE(store->create("node.c", "1").ok());
    auto keys = store->keys();
    REQUIRE_MESSAGE(keys.ok(), (keys.ok() ? std::string() : keys.error().message));
    CHECK(as_set(*keys) == std::set<std::string>{"node.a", "node.c"});
  }

  TEST_CASE("a watch of a node's keys: only what changes after it began, a delete as none, a lost connection said") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    auto store = open_store(options_for(server.url()));
    REQUIRE(store->create("n1.before", "0").ok());
    auto w = store->watch("n1.");
    REQUIRE_MESSAGE(w.ok(), (w.ok() ? std::string() : w.error().message));
    auto a = store->create("n1.a", "1");
    REQUIRE(a.ok());
    REQUIRE(store->create("n2.other", "1").ok());
    REQUIRE(store->remove("n1.before", 1).ok());
    std::vector<KeyChange> out;
    for (int i = 0; i < 50 && out.size() < 2; ++i) REQUIRE((*w)->next(out, 100'000'000).ok());
    REQUIRE(out.size() == 2);
    CHECK(out[0].key == "n1.a");
    CHECK(out[0].revision == *a);
    CHECK(out[0].value == std::optional<std::string>("1"));
    CHECK(out[0].written_unix_ns > 0);
    CHECK(out[1].key == "n1.before");
    CHECK_FALSE(out[1].value.has_value());
    out.clear();
    REQUIRE((*w)->next(out, 50'000'000).ok());
    CHECK(out.empty());
    // The server gone: the watch says so within a wait, and stays broken.
    server.kill();
    auto t0 = std::chrono::steady_clock::now();
    Status st;
    for (int i = 0; i < 100 && st.ok(); ++i) st = (*w)->next(out, 100'000'000);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == Errc::store);
    CHECK(st.error().message.find("the connection to the server was lost") != std::string::npos);
    CHECK_FALSE((*w)->next(out, 1'000'000).ok());
    // Any other prefix: the polling watch.
    REQUIRE(server.restart());
    auto polled = until_ok([&] { return store->watch("n1", KeyWatchOptions{1'000'000, {}}); });
    CHECK(polled.ok());
  }

}  // TEST_SUITE

#else  // a build without the NATS store

TEST_CASE("nats store: the NATS store") {
  LJ_REQUIRE_OR_SKIP(false, "leasejudge was built without libnats (LEASEJUDGE_NATS=OFF)");
}

#endif
