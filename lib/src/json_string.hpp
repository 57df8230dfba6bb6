// JSON strings as both families read them: the escapes of a string's body undone, and
// UTF-8 as Go's decoder takes it. Private to lib/.
//
// The lock family reads JSON as JavaScript does and the step family as Go does; they
// undo escapes alike and differ in one thing, a lone UTF-16 surrogate in a \u escape
// ("\ud800", or a high surrogate not followed by a low one): a JS string keeps it as
// a code unit (written here as its 3-byte WTF-8 form), Go's decoder replaces it with
// U+FFFD. Everything else is the same: \" \\ \/ \b \f \n \r \t and \uXXXX, a pair of
// surrogates joined into one code point, any other escape and any raw byte below 0x20
// refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace leasejudge::json_string {

// What a lone surrogate becomes.
enum class LoneSurrogate : std::uint8_t {
  keep,     // its WTF-8 bytes (JavaScript: a string holds every code unit)
  replace,  // U+FFFD (Go's encoding/json)
};

// The length of the valid UTF-8 sequence at p as Go's utf8.DecodeRune takes it, or 0
// when the byte at p begins none (Go then reads that one byte as U+FFFD).
int utf8_width(const unsigned char* p, const unsigned char* end) noexcept;
// The code point of the valid sequence of width bytes at p.
std::uint32_t utf8_decode(const unsigned char* p, int width) noexcept;
// Append code point cp as UTF-8; a surrogate as its 3-byte (WTF-8) form.
void append_code_point(std::string& out, std::uint32_t cp);

// Append the body of a JSON string (the bytes between its quotes) with its escapes
// undone. A byte that begins no valid UTF-8 sequence is appended as U+FFFD (Go reads
// it so; JavaScript callers hand over text already decoded). False, with out holding
// what was appended so far, on an escape JSON does not have or a raw byte below 0x20.
// Grows out by at most 3 bytes per byte of body.
bool append_unescaped(std::string_view body, std::string& out, LoneSurrogate lone);

}  // namespace leasejudge::json_string
