// Time for leasejudge: the two timestamp families (Go's RFC 3339 for steps, JS's ISO
// format for locks) and the clocks rules read now from.
//
// The readers are written byte by byte after the readers they stand in for (Go's
// time.Time.UnmarshalJSON, V8's ISO date-time reader), so that leasejudge reads a
// timestamp exactly when the seed would, and to the same instant. Where they can
// disagree with the seed we fall on "no readable time", which every rule treats as
// the safe side (held, never break).
#include "leasejudge/clock.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <limits>
#include <utility>

namespace leasejudge {
namespace {

constexpr std::int64_t sec_per_day = 86400;
constexpr std::int64_t ms_per_day = sec_per_day * 1000;

// Days since 1970-01-01 of a proleptic Gregorian date (year 0 exists, as in Go's and
// JS's calendars). Exact for every year an int64 day count can hold.
constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);                 // [0, 399]
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct CivilDate {
  std::int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
};

constexpr CivilDate civil_from_days(std::int64_t z) noexcept {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);                    // [0, 146096]
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);  // [0, 365]
  const unsigned mp = (5 * doy + 2) / 153;                       // [0, 11]
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;               // [1, 31]
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;                  // [1, 12]
  return CivilDate{y + (m <= 2 ? 1 : 0), m, d};
}

static_assert(days_from_civil(1970, 1, 1) == 0);
static_assert(days_from_civil(1, 1, 1) * sec_per_day == go_zero_time.sec);
static_assert(civil_from_days(-719162).year == 1);

constexpr bool is_leap(std::int64_t y) noexcept {
  return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

constexpr unsigned days_in(unsigned month, std::int64_t year) noexcept {
  constexpr unsigned table[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : table[month - 1];
}

constexpr bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

// Splits an instant into its UTC civil fields. nsec outside [0, 1e9) is folded
// into sec first, so a malformed Instant still formats as the time it denotes.
struct CivilTime {
  CivilDate date;
  unsigned hour, minute, second;
  std::int32_t nsec;
};

CivilTime civil_from_instant(Instant t) noexcept {
  std::int64_t sec = t.sec;
  std::int64_t nsec = t.nsec;
  if (nsec < 0 || nsec >= 1000000000) {
    std::int64_t carry = nsec / 1000000000;
    nsec %= 1000000000;
    if (nsec < 0) {
      nsec += 1000000000;
      carry -= 1;
    }
    // At the very ends of int64 the carry cannot be added: keep sec as it is.
    std::int64_t moved = 0;
    if (!__builtin_add_overflow(sec, carry, &moved)) sec = moved;
  }
  std::int64_t days = sec / sec_per_day;
  std::int64_t rem = sec % sec_per_day;
  if (rem < 0) {
    rem += sec_per_day;
    days -= 1;
  }
  return CivilTime{civil_from_days(days), static_cast<unsigned>(rem / 3600), static_cast<unsigned>(rem / 60 % 60),
                   static_cast<unsigned>(rem % 60), static_cast<std::int32_t>(nsec)};
}

// "00", "01", ... "99": the digits of a number below 100, two at a time.
constexpr auto two_digit_text = [] {
  std::array<char, 200> t{};
  for (int i = 0; i < 100; ++i) {
    t[2 * i] = static_cast<char>('0' + i / 10);
    t[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return t;
}();

// The width lowest decimal digits of v (v < 10^width), zero-padded, at p; the end.
inline char* put_digits(char* p, std::uint64_t v, int width) noexcept {
  int i = width;
  for (; i >= 2; i -= 2) {
    std::memcpy(p + i - 2, &two_digit_text[2 * (v % 100)], 2);
    v /= 100;
  }
  if (i == 1) p[0] = static_cast<char>('0' + v % 10);
  return p + width;
}

// Go's appendFormatRFC3339 in UTC: the year with at least four digits and a '-'
// before a negative one, then the fraction (nanos only) with zeros trimmed, then 'Z'.
std::size_t write_rfc3339(Instant t, char* out, bool nanos) noexcept {
  const CivilTime c = civil_from_instant(t);
  char* p = out;
  std::int64_t year = c.date.year;
  if (year < 0) {
    *p++ = '-';
    year = -year;
  }
  p = year < 10000 ? put_digits(p, static_cast<std::uint64_t>(year), 4) : fmt::format_to(p, FMT_COMPILE("{}"), year);
  const std::pair<std::uint64_t, char> fields[] = {
      {c.date.month, '-'}, {c.date.day, '-'}, {c.hour, 'T'}, {c.minute, ':'}, {c.second, ':'}};
  for (const auto& [value, before] : fields) {
    *p++ = before;
    p = put_digits(p, value, 2);
  }
  if (nanos && c.nsec != 0) {
    *p++ = '.';
    char* digits = p;
    p = put_digits(p, static_cast<std::uint64_t>(c.nsec), 9);
    while (p > digits && p[-1] == '0') --p;
  }
  *p++ = 'Z';
  return static_cast<std::size_t>(p - out);
}

// --- JS -----------------------------------------------------------------------

// ES's time value range: +-8.64e15 ms around the epoch (100,000,000 days).
constexpr std::int64_t js_max_time_ms = 8640000000000000;
// V8 reads a local date-time only within this, before the offset is applied (DateCache
// kMaxTimeBeforeUTCInMs: the range plus ten days).
constexpr std::int64_t js_max_local_ms = js_max_time_ms + 10 * ms_per_day;

// What V8's ES5 reader fills in, before MakeDay / MakeTime.
struct JsFields {
  std::int64_t year = 0;
  int month = 1, day = 1;
  int hour = 0, minute = 0, second = 0, ms = 0;
  bool has_time = false;
  bool has_offset = false;
  int offset_sec = 0;  // east of UTC
};

// A run of ASCII digits as V8's date tokenizer reads it: leading zeros skipped, then
// at most nine significant digits kept in value; length counts every digit.
struct DigitRun {
  std::size_t length = 0;
  int value = 0;
};

DigitRun digit_run(std::string_view s, std::size_t at) noexcept {
  DigitRun run;
  std::size_t i = at;
  while (i < s.size() && s[i] == '0') ++i;
  int significant = 0;
  while (i < s.size() && is_digit(s[i])) {
    if (significant < 9) run.value = run.value * 10 + (s[i] - '0');
    ++significant;
    ++i;
  }
  run.length = i - at;
  return run;
}

// A digit run of exactly n digits at `at`; value in out, the position after it in at.
bool fixed_run(std::string_view s, std::size_t& at, std::size_t n, int& out) noexcept {
  const DigitRun run = digit_run(s, at);
  if (run.length != n) return false;
  out = run.value;
  at += n;
  return true;
}

// V8's ReadMilliseconds: the first three "significant" digits of a fraction of any
// length, inferred from the value and the digit count. With more than nine digits
// and leading zeros this is not the first three digits (".0001234567891" gives 123):
// V8 does that, so we do too.
int js_milliseconds(DigitRun run) noexcept {
  int number = run.value;
  std::size_t length = run.length;
  if (length == 1) return number * 100;
  if (length == 2) return number * 10;
  if (length > 3) {
    if (length > 9) length = 9;
    int factor = 1;
    do {
      factor *= 10;
      --length;
    } while (length > 3);
    number /= factor;
  }
  return number;
}

// V8's ParseES5DateTime, taking only what it reads to the end of the input. Every
// string it hands to the legacy parser (or rejects) is nullopt.
std::optional<JsFields> read_js_iso(std::string_view s) noexcept {
  JsFields f;
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return k < s.size() ? s[k] : '\0'; };
  const auto end = [&] { return i >= s.size(); };

  // Date: [+-]YYYYYY | YYYY, then optionally -MM and -DD.
  if (!end() && (s[i] == '+' || s[i] == '-')) {
    const bool negative = s[i] == '-';
    ++i;
    int year = 0;
    if (!fixed_run(s, i, 6, year)) return std::nullopt;
    if (negative && year == 0) return std::nullopt;  // "-000000" is no year
    f.year = negative ? -year : year;
  } else {
    int year = 0;
    if (!fixed_run(s, i, 4, year)) return std::nullopt;
    f.year = year;
  }
  if (at(i) == '-' && !end()) {
    ++i;
    if (!fixed_run(s, i, 2, f.month) || f.month < 1 || f.month > 12) return std::nullopt;
    if (at(i) == '-' && !end()) {
      ++i;
      // Any day 1..31 of any month: MakeDay rolls the excess into the next month.
      if (!fixed_run(s, i, 2, f.day) || f.day < 1 || f.day > 31) return std::nullopt;
    }
  }
  if (end()) return f;  // date-only forms are UTC

  // Time: T (V8's keyword table matches it case-insensitively) HH:mm[:ss[.s+]].
  if (s[i] != 'T' && s[i] != 't') return std::nullopt;
  ++i;
  f.has_time = true;
  if (!fixed_run(s, i, 2, f.hour) || f.hour > 24) return std::nullopt;
  const bool hour_24 = f.hour == 24;  // only 24:00[:00[.0...]], the next midnight
  if (at(i) != ':' || end()) return std::nullopt;
  ++i;
  if (!fixed_run(s, i, 2, f.minute) || f.minute > 59 || (hour_24 && f.minute > 0)) return std::nullopt;
  if (!end() && s[i] == ':') {
    ++i;
    if (!fixed_run(s, i, 2, f.second) || f.second > 59 || (hour_24 && f.second > 0)) return std::nullopt;
    if (!end() && s[i] == '.') {
      ++i;
      const DigitRun run = digit_run(s, i);
      if (run.length == 0 || (hour_24 && run.value > 0)) return std::nullopt;
      f.ms = js_milliseconds(run);
      i += run.length;
    }
  }

  // Offset: Z (either case), +-HH:mm, or V8's +-HHmm extension.
  if (!end() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
    f.has_offset = true;
  } else if (!end() && (s[i] == '+' || s[i] == '-')) {
    const int sign = s[i] == '-' ? -1 : 1;
    ++i;
    int hour = 0, minute = 0;
    const DigitRun run = digit_run(s, i);
    if (run.length == 4) {
      hour = run.value / 100;
      minute = run.value % 100;
      i += 4;
    } else {
      if (!fixed_run(s, i, 2, hour)) return std::nullopt;
      if (at(i) != ':' || end()) return std::nullopt;
      ++i;
      if (!fixed_run(s, i, 2, minute)) return std::nullopt;
    }
    if (hour > 23 || minute > 59) return std::nullopt;
    f.has_offset = true;
    f.offset_sec = sign * (hour * 3600 + minute * 60);
  }
  if (!end()) return std::nullopt;
  return f;
}

}  // namespace

// --- clocks ---------------------------------------------------------------------

Instant system_now() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return Instant{static_cast<std::int64_t>(ts.tv_sec), static_cast<std::int32_t>(ts.tv_nsec)};
}

std::int64_t unix_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::int64_t steady_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Clock system_clock() {
  return [] { return system_now(); };
}

Clock fixed_clock(Instant at) {
  return [at] { return at; };
}

// --- Go family ------------------------------------------------------------------

namespace {

// Go's time.Parse with the layout "2006-01-02T15:04:05Z07:00", read as a cursor over
// the text. Small steps the compiler inlines: this runs twice for most steps a sweep
// reads.
struct GoTimeText {
  const char* p;
  std::size_t n, i = 0;

  std::size_t left() const noexcept { return n - i; }
  bool digit_at(std::size_t k) const noexcept { return k < n && is_digit(p[k]); }
  bool two_digits(int& out) noexcept {  // Go's getnum(value, true)
    if (!digit_at(i) || !digit_at(i + 1)) return false;
    out = (p[i] - '0') * 10 + (p[i + 1] - '0');
    i += 2;
    return true;
  }
  bool literal(char c) noexcept {
    if (i >= n || p[i] != c) return false;
    ++i;
    return true;
  }
};

// Eight bytes of text as one word, eight at a time: the first byte the lowest (on a
// little-endian machine; elsewhere the byte-by-byte reads alone are used).
constexpr bool words_read = std::endian::native == std::endian::little;
constexpr std::uint64_t each_byte = 0x0101010101010101;
std::uint64_t word_at(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
// Is each byte of w that mask keeps an ASCII digit? (its high nibble 3, and its low
// nibble at most 9: adding 6 to it does not carry)
constexpr bool digits_in(std::uint64_t w, std::uint64_t mask) noexcept {
  const std::uint64_t d = w & mask;
  const std::uint64_t threes = 0x30 * each_byte & mask;
  return (d & 0xF0 * each_byte) == threes && ((d + (0x06 * each_byte & mask)) & 0xF0 * each_byte) == threes;
}
// The number eight ASCII digits write, the first the most significant.
constexpr std::uint32_t eight_digits(std::uint64_t w) noexcept {
  w = (w & 0x0F0F0F0F0F0F0F0F) * 2561 >> 8;
  w = (w & 0x00FF00FF00FF00FF) * 6553601 >> 16;
  return static_cast<std::uint32_t>((w & 0x0000FFFF0000FFFF) * 42949672960001 >> 32);
}
// "2006-01-02T15:04:05" as three words (bytes 0-7, 8-15, 11-18): where the digits are,
// and the separators between them.
constexpr std::uint64_t date_digits = 0x00FFFF00FFFFFFFF, date_seps = 0x2D00002D00000000;  // "YYYY-MM-"
constexpr std::uint64_t clock_digits = 0xFFFF00FFFF00FFFF;
constexpr std::uint64_t day_seps = 0x00003A0000540000;    // "DDTHH:MM"
constexpr std::uint64_t clock_seps = 0x00003A00003A0000;  // "HH:MM:SS"

// Byte k of each pair of digits w holds where mask keeps them: 10 times digit k plus
// digit k+1 (no byte carries into the next: each is at most 99).
constexpr std::uint64_t digit_pairs(std::uint64_t w, std::uint64_t mask) noexcept {
  const std::uint64_t v = (w & mask) - (0x30 * each_byte & mask);
  return v * 10 + (v >> 8);
}
constexpr int byte_of(std::uint64_t w, int k) noexcept {
  return static_cast<int>((w >> (8 * k)) & 0xFF);
}

// The head at fixed places, a word at a time: false when the text is not of that form.
bool fixed_head_words(const char* p, int& year, int& month, int& day, int& hour, int& minute, int& second) noexcept {
  const std::uint64_t w0 = word_at(p), w1 = word_at(p + 8), w2 = word_at(p + 11);
  if (!((w0 & ~date_digits) == date_seps && (w1 & ~clock_digits) == day_seps && (w2 & ~clock_digits) == clock_seps &&
        digits_in(w0, date_digits) && digits_in(w1, clock_digits) && digits_in(w2, clock_digits)))
    return false;
  const std::uint64_t q0 = digit_pairs(w0, date_digits), q1 = digit_pairs(w1, clock_digits),
                      q2 = digit_pairs(w2, clock_digits);
  year = byte_of(q0, 0) * 100 + byte_of(q0, 2);
  month = byte_of(q0, 5);
  day = byte_of(q1, 0);
  hour = byte_of(q1, 3);
  minute = byte_of(q1, 6);
  second = byte_of(q2, 6);
  return true;
}
// The same byte by byte.
bool fixed_head_bytes(const char* p, int& year, int& month, int& day, int& hour, int& minute, int& second) noexcept {
  if (p[4] != '-' || p[7] != '-' || p[10] != 'T' || p[13] != ':' || p[16] != ':') return false;
  auto d = [p](std::size_t k) -> int { return static_cast<unsigned>(p[k] - '0') < 10 ? 1 : 0; };
  // One branch for all fourteen digits: the tests are ints so the & does not short-circuit.
  if ((d(0) & d(1) & d(2) & d(3) & d(5) & d(6) & d(8) & d(9) & d(11) & d(12) & d(14) & d(15) & d(17) & d(18)) == 0)
    return false;
  auto two = [p](std::size_t k) { return (p[k] - '0') * 10 + (p[k + 1] - '0'); };
  year = two(0) * 100 + two(2);
  month = two(5);
  day = two(8);
  hour = two(11);
  minute = two(14);
  second = two(17);
  return true;
}

// Are the head's parts in Go's ranges (the day is checked against its month at the end)?
constexpr bool head_in_range(int month, int hour, int minute, int second) noexcept {
  return month >= 1 && month <= 12 && hour <= 23 && minute <= 59 && second <= 59;
}

// Year, month, day, hour, minute, second: the layout up to the fraction.
bool parse_go_head(GoTimeText& t, int& year, int& month, int& day, int& hour, int& minute, int& second) noexcept {
  const char* p = t.p;
  // "2006-01-02T15:04:05", the form every writer of Go's RFC 3339 uses, at fixed places.
  if (t.n >= 19 && (words_read ? fixed_head_words(p, year, month, day, hour, minute, second)
                               : fixed_head_bytes(p, year, month, day, hour, minute, second))) {
    t.i = 19;
    return head_in_range(month, hour, minute, second);
  }
  // "2006": four bytes, all digits (atoi over them; the first must be a digit).
  if (t.n < 4) return false;
  year = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    if (!is_digit(p[k])) return false;
    year = year * 10 + (p[k] - '0');
  }
  t.i = 4;
  if (!t.literal('-') || !t.two_digits(month) || month < 1 || month > 12) return false;
  if (!t.literal('-') || !t.two_digits(day)) return false;
  if (!t.literal('T')) return false;
  // "15": one or two digits.
  if (!t.digit_at(t.i)) return false;
  hour = p[t.i++] - '0';
  if (t.digit_at(t.i)) hour = hour * 10 + (p[t.i++] - '0');
  if (hour > 23) return false;
  if (!t.literal(':') || !t.two_digits(minute) || minute > 59) return false;
  return t.literal(':') && t.two_digits(second) && second <= 59;
}

// How many ASCII digits w's bytes begin with (8: all of them): a byte is one when, xor
// '0', it is below 10, which adding 0x76 to its low seven bits and or-ing its high bit
// tells in the byte's high bit.
constexpr int leading_digits(std::uint64_t w) noexcept {
  const std::uint64_t x = w ^ (0x30 * each_byte);
  const std::uint64_t other = (((x & 0x7F * each_byte) + 0x76 * each_byte) | x) & 0x80 * each_byte;
  return other == 0 ? 8 : std::countr_zero(other) / 8;
}

// A fraction the layout does not name, at t: '.' or ',' then every digit that follows;
// the first nine count (into nsec when Convert), the rest are dropped (truncated, never
// rounded). None: t and nsec left as they are.
template <bool Convert>
void read_go_fraction(GoTimeText& t, std::int32_t& nsec) noexcept {
  const char* s = t.p;
  if (!(t.left() >= 2 && (s[t.i] == '.' || s[t.i] == ',') && is_digit(s[t.i + 1]))) return;
  ++t.i;
  if (words_read && t.left() >= 8) {
    // Where eight bytes follow, the digits among them read at once: fewer than eight as
    // eight with zeros after them.
    const std::uint64_t w = word_at(s + t.i);
    const int k = leading_digits(w);
    if (k < 8) {
      if constexpr (Convert) {
        const std::uint64_t kept = (std::uint64_t{1} << (8 * k)) - 1;
        nsec = static_cast<std::int32_t>(eight_digits((w & kept) | (0x30 * each_byte & ~kept))) * 10;
      }
      t.i += static_cast<std::size_t>(k);
      return;
    }
    t.i += 8;
    const bool ninth = t.digit_at(t.i);
    if constexpr (Convert) nsec = static_cast<std::int32_t>(eight_digits(w)) * 10 + (ninth ? s[t.i] - '0' : 0);
    if (ninth) ++t.i;
    while (t.digit_at(t.i)) ++t.i;
    return;
  }
  static constexpr std::int32_t scale[] = {1000000000, 100000000, 10000000, 1000000, 100000, 10000, 1000, 100, 10, 1};
  int digits = 0;
  for (; t.digit_at(t.i); ++t.i) {
    if (Convert && digits < 9) {
      nsec = nsec * 10 + (s[t.i] - '0');
      ++digits;
    }
  }
  if constexpr (Convert) nsec *= scale[digits];
}

// "Z07:00" but the Z: a sign, two digits, ':', two digits, at z (six bytes). Go's range test
// is > rather than >=: "some people do write offsets of 24 hours". Its offset east, in
// seconds; false when it is none.
bool zone_offset(const char* z, std::int64_t& offset) noexcept {
  if ((z[0] != '+' && z[0] != '-') || z[3] != ':' || !is_digit(z[1]) || !is_digit(z[2]) || !is_digit(z[4]) ||
      !is_digit(z[5]))
    return false;
  const int oh = (z[1] - '0') * 10 + (z[2] - '0'), om = (z[4] - '0') * 10 + (z[5] - '0');
  if (oh > 24 || om > 60) return false;
  offset = (oh * 60 + om) * 60 * (z[0] == '-' ? -1 : 1);
  return true;
}

// The instant of a time read to its end, once the day is within its month; false past the
// month's end. Into *out when Convert.
template <bool Convert>
bool civil_instant(int year, int month, int day, int hour, int minute, int second, std::int32_t nsec,
                   std::int64_t offset, Instant* out) noexcept {
  if (day < 1 || day > static_cast<int>(days_in(static_cast<unsigned>(month), year))) return false;
  if constexpr (Convert) {
    const std::int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
    *out = Instant{days * sec_per_day + hour * 3600 + minute * 60 + second - offset, nsec};
  }
  return true;
}

// One to nine digits that end at end, the text holding the 16 bytes before end: read as
// the last bytes of two words, at most eight in the last, a ninth in the top byte of the
// one before. Their nanoseconds (when Convert); false when one is no digit.
template <bool Convert>
bool digits_before(const char* end, std::size_t digits, std::int32_t& nsec) noexcept {
  const std::uint64_t last = word_at(end - 8), before = word_at(end - 16);
  const auto in_last = static_cast<unsigned>(digits < 8 ? digits : 8);
  // Masks of the low and the top in_last bytes, each shift in two halves: one of 64 is none.
  const std::uint64_t low = (~std::uint64_t{0} >> (4 * (8 - in_last))) >> (4 * (8 - in_last));
  const std::uint64_t top = ~((~std::uint64_t{0} >> (4 * in_last)) >> (4 * in_last));
  if (!digits_in(last, top) || !digits_in(before, digits == 9 ? 0xFF00000000000000 : 0)) return false;
  if constexpr (Convert) {
    if (digits == 9) {
      nsec =
          static_cast<std::int32_t>((before >> 56) - '0') * 100000000 + static_cast<std::int32_t>(eight_digits(last));
    } else {  // the digits to the low bytes, zeros after them: eight digits
      nsec =
          static_cast<std::int32_t>(eight_digits(((last >> (8 * (8 - in_last))) & low) | (0x30 * each_byte & ~low))) *
          10;
    }
  }
  return true;
}

// The forms Go's Format(RFC3339Nano) writes, as nearly every writer of these times does:
// the head at its fixed places, then nothing or a '.' (or ',') and one to nine digits, then
// "Z" or "+07:00": read at fixed places and from the text's end, with no loop and no
// search. True when the text has one of these forms and is a time (into *out when
// Convert); false leaves the text to read_go_time (below), which decides every text: this
// takes only texts that it takes, to the same instant.
template <bool Convert>
bool read_common_time(const char* p, std::size_t n, Instant* out) noexcept {
  if constexpr (!words_read) return false;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (n < 20 || n > 35 || !fixed_head_words(p, year, month, day, hour, minute, second) ||
      !head_in_range(month, hour, minute, second))
    return false;
  const bool utc = p[n - 1] == 'Z';
  const std::size_t zone = utc ? 1 : 6;
  std::int64_t offset = 0;
  if (n < 19 + zone || (!utc && !zone_offset(p + n - 6, offset))) return false;
  const std::size_t middle = n - zone - 19;  // the separator and the digits
  std::int32_t nsec = 0;
  // Between the head and the zone, from byte 21 on when there are digits: the 16 bytes
  // before the zone are the text's.
  if (middle != 0 && (middle < 2 || middle > 10 || (p[19] != '.' && p[19] != ',') ||
                      !digits_before<Convert>(p + n - zone, middle - 1, nsec)))
    return false;
  return civil_instant<Convert>(year, month, day, hour, minute, second, nsec, offset, out);
}

// Go's UnmarshalJSON tries its parseRFC3339 fast path, then falls back on
// time.Parse(time.RFC3339, ...), whose result it keeps: the strict checks written
// after that fallback are disabled in every released Go (golang/go#54580). So this
// is time.Parse with the layout "2006-01-02T15:04:05Z07:00", of which the fast path
// is a subset. Where Parse is looser than RFC 3339 we are too: an hour of one
// digit, a ',' before the fraction, and offsets up to +-24:60. The instant goes into
// *out when Convert; without, the text is only tested (the same test).
template <bool Convert>
bool read_go_time(std::string_view s, Instant* out) noexcept {
  GoTimeText t{s.data(), s.size()};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!parse_go_head(t, year, month, day, hour, minute, second)) return false;
  std::int32_t nsec = 0;
  read_go_fraction<Convert>(t, nsec);

  // "Z07:00": 'Z', or a sign, two digits, ':', two digits.
  std::int64_t offset = 0;
  if (t.left() >= 1 && s[t.i] == 'Z') {
    ++t.i;
  } else {
    if (t.left() < 6 || !zone_offset(s.data() + t.i, offset)) return false;
    t.i += 6;
  }
  if (t.left() != 0) return false;  // "extra text"
  return civil_instant<Convert>(year, month, day, hour, minute, second, nsec, offset, out);
}

// A time as Go's UnmarshalJSON reads it: the forms writers use at fixed places, any other
// byte by byte.
template <bool Convert>
bool read_rfc3339(std::string_view s, Instant* out) noexcept {
  return read_common_time<Convert>(s.data(), s.size(), out) || read_go_time<Convert>(s, out);
}

}  // namespace

std::optional<Instant> parse_rfc3339(std::string_view s) noexcept {
  Instant at;
  if (!read_rfc3339<true>(s, &at)) return std::nullopt;
  return at;
}

bool is_rfc3339(std::string_view s) noexcept {
  return read_rfc3339<false>(s, nullptr);
}

std::size_t format_rfc3339_nano(Instant t, char* out) noexcept {
  return write_rfc3339(t, out, true);
}

std::string format_rfc3339_nano(Instant t) {
  char buf[rfc3339_max];
  return std::string(buf, write_rfc3339(t, buf, true));
}

std::size_t format_rfc3339(Instant t, char* out) noexcept {
  return write_rfc3339(t, out, false);
}

std::string format_rfc3339(Instant t) {
  char buf[rfc3339_max];
  return std::string(buf, write_rfc3339(t, buf, false));
}

// --- JS family ------------------------------------------------------------------

namespace {

// The offset, in seconds east of UTC, of the process's time zone at a local wall-clock
// time (in seconds, read as if it were UTC). V8 asks ICU for it with the "former"
// rule for both a skipped and a repeated wall time: the offset in force before the
// transition. We find that offset as the one in force a day earlier, unless only the
// one in force a day later fits the wall time (a transition between them, before it).
std::int64_t system_offset_seconds(std::int64_t local_sec) noexcept {
  const auto offset_at = [](std::int64_t utc_sec) -> std::int64_t {
    const auto t = static_cast<std::time_t>(utc_sec);
    std::tm tm{};
    if (localtime_r(&t, &tm) == nullptr) return 0;
    return tm.tm_gmtoff;
  };
  const std::int64_t before = offset_at(local_sec - sec_per_day);
  const std::int64_t after = offset_at(local_sec + sec_per_day);
  if (before != after && offset_at(local_sec - before) != before && offset_at(local_sec - after) == after) {
    return after;
  }
  return before;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t q = a / b;
  if (a % b < 0) --q;
  return q;
}

// MakeDay / MakeTime / MakeDate over what the ISO reader found, then the offset: the
// written one, UTC for a date alone, or the local zone's for a date-time without one.
template <typename LocalOffsetMs>
std::optional<std::int64_t> js_time_value(std::string_view text, LocalOffsetMs local_offset_ms) {
  // V8's reader takes a NUL for the end of the input: "2024-01-01\0junk" is a date.
  text = text.substr(0, text.find('\0'));
  const std::optional<JsFields> f = read_js_iso(text);
  if (!f) return std::nullopt;
  // Day 31 of a 30-day month is the 1st of the next, as MakeDay counts.
  const std::int64_t days = days_from_civil(f->year, static_cast<unsigned>(f->month), 1) + (f->day - 1);
  const std::int64_t ms = days * ms_per_day + f->hour * 3600000LL + f->minute * 60000LL + f->second * 1000LL + f->ms;
  std::int64_t utc = 0;
  if (f->has_offset || !f->has_time) {
    utc = ms - f->offset_sec * 1000LL;
  } else {
    if (ms < -js_max_local_ms || ms > js_max_local_ms) return std::nullopt;
    const std::optional<std::int64_t> offset = local_offset_ms(ms);
    if (!offset) return std::nullopt;
    utc = ms - *offset;
  }
  if (utc < -js_max_time_ms || utc > js_max_time_ms) return std::nullopt;
  return utc;
}

}  // namespace

LocalOffset system_local_offset() {
  return [](std::int64_t local_ms) -> std::int32_t {
    // Minutes, as the type says; zones whose offset has seconds (local mean time
    // before about 1900) lose them here, never in parse_js_date(text) itself.
    return static_cast<std::int32_t>(system_offset_seconds(floor_div(local_ms, 1000)) / 60);
  };
}

std::optional<std::int64_t> parse_js_date(std::string_view text) {
  return js_time_value(text, [](std::int64_t local_ms) -> std::optional<std::int64_t> {
    return system_offset_seconds(floor_div(local_ms, 1000)) * 1000;
  });
}

std::optional<std::int64_t> parse_js_date(std::string_view text, const LocalOffset& local) {
  return js_time_value(text, [&local](std::int64_t local_ms) -> std::optional<std::int64_t> {
    if (!local) return std::nullopt;  // no zone to read local time in: no time
    return static_cast<std::int64_t>(local(local_ms)) * 60000;
  });
}

std::string format_js_iso(std::int64_t unix_ms) {
  std::int64_t days = unix_ms / ms_per_day;
  std::int64_t rem = unix_ms % ms_per_day;
  if (rem < 0) {
    rem += ms_per_day;
    days -= 1;
  }
  const CivilDate d = civil_from_days(days);
  char buf[rfc3339_max];
  char* p = buf;
  if (d.year >= 0 && d.year <= 9999) {
    p = fmt::format_to(p, FMT_COMPILE("{:04}"), d.year);
  } else {
    *p++ = d.year < 0 ? '-' : '+';
    p = fmt::format_to(p, FMT_COMPILE("{:06}"), d.year < 0 ? -d.year : d.year);
  }
  p = fmt::format_to(p, FMT_COMPILE("-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z"), d.month, d.day, rem / 3600000,
                     rem / 60000 % 60, rem / 1000 % 60, rem % 1000);
  return std::string(buf, static_cast<std::size_t>(p - buf));
}

}  // namespace leasejudge
