// The names of a step's fields and of its ask's, matched as Go's encoding/json matches
// them: exactly, else under case folding. Private to lib/ (the codec's reader).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "step_json.hpp"

namespace leasejudge::step_fields {

// The fields of delivery.Step, and of its ask, by their JSON names.
enum class Field : std::uint8_t { unknown, id, tool, state, owner, started, ended, reason, result, ask };
enum class AskField : std::uint8_t { unknown, kind, check, build, compose };
enum class PartField : std::uint8_t { unknown, fetch, levels, run, module, fp };

// Which of names (ASCII lowercase) a decoded object key names, as encoding/json matches
// names: exactly, else under case folding; -1 for none. Folded, an ASCII key is as long
// as the name it names, so only a key with a non-ASCII rune (the Kelvin sign, the long
// s) is folded against names of other lengths.
inline bool same_bytes(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size() || a.empty() || a[0] != b[0]) return false;
  for (std::size_t i = 1; i < a.size(); ++i)  // names are a few bytes: no call
    if (a[i] != b[i]) return false;
  return true;
}
template <std::size_t N>
int exact_name(std::string_view key, const std::string_view (&names)[N]) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (same_bytes(key, names[i])) return static_cast<int>(i);
  return -1;
}
// The same for the step's own fields, the names nearly every key is: by length, then the
// bytes (constant-length compares the compiler inlines).
inline int exact_step_field(std::string_view k) noexcept {
  switch (k.size()) {
    case 2:
      return std::memcmp(k.data(), "id", 2) == 0 ? 0 : -1;
    case 3:
      return std::memcmp(k.data(), "ask", 3) == 0 ? 8 : -1;
    case 4:
      return std::memcmp(k.data(), "tool", 4) == 0 ? 1 : -1;
    case 5:
      if (std::memcmp(k.data(), "state", 5) == 0) return 2;
      if (std::memcmp(k.data(), "owner", 5) == 0) return 3;
      if (std::memcmp(k.data(), "ended", 5) == 0) return 5;
      return -1;
    case 6:
      if (std::memcmp(k.data(), "reason", 6) == 0) return 6;
      if (std::memcmp(k.data(), "result", 6) == 0) return 7;
      return -1;
    case 7:
      return std::memcmp(k.data(), "started", 7) == 0 ? 4 : -1;
    default:
      return -1;
  }
}
// The same for an ask's fields ("kind", "check", "build", "compose") and its
// parts' fields ("fetch", "levels", "run", "module", "fp"), in the order of ask_names and part_names.
// k's bytes are name's (k as long as name: the switches below test lengths first).
template <std::size_t N>
constexpr bool bytes_are(std::string_view k, const char (&name)[N]) noexcept {
  return std::char_traits<char>::compare(k.data(), name, N - 1) == 0;
}
constexpr int exact_ask_field(std::string_view k) noexcept {
  switch (k.size()) {
    case 4:
      return bytes_are(k, "kind") ? 0 : -1;
    case 5:
      return bytes_are(k, "check") ? 1 : bytes_are(k, "build") ? 2 : -1;
    case 7:
      return bytes_are(k, "compose") ? 3 : -1;
    default:
      return -1;
  }
}
constexpr int exact_part_field(std::string_view k) noexcept {
  switch (k.size()) {
    case 2:
      return bytes_are(k, "fp") ? 4 : -1;
    case 3:
      return bytes_are(k, "run") ? 2 : -1;
    case 5:
      return bytes_are(k, "fetch") ? 0 : -1;
    case 6:
      return bytes_are(k, "levels") ? 1 : bytes_are(k, "module") ? 3 : -1;
    default:
      return -1;
  }
}

// The names a key matches under case folding (exact matches tried already). A name's
// first letter must fold from the key's first rune: an ASCII letter, or one of the two
// non-ASCII runes that fold to ASCII (the Kelvin sign to k, the long s to s); and the key's
// length must be one the name's letters can fold from: one byte each, or for a k the
// Kelvin sign's three, for an s the long s's two. Tables of the names by first letter and
// by length pick the few to fold against.
template <std::size_t N>
struct NamesByLetter {
  static constexpr std::size_t longest = 16;  // no name folds from a key this long
  std::uint32_t mask[128] = {};               // bit i: names[i] begins with this letter
  std::uint32_t length[longest] = {};         // bit i: names[i] may fold from a key this long
  constexpr explicit NamesByLetter(const std::string_view (&names)[N]) {
    for (std::size_t i = 0; i < N; ++i) {
      mask[static_cast<unsigned char>(names[i][0]) & 0x7F] |= 1u << i;
      std::size_t most = names[i].size();
      for (char c : names[i]) most += c == 'k' ? 2 : c == 's' ? 1 : 0;
      if (most >= longest) throw "a name folds from keys longer than the table holds";  // a compile error
      for (std::size_t len = names[i].size(); len <= most && len < longest; ++len) length[len] |= 1u << i;
    }
  }
};
template <std::size_t N>
int folded_name(std::string_view key, const std::string_view (&names)[N], const NamesByLetter<N>& by_letter) noexcept {
  static_assert(N <= 32);
  if (key.empty() || key.size() >= NamesByLetter<N>::longest) return -1;
  auto c0 = static_cast<unsigned char>(key[0]);
  std::uint32_t candidates =
      (c0 < 0x80 ? by_letter.mask[c0 >= 'A' && c0 <= 'Z' ? c0 + 32 : c0]
                 : by_letter.mask[static_cast<unsigned char>('k')] | by_letter.mask[static_cast<unsigned char>('s')]) &
      by_letter.length[key.size()];
  for (; candidates != 0; candidates &= candidates - 1) {
    int i = __builtin_ctz(candidates);
    if (step_json::name_matches(key, names[i])) return i;
  }
  return -1;
}
template <std::size_t N>
int match_name(std::string_view key, const std::string_view (&names)[N], const NamesByLetter<N>& by_letter) noexcept {
  if (int i = exact_name(key, names); i >= 0) return i;
  return folded_name(key, names, by_letter);
}

}  // namespace leasejudge::step_fields
