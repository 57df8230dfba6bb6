// The store contract every store keeps, one test body run over each store (memory,
// etcd, ...): create-if-absent, writes at the revision read, lost races as changed or
// exists, keys and values as bytes, the paginated scan, the pipeline's outcomes in
// send order, and the watch. Keys follow the strictest store's rules (NATS KV's). The
// store must start empty. Expected values are written out here, never read back from
// the store under test first. Private to the tests.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "leasejudge/store.hpp"

namespace leasejudge::test {

inline Revision must_create(Store& s, const std::string& key, const std::string& value) {
  auto r = s.create(key, value);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return *r;
}

inline void contract_single_keys(Store& s) {
  auto none = s.get("c.a");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  const std::string bytes("\xff\xfe\x00v\x80", 5);  // not UTF-8, with a NUL
  Revision r1 = must_create(s, "c.a", bytes);
  CHECK(r1 > 0);
  CHECK(s.create("c.a", "other").code() == Errc::exists);
  auto got = s.get("c.a");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK((**got).value == bytes);
  CHECK((**got).revision == r1);
  auto r2 = s.update("c.a", "two", r1);
  REQUIRE(r2.ok());
  CHECK(*r2 > r1);
  CHECK(s.update("c.a", "stale", r1).code() == Errc::changed);
  CHECK(s.update("c.a", "zero", 0).code() == Errc::changed);
  CHECK(s.remove("c.a", r1).code() == Errc::changed);
  got = s.get("c.a");
  REQUIRE(got.ok());
  CHECK((**got).value == "two");  // no lost race wrote anything
  CHECK((**got).revision == *r2);
  CHECK(s.remove("c.a", *r2).ok());
  none = s.get("c.a");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  CHECK(s.remove("c.a", *r2).code() == Errc::changed);       // gone
  CHECK(s.update("c.a", "x", *r2).code() == Errc::changed);  // gone
  Revision r3 = must_create(s, "c.a", "");                   // created again, empty
  CHECK(r3 > *r2);
  got = s.get("c.a");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK((**got).value.empty());
  CHECK(s.remove("c.a", r3).ok());
}

// 25 keys under "s.", one beside it; scanned in batches of at most 10.
inline void contract_scan(Store& s) {
  std::vector<std::pair<std::string, Revision>> written;
  for (int i = 0; i < 25; ++i) {
    std::string key = "s.k" + std::string(i < 10 ? "0" : "") + std::to_string(i);
    written.emplace_back(key, must_create(s, key, "v" + std::to_string(i)));
  }
  must_create(s, "sx", "beside");
  ScanOptions options;
  options.batch_keys = 10;
  std::vector<std::pair<std::string, Revision>> seen;
  std::vector<std::string> values;
  std::size_t largest = 0;
  ScanStats stats;
  Status st = s.scan(
      "s.",
      [&](const ScanBatch& b) {
        largest = std::max(largest, b.entries.size());
        for (const BatchEntry& e : b.entries) {
          seen.emplace_back(std::string(b.buffer.substr(e.key_offset, e.key_len)), e.revision);
          values.emplace_back(b.buffer.substr(e.value_offset, e.value_len));
        }
        return Status::success();
      },
      options, &stats);
  REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message));
  std::sort(seen.begin(), seen.end());
  CHECK(seen == written);
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(values[i] == "v" + std::to_string(i));
  CHECK(largest <= 10);
  CHECK(stats.keys == 25);
  CHECK(stats.batches >= 3);
  auto keys = s.keys();
  REQUIRE(keys.ok());
  CHECK(keys->size() == 26);
  CHECK(std::find(keys->begin(), keys->end(), "sx") != keys->end());
}

// Outcomes in send order: done, changed (stale), done (a delete), changed (revision 0).
inline void contract_pipeline(Store& s) {
  Revision a = must_create(s, "p.a", "a");
  Revision b = must_create(s, "p.b", "b");
  Revision c = must_create(s, "p.c", "c");
  REQUIRE(s.update("p.b", "b2", b).ok());
  auto p = s.pipeline();
  p->update("p.a", "a2", a);
  p->update("p.b", "b3", b);
  p->remove("p.c", c);
  p->update("p.d", "d", 0);
  CHECK(p->in_flight() == 4);
  std::vector<WriteOutcome> out;
  while (auto o = p->next()) out.push_back(*o);
  REQUIRE(out.size() == 4);
  CHECK(out[0].kind == WriteOutcome::Kind::done);
  CHECK(out[1].kind == WriteOutcome::Kind::changed);
  CHECK(out[2].kind == WriteOutcome::Kind::done);
  CHECK(out[3].kind == WriteOutcome::Kind::changed);
  CHECK_FALSE(p->broken());
  auto got = s.get("p.a");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK((**got).value == "a2");
  CHECK((**got).revision == out[0].revision);
  got = s.get("p.c");
  REQUIRE(got.ok());
  CHECK_FALSE(got->has_value());
  got = s.get("p.b");
  REQUIRE(got.ok());
  CHECK((**got).value == "b2");
}

// Pipelined creates, in a mixed batch whose outcomes keep the order sent: an absent
// key is created at the revision a read then gives; a key holding a value is exists
// (changed, Errc::exists), its value untouched; a deleted key is created again; an
// update between them keeps its place.
inline void contract_pipeline_create(Store& s) {
  Revision held = must_create(s, "c.held", "old");
  Revision gone = must_create(s, "c.gone", "was");
  REQUIRE(s.remove("c.gone", gone).ok());
  Revision upd = must_create(s, "c.upd", "u1");
  auto p = s.pipeline();
  p->create("c.new", "fresh");
  p->create("c.held", "overwrite?");
  p->update("c.upd", "u2", upd);
  p->create("c.gone", "again");
  p->create("c.held", "twice?");
  CHECK(p->in_flight() == 5);
  std::vector<WriteOutcome> out;
  while (auto o = p->next()) out.push_back(*o);
  REQUIRE(out.size() == 5);
  CHECK(out[0].kind == WriteOutcome::Kind::done);
  CHECK(out[1].kind == WriteOutcome::Kind::changed);
  CHECK(out[1].error.code == Errc::exists);
  CHECK(out[2].kind == WriteOutcome::Kind::done);
  CHECK(out[3].kind == WriteOutcome::Kind::done);
  CHECK(out[4].kind == WriteOutcome::Kind::changed);
  CHECK(out[4].error.code == Errc::exists);
  CHECK_FALSE(p->broken());
  auto expect = [&](std::string_view key, std::string_view value, Revision revision) {
    auto got = s.get(key);
    REQUIRE(got.ok());
    REQUIRE(got->has_value());
    CHECK((**got).value == value);
    CHECK((**got).revision == revision);
  };
  expect("c.new", "fresh", out[0].revision);
  expect("c.held", "old", held);
  expect("c.upd", "u2", out[2].revision);
  expect("c.gone", "again", out[3].revision);
  CHECK(out[0].revision > 0);
  CHECK(out[3].revision > 0);
}

// The changes a watch hands over within 10 s, until want of them came.
inline std::vector<KeyChange> watch_until(KeyWatch& w, std::size_t want) {
  std::vector<KeyChange> out;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (out.size() < want && std::chrono::steady_clock::now() < until) {
    Status st = w.next(out, 200'000'000);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message));
  }
  return out;
}

inline void contract_watch(Store& s) {
  must_create(s, "w.before", "old");  // before the watch: not a change
  KeyWatchOptions options;
  options.poll_ns = 20'000'000;
  auto w = s.watch("w.", options);
  REQUIRE_MESSAGE(w.ok(), (w.ok() ? std::string() : w.error().message));
  Revision r1 = must_create(s, "w.k", "one");
  must_create(s, "x.k", "outside");
  auto first = watch_until(**w, 1);
  REQUIRE(first.size() == 1);
  CHECK(first[0].key == "w.k");
  CHECK(first[0].revision == r1);
  CHECK(first[0].value == std::optional<std::string>("one"));
  REQUIRE(s.remove("w.k", r1).ok());
  auto second = watch_until(**w, 1);
  REQUIRE(second.size() == 1);
  CHECK(second[0].key == "w.k");
  CHECK_FALSE(second[0].value.has_value());
}

// Every part, on a store that starts empty.
inline void check_store_contract(Store& s) {
  SUBCASE("single keys") { contract_single_keys(s); }
  SUBCASE("scan") { contract_scan(s); }
  SUBCASE("pipeline") { contract_pipeline(s); }
  SUBCASE("pipelined create") { contract_pipeline_create(s); }
  SUBCASE("watch") { contract_watch(s); }
}

}  // namespace leasejudge::test
