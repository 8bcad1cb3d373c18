/* mpi_rma: one-sided communication, in plain MPI, built by bench/run_rma.sh
 * (and bench/weft-bench) against weft, Open MPI and MPICH.
 *
 *   mpirun -n 2 mpi_rma [--win allocate|create|dynamic] [--sync S] [--pin | --cores N]
 *                       [--quick|--smoke] [--runs R] [--min S] [--max S]
 *                       [--overlap S]
 *
 * Rank 0 is the origin, rank 1 the target; each iteration is an epoch of
 * --sync (OSU's -s): flush (default: one MPI_Win_lock_all epoch, each
 * iteration ends with MPI_Win_flush), flush_local, lock (lock/unlock),
 * lock_all, pscw (start/complete; the target posts and waits) or fence
 * (both ranks); the target otherwise waits in a barrier:
 *   put_latency, get_latency   one operation, per size
 *   put_bw, get_bw             --window operations (64) per epoch
 *   put_bibw                   the same from both ranks at once (flush, lock)
 *   acc_latency, get_acc_latency  MPI_Accumulate / MPI_Get_accumulate of one
 *                              double (MPI_SUM)
 *   fop_latency, cas_latency   MPI_Fetch_and_op / MPI_Compare_and_swap on an
 *                              int64
 * and the passive-target overlap of a --overlap byte MPI_Get (64 MiB; 0:
 * none): lock, get, unlock at the origin while the target computes for
 * twice the transfer time without calling MPI:
 *   t_comm   the get alone (target in a barrier), t_total with the compute,
 *   overlap = (t_comm + t_compute - t_total) / min(t_comm, t_compute)
 * 1: the get completed while the target computed; 0: it waited for it.
 * --overlap-only skips the rest. */
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

enum { PUT_LAT, GET_LAT, PUT_BW, GET_BW, PUT_BIBW, ACC_LAT, GACC_LAT, FOP_LAT, CAS_LAT };
static const char *const kind_name[] = {"put_latency",     "get_latency", "put_bw",
                                        "get_bw",          "put_bibw",    "acc_latency",
                                        "get_acc_latency", "fop_latency", "cas_latency"};

/* The synchronizations of OSU's one-sided benchmarks (-s). */
enum { S_FLUSH, S_FLUSH_LOCAL, S_LOCK, S_LOCK_ALL, S_PSCW, S_FENCE };
static const char *const sync_name[] = {"flush",    "flush_local", "lock",
                                        "lock_all", "pscw",        "fence"};
static int sync_mode = S_FLUSH;
static MPI_Group peer_group;

/* One access epoch's start and end at the origin (the flush modes: inside
 * the lock_all epoch main opened), and the target's side of it. */
static void epoch_begin(void)
{
    switch (sync_mode) {
    case S_LOCK:
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        break;
    case S_LOCK_ALL:
        MPI_Win_lock_all(0, win);
        break;
    case S_PSCW:
        MPI_Win_start(peer_group, 0, win);
        break;
    case S_FENCE:
        MPI_Win_fence(0, win);
        break;
    default:
        break;
    }
}

static void epoch_end(void)
{
    switch (sync_mode) {
    case S_FLUSH:
        MPI_Win_flush(peer, win);
        break;
    case S_FLUSH_LOCAL:
        MPI_Win_flush_local(peer, win);
        break;
    case S_LOCK:
        MPI_Win_unlock(peer, win);
        break;
    case S_LOCK_ALL:
        MPI_Win_unlock_all(win);
        break;
    case S_PSCW:
        MPI_Win_complete(win);
        break;
    default:
        MPI_Win_fence(0, win);
        break;
    }
}

static void target_epoch(void)
{
    if (sync_mode == S_PSCW) {
        MPI_Win_post(peer_group, 0, win);
        MPI_Win_wait(win);
    } else if (sync_mode == S_FENCE) {
        MPI_Win_fence(0, win);
        MPI_Win_fence(0, win);
    }
}

static void op(int kind, int n)
{
    static double one = 1, dres;
    static int64_t v = 1, cmp = 0, res;
    switch (kind) {
    case PUT_LAT:
        MPI_Put(obuf, n, MPI_BYTE, peer, tb, n, MPI_BYTE, win);
        break;
    case GET_LAT:
        MPI_Get(obuf, n, MPI_BYTE, peer, tb, n, MPI_BYTE, win);
        break;
    case PUT_BW:
    case PUT_BIBW:
        for (int k = 0; k < window; k++)
            MPI_Put(obuf, n, MPI_BYTE, peer, tb, n, MPI_BYTE, win);
        break;
    case GET_BW:
        for (int k = 0; k < window; k++)
            MPI_Get(obuf, n, MPI_BYTE, peer, tb, n, MPI_BYTE, win);
        break;
    case ACC_LAT:
        MPI_Accumulate(&one, 1, MPI_DOUBLE, peer, tb, 1, MPI_DOUBLE, MPI_SUM, win);
        break;
    case GACC_LAT:
        MPI_Get_accumulate(&one, 1, MPI_DOUBLE, &dres, 1, MPI_DOUBLE, peer, tb, 1, MPI_DOUBLE,
                           MPI_SUM, win);
        break;
    case FOP_LAT:
        MPI_Fetch_and_op(&v, &res, MPI_INT64_T, peer, tb, MPI_SUM, win);
        break;
    default:
        MPI_Compare_and_swap(&v, &cmp, &res, MPI_INT64_T, peer, tb, win);
        break;
    }
}

static double loop(void *arg, long iters)
{
    const point_t *p = arg;
    int n = (int)p->len;
    MPI_Barrier(ctrl);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0 || p->kind == PUT_BIBW) {
            epoch_begin();
            op(p->kind, n);
            epoch_end();
        } else {
            target_epoch();
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
    int ac = 0, overlap_only = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--win") && i + 1 < argc) {
            flavor = argv[++i];
        } else if (!strcmp(argv[i], "--sync") && i + 1 < argc) {
            const char *sy = argv[++i];
            for (int k = 0; k < (int)(sizeof sync_name / sizeof sync_name[0]); k++)
                if (!strcmp(sy, sync_name[k]))
                    sync_mode = k;
        } else if (!strcmp(argv[i], "--overlap-only")) {
            overlap_only = 1;
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
    if (bench_parse_opts(
            argc, argv, &o,
            "[--win allocate|create|dynamic] [--sync flush|flush_local|lock|lock_all|pscw|fence] "
            "[--pin | --cores N] [--quick|--smoke] "
            "[--runs R] [--min S] [--max S] [--window W] [--overlap S] [--overlap-only]"))
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
        printf("# mpi_rma (%s): window %s, %s synchronization, median of %d runs; rank 0 "
               "cpu %d\n",
               lib, flavor, sync_name[sync_mode], o.runs, cpu);
        fflush(stdout);
    }
    double *v = malloc(sizeof(double) * (size_t)(o.runs * 2));
    MPI_Group wg;
    MPI_Comm_group(data, &wg);
    MPI_Group_incl(wg, 1, &peer, &peer_group);
    MPI_Group_free(&wg);
    bool flushes = sync_mode == S_FLUSH || sync_mode == S_FLUSH_LOCAL;
    if (flushes)
        MPI_Win_lock_all(0, win);
    for (int kind = PUT_LAT; kind <= CAS_LAT && !overlap_only; kind++) {
        bool sized = kind <= PUT_BIBW;
        if (kind == PUT_BIBW && !flushes && sync_mode != S_LOCK)
            continue; /* both ranks origins: only where neither waits for the other */
        for (size_t len = sized ? o.min : 8; len <= (sized ? o.max : 8);
             len = bench_next(len, &o)) {
            point_t p = {kind, len};
            double target = o.smoke ? 2e3 : o.quick ? 2e4 : 1e5;
            long iters = bench_mpi_iters(ctrl, loop, &p, 10, target, 10, 1000000);
            for (int r = 0; r < o.runs; r++)
                v[r] = bench_mpi_max(ctrl, loop(&p, iters)) / (double)iters;
            double per = bench_median(v, o.runs); /* µs per iteration */
            if (rank == 0) {
                if (kind == PUT_BW || kind == GET_BW || kind == PUT_BIBW) {
                    double mbps = (double)len * window / per * (kind == PUT_BIBW ? 2 : 1);
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
    if (flushes)
        MPI_Win_unlock_all(win);
    MPI_Group_free(&peer_group);
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
