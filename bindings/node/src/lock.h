/*
 * The addon's lock part (lock.c): judging a body with JavaScript callbacks, bodies,
 * execution state; what the store part takes from it to acquire.
 */
#ifndef LEASEJUDGE_NODE_LOCK_H
#define LEASEJUDGE_NODE_LOCK_H

#include "napi_util.h"

/* Defines the part's functions on exports; -1 after a thrown exception. */
int ljn_lock_init(napi_env env, napi_value exports);

/* --- judging with JavaScript callbacks (lock.c; store.c uses it for acquire) --------- */

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

#endif
