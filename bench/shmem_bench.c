/* OpenSHMEM benchmarks, one source for every OpenSHMEM (build it with each
 * one's oshcc; bench/run_shmem.sh runs weft's and Open MPI's alternately):
 *
 *   put, get   latency of a blocking shmem_putmem (then shmem_quiet) /
 *              shmem_getmem from PE 0 to PE 1, 8 B to --max bytes
 *   put_mr     8-byte shmem_putmem_nbi in windows of 64, then shmem_quiet:
 *              million puts per second
 *   atomics    fetch_add, add (then quiet), compare_swap, fetch: latency
 *   ctx        T threads (1, 2, 4) on PE 0, each putting windows of 64 x 8 B
 *              to PE 1 with shmem_ctx_putmem_nbi + shmem_ctx_quiet, on a
 *              private context each, one shared context, or the default
 *              one: million puts per second, all threads' puts over the
 *              time from the first start to the last end
 *
 * Each value is the median of --runs batches; PE 0 prints csv lines
 * (bench_csv). Other PEs idle in a barrier. */
#include <pthread.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static int me, npes;
static int runs = 11;
static size_t max_size = (size_t)4 << 20;
static char *heap_buf;

static double median_of(double *v)
{
    return bench_median(v, runs);
}

static int iters_for(size_t n)
{
    return n <= 4096 ? 2000 : n <= 65536 ? 500 : 50;
}

static void bench_putget(void)
{
    char *local = malloc(max_size);
    memset(local, 1, max_size);
    double *v = malloc(sizeof(double) * (size_t)runs);
    for (int g = 0; g < 2; g++) {
        for (size_t n = 8; n <= max_size; n *= 2) {
            int it = iters_for(n);
            for (int r = 0; r < runs; r++) {
                shmem_barrier_all();
                if (me == 0) {
                    double t0 = bench_now_us();
                    for (int i = 0; i < it; i++) {
                        if (g == 0) {
                            shmem_putmem(heap_buf, local, n, 1);
                            shmem_quiet();
                        } else {
                            shmem_getmem(local, heap_buf, n, 1);
                        }
                    }
                    v[r] = (bench_now_us() - t0) / it;
                }
            }
            if (me == 0)
                bench_csv(g == 0 ? "put" : "get", (double)n, "latency_us", median_of(v));
        }
    }
    free(v);
    free(local);
}

static void bench_put_mr(void)
{
    double *v = malloc(sizeof(double) * (size_t)runs);
    long src = 42;
    for (int r = 0; r < runs; r++) {
        shmem_barrier_all();
        if (me == 0) {
            int windows = 2000;
            double t0 = bench_now_us();
            for (int w = 0; w < windows; w++) {
                for (int i = 0; i < 64; i++)
                    shmem_putmem_nbi(heap_buf + 8 * i, &src, 8, 1);
                shmem_quiet();
            }
            v[r] = windows * 64.0 / (bench_now_us() - t0);
        }
    }
    if (me == 0)
        bench_csv("put_mr", 8, "rate_Mputs", median_of(v));
    free(v);
}

static void bench_atomics(void)
{
    long *target = (long *)heap_buf;
    double *v = malloc(sizeof(double) * (size_t)runs);
    const char *names[] = {"fetch_add", "add", "compare_swap", "fetch"};
    for (int k = 0; k < 4; k++) {
        for (int r = 0; r < runs; r++) {
            shmem_barrier_all();
            if (me == 0) {
                int it = 5000;
                long sink = 0;
                double t0 = bench_now_us();
                for (int i = 0; i < it; i++) {
                    switch (k) {
                    case 0:
                        sink += shmem_long_atomic_fetch_add(target, 1, 1);
                        break;
                    case 1:
                        shmem_long_atomic_add(target, 1, 1);
                        shmem_quiet();
                        break;
                    case 2:
                        sink += shmem_long_atomic_compare_swap(target, i, i + 1, 1);
                        break;
                    default:
                        sink += shmem_long_atomic_fetch(target, 1);
                        break;
                    }
                }
                v[r] = (bench_now_us() - t0) / it;
                if (sink == -1)
                    printf("%ld\n", sink);
            }
        }
        if (me == 0)
            bench_csv(names[k], 8, "latency_us", median_of(v));
    }
    free(v);
}

#define CTX_WINDOWS 1000

typedef struct ctx_arg {
    int t, mode; /* 0 private, 1 shared, 2 default */
    shmem_ctx_t shared;
    double t0, t1; /* when this thread's puts began and ended */
    pthread_barrier_t *start;
} ctx_arg_t;

static void *ctx_worker(void *p)
{
    ctx_arg_t *a = p;
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (a->mode == 0 && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    if (a->mode == 1)
        ctx = a->shared;
    long src = a->t;
    char *dst = heap_buf + 4096 * (a->t + 1);
    pthread_barrier_wait(a->start);
    int windows = CTX_WINDOWS;
    a->t0 = bench_now_us();
    for (int w = 0; w < windows; w++) {
        for (int i = 0; i < 64; i++)
            shmem_ctx_putmem_nbi(ctx, dst + 8 * i, &src, 8, 1);
        shmem_ctx_quiet(ctx);
    }
    a->t1 = bench_now_us();
    if (a->mode == 0 && ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    return NULL;
}

static void bench_ctx(void)
{
    const char *modes[] = {"ctx_private", "ctx_shared", "ctx_default"};
    double *v = malloc(sizeof(double) * (size_t)runs);
    for (int mode = 0; mode < 3; mode++) {
        for (int T = 1; T <= 4; T *= 2) {
            for (int r = 0; r < runs; r++) {
                shmem_barrier_all();
                if (me != 0)
                    continue;
                shmem_ctx_t shared = SHMEM_CTX_DEFAULT;
                if (mode == 1 && shmem_ctx_create(0, &shared) != 0)
                    shared = SHMEM_CTX_DEFAULT;
                pthread_t th[4];
                ctx_arg_t args[4];
                pthread_barrier_t start;
                pthread_barrier_init(&start, NULL, (unsigned)T);
                for (int t = 0; t < T; t++) {
                    args[t] = (ctx_arg_t){.t = t, .mode = mode, .shared = shared, .start = &start};
                    pthread_create(&th[t], NULL, ctx_worker, &args[t]);
                }
                /* All the puts over the time from the first start to the last
                 * end: threads that take turns on fewer cores do not add up. */
                double first = 0, last = 0;
                for (int t = 0; t < T; t++) {
                    pthread_join(th[t], NULL);
                    if (t == 0 || args[t].t0 < first)
                        first = args[t].t0;
                    if (t == 0 || args[t].t1 > last)
                        last = args[t].t1;
                }
                pthread_barrier_destroy(&start);
                if (mode == 1 && shared != SHMEM_CTX_DEFAULT)
                    shmem_ctx_destroy(shared);
                v[r] = T * CTX_WINDOWS * 64.0 / (last - first);
            }
            if (me == 0)
                bench_csv(modes[mode], T, "rate_Mputs", median_of(v));
        }
    }
    free(v);
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max_size = bench_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
    }
    if (runs < 1)
        runs = 1;
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes < 2) {
        if (me == 0)
            fprintf(stderr, "shmem_bench: needs 2 PEs\n");
        shmem_finalize();
        return 77;
    }
    size_t need = max_size > 65536 ? max_size : 65536;
    heap_buf = shmem_malloc(need);
    memset(heap_buf, 0, need);
    shmem_barrier_all();
    if (!only || !strcmp(only, "putget"))
        bench_putget();
    if (!only || !strcmp(only, "put_mr"))
        bench_put_mr();
    if (!only || !strcmp(only, "atomics"))
        bench_atomics();
    if ((!only || !strcmp(only, "ctx")) && provided == SHMEM_THREAD_MULTIPLE)
        bench_ctx();
    shmem_barrier_all();
    shmem_free(heap_buf);
    shmem_finalize();
    return 0;
}
