// leasejudge-bench-gen: writes a generated steps state (step_state.hpp) as JSON lines.
//
//   leasejudge-bench-gen --keys N --owner TOKEN --now ISO --before ISO
//                        [--nodes M] [--node NAME] [--bound SECONDS] [--seed S] [--out FILE]
//
// A summary of what was written (one JSON object) goes to stderr.
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "step_state.hpp"

namespace {

[[noreturn]] void usage(std::string_view why) {
  fmt::print(stderr, "leasejudge-bench-gen: {}\n", why);
  fmt::print(
      stderr,
      "usage: leasejudge-bench-gen --keys N --owner TOKEN --now ISO --before ISO [--nodes M] [--node NAME]\n"
      "                            [--bound SECONDS] [--seed S] [--other-node-pct P] [--edge-pct P] [--out FILE]\n");
  std::exit(2);
}

std::uint64_t number(std::string_view flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') usage(fmt::format("{} takes a number, not {:?}", flag, text));
  return v;
}

leasejudge::Instant instant(std::string_view flag, const char* text) {
  auto t = leasejudge::parse_rfc3339(text);
  if (!t) usage(fmt::format("{} takes an RFC 3339 time, not {:?}", flag, text));
  return *t;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace leasejudge::bench;
  StepStateSpec spec;
  spec.rules.node = "build-eu-1";  // the sweeping node unless --node names another
  const char* out_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", a));
    const char* v = argv[++i];
    if (a == "--keys")
      spec.keys = number(a, v);
    else if (a == "--nodes")
      spec.nodes = static_cast<std::uint32_t>(number(a, v));
    else if (a == "--node")
      spec.rules.node = v;
    else if (a == "--owner")
      spec.rules.owner = v;
    else if (a == "--now")
      spec.rules.now = instant(a, v), spec.rules.have_now = true;
    else if (a == "--before")
      spec.rules.before = instant(a, v), spec.rules.have_before = true;
    else if (a == "--bound")
      spec.rules.bound_ms = static_cast<std::int64_t>(number(a, v)) * 1000;  // --bound is in seconds
    else if (a == "--seed")
      spec.seed = number(a, v);
    else if (a == "--other-node-pct")
      spec.other_node_pct = static_cast<std::uint32_t>(number(a, v));
    else if (a == "--edge-pct")
      spec.edge_pct = static_cast<std::uint32_t>(number(a, v));
    else if (a == "--out")
      out_path = v;
    else
      usage(fmt::format("unknown option {}", a));
  }
  if (spec.rules.owner.empty() || spec.rules.owner.find('.') == std::string::npos) usage("--owner takes an owner token");
  if (!spec.rules.have_now || !spec.rules.have_before) usage("--now and --before are required");
  if (spec.rules.before > spec.rules.now) usage("--before is after --now");
  if (spec.rules.node.empty() || spec.rules.node.find('.') != std::string::npos) usage("--node takes a node name without '.'");
  if (spec.other_node_pct > 100) usage("--other-node-pct is a percentage");
  if (spec.edge_pct > 100) usage("--edge-pct is a percentage");

  std::FILE* out = stdout;
  if (out_path != nullptr) {
    out = std::fopen(out_path, "wb");
    if (out == nullptr) {
      fmt::print(stderr, "leasejudge-bench-gen: opening {}: {}\n", out_path, std::strerror(errno));
      return 1;
    }
  }
  StepStateCounts c;
  bool ok = write_step_state(spec, out, &c);
  if (out != stdout ? std::fclose(out) != 0 : std::fflush(out) != 0) ok = false;
  if (!ok) {
    fmt::print(stderr, "leasejudge-bench-gen: writing the state: {}\n", std::strerror(errno));
    return 1;
  }
  fmt::print(stderr,
             R"({{"keys":{},"value_bytes":{},"other_node":{},"finished":{},"no_step":{},"own":{},"other_owner":{},)"
             R"("other_owner_ask":{},"ask_old":{},"ask_young":{},"hand_before":{},"hand_after":{},"edge":{}}})"
             "\n",
             c.keys, c.value_bytes, c.other_node, c.finished, c.no_step, c.own, c.other_owner, c.other_owner_ask,
             c.ask_old, c.ask_young, c.hand_before, c.hand_after, c.edge);
  return 0;
}
