/* mpi_msgrate: how many small messages per second one or several sender/receiver
 * pairs push through, in plain MPI (built by bench/weft-bench against weft,
 * Open MPI and MPICH).
 *
 *   mpirun -n 2P mpi_msgrate [--pin] [--quick|--smoke] [--runs R] [--min S] [--max S] [--window W]
 *
 * Ranks 0..P-1 send, rank r to rank r+P. Each iteration the sender posts a
 * window of W Isends (default 64) and waits for them; the receiver has posted W
 * Irecvs, waits, and answers with a zero-byte ack that starts the next window,
 * as OSU's osu_mbw_mr. Rate = P * W * iterations / the slowest pair's time, in
 * millions of messages per second.
 *
 * With 2 ranks it sweeps the size from --min to --max (default 8 B to 4 KiB)
 * and prints `msgrate` lines, then one `multipair` line (P = 1, 8 B). With more
 * ranks it prints only the `multipair` line for P pairs at --min bytes: the
 * runner starts it with 2 and 4 ranks to see whether pairs add up. Each value
 * is the median of R runs; iterations are calibrated so a run lasts about
 * 20 ms (smoke), 50 ms (quick) or 100 ms. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

#define TAG_DATA 1
#define TAG_ACK  2

typedef struct rate_loop {
    MPI_Comm comm;
    int rank, pairs, window;
    size_t len;
    char *buf;
    MPI_Request *reqs;
} rate_loop_t;

static double rate_iters(void *arg, long iters)
{
    rate_loop_t *l = arg;
    int sender = l->rank < l->pairs;
    int peer = sender ? l->rank + l->pairs : l->rank - l->pairs;
    MPI_Barrier(l->comm);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (sender) {
            for (int w = 0; w < l->window; w++)
                MPI_Isend(l->buf, (int)l->len, MPI_BYTE, peer, TAG_DATA, l->comm, &l->reqs[w]);
            bench_waitall(l->window, l->reqs);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, l->comm, MPI_STATUS_IGNORE);
        } else {
            for (int w = 0; w < l->window; w++)
                MPI_Irecv(l->buf, (int)l->len, MPI_BYTE, peer, TAG_DATA, l->comm, &l->reqs[w]);
            bench_waitall(l->window, l->reqs);
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, l->comm);
        }
    }
    return bench_now_us() - t0;
}

/* Median over R runs of the aggregate rate, in millions of messages per second. */
static double measure(rate_loop_t *l, const bench_opts_t *o, double *runs)
{
    double target = o->smoke ? 2e4 : o->quick ? 5e4 : 1e5;
    long iters = bench_mpi_iters(l->comm, rate_iters, l, o->smoke ? 2 : 10, target, 2, 100000);
    for (int r = 0; r < o->runs; r++) {
        double us = bench_mpi_max(l->comm, rate_iters(l, iters));
        runs[r] = (double)l->pairs * l->window * (double)iters / us;
    }
    return bench_median(runs, o->runs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 5, .min = 8, .max = 4096, .window = 64};
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin] [--quick|--smoke] [--runs R] [--min S] [--max S] [--window W]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 5)
        o.runs = o.smoke ? 1 : 3;
    rate_loop_t l = {.window = o.window};
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &l.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size % 2) {
        if (l.rank == 0)
            fprintf(stderr, "mpi_msgrate: needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    l.pairs = size / 2;
    MPI_Comm_dup(MPI_COMM_WORLD, &l.comm);
    int cpu = bench_pin_opts(l.rank, &o);
    l.buf = malloc(o.max);
    l.reqs = calloc((size_t)o.window, sizeof *l.reqs);
    double *runs = malloc(sizeof(double) * (size_t)o.runs);
    if (!l.buf || !l.reqs || !runs) {
        fprintf(stderr, "mpi_msgrate: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(l.buf, 'r', o.max);
    if (l.rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_msgrate (%s): %d pair(s), window %d; ranks pinned %s (rank 0 cpu %d); "
               "median of %d runs\n",
               lib, l.pairs, o.window, o.pin ? "yes" : "no", cpu, o.runs);
        fflush(stdout);
    }
    if (l.pairs == 1) {
        /* Sizes step by 2 (full) or by 8 (quick): 8, 64, 512, 4096. */
        size_t step = o.quick ? 8 : 2;
        for (size_t len = o.min; len <= o.max; len *= step) {
            l.len = len;
            double rate = measure(&l, &o, runs);
            if (l.rank == 0) {
                printf("# %zu B: %.3f Mmsg/s\n", len, rate);
                bench_csv("msgrate", (double)len, "rate_Mmsgs", rate);
            }
        }
    }
    l.len = o.min;
    double rate = measure(&l, &o, runs);
    if (l.rank == 0) {
        printf("# %d pair(s), %zu B: %.3f Mmsg/s\n", l.pairs, l.len, rate);
        bench_csv("multipair", l.pairs, "rate_Mmsgs", rate);
    }
    free(l.buf);
    free(l.reqs);
    free(runs);
    MPI_Comm_free(&l.comm);
    MPI_Finalize();
    return 0;
}
