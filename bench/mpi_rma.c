/* mpi_rma: one-sided communication, in plain MPI, built by bench/run_rma.sh
 * (and bench/weft-bench) against weft, Open MPI and MPICH.
 *
 *   mpirun -n 2 mpi_rma [--win allocate|create|dynamic] [--pin | --cores N]
 *                       [--quick|--smoke] [--runs R] [--min S] [--max S]
 *                       [--overlap S]
 *
 * Rank 0 is the origin, rank 1 the target; inside one MPI_Win_lock_all
 * epoch (OSU's flush synchronization), while the target waits in a barrier:
 *   put_latency, get_latency   one operation then MPI_Win_flush, per size
 *   put_bw, get_bw             --window operations (64) then one flush
 *   acc_latency                MPI_Accumulate of one double (MPI_SUM) + flush
 *   fop_latency, cas_latency   MPI_Fetch_and_op / MPI_Compare_and_swap on an
 *                              int64 + flush
 * and the passive-target overlap of a --overlap byte MPI_Get (64 MiB; 0:
 * none): lock, get, unlock at the origin while the target computes for
 * twice the transfer time without calling MPI:
 *   t_comm   the get alone (target in a barrier), t_total with the compute,
 *   overlap = (t_comm + t_compute - t_total) / min(t_comm, t_compute)
 * 1: the get completed while the target computed; 0: it waited for it. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

static MPI_Comm data, ctrl;
static int rank, peer;
static MPI_Win win;
static char *base;  /* this rank's window memory */
static MPI_Aint tb; /* the target's displacement of its window's start */
static char *obuf;
static int window = 64;

typedef struct point {
    int kind;
    size_t len;
} point_t;

enum { PUT_LAT, GET_LAT, PUT_BW, GET_BW, ACC_LAT, FOP_LAT, CAS_LAT };
static const char *const kind_name[] = {"put_latency", "get_latency", "put_bw",     "get_bw",
                                        "acc_latency", "fop_latency", "cas_latency"};

static double loop(void *arg, long iters)
{
    const point_t *p = arg;
    int n = (int)p->len;
    double one = 1, dres;
    int64_t v = 1, cmp = 0, res;
    MPI_Barrier(ctrl);
    double t0 = bench_now_us();
    if (rank == 0) {
        for (long i = 0; i < iters; i++) {
            switch (p->kind) {
            case PUT_LAT:
                MPI_Put(obuf, n, MPI_BYTE, peer, tb, n, MPI_BYTE, win);
                break;
            case GET_LAT:
                MPI_Get(obuf, n, MPI_BYTE, peer, tb, n, MPI_BYTE, win);
                break;
            case PUT_BW:
                for (int k = 0; k < window; k++)
                    MPI_Put(obuf, n, MPI_BYTE, peer, tb, n, MPI_BYTE, win);
                break;
            case GET_BW:
                for (int k = 0; k < window; k++)
                    MPI_Get(obuf, n, MPI_BYTE, peer, tb, n, MPI_BYTE, win);
                break;
            case ACC_LAT:
                MPI_Accumulate(&one, 1, MPI_DOUBLE, peer, tb, 1, MPI_DOUBLE, MPI_SUM, win);
                (void)dres;
                break;
            case FOP_LAT:
                MPI_Fetch_and_op(&v, &res, MPI_INT64_T, peer, tb, MPI_SUM, win);
                break;
            default:
                MPI_Compare_and_swap(&v, &cmp, &res, MPI_INT64_T, peer, tb, win);
                break;
            }
            MPI_Win_flush(peer, win);
        }
    }
    double t = bench_now_us() - t0;
    MPI_Barrier(ctrl);
    return t;
}

/* One overlap run: the get's epoch at the origin, compute c µs at the
 * target (0: it waits in the barrier); the slower rank's time. */
static double overlap_once(size_t len, double c)
{
    MPI_Barrier(ctrl);
    double t0 = bench_now_us();
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        MPI_Get(obuf, (int)len, MPI_BYTE, peer, tb, (int)len, MPI_BYTE, win);
        MPI_Win_unlock(peer, win);
    } else if (c > 0) {
        bench_compute_us(c);
    }
    double t = bench_now_us() - t0;
    return bench_mpi_max(ctrl, t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* Our own options, taken out before the common ones are parsed. */
    const char *flavor = "allocate";
    size_t ov_len = 64u << 20;
    int ac = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--win") && i + 1 < argc) {
            flavor = argv[++i];
        } else if (!strcmp(argv[i], "--overlap") && i + 1 < argc) {
            ov_len = bench_parse_size(argv[++i]);
            if (!strcmp(argv[i], "0"))
                ov_len = 0;
        } else {
            argv[ac++] = argv[i];
        }
    }
    argc = ac;
    bench_opts_t o = {.runs = 5, .min = 8, .max = 4u << 20, .window = 64};
    if (bench_parse_opts(argc, argv, &o,
                         "[--win allocate|create|dynamic] [--pin | --cores N] [--quick|--smoke] "
                         "[--runs R] [--min S] [--max S] [--window W] [--overlap S]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 5)
        o.runs = o.smoke ? 1 : 3;
    if (o.smoke && ov_len == 64u << 20)
        ov_len = 1u << 20;
    window = o.window > 0 ? o.window : 64;
    int cpu = bench_mpi_setup("mpi_rma", &o, &rank, &peer, &data, &ctrl);
    size_t wlen = o.max > ov_len ? o.max : ov_len;
    if (wlen < 64)
        wlen = 64;
    obuf = malloc(wlen);
    memset(obuf, 'o', wlen);
    if (!strcmp(flavor, "create")) {
        base = malloc(wlen);
        MPI_Win_create(base, (MPI_Aint)wlen, 1, MPI_INFO_NULL, data, &win);
    } else if (!strcmp(flavor, "dynamic")) {
        base = malloc(wlen);
        MPI_Win_create_dynamic(MPI_INFO_NULL, data, &win);
        MPI_Win_attach(win, base, (MPI_Aint)wlen);
    } else {
        flavor = "allocate";
        MPI_Win_allocate((MPI_Aint)wlen, 1, MPI_INFO_NULL, data, &base, &win);
    }
    memset(base, 0, wlen);
    MPI_Aint mine = 0;
    if (!strcmp(flavor, "dynamic"))
        MPI_Get_address(base, &mine);
    MPI_Sendrecv(&mine, 1, MPI_AINT, peer, 0, &tb, 1, MPI_AINT, peer, 0, ctrl, MPI_STATUS_IGNORE);
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_rma (%s): window %s, flush synchronization, median of %d runs; rank 0 "
               "cpu %d\n",
               lib, flavor, o.runs, cpu);
        fflush(stdout);
    }
    double *v = malloc(sizeof(double) * (size_t)(o.runs * 2));
    MPI_Win_lock_all(0, win);
    for (int kind = PUT_LAT; kind <= CAS_LAT; kind++) {
        bool sized = kind <= GET_BW;
        for (size_t len = sized ? o.min : 8; len <= (sized ? o.max : 8);
             len = bench_next(len, &o)) {
            point_t p = {kind, len};
            double target = o.smoke ? 2e3 : o.quick ? 2e4 : 1e5;
            long iters = bench_mpi_iters(ctrl, loop, &p, 10, target, 10, 1000000);
            for (int r = 0; r < o.runs; r++)
                v[r] = bench_mpi_max(ctrl, loop(&p, iters)) / (double)iters;
            double per = bench_median(v, o.runs); /* µs per iteration */
            if (rank == 0) {
                if (kind == PUT_BW || kind == GET_BW) {
                    double mbps = (double)len * window / per;
                    printf("# %-12s %10zu %12.2f MB/s\n", kind_name[kind], len, mbps);
                    bench_csv(kind_name[kind], (double)len, "bandwidth_MBps", mbps);
                } else {
                    printf("# %-12s %10zu %12.3f us\n", kind_name[kind], len, per);
                    bench_csv(kind_name[kind], (double)len, "latency_us", per);
                }
                fflush(stdout);
            }
            if (!sized)
                break;
        }
    }
    MPI_Win_unlock_all(win);
    if (ov_len) {
        overlap_once(ov_len, 0); /* warm-up */
        double *w = v + o.runs;
        for (int r = 0; r < o.runs; r++)
            v[r] = overlap_once(ov_len, 0);
        double comm = bench_median(v, o.runs), c = 2 * comm;
        for (int r = 0; r < o.runs; r++) {
            v[r] = overlap_once(ov_len, 0);
            w[r] = overlap_once(ov_len, c);
        }
        comm = bench_median(v, o.runs);
        double total = bench_median(w, o.runs);
        double shorter = comm < c ? comm : c;
        double ov = (comm + c - total) / shorter;
        if (rank == 0) {
            printf("# get_overlap %zu bytes: comm %.1f us, compute %.1f us, total %.1f us, "
                   "overlap %.3f\n",
                   ov_len, comm, c, total, ov);
            bench_csv("get_overlap", (double)ov_len, "overlap_ratio", ov);
            bench_csv("get_overlap", (double)ov_len, "comm_us", comm);
            bench_csv("get_overlap", (double)ov_len, "total_us", total);
        }
    }
    MPI_Barrier(ctrl);
    if (!strcmp(flavor, "dynamic"))
        MPI_Win_detach(win, base);
    MPI_Win_free(&win);
    if (strcmp(flavor, "allocate"))
        free(base);
    free(obuf);
    free(v);
    MPI_Comm_free(&data);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
