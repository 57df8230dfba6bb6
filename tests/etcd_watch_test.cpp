// The etcd watch from a revision, on a real etcd member started here: a watch from an
// older revision hands over every write since, in order; one from a revision etcd
// has compacted away hands over a fresh scan instead, notes it once, and goes on.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "etcd_server.hpp"

#if defined(LEASEJUDGE_HAVE_ETCD)

using namespace leasejudge;
using namespace leasejudge::test;

namespace {

std::unique_ptr<EtcdStore> open_store(const std::string& prefix) {
  return open_etcd(shared_etcd_cluster(1).endpoints(), prefix);
}

// The next n changes (or fewer, after 5 s).
std::vector<KeyChange> take(KeyWatch& w, std::size_t n) {
  std::vector<KeyChange> out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
    Status s = w.next(out, 200'000'000);
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
  }
  return out;
}

void check_change(const KeyChange& c, const std::string& key, Revision revision, std::optional<std::string> value) {
  CHECK(c.key == key);
  CHECK(c.revision == revision);
  CHECK(c.value == value);
}

}  // namespace

TEST_SUITE("etcd watch from a revision") {
  TEST_CASE("a watch from an older revision sees every write since, in order") {
    SKIP_WITHOUT_ETCD();
    auto store = open_store("wf" + std::to_string(::getpid()));
    auto r1 = store->put("n.a", "1");
    auto r2 = store->put("n.b", std::string("2\0x", 3));
    REQUIRE(r1.ok());
    REQUIRE(r2.ok());
    REQUIRE(store->remove("n.a", *r1).ok());
    auto r4 = store->put("other.c", "4");  // outside the watched prefix
    auto r5 = store->put("n.b", "5");
    REQUIRE(r4.ok());
    REQUIRE(r5.ok());
    KeyWatchOptions o;
    o.from_revision = *r1;
    auto w = store->watch("n.", o);
    REQUIRE(w.ok());
    std::vector<KeyChange> got = take(**w, 4);
    REQUIRE(got.size() == 4);
    check_change(got[0], "n.a", *r1, "1");
    check_change(got[1], "n.b", *r2, std::string("2\0x", 3));
    check_change(got[2], "n.a", *r2 + 1, std::nullopt);
    check_change(got[3], "n.b", *r5, "5");
    // From now on, as a watch from now.
    auto r6 = store->put("n.a", "6");
    REQUIRE(r6.ok());
    got = take(**w, 1);
    REQUIRE(got.size() == 1);
    check_change(got[0], "n.a", *r6, "6");
  }

  TEST_CASE("a watch from a compacted revision answers with a fresh scan, says so once, and goes on") {
    SKIP_WITHOUT_ETCD();
    auto store = open_store("wc" + std::to_string(::getpid()));
    auto r1 = store->put("n.x", "1");
    auto r2 = store->put("n.x", "2");
    auto r3 = store->put("n.y", "3");
    REQUIRE(r1.ok());
    REQUIRE(r2.ok());
    REQUIRE(r3.ok());
    REQUIRE(store->remove("n.y", *r3).ok());  // revision r3 + 1: gone before the scan
    auto r5 = store->put("n.z", "5");
    REQUIRE(r5.ok());
    REQUIRE(store->compact(*r3).ok());
    std::vector<std::string> notes;
    KeyWatchOptions o;
    o.from_revision = *r1;
    o.note = [&](std::string_view line) { notes.emplace_back(line); };
    auto w = store->watch("n.", o);
    REQUIRE(w.ok());
    std::vector<KeyChange> got = take(**w, 2);
    REQUIRE(got.size() == 2);
    check_change(got[0], "n.x", *r2, "2");
    check_change(got[1], "n.z", *r5, "5");
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == "etcd at http://" + shared_etcd_cluster(1).endpoint(0) + "/v3/watch: the watch's start revision " +
                          std::to_string(*r1) + " was compacted (etcd keeps revisions from " + std::to_string(*r3) +
                          " on): a scan at revision " + std::to_string(*r5) +
                          " (2 keys) stands for the changes since, and the watch goes on from revision " +
                          std::to_string(*r5 + 1));
    auto r6 = store->put("n.x", "6");
    REQUIRE(r6.ok());
    got = take(**w, 1);
    REQUIRE(got.size() == 1);
    check_change(got[0], "n.x", *r6, "6");
    CHECK(notes.size() == 1);
  }

  TEST_CASE("a start revision past etcd's int64 is refused before any request; the largest one waits") {
    SKIP_WITHOUT_ETCD();
    auto store = open_store("wb" + std::to_string(::getpid()));
    KeyWatchOptions o;
    o.from_revision = static_cast<Revision>(INT64_MAX) + 1;
    auto refused = store->watch("n.", o);
    REQUIRE(!refused.ok());
    CHECK(refused.code() == Errc::invalid_argument);
    CHECK(refused.error().message ==
          "a watch cannot start from revision 9223372036854775808: etcd's revisions are at most 9223372036854775807");
    o.from_revision = UINT64_MAX;
    CHECK(store->watch("n.", o).code() == Errc::invalid_argument);
    o.from_revision = INT64_MAX;
    auto far = store->watch("n.", o);
    REQUIRE(far.ok());
    REQUIRE(store->put("n.a", "1").ok());
    std::vector<KeyChange> none;
    CHECK((*far)->next(none, 300'000'000).ok());
    CHECK(none.empty());
  }

  TEST_CASE("a watch from a revision not yet written waits for it") {
    SKIP_WITHOUT_ETCD();
    auto store = open_store("wn" + std::to_string(::getpid()));
    auto r1 = store->put("n.a", "1");
    REQUIRE(r1.ok());
    KeyWatchOptions o;
    o.from_revision = *r1 + 2;
    auto w = store->watch("n.", o);
    REQUIRE(w.ok());
    REQUIRE(store->put("n.a", "2").ok());  // r1 + 1: before the start
    auto r3 = store->put("n.a", "3");
    REQUIRE(r3.ok());
    std::vector<KeyChange> got = take(**w, 1);
    REQUIRE(got.size() == 1);
    check_change(got[0], "n.a", *r3, "3");
  }
}

#else

TEST_CASE("etcd watch: this build has no etcd store") {
  LJ_REQUIRE_OR_SKIP(false, "this build has no etcd store (libcurl4-openssl-dev was not found)");
}

#endif
