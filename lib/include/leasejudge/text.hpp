// Text handed out: what leasejudge gives a caller as a string is UTF-8 that holds
// no NUL, so that it is a C string too (the C ABI's convention 4) and any JSON or
// terminal it lands in reads it.
//
// The rule, the same wherever text quoted from input is handed out (a why quoting a
// lock body or an owner token, a log line naming an owner, an ask's one line, an
// error message quoting an argument): each NUL becomes U+FFFD; each lone UTF-16
// surrogate in its 3-byte form (WTF-8, as JSON.parse keeps "\ud800") becomes one
// U+FFFD, as Node writes it; each maximal ill-formed UTF-8 subpart becomes one
// U+FFFD (the Encoding Standard's decoder, as Node's Buffer.toString reads bytes).
// Every other byte is kept as it was.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace leasejudge {

// bytes as the rule above makes them.
std::string c_text(std::string_view bytes);

// The same rule but for NUL, which is kept: for text written into JSON, where a NUL
// is escaped (\u0000) and so loses nothing.
std::string utf8_text(std::string_view bytes);

// Whether bytes are already what c_text gives: UTF-8 without a NUL.
bool is_c_text(std::string_view bytes) noexcept;

// c_text of at most the first max_bytes of bytes, cut at a character boundary:
// when something was cut, " [cut: N more bytes]" (N counting the input's bytes) is
// appended, so a reader sees the text is not whole.
std::string c_text_capped(std::string_view bytes, std::size_t max_bytes);

}  // namespace leasejudge
