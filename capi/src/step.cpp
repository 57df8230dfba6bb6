// The C ABI's step part: verdict names and texts, plans (one, batch, JSON lines),
// keys and times, the codec.
#include <fmt/format.h>

#include <atomic>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "internal.hpp"
#include "leasejudge/step_lines.hpp"
#include "leasejudge/sweep.hpp"
#include "options.hpp"
#include "rule_options.hpp"
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
static_assert(LJ_STEP_WHY_MAX >= step_why_max);
static_assert(static_cast<int>(StepReason::started_since) == LJ_STEP_STARTED_SINCE);
static_assert(static_cast<int>(StepReason::ask_past_bound) == LJ_STEP_ASK_PAST_BOUND);
static_assert(static_cast<int>(StepReason::owner_gone) == LJ_STEP_OWNER_GONE);
static_assert(static_cast<int>(StepAction::remove) == LJ_STEP_DELETE);
static_assert(step_reason_count == LJ_STEP_UNDER_MIN_AGE + 1);

namespace {

thread_local StepCodec codec;

const lj_step_plan_options_t plan_defaults = LJ_STEP_PLAN_OPTIONS_INIT;

// The plan options as rules, resolved (out of process: the plan's caller is no owner).
// threads receives the options' threads. LJ_OK or a code (err set).
int rules_of(StepRules& rules, std::uint32_t& threads, std::atomic<bool>& stopped, const lj_step_plan_options_t* in,
             lj_error_t** err) {
  if (in == nullptr) return fail(err, LJ_EINVAL, "the plan options are NULL: they must name the node");
  lj_step_plan_options_t read;
  if (int rc = read_rule_options(read, in, plan_defaults, plan_flat_versions, plan_options_of, err); rc != LJ_OK)
    return rc;
  StepRules given;
  if (int rc = step_rules_of(given, read.rules, read.owner_state, read.payload, &stopped, err); rc != LJ_OK) return rc;
  auto resolved = resolve(std::move(given), false);
  if (!resolved) return fail(err, resolved.error());
  rules = std::move(*resolved);
  threads = read.threads;
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
void copy_summary(lj_step_plan_summary_t* out, const StepLinesSummary& s) {
  copy_summary(out, s.plan, s.malformed);
}

}  // namespace

// A plan of lines fed in pieces: the plan, the stop its owner judge may ask for, and the
// answers of the piece in hand.
struct lj_step_lines_plan_t {
  std::atomic<bool> stopped{false};
  std::optional<StepLinesPlan> plan;
  std::string out;

  // Hand out the answers so far, in chunks.
  int flush(lj_step_lines_write_fn write, void* payload, lj_error_t** err) {
    std::size_t at = 0;
    while (at < out.size()) {
      std::size_t n = std::min(out.size() - at, answer_chunk);
      if (write(out.data() + at, n, payload) != 0) {
        out.clear();
        return fail(err, LJ_EUSER, "the write callback asked to stop the plan");
      }
      at += n;
    }
    out.clear();
    return LJ_OK;
  }
  int feed(std::string_view in, lj_step_lines_write_fn write, void* payload, lj_error_t** err) {
    // A large piece in slices, so that its answers never pile up.
    for (std::size_t at = 0; at < in.size() || in.empty(); at += input_slice) {
      plan->feed(in.substr(at, input_slice), out);
      if (stopped) return stopped_error(err);
      if (int rc = flush(write, payload, err); rc != LJ_OK) return rc;
      if (in.empty()) break;
    }
    return LJ_OK;
  }
  int finish(lj_step_lines_write_fn write, void* payload, lj_error_t** err) {
    plan->finish(out);
    if (stopped) return stopped_error(err);
    return flush(write, payload, err);
  }

  static constexpr std::size_t answer_chunk = 256 << 10, input_slice = 1 << 20;
};

extern "C" {

LJ_API const char* lj_step_action_name(int action) {
  if (action < LJ_STEP_LEAVE || action > LJ_STEP_DELETE) return "";
  return step_action_name(static_cast<StepAction>(action));
}

LJ_API const char* lj_step_reason_name(int reason) {
  if (reason < 0 || reason >= step_reason_count) return "";
  return step_reason_name(static_cast<StepReason>(reason));
}

LJ_API const char* lj_step_leave_why(int reason) {
  if (reason < 0 || reason >= step_reason_count) return "";
  std::string_view why = step_leave_why(static_cast<StepReason>(reason));  // a literal: NUL-terminated
  return why.empty() ? "" : why.data();
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
  return init_rule_options(opts, version, plan_defaults, plan_flat_versions);
}

LJ_API int lj_step_rules_init(lj_step_rules_t* rules, uint32_t version) {
  return init_options(rules, version, rules_versions);
}

LJ_API int lj_step_rules_resolve(int* out_rule, char** out_owner, size_t* out_owner_len, char** out_why,
                                 size_t* out_why_len, const lj_step_rules_t* rules, lj_error_t** err) {
  reset(err);
  if (out_owner != nullptr) *out_owner = nullptr;
  if (out_why != nullptr) *out_why = nullptr;
  return guard(err, [&] {
    if (rules == nullptr) return fail(err, LJ_EINVAL, "the rules are NULL: they must name the node");
    lj_step_rules_t read;
    if (int rc = read_options(read, rules, rules_versions, err); rc != LJ_OK) return rc;
    StepRules given;
    if (int rc = step_rules_of(given, read, nullptr, nullptr, nullptr, err); rc != LJ_OK) return rc;
    std::string why;
    auto resolved = resolve(std::move(given), false, &why);
    if (!resolved) return fail(err, resolved.error());
    char* owner = nullptr;
    if (out_owner != nullptr) {
      if (int rc = give(&owner, out_owner_len, resolved->owner, err); rc != LJ_OK) return rc;
    }
    if (out_why != nullptr) {
      if (int rc = give_text(out_why, out_why_len, why, err); rc != LJ_OK) {
        lj_free(owner);
        return rc;
      }
    }
    if (out_owner != nullptr) *out_owner = owner;
    if (out_rule != nullptr) *out_rule = static_cast<int>(resolved->rule);
    return LJ_OK;
  });
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
    StepRules rules;
    std::atomic<bool> stopped{false};
    std::uint32_t threads = 1;
    if (int rc = rules_of(rules, threads, stopped, opts, err); rc != LJ_OK) return rc;
    StepRead read = read_step(k, v, rules.node, codec);
    const StepView& view = read.view;
    HolderJudgement judgement;
    StepVerdict verdict = judge_step(read, rules, nullptr, &judgement);
    if (stopped) return stopped_error(err);
    std::string said_text = step_said(verdict, view.owner, rules.owner, &judgement);
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
  (void)buffer_padding;  // kept in the deprecated signature; nothing past buffer_len is read
  return lj_step_plan_entries(out, out_count, summary, buffer, buffer_len, entries, entry_count, opts, err);
}

LJ_API int lj_step_plan_entries(lj_step_action_t* out, size_t out_count, lj_step_plan_summary_t* summary,
                                const char* buffer, size_t buffer_len, const lj_step_entry_t* entries,
                                size_t entry_count, const lj_step_plan_options_t* opts, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view buf;
    if (!view_of(buffer, buffer_len, buf)) return fail(err, LJ_EINVAL, "the buffer is NULL with a length");
    if (entry_count > 0 && (entries == nullptr || out == nullptr))
      return fail(err, LJ_EINVAL, "entries and out must not be NULL");
    if (out_count < entry_count)
      return fail(err, LJ_EINVAL, fmt::format("out holds {} actions for {} entries", out_count, entry_count));
    StepRules rules;
    std::atomic<bool> stopped{false};
    std::uint32_t threads = 1;
    if (int rc = rules_of(rules, threads, stopped, opts, err); rc != LJ_OK) return rc;
    BatchSummary sum;
    std::span<BatchVerdict> verdicts(reinterpret_cast<BatchVerdict*>(out), entry_count);
    std::span<const BatchEntry> in(reinterpret_cast<const BatchEntry*>(entries), entry_count);
    Status st = plan_batch(verdicts, buf, in, rules, threads, &sum);
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
    StepRules rules;
    std::atomic<bool> stopped{false};
    std::uint32_t threads = 1;
    if (int rc = rules_of(rules, threads, stopped, opts, err); rc != LJ_OK) return rc;
    StepLinesSummary sum;
    MallocText answer;
    // An answer line is some 130 bytes, a state's line often longer: half the input is
    // room enough for most (only what is written of it is ever resident).
    answer.reserve(text.size() / 2);
    plan_step_lines(text, rules, threads, sum, [&answer](std::string_view a) { answer.append(a); });
    if (stopped) return stopped_error(err);
    copy_summary(summary, sum);
    return answer.give(out, out_len, err);
  });
}

LJ_API int lj_step_lines_entry(char** out, size_t* out_len, int* out_kept, const char* key, size_t key_len,
                               uint64_t revision, const char* value, size_t value_len, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view k, v;
  if (!view_of(key, key_len, k) || !view_of(value, value_len, v))
    return fail(err, LJ_EINVAL, "a NULL key or value with a length");
  return guard(err, [&] {
    std::string line;
    bool kept = append_step_line(line, k, revision, v);
    if (out_kept != nullptr) *out_kept = kept ? 1 : 0;
    return give(out, out_len, line, err);
  });
}

LJ_API int lj_step_lines_read(const char* input, size_t input_len, lj_step_line_cb each, void* payload,
                              lj_error_t** err) {
  reset(err);
  std::string_view in;
  if (each == nullptr) return fail(err, LJ_EINVAL, "each is NULL");
  if (!view_of(input, input_len, in)) return fail(err, LJ_EINVAL, "the input is NULL with a length");
  return guard(err, [&] {
    StepLineReader reader;
    std::string key;  // NUL-terminated for C
    std::size_t at = 0;
    while (at < in.size()) {
      std::size_t nl = in.find('\n', at);
      if (nl == std::string_view::npos) nl = in.size();
      std::string_view text = in.substr(at, nl - at);
      at = nl + 1;
      if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const StepLine& l = reader.read(text);
      key.assign(l.key);
      int rc = each(l.has_key ? key.c_str() : nullptr, l.has_key ? key.size() : 0, l.revision, l.value.data(),
                    l.value.size(), l.malformed, payload);
      if (rc != 0) return fail(err, LJ_EUSER, fmt::format("the line callback asked to stop ({})", rc));
    }
    return LJ_OK;
  });
}

LJ_API int lj_step_plan_lines_fd(lj_step_plan_summary_t* summary, int in_fd, int out_fd,
                                 const lj_step_plan_options_t* opts, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    if (in_fd < 0 || out_fd < 0) return fail(err, LJ_EINVAL, "the file descriptors must not be negative");
    StepRules rules;
    std::atomic<bool> stopped{false};
    std::uint32_t threads = 1;
    if (int rc = rules_of(rules, threads, stopped, opts, err); rc != LJ_OK) return rc;
    StepLinesPlan plan(std::move(rules), threads);
    Status st = plan_step_lines_fd(plan, in_fd, out_fd, &stopped);
    if (stopped) return stopped_error(err);
    copy_summary(summary, plan.summary());
    if (!st.ok()) return fail(err, st.error());
    return LJ_OK;
  });
}

LJ_API int lj_step_lines_plan_create(lj_step_lines_plan_t** out, const lj_step_plan_options_t* opts, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    if (out == nullptr) return fail(err, LJ_EINVAL, "out must not be NULL");
    *out = nullptr;
    auto plan = std::make_unique<lj_step_lines_plan_t>();
    StepRules rules;
    std::uint32_t threads = 1;
    if (int rc = rules_of(rules, threads, plan->stopped, opts, err); rc != LJ_OK) return rc;
    plan->plan.emplace(std::move(rules), threads);
    *out = plan.release();
    return LJ_OK;
  });
}

LJ_API int lj_step_lines_plan_feed(lj_step_lines_plan_t* plan, const char* input, size_t input_len,
                                   lj_step_lines_write_fn write, void* payload, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    std::string_view in;
    if (plan == nullptr || write == nullptr) return fail(err, LJ_EINVAL, "plan and write must not be NULL");
    if (!view_of(input, input_len, in)) return fail(err, LJ_EINVAL, "the input is NULL with a length");
    return plan->feed(in, write, payload, err);
  });
}

LJ_API int lj_step_lines_plan_finish(lj_step_plan_summary_t* summary, lj_step_lines_plan_t* plan,
                                     lj_step_lines_write_fn write, void* payload, lj_error_t** err) {
  reset(err);
  return guard(err, [&] {
    if (plan == nullptr || write == nullptr) return fail(err, LJ_EINVAL, "plan and write must not be NULL");
    int rc = plan->finish(write, payload, err);
    copy_summary(summary, plan->plan->summary());
    return rc;
  });
}

LJ_API void lj_step_lines_plan_destroy(lj_step_lines_plan_t* plan) {
  delete plan;
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
                fmt::format("step plan: {} key{}: {} end, {} delete, {} leave, {} no-step, {} other-node, {} malformed "
                            "line{}",
                            keys, keys == 1 ? "" : "s", s.ends, s.deletes, s.leaves, s.no_step, s.other_node,
                            s.malformed, s.malformed == 1 ? "" : "s"),
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
    auto ns = parse_step_time_ns(t);
    if (!ns) return fail(err, ns.error());
    *out_ns = *ns;
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
    Instant at = ended_ns == LJ_TIME_DEFAULT ? system_now() : instant_of_ns(ended_ns);
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
    if (form == LJ_STEP_JSON_ASK) {
      auto ask = codec.decode_ask(j);
      if (!ask) return fail(err, ask.error());
      return give_text(out, out_len, ask_what(*ask), err);
    }
    auto step = codec.decode(j);
    if (!step) return fail(err, LJ_EPARSE, fmt::format("the value is no step: {}", codec.no_step_why()));
    if (!step->ask) return fail(err, LJ_ENOTFOUND, "the step has no ask");
    return give_text(out, out_len, ask_what(*step->ask), err);
  });
}

}  // extern "C"
