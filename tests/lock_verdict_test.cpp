// The lock verdict: every branch and why at a fixed now, its text and JSON forms,
// this machine's evidence, and the seed's own cases (tests/lock_seed_test.sh). Expected
// texts are written by hand from the JavaScript lock-lease code's template strings.
#include "lock_fixtures.hpp"

using namespace leasejudge;
using namespace leasejudge::lock_test;

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

  TEST_CASE("judging into one verdict: each judgment whole, whatever the one before left") {
    const std::string lease = R"(,"leaseUntil":"2024-05-01T12:00:00.000Z")";
    LockVerdict v;
    v.why = "left over from before";
    judge_lock(v, std::string(2000, 'x'), answer(ExecutionState::running()), now, test_here());
    check_verdict(v, K::held, LockReason::not_readable, true,
                  "the lock's holder is not readable (" + std::string(200, 'x') + ")");
    judge_lock(v, execution_body(lease), answer(ExecutionState::finished("cancelled")), now, test_here());
    check_verdict(v, K::break_lock, LockReason::execution_finished, false,
                  execution_who + " has cancelled, but its lock was left behind");
    const std::size_t room = v.why.capacity();
    const char* at = v.why.data();
    judge_lock(v, R"({"purpose":"p"})", answer(ExecutionState::running()), now, test_here());
    check_verdict(v, K::held, LockReason::no_lease, true, "held by p");
    CHECK(v.why.capacity() == room);  // the room kept, no new block
    CHECK(v.why.data() == at);
    judge_lock(v, process_body, answer(ExecutionState::running()), now, test_here());
    check_verdict(v, K::break_lock, LockReason::process_gone, false,
                  process_who + " has ended (its process is gone on this machine)");
    judge_lock(v, execution_body(lease), answer(ExecutionState::unknown("PERMISSION_DENIED")), now, test_here());
    check_verdict(v, K::unknown, LockReason::execution_unknown, false,
                  "could not check whether " + execution_who + " is still running: PERMISSION_DENIED");
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
    for (int r = 1; r <= 16; ++r) CHECK(std::string(lock_reason_code(static_cast<LockReason>(r))).size() > 0);
    CHECK(std::string(lock_reason_code(static_cast<LockReason>(17))).empty());
    CHECK(std::string(lock_reason_code(LockReason::store_lease_ended)) == "store_lease_ended");
    CHECK(std::string(lock_reason_code(LockReason::store_lease_unknown)) == "store_lease_unknown");
    CHECK(lock_reason_kind(LockReason::store_lease_ended) == K::break_lock);
    CHECK(lock_reason_kind(LockReason::store_lease_unknown) == K::unknown);
    CHECK(!lock_reason_manual(LockReason::store_lease_ended));
    CHECK(!lock_reason_manual(LockReason::store_lease_unknown));
    CHECK(std::string(lock_reason_code(LockReason::execution_not_found_lease_ended)) ==
          "execution_not_found_lease_ended");
    CHECK(std::string(lock_reason_code(LockReason::holder_rebooted)) == "holder_rebooted");
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
