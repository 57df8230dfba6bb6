/*
 * The addon's hold part (hold.c): waiting for a lock on a worker thread (a promise,
 * cancelled through a flag the C wait asks), and the library's heartbeat reporting a
 * loss to JavaScript from its own thread.
 */
#ifndef LEASEJUDGE_NODE_HOLD_H
#define LEASEJUDGE_NODE_HOLD_H

#include "napi_util.h"

/* Defines the part's functions on exports; -1 after a thrown exception. */
int ljn_hold_init(napi_env env, napi_value exports);

#endif
