/*
 * leasejudge C ABI: the step watch (included by leasejudge.h).
 *
 * A step watch keeps a node's steps clean as a service: it starts with the seed's
 * EndStaleAtStart (lj_sweep_end_stale_at_start, with its retries), then judges each
 * key of the node as it changes (the NATS store by a KV watch on "<node>.>", the file
 * and memory stores by polling), and runs the seed's EndStaleRound every interval.
 *
 * Its rules:
 *   - Each key is judged as a sweep judges it (the rules of lj_sweep_options_t, rules), and
 *     each end or delete lands only at the revision read: a key moved since is
 *     skipped and counted, never overwritten. A write whose acknowledgement never
 *     came is counted and never sent again; the key is read anew at its next change
 *     or round.
 *   - The stop callback is asked between store calls: a run stops before its next
 *     write, and every write in flight is waited for.
 *   - A lost store (a failed watch or sweep) is logged through the sweep options' log
 *     and retried with a backoff doubling up to backoff_max_ms; once the watch is open
 *     again a whole sweep reads what the gap may have hidden.
 *   - Its figures (lj_step_watch_figure, lj_step_watch_judged) may be read from any
 *     thread while it runs.
 */
#ifndef LEASEJUDGE_LJ_WATCH_H
#define LEASEJUDGE_LJ_WATCH_H

#include "leasejudge/lj_step.h"
#include "leasejudge/lj_store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lj_step_watch_t lj_step_watch_t;

#define LJ_STEP_WATCH_OPTIONS_VERSION 1
typedef struct lj_step_watch_options_t {
  uint32_t version;
  /* The rules, the callbacks (log, on_key, owner_state) and their payload, the start's
   * retries and the write window, as for a sweep; they live during the run. NULL:
   * the defaults. A callback's non-zero return stops the run (LJ_EUSER). */
  const lj_sweep_options_t *sweep;
  int64_t interval_ms;    /* a whole sweep (a round) every interval: default 60000; > 0 */
  int64_t poll_ms;        /* a store with no watch of its own: a scan per poll: default 1000; > 0 */
  int64_t backoff_max_ms; /* the longest wait after a failure (the first is 500 ms): default 30000; >= 500 */
  /* Asked between store calls and every 100 ms while nothing happens, also from
   * another thread while the start waits to retry (never two calls at once; no call
   * after it said stop): non-zero stops the run (LJ_OK). NULL: only a callback of
   * sweep stops it. */
  int (*stop)(void *payload);
  void *payload; /* handed to stop */
} lj_step_watch_options_t;
#define LJ_STEP_WATCH_OPTIONS_INIT {LJ_STEP_WATCH_OPTIONS_VERSION, NULL, 60000, 1000, 30000, NULL, NULL}
LJ_API int lj_step_watch_options_init(lj_step_watch_options_t *opts, uint32_t version);

/* A watch of node's steps (node: non-empty, no '.'); before_ns as in lj_step_rules_t
 * (LJ_TIME_DEFAULT: the before of the run's sweep options, rules.before_ns, as each
 * sweep resolves it: by default self_pid's start). The caller owns
 * *out (lj_step_watch_destroy). LJ_EINVAL for a NULL out or a bad node. */
LJ_API int lj_step_watch_create(lj_step_watch_t **out, const char *node, size_t node_len, int64_t before_ns,
                                lj_error_t **err);

/* Watch through store until stopped: LJ_OK when opts->stop said so, LJ_EUSER when a
 * callback of the sweep options did. The first run of a watch starts with
 * EndStaleAtStart; a later one (the store opened again, as after SIGHUP) with a round.
 * Failures of the store never end a run (they are logged and retried). LJ_EINVAL for
 * a NULL watch or store and options out of range; LJ_EVERSION for an unknown version.
 * One run of a watch at a time. */
LJ_API int lj_step_watch_run(lj_step_watch_t *watch, lj_store_t *store, const lj_step_watch_options_t *opts,
                             lj_error_t **err);

/* What a watch did, read at any time from any thread. Numbers never change. */
typedef enum lj_step_watch_figure_t {
  LJ_WATCH_SWEEPS = 0,          /* whole sweeps: the start's, the rounds, the reads after a gap */
  LJ_WATCH_ROUNDS = 1,          /* of those, the periodic rounds */
  LJ_WATCH_CHANGES = 2,         /* changes of keys the watch saw */
  LJ_WATCH_ENDS = 3,            /* steps ended (rewritten as failed) */
  LJ_WATCH_DELETES = 4,         /* asks deleted */
  LJ_WATCH_CHANGED = 5,         /* ends and deletes skipped: the key moved since it was read */
  LJ_WATCH_UNKNOWN = 6,         /* ends and deletes whose acknowledgement never came */
  LJ_WATCH_STORE_ERRORS = 7,    /* failed store calls: a watch, a sweep's read, a write */
  LJ_WATCH_STORE_TIMEOUTS = 8,  /* waits on the store past its patience, and the unknown writes */
  LJ_WATCH_RECONNECTS = 9,      /* watches opened again after a failure */
  LJ_WATCH_LAST_SWEEP_NS = 10,  /* the last whole sweep's duration */
  LJ_WATCH_LAST_SWEEP_UNIX_NS = 11, /* when it ended, ns since the Unix epoch; 0: none yet */
  LJ_WATCH_LAG_NS = 12,         /* the last change's age when it was judged */
  /* When the last whole sweep that failed nothing (every key read, every write's
   * outcome known) ended, ns since the Unix epoch; 0: none yet. A service is ready
   * once it is not 0. */
  LJ_WATCH_LAST_CLEAN_SWEEP_UNIX_NS = 13
} lj_step_watch_figure_t;
/* A figure; 0 for a NULL watch or a number that names none. */
LJ_API uint64_t lj_step_watch_figure(const lj_step_watch_t *watch, int figure);
/* Keys judged with reason (lj_step_reason_t), in sweeps and as they changed; 0 for a
 * NULL watch or a number that names none. */
LJ_API uint64_t lj_step_watch_judged(const lj_step_watch_t *watch, int reason);

/* NULL is a no-op. Not while a run is on. */
LJ_API void lj_step_watch_destroy(lj_step_watch_t *watch);

#ifdef __cplusplus
}
#endif

#endif
