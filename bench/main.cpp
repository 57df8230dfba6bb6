// The main job, placeholder until the sweep lands: prints this process's identity.
#include <unistd.h>
#include <fmt/format.h>
#include "leasejudge/identity.hpp"
int main() {
  using namespace leasejudge;
  fmt::print("boot id     {}\n", boot_id());
  fmt::print("owner token {}\n", self_owner_token());
  fmt::print("lease id    {}\n", lease_identity_of(getpid()));
  auto m = machine_id();
  fmt::print("machine id  {}\n", m ? *m : "(none)");
  for (Pid p : {1, getpid(), 999999}) {
    auto j = judge_owner_token(owner_token_of(p) ? *owner_token_of(p) : fmt::format("{}.{}.0", boot_id(), p));
    fmt::print("pid {:>7}   {} ({})\n", p, holder_state_name(j.state), j.why);
  }
}
