// What the sweep and watch parts of the C ABI share: a C sweep call's options
// resolved, and the store a sweep acts through. Private to capi/.
#pragma once

#include <atomic>
#include <string_view>

#include "leasejudge.h"
#include "leasejudge/stoppable_store.hpp"
#include "leasejudge/sweep.hpp"

namespace leasejudge::capi {

inline constexpr std::string_view sweep_stop_message = "a callback asked the sweep to stop";

// Everything a C sweep call resolves from its options. Its functions point at its
// `stopped`: it stays where it was made.
struct SweepCall {
  SweepOptions options;
  SweepLog log;
  StepLive live;
  std::atomic<bool> stopped{false};  // a callback asked to stop
};

// Translate opts (NULL: defaults) into call, and check its rules for node as the sweep
// will resolve them (resolve()); LJ_EVERSION, LJ_EINVAL as the options say.
// in_process: the seed's in-process sweeps (EndOne, at start, the round), whose owner
// is this process.
int call_of(SweepCall& call, std::string_view node, const lj_sweep_options_t* opts, bool in_process,
            lj_error_t** err);
// A node as C gives it; LJ_EINVAL for NULL with a length (resolve() checks the name).
int node_of(std::string_view& node, const char* p, size_t len, lj_error_t** err);
// The store a sweep acts through: inner's calls, refused once a callback asked to
// stop, so that the sweep stops before its next store call.
StoppableStore stoppable(Store& inner, SweepCall& call);

}  // namespace leasejudge::capi
