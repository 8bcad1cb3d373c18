/* weft_pingpong: point-to-point latency and bandwidth between ranks 0 and 1 over
 * the native weft API, 1 B .. 64 MiB in powers of two.
 *
 *   weftrun -n 2 weft_pingpong [--pin] [--quick] [--runs R] [--min S] [--max S] [--step K]
 * [--window W]
 *
 * latency_us    half the round-trip time of a blocking ping-pong (isend + wait,
 *               irecv + wait on each side), as in OSU osu_latency.
 * bandwidth_MBps streaming bandwidth, as in OSU osu_bw: rank 0 starts a window of
 *               W (default 16) isends of the same buffer, rank 1 W irecvs into one
 *               buffer, then rank 1 answers with a 4-byte ack; bytes = W * size per
 *               window. MB = 10^6 bytes.
 * pingpong_MBps size / latency, the bandwidth a strict ping-pong sees.
 *
 * Each value is the median of R runs (default 7, 5 with --quick); each run is a
 * number of iterations scaled with the size, after a warm-up run. A zero-byte
 * handshake on its own communicator separates the runs. The plain-MPI twin is
 * mpi_pingpong.c: keep the two measuring the same thing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"
#include "weft/weft.h"

#define COMM_DATA 0u
#define COMM_CTRL 1u
#define TAG_PING  1u
#define TAG_ACK   2u

static weft_ctx_t *ctx;
static int rank, peer;

/* One-way latency in us over iters round trips. */
static double run_latency(char *sbuf, char *rbuf, size_t len, long iters)
{
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            bench_send_wait(ctx, peer, COMM_DATA, TAG_PING, sbuf, len);
            bench_recv_wait(ctx, peer, COMM_DATA, TAG_PING, rbuf, len);
        } else {
            bench_recv_wait(ctx, peer, COMM_DATA, TAG_PING, rbuf, len);
            bench_send_wait(ctx, peer, COMM_DATA, TAG_PING, sbuf, len);
        }
    }
    return (bench_now_us() - t0) / (double)iters / 2.0;
}

/* Streaming bandwidth in MB/s over iters windows. */
static double run_bandwidth(char *sbuf, char *rbuf, size_t len, long iters, int window,
                            weft_request_t **reqs)
{
    char ack[4] = {0};
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                CHECK(weft_sr_isend(ctx, peer, COMM_DATA, TAG_PING, sbuf, len, &reqs[w]));
            CHECK(weft_sr_waitall(ctx, window, reqs, NULL));
            bench_recv_wait(ctx, peer, COMM_DATA, TAG_ACK, ack, sizeof ack);
        } else {
            for (int w = 0; w < window; w++)
                CHECK(weft_sr_irecv(ctx, peer, COMM_DATA, TAG_PING, rbuf, len, &reqs[w]));
            CHECK(weft_sr_waitall(ctx, window, reqs, NULL));
            bench_send_wait(ctx, peer, COMM_DATA, TAG_ACK, ack, sizeof ack);
        }
    }
    double us = bench_now_us() - t0;
    return (double)len * (double)window * (double)iters / us; /* bytes/us = MB/s */
}

/* Iterations per run: enough round trips for small sizes, about a fixed
 * number of bytes for large ones. */
static long iters_for(size_t len, long max_iters, double budget_bytes, long min_iters)
{
    double n = budget_bytes / (double)len;
    if (n > (double)max_iters)
        return max_iters;
    return n < (double)min_iters ? min_iters : (long)n;
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.runs = 7, .min = 1, .max = 64u << 20, .window = 16};
    if (bench_parse_opts(
            argc, argv, &o,
            "[--pin] [--quick|--smoke] [--runs R] [--min S] [--max S] [--step K] [--window W]"))
        return 2;
    if (o.quick && o.runs == 7)
        o.runs = o.smoke ? 1 : 5;
    CHECK(weft_init(NULL, &ctx));
    rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        if (rank == 0)
            fprintf(stderr, "weft_pingpong: needs exactly 2 ranks (weftrun -n 2)\n");
        weft_finalize(ctx);
        return 2;
    }
    peer = 1 - rank;
    int cpu = bench_pin_opts(rank, &o);
    char *sbuf = malloc(o.max), *rbuf = malloc(o.max);
    weft_request_t **reqs = calloc((size_t)o.window, sizeof *reqs);
    double *lat = malloc(sizeof(double) * (size_t)o.runs);
    double *bw = malloc(sizeof(double) * (size_t)o.runs);
    if (!sbuf || !rbuf || !reqs || !lat || !bw) {
        fprintf(stderr, "weft_pingpong: out of memory\n");
        return 1;
    }
    memset(sbuf, 'a', o.max);
    memset(rbuf, 'b', o.max);
    long lat_max = o.smoke ? 200 : o.quick ? 5000 : 20000;
    long bw_max = o.smoke ? 4 : o.quick ? 500 : 2000;
    double lat_bytes = o.smoke ? 1e6 : o.quick ? 16e6 : 128e6;
    double bw_bytes = o.smoke ? 4e6 : o.quick ? 64e6 : 512e6;
    if (rank == 0) {
        printf("# weft_pingpong: ranks pinned %s (rank 0 cpu %d); %d runs per size, median; "
               "bandwidth = streaming window of %d\n",
               o.pin ? "yes" : "no", cpu, o.runs, o.window);
        printf("%-10s %12s %15s %14s\n", "size", "latency_us", "bandwidth_MBps", "pingpong_MBps");
        fflush(stdout);
    }
    for (size_t len = o.min; len <= o.max; len = bench_next(len, &o)) {
        long li = iters_for(len, lat_max, lat_bytes, 4);
        long bi = iters_for((size_t)o.window * len, bw_max, bw_bytes, 2);
        run_latency(sbuf, rbuf, len, li / 10 + 1); /* warm-up */
        for (int r = 0; r < o.runs; r++)
            lat[r] = run_latency(sbuf, rbuf, len, li);
        run_bandwidth(sbuf, rbuf, len, 1, o.window, reqs); /* warm-up */
        for (int r = 0; r < o.runs; r++)
            bw[r] = run_bandwidth(sbuf, rbuf, len, bi, o.window, reqs);
        if (rank == 0) {
            double l = bench_median(lat, o.runs), b = bench_median(bw, o.runs);
            printf("%-10zu %12.3f %15.1f %14.1f\n", len, l, b, (double)len / l);
            bench_csv("latency", (double)len, "latency_us", l);
            bench_csv("bandwidth", (double)len, "bandwidth_MBps", b);
        }
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(lat);
    free(bw);
    CHECK(weft_finalize(ctx));
    return 0;
}
