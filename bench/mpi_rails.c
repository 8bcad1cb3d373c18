/* mpi_rails: streaming bandwidth of one message size between ranks 0 and 1 in
 * plain MPI, the twin of weft_rails.c (same window, run length, warm-up check
 * and median), so that bench/run_rails.sh can measure weft's MPI and Open
 * MPI's tcp path over the same shaped links. Built by bench/run_rails.sh with
 * each MPI's compiler wrapper, never by CMake (weft builds without MPI).
 *
 *   mpirun -n 2 mpi_rails [--size S] [--window W] [--runs R] [--quick] [--pin]
 *
 * Rank 0 starts W Isends of the same S-byte buffer (default 4 MiB, W 8), rank
 * 1 has W Irecvs posted into one buffer, then answers with a 4-byte ack, as
 * osu_bw; a run is as many windows as make about 256 MiB (64 MiB with
 * --quick), after a warm-up window whose data rank 1 checks byte for byte.
 * Prints the median of R runs (default 5) and the range, in MB/s (10^6
 * bytes), in the same line as weft_rails, and one csv line (bench_csv). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

#define TAG_DATA 1
#define TAG_ACK  2

static MPI_Comm data, ctrl;
static int rank, peer;

static double run(char *sbuf, char *rbuf, size_t len, long windows, int window, MPI_Request *reqs)
{
    char ack[4] = {0};
    bench_mpi_handshake(ctrl, rank, peer);
    double t0 = bench_now_us();
    for (long i = 0; i < windows; i++) {
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf, (int)len, MPI_BYTE, peer, TAG_DATA, data, &reqs[w]);
            bench_waitall(window, reqs);
            bench_mpi_recv_wait(ctrl, peer, TAG_ACK, ack, sizeof ack);
        } else {
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf, (int)len, MPI_BYTE, peer, TAG_DATA, data, &reqs[w]);
            bench_waitall(window, reqs);
            bench_mpi_send_wait(ctrl, peer, TAG_ACK, ack, sizeof ack);
        }
    }
    return (double)len * (double)window * (double)windows / (bench_now_us() - t0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 5, .min = 1, .max = 1, .window = 8, .msg_size = 4u << 20};
    if (bench_parse_opts(argc, argv, &o, "[--size S] [--window W] [--runs R] [--quick] [--pin]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    bench_mpi_setup("mpi_rails", &o, &rank, &peer, &data, &ctrl);
    size_t len = o.msg_size;
    char *sbuf = malloc(len), *rbuf = malloc(len);
    MPI_Request *reqs = calloc((size_t)o.window, sizeof *reqs);
    double *bw = calloc((size_t)o.runs, sizeof *bw);
    if (!sbuf || !rbuf || !reqs || !bw) {
        fprintf(stderr, "mpi_rails: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < len; i++)
        sbuf[i] = (char)(i * 7 + i / 4096);
    memset(rbuf, 0, len);
    run(sbuf, rbuf, len, 1, o.window, reqs); /* warm-up */
    if (rank == 1 && memcmp(sbuf, rbuf, len) != 0) {
        fprintf(stderr, "mpi_rails: the data received differs from the data sent\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double budget = o.quick ? 64.0 * 1048576 : 256.0 * 1048576;
    long windows = (long)(budget / ((double)len * o.window));
    if (windows < 2)
        windows = 2;
    for (int r = 0; r < o.runs; r++)
        bw[r] = run(sbuf, rbuf, len, windows, o.window, reqs);
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        double lo = bw[0], hi = bw[0];
        for (int r = 1; r < o.runs; r++) {
            lo = bw[r] < lo ? bw[r] : lo;
            hi = bw[r] > hi ? bw[r] : hi;
        }
        double med = bench_median(bw, o.runs);
        printf("# mpi_rails (%s): size %zu window %d, %ld windows per run, %d runs\n", lib, len,
               o.window, windows, o.runs);
        printf("bandwidth_MBps %.1f min %.1f max %.1f\n", med, lo, hi);
        bench_csv("rails", (double)len, "bandwidth_MBps", med);
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(bw);
    MPI_Comm_free(&data);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
