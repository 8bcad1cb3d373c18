/* One-sided communication with a dead target (mpirun --keep-going, 2 ranks,
 * WEFT_RMA_MAP=0 so that every operation is a request to the target).
 *
 *   fault_win early|late
 *
 * Rank 1 leaves (_exit) right after the window is made: `early` once rank 0
 * knows it (a receive from it failed), `late` while rank 0 is in the middle
 * of a passive-target epoch of gets and puts. What must hold: no call
 * hangs; the lock, the flush or the unlock that cannot complete returns
 * MPIX_ERR_PROC_FAILED through the window's handler (MPI_ERRORS_RETURN);
 * operations towards the other (live) rank, itself, keep working.
 * Rank 0 prints "fault_win: N passed, M failed". */
#include <unistd.h>

#include "mpitest.h"

static int failed_class(int rc)
{
    return rc != MPI_SUCCESS && mt_class(rc) == MPIX_ERR_PROC_FAILED;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    int late = argc > 1 && !strcmp(argv[1], "late");
    int mem[64] = {0};
    MPI_Win win;
    MPI_MUST(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == 1) {
        if (late)
            usleep(20000);
        _exit(0);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int v = 7, got = -1, rc;
    if (!late) {
        int x;
        rc = MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(failed_class(rc));
        rc = MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        CHECK(failed_class(rc));
        /* A lock that failed leaves no epoch; with NOCHECK there is one. */
        MPI_MUST(MPI_Win_lock(MPI_LOCK_SHARED, 1, MPI_MODE_NOCHECK, win));
        rc = MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(1, win);
        CHECK(failed_class(rc));
        rc = MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_unlock(1, win);
        else
            MPI_Win_unlock(1, win);
        CHECK(failed_class(rc));
    } else {
        /* Gets and puts until the death shows: every call returns. */
        int seen = 0;
        MPI_MUST(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
        for (int i = 0; i < 1000000 && !seen; i++) {
            rc = MPI_Put(&v, 1, MPI_INT, 1, i % 64, 1, MPI_INT, win);
            if (rc == MPI_SUCCESS)
                rc = MPI_Get(&got, 1, MPI_INT, 1, (i + 1) % 64, 1, MPI_INT, win);
            if (rc == MPI_SUCCESS)
                rc = MPI_Win_flush(1, win);
            if (rc != MPI_SUCCESS) {
                CHECK(failed_class(rc));
                seen = 1;
            }
        }
        CHECK(seen);
        MPI_Win_unlock_all(win);
    }
    /* This process's own part still works. */
    MPI_MUST(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MPI_MUST(MPI_Put(&v, 1, MPI_INT, 0, 5, 1, MPI_INT, win));
    MPI_MUST(MPI_Get(&got, 1, MPI_INT, 0, 5, 1, MPI_INT, win));
    MPI_MUST(MPI_Win_unlock(0, win));
    CHECK(got == 7);
    printf("fault_win: %ld passed, %ld failed\n", mt_passed, mt_failed);
    fflush(stdout);
    _exit(0); /* WORLD has a dead member: no MPI_Finalize */
}
