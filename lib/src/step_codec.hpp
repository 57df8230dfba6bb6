// The step codec where a larger JSON text carries the value and was indexed once: a
// line of `leasejudge step plan` is read with one stage 1 for its envelope and its
// value. Private to lib/.
#pragma once

#include <cstdint>

#include "leasejudge/step.hpp"
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
  // While keep is set, every read of a step keeps where its fields are, and StepCodec::end
  // of the step read last ends it without reading it again: its bytes must not change
  // in between (a sweep ends a value of the batch it has just planned). Returns the
  // setting before.
  static bool keep_spans(StepCodec& codec, bool keep);
};

}  // namespace leasejudge
