/* weft's additions to OpenSHMEM (none yet beyond shmem.h): included by
 * programs that test for shmemx.h, as other OpenSHMEMs provide it. */
#ifndef WEFT_SHMEMX_H
#define WEFT_SHMEMX_H
#include "shmem.h"
#endif
