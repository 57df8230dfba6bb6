// The memory store: compare-and-swap on one revision counter, scans in the order
// keys were first written, entries held in place (adopt), writes found through a
// batch's own key bytes, and scans and writes from several threads.
#include "leasejudge/store/memory.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "fixtures/step/step_cases.hpp"
#include "leasejudge/sweep.hpp"
#include "store_contract.hpp"

using namespace leasejudge;

namespace {

// What a scan handed over: key, value and revision of each entry, batch by batch.
struct Seen {
  std::vector<std::vector<std::string>> batches;  // "key=value@revision"
  std::vector<std::string> keys;
  std::vector<bool> in_place;  // per batch: its buffer is the adopted one
};

Seen scan_all(MemoryStore& store, std::string_view prefix, const ScanOptions& options = {},
              const char* adopted = nullptr) {
  Seen seen;
  Status s = store.scan(prefix, [&](const ScanBatch& b) {
    std::vector<std::string> batch;
    for (const BatchEntry& e : b.entries) {
      std::string key(b.buffer.substr(e.key_offset, e.key_len));
      batch.push_back(key + "=" + std::string(b.buffer.substr(e.value_offset, e.value_len)) + "@" +
                      std::to_string(e.revision));
      seen.keys.push_back(key);
    }
    seen.batches.push_back(batch);
    seen.in_place.push_back(adopted != nullptr && b.buffer.data() == adopted);
    // The padding after the buffer is readable (ASan would say otherwise).
    volatile char last = b.buffer.data()[b.buffer.size() + b.padding - 1];
    (void)last;
    return Status::success();
  }, options);
  REQUIRE(s.ok());
  return seen;
}

std::string value_of(MemoryStore& store, std::string_view key) {
  auto got = store.get(key);
  REQUIRE(got.ok());
  return *got ? (*got)->value + "@" + std::to_string((*got)->revision) : "<none>";
}

// Keys and values laid out in one buffer (key, then value, entry by entry), with
// padding after it, and the entries that say where each sits.
struct Layout {
  std::string bytes;
  std::vector<BatchEntry> entries;
  std::size_t size = 0;
  explicit Layout(const std::vector<std::pair<std::string, std::string>>& kv) {
    for (const auto& [k, v] : kv) {
      BatchEntry e;
      e.key_offset = bytes.size();
      e.key_len = static_cast<std::uint32_t>(k.size());
      bytes += k;
      e.value_offset = bytes.size();
      e.value_len = static_cast<std::uint32_t>(v.size());
      bytes += v;
      entries.push_back(e);
    }
    size = bytes.size();
    bytes.append(ScanBuffer::padding, '}');
  }
  std::string_view view() const { return std::string_view(bytes).substr(0, size); }
};

}  // namespace

TEST_SUITE("memory store") {
  TEST_CASE("the store contract every store keeps") {
    MemoryStore s;
    test::check_store_contract(s);
  }

  TEST_CASE("one revision counter, and every write at the revision read") {
    MemoryStore store;
    CHECK(store.put("a", "1") == 1);
    auto created = store.create("b", "2");
    REQUIRE(created.ok());
    CHECK(*created == 2);
    auto exists = store.create("a", "x");
    REQUIRE_FALSE(exists.ok());
    CHECK(exists.error().code == Errc::exists);
    CHECK(exists.error().message == "the key a exists");
    auto stale = store.update("a", "x", 2);
    REQUIRE_FALSE(stale.ok());
    CHECK(stale.error().code == Errc::changed);
    CHECK(stale.error().message == "the key a is no longer at revision 2");
    CHECK(value_of(store, "a") == "1@1");
    auto updated = store.update("a", "3", 1);
    REQUIRE(updated.ok());
    CHECK(*updated == 3);
    auto gone = store.update("nope", "x", 1);
    REQUIRE_FALSE(gone.ok());
    CHECK(gone.error().code == Errc::changed);
    Status wrong = store.remove("b", 1);
    CHECK(wrong.code() == Errc::changed);
    CHECK(wrong.error().message == "the key b is no longer at revision 1");
    CHECK(store.remove("b", 2).ok());  // the counter moves: 4
    CHECK(value_of(store, "b") == "<none>");
    CHECK(store.remove("b", 2).code() == Errc::changed);
    CHECK(store.size() == 1);
    CHECK(store.put("b", "again") == 5);
    CHECK(store.put("a", "") == 6);  // an empty value is a value
    CHECK(value_of(store, "a") == "@6");
    CHECK(store.size() == 2);
  }

  TEST_CASE("scans go in the order keys were first written; keys() in byte order") {
    MemoryStore store;
    store.put("n1.b", "B");
    store.put("n1.a", "A");
    store.put("n10.x", "X");  // another prefix that shares "n1"
    store.put("n1.c", "C");
    store.put("n1", "bare");
    REQUIRE(store.remove("n1.b", 1).ok());
    store.put("n1.b", "B2");  // written again: last in order
    store.put("n1.a", "A2");  // rewritten: keeps its place
    Seen seen = scan_all(store, "n1.");
    CHECK(seen.batches == std::vector<std::vector<std::string>>{{"n1.a=A2@8", "n1.c=C@4", "n1.b=B2@7"}});
    CHECK(*store.keys() == std::vector<std::string>{"n1", "n1.a", "n1.b", "n1.c", "n10.x"});
    CHECK(scan_all(store, "").keys == std::vector<std::string>{"n1.a", "n10.x", "n1.c", "n1", "n1.b"});
    CHECK(scan_all(store, "n2.").batches.empty());
  }

  TEST_CASE("a scan's prefix is told from the key's bytes, at every length") {
    // Prefixes shorter than, as long as and longer than the first bytes an item keeps
    // beside its key (16), over keys written and adopted, with NUL and high bytes.
    MemoryStore store;
    const std::string nul("build-eu-1.\0\xff", 13);
    store.put("build-eu-1.a", "1");
    store.put("build-eu-1", "2");  // the prefix less its dot
    store.put("build-eu-10.a", "3");
    store.put("build-eu-1.abcdef-ghij", "4");
    store.put("build-eu-1.abcdef-ghiK", "5");  // differs from the one before at byte 22
    store.put("build-eu-1.abcd", "6");         // 15 bytes
    store.put("build-eu-1.abcde", "7");        // 16 bytes
    store.put(nul, "8");
    Layout adopted({{"build-eu-1.abcdef-ghij-x", "9"}, {"build-eu-1.abcdef-ghiJ", "10"}, {"b", "11"}});
    REQUIRE(store.adopt(adopted.view(), ScanBuffer::padding, adopted.entries).ok());
    auto keys = [&](std::string_view prefix) { return scan_all(store, prefix).keys; };
    using V = std::vector<std::string>;
    CHECK(keys("build-eu-1.") == V{"build-eu-1.a", "build-eu-1.abcdef-ghij", "build-eu-1.abcdef-ghiK",
                                   "build-eu-1.abcd", "build-eu-1.abcde", nul, "build-eu-1.abcdef-ghij-x",
                                   "build-eu-1.abcdef-ghiJ"});
    CHECK(keys("build-eu-1.abcd") == V{"build-eu-1.abcdef-ghij", "build-eu-1.abcdef-ghiK", "build-eu-1.abcd",
                                       "build-eu-1.abcde", "build-eu-1.abcdef-ghij-x", "build-eu-1.abcdef-ghiJ"});
    CHECK(keys("build-eu-1.abcde") == V{"build-eu-1.abcdef-ghij", "build-eu-1.abcdef-ghiK", "build-eu-1.abcde",
                                        "build-eu-1.abcdef-ghij-x", "build-eu-1.abcdef-ghiJ"});
    CHECK(keys("build-eu-1.abcdef") == V{"build-eu-1.abcdef-ghij", "build-eu-1.abcdef-ghiK",
                                         "build-eu-1.abcdef-ghij-x", "build-eu-1.abcdef-ghiJ"});
    CHECK(keys("build-eu-1.abcdef-ghij") == V{"build-eu-1.abcdef-ghij", "build-eu-1.abcdef-ghij-x"});
    CHECK(keys("build-eu-1.abcdef-ghij-x-") == V{});
    CHECK(keys(nul) == V{nul});
    CHECK(keys(std::string_view(nul.data(), 12)) == V{nul});
    CHECK(keys("build-eu-1") == V{"build-eu-1.a", "build-eu-1", "build-eu-10.a", "build-eu-1.abcdef-ghij",
                                  "build-eu-1.abcdef-ghiK", "build-eu-1.abcd", "build-eu-1.abcde", nul,
                                  "build-eu-1.abcdef-ghij-x", "build-eu-1.abcdef-ghiJ"});
    CHECK(keys("c") == V{});
    CHECK(keys("").size() == 11);
  }

  TEST_CASE("a scan's batches keep to their limits") {
    MemoryStore store;
    for (int i = 0; i < 5; ++i) store.put("k" + std::to_string(i), std::string(10, static_cast<char>('a' + i)));
    store.put("k5", std::string(100, 'z'));
    store.put("k6", "g");
    ScanOptions two;
    two.batch_keys = 2;
    Seen seen = scan_all(store, "k", two);
    REQUIRE(seen.batches.size() == 4);
    CHECK(seen.batches[0].size() == 2);
    CHECK(seen.batches[3] == std::vector<std::string>{"k6=g@7"});
    ScanOptions small;
    small.batch_bytes = 30;
    seen = scan_all(store, "k", small);
    std::vector<std::size_t> sizes;
    for (const auto& b : seen.batches) sizes.push_back(b.size());
    // 12 bytes an entry: the third passes 30; the next batch passes it with k5's 102.
    CHECK(sizes == std::vector<std::size_t>{3, 3, 1});
    ScanOptions zero;
    zero.batch_keys = 0;  // taken as 1
    CHECK(scan_all(store, "k", zero).batches.size() == 7);
  }

  TEST_CASE("adopt holds entries where they sit, and a scan hands them over there") {
    Layout layout({{"n1.a", "{\"a\":1}"}, {"n1.b", "{\"b\":2}"}, {"n1.c", "{\"c\":3}"}, {"n2.d", "d"}, {"n1.e", ""}});
    MemoryStore store;
    store.put("n1.z", "first");  // revision 1
    REQUIRE(store.adopt(layout.view(), ScanBuffer::padding, layout.entries).ok());
    CHECK(store.size() == 6);
    CHECK(value_of(store, "n1.a") == "{\"a\":1}@2");
    CHECK(value_of(store, "n1.e") == "@6");  // no bytes: an empty value
    Seen seen = scan_all(store, "n1.", {}, layout.bytes.data());
    CHECK(seen.batches == std::vector<std::vector<std::string>>{
                              {"n1.z=first@1"}, {"n1.a={\"a\":1}@2", "n1.b={\"b\":2}@3", "n1.c={\"c\":3}@4", "n1.e=@6"}});
    CHECK(seen.in_place == std::vector<bool>{false, true});

    // A value written lives in the store: its key comes in a copied batch, in its place.
    REQUIRE(store.update("n1.b", "{\"b\":\"new\"}", 3).ok());
    seen = scan_all(store, "n1.", {}, layout.bytes.data());
    CHECK(seen.batches == std::vector<std::vector<std::string>>{
                              {"n1.z=first@1"}, {"n1.a={\"a\":1}@2"}, {"n1.b={\"b\":\"new\"}@7"}, {"n1.c={\"c\":3}@4", "n1.e=@6"}});
    CHECK(seen.in_place == std::vector<bool>{false, true, false, true});
    // The adopted bytes are never written.
    CHECK(layout.view().substr(layout.entries[1].value_offset, 7) == "{\"b\":2}");

    // Adopting a key the store holds replaces its value, in its place, at a new revision.
    Layout again({{"n1.a", "[again]"}, {"n1.a", "[last]"}});
    REQUIRE(store.adopt(again.view(), ScanBuffer::padding, again.entries).ok());
    CHECK(value_of(store, "n1.a") == "[last]@9");
    CHECK(scan_all(store, "n1.a").batches == std::vector<std::vector<std::string>>{{"n1.a=[last]@9"}});
  }

  TEST_CASE("adopt refuses an entry outside its bytes and holds nothing then") {
    Layout layout({{"k1", "v1"}, {"k2", "v2"}});
    MemoryStore store;
    std::vector<BatchEntry> bad = layout.entries;
    bad[1].value_len = 1000;
    Status s = store.adopt(layout.view(), ScanBuffer::padding, bad);
    CHECK(s.code() == Errc::invalid_argument);
    CHECK(s.error().message == "entry 1 lies outside the buffer of 8 bytes");
    bad[1] = layout.entries[1];
    bad[1].key_offset = ~std::uint64_t{0};
    CHECK(store.adopt(layout.view(), ScanBuffer::padding, bad).code() == Errc::invalid_argument);
    CHECK(store.size() == 0);
    CHECK(store.put("k1", "x") == 1);  // no revision was spent
    CHECK(store.adopt({}, 0, {}).ok());
  }

  TEST_CASE("adopt keeps what it is given to keep for as long as the store lives") {
    auto bytes = std::make_shared<std::string>("keyvalue" + std::string(ScanBuffer::padding, ' '));
    std::weak_ptr<std::string> watch = bytes;
    std::vector<BatchEntry> entries{BatchEntry{0, 3, 3, 5, 0}};
    {
      MemoryStore store;
      REQUIRE(store.adopt(std::string_view(*bytes).substr(0, 8), ScanBuffer::padding, entries, bytes).ok());
      bytes.reset();
      CHECK_FALSE(watch.expired());
      CHECK(value_of(store, "key") == "value@1");
    }
    CHECK(watch.expired());
  }

  TEST_CASE("what a scan's sink writes is not handed over again, nor keys first written since") {
    MemoryStore store;
    for (const char* k : {"n.a", "n.b", "n.c", "n.d", "n.e"}) store.put(k, k);
    ScanOptions one;
    one.batch_keys = 1;
    std::vector<std::string> handed;
    Status s = store.scan("n.", [&](const ScanBatch& b) {
      const BatchEntry& e = b.entries[0];
      std::string key(b.buffer.substr(e.key_offset, e.key_len));
      handed.push_back(key);
      if (key == "n.a") {
        REQUIRE(store.update("n.a", "rewritten", e.revision).ok());  // handed: not again
        REQUIRE(store.remove("n.b", 2).ok());                      // not handed yet: never
        store.put("n.new", "created");                             // first written since: not this scan's
      }
      if (key == "n.c") {
        REQUIRE(store.remove("n.a", 6).ok());
        store.put("n.a", "back");  // written anew, after the scan began
        store.put("n.d", "changed");  // not handed yet: handed as it is now
      }
      return Status::success();
    }, one);
    REQUIRE(s.ok());
    CHECK(handed == std::vector<std::string>{"n.a", "n.c", "n.d", "n.e"});
    CHECK(scan_all(store, "n.").keys == std::vector<std::string>{"n.c", "n.d", "n.e", "n.new", "n.a"});
  }

  TEST_CASE("a write with a batch's own key bytes finds its key, and only its key") {
    Layout layout({{"n.a", "1"}, {"n.b", "2"}, {"n.c", "3"}});
    MemoryStore store;
    REQUIRE(store.adopt(layout.view(), ScanBuffer::padding, layout.entries).ok());
    Status s = store.scan("n.", [&](const ScanBatch& b) {
      auto key = [&](std::size_t i) { return b.buffer.substr(b.entries[i].key_offset, b.entries[i].key_len); };
      // A key gone (removed through other bytes): the batch's bytes name no live key.
      REQUIRE(store.remove(std::string(key(1)), 2).ok());
      CHECK(store.update(key(1), "x", 2).code() == Errc::changed);
      // Written anew: the batch's bytes find the new one.
      Revision anew = store.put("n.b", "B");
      CHECK(store.update(key(1), "stale", 2).code() == Errc::changed);
      REQUIRE(store.update(key(1), "B2", anew).ok());
      // Out of the batch's order.
      REQUIRE(store.update(key(2), "C", b.entries[2].revision).ok());
      REQUIRE(store.update(key(0), "A", b.entries[0].revision).ok());
      return Status::success();
    });
    REQUIRE(s.ok());
    CHECK(value_of(store, "n.a") == "A@8");
    CHECK(value_of(store, "n.b") == "B2@6");
    CHECK(value_of(store, "n.c") == "C@7");
    CHECK(store.size() == 3);
  }

  TEST_CASE("many keys written and removed leave the store whole") {
    MemoryStore store;
    std::set<std::string> live;
    for (int i = 0; i < 20000; ++i) {
      std::string key = "k." + std::to_string(i % 997) + "." + std::to_string(i / 997 % 3);
      auto got = store.get(key);
      REQUIRE(got.ok());
      if (*got && i % 3 != 0) {
        REQUIRE(store.remove(key, (*got)->revision).ok());
        live.erase(key);
      } else {
        store.put(key, std::to_string(i));
        live.insert(key);
      }
      if (i % 5000 == 0) scan_all(store, "k.");  // a scan between: dropped items reused after it
    }
    CHECK(store.size() == live.size());
    auto keys = *store.keys();
    CHECK(std::set<std::string>(keys.begin(), keys.end()) == live);
    Seen seen = scan_all(store, "k.");
    CHECK(seen.keys.size() == live.size());
    CHECK(std::set<std::string>(seen.keys.begin(), seen.keys.end()) == live);
  }

  TEST_CASE("scans and writes from several threads") {
    MemoryStore store;
    Layout layout([] {
      std::vector<std::pair<std::string, std::string>> kv;
      for (int i = 0; i < 300; ++i) kv.emplace_back("s." + std::to_string(i), "s." + std::to_string(i) + ":0");
      return kv;
    }());
    REQUIRE(store.adopt(layout.view(), ScanBuffer::padding, layout.entries).ok());
    std::atomic<bool> stop{false};
    std::atomic<int> scans{0};
    std::atomic<int> bad{0};
    auto scanner = [&] {
      while (!stop) {
        std::set<std::string> once;
        ScanOptions o;
        o.batch_keys = 7;
        Status s = store.scan("s.", [&](const ScanBatch& b) {
          for (const BatchEntry& e : b.entries) {
            std::string key(b.buffer.substr(e.key_offset, e.key_len));
            std::string_view value = b.buffer.substr(e.value_offset, e.value_len);
            // Each key once, its value its own.
            if (!once.insert(key).second || value.substr(0, key.size() + 1) != key + ":") ++bad;
          }
          return Status::success();
        }, o);
        if (!s.ok()) ++bad;
        ++scans;
      }
    };
    std::thread a(scanner), b(scanner);
    std::mt19937 rng(7);
    for (int i = 1; i < 20000; ++i) {
      std::string key = "s." + std::to_string(rng() % 300);
      auto got = store.get(key);
      REQUIRE(got.ok());
      if (!*got) {
        store.put(key, key + ":" + std::to_string(i));
      } else if (i % 4 == 0) {
        REQUIRE(store.remove(key, (*got)->revision).ok());
      } else {
        REQUIRE(store.update(key, key + ":" + std::to_string(i), (*got)->revision).ok());
      }
    }
    while (scans < 20) std::this_thread::yield();
    stop = true;
    a.join();
    b.join();
    CHECK(bad == 0);
    CHECK(scan_all(store, "s.").keys.size() == store.size());
  }

  TEST_CASE("a sweep over an adopted state does what it does over the state written key by key") {
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& c : step_cases::corpus(3000, 23)) kv.emplace_back(c.key, c.value);
    Layout layout(kv);
    MemoryStore adopted, written;
    REQUIRE(adopted.adopt(layout.view(), ScanBuffer::padding, layout.entries).ok());
    for (const auto& [k, v] : kv) written.put(k, v);
    SweepOptions o;
    o.rules.owner = std::string(step_cases::self);
    o.rules.before = step_cases::before;
    o.clock = fixed_clock(step_cases::now);
    o.batch_keys = 500;
    std::vector<std::string> log_a, log_w;
    SweepReport ra = end_stale(adopted, "n1", step_cases::before, [&](std::string_view l) { log_a.emplace_back(l); }, o);
    SweepReport rw = end_stale(written, "n1", step_cases::before, [&](std::string_view l) { log_w.emplace_back(l); }, o);
    REQUIRE(ra.status.ok());
    REQUIRE(rw.status.ok());
    CHECK(ra.counts.ends > 0);
    CHECK(ra.counts.deletes > 0);
    CHECK(ra.ended == rw.ended);
    CHECK(log_a == log_w);
    CHECK(ra.counts.ends == rw.counts.ends);
    CHECK(ra.counts.deletes == rw.counts.deletes);
    CHECK(ra.counts.left == rw.counts.left);
    CHECK(ra.counts.no_step == rw.counts.no_step);
    const std::vector<std::string> keys = *written.keys();
    CHECK(*adopted.keys() == keys);
    for (const auto& key : keys) {
      CAPTURE(key);
      auto x = adopted.get(key), y = written.get(key);
      REQUIRE(x.ok());
      REQUIRE(y.ok());
      CHECK((*x)->value == (*y)->value);
    }
    // A second sweep finds nothing more to do, over the values the first wrote.
    SweepReport again = end_stale(adopted, "n1", step_cases::before, {}, o);
    CHECK(again.ended.empty());
    CHECK(again.counts.left + again.counts.no_step == ra.counts.left + ra.counts.no_step + ra.counts.ends);
  }
}
