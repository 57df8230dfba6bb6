// Lock bodies: read as JSON.parse and the schema read them, written as JSON.stringify
// writes them, the bodies of each holder and the renewed body.
#include "lock_fixtures.hpp"

using namespace leasejudge;
using namespace leasejudge::lock_test;

TEST_SUITE("lock") {
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
    SUBCASE("no holder: no lease; a process holder carries the owner token, then its lease") {
      BodyAuthor with_owner = author;
      with_owner.owner = "0b1c.48213.lq2";
      CHECK(*lock_body("p", now, std::monostate{}, "id", with_owner) ==
            R"({"purpose":"p","id":"id","host":"devbox","machine":"0123456789abcdef0123456789abcdef",)"
            R"("pid":48213,"startedAt":"2024-05-01T12:00:00.000Z","owner":"0b1c.48213.lq2"})");
      CHECK(*lock_body("p", now, ProcessHolder{1000}, "id", with_owner) ==
            R"({"purpose":"p","id":"id","host":"devbox","machine":"0123456789abcdef0123456789abcdef",)"
            R"("pid":48213,"startedAt":"2024-05-01T12:00:00.000Z","leaseUntil":"2024-05-01T12:05:01.000Z",)"
            R"("owner":"0b1c.48213.lq2","leaseMs":1000})");
      // A lease a body cannot record (none, or over a year) is left out.
      CHECK(lock_body("p", now, ProcessHolder{0}, "id", with_owner)->find("leaseMs") == std::string::npos);
      CHECK(lock_body("p", now, ProcessHolder{max_lease_ms + 1}, "id", with_owner)->find("leaseMs") ==
            std::string::npos);
      CHECK(lock_body("p", now, ProcessHolder{max_lease_ms}, "id", with_owner)->ends_with(R"(,"leaseMs":31622400000})"));
    }
    SUBCASE("leaseMs is read only as a whole number of ms in 1..a year; anything else is no lease") {
      auto lease_of = [](std::string_view value) {
        auto body = parse_lock_body(R"({"purpose":"p","leaseMs":)" + std::string(value) + "}");
        REQUIRE(body.ok());
        return body->lease_ms;
      };
      CHECK(lease_of("1") == 1);
      CHECK(lease_of("30000") == 30000);
      CHECK(lease_of("3e4") == 30000);
      CHECK(lease_of("31622400000") == max_lease_ms);
      for (std::string_view bad : {"0", "-5", "1.5", "31622400001", "1e300", "\"30000\"", "null", "true", "[1]", "{}"}) {
        CAPTURE(bad);
        CHECK_FALSE(lease_of(bad).has_value());
      }
      // The last of duplicate keys wins, as for every field.
      CHECK(parse_lock_body(R"({"purpose":"p","leaseMs":5,"leaseMs":"x"})")->lease_ms == std::nullopt);
      CHECK(parse_lock_body(R"({"purpose":"p","leaseMs":"x","leaseMs":7})")->lease_ms == 7);
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
      // A body of leasejudge's records the lease it is renewed with.
      CHECK(*renewed_lock_body(*odd, now, 90000) ==
            R"({"purpose":"p","machine":null,"leaseUntil":"2024-05-01T12:06:30.000Z","owner":"o","leaseMs":90000})");
      auto ours = parse_lock_body(R"({"purpose":"p","leaseMs":1000})");
      CHECK(*renewed_lock_body(*ours, now, 2000) ==
            R"({"purpose":"p","leaseUntil":"2024-05-01T12:05:02.000Z","leaseMs":2000})");
    }
  }
}  // TEST_SUITE
