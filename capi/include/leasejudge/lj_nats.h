/* leasejudge C ABI: the nats part (included by leasejudge.h). */
#ifndef LEASEJUDGE_LJ_NATS_H
#define LEASEJUDGE_LJ_NATS_H

#include "leasejudge.h"

#endif
