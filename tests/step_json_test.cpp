// Go's grammar over stage 1's tokens (lib/src/step_json.hpp): the escape scans. Each is
// held to a byte-by-byte reading of Go's escapes written here, on texts of every length
// around the 64-byte blocks the AVX-512 scan reads.
#include "step_json.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace leasejudge::step_json;

namespace {

struct Scan {
  bool valid = true;
  std::vector<std::uint32_t> at;
};

// Go's escapes read one byte at a time: a backslash, then one of "\\/bfnrt or u and four
// hex digits; where each begins, up to and with the first bad one.
Scan reference(const std::string& text) {
  Scan s;
  const std::string simple = "\"\\/bfnrt";
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') continue;
    s.at.push_back(static_cast<std::uint32_t>(i));
    if (i + 1 < text.size() && simple.find(text[i + 1]) != std::string::npos) {
      ++i;
      continue;
    }
    bool u = i + 5 < text.size() && text[i + 1] == 'u';
    for (std::size_t k = 2; u && k < 6; ++k) u = std::isxdigit(static_cast<unsigned char>(text[i + k])) != 0;
    if (!u) {
      s.valid = false;
      return s;
    }
    i += 5;
  }
  return s;
}

// The scan over a copy of exactly the text's bytes (a read past them is the sanitizers' to
// see).
Scan scanned(const std::string& text, EscapeScan how) {
  std::unique_ptr<char[]> exact(new char[text.size()]);
  std::copy(text.begin(), text.end(), exact.get());
  std::vector<std::uint64_t> begins(9, ~std::uint64_t{0});  // what a scan found before is not kept
  Scan s;
  s.valid = escapes_valid(exact.get(), exact.get() + text.size(), begins, how);
  if (!s.valid) return s;  // where the escapes begin is told of a valid text only
  const std::size_t words = (text.size() + 63) / 64;
  CHECK(begins.size() >= std::max<std::size_t>(words, 9));  // grown, never shrunk
  for (std::size_t k = 0; k < 64 * words; ++k)
    if ((begins[k / 64] >> (k % 64)) & 1) s.at.push_back(static_cast<std::uint32_t>(k));
  return s;
}

std::vector<EscapeScan> scans() {
  std::vector<EscapeScan> out = {EscapeScan::search};
  if (escape_scan_available(EscapeScan::avx512)) out.push_back(EscapeScan::avx512);
  return out;
}

}  // namespace

TEST_SUITE("step_json") {
  TEST_CASE("the search scan is always there") {
    CHECK(escape_scan_available(EscapeScan::search));
    if (!escape_scan_available(EscapeScan::avx512)) MESSAGE("this processor has no AVX-512BW: the search scan alone");
  }

  TEST_CASE("each escape alone, valid or not, at every place of texts up to 200 bytes and some to 600") {
    const std::vector<std::pair<std::string, bool>> escapes = {
        {"\\\"", true},     {"\\\\", true}, {"\\/", true},     {"\\b", true},      {"\\f", true},
        {"\\n", true},      {"\\r", true},  {"\\t", true},     {"\\u0041", true},  {"\\uFfFf", true},
        {"\\\\x", true},    {"\\a", false}, {"\\x", false},    {"\\U0041", false}, {"\\u004", false},
        {"\\u00g1", false}, {"\\", false},  {"\\\\\\", false}, {"\\0", false},     {std::string("\\\0", 2), false}};
    std::size_t tried = 0;
    for (EscapeScan how : scans())
      // Past 200 bytes, lengths about the four-block groups the AVX-512 scan passes over.
      for (std::size_t len = 0; len <= 600; len += len < 200 ? 1 : len % 64 == 63 || len % 64 == 0 ? 1 : 31)
        for (const auto& [escape, valid] : escapes) {
          if (escape.size() > len) continue;
          for (std::size_t at = 0; at + escape.size() <= len;
               at += (at < 70 || at + escape.size() + 70 > len || (at + 8) % 64 < 12) ? 1 : 9) {
            std::string text(len, 'x');
            text.replace(at, escape.size(), escape);
            CAPTURE(static_cast<int>(how));
            CAPTURE(text);
            const Scan want = reference(text);
            REQUIRE(want.valid == valid);  // the reference reads the escape as the list says
            const Scan got = scanned(text, how);
            CHECK(got.valid == want.valid);
            if (want.valid) CHECK(got.at == want.at);
            ++tried;
          }
        }
    CHECK(tried >= 30000);
  }

  TEST_CASE("every byte after a backslash and in each digit of a \\u, inside a block and across one") {
    std::size_t tried = 0, valid = 0;
    for (EscapeScan how : scans())
      for (std::size_t at : {std::size_t{3}, std::size_t{58}, std::size_t{59}, std::size_t{60}, std::size_t{62},
                             std::size_t{63}, std::size_t{125}})
        for (int place = 1; place <= 5; ++place)  // 1: the letter; 2-5: the digits of \u0041
          for (int b = 0; b < 256; ++b) {
            std::string text(140, 'x');
            text.replace(at, 6, "\\u0041");
            text[at + static_cast<std::size_t>(place)] = static_cast<char>(b);
            CAPTURE(static_cast<int>(how));
            CAPTURE(at);
            CAPTURE(place);
            CAPTURE(b);
            const Scan want = reference(text);
            const Scan got = scanned(text, how);
            CHECK(got.valid == want.valid);
            if (want.valid) CHECK(got.at == want.at);
            ++tried;
            valid += want.valid ? 1 : 0;
          }
    // Per place and spot: 9 letters after the backslash, 22 hex digits in each digit.
    CHECK(valid == scans().size() * 7 * (9 + 4 * 22));
    CHECK(tried == scans().size() * 7 * 5 * 256);
  }

  TEST_CASE("texts of many escapes, valid and broken, agree with the byte-by-byte reading") {
    std::mt19937 rng(20240601);
    const std::string alphabet = "\\\\\\\\u0aF9g\"nx/ b";
    std::size_t valid = 0, tried = 0;
    for (int round = 0; round < 20000; ++round) {
      std::size_t len = rng() % (round % 4 == 0 ? 700 : 260);  // a quarter past four blocks
      std::string text(len, 'x');
      for (char& c : text)
        if (rng() % 3 == 0) c = alphabet[rng() % alphabet.size()];
      const Scan want = reference(text);
      for (EscapeScan how : scans()) {
        CAPTURE(text);
        const Scan got = scanned(text, how);
        CHECK(got.valid == want.valid);
        if (want.valid) CHECK(got.at == want.at);
        ++tried;
      }
      valid += want.valid ? 1 : 0;
    }
    // Both kinds are many: the texts test something.
    CHECK(valid > 500);
    CHECK(valid < 19500);
    CHECK(tried >= 20000);
  }

  TEST_CASE("an empty text has no escape") {
    for (EscapeScan how : scans()) {
      const Scan got = scanned("", how);
      CHECK(got.valid);
      CHECK(got.at.empty());
    }
  }
}
