/* cholesky: tiled Cholesky factorization A = L L^T on apps/taskrt (seed 000's
 * workload: Chameleon's dpotrf on StarPU). The lower triangle of an N x N
 * symmetric positive definite matrix in T x T tiles, tile (i, j) owned by
 * rank (i mod P) * Q + (j mod Q) of a P x Q grid (2-D block-cyclic); the
 * right-looking algorithm as a task flow:
 *
 *   for k:  POTRF(A[k][k])
 *           TRSM(A[k][k] -> A[i][k])          i > k
 *           SYRK(A[i][k] -> A[i][i])          i > k
 *           GEMM(A[i][k], A[j][k] -> A[i][j])  i > j > k
 *
 * with OpenBLAS/LAPACKE kernels. --check gathers L on rank 0 and prints the
 * residual ||A - L L^T||_F / ||A||_F (the run fails above 1e-10).
 *
 *   mpirun -n P cholesky [--n N] [--tile T] [--workers W] [--backend mpi|native|bcast]
 *                        [--check]
 *
 * Set OPENBLAS_NUM_THREADS=1: the workers are the parallelism. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskrt.h"

static int nt, b, grid_p, grid_q;

static int tile_id(int i, int j)
{
    return i * (i + 1) / 2 + j;
}

static int owner(int tile, void *arg)
{
    (void)arg;
    int i = 0;
    while ((i + 1) * (i + 2) / 2 <= tile)
        i++;
    int j = tile - i * (i + 1) / 2;
    return (i % grid_p) * grid_q + (j % grid_q);
}

/* A(gi, gj): symmetric, entries in [-0.5, 0.5] from a hash, plus N on the
 * diagonal: positive definite. */
static double a_of(long gi, long gj, long n)
{
    long lo = gi < gj ? gi : gj, hi = gi < gj ? gj : gi;
    uint64_t x = (uint64_t)(lo * 1000003 + hi) * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    double v = (double)(x >> 11) / 9007199254740992.0 - 0.5;
    return gi == gj ? v + (double)n : v;
}

/* Tile (i, j) of A, column-major. */
static void tile_fill(double *t, int i, int j)
{
    long n = (long)nt * b;
    for (int c = 0; c < b; c++)
        for (int r = 0; r < b; r++)
            t[(size_t)c * b + r] = a_of((long)i * b + r, (long)j * b + c, n);
}

typedef struct {
    int i, j, k;
} args_t;

static void potrf(void **t, const void *a)
{
    (void)a;
    if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', b, t[0], b) != 0) {
        fprintf(stderr, "cholesky: dpotrf failed: the matrix is not positive definite\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void trsm(void **t, const void *a)
{
    (void)a; /* A[i][k] = A[i][k] L[k][k]^-T */
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, b, b, 1.0, t[0], b,
                t[1], b);
}

static void syrk(void **t, const void *a)
{
    (void)a; /* A[i][i] -= A[i][k] A[i][k]^T */
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, b, b, -1.0, t[0], b, 1.0, t[1], b);
}

static void gemm(void **t, const void *a)
{
    (void)a; /* A[i][j] -= A[i][k] A[j][k]^T */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, b, b, -1.0, t[0], b, t[1], b, 1.0, t[2],
                b);
}

static void submit_all(taskrt_t *rt)
{
    const int R = TASKRT_R, RW = TASKRT_RW;
    for (int k = 0; k < nt; k++) {
        args_t a = {k, k, k};
        taskrt_submit(rt, potrf, &a, sizeof a, 1, (int[]){tile_id(k, k)}, (int[]){RW});
        for (int i = k + 1; i < nt; i++)
            taskrt_submit(rt, trsm, &a, sizeof a, 2, (int[]){tile_id(k, k), tile_id(i, k)},
                          (int[]){R, RW});
        for (int i = k + 1; i < nt; i++) {
            taskrt_submit(rt, syrk, &a, sizeof a, 2, (int[]){tile_id(i, k), tile_id(i, i)},
                          (int[]){R, RW});
            for (int j = k + 1; j < i; j++)
                taskrt_submit(rt, gemm, &a, sizeof a, 3,
                              (int[]){tile_id(i, k), tile_id(j, k), tile_id(i, j)},
                              (int[]){R, R, RW});
        }
    }
}

/* ||A - L L^T||_F / ||A||_F with L gathered on rank 0. */
static double residual(taskrt_t *rt, int rank)
{
    long n = (long)nt * b;
    size_t tb = (size_t)b * b;
    double *l = NULL;
    if (rank == 0)
        l = calloc((size_t)(n * n), sizeof *l);
    double *buf = malloc(sizeof *buf * tb);
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++) {
            int t = tile_id(i, j), o = owner(t, NULL);
            double *src = taskrt_tile(rt, t);
            if (rank == o && rank != 0)
                MPI_Send(src, (int)tb, MPI_DOUBLE, 0, t, MPI_COMM_WORLD);
            if (rank != 0)
                continue;
            if (o != 0) {
                MPI_Recv(buf, (int)tb, MPI_DOUBLE, o, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                src = buf;
            }
            for (int c = 0; c < b; c++)
                for (int r = 0; r < b; r++) {
                    long gi = (long)i * b + r, gj = (long)j * b + c;
                    if (gi >= gj) /* the tile's upper part holds A, not L */
                        l[gj * n + gi] = src[(size_t)c * b + r];
                }
        }
    free(buf);
    if (rank != 0)
        return 0;
    double *llt = malloc(sizeof *llt * (size_t)(n * n));
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)n, 1.0, l, (int)n, l,
                (int)n, 0.0, llt, (int)n);
    double num = 0, den = 0;
    for (long c = 0; c < n; c++)
        for (long r = 0; r < n; r++) {
            double a = a_of(r, c, n), d = a - llt[c * n + r];
            num += d * d;
            den += a * a;
        }
    free(l);
    free(llt);
    return sqrt(num / den);
}

int main(int argc, char **argv)
{
    int n = 1024, workers = 2, check = 0, backend = TASKRT_MPI;
    b = 128;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tile") && i + 1 < argc)
            b = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
            workers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            i++;
            backend = taskrt_backend(argv[i]);
        } else if (!strcmp(argv[i], "--check"))
            check = 1;
        else
            backend = -1;
    }
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (backend < 0 || b < 1 || n < b || n % b || workers < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: cholesky [--n N] [--tile T (dividing N)] [--workers W] "
                            "[--backend mpi|native|bcast] [--check]\n");
        MPI_Finalize();
        return 2;
    }
    nt = n / b;
    for (grid_p = (int)sqrt((double)size); size % grid_p; grid_p--)
        ;
    grid_q = size / grid_p;
    taskrt_t *rt;
    if (taskrt_create(backend, workers, nt * (nt + 1) / 2, sizeof(double) * (size_t)b * b, owner,
                      NULL, &rt) != 0) {
        MPI_Finalize();
        return 1;
    }
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++)
            if (taskrt_tile(rt, tile_id(i, j)))
                tile_fill(taskrt_tile(rt, tile_id(i, j)), i, j);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    submit_all(rt);
    int rc = taskrt_run(rt);
    double t = MPI_Wtime() - t0;
    taskrt_stats_t st;
    taskrt_stats(rt, &st);
    long mine[3] = {st.tasks, st.sent, st.recv}, all[3];
    MPI_Reduce(mine, all, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int failed = rc != 0;
    if (rank == 0) {
        double gflops = (double)n * n * n / 3.0 / t / 1e9;
        printf("cholesky %s: N=%d tile=%d (%dx%d tiles), %d ranks (%dx%d) x %d workers: %.3f s, "
               "%.2f GFlop/s; %ld tasks, %ld tiles sent\n",
               taskrt_backend_name(backend), n, b, nt, nt, size, grid_p, grid_q, workers, t, gflops,
               all[0], all[1]);
        printf("csv,cholesky_%s,%d,gflops,%.4f\n", taskrt_backend_name(backend), n, gflops);
        if (all[1] != all[2]) {
            printf("cholesky: check FAILED: %ld tiles sent, %ld received\n", all[1], all[2]);
            failed = 1;
        }
    }
    if (check) {
        double res = residual(rt, rank);
        if (rank == 0) {
            bool good = res < 1e-10;
            printf("cholesky: residual ||A - LL^T|| / ||A|| = %.3e: check %s\n", res,
                   good ? "ok" : "FAILED");
            failed |= !good;
        }
    }
    taskrt_free(rt);
    MPI_Finalize();
    return failed;
}
