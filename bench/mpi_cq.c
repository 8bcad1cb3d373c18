/* mpi_cq: finding completions among N outstanding receives with
 * MPI_Testsome, the MPI side of weft_cq (which pops a completion queue
 * instead). Rank 1 posts N receives with distinct tags, rank 0 sends N 8-byte
 * messages to them in a shuffled order, rank 1 calls MPI_Testsome over the N
 * requests until every one completed. Time from the posted receives (and
 * the sender told) to the last completion, per completion. Built by
 * bench/run_chain.sh --cq and bench/weft-bench against weft, Open MPI and MPICH.
 *
 *   mpirun -n 2 mpi_cq [--pin] [--quick|--smoke] [--runs R] [--min N] [--max N]
 *
 * csv,testsome,<N>,us_per_completion,<median over R>. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "bench_mpi.h"

#define ROUND 8192

static int rank, peer;
static MPI_Comm comm, ctrl;
static uint64_t *vals;
static uint32_t *order;
static MPI_Request *reqs;
static int *idx;
static MPI_Status *sts; /* a real array: MPICH's header warns of MPI_STATUSES_IGNORE */

static double run(int n)
{
    int rounds = ROUND / n > 0 ? ROUND / n : 1;
    double us = 0;
    for (int r = 0; r < rounds; r++) {
        if (rank == 0) {
            bench_shuffle(order, (size_t)n, (uint64_t)r + 1);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, ctrl, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++)
                MPI_Send(&vals[i], 1, MPI_UINT64_T, 1, (int)order[i], comm);
            continue;
        }
        for (int i = 0; i < n; i++)
            MPI_Irecv(&vals[i], 1, MPI_UINT64_T, 0, i, comm, &reqs[i]);
        double t0 = bench_now_us();
        MPI_Send(NULL, 0, MPI_BYTE, 0, 0, ctrl);
        int left = n, out;
        while (left > 0) {
            MPI_Testsome(n, reqs, &out, idx, sts);
            if (out != MPI_UNDEFINED)
                left -= out;
        }
        us += bench_now_us() - t0;
    }
    MPI_Barrier(ctrl);
    return us / ((double)rounds * n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 5, .min = 1, .max = 4096, .window = 1};
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin] [--quick|--smoke] [--runs R] [--min N] [--max N]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 5)
        o.runs = o.smoke ? 1 : 3;
    if (o.max > ROUND || o.min < 1)
        o.max = ROUND, o.min = 1;
    bench_mpi_setup("mpi_cq", &o, &rank, &peer, &comm, &ctrl);
    vals = calloc(o.max, sizeof *vals);
    order = calloc(o.max, sizeof *order);
    reqs = calloc(o.max, sizeof *reqs);
    idx = calloc(o.max, sizeof *idx);
    sts = calloc(o.max, sizeof *sts);
    double *v = malloc(sizeof(double) * (size_t)o.runs);
    if (!vals || !order || !reqs || !idx || !sts || !v)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t n = o.min; n <= o.max; n *= 4) {
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        for (int r = 0; r < o.runs; r++)
            v[r] = run((int)n);
        if (rank == 1) {
            double m = bench_median(v, o.runs);
            printf("%5zu %9.3f\n", n, m);
            bench_csv("testsome", (double)n, "us_per_completion", m);
            fflush(stdout);
        }
    }
    free(vals);
    free(order);
    free(reqs);
    free(idx);
    free(sts);
    free(v);
    MPI_Comm_free(&comm);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
