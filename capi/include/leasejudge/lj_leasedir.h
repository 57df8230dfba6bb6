/* leasejudge C ABI: the leasedir part (included by leasejudge.h). */
#ifndef LEASEJUDGE_LJ_LEASEDIR_H
#define LEASEJUDGE_LJ_LEASEDIR_H

#include "leasejudge.h"

#endif
