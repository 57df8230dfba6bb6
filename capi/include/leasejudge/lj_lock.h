/* leasejudge C ABI: the lock part (included by leasejudge.h). */
#ifndef LEASEJUDGE_LJ_LOCK_H
#define LEASEJUDGE_LJ_LOCK_H

#include "leasejudge.h"

#endif
