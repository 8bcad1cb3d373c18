/* One-sided communication from many threads at MPI_THREAD_MULTIPLE: inside
 * one lock_all epoch each thread fetches-and-adds, accumulates, puts and
 * gets on every rank and flushes its own targets; the counters add up. */
#include <pthread.h>
#include <stdint.h>

#include "mpitest.h"

#define THREADS 4
#define ROUNDS  200

static MPI_Win win;
static int me, np;
static int64_t *mem;

static void *worker(void *arg)
{
    int tid = (int)(intptr_t)arg;
    int64_t one = 1, prev, mine = me * 100 + tid, back;
    intptr_t bad = 0; /* counted here: the checks' counters are not thread-safe */
    for (int k = 0; k < ROUNDS; k++) {
        int t = (k + tid + me) % np;
        MPI_MUST(MPI_Fetch_and_op(&one, &prev, MPI_INT64_T, t, 0, MPI_SUM, win));
        MPI_MUST(MPI_Accumulate(&one, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, MPI_SUM, win));
        /* Slot of this rank's thread at t: nobody else writes it. */
        MPI_MUST(MPI_Put(&mine, 1, MPI_INT64_T, t, 2 + me * THREADS + tid, 1, MPI_INT64_T, win));
        MPI_MUST(MPI_Win_flush(t, win));
        MPI_MUST(MPI_Get(&back, 1, MPI_INT64_T, t, 2 + me * THREADS + tid, 1, MPI_INT64_T, win));
        MPI_MUST(MPI_Win_flush_local(t, win));
        bad += back != mine;
        bad += prev < 0 || prev >= (int64_t)np * THREADS * ROUNDS;
    }
    return (void *)bad;
}

static void run(int flavor)
{
    MPI_Aint bytes = (2 + np * THREADS) * sizeof(int64_t);
    int64_t *own = NULL;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        own = mem = calloc(2 + np * THREADS, sizeof *mem);
        MPI_MUST(MPI_Win_create(mem, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        MPI_MUST(MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        memset(mem, 0, (size_t)bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_MUST(MPI_Win_lock_all(0, win));
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) {
        void *bad;
        pthread_join(th[i], &bad);
        CHECK(bad == NULL);
    }
    MPI_MUST(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* Each thread of each rank sent ROUNDS of each, spread evenly when np
     * divides ROUNDS; count what every rank got instead. */
    int64_t want = 0;
    for (int r = 0; r < np; r++)
        for (int tid = 0; tid < THREADS; tid++)
            for (int k = 0; k < ROUNDS; k++)
                want += (k + tid + r) % np == me;
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
    CHECK(mem[0] == want && mem[1] == want);
    MPI_Win_unlock(me, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_MUST(MPI_Win_free(&win));
    free(own);
}

int main(int argc, char **argv)
{
    mt_init_multiple(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    run(MPI_WIN_FLAVOR_ALLOCATE);
    run(MPI_WIN_FLAVOR_CREATE);
    return mt_finish("win_threads");
}
