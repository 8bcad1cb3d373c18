/* MPI_Intercomm_create while an MPI_Comm_idup is in flight on the same
 * processes (one thread each): the idup's agreement progresses inside the
 * creation's waits and may take an id the creation picked, so the creation
 * must confirm its pair. Then the two new communicators must not share an
 * id: world rank r and r^1 are peers on both (the even ranks form one group,
 * the odd ranks the other), each sends one message on each with the same
 * tag, and receives them in the other order; shared ids would swap them. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size < 2 || mt_size % 2) {
        if (mt_rank == 0)
            printf("test_intercomm_idup: needs an even number of ranks; skipped\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm half;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half));
    int peer = mt_rank ^ 1;
    for (int it = 0; it < 30; it++) {
        MPI_Comm dup, inter;
        MPI_Request req;
        MPI_MUST(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        /* Leaders: world 0 (even group) and world 1 (odd group). */
        MPI_MUST(
            MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, mt_rank % 2 ? 0 : 1, 77 + it, &inter));
        MPI_MUST(MPI_Wait(&req, MPI_STATUS_IGNORE));
        int rsize;
        MPI_MUST(MPI_Comm_remote_size(inter, &rsize));
        CHECK(rsize == mt_size / 2);
        /* My counterpart in the other group has my index there: world peer. */
        int me_in_half;
        MPI_MUST(MPI_Comm_rank(half, &me_in_half));
        int a = 1000 * it + mt_rank, b = -1000 * it - mt_rank - 1, got_a = 0, got_b = 0;
        MPI_Request rq[4];
        MPI_MUST(MPI_Isend(&a, 1, MPI_INT, peer, 5, dup, &rq[0]));
        MPI_MUST(MPI_Isend(&b, 1, MPI_INT, me_in_half, 5, inter, &rq[1]));
        MPI_MUST(MPI_Irecv(&got_b, 1, MPI_INT, me_in_half, 5, inter, &rq[2]));
        MPI_MUST(MPI_Wait(&rq[2], MPI_STATUS_IGNORE));
        MPI_MUST(MPI_Irecv(&got_a, 1, MPI_INT, peer, 5, dup, &rq[3]));
        MPI_MUST(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        CHECK(got_a == 1000 * it + peer);
        CHECK(got_b == -1000 * it - peer - 1);
        MPI_MUST(MPI_Comm_free(&dup));
        MPI_MUST(MPI_Comm_free(&inter));
    }
    MPI_MUST(MPI_Comm_free(&half));
    return mt_finish("test_intercomm_idup");
}
