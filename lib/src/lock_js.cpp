// JavaScript's view of text and JSON (see lock_js.hpp for the rules kept).
#include "lock_js.hpp"

#include <locale.h>
#include <wctype.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>
#include <vector>

#include "json_string.hpp"

namespace leasejudge::js {

namespace {

using simdjson::SUCCESS;
namespace od = simdjson::ondemand;

using json_string::append_code_point;  // a surrogate as its 3-byte form: what WTF-8 keeps

constexpr std::string_view replacement = "\xEF\xBF\xBD";

// Bytes of the WTF-8 sequence led by lead (1 for a stray byte, which valid input
// never holds).
std::size_t sequence_length(unsigned char lead) noexcept {
  if (lead < 0x80) return 1;
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

bool is_lone_surrogate(std::string_view s, std::size_t i) noexcept {
  return i + 3 <= s.size() && static_cast<unsigned char>(s[i]) == 0xED && static_cast<unsigned char>(s[i + 1]) >= 0xA0;
}

// Length of the JS white space or line terminator at the front of s (0: none).
std::size_t space_at_front(std::string_view s) noexcept {
  if (s.empty()) return 0;
  auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = b(0);
  if (c == 0x09 || c == 0x0A || c == 0x0B || c == 0x0C || c == 0x0D || c == 0x20) return 1;
  if (c == 0xC2 && s.size() >= 2 && b(1) == 0xA0) return 2;  // U+00A0
  if (s.size() < 3) return 0;
  if (c == 0xE1 && b(1) == 0x9A && b(2) == 0x80) return 3;  // U+1680
  if (c == 0xE2 && b(1) == 0x80 && (b(2) <= 0x8A || b(2) == 0xA8 || b(2) == 0xA9 || b(2) == 0xAF))
    return 3;                                               // U+2000..200A, 2028, 2029, 202F
  if (c == 0xE2 && b(1) == 0x81 && b(2) == 0x9F) return 3;  // U+205F
  if (c == 0xE3 && b(1) == 0x80 && b(2) == 0x80) return 3;  // U+3000
  if (c == 0xEF && b(1) == 0xBB && b(2) == 0xBF) return 3;  // U+FEFF
  return 0;
}

// Length of the JS white space or line terminator at the back of s (0: none).
std::size_t space_at_back(std::string_view s) noexcept {
  for (std::size_t len = 1; len <= 3 && len <= s.size(); ++len) {
    std::string_view tail = s.substr(s.size() - len);
    if (space_at_front(tail) == len) return len;
  }
  return 0;
}

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

std::string_view trim_json_space(std::string_view s) noexcept {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// The contents of the string token starting at its opening quote, up to (not
// including) its closing quote; false when token does not end right after it.
bool string_contents(std::string_view token, std::string_view& contents, bool whole) noexcept {
  if (token.empty() || token.front() != '"') return false;
  std::size_t i = 1;
  while (i < token.size() && token[i] != '"') i += token[i] == '\\' ? 2 : 1;
  if (i >= token.size()) return false;
  if (whole && i + 1 != token.size()) return false;
  contents = token.substr(1, i - 1);
  return true;
}

}  // namespace

// --- text ------------------------------------------------------------------------

std::string_view decode_lossy(std::string_view bytes, std::string& storage) {
  if (simdjson::validate_utf8(bytes.data(), bytes.size())) return bytes;
  storage.clear();
  storage.reserve(bytes.size() + 16);
  std::size_t i = 0;
  const std::size_t n = bytes.size();
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  while (i < n) {
    unsigned char c = at(i);
    if (c < 0x80) {
      storage.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    std::size_t need = 0;
    unsigned char lower = 0x80, upper = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lower = 0xA0;
      if (c == 0xED) upper = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lower = 0x90;
      if (c == 0xF4) upper = 0x8F;
    } else {
      storage.append(replacement);
      ++i;
      continue;
    }
    // Take continuation bytes while they fit; a byte that does not fit ends the
    // maximal subpart, which becomes one U+FFFD, and is read again on its own.
    std::size_t seen = 0;
    std::size_t j = i + 1;
    while (seen < need && j < n) {
      unsigned char d = at(j);
      if (d < lower || d > upper) break;
      lower = 0x80;
      upper = 0xBF;
      ++seen;
      ++j;
    }
    if (seen == need) {
      storage.append(bytes.substr(i, j - i));
    } else {
      storage.append(replacement);
    }
    i = j;
  }
  return storage;
}

std::string_view trim(std::string_view text) noexcept {
  for (std::size_t k = space_at_front(text); k != 0; k = space_at_front(text)) text.remove_prefix(k);
  for (std::size_t k = space_at_back(text); k != 0; k = space_at_back(text)) text.remove_suffix(k);
  return text;
}

std::string slice_utf16(std::string_view wtf8, std::size_t n) {
  std::string out;
  std::size_t units = 0;
  std::size_t i = 0;
  while (i < wtf8.size() && units < n) {
    std::size_t len = sequence_length(static_cast<unsigned char>(wtf8[i]));
    if (i + len > wtf8.size()) len = wtf8.size() - i;
    if (len == 4) {
      if (units + 2 > n) {
        // Only the high surrogate fits: JS keeps it alone; Node writes U+FFFD.
        out.append(replacement);
        break;
      }
      units += 2;
    } else {
      units += 1;
    }
    if (len == 3 && is_lone_surrogate(wtf8, i)) {
      out.append(replacement);
    } else {
      out.append(wtf8.substr(i, len));
    }
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, std::string_view wtf8) {
  // A lone surrogate's WTF-8 starts with 0xED: without one, the text is UTF-8 already.
  if (std::memchr(wtf8.data(), 0xED, wtf8.size()) == nullptr) {
    out.append(wtf8);
    return;
  }
  std::size_t start = 0;
  for (std::size_t i = 0; i < wtf8.size();) {
    if (is_lone_surrogate(wtf8, i)) {
      out.append(wtf8.substr(start, i - start));
      out.append(replacement);
      i += 3;
      start = i;
      continue;
    }
    i += sequence_length(static_cast<unsigned char>(wtf8[i]));
  }
  if (start < wtf8.size()) out.append(wtf8.substr(start));
}

namespace {

// The code point of the WTF-8 sequence at i and its length (a stray byte: itself).
std::uint32_t code_point_at(std::string_view s, std::size_t i, std::size_t& len) noexcept {
  auto b = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[k])); };
  len = sequence_length(static_cast<unsigned char>(s[i]));
  if (i + len > s.size()) len = 1;
  switch (len) {
    case 2:
      return ((b(i) & 0x1F) << 6) | (b(i + 1) & 0x3F);
    case 3:
      return ((b(i) & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
    case 4:
      return ((b(i) & 0x07) << 18) | ((b(i + 1) & 0x3F) << 12) | ((b(i + 2) & 0x3F) << 6) | (b(i + 3) & 0x3F);
    default:
      return b(i);
  }
}

locale_t unicode_ctype() {
  static const locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return loc;
}

bool is_cased(std::uint32_t cp, locale_t loc) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z');
  if (loc == nullptr || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  return iswupper_l(static_cast<wint_t>(cp), loc) || iswlower_l(static_cast<wint_t>(cp), loc);
}

bool is_case_ignorable(std::uint32_t cp) {
  return cp == '\'' || cp == '.' || cp == ':' || cp == '^' || cp == '`' || cp == 0xA8 || cp == 0xAD || cp == 0xAF ||
         cp == 0xB4 || cp == 0xB7 || cp == 0xB8 || cp == 0x2019 || (cp >= 0x300 && cp <= 0x36F);
}

}  // namespace

std::string to_lower(std::string_view text) {
  const locale_t loc = unicode_ctype();
  std::vector<std::uint32_t> cps;
  cps.reserve(text.size());
  for (std::size_t i = 0, len = 0; i < text.size(); i += len) cps.push_back(code_point_at(text, i, len));
  std::string out;
  out.reserve(text.size());
  for (std::size_t k = 0; k < cps.size(); ++k) {
    std::uint32_t cp = cps[k];
    if (cp < 0x80) {
      if (cp >= 'A' && cp <= 'Z') cp += 'a' - 'A';
      out.push_back(static_cast<char>(cp));
      continue;
    }
    if (loc == nullptr || (cp >= 0xD800 && cp <= 0xDFFF)) {
      append_code_point(out, cp);
      continue;
    }
    if (cp == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE: SpecialCasing
      append_code_point(out, 'i');
      append_code_point(out, 0x307);
      continue;
    }
    if (cp == 0x3A3) {  // GREEK CAPITAL SIGMA: final at the end of a word
      bool before = false, after = false;
      for (std::size_t j = k; j-- > 0;) {
        if (is_case_ignorable(cps[j])) continue;
        before = is_cased(cps[j], loc);
        break;
      }
      for (std::size_t j = k + 1; j < cps.size(); ++j) {
        if (is_case_ignorable(cps[j])) continue;
        after = is_cased(cps[j], loc);
        break;
      }
      append_code_point(out, before && !after ? 0x3C2 : 0x3C3);
      continue;
    }
    append_code_point(out, static_cast<std::uint32_t>(towlower_l(static_cast<wint_t>(cp), loc)));
  }
  return out;
}

void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out.append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out.append(v < 0 ? "-Infinity" : "Infinity");
    return;
  }
  if (v == 0) {  // +0 and -0 alike
    out.push_back('0');
    return;
  }
  if (v < 0) out.push_back('-');
  // A whole number below 2^53 is its decimal digits, exactly (a pid, say).
  if (std::fabs(v) < 9007199254740992.0 && v == std::floor(v)) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(std::fabs(v)));
    out.append(buf, r.ptr);
    return;
  }
  // The shortest round-trip digits, then ECMAScript's Number::toString layout.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  std::size_t e_pos = sci.find('e');
  std::string digits;
  digits.push_back(sci[0]);
  if (e_pos > 1) digits.append(sci.substr(2, e_pos - 2));
  int exponent = 0;
  std::string_view exp_text = sci.substr(e_pos + 1);
  if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  if (k <= n && n <= 21) {
    out.append(digits);
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<std::size_t>(n));
    out.push_back('.');
    out.append(digits, static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out.append("0.");
    out.append(static_cast<std::size_t>(-n), '0');
    out.append(digits);
  } else {
    const int e = n - 1;
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out.push_back('e');
    out.push_back(e < 0 ? '-' : '+');
    out.append(std::to_string(e < 0 ? -e : e));
  }
}

void append_json_string(std::string& out, std::string_view wtf8) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t start = 0;
  auto flush = [&](std::size_t upto) { out.append(wtf8.substr(start, upto - start)); };
  for (std::size_t i = 0; i < wtf8.size();) {
    unsigned char c = static_cast<unsigned char>(wtf8[i]);
    const char* esc = nullptr;
    switch (c) {
      case '"':
        esc = "\\\"";
        break;
      case '\\':
        esc = "\\\\";
        break;
      case '\b':
        esc = "\\b";
        break;
      case '\f':
        esc = "\\f";
        break;
      case '\n':
        esc = "\\n";
        break;
      case '\r':
        esc = "\\r";
        break;
      case '\t':
        esc = "\\t";
        break;
      default:
        break;
    }
    if (esc != nullptr) {
      flush(i);
      out.append(esc);
      start = ++i;
      continue;
    }
    if (c < 0x20) {
      flush(i);
      out.append("\\u00");
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xF]);
      start = ++i;
      continue;
    }
    if (is_lone_surrogate(wtf8, i)) {
      flush(i);
      std::uint32_t cu = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(wtf8[i + 1]) & 0x3Fu) << 6) |
                         (static_cast<unsigned char>(wtf8[i + 2]) & 0x3Fu);
      out.append("\\u");
      out.push_back(hex[(cu >> 12) & 0xF]);
      out.push_back(hex[(cu >> 8) & 0xF]);
      out.push_back(hex[(cu >> 4) & 0xF]);
      out.push_back(hex[cu & 0xF]);
      i += 3;
      start = i;
      continue;
    }
    i += sequence_length(c);
  }
  flush(wtf8.size());
  out.push_back('"');
}

void append_json_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out.append("null");
    return;
  }
  append_number(out, v);
}

bool contains_ascii_nocase(std::string_view haystack, std::string_view needle) noexcept {
  auto fold = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  if (needle.empty()) return true;
  if (needle.size() > haystack.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    std::size_t k = 0;
    while (k < needle.size() && fold(haystack[i + k]) == fold(needle[k])) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

// --- JSON.parse --------------------------------------------------------------------

bool parse_json_number(std::string_view s, double& out) noexcept {
  const std::size_t n = s.size();
  std::size_t i = 0;
  bool negative = false;
  if (i < n && s[i] == '-') {
    negative = true;
    ++i;
  }
  const std::size_t int_begin = i;
  if (i < n && s[i] == '0') {
    ++i;
  } else if (i < n && s[i] >= '1' && s[i] <= '9') {
    while (i < n && is_digit(s[i])) ++i;
  } else {
    return false;
  }
  const std::size_t int_end = i;
  std::size_t frac_begin = i, frac_end = i;
  if (i < n && s[i] == '.') {
    ++i;
    frac_begin = i;
    if (i >= n || !is_digit(s[i])) return false;
    while (i < n && is_digit(s[i])) ++i;
    frac_end = i;
  }
  std::int64_t exponent = 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
      exp_negative = s[i] == '-';
      ++i;
    }
    if (i >= n || !is_digit(s[i])) return false;
    while (i < n && is_digit(s[i])) {
      // Saturate: beyond a billion the sign alone decides the outcome.
      if (exponent < 1000000000) exponent = exponent * 10 + (s[i] - '0');
      ++i;
    }
    if (exp_negative) exponent = -exponent;
  }
  if (i != n) return false;
  double value = 0;
  auto r = std::from_chars(s.data(), s.data() + n, value);
  if (r.ec == std::errc() && r.ptr == s.data() + n) {
    out = value;
    return true;
  }
  if (r.ec != std::errc::result_out_of_range) return false;
  // Out of range: the decimal exponent of the leading digit says overflow
  // (JSON.parse gives +-Infinity) or underflow (+-0).
  std::int64_t magnitude = 0;
  bool found = false;
  for (std::size_t k = int_begin; k < int_end && !found; ++k) {
    if (s[k] != '0') {
      magnitude = static_cast<std::int64_t>(int_end - k);
      found = true;
    }
  }
  for (std::size_t k = frac_begin; k < frac_end && !found; ++k) {
    if (s[k] != '0') {
      magnitude = -static_cast<std::int64_t>(k - frac_begin);
      found = true;
    }
  }
  magnitude += exponent;
  double big = found && magnitude > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  out = negative ? -big : big;
  return true;
}

bool unescape_json_string(std::string_view raw, std::string& out) {
  out.clear();
  out.reserve(raw.size());
  // A lone surrogate stays, as in a JS string.
  return json_string::append_unescaped(raw, out, json_string::LoneSurrogate::keep);
}

bool JsonReader::read_key(simdjson::simdjson_result<od::field>& field, std::string_view& out, std::string& storage) {
  od::raw_json_string raw;
  if (field.key().get(raw) != SUCCESS) return false;
  auto error = field.unescaped_key().get(out);
  if (error == SUCCESS) return true;
  if (error != simdjson::STRING_ERROR) return false;
  // simdjson refuses lone surrogates; JSON.parse keeps them. The raw key sits in
  // the padded buffer and its closing quote was found by simdjson already.
  const char* p = raw.raw();
  std::size_t i = 0;
  while (p[i] != '"') i += p[i] == '\\' ? 2 : 1;
  if (!unescape_json_string(std::string_view(p, i), storage)) return false;
  out = storage;
  return true;
}

Read JsonReader::string(od::value v, std::string& out) {
  od::json_type type;
  if (v.type().get(type) != SUCCESS) return Read::bad_json;
  if (type != od::json_type::string) {
    return skip(v, 0) == Read::ok ? Read::wrong_type : Read::bad_json;
  }
  std::string_view s;
  auto error = v.get_string().get(s);
  if (error == SUCCESS) {
    out.assign(s);
    return Read::ok;
  }
  if (error != simdjson::STRING_ERROR) return Read::bad_json;
  std::string_view token = v.raw_json_token();
  std::string_view contents;
  if (!string_contents(token, contents, false)) return Read::bad_json;
  return unescape_json_string(contents, out) ? Read::ok : Read::bad_json;
}

Read JsonReader::text(od::value v, std::string_view& out, std::forward_list<std::string>& spill) {
  od::json_type type;
  if (v.type().get(type) != SUCCESS) return Read::bad_json;
  if (type != od::json_type::string) {
    return skip(v, 0) == Read::ok ? Read::wrong_type : Read::bad_json;
  }
  auto error = v.get_string().get(out);
  if (error == SUCCESS) return Read::ok;
  if (error != simdjson::STRING_ERROR) return Read::bad_json;
  std::string_view token = v.raw_json_token();
  std::string_view contents;
  if (!string_contents(token, contents, false)) return Read::bad_json;
  std::string& kept = spill.emplace_front();
  if (!unescape_json_string(contents, kept)) return Read::bad_json;
  out = kept;
  return Read::ok;
}

Read JsonReader::number(od::value v, double& out) {
  od::json_type type;
  if (v.type().get(type) != SUCCESS) return Read::bad_json;
  if (type != od::json_type::number) {
    return skip(v, 0) == Read::ok ? Read::wrong_type : Read::bad_json;
  }
  double d = 0;
  if (v.get_double().get(d) == SUCCESS) {
    out = d;
    return Read::ok;
  }
  // simdjson refuses numbers beyond the double range; JSON.parse rounds them.
  std::string_view token = v.raw_json_token();
  return parse_json_number(trim_json_space(token), out) ? Read::ok : Read::bad_json;
}

Read JsonReader::skip(od::value v, int depth) {
  if (depth > max_depth) return Read::bad_json;
  od::json_type type;
  if (v.type().get(type) != SUCCESS) return Read::bad_json;
  switch (type) {
    case od::json_type::object: {
      od::object obj;
      if (v.get_object().get(obj) != SUCCESS) return Read::bad_json;
      return fields(obj, depth, [](std::string_view, od::value inner, int d) { return skip(inner, d); });
    }
    case od::json_type::array: {
      od::array arr;
      if (v.get_array().get(arr) != SUCCESS) return Read::bad_json;
      for (auto element : arr) {
        od::value inner;
        if (element.get(inner) != SUCCESS) return Read::bad_json;
        if (skip(inner, depth + 1) != Read::ok) return Read::bad_json;
      }
      return Read::ok;
    }
    case od::json_type::number: {
      double d;
      return number(v, d) == Read::ok ? Read::ok : Read::bad_json;
    }
    case od::json_type::string: {
      std::string s;
      return string(v, s) == Read::ok ? Read::ok : Read::bad_json;
    }
    case od::json_type::boolean: {
      bool b;
      return v.get_bool().get(b) == SUCCESS ? Read::ok : Read::bad_json;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (v.is_null().get(is_null) != SUCCESS) return Read::bad_json;
      return is_null ? Read::ok : Read::bad_json;
    }
  }
  return Read::bad_json;
}

namespace {

constexpr std::size_t shared_text_max = std::size_t(1) << 20;
thread_local ReaderBuffers shared_buffers;

}  // namespace

JsonReader::~JsonReader() {
  if (buffers_ == &shared_buffers) shared_buffers.lent = false;
}

Read JsonReader::open_object(std::string_view text, od::object& root) {
  if (buffers_ == nullptr) {
    if (!shared_buffers.lent && text.size() <= shared_text_max) {
      shared_buffers.lent = true;
      buffers_ = &shared_buffers;
    } else {
      own_ = std::make_unique<ReaderBuffers>();
      buffers_ = own_.get();
    }
  }
  const std::size_t need = text.size() + simdjson::SIMDJSON_PADDING;
  if (buffers_->capacity < need) {
    buffers_->text = std::make_unique<char[]>(need);
    buffers_->capacity = need;
  }
  char* padded = buffers_->text.get();
  if (!text.empty()) std::memcpy(padded, text.data(), text.size());
  std::memset(padded + text.size(), 0, simdjson::SIMDJSON_PADDING);
  text_ = std::string_view(padded, text.size());
  if (buffers_->parser.iterate(simdjson::padded_string_view(padded, text.size(), need)).get(doc_) != SUCCESS)
    return Read::bad_json;
  od::json_type type;
  if (doc_.type().get(type) != SUCCESS) return Read::bad_json;
  if (type == od::json_type::object) {
    return doc_.get_object().get(root) == SUCCESS ? Read::ok : Read::bad_json;
  }
  return check_root_scalar(type);
}

Read JsonReader::check_root_scalar(od::json_type type) {
  if (type == od::json_type::array) {
    od::array arr;
    if (doc_.get_array().get(arr) != SUCCESS) return Read::bad_json;
    for (auto element : arr) {
      od::value inner;
      if (element.get(inner) != SUCCESS) return Read::bad_json;
      if (skip(inner, 1) != Read::ok) return Read::bad_json;
    }
    return finish() == Read::ok ? Read::wrong_type : Read::bad_json;
  }
  // A scalar root: the whole text, white space aside, must be that one token.
  std::string_view token;
  if (doc_.raw_json_token().get(token) != SUCCESS) return Read::bad_json;
  token = trim_json_space(token);
  std::string_view whole = trim_json_space(std::string_view(text_.data(), text_.size()));
  if (token.size() != whole.size()) return Read::bad_json;
  bool valid = false;
  switch (type) {
    case od::json_type::number: {
      double d;
      valid = parse_json_number(token, d);
      break;
    }
    case od::json_type::string: {
      std::string_view contents;
      std::string s;
      valid = string_contents(token, contents, true) && unescape_json_string(contents, s);
      break;
    }
    case od::json_type::boolean:
      valid = token == "true" || token == "false";
      break;
    case od::json_type::null:
      valid = token == "null";
      break;
    default:
      break;
  }
  return valid ? Read::wrong_type : Read::bad_json;
}

Read JsonReader::finish() {
  const char* location = nullptr;
  // Past the root's end simdjson says OUT_OF_BOUNDS; a location means more tokens.
  auto error = doc_.current_location().get(location);
  return error == simdjson::OUT_OF_BOUNDS ? Read::ok : Read::bad_json;
}

}  // namespace leasejudge::js
