// Clock: the Go family (steps) and the JS family (locks) of timestamps.
//
// Every expected number below was computed outside leasejudge on this machine and
// written here as a literal: Go values with Go's time.Parse(time.RFC3339, s) and
// t.UTC().Format(time.RFC3339Nano) (the offset ranges of Go 1.20 and later, which the
// installed Go 1.19 does not have, by hand), JS values with node 20's Date.parse and
// toISOString under TZ=UTC (local-time cases: the UTC value minus the fixed offset,
// by hand; the daylight-saving cases with node under TZ=America/New_York).
#include "leasejudge/clock.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace std::literals;
using leasejudge::Instant;
using leasejudge::LocalOffset;

namespace {

struct GoAccepted {
  std::string_view text;
  std::int64_t sec;
  std::int32_t nsec;
};

struct JsAccepted {
  std::string_view text;
  std::int64_t ms;
};

struct GoWritten {
  Instant at;
  std::string_view nano;
  std::string_view seconds;
};

// A zone that must never be asked: date-only forms and forms with an offset.
const LocalOffset never_asked = [](std::int64_t) -> std::int32_t {
  FAIL("a local offset was asked for a time that has its own");
  return 0;
};

LocalOffset fixed_offset(std::int32_t minutes) {
  return [minutes](std::int64_t) { return minutes; };
}

// Sets TZ for one test and puts the previous value back.
class ScopedTz {
 public:
  explicit ScopedTz(const char* tz) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    ::setenv("TZ", tz, 1);
    ::tzset();
  }
  ~ScopedTz() {
    if (old_) {
      ::setenv("TZ", old_->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }
  ScopedTz(const ScopedTz&) = delete;
  ScopedTz& operator=(const ScopedTz&) = delete;

 private:
  std::optional<std::string> old_;
};

// Go's time.Parse with the layout "2006-01-02T15:04:05Z07:00" read byte by byte, as
// plainly as its source reads, and the instant from timegm: the reference of the random
// comparison below.
std::optional<Instant> go_time_reference(std::string_view s) {
  std::size_t i = 0;
  auto digit = [&](std::size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  auto two = [&](int& out) {
    if (!digit(i) || !digit(i + 1)) return false;
    out = (s[i] - '0') * 10 + (s[i + 1] - '0');
    i += 2;
    return true;
  };
  auto literal = [&](char c) { return i < s.size() && s[i++] == c; };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  for (; i < 4; ++i) {
    if (!digit(i)) return std::nullopt;
    year = year * 10 + (s[i] - '0');
  }
  if (!literal('-') || !two(month) || month < 1 || month > 12 || !literal('-') || !two(day) || !literal('T'))
    return std::nullopt;
  if (!digit(i)) return std::nullopt;
  hour = s[i++] - '0';
  if (digit(i)) hour = hour * 10 + (s[i++] - '0');
  if (hour > 23 || !literal(':') || !two(minute) || minute > 59 || !literal(':') || !two(second) || second > 59)
    return std::nullopt;
  std::int32_t nsec = 0;
  if (i + 1 < s.size() && (s[i] == '.' || s[i] == ',') && digit(i + 1)) {
    int counted = 0;
    for (++i; digit(i); ++i)
      if (counted < 9) {
        nsec = nsec * 10 + (s[i] - '0');
        ++counted;
      }
    for (; counted < 9; ++counted) nsec *= 10;
  }
  std::int64_t offset = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else {
    if (s.size() - i < 6 || (s[i] != '+' && s[i] != '-') || s[i + 3] != ':') return std::nullopt;
    const bool minus = s[i] == '-';
    int oh = 0, om = 0;
    ++i;
    if (!two(oh) || !literal(':') || !two(om) || oh > 24 || om > 60) return std::nullopt;
    offset = (oh * 60 + om) * 60 * (minus ? -1 : 1);
  }
  if (i != s.size()) return std::nullopt;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int month_days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day < 1 || day > month_days[month - 1]) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return Instant{static_cast<std::int64_t>(::timegm(&tm)) - offset, nsec};
}

}  // namespace

TEST_SUITE("clock") {
  // --- instants and clocks ----------------------------------------------------

  TEST_CASE("Instant: milliseconds and nanosecond steps on both sides of the epoch") {
    CHECK(Instant::from_unix_ms(1704164645123) == Instant{1704164645, 123000000});
    CHECK(Instant::from_unix_ms(-1) == Instant{-1, 999000000});
    CHECK(Instant::from_unix_ms(-1000) == Instant{-1, 0});
    CHECK(Instant{1704164645, 123456789}.unix_ms() == 1704164645123);
    CHECK(Instant{0, 0}.plus_ns(-1) == Instant{-1, 999999999});
    CHECK(Instant{5, 999999999}.plus_ns(1) == Instant{6, 0});
    CHECK(Instant{5, 0}.plus_ns(3600000000000) == Instant{3605, 0});
    CHECK(Instant{1, 5} < Instant{1, 6});
    CHECK(Instant{0, 999999999} < Instant{1, 0});
  }

  TEST_CASE("Instant: milliseconds at the ends of the int64 range, without overflow") {
    constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min();
    constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max();
    // -9223372036854775807 ms is second -9223372036854776 plus 193 ms: the product
    // sec * 1000 alone is beyond the range.
    CHECK(Instant::from_unix_ms(lo + 1) == Instant{-9223372036854776, 193000000});
    CHECK(Instant::from_unix_ms(lo + 1).unix_ms() == lo + 1);
    CHECK(Instant::from_unix_ms(lo + 807).unix_ms() == lo + 807);
    CHECK(Instant::from_unix_ms(lo).unix_ms() == lo);
    CHECK(Instant::from_unix_ms(hi).unix_ms() == hi);
    // Beyond the range of milliseconds: its ends.
    CHECK(Instant{hi, 0}.unix_ms() == hi);
    CHECK(Instant{lo, 0}.unix_ms() == lo);
    CHECK(Instant{-9223372036854776, 0}.unix_ms() == lo);
    CHECK(Instant{9223372036854775, 808000000}.unix_ms() == hi);
  }

  TEST_CASE("fixed_clock always answers its instant; system clock reads CLOCK_REALTIME") {
    const Instant at{1704164645, 123456789};
    const leasejudge::Clock clock = leasejudge::fixed_clock(at);
    CHECK(clock() == at);
    CHECK(clock() == at);

    const Instant now = leasejudge::system_now();
    CHECK(now.nsec >= 0);
    CHECK(now.nsec < 1000000000);
    CHECK(now.sec > 1704067200);  // after 2024-01-01: this code was written later
    const leasejudge::Clock system = leasejudge::system_clock();
    REQUIRE(static_cast<bool>(system));
    CHECK(system() >= now);
  }

  TEST_CASE("Go's zero time is 0001-01-01T00:00:00Z") {
    CHECK(leasejudge::go_zero_time == Instant{-62135596800, 0});
    CHECK(leasejudge::parse_rfc3339("0001-01-01T00:00:00Z") == leasejudge::go_zero_time);
    CHECK(leasejudge::format_rfc3339_nano(leasejudge::go_zero_time) == "0001-01-01T00:00:00Z");
    CHECK(leasejudge::format_rfc3339(leasejudge::go_zero_time) == "0001-01-01T00:00:00Z");
  }

  // --- Go family: reading ---------------------------------------------------------

  TEST_CASE("parse_rfc3339 reads what Go's time.Parse(RFC3339) reads, to the same instant") {
    const GoAccepted cases[] = {
        {"2024-01-02T03:04:05Z", 1704164645, 0},
        {"2024-01-02T03:04:05.5Z", 1704164645, 500000000},
        {"2024-01-02T03:04:05.123456789Z", 1704164645, 123456789},
        // More than nine digits: truncated, never rounded.
        {"2024-01-02T03:04:05.1234567899Z", 1704164645, 123456789},
        {"2024-01-02T03:04:05.000000001Z", 1704164645, 1},
        {"2024-01-02T03:04:05.0000000009Z", 1704164645, 0},
        {"2024-01-02T03:04:05.999999999999Z", 1704164645, 999999999},
        {"2024-01-01T00:00:00.000Z", 1704067200, 0},
        {"2024-01-01T00:00:00.100000000Z", 1704067200, 100000000},
        {"2024-01-01T00:00:00.1Z", 1704067200, 100000000},
        // Go's Parse fallback: a ',' before the fraction and an hour of one digit.
        {"2024-01-02T03:04:05,25Z", 1704164645, 250000000},
        {"2024-01-02T3:04:05Z", 1704164645, 0},
        {"2024-01-01T0:00:00Z", 1704067200, 0},
        {"2024-01-01T9:59:59.9-01:00", 1704106799, 900000000},
        // Offsets: local time minus offset is UTC.
        {"2024-01-02T03:04:05+01:00", 1704161045, 0},
        {"2024-01-02T03:04:05-07:30", 1704191645, 0},
        {"2024-01-02T03:04:05.75-00:00", 1704164645, 750000000},
        {"2024-01-02T03:04:05+23:59", 1704078305, 0},
        // Go 1.20+ range test is "> 24" and "> 60" for offsets (by hand).
        {"2024-01-02T03:04:05+24:00", 1704078245, 0},
        {"2024-01-02T03:04:05+23:60", 1704078245, 0},
        {"2024-01-02T03:04:05-24:60", 1704254645, 0},
        // Calendar edges.
        {"0000-01-01T00:00:00Z", -62167219200, 0},
        {"0000-12-31T23:59:59+05:00", -62135614801, 0},
        {"9999-12-31T23:59:59.999999999Z", 253402300799, 999999999},
        {"1970-01-01T00:00:00Z", 0, 0},
        {"1969-12-31T23:59:59.999999999Z", -1, 999999999},
        {"2024-02-29T12:00:00Z", 1709208000, 0},
        {"2000-02-29T00:00:00Z", 951782400, 0},
        {"2024-12-31T23:59:59Z", 1735689599, 0},
    };
    for (const GoAccepted& c : cases) {
      CAPTURE(c.text);
      const std::optional<Instant> t = leasejudge::parse_rfc3339(c.text);
      REQUIRE(t.has_value());
      CHECK(t->sec == c.sec);
      CHECK(t->nsec == c.nsec);
      CHECK(leasejudge::is_rfc3339(c.text));
    }
  }

  TEST_CASE("parse_rfc3339 rejects what Go rejects") {
    const std::string_view cases[] = {
        "",
        "null",
        "2024-01-02",
        "2024-01-02T03:04",
        "2024-01-02T03:04:05",   // no zone
        "2024-01-02T03:04:05z",  // lowercase z
        "2024-01-02t03:04:05Z",  // lowercase t
        "2024-01-02 03:04:05Z",  // space for T
        "2024-01-02T03:04:60Z",  // leap second
        "2024-01-02T24:00:00Z",  // 24:00
        "2024-01-02T03:60:05Z",
        "2024-02-30T00:00:00Z",  // past the month's end
        "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2024-04-31T00:00:00Z",
        "2024-00-01T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-01-00T00:00:00Z",
        "2024-1-02T03:04:05Z",  // one-digit month, day, minute, second
        "2024-01-2T03:04:05Z",
        "2024-01-02T03:4:05Z",
        "2024-01-02T03:04:5Z",
        "2024-01-02T003:04:05Z",
        "24-01-02T03:04:05Z",
        "02024-01-02T03:04:05Z",
        "+2024-01-02T03:04:05Z",
        "-0001-01-01T00:00:00Z",
        "2024/01/02T03:04:05Z",
        "2024-01-02T03:04:05.Z",  // '.' without a digit
        "2024-01-02T03:04:05,Z",
        "2024-01-02T03:04:05.-5Z",
        "2024-01-02T03:04:05.5.5Z",
        "2024-01-02T03:04:05..5Z",
        "2024-01-02T03:04:05.5",
        "2024-01-02T03:04:05+01",
        "2024-01-02T03:04:05+0100",
        "2024-01-02T03:04:05+1:00",
        "2024-01-02T03:04:05+01:0",
        "2024-01-02T03:04:05+01:00:00",
        "2024-01-02T03:04:05+25:00",
        "2024-01-02T03:04:05+23:61",
        "2024-01-02T03:04:05--5:00",
        "2024-01-02T03:04:05+a1:00",
        "2024-01-02T03:04:05*01:00",
        "2024-01-02T03:04:05+01-00",
        "2024-01-02T03:04:05ZZ",
        "2024-01-02T03:04:05Z ",
        " 2024-01-02T03:04:05Z",
        "2024-01-02T03:04:05 Z",
        "2024-01-02T03:04:05UTC",
        "2024-01-02T03:04:05\\u005a",  // raw JSON bytes: Go does not unescape
        "2024-01-02T03:04:05Z\0"sv,
        "2024-01-02T03:04:05\0Z"sv,
        "\0"
        "2024-01-02T03:04:05Z"sv,
        "2024-01-02T03:04:05\xffZ",
        "\xef\xbb\xbf"
        "2024-01-02T03:04:05Z",
        "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef\xee\xed\xec",
    };
    for (const std::string_view text : cases) {
      CAPTURE(text);
      CHECK_FALSE(leasejudge::parse_rfc3339(text).has_value());
      CHECK_FALSE(leasejudge::is_rfc3339(text));
    }
  }

  TEST_CASE("a fraction of every length before every ending reads its first nine digits") {
    // Fractions of 1 to 14 digits, each digit different, before "Z" and the offsets (so
    // that eight bytes or fewer follow the separator), read to the nanosecond counted
    // here by hand: the first nine digits, zeros after them. A byte glued after the
    // fraction, or a fraction that ends the text, is refused.
    const std::string_view digits = "98765432101234";
    const std::pair<std::string_view, std::int64_t> endings[] = {
        {"Z", 0}, {"+02:00", -7200}, {"-00:30", 1800}, {"+24:60", -90000}};
    for (std::size_t n = 1; n <= digits.size(); ++n) {
      std::int64_t nsec = 0;
      for (std::size_t k = 0; k < 9; ++k) nsec = nsec * 10 + (k < n ? digits[k] - '0' : 0);
      for (const auto& [ending, offset] : endings) {
        for (char sep : {'.', ','}) {
          const std::string text = "2024-01-02T03:04:05" + std::string(1, sep) + std::string(digits.substr(0, n));
          CAPTURE(text + std::string(ending));
          const std::optional<Instant> t = leasejudge::parse_rfc3339(text + std::string(ending));
          REQUIRE(t.has_value());
          CHECK(t->sec == 1704164645 + offset);
          CHECK(t->nsec == nsec);
          CHECK(leasejudge::is_rfc3339(text + std::string(ending)));
          for (std::string_view wrong : {"", "xZ", "Zx", " Z", ".5Z", ":00Z", "+02:0", "+02:000", "x+02:00"}) {
            const std::string bad = text + std::string(wrong);
            CAPTURE(bad);
            CHECK_FALSE(leasejudge::parse_rfc3339(bad).has_value());
            CHECK_FALSE(leasejudge::is_rfc3339(bad));
          }
        }
      }
    }
  }

  TEST_CASE("is_rfc3339 takes exactly what parse_rfc3339 takes, on every shape near a time") {
    // Times of every part's shape, each cut short, grown, and with each byte replaced by
    // each byte a time's grammar cares about (digits, separators, signs, letters).
    const std::string_view seeds[] = {
        "2024-01-02T03:04:05Z",        "2024-01-02T03:04:05.123456789Z", "2024-01-02T3:04:05,5+24:60",
        "2024-02-29T23:59:59-23:59",   "2023-02-29T00:00:00Z",           "0000-01-01T00:00:00.0000000000001+00:00",
        "9999-12-31T23:59:59.999999Z", "2024-04-31T12:00:00Z",
    };
    const std::string_view bytes = "0123456789-+:.,TtZz \x00\x7f\xff"sv;
    std::size_t taken = 0, tried = 0;
    auto both = [&](std::string_view text) {
      CAPTURE(text);
      const bool parsed = leasejudge::parse_rfc3339(text).has_value();
      CHECK(leasejudge::is_rfc3339(text) == parsed);
      taken += parsed;
      ++tried;
    };
    for (std::string_view seed : seeds) {
      for (std::size_t n = 0; n <= seed.size(); ++n) both(seed.substr(0, n));
      for (char c : bytes) both(std::string(seed) + c);
      for (std::size_t i = 0; i < seed.size(); ++i)
        for (char c : bytes) {
          std::string text(seed);
          text[i] = c;
          both(text);
        }
    }
    // Both answers are seen: the comparison is not of two functions that always refuse.
    CHECK(tried > 4000);
    CHECK(taken > 100);
    CHECK(taken < tried / 2);
  }

  TEST_CASE("parse_rfc3339 and is_rfc3339 agree with a byte-by-byte reading on 300,000 shapes near a time") {
    // The forms writers use (fractions of 0-12 digits, 'Z' and offsets), each with a byte
    // or two replaced by a byte a time's grammar cares about, one cut off, put in or
    // taken out: the common forms are read at fixed places and the rest byte by byte, so
    // both readers and the line between them are crossed.
    const std::string_view seeds[] = {
        "2024-05-26T12:43:47.339022541Z",      "2024-05-26T12:43:47Z",        "2024-05-19T11:20:52.96241936Z",
        "2024-05-19T11:20:52.962419362+02:00", "2024-02-29T23:59:59.5-24:60", "0000-01-01T00:00:00.1+00:00",
        "9999-12-31T23:59:59.999999999999Z",   "2024-01-02T3:04:05,25Z",      "2023-02-28T00:00:00.12345-00:30",
    };
    const std::string_view bytes = "0123456789-+:.,TZz \x00\xff"sv;
    std::mt19937 rng(20241205);
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    std::size_t taken = 0;
    for (int round = 0; round < 300000; ++round) {
      std::string text(seeds[pick(std::size(seeds))]);
      switch (pick(5)) {
        case 0:
          text[pick(text.size())] = bytes[pick(bytes.size())];
          break;
        case 1:
          text[pick(text.size())] = bytes[pick(bytes.size())];
          text[pick(text.size())] = bytes[pick(bytes.size())];
          break;
        case 2:
          text.resize(pick(text.size() + 1));
          break;
        case 3:
          text.insert(pick(text.size() + 1), 1, bytes[pick(bytes.size())]);
          break;
        default:
          text.erase(pick(text.size()), 1);
      }
      CAPTURE(text);
      const std::optional<Instant> want = go_time_reference(text);
      const std::optional<Instant> got = leasejudge::parse_rfc3339(text);
      REQUIRE(got.has_value() == want.has_value());
      CHECK(leasejudge::is_rfc3339(text) == want.has_value());
      if (want) {
        CHECK(got->sec == want->sec);
        CHECK(got->nsec == want->nsec);
        ++taken;
      }
    }
    // Both answers are many.
    CHECK(taken > 30000);
    CHECK(taken < 270000);
  }

  TEST_CASE("parse_rfc3339 refuses every byte out of place in the fixed layout") {
    // Go reads "2006-01-02T15:04:05.999999999Z" byte by byte: a digit of it replaced by a
    // byte that is no digit, or a separator by any other byte (but ',' for the '.'), is
    // no time; the reader reads these places eight bytes at a time, so each place gets
    // every byte (those whose high nibble is a digit's, 0x30-0x3F, and their neighbours).
    const std::string seed = "2024-01-02T03:04:05.123456789Z";
    REQUIRE(leasejudge::parse_rfc3339(seed).has_value());
    std::size_t tried = 0;
    for (std::size_t i = 0; i + 1 < seed.size(); ++i) {
      const bool digit_place = seed[i] >= '0' && seed[i] <= '9';
      for (int c = 0; c < 256; ++c) {
        const char b = static_cast<char>(c);
        if (b == seed[i] || (digit_place && b >= '0' && b <= '9') || (i == 19 && b == ',')) continue;
        std::string text = seed;
        text[i] = b;
        CAPTURE(text);
        CHECK_FALSE(leasejudge::parse_rfc3339(text).has_value());
        CHECK_FALSE(leasejudge::is_rfc3339(text));
        ++tried;
      }
    }
    CHECK(tried == 29 * 255 - 23 * 9 - 1);
    // And every digit read at its weight, each place in turn (the fraction's nine too):
    // the seconds since 0000-01-01T00:00:00Z counted here by hand (year 0 is a leap year;
    // so are 4, 8, ..., not 100, 200, 300, 500, 600, 700, 900).
    struct Weight {
      std::size_t at;
      char digit;
      std::int64_t sec;
      std::int32_t nsec;
    };
    const Weight weights[] = {
        {0, '1', 365243 * 86400LL, 0},
        {1, '1', 36525 * 86400LL, 0},
        {2, '1', 3653 * 86400LL, 0},
        {3, '1', 366 * 86400LL, 0},
        {5, '1', 274 * 86400LL, 0},
        {6, '2', 31 * 86400LL, 0},
        {8, '1', 9 * 86400LL, 0},
        {9, '2', 86400, 0},
        {11, '1', 36000, 0},
        {12, '1', 3600, 0},
        {14, '1', 600, 0},
        {15, '1', 60, 0},
        {17, '1', 10, 0},
        {18, '1', 1, 0},
        {20, '1', 0, 100000000},
        {21, '1', 0, 10000000},
        {22, '1', 0, 1000000},
        {23, '1', 0, 100000},
        {24, '1', 0, 10000},
        {25, '1', 0, 1000},
        {26, '1', 0, 100},
        {27, '1', 0, 10},
        {28, '1', 0, 1},
    };
    const Instant zero = *leasejudge::parse_rfc3339("0000-01-01T00:00:00Z");
    for (const Weight& w : weights) {
      std::string text = "0000-01-01T00:00:00.000000000Z";
      if (w.at == 5 || w.at == 8) text[w.at + 1] = '0';  // "10": October, the 10th
      text[w.at] = w.digit;
      CAPTURE(text);
      const std::optional<Instant> t = leasejudge::parse_rfc3339(text);
      REQUIRE(t.has_value());
      CHECK(t->sec - zero.sec == w.sec);
      CHECK(t->nsec == w.nsec);
    }
  }

  TEST_CASE("parse_rfc3339 over a megabyte") {
    // A fraction of a million digits: all consumed, nine kept.
    std::string text = "2024-01-02T03:04:05.1" + std::string(1000000, '0') + "Z";
    CHECK(leasejudge::parse_rfc3339(text) == Instant{1704164645, 100000000});
    text = "2024-01-02T03:04:05." + std::string(1000000, '9') + "Z";
    CHECK(leasejudge::parse_rfc3339(text) == Instant{1704164645, 999999999});
    // A valid time followed by a megabyte of anything is extra text.
    text = "2024-01-02T03:04:05Z" + std::string(1000000, 'Z');
    CHECK_FALSE(leasejudge::parse_rfc3339(text).has_value());
    CHECK_FALSE(leasejudge::parse_rfc3339(std::string(1000000, '9')).has_value());
    CHECK(leasejudge::is_rfc3339("2024-01-02T03:04:05." + std::string(1000000, '9') + "Z"));
    CHECK_FALSE(leasejudge::is_rfc3339(text));
  }

  // --- Go family: writing ---------------------------------------------------------

  TEST_CASE("format_rfc3339_nano and format_rfc3339 write what Go's Format writes") {
    const GoWritten cases[] = {
        {{0, 0}, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
        {{1704164645, 123456789}, "2024-01-02T03:04:05.123456789Z", "2024-01-02T03:04:05Z"},
        {{1704164645, 120000000}, "2024-01-02T03:04:05.12Z", "2024-01-02T03:04:05Z"},
        {{1704164645, 100000000}, "2024-01-02T03:04:05.1Z", "2024-01-02T03:04:05Z"},
        {{1704164645, 1}, "2024-01-02T03:04:05.000000001Z", "2024-01-02T03:04:05Z"},
        {{-1, 999999999}, "1969-12-31T23:59:59.999999999Z", "1969-12-31T23:59:59Z"},
        {{-62167219200, 0}, "0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"},
        {{253402300799, 999999999}, "9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59Z"},
        // Outside 0..9999: at least four digits, '-' before a negative year.
        {{-62167219201, 0}, "-0001-12-31T23:59:59Z", "-0001-12-31T23:59:59Z"},
        {{-62198755200, 500}, "-0001-01-01T00:00:00.0000005Z", "-0001-01-01T00:00:00Z"},
        {{253402300800, 0}, "10000-01-01T00:00:00Z", "10000-01-01T00:00:00Z"},
        {{1000000000000, 0}, "33658-09-27T01:46:40Z", "33658-09-27T01:46:40Z"},
        {{-1000000000000, 5}, "-29719-04-05T22:13:20.000000005Z", "-29719-04-05T22:13:20Z"},
    };
    for (const GoWritten& c : cases) {
      CAPTURE(c.nano);
      CHECK(leasejudge::format_rfc3339_nano(c.at) == c.nano);
      CHECK(leasejudge::format_rfc3339(c.at) == c.seconds);
      char buf[leasejudge::rfc3339_max];
      CHECK(std::string_view(buf, leasejudge::format_rfc3339_nano(c.at, buf)) == c.nano);
      CHECK(std::string_view(buf, leasejudge::format_rfc3339(c.at, buf)) == c.seconds);
    }
  }

  TEST_CASE("an Instant whose nsec is out of range formats as the time it denotes") {
    CHECK(leasejudge::format_rfc3339_nano(Instant{10, 1500000000}) == "1970-01-01T00:00:11.5Z");
    CHECK(leasejudge::format_rfc3339_nano(Instant{10, -1}) == "1970-01-01T00:00:09.999999999Z");
  }

  TEST_CASE("the char* writers stay inside rfc3339_max at the ends of int64") {
    const Instant extremes[] = {
        {INT64_MAX, 999999999}, {INT64_MIN, 0},         {INT64_MIN, 1},
        {INT64_MAX, INT32_MAX}, {INT64_MIN, INT32_MIN}, {INT64_MIN, 999999999},
    };
    for (const Instant& t : extremes) {
      CAPTURE(t.sec);
      char buf[leasejudge::rfc3339_max + 8];
      std::memset(buf, '#', sizeof buf);
      const std::size_t n = leasejudge::format_rfc3339_nano(t, buf);
      REQUIRE(n <= leasejudge::rfc3339_max);
      CHECK(buf[n - 1] == 'Z');
      CHECK(buf[leasejudge::rfc3339_max] == '#');
      const std::size_t m = leasejudge::format_rfc3339(t, buf);
      REQUIRE(m <= leasejudge::rfc3339_max);
      CHECK(buf[m - 1] == 'Z');
    }
    // The last second int64 can hold: year 292277026596 (by hand: 9223372036854775807 s
    // is 106751991167300 days and 55807 s, 15:30:07).
    CHECK(leasejudge::format_rfc3339(Instant{INT64_MAX, 0}) == "292277026596-12-04T15:30:07Z");
  }

  TEST_CASE("Go round trips: format then parse gives the instant back") {
    // Instants spread over years 0..9999 with every fraction length.
    std::vector<Instant> instants = {
        leasejudge::go_zero_time, {-62167219200, 0}, {253402300799, 999999999}, {0, 0}, {-1, 1}};
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 20000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const std::int64_t span = 253402300799 + 62167219200 + 1;
      const auto sec = static_cast<std::int64_t>(x % static_cast<std::uint64_t>(span)) - 62167219200;
      std::int32_t nsec = static_cast<std::int32_t>((x >> 20) % 1000000000);
      for (int cut = 0; cut < i % 10; ++cut) nsec -= nsec % 10, nsec /= 10, nsec *= 10;
      instants.push_back(Instant{sec, nsec});
    }
    for (const Instant& t : instants) {
      const std::string text = leasejudge::format_rfc3339_nano(t);
      CAPTURE(text);
      REQUIRE(leasejudge::parse_rfc3339(text) == t);
      CHECK(leasejudge::parse_rfc3339(leasejudge::format_rfc3339(t)) == Instant{t.sec, 0});
    }
  }

  TEST_CASE("reading a time with an offset and writing it gives Go's UTC text") {
    const auto t = leasejudge::parse_rfc3339("2024-02-29T23:59:59.50-05:30");
    REQUIRE(t.has_value());
    CHECK(leasejudge::format_rfc3339_nano(*t) == "2024-03-01T05:29:59.5Z");
  }

  // --- JS family: reading ---------------------------------------------------------

  TEST_CASE("parse_js_date reads V8's ISO forms with Z, an offset, or a date alone") {
    const ScopedTz tz("UTC");  // the one-argument form must not depend on the zone here
    const JsAccepted cases[] = {
        // Date-only forms are UTC.
        {"2024", 1704067200000},
        {"2024-03", 1709251200000},
        {"2024-03-15", 1710460800000},
        {"1970-01-01", 0},
        {"0000", -62167219200000},
        {"0000-01-01", -62167219200000},
        {"9999-12-31", 253402214400000},
        {"+002024-03-15", 1710460800000},
        {"-000001-01-01", -62198755200000},
        {"+000000-01-01", -62167219200000},
        {"+275760-09-13", 8640000000000000},
        {"-271821-04-20", -8640000000000000},
        // Day 29..31 of a shorter month rolls over.
        {"2024-02-30", 1709251200000},
        {"2023-02-29", 1677628800000},
        {"2024-04-31", 1714521600000},
        {"2024-02-31", 1709337600000},
        {"2024-02-30T10:00Z", 1709287200000},
        // Date-times.
        {"2024-12-31T23:59Z", 1735689540000},
        {"2024-03-15T10:20Z", 1710498000000},
        {"2024-03-15T10:20:30Z", 1710498030000},
        {"2024-03-15T10:20:30.5Z", 1710498030500},
        {"2024-03-15T10:20:30.12Z", 1710498030120},
        {"2024-03-15T10:20:30.123Z", 1710498030123},
        // More than three digits: cut, not rounded; V8 keeps nine significant digits,
        // so leading zeros before a long fraction shift it (".0100000000" is 100 ms).
        {"2024-03-15T10:20:30.1239Z", 1710498030123},
        {"2024-03-15T10:20:30.999999999999Z", 1710498030999},
        {"2024-03-15T10:20:30.0001234567891Z", 1710498030123},
        {"2024-03-15T10:20:30.0100000000Z", 1710498030100},
        {"2024-03-15T10:20:30.000000000000000000001Z", 1710498030000},
        {"2024-03-15T10:20:30.00012Z", 1710498030000},
        // V8's ISO reader matches its 'T' and 'Z' keywords in either case.
        {"2024-03-15t10:20:30z", 1710498030000},
        {"2024-03-15T10:20:30+01:00", 1710494430000},
        {"2024-03-15T10:20:30-05:30", 1710517830000},
        {"2024-03-15T10:20:30+0530", 1710478230000},  // V8's hhmm extension
        {"2024-03-15T10:20+23:59", 1710411660000},
        {"2024-03-15T10:20-23:59", 1710584340000},
        {"2024-03-15T10:20:30.123-00:00", 1710498030123},
        {"2024-01-31T10:00:00.000+01:00", 1706691600000},
        // 24:00 is the next midnight.
        {"2024-03-15T24:00Z", 1710547200000},
        {"2024-03-15T24:00:00Z", 1710547200000},
        {"2024-03-15T24:00:00.000Z", 1710547200000},
        {"2024-03-15T24:00:00.0000000Z", 1710547200000},
        {"2024-12-31T24:00Z", 1735689600000},
        // The ends of JS's range.
        {"+275760-09-13T00:00:00.000Z", 8640000000000000},
        {"-271821-04-20T00:00:00.000Z", -8640000000000000},
        {"-271821-04-19T23:00:00.000-01:00", -8640000000000000},
        {"+275760-09-13T01:00:00.000+01:00", 8640000000000000},
        // V8 takes a NUL for the end of its input.
        {"2024-03-15\0junk"sv, 1710460800000},
        {"2024\0"sv, 1704067200000},
        {"2024-03-15T10:20:30Z\0\xff"sv, 1710498030000},
    };
    for (const JsAccepted& c : cases) {
      CAPTURE(c.text);
      CHECK(leasejudge::parse_js_date(c.text, never_asked) == c.ms);
      CHECK(leasejudge::parse_js_date(c.text) == c.ms);
    }
  }

  TEST_CASE("parse_js_date rejects what V8 rejects") {
    const ScopedTz tz("UTC");
    const std::string_view cases[] = {
        "",
        "\0"sv,
        "\0"
        "2024"sv,
        "2024-03-15T10:20:60Z",  // leap second
        "2024-03-15T10:60Z",
        "2024-03-15T25:00Z",
        "2024-03-15T24:01Z",  // 24 with anything but zeros
        "2024-03-15T24:00:01Z",
        "2024-03-15T24:00:00.001Z",
        "2024-03-15T24:00:00.0001Z",
        "2024-03-15T10:20+24:00",  // offsets beyond 23:59
        "2024-03-15T10:20+23:60",
        "2024-03-15T10:20+2400",
        "2024-03-15T10:20+05",
        "2024-03-15T10:20+5:00",
        "2024-03-15T10:20+05:3",
        "2024-03-15T10:20+053",
        "2024-03-15T10:20+05300",
        "2024-03-15T10:20:30+01",
        "2024-03-15T10:20:30+01:00:00",
        "2024-03-15T10:20.123Z",  // a fraction without seconds
        "2024-03-15T10:20:30.Z",
        "2024-03-15T10:20:30,5Z",
        "2024-03-15T10Z",
        "2024-03-15T",
        "2024-03-15T1:20Z",
        "2024-03-15T10:2Z",
        "2024-03-15T10:20:3Z",
        "2024-03-15TT10:20Z",
        "2024-03-15T10:20:30:00Z",
        "2024-03-15T10:20ZZ",
        "2024-03-15T10:20Z ",
        "2024-03-15T10:20:30UTC",
        "2024-03-15T10:20:30GMT",
        "2024-03-15T10:20Z+01:00",
        "2024-01-02T10:20:30Z (UTC)",
        "2024-01-02T10:20:30 GMT+0100",
        "-000000-01-01T00:00Z",
        "-000000",
        "+275760-09-13T00:00:00.001Z",  // beyond +-8.64e15 ms
        "-271821-04-19T23:59:59.999Z",
        "+999999-01-01T00:00Z",
        "2024-00-15",
        "2024-13-15",
        "2024-03-00",
        "2024-03-32",
        "20240315",
        "2024-0315",
        "2024-03-15T10:20:30\xffZ",
        "\xff"
        "2024-03-15",
        "2024-03-15T10:20:30\xef\xbc\xba",  // U+FF3A, a fullwidth Z
    };
    for (const std::string_view text : cases) {
      CAPTURE(text);
      CHECK_FALSE(leasejudge::parse_js_date(text, fixed_offset(0)).has_value());
      CHECK_FALSE(leasejudge::parse_js_date(text).has_value());
    }
  }

  TEST_CASE("strings only V8's legacy fallback reads are no time here") {
    // node 20 (TZ=UTC) reads each of these through the legacy parser, after its ISO
    // reader gave up on them; DESIGN.md makes them "no readable lease" (held).
    const JsAccepted legacy[] = {
        {"Jan 1 2024", 1704067200000},
        {"12", 1007164800000},
        {"2024/01/02", 1704153600000},
        {"1/2/2024", 1704153600000},
        {"2024-01-02 10:20:30Z", 1704190830000},
        {"2024-01-02 10:20", 1704190800000},
        {"2024-01-02 10:20:30.5 +01:00", 1704187230500},
        {" 2024-01-02", 1704153600000},
        {"2024-01-02 ", 1704153600000},
        {"2024-03-1", 1709251200000},
        {"2024-3-15", 1710460800000},
        {"20245-01-01", 576703324800000},
        {"02024-01-01", 1704067200000},
        {"+02024-01-01", 1704067200000},
        {"2024Z", 1704067200000},
        {"2024-01-02Z", 1704153600000},
        {"2024-01-02 Z", 1704153600000},
        {"2024-01-02UTC", 1704153600000},
        {"2024-01-02 (comment)", 1704153600000},
        {"2024-02-30 10:00", 1709287200000},
        {"-000000-01-01", 978307200000},
        {"2024-01-001", 1704067200000},
        {"2024-001-01", 1704067200000},
        {"Tue, 02 Jan 2024 10:20:30 GMT", 1704190830000},
        {"Tue Jan 02 2024 10:20:30 GMT+0000 (Coordinated Universal Time)", 1704190830000},
    };
    for (const JsAccepted& c : legacy) {
      CAPTURE(c.text);
      CHECK_FALSE(leasejudge::parse_js_date(c.text, fixed_offset(0)).has_value());
    }
  }

  TEST_CASE("date-times without an offset are local time") {
    SUBCASE("a fixed offset: UTC is the wall time minus the offset") {
      CHECK(leasejudge::parse_js_date("2024-03-15T10:20", fixed_offset(330)) == 1710478200000);
      CHECK(leasejudge::parse_js_date("2024-03-15T10:20:30.5", fixed_offset(-300)) == 1710516030500);
      CHECK(leasejudge::parse_js_date("2024-03-15T24:00", fixed_offset(60)) == 1710543600000);
      CHECK(leasejudge::parse_js_date("2024-02-30T00:00", fixed_offset(0)) == 1709251200000);
      // The input ends at the NUL, so the 'Z' after it does not count: local time.
      CHECK(leasejudge::parse_js_date("2024-03-15T10:20:30.5\0Z"sv, fixed_offset(60)) == 1710494430500);
    }
    SUBCASE("the zone is asked at the wall time read as if it were UTC") {
      std::vector<std::int64_t> asked;
      const LocalOffset recording = [&asked](std::int64_t local_ms) {
        asked.push_back(local_ms);
        return local_ms < 1710000000000 ? -300 : -240;  // a made-up switch
      };
      CHECK(leasejudge::parse_js_date("2024-03-15T10:20:30.5", recording) == 1710498030500 + 14400000);
      CHECK(leasejudge::parse_js_date("2024-03-01T10:20", recording) == 1709288400000 + 18000000);
      CHECK(asked == std::vector<std::int64_t>{1710498030500, 1709288400000});
      // Date-only forms and forms with an offset never ask.
      CHECK(leasejudge::parse_js_date("2024-03-15", recording) == 1710460800000);
      CHECK(leasejudge::parse_js_date("2024-03-15T10:20Z", recording) == 1710498000000);
      CHECK(asked.size() == 2);
    }
    SUBCASE("the range is checked after the offset") {
      CHECK(leasejudge::parse_js_date("+275760-09-13T00:00", fixed_offset(0)) == 8640000000000000);
      CHECK(leasejudge::parse_js_date("+275760-09-13T01:00", fixed_offset(60)) == 8640000000000000);
      CHECK_FALSE(leasejudge::parse_js_date("+275760-09-13T00:00", fixed_offset(-60)).has_value());
      CHECK(leasejudge::parse_js_date("-271821-04-19T23:00", fixed_offset(-60)) == -8640000000000000);
      CHECK_FALSE(leasejudge::parse_js_date("-271821-04-20T00:00", fixed_offset(60)).has_value());
    }
    SUBCASE("no zone at all: local forms are unreadable, the others are not") {
      const LocalOffset none;
      CHECK_FALSE(leasejudge::parse_js_date("2024-03-15T10:20", none).has_value());
      CHECK(leasejudge::parse_js_date("2024-03-15", none) == 1710460800000);
      CHECK(leasejudge::parse_js_date("2024-03-15T10:20+01:00", none) == 1710494400000);
    }
  }

  TEST_CASE("system_local_offset reads the process's zone as V8 does") {
    SUBCASE("TZ=UTC") {
      const ScopedTz tz("UTC");
      const LocalOffset local = leasejudge::system_local_offset();
      CHECK(local(1710498000000) == 0);
      CHECK(leasejudge::parse_js_date("2024-03-15T10:20") == 1710498000000);
      CHECK(leasejudge::parse_js_date("2024-03-15T10:20", local) == 1710498000000);
    }
    SUBCASE("a zone with daylight saving, written as a POSIX rule (no tzdata needed)") {
      // America/New_York's 2024 rule; node 20 under TZ=America/New_York gives these.
      const ScopedTz tz("EST5EDT,M3.2.0,M11.1.0");
      const LocalOffset local = leasejudge::system_local_offset();
      CHECK(local(1719835200000) == -240);  // 2024-07-01T12:00 wall time
      CHECK(local(1704110400000) == -300);  // 2024-01-01T12:00
      CHECK(leasejudge::parse_js_date("2024-07-01T12:00") == 1719849600000);
      CHECK(leasejudge::parse_js_date("2024-07-01") == 1719792000000);  // UTC
      // Skipped (02:30 on 10 March) and repeated (01:30 on 3 November) wall times
      // take the offset in force before the change.
      CHECK(leasejudge::parse_js_date("2024-03-10T02:30:00") == 1710055800000);
      CHECK(leasejudge::parse_js_date("2024-11-03T01:30:00") == 1730611800000);
      CHECK(leasejudge::parse_js_date("2024-03-10T01:59") == 1710053940000);
      CHECK(leasejudge::parse_js_date("2024-03-10T03:00") == 1710054000000);
      CHECK(leasejudge::parse_js_date("2024-11-03T02:00") == 1730617200000);
      CHECK(leasejudge::parse_js_date("2024-11-03T00:59") == 1730609940000);
    }
  }

  TEST_CASE("parse_js_date over a megabyte") {
    std::string text = "2024-01-02T03:04:05.1" + std::string(1000000, '0') + "Z";
    CHECK(leasejudge::parse_js_date(text, never_asked) == 1704164645100);
    text = "2024-01-02T03:04:05." + std::string(1000000, '9') + "Z";
    CHECK(leasejudge::parse_js_date(text, never_asked) == 1704164645999);
    text = "2024-01-02T03:04:05Z" + std::string(1000000, ' ');
    CHECK_FALSE(leasejudge::parse_js_date(text, never_asked).has_value());
    CHECK_FALSE(leasejudge::parse_js_date(std::string(1000000, '9'), never_asked).has_value());
    CHECK_FALSE(leasejudge::parse_js_date(std::string(1000000, '\xff'), never_asked).has_value());
  }

  // --- JS family: writing ---------------------------------------------------------

  TEST_CASE("format_js_iso writes what toISOString writes") {
    const JsAccepted cases[] = {
        {"1970-01-01T00:00:00.000Z", 0},
        {"1969-12-31T23:59:59.999Z", -1},
        {"1970-01-01T00:00:00.001Z", 1},
        {"2024-01-02T03:04:05.123Z", 1704164645123},
        {"2024-02-29T23:59:59.999Z", 1709251199999},
        {"0001-01-01T00:00:00.000Z", -62135596800000},
        {"0000-01-01T00:00:00.000Z", -62167219200000},
        {"-000001-12-31T23:59:59.999Z", -62167219200001},
        {"9999-12-31T23:59:59.999Z", 253402300799999},
        {"+010000-01-01T00:00:00.000Z", 253402300800000},
        {"+275760-09-13T00:00:00.000Z", 8640000000000000},
        {"-271821-04-20T00:00:00.000Z", -8640000000000000},
    };
    for (const JsAccepted& c : cases) {
      CAPTURE(c.text);
      CHECK(leasejudge::format_js_iso(c.ms) == c.text);
      CHECK(leasejudge::parse_js_date(leasejudge::format_js_iso(c.ms), never_asked) == c.ms);
    }
    // Beyond JS's range (where JS throws) the same form, with more year digits.
    CHECK(leasejudge::format_js_iso(INT64_MAX).back() == 'Z');
    CHECK(leasejudge::format_js_iso(INT64_MIN).front() == '-');
  }

  TEST_CASE("JS round trips over the whole range") {
    std::uint64_t x = 0x2545f4914f6cdd1dULL;
    for (int i = 0; i < 20000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const std::int64_t span = 2 * 8640000000000000 + 1;
      const std::int64_t ms = static_cast<std::int64_t>(x % static_cast<std::uint64_t>(span)) - 8640000000000000;
      const std::string text = leasejudge::format_js_iso(ms);
      CAPTURE(text);
      REQUIRE(leasejudge::parse_js_date(text, never_asked) == ms);
    }
  }

  TEST_CASE("a lock's lease written by the JS seed reads back to the same millisecond") {
    // The lock seed writes new Date(now + lease + skew).toISOString().
    const std::int64_t until = 1704164645123 + 300000 + 30000;
    const std::string text = leasejudge::format_js_iso(until);
    CHECK(text == "2024-01-02T03:09:35.123Z");
    CHECK(leasejudge::parse_js_date(text) == until);
  }
}
