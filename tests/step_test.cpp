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
#include "step_codec.hpp"

using namespace leasejudge;

namespace {

std::string fixture_path() {
  return std::string(LEASEJUDGE_SOURCE_DIR) + "/tests/fixtures/step/go_cases.jsonl";
}

struct GoCase {
  std::string key, value;
  bool step = false, null = false;
  std::string id, tool, state, owner, reason, started, ended;
  bool has_result = false;
  std::string result;
  bool has_ask = false;
  std::string ask_what, action, verdict, why, said;
};

std::vector<GoCase> go_cases() {
  std::vector<GoCase> out;
  std::string text = step_cases::read_file(fixture_path());
  simdjson::dom::parser parser;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    simdjson::dom::element e = parser.parse(line);
    GoCase c;
    auto s = [&](const char* k) { return std::string(std::string_view(e[k])); };
    c.key = s("key");
    c.value = step_cases::unhex(s("value_hex"));
    c.step = bool(e["step"]);
    c.null = bool(e["null"]);
    c.id = s("id");
    c.tool = s("tool");
    c.state = s("state");
    c.owner = s("owner");
    c.reason = s("reason");
    c.started = s("started");
    c.ended = s("ended");
    if (!e["result_hex"].is_null()) {
      c.has_result = true;
      c.result = step_cases::unhex(s("result_hex"));
    }
    c.has_ask = bool(e["has_ask"]);
    c.ask_what = s("ask_what");
    c.action = s("action");
    c.verdict = s("verdict");
    c.why = s("why");
    c.said = s("said");
    out.push_back(std::move(c));
  }
  return out;
}

std::string nano(Instant t) {
  return format_rfc3339_nano(t);
}

// The Go fixture's verdict word for a leasejudge reason.
bool reason_agrees(StepReason r, const std::string& verdict) {
  switch (r) {
    case StepReason::other_node:
      return verdict == "other-node";
    case StepReason::no_value:
      return verdict == "no-value";
    case StepReason::no_step:
      return verdict == "no-step";
    case StepReason::not_running:
      return verdict == "not-running";
    case StepReason::owned_by_self:
    case StepReason::ask_within_bound:
    case StepReason::started_since:
      return verdict == "leave";
    case StepReason::owner_not_self:
    case StepReason::ask_past_bound:
    case StepReason::started_before:
      return verdict.empty();
    default:
      return false;
  }
}

HolderJudgement judged(HolderState s) {
  return HolderJudgement{s, std::string("judged ") + holder_state_name(s)};
}

}  // namespace

TEST_SUITE("step") {
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

  TEST_CASE("every value reads and plans as Go's decoder and the seed's rules say") {
    auto cases = go_cases();
    REQUIRE(cases.size() > 400);
    StepCodec codec;
    StaleRules rules = step_cases::rules();
    std::size_t steps = 0, ends = 0, deletes = 0;
    for (const auto& c : cases) {
      CAPTURE(c.key);
      CAPTURE(c.value.substr(0, 200));
      StepView view;
      StepShape shape = codec.read(c.value, view);
      CHECK((shape != StepShape::no_step) == c.step);
      CHECK((shape == StepShape::null_value) == c.null);
      if (shape == StepShape::step) {
        ++steps;
        CHECK(view.id == c.id);
        CHECK(view.tool == c.tool);
        CHECK(view.state == c.state);
        CHECK(view.owner == c.owner);
        CHECK(nano(view.started) == c.started);
        CHECK(view.has_ask == c.has_ask);
      }
      auto full = codec.decode(c.value);
      CHECK(full.has_value() == c.step);
      if (full) {
        CHECK(full->id == c.id);
        CHECK(full->tool == c.tool);
        CHECK(full->state == c.state);
        CHECK(full->owner == c.owner);
        CHECK(full->reason == c.reason);
        CHECK(nano(full->started) == c.started);
        CHECK(nano(full->ended) == c.ended);
        CHECK(full->result.has_value() == c.has_result);
        if (full->result && c.has_result) CHECK(*full->result == c.result);
        CHECK(full->ask.has_value() == c.has_ask);
        if (full->ask) CHECK(ask_what(*full->ask) == c.ask_what);
      }
      // The in-place read agrees with the copying one.
      std::string padded = c.value + std::string(step_padding, '\xff');
      StepView view2;
      CHECK(codec.read_padded(std::string_view(padded.data(), c.value.size()), view2) == shape);

      HolderJudgement judgement;
      StepVerdict v = plan_step(c.key, c.value, rules, codec, &view, nullptr, &judgement);
      CHECK(step_action_name(v.action) == c.action);
      CHECK(reason_agrees(v.reason, c.verdict));
      CHECK(step_why(v) == c.why);
      CHECK(step_said(v, view.owner, rules.self, &judgement) == c.said);
      ends += v.action == StepAction::end;
      deletes += v.action == StepAction::remove;
    }
    // The fixture reaches every kind of outcome.
    CHECK(steps > 140);
    CHECK(ends > 50);
    CHECK(deletes > 30);
  }

  TEST_CASE("each rule branch at a fixed now, before and owner") {
    StepCodec codec;
    StaleRules rules = step_cases::rules();
    const std::string ask = "n1.6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
    auto plan = [&](const std::string& key, const std::string& value) { return plan_step(key, value, rules, codec); };
    auto value = [](const std::string& tool, const std::string& owner, const std::string& started) {
      std::string v = "{\"id\":\"x\",\"tool\":\"" + tool + "\",\"state\":\"running\"";
      if (!owner.empty()) v += ",\"owner\":\"" + owner + "\"";
      if (!started.empty()) v += ",\"started\":\"" + started + "\"";
      return v + "}";
    };
    StepVerdict v = plan("n1.h", value("go build", std::string(step_cases::self), "2020-01-01T00:00:00Z"));
    CHECK(v.action == StepAction::leave);
    CHECK(v.reason == StepReason::owned_by_self);
    v = plan("n1.h", value("go build", "o.1.2", "2030-01-01T00:00:00Z"));
    CHECK(v.action == StepAction::end);
    CHECK(v.reason == StepReason::owner_not_self);
    CHECK(step_why(v) == "the build module restarted while it ran");
    CHECK(step_said(v, "o.1.2", rules.self) ==
          std::string("its owner o.1.2 is not this process ") + std::string(step_cases::self));
    v = plan(ask, value("check ask", "o.1.2", "2030-01-01T00:00:00Z"));
    CHECK(v.action == StepAction::remove);
    CHECK(v.reason == StepReason::owner_not_self);
    // No owner: an ask by the step bound.
    v = plan(ask, value("check ask", "", "2024-05-01T10:59:59Z"));
    CHECK(v.action == StepAction::end);
    CHECK(v.reason == StepReason::ask_past_bound);
    CHECK(v.bound_at == Instant{1714564799, 0});
    CHECK(step_why(v) == "past the step bound: its asker stopped waiting at 2024-05-01T11:59:59Z");
    CHECK(step_said(v, "", rules.self) == "it names no owner (an older build wrote it)");
    v = plan(ask, value("check ask", "", "2024-05-01T11:00:00Z"));  // bound == now: not before now
    CHECK(v.action == StepAction::leave);
    CHECK(v.reason == StepReason::ask_within_bound);
    CHECK(step_why(v).empty());
    rules.bound_ns = 30LL * 60 * 1000000000;  // the bound is an option
    v = plan(ask, value("check ask", "", "2024-05-01T11:00:00Z"));
    CHECK(v.reason == StepReason::ask_past_bound);
    CHECK(step_why(v) == "past the step bound: its asker stopped waiting at 2024-05-01T11:30:00Z");
    rules.bound_ns = default_step_bound_ns;
    // No owner: a hand-started step by `before`.
    v = plan("n1.h", value("go build", "", "2024-05-01T10:59:59.999999999Z"));
    CHECK(v.action == StepAction::end);
    CHECK(v.reason == StepReason::started_before);
    CHECK(step_said(v, "", rules.self) ==
          "it names no owner (an older build wrote it) and started before this process");
    v = plan("n1.h", value("go build", "", "2024-05-01T11:00:00Z"));
    CHECK(v.action == StepAction::leave);
    CHECK(v.reason == StepReason::started_since);
    // Untouched.
    CHECK(plan("n2.h", value("go build", "o", "")).reason == StepReason::other_node);
    CHECK(plan("n1.h", "").reason == StepReason::no_value);
    CHECK(plan("n1.h", "{\"state\":\"running\",\"owner\":\"o\"} x").reason == StepReason::no_step);
    CHECK(plan("n1.h", "{\"state\":\"succeeded\",\"owner\":\"o\"}").reason == StepReason::not_running);
    CHECK(plan("n1.h", "null").reason == StepReason::not_running);
  }

  TEST_CASE("an escape anywhere in a string or a name reads as the byte it stands for") {
    // Each string the rules read, and each name, written plain and then with one of its
    // letters as \u00XX: first, in the middle, last. JSON says both are the same step, so
    // the plan and what it read must be the same.
    StepCodec codec;
    StaleRules rules = step_cases::rules();
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
    const StepVerdict plain = plan_step(ask_key, plain_value, rules, codec, &plain_view);
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
            const StepVerdict got = plan_step(ask_key, v, rules, codec, &view);
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
    StaleRules rules = step_cases::rules();
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
        StepVerdict got = plan_step("n1.h", head + tail, rules, codec);
        CHECK(got.action == StepAction::leave);
        CHECK(got.reason == (valid ? StepReason::owned_by_self : StepReason::no_step));
        got = plan_step("n1.h", last, rules, codec);
        CHECK(got.reason == (valid ? StepReason::not_running : StepReason::no_step));
        // The escape in the value's last bytes, a value with none before it: still read as Go does.
        got = plan_step("n1.h", running_open + ",\"z\":\"" + escape + "\"}", rules, codec);
        CHECK(got.reason == (valid ? StepReason::owned_by_self : StepReason::no_step));
        ++tried;
      }
    CHECK(tried == 140 * 14);
  }

  TEST_CASE("rule provably-dead ends only owners proven gone") {
    StepCodec codec;
    StaleRules rules = step_cases::rules();
    rules.rule = OwnerRule::provably_dead;
    HolderState answer = HolderState::alive;
    int asked = 0;
    rules.judge = [&](std::string_view owner) {
      ++asked;
      CHECK(owner == "o.1.2");
      return judged(answer);
    };
    const std::string hand = "{\"id\":\"x\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\"}";
    const std::string ask = "{\"id\":\"x\",\"tool\":\"check ask\",\"state\":\"running\",\"owner\":\"o.1.2\"}";
    const std::string ask_key = "n1.6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
    struct Row {
      HolderState state;
      StepAction hand, ask;
      StepReason reason;
    };
    for (Row row : {Row{HolderState::alive, StepAction::leave, StepAction::leave, StepReason::owner_alive},
                    Row{HolderState::unknown, StepAction::leave, StepAction::leave, StepReason::owner_unknown},
                    Row{HolderState::dead, StepAction::end, StepAction::remove, StepReason::owner_gone},
                    Row{HolderState::recycled, StepAction::end, StepAction::remove, StepReason::owner_gone},
                    Row{HolderState::other_boot, StepAction::end, StepAction::remove, StepReason::owner_gone}}) {
      answer = row.state;
      HolderJudgement j;
      StepVerdict v = plan_step("n1.h", hand, rules, codec, nullptr, nullptr, &j);
      CHECK(v.action == row.hand);
      CHECK(v.reason == row.reason);
      v = plan_step(ask_key, ask, rules, codec, nullptr, nullptr, &j);
      CHECK(v.action == row.ask);
      CHECK(v.reason == row.reason);
      if (row.reason == StepReason::owner_gone) {
        CHECK(step_why(v) == "the build module restarted while it ran");
        CHECK(step_said(v, "o.1.2", rules.self, &j) ==
              std::string("its owner o.1.2 is provably gone: judged ") + holder_state_name(row.state));
      } else {
        CHECK(step_why(v).empty());
      }
    }
    // This process's own steps are never judged.
    asked = 0;
    std::string own = "{\"id\":\"x\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"" +
                      std::string(step_cases::self) + "\"}";
    CHECK(plan_step("n1.h", own, rules, codec).reason == StepReason::owned_by_self);
    CHECK(asked == 0);
    // A cache judges each owner once.
    OwnerVerdicts cache;
    answer = HolderState::dead;
    for (int i = 0; i < 5; ++i)
      CHECK(plan_step("n1.h", hand, rules, codec, nullptr, &cache).reason == StepReason::owner_gone);
    CHECK(asked == 1);
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

  TEST_CASE("a codec keeping its spans ends the step read last without reading it again, and only that one") {
    StepCodec codec, fresh;
    const Instant at{1714564800, 9};
    auto want = [&](std::string_view v) {
      auto r = fresh.end(v, "w", at);
      return r.ok() ? *r : std::string("<error>");
    };
    auto got = [&](std::string_view v) {
      std::string out;
      return codec.end(v, "w", at, out).ok() ? out : std::string("<error>");
    };
    const std::string a = "{\"id\":\"a\",\"state\":\"running\",\"result\":{\"x\":1},\"tool\":\"go\"}";
    const std::string b = "{\"state\":\"running\",\"reason\":\"r\",\"ended\":null,\"owner\":\"o\",\"z\":[1,2]}";
    const std::string not_step = "{\"state\":1}";
    StepView view;
    CHECK_FALSE(StepCodecAccess::keep_spans(codec, true));
    codec.read(a, view);
    CHECK(got(a) == want(a));
    codec.read(b, view);
    CHECK(got(a) == want(a));  // the spans are b's: a is read again
    CHECK(got(b) == want(b));
    codec.read(b, view);
    CHECK(got(std::string_view(b).substr(0, b.size() - 1)) == "<error>");  // the same bytes, shorter
    codec.read(b, view);
    codec.read(not_step, view);
    CHECK(got(b) == want(b));
    CHECK(got(not_step) == "<error>");
    for (const auto& c : go_cases()) {  // every shape, read and then ended
      CAPTURE(c.value.substr(0, 200));
      codec.read(c.value, view);
      CHECK(got(c.value) == want(c.value));
      CHECK(codec.decode(c.value).has_value() == (c.step || c.null));
      CHECK(got(c.value) == want(c.value));
    }
    CHECK(StepCodecAccess::keep_spans(codec, false));
    codec.read(a, view);
    CHECK(got(a) == want(a));
    CHECK_FALSE(StepCodecAccess::keep_spans(codec, false));
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

  TEST_CASE("names of actions and reasons are stable") {
    CHECK(std::string(step_action_name(StepAction::leave)) == "leave");
    CHECK(std::string(step_action_name(StepAction::end)) == "end");
    CHECK(std::string(step_action_name(StepAction::remove)) == "delete");
    CHECK(std::string(step_reason_name(StepReason::other_node)) == "other-node");
    CHECK(std::string(step_reason_name(StepReason::started_since)) == "started-since");
    CHECK(static_cast<int>(StepReason::ask_past_bound) == 10);
    CHECK(step_reason_count == 13);
  }

  TEST_CASE("the batch plan agrees with the plan of each value, on one thread and on two") {
    auto cases = step_cases::corpus(12000, 7);
    auto batch = step_cases::batch_of(cases);
    StaleRules rules = step_cases::rules();
    StepCodec codec;
    std::vector<StepVerdict> expected;
    for (const auto& c : cases) expected.push_back(plan_step(c.key, c.value, rules, codec));

    for (std::size_t padding : {std::size_t(0), step_padding}) {
      for (unsigned threads : {1u, 2u, 3u}) {
        CAPTURE(padding);
        CAPTURE(threads);
        std::string buffer = batch.buffer;
        buffer.append(padding, '\xee');
        std::vector<BatchVerdict> out(cases.size());
        BatchSummary sum;
        Status st = plan_batch(out, std::string_view(buffer.data(), batch.buffer.size()), padding, batch.entries, rules,
                               threads, &sum);
        REQUIRE(st.ok());
        std::size_t mismatches = 0;
        for (std::size_t i = 0; i < cases.size(); ++i) {
          StepVerdict v = to_verdict(out[i]);
          if (v.action != expected[i].action || v.reason != expected[i].reason || v.bound_at != expected[i].bound_at ||
              step_why(v) != step_why(expected[i]))
            ++mismatches;
        }
        CHECK(mismatches == 0);
        CHECK(sum.end + sum.remove + sum.leave + sum.no_step + sum.other_node == cases.size());
        CHECK(sum.end > 500);
        CHECK(sum.remove > 300);
        CHECK(sum.no_step > 500);
        CHECK(sum.other_node > 500);
      }
    }
    // Bad batches.
    std::vector<BatchVerdict> small(3);
    CHECK(plan_batch(small, batch.buffer, 0, batch.entries, rules).code() == Errc::invalid_argument);
    std::vector<BatchEntry> outside{BatchEntry{0, batch.buffer.size() - 2, 2, 3, 1}};
    std::vector<BatchVerdict> one(1);
    CHECK(plan_batch(one, batch.buffer, 0, outside, rules).code() == Errc::invalid_argument);
    outside[0] = BatchEntry{~0ull, 0, 2, 3, 1};
    CHECK(plan_batch(one, batch.buffer, 0, outside, rules).code() == Errc::invalid_argument);
    StaleRules no_self = rules;
    no_self.self.clear();
    CHECK(plan_batch(one, batch.buffer, 0, std::span<const BatchEntry>(batch.entries.data(), 1), no_self).code() ==
          Errc::invalid_argument);
    CHECK(plan_batch({}, batch.buffer, 0, {}, rules).ok());
  }

  TEST_CASE("this process's start") {
    Instant start = this_process_start();
    CHECK(start <= system_now());
    CHECK(start == this_process_start());
    CHECK(start > Instant{1600000000, 0});
  }
}
