// JSON string bodies as both families undo them: the same escapes, lone surrogates kept
// (JavaScript) or replaced (Go). Expected bytes are written out by hand.
#include "json_string.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace leasejudge::json_string;

namespace {
struct Undone {
  bool ok;
  std::string text;
};
Undone undo(std::string_view body, LoneSurrogate lone) {
  Undone u{false, "prefix:"};
  u.ok = append_unescaped(body, u.text, lone);
  return u;
}
}  // namespace

TEST_SUITE("json string") {
  TEST_CASE("the escapes JSON has, alike in both families") {
    for (LoneSurrogate lone : {LoneSurrogate::keep, LoneSurrogate::replace}) {
      CAPTURE(static_cast<int>(lone));
      auto u = undo(R"(a\"b\\c\/d\be\ff\ng\rh\ti)", lone);
      CHECK(u.ok);
      CHECK(u.text == "prefix:a\"b\\c/d\be\ff\ng\rh\ti");  // appended, never replaced
      CHECK(undo(R"(\u0041\u00e9\u2713\uFFFF)", lone).text == "prefix:A\xC3\xA9\xE2\x9C\x93\xEF\xBF\xBF");
      // A pair of surrogates is one code point (U+1F600).
      CHECK(undo(R"(\ud83d\ude00)", lone).text == "prefix:\xF0\x9F\x98\x80");
      CHECK(undo(R"(\uD83D\uDE00)", lone).text == "prefix:\xF0\x9F\x98\x80");
      CHECK(undo("", lone).text == "prefix:");
      // Valid UTF-8 passes as it is.
      CHECK(undo("\xC3\xA9\xF0\x9F\x98\x80", lone).text == "prefix:\xC3\xA9\xF0\x9F\x98\x80");
    }
  }

  TEST_CASE("a lone surrogate is kept by JavaScript and replaced by Go") {
    CHECK(undo(R"(\ud800)", LoneSurrogate::keep).text == "prefix:\xED\xA0\x80");
    CHECK(undo(R"(\ud800)", LoneSurrogate::replace).text == "prefix:\xEF\xBF\xBD");
    CHECK(undo(R"(\udc00)", LoneSurrogate::keep).text == "prefix:\xED\xB0\x80");
    CHECK(undo(R"(\udc00)", LoneSurrogate::replace).text == "prefix:\xEF\xBF\xBD");
    // A high surrogate before something that is no low one stands alone; what follows
    // is read for itself.
    CHECK(undo(R"(\ud800\u0041)", LoneSurrogate::keep).text ==
          "prefix:\xED\xA0\x80"
          "A");
    CHECK(undo(R"(\ud800\u0041)", LoneSurrogate::replace).text ==
          "prefix:\xEF\xBF\xBD"
          "A");
    CHECK(undo(R"(\ud800\ud800\udc00)", LoneSurrogate::replace).text == "prefix:\xEF\xBF\xBD\xF0\x90\x80\x80");
    CHECK(undo(R"(\udc00\ud800)", LoneSurrogate::replace).text == "prefix:\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(undo(R"(x\ud800)", LoneSurrogate::keep).text == "prefix:x\xED\xA0\x80");
  }

  TEST_CASE("invalid UTF-8 reads as U+FFFD, byte by byte, as Go reads it") {
    for (LoneSurrogate lone : {LoneSurrogate::keep, LoneSurrogate::replace}) {
      CHECK(undo("a\xFF"
                 "b",
                 lone)
                .text ==
            "prefix:a\xEF\xBF\xBD"
            "b");
      CHECK(undo("\xC3", lone).text == "prefix:\xEF\xBF\xBD");                                  // cut short
      CHECK(undo("\xED\xA0\x80", lone).text == "prefix:\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // no surrogates
      CHECK(undo("\xF4\x90\x80\x80", lone).text == "prefix:\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    }
  }

  TEST_CASE("escapes JSON does not have, raw control bytes and cut escapes are refused") {
    for (LoneSurrogate lone : {LoneSurrogate::keep, LoneSurrogate::replace}) {
      for (std::string_view bad : {R"(\q)", R"(\x41)", R"(\u12)", R"(\u12G4)", R"(\U0041)", "\\", "a\\", R"(\')"}) {
        CAPTURE(bad);
        CHECK_FALSE(undo(bad, lone).ok);
      }
      CHECK_FALSE(undo(std::string_view("a\0b", 3), lone).ok);
      CHECK_FALSE(undo("a\nb", lone).ok);
      CHECK_FALSE(undo("\x1F", lone).ok);
      CHECK(undo("\x7F", lone).ok);  // DEL is no control byte to JSON
      // What was appended before the refusal stays.
      auto u = undo(R"(ab\q)", lone);
      CHECK_FALSE(u.ok);
      CHECK(u.text == "prefix:ab");
    }
  }

  TEST_CASE("UTF-8 widths and code points") {
    auto width = [](std::string_view s) {
      auto* p = reinterpret_cast<const unsigned char*>(s.data());
      return utf8_width(p, p + s.size());
    };
    CHECK(width("A") == 1);
    CHECK(width("\xC3\xA9") == 2);
    CHECK(width("\xE2\x9C\x93") == 3);
    CHECK(width("\xF0\x9F\x98\x80") == 4);
    CHECK(width("\xC0\x80") == 0);  // overlong
    CHECK(width("\xE0\x80\x80") == 0);
    CHECK(width("\xED\xA0\x80") == 0);  // a surrogate
    CHECK(width("\xF4\x90\x80\x80") == 0);
    CHECK(width("\xE2\x9C") == 0);  // cut short
    CHECK(width("\x80") == 0);
    auto* p = reinterpret_cast<const unsigned char*>("\xF0\x9F\x98\x80");
    CHECK(utf8_decode(p, 4) == 0x1F600);
    std::string out;
    append_code_point(out, 0x1F600);
    append_code_point(out, 0xD800);
    append_code_point(out, 0x7FF);
    CHECK(out == "\xF0\x9F\x98\x80\xED\xA0\x80\xDF\xBF");
  }
}
