#include "bench_args.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

namespace leasejudge::bench {

Instant instant_arg(std::string_view flag, const char* text, Usage usage) {
  auto t = parse_rfc3339(text);
  if (!t) usage(fmt::format("{} takes an RFC 3339 time, not {:?}", flag, text));
  return t ? *t : Instant{};
}

long number_arg(std::string_view flag, const char* text, Usage usage) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0) usage(fmt::format("{} takes a number, not {:?}", flag, text));
  return v;
}

bool rule_arg(RuleArgs& a, std::string_view flag, const char* v, Usage usage) {
  if (flag == "--contender")
    a.contender = v;
  else if (flag == "--state")
    a.state = v;
  else if (flag == "--node")
    a.rules.node = v;
  else if (flag == "--owner")
    a.rules.owner = v;
  else if (flag == "--decisions")
    a.decisions = v;
  else if (flag == "--now")
    a.rules.now = instant_arg(flag, v, usage), a.rules.have_now = true;
  else if (flag == "--before")
    a.rules.before = instant_arg(flag, v, usage), a.rules.have_before = true;
  else if (flag == "--bound")
    a.rules.bound_ms = number_arg(flag, v, usage) * 1000LL;  // --bound is in seconds
  else
    return false;
  return true;
}

}  // namespace leasejudge::bench
