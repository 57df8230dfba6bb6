/* leasejudge C ABI: the store part (included by leasejudge.h). */
#ifndef LEASEJUDGE_LJ_STORE_H
#define LEASEJUDGE_LJ_STORE_H

#include "leasejudge.h"

#endif
