// The main job: the sweep comparison over a generated steps state of 1,000,000 keys,
// every contender side by side (bench/run --keys 1000000), printing the table. Arguments
// are handed to bench/run (e.g. `build/leasejudge --keys 10000,100000`).
//
// Built without the benchmarks (LEASEJUDGE_BENCH off: no Google Benchmark), it says so
// and prints this process's identities instead.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "leasejudge/identity.hpp"

int main(int argc, char** argv) {
#if defined(LEASEJUDGE_BENCH_RUN) && defined(LEASEJUDGE_BENCH_BUILD)
  std::vector<const char*> args{"bash", LEASEJUDGE_BENCH_RUN, "--build", LEASEJUDGE_BENCH_BUILD};
  bool keys_given = false;
  for (int i = 1; i < argc; ++i) keys_given = keys_given || std::string_view(argv[i]) == "--keys";
  if (!keys_given) {
    args.push_back("--keys");
    args.push_back("1000000");
  }
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  fmt::print(stderr, "leasejudge: the sweep comparison ({} {})\n", LEASEJUDGE_BENCH_RUN,
             keys_given ? "" : "--keys 1000000");
  std::fflush(stderr);
  execvp("bash", const_cast<char* const*>(args.data()));
  fmt::print(stderr, "leasejudge: running bash {}: {}\n", LEASEJUDGE_BENCH_RUN, std::strerror(errno));
  return 1;
#else
  (void)argc;
  (void)argv;
  using namespace leasejudge;
  fmt::print("the benchmarks are not built (configure with LEASEJUDGE_BENCH=ON and Google Benchmark installed)\n");
  fmt::print("boot id     {}\n", boot_id());
  fmt::print("owner token {}\n", self_owner_token());
  fmt::print("lease id    {}\n", lease_identity_of(getpid()));
  auto m = machine_id();
  fmt::print("machine id  {}\n", m ? *m : "(none)");
  return 0;
#endif
}
