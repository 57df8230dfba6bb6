// Step keys (leasejudge/step_key.hpp).
#include "leasejudge/step_key.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "leasejudge/clock.hpp"
#include "step_json.hpp"

namespace leasejudge {

namespace {

bool split_step_key(std::string_view key, StepKeyParts& out) noexcept {
  auto dot = key.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == key.size()) return false;
  out.node = key.substr(0, dot);
  out.id = key.substr(dot + 1);
  return true;
}

bool ends_with_ask(std::string_view tool) noexcept {
  return tool.size() >= 4 && tool.compare(tool.size() - 4, 4, " ask") == 0;
}

}  // namespace

Result<std::string> step_key(std::string_view node, std::string_view id) {
  if (node.empty()) return Error{Errc::invalid_argument, "a step's node is empty"};
  if (node.find('.') != std::string_view::npos)
    return Error{Errc::invalid_argument, fmt::format("the node {} holds a '.', which ends a step key's node", node)};
  if (id.empty()) return Error{Errc::invalid_argument, "a step's id is empty"};
  std::string key;
  key.reserve(node.size() + 1 + id.size());
  key.append(node).append(".").append(id);
  return key;
}

Result<StepKeyParts> parse_step_key(std::string_view key) {
  StepKeyParts parts;
  if (!split_step_key(key, parts)) return Error{Errc::parse, fmt::format("the key {} is no step key <node>.<id>", key)};
  return parts;
}

bool is_canonical_uuid(std::string_view text) noexcept {
  // libuuid's uuid_parse_range, which DESIGN.md names, at fixed places: 36 bytes,
  // hyphens at 8, 13, 18 and 23, isxdigit elsewhere (then it converts with strtoul,
  // which cannot fail on hex digits). tests/step_test.cpp compares the two on every byte
  // at every place.
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!step_json::is_hex(c)) {
      return false;
    }
  }
  return true;
}

Result<std::int64_t> parse_step_time_ns(std::string_view text) {
  auto at = parse_rfc3339(text);
  if (!at) return Error{Errc::parse, fmt::format("{} is no RFC 3339 time", step_json::go_quote(text))};
  constexpr std::int64_t max_sec = std::numeric_limits<std::int64_t>::max() / 1000000000 - 1;
  if (at->sec > max_sec || at->sec < -max_sec)
    return Error{Errc::invalid_argument, fmt::format("{} is beyond the years 1677 to 2262", step_json::go_quote(text))};
  return at->sec * 1000000000 + at->nsec;
}

Result<StepKeyParts> parse_ask_step_key(std::string_view key) {
  StepKeyParts parts;
  if (!split_step_key(key, parts)) return Error{Errc::parse, fmt::format("the key {} is no step key <node>.<id>", key)};
  if (!is_canonical_uuid(parts.id))
    return Error{Errc::parse, fmt::format("the key {} is no ask's key: its id is no UUID", key)};
  return parts;
}

bool is_ask_step(std::string_view key, std::string_view tool) noexcept {
  StepKeyParts parts;
  return split_step_key(key, parts) && is_canonical_uuid(parts.id) && ends_with_ask(tool);
}

bool is_step_key_of(std::string_view key, std::string_view node) noexcept {
  // split_step_key's node is node when node, holding no '.', is followed by the key's first
  // '.' and at least one byte more: tested in place, with no search of the key.
  // Every plan asks it twice a key (read_step, then judge_step): the node's '.' looked for
  // with memchr, not a byte at a time (67 instructions a call for a node of 10 bytes,
  // against 97).
  if (node.empty() || key.size() < node.size() + 2 || key[node.size()] != '.' ||
      std::memcmp(key.data(), node.data(), node.size()) != 0)
    return false;
  return std::memchr(node.data(), '.', node.size()) == nullptr;
}

}  // namespace leasejudge
