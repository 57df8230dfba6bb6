// The capi-batch contender: the batch plan through the C ABI (lj_step_plan_batch in
// libleasejudge.so), as an FFI caller makes it: one call per batch over the caller's
// buffer and entry array, verdicts into the caller's action array.
#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "contender.hpp"
#include "leasejudge.h"

namespace leasejudge::bench {
namespace {

std::int64_t ns_of(Instant t) {
  return t.sec * 1000000000LL + t.nsec;
}

[[noreturn]] void die(std::string_view what, int rc, lj_error_t* err) {
  fmt::print(stderr, "leasejudge-bench-sweep: {}: {} ({})\n", what, lj_strerror(rc),
             err != nullptr ? lj_error_message(err) : "");
  lj_error_destroy(err);
  std::exit(1);
}

}  // namespace

Outcome run_capi_batch(const Options& o, const StepLines& lines, DecisionFile& decisions) {
  Outcome out;
  out.decided = true;
  std::vector<lj_step_entry_t> entries;
  entries.reserve(lines.lines.size());
  for (const StepLine& l : lines.lines)
    entries.push_back(lj_step_entry_t{l.key_offset, l.value_offset, l.key_len, l.value_len, l.revision});
  std::vector<lj_step_action_t> actions(entries.size());
  lj_step_plan_options_t opts = LJ_STEP_PLAN_OPTIONS_INIT;
  opts.node = o.node.data();
  opts.node_len = o.node.size();
  opts.owner = o.owner.data();
  opts.owner_len = o.owner.size();
  opts.before_ns = ns_of(o.before);
  opts.now_ns = ns_of(o.now);
  opts.bound_seconds = o.bound_s;
  opts.rule = LJ_STEP_RULE_NOT_SELF;
  opts.threads = o.threads;
  std::string_view buf = lines.buffer();
  lj_step_plan_summary_t summary{};
  int rc = LJ_OK;
  lj_error_t* err = nullptr;
  repeat(o, out, [&] {
    rc = lj_step_plan_batch(actions.data(), actions.size(), &summary, buf.data(), buf.size(), StepLines::padding_bytes,
                            entries.data(), entries.size(), &opts, &err);
  });
  if (rc != LJ_OK) die("lj_step_plan_batch", rc, err);
  out.end = summary.ends;
  out.remove = summary.deletes;
  out.leave = summary.leaves + summary.no_step + summary.other_node;
  if (decisions.wanted()) {
    char why[LJ_STEP_WHY_MAX];
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const lj_step_action_t& a = actions[i];
      std::string_view key = lines.key(lines.lines[i]);
      auto action = static_cast<StepAction>(a.action);
      if (action == StepAction::leave) {
        decisions.add(key, action, "", "");
        continue;
      }
      std::size_t why_len = 0;
      if ((rc = lj_step_why(why, sizeof why, &why_len, &a, &err)) != LJ_OK) die("lj_step_why", rc, err);
      std::string_view value = lines.value(lines.lines[i]);
      lj_step_t* step = nullptr;
      if ((rc = lj_step_decode(&step, value.data(), value.size(), &err)) != LJ_OK) die("lj_step_decode", rc, err);
      std::size_t owner_len = 0;
      const char* owner = lj_step_string(step, LJ_STEP_FIELD_OWNER, &owner_len);
      char* said = nullptr;
      std::size_t said_len = 0;
      rc = lj_step_said(&said, &said_len, &a, owner, owner == nullptr ? 0 : owner_len, o.owner.data(), o.owner.size(),
                        &err);
      lj_step_destroy(step);
      if (rc != LJ_OK) die("lj_step_said", rc, err);
      decisions.add(key, action, std::string_view(why, why_len), std::string_view(said, said_len));
      lj_free(said);
    }
  }
  return out;
}

}  // namespace leasejudge::bench
