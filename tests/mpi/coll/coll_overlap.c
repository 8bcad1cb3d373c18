/* Non-blocking collectives in flight together: several at once on one
 * communicator, completed out of order (reverse Wait, Testall polling,
 * Waitany); overlapping with point-to-point traffic on the same communicator
 * and tag values; a blocking collective while others are in flight; progress
 * of a collective while the application waits on a receive only; blocking
 * and non-blocking collectives started in different orders on different
 * ranks; user ops and derived datatypes freed while their collectives are in
 * flight (MPI 3.1 §4.1.9, §5.9.5: those complete normally). */
#include "coll_test.h"

static int P, R;

static void many_in_flight(void)
{
    enum { K = 8, N = 64 };
    MPI_Request rq[K];
    int bc[K][N], ar[K][N], s[N];
    for (int i = 0; i < N; i++)
        s[i] = R + i;
    /* Alternate bcasts from different roots and allreduces. */
    for (int k = 0; k < K; k++) {
        if (k % 2 == 0) {
            for (int i = 0; i < N; i++)
                bc[k][i] = R == k % P ? k * 100 + i : -1;
            MUSTMPI(MPI_Ibcast(bc[k], N, MPI_INT, k % P, MPI_COMM_WORLD, &rq[k]));
        } else {
            MUSTMPI(MPI_Iallreduce(s, ar[k], N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[k]));
        }
    }
    /* Complete them in reverse order. */
    for (int k = K - 1; k >= 0; k--)
        MUSTMPI(MPI_Wait(&rq[k], MPI_STATUS_IGNORE));
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++) {
            if (k % 2 == 0)
                CHECK(bc[k][i] == k * 100 + i);
            else
                CHECK(ar[k][i] == P * (P - 1) / 2 + P * i);
        }
}

static void testall_and_waitany(void)
{
    enum { N = 10 };
    MPI_Request rq[3];
    int g[N * 16], x = R + 1, sum = 0, scan = 0;
    MUSTMPI(MPI_Iallgather(&x, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD, &rq[0]));
    MUSTMPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
    MUSTMPI(MPI_Iscan(&x, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[2]));
    int idx, left = 3;
    while (left > 0) {
        MUSTMPI(MPI_Waitany(3, rq, &idx, MPI_STATUS_IGNORE));
        CHECK(idx >= 0 && idx < 3);
        left--;
    }
    for (int q = 0; q < P; q++)
        CHECK(g[q] == q + 1);
    CHECK(sum == P * (P + 1) / 2);
    CHECK(scan == (R + 1) * (R + 2) / 2);
    /* Testall polling. */
    MPI_Request b[2];
    int y = R == 0 ? 42 : 0;
    MUSTMPI(MPI_Ibarrier(MPI_COMM_WORLD, &b[0]));
    MUSTMPI(MPI_Ibcast(&y, 1, MPI_INT, 0, MPI_COMM_WORLD, &b[1]));
    int flag = 0;
    while (!flag)
        MUSTMPI(MPI_Testall(2, b, &flag, MPI_STATUSES_IGNORE));
    CHECK(y == 42);
}

static void with_p2p(void)
{
    enum { N = 1000 };
    int right = (R + 1) % P, left = (R - 1 + P) % P;
    static int sbuf[N], rbuf[N], a[N], ar[N];
    for (int i = 0; i < N; i++) {
        sbuf[i] = R * 7 + i;
        a[i] = i;
    }
    MPI_Request rq[3];
    /* Tag 0 point-to-point, a collective in between, all on MPI_COMM_WORLD. */
    MUSTMPI(MPI_Irecv(rbuf, N, MPI_INT, left, 0, MPI_COMM_WORLD, &rq[0]));
    MUSTMPI(MPI_Iallreduce(a, ar, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[1]));
    MUSTMPI(MPI_Isend(sbuf, N, MPI_INT, right, 0, MPI_COMM_WORLD, &rq[2]));
    MUSTMPI(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) {
        CHECK(rbuf[i] == left * 7 + i);
        CHECK(ar[i] == i);
    }
    /* A blocking collective while a non-blocking one is in flight. */
    MPI_Request r1;
    int v = R, w = R == P - 1 ? 99 : -1, bsum = 0;
    MUSTMPI(MPI_Ibcast(&w, 1, MPI_INT, P - 1, MPI_COMM_WORLD, &r1));
    MUSTMPI(MPI_Allreduce(&v, &bsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MUSTMPI(MPI_Wait(&r1, MPI_STATUS_IGNORE));
    CHECK(bsum == P * (P - 1) / 2);
    CHECK(w == 99);
    /* The collective progresses while the application waits on a receive only:
     * rank 0 waits for a message that rank 1 sends after its barrier. */
    if (P > 1) {
        MPI_Request ib;
        MUSTMPI(MPI_Ibarrier(MPI_COMM_WORLD, &ib));
        int token = 5;
        if (R == 0) {
            MUSTMPI(MPI_Recv(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else if (R == 1) {
            MUSTMPI(MPI_Wait(&ib, MPI_STATUS_IGNORE));
            MUSTMPI(MPI_Send(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
        }
        if (ib != MPI_REQUEST_NULL)
            MUSTMPI(MPI_Wait(&ib, MPI_STATUS_IGNORE));
        CHECK(token == 5);
    }
}

/* One rank (the root) starts a non-blocking collective and then enters a
 * blocking one; the others enter the blocking one first and start the
 * non-blocking one after (mpi4py's iagree fallback: an Iallreduce around a
 * Barrier). MPI asks for one order on every rank, but MPI never matches a
 * blocking collective with a non-blocking one, and programs rely on it:
 * blocking and non-blocking calls must be numbered apart, or the root's
 * Iallreduce meets the others' Barrier and every rank waits for ever. */
static void crossing_orders(void)
{
    for (int root = 0; root < P; root++) {
        MPI_Request rq[2];
        int in = R == root ? 0xB : 0xD, out = -1, flag;
        int b = R == root ? 7 : -1, ib = R == root ? 40 + root : -1, sum = 0;
        MUSTMPI(MPI_Barrier(MPI_COMM_WORLD));
        if (R == root) {
            MUSTMPI(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &rq[0]));
            MUSTMPI(MPI_Ibcast(&ib, 1, MPI_INT, root, MPI_COMM_WORLD, &rq[1]));
            MUSTMPI(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
            MUSTMPI(MPI_Barrier(MPI_COMM_WORLD));
            MUSTMPI(MPI_Bcast(&b, 1, MPI_INT, root, MPI_COMM_WORLD));
            MUSTMPI(MPI_Allreduce(&R, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        } else {
            MUSTMPI(MPI_Barrier(MPI_COMM_WORLD));
            MUSTMPI(MPI_Bcast(&b, 1, MPI_INT, root, MPI_COMM_WORLD));
            MUSTMPI(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &rq[0]));
            MUSTMPI(MPI_Allreduce(&R, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            MUSTMPI(MPI_Ibcast(&ib, 1, MPI_INT, root, MPI_COMM_WORLD, &rq[1]));
        }
        MUSTMPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(out == (P > 1 ? 0x9 : 0xB));
        CHECK(b == 7 && ib == 40 + root && sum == P * (P - 1) / 2);
    }
}

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Ireduce and Iallreduce with a user op, Iallreduce and Ibcast through a
 * derived type (a strided one for the bcast), each op and type freed right
 * after the start and its memory handed to new allocations before the
 * wait. */
static void freed_while_pending(void)
{
    enum { N = 10 };
    int in[N], red[N], all[N], typed[N], wide[2 * N];
    MPI_Op op;
    MPI_Datatype one, strided;
    MUSTMPI(MPI_Op_create(add_ints, 1, &op));
    MUSTMPI(MPI_Type_contiguous(1, MPI_INT, &one));
    MUSTMPI(MPI_Type_commit(&one));
    MUSTMPI(MPI_Type_vector(N, 1, 2, MPI_INT, &strided));
    MUSTMPI(MPI_Type_commit(&strided));
    for (int i = 0; i < N; i++) {
        in[i] = R + i;
        red[i] = all[i] = typed[i] = -1;
        wide[2 * i] = R == 0 ? 7 * i : -1;
        wide[2 * i + 1] = -3;
    }
    MPI_Request rq[4];
    MUSTMPI(MPI_Ireduce(in, red, N, MPI_INT, op, 0, MPI_COMM_WORLD, &rq[0]));
    MUSTMPI(MPI_Iallreduce(in, all, N, MPI_INT, op, MPI_COMM_WORLD, &rq[1]));
    MUSTMPI(MPI_Iallreduce(in, typed, N, one, MPI_SUM, MPI_COMM_WORLD, &rq[2]));
    MUSTMPI(MPI_Ibcast(wide, 1, strided, 0, MPI_COMM_WORLD, &rq[3]));
    MUSTMPI(MPI_Op_free(&op));
    MUSTMPI(MPI_Type_free(&one));
    MUSTMPI(MPI_Type_free(&strided));
    char *junk[64];
    for (int k = 0; k < 64; k++) {
        junk[k] = malloc(256);
        memset(junk[k], 0x5a, 256);
    }
    MUSTMPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 64; k++)
        free(junk[k]);
    int ok = 1;
    for (int i = 0; i < N; i++) {
        int want = P * (P - 1) / 2 + P * i;
        ok &= all[i] == want && typed[i] == want && (R != 0 || red[i] == want);
        ok &= wide[2 * i] == 7 * i && wide[2 * i + 1] == -3;
    }
    CHECK(ok);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    P = t_size;
    R = t_rank;
    for (int rep = 0; rep < 3; rep++) {
        many_in_flight();
        testall_and_waitany();
        with_p2p();
        crossing_orders();
        freed_while_pending();
    }
    return t_finish("coll_overlap");
}
