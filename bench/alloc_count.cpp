// The counting replacements of alloc_count.hpp. operator new counts and takes its memory
// from the allocator underneath without counting again; malloc and friends (outside the
// sanitizers' builds) count and forward to glibc's __libc_* entry points; free needs no
// replacement: the memory is glibc's own. Counters are relaxed atomics: one add per
// allocation, nothing on a path that does not allocate.
#include "alloc_count.hpp"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(LEASEJUDGE_BENCH_NO_ALLOC_COUNT)
#define LEASEJUDGE_COUNT_MALLOC 0
#else
#define LEASEJUDGE_COUNT_MALLOC 1
#endif

namespace leasejudge::bench {
namespace {
std::atomic<std::uint64_t> g_count{0}, g_bytes{0};
inline void counted(std::size_t n) noexcept {
  g_count.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(n, std::memory_order_relaxed);
}
}  // namespace

Allocations allocations_so_far() noexcept {
  return {g_count.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)};
}

bool allocations_counted() noexcept {
  return LEASEJUDGE_COUNT_MALLOC != 0;
}

}  // namespace leasejudge::bench

using leasejudge::bench::counted;

#if LEASEJUDGE_COUNT_MALLOC
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);

void* malloc(std::size_t n) {
  counted(n);
  return __libc_malloc(n);
}
void* calloc(std::size_t k, std::size_t n) {
  counted(k * n);
  return __libc_calloc(k, n);
}
void* realloc(void* p, std::size_t n) {
  counted(n);
  return __libc_realloc(p, n);
}
void* memalign(std::size_t align, std::size_t n) {
  counted(n);
  return __libc_memalign(align, n);
}
void* aligned_alloc(std::size_t align, std::size_t n) {
  counted(n);
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, std::size_t align, std::size_t n) {
  if (align % sizeof(void*) != 0 || (align & (align - 1)) != 0) return EINVAL;
  counted(n);
  void* p = __libc_memalign(align, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}
#endif

namespace {
// Memory for operator new, counted once: here, not again underneath.
void* uncounted(std::size_t n, std::size_t align) noexcept {
  if (n == 0) n = 1;
#if LEASEJUDGE_COUNT_MALLOC
  return align <= alignof(std::max_align_t) ? __libc_malloc(n) : __libc_memalign(align, n);
#else
  return align <= alignof(std::max_align_t) ? std::malloc(n)
                                            : std::aligned_alloc(align, (n + align - 1) / align * align);
#endif
}
void* allocate(std::size_t n, std::size_t align = alignof(std::max_align_t)) {
  counted(n);
  void* p = uncounted(n, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* allocate_nothrow(std::size_t n) noexcept {
  counted(n);
  return uncounted(n, alignof(std::max_align_t));
}
}  // namespace

void* operator new(std::size_t n) {
  return allocate(n);
}
void* operator new[](std::size_t n) {
  return allocate(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate_nothrow(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate_nothrow(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
