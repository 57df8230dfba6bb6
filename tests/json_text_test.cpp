#include "leasejudge/json_text.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <random>
#include <string>

using leasejudge::json_quote;

TEST_SUITE("json_text") {
  TEST_CASE("strings are written as Go's json.Marshal writes them") {
    CHECK(json_quote("") == "\"\"");
    CHECK(json_quote("plain text") == "\"plain text\"");
    CHECK(json_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
    CHECK(json_quote("\n\r\t\b\f") == "\"\\n\\r\\t\\u0008\\u000c\"");
    CHECK(json_quote(std::string("a\0b", 3)) == "\"a\\u0000b\"");
    CHECK(json_quote("<a&b>") == "\"\\u003ca\\u0026b\\u003e\"");
    CHECK(json_quote("\xe2\x80\xa8|\xe2\x80\xa9") == "\"\\u2028|\\u2029\"");
    CHECK(json_quote("h\xc3\xa9") == "\"h\xc3\xa9\"");
    CHECK(json_quote("x\xc0\",\"kind\":\"break") == "\"x\\ufffd\\\",\\\"kind\\\":\\\"break\"");
    CHECK(json_quote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");             // a lone surrogate
    CHECK(json_quote("\xf4\x90\x80\x80") == "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // past U+10FFFF
  }

  TEST_CASE("any bytes give one valid JSON string") {
    std::mt19937 rng(7);
    simdjson::dom::parser parser;  // validates the whole document
    for (int i = 0; i < 20000; ++i) {
      std::string bytes(rng() % 24, '\0');
      for (auto& c : bytes) c = static_cast<char>(rng() % 256);
      std::string doc = "[" + json_quote(bytes) + "]";
      simdjson::dom::array a;
      REQUIRE(parser.parse(doc).get_array().get(a) == simdjson::SUCCESS);
      CHECK(a.size() == 1);
      std::string_view s;
      CHECK(a.at(0).get_string().get(s) == simdjson::SUCCESS);
    }
  }
}
