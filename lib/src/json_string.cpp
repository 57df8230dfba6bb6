// JSON string bodies unescaped (json_string.hpp).
#include "json_string.hpp"

namespace leasejudge::json_string {

namespace {

int hex_value(unsigned char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of the \uXXXX at body[i] (body[i] == '\\'), or -1.
long code_unit_at(std::string_view body, std::size_t i) noexcept {
  if (body.size() - i < 6 || body[i] != '\\' || body[i + 1] != 'u') return -1;
  long v = 0;
  for (std::size_t k = 2; k < 6; ++k) {
    int h = hex_value(static_cast<unsigned char>(body[i + k]));
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

constexpr std::string_view replacement = "\xEF\xBF\xBD";

}  // namespace

int utf8_width(const unsigned char* p, const unsigned char* end) noexcept {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  auto cont = [&](std::ptrdiff_t i, unsigned char lo, unsigned char hi) {
    return p + i < end && p[i] >= lo && p[i] <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(1, 0x80, 0xBF) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0, 0xBF) && cont(2, 0x80, 0xBF) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  return 0;
}

std::uint32_t utf8_decode(const unsigned char* p, int width) noexcept {
  switch (width) {
    case 1:
      return p[0];
    case 2:
      return (std::uint32_t(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
    case 3:
      return (std::uint32_t(p[0] & 0x0F) << 12) | (std::uint32_t(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    default:
      return (std::uint32_t(p[0] & 0x07) << 18) | (std::uint32_t(p[1] & 0x3F) << 12) |
             (std::uint32_t(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
  }
}

void append_code_point(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool append_unescaped(std::string_view body, std::string& out, LoneSurrogate lone) {
  const std::size_t n = body.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(body.data());
  std::size_t i = 0;
  while (i < n) {
    unsigned char c = bytes[i];
    if (c >= 0x20 && c < 0x80 && c != '\\') {
      // A run of plain ASCII goes in one append.
      std::size_t j = i + 1;
      while (j < n && bytes[j] >= 0x20 && bytes[j] < 0x80 && bytes[j] != '\\') ++j;
      out.append(body.data() + i, j - i);
      i = j;
      continue;
    }
    if (c < 0x20) return false;
    if (c >= 0x80) {
      int w = utf8_width(bytes + i, bytes + n);
      if (w == 0) {
        out.append(replacement);
        ++i;
      } else {
        out.append(body.data() + i, static_cast<std::size_t>(w));
        i += static_cast<std::size_t>(w);
      }
      continue;
    }
    if (i + 1 >= n) return false;
    char e = body[i + 1];
    switch (e) {
      case '"':
      case '\\':
      case '/':
        out.push_back(e);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        long unit = code_unit_at(body, i);
        if (unit < 0) return false;
        i += 6;
        if (unit >= 0xD800 && unit < 0xE000) {
          long low = unit < 0xDC00 && i < n ? code_unit_at(body, i) : -1;
          if (low >= 0xDC00 && low < 0xE000) {
            append_code_point(out, 0x10000 + ((std::uint32_t(unit) - 0xD800) << 10) + (std::uint32_t(low) - 0xDC00));
            i += 6;
            continue;
          }
          // A lone surrogate; an escape after it is read for itself.
          if (lone == LoneSurrogate::replace) {
            out.append(replacement);
            continue;
          }
        }
        append_code_point(out, static_cast<std::uint32_t>(unit));
        continue;
      }
      default:
        return false;
    }
    i += 2;
  }
  return true;
}

}  // namespace leasejudge::json_string
