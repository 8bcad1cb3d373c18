/* mpi_overlap: does a non-blocking transfer progress while the application
 * computes? Seed 001's benchmark (an 80 MB message, a compute phase between
 * the non-blocking call and its wait), in plain MPI, built by bench/weft-bench
 * against weft, Open MPI and MPICH.
 *
 *   mpirun -n 2 mpi_overlap [--pin | --cores N] [--quick|--smoke] [--runs R] [--size S] [--min US]
 * [--max US]
 *
 * Rank 0 sends --size bytes (default 80 MB) to rank 1: MPI_Isend, compute,
 * MPI_Wait; rank 1: MPI_Irecv, compute, MPI_Wait. The compute phase runs on the
 * sender only, on the receiver only, or on both (modes sender, receiver,
 * both); it is arithmetic in registers that makes no MPI call, ended by the
 * clock after `c` microseconds, swept from --min to --max (doubling; by 8 with
 * --quick). Each run starts at a barrier and lasts until the slower rank leaves
 * its wait:
 *
 *   t_comm    the transfer alone (no compute), median of R runs
 *   t_compute c
 *   t_total   the transfer with the compute phase, median of R runs
 *
 * (the R runs of t_comm and of t_total alternate, and t_comm is measured again
 * at every point, so slow drift of a noisy machine does not bias the ratio)
 *   overlap = (t_comm + t_compute - t_total) / min(t_comm, t_compute)
 *
 * 1 means the shorter of the two was completely hidden behind the longer
 * (t_total = max), 0 that they ran one after the other (t_total = sum). Unlike
 * t_compute / t_total (seed 000's ratio), it does not tend to 1 as the compute
 * grows when nothing overlaps. Noise can push it a little outside [0, 1]; it is
 * printed as measured.
 *
 * --cores 2 gives each rank a second CPU of its own: the room a progress
 * thread (weft: WEFT_PROGRESS_THREAD=1) or a helper thread of the MPI library
 * needs to move the data while both ranks compute (mode both). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

enum { MODE_NONE = 0, MODE_SENDER = 1, MODE_RECEIVER = 2, MODE_BOTH = 3 };
static const char *const mode_bench[] = {"overlap_none", "overlap_sender", "overlap_receiver",
                                         "overlap_both"};

static MPI_Comm data, ctrl;
static int rank, peer;

/* One transfer with compute `c` on the sides `mode` names; returns the slower
 * rank's time in microseconds. */
static double run_once(char *buf, size_t len, int mode, double c)
{
    MPI_Request req;
    MPI_Barrier(ctrl);
    double t0 = bench_now_us();
    if (rank == 0) {
        MPI_Isend(buf, (int)len, MPI_BYTE, peer, 1, data, &req);
        if (mode & MODE_SENDER)
            bench_compute_us(c);
    } else {
        MPI_Irecv(buf, (int)len, MPI_BYTE, peer, 1, data, &req);
        if (mode & MODE_RECEIVER)
            bench_compute_us(c);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return bench_mpi_max(ctrl, bench_now_us() - t0);
}

/* One point of the sweep: R pairs of runs, the transfer alone then the
 * transfer with compute, alternated so the machine's drift hits both alike;
 * medians of each into *comm and *total. */
static void run_point(char *buf, size_t len, int mode, double c, int runs, double *v, double *w,
                      double *comm, double *total)
{
    for (int r = 0; r < runs; r++) {
        v[r] = run_once(buf, len, MODE_NONE, 0);
        w[r] = run_once(buf, len, mode, c);
    }
    *comm = bench_median(v, runs);
    *total = bench_median(w, runs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 5, .min = 1000, .max = 64000, .window = 1, .msg_size = 80000000};
    if (bench_parse_opts(
            argc, argv, &o,
            "[--pin | --cores N] [--quick|--smoke] [--runs R] [--size S] [--min US] [--max US]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 5)
        o.runs = o.smoke ? 1 : 3;
    if (o.msg_size > 2000000000u) {
        fprintf(stderr, "mpi_overlap: --size must fit an int count\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int cpu = bench_mpi_setup("mpi_overlap", &o, &rank, &peer, &data, &ctrl);
    size_t len = o.msg_size;
    char *buf = malloc(len);
    double *v = malloc(sizeof(double) * (size_t)o.runs);
    double *w = malloc(sizeof(double) * (size_t)o.runs);
    if (!buf || !v || !w) {
        fprintf(stderr, "mpi_overlap: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'o', len);
    run_once(buf, len, MODE_NONE, 0); /* warm-up: pages touched, registrations made */
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_overlap (%s): %zu bytes; CPUs per rank %d, 0: unbound (rank 0 from cpu %d); "
               "median of %d "
               "runs\n# %-9s %12s %12s %12s %10s\n",
               lib, len, o.pin, cpu, o.runs, "mode", "compute_us", "comm_us", "total_us",
               "overlap");
        fflush(stdout);
    }
    /* compute times: doubling, by 8 with --quick (1, 8, 64 ms by default) */
    size_t step = o.quick ? 8 : 2;
    for (int mode = MODE_SENDER; mode <= MODE_BOTH; mode++) {
        for (size_t c = o.min; c <= o.max; c *= step) {
            double comm, total;
            run_point(buf, len, mode, (double)c, o.runs, v, w, &comm, &total);
            double shorter = comm < (double)c ? comm : (double)c;
            double overlap = (comm + (double)c - total) / shorter;
            if (rank == 0) {
                printf("# %-9s %12zu %12.1f %12.1f %10.3f\n", mode_bench[mode] + 8, c, comm, total,
                       overlap);
                bench_csv(mode_bench[mode], (double)c, "overlap_ratio", overlap);
                bench_csv(mode_bench[mode], (double)c, "total_us", total);
                bench_csv(mode_bench[mode], (double)c, "comm_us", comm);
            }
        }
    }
    free(buf);
    free(v);
    free(w);
    MPI_Comm_free(&data);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
