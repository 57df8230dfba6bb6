// What every fuzz target shares: reading the fuzzer's bytes as choices and slices,
// and the properties every output must have. A failed property aborts, which
// libFuzzer reports as a finding with the input that led to it.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "leasejudge.h"

#define FUZZ_CHECK(cond)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "property failed: %s\n  at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

namespace fuzz {

// The fuzzer's bytes, taken from the front: fixed-size choices, then slices whose
// length is a byte (or two) of the input. Past the end, choices are 0 and slices
// empty, so every input is some run of the target.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : p_(data), n_(size) {}

  std::uint8_t byte() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  bool flag() { return (byte() & 1) != 0; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  std::int32_t i32() { return static_cast<std::int32_t>(static_cast<std::uint32_t>(u64() >> 32)); }
  // A slice of up to 255 bytes (its length a byte of the input).
  std::string_view small() { return take(byte()); }
  // A slice of up to 65535 bytes.
  std::string_view medium() {
    std::size_t len = static_cast<std::size_t>(byte()) << 8;
    len |= byte();
    return take(len);
  }
  std::string_view take(std::size_t len) {
    if (len > n_) len = n_;
    std::string_view s(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    n_ -= len;
    return s;
  }
  std::string_view rest() { return take(n_); }
  bool empty() const { return n_ == 0; }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
};

inline bool utf8(std::string_view s) {
  return simdjson::validate_utf8(s.data(), s.size());
}

// A string the C ABI handed out: (s, len) NUL-terminated, no NUL inside, UTF-8.
inline bool c_text(const char* s, std::size_t len) {
  return s != nullptr && s[len] == '\0' && std::strlen(s) == len && utf8(std::string_view(s, len));
}

// Valid JSON (RFC 8259, UTF-8) as a strict parser reads it.
inline bool valid_json(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  return parser.parse(padded).error() == simdjson::SUCCESS;
}

// Valid JSON by RFC 8259's grammar, which lets a \u escape name a lone UTF-16
// surrogate (JSON.stringify writes one so): such escapes are read as any other,
// everything else as strictly as valid_json.
inline bool valid_json_grammar(std::string_view text) {
  std::string copy(text);
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  for (std::size_t i = 0; i + 1 < copy.size(); ++i) {
    if (copy[i] != '\\') continue;
    if (copy[i + 1] == 'u' && i + 5 < copy.size() && (copy[i + 2] == 'd' || copy[i + 2] == 'D') && hex(copy[i + 3]) &&
        hex(copy[i + 4]) && hex(copy[i + 5])) {
      const char third = static_cast<char>(copy[i + 3] | 0x20);
      if (third >= '8' && third <= '9') copy.replace(i + 2, 4, "0020");
      if (third >= 'a' && third <= 'f') copy.replace(i + 2, 4, "0020");
    }
    ++i;  // the escaped character
  }
  // RFC 8259 sets no limit on a number's digits (JSON.stringify writes 1e20 as
  // 100000000000000000000), where simdjson refuses an integer past 64 bits: outside
  // strings, a run of more than 18 digits is cut to its first two, which keeps a
  // leading zero's error and every other token as it is.
  std::string cut;
  cut.reserve(copy.size());
  bool in_string = false;
  for (std::size_t i = 0; i < copy.size();) {
    const char c = copy[i];
    if (in_string) {
      cut.push_back(c);
      if (c == '\\' && i + 1 < copy.size()) cut.push_back(copy[++i]);
      else if (c == '"') in_string = false;
      ++i;
    } else if (c >= '0' && c <= '9') {
      std::size_t j = i;
      while (j < copy.size() && copy[j] >= '0' && copy[j] <= '9') ++j;
      cut.append(copy, i, j - i > 18 ? 2 : j - i);
      i = j;
    } else {
      in_string = c == '"';
      cut.push_back(c);
      ++i;
    }
  }
  return valid_json(cut);
}

// The error object's message is text too; destroys it.
inline void check_error(lj_error_t* err, int rc) {
  if (err == nullptr) return;
  FUZZ_CHECK(lj_error_code(err) == rc);
  const char* m = lj_error_message(err);
  FUZZ_CHECK(c_text(m, std::strlen(m)));
  lj_error_destroy(err);
}

// The step targets' plan: node n1, this process's owner token step_self, now
// 2024-05-01T12:00:00Z, the process started at 2024-05-01T11:00:00Z.
inline constexpr char step_self[] = "0b5c3e0e-7d7a-4c4b-9d5e-1f2a3b4c5d6e.4242.lvq1g2a8";
inline lj_step_plan_options_t step_plan_options() {
  lj_step_plan_options_t o = LJ_STEP_PLAN_OPTIONS_INIT;
  o.rules.node = "n1";
  o.rules.node_len = 2;
  o.rules.owner = step_self;
  o.rules.owner_len = sizeof step_self - 1;
  o.rules.now_ns = INT64_C(1714564800000000000);
  o.rules.before_ns = INT64_C(1714561200000000000);
  return o;
}

}  // namespace fuzz
