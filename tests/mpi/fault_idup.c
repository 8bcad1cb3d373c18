/* MPI_Comm_idup after a peer died (3 ranks, mpirun --keep-going).
 *
 * Rank 2 leaves at once (_exit). Rank 0 then duplicates {0, 2}, which can
 * only fail (at the call or at its wait). Ranks 0 and 1 go on duplicating
 * {0, 1}, with MPI_Comm_idup and MPI_Comm_dup, several times: the failed
 * agreement must have let go of what it held (its place among this process's
 * idups, which lets only the first of them offer ids, and any id it took),
 * or the later idups of rank 0 wait behind it for ever and the job times out.
 *
 * Rank 0 prints "fault_idup: N passed, M failed"; the test passes on
 * "0 failed". MPI_Finalize is not called: WORLD has a dead member. */
#include <unistd.h>

#include "mpitest.h"

static void check_pair(MPI_Comm c)
{
    int size, rank, sum = -1;
    MPI_MUST(MPI_Comm_size(c, &size));
    MPI_MUST(MPI_Comm_rank(c, &rank));
    CHECK(size == 2);
    MPI_MUST(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == 1);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size != 3) {
        if (mt_rank == 0)
            fprintf(stderr, "fault_idup: needs 3 ranks\n");
        MPI_Finalize();
        return 77;
    }
    /* {0, 2} first, so its id is below {0, 1}'s: a leftover of its idup comes
     * first in rank 0's priority order. */
    MPI_Comm with_dead, pair;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, mt_rank != 1 ? 0 : MPI_UNDEFINED, mt_rank, &with_dead));
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, mt_rank != 2 ? 0 : MPI_UNDEFINED, mt_rank, &pair));
    MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 2)
        _exit(9);

    if (mt_rank == 0) {
        /* Wait until rank 2 is known dead: this receive can only fail. */
        MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_MUST(MPI_Comm_set_errhandler(with_dead, MPI_ERRORS_RETURN));
        int x;
        CHECK(MPI_Recv(&x, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS);
        MPI_Comm dead_dup = MPI_COMM_NULL;
        MPI_Request req;
        int rc = MPI_Comm_idup(with_dead, &dead_dup, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(rc != MPI_SUCCESS);
        if (dead_dup != MPI_COMM_NULL)
            MPI_Comm_free(&dead_dup);
    }

    for (int i = 0; i < 3; i++) {
        MPI_Comm dup;
        MPI_Request req;
        MPI_MUST(MPI_Comm_idup(pair, &dup, &req));
        MPI_MUST(MPI_Wait(&req, MPI_STATUS_IGNORE));
        check_pair(dup);
        MPI_Comm bdup;
        MPI_MUST(MPI_Comm_dup(dup, &bdup));
        check_pair(bdup);
        MPI_MUST(MPI_Comm_free(&bdup));
        MPI_MUST(MPI_Comm_free(&dup));
    }

    long mine[2] = {mt_passed, mt_failed}, other[2];
    MPI_MUST(MPI_Sendrecv(mine, 2, MPI_LONG, 1 - mt_rank, 1, other, 2, MPI_LONG, 1 - mt_rank, 1,
                          pair, MPI_STATUS_IGNORE));
    if (mt_rank == 0)
        printf("fault_idup: %ld passed, %ld failed\n", mine[0] + other[0], mine[1] + other[1]);
    fflush(stdout);
    _exit(0);
}
