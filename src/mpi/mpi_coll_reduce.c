/* Reductions (MPI 3.1 sections 5.9-5.11): reduce, allreduce, reduce_scatter
 * (block), scan and exscan, blocking and non-blocking, on intra- and
 * intercommunicators. The checks and algorithms are shared with mpi_coll.c
 * and mpi_coll_algo.c.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"

/* ---------------------------------------------------------------- reductions */

static int reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
                  MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Ireduce" : "MPI_Reduce";
    COLL_CHECK_COMM(comm, name);
    bool inter = comm->inter;
    COLL_CHECK(comm, req, weft__coll_check_root(comm, root), name);
    COLL_CHECK(comm, req, weft__coll_check_op(op), name);
    COLL_CHECK(comm, req, weft__mpi_check_count(count), name);
    COLL_CHECK(comm, req, weft__mpi_check_type(t), name);
    COLL_CHECK(comm, req, weft__mpi_op_check_type(op, t), name);
    bool is_root = inter ? root == MPI_ROOT : comm->rank == root;
    if (sbuf == MPI_IN_PLACE)
        COLL_CHECK(comm, req, (is_root && !inter) ? MPI_SUCCESS : MPI_ERR_BUFFER, name);
    else if (is_root && !inter)
        COLL_CHECK(comm, req, weft__coll_check_alias(sbuf, rbuf, count), name);
    COLL_NEW_SCHED(s, comm, req, name);
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

/* A small blocking allreduce runs without a schedule: the same messages as
 * weft__coll_b_allreduce (same peers, tags, bytes and order of operands), so
 * ranks that take either path interoperate, posted and waited for directly.
 * It spares a schedule's allocations and its polling of every step. */
#define ALLREDUCE_DIRECT_MAX 1024 /* bytes: the partner's operand lives on the stack */

/* Send `out` to and/or receive `in` from `peer` (n bytes each; NULL: that
 * direction is not used), and wait for both. After a failure (why: a weft
 * status, not WEFT_OK) the send is its poison. Returns a weft status. */
static int xfer(MPI_Comm c, int peer, uint64_t tag, const void *out, void *in, size_t n, int why)
{
    weft__coll_direct_t d = {.nreq = 0};
    int rc = weft__coll_post_direct(&d, c, peer, tag, in, n, false, WEFT_OK);
    int src = weft__coll_post_direct(&d, c, peer, tag, (void *)out, n, true, why);
    int wrc = weft__coll_wait_direct(&d);
    return rc != WEFT_OK ? rc : src != WEFT_OK ? src : wrc;
}

/* Whether allreduce_direct takes this call: decided from this rank's
 * arguments only, which is safe because both paths send the same messages. */
static bool allreduce_direct_fits(int count, MPI_Datatype t, MPI_Comm comm)
{
    return !comm->inter && count > 0 && t->contig && t->true_lb == 0 &&
           t->size <= ALLREDUCE_DIRECT_MAX / (size_t)count;
}

/* The failure so far as a weft status, for the poison of the next send: the
 * engine's (rc), or an operator's error (err), which poisons as any failure
 * but a dead peer; WEFT_OK when none. */
static inline int failure(int rc, int err)
{
    return rc != WEFT_OK ? rc : err != MPI_SUCCESS ? WEFT_ETRUNC : WEFT_OK;
}

static int allreduce_direct(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                            MPI_Comm comm)
{
    enum { K_FOLD = 0, K_UNFOLD = 1, K_STEP = 2, PHASE = 1 };
    size_t n = t->size * (size_t)count;
    uint32_t seq = weft__coll_next_seq(comm, false);
    if (sbuf != MPI_IN_PLACE && sbuf != rbuf)
        memcpy(rbuf, sbuf, n);
    int p = comm->size, r = comm->rank;
    if (p == 1)
        return MPI_SUCCESS;
    /* As with a schedule, every step runs whatever failed before, so no peer
     * is left waiting, but once a step failed (a dead peer, a poison, a
     * truncation, an operator's error) the sends are poisons and nothing is
     * combined any more; the first error is reported at the end. */
    _Alignas(16) unsigned char tmp[ALLREDUCE_DIRECT_MAX];
    int rc = WEFT_OK, err = MPI_SUCCESS;
    weft_coll_rd_t rd = weft_coll_rd(p, r);
    int rem = rd.rem;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            rc = xfer(comm, r + 1, weft_coll_tag(seq, PHASE, K_FOLD), rbuf, NULL, n, WEFT_OK);
        } else {
            rc = xfer(comm, r - 1, weft_coll_tag(seq, PHASE, K_FOLD), NULL, tmp, n, WEFT_OK);
            if (rc == WEFT_OK)
                err = weft__mpi_op_apply(op, tmp, rbuf, count, t); /* (r - 1) op r */
        }
    }
    for (int mask = 1, k = K_STEP; rd.vr >= 0 && mask < rd.pof2; mask <<= 1, k++) {
        int peer = weft_coll_rd_rank(&rd, rd.vr ^ mask);
        int xrc = xfer(comm, peer, weft_coll_tag(seq, PHASE, k), rbuf, tmp, n, failure(rc, err));
        rc = rc != WEFT_OK ? rc : xrc;
        if (failure(rc, err) != WEFT_OK)
            continue; /* no operand to combine, or no result to build */
        if (op->commute || peer < r) {
            err = weft__mpi_op_apply(op, tmp, rbuf, count, t);
        } else {
            err = weft__mpi_op_apply(op, rbuf, tmp, count, t);
            memcpy(rbuf, tmp, n);
        }
    }
    if (r < 2 * rem) {
        int xrc =
            r % 2 ? xfer(comm, r - 1, weft_coll_tag(seq, PHASE, K_UNFOLD), rbuf, NULL, n,
                         failure(rc, err))
                  : xfer(comm, r + 1, weft_coll_tag(seq, PHASE, K_UNFOLD), NULL, rbuf, n, WEFT_OK);
        rc = rc != WEFT_OK ? rc : xrc;
    }
    return rc != WEFT_OK ? weft__mpi_err_from_weft(rc) : err;
}

static int allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                     MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Iallreduce" : "MPI_Allreduce";
    COLL_CHECK_COMM(comm, name);
    COLL_CHECK(comm, req, weft__coll_check_op(op), name);
    COLL_CHECK(comm, req, weft__coll_check_data(rbuf, count, t), name);
    COLL_CHECK(comm, req, weft__mpi_op_check_type(op, t), name);
    if (sbuf == MPI_IN_PLACE)
        COLL_CHECK(comm, req, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        COLL_CHECK(comm, req, weft__coll_check_alias(sbuf, rbuf, count), name);
    if (!req && allreduce_direct_fits(count, t, comm)) {
        int e = allreduce_direct(sbuf, rbuf, count, t, op, comm);
        return e == MPI_SUCCESS ? MPI_SUCCESS : weft__mpi_err(comm, e, name);
    }
    COLL_NEW_SCHED(s, comm, req, name);
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
    COLL_CHECK(comm, req, weft__coll_check_op(op), name);
    COLL_CHECK(comm, req, weft__mpi_check_type(t), name);
    COLL_CHECK(comm, req, weft__mpi_op_check_type(op, t), name);
    COLL_CHECK(comm, req, weft__coll_check_counts(counts, n), name);
    if (sbuf == MPI_IN_PLACE)
        COLL_CHECK(comm, req, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        COLL_CHECK(comm, req, weft__coll_check_alias(sbuf, rbuf, counts[comm->rank]), name);
    COLL_NEW_SCHED(s, comm, req, name);
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
    COLL_CHECK(comm, req, weft__mpi_check_count(count), name);
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
    COLL_CHECK(comm, req, comm->inter ? MPI_ERR_COMM : MPI_SUCCESS, name);
    COLL_CHECK(comm, req, weft__coll_check_op(op), name);
    COLL_CHECK(comm, req, weft__coll_check_data(rbuf, count, t), name);
    COLL_CHECK(comm, req, weft__mpi_op_check_type(op, t), name);
    if (sbuf != MPI_IN_PLACE)
        COLL_CHECK(comm, req, weft__coll_check_alias(sbuf, rbuf, count), name);
    COLL_NEW_SCHED(s, comm, req, name);
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
