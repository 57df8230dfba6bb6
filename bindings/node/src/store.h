/*
 * The addon's store part (store.c): stores (memory, file, NATS) as externals and their
 * operations; what the lock part (lock.c) acquires locks on and the hold part (hold.c)
 * waits on.
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

/* Defines the part's functions on exports; -1 after a thrown exception. */
int ljn_store_init(napi_env env, napi_value exports);

/* Destroy the store once closed and borrowed by nothing; free s once nothing points
 * at it. Call after dropping a borrow (s->locks--). */
void ljn_store_settle(ljn_store* s);
/* The open store an argument names; NULL after a TypeError (or an Error: the store
 * is closed). */
ljn_store* ljn_store_of(napi_env env, napi_value v);
/* The store, the key and (when value is not NULL) the value of args[0..2], after
 * checking that argc is at least need; 0, or -1 after a thrown exception. key and
 * value are initialised first, so the caller releases them either way. */
int ljn_store_args(napi_env env, napi_value* args, size_t argc, size_t need, ljn_store** s, ljn_text* key,
                   ljn_text* value);

#endif
