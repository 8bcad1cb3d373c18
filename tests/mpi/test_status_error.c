/* The MPI_ERROR field of a status: calls that return one status (receive,
 * probe, matched probe and receive, wait, test) leave it as the caller set it,
 * for MPI_PROC_NULL as for real messages (MPI 3.1 §3.2.5, §3.11). */
#include "mpitest.h"

#define MARK MPI_ERR_DIMS

static void mark(MPI_Status *s)
{
    memset(s, 0xab, sizeof *s);
    s->MPI_ERROR = MARK;
}

static void proc_null(void)
{
    MPI_Status s;
    int flag, buf = 0, count;
    MPI_Message msg;
    MPI_Request req;

    mark(&s);
    MPI_MUST(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_TAG == MPI_ANY_TAG && s.MPI_ERROR == MARK);
    MPI_MUST(MPI_Get_count(&s, MPI_INT, &count));
    CHECK(count == 0);

    mark(&s);
    flag = 0;
    MPI_MUST(MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &s));
    CHECK(flag && s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_ERROR == MARK);

    mark(&s);
    MPI_MUST(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &s));
    CHECK(msg == MPI_MESSAGE_NO_PROC && s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_ERROR == MARK);
    mark(&s);
    MPI_MUST(MPI_Mrecv(&buf, 1, MPI_INT, &msg, &s));
    CHECK(msg == MPI_MESSAGE_NULL && s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_ERROR == MARK);

    mark(&s);
    flag = 0;
    MPI_MUST(MPI_Improbe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &msg, &s));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC && s.MPI_ERROR == MARK);
    mark(&s);
    MPI_MUST(MPI_Imrecv(&buf, 1, MPI_INT, &msg, &req));
    MPI_MUST(MPI_Wait(&req, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_TAG == MPI_ANY_TAG && s.MPI_ERROR == MARK);

    mark(&s);
    MPI_MUST(MPI_Recv(&buf, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_ERROR == MARK);

    mark(&s);
    MPI_MUST(MPI_Irecv(&buf, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &req));
    flag = 0;
    while (!flag)
        MPI_MUST(MPI_Test(&req, &flag, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_ERROR == MARK);
}

/* A message from the right neighbour: probed, then received by a matched
 * probe; neither touches MPI_ERROR. */
static void real_messages(void)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int out = mt_rank, in = -1;
    MPI_Request sreq;
    MPI_Status s;
    MPI_Message msg;
    MPI_MUST(MPI_Isend(&out, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &sreq));
    mark(&s);
    MPI_MUST(MPI_Probe(right, 7, MPI_COMM_WORLD, &s));
    CHECK(s.MPI_SOURCE == right && s.MPI_TAG == 7 && s.MPI_ERROR == MARK);
    mark(&s);
    MPI_MUST(MPI_Mprobe(right, 7, MPI_COMM_WORLD, &msg, &s));
    CHECK(s.MPI_SOURCE == right && s.MPI_ERROR == MARK);
    mark(&s);
    MPI_MUST(MPI_Mrecv(&in, 1, MPI_INT, &msg, &s));
    CHECK(in == right && s.MPI_SOURCE == right && s.MPI_ERROR == MARK);
    mark(&s);
    MPI_MUST(MPI_Wait(&sreq, &s));
    CHECK(s.MPI_ERROR == MARK);
}

/* MPI_ERR_IN_STATUS goes through the error handler of the communicator of a
 * request that failed (MPI 3.1 §8.3: the handler of the object the error is
 * about), not that of the first request in the array. */
static int calls_ok, calls_bad, called_code;
static MPI_Comm called_on;

static void on_ok(MPI_Comm *c, int *code, ...)
{
    (void)code;
    calls_ok++;
    called_on = *c;
}

static void on_bad(MPI_Comm *c, int *code, ...)
{
    calls_bad++;
    called_on = *c;
    called_code = *code;
}

enum { WAITALL, TESTALL, WAITSOME, TESTSOME };

static void in_status_handler(int how)
{
    MPI_Comm ok, bad;
    MPI_Errhandler eh_ok, eh_bad;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &ok));
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &bad));
    MPI_MUST(MPI_Comm_create_errhandler(on_ok, &eh_ok));
    MPI_MUST(MPI_Comm_create_errhandler(on_bad, &eh_bad));
    MPI_MUST(MPI_Comm_set_errhandler(ok, eh_ok));
    MPI_MUST(MPI_Comm_set_errhandler(bad, eh_bad));
    calls_ok = calls_bad = 0;
    called_on = MPI_COMM_NULL;

    /* Messages to this rank itself: two that fit on ok, one that does not
     * fit its receive on bad (MPI_ERR_TRUNCATE). */
    int out[2] = {1, 2}, in[3] = {0, 0, 0};
    MPI_Request r[4];
    MPI_Status st[4];
    MPI_MUST(MPI_Irecv(&in[0], 1, MPI_INT, mt_rank, 1, ok, &r[0]));
    MPI_MUST(MPI_Isend(&out[0], 1, MPI_INT, mt_rank, 1, ok, &r[1]));
    MPI_MUST(MPI_Irecv(&in[1], 1, MPI_INT, mt_rank, 2, bad, &r[2]));
    MPI_MUST(MPI_Isend(out, 2, MPI_INT, mt_rank, 2, bad, &r[3]));
    int rc = MPI_SUCCESS, flag = 0, n, idx[4], failed = -1;
    switch (how) {
    case WAITALL:
        rc = MPI_Waitall(4, r, st);
        break;
    case TESTALL:
        while (!flag && rc == MPI_SUCCESS)
            rc = MPI_Testall(4, r, &flag, st);
        break;
    case WAITSOME:
    case TESTSOME:
        for (;;) {
            int one =
                how == WAITSOME ? MPI_Waitsome(4, r, &n, idx, st) : MPI_Testsome(4, r, &n, idx, st);
            if (n == MPI_UNDEFINED)
                break;
            for (int i = 0; i < n; i++)
                if (one == MPI_ERR_IN_STATUS && st[i].MPI_ERROR != MPI_SUCCESS)
                    failed = idx[i];
            if (one != MPI_SUCCESS)
                rc = one;
        }
        break;
    }
    CHECK(rc == MPI_ERR_IN_STATUS);
    if (how == WAITALL || how == TESTALL) {
        CHECK(st[0].MPI_ERROR == MPI_SUCCESS && st[1].MPI_ERROR == MPI_SUCCESS);
        CHECK(mt_class(st[2].MPI_ERROR) == MPI_ERR_TRUNCATE);
    } else {
        CHECK(failed == 2);
    }
    CHECK(calls_bad == 1 && calls_ok == 0 && called_on == bad && called_code == MPI_ERR_IN_STATUS);
    CHECK(in[0] == 1);
    MPI_MUST(MPI_Errhandler_free(&eh_ok));
    MPI_MUST(MPI_Errhandler_free(&eh_bad));
    MPI_MUST(MPI_Comm_free(&ok));
    MPI_MUST(MPI_Comm_free(&bad));
}

/* A request that fails after MPI_Comm_free of its communicator still reports
 * through that communicator's handler (the request kept it alive). */
static void failed_after_free(int all)
{
    MPI_Comm bad, was;
    MPI_Errhandler eh_bad;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &bad));
    MPI_MUST(MPI_Comm_create_errhandler(on_bad, &eh_bad));
    MPI_MUST(MPI_Comm_set_errhandler(bad, eh_bad));
    MPI_MUST(MPI_Errhandler_free(&eh_bad));
    calls_ok = calls_bad = 0;
    called_on = MPI_COMM_NULL;
    int out[2] = {1, 2}, in = 0;
    MPI_Request r[2];
    MPI_Status st[2];
    MPI_MUST(MPI_Irecv(&in, 1, MPI_INT, mt_rank, 3, bad, &r[0]));
    MPI_MUST(MPI_Isend(out, 2, MPI_INT, mt_rank, 3, bad, &r[1]));
    was = bad;
    MPI_MUST(MPI_Comm_free(&bad));
    MPI_MUST(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    if (all) {
        CHECK(MPI_Waitall(1, r, st) == MPI_ERR_IN_STATUS);
        CHECK(mt_class(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE);
    } else {
        CHECK(mt_class(MPI_Wait(&r[0], &st[0])) == MPI_ERR_TRUNCATE);
    }
    CHECK(calls_bad == 1 && called_on == was);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    proc_null();
    real_messages();
    for (int how = WAITALL; how <= TESTSOME; how++)
        in_status_handler(how);
    failed_after_free(0);
    failed_after_free(1);
    return mt_finish("test_status_error");
}
