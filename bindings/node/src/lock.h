/*
 * The addon's lock part (lock.c): judging a body with JavaScript callbacks, bodies,
 * execution state, and the lock's life on a store (acquire, open, renew, release, its
 * state); the handles the hold part (hold.c) waits for and keeps renewed.
 */
#ifndef LEASEJUDGE_NODE_LOCK_H
#define LEASEJUDGE_NODE_LOCK_H

#include "napi_util.h"
#include "store.h"

/* Defines the part's functions on exports; -1 after a thrown exception. */
int ljn_lock_init(napi_env env, napi_value exports);

/* --- judging with JavaScript callbacks (acquire and the hold part's wait use it) ---- */

/* What a judging call hands its C callbacks: the JS functions to call, valid during
 * the native call that made it. */
typedef struct ljn_judging {
  napi_env env;
  napi_value describe; /* a function, or NULL: the library's gcloud */
  napi_value here;     /* the LocalHost object (the alive callback's this) */
  napi_value alive;    /* a function, or NULL */
  lj_lock_here_t c_here;
  lj_lock_options_t opts;
  ljn_text host, machine;
} ljn_judging;

/* A holder from args[0..4]: kind (0 none, 1 process, 2 execution), leaseMs, then
 * the execution's projectId, region and name (kind 2); texts hold its strings. */
int ljn_holder_of(napi_env env, napi_value* args, ljn_text texts[3], lj_lock_holder_t* holder);

/* Fill j from the arguments describe, here?, host, machine kind, machine, alive
 * (args[0..5]); 0, or -1 with a TypeError thrown. */
int ljn_judging_of(napi_env env, napi_value* args, ljn_judging* j);
void ljn_judging_release(ljn_judging* j);

/* --- the lock's life ------------------------------------------------------------------ */

/* A heartbeat and the thread-safe function its loss goes through. Freed by that
 * function's finalizer, which Node runs once: after the heartbeat is stopped and the
 * function released, or at the environment's end (the heartbeat then stopped there
 * first, so its thread never calls a function that is gone). */
typedef struct ljn_beat {
  lj_lock_heartbeat_t* beat;   /* NULL once stopped */
  struct ljn_lock* lock;       /* the lock it renews; NULL once stopped */
  napi_threadsafe_function fn; /* on_lost to the JavaScript callback */
} ljn_beat;

/* A held lock's handle: it borrows its store (store->locks) until collected. */
typedef struct ljn_lock {
  lj_lock_t* lock;
  ljn_store* store;
  ljn_beat* beat; /* while a heartbeat runs */
} ljn_lock;

/* The lock an argument names; NULL after a TypeError. */
ljn_lock* ljn_lock_of(napi_env env, napi_value v);
/* The handle of a lock just acquired on s (its owner from now on); NULL after an
 * exception, the lock destroyed. */
napi_value ljn_lock_wrap(napi_env env, lj_lock_t* lock, ljn_store* s);
/* What an acquisition gave: { outcome, verdict, brokeAt, revision, lock }. */
napi_value ljn_acquisition_object(napi_env env, const lj_lock_acquisition_t* a, napi_value lock);
/* Stop l's heartbeat, if one runs (waits for a renewal in flight). */
void ljn_lock_stop_beat(ljn_lock* l);

#endif
