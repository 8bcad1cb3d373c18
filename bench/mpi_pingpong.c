/* mpi_pingpong: the plain-MPI twin of weft_pingpong.c (same sizes, iteration
 * counts, warm-up, window and medians), so weft can be compared with Open MPI
 * and MPICH on the same machine. Built by run_compare.sh with each MPI's own
 * compiler wrapper, never by CMake (weft builds without MPI).
 *
 *   mpirun -n 2 mpi_pingpong [--pin] [--quick] [--runs R] [--min S] [--max S] [--window W]
 *
 * latency_us: half round trip of MPI_Send/MPI_Recv-equivalent Isend+Wait /
 * Irecv+Wait; bandwidth_MBps: streaming window of W Isends, one ack; pingpong_MBps:
 * size / latency. See weft_pingpong.c for the details. */
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

static void send_wait(MPI_Comm c, int tag, const void *buf, size_t len)
{
    MPI_Request r;
    MPI_Isend(buf, (int)len, MPI_BYTE, peer, tag, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static void recv_wait(MPI_Comm c, int tag, void *buf, size_t len)
{
    MPI_Request r;
    MPI_Irecv(buf, (int)len, MPI_BYTE, peer, tag, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* The same zero-byte handshake as weft_pingpong (not MPI_Barrier, whose cost
 * and skew differ between implementations). */
static void handshake(void)
{
    if (rank == 0) {
        send_wait(ctrl, 0, NULL, 0);
        recv_wait(ctrl, 0, NULL, 0);
    } else {
        recv_wait(ctrl, 0, NULL, 0);
        send_wait(ctrl, 0, NULL, 0);
    }
}

static double run_latency(char *sbuf, char *rbuf, size_t len, long iters)
{
    handshake();
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            send_wait(data, TAG_PING, sbuf, len);
            recv_wait(data, TAG_PING, rbuf, len);
        } else {
            recv_wait(data, TAG_PING, rbuf, len);
            send_wait(data, TAG_PING, sbuf, len);
        }
    }
    return (bench_now_us() - t0) / (double)iters / 2.0;
}

static double run_bandwidth(char *sbuf, char *rbuf, size_t len, long iters, int window,
                            MPI_Request *reqs)
{
    char ack[4] = {0};
    handshake();
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf, (int)len, MPI_BYTE, peer, TAG_PING, data, &reqs[w]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            recv_wait(data, TAG_ACK, ack, sizeof ack);
        } else {
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf, (int)len, MPI_BYTE, peer, TAG_PING, data, &reqs[w]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            send_wait(data, TAG_ACK, ack, sizeof ack);
        }
    }
    double us = bench_now_us() - t0;
    return (double)len * (double)window * (double)iters / us;
}

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
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin] [--quick] [--runs R] [--min S] [--max S] [--window W]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 7)
        o.runs = 5;
    int cpu = bench_mpi_setup("mpi_pingpong", &o, &rank, &peer, &data, &ctrl);
    char *sbuf = malloc(o.max), *rbuf = malloc(o.max);
    MPI_Request *reqs = calloc((size_t)o.window, sizeof *reqs);
    double *lat = malloc(sizeof(double) * (size_t)o.runs);
    double *bw = malloc(sizeof(double) * (size_t)o.runs);
    if (!sbuf || !rbuf || !reqs || !lat || !bw) {
        fprintf(stderr, "mpi_pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 'a', o.max);
    memset(rbuf, 'b', o.max);
    long lat_max = o.quick ? 5000 : 20000, bw_max = o.quick ? 500 : 2000;
    double lat_bytes = o.quick ? 16e6 : 128e6, bw_bytes = o.quick ? 64e6 : 512e6;
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int n;
        MPI_Get_library_version(lib, &n);
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
        printf("# mpi_pingpong (%s): ranks pinned %s (rank 0 cpu %d); %d runs per size, median; "
               "bandwidth = streaming window of %d\n",
               lib, o.pin ? "yes" : "no", cpu, o.runs, o.window);
        printf("%-10s %12s %15s %14s\n", "size", "latency_us", "bandwidth_MBps", "pingpong_MBps");
        fflush(stdout);
    }
    for (size_t len = o.min; len <= o.max; len *= 2) {
        long li = iters_for(len, lat_max, lat_bytes, 4);
        long bi = iters_for((size_t)o.window * len, bw_max, bw_bytes, 2);
        run_latency(sbuf, rbuf, len, li / 10 + 1);
        for (int r = 0; r < o.runs; r++)
            lat[r] = run_latency(sbuf, rbuf, len, li);
        run_bandwidth(sbuf, rbuf, len, 1, o.window, reqs);
        for (int r = 0; r < o.runs; r++)
            bw[r] = run_bandwidth(sbuf, rbuf, len, bi, o.window, reqs);
        if (rank == 0) {
            double l = bench_median(lat, o.runs), b = bench_median(bw, o.runs);
            printf("%-10zu %12.3f %15.1f %14.1f\n", len, l, b, (double)len / l);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(lat);
    free(bw);
    MPI_Comm_free(&data);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
