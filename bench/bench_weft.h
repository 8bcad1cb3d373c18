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

/* A blocking send or receive, as two calls. */
static inline void bench_send_wait(weft_ctx_t *ctx, int peer, uint32_t comm, uint64_t tag,
                                   const void *buf, size_t len)
{
    weft_request_t *r;
    CHECK(weft_sr_isend(ctx, peer, comm, tag, buf, len, &r));
    CHECK(weft_sr_wait(ctx, r, NULL));
}

static inline void bench_recv_wait(weft_ctx_t *ctx, int peer, uint32_t comm, uint64_t tag,
                                   void *buf, size_t len)
{
    weft_request_t *r;
    CHECK(weft_sr_irecv(ctx, peer, comm, tag, buf, len, &r));
    CHECK(weft_sr_wait(ctx, r, NULL));
}

/* Two ranks leave together (to within one message), talking on comm. */
static inline void bench_handshake(weft_ctx_t *ctx, int peer, uint32_t comm)
{
    if (weft_rank(ctx) < peer) {
        bench_send_wait(ctx, peer, comm, 0, NULL, 0);
        bench_recv_wait(ctx, peer, comm, 0, NULL, 0);
    } else {
        bench_recv_wait(ctx, peer, comm, 0, NULL, 0);
        bench_send_wait(ctx, peer, comm, 0, NULL, 0);
    }
}

#endif
