/* A first weft program: every rank passes a token around a ring, then ranks
 * 0 and 1 ping-pong to measure latency. Run it with `weftrun -n 4 ./ring`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <weft/weft.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

#define CHECKED(call)                                                                              \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_) {                                                                                 \
            fprintf(stderr, "%s: %s\n", #call, weft_strerror(rc_));                                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    weft_ctx_t *ctx;
    CHECKED(weft_init(NULL, &ctx));
    int rank = weft_rank(ctx), size = weft_size(ctx);
    weft_request_t *req;
    weft_status_t st;

    /* The ring: rank 0 starts, everyone else receives from anybody, adds one,
     * passes on. */
    long token = 0;
    if (rank == 0) {
        CHECKED(weft_sr_isend(ctx, (rank + 1) % size, 0, 1, &token, sizeof token, &req));
        CHECKED(weft_sr_wait(ctx, req, NULL));
    }
    CHECKED(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 0, 1, &token, sizeof token, &req));
    CHECKED(weft_sr_wait(ctx, req, &st));
    printf("rank %d of %d: token %ld from rank %d\n", rank, size, token, st.source);
    fflush(stdout);
    if (rank != 0) {
        token++;
        CHECKED(weft_sr_isend(ctx, (rank + 1) % size, 0, 1, &token, sizeof token, &req));
        CHECKED(weft_sr_wait(ctx, req, NULL));
    }

    /* Ping-pong between ranks 0 and 1. */
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank, iters = 100000;
        char byte = 0;
        double t0 = 0;
        for (int i = -1000; i < iters; i++) {
            if (i == 0)
                t0 = now_us();
            if (rank == 0) {
                CHECKED(weft_sr_isend(ctx, peer, 0, 2, &byte, 1, &req));
                CHECKED(weft_sr_wait(ctx, req, NULL));
                CHECKED(weft_sr_irecv(ctx, peer, 0, 2, &byte, 1, &req));
                CHECKED(weft_sr_wait(ctx, req, NULL));
            } else {
                CHECKED(weft_sr_irecv(ctx, peer, 0, 2, &byte, 1, &req));
                CHECKED(weft_sr_wait(ctx, req, NULL));
                CHECKED(weft_sr_isend(ctx, peer, 0, 2, &byte, 1, &req));
                CHECKED(weft_sr_wait(ctx, req, NULL));
            }
        }
        if (rank == 0)
            printf("ping-pong 0 <-> 1: %.3f us one-way (1 byte, %d round trips)\n",
                   (now_us() - t0) / iters / 2, iters);
    }
    CHECKED(weft_finalize(ctx));
    return 0;
}
