// Allocation counting, for the sweep contenders and the allocation tests: every operator
// new of the process and, outside the sanitizers' builds, every malloc, calloc, realloc,
// posix_memalign, aligned_alloc and memalign too, counted (not assumed), so a contender or
// a test can say how many allocations one plan of a batch made. Linked only into the
// programs that count (leasejudge-bench-sweep, tests/step_alloc_test), which get these
// replacements of the allocation functions.
#pragma once

#include <cstdint>

namespace leasejudge::bench {

struct Allocations {
  std::uint64_t count = 0, bytes = 0;
};

// The allocations made so far by the whole process (all threads).
Allocations allocations_so_far() noexcept;
// True when every allocation is counted; false in a sanitizer's build, whose runtime
// replaces malloc itself: there only operator new is counted.
bool allocations_counted() noexcept;

}  // namespace leasejudge::bench
