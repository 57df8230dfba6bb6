// A test that cannot run here (a program or a part of the build missing): outside CI
// it is skipped, and the test program exits with 77, which ctest reports as a skip
// (SKIP_RETURN_CODE); under CI=true it fails, since there every test must run.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

namespace leasejudge::test {

inline bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

// How many test cases of this program were skipped (tests/doctest_main.cpp reads it).
inline int& skipped_cases() {
  static int n = 0;
  return n;
}

}  // namespace leasejudge::test

// In a test case: unless cond holds, skip the rest of it (fail under CI), saying what.
#define LJ_REQUIRE_OR_SKIP(cond, what)                                            \
  do {                                                                            \
    if (!(cond)) {                                                                \
      if (::leasejudge::test::under_ci()) {                                       \
        FAIL_CHECK(what << " (under CI=true a test that cannot run fails)");      \
      } else {                                                                    \
        MESSAGE("SKIP: " << what);                                                \
        ++::leasejudge::test::skipped_cases();                                    \
      }                                                                           \
      return;                                                                     \
    }                                                                             \
  } while (0)
