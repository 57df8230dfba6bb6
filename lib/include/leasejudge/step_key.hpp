// Step keys: `<node>.<id>`, the key a build module keeps each tool run of a node under,
// and an ask's key, whose id is a UUID.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "leasejudge/error.hpp"

namespace leasejudge {

struct StepKeyParts {
  std::string_view node;  // non-empty, no '.'
  std::string_view id;    // non-empty, everything after the first '.'
};
// `<node>.<id>`. Errc::invalid_argument for an empty node, a node holding '.', or an
// empty id.
Result<std::string> step_key(std::string_view node, std::string_view id);
// Split key at its first '.'. Errc::parse when it has none, or an empty side.
Result<StepKeyParts> parse_step_key(std::string_view key);
// The same for an ask's key, whose id is a canonical UUID (is_canonical_uuid).
Result<StepKeyParts> parse_ask_step_key(std::string_view key);
// 36 characters, hyphens at 8, 13, 18 and 23, hex digits elsewhere in either case:
// exactly what libuuid's uuid_parse accepts (it takes upper and lower case alike).
bool is_canonical_uuid(std::string_view text) noexcept;
// A pulled ask's step: its key parses as an ask's and its tool ends in " ask".
bool is_ask_step(std::string_view key, std::string_view tool) noexcept;

// Go's RFC 3339 text (parse_rfc3339) as nanoseconds since the Unix epoch, the unit of
// the C ABI's times. Errc::parse "<text, quoted as Go quotes> is no RFC 3339 time";
// Errc::invalid_argument "... is beyond the years 1677 to 2262".
Result<std::int64_t> parse_step_time_ns(std::string_view text);

// Is key a step key of node? (the node filter of a plan; allocates nothing)
bool is_step_key_of(std::string_view key, std::string_view node) noexcept;

}  // namespace leasejudge
