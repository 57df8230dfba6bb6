/*
 * leasejudge: the stable C ABI.
 *
 * leasejudge decides whether the holder of a lock, a lease or a running step is
 * still alive, with a stable reason code and a sentence saying why, and reclaims
 * what a dead holder left behind without ever breaking a live holder's claim.
 *
 * Conventions of this header (every part below keeps them):
 *  1. Every name is lj_<noun>_<verb>, every type lj_<noun>_t, every macro LJ_.
 *  2. Functions return int: LJ_OK (0) or a negative LJ_E* code whose number never
 *     changes meaning. lj_strerror(code) names it. A verdict is not an error:
 *     "held" and "unknown" return LJ_OK with the verdict in an out-parameter.
 *  3. Outputs come first, named out. What comes back through out is the caller's:
 *     free a string or buffer with lj_free, an object with its lj_<noun>_destroy.
 *     lj_free(NULL) and every _destroy(NULL) do nothing.
 *  4. Data goes in and out as (pointer, length); lengths are size_t; no input
 *     needs a terminating NUL unless its comment says so. Returned strings are
 *     NUL-terminated too, for convenience, and may hold no other NUL. Text that
 *     quotes input (a why, a log line, an error message) is UTF-8: each NUL, lone
 *     surrogate and ill-formed byte sequence of what it quotes is given as U+FFFD.
 *     Stored bytes handed back as they are (a store's value, a lock's body, a
 *     step's field) say so where they may hold a NUL.
 *  5. Detail text for a failure goes to an optional lj_error_t **err: pass NULL
 *     when it is not wanted; on failure *err is set to an object the caller frees
 *     with lj_error_destroy. Nothing is kept in thread-local state.
 *  6. Options are structs whose first field is uint32_t version; initialise them
 *     with LJ_<X>_OPTIONS_INIT or lj_<x>_options_init(). Fields are only ever
 *     appended, each addition behind a new version. NULL means the defaults. A
 *     struct of any version from 1 to the newest is read for the fields that
 *     version has, the rest taking their defaults, so a program built against an
 *     older header runs with a newer library; 0 or a version newer than the
 *     library's is LJ_EVERSION. Fields shared by several option structs are one
 *     struct of their own, versioned the same way and held as a member (the step
 *     rules, lj_step_rules_t); a struct that took such a member (ABI major 0) still
 *     reads its older layouts by their version.
 *  7. Each part header (leasejudge/lj_*.h) stands on its own and includes what it
 *     needs; leasejudge.h includes them all. A time or a duration carries its unit
 *     as the last part of its name, _ms (milliseconds) or _ns (nanoseconds); a time
 *     is counted since the Unix epoch. The one other form is a time split into whole
 *     seconds and their nanoseconds, _sec and _nsec side by side (a step's times, an
 *     ask's bound in lj_step_action_t), never a lone _sec or _seconds.
 *     LJ_TIME_DEFAULT stands for the default of any time (LJ_STEP_DEFAULT_TIME and
 *     LJ_LOCK_NOW are its older, deprecated names, used nowhere else).
 *  8. Callbacks end with void *payload; a non-zero return stops the work, which
 *     then returns LJ_EUSER.
 *  9. No C++ exception crosses this boundary; an unexpected one is LJ_EINTERNAL.
 * 10. A deprecated entry point stays, calling its successor; no new entry point takes
 *     a parameter it ignores.
 *
 * Stability: everything declared in this header and the headers it includes is
 * stable within an ABI major (the SONAME, libleasejudge.so.0); codes, reason codes
 * and enum values are never renumbered, struct fields only appended.
 */
#ifndef LEASEJUDGE_H
#define LEASEJUDGE_H

#include "leasejudge/lj_common.h"
#include "leasejudge/lj_identity.h"
#include "leasejudge/lj_store.h"
#include "leasejudge/lj_step.h"
#include "leasejudge/lj_lock.h"
#include "leasejudge/lj_leasedir.h"
#include "leasejudge/lj_nats.h"
#include "leasejudge/lj_watch.h"

#endif /* LEASEJUDGE_H */
