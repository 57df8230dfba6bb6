// JSON text (json_text.hpp): the step family's writer, which is Go's.
#include "leasejudge/json_text.hpp"

#include "step_json.hpp"

namespace leasejudge {

void append_json_string(std::string& out, std::string_view text) {
  step_json::append_json_string(out, text);
}

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  step_json::append_json_string(out, text);
  return out;
}

}  // namespace leasejudge
