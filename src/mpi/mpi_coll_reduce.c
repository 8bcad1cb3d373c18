/* Reductions (MPI 3.1 sections 5.9-5.11): reduce, allreduce, reduce_scatter
 * (block), scan and exscan, blocking and non-blocking, on intra- and
 * intercommunicators. The checks and algorithms are shared with mpi_coll.c
 * and mpi_coll_algo.c.
 */
#include <stdlib.h>

#include "mpi/mpi_coll_int.h"

/* ---------------------------------------------------------------- reductions */

static int reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
                  MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Ireduce" : "MPI_Reduce";
    COLL_CHECK_COMM(comm, name);
    bool inter = comm->inter;
    COLL_CHECK(comm, weft__coll_check_root(comm, root), name);
    COLL_CHECK(comm, weft__coll_check_op(op), name);
    COLL_CHECK(comm, weft__mpi_check_count(count), name);
    COLL_CHECK(comm, weft__mpi_check_type(t), name);
    bool is_root = inter ? root == MPI_ROOT : comm->rank == root;
    if (sbuf == MPI_IN_PLACE)
        COLL_CHECK(comm, (is_root && !inter) ? MPI_SUCCESS : MPI_ERR_BUFFER, name);
    else if (is_root && !inter)
        COLL_CHECK(comm, weft__coll_check_alias(sbuf, rbuf, count), name);
    COLL_NEW_SCHED(s, comm, name);
    int err;
    if (inter)
        err = weft__coll_inter_reduce(s, comm, sbuf, rbuf, count, t, op, root);
    else
        err = weft__coll_b_reduce(s, comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, (size_t)count,
                                  t, op, root);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL);
}
WEFT_MPI_ALIAS(Reduce)

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ireduce");
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
WEFT_MPI_ALIAS(Ireduce)

static int allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                     MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Iallreduce" : "MPI_Allreduce";
    COLL_CHECK_COMM(comm, name);
    COLL_CHECK(comm, weft__coll_check_op(op), name);
    COLL_CHECK(comm, weft__coll_check_data(rbuf, count, t), name);
    if (sbuf == MPI_IN_PLACE)
        COLL_CHECK(comm, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        COLL_CHECK(comm, weft__coll_check_alias(sbuf, rbuf, count), name);
    COLL_NEW_SCHED(s, comm, name);
    int err = comm->inter ? weft__coll_inter_allreduce(s, comm, sbuf, rbuf, count, t, op)
                          : weft__coll_b_allreduce(s, comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf,
                                                   rbuf, (size_t)count, t, op);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm)
{
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL);
}
WEFT_MPI_ALIAS(Allreduce)

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iallreduce");
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}
WEFT_MPI_ALIAS(Iallreduce)

static int reduce_scatter(const void *sbuf, void *rbuf, const int *counts, MPI_Datatype t,
                          MPI_Op op, MPI_Comm comm, MPI_Request *req, const char *name)
{
    int n = comm->size; /* the local group, intercommunicators included */
    COLL_CHECK(comm, weft__coll_check_op(op), name);
    COLL_CHECK(comm, weft__mpi_check_type(t), name);
    COLL_CHECK(comm, weft__coll_check_counts(counts, n), name);
    if (sbuf == MPI_IN_PLACE)
        COLL_CHECK(comm, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        COLL_CHECK(comm, weft__coll_check_alias(sbuf, rbuf, counts[comm->rank]), name);
    COLL_NEW_SCHED(s, comm, name);
    int err = comm->inter ? weft__coll_inter_reduce_scatter(s, comm, sbuf, rbuf, counts, t, op)
                          : weft__coll_b_reduce_scatter(s, comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf,
                                                        rbuf, counts, t, op);
    return weft__coll_finish(s, err, comm, req, name);
}

/* Reduce_scatter_block: the counts, all equal, in a temporary array. */
static int reduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                                MPI_Comm comm, MPI_Request *req, const char *name)
{
    COLL_CHECK_COMM(comm, name);
    COLL_CHECK(comm, weft__mpi_check_count(count), name);
    int *counts = malloc((size_t)comm->size * sizeof(int));
    if (!counts)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, name);
    for (int i = 0; i < comm->size; i++)
        counts[i] = count;
    int err = reduce_scatter(sbuf, rbuf, counts, t, op, comm, req, name);
    free(counts);
    return err;
}

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, NULL,
                                "MPI_Reduce_scatter_block");
}
WEFT_MPI_ALIAS(Reduce_scatter_block)

int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ireduce_scatter_block");
    return reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request,
                                "MPI_Ireduce_scatter_block");
}
WEFT_MPI_ALIAS(Ireduce_scatter_block)

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    COLL_CHECK_COMM(comm, "MPI_Reduce_scatter");
    return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, NULL,
                          "MPI_Reduce_scatter");
}
WEFT_MPI_ALIAS(Reduce_scatter)

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    COLL_CHECK_COMM(comm, "MPI_Ireduce_scatter");
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ireduce_scatter");
    return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request,
                          "MPI_Ireduce_scatter");
}
WEFT_MPI_ALIAS(Ireduce_scatter)

static int scan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                MPI_Request *req, bool exclusive, const char *name)
{
    COLL_CHECK_COMM(comm, name);
    COLL_CHECK(comm, comm->inter ? MPI_ERR_COMM : MPI_SUCCESS, name);
    COLL_CHECK(comm, weft__coll_check_op(op), name);
    COLL_CHECK(comm, weft__coll_check_data(rbuf, count, t), name);
    if (sbuf != MPI_IN_PLACE)
        COLL_CHECK(comm, weft__coll_check_alias(sbuf, rbuf, count), name);
    COLL_NEW_SCHED(s, comm, name);
    int err = weft__coll_b_scan(s, comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, (size_t)count, t,
                                op, exclusive);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    return scan(sendbuf, recvbuf, count, datatype, op, comm, NULL, false, "MPI_Scan");
}
WEFT_MPI_ALIAS(Scan)

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iscan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, request, false, "MPI_Iscan");
}
WEFT_MPI_ALIAS(Iscan)

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm)
{
    return scan(sendbuf, recvbuf, count, datatype, op, comm, NULL, true, "MPI_Exscan");
}
WEFT_MPI_ALIAS(Exscan)

int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iexscan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, request, true, "MPI_Iexscan");
}
WEFT_MPI_ALIAS(Iexscan)
