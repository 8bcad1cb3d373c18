/* mandelbrot: a Mandelbrot image computed by the threads of all PEs with
 * work stealing (seed 002's second benchmark). The rows are cut into units;
 * PE p owns a contiguous share of them and a symmetric counter, the next
 * unit of its share. A thread takes units from its own PE's counter with an
 * atomic fetch-and-increment, then steals: the next PEs' counters in turn,
 * round-robin, until every share is exhausted. The atomics go through the
 * default context, or through a private context per thread (--ctx).
 *
 * Each pixel's iteration count (0 to --max, 4096) goes into two checksums
 * (the sum, and a position-weighted sum modulo a prime), which do not depend
 * on who computed what; --check recomputes them serially on PE 0.
 *
 *   oshrun -n P mandelbrot [--width W] [--height H] [--max M] [--rows R]
 *                          [--threads T] [--ctx default|private] [--check]
 */
#include <pthread.h>
#include <stdbool.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PRIME 1000000007L

static int width = 3200, height = 3200, maxit = 4096, rows_per_unit = 4, threads = 1;
static const char *ctx_kind = "private";
static int me, npes, units;

static long next_unit; /* symmetric: the next unit of this PE's share */
static long total_sum, total_weighted, total_units, total_stolen; /* on PE 0 */
static double times[1024];

static int share_start(int pe)
{
    return (int)((long)units * pe / npes);
}

static int escape(int x, int y)
{
    double cr = -2.0 + 3.0 * x / width, ci = -1.5 + 3.0 * y / height, zr = 0, zi = 0;
    int it = 0;
    while (it < maxit && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        it++;
    }
    return it;
}

/* The checksums of unit u's rows, added to *sum and *weighted. */
static void compute_unit(int u, long *sum, long *weighted)
{
    int y1 = (u + 1) * rows_per_unit < height ? (u + 1) * rows_per_unit : height;
    for (int y = u * rows_per_unit; y < y1; y++)
        for (int x = 0; x < width; x++) {
            long c = escape(x, y);
            *sum += c;
            *weighted = (*weighted + c * (((long)y * width + x) % 1000003)) % PRIME;
        }
}

static void *worker(void *arg)
{
    (void)arg;
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (!strcmp(ctx_kind, "private") && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        fprintf(stderr, "mandelbrot: PE %d: no private context\n", me);
        shmem_global_exit(1);
    }
    long sum = 0, weighted = 0, done = 0, stolen = 0;
    /* My own share first, then the others' in turn. */
    for (int k = 0; k < npes; k++) {
        int pe = (me + k) % npes, end = share_start(pe + 1);
        for (;;) {
            long u = shmem_ctx_long_atomic_fetch_inc(ctx, &next_unit, pe);
            if (u >= end)
                break;
            compute_unit((int)u, &sum, &weighted);
            done++;
            stolen += k > 0;
        }
    }
    shmem_ctx_long_atomic_add(ctx, &total_sum, sum, 0);
    shmem_ctx_long_atomic_add(ctx, &total_weighted, weighted, 0);
    shmem_ctx_long_atomic_add(ctx, &total_units, done, 0);
    shmem_ctx_long_atomic_add(ctx, &total_stolen, stolen, 0);
    shmem_ctx_quiet(ctx);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    int check = 0, bad = npes > 1024;
    for (int i = 1; i < argc && !bad; i++) {
        int *opt = !strcmp(argv[i], "--width")     ? &width
                   : !strcmp(argv[i], "--height")  ? &height
                   : !strcmp(argv[i], "--max")     ? &maxit
                   : !strcmp(argv[i], "--rows")    ? &rows_per_unit
                   : !strcmp(argv[i], "--threads") ? &threads
                                                   : NULL;
        if (opt && i + 1 < argc)
            *opt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ctx") && i + 1 < argc)
            ctx_kind = argv[++i];
        else if (!strcmp(argv[i], "--check"))
            check = 1;
        else
            bad = 1;
    }
    if (bad || width < 1 || height < 1 || maxit < 0 || rows_per_unit < 1 || threads < 1 ||
        (strcmp(ctx_kind, "default") && strcmp(ctx_kind, "private"))) {
        if (me == 0)
            fprintf(stderr, "usage: mandelbrot [--width W] [--height H] [--max M] [--rows R] "
                            "[--threads T] [--ctx default|private] [--check] (at most 1024 PEs)\n");
        shmem_finalize();
        return 2;
    }
    if (provided < SHMEM_THREAD_MULTIPLE && threads > 1) {
        if (me == 0)
            fprintf(stderr, "mandelbrot: this OpenSHMEM gives no SHMEM_THREAD_MULTIPLE\n");
        shmem_finalize();
        return 1;
    }
    units = (height + rows_per_unit - 1) / rows_per_unit;
    next_unit = share_start(me);
    shmem_barrier_all();
    double t0 = now();
    pthread_t *ids = malloc(sizeof *ids * (size_t)threads);
    for (int t = 1; t < threads; t++)
        pthread_create(&ids[t], NULL, worker, NULL);
    worker(NULL);
    for (int t = 1; t < threads; t++)
        pthread_join(ids[t], NULL);
    shmem_double_p(&times[me], now() - t0, 0);
    shmem_barrier_all();
    int failed = 0;
    if (me == 0) {
        double slowest = 0;
        for (int p = 0; p < npes; p++)
            slowest = times[p] > slowest ? times[p] : slowest;
        long weighted = total_weighted % PRIME;
        printf("mandelbrot ctx=%s: %dx%d, up to %d iterations, %d PEs x %d threads: %.3f s, "
               "%.2f Mpixel/s; %ld units, %ld stolen; checksum %ld / %ld\n",
               ctx_kind, width, height, maxit, npes, threads, slowest,
               (double)width * height / slowest / 1e6, total_units, total_stolen, total_sum,
               weighted);
        printf("csv,mandelbrot_%s,%d,seconds,%.4f\n", ctx_kind, threads, slowest);
        if (total_units != units) {
            printf("mandelbrot: check FAILED: %ld units computed, %d in the image\n", total_units,
                   units);
            failed = 1;
        }
        if (check) {
            long sum = 0, w = 0;
            for (int u = 0; u < units; u++)
                compute_unit(u, &sum, &w);
            bool same = sum == total_sum && w == weighted;
            printf("mandelbrot: check %s (serial checksum %ld / %ld)\n", same ? "ok" : "FAILED",
                   sum, w);
            failed |= !same;
        }
    }
    free(ids);
    shmem_finalize();
    return failed;
}
