// What the lock tests share: a fixed now (2024-05-01T12:00:00.000Z), the judge's
// machine, the bodies and their holders' texts, and the check of a verdict.
#pragma once

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
namespace leasejudge::lock_test {

using K = LockVerdict::Kind;

// 2024-05-01T12:00:00.000Z
inline constexpr std::int64_t now_ms = 1714564800000;
inline const Instant now = Instant::from_unix_ms(now_ms);

// The judge of these tests: host build-7, machine m-aaa; pids 200 and 201 are dead.
inline Here test_here() {
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

inline LockVerdict judge_process(std::string_view text, const Here& here = test_here(), Instant at = now) {
  NoDescriber none;
  LockVerdict v = judge_lock(text, none.get(), at, here);
  CHECK(*none.calls == 0);
  return v;
}

inline Describer answer(ExecutionState state, std::vector<ExecutionRef>* asked = nullptr) {
  return [state, asked](const ExecutionRef& ref) {
    if (asked != nullptr) asked->push_back(ref);
    return state;
  };
}

inline void check_verdict(const LockVerdict& v, K kind, LockReason reason, bool manual, std::string_view why) {
  CHECK(lock_verdict_kind_name(v.kind) == std::string(lock_verdict_kind_name(kind)));
  CHECK(lock_reason_code(v.reason) == std::string(lock_reason_code(reason)));
  CHECK(v.manual_removal == manual);
  CHECK(v.why == why);
}

inline std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(LEASEJUDGE_SOURCE_DIR) + "/tests/fixtures/lock/" + name, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline const std::string process_body = R"({"purpose":"deploy","id":"i-1","host":"build-7","machine":"m-aaa","pid":200,)"
                                 R"("startedAt":"2024-05-01T11:00:00.000Z","leaseUntil":"2024-05-01T12:15:00.000Z"})";
inline const std::string process_who = "deploy (on build-7, pid 200, started 2024-05-01T11:00:00.000Z)";

inline std::string execution_body(std::string_view lease_field) {
  return std::string(R"({"purpose":"upgrade","id":"i-2","host":"localhost","machine":null,"pid":1,)"
                     R"("startedAt":"2024-05-01T11:00:00.000Z","execution":{"projectId":"p","region":"r",)"
                     R"("name":"job-abc"})") +
         std::string(lease_field) + "}";
}
inline const std::string execution_who = "upgrade (run job-abc, started 2024-05-01T11:00:00.000Z)";

}  // namespace leasejudge::lock_test
