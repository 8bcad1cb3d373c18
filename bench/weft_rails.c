/* weft_rails: streaming bandwidth of one message size between ranks 0 and 1,
 * the measurement behind multi-rail (bench/run_rails.sh runs it over one rail,
 * the other, and both with split_balance, in one cluster).
 *
 *   weftrun -n 2 weft_rails [--size S] [--window W] [--runs R] [--quick] [--pin]
 *
 * As osu_bw (and weft_pingpong's bandwidth column): rank 0 starts W isends of
 * the same S-byte buffer (default 4 MiB, W 8), rank 1 has W irecvs posted into
 * one buffer, then answers with a 4-byte ack; a run is as many windows as make
 * about 256 MiB (64 MiB with --quick), after a warm-up window whose data rank 1
 * checks byte for byte (a split message must land whole, in place). Prints the
 * median of R runs (default 5) and the range, in MB/s (10^6 bytes), and one
 * csv line (bench_csv) with the median. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"
#include "weft/weft.h"

#define COMM_DATA 0u
#define COMM_CTRL 1u
#define TAG_DATA  1u
#define TAG_ACK   2u

static weft_ctx_t *ctx;
static int rank, peer;

static double run(char *sbuf, char *rbuf, size_t len, long windows, int window,
                  weft_request_t **reqs)
{
    char ack[4] = {0};
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    for (long i = 0; i < windows; i++) {
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                CHECK(weft_sr_isend(ctx, peer, COMM_DATA, TAG_DATA, sbuf, len, &reqs[w]));
            CHECK(weft_sr_waitall(ctx, window, reqs, NULL));
            bench_recv_wait(ctx, peer, COMM_CTRL, TAG_ACK, ack, sizeof ack);
        } else {
            for (int w = 0; w < window; w++)
                CHECK(weft_sr_irecv(ctx, peer, COMM_DATA, TAG_DATA, rbuf, len, &reqs[w]));
            CHECK(weft_sr_waitall(ctx, window, reqs, NULL));
            bench_send_wait(ctx, peer, COMM_CTRL, TAG_ACK, ack, sizeof ack);
        }
    }
    return (double)len * (double)window * (double)windows / (bench_now_us() - t0);
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.runs = 5, .min = 1, .max = 1, .window = 8, .msg_size = 4u << 20};
    if (bench_parse_opts(argc, argv, &o, "[--size S] [--window W] [--runs R] [--quick] [--pin]"))
        return 2;
    CHECK(weft_init(NULL, &ctx));
    rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        if (rank == 0)
            fprintf(stderr, "weft_rails: needs exactly 2 ranks (weftrun -n 2)\n");
        weft_finalize(ctx);
        return 2;
    }
    peer = 1 - rank;
    if (o.pin)
        bench_pin_by_rank(rank);
    size_t len = o.msg_size;
    char *sbuf = malloc(len), *rbuf = malloc(len);
    weft_request_t **reqs = calloc((size_t)o.window, sizeof *reqs);
    double *bw = calloc((size_t)o.runs, sizeof *bw);
    if (!sbuf || !rbuf || !reqs || !bw) {
        fprintf(stderr, "weft_rails: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < len; i++)
        sbuf[i] = (char)(i * 7 + i / 4096);
    memset(rbuf, 0, len);
    run(sbuf, rbuf, len, 1, o.window, reqs); /* warm-up */
    if (rank == 1 && memcmp(sbuf, rbuf, len) != 0) {
        fprintf(stderr, "weft_rails: the data received differs from the data sent\n");
        return 1;
    }
    double budget = o.quick ? 64.0 * 1048576 : 256.0 * 1048576;
    long windows = (long)(budget / ((double)len * o.window));
    if (windows < 2)
        windows = 2;
    for (int r = 0; r < o.runs; r++)
        bw[r] = run(sbuf, rbuf, len, windows, o.window, reqs);
    if (rank == 0) {
        double lo = bw[0], hi = bw[0];
        for (int r = 1; r < o.runs; r++) {
            lo = bw[r] < lo ? bw[r] : lo;
            hi = bw[r] > hi ? bw[r] : hi;
        }
        double med = bench_median(bw, o.runs);
        printf("# weft_rails: size %zu window %d, %ld windows per run, %d runs\n", len, o.window,
               windows, o.runs);
        printf("bandwidth_MBps %.1f min %.1f max %.1f\n", med, lo, hi);
        bench_csv("rails", (double)len, "bandwidth_MBps", med);
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(bw);
    CHECK(weft_finalize(ctx));
    return 0;
}
