// The main of every doctest program: doctest's own, and exit code 77 (a skip, for
// ctest) when test cases were skipped because they could not run and none failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "skip.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  int rc = context.run();
  if (context.shouldExit()) return rc;
  if (rc == 0 && leasejudge::test::skipped_cases() > 0) return 77;
  return rc;
}
