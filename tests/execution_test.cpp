// An execution holder's state: gcloud's answer read as the seed reads it, the
// describe arguments, the describer against a fake gcloud.
#include "lock_fixtures.hpp"

using namespace leasejudge;
using namespace leasejudge::lock_test;

TEST_SUITE("lock") {
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
}  // TEST_SUITE
