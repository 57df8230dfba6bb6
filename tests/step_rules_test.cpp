// The staleness rules (leasejudge/step_rules.hpp): every value judged as the seed's rules say.
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
using step_cases::reason_agrees;
using step_cases::judged;
using step_cases::read_and_judge;

TEST_SUITE("step_rules") {
  TEST_CASE("every value reads and plans as Go's decoder and the seed's rules say") {
    auto cases = go_cases();
    REQUIRE(cases.size() > 400);
    StepCodec codec;
    StepRules rules = step_cases::rules();
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
      // A read of the value with other bytes after it reads none of them.
      std::string followed = c.value + std::string(64, '\xff');
      StepView view2;
      CHECK(codec.read(std::string_view(followed.data(), c.value.size()), view2) == shape);

      HolderJudgement judgement;
      StepVerdict v = read_and_judge(c.key, c.value, rules, codec, &view, nullptr, &judgement);
      CHECK(step_action_name(v.action) == c.action);
      CHECK(reason_agrees(v.reason, c.verdict));
      CHECK(step_why(v) == c.why);
      CHECK(step_said(v, view.owner, rules.owner, &judgement) == c.said);
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
    StepRules rules = step_cases::rules();
    const std::string ask = "n1.6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
    auto plan = [&](const std::string& key, const std::string& value) { return read_and_judge(key, value, rules, codec); };
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
    CHECK(step_said(v, "o.1.2", rules.owner) ==
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
    CHECK(step_said(v, "", rules.owner) == "it names no owner (an older build wrote it)");
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
    CHECK(step_said(v, "", rules.owner) ==
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

  TEST_CASE("rule provably-dead ends only owners proven gone") {
    StepCodec codec;
    StepRules rules = step_cases::rules();
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
      StepVerdict v = read_and_judge("n1.h", hand, rules, codec, nullptr, nullptr, &j);
      CHECK(v.action == row.hand);
      CHECK(v.reason == row.reason);
      v = read_and_judge(ask_key, ask, rules, codec, nullptr, nullptr, &j);
      CHECK(v.action == row.ask);
      CHECK(v.reason == row.reason);
      if (row.reason == StepReason::owner_gone) {
        CHECK(step_why(v) == "the build module restarted while it ran");
        CHECK(step_said(v, "o.1.2", rules.owner, &j) ==
              std::string("its owner o.1.2 is provably gone: judged ") + holder_state_name(row.state));
      } else {
        CHECK(step_why(v).empty());
      }
    }
    // This process's own steps are never judged.
    asked = 0;
    std::string own = "{\"id\":\"x\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"" +
                      std::string(step_cases::self) + "\"}";
    CHECK(read_and_judge("n1.h", own, rules, codec).reason == StepReason::owned_by_self);
    CHECK(asked == 0);
    // A cache judges each owner once.
    OwnerVerdicts cache;
    answer = HolderState::dead;
    for (int i = 0; i < 5; ++i)
      CHECK(read_and_judge("n1.h", hand, rules, codec, nullptr, &cache).reason == StepReason::owner_gone);
    CHECK(asked == 1);
  }

  TEST_CASE("names of actions and reasons are stable") {
    CHECK(std::string(step_action_name(StepAction::leave)) == "leave");
    CHECK(std::string(step_action_name(StepAction::end)) == "end");
    CHECK(std::string(step_action_name(StepAction::remove)) == "delete");
    CHECK(std::string(step_reason_name(StepReason::other_node)) == "other-node");
    CHECK(std::string(step_reason_name(StepReason::started_since)) == "started-since");
    CHECK(static_cast<int>(StepReason::ask_past_bound) == 10);
    CHECK(std::string(step_reason_name(StepReason::under_min_age)) == "under-min-age");
    CHECK(step_reason_count == 14);
  }

  TEST_CASE("the batch plan agrees with the plan of each value, on one thread and on two") {
    auto cases = step_cases::corpus(12000, 7);
    auto batch = step_cases::batch_of(cases);
    StepRules rules = step_cases::rules();
    StepCodec codec;
    std::vector<StepVerdict> expected;
    for (const auto& c : cases) expected.push_back(read_and_judge(c.key, c.value, rules, codec));

    for (std::size_t trailing : {std::size_t(0), std::size_t(64)}) {
      for (unsigned threads : {1u, 2u, 3u}) {
        CAPTURE(trailing);
        CAPTURE(threads);
        std::string buffer = batch.buffer;
        buffer.append(trailing, '\xee');
        std::vector<BatchVerdict> out(cases.size());
        BatchSummary sum;
        Status st = plan_batch(out, std::string_view(buffer.data(), batch.buffer.size()), batch.entries, rules,
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
    CHECK(plan_batch(small, batch.buffer, batch.entries, rules).code() == Errc::invalid_argument);
    std::vector<BatchEntry> outside{BatchEntry{0, batch.buffer.size() - 2, 2, 3, 1}};
    std::vector<BatchVerdict> one(1);
    CHECK(plan_batch(one, batch.buffer, outside, rules).code() == Errc::invalid_argument);
    outside[0] = BatchEntry{~0ull, 0, 2, 3, 1};
    CHECK(plan_batch(one, batch.buffer, outside, rules).code() == Errc::invalid_argument);
    StepRules no_self = rules;
    no_self.owner.clear();
    CHECK(plan_batch(one, batch.buffer, std::span<const BatchEntry>(batch.entries.data(), 1), no_self).code() ==
          Errc::invalid_argument);
    CHECK(plan_batch({}, batch.buffer, {}, rules).ok());
  }

  TEST_CASE("this process's start") {
    Instant start = this_process_start();
    CHECK(start <= system_now());
    CHECK(start == this_process_start());
    CHECK(start > Instant{1600000000, 0});
  }

}
