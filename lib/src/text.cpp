// Text handed out (text.hpp).
#include "leasejudge/text.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <cstdint>
#include <cstring>

#include "lock_js.hpp"

namespace leasejudge {

namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";

bool continuation(unsigned char c) noexcept {
  return c >= 0x80 && c <= 0xBF;
}

// WTF-8 lone surrogates (and NULs, unless kept) as U+FFFD, every other byte kept.
std::string without_surrogates(std::string_view bytes, bool keep_nul) {
  std::string out;
  out.reserve(bytes.size() + 8);
  for (std::size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == 0 && !keep_nul) {
      out.append(replacement);
      ++i;
    } else if (c == 0xED && i + 2 < bytes.size() && static_cast<unsigned char>(bytes[i + 1]) >= 0xA0 &&
               continuation(static_cast<unsigned char>(bytes[i + 1])) &&
               continuation(static_cast<unsigned char>(bytes[i + 2]))) {
      out.append(replacement);
      i += 3;
    } else {
      out.push_back(static_cast<char>(c));
      ++i;
    }
  }
  return out;
}

}  // namespace

bool is_c_text(std::string_view bytes) noexcept {
  // Most texts are ASCII: read eight bytes at a time while none is 0 or from 0x80 (the
  // zero test may also fire on a byte from 0x80, which ends the run anyway).
  constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  const char* p = bytes.data();
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if ((((w - ones) & ~w) | w) & highs) break;
  }
  while (i < bytes.size() && static_cast<unsigned char>(p[i]) - 1u < 0x7Fu) ++i;  // 1 to 0x7F
  // The rest from the first byte that is not: what came before is whole characters.
  const std::string_view rest = bytes.substr(i);
  return rest.find('\0') == std::string_view::npos && simdjson::validate_utf8(rest.data(), rest.size());
}

std::string c_text(std::string_view bytes) {
  if (is_c_text(bytes)) return std::string(bytes);
  std::string cleaned = without_surrogates(bytes, false), storage;
  return std::string(js::decode_lossy(cleaned, storage));
}

std::string utf8_text(std::string_view bytes) {
  if (simdjson::validate_utf8(bytes.data(), bytes.size())) return std::string(bytes);
  std::string cleaned = without_surrogates(bytes, true), storage;
  return std::string(js::decode_lossy(cleaned, storage));
}

std::string c_text_capped(std::string_view bytes, std::size_t max_bytes) {
  if (bytes.size() <= max_bytes) return c_text(bytes);
  // Back off to the start of a character (a lead byte or ASCII) so the cut splits none.
  std::size_t cut = max_bytes;
  for (int back = 0; back < 3 && cut > 0 && continuation(static_cast<unsigned char>(bytes[cut])); ++back) --cut;
  std::string out = c_text(bytes.substr(0, cut));
  out.append(fmt::format(" [cut: {} more bytes]", bytes.size() - cut));
  return out;
}

}  // namespace leasejudge
