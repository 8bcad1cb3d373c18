/* mpi_flood: N small sends outstanding at once, all of them unexpected at the
 * receiver, in plain MPI (built by bench/weft-bench against weft, Open MPI and
 * MPICH).
 *
 *   mpirun -n 2 mpi_flood [--pin] [--quick|--smoke] [--runs R] [--min N] [--max N] [--size S]
 *
 * Rank 0 posts N MPI_Isends of S bytes (default 8) to rank 1, then tells rank
 * 1 on another communicator that they are all posted, then waits for them.
 * Rank 1 waits for that word first, so the flood arrives before any receive
 * is posted; then it posts the N receives and waits for them. Time: from a
 * barrier to the later of the two ranks' ends, per message. Once the eager
 * credits are spent, an implementation's sends take a slower path
 * (rendezvous): the time per message must stay flat as N grows, or many
 * outstanding sends cost more than their number. N doubles from --min
 * (default 10^4) to --max (10^6 full, 10^5 quick, 10^4 smoke). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

#define TAG_DATA 1

static double flood(MPI_Comm data, MPI_Comm ctrl, int rank, int peer, long n, char *buf, size_t len,
                    MPI_Request *reqs)
{
    MPI_Barrier(ctrl);
    double t0 = bench_now_us();
    if (rank == 0) {
        for (long i = 0; i < n; i++)
            MPI_Isend(buf, (int)len, MPI_BYTE, peer, TAG_DATA, data, &reqs[i]);
        MPI_Send(NULL, 0, MPI_BYTE, peer, 0, ctrl);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, ctrl, MPI_STATUS_IGNORE);
        for (long i = 0; i < n; i++)
            MPI_Irecv(buf + (size_t)i * len, (int)len, MPI_BYTE, peer, TAG_DATA, data, &reqs[i]);
    }
    /* Waitall takes an int count: wait in slices. */
    for (long i = 0; i < n; i += 1 << 20) {
        long k = n - i < (1 << 20) ? n - i : 1 << 20;
        MPI_Waitall((int)k, reqs + i, MPI_STATUSES_IGNORE);
    }
    return bench_mpi_max(ctrl, bench_now_us() - t0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 3, .min = 10000, .max = 1000000, .window = 1, .msg_size = 8};
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin] [--quick|--smoke] [--runs R] [--min N] [--max N] [--size S]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.smoke && o.max == 1000000)
        o.max = 10000;
    else if (o.quick && o.max == 1000000)
        o.max = 100000;
    if (o.smoke)
        o.runs = 1;
    int rank, peer;
    MPI_Comm data, ctrl;
    int cpu = bench_mpi_setup("mpi_flood", &o, &rank, &peer, &data, &ctrl);
    size_t len = o.msg_size;
    char *buf = malloc(len * (rank == 0 ? 1 : o.max) + 1);
    MPI_Request *reqs = malloc(sizeof *reqs * o.max);
    double *runs = malloc(sizeof(double) * (size_t)o.runs);
    if (!buf || !reqs || !runs) {
        fprintf(stderr, "mpi_flood: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'f', len * (rank == 0 ? 1 : o.max) + 1);
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_flood (%s): %zu B messages, all unexpected; ranks pinned %s (rank 0 cpu "
               "%d); median of %d runs\n",
               lib, len, o.pin ? "yes" : "no", cpu, o.runs);
        fflush(stdout);
    }
    for (size_t n = o.min; n <= o.max; n = bench_next(n, &o)) {
        for (int r = 0; r < o.runs; r++)
            runs[r] = flood(data, ctrl, rank, peer, (long)n, buf, len, reqs) / (double)n;
        double us = bench_median(runs, o.runs);
        if (rank == 0) {
            printf("# N = %zu: %.3f us per message, %.2f s in all\n", n, us, us * (double)n / 1e6);
            bench_csv("flood", (double)n, "us_per_msg", us);
            fflush(stdout);
        }
    }
    free(buf);
    free(reqs);
    free(runs);
    MPI_Comm_free(&data);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
