/* MPI_Comm_idup does not wait for the other members (MPI 3.1 §5.12, §6.4.2):
 * a member that reaches it only after a message from the others (of an intra-
 * or an intercommunicator), and overlapping duplications started in opposite
 * orders, complete; an idup in flight while a blocking MPI_Comm_dup runs
 * yields two distinct communicators. */
#include "mpitest.h"

static void check_works(MPI_Comm c)
{
    int size, rank, sum = -1;
    MPI_MUST(MPI_Comm_size(c, &size));
    MPI_MUST(MPI_Comm_rank(c, &rank));
    MPI_MUST(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2);
}

/* Rank 0 starts its idup only after every other rank has sent to it, and the
 * others send (synchronously) after starting theirs. */
static void late_member(void)
{
    MPI_Comm dup;
    MPI_Request req;
    int buf = 0;
    if (mt_rank == 0) {
        for (int i = 1; i < mt_size; i++)
            MPI_MUST(MPI_Recv(&buf, 1, MPI_INT, i, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_MUST(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        MPI_MUST(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_MUST(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        MPI_MUST(MPI_Ssend(&mt_rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
        MPI_MUST(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    int result;
    MPI_MUST(MPI_Comm_compare(dup, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT);
    check_works(dup);
    MPI_MUST(MPI_Comm_free(&dup));
}

/* Ring of pairs {i, i+1}: each rank duplicates its own pair, then the pair of
 * its left neighbour; blocking dups in that order would wait in a circle. */
static void overlapping(void)
{
    if (mt_size < 2)
        return;
    MPI_Comm mine = MPI_COMM_NULL, left = MPI_COMM_NULL;
    for (int i = 0; i < mt_size; i++) {
        int in = mt_rank == i || mt_rank == (i + 1) % mt_size;
        MPI_Comm c;
        MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, mt_rank == i ? 0 : 1, &c));
        if (mt_rank == i)
            mine = c;
        else if (in)
            left = c;
    }
    if (mt_size == 2) {
        /* Both pairs are {0, 1}: the rank that is second in one is first in
         * the other, as in the ring. */
        CHECK(left != MPI_COMM_NULL);
    }
    MPI_Comm d[2];
    MPI_Request req[2];
    MPI_MUST(MPI_Comm_idup(mine, &d[0], &req[0]));
    MPI_MUST(MPI_Comm_idup(left, &d[1], &req[1]));
    MPI_MUST(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    /* Blocking collectives on the two would wait in a circle too. */
    int one = 1, sum[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        MPI_MUST(MPI_Iallreduce(&one, &sum[i], 1, MPI_INT, MPI_SUM, d[i], &req[i]));
    MPI_MUST(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    CHECK(sum[0] == 2 && sum[1] == 2);
    for (int i = 0; i < 2; i++)
        MPI_MUST(MPI_Comm_free(&d[i]));
    MPI_MUST(MPI_Comm_free(&mine));
    MPI_MUST(MPI_Comm_free(&left));
}

/* An idup in flight, then a blocking dup of the same parent: the dup's wait
 * advances the idup, and the two get different ids (a message on one never
 * matches a receive on the other). */
static void with_blocking_dup(void)
{
    MPI_Comm a, b;
    MPI_Request req;
    MPI_MUST(MPI_Comm_idup(MPI_COMM_WORLD, &a, &req));
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    MPI_MUST(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_works(a);
    check_works(b);
    if (mt_size >= 2 && mt_rank < 2) {
        int va = 1, vb = 2, got = 0;
        if (mt_rank == 0) {
            MPI_MUST(MPI_Send(&va, 1, MPI_INT, 1, 3, a));
            MPI_MUST(MPI_Send(&vb, 1, MPI_INT, 1, 3, b));
        } else {
            MPI_MUST(MPI_Recv(&got, 1, MPI_INT, 0, 3, b, MPI_STATUS_IGNORE));
            CHECK(got == 2);
            MPI_MUST(MPI_Recv(&got, 1, MPI_INT, 0, 3, a, MPI_STATUS_IGNORE));
            CHECK(got == 1);
        }
    }
    MPI_MUST(MPI_Comm_free(&a));
    MPI_MUST(MPI_Comm_free(&b));
}

/* An intercommunicator between the even and the odd ranks: the remote leader
 * starts its idup only after a message from every other member of the other
 * group, who send after starting theirs. */
static void intercomm(void)
{
    if (mt_size < 2)
        return;
    MPI_Comm local, ic, dup;
    MPI_Request req;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &local));
    MPI_MUST(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, mt_rank % 2 ? 0 : 1, 77, &ic));
    int lrank, rsize, buf = 0;
    MPI_MUST(MPI_Comm_rank(ic, &lrank));
    MPI_MUST(MPI_Comm_remote_size(ic, &rsize));
    if (lrank == 0) {
        for (int i = 1; i < rsize; i++)
            MPI_MUST(MPI_Recv(&buf, 1, MPI_INT, i, 0, ic, MPI_STATUS_IGNORE));
        MPI_MUST(MPI_Comm_idup(ic, &dup, &req));
        MPI_MUST(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_MUST(MPI_Comm_idup(ic, &dup, &req));
        MPI_MUST(MPI_Ssend(&lrank, 1, MPI_INT, 0, 0, ic));
        MPI_MUST(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    int inter = 0, result, sum = -1;
    MPI_MUST(MPI_Comm_test_inter(dup, &inter));
    CHECK(inter);
    MPI_MUST(MPI_Comm_compare(dup, ic, &result));
    CHECK(result == MPI_CONGRUENT);
    /* Across: each side gets the sum of the other side's local ranks. */
    MPI_MUST(MPI_Allreduce(&lrank, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == rsize * (rsize - 1) / 2);
    MPI_MUST(MPI_Comm_free(&dup));
    MPI_MUST(MPI_Comm_free(&ic));
    MPI_MUST(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    for (int i = 0; i < 3; i++) {
        late_member();
        overlapping();
        with_blocking_dup();
        intercomm();
    }
    return mt_finish("test_comm_idup");
}
