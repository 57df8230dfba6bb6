// The batch plan allocates O(1) per batch, never per key: counted by the allocation
// counter the benchmarks use (bench/alloc_count.hpp: every operator new, and every malloc
// outside the sanitizers' builds), over the whole process while a plan runs.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "alloc_count.hpp"
#include "fixtures/step/step_cases.hpp"
#include "leasejudge/sweep.hpp"

namespace {
// Allocations made while f runs (nothing else in the process allocates meanwhile).
template <typename F>
long allocations_in(F&& f) {
  auto before = leasejudge::bench::allocations_so_far();
  f();
  return static_cast<long>(leasejudge::bench::allocations_so_far().count - before.count);
}
}  // namespace

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
    StepRules rules = step_cases::rules();
    BatchSummary sum;

    {  // on a fresh thread, cold
      long n = 0;
      std::thread t([&] {
        n = allocations_in([&] { REQUIRE(plan_batch(out, batch.buffer, entries, rules, 1, &sum).ok()); });
      });
      t.join();
      MESSAGE("allocations for 1M keys, cold: " << n);
      CHECK(n <= 64);
      CHECK(sum.end + sum.remove + sum.leave + sum.no_step + sum.other_node == keys);
      CHECK(sum.end > 10000);
    }
    {                                                                                 // warm: none at all
      REQUIRE(plan_batch(out, batch.buffer, batch.entries, rules, 1, &sum).ok());  // warms this thread's codec
      long n = allocations_in([&] { REQUIRE(plan_batch(out, batch.buffer, entries, rules, 1, &sum).ok()); });
      CHECK(n == 0);
    }
    {  // in place, with other bytes after the buffer
      std::string followed = batch.buffer + std::string(64, ' ');
      std::string_view buffer(followed.data(), batch.buffer.size());
      long n = allocations_in([&] { REQUIRE(plan_batch(out, buffer, entries, rules, 1, &sum).ok()); });
      CHECK(n == 0);
    }
    {  // over two threads: per thread, not per key
      long n = allocations_in([&] { REQUIRE(plan_batch(out, batch.buffer, entries, rules, 2, &sum).ok()); });
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
    StepRules rules = step_cases::rules();
    long n = 0;
    std::thread t(
        [&] { n = allocations_in([&] { REQUIRE(plan_batch(out, batch.buffer, batch.entries, rules, 1).ok()); }); });
    t.join();
    MESSAGE("allocations for 5000 growing values: " << n);
    CHECK(n <= 64);
    CHECK(out.back().action == StepAction::end);
  }
}
