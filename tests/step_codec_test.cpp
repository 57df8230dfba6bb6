// The step codec (leasejudge/step_codec.hpp): reads as Go's decoder, ends keeping every other byte.
#include "leasejudge/step.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <simdjson.h>
#include <uuid/uuid.h>

#include <cstring>
#include <string>
#include <vector>

#include "fixtures/step/go_cases.hpp"
#include "fixtures/step/step_cases.hpp"
#include "leasejudge/sweep.hpp"

using namespace leasejudge;
using step_cases::go_cases;
using step_cases::nano;
using step_cases::read_and_judge;

TEST_SUITE("step_codec") {
  TEST_CASE("an escape anywhere in a string or a name reads as the byte it stands for") {
    // Each string the rules read, and each name, written plain and then with one of its
    // letters as \u00XX: first, in the middle, last. JSON says both are the same step, so
    // the plan and what it read must be the same.
    StepCodec codec;
    StepRules rules = step_cases::rules();
    const std::string ask_key = "n1.6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
    struct Part {
      std::string name, text;
    };
    const std::vector<Part> parts = {{"id", "step-1"},
                                     {"tool", "check ask"},
                                     {"state", "running"},
                                     {"owner", "o.1.2"},
                                     {"started", "2030-01-01T00:00:00Z"}};
    auto value = [&](std::size_t which, bool in_name, std::size_t at) {
      std::string v = "{";
      for (std::size_t i = 0; i < parts.size(); ++i) {
        std::string name = parts[i].name, text = parts[i].text;
        std::string& escaped = in_name ? name : text;
        if (i == which && at < escaped.size())
          escaped = escaped.substr(0, at) + fmt::format("\\u{:04x}", escaped[at]) + escaped.substr(at + 1);
        v += (i == 0 ? "\"" : ",\"") + name + "\":\"" + text + "\"";
      }
      return v + "}";
    };
    StepView plain_view;
    const std::string plain_value = value(parts.size(), false, 0);  // the view points into it
    const StepVerdict plain = read_and_judge(ask_key, plain_value, rules, codec, &plain_view);
    REQUIRE(plain.action == StepAction::remove);
    REQUIRE(plain.reason == StepReason::owner_not_self);
    const std::string id(plain_view.id), tool(plain_view.tool), state(plain_view.state), owner(plain_view.owner);
    REQUIRE(owner == "o.1.2");
    std::size_t tried = 0;
    for (std::size_t which = 0; which < parts.size(); ++which)
      for (bool in_name : {false, true}) {
        const std::string& escaped = in_name ? parts[which].name : parts[which].text;
        if (!in_name && parts[which].name == "started") continue;  // Go reads a time raw: an escape fails it
        for (std::size_t at : {std::size_t{0}, escaped.size() / 2, escaped.size() - 1}) {
          // Alone, and among many escapes of a field no rule reads, before it or after it.
          const std::string one = value(which, in_name, at);
          const std::string many = "{\"log\":\"" + std::string(40, '\\') + "\"," + one.substr(1);
          const std::string many_after = one.substr(0, one.size() - 1) + ",\"log\":\"" + std::string(40, '\\') + "\"}";
          for (const std::string& v : {one, many, many_after}) {
            CAPTURE(v);
            StepView view;
            const StepVerdict got = read_and_judge(ask_key, v, rules, codec, &view);
            CHECK(got.action == plain.action);
            CHECK(got.reason == plain.reason);
            CHECK(view.id == id);
            CHECK(view.tool == tool);
            CHECK(view.state == state);
            CHECK(view.owner == owner);
            CHECK(view.started == plain_view.started);
            ++tried;
          }
        }
      }
    CHECK(tried == 27 * 3);
  }

  TEST_CASE("an escape is told valid or not at every place of a value, across its blocks and at its end") {
    // A field no rule reads ends in an escape, then the state is written with one: as the
    // padding before them grows, each lands at every place of the 64-byte blocks the
    // escapes are looked for in, and at the value's last bytes.
    StepCodec codec;
    StepRules rules = step_cases::rules();
    const std::string self(step_cases::self);
    // What Go's scanner says of each: a valid escape, or broken JSON.
    const std::vector<std::pair<std::string, bool>> escapes = {
        {"\\\\", true},      {"\\n", true},      {"\\u00e9", true}, {"\\/", true},        {"\\\\\\\\", true},
        {"\\\\u0041", true}, {"\\x", false},     {"\\u12", false},  {"\\U0041", false},   {"\\", false},
        {"\\\\\\", false},   {"\\u00g0", false}, {"\\\\x", true},   {"\\\\\\\\u12", true}};
    // A running step of this process, its closing brace left for a last field.
    const std::string running_open =
        "{\"id\":\"x\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"" + self + "\"";
    std::size_t tried = 0;
    for (std::size_t pad = 0; pad < 140; ++pad)
      for (const auto& [escape, valid] : escapes) {
        const std::string head = "{\"log\":\"" + std::string(pad, 'x') + escape + "\",\"tool\":\"go build\",";
        const std::string tail = "\"id\":\"x\",\"owner\":\"" + self + "\",\"state\":\"runn\\u0069ng\"}";
        // The escape last in the value, its string closing it.
        const std::string last =
            "{\"id\":\"x\",\"state\":\"succeeded\",\"log\":\"" + std::string(pad, 'x') + escape + "\"}";
        CAPTURE(pad);
        CAPTURE(escape);
        StepVerdict got = read_and_judge("n1.h", head + tail, rules, codec);
        CHECK(got.action == StepAction::leave);
        CHECK(got.reason == (valid ? StepReason::owned_by_self : StepReason::no_step));
        got = read_and_judge("n1.h", last, rules, codec);
        CHECK(got.reason == (valid ? StepReason::not_running : StepReason::no_step));
        // The escape in the value's last bytes, a value with none before it: still read as Go does.
        got = read_and_judge("n1.h", running_open + ",\"z\":\"" + escape + "\"}", rules, codec);
        CHECK(got.reason == (valid ? StepReason::owned_by_self : StepReason::no_step));
        ++tried;
      }
    CHECK(tried == 140 * 14);
  }

  TEST_CASE("values Go refuses are no step; nesting and size at Go's limits") {
    StepCodec codec;
    StepView view;
    auto shape = [&](const std::string& v) { return codec.read(v, view); };
    // Go's scanner allows 10000 open containers, the step object being the first
    // (json.Unmarshal: "exceeded max depth" from the 10001st).
    for (int d : {9998, 9999}) {
      CAPTURE(d);
      CHECK(shape("{\"state\":\"running\",\"result\":" + std::string(d, '[') + std::string(d, ']') + "}") ==
            StepShape::step);
      std::string obj = "{\"state\":\"running\",\"x\":";
      for (int i = 0; i < d; ++i) obj += "{\"a\":";
      obj += "1" + std::string(d, '}') + "}";
      CHECK(shape(obj) == StepShape::step);
    }
    CHECK(shape("{\"state\":\"running\",\"result\":" + std::string(10000, '[') + std::string(10000, ']') + "}") ==
          StepShape::no_step);
    CHECK(shape("{\"state\":\"running\",\"result\":" + std::string(100000, '[') + std::string(100000, ']') + "}") ==
          StepShape::no_step);
    CHECK(shape("{\"state\":\"running\",\"result\":" + std::string(20000, '[') + "}") == StepShape::no_step);
    // The fetch object is 4 deep: its values may open 9996 more.
    const std::string ask = "{\"state\":\"running\",\"ask\":{\"kind\":\"k\",\"check\":{\"fetch\":{\"a\":";
    CHECK(shape(ask + std::string(9996, '[') + std::string(9996, ']') + "}}}}") == StepShape::step);
    CHECK(shape(ask + std::string(9997, '[') + std::string(9997, ']') + "}}}}") == StepShape::no_step);
    // A 1 MB value reads, and a 1 MB one cut anywhere does not.
    std::string big =
        "{\"id\":\"big\",\"state\":\"running\",\"owner\":\"o\",\"result\":\"" + std::string(1 << 20, 'x') + "\"}";
    REQUIRE(shape(big) == StepShape::step);
    CHECK(view.id == "big");
    CHECK(view.owner == "o");
    CHECK(shape(big.substr(0, big.size() - 1)) == StepShape::no_step);
    CHECK(shape(big.substr(0, big.size() / 2)) == StepShape::no_step);
    // NUL bytes: never inside a string, never around the value.
    CHECK(shape(std::string("{\"state\":\"run\0ning\"}", 20)) == StepShape::no_step);
    CHECK(shape(std::string("{\"state\":\"running\"}\0", 20)) == StepShape::no_step);
    CHECK(shape(std::string("\0{\"state\":\"running\"}", 20)) == StepShape::no_step);
    CHECK(shape("") == StepShape::no_step);
    CHECK(shape(" \n") == StepShape::no_step);
    CHECK_FALSE(codec.no_step_why().empty());
  }

  TEST_CASE("the end rewrite keeps every other byte") {
    StepCodec codec;
    const Instant at{1714564800, 500000000};  // 2024-05-01T12:00:00.5Z
    auto end = [&](const std::string& v, const std::string& why) {
      auto r = codec.end(v, why, at);
      REQUIRE(r.ok());
      return *r;
    };
    CHECK(end("{ \"x-a\" : [1, 2] ,\n\t\"id\":\"h1\" , \"tool\" :\"go\\u0020build\",\"state\":\r\n\"running\", "
              "\"result\" : {\"r\":1} ,\"owner\":\"o\",\"z\":\"\\u00e9\\/\"}  \n",
              "gone") ==
          "{ \"x-a\" : [1, 2] ,\n\t\"id\":\"h1\" , \"tool\" :\"go\\u0020build\",\"state\":\r\n\"failed\" "
          ",\"owner\":\"o\",\"z\":\"\\u00e9\\/\",\"reason\":\"gone\",\"ended\":\"2024-05-01T12:00:00.5Z\"}  \n");
    // Present fields are rewritten where they stand.
    CHECK(end("{\"state\":\"running\",\"reason\":\"x\",\"ended\":null,\"id\":\"a\"}", "w") ==
          "{\"state\":\"failed\",\"reason\":\"w\",\"ended\":\"2024-05-01T12:00:00.5Z\",\"id\":\"a\"}");
    // Every repeat of a field, whatever its case.
    CHECK(end("{\"state\":\"running\",\"State\":\"running\",\"result\":1,\"result\":2}", "w") ==
          "{\"state\":\"failed\",\"State\":\"failed\",\"reason\":\"w\",\"ended\":\"2024-05-01T12:00:00.5Z\"}");
    CHECK(end("{\"result\":{\"a\":[1]}, \"state\":\"running\"}", "w") ==
          "{\"state\":\"failed\",\"reason\":\"w\",\"ended\":\"2024-05-01T12:00:00.5Z\"}");
    CHECK(end("{\"id\":\"a\",\n  \"result\": [],\n  \"state\": \"running\"\n}", "w") ==
          "{\"id\":\"a\",\n  \"state\": \"failed\",\"reason\":\"w\",\"ended\":\"2024-05-01T12:00:00.5Z\"\n}");
    CHECK(end("{}", "w") == "{\"state\":\"failed\",\"reason\":\"w\",\"ended\":\"2024-05-01T12:00:00.5Z\"}");
    // The why is written as json.Marshal writes a Go string.
    CHECK(
        end("{\"state\":\"running\"}", "a \"b\" <c> & \n\x01 \xc3\xa9 \xe2\x80\xa8 \xff") ==
        "{\"state\":\"failed\",\"reason\":\"a \\\"b\\\" \\u003cc\\u003e \\u0026 \\n\\u0001 \xc3\xa9 \\u2028 \\ufffd\","
        "\"ended\":\"2024-05-01T12:00:00.5Z\"}");
    CHECK(codec.end("{\"state\":\"running\"", "w", at).code() == Errc::parse);
    CHECK(codec.end("null", "w", at).code() == Errc::parse);
    CHECK(codec.end("", "w", at).code() == Errc::parse);
  }

  TEST_CASE("an end into a buffer writes what the end returns, and keeps the buffer's room") {
    StepCodec codec, fresh;
    const Instant at{1714564800, 7};
    std::string out = "left over";
    for (const auto& c : go_cases()) {
      CAPTURE(c.value.substr(0, 200));
      auto want = fresh.end(c.value, "w", at);
      Status got = codec.end(c.value, "w", at, out);
      REQUIRE(got.ok() == want.ok());
      if (want.ok()) {
        CHECK(out == *want);
      } else {
        CHECK(got.code() == Errc::parse);
        CHECK(got.error().message == want.error().message);
        CHECK(out.empty());
      }
    }
    REQUIRE(codec.end(std::string(4000, ' ') + "{}", "w", at, out).ok());
    std::size_t room = out.capacity();
    REQUIRE(codec.end("{}", "w", at, out).ok());
    CHECK(out == "{\"state\":\"failed\",\"reason\":\"w\",\"ended\":\"2024-05-01T12:00:00.000000007Z\"}");
    CHECK(out.capacity() == room);
  }

  TEST_CASE("an end given a read's spans writes what an end that reads again writes, only for those bytes") {
    StepCodec codec, fresh;
    const Instant at{1714564800, 9};
    auto want = [&](std::string_view v) {
      auto r = fresh.end(v, "w", at);
      return r.ok() ? *r : std::string("<error>");
    };
    StepSpans spans;
    auto got = [&](std::string_view v) {
      std::string out;
      return codec.end(v, "w", at, out, &spans).ok() ? out : std::string("<error>");
    };
    const std::string a = "{\"id\":\"a\",\"state\":\"running\",\"result\":{\"x\":1},\"tool\":\"go\"}";
    const std::string b = "{\"state\":\"running\",\"reason\":\"r\",\"ended\":null,\"owner\":\"o\",\"z\":[1,2]}";
    const std::string not_step = "{\"state\":1}";
    StepView view;
    codec.read(a, view, &spans);
    CHECK(spans.of.data() == a.data());
    CHECK(got(a) == want(a));
    codec.read(b, view, &spans);
    CHECK(got(a) == want(a));  // the spans are b's: a is read again
    CHECK(got(b) == want(b));
    codec.read(b, view, &spans);
    CHECK(got(std::string_view(b).substr(0, b.size() - 1)) == "<error>");  // the same bytes, shorter
    codec.read(b, view, &spans);
    codec.read(not_step, view, &spans);
    CHECK(spans.of.empty());
    CHECK(spans.fields.empty());
    CHECK(got(b) == want(b));
    CHECK(got(not_step) == "<error>");
    for (const auto& c : go_cases()) {  // every shape, read and then ended
      CAPTURE(c.value.substr(0, 200));
      codec.read(c.value, view, &spans);
      CHECK(got(c.value) == want(c.value));
      CHECK(codec.decode(c.value).has_value() == (c.step || c.null));
      CHECK(got(c.value) == want(c.value));
    }
    codec.read(a, view);
    std::string out;
    CHECK(codec.end(a, "w", at, out).ok());
    CHECK(out == want(a));
  }

  TEST_CASE("an ended step differs from the read one only in its four fields") {
    StepCodec codec;
    const Instant at{1714564800, 123456789};
    for (const auto& c : go_cases()) {
      if (!c.step || c.null) continue;
      CAPTURE(c.value.substr(0, 200));
      auto ended = codec.end(c.value, "why \"it\" ended", at);
      REQUIRE(ended.ok());
      auto after = codec.decode(*ended);
      REQUIRE(after.has_value());
      CHECK(after->state == "failed");
      CHECK(after->reason == "why \"it\" ended");
      CHECK(after->ended == at);
      CHECK_FALSE(after->result.has_value());
      CHECK(after->id == c.id);
      CHECK(after->tool == c.tool);
      CHECK(after->owner == c.owner);
      CHECK(nano(after->started) == c.started);
      CHECK(after->ask.has_value() == c.has_ask);
      if (after->ask) CHECK(ask_what(*after->ask) == c.ask_what);
    }
  }

  TEST_CASE("AskWhat") {
    StepCodec codec;
    auto what = [&](const std::string& ask) {
      auto s = codec.decode("{\"ask\":" + ask + "}");
      REQUIRE(s.has_value());
      REQUIRE(s->ask.has_value());
      return ask_what(*s->ask);
    };
    CHECK(
        what(
            "{\"kind\":\"check\",\"check\":{\"fetch\":{\"repository\":\"git.x/r\",\"commit\":\"0123456789abcdef0123\"},"
            "\"levels\":[\"unit\",\"lint\"],\"run\":\"r7\"}}") ==
        "check ask, git.x/r@0123456789ab, levels unit,lint, run r7");
    CHECK(what("{\"kind\":\"check\",\"check\":{}}") == "check ask, @, levels ");
    CHECK(what("{\"kind\":\"build\",\"build\":{\"module\":\"m\",\"fetch\":{\"repository\":\"r\",\"commit\":"
               "\"abcdef0123456789\"},\"fp\":\"fedcba9876543210\"}}") ==
          "build ask, module m, r@abcdef012345, fp fedcba987654");
    CHECK(what("{\"kind\":\"build\",\"build\":{\"module\":\"m\",\"fetch\":{\"commit\":\"abc\"}}}") ==
          "build ask, module m");
    CHECK(what("{\"kind\":\"compose\",\"compose\":{\"fetch\":{\"repository\":\"r\",\"commit\":\"c\"}}}") ==
          "compose ask, compose, r@c");
    CHECK(what("{\"kind\":\"x\"}") == "x ask");
    CHECK(what("{\"kind\":\"c\",\"check\":{\"fetch\":{\"repository\":7,\"commit\":null}}}") == "c ask, @, levels ");
    StepAsk direct;
    direct.kind = "check";
    direct.check.emplace();
    direct.check->levels = std::vector<std::string>{"a", "b"};
    direct.check->fetch = StepFetch{{"repository", "\"r\""}, {"commit", "\"c0123456789abc\""}};
    CHECK(ask_what(direct) == "check ask, r@c0123456789a, levels a,b");
  }

}
