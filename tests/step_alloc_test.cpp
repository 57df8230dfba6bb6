// The batch plan allocates O(1) per batch, never per key: counted with a global
// operator new that counts while a plan runs.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include "fixtures/step/step_cases.hpp"
#include "leasejudge/sweep.hpp"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* counted(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* counted_aligned(std::size_t n, std::align_val_t a) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  std::size_t align = static_cast<std::size_t>(a);
  void* p = std::aligned_alloc(align, (n + align - 1) / align * align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Allocations made while f runs.
template <typename F>
long allocations_in(F&& f) {
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations.load();
}
}  // namespace

void* operator new(std::size_t n) {
  return counted(n);
}
void* operator new[](std::size_t n) {
  return counted(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_aligned(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted_aligned(n, a);
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

using namespace leasejudge;

TEST_SUITE("step allocations") {
  TEST_CASE("a plan over 1M keys of 200 to 800 bytes allocates O(1) per batch") {
    // 10k distinct values, laid out once; 1M entries over them.
    auto cases = step_cases::corpus(10000, 3);
    auto batch = step_cases::batch_of(cases);
    std::size_t min_len = ~std::size_t(0), max_len = 0;
    for (const auto& c : cases) {
      if (c.value.empty() || c.value.back() != '}') continue;  // the cut and empty ones
      min_len = std::min(min_len, c.value.size());
      max_len = std::max(max_len, c.value.size());
    }
    CHECK(min_len >= 190);
    CHECK(max_len <= 840);
#if defined(__SANITIZE_ADDRESS__)
    const std::size_t keys = 200000;  // the sanitizers' run only checks the counting stays flat
#else
    const std::size_t keys = 1000000;
#endif
    std::vector<BatchEntry> entries(keys);
    for (std::size_t i = 0; i < keys; ++i) entries[i] = batch.entries[i % batch.entries.size()];
    std::vector<BatchVerdict> out(keys);
    StaleRules rules = step_cases::rules();
    BatchSummary sum;

    {  // on a fresh thread, cold
      long n = 0;
      std::thread t([&] {
        n = allocations_in([&] { REQUIRE(plan_batch(out, batch.buffer, 0, entries, rules, 1, &sum).ok()); });
      });
      t.join();
      MESSAGE("allocations for 1M keys, cold: " << n);
      CHECK(n <= 64);
      CHECK(sum.end + sum.remove + sum.leave + sum.no_step + sum.other_node == keys);
      CHECK(sum.end > 10000);
    }
    {                                                                                 // warm: none at all
      REQUIRE(plan_batch(out, batch.buffer, 0, batch.entries, rules, 1, &sum).ok());  // warms this thread's codec
      long n = allocations_in([&] { REQUIRE(plan_batch(out, batch.buffer, 0, entries, rules, 1, &sum).ok()); });
      CHECK(n == 0);
    }
    {  // in place, with padding after the buffer
      std::string padded = batch.buffer + std::string(step_padding, ' ');
      std::string_view buffer(padded.data(), batch.buffer.size());
      long n = allocations_in([&] { REQUIRE(plan_batch(out, buffer, step_padding, entries, rules, 1, &sum).ok()); });
      CHECK(n == 0);
    }
    {  // over two threads: per thread, not per key
      long n = allocations_in([&] { REQUIRE(plan_batch(out, batch.buffer, 0, entries, rules, 2, &sum).ok()); });
      MESSAGE("allocations for 1M keys on 2 threads: " << n);
      CHECK(n <= 128);
    }
  }

  TEST_CASE("values growing one byte at a time grow the buffers geometrically") {
    std::vector<step_cases::Case> cases;
    for (std::size_t i = 0; i < 5000; ++i) {
      std::string pad(100 + i, 'x');
      cases.push_back({"n1.s" + std::to_string(i),
                       "{\"id\":\"s\",\"state\":\"running\",\"owner\":\"o\",\"result\":\"" + pad + "\"}", i + 1});
    }
    auto batch = step_cases::batch_of(cases);
    std::vector<BatchVerdict> out(cases.size());
    StaleRules rules = step_cases::rules();
    long n = 0;
    std::thread t(
        [&] { n = allocations_in([&] { REQUIRE(plan_batch(out, batch.buffer, 0, batch.entries, rules, 1).ok()); }); });
    t.join();
    MESSAGE("allocations for 5000 growing values: " << n);
    CHECK(n <= 64);
    CHECK(out.back().action == StepAction::end);
  }
}
