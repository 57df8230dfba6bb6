// The owner rule of a plan or sweep (leasejudge/step_rule.hpp).
#include "leasejudge/step_rule.hpp"

#include <fmt/format.h>

#include "leasejudge/identity.hpp"
#include "leasejudge/text.hpp"

namespace leasejudge {

Result<OwnerRule> choose_owner_rule(int choice, std::string_view owner, bool in_process) {
  if (!owner.empty() && !parse_owner_token(owner)) {
    return Error{Errc::invalid_argument,
                 fmt::format("the owner '{}' is not an owner token: <boot id>.<pid>.<start in base 36>, as the "
                             "steps' owners write it (for instance {})",
                             c_text_capped(owner, 80), self_owner_token())};
  }
  switch (choice) {
    case static_cast<int>(RuleChoice::provably_dead):
      return OwnerRule::provably_dead;
    case static_cast<int>(RuleChoice::by_owner):
      // In process, the caller is the owner whether it names its token or not.
      return owner.empty() && !in_process ? OwnerRule::provably_dead : OwnerRule::not_self;
    case static_cast<int>(RuleChoice::not_self):
      if (owner.empty() && !in_process) {
        return Error{Errc::invalid_argument,
                     "the rule not-self takes every owner but the caller's for gone: it needs the caller's owner "
                     "token (or the rule by-owner, which is provably-dead without one)"};
      }
      return OwnerRule::not_self;
    default:
      return Error{Errc::invalid_argument, fmt::format("no rule {}", choice)};
  }
}

}  // namespace leasejudge
