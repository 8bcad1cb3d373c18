/* Truly passive target (MPI 3.1 §11.5.3): an origin locks, puts, gets,
 * accumulates, flushes and unlocks while the target computes and makes no
 * MPI call at all, waiting on a flag the origin puts last. Argument: the
 * flavours to try, "mapped" (the ones weft allocates, which need nothing of
 * the target on one node) or "all" (run with a progress thread, which
 * serves the others). Needs 2 ranks. */
#include <stdint.h>
#include <unistd.h>

#include "mpitest.h"

#define WORDS (1 << 17) /* 1 MiB of int64 */

static void passive(int flavor, int me)
{
    MPI_Aint bytes = (WORDS + 8) * sizeof(int64_t);
    int64_t *mem = NULL, *own = NULL;
    MPI_Win win;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        own = mem = calloc(WORDS + 8, sizeof *mem);
        MPI_MUST(MPI_Win_create(mem, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        MPI_MUST(MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    } else {
        MPI_MUST(MPI_Win_allocate_shared(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    }
    /* Local stores inside an epoch of its own, before anybody accesses. */
    MPI_MUST(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    memset(mem, 0, (size_t)bytes);
    MPI_MUST(MPI_Win_unlock(me, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t *flag = &mem[WORDS];
    if (me == 1) {
        /* Compute, and look at the flag: no MPI call until it is set. */
        double x = 1;
        long spins = 0;
        while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
            for (int i = 0; i < 1000; i++)
                x = x * 1.0000001 + 1e-9;
            spins++;
        }
        /* Its public and private copies agree (§11.4): the origin's data. */
        MPI_Win_sync(win);
        int ok = 1;
        for (int i = 0; i < WORDS; i++)
            ok &= mem[i] == 3 * (int64_t)i + 1;
        CHECK(ok);
        CHECK(mem[WORDS + 1] == 10);
        volatile double keep = x + (double)spins; /* the computation is not optimized away */
        (void)keep;
    } else if (me == 0) {
        int64_t *src = malloc(WORDS * sizeof *src), *back = malloc(WORDS * sizeof *back);
        for (int i = 0; i < WORDS; i++)
            src[i] = 3 * (int64_t)i;
        int64_t one = 1, ten = 10, prev = -1;
        MPI_MUST(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        MPI_MUST(MPI_Put(src, WORDS, MPI_INT64_T, 1, 0, WORDS, MPI_INT64_T, win));
        MPI_MUST(MPI_Win_flush(1, win));
        for (int i = 0; i < WORDS; i++)
            src[i] = 1;
        MPI_MUST(MPI_Accumulate(src, WORDS, MPI_INT64_T, 1, 0, WORDS, MPI_INT64_T, MPI_SUM, win));
        MPI_MUST(MPI_Fetch_and_op(&ten, &prev, MPI_INT64_T, 1, WORDS + 1, MPI_SUM, win));
        MPI_MUST(MPI_Win_flush(1, win));
        MPI_MUST(MPI_Get(back, WORDS, MPI_INT64_T, 1, 0, WORDS, MPI_INT64_T, win));
        MPI_MUST(MPI_Win_flush(1, win));
        int ok = prev == 0;
        for (int i = 0; i < WORDS; i++)
            ok &= back[i] == 3 * (int64_t)i + 1;
        CHECK(ok);
        /* The flag last, atomically: the target reads it while it changes. */
        MPI_MUST(MPI_Accumulate(&one, 1, MPI_INT64_T, 1, WORDS, 1, MPI_INT64_T, MPI_REPLACE, win));
        MPI_MUST(MPI_Win_unlock(1, win));
        free(src);
        free(back);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_MUST(MPI_Win_free(&win));
    free(own);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2) {
        MPI_Finalize();
        return 77;
    }
    int all = argc > 1 && !strcmp(argv[1], "all");
    if (all)
        passive(MPI_WIN_FLAVOR_CREATE, me);
    passive(MPI_WIN_FLAVOR_ALLOCATE, me);
    MPI_Comm node;
    int nsize;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    if (nsize == np) /* shared memory needs one node */
        passive(MPI_WIN_FLAVOR_SHARED, me);
    return mt_finish("win_passive");
}
