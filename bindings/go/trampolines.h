// The C functions of trampolines.c that Go calls: each wires the library's callbacks
// to the exported Go functions of trampolines.go, with a cgo.Handle as the payload.
#ifndef LEASEJUDGE_GO_TRAMPOLINES_H
#define LEASEJUDGE_GO_TRAMPOLINES_H

#include <stdint.h>

#include "leasejudge.h"

// A store over the Go backend behind handle; the store's release deletes the handle
// (also when opening fails).
int lj_go_store_open(lj_store_t **out, uintptr_t handle, lj_error_t **err);

#endif
