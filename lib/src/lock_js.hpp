// JavaScript's view of text and JSON, for the lock family.
//
// A lock body is written and read by JavaScript code: bytes are decoded into a JS
// string (ill-formed UTF-8 becomes U+FFFD), JSON.parse reads it, and JSON.stringify
// writes bodies back. leasejudge must read and write exactly the same, so this file
// keeps JavaScript's rules where they differ from simdjson's:
//   - JSON.parse takes lone UTF-16 surrogates in \u escapes ("\ud800") and numbers
//     beyond the double range (1e400 is Infinity, 1e-400 is 0); simdjson rejects
//     both, so those two cases take a fallback path here.
//   - strings are kept as WTF-8: UTF-8 that may also hold a lone surrogate as its
//     3-byte form, so that a body read and renewed keeps every JS code unit.
//   - JSON.parse takes duplicate keys (the last wins) and any nesting depth; here
//     nesting deeper than 1000 levels (within simdjson's 1024) is not read (the
//     caller's safe direction: "not readable").
// Private to lib/: simdjson never reaches a public header.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <forward_list>
#include <memory>
#include <string>
#include <string_view>

namespace leasejudge::js {

// --- text ------------------------------------------------------------------------

// bytes as a JS string holds them after UTF-8 decoding with replacement (the
// Encoding Standard: each maximal ill-formed subpart becomes U+FFFD). Returns bytes
// itself when they are valid UTF-8, else a view of storage.
std::string_view decode_lossy(std::string_view bytes, std::string& storage);

// String.prototype.trim: drops JS white space and line terminators at both ends
// (tab, LF, VT, FF, CR, space, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000, U+FEFF).
std::string_view trim(std::string_view text) noexcept;

// The first n UTF-16 code units of a WTF-8 string (String.prototype.slice(0, n)),
// written out as UTF-8: a surrogate pair cut in half, like any lone surrogate, is
// written as U+FFFD, which is what Node writes for it.
std::string slice_utf16(std::string_view wtf8, std::size_t n);

// A WTF-8 string written out as UTF-8 (lone surrogates as U+FFFD).
void append_utf8(std::string& out, std::string_view wtf8);

// String.prototype.toLowerCase over WTF-8: ASCII by hand, the rest by the C
// library's Unicode tables (the C.UTF-8 locale's towlower) with JS's two special
// mappings: U+0130 becomes "i" + U+0307, and a capital sigma ending a word becomes
// the final sigma (words told apart approximately: a cased letter before, none
// after, skipping combining marks and a few ignorable signs). Without a C.UTF-8
// locale only ASCII letters are lowered. Lone surrogates are kept.
std::string to_lower(std::string_view text);

// Number.prototype.toString(): the shortest digits that round-trip, as plain
// decimals for 1e-7 < |v| < 1e21 and with an exponent ("1e+21", "1.5e-7") beyond;
// -0 is "0"; "NaN", "Infinity", "-Infinity".
void append_number(std::string& out, double v);

// JSON.stringify of a string: ", \ and control characters escaped (\b \f \n \r \t,
// else \u00xx), lone surrogates as \udxxx, everything else as it is.
void append_json_string(std::string& out, std::string_view wtf8);
// JSON.stringify of a number: append_number, or null when not finite.
void append_json_number(std::string& out, double v);

// Case-insensitive search for an ASCII needle (JS /needle/i without the u flag
// folds only ASCII letters onto ASCII letters).
bool contains_ascii_nocase(std::string_view haystack, std::string_view needle) noexcept;

// --- JSON.parse --------------------------------------------------------------------

// How reading a value went: it is what was asked (ok), it is valid JSON of another
// type (wrong_type), or JSON.parse would throw on the text (bad_json).
enum class Read : std::uint8_t { ok, wrong_type, bad_json };

// The deepest nesting read: below simdjson's default maximum depth (1024), which
// its iterator must never reach.
inline constexpr int max_depth = 1000;

// One JSON text read as JSON.parse reads it. The text is copied into simdjson's
// padded buffer; views handed out live as long as the reader. Not copyable.
// The parser and padded copy a reader works with. Each thread keeps one for texts of
// up to a MiB and lends it to one reader at a time (a judge reads bodies by the
// thousand: parser buffers made per body cost more than the reading); a reader
// that finds it lent, or a larger text, uses its own.
struct ReaderBuffers {
  simdjson::ondemand::parser parser;
  std::unique_ptr<char[]> text;
  std::size_t capacity = 0;  // bytes of text, padding included
  bool lent = false;
};

class JsonReader {
 public:
  JsonReader() = default;
  ~JsonReader();
  JsonReader(const JsonReader&) = delete;
  JsonReader& operator=(const JsonReader&) = delete;

  // Start on text, which must be valid UTF-8 (decode_lossy first). The root must
  // be an object for ok; a root of another type is checked to be valid JSON
  // (wrong_type) or not (bad_json). After the fields are read, call finish().
  Read open_object(std::string_view text, simdjson::ondemand::object& root);
  // After the root object has been read to its end: bad_json when anything but
  // white space follows it.
  Read finish();

  // A string value, unescaped into out as WTF-8.
  static Read string(simdjson::ondemand::value v, std::string& out);
  // The same as a view: into the reader's parser (valid while the reader lives), or
  // for a string that keeps a lone surrogate (which simdjson refuses) into a new
  // string of spill, whose strings stay where they are.
  static Read text(simdjson::ondemand::value v, std::string_view& out, std::forward_list<std::string>& spill);
  // A number value as JSON.parse gives it (out of range: +-Infinity or +-0).
  static Read number(simdjson::ondemand::value v, double& out);
  // Any value, checked to be valid JSON and dropped.
  static Read skip(simdjson::ondemand::value v, int depth);

  // Every field of obj in order (duplicates included: the caller lets the last
  // win): each(std::string_view key, simdjson::ondemand::value v, int depth)
  // returns ok to go on or bad_json to stop. Returns ok or bad_json.
  template <typename Each>
  static Read fields(simdjson::ondemand::object obj, int depth, Each&& each) {
    if (depth > max_depth) return Read::bad_json;
    std::string storage;
    for (auto field : obj) {
      if (field.error()) return Read::bad_json;
      std::string_view key;
      if (!read_key(field, key, storage)) return Read::bad_json;
      simdjson::ondemand::value v;
      if (field.value().get(v) != simdjson::SUCCESS) return Read::bad_json;
      if (each(key, v, depth + 1) != Read::ok) return Read::bad_json;
    }
    return Read::ok;
  }

 private:
  // The key, unescaped: a view into the parser, or into storage for a key that keeps
  // a lone surrogate.
  static bool read_key(simdjson::simdjson_result<simdjson::ondemand::field>& field, std::string_view& out,
                       std::string& storage);
  Read check_root_scalar(simdjson::ondemand::json_type type);

  ReaderBuffers* buffers_ = nullptr;  // this thread's, or own_
  std::unique_ptr<ReaderBuffers> own_;
  std::string_view text_;  // the padded copy being read
  simdjson::ondemand::document doc_;
};

// JSON number grammar (RFC 8259) over a whole token, and its value as JSON.parse
// gives it (out of range: +-Infinity or +-0). false when token is no JSON number.
bool parse_json_number(std::string_view token, double& out) noexcept;

// Undo the escapes of a JSON string's contents (between its quotes) as JSON.parse
// does, into WTF-8. false on an invalid escape or a raw control character.
bool unescape_json_string(std::string_view raw, std::string& out);

}  // namespace leasejudge::js
