// The JSON lines of `leasejudge step plan`: the reader, the writer, the plan as lines come
// (in chunks cut anywhere, over threads, between file descriptors). Expected answers are
// written out by hand or come from Go's own json.Unmarshal (the step fixtures).
#include "leasejudge/step_lines.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fixtures/step/step_cases.hpp"

using namespace leasejudge;

namespace {

constexpr std::string_view restart = "the build module restarted while it ran";
const std::string running_other = R"({"id":"h","tool":"go build","state":"running","owner":"o.1.2"})";

std::string plan_all(std::string_view text, unsigned threads = 1, StepLinesSummary* summary = nullptr) {
  StepLinesSummary s;
  std::string out = plan_step_lines(text, step_cases::rules(), threads, s);
  if (summary != nullptr) *summary = s;
  return out;
}

// Each line planned alone, answers joined: what any split and any index must give.
std::string plan_each(std::string_view text) {
  std::string out;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    StepLinesPlan plan(step_cases::rules());
    plan.feed(text.substr(at, nl - at), out);
    plan.finish(out);
    at = nl + 1;
  }
  return out;
}

std::string malformed(std::string_view key_json, std::string_view why) {
  return "{\"key\":" + std::string(key_json) + ",\"action\":\"leave\",\"reason\":\"malformed\",\"why\":\"" +
         std::string(why) + "\",\"malformed\":\"" + std::string(why) + "\"}\n";
}

// An answer line: {"key","action","reason","why"}, the why a leave's sentence.
std::string answer(std::string_view key, std::string_view action, std::string_view reason, std::string_view why) {
  return "{\"key\":\"" + std::string(key) + "\",\"action\":\"" + std::string(action) + "\",\"reason\":\"" +
         std::string(reason) + "\",\"why\":\"" + std::string(why) + "\"}\n";
}

// The fixture's cases as lines, each value carried as a JSON string of its bytes (the
// values hold bytes that are no JSON), and what Go's own decoder and the seed's rules
// gave each: its action, why (an end's or a delete's) and, where the fixture names it,
// the reason it is left.
struct GoAnswer {
  std::string key, action, why, reason;  // reason "": not named by the fixture
};
struct GoLines {
  std::string text;
  std::vector<GoAnswer> answers;
  std::size_t count = 0;
};
GoLines go_lines() {
  GoLines g;
  std::string fixture =
      step_cases::read_file(std::string(LEASEJUDGE_SOURCE_DIR) + "/tests/fixtures/step/go_cases.jsonl");
  simdjson::dom::parser parser;
  std::size_t pos = 0;
  while (pos < fixture.size()) {
    std::size_t nl = fixture.find('\n', pos);
    if (nl == std::string::npos) nl = fixture.size();
    std::string line = fixture.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    simdjson::dom::element e = parser.parse(line);
    auto text_of = [&](const char* field) { return std::string(std::string_view(e[field])); };
    std::string key = text_of("key"), value = step_cases::unhex(text_of("value_hex"));
    std::string action = text_of("action"), why = text_of("why");
    // The value's bytes as a JSON string: quotes, backslashes and control bytes escaped.
    // A string carries text: a value that is no UTF-8 cannot travel in a line.
    if (!simdjson::validate_utf8(value.data(), value.size())) continue;
    std::string quoted = "\"";
    for (unsigned char c : value) {
      if (c == '"' || c == '\\') {
        quoted += '\\';
        quoted += static_cast<char>(c);
      } else if (c >= 0x20) {
        quoted += static_cast<char>(c);
      } else {
        quoted += "\\u00";
        quoted += "0123456789abcdef"[c >> 4];
        quoted += "0123456789abcdef"[c & 15];
      }
    }
    quoted += '"';
    if (value.empty()) {
      g.text += "{\"key\":\"" + key + "\",\"revision\":7}\n";
    } else {
      g.text += "{\"key\":\"" + key + "\",\"revision\":7,\"value\":" + quoted + "}\n";
    }
    std::string verdict = text_of("verdict");
    g.answers.push_back(GoAnswer{key, action, why, verdict == "leave" ? std::string() : verdict});
    ++g.count;
  }
  return g;
}

}  // namespace

TEST_SUITE("step lines") {
  TEST_CASE("a line read: key, value, revision, as they are or decoded") {
    StepLineReader reader;
    {
      std::string line = R"({"key":"n1.h","revision":42,"value":)" + running_other + "}";
      const StepLine& l = reader.read(line);
      CHECK(l.malformed == nullptr);
      CHECK(l.has_key);
      CHECK(l.key == "n1.h");
      CHECK(l.revision == 42);
      CHECK(l.value == running_other);
      CHECK(l.value.data() > line.data());  // read where it is
      CHECK(l.value.data() < line.data() + line.size());
    }
    {
      // Escapes undone in the key and the names; a value carried as a JSON string is
      // the stored bytes; revision null is 0; unknown names skipped; the last repeat wins.
      const StepLine& l = reader.read(
          R"( {"x":[1,{"y":null}],"k\u0065y":"n1.\u00e9","revision":null,"value":"a\"b\\c","value":"{\"s\":1}"} )");
      CHECK(l.malformed == nullptr);
      CHECK(l.key == "n1.\xC3\xA9");
      CHECK(l.revision == 0);
      CHECK(l.value == "{\"s\":1}");
    }
    {
      const StepLine& l = reader.read(R"({"key":"n1.e","revision":18446744073709551615})");
      CHECK(l.malformed == nullptr);
      CHECK(l.revision == 18446744073709551615ULL);
      CHECK(l.value.empty());  // no value: the key holds none
    }
    {
      // Invalid UTF-8 in a key reads as U+FFFD, as Go reads it.
      const StepLine& l = reader.read("{\"key\":\"n1.\xff\",\"value\":1}");
      CHECK(l.malformed == nullptr);
      CHECK(l.key == "n1.\xEF\xBF\xBD");
      CHECK(l.value == "1");
    }
  }

  TEST_CASE("lines that are no entry, each with what is wrong") {
    StepLineReader reader;
    struct Bad {
      std::string line;
      std::string_view why;
      bool has_key;
    };
    const std::string not_json = "the line is not one JSON value";
    const std::vector<Bad> bad = {
        {"", not_json, false},
        {" \t\r", not_json, false},
        {R"({"key":"n1.a")", not_json, false},                              // cut short
        {R"({"key":"n1.a"} x)", not_json, false},                           // bytes after it
        {R"({"key":"n1.a"}{})", not_json, false},                           // a second value
        {R"({"key":"n1.a","value":{"state":"running"})", not_json, false},  // the value's brace missing
        {R"({"key":"n1.a","value":01})", not_json, false},
        {R"({"key":"n1.a","value":"a\qb"})", not_json, false},  // an escape JSON does not have
        {std::string("{\"key\":\"n1.a\",\"value\":\"a\x01\"}"), not_json, false},
        {std::string("{\"key\":\"n1.a\"}\0", 15), not_json, false},
        {std::string("{\"key\":\"n1\0a\"}", 14), not_json, false},
        {"{\"key\":\"n1.a\",\xff:1}", not_json, false},       // a byte that is no UTF-8, outside a string
        {"\xEF\xBB\xBF{\"key\":\"n1.a\"}", not_json, false},  // a byte-order mark
        {R"({"key":"n1.a","value":)" + std::string(10000, '[') + std::string(10000, ']') + "}", not_json, false},
        {"[1]", "the line is no JSON object", false},
        {R"("n1.a")", "the line is no JSON object", false},
        {"null", "the line is no JSON object", false},
        {R"({"key":7})", "its key is no string", false},
        {R"({"key":null})", "its key is no string", false},
        {R"({"key":["n1.a"]})", "its key is no string", false},
        {R"({"key":"n1.a","revision":-1})", "its revision is no integer from 0 to 2^64-1", true},
        {R"({"key":"n1.a","revision":1.5})", "its revision is no integer from 0 to 2^64-1", true},
        {R"({"key":"n1.a","revision":1e3})", "its revision is no integer from 0 to 2^64-1", true},
        {R"({"key":"n1.a","revision":"5"})", "its revision is no integer from 0 to 2^64-1", true},
        {R"({"key":"n1.a","revision":18446744073709551616})", "its revision is no integer from 0 to 2^64-1", true},
        {R"({"key":"n1.a","revision":99999999999999999999})", "its revision is no integer from 0 to 2^64-1", true},
        {R"({"revision":-1,"key":"n1.a"})", "its revision is no integer from 0 to 2^64-1", false},  // key after
        {R"({"key":"n1.a","revision":true,"value":01})", not_json, false},  // broken JSON told first
        {"{}", "it names no key", false},
        {R"({"Key":"n1.a","value":{}})", "it names no key", false},  // names matched exactly
    };
    for (const Bad& b : bad) {
      CAPTURE(b.line.substr(0, 80));
      const StepLine& l = reader.read(b.line);
      REQUIRE(l.malformed != nullptr);
      CHECK(std::string_view(l.malformed) == b.why);
      CHECK(l.has_key == b.has_key);
      if (b.has_key) CHECK(l.key == "n1.a");
    }
    // 9999 open containers in the value, the line's object the 10000th: Go's limit.
    const StepLine& deep =
        reader.read(R"({"key":"n1.a","value":)" + std::string(9999, '[') + std::string(9999, ']') + "}");
    CHECK(deep.malformed == nullptr);
  }

  TEST_CASE("state lines written for a key read back as the same key, revision and bytes") {
    StepLineReader reader;
    struct Case {
      std::string key, value, line;
      bool kept;
    };
    const std::vector<Case> cases = {
        {"n1.a", R"({"id":"a","state":"running"})",
         R"({"key":"n1.a","revision":7,"value":{"id":"a","state":"running"}})", true},
        {"n1.b", "", R"({"key":"n1.b","revision":7})", true},
        {"n1.c", "not json", R"({"key":"n1.c","revision":7,"value":"not json"})", true},
        {"n1.d", "\"a string\"", R"({"key":"n1.d","revision":7,"value":"\"a string\""})", true},
        {"n1.e", "{\n\"id\": 1\n}", R"({"key":"n1.e","revision":7,"value":"{\n\"id\": 1\n}"})", true},
        {"n1.f", " [1] ", R"({"key":"n1.f","revision":7,"value":" [1] "})", true},
        {"n1.g", "[1] x", R"({"key":"n1.g","revision":7,"value":"[1] x"})", true},
        {"n1.<h>", "7", R"({"key":"n1.\u003ch\u003e","revision":7,"value":7})", true},
        {"n1.i",
         "a\xff"
         "b",
         R"({"key":"n1.i","revision":7,"value":"a\ufffdb"})", false},
    };
    for (const auto& c : cases) {
      CAPTURE(c.key);
      std::string out;
      CHECK(append_step_line(out, c.key, 7, c.value) == c.kept);
      CHECK(out == c.line + "\n");
      const StepLine& l = reader.read(std::string_view(out).substr(0, out.size() - 1));
      REQUIRE(l.malformed == nullptr);
      CHECK(l.key == c.key);
      CHECK(l.revision == 7);
      if (c.kept) CHECK(l.value == c.value);
    }
  }

  TEST_CASE("answer lines as json.Marshal writes them") {
    std::string out;
    append_step_plan_line(out, "n1.h", StepVerdict{StepAction::end, StepReason::owner_not_self, {}});
    append_step_plan_line(out, "n1.q", StepVerdict{StepAction::leave, StepReason::not_running, {}});
    append_step_plan_line(out, "n1.a", StepVerdict{StepAction::remove, StepReason::owner_not_self, {}});
    append_step_plan_line(out, "n1.b",
                          StepVerdict{StepAction::end, StepReason::ask_past_bound, Instant{1714561200, 5}});
    CHECK(out == answer("n1.h", "end", "owner-not-self", restart) +
                     answer("n1.q", "leave", "not-running", "the step is not running") +
                     answer("n1.a", "delete", "owner-not-self", restart) +
                     answer("n1.b", "end", "ask-past-bound",
                            "past the step bound: its asker stopped waiting at 2024-05-01T11:00:00Z"));
    // Keys that need escapes, short and long (the escaping reads 16 bytes at a time).
    for (std::string pad : {std::string(), std::string(40, 'x')}) {
      out.clear();
      std::string key = "n1." + pad + "<a&b>\"\\\n\x01\xff\xE2\x80\xA8\xC3\xA9" + pad;
      append_step_plan_line(out, key, StepVerdict{});
      CHECK(out == "{\"key\":\"n1." + pad + "\\u003ca\\u0026b\\u003e\\\"\\\\\\n\\u0001\\ufffd\\u2028\xC3\xA9" + pad +
                       "\",\"action\":\"leave\",\"reason\":\"other-node\",\"why\":\"the key is no step key of this "
                       "node\"}\n");
    }
    StepLineReader reader;
    out.clear();
    append_step_malformed_line(out, reader.read(R"({"key":"n1.<r>","revision":-1})"));
    append_step_malformed_line(out, reader.read("{"));
    CHECK(out == malformed("\"n1.\\u003cr\\u003e\"", "its revision is no integer from 0 to 2^64-1") +
                     malformed("null", "the line is not one JSON value"));
  }

  TEST_CASE("the key decides whose the value is, before or after the value, the last of two keys") {
    const std::string no_step = "the value is no step (Go's decoder refuses it)";
    const std::string other = "the key is no step key of this node";
    std::string in =
        "{\"key\":\"n1.a\",\"value\":{\"state\":1}}\n"
        "{\"value\":{\"state\":1},\"key\":\"n1.b\"}\n"
        "{\"key\":\"n1.c\",\"value\":{\"state\":1},\"key\":\"n2.c\"}\n"
        "{\"key\":\"n2.d\",\"value\":{\"state\":1},\"key\":\"n1.d\"}\n"
        "{\"key\":\"n2.e\",\"value\":{\"state\":1}}\n"
        "{\"key\":\"n2.f\",\"value\":null,\"key\":\"n1.f\"}\n"
        "{\"value\":{\"state\":1},\"key\":\"n2.g\"}\n";
    std::string want = answer("n1.a", "leave", "no-step", no_step) + answer("n1.b", "leave", "no-step", no_step) +
                       answer("n2.c", "leave", "other-node", other) + answer("n1.d", "leave", "no-step", no_step) +
                       answer("n2.e", "leave", "other-node", other) +
                       answer("n1.f", "leave", "not-running", "the step is not running") +
                       answer("n2.g", "leave", "other-node", other);
    // Each line alone (read line by line) and all of them indexed at once.
    std::string one_by_one;
    for (std::size_t at = 0; at < in.size();) {
      std::size_t nl = in.find('\n', at);
      one_by_one += plan_all(in.substr(at, nl + 1 - at));
      at = nl + 1;
    }
    CHECK(one_by_one == want);
    StepLinesSummary s;
    CHECK(plan_all(in, 1, &s) == want);
    CHECK(s.plan.no_step == 3);
    CHECK(s.plan.other_node == 3);
    CHECK(s.plan.leave == 1);
  }

  TEST_CASE("the plan answers every line as Go decides its value") {
    GoLines g = go_lines();
    REQUIRE(g.count > 380);
    StepLinesSummary s;
    std::string out = plan_all(g.text, 1, &s);
    simdjson::dom::parser parser;
    std::size_t at = 0, i = 0;
    for (; at < out.size() && i < g.answers.size(); ++i) {
      std::size_t nl = out.find('\n', at);
      REQUIRE(nl != std::string::npos);
      simdjson::dom::element e = parser.parse(out.substr(at, nl - at));
      at = nl + 1;
      const GoAnswer& want = g.answers[i];
      CAPTURE(want.key);
      CHECK(std::string_view(e["key"]) == want.key);
      CHECK(std::string_view(e["action"]) == want.action);
      std::string_view reason = e["reason"], why = e["why"];
      if (want.action != "leave") {
        CHECK(why == want.why);
      } else {
        if (!want.reason.empty()) CHECK(reason == want.reason);
        bool known = false;
        for (int r = 0; r < step_reason_count; ++r)
          if (reason == step_reason_name(static_cast<StepReason>(r))) {
            known = true;
            CHECK(why == step_leave_why(static_cast<StepReason>(r)));
          }
        CHECK(known);
      }
    }
    CHECK(i == g.answers.size());
    CHECK(at == out.size());
    CHECK(s.malformed == 0);
    CHECK(s.plan.end + s.plan.remove + s.plan.leave + s.plan.no_step + s.plan.other_node == g.count);
    CHECK(s.plan.end > 50);
    CHECK(s.plan.remove > 30);
    CHECK(s.plan.no_step > 100);
  }

  TEST_CASE("any split of the input, any index, any number of threads: the same answers") {
    // A corpus as lines, with blank lines, CRLF, broken lines among good ones and a last
    // line with no newline.
    auto cases = step_cases::corpus(3000, 11);
    std::string text;
    std::mt19937 rng(5);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto& c = cases[i];
      std::string value = c.value;
      bool json_value = !value.empty() && value.front() == '{' && value.back() == '}';
      text += "{\"key\":\"" + c.key + "\",\"revision\":" + std::to_string(c.revision);
      if (json_value) text += ",\"value\":" + value;
      text += i % 7 == 3 ? "}\r\n" : "}\n";
      if (i % 97 == 5) text += "\n  \n";
      if (i % 101 == 7) text += "{\"key\":\"n1.broken\",\"value\":{\"state\":\"running\"\n";
      if (i % 103 == 9) text += "{\"key\":\"n1.bad\",\"value\":\"\\q\"}\n";
    }
    text += R"({"key":"n1.last","value":)" + running_other + "}";
    StepLinesSummary whole_sum;
    std::string whole = plan_all(text, 1, &whole_sum);
    CHECK(whole == plan_each(text));
    // Every broken line among them is told, each once.
    std::size_t told = 0;
    for (std::size_t at = 0; (at = whole.find("\"malformed\":", at)) != std::string::npos; ++at) ++told;
    CHECK(whole_sum.malformed == told);
    CHECK(told >= 60);
    CHECK(whole.ends_with(answer("n1.last", "end", "owner-not-self", restart)));
    for (unsigned threads : {2u, 3u}) CHECK(plan_all(text, threads) == whole);
    // Past 2 MiB: answers handed over 256 KiB of input a thread at a time, each piece's
    // lines shared between the threads.
    std::string thrice = text + "\n" + text + "\n" + text;
    const std::string expected = plan_each(thrice);
    for (unsigned threads : {1u, 2u, 3u}) {
      CAPTURE(threads);
      CHECK(plan_all(thrice, threads) == expected);
      std::vector<std::string> pieces;
      StepLinesSummary sum;
      plan_step_lines(thrice, step_cases::rules(), threads, sum, [&](std::string_view a) { pieces.emplace_back(a); });
      std::string joined;
      for (const auto& p : pieces) joined += p;
      CHECK(joined == expected);
      // A piece per 256 KiB a thread begun, and the last line (no newline) at the end.
      const std::size_t piece = threads * (std::size_t{256} << 10);
      CHECK(pieces.size() == (thrice.size() + piece - 1) / piece + 1);
      CHECK(sum.malformed == 3 * whole_sum.malformed);
      CHECK(sum.plan.end == 3 * whole_sum.plan.end);
    }
    // Fed in chunks of every size from one byte.
    for (std::size_t step : {std::size_t(1), std::size_t(7), std::size_t(4096), std::size_t(300000)}) {
      CAPTURE(step);
      StepLinesPlan plan(step_cases::rules());
      std::string out;
      for (std::size_t at = 0; at < text.size(); at += step) plan.feed(std::string_view(text).substr(at, step), out);
      plan.finish(out);
      CHECK(out == whole);
      CHECK(plan.summary().malformed == whole_sum.malformed);
      CHECK(plan.summary().plan.end == whole_sum.plan.end);
    }
    // Random cuts.
    StepLinesPlan plan(step_cases::rules());
    std::string out;
    for (std::size_t at = 0; at < text.size();) {
      std::size_t n = rng() % 2000;
      plan.feed(std::string_view(text).substr(at, n), out);
      at += n;
    }
    plan.finish(out);
    CHECK(out == whole);
  }

  TEST_CASE("a plan over threads: the same answers fed any way, its owners judged on each thread") {
    // Running steps of 40 owners: an even one is dead, an odd one alive (rule
    // provably-dead, the judge the test's): an end for each step of an even owner.
    std::string text;
    std::size_t evens = 0;
    const std::size_t lines = 24000;
    for (std::size_t i = 0; i < lines; ++i) {
      std::size_t owner = (i * 7) % 40;
      evens += owner % 2 == 0;
      text += "{\"key\":\"n1.s" + std::to_string(i) + "\",\"revision\":" + std::to_string(i + 1) +
              ",\"value\":{\"id\":\"s" + std::to_string(i) + "\",\"tool\":\"go build\",\"state\":\"running\"," +
              "\"owner\":\"o" + std::to_string(owner) + ".1.2\"}}\n";
    }
    REQUIRE(text.size() > (std::size_t{2} << 20));
    std::mutex m;
    std::set<std::thread::id> judged_on;
    StepRules rules = step_cases::rules();
    rules.rule = OwnerRule::provably_dead;
    rules.judge = [&](std::string_view owner) {
      {
        std::lock_guard<std::mutex> lock(m);
        judged_on.insert(std::this_thread::get_id());
      }
      if (owner == "boom.1.2") throw std::runtime_error("the judge broke");
      int n = std::stoi(std::string(owner.substr(1, owner.find('.') - 1)));
      return HolderJudgement{n % 2 == 0 ? HolderState::dead : HolderState::alive, "judged by the test"};
    };
    auto plan_with = [&](unsigned threads, std::size_t most, std::uint32_t seed, StepLinesSummary& sum) {
      StepLinesPlan plan(rules, threads);
      std::mt19937 rng(seed);
      std::string out;
      for (std::size_t at = 0; at < text.size();) {
        std::size_t n = 1 + rng() % most;
        plan.feed(std::string_view(text).substr(at, n), out);
        at += n;
      }
      plan.finish(out);
      sum = plan.summary();
      return out;
    };
    StepLinesSummary one_sum;
    const std::string one = plan_with(1, 1 << 20, 1, one_sum);
    CHECK(one_sum.plan.end == evens);
    CHECK(one_sum.plan.leave == lines - evens);
    CHECK(std::count(one.begin(), one.end(), '\n') == static_cast<std::ptrdiff_t>(lines));
    CHECK(judged_on.size() == 1);
    for (unsigned threads : {2u, 3u, 8u, 1000u}) {
      for (std::size_t most : {std::size_t{4096}, std::size_t{300000}, std::size_t{3} << 20}) {
        CAPTURE(threads);
        CAPTURE(most);
        judged_on.clear();
        StepLinesSummary sum;
        CHECK(plan_with(threads, most, threads * 31 + static_cast<std::uint32_t>(most), sum) == one);
        CHECK(sum.plan.end == one_sum.plan.end);
        CHECK(sum.plan.leave == one_sum.plan.leave);
        CHECK(sum.malformed == 0);
        // Pieces of 4 KiB are never shared; pieces of megabytes are, on every thread.
        if (most == 4096) CHECK(judged_on.size() == 1);
        if (most == (std::size_t{3} << 20)) CHECK(judged_on.size() > 1);
        CHECK(judged_on.size() <= std::min(threads, StepLinesPlan::max_threads));
      }
    }
  }

  TEST_CASE("a plan over threads: what the judge throws on any thread is thrown by feed, every thread waited for") {
    StepRules rules = step_cases::rules();
    rules.rule = OwnerRule::provably_dead;
    rules.judge = [](std::string_view owner) -> HolderJudgement {
      if (owner == "boom.1.2") throw std::runtime_error("the judge broke");
      return HolderJudgement{HolderState::alive, "judged by the test"};
    };
    auto line = [](std::size_t i, std::string_view owner) {
      return "{\"key\":\"n1.s" + std::to_string(i) + "\",\"value\":{\"id\":\"s\",\"state\":\"running\",\"owner\":\"" +
             std::string(owner) + "\"}}\n";
    };
    std::string head, tail;
    for (std::size_t i = 0; i < 4000; ++i) head += line(i, "o.1.2");
    for (std::size_t i = 0; i < 4000; ++i) tail += line(i, "o.1.2");
    // The broken owner first (planned on the feeding thread) or last (on a helper).
    for (bool last : {false, true}) {
      CAPTURE(last);
      auto input = std::make_unique<std::string>(last ? head + tail + line(9, "boom.1.2") + "\n"
                                                      : line(9, "boom.1.2") + head + tail);
      StepLinesPlan plan(rules, 2);
      std::string out;
      CHECK_THROWS_WITH_AS(plan.feed(*input, out), "the judge broke", std::runtime_error);
      input.reset();  // no thread reads it any more (ASan tells otherwise)
      // The plan goes on with the next input.
      std::string more = line(1, "o.1.2");
      out.clear();
      plan.feed(more, out);
      CHECK(out == answer("n1.s1", "leave", "owner-alive", "its owner is alive"));
    }
  }

  TEST_CASE("empty input, blank input, a line longer than a chunk") {
    StepLinesSummary s;
    CHECK(plan_all("", 1, &s).empty());
    CHECK(s.malformed == 0);
    CHECK(plan_all("\n\n \r\n", 2, &s).empty());
    // A 3 MiB value: longer than the chunk the plan indexes at once and than a read.
    std::string big = R"({"key":"n1.big","value":{"id":"big","state":"running","owner":"o","result":")" +
                      std::string(3 << 20, 'x') + "\"}}\n";
    std::string two = big + big.substr(0, big.size() - 3) + "\n";  // the second cut short
    CHECK(plan_all(two) ==
          answer("n1.big", "end", "owner-not-self", restart) + malformed("null", "the line is not one JSON value"));
  }

  TEST_CASE("the plan streamed between file descriptors") {
    GoLines g = go_lines();
    std::string text = g.text + g.text + g.text;
    // The in-memory plan's answers (held to Go's above), three times.
    const std::string one = plan_all(g.text);
    std::string expected = one + one + one;
    int in[2], out[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    // The input written in small pieces, the answer read as it comes.
    std::thread writer([&] {
      for (std::size_t at = 0; at < text.size(); at += 777) {
        std::size_t n = std::min<std::size_t>(777, text.size() - at);
        if (::write(in[1], text.data() + at, n) != static_cast<ssize_t>(n)) break;
      }
      ::close(in[1]);
    });
    std::string answer;
    std::thread reader([&] {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(out[0], buf, sizeof buf)) > 0) answer.append(buf, static_cast<std::size_t>(n));
    });
    StepLinesPlan plan(step_cases::rules());
    Status st = plan_step_lines_fd(plan, in[0], out[1]);
    ::close(out[1]);
    writer.join();
    reader.join();
    ::close(in[0]);
    ::close(out[0]);
    CHECK(st.ok());
    CHECK(answer == expected);
    CHECK(plan.summary().plan.end + plan.summary().plan.remove + plan.summary().plan.leave +
              plan.summary().plan.no_step + plan.summary().plan.other_node ==
          3 * g.count);

    // A stop asked for before the first chunk: nothing read, nothing written.
    std::atomic<bool> stop{true};
    int devnull = ::open("/dev/null", O_RDWR);
    REQUIRE(devnull >= 0);
    StepLinesPlan stopped(step_cases::rules());
    CHECK(plan_step_lines_fd(stopped, devnull, devnull, &stop).ok());
    CHECK(stopped.summary().plan.end == 0);
    // Descriptors that cannot be read or written: Errc::io, with what failed.
    StepLinesPlan bad(step_cases::rules());
    Status unreadable = plan_step_lines_fd(bad, -1, devnull);
    CHECK(unreadable.code() == Errc::io);
    CHECK(unreadable.error().message.rfind("reading the lines: ", 0) == 0);
    int rd = ::open("/dev/null", O_RDONLY);
    int src[2];
    REQUIRE(::pipe(src) == 0);
    REQUIRE(::write(src[1], g.text.data(), 4096) == 4096);
    ::close(src[1]);
    Status unwritable = plan_step_lines_fd(bad, src[0], rd);
    CHECK(unwritable.code() == Errc::io);
    CHECK(unwritable.error().message.rfind("writing the plan: ", 0) == 0);
    ::close(src[0]);
    ::close(rd);
    ::close(devnull);
  }
}
