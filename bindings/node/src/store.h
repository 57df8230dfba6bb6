/*
 * The addon's store part (store.c): stores (memory, file, NATS) as externals, their
 * operations, and the lock's life on them; the handles the hold part (hold.c) waits
 * for and keeps renewed.
 *
 * A store is closed by close() or when its JavaScript object is collected, but
 * lj_store_destroy runs only once no lock handle (nor a wait in flight) borrows it
 * any more: a held lock keeps its store alive.
 */
#ifndef LEASEJUDGE_NODE_STORE_H
#define LEASEJUDGE_NODE_STORE_H

#include "napi_util.h"

typedef struct ljn_store {
  lj_store_t* store; /* NULL once destroyed */
  bool handle;       /* its JS object is not collected yet */
  int locks;         /* lock handles and waits in flight that borrow it */
  bool closed;
} ljn_store;

/* A heartbeat and the thread-safe function its loss goes through. Freed by that
 * function's finalizer, which Node runs once: after the heartbeat is stopped and the
 * function released, or at the environment's end (the heartbeat then stopped there
 * first, so its thread never calls a function that is gone). */
typedef struct ljn_beat {
  lj_lock_heartbeat_t* beat;   /* NULL once stopped */
  struct ljn_lock* lock;       /* the lock it renews; NULL once stopped */
  napi_threadsafe_function fn; /* on_lost to the JavaScript callback */
} ljn_beat;

typedef struct ljn_lock {
  lj_lock_t* lock;
  ljn_store* store;
  ljn_beat* beat; /* while a heartbeat runs */
} ljn_lock;

/* Defines the part's functions on exports; -1 after a thrown exception. */
int ljn_store_init(napi_env env, napi_value exports);

/* Destroy the store once closed and borrowed by nothing; free s once nothing points
 * at it. Call after dropping a borrow (s->locks--). */
void ljn_store_settle(ljn_store* s);
/* The open store (or lock) an argument names; NULL after a TypeError (or an Error:
 * the store is closed). */
ljn_store* ljn_store_of(napi_env env, napi_value v);
ljn_lock* ljn_lock_of(napi_env env, napi_value v);
/* The handle of a lock just acquired on s (its owner from now on); NULL after an
 * exception, the lock destroyed. */
napi_value ljn_lock_wrap(napi_env env, lj_lock_t* lock, ljn_store* s);
/* What an acquisition gave: { outcome, verdict, brokeAt, revision, lock }. */
napi_value ljn_acquisition_object(napi_env env, const lj_lock_acquisition_t* a, napi_value lock);
/* Stop l's heartbeat, if one runs (waits for a renewal in flight). */
void ljn_lock_stop_beat(ljn_lock* l);

#endif
