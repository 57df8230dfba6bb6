// The step codec: reads a step value as Go's encoding/json decodes it into the build
// SDK's struct, and rewrites a step as ended.
//
// A step value is a JSON object (DESIGN.md, "Step JSON"). It is a step only when Go's
// encoding/json would decode it into the build SDK's struct: one JSON value and only
// white space after it, every known field of its type, field names matched exactly
// or under case folding, the last duplicate winning. Anything else is no step and is
// never touched, even when it says "state":"running". Reading a value for the rules
// (StepCodec::read) allocates nothing once its buffers are warm; ending a step
// (StepCodec::end) rewrites only state, reason, ended and result and keeps every other
// byte of the value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leasejudge/clock.hpp"
#include "leasejudge/error.hpp"

namespace leasejudge {

inline constexpr std::string_view step_running = "running";
inline constexpr std::string_view step_failed = "failed";

// What a value is to Go's decoder.
enum class StepShape : std::uint8_t {
  step,        // decodes
  null_value,  // the JSON null: decodes too, to a step with every field empty
  no_step,     // Go's decoder fails: left alone
};

// What the rules read of a step. The strings are decoded (escapes undone, invalid
// UTF-8 as U+FFFD) and point into the value or into the codec: valid until the
// codec reads its next value.
struct StepView {
  std::string_view id, tool, state, owner;
  Instant started = go_zero_time;  // Go's zero time when absent or null
  bool has_ask = false;
};

// A fetch object (map[string]any): each key with the JSON text of its value, in the
// order keys first appeared; a repeated key keeps its first place and its last value.
using StepFetch = std::vector<std::pair<std::string, std::string>>;

struct StepCheck {
  std::optional<StepFetch> fetch;                  // nullopt: absent or null
  std::optional<std::vector<std::string>> levels;  // nullopt: absent or null
  std::string run;
};
struct StepBuild {
  std::string module;
  std::optional<StepFetch> fetch;
  std::string fp;
};
struct StepCompose {
  std::optional<StepFetch> fetch;
};
struct StepAsk {
  std::string kind;
  std::optional<StepCheck> check;
  std::optional<StepBuild> build;
  std::optional<StepCompose> compose;
};

// Every field of a step, as Go decodes it (a repeated ask merges into the first, as
// Go decodes into a pointer it already set; levels follow Go's slice reuse).
struct Step {
  std::string id, tool, state, owner, reason;
  Instant started = go_zero_time;
  Instant ended = go_zero_time;
  std::optional<std::string> result;  // the JSON text of the last `result`
  std::optional<StepAsk> ask;
};

// Where a read found a step's top-level fields in its value: what StepCodec::end
// rewrites. StepCodec::read fills it for a step and empties it for anything else. It
// stands for the bytes read (`of`) while they are unchanged. Reused, it keeps its room.
struct StepSpans {
  enum class Kind : std::uint8_t { other, state, reason, ended, result };
  struct Field {
    std::uint32_t key_begin = 0, value_begin = 0, value_end = 0;
    Kind kind = Kind::other;
  };
  std::vector<Field> fields;
  std::uint32_t close = 0;  // offset of the closing brace
  std::string_view of;      // the value read; empty when it was no step
};

// Reads step values. Keeps its buffers between reads: one per thread, reused. A read
// indexes the value once (simdjson's stage 1) and checks Go's grammar token by token,
// converting only what the rules read.
class StepCodec {
 public:
  StepCodec();
  ~StepCodec();
  StepCodec(StepCodec&&) noexcept;
  StepCodec& operator=(StepCodec&&) noexcept;
  StepCodec(const StepCodec&) = delete;
  StepCodec& operator=(const StepCodec&) = delete;

  // Read value for the rules; out is filled for step and reset for the others. spans,
  // when given, receives where the step's fields are (for end).
  StepShape read(std::string_view value, StepView& out, StepSpans* spans = nullptr);
  // Every field; nullopt when the value is no step (the JSON null gives Step{}).
  std::optional<Step> decode(std::string_view value);
  // An ask object alone, as a step's "ask" decodes. Errc::parse "the ask is no JSON
  // object" (one object and only white space after it), or "the ask is no ask: <why>".
  Result<StepAsk> decode_ask(std::string_view json);
  // Why the last read or decode found no step, for messages ("" after a step).
  std::string_view no_step_why() const noexcept;

  // The value ended as failed: state "failed", reason why, ended at `ended` in Go's
  // RFC3339Nano (UTC), result removed; each repeat of those fields too; a missing
  // state, reason or ended is added before the closing brace. Every other byte is
  // kept. Errc::parse when the value is no step object.
  Result<std::string> end(std::string_view value, std::string_view why, Instant ended);
  // The same into out, which keeps its capacity (a sweep ends many steps through one
  // buffer); out is cleared first, and left empty when the value is no step object.
  // spans, when they are a read's of these very bytes (spans->of), spare reading the
  // value again; other spans are not used.
  Status end(std::string_view value, std::string_view why, Instant ended, std::string& out,
             const StepSpans* spans = nullptr);

 private:
  friend struct StepCodecAccess;  // lib/src/step_codec_within.hpp: a value inside a larger text
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The seed's AskWhat: one line saying what an ask is: its kind, then a check's
// repository@commit (commit cut to 12), levels and run; a build's module,
// repository@commit and fp (cut to 12); or a compose's repository@commit.
std::string ask_what(const StepAsk& ask);

}  // namespace leasejudge
