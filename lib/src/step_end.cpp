// A step rewritten as ended, by the spans a read found (StepCodec::end).
#include <string>

#include "leasejudge/clock.hpp"
#include "step_codec_within.hpp"
#include "step_json.hpp"

namespace leasejudge {

// The value's bytes with its fields' spans rewritten as ended: state, reason and ended
// set (added before the closing brace when missing), result removed, every other byte
// kept; a kept field keeps the separator that stood before it, whatever was removed.
void append_ended(std::string& out, std::string_view value, const StepSpans& spans, std::string_view why,
                  Instant ended_at) {
  const char* t = value.data();
  const auto& fields = spans.fields;
  char when[rfc3339_max];
  std::size_t when_len = format_rfc3339_nano(ended_at, when);
  out.reserve(value.size() + why.size() * 6 + 96);
  auto put = [&](StepSpans::Kind kind) {
    if (kind == StepSpans::Kind::state) {
      out.append("\"failed\"");
    } else if (kind == StepSpans::Kind::reason) {
      step_json::append_json_string(out, why);
    } else {
      out.push_back('"');
      out.append(when, when_len);
      out.push_back('"');
    }
  };
  out.append(t, fields.empty() ? spans.close : fields.front().key_begin);
  bool kept = false, has_state = false, has_reason = false, has_ended = false;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const StepSpans::Field& f = fields[i];
    if (f.kind == StepSpans::Kind::result) continue;
    if (kept) out.append(t + fields[i - 1].value_end, f.key_begin - fields[i - 1].value_end);
    kept = true;
    if (f.kind == StepSpans::Kind::other) {
      out.append(t + f.key_begin, f.value_end - f.key_begin);
      continue;
    }
    out.append(t + f.key_begin, f.value_begin - f.key_begin);
    put(f.kind);
    has_state |= f.kind == StepSpans::Kind::state;
    has_reason |= f.kind == StepSpans::Kind::reason;
    has_ended |= f.kind == StepSpans::Kind::ended;
  }
  if (!has_state) {
    if (kept) out.push_back(',');
    out.append("\"state\":");
    put(StepSpans::Kind::state);
  }
  if (!has_reason) {
    out.append(",\"reason\":");
    put(StepSpans::Kind::reason);
  }
  if (!has_ended) {
    out.append(",\"ended\":");
    put(StepSpans::Kind::ended);
  }
  std::uint32_t tail = fields.empty() ? spans.close : fields.back().value_end;
  out.append(t + tail, value.size() - tail);
}

}  // namespace leasejudge
