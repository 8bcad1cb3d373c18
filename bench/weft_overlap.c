/* Overlap of communication and computation over the native API (seed 001).
 *
 * Rank 0 sends one message of SIZE bytes (default 80 MB) to rank 1 with
 * isend; rank 1 receives it with irecv. Between posting and waiting, the
 * sender, the receiver or both compute for C microseconds (a busy loop that
 * never enters the library). For each C:
 *
 *   t_comm   time of the transfer alone (C = 0), median
 *   t_total  time from posting to completion with compute, median
 *   overlap  (t_comm + C - t_total) / min(t_comm, C), clamped to [0, 1]:
 *            1 when the transfer hides entirely behind the computation.
 *
 * Times are taken on the computing side (on the receiver for "both").
 * Usage: weftrun -n 2 weft_overlap [--size BYTES] [--reps N] [--pin]
 * Prints CSV: mode,size,compute_us,t_comm_us,t_total_us,overlap. */
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"

enum { SENDER = 1, RECEIVER = 2, BOTH = 3 };
static const char *mode_name[] = {"", "sender", "receiver", "both"};

static void compute(double us)
{
    double end = bench_now_us() + us;
    while (bench_now_us() < end)
        ;
}

static void sync_ranks(weft_ctx_t *ctx, int peer)
{
    char b = 0;
    weft_request_t *r[2];
    CHECK(weft_sr_irecv(ctx, peer, 1, 1, &b, 1, &r[0]));
    CHECK(weft_sr_isend(ctx, peer, 1, 1, &b, 1, &r[1]));
    CHECK(weft_sr_waitall(ctx, 2, r, NULL));
}

/* One transfer; returns the time seen by this rank from posting to completion. */
static double one(weft_ctx_t *ctx, int me, char *buf, size_t size, int mode, double c_us)
{
    int peer = 1 - me;
    sync_ranks(ctx, peer);
    double t0 = bench_now_us();
    weft_request_t *req;
    if (me == 0)
        CHECK(weft_sr_isend(ctx, peer, 0, 7, buf, size, &req));
    else
        CHECK(weft_sr_irecv(ctx, peer, 0, 7, buf, size, &req));
    if ((me == 0 && (mode & SENDER)) || (me == 1 && (mode & RECEIVER)))
        compute(c_us);
    CHECK(weft_sr_wait(ctx, req, NULL));
    return bench_now_us() - t0;
}

static double median_of(weft_ctx_t *ctx, int me, char *buf, size_t size, int mode, double c_us,
                        int reps)
{
    double v[64];
    for (int i = 0; i < reps; i++)
        v[i] = one(ctx, me, buf, size, mode, c_us);
    return bench_median(v, reps);
}

int main(int argc, char **argv)
{
    size_t size = 80u << 20;
    int reps = 5;
    int pin = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = bench_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pin"))
            pin = 1;
        else {
            fprintf(stderr, "usage: weft_overlap [--size BYTES] [--reps N] [--pin]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 64)
        reps = 5;
    weft_ctx_t *ctx;
    CHECK(weft_init(NULL, &ctx));
    int me = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        if (me == 0)
            fprintf(stderr, "weft_overlap runs on exactly 2 ranks\n");
        weft_finalize(ctx);
        return 2;
    }
    if (pin)
        bench_pin_by_rank(me);
    char *buf = malloc(size);
    memset(buf, me, size);
    one(ctx, me, buf, size, 0, 0); /* warm up: pages touched, engine warm */
    double t_comm = median_of(ctx, me, buf, size, 0, 0, reps);
    /* Both ranks must agree on t_comm to sweep the same compute times. */
    double agreed = t_comm;
    weft_request_t *r[2];
    double other;
    CHECK(weft_sr_irecv(ctx, 1 - me, 1, 2, &other, sizeof other, &r[0]));
    CHECK(weft_sr_isend(ctx, 1 - me, 1, 2, &agreed, sizeof agreed, &r[1]));
    CHECK(weft_sr_waitall(ctx, 2, r, NULL));
    if (me == 1)
        t_comm = other; /* the sender's view decides the sweep */
    static const double fractions[] = {0.25, 0.5, 1.0, 2.0, 4.0};
    if (me == 1)
        printf("mode,size,compute_us,t_comm_us,t_total_us,overlap\n");
    for (int mode = SENDER; mode <= BOTH; mode++) {
        for (size_t f = 0; f < sizeof fractions / sizeof fractions[0]; f++) {
            double c_us = t_comm * fractions[f];
            double mine = median_of(ctx, me, buf, size, mode, c_us, reps);
            /* The computing side reports (the receiver for "both"). */
            int reporter = mode == SENDER ? 0 : 1;
            double t_total = mine;
            if (reporter == 0) {
                if (me == 0)
                    CHECK(weft_sr_isend(ctx, 1, 1, 3, &t_total, sizeof t_total, &r[0]));
                else
                    CHECK(weft_sr_irecv(ctx, 0, 1, 3, &t_total, sizeof t_total, &r[0]));
                CHECK(weft_sr_wait(ctx, r[0], NULL));
            }
            if (me == 1) {
                double ov = (t_comm + c_us - t_total) / (t_comm < c_us ? t_comm : c_us);
                ov = ov < 0 ? 0 : ov > 1 ? 1 : ov;
                printf("%s,%zu,%.0f,%.0f,%.0f,%.2f\n", mode_name[mode], size, c_us, t_comm, t_total,
                       ov);
                fflush(stdout);
            }
        }
    }
    free(buf);
    CHECK(weft_finalize(ctx));
    return 0;
}
