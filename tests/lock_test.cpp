// Lock leases: the body codec, the producers, execution state, every branch and
// why of the verdict at a fixed now, and the lock's life on a store. Expected texts
// are written by hand from the JavaScript lock-lease code's template strings.
#include "leasejudge/lock.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "leasejudge.h"
#include "leasejudge/store/file.hpp"
#include "leasejudge/store/memory.hpp"

using namespace leasejudge;
using K = LockVerdict::Kind;

namespace {

// 2024-05-01T12:00:00.000Z
constexpr std::int64_t now_ms = 1714564800000;
const Instant now = Instant::from_unix_ms(now_ms);

// The judge of these tests: host build-7, machine m-aaa; pids 200 and 201 are dead.
Here test_here() {
  Here h;
  h.host = "build-7";
  h.machine = MachineField::of("m-aaa");
  h.alive = [](double pid) { return pid != 200 && pid != 201; };
  h.owner_state = [](std::string_view) { return HolderState::unknown; };
  return h;
}

// For process holders: the judge must never ask Cloud Run.
struct NoDescriber {
  std::shared_ptr<int> calls = std::make_shared<int>(0);
  Describer get() const {
    auto c = calls;
    return [c](const ExecutionRef&) {
      ++*c;
      FAIL("the describer was called for a body that names no execution");
      return ExecutionState::unknown("must not be called");
    };
  }
};

LockVerdict judge_process(std::string_view text, const Here& here = test_here(), Instant at = now) {
  NoDescriber none;
  LockVerdict v = judge_lock(text, none.get(), at, here);
  CHECK(*none.calls == 0);
  return v;
}

Describer answer(ExecutionState state, std::vector<ExecutionRef>* asked = nullptr) {
  return [state, asked](const ExecutionRef& ref) {
    if (asked != nullptr) asked->push_back(ref);
    return state;
  };
}

void check_verdict(const LockVerdict& v, K kind, LockReason reason, bool manual, std::string_view why) {
  CHECK(lock_verdict_kind_name(v.kind) == std::string(lock_verdict_kind_name(kind)));
  CHECK(lock_reason_code(v.reason) == std::string(lock_reason_code(reason)));
  CHECK(v.manual_removal == manual);
  CHECK(v.why == why);
}

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(LEASEJUDGE_SOURCE_DIR) + "/tests/fixtures/lock/" + name, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string process_body = R"({"purpose":"deploy","id":"i-1","host":"build-7","machine":"m-aaa","pid":200,)"
                                 R"("startedAt":"2024-05-01T11:00:00.000Z","leaseUntil":"2024-05-01T12:15:00.000Z"})";
const std::string process_who = "deploy (on build-7, pid 200, started 2024-05-01T11:00:00.000Z)";

std::string execution_body(std::string_view lease_field) {
  return std::string(R"({"purpose":"upgrade","id":"i-2","host":"localhost","machine":null,"pid":1,)"
                     R"("startedAt":"2024-05-01T11:00:00.000Z","execution":{"projectId":"p","region":"r",)"
                     R"("name":"job-abc"})") +
         std::string(lease_field) + "}";
}
const std::string execution_who = "upgrade (run job-abc, started 2024-05-01T11:00:00.000Z)";

}  // namespace

TEST_SUITE("lock") {
  // --- not readable -------------------------------------------------------------------

  TEST_CASE("a body that is not readable is held for a person, quoting it trimmed") {
    auto held = [](std::string_view text, std::string_view quoted) {
      check_verdict(judge_process(text), K::held, LockReason::not_readable, true,
                    "the lock's holder is not readable (" + std::string(quoted) + ")");
    };
    held("", "empty");
    held(" \t\r\n ", "empty");
    held("not json", "not json");
    held("  {broken  \n", "{broken");
    held("[1,2]", "[1,2]");
    held("42", "42");
    held("null", "null");
    held("\"purpose\"", "\"purpose\"");
    held(R"({"id":"x"})", R"({"id":"x"})");        // purpose is required
    held(R"({"purpose":1})", R"({"purpose":1})");  // purpose is a string
    held(R"({"purpose":"p","pid":"12"})", R"({"purpose":"p","pid":"12"})");
    held(R"({"purpose":"p","pid":null})", R"({"purpose":"p","pid":null})");
    held(R"({"purpose":"p","pid":1e400})", R"({"purpose":"p","pid":1e400})");  // Infinity: no number
    held(R"({"purpose":"p","machine":7})", R"({"purpose":"p","machine":7})");
    held(R"({"purpose":"p","host":null})", R"({"purpose":"p","host":null})");
    held(R"({"purpose":"p","id":false})", R"({"purpose":"p","id":false})");
    held(R"({"purpose":"p","startedAt":1})", R"({"purpose":"p","startedAt":1})");
    held(R"({"purpose":"p","leaseUntil":1714564800000})", R"({"purpose":"p","leaseUntil":1714564800000})");
    held(R"({"purpose":"p","execution":null})", R"({"purpose":"p","execution":null})");
    held(R"({"purpose":"p","execution":{"projectId":"a","region":"b","name":""}})",
         R"({"purpose":"p","execution":{"projectId":"a","region":"b","name":""}})");
    held(R"({"purpose":"p","execution":{"projectId":"a","region":"b"}})",
         R"({"purpose":"p","execution":{"projectId":"a","region":"b"}})");
    held(R"({"purpose":"p"} x)", R"({"purpose":"p"} x)");  // trailing content
    held(R"({"purpose":"p"}})", R"({"purpose":"p"}})");
    held(R"({"purpose":"p","x":[tru]})", R"({"purpose":"p","x":[tru]})");  // an ignored key must still be JSON
    held(R"({"purpose":"p","x":"\q"})", R"({"purpose":"p","x":"\q"})");
    held("{'purpose':'p'}", "{'purpose':'p'}");
    // JS trim takes U+FEFF and U+00A0 too; JSON.parse does not, so a BOM is not a body.
    held("\xEF\xBB\xBF{\"purpose\":\"p\"}\xC2\xA0", "{\"purpose\":\"p\"}");
    held("\xE2\x80\xA8x\xE3\x80\x80", "x");
    // Ill-formed UTF-8 is read as U+FFFD, one per maximal subpart.
    held("\xFF\xFE", "\xEF\xBF\xBD\xEF\xBF\xBD");
    held("a\xE2\x82", "a\xEF\xBF\xBD");
  }

  TEST_CASE("the quote is cut at 200 UTF-16 code units") {
    std::string long_text = "x" + std::string(299, 'y');
    check_verdict(judge_process(long_text), K::held, LockReason::not_readable, true,
                  "the lock's holder is not readable (x" + std::string(199, 'y') + ")");
    // A pair cut in half: JS keeps its high surrogate, which Node writes as U+FFFD.
    std::string pair_cut = std::string(199, 'z') + "\xF0\x9F\x98\x80" + "tail";
    check_verdict(judge_process(pair_cut), K::held, LockReason::not_readable, true,
                  "the lock's holder is not readable (" + std::string(199, 'z') + "\xEF\xBF\xBD)");
    // A character outside the BMP counts two units, one in the BMP counts one.
    std::string mixed = std::string(198, 'z') + "\xF0\x9F\x98\x80" + "\xC3\xA9" + "rest";
    check_verdict(judge_process(mixed), K::held, LockReason::not_readable, true,
                  "the lock's holder is not readable (" + std::string(198, 'z') + "\xF0\x9F\x98\x80)");
  }

  TEST_CASE("bad input: NUL bytes, invalid UTF-8 in strings, deep nesting, 10 MB") {
    std::string with_nul("{\"purpose\":\"a\0b\"}", 17);
    auto v = judge_process(with_nul);
    check_verdict(v, K::held, LockReason::not_readable, true, "the lock's holder is not readable (" + with_nul + ")");
    std::string nul_outside("{\"purpose\":\"a\"}\0", 16);
    check_verdict(judge_process(nul_outside), K::held, LockReason::not_readable, true,
                  "the lock's holder is not readable (" + nul_outside + ")");

    // An ill-formed byte inside a string is U+FFFD in the JS string: still a body.
    auto bad_byte = parse_lock_body(
        "{\"purpose\":\"a\xFF"
        "b\"}");
    REQUIRE(bad_byte.ok());
    CHECK(bad_byte->purpose ==
          "a\xEF\xBF\xBD"
          "b");

    // Nesting deeper than 1000 is not read here (V8 would): held, the safe way.
    std::string deep = R"({"purpose":"p","x":)" + std::string(2000, '[') + std::string(2000, ']') + "}";
    CHECK(judge_process(deep).reason == LockReason::not_readable);
    std::string fine = R"({"purpose":"p","x":)" + std::string(500, '[') + std::string(500, ']') + "}";
    CHECK(judge_process(fine).reason == LockReason::no_lease);

    // 10 MB of garbage: quoted, cut.
    std::string garbage(10u << 20, '#');
    check_verdict(judge_process(garbage), K::held, LockReason::not_readable, true,
                  "the lock's holder is not readable (" + std::string(200, '#') + ")");
    // A 10 MB body that fits the schema is a body.
    std::string big_purpose(10u << 20, 'p');
    auto big = judge_process(R"({"purpose":")" + big_purpose + R"(","leaseUntil":"2024-05-01T11:00:00.000Z"})");
    check_verdict(big, K::break_lock, LockReason::lease_ended, false,
                  big_purpose + " stopped renewing its lock; its lease ended at 2024-05-01T11:00:00.000Z");
  }

  // --- the codec ------------------------------------------------------------------------

  TEST_CASE("parse_lock_body reads the schema as zod does") {
    SUBCASE("every field") {
      auto b = parse_lock_body(process_body);
      REQUIRE(b.ok());
      CHECK(b->purpose == "deploy");
      CHECK(b->id == "i-1");
      CHECK(b->host == "build-7");
      CHECK(b->machine == MachineField::of("m-aaa"));
      CHECK(b->pid == 200.0);
      CHECK(b->started_at == "2024-05-01T11:00:00.000Z");
      CHECK(!b->execution);
      CHECK(b->lease_until == "2024-05-01T12:15:00.000Z");
      CHECK(!b->owner);
    }
    SUBCASE("machine absent, null, or an id") {
      CHECK(parse_lock_body(R"({"purpose":"p"})")->machine.kind == MachineField::Kind::absent);
      CHECK(parse_lock_body(R"({"purpose":"p","machine":null})")->machine.kind == MachineField::Kind::none);
      CHECK(parse_lock_body(R"({"purpose":"p","machine":""})")->machine == MachineField::of(""));
    }
    SUBCASE("duplicate keys: the last wins, and only the last is checked") {
      auto b = parse_lock_body(R"({"purpose":1,"pid":"x","purpose":"p","pid":7,"pid":8})");
      REQUIRE(b.ok());
      CHECK(b->purpose == "p");
      CHECK(b->pid == 8.0);
      CHECK(!parse_lock_body(R"({"purpose":"p","pid":7,"pid":"x"})").ok());
      auto e = parse_lock_body(
          R"({"purpose":"p","execution":{"name":""},"execution":{"projectId":"a","region":"b","name":"c","name":"d"}})");
      REQUIRE(e.ok());
      CHECK(e->execution == ExecutionRef{"a", "b", "d"});
    }
    SUBCASE("unknown keys are ignored; owner is kept when it is a string") {
      auto b = parse_lock_body(R"({"x":{"y":[1,{"z":null}]},"purpose":"p","owner":"tok","extra":true})");
      REQUIRE(b.ok());
      CHECK(b->owner == "tok");
      auto c = parse_lock_body(R"({"purpose":"p","owner":5})");
      REQUIRE(c.ok());
      CHECK(!c->owner);
    }
    SUBCASE("numbers as JSON.parse reads them") {
      CHECK(parse_lock_body(R"({"purpose":"p","pid":-0})")->pid == 0.0);
      CHECK(parse_lock_body(R"({"purpose":"p","pid":1.5e3})")->pid == 1500.0);
      CHECK(parse_lock_body(R"({"purpose":"p","pid":123456789012345678901234567890})")->pid == 1.2345678901234568e29);
      CHECK(parse_lock_body(R"({"purpose":"p","pid":1e-400})")->pid == 0.0);
      CHECK(!parse_lock_body(R"({"purpose":"p","pid":01})").ok());
      CHECK(!parse_lock_body(R"({"purpose":"p","pid":1.})").ok());
      CHECK(!parse_lock_body(R"({"purpose":"p","pid":+1})").ok());
      CHECK(!parse_lock_body(R"({"purpose":"p","pid":NaN})").ok());
    }
    SUBCASE("escapes, lone surrogates included, as JSON.parse keeps them") {
      auto b = parse_lock_body(R"({"p\u0075rpose":"a\ud800b\u00e9\ud83d\ude00\n"})");
      REQUIRE(b.ok());
      CHECK(b->purpose ==
            "a\xED\xA0\x80"
            "b\xC3\xA9\xF0\x9F\x98\x80\n");
      // Written back, the lone surrogate is an escape again, as JSON.stringify writes it.
      LockBody only;
      only.purpose = b->purpose;
      CHECK(format_lock_body(only) == R"({"purpose":"a\ud800bé😀\n"})");
    }
    SUBCASE("errors say what is wrong") {
      CHECK(parse_lock_body("nope").error().message == "the lock body is not JSON");
      CHECK(parse_lock_body("[]").error().message == "the lock body is not a JSON object");
      CHECK(parse_lock_body("{}").error().message == "the lock body has no purpose");
      CHECK(parse_lock_body(R"({"purpose":"p","pid":"1"})").error().message ==
            "the lock body's pid is not a finite number");
      CHECK(parse_lock_body("{}").code() == Errc::parse);
    }
  }

  TEST_CASE("format_lock_body writes JSON.stringify's bytes in the schema's order") {
    LockBody b;
    b.purpose = "q\"\\\x01\x1f\x7f";
    b.owner = "o";
    b.lease_until = "L";
    b.execution = ExecutionRef{"p", "r", "n"};
    b.started_at = "S";
    b.pid = 1e21;
    b.machine = MachineField::none();
    b.host = "h";
    b.id = "i";
    CHECK(format_lock_body(b) ==
          R"({"purpose":"q\"\\\u0001\u001f)"
          "\x7f"
          R"(","id":"i","host":"h","machine":null,"pid":1e+21,"startedAt":"S",)"
          R"("execution":{"projectId":"p","region":"r","name":"n"},"leaseUntil":"L","owner":"o"})");
    LockBody n;
    n.purpose = "";
    n.pid = -0.0;
    CHECK(format_lock_body(n) == R"({"purpose":"","pid":0})");
    n.pid = 1.0 / 0.0;  // JSON.stringify writes null
    CHECK(format_lock_body(n) == R"({"purpose":"","pid":null})");
    n.pid = 0.000001;
    CHECK(format_lock_body(n) == R"({"purpose":"","pid":0.000001})");
    n.pid = 1.5e-7;
    CHECK(format_lock_body(n) == R"({"purpose":"","pid":1.5e-7})");
    n.pid = 123456789012345680000.0;
    CHECK(format_lock_body(n) == R"({"purpose":"","pid":123456789012345680000})");
    n.pid = -2.5;
    CHECK(format_lock_body(n) == R"({"purpose":"","pid":-2.5})");
  }

  // --- producers ---------------------------------------------------------------------------

  TEST_CASE("lock bodies for each holder, and the renewed body") {
    BodyAuthor author{"devbox", std::string("0123456789abcdef0123456789abcdef"), 48213, std::nullopt};
    SUBCASE("the hand-written process fixture, byte for byte") {
      auto body = lock_body("caelo state lock", Instant::from_unix_ms(1714564500000), ProcessHolder{600000},
                            "5f0c6f7e-3a1b-4c2d-9e8f-0a1b2c3d4e5f", author);
      REQUIRE(body.ok());
      CHECK(*body == read_fixture("process-holder.json"));
    }
    SUBCASE("the hand-written execution fixture, byte for byte") {
      BodyAuthor cloud_run{"localhost", std::nullopt, 1, std::string("ignored for executions")};
      auto body = lock_body("caelo upgrader", Instant::from_unix_ms(1714563000000),
                            ExecutionHolder{{"caelo-prod", "europe-west1", "caelo-upgrader-x7k2p"}, 3600000},
                            "9b2d7c41-0e6a-4f3b-8a15-6c7d8e9f0a1b", cloud_run);
      REQUIRE(body.ok());
      CHECK(*body == read_fixture("execution-holder.json"));
    }
    SUBCASE("no holder: no lease; a process holder carries the owner token last") {
      BodyAuthor with_owner = author;
      with_owner.owner = "0b1c.48213.lq2";
      CHECK(*lock_body("p", now, std::monostate{}, "id", with_owner) ==
            R"({"purpose":"p","id":"id","host":"devbox","machine":"0123456789abcdef0123456789abcdef",)"
            R"("pid":48213,"startedAt":"2024-05-01T12:00:00.000Z","owner":"0b1c.48213.lq2"})");
      CHECK(*lock_body("p", now, ProcessHolder{1000}, "id", with_owner) ==
            R"({"purpose":"p","id":"id","host":"devbox","machine":"0123456789abcdef0123456789abcdef",)"
            R"("pid":48213,"startedAt":"2024-05-01T12:00:00.000Z","leaseUntil":"2024-05-01T12:05:01.000Z",)"
            R"("owner":"0b1c.48213.lq2"})");
    }
    SUBCASE("a fresh id is a lowercase UUID") {
      auto body = lock_body("p", now, ProcessHolder{}, "", author);
      REQUIRE(body.ok());
      auto parsed = parse_lock_body(*body);
      REQUIRE(parsed.ok());
      REQUIRE(parsed->id);
      CHECK(parsed->id->size() == 36);
      CHECK(parsed->id->find_first_not_of("0123456789abcdef-") == std::string::npos);
      CHECK((*parsed->id)[14] == '4');
      CHECK(new_acquisition_id() != new_acquisition_id());
    }
    SUBCASE("bad input") {
      CHECK(lock_body("\xFF", now, ProcessHolder{}, "id", author).code() == Errc::invalid_argument);
      CHECK(lock_body("p", now, ExecutionHolder{{"a", "", "c"}, 1}, "id", author).code() == Errc::invalid_argument);
      CHECK(lock_body("p", Instant::from_unix_ms(8'640'000'000'000'000), ProcessHolder{}, "id", author).code() ==
            Errc::invalid_argument);
      CHECK(lock_body("p", now, ProcessHolder{INT64_MAX}, "id", author).code() == Errc::invalid_argument);
    }
    SUBCASE("renewal moves the lease and keeps the rest, unknown keys dropped") {
      auto fixture = parse_lock_body(read_fixture("process-holder.json"));
      REQUIRE(fixture.ok());
      auto renewed = renewed_lock_body(*fixture, now, 600000);
      REQUIRE(renewed.ok());
      CHECK(*renewed ==
            R"({"purpose":"caelo state lock","id":"5f0c6f7e-3a1b-4c2d-9e8f-0a1b2c3d4e5f","host":"devbox",)"
            R"("machine":"0123456789abcdef0123456789abcdef","pid":48213,"startedAt":"2024-05-01T11:55:00.000Z",)"
            R"("leaseUntil":"2024-05-01T12:15:00.000Z"})");
      auto odd = parse_lock_body(R"({"zz":1,"leaseUntil":"x","purpose":"p","owner":"o","machine":null})");
      REQUIRE(odd.ok());
      CHECK(*renewed_lock_body(*odd, now, 0) ==
            R"({"purpose":"p","machine":null,"leaseUntil":"2024-05-01T12:05:00.000Z","owner":"o"})");
    }
  }

  TEST_CASE("the two hand-written fixtures are read, judged and renewed") {
    auto process = read_fixture("process-holder.json");
    auto execution = read_fixture("execution-holder.json");
    Here devbox;
    devbox.host = "devbox";
    devbox.machine = MachineField::of("0123456789abcdef0123456789abcdef");
    devbox.alive = [](double pid) { return pid != 48213; };
    const std::string who = "caelo state lock (on devbox, pid 48213, started 2024-05-01T11:55:00.000Z)";
    check_verdict(judge_process(process, devbox), K::break_lock, LockReason::process_gone, false,
                  who + " has ended (its process is gone on this machine)");
    check_verdict(judge_process(process), K::held, LockReason::lease_runs, false,
                  "held by " + who + "; its lease runs until 2024-05-01T12:10:00.000Z unless renewed");
    check_verdict(judge_process(process, test_here(), Instant::from_unix_ms(1714565400001)), K::break_lock,
                  LockReason::lease_ended, false,
                  who + " stopped renewing its lock; its lease ended at 2024-05-01T12:10:00.000Z");

    std::vector<ExecutionRef> asked;
    check_verdict(judge_lock(execution, answer(ExecutionState::running(), &asked), now, test_here()), K::held,
                  LockReason::execution_running, false,
                  "caelo upgrader (run caelo-upgrader-x7k2p, started 2024-05-01T11:30:00.000Z) is still running");
    REQUIRE(asked.size() == 1);
    CHECK(asked[0] == ExecutionRef{"caelo-prod", "europe-west1", "caelo-upgrader-x7k2p"});

    auto renewed = renewed_lock_body(*parse_lock_body(execution), now, 3600000);
    REQUIRE(renewed.ok());
    std::string expected = execution;
    expected.replace(expected.find("2024-05-01T12:35:00.000Z"), 24, "2024-05-01T13:05:00.000Z");
    CHECK(*renewed == expected);
  }

  // --- the verdict on a process holder -------------------------------------------------

  TEST_CASE("process holder: every branch and why") {
    SUBCASE("its pid is dead on this machine: break at once, lease or not") {
      check_verdict(judge_process(process_body), K::break_lock, LockReason::process_gone, false,
                    process_who + " has ended (its process is gone on this machine)");
    }
    SUBCASE("its pid lives: the lease decides") {
      std::string alive = process_body;
      alive.replace(alive.find("\"pid\":200"), 9, "\"pid\":300");
      check_verdict(judge_process(alive), K::held, LockReason::lease_runs, false,
                    "held by deploy (on build-7, pid 300, started 2024-05-01T11:00:00.000Z); its lease runs until "
                    "2024-05-01T12:15:00.000Z unless renewed");
    }
    SUBCASE("another machine id: the pid says nothing here") {
      std::string other = process_body;
      other.replace(other.find("m-aaa"), 5, "m-bbb");
      CHECK(judge_process(other).reason == LockReason::lease_runs);
    }
    SUBCASE("a body whose machine is null (Cloud Run) never matches") {
      std::string cloud = process_body;
      cloud.replace(cloud.find("\"m-aaa\""), 7, "null");
      CHECK(judge_process(cloud).reason == LockReason::lease_runs);
    }
    SUBCASE("a body from before machine ids falls back to the host name") {
      std::string old = process_body;
      old.erase(old.find("\"machine\":\"m-aaa\","), 18);
      CHECK(judge_process(old).reason == LockReason::process_gone);
      Here elsewhere = test_here();
      elsewhere.host = "build-8";
      CHECK(judge_process(old, elsewhere).reason == LockReason::lease_runs);
    }
    SUBCASE("a judge without a machine id (Cloud Run) trusts no pid") {
      Here cloud = test_here();
      cloud.machine = MachineField::none();
      CHECK(judge_process(process_body, cloud).reason == LockReason::lease_runs);
      std::string old = process_body;
      old.erase(old.find("\"machine\":\"m-aaa\","), 18);
      CHECK(judge_process(old, cloud).reason == LockReason::lease_runs);
    }
    SUBCASE("a judge whose machine id is not stated matches only bodies without one") {
      Here unstated = test_here();
      unstated.machine = MachineField::absent();
      CHECK(judge_process(process_body, unstated).reason == LockReason::lease_runs);
      std::string old = process_body;
      old.erase(old.find("\"machine\":\"m-aaa\","), 18);
      CHECK(judge_process(old, unstated).reason == LockReason::process_gone);
    }
    SUBCASE("a host that differs, or no host, never matches") {
      Here elsewhere = test_here();
      elsewhere.host = "build-8";
      CHECK(judge_process(process_body, elsewhere).reason == LockReason::lease_runs);
      CHECK(judge_process(R"({"purpose":"p","pid":200,"machine":"m-aaa"})").reason == LockReason::no_lease);
    }
    SUBCASE("no lease: held, and only a person may remove it") {
      check_verdict(judge_process(R"({"purpose":"deploy","host":"elsewhere","pid":200})"), K::held,
                    LockReason::no_lease, true, "held by deploy (on elsewhere, pid 200)");
    }
    SUBCASE("an unreadable lease: held for a person") {
      check_verdict(judge_process(R"({"purpose":"deploy","leaseUntil":"soon"})"), K::held, LockReason::lease_unreadable,
                    true, "held by deploy, whose lock carries no readable lease");
      check_verdict(judge_process(R"({"purpose":"deploy","leaseUntil":""})"), K::held, LockReason::lease_unreadable,
                    true, "held by deploy, whose lock carries no readable lease");
      // V8's legacy formats are no lease here: held, the safe direction.
      CHECK(judge_process(R"({"purpose":"d","leaseUntil":"May 1 2024"})").reason == LockReason::lease_unreadable);
    }
    SUBCASE("the lease has passed: break; exactly at its end: not yet") {
      const std::string body =
          R"({"purpose":"deploy","host":"h","startedAt":"S","leaseUntil":"2024-05-01T12:00:00.000Z"})";
      check_verdict(judge_process(body), K::held, LockReason::lease_runs, false,
                    "held by deploy (on h, started S); its lease runs until 2024-05-01T12:00:00.000Z unless renewed");
      check_verdict(judge_process(body, test_here(), now.plus_ns(999999)), K::held, LockReason::lease_runs, false,
                    "held by deploy (on h, started S); its lease runs until 2024-05-01T12:00:00.000Z unless renewed");
      check_verdict(judge_process(body, test_here(), Instant::from_unix_ms(now_ms + 1)), K::break_lock,
                    LockReason::lease_ended, false,
                    "deploy (on h, started S) stopped renewing its lock; its lease ended at 2024-05-01T12:00:00.000Z");
      // The lease is compared as Date.parse reads it: an offset counts.
      CHECK(judge_process(R"({"purpose":"d","leaseUntil":"2024-05-01T13:59:59.999+02:00"})").reason ==
            LockReason::lease_ended);
    }
    SUBCASE("an alive check that cannot tell is not death") {
      Here unsure = test_here();
      unsure.alive = nullptr;
      CHECK(judge_process(process_body, unsure).reason == LockReason::lease_runs);
    }
  }

  TEST_CASE("the holder text follows JavaScript's truthiness") {
    auto why = [](std::string_view body) { return judge_process(body).why; };
    CHECK(why(R"({"purpose":"p"})") == "held by p");
    CHECK(why(R"({"purpose":"p","host":"","pid":5,"startedAt":""})") == "held by p");
    CHECK(why(R"({"purpose":"p","host":"h","pid":0})") == "held by p (on h)");
    CHECK(why(R"({"purpose":"p","host":"h","pid":-0})") == "held by p (on h)");
    CHECK(why(R"({"purpose":"p","host":"h","pid":-3})") == "held by p (on h, pid -3)");
    CHECK(why(R"({"purpose":"p","host":"h","pid":1.5})") == "held by p (on h, pid 1.5)");
    CHECK(why(R"({"purpose":"p","host":"h","pid":1e21})") == "held by p (on h, pid 1e+21)");
    CHECK(why(R"({"purpose":"p","host":"h","pid":1e-7})") == "held by p (on h, pid 1e-7)");
    CHECK(why(R"({"purpose":"p","host":"h","pid":123e18})") == "held by p (on h, pid 123000000000000000000)");
    CHECK(why(R"({"purpose":"p","pid":5,"startedAt":"T"})") == "held by p (started T)");
    CHECK(why(R"({"purpose":"","host":"h"})") == "held by  (on h)");
    CHECK(why(R"({"purpose":"a\ud800b"})") ==
          "held by a\xEF\xBF\xBD"
          "b");
  }

  TEST_CASE("beyond the seed: the owner token proves a reboot or a reused pid") {
    const std::string body =
        R"({"purpose":"deploy","host":"build-7","machine":"m-aaa","pid":300,"startedAt":"T",)"
        R"("leaseUntil":"2024-05-01T12:15:00.000Z","owner":"11111111-2222-3333-4444-555555555555.300.lv9w0lds"})";
    const std::string who = "deploy (on build-7, pid 300, started T)";
    auto with = [](HolderState state) {
      Here h = test_here();
      h.owner_state = [state](std::string_view) { return state; };
      return h;
    };
    check_verdict(judge_process(body, with(HolderState::other_boot)), K::break_lock, LockReason::holder_rebooted, false,
                  who + " has ended (this machine has restarted since it took the lock)");
    check_verdict(judge_process(body, with(HolderState::recycled)), K::break_lock, LockReason::pid_reused, false,
                  who + " has ended (its pid now belongs to another process)");
    check_verdict(judge_process(body, with(HolderState::dead)), K::break_lock, LockReason::process_gone, false,
                  who + " has ended (its process is gone on this machine)");
    CHECK(judge_process(body, with(HolderState::alive)).reason == LockReason::lease_runs);
    CHECK(judge_process(body, with(HolderState::unknown)).reason == LockReason::lease_runs);
    // Only on this very machine, and only when the token names the body's pid.
    std::string other = body;
    other.replace(other.find("m-aaa"), 5, "m-bbb");
    CHECK(judge_process(other, with(HolderState::other_boot)).reason == LockReason::lease_runs);
    std::string mismatch = body;
    mismatch.replace(mismatch.find(".300."), 5, ".301.");
    CHECK(judge_process(mismatch, with(HolderState::other_boot)).reason == LockReason::lease_runs);
    std::string malformed = body;
    malformed.replace(malformed.find("11111111"), 8, "zz");
    CHECK(judge_process(malformed, with(HolderState::other_boot)).reason == LockReason::lease_runs);
    Here no_check = test_here();
    no_check.owner_state = nullptr;
    CHECK(judge_process(body, no_check).reason == LockReason::lease_runs);
  }

  // --- the verdict on an execution holder -------------------------------------------------

  TEST_CASE("execution holder: every branch and why") {
    const std::string lease = R"(,"leaseUntil":"2024-05-01T12:00:00.000Z")";
    SUBCASE("finished: break") {
      check_verdict(judge_lock(execution_body(lease), answer(ExecutionState::finished("cancelled")), now, test_here()),
                    K::break_lock, LockReason::execution_finished, false,
                    execution_who + " has cancelled, but its lock was left behind");
    }
    SUBCASE("running: held, even long past its lease") {
      check_verdict(judge_lock(execution_body(lease), answer(ExecutionState::running()),
                               Instant::from_unix_ms(now_ms + 86400000), test_here()),
                    K::held, LockReason::execution_running, false, execution_who + " is still running");
    }
    SUBCASE("not found without a readable lease: held for a person") {
      for (std::string_view field : {"", R"(,"leaseUntil":"later")", R"(,"leaseUntil":"")"}) {
        check_verdict(judge_lock(execution_body(field), answer(ExecutionState::not_found()), now, test_here()), K::held,
                      LockReason::execution_not_found_no_lease, true,
                      execution_who + " is unknown to Cloud Run and its lock carries no readable lease");
      }
    }
    SUBCASE("not found: held until the lease has passed, then break") {
      check_verdict(judge_lock(execution_body(lease), answer(ExecutionState::not_found()), now, test_here()), K::held,
                    LockReason::execution_not_found_lease_runs, false,
                    execution_who + " is unknown to Cloud Run, but its lease runs until 2024-05-01T12:00:00.000Z");
      check_verdict(judge_lock(execution_body(lease), answer(ExecutionState::not_found()),
                               Instant::from_unix_ms(now_ms + 1), test_here()),
                    K::break_lock, LockReason::execution_not_found_lease_ended, false,
                    execution_who + " is unknown to Cloud Run and its lease ended at 2024-05-01T12:00:00.000Z");
    }
    SUBCASE("Cloud Run could not be asked: unknown") {
      check_verdict(
          judge_lock(execution_body(lease), answer(ExecutionState::unknown("PERMISSION_DENIED")), now, test_here()),
          K::unknown, LockReason::execution_unknown, false,
          "could not check whether " + execution_who + " is still running: PERMISSION_DENIED");
      check_verdict(
          judge_lock(execution_body(lease), Describer(), now, test_here()), K::unknown, LockReason::execution_unknown,
          false, "could not check whether " + execution_who + " is still running: no way to ask Cloud Run was given");
    }
    SUBCASE("an execution holder's pid is never checked") {
      Here h = test_here();
      h.host = "localhost";
      h.machine = MachineField::absent();
      h.alive = [](double) {
        FAIL("alive was asked about an execution holder");
        return false;
      };
      CHECK(judge_lock(execution_body(lease), answer(ExecutionState::running()), now, h).reason ==
            LockReason::execution_running);
    }
    SUBCASE("a describer's words are UTF-8 in the why") {
      auto v = judge_lock(execution_body(lease), answer(ExecutionState::unknown("bad\xFF")), now, test_here());
      CHECK(v.why == "could not check whether " + execution_who + " is still running: bad\xEF\xBF\xBD");
    }
  }

  TEST_CASE("verdict text and JSON forms") {
    LockVerdict v{K::held, LockReason::lease_runs, false, "held by \"x\"\n\\"};
    CHECK(format_verdict_text(v) == "held lease_runs held by \"x\"\n\\");
    CHECK(format_verdict_json(v) ==
          R"({"kind":"held","reason":"lease_runs","manualRemoval":false,"why":"held by \"x\"\n\\"})");
    LockVerdict b{K::break_lock, LockReason::process_gone, false, "w"};
    CHECK(format_verdict_json(b) == R"({"kind":"break","reason":"process_gone","manualRemoval":false,"why":"w"})");
    LockVerdict m{K::held, LockReason::not_readable, true, std::string("a\0b", 3)};
    CHECK(format_verdict_json(m) == R"({"kind":"held","reason":"not_readable","manualRemoval":true,"why":"a\u0000b"})");
    LockVerdict u{K::unknown, LockReason::execution_unknown, false, ""};
    CHECK(format_verdict_text(u) == "unknown execution_unknown ");
    LockVerdict manual{K::held, LockReason::no_lease, true, "w"};
    CHECK(format_verdict_text(manual) == "held no_lease w (only a person can remove it)");
    for (int r = 1; r <= 14; ++r) CHECK(std::string(lock_reason_code(static_cast<LockReason>(r))).size() > 0);
    CHECK(std::string(lock_reason_code(static_cast<LockReason>(15))).empty());
    CHECK(std::string(lock_reason_code(LockReason::execution_not_found_lease_ended)) ==
          "execution_not_found_lease_ended");
    CHECK(std::string(lock_reason_code(LockReason::holder_rebooted)) == "holder_rebooted");
  }

  // --- execution state ---------------------------------------------------------------------

  TEST_CASE("parse_execution_state reads gcloud's answer as the seed does") {
    auto ok = [](std::string out) { return parse_execution_state(GcloudResult{true, std::move(out), "", 0}); };
    auto failed = [](std::string err, int code) {
      return parse_execution_state(GcloudResult{false, "", std::move(err), code});
    };
    const auto no_json = ExecutionState::unknown("gcloud returned no JSON for the execution");
    const auto no_status = ExecutionState::unknown("gcloud returned an execution without a readable status");

    CHECK(ok(R"({"status":{"conditions":[{"type":"Completed","status":"True"}]}})") ==
          ExecutionState::finished("succeeded"));
    CHECK(ok(R"({"status":{"conditions":[{"type":"Completed","status":"False","reason":"NonZeroExitCode"}]}})") ==
          ExecutionState::finished("nonzeroexitcode"));
    CHECK(ok(R"({"status":{"conditions":[{"type":"Completed","status":"False"}]}})") ==
          ExecutionState::finished("failed"));
    CHECK(ok(R"({"status":{"conditions":[{"type":"Completed","status":"False","reason":""}]}})") ==
          ExecutionState::finished(""));
    CHECK(ok(R"({"status":{"completionTime":"2024"}})") == ExecutionState::finished("completed"));
    CHECK(ok(R"({"status":{"completionTime":""}})") == ExecutionState::running());
    CHECK(ok(R"({"status":{"conditions":[{"type":"Completed","status":"Unknown"}],"completionTime":"t"}})") ==
          ExecutionState::finished("completed"));
    // Only the first Completed condition counts.
    CHECK(
        ok(R"({"status":{"conditions":[{"type":"Completed","status":"Unknown"},{"type":"Completed","status":"True"}]}})") ==
        ExecutionState::running());
    CHECK(ok(R"({"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Completed","status":"True"}]}})") ==
          ExecutionState::finished("succeeded"));
    CHECK(ok(R"({"status":{}})") == ExecutionState::running());
    CHECK(ok(R"({})") == ExecutionState::running());
    CHECK(ok(R"({"kind":"Execution","metadata":{"x":[1,2]}})") == ExecutionState::running());
    // The schema: status an object, its fields of the right types, every condition too.
    CHECK(ok(R"({"status":null})") == no_status);
    CHECK(ok(R"({"status":[]})") == no_status);
    CHECK(ok(R"({"status":{"completionTime":5}})") == no_status);
    CHECK(ok(R"({"status":{"conditions":{}}})") == no_status);
    CHECK(ok(R"({"status":{"conditions":[{"type":"Completed","status":"True"},{"type":1,"status":"x"}]}})") ==
          no_status);
    CHECK(ok(R"({"status":{"conditions":[{"type":"Completed","status":"True","reason":null}]}})") == no_status);
    CHECK(ok(R"({"status":{"conditions":[{"type":"Completed"}]}})") == no_status);
    CHECK(ok(R"({"status":{"conditions":["Completed"]}})") == no_status);
    CHECK(ok("[]") == no_status);
    CHECK(ok("null") == no_status);
    CHECK(ok("\"x\"") == no_status);
    CHECK(ok(R"({"status":5,"status":{"completionTime":"t"}})") == ExecutionState::finished("completed"));
    CHECK(ok("") == no_json);
    CHECK(ok("Listed 0 items.") == no_json);
    CHECK(ok(R"({"status":{}} trailing)") == no_json);
    CHECK(ok("[1,]") == no_json);
    // A failed call: the not-found pattern, case-insensitive, on stderr only.
    CHECK(failed("ERROR: NOT_FOUND: x", 1) == ExecutionState::not_found());
    CHECK(failed("execution Not Found", 1) == ExecutionState::not_found());
    CHECK(failed("it could not be found", 1) == ExecutionState::not_found());
    CHECK(failed("job DOES NOT EXIST", 1) == ExecutionState::not_found());
    CHECK(failed("  PERMISSION_DENIED: no\n", 1) == ExecutionState::unknown("PERMISSION_DENIED: no"));
    CHECK(failed("", 7) == ExecutionState::unknown("gcloud exited 7"));
    CHECK(failed(" \n\t", 7) == ExecutionState::unknown("gcloud exited 7"));
    CHECK(parse_execution_state(GcloudResult{false, R"({"status":{}})", "", 1}) ==
          ExecutionState::unknown("gcloud exited 1"));
  }

  TEST_CASE("a failed execution's reason is lowered as JavaScript's toLowerCase lowers it") {
    // Expected bytes from node: Buffer.from(reason.toLowerCase()).toString("hex").
    auto how = [](std::string reason) {
      std::string out =
          R"({"status":{"conditions":[{"type":"Completed","status":"False","reason":")" + reason + R"("}]}})";
      return parse_execution_state(GcloudResult{true, out, "", 0}).detail;
    };
    CHECK(how(R"(NonZeroExitCode)") == "nonzeroexitcode");
    CHECK(how(R"(\u00c9CHEC)") ==
          "\xC3\xA9"
          "chec");
    CHECK(how(R"(\u0414\u0410)") == "\xD0\xB4\xD0\xB0");
    CHECK(how(R"(\u0130STANBUL)") == "i\xCC\x87stanbul");  // SpecialCasing
    CHECK(how(R"(\u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3)") ==
          "\xCF\x83\xCE\xAF\xCF\x83\xCF\x85\xCF\x86\xCE\xBF\xCF\x82");  // final sigma
    CHECK(how(R"(\u0391\u03a3.\u03a3)") == "\xCE\xB1\xCF\x83.\xCF\x82");
    CHECK(how(R"(\u03a3)") == "\xCF\x83");
    CHECK(how(R"(\u0391\u03a3\u0301)") == "\xCE\xB1\xCF\x82\xCC\x81");
    CHECK(how(R"(\ud800X)") == "\xEF\xBF\xBDx");  // a lone surrogate is kept, then written as U+FFFD
  }

  TEST_CASE("describe_execution_args") {
    CHECK(describe_execution_args(ExecutionRef{"proj", "europe-west1", "job-x"}) ==
          std::vector<std::string>{"run", "jobs", "executions", "describe", "job-x", "--region=europe-west1",
                                   "--project=proj", "--format=json"});
  }

  TEST_CASE("the gcloud describer, against a fake gcloud on PATH") {
    const std::string fixtures = std::string(LEASEJUDGE_SOURCE_DIR) + "/tests/fixtures/lock";
    const char* old_path = std::getenv("PATH");
    const std::string saved = old_path != nullptr ? old_path : "/usr/bin:/bin";
    ::setenv("PATH", (fixtures + ":" + saved).c_str(), 1);
    char args_file[] = "/tmp/lj-gcloud-args-XXXXXX";
    int fd = ::mkstemp(args_file);
    REQUIRE(fd >= 0);
    ::close(fd);
    ::setenv("LJ_FAKE_GCLOUD_ARGS", args_file, 1);
    const ExecutionRef ref{"caelo-prod", "europe-west1", "job-x"};
    GcloudOptions opts;
    opts.timeout = std::chrono::milliseconds(20000);
    auto describe = [&](const char* mode) {
      ::setenv("LJ_FAKE_GCLOUD", mode, 1);
      return describe_execution(ref, opts);
    };

    CHECK(describe("succeeded") == ExecutionState::finished("succeeded"));
    {
      std::ifstream in(args_file);
      std::stringstream ss;
      ss << in.rdbuf();
      CHECK(ss.str() ==
            "run\njobs\nexecutions\ndescribe\njob-x\n--region=europe-west1\n--project=caelo-prod\n--format=json\n");
    }
    CHECK(describe("failed") == ExecutionState::finished("nonzeroexitcode"));
    CHECK(describe("cancelled") == ExecutionState::finished("cancelled"));
    CHECK(describe("completion-only") == ExecutionState::finished("completed"));
    CHECK(describe("running") == ExecutionState::running());
    CHECK(describe("not-found") == ExecutionState::not_found());
    CHECK(describe("denied") ==
          ExecutionState::unknown("ERROR: (gcloud.run.jobs.executions.describe) PERMISSION_DENIED: Permission "
                                  "'run.executions.get' denied on resource"));
    CHECK(describe("silent-failure") == ExecutionState::unknown("gcloud exited 3"));
    CHECK(describe("garbage") == ExecutionState::unknown("gcloud returned no JSON for the execution"));
    SUBCASE("a hang past the timeout is killed and unknown") {
      opts.timeout = std::chrono::milliseconds(300);
      auto state = describe("hang");
      CHECK(state.kind == ExecutionState::Kind::unknown);
      CHECK(state.detail == "gcloud did not finish within 300 ms and was killed");
    }
    SUBCASE("a gcloud that is not on PATH is unknown, never not-found") {
      opts.program = "gcloud-that-is-not-installed";
      auto state = describe("succeeded");
      CHECK(state.kind == ExecutionState::Kind::unknown);
      CHECK(state.detail == "gcloud-that-is-not-installed is not on PATH");
    }
    SUBCASE("through the judge, with the default options") {
      ::setenv("LJ_FAKE_GCLOUD", "succeeded", 1);
      check_verdict(judge_lock(execution_body(""), gcloud_describer(), now, test_here()), K::break_lock,
                    LockReason::execution_finished, false,
                    execution_who + " has succeeded, but its lock was left behind");
    }
    ::unlink(args_file);
    ::unsetenv("LJ_FAKE_GCLOUD");
    ::unsetenv("LJ_FAKE_GCLOUD_ARGS");
    ::setenv("PATH", saved.c_str(), 1);
  }

  TEST_CASE("this_machine and this_author describe this process") {
    Here here = this_machine();
    CHECK(here.host == host_name());
    CHECK(here.machine == MachineField::from(machine_id()));
    CHECK(here.alive(static_cast<double>(::getpid())));
    // Numbers that are no pid prove nothing: alive.
    for (double pid : {0.0, -1.0, 1.5, 1e21, 4294967296.0}) CHECK(here.alive(pid));
    BodyAuthor me = this_author();
    CHECK(me.pid == static_cast<double>(::getpid()));
    CHECK(me.host == host_name());
    CHECK(me.owner == self_owner_token());
    // Our own lock, judged here: held (we live); never broken.
    auto body = lock_body("self", now, ProcessHolder{});
    REQUIRE(body.ok());
    NoDescriber none;
    CHECK(judge_lock(*body, none.get(), now, here).reason == LockReason::lease_runs);
  }

  TEST_CASE("judging reads this machine's facts at most once a second, and never for a given here") {
    // The bodies name no execution, so no describer runs. After a pause longer than the
    // rule's second, judges that bring their own here read nothing; the first judge on
    // this machine's evidence reads the facts once, and the next thousand not again.
    const std::string body =
        R"({"purpose":"p","host":"build-7","machine":"m-aaa","pid":)" + std::to_string(::getpid()) + "}";
    lj_lock_here_t here = LJ_LOCK_HERE_INIT;
    here.host = "build-7";
    here.host_len = 7;
    here.machine_kind = LJ_MACHINE_ID;
    here.machine = "m-aaa";
    here.machine_len = 5;
    lj_lock_options_t given = LJ_LOCK_OPTIONS_INIT;
    given.here = &here;
    MachineEvidenceCache& cache = this_machine_evidence();
    (void)cache.get();
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    const std::uint64_t before = cache.reads();
    for (int i = 0; i < 1000; ++i) {
      lj_lock_verdict_t v;
      REQUIRE(lj_lock_judge(&v, body.data(), body.size(), now_ms, &given, nullptr) == LJ_OK);
      CHECK(v.reason == LJ_LOCK_NO_LEASE);  // our own pid lives: held
      lj_lock_verdict_clear(&v);
    }
    CHECK(cache.reads() == before);
    for (int i = 0; i < 1000; ++i) {
      lj_lock_verdict_t v;
      REQUIRE(lj_lock_judge(&v, body.data(), body.size(), now_ms, nullptr, nullptr) == LJ_OK);
      lj_lock_verdict_clear(&v);
    }
    // Once, unless this loop itself outlasted a second on a slow machine.
    CHECK(cache.reads() >= before + 1);
    CHECK(cache.reads() <= before + 2);
    // this_machine_kept() is this machine as this_machine() says it, the same object
    // while the evidence stays.
    auto kept = this_machine_kept();
    CHECK(kept->host == host_name());
    CHECK(kept->machine == MachineField::from(machine_id()));
    CHECK(kept == this_machine_kept());
  }

  // --- the lock's life on a store -------------------------------------------------------------

  namespace {

  LockRequest request_for(std::string purpose, std::string id) {
    LockRequest r;
    r.purpose = std::move(purpose);
    r.id = std::move(id);
    r.holder = ProcessHolder{600000};
    r.here = test_here();
    r.author = BodyAuthor{"build-7", std::string("m-aaa"), 300, std::nullopt};
    r.describe = answer(ExecutionState::running());
    return r;
  }

  // A store whose next remove or create loses a race against another writer.
  class RacingStore final : public Store {
   public:
    explicit RacingStore(MemoryStore& inner) : inner_(inner) {}
    Result<std::vector<std::string>> keys() override { return inner_.keys(); }
    Result<std::optional<StoreEntry>> get(std::string_view key) override { return inner_.get(key); }
    Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
      return inner_.update(key, value, revision);
    }
    Result<Revision> create(std::string_view key, std::string_view value) override {
      if (armed_) inner_.put(key, "someone else");
      return inner_.create(key, value);
    }
    Status remove(std::string_view key, Revision revision) override {
      if (race_remove) inner_.put(key, "renewed meanwhile");
      Status removed = inner_.remove(key, revision);
      if (removed && race_create) armed_ = true;
      return removed;
    }
    bool race_remove = false;
    bool race_create = false;

   private:
    MemoryStore& inner_;
    bool armed_ = false;
  };

  void life_on(Store& store) {
    const std::string key = "locks/state";
    SUBCASE("acquire a free lock, renew it, release it") {
      auto got = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::acquired);
      CHECK(!got->verdict);
      CHECK(got->broke_at == 0);
      HeldLock lock = got->lock;
      CHECK(lock.id == "id-1");
      CHECK(lock.lease_ms == 600000);
      CHECK(lock.body == R"({"purpose":"deploy","id":"id-1","host":"build-7","machine":"m-aaa","pid":300,)"
                         R"("startedAt":"2024-05-01T12:00:00.000Z","leaseUntil":"2024-05-01T12:15:00.000Z"})");
      auto stored = store.get(key);
      REQUIRE(stored.ok());
      REQUIRE(stored->has_value());
      CHECK((*stored)->value == lock.body);
      CHECK((*stored)->revision == lock.revision);

      const Revision first = lock.revision;
      REQUIRE(renew_lock(store, lock, Instant::from_unix_ms(now_ms + 200000)).ok());
      CHECK(lock.revision > first);
      CHECK(lock.body.find(R"("leaseUntil":"2024-05-01T12:18:20.000Z")") != std::string::npos);
      CHECK((*store.get(key))->value == lock.body);

      CHECK(release_lock(store, lock).ok());
      CHECK(!store.get(key)->has_value());
      CHECK(release_lock(store, lock).code() == Errc::not_found);
    }
    SUBCASE("a live holder keeps the lock") {
      auto first = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(first.ok());
      auto second = acquire_lock(store, key, request_for("other", "id-2"), Instant::from_unix_ms(now_ms + 60000));
      REQUIRE(second.ok());
      CHECK(second->outcome == Acquisition::Outcome::held);
      REQUIRE(second->verdict);
      CHECK(second->verdict->reason == LockReason::lease_runs);
      CHECK(second->broke_at == 0);
      CHECK((*store.get(key))->value == first->lock.body);
    }
    SUBCASE("a dead holder's lock is broken at the revision judged, with a fencing token") {
      auto first = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(first.ok());
      LockRequest later = request_for("other", "id-2");
      auto second = acquire_lock(store, key, later, Instant::from_unix_ms(now_ms + 900001));
      REQUIRE(second.ok());
      CHECK(second->outcome == Acquisition::Outcome::acquired);
      REQUIRE(second->verdict);
      check_verdict(*second->verdict, K::break_lock, LockReason::lease_ended, false,
                    "deploy (on build-7, pid 300, started 2024-05-01T12:00:00.000Z) stopped renewing its lock; its "
                    "lease ended at 2024-05-01T12:15:00.000Z");
      CHECK(second->broke_at == first->lock.revision);
      CHECK(second->lock.revision > second->broke_at);
      CHECK(second->lock.id == "id-2");
      // The old holder finds out at its next renewal, and cannot release ours.
      HeldLock old = first->lock;
      CHECK(renew_lock(store, old, Instant::from_unix_ms(now_ms + 900002)).code() == Errc::changed);
      CHECK(release_lock(store, old).code() == Errc::changed);
      CHECK((*store.get(key))->value == second->lock.body);
    }
    SUBCASE("a holder that cannot be checked: unknown, nothing broken") {
      auto first = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(first.ok());
      (void)first;
      auto exec = lock_body("upgrade", now, ExecutionHolder{{"p", "r", "job"}, 1000}, "id-x",
                            BodyAuthor{"localhost", std::nullopt, 1, std::nullopt});
      REQUIRE(exec.ok());
      auto entry = store.get(key);
      REQUIRE(store.update(key, *exec, (*entry)->revision).ok());
      LockRequest r = request_for("other", "id-2");
      r.describe = answer(ExecutionState::unknown("no access"));
      auto got = acquire_lock(store, key, r, Instant::from_unix_ms(now_ms + 86400000));
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::unknown);
      CHECK(got->verdict->reason == LockReason::execution_unknown);
      CHECK((*store.get(key))->value == *exec);
    }
    SUBCASE("renewal that finds the lock rewritten says it is lost") {
      auto got = acquire_lock(store, key, request_for("deploy", "id-1"), now);
      REQUIRE(got.ok());
      HeldLock lock = got->lock;
      REQUIRE(store.update(key, "someone's body", lock.revision).ok());
      auto lost = renew_lock(store, lock, now);
      CHECK(lost.code() == Errc::changed);
      CHECK(release_lock(store, lock).code() == Errc::changed);
    }
  }

  }  // namespace

  TEST_CASE("the lock's life on the memory store") {
    MemoryStore store;
    life_on(store);
  }

  TEST_CASE("the lock's life on the file store") {
    char dir[] = "/tmp/lj-lock-life-XXXXXX";
    REQUIRE(::mkdtemp(dir) != nullptr);
    {
      auto store = FileStore::open(dir);
      REQUIRE(store.ok());
      life_on(**store);
    }
    std::string cmd = std::string("rm -rf ") + dir;
    CHECK(std::system(cmd.c_str()) == 0);
  }

  TEST_CASE("a lost race is reported, never retried") {
    MemoryStore inner;
    RacingStore store(inner);
    const std::string key = "k";
    auto first = acquire_lock(store, key, request_for("deploy", "id-1"), now);
    REQUIRE(first.ok());
    const Instant later = Instant::from_unix_ms(now_ms + 900001);
    SUBCASE("the holder renewed between our judgement and our delete") {
      store.race_remove = true;
      auto got = acquire_lock(store, key, request_for("other", "id-2"), later);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::lost_race);
      CHECK(got->verdict->reason == LockReason::lease_ended);
      CHECK(got->broke_at == 0);
      CHECK((*inner.get(key))->value == "renewed meanwhile");
    }
    SUBCASE("another breaker created first after our delete") {
      store.race_create = true;
      auto got = acquire_lock(store, key, request_for("other", "id-2"), later);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::lost_race);
      CHECK(got->broke_at == first->lock.revision);
      CHECK((*inner.get(key))->value == "someone else");
    }
    SUBCASE("the holder released between our create and our read") {
      class Vanishing final : public Store {
       public:
        Result<std::vector<std::string>> keys() override { return std::vector<std::string>{}; }
        Result<std::optional<StoreEntry>> get(std::string_view) override { return std::optional<StoreEntry>(); }
        Result<Revision> update(std::string_view, std::string_view, Revision) override {
          return Error{Errc::changed, "changed"};
        }
        Result<Revision> create(std::string_view, std::string_view) override { return Error{Errc::exists, "exists"}; }
        Status remove(std::string_view, Revision) override { return Error{Errc::changed, "changed"}; }
      } vanishing;
      auto got = acquire_lock(vanishing, key, request_for("other", "id-2"), later);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::lost_race);
      CHECK(!got->verdict);
    }
    SUBCASE("a failing store is an error") {
      class Down final : public Store {
       public:
        Result<std::vector<std::string>> keys() override { return Error{Errc::store, "down"}; }
        Result<std::optional<StoreEntry>> get(std::string_view) override { return Error{Errc::store, "down"}; }
        Result<Revision> update(std::string_view, std::string_view, Revision) override {
          return Error{Errc::store, "down"};
        }
        Result<Revision> create(std::string_view, std::string_view) override { return Error{Errc::store, "down"}; }
        Status remove(std::string_view, Revision) override { return Error{Errc::store, "down"}; }
      } down;
      CHECK(acquire_lock(down, key, request_for("x", "i"), now).code() == Errc::store);
      CHECK(acquire_lock(down, "", request_for("x", "i"), now).code() == Errc::invalid_argument);
    }
  }

  TEST_CASE("the heartbeat renews every third of the lease and reports a lost lock") {
    MemoryStore store;
    LockRequest r = request_for("deploy", "id-1");
    r.holder = ProcessHolder{60};  // renewed every 20 ms
    auto got = acquire_lock(store, "k", r, now);
    REQUIRE(got.ok());
    CHECK(LockRenewal::interval(60) == std::chrono::milliseconds(20));
    CHECK(LockRenewal::interval(600000) == std::chrono::milliseconds(200000));
    CHECK(LockRenewal::interval(1) == std::chrono::milliseconds(1));
    std::atomic<int> lost_calls{0};
    std::string lost_message;
    std::mutex mu;
    LockRenewal renewal(store, got->lock, fixed_clock(now), [&](const Error& e) {
      std::lock_guard<std::mutex> g(mu);
      lost_message = e.message;
      lost_calls.fetch_add(1);
    });
    auto wait_for = [](auto&& condition) {
      for (int i = 0; i < 2000 && !condition(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return condition();
    };
    REQUIRE(wait_for([&] { return renewal.renewals() >= 2; }));
    HeldLock current = renewal.lock();
    CHECK(current.revision > got->lock.revision);
    CHECK(!renewal.lost());
    // Someone rewrites the lock: the next renewal finds out and says so, once.
    store.put("k", "taken over");
    REQUIRE(wait_for([&] { return renewal.lost(); }));
    REQUIRE(wait_for([&] { return lost_calls.load() == 1; }));
    {
      std::lock_guard<std::mutex> g(mu);
      CHECK(lost_message.find("is no longer ours") != std::string::npos);
    }
    renewal.stop();
    renewal.stop();
    CHECK(lost_calls.load() == 1);

    // A lock without a lease: nothing to renew, nothing lost.
    LockRequest plain = request_for("local", "id-3");
    plain.holder = std::monostate{};
    auto local = acquire_lock(store, "plain", plain, now);
    REQUIRE(local.ok());
    CHECK(local->lock.lease_ms == 0);
    LockRenewal idle(store, local->lock, fixed_clock(now), [&](const Error&) { lost_calls.fetch_add(1); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    idle.stop();
    CHECK(idle.renewals() == 0);
    CHECK(!idle.lost());
    CHECK(idle.lock().revision == local->lock.revision);
    CHECK(lost_calls.load() == 1);
  }

  // A store whose updates fail while `failing` is above 0 (each failure counts it down),
  // or for good with failing < 0.
  class FlakyStore final : public Store {
   public:
    explicit FlakyStore(MemoryStore& inner) : inner_(inner) {}
    std::atomic<int> failing{0};
    std::atomic<int> failures{0};
    Result<std::vector<std::string>> keys() override { return inner_.keys(); }
    Result<std::optional<StoreEntry>> get(std::string_view key) override { return inner_.get(key); }
    std::atomic<int> answers_lost{0};  // the next this many updates land, then say timeout
    Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override {
      if (answers_lost.load() > 0) {
        answers_lost.fetch_sub(1);
        auto landed = inner_.update(key, value, revision);
        if (!landed) return landed;
        return Error{Errc::timeout, "no answer from the server"};
      }
      int f = failing.load();
      if (f != 0) {
        if (f > 0) failing.fetch_sub(1);
        failures.fetch_add(1);
        return Error{Errc::store, "the server is down"};
      }
      return inner_.update(key, value, revision);
    }
    Result<Revision> create(std::string_view key, std::string_view value) override { return inner_.create(key, value); }
    Status remove(std::string_view key, Revision revision) override { return inner_.remove(key, revision); }

   private:
    MemoryStore& inner_;
  };

  template <typename F>
  bool wait_until_true(F&& condition, int ms = 10000) {
    for (int i = 0; i < ms / 5 && !condition(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return condition();
  }

  std::int64_t elapsed_ms(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count();
  }

  TEST_CASE("the heartbeat tries a failed renewal again within the lease") {
    MemoryStore inner;
    FlakyStore store(inner);
    LockRequest r = request_for("deploy", "id-1");
    r.holder = ProcessHolder{300};  // renewed every 100 ms, tried again every 25 ms
    auto got = acquire_lock(store, "k", r, now);
    REQUIRE(got.ok());
    CHECK(LockRenewal::retry_interval(300) == std::chrono::milliseconds(25));
    CHECK(LockRenewal::retry_interval(600000) == std::chrono::milliseconds(2000));
    CHECK(LockRenewal::retry_interval(3) == std::chrono::milliseconds(1));
    std::atomic<int> lost_calls{0};
    Errc lost_code = Errc::ok;
    std::string lost_message;
    std::mutex mu;
    auto on_lost = [&](const Error& e) {
      std::lock_guard<std::mutex> g(mu);
      lost_code = e.code;
      lost_message = e.message;
      lost_calls.fetch_add(1);
    };

    SUBCASE("one failure: tried again, no loss") {
      store.failing = 1;
      LockRenewal renewal(store, got->lock, fixed_clock(now), on_lost);
      REQUIRE(wait_until_true([&] { return renewal.renewals() >= 3; }));
      CHECK(store.failures.load() == 1);
      CHECK(renewal.retries() == 1);
      CHECK(!renewal.lost());
      CHECK(!renewal.expired());
      CHECK(lost_calls.load() == 0);
      renewal.stop();
      CHECK(renewal.lock().revision == inner.get("k")->value().revision);
    }
    SUBCASE("a renewal that landed while its answer was lost: taken at its revision, no loss") {
      store.answers_lost = 1;
      LockRenewal renewal(store, got->lock, fixed_clock(now), on_lost);
      REQUIRE(wait_until_true([&] { return renewal.renewals() >= 2; }));
      CHECK(store.answers_lost.load() == 0);
      CHECK(renewal.retries() == 2);  // the lost answer, then the update that found the key moved
      CHECK(!renewal.lost());
      CHECK(lost_calls.load() == 0);
      renewal.stop();
      CHECK(renewal.lock().revision == inner.get("k")->value().revision);
      CHECK(parse_lock_body(inner.get("k")->value().value)->id == "id-1");
    }
    SUBCASE("failing for good: lost when the lease ends, not before") {
      const auto start = std::chrono::steady_clock::now();
      store.failing = -1;
      LockRenewal renewal(store, got->lock, fixed_clock(now), on_lost);
      REQUIRE(wait_until_true([&] { return lost_calls.load() == 1; }));
      const auto took = elapsed_ms(start);
      CHECK(took >= 300);
      CHECK(took < 3000);
      CHECK(renewal.lost());
      CHECK(renewal.expired());
      CHECK(renewal.renewals() == 0);
      // Tried at 100 ms, then every 25 ms until the lease's end at 300 ms: up to 8 tries (fewer on a
      // busy machine, but more than one).
      CHECK(store.failures.load() >= 2);
      CHECK(store.failures.load() <= 8);
      std::lock_guard<std::mutex> g(mu);
      CHECK(lost_code == Errc::timeout);
      CHECK(lost_message == "the lock k was not renewed within its lease of 300 ms: the server is down");
    }
    SUBCASE("a failure, then the lock changed: lost at once") {
      store.failing = 1;
      LockRenewal renewal(store, got->lock, fixed_clock(now), on_lost);
      REQUIRE(wait_until_true([&] { return store.failures.load() == 1; }));
      inner.put("k", "taken over");
      REQUIRE(wait_until_true([&] { return lost_calls.load() == 1; }));
      std::lock_guard<std::mutex> g(mu);
      CHECK(lost_code == Errc::changed);
    }
  }

  TEST_CASE("waiting for a lock: a deadline, a cancel, a holder that goes") {
    MemoryStore store;
    LockRequest mine = request_for("deploy", "");
    auto theirs = acquire_lock(store, "k", request_for("theirs", "id-theirs"), now);
    REQUIRE(theirs.ok());
    REQUIRE(theirs->outcome == Acquisition::Outcome::acquired);
    LockWait wait;
    wait.clock = fixed_clock(now);
    wait.poll_min = std::chrono::milliseconds(5);
    wait.poll_max = std::chrono::milliseconds(40);

    SUBCASE("a live holder: held once the wait has run out") {
      wait.wait = std::chrono::milliseconds(200);
      const auto start = std::chrono::steady_clock::now();
      auto got = acquire_lock_wait(store, "k", mine, wait);
      const auto took = elapsed_ms(start);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::held);
      CHECK(got->verdict->reason == LockReason::lease_runs);
      CHECK(took >= 200);
      CHECK(took < 2000);
      CHECK(parse_lock_body(store.get("k")->value().value)->id == "id-theirs");
    }
    SUBCASE("no wait: one try") {
      const auto start = std::chrono::steady_clock::now();
      auto got = acquire_lock_wait(store, "k", mine, wait);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::held);
      CHECK(elapsed_ms(start) < 1000);
    }
    SUBCASE("the holder releases during the wait: ours") {
      wait.wait = std::chrono::milliseconds(10000);
      std::thread releaser([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        CHECK(release_lock(store, theirs->lock).ok());
      });
      auto got = acquire_lock_wait(store, "k", mine, wait);
      releaser.join();
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::acquired);
      CHECK(got->lock.revision > theirs->lock.revision);
      CHECK(parse_lock_body(store.get("k")->value().value)->id == got->lock.id);
    }
    SUBCASE("a breakable holder: broken at the first try") {
      store.put("k", R"({"purpose":"gone","id":"x","host":"build-7","machine":"m-aaa","pid":200})");
      const Revision dead = store.get("k")->value().revision;
      auto got = acquire_lock_wait(store, "k", mine, wait);
      REQUIRE(got.ok());
      CHECK(got->outcome == Acquisition::Outcome::acquired);
      CHECK(got->broke_at == dead);
      CHECK(got->verdict->reason == LockReason::process_gone);
    }
    SUBCASE("cancelled: Errc::user within a poll, nothing written") {
      wait.wait = std::chrono::milliseconds(60000);
      std::atomic<bool> stop{false};
      wait.cancelled = [&] { return stop.load(); };
      std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        stop = true;
      });
      const auto start = std::chrono::steady_clock::now();
      auto got = acquire_lock_wait(store, "k", mine, wait);
      const auto took = elapsed_ms(start);
      canceller.join();
      CHECK(got.code() == Errc::user);
      CHECK(got.error().message == "the wait for the lock k was cancelled");
      CHECK(took >= 100);
      CHECK(took < 1000);
      CHECK(parse_lock_body(store.get("k")->value().value)->id == "id-theirs");
    }
    SUBCASE("bad waits") {
      wait.wait = std::chrono::milliseconds(-1);
      CHECK(acquire_lock_wait(store, "k", mine, wait).code() == Errc::invalid_argument);
      wait.wait = std::chrono::milliseconds(10);
      wait.poll_min = std::chrono::milliseconds(0);
      CHECK(acquire_lock_wait(store, "k", mine, wait).code() == Errc::invalid_argument);
      wait.poll_min = std::chrono::milliseconds(50);
      wait.poll_max = std::chrono::milliseconds(10);
      CHECK(acquire_lock_wait(store, "k", mine, wait).code() == Errc::invalid_argument);
      wait.poll_max = std::chrono::milliseconds(50);
      CHECK(acquire_lock_wait(store, "", mine, wait).code() == Errc::invalid_argument);
    }
  }

  // --- fidelity with the seed itself ---------------------------------------------------------

  namespace {

  std::string unhex(std::string_view hex) {
    std::string out;
    out.reserve(hex.size() / 2);
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
      out.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
    }
    return out;
  }

  std::string hex_of(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
      out.push_back(digits[c >> 4]);
      out.push_back(digits[c & 0xF]);
    }
    return out;
  }

  std::string text_at(simdjson::dom::element e, const char* key) {
    std::string_view v;
    if (e[key].get(v) != simdjson::SUCCESS) return {};
    return std::string(v);
  }

  }  // namespace

  // Run by tests/lock_seed_test.sh, which has the seed's own code judge generated cases
  // and writes them, with its answers, to the file LJ_LOCK_SEED_CASES names.
  TEST_CASE("seed driver: leasejudge answers the seed's cases as the seed did" * doctest::skip()) {
    const char* path = std::getenv("LJ_LOCK_SEED_CASES");
    REQUIRE_MESSAGE(path != nullptr, "run through tests/lock_seed_test.sh");
    std::ifstream in(path);
    REQUIRE(in.good());
    simdjson::dom::parser parser;
    std::string line;
    std::size_t count = 0, mismatches = 0;
    std::map<std::string, std::size_t> by_type;
    auto mismatch = [&](std::size_t n, const std::string& what, const std::string& want, const std::string& got) {
      if (++mismatches <= 25) {
        std::fprintf(stderr, "case %zu (%s):\n  seed:       %s\n  leasejudge: %s\n", n, what.c_str(), want.c_str(),
                     got.c_str());
      }
    };
    while (std::getline(in, line)) {
      ++count;
      simdjson::dom::element c;
      REQUIRE(parser.parse(line).get(c) == simdjson::SUCCESS);
      const std::string type = text_at(c, "t");
      ++by_type[type];
      simdjson::dom::element expect = c["expect"];
      if (type == "judge") {
        Here here;
        here.host = unhex(text_at(c, "host"));
        const std::string machine_kind = text_at(c, "machineKind");
        here.machine = machine_kind == "absent" ? MachineField::absent()
                       : machine_kind == "none" ? MachineField::none()
                                                : MachineField::of(text_at(c, "machine"));
        std::vector<double> dead;
        for (double d : c["dead"].get_array()) dead.push_back(d);
        here.alive = [dead](double pid) { return std::find(dead.begin(), dead.end(), pid) == dead.end(); };
        const std::string kind = text_at(c["describe"], "kind");
        const std::string detail = unhex(text_at(c["describe"], "detail"));
        ExecutionState state = kind == "finished"    ? ExecutionState::finished(detail)
                               : kind == "running"   ? ExecutionState::running()
                               : kind == "not-found" ? ExecutionState::not_found()
                                                     : ExecutionState::unknown(detail);
        bool called = false;
        Describer describe = [&](const ExecutionRef&) {
          called = true;
          return state;
        };
        std::int64_t now_ms_case = c["now"].get_int64();
        LockVerdict v = judge_lock(unhex(text_at(c, "text")), describe, Instant::from_unix_ms(now_ms_case), here);
        std::string want = text_at(expect, "kind") + " " + (bool(expect["manualRemoval"]) ? "manual " : "") +
                           (bool(expect["called"]) ? "asked " : "") + text_at(expect, "why");
        std::string got = std::string(lock_verdict_kind_name(v.kind)) + " " + (v.manual_removal ? "manual " : "") +
                          (called ? "asked " : "") + hex_of(v.why);
        if (want != got) mismatch(count, "judge " + text_at(c, "text"), want, got);
      } else if (type == "state") {
        GcloudResult result{bool(c["ok"]), unhex(text_at(c, "out")), unhex(text_at(c, "err")),
                            static_cast<int>(c["code"].get_int64())};
        ExecutionState s = parse_execution_state(result);
        std::string want = text_at(expect, "kind") + " " + text_at(expect, "detail");
        std::string got = std::string(execution_state_name(s.kind)) + " " + hex_of(s.detail);
        if (want != got) mismatch(count, "state " + text_at(c, "out") + " / " + text_at(c, "err"), want, got);
      } else if (type == "body") {
        simdjson::dom::element author = c["author"];
        BodyAuthor a;
        a.host = unhex(text_at(author, "host"));
        if (author["machine"].is_string()) a.machine = text_at(author, "machine");
        a.pid = author["pid"].get_double();
        simdjson::dom::element h = c["holder"];
        const std::string hk = text_at(h, "kind");
        LockHolder holder;
        if (hk == "process") holder = ProcessHolder{h["lease"].get_int64()};
        if (hk == "execution") {
          holder =
              ExecutionHolder{{unhex(text_at(h, "project")), unhex(text_at(h, "region")), unhex(text_at(h, "name"))},
                              h["lease"].get_int64()};
        }
        auto made = lock_body(unhex(text_at(c, "purpose")), Instant::from_unix_ms(c["now"].get_int64()), holder,
                              text_at(c, "id"), a);
        std::string got = made ? hex_of(*made) : "error " + made.error().message;
        if (got != text_at(expect, "body")) mismatch(count, "body", text_at(expect, "body"), got);
      } else if (type == "renew") {
        auto body = parse_lock_body(unhex(text_at(c, "text")));
        std::string got = "unreadable";
        if (body) {
          auto renewed = renewed_lock_body(*body, Instant::from_unix_ms(c["now"].get_int64()), c["lease"].get_int64());
          got = renewed ? hex_of(*renewed) : "error " + renewed.error().message;
        }
        if (got != text_at(expect, "body"))
          mismatch(count, "renew " + text_at(c, "text"), text_at(expect, "body"), got);
      } else {
        FAIL("unknown case type " << type);
      }
    }
    for (const auto& [type, n] : by_type) MESSAGE(type << ": " << n << " cases");
    CHECK(count > 0);
    CHECK(mismatches == 0);
  }

}  // TEST_SUITE
