// The time parsers and formatters of both families on any bytes. Properties: a
// time read is within its family's range and, written out and read again, is the
// same instant (for Go's, when its year in UTC has four digits); is_rfc3339 takes
// what parse_rfc3339 takes; the JS formatter writes exactly what the JS reader reads
// back for every time in the Date range and refuses every other; Go's RFC 3339 reader
// takes only text shaped as Go's layout (date, 'T', time, 'Z' or an offset).
#include <time.h>

#include <optional>

#include "fuzz.hpp"
#include "leasejudge/clock.hpp"

namespace {

constexpr std::int64_t js_limit = 8'640'000'000'000'000;

std::optional<std::int64_t> js_parse(std::string_view text) {
  std::int64_t ms = 0;
  lj_error_t* err = nullptr;
  int rc = lj_lock_time_parse(&ms, text.data(), text.size(), &err);
  fuzz::check_error(err, rc);
  if (rc != LJ_OK) {
    FUZZ_CHECK(rc == LJ_EPARSE);
    return std::nullopt;
  }
  return ms;
}

std::optional<std::string> js_format(std::int64_t ms) {
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_lock_time_format(&out, &len, ms, &err);
  fuzz::check_error(err, rc);
  if (rc != LJ_OK) {
    FUZZ_CHECK(rc == LJ_EINVAL && out == nullptr);
    return std::nullopt;
  }
  FUZZ_CHECK(fuzz::c_text(out, len));
  std::string s(out, len);
  lj_free(out);
  return s;
}

void fuzz_js(std::string_view text) {
  auto ms = js_parse(text);
  FUZZ_CHECK(ms == leasejudge::parse_js_date(text));
  if (!ms) return;
  FUZZ_CHECK(*ms >= -js_limit && *ms <= js_limit);
  auto written = js_format(*ms);
  FUZZ_CHECK(written.has_value());
  FUZZ_CHECK(js_parse(*written) == ms);
}

void fuzz_js_format(std::int64_t ms) {
  if (ms == LJ_TIME_DEFAULT) return;  // the system clock
  auto written = js_format(ms);
  FUZZ_CHECK(written.has_value() == (ms >= -js_limit && ms <= js_limit));
  if (!written) return;
  // toISOString's shape: "YYYY-MM-DDTHH:mm:ss.sssZ" or with a signed six-digit year.
  FUZZ_CHECK(written->size() == 24 || written->size() == 27);
  FUZZ_CHECK(written->back() == 'Z');
  FUZZ_CHECK(js_parse(*written) == ms);
}

void fuzz_go(std::string_view text) {
  std::int64_t ns = 0;
  lj_error_t* err = nullptr;
  int rc = lj_step_time_parse(&ns, text.data(), text.size(), &err);
  fuzz::check_error(err, rc);
  auto at = leasejudge::parse_rfc3339(text);
  FUZZ_CHECK((rc == LJ_EPARSE) == !at.has_value());
  FUZZ_CHECK(leasejudge::is_rfc3339(text) == at.has_value());
  if (!at) return;
  FUZZ_CHECK(at->nsec >= 0 && at->nsec < 1000000000);
  // Go's layout: four-digit year, '-', month, '-', day, 'T', then the clock (its
  // hour of one or two digits), then 'Z' or an offset.
  FUZZ_CHECK(text.size() >= 19 && text[4] == '-' && text[7] == '-' && text[10] == 'T');
  char buf[leasejudge::rfc3339_max];
  std::size_t n = leasejudge::format_rfc3339_nano(*at, buf);
  FUZZ_CHECK(n <= sizeof buf);
  auto back = leasejudge::parse_rfc3339(std::string_view(buf, n));
  // An offset can carry a time of 0000 or 9999 over into a year of other than four
  // digits in UTC, which Go writes and does not read back (as Go's own Format and Parse).
  const bool four_digit_year = at->sec >= -62167219200 && at->sec <= 253402300799;  // 0000-01-01, 9999-12-31
  if (four_digit_year) {
    FUZZ_CHECK(back.has_value() && *back == *at);
  } else {
    FUZZ_CHECK(!back.has_value() && (n < 20 || buf[4] != '-'));
  }
  if (rc == LJ_OK) {
    FUZZ_CHECK(ns / 1000000000 == at->sec || (ns < 0 && ns / 1000000000 - 1 == at->sec));
  } else {
    FUZZ_CHECK(rc == LJ_EINVAL);  // beyond 1677..2262
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TZ", "UTC", 1);
  tzset();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t mode = in.byte();
  if (mode & 1) fuzz_js_format(in.i64());
  if (mode & 2) fuzz_js_format(in.i64() % (js_limit + 1));
  std::string_view text = in.rest();
  if (mode & 4) {
    fuzz_go(text);
  } else {
    fuzz_js(text);
  }
  return 0;
}
