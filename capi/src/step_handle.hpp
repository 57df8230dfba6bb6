// What the step and sweep parts of the C ABI share: the decoded step handle, times
// in nanoseconds, and the owner judge a C callback stands for. Private to capi/.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "internal.hpp"
#include "leasejudge.h"
#include "leasejudge/step.hpp"

struct lj_step_t {
  leasejudge::Step step;
  std::string ask_what;  // c_text of AskWhat of step.ask; unused when it has none
};

namespace leasejudge::capi {

static_assert(static_cast<int>(HolderState::alive) == LJ_HOLDER_ALIVE);
static_assert(static_cast<int>(HolderState::dead) == LJ_HOLDER_DEAD);
static_assert(static_cast<int>(HolderState::recycled) == LJ_HOLDER_RECYCLED);
static_assert(static_cast<int>(HolderState::other_boot) == LJ_HOLDER_OTHER_BOOT);
static_assert(static_cast<int>(HolderState::unknown) == LJ_HOLDER_UNKNOWN);

inline Instant instant_of_ns(std::int64_t ns) noexcept {
  std::int64_t s = ns / 1000000000, r = ns % 1000000000;
  if (r < 0) {
    r += 1000000000;
    s -= 1;
  }
  return Instant{s, static_cast<std::int32_t>(r)};
}

// A new lj_step_t for step (call inside guard()).
inline lj_step_t* new_step_handle(Step step) {
  auto* h = new lj_step_t{std::move(step), {}};
  if (h->step.ask) h->ask_what = c_text(ask_what(*h->step.ask));
  return h;
}

using OwnerStateFn = int (*)(lj_holder_state_t*, const char*, size_t, void*);

// The owner judge of a C option set: the caller's callback (a non-zero return sets
// stopped and judges unknown: never gone), or judge_owner_token with the tolerance.
inline OwnerJudge owner_judge_of(OwnerStateFn fn, void* payload, std::int64_t tolerance_ms,
                                 std::atomic<bool>* stopped) {
  if (fn == nullptr) {
    return [tolerance_ms](std::string_view owner) {
      OwnerJudgeOptions o;
      o.start_tolerance_ms = tolerance_ms;
      return judge_owner_token(owner, o);
    };
  }
  return [fn, payload, stopped](std::string_view owner) {
    std::string token(owner);
    lj_holder_state_t state = LJ_HOLDER_UNKNOWN;
    if (fn(&state, token.c_str(), token.size(), payload) != 0) {
      stopped->store(true);
      return HolderJudgement{HolderState::unknown, "the owner_state callback asked to stop"};
    }
    int s = static_cast<int>(state);
    if (s < LJ_HOLDER_ALIVE || s > LJ_HOLDER_UNKNOWN) s = LJ_HOLDER_UNKNOWN;
    auto hs = static_cast<HolderState>(s);
    return HolderJudgement{hs, std::string("the caller judged its owner ") + holder_state_name(hs)};
  };
}

}  // namespace leasejudge::capi
