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

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    proc_null();
    real_messages();
    return mt_finish("test_status_error");
}
