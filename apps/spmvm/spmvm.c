/* spmvm: distributed sparse matrix-vector multiply, y = A x, in the three
 * modes of seed 001 (Schubert, Hager, Wellein et al., CUG 2011):
 *
 *   vector  exchange the halo (the remote entries of x this rank's rows
 *           need), wait, then multiply all the rows: no overlap;
 *   naive   post the exchange, multiply the local part (columns this rank
 *           owns), wait, then the remote part: overlap only if the MPI
 *           library moves data while the application computes;
 *   task    one OpenMP thread does the exchange while the others multiply
 *           the local part, then all do the remote part: overlap by a
 *           dedicated thread, whatever the library does.
 *
 * Rows are split evenly across ranks, stored in CRS with their columns
 * renumbered into one vector: x's local entries, then the halo. Vector mode
 * multiplies that whole CRS; the other modes its local and remote parts,
 * two more CRS matrices over the same vector. The
 * result is checked against a serial product of this rank's rows with the
 * whole vector x (x[j] = 1 + (j mod 7) / 8, known everywhere).
 *
 *   mpirun -n P spmvm --matrix hh:N|poisson:N|poisson:NXxNYxNZ|file.mtx
 *                     [--mode vector|naive|task|all] [--iters K] [--threads T]
 *
 * Prints, per mode, Gflop/s and µs per iteration (the slowest rank's), the
 * halo exchange's own time per iteration, and the check; and a csv line per
 * mode for the benchmark scripts. Built against weft's MPI, the OpenMP
 * threads are placed through a thread group (weft_topo.h), thread 0 (the
 * communicating one in task mode) first; elsewhere OMP_PROC_BIND does it. */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "matrix.h"

#ifdef WEFT_MPI
#include <weft/weft_topo.h>
#endif

typedef struct {
    long nrows;
    long *rowptr, *col; /* col: index in x's local entries, then the halo after them */
    double *val;
} crs_t;

/* The halo exchange: what this rank sends to and receives from each peer. */
typedef struct {
    int npeers_send, npeers_recv;
    int *send_peer, *recv_peer;
    long *send_start, *recv_start; /* per peer, into send_idx/sendbuf and halo */
    long *send_idx;                /* local rows of x to send, per peer in turn */
    long nsend, nhalo;
    double *sendbuf;
    MPI_Request *reqs;
} halo_t;

static int rank, size;

static double x_of(long j)
{
    return 1.0 + (double)(j % 7) / 8.0;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int owner_of(long j, long n)
{
    int lo = 0, hi = size - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (rows_start(n, mid, size) <= j)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void *xmalloc(size_t n)
{
    return app_xmalloc(n, "spmvm");
}

/* Splits this rank's rows into the local and remote parts, and sets up the
 * halo: which entries come from which rank, which go where. */
static void setup(const rows_t *m, crs_t *full, crs_t *local, crs_t *remote, halo_t *h,
                  long **halo_cols)
{
    long nrows = m->r1 - m->r0, nnz = m->rowptr[nrows];
    long *cols = xmalloc(sizeof *cols * (size_t)nnz);
    long nr = 0;
    for (long k = 0; k < nnz; k++)
        if (m->col[k] < m->r0 || m->col[k] >= m->r1)
            cols[nr++] = m->col[k];
    qsort(cols, (size_t)nr, sizeof *cols, cmp_long);
    long nh = 0;
    for (long k = 0; k < nr; k++)
        if (nh == 0 || cols[nh - 1] != cols[k])
            cols[nh++] = cols[k];
    *halo_cols = cols;
    h->nhalo = nh;
    crs_t *parts[3] = {local, remote, full};
    for (int p = 0; p < 3; p++) {
        parts[p]->nrows = nrows;
        parts[p]->rowptr = xmalloc(sizeof(long) * (size_t)(nrows + 1));
        parts[p]->col = xmalloc(sizeof(long) * (size_t)nnz);
        parts[p]->val = xmalloc(sizeof(double) * (size_t)nnz);
        parts[p]->rowptr[0] = 0;
    }
    long at[3] = {0, 0, 0};
    for (long i = 0; i < nrows; i++) {
        for (long k = m->rowptr[i]; k < m->rowptr[i + 1]; k++) {
            long j = m->col[k];
            bool mine = j >= m->r0 && j < m->r1;
            long *pos = mine ? NULL : bsearch(&j, cols, (size_t)nh, sizeof *cols, cmp_long);
            long c = mine ? j - m->r0 : nrows + (pos - cols);
            for (int p = !mine; p < 3; p += 2 - !mine) { /* its part, and the whole */
                parts[p]->col[at[p]] = c;
                parts[p]->val[at[p]++] = m->val[k];
            }
        }
        for (int p = 0; p < 3; p++)
            parts[p]->rowptr[i + 1] = at[p];
    }
    /* Who owns each halo entry; tell the owners what to send. */
    int *want = calloc((size_t)size, sizeof *want), *give = calloc((size_t)size, sizeof *give);
    for (long k = 0; k < nh; k++)
        want[owner_of(cols[k], m->n)]++;
    MPI_Alltoall(want, 1, MPI_INT, give, 1, MPI_INT, MPI_COMM_WORLD);
    int *wdispl = xmalloc(sizeof(int) * (size_t)size),
        *gdispl = xmalloc(sizeof(int) * (size_t)size);
    long ws = 0, gs = 0;
    h->npeers_send = h->npeers_recv = 0;
    for (int r = 0; r < size; r++) {
        wdispl[r] = (int)ws;
        gdispl[r] = (int)gs;
        ws += want[r];
        gs += give[r];
        h->npeers_recv += want[r] > 0;
        h->npeers_send += give[r] > 0;
    }
    h->nsend = gs;
    h->send_idx = xmalloc(sizeof(long) * (size_t)gs);
    MPI_Alltoallv(cols, want, wdispl, MPI_LONG, h->send_idx, give, gdispl, MPI_LONG,
                  MPI_COMM_WORLD);
    for (long k = 0; k < gs; k++)
        h->send_idx[k] -= m->r0;
    h->send_peer = xmalloc(sizeof(int) * (size_t)(h->npeers_send + 1));
    h->recv_peer = xmalloc(sizeof(int) * (size_t)(h->npeers_recv + 1));
    h->send_start = xmalloc(sizeof(long) * (size_t)(h->npeers_send + 1));
    h->recv_start = xmalloc(sizeof(long) * (size_t)(h->npeers_recv + 1));
    int s = 0, q = 0;
    for (int r = 0; r < size; r++) {
        if (give[r]) {
            h->send_peer[s] = r;
            h->send_start[s++] = gdispl[r];
        }
        if (want[r]) {
            h->recv_peer[q] = r;
            h->recv_start[q++] = wdispl[r];
        }
    }
    h->send_start[s] = gs;
    h->recv_start[q] = ws;
    h->sendbuf = xmalloc(sizeof(double) * (size_t)gs);
    h->reqs = xmalloc(sizeof(MPI_Request) * (size_t)(s + q + 1));
    free(want);
    free(give);
    free(wdispl);
    free(gdispl);
}

static void exchange_start(halo_t *h, const double *x, double *halo)
{
    int n = 0;
    for (int q = 0; q < h->npeers_recv; q++)
        MPI_Irecv(halo + h->recv_start[q], (int)(h->recv_start[q + 1] - h->recv_start[q]),
                  MPI_DOUBLE, h->recv_peer[q], 7, MPI_COMM_WORLD, &h->reqs[n++]);
    for (int s = 0; s < h->npeers_send; s++) {
        for (long k = h->send_start[s]; k < h->send_start[s + 1]; k++)
            h->sendbuf[k] = x[h->send_idx[k]];
        MPI_Isend(h->sendbuf + h->send_start[s], (int)(h->send_start[s + 1] - h->send_start[s]),
                  MPI_DOUBLE, h->send_peer[s], 7, MPI_COMM_WORLD, &h->reqs[n++]);
    }
}

static void exchange_wait(halo_t *h)
{
    MPI_Waitall(h->npeers_recv + h->npeers_send, h->reqs, MPI_STATUSES_IGNORE);
}

/* y[lo..hi) (+)= a x. */
static void multiply(const crs_t *a, const double *x, double *y, long lo, long hi, bool add)
{
    for (long i = lo; i < hi; i++) {
        double s = add ? y[i] : 0.0;
        for (long k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            s += a->val[k] * x[a->col[k]];
        y[i] = s;
    }
}

enum { VECTOR, NAIVE, TASK };
static const char *const mode_names[] = {"vector", "naive", "task"};

/* One product in `mode`: x holds the local entries then the halo.
 * *comm_s gets the exchange's own time (vector mode). */
static void product(int mode, const crs_t *full, const crs_t *local, const crs_t *remote, halo_t *h,
                    double *x, double *y, double *comm_s)
{
    long n = local->nrows;
    double *halo = x + n;
    if (mode == VECTOR) {
        double t = MPI_Wtime();
        exchange_start(h, x, halo);
        exchange_wait(h);
        *comm_s += MPI_Wtime() - t;
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            multiply(full, x, y, i, i + 1, false);
        return;
    }
    if (mode == NAIVE) {
        exchange_start(h, x, halo);
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            multiply(local, x, y, i, i + 1, false);
        exchange_wait(h);
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            multiply(remote, x, y, i, i + 1, true);
        return;
    }
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        if (nt == 1) {
            exchange_start(h, x, halo);
            exchange_wait(h);
            multiply(local, x, y, 0, n, false);
        } else if (t == 0) {
            exchange_start(h, x, halo); /* the master thread: MPI_THREAD_FUNNELED */
            exchange_wait(h);
        } else {
            long lo = n * (t - 1) / (nt - 1), hi = n * t / (nt - 1);
            multiply(local, x, y, lo, hi, false);
        }
#pragma omp barrier
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++)
            multiply(remote, x, y, i, i + 1, true);
    }
}

/* Under weft: the OpenMP threads in one compact thread group over the
 * rank's cores, thread 0 first, the progress thread where they leave room. */
static void place_threads(void)
{
#ifdef WEFT_MPI
    if (!app_owns_cpus() || getenv("SPMVM_NO_PLACE")) /* collective */
        return;
    weft_tgroup_t *g = NULL;
    if (weft_tgroup_create(NULL, WEFT_TGROUP_COMPACT, NULL, &g) != WEFT_OK)
        return;
    int nt = omp_get_max_threads();
    pthread_t *ids = xmalloc(sizeof *ids * (size_t)nt);
#pragma omp parallel
    ids[omp_get_thread_num()] = pthread_self();
    for (int t = 0; t < nt; t++)
        weft_tgroup_add_thread(g, ids[t]);
    weft_ctx_t *ctx = NULL;
    weft_world_acquire(NULL, &ctx);
    int rc = weft_tgroup_place(g, ctx);
    char where[256] = "", prog[256] = "-";
    weft_tgroup_cpus(g, 0, where, sizeof where);
    if (ctx)
        weft_progress_thread_cpus(ctx, prog, sizeof prog);
    if (rank == 0)
        printf("# rank 0: %d threads placed (%s), thread 0 on cpus %s, progress thread on %s\n", nt,
               weft_strerror(rc), where, prog);
    if (ctx)
        weft_world_release(ctx);
    free(ids);
    weft_tgroup_free(g);
#endif
}

int main(int argc, char **argv)
{
    const char *spec = NULL, *modes = "all";
    int iters = 50;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--matrix") && i + 1 < argc)
            spec = argv[++i];
        else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
            modes = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            omp_set_num_threads(atoi(argv[++i]));
        else {
            fprintf(stderr, "usage: spmvm --matrix hh:N|poisson:N|poisson:NXxNYxNZ|file.mtx "
                            "[--mode vector|naive|task|all] [--iters K] [--threads T]\n");
            return 2;
        }
    }
    if (!spec || iters < 1) {
        fprintf(stderr, "spmvm: --matrix is needed (and --iters >= 1)\n");
        return 2;
    }
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_FUNNELED) {
        fprintf(stderr, "spmvm: the MPI library gives no MPI_THREAD_FUNNELED\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rows_t m;
    int ok = rows_build(spec, rank, size, &m, stderr) == 0, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        MPI_Finalize();
        return 1;
    }
    long nrows = m.r1 - m.r0, nnz = m.rowptr[nrows], nnz_all;
    MPI_Allreduce(&nnz, &nnz_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    crs_t full, local, remote;
    halo_t h;
    long *halo_cols;
    setup(&m, &full, &local, &remote, &h, &halo_cols);
    long nhalo_all;
    MPI_Allreduce(&h.nhalo, &nhalo_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double *x = xmalloc(sizeof *x * (size_t)(nrows + h.nhalo));
    double *y = xmalloc(sizeof *y * (size_t)nrows);
    double *ref = xmalloc(sizeof *ref * (size_t)nrows);
    for (long i = 0; i < nrows; i++) {
        x[i] = x_of(m.r0 + i);
        double s = 0;
        for (long k = m.rowptr[i]; k < m.rowptr[i + 1]; k++)
            s += m.val[k] * x_of(m.col[k]);
        ref[i] = s;
    }
    place_threads();
    if (rank == 0)
        printf("# spmvm: matrix %s: %ld rows, %ld non-zeros (%.1f per row), %d ranks x %d threads, "
               "halo %.1f%% of the rows, %d iterations\n",
               m.name, m.n, nnz_all, (double)nnz_all / (double)m.n, size, omp_get_max_threads(),
               100.0 * (double)nhalo_all / (double)m.n, iters);
    int failed = 0;
    for (int mode = VECTOR; mode <= TASK; mode++) {
        if (strcmp(modes, "all") && strcmp(modes, mode_names[mode]))
            continue;
        double comm = 0, t0 = 0;
        for (int it = -2; it < iters; it++) { /* two to warm up */
            if (it == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                comm = 0;
            }
            product(mode, &full, &local, &remote, &h, x, y, &comm);
        }
        double mine = MPI_Wtime() - t0, slowest, comm_max;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&comm, &comm_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double err = 0, err_all;
        for (long i = 0; i < nrows; i++) {
            double d = fabs(y[i] - ref[i]) / (fabs(ref[i]) > 1e-300 ? fabs(ref[i]) : 1.0);
            err = d > err ? d : err;
        }
        MPI_Allreduce(&err, &err_all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        bool good = err_all < 1e-12;
        failed |= !good;
        double us = slowest / iters * 1e6, gflops = 2.0 * (double)nnz_all * iters / slowest / 1e9;
        if (rank == 0) {
            printf("spmvm %-6s %9.3f Gflop/s %11.2f us/iter", mode_names[mode], gflops, us);
            if (mode == VECTOR)
                printf("  (exchange %.2f us/iter, %.0f%%)", comm_max / iters * 1e6,
                       100.0 * comm_max / slowest);
            printf("  check %s (max rel err %.1e)\n", good ? "ok" : "FAILED", err_all);
            printf("csv,spmvm_%s,%ld,gflops,%.4f\n", mode_names[mode], m.n, gflops);
            printf("csv,spmvm_%s,%ld,us_per_iter,%.3f\n", mode_names[mode], m.n, us);
            if (mode == VECTOR)
                printf("csv,spmvm_exchange,%ld,us_per_iter,%.3f\n", m.n, comm_max / iters * 1e6);
        }
    }
    free(x);
    free(y);
    free(ref);
    free(halo_cols);
    crs_t *parts[3] = {&full, &local, &remote};
    for (int p = 0; p < 3; p++) {
        free(parts[p]->rowptr);
        free(parts[p]->col);
        free(parts[p]->val);
    }
    free(h.send_peer);
    free(h.recv_peer);
    free(h.send_start);
    free(h.recv_start);
    free(h.send_idx);
    free(h.sendbuf);
    free(h.reqs);
    rows_free(&m);
    MPI_Finalize();
    return failed ? 1 : 0;
}
