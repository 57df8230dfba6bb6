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
 *     NUL-terminated too, for convenience, and may hold no other NUL.
 *  5. Detail text for a failure goes to an optional lj_error_t **err: pass NULL
 *     when it is not wanted; on failure *err is set to an object the caller frees
 *     with lj_error_destroy. Nothing is kept in thread-local state.
 *  6. Options are structs whose first field is uint32_t version; initialise them
 *     with LJ_<X>_OPTIONS_INIT or lj_<x>_options_init(). Fields are only ever
 *     appended. NULL means the defaults. An unknown version is LJ_EVERSION.
 *  7. Callbacks end with void *payload; a non-zero return stops the work, which
 *     then returns LJ_EUSER.
 *  8. No C++ exception crosses this boundary; an unexpected one is LJ_EINTERNAL.
 *
 * Stability: everything declared in this header and the headers it includes is
 * stable within an ABI major (the SONAME, libleasejudge.so.0); codes, reason codes
 * and enum values are never renumbered, struct fields only appended.
 */
#ifndef LEASEJUDGE_H
#define LEASEJUDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LJ_BUILDING)
#define LJ_API __attribute__((visibility("default")))
#else
#define LJ_API
#endif

/* --- versions -------------------------------------------------------------- */

#define LJ_VERSION_MAJOR 0
#define LJ_VERSION_MINOR 1
#define LJ_VERSION_PATCH 0
#define LJ_VERSION_NUMBER (LJ_VERSION_MAJOR * 10000 + LJ_VERSION_MINOR * 100 + LJ_VERSION_PATCH)

/* The library's version as "MAJOR.MINOR.PATCH" (static storage, never freed). */
LJ_API const char *lj_version(void);
/* The library's LJ_VERSION_NUMBER: compare with the header's at load time. */
LJ_API unsigned lj_version_number(void);

/* --- errors ----------------------------------------------------------------- */

#define LJ_OK 0
#define LJ_EINVAL (-1)       /* a NULL pointer or an argument out of range */
#define LJ_ENOMEM (-2)
#define LJ_EPARSE (-3)       /* bytes that are not what the format says */
#define LJ_ECHANGED (-4)     /* a compare-and-swap lost: the key moved since it was read */
#define LJ_ENOTFOUND (-5)    /* no such key, pid, file or executable */
#define LJ_EIO (-6)          /* a system call or a child process failed */
#define LJ_EVERSION (-7)     /* an options struct of an unknown version */
#define LJ_EUSER (-8)        /* a callback returned non-zero */
#define LJ_ETIMEOUT (-9)
#define LJ_EUNSUPPORTED (-10)
#define LJ_EEXISTS (-11)     /* create-if-absent found the key */
#define LJ_EREFUSED (-12)    /* a rule refuses the action */
#define LJ_ESTORE (-13)      /* the store failed */
#define LJ_EBUSY (-14)       /* a live holder keeps the lock */
#define LJ_EINTERNAL (-15)   /* a bug in leasejudge */

/* A short, stable English name for code ("changed", ...); static storage. */
LJ_API const char *lj_strerror(int code);

typedef struct lj_error_t lj_error_t;
/* The code and the sentence of an error; the string lives as long as err. */
LJ_API int lj_error_code(const lj_error_t *err);
LJ_API const char *lj_error_message(const lj_error_t *err);
LJ_API void lj_error_destroy(lj_error_t *err);

/* Free a string or buffer the library returned. */
LJ_API void lj_free(void *ptr);

/* --- identity ---------------------------------------------------------------- */
/*
 * A holder process is named by its node's boot id, its pid and its start as the
 * kernel recorded it. Tokens: the step owner "<boot id>.<pid>.<start ms base36>",
 * the lease identity "linux <boot id> <ticks>" or "ps <lstart>".
 */

/* This node's boot id, or "no-boot-id" where unreadable. *out is the caller's. */
LJ_API int lj_boot_id(char **out, size_t *out_len, lj_error_t **err);

/* The step owner token of pid (0: this process). LJ_ENOTFOUND: no such pid. */
LJ_API int lj_owner_token(char **out, size_t *out_len, int32_t pid, lj_error_t **err);

/* The lease identity line of pid (0: this process), as the lease-directory seed
 * writes it. LJ_ENOTFOUND when the pid has no readable identity. */
LJ_API int lj_lease_identity(char **out, size_t *out_len, int32_t pid, lj_error_t **err);

/* The machine id (32 lowercase hex). LJ_ENOTFOUND where the machine has none
 * (Cloud Run, or no network card): *out is then NULL. */
LJ_API int lj_machine_id(char **out, size_t *out_len, lj_error_t **err);

/* Is the process this token names the one alive now? */
typedef enum lj_holder_state_t {
  LJ_HOLDER_ALIVE = 0,
  LJ_HOLDER_DEAD = 1,
  LJ_HOLDER_RECYCLED = 2,  /* the pid lives with another start */
  LJ_HOLDER_OTHER_BOOT = 3,
  LJ_HOLDER_UNKNOWN = 4
} lj_holder_state_t;

#define LJ_OWNER_OPTIONS_VERSION 1
typedef struct lj_owner_options_t {
  uint32_t version;
  int64_t start_tolerance_ms; /* default 5000 */
} lj_owner_options_t;
#define LJ_OWNER_OPTIONS_INIT {LJ_OWNER_OPTIONS_VERSION, 5000}
LJ_API int lj_owner_options_init(lj_owner_options_t *opts, uint32_t version);

/* Judge a step owner token. *state is set; *why (optional, may be NULL) is the
 * caller's. A malformed token is LJ_HOLDER_UNKNOWN with LJ_OK, never an error. */
LJ_API int lj_owner_judge(lj_holder_state_t *state, char **why, size_t *why_len,
                          const char *token, size_t token_len,
                          const lj_owner_options_t *opts, lj_error_t **err);

/* The lease-directory rule for a pid and its recorded identity with the lease's age
 * in minutes: ALIVE, DEAD or RECYCLED (the seed's "stale"). */
LJ_API int lj_lease_identity_judge(lj_holder_state_t *state, char **why, size_t *why_len,
                                   int32_t pid, const char *record, size_t record_len,
                                   int64_t age_min, lj_error_t **err);

#ifdef __cplusplus
}
#endif

#include "leasejudge/lj_store.h"
#include "leasejudge/lj_step.h"
#include "leasejudge/lj_lock.h"
#include "leasejudge/lj_leasedir.h"
#include "leasejudge/lj_nats.h"

#endif /* LEASEJUDGE_H */
