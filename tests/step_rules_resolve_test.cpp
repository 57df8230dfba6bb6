#include "leasejudge/step_rules.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "leasejudge/identity.hpp"

using namespace leasejudge;

namespace {

constexpr int not_self = 0, provably_dead = 1, by_owner = 2;
const std::string boot = "0421fdf9-edd1-4816-bb1f-c760b5c694eb";

// The rule resolve() chooses for the choice and owner given.
Result<OwnerRule> choose_owner_rule(int choice, std::string_view owner, bool in_process) {
  StepRules given;
  given.node = "n1";
  given.owner = std::string(owner);
  given.rule = static_cast<OwnerRule>(choice);
  auto resolved = resolve(given, in_process);
  if (!resolved) return resolved.error();
  return resolved->rule;
}

std::string refusal(int choice, std::string_view owner, bool in_process) {
  auto rule = choose_owner_rule(choice, owner, in_process);
  REQUIRE_FALSE(rule);
  CHECK(rule.error().code == Errc::invalid_argument);
  return rule.error().message;
}

}  // namespace

TEST_CASE("by-owner: not-self for a caller naming its token, provably-dead for one that does not") {
  CHECK(*choose_owner_rule(by_owner, boot + ".4242.mxb1i7qm", false) == OwnerRule::not_self);
  CHECK(*choose_owner_rule(by_owner, "", false) == OwnerRule::provably_dead);
  // In process the caller is the owner, named or not.
  CHECK(*choose_owner_rule(by_owner, "", true) == OwnerRule::not_self);
}

TEST_CASE("provably-dead whatever the owner; not-self only with an owner or in process") {
  CHECK(*choose_owner_rule(provably_dead, "", false) == OwnerRule::provably_dead);
  CHECK(*choose_owner_rule(provably_dead, "no-boot-id.1.0", false) == OwnerRule::provably_dead);
  CHECK(*choose_owner_rule(not_self, "no-boot-id.7.z", false) == OwnerRule::not_self);
  CHECK(*choose_owner_rule(not_self, "", true) == OwnerRule::not_self);
  CHECK(refusal(not_self, "", false).find("needs the caller's owner token") != std::string::npos);
}

TEST_CASE("a rule out of range is refused") {
  CHECK(refusal(3, "", false) == "no rule 3");
  CHECK(refusal(255, "", false) == "no rule 255");
}

TEST_CASE("an owner that is no owner token is refused, under every rule, naming it") {
  const std::string prefix = "the owner '";
  for (int choice : {not_self, provably_dead, by_owner}) {
    for (bool in_process : {false, true}) {
      CAPTURE(choice);
      CAPTURE(in_process);
      CHECK(refusal(choice, "garbage", in_process).rfind(prefix + "garbage' is not an owner token", 0) == 0);
      CHECK(refusal(choice, "self.1.1", in_process).rfind(prefix + "self.1.1'", 0) == 0);
    }
  }
  // The shapes the steps' owners never write: a short boot id, pid 0 or with a leading
  // zero, an upper-case or signed start, a field too many or too few.
  for (const std::string& bad : std::vector<std::string>{"x.1.1", "no-boot-id.0.1", "no-boot-id.01.1", "no-boot-id.1.Z", "no-boot-id.1.-1",
                          "no-boot-id.1.1.1", "no-boot-id.1", ".1.1", "no-boot-id..1", boot + ".1.00",
                          boot + "0.1.1", "no-boot-id.2147483648.1"}) {
    CAPTURE(bad);
    CHECK(refusal(by_owner, bad, false).rfind(prefix + bad + "'", 0) == 0);
  }
  // The example given is this process's own token.
  CHECK(refusal(by_owner, "garbage", false).find("(for instance " + self_owner_token() + ")") != std::string::npos);
}

TEST_CASE("hostile owners: NUL, non-UTF-8 and huge text are refused and quoted safely, cut") {
  using namespace std::string_literals;
  std::string nul = "no-boot-id.1\0.1"s;
  CHECK(refusal(by_owner, nul, false).rfind("the owner 'no-boot-id.1\xEF\xBF\xBD.1' is not", 0) == 0);
  CHECK(refusal(by_owner, "no-boot-id.1.\xff", false).rfind("the owner 'no-boot-id.1.\xEF\xBF\xBD' is not", 0) == 0);
  std::string huge(1 << 20, 'a');
  std::string message = refusal(by_owner, huge, false);
  CHECK(message.size() < 400);
  CHECK(message.rfind("the owner '" + std::string(80, 'a') + " [cut: " + std::to_string((1 << 20) - 80) +
                          " more bytes]' is not",
                      0) == 0);
}

TEST_CASE("resolve takes every default once and says which rule and why") {
  StepRules given;
  given.node = "n1";
  std::string why;
  auto r = resolve(given, false, &why);
  REQUIRE(r);
  CHECK(r->owner == self_owner_token());
  CHECK(r->before == this_process_start());
  CHECK(r->now.has_value());
  CHECK(r->bound_ns == 3600LL * 1000000000LL);
  CHECK(r->rule == OwnerRule::provably_dead);
  CHECK(why ==
        "rule provably-dead (no owner named): only owners proven gone (dead, recycled, rebooted) are ended, never a "
        "step whose owner is alive on this node");
  given.owner = "no-boot-id.7.z";
  given.before = Instant{1714561200, 0};
  given.now = Instant{1714564800, 0};
  r = resolve(given, false, &why);
  REQUIRE(r);
  CHECK(r->rule == OwnerRule::not_self);
  CHECK(r->before == Instant{1714561200, 0});
  CHECK(r->now == Instant{1714564800, 0});
  CHECK(why == "rule not-self: every owner but no-boot-id.7.z is taken for gone");
  given.rule = OwnerRule::provably_dead;
  REQUIRE(resolve(given, false, &why));
  CHECK(why == "rule provably-dead: only owners proven gone (dead, recycled, rebooted) are ended");
}

TEST_CASE("resolve refuses a node that is empty or holds a '.', and a bound that is not positive") {
  StepRules given;
  auto r = resolve(given, true);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "the rules name no node");
  given.node = "a.b";
  r = resolve(given, true);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "the node a.b holds a '.', which ends a step key's node");
  given.node = "n1";
  given.bound_ns = 0;
  r = resolve(given, true);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "the step bound of 0 ns is out of range");
}
