// The C ABI's NATS store (lj_nats.h) against a real nats-server: options, bad input,
// the store operations through lj_store_*, and a sweep over it.
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "leasejudge.h"
#include "nats_server.hpp"

using leasejudge::test::NatsServer;

namespace {

// The code of an open, and its message (the error freed).
struct Opened {
  int code = LJ_OK;
  std::string message;
  lj_store_t* store = nullptr;
};

[[maybe_unused]] Opened open_with(const lj_nats_options_t* opts) {
  Opened o;
  lj_error_t* err = nullptr;
  o.code = lj_nats_store_open(&o.store, opts, &err);
  if (err != nullptr) {
    CHECK(lj_error_code(err) == o.code);
    o.message = lj_error_message(err);
    lj_error_destroy(err);
  }
  if (o.code != LJ_OK) CHECK(o.store == nullptr);
  return o;
}

// Options over urls, which must outlive them (they borrow its text).
lj_nats_options_t options_for(const std::string& urls, const char* bucket = "steps") {
  lj_nats_options_t o;
  REQUIRE(lj_nats_options_init(&o, LJ_NATS_OPTIONS_VERSION) == LJ_OK);
  o.urls = urls.c_str();
  o.urls_len = urls.size();
  o.bucket = bucket;
  o.bucket_len = std::strlen(bucket);
  o.create_bucket = 1;
  o.request_timeout_ms = 3000;
  o.reconnect_wait_ms = 100;
  return o;
}

[[maybe_unused]] int collect_key(const char* key, size_t key_len, void* payload) {
  static_cast<std::set<std::string>*>(payload)->emplace(key, key_len);
  return 0;
}
[[maybe_unused]] int stop_at_first(const char*, size_t, void* payload) {
  ++*static_cast<int*>(payload);
  return 7;
}

}  // namespace

TEST_SUITE("nats capi") {
  TEST_CASE("options: init, versions and defaults") {
    CHECK(lj_nats_options_init(nullptr, LJ_NATS_OPTIONS_VERSION) == LJ_EINVAL);
    lj_nats_options_t o;
    CHECK(lj_nats_options_init(&o, 0) == LJ_EVERSION);
    CHECK(lj_nats_options_init(&o, LJ_NATS_OPTIONS_VERSION + 1) == LJ_EVERSION);
    REQUIRE(lj_nats_options_init(&o, LJ_NATS_OPTIONS_VERSION) == LJ_OK);
    CHECK(o.version == LJ_NATS_OPTIONS_VERSION);
    CHECK(o.urls == nullptr);
    CHECK(o.bucket == nullptr);
    CHECK(o.connect_timeout_ms == 2000);
    CHECK(o.request_timeout_ms == 5000);
    CHECK(o.list_timeout_ms == 60000);
    CHECK(o.reconnect_wait_ms == 500);
    CHECK(o.create_bucket == 0);
    CHECK(o.history == 1);
    CHECK(o.replicas == 1);
    // The macro gives the same defaults, field by field (padding bytes are not values).
    lj_nats_options_t m = LJ_NATS_OPTIONS_INIT;
    CHECK(m.version == o.version);
    CHECK(m.urls == o.urls);
    CHECK(m.urls_len == o.urls_len);
    CHECK(m.bucket == o.bucket);
    CHECK(m.bucket_len == o.bucket_len);
    CHECK(m.credentials_file == o.credentials_file);
    CHECK(m.credentials_file_len == o.credentials_file_len);
    CHECK(m.tls == o.tls);
    CHECK(m.tls_ca_file == o.tls_ca_file);
    CHECK(m.tls_ca_file_len == o.tls_ca_file_len);
    CHECK(m.tls_cert_file == o.tls_cert_file);
    CHECK(m.tls_cert_file_len == o.tls_cert_file_len);
    CHECK(m.tls_key_file == o.tls_key_file);
    CHECK(m.tls_key_file_len == o.tls_key_file_len);
    CHECK(m.name == o.name);
    CHECK(m.name_len == o.name_len);
    CHECK(m.connect_timeout_ms == o.connect_timeout_ms);
    CHECK(m.request_timeout_ms == o.request_timeout_ms);
    CHECK(m.list_timeout_ms == o.list_timeout_ms);
    CHECK(m.reconnect_wait_ms == o.reconnect_wait_ms);
    CHECK(m.direct_reads == o.direct_reads);
    CHECK(m.create_bucket == o.create_bucket);
    CHECK(m.history == o.history);
    CHECK(m.replicas == o.replicas);
    CHECK(o.refuse_unfenced == 0);
    CHECK((o.note == nullptr));
    CHECK(o.note_payload == nullptr);
    CHECK(m.refuse_unfenced == o.refuse_unfenced);
    CHECK((m.note == o.note));
    CHECK(m.note_payload == o.note_payload);
    // Version 1 is the struct up to replicas: init writes nothing past it.
    lj_nats_options_t v1;
    std::memset(&v1, 0x5a, sizeof v1);
    REQUIRE(lj_nats_options_init(&v1, 1) == LJ_OK);
    CHECK(v1.version == 1);
    CHECK(v1.replicas == 1);
    CHECK(v1.refuse_unfenced == 0x5a5a5a5a);
  }

#if defined(LEASEJUDGE_HAVE_NATS)

  TEST_CASE("the servers a store writes through: bad arguments, then a real server's version") {
    lj_nats_server_t info;
    lj_error_t* err = nullptr;
    CHECK(lj_nats_store_server(nullptr, &info, &err) == LJ_EINVAL);
    CHECK(lj_error_code(err) == LJ_EINVAL);
    lj_error_destroy(err);
    err = nullptr;
    lj_store_t* mem = nullptr;
    REQUIRE(lj_store_memory_open(&mem, nullptr) == LJ_OK);
    CHECK(lj_nats_store_server(mem, nullptr, nullptr) == LJ_EINVAL);
    CHECK(lj_nats_store_server(mem, &info, &err) == LJ_EINVAL);  // no NATS store
    CHECK(std::string(lj_error_message(err)).find("not a NATS store") != std::string::npos);
    lj_error_destroy(err);
    lj_store_destroy(mem);

    SKIP_WITHOUT_NATS_SERVER();
    const std::string version = leasejudge::test::nats_server_version();
    REQUIRE(!version.empty());
    leasejudge::test::NatsServer server;
    REQUIRE(server.start());
    const std::string url = server.url();
    lj_nats_options_t o = options_for(url);
    o.create_bucket = 1;
    o.refuse_unfenced = 1;
    std::vector<std::string> notes;
    o.note = [](const char* line, size_t len, void* payload) {
      static_cast<std::vector<std::string>*>(payload)->emplace_back(line, len);
    };
    o.note_payload = &notes;
    Opened s = open_with(&o);
    REQUIRE_MESSAGE(s.code == LJ_OK, s.message);
    std::memset(&info, 0x7f, sizeof info);
    REQUIRE(lj_nats_store_server(s.store, &info, nullptr) == LJ_OK);
    CHECK(std::string(info.version) == version);
    int major = 0, minor = 0, patch = 0;
    REQUIRE(std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch) == 3);
    CHECK(info.fenced == ((major == 2 && (minor > 9 || (minor == 9 && patch >= 21))) || major > 2 ? 1 : 0));
    // One replica: nothing to say, and writes are not refused, on any version.
    CHECK(notes.empty());
    uint64_t rev = 0;
    CHECK(lj_store_create(&rev, s.store, "k", 1, "v", 1, nullptr) == LJ_OK);
    CHECK(lj_store_update(&rev, s.store, "k", 1, "w", 1, rev, nullptr) == LJ_OK);
    lj_store_destroy(s.store);
  }

  TEST_CASE("bad input is refused with a code, never a crash") {
    lj_store_t* store = reinterpret_cast<lj_store_t*>(0x1);
    CHECK(lj_nats_store_open(nullptr, nullptr, nullptr) == LJ_EINVAL);
    CHECK(lj_nats_store_open(&store, nullptr, nullptr) == LJ_EINVAL);
    CHECK(store == nullptr);

    std::string url = "nats://127.0.0.1:" + std::to_string(leasejudge::test::free_port());
    lj_nats_options_t o = options_for(url);
    o.version = 99;
    CHECK(open_with(&o).code == LJ_EVERSION);

    o = options_for(url, "");
    CHECK(open_with(&o).code == LJ_EINVAL);  // the bucket is required
    o = options_for(url, "bad.bucket");
    CHECK(open_with(&o).code == LJ_EINVAL);
    o = options_for(url, "caf\xc3\xa9");
    CHECK(open_with(&o).code == LJ_EINVAL);  // not [A-Za-z0-9_-]
    o = options_for(url);
    o.bucket = nullptr;
    o.bucket_len = 5;
    CHECK(open_with(&o).code == LJ_EINVAL);  // NULL with a length
    o = options_for(url);
    o.bucket = "ste\0ps";
    o.bucket_len = 6;
    CHECK(open_with(&o).code == LJ_EINVAL);  // a NUL inside
    o = options_for(url);
    o.bucket = "steps and more";
    o.bucket_len = 5;  // the length counts, not a NUL: "steps" is a fine name, and no server answers
    CHECK(open_with(&o).code == LJ_ESTORE);

    std::string two = url + ",," + url;
    o = options_for(two);
    CHECK(open_with(&o).code == LJ_EINVAL);  // an empty URL between commas
    o = options_for(url);
    o.history = 65;
    CHECK(open_with(&o).code == LJ_EINVAL);
    o = options_for(url);
    o.replicas = -1;
    CHECK(open_with(&o).code == LJ_EINVAL);
    o = options_for(url);
    o.request_timeout_ms = -5;
    CHECK(open_with(&o).code == LJ_EINVAL);
    o = options_for(url);
    const char* cert = "/nonexistent/cert.pem";
    o.tls_cert_file = cert;
    o.tls_cert_file_len = std::strlen(cert);
    CHECK(open_with(&o).code == LJ_EINVAL);  // a certificate without its key

    // Well-formed options and no server: a store error naming where it looked.
    o = options_for(url);
    o.connect_timeout_ms = 500;
    Opened down = open_with(&o);
    CHECK(down.code == LJ_ESTORE);
    CHECK(down.message.find(url) != std::string::npos);
    // err is optional.
    lj_store_t* s = nullptr;
    CHECK(lj_nats_store_open(&s, &o, nullptr) == LJ_ESTORE);
    CHECK(s == nullptr);
    lj_store_destroy(nullptr);
  }

  TEST_CASE("the store operations through the C ABI") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    std::string url = server.url();

    lj_nats_options_t missing = options_for(url);
    missing.create_bucket = 0;
    Opened m = open_with(&missing);
    CHECK(m.code == LJ_ESTORE);
    CHECK(m.message.find("bucket steps does not exist") != std::string::npos);

    std::string spaced = " " + url + " ";  // spaces around a URL are trimmed
    lj_nats_options_t o = options_for(spaced);
    o.urls = spaced.c_str();
    o.urls_len = spaced.size();
    Opened opened = open_with(&o);
    REQUIRE(opened.code == LJ_OK);
    lj_store_t* store = opened.store;

    uint64_t r1 = 0;
    REQUIRE(lj_store_create(&r1, store, "node.a", 6, "one", 3, nullptr) == LJ_OK);
    CHECK(r1 == 1);
    uint64_t again = 0;
    CHECK(lj_store_create(&again, store, "node.a", 6, "two", 3, nullptr) == LJ_EEXISTS);

    char* value = nullptr;
    size_t len = 0;
    uint64_t rev = 0;
    REQUIRE(lj_store_get(&value, &len, &rev, store, "node.a", 6, nullptr) == LJ_OK);
    CHECK(std::string(value, len) == "one");
    CHECK(rev == 1);
    lj_free(value);

    uint64_t r2 = 0;
    REQUIRE(lj_store_update(&r2, store, "node.a", 6, "two", 3, 1, nullptr) == LJ_OK);
    CHECK(r2 == 2);
    lj_error_t* err = nullptr;
    CHECK(lj_store_update(&r2, store, "node.a", 6, "stale", 5, 1, &err) == LJ_ECHANGED);
    REQUIRE(err != nullptr);
    CHECK(lj_error_code(err) == LJ_ECHANGED);
    lj_error_destroy(err);
    CHECK(lj_store_remove(store, "node.a", 6, 1, nullptr) == LJ_ECHANGED);

    REQUIRE(lj_store_create(&rev, store, "node.b", 6, "bee", 3, nullptr) == LJ_OK);
    std::set<std::string> keys;
    REQUIRE(lj_store_keys(store, collect_key, &keys, nullptr) == LJ_OK);
    CHECK(keys == std::set<std::string>{"node.a", "node.b"});
    int calls = 0;
    CHECK(lj_store_keys(store, stop_at_first, &calls, nullptr) == LJ_EUSER);
    CHECK(calls == 1);

    REQUIRE(lj_store_remove(store, "node.a", 6, 2, nullptr) == LJ_OK);
    value = nullptr;
    CHECK(lj_store_get(&value, &len, &rev, store, "node.a", 6, nullptr) == LJ_ENOTFOUND);
    CHECK(value == nullptr);
    CHECK(lj_store_remove(store, "node.a", 6, 2, nullptr) == LJ_ECHANGED);

    // Keys NATS cannot hold.
    CHECK(lj_store_get(&value, &len, &rev, store, "a b", 3, nullptr) == LJ_EINVAL);
    CHECK(lj_store_create(&rev, store, "caf\xc3\xa9", 5, "v", 1, nullptr) == LJ_EINVAL);
    CHECK(lj_store_create(&rev, store, "a\0b", 3, "v", 1, nullptr) == LJ_EINVAL);
    CHECK(lj_store_update(&rev, store, ".a", 2, "v", 1, 3, nullptr) == LJ_EINVAL);
    CHECK(lj_store_remove(store, "a.", 2, 3, nullptr) == LJ_EINVAL);
    // A value past the server's maximum payload.
    std::vector<char> huge(2 * 1024 * 1024, 'x');
    CHECK(lj_store_create(&rev, store, "big", 3, huge.data(), huge.size(), nullptr) == LJ_EINVAL);
    // Values are bytes: NUL and non-UTF-8 kept.
    const char bytes[] = {'a', '\0', '\xff', 'b'};
    REQUIRE(lj_store_create(&rev, store, "bin", 3, bytes, sizeof bytes, nullptr) == LJ_OK);
    REQUIRE(lj_store_get(&value, &len, &rev, store, "bin", 3, nullptr) == LJ_OK);
    CHECK(std::string(value, len) == std::string(bytes, sizeof bytes));
    lj_free(value);

    // The server gone: a store error; back: the next call works.
    server.kill();
    CHECK(lj_store_get(&value, &len, &rev, store, "node.b", 6, nullptr) == LJ_ESTORE);
    REQUIRE(server.start());
    int rc = LJ_ESTORE;
    for (int i = 0; i < 300 && rc != LJ_OK; ++i) {
      rc = lj_store_get(&value, &len, &rev, store, "node.b", 6, nullptr);
      if (rc != LJ_OK) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(rc == LJ_OK);
    CHECK(std::string(value, len) == "bee");
    lj_free(value);

    lj_store_destroy(store);
  }

  TEST_CASE("a sweep through the C ABI on a NATS bucket") {
    SKIP_WITHOUT_NATS_SERVER();
    NatsServer server;
    REQUIRE(server.start());
    std::string url = server.url();  // options borrow the text
    lj_nats_options_t o = options_for(url);
    Opened opened = open_with(&o);
    REQUIRE(opened.code == LJ_OK);
    lj_store_t* store = opened.store;

    // A step another process left running, one already ended, and another node's.
    std::string left = R"({"id":"s1","tool":"build","state":"running","owner":"gone-boot.1.abc",)"
                       R"("started":"2024-01-01T00:00:00Z"})";
    std::string done = R"({"id":"s2","tool":"build","state":"succeeded","owner":"gone-boot.1.abc",)"
                       R"("started":"2024-01-01T00:00:00Z","ended":"2024-01-01T00:01:00Z"})";
    uint64_t rev = 0;
    REQUIRE(lj_store_create(&rev, store, "node1.s1", 8, left.data(), left.size(), nullptr) == LJ_OK);
    REQUIRE(lj_store_create(&rev, store, "node1.s2", 8, done.data(), done.size(), nullptr) == LJ_OK);
    REQUIRE(lj_store_create(&rev, store, "node2.s3", 8, left.data(), left.size(), nullptr) == LJ_OK);

    // The module's own sweep: this process names its owner token, so the default rule
    // (by-owner) is not-self and every other owner is gone.
    lj_sweep_options_t so;
    REQUIRE(lj_sweep_options_init(&so, LJ_SWEEP_OPTIONS_VERSION) == LJ_OK);
    char* self = nullptr;
    size_t self_len = 0;
    REQUIRE(lj_owner_token(&self, &self_len, 0, nullptr) == LJ_OK);
    so.rules.owner = self;
    so.rules.owner_len = self_len;
    lj_sweep_report_t* report = nullptr;
    REQUIRE(lj_sweep_end_stale(&report, store, "node1", 5, LJ_TIME_DEFAULT, &so, nullptr) == LJ_OK);
    REQUIRE(report != nullptr);
    lj_sweep_counts_t counts;
    REQUIRE(lj_sweep_report_counts(&counts, report) == LJ_OK);
    CHECK(counts.ends == 1);
    CHECK(counts.deletes == 0);
    CHECK(counts.changed == 0);
    CHECK(counts.leaves == 1);
    CHECK(counts.other_node == 0);  // node2's keys are never read
    REQUIRE(lj_sweep_report_ended_count(report) == 1);
    size_t id_len = 0;
    const char* id = lj_sweep_report_ended(report, 0, &id_len);
    CHECK(std::string(id, id_len) == "s1");
    lj_sweep_report_destroy(report);

    char* value = nullptr;
    size_t len = 0;
    REQUIRE(lj_store_get(&value, &len, &rev, store, "node1.s1", 8, nullptr) == LJ_OK);
    std::string ended(value, len);
    lj_free(value);
    CHECK(ended.find(R"("state":"failed")") != std::string::npos);
    CHECK(rev == 4);  // the three creates, then this end
    REQUIRE(lj_store_get(&value, &len, &rev, store, "node2.s3", 8, nullptr) == LJ_OK);
    CHECK(std::string(value, len) == left);  // another node's: untouched
    lj_free(value);
    lj_free(self);

    lj_store_destroy(store);
  }

#else  // a build without the NATS store

  TEST_CASE("a build without NATS says so") {
    std::string url = "nats://127.0.0.1:4222";
    lj_nats_options_t o = options_for(url);
    lj_store_t* store = nullptr;
    lj_error_t* err = nullptr;
    CHECK(lj_nats_store_open(&store, &o, &err) == LJ_EUNSUPPORTED);
    CHECK(store == nullptr);
    REQUIRE(err != nullptr);
    CHECK(lj_error_code(err) == LJ_EUNSUPPORTED);
    lj_error_destroy(err);
    CHECK(lj_nats_store_open(nullptr, &o, nullptr) == LJ_EINVAL);
  }

#endif

}  // TEST_SUITE
