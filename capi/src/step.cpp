// The C ABI's step part: verdict names and texts, plans (one, batch, JSON lines),
// keys and times, the codec.
#include <fmt/format.h>
#include <simdjson.h>

#include <atomic>
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include "../../lib/src/step_json.hpp"
#include "internal.hpp"
#include "options.hpp"
#include "leasejudge/sweep.hpp"
#include "step_handle.hpp"

using namespace leasejudge;
using namespace leasejudge::capi;

// The batch arrays cross as they are: the C structs and the core's have one layout.
static_assert(sizeof(lj_step_action_t) == sizeof(BatchVerdict));
static_assert(offsetof(lj_step_action_t, action) == offsetof(BatchVerdict, action));
static_assert(offsetof(lj_step_action_t, reason) == offsetof(BatchVerdict, reason));
static_assert(offsetof(lj_step_action_t, bound_nsec) == offsetof(BatchVerdict, bound_nsec));
static_assert(offsetof(lj_step_action_t, bound_sec) == offsetof(BatchVerdict, bound_sec));
static_assert(sizeof(lj_step_entry_t) == sizeof(BatchEntry));
static_assert(offsetof(lj_step_entry_t, key_offset) == offsetof(BatchEntry, key_offset));
static_assert(offsetof(lj_step_entry_t, value_offset) == offsetof(BatchEntry, value_offset));
static_assert(offsetof(lj_step_entry_t, key_len) == offsetof(BatchEntry, key_len));
static_assert(offsetof(lj_step_entry_t, value_len) == offsetof(BatchEntry, value_len));
static_assert(offsetof(lj_step_entry_t, revision) == offsetof(BatchEntry, revision));
static_assert(LJ_STEP_PADDING >= step_padding);
static_assert(LJ_STEP_WHY_MAX >= step_why_max);
static_assert(static_cast<int>(StepReason::started_since) == LJ_STEP_STARTED_SINCE);
static_assert(static_cast<int>(StepReason::ask_past_bound) == LJ_STEP_ASK_PAST_BOUND);
static_assert(static_cast<int>(StepReason::owner_gone) == LJ_STEP_OWNER_GONE);
static_assert(static_cast<int>(StepAction::remove) == LJ_STEP_DELETE);
static_assert(step_reason_count == LJ_STEP_STARTED_SINCE + 1);

namespace {

thread_local StepCodec codec;

const OptionsVersions<lj_step_plan_options_t, 1> plan_options_versions{
    "lj_step_plan_options_t", LJ_STEP_PLAN_OPTIONS_INIT, {sizeof(lj_step_plan_options_t)}};

// The plan options as rules. LJ_OK or a code (err set).
int rules_of(StaleRules& rules, std::atomic<bool>& stopped, const lj_step_plan_options_t* in, lj_error_t** err) {
  if (in == nullptr) return fail(err, LJ_EINVAL, "the plan options are NULL: they must name the node");
  lj_step_plan_options_t read;
  if (int rc = read_options(read, in, plan_options_versions, err); rc != LJ_OK) return rc;
  const lj_step_plan_options_t* o = &read;
  std::string_view node, owner;
  if (!view_of(o->node, o->node_len, node) || node.empty())
    return fail(err, LJ_EINVAL, "the plan options name no node");
  if (node.find('.') != std::string_view::npos)
    return fail(err, LJ_EINVAL, fmt::format("the node {} holds a '.', which ends a step key's node", node));
  if (!view_of(o->owner, o->owner_len, owner)) return fail(err, LJ_EINVAL, "the owner is NULL with a length");
  if (o->bound_seconds <= 0 || o->bound_seconds > std::numeric_limits<std::int64_t>::max() / 1000000000)
    return fail(err, LJ_EINVAL, fmt::format("the step bound of {} seconds is out of range", o->bound_seconds));
  if (o->rule != LJ_STEP_RULE_NOT_SELF && o->rule != LJ_STEP_RULE_PROVABLY_DEAD)
    return fail(err, LJ_EINVAL, fmt::format("no rule {}", o->rule));
  // A negative tolerance would take every live owner for another process.
  if (o->start_tolerance_ms < 0) return fail(err, LJ_EINVAL, "start_tolerance_ms is negative");
  rules.node = std::string(node);
  rules.self = owner.empty() ? self_owner_token() : std::string(owner);
  rules.before = o->before_ns == LJ_STEP_DEFAULT_TIME ? this_process_start() : instant_of_ns(o->before_ns);
  rules.now = o->now_ns == LJ_STEP_DEFAULT_TIME ? system_now() : instant_of_ns(o->now_ns);
  rules.bound_ns = o->bound_seconds * 1000000000;
  rules.rule = o->rule == LJ_STEP_RULE_PROVABLY_DEAD ? OwnerRule::provably_dead : OwnerRule::not_self;
  rules.judge = owner_judge_of(o->owner_state, o->payload, o->start_tolerance_ms, &stopped);
  return LJ_OK;
}

int stopped_error(lj_error_t** err) {
  return fail(err, LJ_EUSER, "the owner_state callback asked to stop the plan");
}

void copy_summary(lj_step_plan_summary_t* out, const BatchSummary& s, std::uint64_t malformed) {
  if (out == nullptr) return;
  out->ends = s.end;
  out->deletes = s.remove;
  out->leaves = s.leave;
  out->no_step = s.no_step;
  out->other_node = s.other_node;
  out->malformed = malformed;
}

// One line of `leasejudge step plan` input, read.
struct Line {
  bool malformed = false;
  bool has_key = false;
  const char* why = "";   // what is wrong, when malformed
  std::size_t entry = 0;  // into the batch
  std::string key;        // when malformed but readable
};

// Reads the JSON lines' envelopes with one parser and one padded buffer.
class LineReader {
 public:
  // Read line into the batch buffer and entries, or say what is wrong with it.
  Line read(std::string_view line, std::string& buffer, std::vector<BatchEntry>& entries) {
    Line out;
    const char* b = line.data();
    const char* e = b + line.size();
    // Go's grammar over the whole line first: what On-Demand skips is checked too.
    const char* p = step_json::skip_ws(b, e);
    const char* end = p < e ? step_json::check_value(p, e, 0, false, nest_) : nullptr;
    if (end == nullptr || step_json::skip_ws(end, e) != e) return malformed(out, "the line is not one JSON value");
    if (*p != '{') return malformed(out, "the line is no JSON object");
    pad_.assign(line.data(), line.size());
    pad_.append(simdjson::SIMDJSON_PADDING, ' ');
    auto doc = parser_.iterate(pad_.data(), line.size(), pad_.size());
    if (doc.error() == simdjson::UTF8_ERROR) {
      step_json::mask_invalid_utf8(pad_.data(), line.size());
      doc = parser_.iterate(pad_.data(), line.size(), pad_.size());
    }
    if (doc.error() != simdjson::SUCCESS) return malformed(out, "the line is not one JSON value");
    simdjson::ondemand::object obj;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) return malformed(out, "the line is no JSON object");
    const char* base = pad_.data();
    auto original = [&](const char* q) { return b + (q - base); };
    bool has_value = false;
    std::string_view value;
    std::string value_text;
    std::uint64_t revision = 0;
    for (auto field_result : obj) {
      simdjson::ondemand::field f;
      if (std::move(field_result).get(f) != simdjson::SUCCESS) return malformed(out, "the line is not one JSON value");
      const char* kq = reinterpret_cast<const char*>(f.key().raw()) - 1;
      step_json::StringScan ks;
      if (!step_json::scan_string(kq, base + line.size(), ks)) return malformed(out, "the line is not one JSON value");
      std::string name;
      step_json::unquote_append(original(kq) + 1, original(ks.end) - 1, name);
      simdjson::ondemand::value& v = f.value();
      const char* vp = v.raw_json_token().data();
      if (name == "key") {
        step_json::StringScan vs;
        if (*vp != '"' || !step_json::scan_string(vp, base + line.size(), vs))
          return malformed(out, "its key is no string");
        out.key.clear();
        step_json::unquote_append(original(vp) + 1, original(vs.end) - 1, out.key);
        out.has_key = true;
      } else if (name == "revision") {
        if (*vp == 'n') {
          revision = 0;
        } else if (v.get_uint64().get(revision) != simdjson::SUCCESS) {
          return malformed(out, "its revision is no integer from 0 to 2^64-1");
        }
      } else if (name == "value") {
        const char* ve = step_json::check_value(vp, base + line.size(), 1, false, nest_);
        if (ve == nullptr) return malformed(out, "its value is not JSON");
        if (*vp == '"') {
          // A JSON string carries stored bytes that are not JSON.
          value_text.clear();
          step_json::unquote_append(original(vp) + 1, original(ve) - 1, value_text);
          value = value_text;
        } else {
          value = std::string_view(original(vp), static_cast<std::size_t>(ve - vp));
        }
        has_value = true;
      }
    }
    if (!out.has_key) return malformed(out, "it names no key");
    if (out.key.size() > 0xFFFFFFFFu || value.size() > 0xFFFFFFFFu)
      return malformed(out, "its key or value is over 4 GiB");
    BatchEntry entry;
    entry.key_offset = buffer.size();
    entry.key_len = static_cast<std::uint32_t>(out.key.size());
    buffer.append(out.key);
    entry.value_offset = buffer.size();
    entry.value_len = has_value ? static_cast<std::uint32_t>(value.size()) : 0;
    if (has_value) buffer.append(value);
    entry.revision = revision;
    out.entry = entries.size();
    entries.push_back(entry);
    out.key.clear();
    return out;
  }

 private:
  static Line& malformed(Line& l, const char* why) {
    l.malformed = true;
    l.why = why;
    return l;
  }
  simdjson::ondemand::parser parser_;
  std::string pad_;
  step_json::NestStack nest_;
};

}  // namespace

extern "C" {

LJ_API const char* lj_step_action_name(int action) {
  if (action < LJ_STEP_LEAVE || action > LJ_STEP_DELETE) return "";
  return step_action_name(static_cast<StepAction>(action));
}

LJ_API const char* lj_step_reason_name(int reason) {
  if (reason < 0 || reason >= step_reason_count) return "";
  return step_reason_name(static_cast<StepReason>(reason));
}

LJ_API int lj_step_why(char* out, size_t out_cap, size_t* out_len, const lj_step_action_t* action, lj_error_t** err) {
  reset(err);
  if (out == nullptr || action == nullptr) return fail(err, LJ_EINVAL, "out and action must not be NULL");
  if (out_cap < LJ_STEP_WHY_MAX) return fail(err, LJ_EINVAL, "out holds less than LJ_STEP_WHY_MAX bytes");
  if (action->reason >= step_reason_count || action->action > LJ_STEP_DELETE)
    return fail(err, LJ_EINVAL, "the action names no action or reason");
  if (action->bound_nsec < 0 || action->bound_nsec >= 1000000000)
    return fail(err, LJ_EINVAL, "the action's bound_nsec is out of range");
  StepVerdict v{static_cast<StepAction>(action->action), static_cast<StepReason>(action->reason),
                Instant{action->bound_sec, action->bound_nsec}};
  std::size_t n = step_why(v, out);
  out[n] = '\0';
  if (out_len != nullptr) *out_len = n;
  return LJ_OK;
}

LJ_API int lj_step_said(char** out, size_t* out_len, const lj_step_action_t* action, const char* owner,
                        size_t owner_len, const char* self, size_t self_len, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view o, s;
    if (out != nullptr) *out = nullptr;
    if (out == nullptr || action == nullptr) return fail(err, LJ_EINVAL, "out and action must not be NULL");
    if (!view_of(owner, owner_len, o) || !view_of(self, self_len, s))
      return fail(err, LJ_EINVAL, "a NULL string with a length");
    if (action->reason >= step_reason_count || action->action > LJ_STEP_DELETE)
      return fail(err, LJ_EINVAL, "the action names no action or reason");
    StepVerdict v{static_cast<StepAction>(action->action), static_cast<StepReason>(action->reason),
                  Instant{action->bound_sec, action->bound_nsec}};
    std::string self_token = s.empty() ? self_owner_token() : std::string(s);
    return give_text(out, out_len, step_said(v, o, self_token), err);
  });
}

LJ_API int lj_step_plan_options_init(lj_step_plan_options_t* opts, uint32_t version) {
  return init_options(opts, version, plan_options_versions);
}

LJ_API int lj_step_plan(lj_step_action_t* out, char** why, size_t* why_len, char** said, size_t* said_len,
                        const char* key, size_t key_len, const char* value, size_t value_len,
                        const lj_step_plan_options_t* opts, lj_error_t** err) {
  reset(err);
  if (why != nullptr) *why = nullptr;
  if (said != nullptr) *said = nullptr;
  return guard(err, [&] {
    std::string_view k, v;
    if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    if (!view_of(key, key_len, k) || !view_of(value, value_len, v))
      return fail(err, LJ_EINVAL, "a NULL key or value with a length");
    StaleRules rules;
    std::atomic<bool> stopped{false};
    if (int rc = rules_of(rules, stopped, opts, err); rc != LJ_OK) return rc;
    StepView view;
    HolderJudgement judgement;
    StepVerdict verdict = plan_step(k, v, rules, codec, &view, nullptr, &judgement);
    if (stopped) return stopped_error(err);
    std::string said_text = step_said(verdict, view.owner, rules.self, &judgement);
    if (why != nullptr) {
      if (int rc = give(why, why_len, step_why(verdict), err); rc != LJ_OK) return rc;
    }
    if (said != nullptr) {
      if (int rc = give_text(said, said_len, said_text, err); rc != LJ_OK) {
        if (why != nullptr) {
          lj_free(*why);
          *why = nullptr;
        }
        return rc;
      }
    }
    *out = lj_step_action_t{static_cast<uint8_t>(verdict.action), static_cast<uint8_t>(verdict.reason), 0,
                            verdict.bound_at.nsec, verdict.bound_at.sec};
    return LJ_OK;
  });
}

LJ_API int lj_step_plan_batch(lj_step_action_t* out, size_t out_count, lj_step_plan_summary_t* summary,
                              const char* buffer, size_t buffer_len, size_t buffer_padding,
                              const lj_step_entry_t* entries, size_t entry_count, const lj_step_plan_options_t* opts,
                              lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view buf;
    if (!view_of(buffer, buffer_len, buf)) return fail(err, LJ_EINVAL, "the buffer is NULL with a length");
    if (entry_count > 0 && (entries == nullptr || out == nullptr))
      return fail(err, LJ_EINVAL, "entries and out must not be NULL");
    if (out_count < entry_count)
      return fail(err, LJ_EINVAL, fmt::format("out holds {} actions for {} entries", out_count, entry_count));
    if (buf.empty()) buffer_padding = 0;  // nothing to read in place
    StaleRules rules;
    std::atomic<bool> stopped{false};
    if (int rc = rules_of(rules, stopped, opts, err); rc != LJ_OK) return rc;
    BatchSummary sum;
    std::span<BatchVerdict> verdicts(reinterpret_cast<BatchVerdict*>(out), entry_count);
    std::span<const BatchEntry> in(reinterpret_cast<const BatchEntry*>(entries), entry_count);
    Status st = plan_batch(verdicts, buf, buffer_padding, in, rules, opts->threads, &sum);
    if (!st.ok()) return fail(err, st.error());
    if (stopped) return stopped_error(err);
    copy_summary(summary, sum, 0);
    return LJ_OK;
  });
}

LJ_API int lj_step_plan_lines(char** out, size_t* out_len, lj_step_plan_summary_t* summary, const char* input,
                              size_t input_len, const lj_step_plan_options_t* opts, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view text;
    if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    *out = nullptr;
    if (!view_of(input, input_len, text)) return fail(err, LJ_EINVAL, "the input is NULL with a length");
    StaleRules rules;
    std::atomic<bool> stopped{false};
    if (int rc = rules_of(rules, stopped, opts, err); rc != LJ_OK) return rc;

    LineReader reader;
    std::string buffer;
    std::vector<BatchEntry> entries;
    std::vector<Line> lines;
    std::uint64_t malformed = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(pos, nl - pos);
      pos = nl + 1;
      if (step_json::skip_ws(line.data(), line.data() + line.size()) == line.data() + line.size()) continue;
      lines.push_back(reader.read(line, buffer, entries));
      malformed += lines.back().malformed;
    }
    std::size_t data_len = buffer.size();
    buffer.append(LJ_STEP_PADDING, ' ');
    std::vector<BatchVerdict> verdicts(entries.size());
    BatchSummary sum;
    Status st = plan_batch(verdicts, std::string_view(buffer.data(), data_len), LJ_STEP_PADDING, entries, rules,
                           opts->threads, &sum);
    if (!st.ok()) return fail(err, st.error());
    if (stopped) return stopped_error(err);

    std::string result;
    result.reserve(lines.size() * 64);
    char why[step_why_max];
    for (const Line& l : lines) {
      result.append("{\"key\":");
      if (l.malformed) {
        if (l.has_key)
          step_json::append_json_string(result, l.key);
        else
          result.append("null");
        result.append(",\"action\":\"leave\",\"why\":\"\",\"malformed\":");
        step_json::append_json_string(result, l.why);
        result.append("}\n");
        continue;
      }
      const BatchEntry& e = entries[l.entry];
      step_json::append_json_string(result, std::string_view(buffer.data() + e.key_offset, e.key_len));
      const BatchVerdict& v = verdicts[l.entry];
      result.append(",\"action\":\"");
      result.append(step_action_name(v.action));
      result.append("\",\"why\":");
      step_json::append_json_string(result, std::string_view(why, step_why(to_verdict(v), why)));
      result.append("}\n");
    }
    copy_summary(summary, sum, malformed);
    return give(out, out_len, result, err);
  });
}

LJ_API int lj_step_plan_summary_format(char** out, size_t* out_len, const lj_step_plan_summary_t* summary,
                                       lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    if (out != nullptr) *out = nullptr;
    if (out == nullptr || summary == nullptr) return fail(err, LJ_EINVAL, "out and summary must not be NULL");
    const auto& s = *summary;
    std::uint64_t keys = 0;
    if (__builtin_add_overflow(s.ends, s.deletes, &keys) || __builtin_add_overflow(keys, s.leaves, &keys) ||
        __builtin_add_overflow(keys, s.no_step, &keys) || __builtin_add_overflow(keys, s.other_node, &keys))
      return fail(err, LJ_EINVAL, "the summary's counts add up to more keys than 2^64-1: no plan gives it");
    return give(out, out_len,
                fmt::format("step plan: {} keys: {} end, {} delete, {} leave, {} no-step, {} other-node, {} malformed "
                            "lines",
                            keys, s.ends, s.deletes, s.leaves, s.no_step, s.other_node, s.malformed),
                err);
  });
}

LJ_API int lj_step_key(char** out, size_t* out_len, const char* node, size_t node_len, const char* id, size_t id_len,
                       lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view n, i;
    if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    *out = nullptr;
    if (!view_of(node, node_len, n) || !view_of(id, id_len, i))
      return fail(err, LJ_EINVAL, "a NULL string with a length");
    // A key is handed back as a C string: one holding a NUL could not be.
    if (n.find('\0') != std::string_view::npos || i.find('\0') != std::string_view::npos)
      return fail(err, LJ_EINVAL, "a node or id holding a NUL makes no key");
    auto key = step_key(n, i);
    if (!key) return fail(err, key.error());
    return give(out, out_len, *key, err);
  });
}

namespace {
int key_parse(size_t* out_node_len, const char* key, size_t key_len, bool ask, lj_error_t** err) {
  return guard(err, [&] {
    std::string_view k;
    if (out_node_len == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    if (!view_of(key, key_len, k)) return fail(err, LJ_EINVAL, "the key is NULL with a length");
    auto parts = ask ? parse_ask_step_key(k) : parse_step_key(k);
    if (!parts) return fail(err, parts.error());
    *out_node_len = parts->node.size();
    return LJ_OK;
  });
}
}  // namespace

LJ_API int lj_step_key_parse(size_t* out_node_len, const char* key, size_t key_len, lj_error_t** err) {
  reset(err);
  return key_parse(out_node_len, key, key_len, false, err);
}

LJ_API int lj_step_ask_key_parse(size_t* out_node_len, const char* key, size_t key_len, lj_error_t** err) {
  reset(err);
  return key_parse(out_node_len, key, key_len, true, err);
}

LJ_API int lj_step_is_ask(int* out, const char* key, size_t key_len, const char* tool, size_t tool_len,
                          lj_error_t** err) {
  reset(err);
  std::string_view k, t;
  if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
  if (!view_of(key, key_len, k) || !view_of(tool, tool_len, t))
    return fail(err, LJ_EINVAL, "a NULL string with a length");
  *out = is_ask_step(k, t) ? 1 : 0;
  return LJ_OK;
}

LJ_API int lj_step_time_parse(int64_t* out_ns, const char* text, size_t text_len, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view t;
    if (out_ns == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    if (!view_of(text, text_len, t)) return fail(err, LJ_EINVAL, "the text is NULL with a length");
    auto at = parse_rfc3339(t);
    if (!at) return fail(err, LJ_EPARSE, fmt::format("{} is no RFC 3339 time", step_json::go_quote(t)));
    constexpr std::int64_t max_sec = std::numeric_limits<std::int64_t>::max() / 1000000000 - 1;
    if (at->sec > max_sec || at->sec < -max_sec)
      return fail(err, LJ_EINVAL, fmt::format("{} is beyond the years 1677 to 2262", step_json::go_quote(t)));
    *out_ns = at->sec * 1000000000 + at->nsec;
    return LJ_OK;
  });
}

LJ_API int lj_step_decode(lj_step_t** out, const char* value, size_t value_len, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view v;
    if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    *out = nullptr;
    if (!view_of(value, value_len, v)) return fail(err, LJ_EINVAL, "the value is NULL with a length");
    auto step = codec.decode(v);
    if (!step) return fail(err, LJ_EPARSE, fmt::format("the value is no step: {}", codec.no_step_why()));
    *out = new_step_handle(std::move(*step));
    return LJ_OK;
  });
}

LJ_API const char* lj_step_string(const lj_step_t* step, int field, size_t* out_len) {
  if (out_len != nullptr) *out_len = 0;
  if (step == nullptr) return nullptr;
  const std::string* s = nullptr;
  switch (field) {
    case LJ_STEP_FIELD_ID:
      s = &step->step.id;
      break;
    case LJ_STEP_FIELD_TOOL:
      s = &step->step.tool;
      break;
    case LJ_STEP_FIELD_STATE:
      s = &step->step.state;
      break;
    case LJ_STEP_FIELD_OWNER:
      s = &step->step.owner;
      break;
    case LJ_STEP_FIELD_REASON:
      s = &step->step.reason;
      break;
    case LJ_STEP_FIELD_RESULT:
      s = step->step.result ? &*step->step.result : nullptr;
      break;
    case LJ_STEP_FIELD_ASK_WHAT:
      s = step->step.ask ? &step->ask_what : nullptr;
      break;
    default:
      break;
  }
  if (s == nullptr) return nullptr;
  if (out_len != nullptr) *out_len = s->size();
  return s->c_str();
}

LJ_API int lj_step_time(int64_t* out_sec, int32_t* out_nsec, const lj_step_t* step, int which, lj_error_t** err) {
  reset(err);
  if (out_sec == nullptr || out_nsec == nullptr || step == nullptr)
    return fail(err, LJ_EINVAL, "out and step must not be NULL");
  if (which != LJ_STEP_STARTED && which != LJ_STEP_ENDED) return fail(err, LJ_EINVAL, "no such time of a step");
  const Instant& t = which == LJ_STEP_STARTED ? step->step.started : step->step.ended;
  *out_sec = t.sec;
  *out_nsec = t.nsec;
  return LJ_OK;
}

LJ_API void lj_step_destroy(lj_step_t* step) {
  delete step;
}

LJ_API int lj_step_end_value(char** out, size_t* out_len, const char* value, size_t value_len, const char* why,
                             size_t why_len, int64_t ended_ns, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view v, w;
    if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    *out = nullptr;
    if (!view_of(value, value_len, v) || !view_of(why, why_len, w))
      return fail(err, LJ_EINVAL, "a NULL value or why with a length");
    Instant at = ended_ns == LJ_STEP_DEFAULT_TIME ? system_now() : instant_of_ns(ended_ns);
    auto ended = codec.end(v, w, at);
    if (!ended) return fail(err, ended.error());
    return give(out, out_len, *ended, err);
  });
}

LJ_API int lj_step_ask_what(char** out, size_t* out_len, const char* json, size_t json_len, int form,
                            lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view j;
    if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    *out = nullptr;
    if (!view_of(json, json_len, j)) return fail(err, LJ_EINVAL, "the JSON is NULL with a length");
    if (form != LJ_STEP_JSON_STEP && form != LJ_STEP_JSON_ASK) return fail(err, LJ_EINVAL, "no such JSON form");
    std::optional<Step> step;
    if (form == LJ_STEP_JSON_ASK) {
      // One JSON object and nothing after it, before it is read as a step's ask.
      const char* e = j.data() + j.size();
      const char* p = step_json::skip_ws(j.data(), e);
      if (p == e || *p != '{') return fail(err, LJ_EPARSE, "the ask is no JSON object");
      auto nest = std::make_unique<step_json::NestStack>();
      const char* end = step_json::check_value(p, e, 1, false, *nest);
      if (end == nullptr || step_json::skip_ws(end, e) != e) return fail(err, LJ_EPARSE, "the ask is no JSON object");
      step = codec.decode(std::string("{\"ask\":").append(j).append("}"));
      if (!step) return fail(err, LJ_EPARSE, fmt::format("the ask is no ask: {}", codec.no_step_why()));
    } else {
      step = codec.decode(j);
      if (!step) return fail(err, LJ_EPARSE, fmt::format("the value is no step: {}", codec.no_step_why()));
    }
    if (!step->ask) return fail(err, LJ_ENOTFOUND, "the step has no ask");
    return give_text(out, out_len, ask_what(*step->ask), err);
  });
}

}  // extern "C"
