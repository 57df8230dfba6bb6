// TextList: byte strings one after another in blocks that never move, read back as
// views, each followed by a NUL.
#include "leasejudge/text_list.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

using namespace leasejudge;
using namespace std::string_literals;

TEST_SUITE("text_list") {
  TEST_CASE("an empty list") {
    TextList l;
    CHECK(l.empty());
    CHECK(l.size() == 0);
    CHECK(l.begin() == l.end());
    CHECK(l.strings().empty());
    CHECK(l == TextList{});
    CHECK(l == std::vector<std::string>{});
    CHECK_FALSE(l == std::vector<std::string>{""});
  }

  TEST_CASE("elements read back as they were pushed, any byte kept") {
    const std::vector<std::string> in{"", "a", "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6", "a\0b"s, "\xFF\xFE", ""};
    TextList l;
    for (const std::string& s : in) l.push_back(s);
    REQUIRE(l.size() == 6);
    CHECK_FALSE(l.empty());
    for (std::size_t i = 0; i < in.size(); ++i) {
      CHECK(l[i] == in[i]);
      CHECK(l[i].size() == in[i].size());
      // A NUL follows each element's bytes.
      CHECK(l[i].data()[l[i].size()] == '\0');
    }
    CHECK(l[3] == "a\0b"s);
    CHECK(l.back() == "");
    CHECK(std::strcmp(l[2].data(), "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6") == 0);
    CHECK(l.strings() == in);
    CHECK(l == in);
    std::vector<std::string> other = in;
    other[3] = "a\0c"s;
    CHECK_FALSE(l == other);
    other = in;
    other.pop_back();
    CHECK_FALSE(l == other);
  }

  TEST_CASE("its iterator is random access") {
    TextList l;
    for (const char* s : {"c", "a", "bb", "a"}) l.push_back(s);
    auto it = l.begin();
    CHECK(*it == "c");
    CHECK(it[2] == "bb");
    CHECK(*(it + 3) == "a");
    CHECK(*(3 + it) == "a");
    CHECK(l.end() - l.begin() == 4);
    CHECK(std::distance(l.begin(), l.end()) == 4);
    CHECK(*--l.end() == "a");
    CHECK(it < l.end());
    ++it;
    it++;
    CHECK(*it == "bb");
    it -= 2;
    CHECK(*it == "c");
    CHECK(std::count(l.begin(), l.end(), "a") == 2);
    std::vector<std::string_view> all(l.begin(), l.end());
    CHECK(all == std::vector<std::string_view>{"c", "a", "bb", "a"});
    static_assert(std::random_access_iterator<TextList::const_iterator>);
  }

  TEST_CASE("two lists are equal when their elements are, not their bytes alone") {
    TextList ab, a_b, ab2;
    ab.push_back("ab");
    a_b.push_back("a");
    a_b.push_back("b");
    ab2.push_back("ab");
    CHECK(ab == ab2);
    CHECK_FALSE(ab == a_b);
    TextList empty_one, none;
    empty_one.push_back("");
    CHECK_FALSE(empty_one == none);
  }

  TEST_CASE("copied, moved, cleared, reserved") {
    TextList l;
    l.reserve(1000, 40000);
    const std::string big(100000, 'x');
    for (int i = 0; i < 1000; ++i) l.push_back(std::to_string(i));
    l.push_back(big);
    TextList copy = l;
    CHECK(copy == l);
    CHECK(copy[999] == "999");
    CHECK(copy.back() == big);
    CHECK(copy[5].data() != l[5].data());  // its own bytes
    TextList moved = std::move(copy);
    CHECK(moved == l);
    l.clear();
    CHECK(l.empty());
    l.push_back("again");
    CHECK(l.size() == 1);
    CHECK(l[0] == "again");
    CHECK(moved.size() == 1001);
  }

  TEST_CASE("a view stays where it is while the list grows, across blocks and pages") {
    // 200,000 elements of 1 to 40 bytes: some 4 MB, many 64 KiB blocks, 49 pages of
    // views; every tenth thousand one longer than a block's quarter, in a block of its own.
    TextList l;
    std::vector<std::string> in;
    std::vector<std::string_view> seen;
    std::vector<const char*> where;
    for (int i = 0; i < 200000; ++i) {
      std::string e = i % 10000 == 9999 ? std::string(20000 + i % 7, static_cast<char>('a' + i % 26))
                                        : std::string(1 + i % 40, static_cast<char>('A' + i % 26));
      e[0] = static_cast<char>(i % 251);
      in.push_back(e);
      l.push_back(e);
      seen.push_back(l.back());
      where.push_back(l.back().data());
    }
    REQUIRE(l.size() == in.size());
    TextList moved = std::move(l);
    // Moved from, a list is empty, and takes elements again.
    CHECK(l.empty());  // NOLINT(bugprone-use-after-move)
    CHECK(l.begin() == l.end());
    l.push_back("after");
    CHECK(l.size() == 1);
    CHECK(l[0] == "after");
    TextList other;
    other.push_back("x");
    other = std::move(l);
    CHECK(other.size() == 1);
    CHECK(other[0] == "after");
    CHECK(l.empty());  // NOLINT(bugprone-use-after-move)
    l.push_back("again");
    CHECK(l.back() == "again");
    for (std::size_t i = 0; i < in.size(); ++i) {
      REQUIRE(moved[i] == in[i]);
      REQUIRE(moved[i].data() == where[i]);  // neither appending nor moving moved it
      REQUIRE(seen[i] == in[i]);
      REQUIRE(moved[i].data()[in[i].size()] == '\0');
    }
    CHECK(moved == in);
    TextList copy = moved;
    CHECK(copy == moved);
    CHECK(copy[150000].data() != moved[150000].data());
    copy = TextList{};
    CHECK(copy.empty());
    copy = moved;
    CHECK(copy == in);
  }

  TEST_CASE("cleared, a list fills its blocks again from the first") {
    TextList l;
    for (int i = 0; i < 50000; ++i) l.push_back("0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6");
    const char* first = l[0].data();
    l.push_back(std::string(100000, 'x'));
    l.clear();
    CHECK(l.empty());
    CHECK(l.begin() == l.end());
    for (int i = 0; i < 50000; ++i) l.push_back(std::to_string(i));
    CHECK(l[0].data() == first);  // the first block again
    CHECK(l.size() == 50000);
    CHECK(l[49999] == "49999");
    CHECK(l.back().data()[5] == '\0');
    TextList reserved;
    reserved.reserve(10000, 10000 * 37);
    reserved.push_back("a");
    const char* at = reserved[0].data();
    for (int i = 0; i < 9999; ++i) reserved.push_back("0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6");
    CHECK(reserved[0].data() == at);
    CHECK(reserved.size() == 10000);
    CHECK(reserved[9999] == "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6");
  }
}
