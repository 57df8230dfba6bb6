// Time for leasejudge: instants, the clock every rule reads, and the two timestamp
// families the seeds write.
//
// The step family is Go's: RFC 3339 as Go's encoding/json reads a time.Time, which
// is exactly time.Parse(time.RFC3339, ...) (the strict checks Go 1.20 wrote after it
// are disabled in every released Go): a four-digit year, two-digit fields in range
// except a one- or two-digit hour, an optional '.' or ',' fraction of any length
// truncated to nanoseconds, then 'Z' or ±hh:mm (hh up to 24, mm up to 60). Written
// as RFC3339Nano in UTC (trailing fraction zeros trimmed). The lock family is
// JavaScript's: Date.prototype.toISOString() on write, Date.parse on read, restricted
// to the ISO date-time format V8 reads (DESIGN.md, "Times"); a string V8 would only
// take through its legacy fallback is no time here.
//
// Every rule takes now from a Clock so that tests run at a fixed instant.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace leasejudge {

// An instant on the UTC time line: seconds since the Unix epoch and nanoseconds in
// [0, 1e9). Wide enough for Go's zero time (year 1) and JS's whole Date range.
struct Instant {
  std::int64_t sec = 0;
  std::int32_t nsec = 0;

  friend constexpr auto operator<=>(const Instant&, const Instant&) = default;
  friend constexpr bool operator==(const Instant&, const Instant&) = default;

  static constexpr Instant from_unix_ms(std::int64_t ms) noexcept {
    std::int64_t s = ms / 1000, r = ms % 1000;
    if (r < 0) { r += 1000; s -= 1; }
    return Instant{s, static_cast<std::int32_t>(r * 1000000)};
  }
  // Milliseconds since the epoch, rounded down (as Go's UnixMilli for times after 1970).
  // An instant beyond the int64 range of milliseconds gives that range's end.
  constexpr std::int64_t unix_ms() const noexcept {
    std::int64_t s = sec, extra = nsec / 1000000, ms = 0;
    // Borrow a second first, so that the last representable milliseconds never pass
    // through a product beyond the range.
    if (s < 0 && extra > 0) {
      s += 1;
      extra -= 1000;
    }
    if (__builtin_mul_overflow(s, 1000, &ms) || __builtin_add_overflow(ms, extra, &ms))
      return s < 0 ? INT64_MIN : INT64_MAX;
    return ms;
  }
  // This instant moved by ns nanoseconds (either sign).
  constexpr Instant plus_ns(std::int64_t ns) const noexcept {
    std::int64_t s = sec + ns / 1000000000, n = nsec + ns % 1000000000;
    if (n < 0) { n += 1000000000; s -= 1; }
    if (n >= 1000000000) { n -= 1000000000; s += 1; }
    return Instant{s, static_cast<std::int32_t>(n)};
  }
};

// Go's zero time.Time, 0001-01-01T00:00:00Z: what a step without `started` holds.
inline constexpr Instant go_zero_time{-62135596800, 0};

// The clock rules read now from. system_clock() reads CLOCK_REALTIME.
using Clock = std::function<Instant()>;
Instant system_now() noexcept;
// CLOCK_REALTIME and CLOCK_MONOTONIC as nanoseconds: for ages and lags, and for
// intervals and deadlines that no change of the wall clock moves.
std::int64_t unix_now_ns() noexcept;
std::int64_t steady_now_ns() noexcept;
Clock system_clock();
Clock fixed_clock(Instant at);

// --- Go family (steps) -------------------------------------------------------

// Parse the text of a JSON string (without its quotes, escapes not undone: Go reads
// the raw bytes, so a backslash fails) as Go's time.Time.UnmarshalJSON does. nullopt
// when Go would fail. The offset is applied: the result is UTC. Allocates nothing.
std::optional<Instant> parse_rfc3339(std::string_view text) noexcept;
// Would parse_rfc3339 take text? (the same test, without reading the instant: for a
// time that is only checked)
bool is_rfc3339(std::string_view text) noexcept;

// Longest text the formatters below write, without a terminating NUL.
inline constexpr std::size_t rfc3339_max = 64;

// Go's t.UTC().Format(time.RFC3339Nano): "2006-01-02T15:04:05.999999999Z", fraction
// zeros trimmed, no fraction when zero. Writes into out (at least rfc3339_max bytes),
// returns the length. Years outside 0..9999 are written as Go's Format writes them:
// at least four digits, '-' before a negative year ("-0001-...", "12345-...").
// Allocates nothing.
std::size_t format_rfc3339_nano(Instant t, char* out) noexcept;
std::string format_rfc3339_nano(Instant t);
// Go's t.UTC().Format(time.RFC3339): seconds only, "Z".
std::size_t format_rfc3339(Instant t, char* out) noexcept;
std::string format_rfc3339(Instant t);

// --- JS family (locks) -------------------------------------------------------

// The local-time offset, in minutes east of UTC, in force at a local wall-clock time
// given as milliseconds since the epoch read as if it were UTC. Used for date-times
// without an offset, which JS reads as local time.
using LocalOffset = std::function<std::int32_t(std::int64_t local_ms)>;
// The process's time zone (TZ, /etc/localtime, read through localtime_r), as V8
// reads it: a wall time skipped or repeated by a transition takes the offset in force
// before the transition. Offsets with seconds (local mean time before about 1900)
// are truncated to whole minutes here; parse_js_date(text) keeps their seconds.
LocalOffset system_local_offset();

// Date.parse over the ISO format only (DESIGN.md): milliseconds since the epoch,
// or nullopt for "no readable time" (including anything beyond JS's +-8.64e15 ms).
// What V8's ISO reader (ParseES5DateTime) takes to the end of its input is read as
// V8 reads it, quirks included: 't' and 'z' in either case, a ±HHmm offset, a day
// 29..31 past the month's end rolling over, T24:00 as the next midnight, a fraction
// of any length cut to milliseconds (V8 keeps nine significant digits, so
// ".0100000000" is 100 ms), and a NUL taken for the end of the input. Date-time
// forms without an offset are local time: the one-argument form uses the process's
// zone, the other `local` (an empty `local` makes them unreadable).
std::optional<std::int64_t> parse_js_date(std::string_view text);
std::optional<std::int64_t> parse_js_date(std::string_view text, const LocalOffset& local);

// new Date(ms).toISOString(): "2024-01-02T03:04:05.678Z", extended years as
// "+YYYYYY" / "-YYYYYY" outside 0..9999. For ms beyond JS's range, where JS throws,
// the same form is written with as many year digits as needed.
std::string format_js_iso(std::int64_t unix_ms);

}  // namespace leasejudge
