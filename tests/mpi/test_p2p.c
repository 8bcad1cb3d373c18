/* Point-to-point, all modes: blocking and non-blocking standard, synchronous,
 * buffered and ready sends; Sendrecv(_replace); persistent requests; probes
 * (matched ones too); the wait/test families; cancel; MPI_PROC_NULL; large
 * (rendezvous) messages; truncation reported with MPI_ERR_TRUNCATE. Every rank
 * pairs with its neighbours in a ring, so it runs with any number of ranks. */
#include "mpitest.h"

#define BIG (1 << 20) /* ints: 4 MiB, well past any eager threshold */

static void modes(int right, int left)
{
    int out[64], in[64];
    MPI_Status st;
    /* Standard, synchronous, ready (receive posted first), buffered. */
    typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
    send_fn fns[] = {MPI_Send, MPI_Ssend, MPI_Rsend, MPI_Bsend};
    int bufsize = 64 * sizeof(int) + MPI_BSEND_OVERHEAD;
    void *bbuf = malloc((size_t)bufsize);
    MPI_MUST(MPI_Buffer_attach(bbuf, bufsize));
    for (int m = 0; m < 4; m++) {
        MPI_Request r;
        mt_fill(out, 64, mt_rank * 10 + m);
        MPI_MUST(MPI_Irecv(in, 64, MPI_INT, left, 100 + m, MPI_COMM_WORLD, &r));
        /* Everyone has posted before anyone sends, as a ready send needs. */
        MPI_MUST(MPI_Sendrecv(NULL, 0, MPI_INT, right, 99, NULL, 0, MPI_INT, left, 99,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_MUST(fns[m](out, 64, MPI_INT, right, 100 + m, MPI_COMM_WORLD));
        MPI_MUST(MPI_Wait(&r, &st));
        CHECK(r == MPI_REQUEST_NULL);
        CHECK(mt_verify(in, 64, left * 10 + m));
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 100 + m);
        int count;
        MPI_MUST(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == 64);
    }
    void *detached;
    int dsize;
    MPI_MUST(MPI_Buffer_detach(&detached, &dsize));
    CHECK(detached == bbuf && dsize == bufsize);
    free(bbuf);
}

static void nonblocking_all(int right, int left)
{
    /* Every kind of non-blocking send at once, completed by Waitall. */
    int out[4][32], in[4][32];
    MPI_Request r[8];
    MPI_Status st[8];
    int bufsize = 4 * (32 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bufsize);
    MPI_MUST(MPI_Buffer_attach(bbuf, bufsize));
    for (int k = 0; k < 4; k++)
        MPI_MUST(MPI_Irecv(in[k], 32, MPI_INT, left, 200 + k, MPI_COMM_WORLD, &r[k]));
    MPI_MUST(MPI_Sendrecv(NULL, 0, MPI_INT, right, 98, NULL, 0, MPI_INT, left, 98, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; k++)
        mt_fill(out[k], 32, mt_rank + 7 * k);
    MPI_MUST(MPI_Isend(out[0], 32, MPI_INT, right, 200, MPI_COMM_WORLD, &r[4]));
    MPI_MUST(MPI_Issend(out[1], 32, MPI_INT, right, 201, MPI_COMM_WORLD, &r[5]));
    MPI_MUST(MPI_Irsend(out[2], 32, MPI_INT, right, 202, MPI_COMM_WORLD, &r[6]));
    MPI_MUST(MPI_Ibsend(out[3], 32, MPI_INT, right, 203, MPI_COMM_WORLD, &r[7]));
    MPI_MUST(MPI_Waitall(8, r, st));
    for (int k = 0; k < 4; k++) {
        CHECK(mt_verify(in[k], 32, left + 7 * k));
        CHECK(st[k].MPI_SOURCE == left && st[k].MPI_TAG == 200 + k);
        CHECK(st[k].MPI_ERROR == MPI_SUCCESS);
    }
    for (int k = 0; k < 8; k++)
        CHECK(r[k] == MPI_REQUEST_NULL);
    void *d;
    int ds;
    MPI_MUST(MPI_Buffer_detach(&d, &ds));
    free(bbuf);
}

static void big(int right, int left)
{
    int *out = malloc(BIG * sizeof(int)), *in = malloc(BIG * sizeof(int));
    mt_fill(out, BIG, mt_rank);
    MPI_Status st;
    MPI_MUST(MPI_Sendrecv(out, BIG, MPI_INT, right, 300, in, BIG, MPI_INT, left, 300,
                          MPI_COMM_WORLD, &st));
    CHECK(mt_verify(in, BIG, left));
    int count;
    MPI_MUST(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == BIG);
    /* Sendrecv_replace with a large buffer: the data goes round the ring. */
    mt_fill(in, BIG, mt_rank + 50);
    MPI_MUST(MPI_Sendrecv_replace(in, BIG, MPI_INT, right, 301, left, 301, MPI_COMM_WORLD, &st));
    CHECK(mt_verify(in, BIG, left + 50));
    free(out);
    free(in);
}

static void persistent(int right, int left)
{
    int out[16], in[16];
    MPI_Request r[2];
    MPI_MUST(MPI_Recv_init(in, 16, MPI_INT, left, 400, MPI_COMM_WORLD, &r[0]));
    MPI_MUST(MPI_Send_init(out, 16, MPI_INT, right, 400, MPI_COMM_WORLD, &r[1]));
    for (int it = 0; it < 5; it++) {
        mt_fill(out, 16, mt_rank * 100 + it);
        MPI_MUST(MPI_Startall(2, r));
        MPI_MUST(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL);
        CHECK(mt_verify(in, 16, left * 100 + it));
    }
    /* An inactive persistent request completes at once with an empty status. */
    MPI_Status st;
    int flag = 0;
    MPI_MUST(MPI_Test(&r[0], &flag, &st));
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG);
    MPI_MUST(MPI_Request_free(&r[0]));
    MPI_MUST(MPI_Request_free(&r[1]));
    CHECK(r[0] == MPI_REQUEST_NULL);

    /* A derived datatype freed right after the requests were made: every
     * MPI_Start still uses it (MPI 3.1 §4.1.9). Every other int of 32. */
    int vout[32], vin[32];
    MPI_Datatype vec;
    MPI_MUST(MPI_Type_vector(16, 1, 2, MPI_INT, &vec));
    MPI_MUST(MPI_Type_commit(&vec));
    MPI_MUST(MPI_Recv_init(vin, 1, vec, left, 401, MPI_COMM_WORLD, &r[0]));
    MPI_MUST(MPI_Send_init(vout, 1, vec, right, 401, MPI_COMM_WORLD, &r[1]));
    MPI_MUST(MPI_Type_free(&vec));
    CHECK(vec == MPI_DATATYPE_NULL);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 32; i++) {
            vout[i] = i % 2 ? -1 : mt_rank * 1000 + it * 100 + i;
            vin[i] = -2;
        }
        MPI_MUST(MPI_Startall(2, r));
        MPI_MUST(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        int bad = 0;
        for (int i = 0; i < 32; i++)
            bad += vin[i] != (i % 2 ? -2 : left * 1000 + it * 100 + i);
        CHECK(bad == 0);
    }
    MPI_MUST(MPI_Request_free(&r[0]));
    MPI_MUST(MPI_Request_free(&r[1]));
}

static void probes(int right, int left)
{
    int out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[8];
    MPI_Status st;
    MPI_MUST(MPI_Send(out, 5, MPI_INT, right, 500, MPI_COMM_WORLD));
    MPI_MUST(MPI_Probe(MPI_ANY_SOURCE, 500, MPI_COMM_WORLD, &st));
    int count;
    MPI_MUST(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == left && count == 5);
    MPI_MUST(MPI_Recv(in, 8, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
    CHECK(in[4] == 5);
    /* Matched probe: the message is ours between Mprobe and Mrecv. */
    MPI_MUST(MPI_Send(out, 8, MPI_INT, right, 501, MPI_COMM_WORLD));
    MPI_Message msg;
    MPI_MUST(MPI_Mprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
    CHECK(st.MPI_TAG == 501);
    int flag = 1;
    MPI_MUST(MPI_Iprobe(left, 501, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0); /* taken out of matching */
    memset(in, 0, sizeof in);
    MPI_MUST(MPI_Mrecv(in, 8, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL && in[7] == 8);
    /* Improbe + Imrecv. */
    MPI_MUST(MPI_Send(out, 3, MPI_INT, right, 502, MPI_COMM_WORLD));
    flag = 0;
    while (!flag)
        MPI_MUST(MPI_Improbe(left, 502, MPI_COMM_WORLD, &flag, &msg, &st));
    MPI_Request r;
    MPI_MUST(MPI_Imrecv(in, 8, MPI_INT, &msg, &r));
    MPI_MUST(MPI_Wait(&r, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 3 && st.MPI_SOURCE == left);
    /* MPI_PROC_NULL everywhere. */
    MPI_MUST(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    MPI_MUST(MPI_Mrecv(in, 8, MPI_INT, &msg, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0 && st.MPI_SOURCE == MPI_PROC_NULL);
    MPI_MUST(MPI_Send(out, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_MUST(MPI_Recv(in, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    /* Sendrecv_replace to and from MPI_PROC_NULL leaves the buffer alone. */
    for (int k = 0; k < 8; k++)
        in[k] = 70 + k;
    MPI_MUST(MPI_Sendrecv_replace(in, 8, MPI_INT, MPI_PROC_NULL, 2, MPI_PROC_NULL, 2,
                                  MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && in[0] == 70 && in[7] == 77);
}

static void completions(int right, int left)
{
    enum { N = 6 };
    int out[N], in[N];
    MPI_Request r[N];
    for (int k = 0; k < N; k++)
        MPI_MUST(MPI_Irecv(&in[k], 1, MPI_INT, left, 600 + k, MPI_COMM_WORLD, &r[k]));
    /* Send in reverse order: Waitany must return whichever completes. */
    for (int k = N - 1; k >= 0; k--) {
        out[k] = mt_rank * 10 + k;
        MPI_MUST(MPI_Send(&out[k], 1, MPI_INT, right, 600 + k, MPI_COMM_WORLD));
    }
    int seen = 0;
    for (int n = 0; n < 3; n++) {
        int idx;
        MPI_Status st;
        MPI_MUST(MPI_Waitany(N, r, &idx, &st));
        CHECK(idx >= 0 && idx < N && r[idx] == MPI_REQUEST_NULL);
        CHECK(in[idx] == left * 10 + idx && st.MPI_TAG == 600 + idx);
        seen |= 1 << idx;
    }
    int outcount, idx[N];
    MPI_Status sts[N];
    do {
        MPI_MUST(MPI_Waitsome(N, r, &outcount, idx, sts));
        for (int i = 0; i < outcount && outcount != MPI_UNDEFINED; i++) {
            CHECK(in[idx[i]] == left * 10 + idx[i]);
            seen |= 1 << idx[i];
        }
    } while (outcount != MPI_UNDEFINED);
    CHECK(seen == (1 << N) - 1);
    /* All null: Waitany gives MPI_UNDEFINED, Testall true. */
    int i2, flag;
    MPI_MUST(MPI_Waitany(N, r, &i2, MPI_STATUS_IGNORE));
    CHECK(i2 == MPI_UNDEFINED);
    MPI_MUST(MPI_Testall(N, r, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag == 1);
    /* Testany / Testsome / Request_get_status polling. */
    MPI_Request q;
    MPI_MUST(MPI_Irecv(&in[0], 1, MPI_INT, left, 610, MPI_COMM_WORLD, &q));
    MPI_MUST(MPI_Send(&out[0], 1, MPI_INT, right, 610, MPI_COMM_WORLD));
    flag = 0;
    while (!flag)
        MPI_MUST(MPI_Request_get_status(q, &flag, MPI_STATUS_IGNORE));
    CHECK(q != MPI_REQUEST_NULL); /* get_status does not free */
    int any;
    MPI_MUST(MPI_Testany(1, &q, &any, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 1 && any == 0 && q == MPI_REQUEST_NULL);
}

static void cancel(int left)
{
    int x;
    MPI_Request r;
    MPI_Status st;
    MPI_MUST(MPI_Irecv(&x, 1, MPI_INT, left, 700, MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Cancel(&r));
    MPI_MUST(MPI_Wait(&r, &st));
    int flag;
    MPI_MUST(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1);
}

static int greq_query(void *extra, MPI_Status *st)
{
    MPI_Status_set_elements(st, MPI_BYTE, 3);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    ++*(int *)extra;
    return MPI_SUCCESS;
}
static int greq_free(void *extra)
{
    *(int *)extra += 10;
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra, int complete)
{
    return MPI_SUCCESS;
}

static void generalized(void)
{
    int calls = 0;
    MPI_Request r;
    MPI_MUST(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &calls, &r));
    int flag;
    MPI_MUST(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0);
    MPI_MUST(MPI_Grequest_complete(r));
    MPI_Status st;
    MPI_MUST(MPI_Wait(&r, &st));
    int count;
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == 3 && calls == 11 && r == MPI_REQUEST_NULL);
}

/* MPI_Request_free on an active rendezvous send returns at once: here every
 * rank frees its send and then receives from its left, which only works if
 * nobody waits in Request_free for the right neighbour's receive. */
static void free_active(int right, int left)
{
    static int out[BIG], in[BIG]; /* the freed send may read out until it completes */
    mt_fill(out, BIG, mt_rank + 99);
    MPI_Request r;
    MPI_MUST(MPI_Isend(out, BIG, MPI_INT, right, 900, MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL);
    MPI_MUST(MPI_Recv(in, BIG, MPI_INT, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(mt_verify(in, BIG, left + 99));
}

static void truncation(int right, int left)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int out[16] = {0}, in[4];
    MPI_Request r;
    MPI_MUST(MPI_Irecv(in, 4, MPI_INT, left, 800, MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Send(out, 16, MPI_INT, right, 800, MPI_COMM_WORLD));
    MPI_Status st;
    int rc = MPI_Wait(&r, &st);
    CHECK(mt_class(rc) == MPI_ERR_TRUNCATE);
    /* In a multiple completion the class is in the status. */
    MPI_Request rs[2];
    MPI_MUST(MPI_Irecv(in, 4, MPI_INT, left, 801, MPI_COMM_WORLD, &rs[0]));
    MPI_MUST(MPI_Irecv(in, 4, MPI_INT, left, 802, MPI_COMM_WORLD, &rs[1]));
    MPI_MUST(MPI_Send(out, 16, MPI_INT, right, 801, MPI_COMM_WORLD));
    MPI_MUST(MPI_Send(out, 2, MPI_INT, right, 802, MPI_COMM_WORLD));
    MPI_Status sts[2];
    rc = MPI_Waitall(2, rs, sts);
    CHECK(rc == MPI_ERR_IN_STATUS);
    CHECK(mt_class(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE && sts[1].MPI_ERROR == MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    modes(right, left);
    nonblocking_all(right, left);
    big(right, left);
    persistent(right, left);
    probes(right, left);
    completions(right, left);
    cancel(left);
    generalized();
    free_active(right, left);
    truncation(right, left);
    return mt_finish("p2p");
}
