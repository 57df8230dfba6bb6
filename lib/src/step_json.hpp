// Go's encoding/json, where the step rules need its exact behaviour and simdjson's
// differs. Private to lib/.
//
// simdjson On-Demand finds the structure of a value (stage 1: UTF-8, string bounds,
// unescaped control characters, then the tokens), but it does not check what it
// skips, and what it checks is not always what Go accepts:
//   - Go accepts invalid UTF-8 inside strings (each bad byte reads as U+FFFD) and lone
//     UTF-16 surrogates in \u escapes (U+FFFD too); simdjson refuses both.
//   - Go's scanner checks every byte of the input (escapes, number grammar, literals,
//     brackets) and nests at most 10000 deep; On-Demand skips unread values unchecked.
//   - Go reads numbers into `any` as float64: one that overflows is an error, one that
//     underflows is 0 (strconv.ParseFloat).
// So the grammar checks below are written out: they are Go's scanner (scanner.go), its
// unquote (decode.go) and its string encoder (encode.go), not a JSON parser of ours.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace leasejudge::step_json {

// Go's scanner refuses a value nested deeper than this (arrays and objects together).
inline constexpr int go_max_depth = 10000;

inline bool is_ws(unsigned char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
inline bool is_digit(unsigned char c) noexcept {
  return c >= '0' && c <= '9';
}
inline bool is_hex(unsigned char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline int hex_value(unsigned char c) noexcept {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

inline const char* skip_ws(const char* p, const char* end) noexcept {
  while (p < end && is_ws(static_cast<unsigned char>(*p))) ++p;
  return p;
}

// The length of the valid UTF-8 sequence at p as Go's utf8.DecodeRune takes it, or 0
// when the byte at p begins none (Go then reads that one byte as U+FFFD).
inline int utf8_width(const unsigned char* p, const unsigned char* end) noexcept {
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

inline std::uint32_t utf8_decode(const unsigned char* p, int width) noexcept {
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

inline void utf8_append(std::string& out, std::uint32_t r) {
  if (r < 0x80) {
    out.push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (r >> 6)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (r >> 12)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (r >> 18)));
    out.push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

// Replace every byte that begins no valid UTF-8 sequence with 0x7F, in place. The
// result has the same length and the same JSON structure for Go (a byte >= 0x80 is
// only valid inside a string, and so is 0x7F), and simdjson accepts it. Strings are
// then decoded from the original bytes at the same offsets.
inline void mask_invalid_utf8(char* b, std::size_t n) noexcept {
  auto* p = reinterpret_cast<unsigned char*>(b);
  auto* end = p + n;
  while (p < end) {
    if (*p < 0x80) {
      ++p;
      continue;
    }
    int w = utf8_width(p, end);
    if (w == 0) {
      *p++ = 0x7F;
      continue;
    }
    p += w;
  }
}

// --- strings -------------------------------------------------------------------

struct StringScan {
  const char* end = nullptr;  // past the closing quote
  bool escaped = false;       // holds a backslash: must be decoded
  bool non_ascii = false;     // holds a byte >= 0x80: must be decoded (U+FFFD)
};

// Check the string whose opening quote is at p as Go's scanner does (escapes, no
// control byte) and find its end. False on any error, including no closing quote.
// Most bytes of a value sit in strings: runs without a quote, a backslash or a
// control byte are passed 16 bytes at a time (SSE2, in every x86-64) or 8 (SWAR).
inline bool scan_string(const char* p, const char* end, StringScan& out) noexcept {
  const char* q = p + 1;
  bool escaped = false, non_ascii = false;
  for (;;) {
#if defined(__SSE2__)
    {
      const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
      unsigned high = 0;
      while (end - q >= 16) {
        __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                   _mm_cmpeq_epi8(_mm_min_epu8(x, control), x));
        auto m = static_cast<unsigned>(_mm_movemask_epi8(hit));
        auto h = static_cast<unsigned>(_mm_movemask_epi8(x));
        if (m == 0) {
          high |= h;
          q += 16;
          continue;
        }
        unsigned first = static_cast<unsigned>(__builtin_ctz(m));
        high |= h & ((1u << first) - 1);
        q += first;
        break;
      }
      if (high != 0) non_ascii = true;
    }
#else
    {
      constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
      std::uint64_t seen = 0;
      while (end - q >= 8) {
        std::uint64_t x;
        std::memcpy(&x, q, 8);
        std::uint64_t qx = x ^ (ones * '"'), bx = x ^ (ones * '\\');
        std::uint64_t hit = ((qx - ones) & ~qx) | ((bx - ones) & ~bx) | ((x - ones * 0x20) & ~x);
        if (hit & highs) break;
        seen |= x;
        q += 8;
      }
      if (seen & highs) non_ascii = true;
    }
#endif
    if (q >= end) return false;
    unsigned char c = static_cast<unsigned char>(*q);
    if (c == '"') {
      out.end = q + 1;
      out.escaped = escaped;
      out.non_ascii = non_ascii;
      return true;
    }
    if (c == '\\') {
      escaped = true;
      if (end - q < 2) return false;
      switch (q[1]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          q += 2;
          continue;
        case 'u':
          if (end - q < 6) return false;
          for (int i = 2; i < 6; ++i)
            if (!is_hex(static_cast<unsigned char>(q[i]))) return false;
          q += 6;
          continue;
        default:
          return false;
      }
    }
    if (c < 0x20) return false;
    if (c >= 0x80) non_ascii = true;
    ++q;
  }
}

// Go's getu4: the \uXXXX at p (p[0] == '\\'), or -1.
inline int getu4(const char* p, const char* end) noexcept {
  if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return -1;
  int r = 0;
  for (int i = 2; i < 6; ++i) {
    auto c = static_cast<unsigned char>(p[i]);
    if (!is_hex(c)) return -1;
    r = r * 16 + hex_value(c);
  }
  return r;
}

// Append Go's decoding of a string body [b, e) (between the quotes, already checked by
// scan_string) to out: escapes undone, a lone surrogate and each byte of invalid UTF-8
// as U+FFFD. Grows out by at most 3 * (e - b) bytes.
inline void unquote_append(const char* b, const char* e, std::string& out) {
  const char* p = b;
  while (p < e) {
    auto c = static_cast<unsigned char>(*p);
    if (c == '\\') {
      char k = p[1];
      p += 2;
      switch (k) {
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
          int r = getu4(p - 2, e);
          p += 4;
          if (r >= 0xD800 && r < 0xE000) {
            int r2 = getu4(p, e);
            if (r < 0xDC00 && r2 >= 0xDC00 && r2 < 0xE000) {
              utf8_append(out, 0x10000 + ((std::uint32_t(r) - 0xD800) << 10) + (std::uint32_t(r2) - 0xDC00));
              p += 6;
              break;
            }
            r = 0xFFFD;
          }
          utf8_append(out, static_cast<std::uint32_t>(r));
          break;
        }
        default:
          out.push_back(k);
          break;  // " \ /
      }
      continue;
    }
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++p;
      continue;
    }
    int w = utf8_width(reinterpret_cast<const unsigned char*>(p), reinterpret_cast<const unsigned char*>(e));
    if (w == 0) {
      out.append("\xEF\xBF\xBD");
      ++p;
    } else {
      out.append(p, static_cast<std::size_t>(w));
      p += w;
    }
  }
}

// --- numbers and literals ----------------------------------------------------------

// The end of the JSON number at p (Go's grammar), or nullptr.
inline const char* scan_number(const char* p, const char* end) noexcept {
  if (p < end && *p == '-') ++p;
  if (p >= end) return nullptr;
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    while (p < end && is_digit(static_cast<unsigned char>(*p))) ++p;
  } else {
    return nullptr;
  }
  if (p < end && *p == '.') {
    ++p;
    if (p >= end || !is_digit(static_cast<unsigned char>(*p))) return nullptr;
    while (p < end && is_digit(static_cast<unsigned char>(*p))) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p >= end || !is_digit(static_cast<unsigned char>(*p))) return nullptr;
    while (p < end && is_digit(static_cast<unsigned char>(*p))) ++p;
  }
  return p;
}

// Does strconv.ParseFloat(number, 64) succeed? It fails only when the value rounds
// beyond the largest double (underflow gives 0 without error). from_chars reports
// both directions as out of range, so the decimal magnitude tells them apart: at the
// edges it is >= 308 for an overflow and <= -308 for an underflow.
inline bool float_fits(const char* b, const char* e) noexcept {
  double v = 0;
  auto r = std::from_chars(b, e, v);
  if (r.ec == std::errc()) return true;
  if (r.ec != std::errc::result_out_of_range) return false;
  const char* p = b;
  if (p < e && *p == '-') ++p;
  long long mag = 0;
  bool nonzero = false;
  long long int_digits = 0;
  while (p < e && is_digit(static_cast<unsigned char>(*p))) {
    if (*p != '0' || nonzero) {
      nonzero = true;
      ++int_digits;
    }
    ++p;
  }
  if (nonzero) {
    mag = int_digits - 1;
  } else if (p < e && *p == '.') {
    long long zeros = 0;
    ++p;
    while (p < e && *p == '0') {
      ++zeros;
      ++p;
    }
    if (p < e && is_digit(static_cast<unsigned char>(*p))) {
      nonzero = true;
      mag = -(zeros + 1);
    }
  }
  if (!nonzero) return true;  // zero never leaves the range
  while (p < e && *p != 'e' && *p != 'E') ++p;
  long long ex = 0;
  if (p < e) {
    ++p;
    bool neg = false;
    if (p < e && (*p == '+' || *p == '-')) {
      neg = *p == '-';
      ++p;
    }
    while (p < e && is_digit(static_cast<unsigned char>(*p))) {
      if (ex < 1000000000LL) ex = ex * 10 + (*p - '0');
      ++p;
    }
    if (neg) ex = -ex;
  }
  return mag + ex < 0;
}

// The end of the literal word at p when it is exactly `word`, or nullptr.
inline const char* scan_literal(const char* p, const char* end, std::string_view word) noexcept {
  if (static_cast<std::size_t>(end - p) < word.size() || std::memcmp(p, word.data(), word.size()) != 0) return nullptr;
  return p + word.size();
}

// --- whole values ----------------------------------------------------------------

// The open containers of a value being checked: one bit each (1: array), as deep as
// Go allows. Lives in the reader, so checking allocates nothing.
struct NestStack {
  std::uint64_t bits[go_max_depth / 64 + 1];
  void set(int depth, bool array) noexcept {
    auto i = static_cast<unsigned>(depth);
    if (array)
      bits[i >> 6] |= (1ULL << (i & 63));
    else
      bits[i >> 6] &= ~(1ULL << (i & 63));
  }
  bool array_at(int depth) const noexcept {
    auto i = static_cast<unsigned>(depth);
    return (bits[i >> 6] >> (i & 63)) & 1;
  }
};

// Check the one JSON value that begins at p (no white space before it) as Go's
// scanner would, `outer` containers deep already; numbers must also fit a float64
// when float_check (Go reads them into `any`). Returns the end of the value, or
// nullptr. Iterative: a 10000-deep value costs no stack.
inline const char* check_value(const char* p, const char* end, int outer, bool float_check, NestStack& nest) noexcept {
  const int budget = go_max_depth - outer;
  int depth = 0;
  StringScan s;
value:
  if (p >= end) return nullptr;
  switch (*p) {
    case '{':
      if (++depth > budget) return nullptr;
      nest.set(depth, false);
      p = skip_ws(p + 1, end);
      if (p < end && *p == '}') {
        ++p;
        --depth;
        goto after;
      }
      goto key;
    case '[':
      if (++depth > budget) return nullptr;
      nest.set(depth, true);
      p = skip_ws(p + 1, end);
      if (p < end && *p == ']') {
        ++p;
        --depth;
        goto after;
      }
      goto value;
    case '"':
      if (!scan_string(p, end, s)) return nullptr;
      p = s.end;
      goto after;
    case 't':
      p = scan_literal(p, end, "true");
      break;
    case 'f':
      p = scan_literal(p, end, "false");
      break;
    case 'n':
      p = scan_literal(p, end, "null");
      break;
    default: {
      const char* b = p;
      p = scan_number(p, end);
      if (p != nullptr && float_check && !float_fits(b, p)) return nullptr;
      break;
    }
  }
  if (p == nullptr) return nullptr;
after:
  if (depth == 0) return p;
  p = skip_ws(p, end);
  if (p >= end) return nullptr;
  if (*p == ',') {
    p = skip_ws(p + 1, end);
    if (nest.array_at(depth)) goto value;
    goto key;
  }
  if (*p == (nest.array_at(depth) ? ']' : '}')) {
    ++p;
    --depth;
    goto after;
  }
  return nullptr;
key:
  if (p >= end || *p != '"' || !scan_string(p, end, s)) return nullptr;
  p = skip_ws(s.end, end);
  if (p >= end || *p != ':') return nullptr;
  p = skip_ws(p + 1, end);
  goto value;
}

// --- field names ---------------------------------------------------------------

// Does a decoded object key name the field `name` (ASCII lowercase) as encoding/json
// matches names: exactly, else under case folding. Go folds with Unicode simple case
// folding (bytes.EqualFold), under which only two non-ASCII runes fold to ASCII
// letters: the Kelvin sign U+212A to k and the long s U+017F to s; both are taken.
inline bool name_matches(std::string_view key, std::string_view name) noexcept {
  std::size_t i = 0, j = 0;
  while (i < key.size() && j < name.size()) {
    auto c = static_cast<unsigned char>(key[i]);
    char n = name[j];
    if (c < 0x80) {
      unsigned char lower = (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c + 32) : c;
      if (lower != static_cast<unsigned char>(n)) return false;
      ++i;
    } else if (n == 'k' && key.compare(i, 3, "\xE2\x84\xAA") == 0) {
      i += 3;
    } else if (n == 's' && key.compare(i, 2, "\xC5\xBF") == 0) {
      i += 2;
    } else {
      return false;
    }
    ++j;
  }
  return i == key.size() && j == name.size();
}

// --- writing -----------------------------------------------------------------------

// Append s as json.Marshal writes a Go string: quoted, with <, > and & as \u003c,
// \u003e, \u0026, control bytes as \n \r \t or \u00XX, U+2028 and U+2029 escaped, and
// each byte of invalid UTF-8 as \ufffd.
inline void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') {
        out.push_back(static_cast<char>(c));
      } else if (c == '"' || c == '\\') {
        out.push_back('\\');
        out.push_back(static_cast<char>(c));
      } else if (c == '\n') {
        out.append("\\n");
      } else if (c == '\r') {
        out.append("\\r");
      } else if (c == '\t') {
        out.append("\\t");
      } else {
        out.append("\\u00");
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 0xF]);
      }
      ++p;
      continue;
    }
    int w = utf8_width(p, end);
    if (w == 0) {
      out.append("\\ufffd");
      ++p;
      continue;
    }
    std::uint32_t r = utf8_decode(p, w);
    if (r == 0x2028 || r == 0x2029) {
      out.append(r == 0x2028 ? "\\u2028" : "\\u2029");
    } else {
      out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(w));
    }
    p += w;
  }
  out.push_back('"');
}

// --- Go's strings package, for messages ---------------------------------------------

// unicode.IsSpace.
inline bool is_go_space(std::uint32_t r) noexcept {
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

// strings.TrimSpace: Unicode white space off both ends (invalid UTF-8 is no space).
inline std::string_view trim_go_space(std::string_view s) noexcept {
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  const auto* e = b + s.size();
  while (b < e) {
    int w = utf8_width(b, e);
    if (w == 0 || !is_go_space(utf8_decode(b, w))) break;
    b += w;
  }
  while (e > b) {
    // Step back to the start of the last sequence.
    const unsigned char* q = e - 1;
    while (q > b && (*q & 0xC0) == 0x80 && e - q < 4) --q;
    int w = utf8_width(q, e);
    if (w == 0 || q + w != e || !is_go_space(utf8_decode(q, w))) break;
    e = q;
  }
  return std::string_view(reinterpret_cast<const char*>(b), static_cast<std::size_t>(e - b));
}

// Go's unicode.IsPrint, approximated without the Unicode tables: every valid rune is
// printable except the ASCII and C1 controls, the spaces other than U+0020, and the
// common format characters (soft hyphen, zero-width and direction marks, the line and
// paragraph separators, the byte-order mark). An unassigned rune, which Go escapes,
// is written as it is here; only error messages use this.
inline bool is_go_print(std::uint32_t r) noexcept {
  if (r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0xA0) || r == 0xAD) return false;
  if (r == 0x1680 || (r >= 0x2000 && r <= 0x200F) || (r >= 0x2028 && r <= 0x202F)) return false;
  if ((r >= 0x205F && r <= 0x2064) || r == 0x3000 || r == 0xFEFF || r == 0x061C) return false;
  if (r >= 0xFFF9 && r <= 0xFFFB) return false;
  return true;
}

// strconv.Quote (fmt's %q of a string).
inline std::string go_quote(std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    int w = utf8_width(p, end);
    if (w == 0) {
      out.append("\\x");
      out.push_back(hex[*p >> 4]);
      out.push_back(hex[*p & 0xF]);
      ++p;
      continue;
    }
    std::uint32_t r = utf8_decode(p, w);
    if (r == '"' || r == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(r));
    } else if (is_go_print(r)) {
      out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(w));
    } else {
      switch (r) {
        case '\a':
          out.append("\\a");
          break;
        case '\b':
          out.append("\\b");
          break;
        case '\f':
          out.append("\\f");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        case '\v':
          out.append("\\v");
          break;
        default:
          if (r < ' ' || r == 0x7F) {
            out.append("\\x");
            out.push_back(hex[r >> 4]);
            out.push_back(hex[r & 0xF]);
          } else if (r < 0x10000) {
            out.append("\\u");
            for (int sh = 12; sh >= 0; sh -= 4) out.push_back(hex[(r >> sh) & 0xF]);
          } else {
            out.append("\\U");
            for (int sh = 28; sh >= 0; sh -= 4) out.push_back(hex[(r >> sh) & 0xF]);
          }
      }
    }
    p += w;
  }
  out.push_back('"');
  return out;
}

}  // namespace leasejudge::step_json
