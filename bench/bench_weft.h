/* What the native-API benchmarks share: a check that ends the run with the
 * failing call and its status. */
#ifndef WEFT_BENCH_WEFT_H
#define WEFT_BENCH_WEFT_H

#include <stdio.h>
#include <stdlib.h>

#include "weft/weft.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != WEFT_OK) {                                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, weft_strerror(rc_));     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
