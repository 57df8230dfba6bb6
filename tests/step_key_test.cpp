// Step keys (leasejudge/step_key.hpp).
#include "leasejudge/step.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <simdjson.h>
#include <uuid/uuid.h>

#include <cstring>
#include <string>
#include <vector>

#include "fixtures/step/step_cases.hpp"
#include "leasejudge/sweep.hpp"

using namespace leasejudge;

TEST_SUITE("step_key") {
  TEST_CASE("step keys") {
    CHECK(*step_key("n1", "abc") == "n1.abc");
    CHECK(*step_key("n1", "a.b") == "n1.a.b");
    CHECK(step_key("", "abc").code() == Errc::invalid_argument);
    CHECK(step_key("n.1", "abc").code() == Errc::invalid_argument);
    CHECK(step_key("n1", "").code() == Errc::invalid_argument);

    auto k = parse_step_key("n1.a.b");
    REQUIRE(k.ok());
    CHECK(k->node == "n1");
    CHECK(k->id == "a.b");
    CHECK(parse_step_key("n1").code() == Errc::parse);
    CHECK(parse_step_key(".a").code() == Errc::parse);
    CHECK(parse_step_key("n1.").code() == Errc::parse);
    CHECK(parse_step_key("").code() == Errc::parse);

    // A key is a node's when the node is what comes before the key's first '.', with an id
    // after it: every key and node of up to four bytes from ".", "a", "b" and NUL.
    const std::string alphabet(".ab\0", 4);
    std::vector<std::string> texts = {""};
    for (std::size_t at = 0; at < texts.size() && texts[at].size() < 4; ++at)
      for (char c : alphabet) texts.push_back(texts[at] + c);
    std::size_t of_node = 0;
    for (const std::string& key : texts)
      for (const std::string& node : texts) {
        const std::size_t dot = key.find('.');
        const bool want = dot != std::string::npos && dot > 0 && dot + 1 < key.size() && key.substr(0, dot) == node;
        CAPTURE(key);
        CAPTURE(node);
        CHECK(is_step_key_of(key, node) == want);
        of_node += want ? 1 : 0;
      }
    CHECK(texts.size() == 341);
    CHECK(of_node == 96);  // 3 * 4 keys of three bytes, 3 * 16 + 9 * 4 of four

    const char* u = "6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
    CHECK(is_canonical_uuid(u));
    // libuuid's uuid_parse takes upper-case hex too; so do we.
    CHECK(is_canonical_uuid("6F1C2D3E-4A5B-4C6D-8E7F-0A1B2C3D4E5F"));
    CHECK_FALSE(is_canonical_uuid("6f1c2d3e4a5b4c6d8e7f0a1b2c3d4e5f"));
    CHECK_FALSE(is_canonical_uuid("{6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f}"));
    CHECK_FALSE(is_canonical_uuid("6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5g"));
    CHECK_FALSE(is_canonical_uuid("6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5"));
    CHECK_FALSE(is_canonical_uuid("6f1c2d3e_4a5b-4c6d-8e7f-0a1b2c3d4e5f"));
    CHECK_FALSE(is_canonical_uuid(std::string_view("6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5\0", 36)));
    CHECK(parse_ask_step_key(std::string("n1.") + u).ok());
    CHECK(parse_ask_step_key("n1.abc").code() == Errc::parse);
    CHECK(is_ask_step(std::string("n1.") + u, "check ask"));
    CHECK_FALSE(is_ask_step(std::string("n1.") + u, "check"));
    CHECK_FALSE(is_ask_step(std::string("n1.") + u, "check asks"));
    CHECK_FALSE(is_ask_step("n1.abc", "check ask"));
    CHECK(is_ask_step(std::string("n1.") + u, " ask"));
    CHECK_FALSE(is_ask_step(std::string("n1.") + u, "ask"));
  }

  TEST_CASE("the ask-id check accepts exactly what libuuid accepts") {
    // Every byte at every place of a canonical UUID, and every length around 36.
    auto libuuid = [](const std::string& text) {
      uuid_t uu;
      return uuid_parse_range(text.data(), text.data() + text.size(), uu) == 0;
    };
    const std::string base = "6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
    REQUIRE(libuuid(base));
    std::size_t accepted = 0, checked = 0;
    for (std::size_t at = 0; at < base.size(); ++at) {
      for (int b = 0; b < 256; ++b) {
        std::string text = base;
        text[at] = static_cast<char>(b);
        CAPTURE(at);
        CAPTURE(b);
        CHECK(is_canonical_uuid(text) == libuuid(text));
        accepted += libuuid(text);
        ++checked;
      }
    }
    CHECK(checked == 36 * 256);
    CHECK(accepted == 32 * 22 + 4);  // 22 hex digits of either case at 32 places, '-' at 4
    for (std::size_t n = 0; n <= 40; ++n) {
      std::string text = (base + base).substr(0, n);
      CAPTURE(n);
      CHECK(is_canonical_uuid(text) == libuuid(text));
    }
    CHECK(is_canonical_uuid(std::string(36, '-')) == libuuid(std::string(36, '-')));
  }

}
