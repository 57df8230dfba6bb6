/*
 * leasejudge C ABI: process identity (included by leasejudge.h).
 *
 * A holder process is named by its node's boot id, its pid and its start as the
 * kernel recorded it. Tokens: the step owner "<boot id>.<pid>.<start ms base36>",
 * the lease identity "linux <boot id> <ticks>" or "ps <lstart>". The machine id is
 * the lock seed's view of the machine (host name, pid namespace, the MACs of the
 * network cards that are up).
 */
#ifndef LEASEJUDGE_LJ_IDENTITY_H
#define LEASEJUDGE_LJ_IDENTITY_H

#include "leasejudge/lj_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This node's boot id, or "no-boot-id" where unreadable. *out is the caller's. */
LJ_API int lj_boot_id(char **out, size_t *out_len, lj_error_t **err);

/* The step owner token of pid (0: this process). LJ_ENOTFOUND: no such pid. */
LJ_API int lj_owner_token(char **out, size_t *out_len, int32_t pid, lj_error_t **err);
/* A token's fields: its boot id (out_boot_id, optional, the caller's), pid and start
 * in ms since the epoch. LJ_EPARSE for text that is no owner token (exactly three
 * '.'-separated fields: a boot id, a decimal pid in 1..2^31-1, the start in lowercase
 * base 36). */
LJ_API int lj_owner_token_parse(char **out_boot_id, size_t *out_boot_id_len, int32_t *out_pid,
                                int64_t *out_start_ms, const char *token, size_t token_len, lj_error_t **err);

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
 * caller's, UTF-8 without NUL (a NUL or ill-formed byte of the token it quotes
 * given as U+FFFD). A malformed token is LJ_HOLDER_UNKNOWN with LJ_OK, never an
 * error. */
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

#endif /* LEASEJUDGE_LJ_IDENTITY_H */
