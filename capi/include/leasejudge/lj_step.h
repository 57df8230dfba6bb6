/* leasejudge C ABI: the step part (included by leasejudge.h). */
#ifndef LEASEJUDGE_LJ_STEP_H
#define LEASEJUDGE_LJ_STEP_H

#include "leasejudge.h"

#endif
