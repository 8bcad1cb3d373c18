/* mpi_ncoll: does a non-blocking collective progress while every rank
 * computes? The OSU non-blocking collective benchmarks' measurement
 * (osu_iallreduce, osu_ibcast), in plain MPI, built by bench/weft-bench
 * against weft, Open MPI and MPICH.
 *
 *   mpirun -n P mpi_ncoll [--pin | --cores N] [--quick|--smoke] [--runs R] [--min S] [--max S]
 *
 * For each size from --min to --max bytes (default 1 MiB only; doubling, by 8
 * with --quick) and each of MPI_Iallreduce (size/8 doubles summed) and
 * MPI_Ibcast (size bytes from rank 0), as OSU does:
 *
 *   t_pure     the collective alone: start, then MPI_Wait at once
 *   t_compute  arithmetic in registers for t_pure microseconds, no MPI call
 *   t_total    start, compute for t_pure, MPI_Wait
 *   overlap    100 - 100 (t_total - t_compute) / t_pure, at least 0
 *
 * each the slowest rank's, median of R runs (the runs of t_pure and t_total
 * alternate). 100 means the collective was entirely hidden behind the
 * computation: it moved on while no rank called MPI (weft: with
 * WEFT_PROGRESS_THREAD=1, which bench/weft-bench sets for this job; a library
 * that progresses only inside MPI calls shows about 0). --cores 2 gives each
 * rank a second CPU, the room a progress thread needs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

static int rank, size;

static double slowest(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* One collective (bcast: 1, else allreduce) with `c` microseconds of compute
 * between its start and its wait; the slowest rank's time. */
static double run_once(int bcast, double *in, double *out, size_t len, double c)
{
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now_us();
    if (bcast)
        MPI_Ibcast(out, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
    else
        MPI_Iallreduce(in, out, (int)(len / sizeof(double)), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                       &req);
    if (c > 0)
        bench_compute_us(c);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return slowest(bench_now_us() - t0);
}

static double run_compute(double c)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now_us();
    bench_compute_us(c);
    return slowest(bench_now_us() - t0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 11, .min = 1 << 20, .max = 1 << 20, .window = 1};
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin | --cores N] [--quick|--smoke] [--runs R] [--min S] [--max S]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 11)
        o.runs = o.smoke ? 1 : 5;
    if (o.smoke && o.max > (64u << 10))
        o.min = o.max = 64u << 10;
    if (o.quick && !o.step)
        o.step = 8;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int cpu = bench_pin_opts(rank, &o);
    double *in = malloc(o.max), *out = malloc(o.max);
    double *p = malloc(sizeof(double) * (size_t)o.runs),
           *t = malloc(sizeof(double) * (size_t)o.runs);
    double *k = malloc(sizeof(double) * (size_t)o.runs);
    if (!in || !out || !p || !t || !k) {
        fprintf(stderr, "mpi_ncoll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(in, 0, o.max);
    memset(out, 0, o.max);
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_ncoll (%s): %d ranks; CPUs per rank %d, 0: unbound (rank 0 from cpu %d); "
               "median of %d runs\n# %-10s %10s %10s %10s %10s %8s\n",
               lib, size, o.pin, cpu, o.runs, "coll", "bytes", "pure_us", "compute_us", "total_us",
               "overlap");
        fflush(stdout);
    }
    for (int bcast = 0; bcast <= 1; bcast++) {
        const char *name = bcast ? "ibcast" : "iallreduce";
        for (size_t len = o.min; len <= o.max; len = bench_next(len, &o)) {
            run_once(bcast, in, out, len, 0); /* warm-up */
            for (int r = 0; r < o.runs; r++)
                p[r] = run_once(bcast, in, out, len, 0);
            double pure = bench_median(p, o.runs);
            for (int r = 0; r < o.runs; r++) {
                p[r] = run_once(bcast, in, out, len, 0);
                t[r] = run_once(bcast, in, out, len, pure);
                k[r] = run_compute(pure);
            }
            pure = bench_median(p, o.runs);
            double total = bench_median(t, o.runs), comp = bench_median(k, o.runs);
            double overlap = 100.0 - 100.0 * (total - comp) / pure;
            if (overlap < 0)
                overlap = 0;
            if (rank == 0) {
                printf("# %-10s %10zu %10.1f %10.1f %10.1f %8.1f\n", name, len, pure, comp, total,
                       overlap);
                bench_csv(name, (double)len, "overlap_pct", overlap);
                bench_csv(name, (double)len, "pure_us", pure);
                bench_csv(name, (double)len, "total_us", total);
            }
        }
    }
    free(in);
    free(out);
    free(p);
    free(t);
    free(k);
    MPI_Finalize();
    return 0;
}
