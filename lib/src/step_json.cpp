// Go's grammar over simdjson's stage 1 tokens (step_json.hpp).
#include "step_json.hpp"

#include <simdjson.h>

#include <algorithm>
#include <new>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace leasejudge::step_json {

namespace {

// The first backslash in [p, e), or e: 16 bytes at a time (SSE2, in every x86-64), inline,
// as most strings are short and a call would cost more than the scan. Bytes up to limit
// may be read (the text goes on after the string): a short tail is one more load.
inline const char* find_backslash(const char* p, const char* e, const char* limit) noexcept {
#if defined(__SSE2__)
  const __m128i backslash = _mm_set1_epi8('\\');
  while (p < e) {
    if (limit - p < 16) break;
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    auto m = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, backslash)));
    if (e - p < 16) m &= (1u << (e - p)) - 1;
    if (m != 0) return p + __builtin_ctz(m);
    p += 16;
  }
#else
  (void)limit;
#endif
  while (p < e && *p != '\\') ++p;
  return p < e ? p : e;
}

// Where the escape whose backslash is at p[k] of the n bytes at p ends, when it is Go's;
// else 0.
inline std::size_t escape_end(const char* p, std::size_t n, std::size_t k) noexcept {
  if (n - k < 2) return 0;
  switch (p[k + 1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      return k + 2;
    case 'u':
      if (n - k < 6) return 0;
      for (std::size_t j = 2; j < 6; ++j)
        if (!is_hex(static_cast<unsigned char>(p[k + j]))) return 0;
      return k + 6;
    default:
      return 0;
  }
}

// begins sized for a text of n bytes, grown geometrically (a run of reads allocates
// O(log size) times, though a failed read clears it); what it held is left to be
// written over.
void size_begins(std::vector<std::uint64_t>& begins, std::size_t n) {
  const std::size_t words = (n + 63) / 64;
  if (begins.capacity() < words) begins.reserve(std::max(words, 2 * begins.capacity()));
  begins.resize(words);
}

// escapes_valid (step_json.hpp): memchr from one backslash to the next. A backslash is
// valid only inside a string, so once stage 1 has found the strings, one scan of the
// whole text checks every escape of every string: one outside a string breaks the
// grammar as a scalar would.
bool escapes_valid_search(const char* p, const char* e, std::vector<std::uint64_t>& begins) {
  const auto n = static_cast<std::size_t>(e - p);
  size_begins(begins, n);
  std::fill(begins.begin(), begins.end(), 0);
  for (std::size_t i = 0; i < n;) {
    const void* hit = std::memchr(p + i, '\\', n - i);
    if (hit == nullptr) break;
    const auto k = static_cast<std::size_t>(static_cast<const char*>(hit) - p);
    begins[k >> 6] |= std::uint64_t{1} << (k & 63);
    if ((i = escape_end(p, n, k)) == 0) return false;
  }
  return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
// The 64 bytes at p + i of a text of n bytes, those past n read as 0 (and not read).
__attribute__((target("avx512f,avx512bw"))) inline __m512i block_at(const char* p, std::size_t n,
                                                                    std::size_t i) noexcept {
  const std::size_t left = i < n ? n - i : 0;
  return _mm512_maskz_loadu_epi8(left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1, p + i);
}
__attribute__((target("avx512f,avx512bw"))) inline std::uint64_t bytes_equal(const __m512i& x, char c) noexcept {
  return _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(c));
}
// The letters an escape may have but u: "\\/bfnrt.
__attribute__((target("avx512f,avx512bw"))) inline std::uint64_t simple_letters(const __m512i& x) noexcept {
  std::uint64_t m = 0;
  for (char c : {'"', '\\', '/', 'b', 'f', 'n', 'r', 't'}) m |= bytes_equal(x, c);
  return m;
}
__attribute__((target("avx512f,avx512bw"))) inline std::uint64_t hex_digits(const __m512i& x) noexcept {
  const __m512i digit = _mm512_sub_epi8(x, _mm512_set1_epi8('0'));
  const __m512i letter = _mm512_sub_epi8(_mm512_or_si512(x, _mm512_set1_epi8(0x20)), _mm512_set1_epi8('a'));
  return _mm512_cmplt_epu8_mask(digit, _mm512_set1_epi8(10)) | _mm512_cmplt_epu8_mask(letter, _mm512_set1_epi8(6));
}

// The same with AVX-512BW, where the processor has it, 64 bytes a block (the last loaded
// under a mask: nothing past e is read, and what is not read is a 0, which is no part of
// an escape). A block with no backslash, and none escaping its first byte, is passed
// over; any other is checked as masks, whatever its escapes, since a branch an escape
// costs more than the block:
//   - In a run of backslashes, every other one begins an escape, counting from the run's
//     first (a backslash that the block before escapes begins nothing). Subtracting the
//     run from the odd bits' borrow tells both: which begin one (begins) and which bytes
//     an escape's letter is (letters).
//   - A letter is one of "\\/bfnrt or u; a u is followed by four hex digits, which may lie
//     in the next block's first four bytes.
//   - A backslash that begins an escape at bit 63 escapes the next block's first byte;
//     after the last block, it would escape nothing.
__attribute__((target("avx512f,avx512bw"))) bool escapes_valid_avx512(const char* p, const char* e,
                                                                      std::vector<std::uint64_t>& begins) {
  const auto n = static_cast<std::size_t>(e - p);
  const std::size_t words = (n + 63) / 64;
  size_begins(begins, n);
  constexpr std::uint64_t odd = 0xAAAAAAAAAAAAAAAAULL;
  std::uint64_t carry = 0;  // 1: the block's first byte is an escape's letter
  for (std::size_t w = 0; w < words; ++w) {
    const std::size_t i = w * 64;
    const __m512i x = block_at(p, n, i);
    const std::uint64_t slashes = bytes_equal(x, '\\');
    if ((slashes | carry) == 0) {
      begins[w] = 0;
      continue;
    }
    const std::uint64_t lead = slashes & ~carry;
    const std::uint64_t code = (((lead << 1) | odd) - lead) ^ odd;
    const std::uint64_t escape_begins = code & slashes;
    const std::uint64_t letters = code ^ (slashes | carry);
    const std::uint64_t u = letters & bytes_equal(x, 'u');
    // The bits whose next four bytes are hex digits, the next block's first four included.
    const unsigned __int128 hex =
        hex_digits(x) | static_cast<unsigned __int128>(hex_digits(block_at(p, n, i + 64)) & 0xF) << 64;
    const auto four = static_cast<std::uint64_t>((hex >> 1) & (hex >> 2) & (hex >> 3) & (hex >> 4));
    if ((letters & ~(simple_letters(x) | u)) != 0 || (u & ~four) != 0) return false;
    begins[w] = escape_begins;
    carry = escape_begins >> 63;
  }
  return carry == 0;
}
#endif

}  // namespace

bool escape_scan_available(EscapeScan how) noexcept {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx512 = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f");
  return how == EscapeScan::search || avx512;
#else
  return how == EscapeScan::search;
#endif
}

bool escapes_valid(const char* p, const char* e, std::vector<std::uint64_t>& begins, EscapeScan how) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (how == EscapeScan::avx512 && escape_scan_available(how)) return escapes_valid_avx512(p, e, begins);
#endif
  (void)how;
  return escapes_valid_search(p, e, begins);
}

struct Tokens::Impl {
  std::unique_ptr<simdjson::internal::dom_parser_implementation> parser;
  std::size_t capacity = 0;
  std::unique_ptr<char[]> masked_copy;  // index_go's copy of a text that is not UTF-8
  std::size_t masked_capacity = 0;
  std::vector<std::uint64_t> escapes;  // where the escapes of the text indexed last begin, a bit a byte
  EscapeScan scan = escape_scan_available(EscapeScan::avx512) ? EscapeScan::avx512 : EscapeScan::search;
};

Tokens::Tokens() : impl_(std::make_unique<Impl>()) {}
Tokens::~Tokens() = default;
Tokens::Tokens(Tokens&&) noexcept = default;
Tokens& Tokens::operator=(Tokens&&) noexcept = default;

Tokens::Found Tokens::index(const char* text, std::size_t len) noexcept {
  if (len == 0 || len > simdjson::SIMDJSON_MAXSIZE_BYTES) return Found::invalid;
  Impl& m = *impl_;
  if (m.capacity < len) {
    std::size_t cap =
        std::min<std::size_t>(std::max<std::size_t>({len, 2 * m.capacity, 4096}), simdjson::SIMDJSON_MAXSIZE_BYTES);
    simdjson::error_code e = m.parser ? m.parser->set_capacity(cap)
                                      : simdjson::get_active_implementation()->create_dom_parser_implementation(
                                            cap, /*max_depth, for stage 2 only*/ 1, m.parser);
    if (e != simdjson::SUCCESS) {
      m.parser.reset();
      m.capacity = 0;
      return Found::invalid;
    }
    m.capacity = cap;
  }
  simdjson::error_code e =
      m.parser->stage1(reinterpret_cast<const std::uint8_t*>(text), len, simdjson::stage1_mode::regular);
  if (e != simdjson::SUCCESS) {
    m.escapes.clear();
    return e == simdjson::UTF8_ERROR ? Found::bad_utf8 : Found::invalid;
  }
  // The escapes' words are written over the last text's (none is cleared first) and grow
  // as the tokens do, geometrically: no allocation a text.
  bool valid;
  try {
    valid = escapes_valid(text, text + len, m.escapes, m.scan);
  } catch (const std::bad_alloc&) {
    valid = false;
  }
  if (!valid) {
    m.escapes.clear();
    return Found::invalid;
  }
  return Found::ok;
}

Tokens::Found Tokens::index_go(const char* text, std::size_t len, bool& masked) {
  masked = false;
  Found found = index(text, len);
  if (found != Found::bad_utf8) return found;
  Impl& m = *impl_;
  if (m.masked_capacity < len) {
    std::size_t cap = std::max(len, 2 * m.masked_capacity);
    m.masked_copy.reset(new char[cap]);
    m.masked_capacity = cap;
  }
  std::memcpy(m.masked_copy.get(), text, len);
  mask_invalid_utf8(m.masked_copy.get(), len);
  masked = true;
  return index(m.masked_copy.get(), len);
}

const std::uint32_t* Tokens::offsets() const noexcept {
  return impl_->parser ? impl_->parser->structural_indexes.get() : nullptr;
}

std::uint32_t Tokens::count() const noexcept {
  return impl_->parser ? impl_->parser->n_structural_indexes : 0;
}

std::span<const std::uint64_t> Tokens::escapes() const noexcept {
  return impl_->escapes;
}

bool TokenText::escape_found(std::uint32_t b, std::uint32_t e) const noexcept {
  return find_backslash(text + b, text + e, text + tok[n]) != text + e;
}

bool string_token(const TokenText& t, std::uint32_t i, StringToken& out, bool find_escapes) noexcept {
  std::uint32_t b = t.tok[i];
  if (t.text[b] != '"') return false;
  // The closing quote is the last byte before the next token but white space: a byte
  // after it would have been a token of its own.
  std::uint32_t e = t.end_of(i);
  if (e < b + 2 || t.text[e - 1] != '"') return false;
  out.begin = b + 1;
  out.end = e - 1;
  out.escaped = find_escapes && t.escape_within(b + 1, e - 1);
  return true;
}

namespace {

// The scalar at token i: exactly a literal word, or a number (that fits a float64 when
// float_check; one that does not sets *float_bad, or fails without it).
bool scalar_valid(const TokenText& t, std::uint32_t i, bool float_check, bool* float_bad) noexcept {
  const char* b = t.text + t.tok[i];
  const char* e = t.text + t.end_of(i);
  switch (*b) {
    case 't':
      return is_literal(b, e, "true");
    case 'f':
      return is_literal(b, e, "false");
    case 'n':
      return is_literal(b, e, "null");
    default:
      if (!is_number(b, e)) return false;
      if (float_check && !float_fits(b, e)) {
        if (float_bad == nullptr) return false;
        *float_bad = true;
      }
      return true;
  }
}

}  // namespace

std::uint32_t check_tokens(const TokenText& t, std::uint32_t i, int outer, bool float_check, NestStack& nest,
                           bool* float_bad) noexcept {
  const int budget = go_max_depth - outer;
  const std::uint32_t n = t.n;
  int depth = 0;
value:
  if (i >= n) return no_token;
  switch (t.at(i)) {
    case '{':
      if (++depth > budget) return no_token;
      nest.set(depth, false);
      if (++i < n && t.at(i) == '}') {
        ++i;
        --depth;
        goto after;
      }
      goto key;
    case '[':
      if (++depth > budget) return no_token;
      nest.set(depth, true);
      if (++i < n && t.at(i) == ']') {
        ++i;
        --depth;
        goto after;
      }
      goto value;
    case '"':  // a string: stage 1 found its bounds, index() checked its escapes
      ++i;
      goto after;
    case '}':
    case ']':
    case ',':
    case ':':
      return no_token;
    default:
      if (!scalar_valid(t, i, float_check, float_bad)) return no_token;
      ++i;
      goto after;
  }
after:
  if (depth == 0) return i;
  if (i >= n) return no_token;
  if (t.at(i) == ',') {
    ++i;
    if (nest.array_at(depth)) goto value;
    goto key;
  }
  if (t.at(i) == (nest.array_at(depth) ? ']' : '}')) {
    ++i;
    --depth;
    goto after;
  }
  return no_token;
key:
  if (i >= n || t.at(i) != '"') return no_token;
  if (++i >= n || t.at(i) != ':') return no_token;
  ++i;
  goto value;
}

}  // namespace leasejudge::step_json
