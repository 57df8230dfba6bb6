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

// begins grown to hold a text of n bytes, geometrically (a run of reads allocates
// O(log size) times), never shrunk: most texts need no change of size at all. What it
// held is left to be written over. Returns the words the text's bits take.
std::size_t size_begins(std::vector<std::uint64_t>& begins, std::size_t n) {
  const std::size_t words = (n + 63) / 64;
  if (begins.size() < words) begins.resize(std::max(words, 2 * begins.size()));
  return words;
}

// escapes_valid (step_json.hpp): memchr from one backslash to the next. A backslash is
// valid only inside a string, so once stage 1 has found the strings, one scan of the
// whole text checks every escape of every string: one outside a string breaks the
// grammar as a scalar would.
bool escapes_valid_search(const char* p, const char* e, std::vector<std::uint64_t>& begins) {
  const auto n = static_cast<std::size_t>(e - p);
  std::fill_n(begins.begin(), size_begins(begins, n), 0);
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
#define LJ_AVX512 __attribute__((target("avx512f,avx512bw")))
// The 64 bytes at p + i of a text of n bytes, those past n read as 0 (and not read).
LJ_AVX512 inline __m512i block_at(const char* p, std::size_t n, std::size_t i) noexcept {
  if (i + 64 <= n) return _mm512_loadu_si512(p + i);
  const std::size_t left = i < n ? n - i : 0;
  return _mm512_maskz_loadu_epi8((__mmask64{1} << left) - 1, p + i);
}
LJ_AVX512 inline std::uint64_t backslashes(const __m512i& x) noexcept {
  return _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\\'));
}

// What a byte may be in an escape, as bits: looked up by its high nibble and by its low
// one (a table of 16 each, in every 16-byte lane), the two answers and-ed. Bits 0-3: a
// letter of an escape but u ("/ \\ bfn rt: one bit for each high nibble, 2, 5, 6, 7),
// bit 4: u, bit 5: a decimal digit, bit 6: a hex letter (A-F, a-f). A byte from 0x80 has a
// high nibble whose entry is 0.
constexpr std::uint8_t escape_letter = 0x0F, letter_u = 0x10, hex_digit = 0x60;
LJ_AVX512 inline __m512i escape_classes(const __m512i& x) noexcept {
  // One 16-byte lane of each table, repeated in the four lanes. Its bytes, by the high
  // nibble: 0, 0, 01, 20, 40, 02, 44, 18, then 0s; by the low nibble: 20, 60, 6D, 60, 68,
  // 70, 64, 20, 20, 20, 0, 0, 02, 0, 04, 01.
  constexpr std::uint64_t high_lo = 0x1844024020010000, high_hi = 0;
  constexpr std::uint64_t low_lo = 0x20647068606D6020, low_hi = 0x0104000200002020;
  const __m512i by_high = _mm512_set_epi64(high_hi, high_lo, high_hi, high_lo, high_hi, high_lo, high_hi, high_lo);
  const __m512i by_low = _mm512_set_epi64(low_hi, low_lo, low_hi, low_lo, low_hi, low_lo, low_hi, low_lo);
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i high = _mm512_and_si512(_mm512_srli_epi16(x, 4), nibble);
  return _mm512_and_si512(_mm512_shuffle_epi8(by_high, high), _mm512_shuffle_epi8(by_low, _mm512_and_si512(x, nibble)));
}
LJ_AVX512 inline std::uint64_t classed(const __m512i& classes, std::uint8_t which) noexcept {
  return _mm512_test_epi8_mask(classes, _mm512_set1_epi8(static_cast<char>(which)));
}

// One block of escapes_valid_avx512 (below): the 64 bytes at p + i, x, whose backslashes
// are slashes, carry 1 when the block before escapes x's first byte. Sets where its
// escapes begin and carry for the next block; false when one is not Go's.
//   - In a run of backslashes, every other one begins an escape, counting from the run's
//     first (a backslash that the block before escapes begins nothing). Subtracting the
//     run from the odd bits' borrow tells both: which begin one (begins) and which bytes
//     an escape's letter is (letters).
//   - A letter is one of "\\/bfnrt or u; a u is followed by four hex digits, which may lie
//     in the next block's first four bytes (read only then).
//   - A backslash that begins an escape at bit 63 escapes the next block's first byte.
LJ_AVX512 inline bool escape_block(const char* p, std::size_t n, std::size_t i, const __m512i& x, std::uint64_t slashes,
                                   std::uint64_t& carry, std::uint64_t& begins) noexcept {
  constexpr std::uint64_t odd = 0xAAAAAAAAAAAAAAAAULL;
  const std::uint64_t lead = slashes & ~carry;
  const std::uint64_t code = (((lead << 1) | odd) - lead) ^ odd;
  const std::uint64_t escape_begins = code & slashes;
  const std::uint64_t letters = code ^ (slashes | carry);
  const __m512i classes = escape_classes(x);
  const std::uint64_t u = letters & classed(classes, letter_u);
  if ((letters & ~(classed(classes, escape_letter) | u)) != 0) return false;
  if (u != 0) {
    // The bits whose next four bytes are hex digits, the next block's first four included.
    const std::uint64_t hex = classed(classes, hex_digit);
    const std::uint64_t next = (u >> 60) != 0 ? classed(escape_classes(block_at(p, n, i + 64)), hex_digit) : 0;
    const std::uint64_t four =
        (hex >> 1 | next << 63) & (hex >> 2 | next << 62) & (hex >> 3 | next << 61) & (hex >> 4 | next << 60);
    if ((u & ~four) != 0) return false;
  }
  begins = escape_begins;
  carry = escape_begins >> 63;
  return true;
}

// The same as escapes_valid_search with AVX-512BW, where the processor has it, 64 bytes a
// block (the last loaded under a mask: nothing past e is read, and what is not read is a 0,
// which is no part of an escape). A block with no backslash, and none escaping its first
// byte, is passed over; any other is checked as masks, whatever its escapes, since a
// branch an escape costs more than the block (escape_block). After the last block, a
// backslash would escape nothing.
LJ_AVX512 bool escapes_valid_avx512(const char* p, const char* e, std::vector<std::uint64_t>& begins) {
  const auto n = static_cast<std::size_t>(e - p);
  const std::size_t words = size_begins(begins, n);
  std::uint64_t* out = begins.data();
  std::uint64_t carry = 0;  // 1: the block's first byte is an escape's letter
  for (std::size_t w = 0; w < words; ++w) {
    const __m512i x = block_at(p, n, w * 64);
    const std::uint64_t slashes = backslashes(x);
    if ((slashes | carry) == 0) {
      out[w] = 0;
    } else if (!escape_block(p, n, w * 64, x, slashes, carry, out[w])) {
      return false;
    }
  }
  return carry == 0;
}
#undef LJ_AVX512
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
  std::size_t escape_words = 0;        // escapes' words that are the last text's
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
  m.escape_words = 0;
  if (e != simdjson::SUCCESS) return e == simdjson::UTF8_ERROR ? Found::bad_utf8 : Found::invalid;
  // The escapes' words are written over the last text's (none is cleared first) and grow
  // as the tokens do, geometrically: no allocation a text.
  bool valid;
  try {
    valid = escapes_valid(text, text + len, m.escapes, m.scan);
  } catch (const std::bad_alloc&) {
    valid = false;
  }
  if (!valid) return Found::invalid;
  m.escape_words = (len + 63) / 64;
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
  return std::span<const std::uint64_t>(impl_->escapes).first(impl_->escape_words);
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
