/* mpi_coll: latency of MPI_Allreduce and MPI_Bcast over all ranks, in plain MPI
 * (built by bench/weft-bench against weft, Open MPI and MPICH).
 *
 *   mpirun -n P mpi_coll [--pin] [--quick|--smoke] [--runs R] [--min S] [--max S]
 *
 * For each size from --min to --max bytes (doubling; by 8 with --quick;
 * default 8 B to 1 MiB): allreduce sums size/8 doubles; bcast sends size
 * bytes from a root that changes every call (so consecutive broadcasts cannot
 * pipeline behind one root, as in OSU's osu_bcast with root rotation). A run is
 * a loop of back-to-back calls; latency_us is the slowest rank's time per call,
 * median of R runs. Iterations are calibrated so a run lasts about 5 ms
 * (smoke), 20 ms (quick) or 50 ms. With more than 2 ranks the results are
 * named allreduce_np<P> and bcast_np<P> (bench/weft-bench runs 4 ranks on 2
 * cores, oversubscribed: how long a waiting rank holds a core the others need). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

typedef struct coll_loop {
    MPI_Comm comm;
    int size;
    int bcast; /* 0: allreduce, 1: bcast */
    size_t len;
    double *in, *out;
} coll_loop_t;

static double coll_iters(void *arg, long iters)
{
    coll_loop_t *l = arg;
    int count = (int)(l->len / sizeof(double));
    MPI_Barrier(l->comm);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (l->bcast)
            MPI_Bcast(l->out, (int)l->len, MPI_BYTE, (int)(i % l->size), l->comm);
        else
            MPI_Allreduce(l->in, l->out, count, MPI_DOUBLE, MPI_SUM, l->comm);
    }
    return bench_now_us() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 5, .min = 8, .max = 1u << 20, .window = 1};
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin] [--quick|--smoke] [--runs R] [--min S] [--max S]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 5)
        o.runs = o.smoke ? 1 : 3;
    if (o.min < sizeof(double)) {
        fprintf(stderr, "mpi_coll: --min must be at least 8 bytes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    coll_loop_t l = {0};
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &l.size);
    MPI_Comm_dup(MPI_COMM_WORLD, &l.comm);
    int cpu = bench_pin_opts(rank, &o);
    l.in = malloc(o.max);
    l.out = malloc(o.max);
    double *runs = malloc(sizeof(double) * (size_t)o.runs);
    if (!l.in || !l.out || !runs) {
        fprintf(stderr, "mpi_coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < o.max / sizeof(double); i++)
        l.in[i] = l.out[i] = (double)i;
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_coll (%s): %d ranks pinned %s (rank 0 cpu %d); median of %d runs\n", lib,
               l.size, o.pin ? "yes" : "no", cpu, o.runs);
        fflush(stdout);
    }
    double target = o.smoke ? 5e3 : o.quick ? 2e4 : 5e4;
    size_t step = o.quick ? 8 : 2;
    for (l.bcast = 0; l.bcast <= 1; l.bcast++) {
        char name[32];
        snprintf(name, sizeof name, "%s", l.bcast ? "bcast" : "allreduce");
        if (l.size > 2)
            snprintf(name + strlen(name), sizeof name - strlen(name), "_np%d", l.size);
        for (l.len = o.min; l.len <= o.max; l.len *= step) {
            long iters = bench_mpi_iters(l.comm, coll_iters, &l, 4, target, 2, 100000);
            for (int r = 0; r < o.runs; r++)
                runs[r] = bench_mpi_max(l.comm, coll_iters(&l, iters)) / (double)iters;
            double lat = bench_median(runs, o.runs);
            if (rank == 0) {
                printf("# %-9s %8zu B: %10.3f us\n", name, l.len, lat);
                bench_csv(name, (double)l.len, "latency_us", lat);
            }
        }
    }
    free(l.in);
    free(l.out);
    free(runs);
    MPI_Comm_free(&l.comm);
    MPI_Finalize();
    return 0;
}
