// Lock leases: the lock body, the holder's execution state, the lock verdict and
// the lock's life on a store.
//
// A lock is one store key whose value (the body) names its holder: a Cloud Run job
// execution (project, region, name) with a lease of its start plus its longest run,
// or a process (host, machine id, pid) with a short lease it renews while it runs.
// Bodies are JSON, written and read exactly as the JavaScript lock-lease code does,
// so that both can share one lock: JSON.parse then a schema (purpose a string; id,
// host, startedAt, leaseUntil optional strings; pid an optional number; machine an
// optional string or null; execution an optional object of three non-empty
// strings; unknown keys ignored), JSON.stringify to write, toISOString() times.
//
// The verdict on a held lock never breaks on missing evidence:
//   - an execution holder: finished -> break; running -> held (never broken, not
//     even past its lease); unknown to Cloud Run -> break once a readable lease has
//     passed, held before, held for a person to remove without a readable lease;
//     Cloud Run could not be asked -> unknown;
//   - a process holder: its pid dead on THIS machine -> break; no lease -> held for
//     a person; a lease that cannot be read -> held for a person; a lease passed
//     (now strictly after its end) -> break; else held;
//   - a body that is not readable -> held for a person.
// Beyond the JavaScript code: a body leasejudge writes also carries the holder's
// owner token (`"owner"`, ignored by the schema), so that a holder on this machine
// whose boot differs, or whose pid now names another process, is provably gone at
// once; and every break on a store returns the revision it broke at, so the next
// holder can prove it came after.
//
// Strings read from a body are kept as WTF-8: UTF-8 that may also hold a lone
// UTF-16 surrogate (JSON.parse keeps "\ud800"), so a body read and written back
// loses no code unit. Whys are plain UTF-8 (a lone surrogate shows as U+FFFD).
#pragma once

// Each concept has a header of its own:
#include "leasejudge/execution.hpp"     // the holder's execution state, gcloud
#include "leasejudge/lock_body.hpp"     // the body, its holders, the leases
#include "leasejudge/lock_life.hpp"     // acquire, wait, renew, release
#include "leasejudge/lock_verdict.hpp"  // break, held or unknown, and why
