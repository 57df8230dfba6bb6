// The step codec where a larger JSON text carries the value and was indexed once: a
// line of `leasejudge step plan` is read with one stage 1 for its envelope and its
// value. Private to lib/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "leasejudge/step_codec.hpp"
#include "step_json.hpp"

namespace leasejudge {

struct StepCodecAccess {
  struct Within {
    StepShape shape = StepShape::no_step;
    bool broken = false;                        // Go's grammar breaks inside the value
    std::uint32_t after = step_json::no_token;  // the token past the value (not broken)
  };
  // Read the value at token `first` of text, `outer` containers deep in it, as
  // StepCodec::read reads a value (out filled for a step; the strings decode from
  // text.text, all of them when masked: invalid UTF-8 was masked for stage 1). The
  // whole value is checked, also when it is no step.
  static Within read(StepCodec& codec, const step_json::TokenText& text, bool masked, std::uint32_t first, int outer,
                     StepView& out);
};

// The value's bytes rewritten as ended (StepCodec::end) by spans a read found in these
// very bytes: state "failed", reason why and ended at ended_at (each added before the
// closing brace when missing), result removed, every other byte kept.
void append_ended(std::string& out, std::string_view value, const StepSpans& spans, std::string_view why,
                  Instant ended_at);

}  // namespace leasejudge
