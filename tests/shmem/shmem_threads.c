/* Threads with their own contexts (SHMEM_THREAD_MULTIPLE): each of T threads
 * on every PE adds to its own counter on every PE through a private
 * context, and all of them to one shared counter through the default
 * context, with puts of their own slots in between; after a barrier every
 * count is exact. Run under ThreadSanitizer too. */
#include <pthread.h>
#include <shmem.h>
#include <stdio.h>

#define T     4
#define ITERS 2000

static long counters[T];
static long shared_counter;
static long slots[T][16];
static int me, npes;

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    long mine[16];
    for (int i = 0; i < ITERS; i++) {
        int pe = i % npes;
        shmem_ctx_long_atomic_add(ctx, &counters[t], 1, pe);
        shmem_long_atomic_inc(&shared_counter, pe);
        if (i % 100 == 0) {
            for (int k = 0; k < 16; k++)
                mine[k] = me * 1000000L + t * 1000 + i / 100;
            shmem_ctx_long_put_nbi(ctx, slots[t], mine, 16, (me + 1) % npes);
        }
    }
    shmem_ctx_quiet(ctx);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    return NULL;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (provided != SHMEM_THREAD_MULTIPLE) {
        fprintf(stderr, "provided %d\n", provided);
        shmem_global_exit(1);
    }
    pthread_t th[T];
    for (long t = 0; t < T; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    shmem_barrier_all();
    int bad = 0;
    /* Every PE's threads add ITERS / npes (and the remainder to the first
     * PEs) to each PE's counters. */
    long per = 0;
    for (int i = 0; i < ITERS; i++)
        per += i % npes == me;
    for (int t = 0; t < T; t++) {
        long v = __atomic_load_n(&counters[t], __ATOMIC_RELAXED);
        if (v != per * npes) {
            fprintf(stderr, "PE %d: counter %d = %ld, want %ld\n", me, t, v, per * npes);
            bad = 1;
        }
        int left = (me + npes - 1) % npes;
        long want = left * 1000000L + t * 1000 + (ITERS - 1) / 100;
        for (int k = 0; k < 16; k++)
            if (slots[t][k] != want) {
                fprintf(stderr, "PE %d: slot %d %d = %ld, want %ld\n", me, t, k, slots[t][k], want);
                bad = 1;
                break;
            }
    }
    if (__atomic_load_n(&shared_counter, __ATOMIC_RELAXED) != per * npes * T) {
        fprintf(stderr, "PE %d: shared counter %ld\n", me, shared_counter);
        bad = 1;
    }
    if (bad)
        shmem_global_exit(1);
    shmem_finalize();
    if (me == 0)
        printf("shmem_threads: %d PEs x %d threads ok\n", npes, T);
    return 0;
}
