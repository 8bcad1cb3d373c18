/* halo3d, MPI: the same exchange as halo3d_shmem.c (halo3d.h), each thread
 * sending and receiving its own parts of the faces with MPI_Isend/MPI_Irecv
 * (MPI_THREAD_MULTIPLE, a tag per face and thread) and waiting for them;
 * messages synchronize, so no barrier ends an iteration.
 *
 *   mpirun -n P halo3d_mpi [--size N] [--iters K] [--threads T]
 */
#include <mpi.h>

#include "halo3d.h"

static grid_t g;
static opts_t o;
static double *recvbuf; /* [parity][face][n*n] */
static pthread_barrier_t threads_met;
static double *fields[2];
static double elapsed;

static double *face_buf(int parity, int f)
{
    return recvbuf + ((size_t)parity * 6 + (size_t)f) * (size_t)g.n * (size_t)g.n;
}

/* Thread t's parts of u's faces out, the neighbors' parts for the same
 * iteration in (into the buffers of parity), then waits for both. */
static void exchange(double *u, double *sendbuf, int t, int parity)
{
    MPI_Request reqs[12];
    int n = 0;
    size_t nn = (size_t)g.n * (size_t)g.n;
    for (int f = 0; f < 6; f++) {
        size_t off, len;
        face_part(&g, f, t, &off, &len);
        if (g.nbr[f] < 0 || len == 0)
            continue;
        /* What arrives on my face f is the neighbor's face f^1, tagged by
         * the receiving face and the thread. */
        MPI_Irecv(face_buf(parity, f) + off, (int)len, MPI_DOUBLE, g.nbr[f], f * g.threads + t,
                  MPI_COMM_WORLD, &reqs[n++]);
        double *out = sendbuf + (size_t)f * nn;
        face_copy(&g, u, f, t, face_plane(&g, f, false), out, true);
        MPI_Isend(out + off, (int)len, MPI_DOUBLE, g.nbr[f], (f ^ 1) * g.threads + t,
                  MPI_COMM_WORLD, &reqs[n++]);
    }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    double *sendbuf = malloc(sizeof(double) * 6 * (size_t)g.n * (size_t)g.n);
    if (!sendbuf) {
        fprintf(stderr, "halo3d: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    exchange(fields[0], sendbuf, t, 0);
    pthread_barrier_wait(&threads_met);
    if (t == 0)
        MPI_Barrier(MPI_COMM_WORLD); /* start the clock together */
    pthread_barrier_wait(&threads_met);
    double t0 = MPI_Wtime();
    for (int k = 1; k <= o.iters; k++) {
        double *in = fields[(k - 1) % 2], *out = fields[k % 2];
        for (int f = 0; f < 6; f++)
            if (g.nbr[f] >= 0)
                face_copy(&g, in, f, t, face_plane(&g, f, true), face_buf((k - 1) % 2, f), false);
        boundary_ghosts(&g, in, t, k - 1);
        stencil(&g, in, out, t);
        exchange(out, sendbuf, t, k % 2);
        pthread_barrier_wait(&threads_met); /* every slab done before the next reads it */
    }
    if (t == 0)
        elapsed = MPI_Wtime() - t0;
    free(sendbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, me, np;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (opts_parse(argc, argv, &o, false) != 0) {
        if (me == 0)
            fprintf(stderr, "usage: halo3d_mpi [--size N] [--iters K] [--threads T<=N]\n");
        MPI_Finalize();
        return 2;
    }
    if (provided < MPI_THREAD_MULTIPLE && o.threads > 1) {
        if (me == 0)
            fprintf(stderr, "halo3d: this MPI gives no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 1;
    }
    grid_make(&g, o.n, o.threads, me, np);
    recvbuf = malloc(sizeof(double) * 12 * (size_t)o.n * (size_t)o.n);
    if (!recvbuf || fields_make(&g, fields) != 0) {
        fprintf(stderr, "halo3d: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    pthread_barrier_init(&threads_met, NULL, (unsigned)o.threads);
    run_threads(o.threads, worker);
    long wrong = field_wrong(&g, fields[o.iters % 2], o.iters), wrong_total;
    double slowest;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        double us = slowest / o.iters * 1e6;
        printf("halo3d mpi: %d ranks (%dx%dx%d) x %d threads, block %d^3, %d iterations: "
               "%.2f us/iter, check %s (%ld cells wrong)\n",
               np, g.dims[0], g.dims[1], g.dims[2], o.threads, o.n, o.iters, us,
               wrong_total ? "FAILED" : "ok", wrong_total);
        printf("csv,halo3d_mpi,%d,us_per_iter,%.3f\n", o.threads, us);
    }
    pthread_barrier_destroy(&threads_met);
    free(fields[0]);
    free(fields[1]);
    free(recvbuf);
    MPI_Finalize();
    return wrong_total != 0;
}
