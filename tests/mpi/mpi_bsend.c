/* Buffered sends at their edges, in a program of their own: each failure it
 * looks for is a hang, which the test's timeout ends. Even ranks send to the
 * next odd one (an odd rank count leaves the last rank out). Modes:
 *
 *   detach    MPI_Buffer_detach while an MPI_Ibsend's request, freed with
 *             MPI_Request_free, waits to be reaped and a non-blocking
 *             collective is in flight: the detach's progress reaps that
 *             request, which must not take the buffered sends' lock again.
 *   finalize  MPI_Finalize right after a large MPI_Bsend, with no other call
 *             between: it must send the message (MPI 3.1 §8.7: as if by
 *             MPI_Buffer_detach). Over tcp only the sender moves a
 *             rendezvous, so a Finalize that leaves it behind hangs both.
 *   selfattr  the same large MPI_Bsend, and its receive, made by the delete
 *             callbacks of attributes on MPI_COMM_SELF: MPI_Finalize runs
 *             them first, while MPI still works (MPI 3.1 §8.7.1), so the
 *             buffered send must still be waited for after them. */
#include "mpitest.h"

/* Above every driver's rendezvous threshold: the copy's send stays in flight
 * until the receiver takes it. */
#define DETACH_BYTES   (1 << 20)
#define FINALIZE_BYTES (4 << 20)

static void fill(unsigned char *b, int n, int key)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 7 + key);
}

static int intact(const unsigned char *b, int n, int key)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (unsigned char)(i * 7 + key))
            return 0;
    return 1;
}

static void detach(int peer, int sender)
{
    int size = DETACH_BYTES + MPI_BSEND_OVERHEAD;
    unsigned char *data = malloc(DETACH_BYTES), *attached = malloc((size_t)size);
    /* Several times: the copy's send must still be in flight and the
     * collective still running when the detach starts waiting, which the
     * receiver's order of calls makes all but certain (certain over tcp). */
    for (int round = 0; round < 5; round++) {
        MPI_Request r, barrier;
        if (sender) {
            MPI_MUST(MPI_Buffer_attach(attached, size));
            fill(data, DETACH_BYTES, round);
            MPI_MUST(MPI_Ibsend(data, DETACH_BYTES, MPI_BYTE, peer, round, MPI_COMM_WORLD, &r));
            MPI_MUST(MPI_Request_free(&r));
            MPI_MUST(MPI_Ibarrier(MPI_COMM_WORLD, &barrier));
            void *got;
            int got_size;
            MPI_MUST(MPI_Buffer_detach(&got, &got_size));
            CHECK(got == attached && got_size == size);
            MPI_MUST(MPI_Wait(&barrier, MPI_STATUS_IGNORE));
        } else {
            /* The barrier only after the message: the sender's barrier is
             * still in flight while its detach waits for the copy's send. */
            memset(data, 0, DETACH_BYTES);
            if (peer >= 0) {
                MPI_MUST(MPI_Recv(data, DETACH_BYTES, MPI_BYTE, peer, round, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
                CHECK(intact(data, DETACH_BYTES, round));
            }
            MPI_MUST(MPI_Ibarrier(MPI_COMM_WORLD, &barrier));
            MPI_MUST(MPI_Wait(&barrier, MPI_STATUS_IGNORE));
        }
    }
    free(data);
    free(attached);
}

/* Finalizes; returns the exit code. No call between the send and
 * MPI_Finalize on the sender, so nothing else moves the message. */
static int finalize(int peer, int sender)
{
    unsigned char *data = malloc(FINALIZE_BYTES);
    if (sender) {
        int size = FINALIZE_BYTES + MPI_BSEND_OVERHEAD;
        void *attached = malloc((size_t)size);
        MPI_MUST(MPI_Buffer_attach(attached, size));
        fill(data, FINALIZE_BYTES, 3);
        MPI_MUST(MPI_Bsend(data, FINALIZE_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
        MPI_MUST(MPI_Finalize());
        free(attached); /* MPI_Finalize detached it */
        free(data);
        return 0;
    }
    int ok = 1;
    if (peer >= 0) {
        memset(data, 0, FINALIZE_BYTES);
        MPI_Status st;
        int count = -1;
        MPI_MUST(MPI_Recv(data, FINALIZE_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st));
        MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &count));
        ok = count == FINALIZE_BYTES && intact(data, FINALIZE_BYTES, 3);
        printf("mpi_bsend finalize: rank %d received %d bytes from rank %d, %s\n", mt_rank, count,
               peer, ok ? "intact" : "CORRUPT");
    }
    MPI_MUST(MPI_Finalize());
    free(data);
    return ok ? 0 : 1;
}

static struct {
    int peer, ok;
    void *attached;
    unsigned char *data;
} self_attr;

/* MPI_COMM_SELF's attribute goes: its owner's last words, in MPI. */
static int last_words(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val;
    int sender = extra != NULL;
    if (sender) {
        fill(self_attr.data, FINALIZE_BYTES, 5);
        return MPI_Bsend(self_attr.data, FINALIZE_BYTES, MPI_BYTE, self_attr.peer, 2,
                         MPI_COMM_WORLD);
    }
    if (self_attr.peer < 0)
        return MPI_SUCCESS;
    memset(self_attr.data, 0, FINALIZE_BYTES);
    MPI_Status st;
    int count = -1;
    int rc =
        MPI_Recv(self_attr.data, FINALIZE_BYTES, MPI_BYTE, self_attr.peer, 2, MPI_COMM_WORLD, &st);
    if (rc == MPI_SUCCESS)
        rc = MPI_Get_count(&st, MPI_BYTE, &count);
    self_attr.ok =
        rc == MPI_SUCCESS && count == FINALIZE_BYTES && intact(self_attr.data, FINALIZE_BYTES, 5);
    printf("mpi_bsend selfattr: rank %d received %d bytes from rank %d in a delete callback, %s\n",
           mt_rank, count, self_attr.peer, self_attr.ok ? "intact" : "CORRUPT");
    return rc;
}

/* Finalizes; returns the exit code. */
static int selfattr(int peer, int sender)
{
    self_attr.peer = peer;
    self_attr.ok = 1;
    self_attr.data = malloc(FINALIZE_BYTES);
    int key;
    MPI_MUST(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, last_words, &key,
                                    sender ? &self_attr : NULL));
    MPI_MUST(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL));
    if (sender) {
        int size = FINALIZE_BYTES + MPI_BSEND_OVERHEAD;
        self_attr.attached = malloc((size_t)size);
        MPI_MUST(MPI_Buffer_attach(self_attr.attached, size));
    }
    MPI_MUST(MPI_Finalize());
    free(self_attr.attached);
    free(self_attr.data);
    return self_attr.ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (mt_size < 2) {
        if (mt_rank == 0)
            printf("mpi_bsend: needs 2 ranks\n");
        MPI_Finalize();
        return 77;
    }
    /* Even ranks send to rank + 1; the last of an odd count only joins the
     * collectives. */
    int sender = mt_rank % 2 == 0 && mt_rank + 1 < mt_size;
    int peer = sender ? mt_rank + 1 : mt_rank % 2 ? mt_rank - 1 : -1;
    if (!strcmp(mode, "detach")) {
        detach(peer, sender);
        return mt_finish("mpi_bsend detach");
    }
    if (!strcmp(mode, "finalize"))
        return finalize(peer, sender);
    if (!strcmp(mode, "selfattr"))
        return selfattr(peer, sender);
    fprintf(stderr, "usage: mpi_bsend detach|finalize|selfattr\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
}
