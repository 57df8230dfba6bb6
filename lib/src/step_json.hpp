// Go's encoding/json, where the step rules need its exact behaviour and simdjson's
// differs. Private to lib/ (step_json.cpp holds the token checks).
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
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "json_string.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace leasejudge::step_json {

// Go's scanner refuses a value nested deeper than this (arrays and objects together).
inline constexpr int go_max_depth = 10000;

inline bool is_ws(unsigned char c) noexcept {
  constexpr std::uint64_t ws = (1ULL << ' ') | (1ULL << '\t') | (1ULL << '\n') | (1ULL << '\r');
  return c <= ' ' && ((ws >> c) & 1) != 0;
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

using json_string::utf8_decode;
using json_string::utf8_width;

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

// Append Go's decoding of a string body [b, e) (between the quotes, checked already):
// escapes undone, a lone surrogate and each byte of invalid UTF-8 as U+FFFD. Grows out by
// at most 3 * (e - b) bytes.
inline void unquote_append(const char* b, const char* e, std::string& out) {
  json_string::append_unescaped(std::string_view(b, static_cast<std::size_t>(e - b)), out,
                                json_string::LoneSurrogate::replace);
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

// --- values, token by token ------------------------------------------------------

// The tokens of a text as simdjson's stage 1 finds them: the offset of each structural
// character ({ } [ ] , :), of each string's opening quote and of each other scalar's
// first byte. Stage 1 also checks that the text is UTF-8, that every string is closed
// and holds no raw byte below 0x20; index() adds the escapes (one scan for backslashes
// over the whole text: outside a string a backslash breaks the grammar anyway). The
// rest of Go's grammar is checked over the tokens: a string is then valid as it is, a
// number or a literal is read again. White space never makes a token of its own, and a
// byte glued to a scalar belongs to it, so a scalar is all the bytes up to the next
// token, white space off its end; a string is its quotes and what they enclose.
//
// The index is read from simdjson's dom_parser_implementation (its stage 1 entry point,
// internal to simdjson but in its public header): On-Demand, simdjson's public way to
// it, skips what it does not read without checking it and rescans the document when a
// `}` follows the value, so a checked value would be read three times.
class Tokens {
 public:
  Tokens();
  ~Tokens();
  Tokens(Tokens&&) noexcept;
  Tokens& operator=(Tokens&&) noexcept;
  Tokens(const Tokens&) = delete;
  Tokens& operator=(const Tokens&) = delete;

  enum class Found : std::uint8_t {
    ok,
    bad_utf8,  // the text is not UTF-8 (Go takes that inside strings: mask_invalid_utf8)
    invalid,   // an unclosed string, a raw control byte or a bad escape in one, no token, no memory
  };
  // Index text[0, len), len < 4 GiB. No padding needed: stage 1 copies its last block.
  // The index grows geometrically, so a run of reads allocates O(log size) times.
  Found index(const char* text, std::size_t len) noexcept;
  // The same as Go reads a text: where it is not UTF-8 (Go takes that inside strings, as
  // U+FFFD), a copy with the bad bytes masked (mask_invalid_utf8) is indexed and masked
  // set; the strings are still to be decoded from text itself.
  Found index_go(const char* text, std::size_t len, bool& masked);
  const std::uint32_t* offsets() const noexcept;  // offsets()[count()] is the text's length
  std::uint32_t count() const noexcept;
  // Where the escapes of the text indexed last begin (their backslashes): one bit a byte,
  // byte k at bit k % 64 of word k / 64, (len + 63) / 64 words; empty after an index
  // that failed.
  std::span<const std::uint64_t> escapes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How Tokens::index looks for the escapes: memchr from one to the next, or 64 bytes at a
// time with AVX-512BW, where the processor has it (the default then): each block's
// escapes found and checked as masks, with no branch an escape. Both answer the same;
// tests compare them.
enum class EscapeScan : std::uint8_t { search, avx512 };
bool escape_scan_available(EscapeScan how) noexcept;
// Are the escapes of [p, e) Go's (after stage 1: a backslash outside a string breaks the
// grammar anyway)? Where each begins is set in begins' first (e - p + 63) / 64 words, one
// bit a byte (Tokens::escapes); begins only grows (never to fewer words than that, and
// geometrically), so its words past those are left as they were. What begins holds after
// a bad one is unspecified.
bool escapes_valid(const char* p, const char* e, std::vector<std::uint64_t>& begins, EscapeScan how);

inline constexpr std::uint32_t no_token = 0xFFFFFFFFu;

// A text and its tokens, for the checks below.
struct TokenText {
  const char* text = nullptr;
  const std::uint32_t* tok = nullptr;  // tok[n] is the text's length
  std::uint32_t n = 0;
  // Where the text's escapes begin (Tokens::escapes of the text at this text's offset 0),
  // when known; else they are looked for.
  const std::uint64_t* escape_bits = nullptr;
  bool escapes_known = false;

  void know_escapes(std::span<const std::uint64_t> begins) noexcept {
    escape_bits = begins.data();
    escapes_known = true;
  }
  // Does an escape begin in [b, e)? The bits of the words it covers (a string the rules
  // read: one or two).
  bool escape_within(std::uint32_t b, std::uint32_t e) const noexcept {
    if (!escapes_known) return escape_found(b, e);
    if (b >= e) return false;
    const std::uint32_t first = b >> 6, last = (e - 1) >> 6;
    const std::uint64_t from = ~std::uint64_t{0} << (b & 63);
    const std::uint64_t to = ~std::uint64_t{0} >> (63 - ((e - 1) & 63));
    if (first == last) return (escape_bits[first] & from & to) != 0;
    if ((escape_bits[first] & from) != 0) return true;
    for (std::uint32_t w = first + 1; w < last; ++w)
      if (escape_bits[w] != 0) return true;
    return (escape_bits[last] & to) != 0;
  }
  bool escape_found(std::uint32_t b, std::uint32_t e) const noexcept;  // the bytes scanned

  // The first byte of token i < n: its kind.
  char at(std::uint32_t i) const noexcept { return text[tok[i]]; }
  // Where the scalar or string at token i ends: the next token, white space off.
  std::uint32_t end_of(std::uint32_t i) const noexcept {
    std::uint32_t e = tok[i + 1];
    while (e > tok[i] && is_ws(static_cast<unsigned char>(text[e - 1]))) --e;
    return e;
  }
};

// A string token: its body [begin, end) between the quotes.
struct StringToken {
  std::uint32_t begin = 0, end = 0;
  bool escaped = false;  // holds a backslash: decode it
};

// Is token i a string (of a text index() took)? Its body and whether it must be decoded.
// Without find_escapes, escaped is left false (for text read raw, as Go reads times).
bool string_token(const TokenText& t, std::uint32_t i, StringToken& out, bool find_escapes = true) noexcept;

// Is [b, e) exactly one JSON number, or the literal word? (a scalar token's bytes)
inline bool is_number(const char* b, const char* e) noexcept {
  return scan_number(b, e) == e;
}
inline bool is_literal(const char* b, const char* e, std::string_view word) noexcept {
  return static_cast<std::size_t>(e - b) == word.size() && std::memcmp(b, word.data(), word.size()) == 0;
}

// Check the one JSON value at token i as Go's scanner would, `outer` containers deep
// already. With float_check (Go reads numbers into `any`), a number beyond a float64
// sets *float_bad and the check goes on to the value's end. Returns the token after the
// value, or no_token. Iterative: a 10000-deep value costs no stack.
std::uint32_t check_tokens(const TokenText& t, std::uint32_t i, int outer, bool float_check, NestStack& nest,
                           bool* float_bad = nullptr) noexcept;

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

// Does s need no escape as json.Marshal writes it (printable ASCII but " \\ < > &)?
inline bool plain_json(std::string_view s) noexcept {
  auto plain = [](unsigned char c) {
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
  };
#if defined(__SSE2__)
  if (s.size() >= 16) {
    auto special = [](const char* p) {
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      __m128i hit = _mm_or_si128(
          _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('<')), _mm_cmpeq_epi8(x, _mm_set1_epi8('>'))),
                       _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('&')),
                                    _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x))));
      return (_mm_movemask_epi8(hit) | _mm_movemask_epi8(x)) != 0;
    };
    const char* p = s.data();
    const char* end = p + s.size();
    for (; end - p >= 16; p += 16)
      if (special(p)) return false;
    return p == end || !special(end - 16);  // the tail, in a last block that overlaps
  }
#endif
  for (char c : s)
    if (!plain(static_cast<unsigned char>(c))) return false;
  return true;
}

// Append s as json.Marshal writes a Go string: quoted, with <, > and & as \u003c,
// \u003e, \u0026, control bytes as \n \r \t or \u00XX, U+2028 and U+2029 escaped, and
// each byte of invalid UTF-8 as \ufffd.
inline void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  auto plain = [](unsigned char c) {
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
  };
  while (p < end) {
    unsigned char c = *p;
    if (plain(c)) {  // a run that needs no escape goes in one append
      const unsigned char* q = p + 1;
#if defined(__SSE2__)
      // 16 bytes at a time: stop at a byte below 0x20 or above 0x7F, or " \\ < > &.
      while (end - q >= 16) {
        __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
        __m128i special = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('<')), _mm_cmpeq_epi8(x, _mm_set1_epi8('>'))),
                         _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('&')),
                                      _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x))));
        auto m = static_cast<unsigned>(_mm_movemask_epi8(special) | _mm_movemask_epi8(x));
        if (m != 0) {
          q += __builtin_ctz(m);
          break;
        }
        q += 16;
      }
#endif
      while (q < end && plain(*q)) ++q;
      out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(q - p));
      p = q;
      continue;
    }
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
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
