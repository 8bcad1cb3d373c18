/* A collective that fails its argument checks on one rank only leaves the
 * communicator consistent: the next collectives match their own partners, not
 * the messages of the failed one, and return the right data.
 *   - the root of MPI_Reduce passes sendbuf == recvbuf (MPI_ERR_BUFFER), then
 *     MPI_Bcast from rank 1 gives every rank rank 1's value, and MPI_Barrier
 *     and MPI_Allreduce complete with the right result;
 *   - the same with a non-blocking MPI_Ireduce failing on the root;
 *   - a type/op pair no reduction allows (MPI_DOUBLE with MPI_BAND) fails with
 *     MPI_ERR_OP on every rank, the root and the others alike, in MPI_Reduce,
 *     MPI_Allreduce, MPI_Reduce_scatter_block and MPI_Scan. */
#include <stdbool.h>

#include "mpitest.h"

static void check_next_collectives(MPI_Comm comm, int tag)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int root = size > 1 ? 1 : 0;
    int v = rank == root ? 4242 + tag : -1;
    MPI_MUST(MPI_Bcast(&v, 1, MPI_INT, root, comm));
    CHECK(v == 4242 + tag);
    MPI_MUST(MPI_Barrier(comm));
    int one = rank + 1, sum = 0;
    MPI_MUST(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size + 1) / 2);
}

static void root_buffer_error(MPI_Comm comm, bool nonblocking)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int buf = rank, out = 0;
    int rc;
    if (rank == 0) { /* the root: sendbuf == recvbuf is MPI_ERR_BUFFER */
        if (nonblocking) {
            MPI_Request r = MPI_REQUEST_NULL;
            rc = MPI_Ireduce(&buf, &buf, 1, MPI_INT, MPI_SUM, 0, comm, &r);
            CHECK(r == MPI_REQUEST_NULL);
        } else {
            rc = MPI_Reduce(&buf, &buf, 1, MPI_INT, MPI_SUM, 0, comm);
        }
        CHECK(mt_class(rc) == MPI_ERR_BUFFER);
    } else if (nonblocking) {
        /* The others' reduce is complete once their part is sent. */
        MPI_Request r;
        MPI_MUST(MPI_Ireduce(&buf, &out, 1, MPI_INT, MPI_SUM, 0, comm, &r));
        MPI_MUST(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        MPI_MUST(MPI_Reduce(&buf, &out, 1, MPI_INT, MPI_SUM, 0, comm));
    }
    check_next_collectives(comm, nonblocking);
}

static void type_op_error(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double d[4] = {1, 2, 3, 4}, r[4] = {0};
    CHECK(mt_class(MPI_Reduce(d, r, 1, MPI_DOUBLE, MPI_BAND, 0, comm)) == MPI_ERR_OP);
    CHECK(mt_class(MPI_Reduce(d, r, 1, MPI_DOUBLE, MPI_BAND, size - 1, comm)) == MPI_ERR_OP);
    CHECK(mt_class(MPI_Allreduce(d, r, 1, MPI_DOUBLE, MPI_LXOR, comm)) == MPI_ERR_OP);
    double *big = calloc((size_t)size, sizeof *big);
    CHECK(mt_class(MPI_Reduce_scatter_block(big, r, 1, MPI_DOUBLE, MPI_BOR, comm)) == MPI_ERR_OP);
    free(big);
    CHECK(mt_class(MPI_Scan(d, r, 1, MPI_DOUBLE, MPI_BXOR, comm)) == MPI_ERR_OP);
    CHECK(mt_class(MPI_Reduce(d, r, 1, MPI_2INT, MPI_SUM, 0, comm)) == MPI_ERR_OP);
    check_next_collectives(comm, 7);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm comm;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_MUST(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    root_buffer_error(comm, false);
    root_buffer_error(comm, true);
    type_op_error(comm);
    /* Again, many times: a rank that drifted would show by now. */
    for (int i = 0; i < 20; i++)
        root_buffer_error(comm, i & 1);
    MPI_MUST(MPI_Comm_free(&comm));
    return mt_finish("test_coll_argerr");
}
