/* mpi_pingpong: two-rank point-to-point latency, bandwidth and bidirectional
 * bandwidth in plain MPI, the twin of weft_pingpong.c (same sizes, iteration
 * counts, warm-up, window and medians), built by bench/weft-bench against weft,
 * Open MPI and MPICH with each one's compiler wrapper, never by CMake (weft
 * builds without MPI).
 *
 *   mpirun -n 2 mpi_pingpong [--pin] [--quick|--smoke] [--runs R] [--min S] [--max S] [--step K]
 * [--window W]
 *
 * latency_us: half a round trip of Isend+Wait / Irecv+Wait;
 * bandwidth_MBps: a window of W Isends (W Irecvs pre-posted by the peer), then
 * a 4-byte ack, as OSU's osu_bw; bibw_MBps: both ranks send a window of W to
 * each other at once, as osu_bibw (bytes counted in both directions);
 * pingpong_MBps: size / latency. Every value is the median of R runs. The table
 * is for people; the csv lines (bench_csv) are for the runner. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

#define TAG_PING 1
#define TAG_ACK  2

static MPI_Comm data, ctrl;
static int rank, peer;

static double run_latency(char *sbuf, char *rbuf, size_t len, long iters)
{
    bench_mpi_handshake(ctrl, rank, peer);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            bench_mpi_send_wait(data, peer, TAG_PING, sbuf, len);
            bench_mpi_recv_wait(data, peer, TAG_PING, rbuf, len);
        } else {
            bench_mpi_recv_wait(data, peer, TAG_PING, rbuf, len);
            bench_mpi_send_wait(data, peer, TAG_PING, sbuf, len);
        }
    }
    return (bench_now_us() - t0) / (double)iters / 2.0;
}

static double run_bandwidth(char *sbuf, char *rbuf, size_t len, long iters, int window,
                            MPI_Request *reqs)
{
    char ack[4] = {0};
    bench_mpi_handshake(ctrl, rank, peer);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf, (int)len, MPI_BYTE, peer, TAG_PING, data, &reqs[w]);
            bench_waitall(window, reqs);
            bench_mpi_recv_wait(data, peer, TAG_ACK, ack, sizeof ack);
        } else {
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf, (int)len, MPI_BYTE, peer, TAG_PING, data, &reqs[w]);
            bench_waitall(window, reqs);
            bench_mpi_send_wait(data, peer, TAG_ACK, ack, sizeof ack);
        }
    }
    double us = bench_now_us() - t0;
    return (double)len * (double)window * (double)iters / us;
}

/* Both directions at once: each rank posts its W receives, then its W sends,
 * then waits for all 2W. Each iteration ends when this rank has both sent and
 * received its window, which paces the two ranks without an ack. */
static double run_bibw(char *sbuf, char *rbuf, size_t len, long iters, int window,
                       MPI_Request *reqs)
{
    bench_mpi_handshake(ctrl, rank, peer);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        for (int w = 0; w < window; w++)
            MPI_Irecv(rbuf, (int)len, MPI_BYTE, peer, TAG_PING, data, &reqs[w]);
        for (int w = 0; w < window; w++)
            MPI_Isend(sbuf, (int)len, MPI_BYTE, peer, TAG_PING, data, &reqs[window + w]);
        bench_waitall(2 * window, reqs);
    }
    bench_mpi_handshake(ctrl, rank, peer); /* the last window has arrived on both sides */
    double us = bench_now_us() - t0;
    return 2.0 * (double)len * (double)window * (double)iters / us;
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
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 7, .min = 1, .max = 64u << 20, .window = 16};
    if (bench_parse_opts(
            argc, argv, &o,
            "[--pin] [--quick|--smoke] [--runs R] [--min S] [--max S] [--step K] [--window W]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 7)
        o.runs = o.smoke ? 1 : 5;
    int cpu = bench_mpi_setup("mpi_pingpong", &o, &rank, &peer, &data, &ctrl);
    char *sbuf = malloc(o.max), *rbuf = malloc(o.max);
    MPI_Request *reqs = calloc(2 * (size_t)o.window, sizeof *reqs);
    double *lat = malloc(sizeof(double) * (size_t)o.runs);
    double *bw = malloc(sizeof(double) * (size_t)o.runs);
    double *bibw = malloc(sizeof(double) * (size_t)o.runs);
    if (!sbuf || !rbuf || !reqs || !lat || !bw || !bibw) {
        fprintf(stderr, "mpi_pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 'a', o.max);
    memset(rbuf, 'b', o.max);
    long lat_max = o.smoke ? 200 : o.quick ? 5000 : 20000;
    long bw_max = o.smoke ? 4 : o.quick ? 500 : 2000;
    double lat_bytes = o.smoke ? 1e6 : o.quick ? 16e6 : 128e6;
    double bw_bytes = o.smoke ? 4e6 : o.quick ? 64e6 : 512e6;
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_pingpong (%s): ranks pinned %s (rank 0 cpu %d); %d runs per size, median; "
               "bandwidth = streaming window of %d\n",
               lib, o.pin ? "yes" : "no", cpu, o.runs, o.window);
        printf("# %-8s %12s %15s %15s %14s\n", "size", "latency_us", "bandwidth_MBps", "bibw_MBps",
               "pingpong_MBps");
        fflush(stdout);
    }
    for (size_t len = o.min; len <= o.max; len = bench_next(len, &o)) {
        long li = iters_for(len, lat_max, lat_bytes, 4);
        long bi = iters_for((size_t)o.window * len, bw_max, bw_bytes, 2);
        run_latency(sbuf, rbuf, len, li / 10 + 1); /* warm-up */
        for (int r = 0; r < o.runs; r++)
            lat[r] = run_latency(sbuf, rbuf, len, li);
        run_bandwidth(sbuf, rbuf, len, 1, o.window, reqs);
        for (int r = 0; r < o.runs; r++)
            bw[r] = run_bandwidth(sbuf, rbuf, len, bi, o.window, reqs);
        run_bibw(sbuf, rbuf, len, 1, o.window, reqs);
        for (int r = 0; r < o.runs; r++)
            bibw[r] = run_bibw(sbuf, rbuf, len, bi, o.window, reqs);
        if (rank == 0) {
            double l = bench_median(lat, o.runs), b = bench_median(bw, o.runs);
            double bb = bench_median(bibw, o.runs);
            printf("# %-8zu %12.3f %15.1f %15.1f %14.1f\n", len, l, b, bb, (double)len / l);
            bench_csv("latency", (double)len, "latency_us", l);
            bench_csv("bandwidth", (double)len, "bandwidth_MBps", b);
            bench_csv("bibw", (double)len, "bibw_MBps", bb);
        }
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(lat);
    free(bw);
    free(bibw);
    MPI_Comm_free(&data);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
