/*
 * The addon's step part (step.c): the step plan over JSON lines.
 */
#ifndef LEASEJUDGE_NODE_STEP_H
#define LEASEJUDGE_NODE_STEP_H

#include "napi_util.h"

/* Defines the part's functions on exports; -1 after a thrown exception. */
int ljn_step_init(napi_env env, napi_value exports);

#endif
