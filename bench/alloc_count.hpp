// Allocation counting for the sweep contenders: every operator new and every malloc,
// calloc, realloc, posix_memalign, aligned_alloc and memalign of the process, counted (not
// assumed), so a contender can say how many allocations one plan of a batch made.
// Linked only into the contender executable, which replaces those functions.
#pragma once

#include <cstdint>

namespace leasejudge::bench {

struct Allocations {
  std::uint64_t count = 0, bytes = 0;
};

// The allocations made so far by the whole process (all threads).
Allocations allocations_so_far() noexcept;
// False where the counting is compiled out (a sanitizer build replaces malloc itself).
bool allocations_counted() noexcept;

}  // namespace leasejudge::bench
