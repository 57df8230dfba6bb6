// Steps: the record a build module keeps of each tool run on a node, under the key
// `<node>.<id>`, and the rules that say which running step no live process runs any
// more.
//
// A step value is a JSON object (DESIGN.md, "Step JSON"). It is a step only when Go's
// encoding/json would decode it into the build SDK's struct: one JSON value and only
// white space after it, every known field of its type, field names matched exactly
// or under case folding, the last duplicate winning. Anything else is no step and is
// never touched, even when it says "state":"running". Reading a value for the rules
// (StepCodec::read) allocates nothing once its buffers are warm; ending a step
// (StepCodec::end) rewrites only state, reason, ended and result and keeps every other
// byte of the value.
//
// The rules (judge_running_step) are the step seed's, for the running steps of one
// node: a step this process owns is left; one another process owns is a previous
// process's (rule not_self) or, with rule provably_dead, only when that process is
// proven gone. A step with no owner (an older build) is ended when it is an ask past
// the step bound, or hand-started before this process began. A pulled ask a gone
// owner held is deleted, not ended: its stream redelivers it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leasejudge/clock.hpp"
#include "leasejudge/error.hpp"
#include "leasejudge/identity.hpp"

namespace leasejudge {

// Why a step a previous process left running is ended.
inline constexpr std::string_view restart_reason = "the build module restarted while it ran";
// How long an asker waits for its ask's end by default (the SDK's StepBound).
inline constexpr std::int64_t default_step_bound_ns = 3600LL * 1000000000LL;
inline constexpr std::string_view step_running = "running";
inline constexpr std::string_view step_failed = "failed";

// When this process began, as the kernel recorded it (boot time plus its start ticks;
// never later than the true start); the instant of the first call where /proc cannot
// be read. The default `before` of a sweep and the start EndOne compares with.
Instant this_process_start();

// --- keys ------------------------------------------------------------------------

struct StepKeyParts {
  std::string_view node;  // non-empty, no '.'
  std::string_view id;    // non-empty, everything after the first '.'
};
// `<node>.<id>`. Errc::invalid_argument for an empty node, a node holding '.', or an
// empty id.
Result<std::string> step_key(std::string_view node, std::string_view id);
// Split key at its first '.'. Errc::parse when it has none, or an empty side.
Result<StepKeyParts> parse_step_key(std::string_view key);
// The same for an ask's key, whose id is a canonical UUID (is_canonical_uuid).
Result<StepKeyParts> parse_ask_step_key(std::string_view key);
// 36 characters, hyphens at 8, 13, 18 and 23, hex digits elsewhere in either case:
// exactly what libuuid's uuid_parse accepts (it takes upper and lower case alike).
bool is_canonical_uuid(std::string_view text) noexcept;
// A pulled ask's step: its key parses as an ask's and its tool ends in " ask".
bool is_ask_step(std::string_view key, std::string_view tool) noexcept;

// Go's RFC 3339 text (parse_rfc3339) as nanoseconds since the Unix epoch, the unit of
// the C ABI's times. Errc::parse "<text, quoted as Go quotes> is no RFC 3339 time";
// Errc::invalid_argument "... is beyond the years 1677 to 2262".
Result<std::int64_t> parse_step_time_ns(std::string_view text);

// --- the codec -------------------------------------------------------------------

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

// Readable bytes a padded read once needed after the value (simdjson's padding). Every
// read is in place now and reads nothing past the value; the constant stays for the
// layouts built with it.
inline constexpr std::size_t step_padding = 64;

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

  // Read value for the rules; out is filled for step and reset for the others.
  StepShape read(std::string_view value, StepView& out);
  // The same; for bytes followed by step_padding readable bytes, which it does not need.
  StepShape read_padded(std::string_view value, StepView& out);
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
  Status end(std::string_view value, std::string_view why, Instant ended, std::string& out);

 private:
  friend struct StepCodecAccess;  // lib/src/step_codec.hpp: a value inside a larger text
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The seed's AskWhat: one line saying what an ask is: its kind, then a check's
// repository@commit (commit cut to 12), levels and run; a build's module,
// repository@commit and fp (cut to 12); or a compose's repository@commit.
std::string ask_what(const StepAsk& ask);

// --- the rules -------------------------------------------------------------------

// Which owners a sweep takes for gone.
enum class OwnerRule : std::uint8_t {
  not_self = 0,       // every owner but this process (the seed)
  provably_dead = 1,  // only an owner judge_owner_token proves gone (dead, recycled,
                      // other boot): for nodes that run several processes at once
};

enum class StepAction : std::uint8_t {
  leave = 0,
  end = 1,     // rewritten as failed (StepCodec::end)
  remove = 2,  // deleted: a pulled ask, left to its stream's redelivery
};

// Why a key got its action. Numbers are the C ABI's LJ_STEP_* and never change.
enum class StepReason : std::uint8_t {
  other_node = 0,        // no step key of this node: untouched
  no_value = 1,          // the key holds no value (or an empty one)
  no_step = 2,           // Go's decoder fails on the value
  not_running = 3,       // a step, not running
  owned_by_self = 4,     // this process owns it: it may run now
  owner_not_self = 5,    // another owner (rule not_self): ended or deleted
  owner_gone = 6,        // an owner proven gone (rule provably_dead): ended or deleted
  owner_alive = 7,       // rule provably_dead: its owner runs
  owner_unknown = 8,     // rule provably_dead: its owner cannot be judged
  ask_within_bound = 9,  // no owner, an ask its asker still waits for
  ask_past_bound = 10,   // no owner, an ask past the step bound: ended
  started_before = 11,   // no owner, hand-started before this process: ended
  started_since = 12,    // no owner, started since this process began: may be ours
};
inline constexpr int step_reason_count = 13;

// "leave", "end", "delete".
const char* step_action_name(StepAction action) noexcept;
// "other-node", "no-value", "no-step", ... (the enum names with '-').
const char* step_reason_name(StepReason reason) noexcept;

// Judges an owner token (tests pass their own; the default is judge_owner_token).
using OwnerJudge = std::function<HolderJudgement(std::string_view owner)>;

// Everything a plan reads, resolved: no I/O but the owner judge's.
struct StaleRules {
  std::string node;
  std::string self;  // this process's owner token; never empty
  Instant before;    // a step with no owner started before it is a previous process's
  Instant now;
  std::int64_t bound_ns = default_step_bound_ns;
  OwnerRule rule = OwnerRule::not_self;
  OwnerJudge judge;  // empty: judge_owner_token with its default options
};

struct StepVerdict {
  StepAction action = StepAction::leave;
  StepReason reason = StepReason::other_node;
  Instant bound_at{};  // ask_past_bound: when its asker stopped waiting
};

// Remembers owner judgements within one plan, so that a batch judges each owner once.
// Fixed size: holds a few recent owners and allocates nothing.
class OwnerVerdicts {
 public:
  HolderState state_of(std::string_view owner, const StaleRules& rules, HolderJudgement* full = nullptr);

 private:
  static constexpr int slots = 8;
  static constexpr std::size_t token_max = 80;
  char tokens_[slots][token_max] = {};
  std::uint8_t lengths_[slots] = {};
  HolderState states_[slots] = {};
  int used_ = 0, next_ = 0;
};

// The seed's staleWhy and its choice of end or delete, for a running step of
// rules.node under key. judgement, when given, receives the owner's judgement under
// rule provably_dead. cache may be null.
StepVerdict judge_running_step(std::string_view key, const StepView& step, const StaleRules& rules,
                               OwnerVerdicts* cache = nullptr, HolderJudgement* judgement = nullptr);

// One key and its value through every rule: the node filter, the value's shape,
// running, then judge_running_step. view (optional) receives the step read.
StepVerdict plan_step(std::string_view key, std::string_view value, const StaleRules& rules, StepCodec& codec,
                      StepView* view = nullptr, OwnerVerdicts* cache = nullptr, HolderJudgement* judgement = nullptr);
// The same for a value read already: shape and view are what StepCodec::read gave for
// value (unread when the key is another node's or value is empty).
StepVerdict plan_read_step(std::string_view key, std::string_view value, StepShape shape, const StepView& view,
                           const StaleRules& rules, OwnerVerdicts* cache = nullptr,
                           HolderJudgement* judgement = nullptr);
// Is key a step key of node? (the node filter of a plan; allocates nothing)
bool is_step_key_of(std::string_view key, std::string_view node) noexcept;

// The why of a verdict: restart_reason, "past the step bound: its asker stopped
// waiting at <bound UTC, seconds>", or "" for leave.
std::string step_why(const StepVerdict& verdict);
inline constexpr std::size_t step_why_max = 128;
// The same into out (at least step_why_max bytes); the length written.
std::size_t step_why(const StepVerdict& verdict, char* out) noexcept;
// Why a key is left, by its reason: "this process owns it", "the step is not
// running", ...; "" for the reasons of an end or a delete (step_why says those).
std::string_view step_leave_why(StepReason reason) noexcept;
// What the log says of the owner: "its owner <owner> is not this process <self>",
// "its owner <owner> is provably gone: <judgement>", "it names no owner (an older
// build wrote it)" (and "... and started before this process"); "" for leave.
std::string step_said(const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement = nullptr);
// The same appended to out (a string kept from call to call allocates no more).
void append_step_said(std::string& out, const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement = nullptr);

}  // namespace leasejudge
