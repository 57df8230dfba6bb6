// JSON text leasejudge writes for its users (the command's lines, the C ABI's
// lj_json_quote): a string as Go's json.Marshal writes it, so that what is written is
// valid JSON for any input, ill-formed UTF-8 and control bytes included.
#pragma once

#include <string>
#include <string_view>

namespace leasejudge {

// Append text as a JSON string: quoted; ", \ and control bytes escaped (\n \r \t or
// \u00XX); <, > and & as \u003c, \u003e, \u0026; U+2028 and U+2029 escaped; each byte
// of ill-formed UTF-8 as \ufffd.
void append_json_string(std::string& out, std::string_view text);
std::string json_quote(std::string_view text);

}  // namespace leasejudge
