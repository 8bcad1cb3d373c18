/* MPI_Cancel of sends (MPI 3.1 §3.8.4), each rank sending to its right
 * neighbour (to itself on one rank):
 *  - a send no receive matched yet (MPI_Isend, MPI_Issend and MPI_Ibsend,
 *    eager and rendezvous sizes, and a started persistent standard or
 *    buffered send) is canceled:
 *    MPI_Test_cancelled says true, and the receiver's next receive on that
 *    tag gets the next message, never the canceled one; a canceled buffered
 *    send gives its space in the attached buffer back (the buffer holds one
 *    message, and the next one goes through it);
 *  - a send whose receive matched before the cancel is not canceled:
 *    MPI_Test_cancelled says false and the data arrived.
 * (test_p2p cancels a receive.)
 * Plain MPI: also builds against other implementations, where a send cancel
 * may be refused; the checks then say so. */
#include "mpitest.h"

#define BIG (1 << 17) /* ints: 512 KiB, a rendezvous */

enum { ISEND, ISSEND, PERSISTENT, IBSEND, PERSISTENT_BSEND };

static int *buf_out, *buf_in;

/* Attach a buffer with room for one buffered message of n ints. */
static void *attach_one(int n)
{
    int size = (int)(sizeof(int) * (size_t)n) + MPI_BSEND_OVERHEAD;
    void *b = malloc((size_t)size);
    MPI_MUST(MPI_Buffer_attach(b, size));
    return b;
}

static void detach(void *b)
{
    void *got;
    int size;
    MPI_MUST(MPI_Buffer_detach(&got, &size));
    CHECK(got == b);
    free(b);
}

/* The right neighbour posts its receive only after the note that follows the
 * cancel's completion, so the first message is still unexpected when the
 * cancel arrives. */
static void unmatched(int right, int left, int how, int n, int tag)
{
    MPI_Request r;
    MPI_Status st;
    int persistent = how == PERSISTENT || how == PERSISTENT_BSEND;
    void *attached = how == IBSEND || how == PERSISTENT_BSEND ? attach_one(n) : NULL;
    mt_fill(buf_out, n, tag);
    if (how == ISSEND)
        MPI_MUST(MPI_Issend(buf_out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    else if (how == ISEND)
        MPI_MUST(MPI_Isend(buf_out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    else if (how == IBSEND)
        MPI_MUST(MPI_Ibsend(buf_out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    else if (how == PERSISTENT_BSEND)
        MPI_MUST(MPI_Bsend_init(buf_out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    else
        MPI_MUST(MPI_Send_init(buf_out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    if (persistent)
        MPI_MUST(MPI_Start(&r));
    MPI_MUST(MPI_Cancel(&r));
    MPI_MUST(MPI_Wait(&r, &st));
    int flag = 0;
    MPI_MUST(MPI_Test_cancelled(&st, &flag));
    if (!flag)
        fprintf(stderr, "[rank %d] unmatched send (%d ints, mode %d) not canceled\n", mt_rank, n,
                how);
    CHECK(flag == 1);
    /* The next message on the same tag: the one the receiver must get. */
    int *next = malloc(sizeof(int) * (size_t)n + 1);
    mt_fill(next, n, tag + 1);
    if (persistent) {
        /* A buffered one starts only if the canceled copy gave its room back. */
        memcpy(buf_out, next, sizeof(int) * (size_t)n);
        MPI_MUST(MPI_Start(&r));
    } else if (how == IBSEND) {
        /* Only if the canceled copy gave its room back. */
        MPI_MUST(MPI_Ibsend(next, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    } else {
        MPI_MUST(MPI_Isend(next, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    }
    MPI_MUST(MPI_Send(NULL, 0, MPI_BYTE, right, tag + 50000, MPI_COMM_WORLD));
    MPI_MUST(MPI_Recv(NULL, 0, MPI_BYTE, left, tag + 50000, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    memset(buf_in, 0, sizeof(int) * BIG);
    MPI_MUST(MPI_Recv(buf_in, BIG, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n && mt_verify(buf_in, n, tag + 1));
    MPI_MUST(MPI_Wait(&r, &st));
    MPI_MUST(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0);
    if (persistent)
        MPI_MUST(MPI_Request_free(&r));
    /* Nothing else is left for that tag. */
    MPI_MUST(MPI_Iprobe(left, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0);
    if (attached)
        detach(attached);
    free(next);
}

/* The receive matched (and completed) before the cancel: not canceled. */
static void matched(int right, int left, int how, int n, int tag)
{
    MPI_Request r;
    MPI_Status st;
    void *attached = how == IBSEND ? attach_one(n) : NULL;
    mt_fill(buf_out, n, tag);
    if (how == ISSEND)
        MPI_MUST(MPI_Issend(buf_out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    else if (how == IBSEND)
        MPI_MUST(MPI_Ibsend(buf_out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    else
        MPI_MUST(MPI_Isend(buf_out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Recv(buf_in, BIG, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
    CHECK(mt_verify(buf_in, n, tag));
    /* Tell the left neighbour its message arrived; learn that ours did. */
    MPI_MUST(MPI_Send(NULL, 0, MPI_BYTE, left, tag + 50000, MPI_COMM_WORLD));
    MPI_MUST(MPI_Recv(NULL, 0, MPI_BYTE, right, tag + 50000, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_MUST(MPI_Cancel(&r));
    MPI_MUST(MPI_Wait(&r, &st));
    int flag = 1;
    MPI_MUST(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0);
    if (attached)
        detach(attached);
}

/* A synchronous send to oneself, cancelled, then tested at once (mpi4py's
 * testCancel): when the test says neither done nor cancelled, the cancel
 * failed, and a matched probe must find the message. */
static void self_decided(int tag)
{
    for (int n = 1; n <= BIG; n *= 64) {
        MPI_Request r;
        MPI_Status st;
        int flag = 0, cancelled = 0;
        mt_fill(buf_out, n, 7);
        MPI_MUST(MPI_Issend(buf_out, n, MPI_INT, 0, tag, MPI_COMM_SELF, &r));
        MPI_MUST(MPI_Cancel(&r));
        MPI_MUST(MPI_Request_get_status(r, &flag, &st));
        MPI_Test_cancelled(&st, &cancelled);
        if (flag && cancelled) {
            MPI_MUST(MPI_Wait(&r, MPI_STATUS_IGNORE));
            continue;
        }
        CHECK(!flag);
        MPI_Message m;
        MPI_MUST(MPI_Mprobe(0, tag, MPI_COMM_SELF, &m, MPI_STATUS_IGNORE));
        MPI_MUST(MPI_Mrecv(buf_in, n, MPI_INT, &m, MPI_STATUS_IGNORE));
        CHECK(mt_verify(buf_in, n, 7));
        MPI_MUST(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    buf_out = malloc(sizeof(int) * BIG);
    buf_in = malloc(sizeof(int) * BIG);
    static const int sizes[] = {1, 100, BIG};
    int tag = 10;
    for (int how = ISEND; how <= PERSISTENT_BSEND; how++)
        for (int i = 0; i < 3; i++, tag += 2)
            unmatched(right, left, how, sizes[i], tag);
    static const int matched_modes[] = {ISEND, ISSEND, IBSEND};
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 3; i++, tag += 2)
            matched(right, left, matched_modes[m], sizes[i], tag);
    self_decided(tag);
    free(buf_out);
    free(buf_in);
    return mt_finish("cancel");
}
