/* halo3d, OpenSHMEM: a 3-D halo exchange where each thread of a PE puts its
 * own parts of the faces straight into the neighbors' receive buffers (seed
 * 002: Lu, Curtis, Chapman, PAW-ATM 2019), through
 *   --ctx default   the default context, shared by all threads;
 *   --ctx shared    one context created for all the threads;
 *   --ctx private   one private context per thread (SHMEM_CTX_PRIVATE).
 * After its puts a thread quiets its context; then one barrier of all PEs
 * ends the iteration. The field is checked against the known one at the end
 * (halo3d.h).
 *
 *   oshrun -n P halo3d_shmem [--size N] [--iters K] [--threads T] [--ctx KIND]
 */
#include <shmem.h>
#include <time.h>

#include "halo3d.h"

static grid_t g;
static opts_t o;
static double *recvbuf; /* symmetric: [parity][face][n*n] */
static shmem_ctx_t shared_ctx;
static pthread_barrier_t threads_met;
static double *fields[2];
static double elapsed;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double *face_buf(int parity, int f)
{
    return recvbuf + ((size_t)parity * 6 + (size_t)f) * (size_t)g.n * (size_t)g.n;
}

/* Every thread of every PE has finished the iteration (its puts quieted). */
static void all_met(int t)
{
    pthread_barrier_wait(&threads_met);
    if (t == 0)
        shmem_barrier_all();
    pthread_barrier_wait(&threads_met);
}

/* Thread t's parts of the faces of u into the neighbors' buffers of parity. */
static void send_faces(shmem_ctx_t ctx, double *u, double *sendbuf, int t, int parity)
{
    size_t nn = (size_t)g.n * (size_t)g.n;
    for (int f = 0; f < 6; f++) {
        size_t off, len;
        face_part(&g, f, t, &off, &len);
        if (g.nbr[f] < 0 || len == 0)
            continue;
        double *out = sendbuf + (size_t)f * nn;
        face_copy(&g, u, f, t, face_plane(&g, f, false), out, true);
        /* My face f is the neighbor's face f^1. */
        shmem_ctx_putmem_nbi(ctx, face_buf(parity, f ^ 1) + off, out + off, len * sizeof(double),
                             g.nbr[f]);
    }
    shmem_ctx_quiet(ctx);
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (!strcmp(o.ctx, "shared")) {
        ctx = shared_ctx;
    } else if (!strcmp(o.ctx, "private") && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        fprintf(stderr, "halo3d: PE %d thread %d: no private context\n", shmem_my_pe(), t);
        shmem_global_exit(1);
    }
    double *sendbuf = malloc(sizeof(double) * 6 * (size_t)g.n * (size_t)g.n);
    if (!sendbuf) {
        fprintf(stderr, "halo3d: out of memory\n");
        shmem_global_exit(1);
    }
    send_faces(ctx, fields[0], sendbuf, t, 0); /* the starting faces */
    all_met(t);
    double t0 = now();
    for (int k = 1; k <= o.iters; k++) {
        double *in = fields[(k - 1) % 2], *out = fields[k % 2];
        for (int f = 0; f < 6; f++)
            if (g.nbr[f] >= 0)
                face_copy(&g, in, f, t, face_plane(&g, f, true), face_buf((k - 1) % 2, f), false);
        boundary_ghosts(&g, in, t, k - 1);
        stencil(&g, in, out, t);
        send_faces(ctx, out, sendbuf, t, k % 2);
        all_met(t);
    }
    if (t == 0)
        elapsed = now() - t0;
    if (ctx != SHMEM_CTX_DEFAULT && ctx != shared_ctx)
        shmem_ctx_destroy(ctx);
    free(sendbuf);
    return NULL;
}

static double times[1024];
static long wrong_total;

int main(int argc, char **argv)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    int me = shmem_my_pe(), np = shmem_n_pes();
    if (opts_parse(argc, argv, &o, true) != 0 || np > 1024) {
        if (me == 0)
            fprintf(stderr, "usage: halo3d_shmem [--size N] [--iters K] [--threads T<=N] "
                            "[--ctx default|shared|private] (at most 1024 PEs)\n");
        shmem_finalize();
        return 2;
    }
    if (provided < SHMEM_THREAD_MULTIPLE && o.threads > 1) {
        if (me == 0)
            fprintf(stderr, "halo3d: this OpenSHMEM gives no SHMEM_THREAD_MULTIPLE\n");
        shmem_finalize();
        return 1;
    }
    grid_make(&g, o.n, o.threads, me, np);
    recvbuf = shmem_malloc(sizeof(double) * 12 * (size_t)o.n * (size_t)o.n);
    if (!recvbuf || fields_make(&g, fields) != 0) {
        fprintf(stderr, "halo3d: out of memory\n");
        shmem_global_exit(1);
    }
    if (!strcmp(o.ctx, "shared") && shmem_ctx_create(0, &shared_ctx) != 0) {
        fprintf(stderr, "halo3d: no shared context\n");
        shmem_global_exit(1);
    }
    pthread_barrier_init(&threads_met, NULL, (unsigned)o.threads);
    run_threads(o.threads, worker);
    long wrong = field_wrong(&g, fields[o.iters % 2], o.iters);
    shmem_double_p(&times[me], elapsed, 0);
    shmem_long_atomic_add(&wrong_total, wrong, 0);
    shmem_barrier_all();
    if (me == 0) {
        double slowest = 0;
        for (int p = 0; p < np; p++)
            slowest = times[p] > slowest ? times[p] : slowest;
        double us = slowest / o.iters * 1e6;
        printf("halo3d shmem ctx=%s: %d PEs (%dx%dx%d) x %d threads, block %d^3, %d iterations: "
               "%.2f us/iter, check %s (%ld cells wrong)\n",
               o.ctx, np, g.dims[0], g.dims[1], g.dims[2], o.threads, o.n, o.iters, us,
               wrong_total ? "FAILED" : "ok", wrong_total);
        printf("csv,halo3d_shmem_%s,%d,us_per_iter,%.3f\n", o.ctx, o.threads, us);
    }
    int failed = wrong_total != 0;
    if (!strcmp(o.ctx, "shared"))
        shmem_ctx_destroy(shared_ctx);
    pthread_barrier_destroy(&threads_met);
    free(fields[0]);
    free(fields[1]);
    shmem_free(recvbuf);
    shmem_finalize();
    return failed;
}
