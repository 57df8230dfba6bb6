// Text handed out: c_text's replacements byte by byte, written out by hand from the
// Encoding Standard's UTF-8 decoder (one U+FFFD per maximal ill-formed subpart).
#include "leasejudge/text.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace leasejudge;
using namespace std::string_literals;

namespace {
const std::string fffd = "\xEF\xBF\xBD";
}

TEST_SUITE("text") {
  TEST_CASE("UTF-8 without NUL is kept as it is") {
    CHECK(c_text("") == "");
    CHECK(c_text("plain ascii") == "plain ascii");
    CHECK(c_text("caf\xC3\xA9 \xF0\x9F\x94\x92") == "caf\xC3\xA9 \xF0\x9F\x94\x92");
    CHECK(is_c_text("caf\xC3\xA9"));
    CHECK(is_c_text(""));
    // ASCII of every length, then a character of two bytes or a bad byte after it.
    for (std::size_t n = 0; n <= 40; ++n) {
      CAPTURE(n);
      std::string ascii(n, 'a');
      for (std::size_t i = 0; i < n; ++i) ascii[i] = static_cast<char>(1 + (i * 37) % 127);  // 0x01 to 0x7F
      CHECK(is_c_text(ascii));
      CHECK(is_c_text(ascii + "\xC3\xA9"));
      CHECK(is_c_text("\xC3\xA9" + ascii));
      CHECK_FALSE(is_c_text(ascii + "\xC3"));
      CHECK_FALSE(is_c_text(ascii + "\xFF" + ascii));
      CHECK_FALSE(is_c_text(ascii + "\x80"));
    }
  }

  TEST_CASE("a NUL becomes U+FFFD") {
    CHECK(c_text("a\0b"s) == "a" + fffd + "b");
    CHECK(c_text("\0"s) == fffd);
    CHECK_FALSE(is_c_text("a\0b"s));
    // A NUL at every place of 40 ASCII bytes.
    for (std::size_t at = 0; at < 40; ++at) {
      std::string s(40, 'x');
      s[at] = '\0';
      CAPTURE(at);
      CHECK_FALSE(is_c_text(s));
    }
  }

  TEST_CASE("ill-formed UTF-8: one U+FFFD per maximal subpart") {
    CHECK(c_text("x\xC0\"") == "x" + fffd + "\"");                   // C0 never starts a character
    CHECK(c_text("12345678901\xC3") == "12345678901" + fffd);        // a cut two-byte character
    CHECK(c_text("\xE2\x82") == fffd);                               // a cut three-byte character: one subpart
    CHECK(c_text("\xF0\x9F\x94") == fffd);                           // a cut four-byte character: one subpart
    CHECK(c_text("\xFF\xFE") == fffd + fffd);                        // bytes that start nothing
    CHECK(c_text("\x80") == fffd);                                   // a stray continuation
    CHECK(c_text("a\0\xFF"s) == "a" + fffd + fffd);                  // the token of the owner judge's finding
    CHECK(c_text("\xE0\x80\x80") == fffd + fffd + fffd);             // overlong: E0 needs A0..BF next
    CHECK(c_text("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // beyond U+10FFFF
    CHECK_FALSE(is_c_text("\xC3"));
  }

  TEST_CASE("a WTF-8 lone surrogate is one U+FFFD") {
    CHECK(c_text("a\xED\xA0\x80z") == "a" + fffd + "z");  // U+D800 alone
    CHECK(c_text("\xED\xBF\xBF") == fffd);                // U+DFFF alone
    CHECK(c_text("\xED\xA0") == fffd + fffd);             // not even a surrogate: two subparts
    CHECK(c_text("\xED\x9F\xBF") == "\xED\x9F\xBF");      // U+D7FF is a character
  }

  TEST_CASE("utf8_text: the same rule, a NUL kept") {
    CHECK(utf8_text("a\0b"s) == "a\0b"s);
    CHECK(utf8_text("x\xC0\"\0"s) == "x" + fffd + "\"\0"s);
    CHECK(utf8_text("\xED\xA0\x80") == fffd);
    CHECK(utf8_text("caf\xC3\xA9") == "caf\xC3\xA9");
  }

  TEST_CASE("capped text is cut at a character boundary and says so") {
    CHECK(c_text_capped("abcdef", 6) == "abcdef");
    CHECK(c_text_capped("abcdef", 4) == "abcd [cut: 2 more bytes]");
    // "é" is C3 A9: a cap of 2 after "a" would split it; the cut backs off to before it.
    CHECK(c_text_capped("a\xC3\xA9z", 2) == "a [cut: 3 more bytes]");
    CHECK(c_text_capped("a\0bc"s, 2) == "a" + fffd + " [cut: 2 more bytes]");
    CHECK(c_text_capped("", 0) == "");
    CHECK(c_text_capped("xy", 0) == " [cut: 2 more bytes]");
  }
}
