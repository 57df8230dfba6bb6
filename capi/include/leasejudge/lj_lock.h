/*
 * leasejudge C ABI: lock leases (included by leasejudge.h).
 *
 * A lock is one store key whose value (the body, JSON) names its holder: a Cloud
 * Run job execution with a lease of its longest run, or a process (host, machine
 * id, pid) with a short lease it renews while it runs. Bodies are read and written
 * exactly as the JavaScript lock-lease code reads and writes them, so both can
 * share a lock.
 *
 * The verdict on a held lock is BREAK (the holder is provably gone), HELD (alive,
 * or not provably gone; manual_removal says only a person can clear it) or UNKNOWN
 * (Cloud Run could not be asked: report it, never treat it as gone), with a stable
 * reason code and a sentence naming the holder. Judging never breaks on missing
 * evidence.
 *
 * Times are milliseconds since the Unix epoch; LJ_TIME_DEFAULT stands for the system
 * clock wherever a time is taken. A time outside JavaScript's Date range
 * (+-8.64e15 ms), a negative lease and a timeout over a day (86400000 ms) are
 * LJ_EINVAL wherever they are taken.
 */
#ifndef LEASEJUDGE_LJ_LOCK_H
#define LEASEJUDGE_LJ_LOCK_H

#include "leasejudge/lj_identity.h"
#include "leasejudge/lj_store.h"


#ifdef __cplusplus
extern "C" {
#endif

/* Deprecated: an older name of LJ_TIME_DEFAULT (lj_common.h): now, read from the
 * system clock when the call runs. */
#define LJ_LOCK_NOW LJ_TIME_DEFAULT
/* A process holder's lease (10 minutes), renewed every third of it. */
#define LJ_LOCK_PROCESS_LEASE_MS 600000
/* Added to every lease for clock skew between holder and judge (5 minutes): a body's
 * leaseUntil is its writer's now + lease + this margin. */
#define LJ_LOCK_LEASE_SKEW_MS 300000

/* --- the verdict --------------------------------------------------------------- */

typedef enum lj_lock_kind_t {
  LJ_LOCK_BREAK = 0,
  LJ_LOCK_HELD = 1,
  LJ_LOCK_UNKNOWN = 2
} lj_lock_kind_t;

/* Why. Numbers never change; lj_lock_reason_code names each ("lease_ended"). */
typedef enum lj_lock_reason_t {
  LJ_LOCK_NOT_READABLE = 1,                    /* held, manual removal: not a lock body */
  LJ_LOCK_EXECUTION_FINISHED = 2,              /* break: the execution has finished */
  LJ_LOCK_EXECUTION_RUNNING = 3,               /* held: still running, whatever its lease */
  LJ_LOCK_EXECUTION_NOT_FOUND_NO_LEASE = 4,    /* held, manual removal */
  LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_ENDED = 5, /* break */
  LJ_LOCK_EXECUTION_NOT_FOUND_LEASE_RUNS = 6,  /* held */
  LJ_LOCK_EXECUTION_UNKNOWN = 7,               /* unknown: Cloud Run could not be asked */
  LJ_LOCK_PROCESS_GONE = 8,                    /* break: its pid is dead on this machine */
  LJ_LOCK_NO_LEASE = 9,                        /* held, manual removal: a lock without lease */
  LJ_LOCK_LEASE_UNREADABLE = 10,               /* held, manual removal */
  LJ_LOCK_LEASE_ENDED = 11,                    /* break: it stopped renewing */
  LJ_LOCK_LEASE_RUNS = 12,                     /* held */
  LJ_LOCK_HOLDER_REBOOTED = 13,                /* break: this machine restarted since */
  LJ_LOCK_PID_REUSED = 14,                     /* break: its pid is another process now */
  LJ_LOCK_STORE_LEASE_ENDED = 15,              /* break: the store (etcd) ended the key's lease */
  LJ_LOCK_STORE_LEASE_UNKNOWN = 16             /* unknown: the key's store lease could not be read */
} lj_lock_reason_t;

/* "not_readable", "lease_ended", ...: the stable snake_case name of a reason;
 * "" for a number that names none. Static storage. */
LJ_API const char *lj_lock_reason_code(int reason);
/* "break", "held", "unknown"; "" for a number that names none. Static storage. */
LJ_API const char *lj_lock_kind_name(int kind);

typedef struct lj_lock_verdict_t {
  lj_lock_kind_t kind;
  lj_lock_reason_t reason;
  int manual_removal; /* held only: 1 when only a person can clear the lock */
  char *why;          /* the caller's (lj_free, or lj_lock_verdict_clear); UTF-8.
                       * A NUL or ill-formed byte quoted from a body or a
                       * describer is given as U+FFFD. */
  size_t why_len;
} lj_lock_verdict_t;

/* Free verdict->why and zero the verdict. NULL does nothing. */
LJ_API void lj_lock_verdict_clear(lj_lock_verdict_t *verdict);

/* The verdict as `<kind> <reason code> <why>` (one line unless the why quotes a
 * line break), or as the one-line JSON object
 * {"kind":"held","reason":"lease_runs","manualRemoval":false,"why":"..."}.
 * *out is the caller's. LJ_EINVAL for a kind or reason out of range, a reason
 * another kind gives (break with LJ_LOCK_LEASE_RUNS), or a manual_removal its
 * reason does not give (set for exactly NOT_READABLE, EXECUTION_NOT_FOUND_NO_LEASE,
 * NO_LEASE and LEASE_UNREADABLE). The why may be any bytes: both forms write it as
 * UTF-8 (each ill-formed sequence as U+FFFD; a NUL as U+FFFD in the text form,
 * escaped in the JSON form), so the JSON form is valid JSON for any verdict. */
LJ_API int lj_lock_verdict_text(char **out, size_t *out_len, const lj_lock_verdict_t *verdict,
                                lj_error_t **err);
LJ_API int lj_lock_verdict_json(char **out, size_t *out_len, const lj_lock_verdict_t *verdict,
                                lj_error_t **err);

/* --- execution state --------------------------------------------------------------- */

typedef enum lj_execution_kind_t {
  LJ_EXECUTION_RUNNING = 0,
  LJ_EXECUTION_FINISHED = 1,  /* detail: how ("succeeded", "cancelled", ...) */
  LJ_EXECUTION_NOT_FOUND = 2, /* Cloud Run does not know it */
  LJ_EXECUTION_UNKNOWN = 3    /* Cloud Run could not be asked; detail: why */
} lj_execution_kind_t;

/* A Cloud Run job execution. Strings are (pointer, length). */
typedef struct lj_execution_ref_t {
  const char *project_id;
  size_t project_id_len;
  const char *region;
  size_t region_len;
  const char *name; /* the execution's short name */
  size_t name_len;
} lj_execution_ref_t;

/* Where a describer puts what it found (the library copies detail). */
typedef struct lj_execution_state_t lj_execution_state_t;
LJ_API int lj_execution_state_set(lj_execution_state_t *state, int kind, const char *detail,
                                  size_t detail_len);

/* Looks ref up (its strings live during the call and are NUL-terminated too) and
 * calls lj_execution_state_set once; a describer that sets nothing answers
 * UNKNOWN. Called only for a body naming an execution. Non-zero: stop (LJ_EUSER). */
typedef int (*lj_execution_describe_cb)(lj_execution_state_t *state, const lj_execution_ref_t *ref,
                                        void *payload);

/* Read `gcloud run jobs executions describe --format=json` output as the
 * JavaScript code does: exit_code 0 reads stdout, else stderr decides NOT_FOUND or
 * UNKNOWN. *out_detail (caller's) is the how or the error, "" otherwise: UTF-8
 * without NUL, at most 4096 bytes of its source, a longer one cut at a character
 * boundary and ending in " [cut: N more bytes]". Whys quoting a describer's detail
 * keep the same bound. */
LJ_API int lj_execution_state_parse(lj_execution_kind_t *out_kind, char **out_detail, size_t *out_detail_len,
                                    int exit_code, const char *out_text, size_t out_text_len,
                                    const char *err_text, size_t err_text_len, lj_error_t **err);

/* The arguments after `gcloud` that lj_execution_describe runs: run jobs executions
 * describe NAME --region=R --project=P --format=json, each followed by a NUL (the
 * /proc/<pid>/cmdline form). *out is the caller's; *out_count (may be NULL) is 8.
 * A NUL inside a ref's field shows as U+FFFD. LJ_EINVAL for a NULL field. */
LJ_API int lj_execution_describe_args(char** out, size_t* out_len, size_t* out_count, const lj_execution_ref_t* ref,
                                      lj_error_t** err);

/* Run `gcloud run jobs executions describe` (gcloud on PATH, no shell) with a
 * timeout (<= 0: 60 s; over a day: LJ_EINVAL) and read its answer. A gcloud that cannot be run or times
 * out is LJ_EXECUTION_UNKNOWN with the reason, not an error. */
LJ_API int lj_execution_describe(lj_execution_kind_t *out_kind, char **out_detail, size_t *out_detail_len,
                                 const lj_execution_ref_t *ref, int64_t timeout_ms, lj_error_t **err);

/* --- judging ------------------------------------------------------------------------- */

typedef enum lj_machine_kind_t {
  LJ_MACHINE_ABSENT = 0, /* no machine id stated: host names are compared */
  LJ_MACHINE_NONE = 1,   /* no machine id (Cloud Run): a pid is never trusted */
  LJ_MACHINE_ID = 2
} lj_machine_kind_t;

/* The judging machine, for tests and for judging on another's behalf. */
#define LJ_LOCK_HERE_VERSION 1
typedef struct lj_lock_here_t {
  uint32_t version;
  const char *host; /* (pointer, length) */
  size_t host_len;
  int machine_kind; /* lj_machine_kind_t */
  const char *machine;
  size_t machine_len;
  /* Sets *out_alive to 1 when pid lives (or cannot be told dead), 0 when it is
   * provably dead. NULL: kill(pid, 0) on this machine. Non-zero: stop (LJ_EUSER). */
  int (*alive)(int *out_alive, double pid, void *payload);
  /* The state of the holder an owner token names (token: token_len bytes, then a NUL).
   * NULL: judged on this machine. */
  int (*owner_state)(lj_holder_state_t *out_state, const char *token, size_t token_len, void *payload);
  void *payload;
} lj_lock_here_t;
#define LJ_LOCK_HERE_INIT {LJ_LOCK_HERE_VERSION, NULL, 0, LJ_MACHINE_NONE, NULL, 0, NULL, NULL, NULL}
LJ_API int lj_lock_here_init(lj_lock_here_t *here, uint32_t version);

#define LJ_LOCK_OPTIONS_VERSION 1
typedef struct lj_lock_options_t {
  uint32_t version;
  lj_execution_describe_cb describe; /* NULL: gcloud on PATH */
  void *describe_payload;
  int64_t gcloud_timeout_ms;         /* default 60000; <= 0 the default; over a day LJ_EINVAL */
  const lj_lock_here_t *here;        /* NULL: this machine */
  /* The environment gcloud runs in ("NAME=value" strings, NULL-terminated; PATH is
   * looked up in it), e.g. a shell's exported variables. NULL: the process's. One
   * without PATH finds no gcloud (the verdict is UNKNOWN, saying so): gcloud is
   * never looked up where the caller's environment does not say. */
  char *const *gcloud_env;
} lj_lock_options_t;
#define LJ_LOCK_OPTIONS_INIT {LJ_LOCK_OPTIONS_VERSION, NULL, NULL, 60000, NULL, NULL}
LJ_API int lj_lock_options_init(lj_lock_options_t *opts, uint32_t version);

/* The judge's own check of a pid on this machine, used when here->alive is NULL:
 * *out is 0 only when kill(pid, 0) fails with ESRCH (the pid is provably dead);
 * 1 when it lives (EPERM: someone else's), when it cannot be told, and for any
 * number that is no positive 32-bit integer (it names no process to prove gone). */
LJ_API int lj_process_alive(int* out, double pid, lj_error_t** err);

/* Decide whether the lock with this body may be broken. Fills *out (its why is
 * the caller's) and returns LJ_OK for every verdict; a body that is not readable
 * is a HELD verdict, not an error. LJ_EUSER when a callback stopped the work. */
LJ_API int lj_lock_judge(lj_lock_verdict_t *out, const char *body, size_t body_len, int64_t now_ms,
                         const lj_lock_options_t *opts, lj_error_t **err);

/* --- bodies --------------------------------------------------------------------------- */

typedef enum lj_lock_holder_kind_t {
  LJ_LOCK_HOLDER_NONE = 0,     /* no lease: a machine-local lock judged by its pid */
  LJ_LOCK_HOLDER_PROCESS = 1,  /* lease_ms is its lease */
  LJ_LOCK_HOLDER_EXECUTION = 2 /* lease_ms is its longest run; execution names it */
} lj_lock_holder_kind_t;

#define LJ_LOCK_HOLDER_VERSION 2
typedef struct lj_lock_holder_t {
  uint32_t version;
  int kind; /* lj_lock_holder_kind_t */
  int64_t lease_ms; /* >= 0 */
  lj_execution_ref_t execution;
  /* Version 2. The process of this machine the body names (pid, owner token): 0 for
   * this process; another for a command taking a lock for the shell that ran it.
   * LJ_ENOTFOUND when it names no process. */
  int32_t pid;
} lj_lock_holder_t;
#define LJ_LOCK_HOLDER_INIT \
  {LJ_LOCK_HOLDER_VERSION, LJ_LOCK_HOLDER_PROCESS, LJ_LOCK_PROCESS_LEASE_MS, {NULL, 0, NULL, 0, NULL, 0}, 0}
LJ_API int lj_lock_holder_init(lj_lock_holder_t *holder, uint32_t version);

/* The purpose a lock is taken with when its taker names none, the same from every
 * door: "leasejudge lock KEY (pid PID)"; pid 0 is this process. *out is the
 * caller's. LJ_EINVAL for an empty key or a negative pid. */
LJ_API int lj_lock_purpose_default(char **out, size_t *out_len, const char *key, size_t key_len, int32_t pid,
                                   lj_error_t **err);

/* A new body for this process taking a lock: purpose, id (NULL or empty: a fresh
 * UUID), host, machine id, pid, startedAt now, the lease (now + lease + skew) and
 * for a process holder its owner token. holder NULL: a process with the default
 * lease. LJ_EINVAL for text that is not UTF-8, an execution with an empty
 * field, a negative lease or a time outside the Date range. */
LJ_API int lj_lock_body_new(char **out, size_t *out_len, const char *purpose, size_t purpose_len,
                            int64_t now_ms, const lj_lock_holder_t *holder, const char *id, size_t id_len,
                            lj_error_t **err);
/* The body with its lease moved to now + lease_ms + skew; the rest kept.
 * LJ_EPARSE when body is not a readable lock body; LJ_EINVAL for a negative
 * lease_ms or a time outside the Date range. */
LJ_API int lj_lock_body_renew(char **out, size_t *out_len, const char *body, size_t body_len, int64_t now_ms,
                              int64_t lease_ms, lj_error_t **err);
/* The body as the schema reads it, written back as JSON.stringify writes what the
 * schema keeps: its fields in the schema's order (purpose, id, host, machine, pid,
 * startedAt, execution, leaseUntil), then owner; unknown keys dropped, a lone
 * surrogate kept as its \u escape and a pid of -0 written -0, so JSON.parse of
 * *out gives exactly the JavaScript code's parseLockBody() (owner aside). *out is
 * the caller's.
 * LJ_EPARSE when body is not a readable lock body. */
LJ_API int lj_lock_body_parse(char** out, size_t* out_len, const char* body, size_t body_len, lj_error_t** err);
/* The body's acquisition id (a NUL or lone surrogate in it given as U+FFFD).
 * LJ_EPARSE: not readable; LJ_ENOTFOUND: no id. */
LJ_API int lj_lock_body_id(char **out, size_t *out_len, const char *body, size_t body_len, lj_error_t **err);

/* A time as the lock bodies write it (toISOString()) and read it (Date.parse, ISO
 * forms only). parse: LJ_EPARSE when text is no readable time. */
LJ_API int lj_lock_time_format(char **out, size_t *out_len, int64_t unix_ms, lj_error_t **err);
LJ_API int lj_lock_time_parse(int64_t *out_ms, const char *text, size_t text_len, lj_error_t **err);

/* --- the lock's life on a store ------------------------------------------------------------ */

/* A lock this process holds; it borrows its store, which must outlive it. */
typedef struct lj_lock_t lj_lock_t;

typedef enum lj_lock_outcome_t {
  LJ_ACQUIRE_ACQUIRED = 0,  /* the lock is ours */
  LJ_ACQUIRE_HELD = 1,      /* a live (or not provably gone) holder keeps it */
  LJ_ACQUIRE_UNKNOWN = 2,   /* the holder could not be checked */
  LJ_ACQUIRE_LOST_RACE = 3  /* another writer moved the key meanwhile: not retried */
} lj_lock_outcome_t;

typedef struct lj_lock_acquisition_t {
  lj_lock_outcome_t outcome;
  int has_verdict;           /* 1 when a holder was found and judged */
  lj_lock_verdict_t verdict; /* that verdict; its why is the caller's */
  uint64_t broke_at;         /* the revision of the body broken; 0 when none */
  uint64_t revision;         /* acquired: our body's revision, the fencing token */
} lj_lock_acquisition_t;
/* Free what an acquisition holds and zero it. NULL does nothing. */
LJ_API void lj_lock_acquisition_clear(lj_lock_acquisition_t *acquisition);

/* Take the lock at key: create it when absent; when held, judge the holder and on
 * BREAK delete its body at the revision judged, then create ours. *out is the
 * held lock when outcome is LJ_ACQUIRE_ACQUIRED, else NULL; *acquisition says what
 * happened. LJ_OK for every outcome; errors for a failing store or LJ_EUSER. */
LJ_API int lj_lock_acquire(lj_lock_t **out, lj_lock_acquisition_t *acquisition, lj_store_t *store,
                           const char *key, size_t key_len, const char *purpose, size_t purpose_len,
                           const lj_lock_holder_t *holder, int64_t now_ms, const lj_lock_options_t *opts,
                           lj_error_t **err);
/* Move our lease forward. LJ_ECHANGED: the lock is no longer ours (broken or
 * rewritten): stop the work it guarded. LJ_EINVAL for a lock without a lease. */
LJ_API int lj_lock_renew(lj_lock_t *lock, int64_t now_ms, lj_error_t **err);
/* Remove the lock while its body's id is still ours. LJ_ENOTFOUND: no lock;
 * LJ_ECHANGED: someone else's now. */
LJ_API int lj_lock_release(lj_lock_t *lock, lj_error_t **err);
/* Our body's revision (the fencing token), 0 for NULL. */
LJ_API uint64_t lj_lock_revision(const lj_lock_t *lock);
/* How often to renew: a third of the lease, in ms (0 for NULL or no lease). */
LJ_API int64_t lj_lock_renew_interval_ms(const lj_lock_t *lock);
/* The lease it renews with, in ms, without the skew (0 for NULL or no lease). */
LJ_API int64_t lj_lock_lease_ms(const lj_lock_t *lock);
/* Our acquisition id and current body; *out is the caller's. */
LJ_API int lj_lock_id(char **out, size_t *out_len, const lj_lock_t *lock, lj_error_t **err);
LJ_API int lj_lock_body(char **out, size_t *out_len, const lj_lock_t *lock, lj_error_t **err);
/* Forget the handle (the lock stays in the store: release it first). NULL: nothing. */
LJ_API void lj_lock_destroy(lj_lock_t *lock);
/* A handle for the lock at key while its body is the one with acquisition id `id`
 * (lj_lock_id of the acquisition), to renew or release a lock taken before, by
 * another process or run: lease_ms is its lease for renewal (0: none), or
 * LJ_LOCK_LEASE_AS_TAKEN: the lease the lock was taken with, which the bodies
 * leasejudge writes record (`leaseMs`); the 10-minute default for a body that
 * records none. LJ_ENOTFOUND: no lock; LJ_ECHANGED: someone else's body now. */
#define LJ_LOCK_LEASE_AS_TAKEN (-1)
LJ_API int lj_lock_open(lj_lock_t **out, lj_store_t *store, const char *key, size_t key_len, const char *id,
                        size_t id_len, int64_t lease_ms, lj_error_t **err);

/* The verdict on the lock stored at key, as lj_lock_acquire judges it before it
 * breaks: where the key is bound to a store lease (etcd), the store's word on that
 * lease first (gone: BREAK, LJ_LOCK_STORE_LEASE_ENDED; not readable: UNKNOWN,
 * LJ_LOCK_STORE_LEASE_UNKNOWN), then the body, whose lease ended by now_ms is HELD
 * (LJ_LOCK_LEASE_RUNS) while the store lease runs: the store counts it, not this
 * machine's clock. Elsewhere the stored body judged as lj_lock_judge does. Fills
 * *out (its why is the caller's), *out_revision (may be NULL) with the revision
 * judged and *out_body (may be NULL; the caller's, lj_free) with the body read.
 * LJ_ENOTFOUND when there is no lock at key; a failing store's code as
 * lj_store_get gives it; LJ_EUSER when a callback stopped the work. */
LJ_API int lj_lock_judge_stored(lj_lock_verdict_t *out, uint64_t *out_revision, char **out_body,
                                size_t *out_body_len, lj_store_t *store, const char *key, size_t key_len,
                                int64_t now_ms, const lj_lock_options_t *opts, lj_error_t **err);

/* --- waiting for a lock, and the heartbeat ------------------------------------------- */

/* How lj_lock_acquire_wait waits. */
#define LJ_LOCK_WAIT_OPTIONS_VERSION 2
typedef struct lj_lock_wait_options_t {
  uint32_t version;
  /* How long to keep trying, in ms: 0 one try; negative or over a day LJ_EINVAL. */
  int64_t wait_ms;
  /* The first sleep between tries (0: 50 ms), doubled after each try up to
   * poll_max_ms (0: 1000 ms, or poll_min_ms when that is more). Negative, over a
   * day, or a max below the min: LJ_EINVAL. */
  int64_t poll_min_ms;
  int64_t poll_max_ms;
  /* Asked before each try and at least every 20 ms while asleep; non-zero stops
   * the wait with LJ_EUSER. NULL: only the wait's end stops it. */
  int (*cancelled)(void *payload);
  void *payload;
  /* Version 2. What the wait says as it goes, one line a call (line lives during the
   * call): the watch of the key it waits on where the store has one (NATS, etcd: a
   * release wakes the wait, the poll the fallback) or why none, and what woke each
   * try after the first (a watch event or the poll). Called with payload. NULL:
   * nothing said. */
  void (*note)(const char *line, size_t line_len, void *payload);
} lj_lock_wait_options_t;
#define LJ_LOCK_WAIT_OPTIONS_INIT {LJ_LOCK_WAIT_OPTIONS_VERSION, 0, 50, 1000, NULL, NULL, NULL}
LJ_API int lj_lock_wait_options_init(lj_lock_wait_options_t *opts, uint32_t version);

/* lj_lock_acquire, tried again with the clock's now while the lock is not ours
 * (held, its holder unknown, a race lost), until wait->wait_ms has passed (the
 * steady clock; the last try is made at its end). A live holder is waited on; one
 * provably gone is broken as lj_lock_acquire breaks it. LJ_OK with the first
 * LJ_ACQUIRE_ACQUIRED, or with the last try's outcome when the wait ran out.
 * LJ_EUSER when cancelled (nothing of ours is left in the store); a store error
 * ends the wait at once with that error (a write whose outcome is unknown is
 * never tried again). wait NULL: one try. */
LJ_API int lj_lock_acquire_wait(lj_lock_t **out, lj_lock_acquisition_t *acquisition, lj_store_t *store,
                                const char *key, size_t key_len, const char *purpose, size_t purpose_len,
                                const lj_lock_holder_t *holder, const lj_lock_wait_options_t *wait,
                                const lj_lock_options_t *opts, lj_error_t **err);

/* A heartbeat: renews a lock every third of its lease on a thread of its own. A
 * renewal that fails is tried again (every quarter of that interval, at most 2 s)
 * while the lease still runs, counted from the start of the last renewal that
 * succeeded, without the skew judges add: one failed renewal is no loss. The lock
 * is lost when a renewal finds it someone else's (LJ_ECHANGED) or when the lease
 * ends without a renewal that succeeded (LJ_ETIMEOUT). A try again is an update
 * at the revision last seen, never a blind write; when the key has moved, a body
 * with our acquisition id (a renewal of ours whose answer was lost) is taken at
 * its revision, and any other body is the lock lost. */
typedef struct lj_lock_heartbeat_t lj_lock_heartbeat_t;
/* Called once, on the heartbeat's thread, when the lock is lost: code and a UTF-8
 * message that lives during the call. It must not destroy the heartbeat. */
typedef void (*lj_lock_lost_cb)(int code, const char *message, size_t message_len, void *payload);

/* Start renewing lock. The heartbeat borrows lock (destroy the heartbeat before
 * the lock); while it runs lj_lock_renew and lj_lock_release are LJ_EBUSY, and
 * lj_lock_revision, lj_lock_id and lj_lock_body read the lock as last renewed.
 * on_lost may be NULL. *out is the caller's (lj_lock_heartbeat_destroy).
 * LJ_EINVAL for NULL out or lock, or a lock without a lease; LJ_EBUSY when the
 * lock has a heartbeat already. */
LJ_API int lj_lock_heartbeat_start(lj_lock_heartbeat_t **out, lj_lock_t *lock, lj_lock_lost_cb on_lost,
                                   void *payload, lj_error_t **err);
/* 1 once the lock is lost, and also as soon as the lease's end has passed without
 * a renewal that succeeded (a renewal still in flight, a store that hangs), which
 * may be before on_lost is called: stop the work the lock guards. 0 while the
 * lease runs. NULL: 1. */
LJ_API int lj_lock_heartbeat_lost(const lj_lock_heartbeat_t *heartbeat);
/* Renewals that succeeded, and failed renewals tried again, so far (0 for NULL). */
LJ_API uint64_t lj_lock_heartbeat_renewals(const lj_lock_heartbeat_t *heartbeat);
LJ_API uint64_t lj_lock_heartbeat_retries(const lj_lock_heartbeat_t *heartbeat);
/* Stop renewing (waits for a renewal in flight) and give the lock back, as last
 * renewed, to its lj_lock_t: release it after this. on_lost is never called once
 * this returns; a heartbeat destroyed before its thread found the lock lost stops
 * without calling it. NULL does nothing. */
LJ_API void lj_lock_heartbeat_destroy(lj_lock_heartbeat_t *heartbeat);

#ifdef __cplusplus
}
#endif

#endif
