/* Collectives: the public functions that move data (barrier, bcast, gather,
 * scatter, allgather, alltoall; the reductions are in mpi_coll_reduce.c), and
 * the argument checks every collective shares. Each checks its arguments,
 * builds a schedule with the algorithms of mpi_coll_algo.c (or
 * mpi_coll_inter.c on an intercommunicator), and runs it to completion
 * (blocking) or starts it (the I-variants): both take the same schedule.
 */

#include "mpi/mpi_coll_int.h"

/* ---------------------------------------------------------------- checks */

/* The public checks and the common ending, shared with mpi_coll_reduce.c,
 * mpi_coll_inter.c and mpi_coll_neighbor.c. */
int weft__coll_check_op(MPI_Op op)
{
    if (!op || op == MPI_OP_NULL || op->magic != WEFT_MPI_MAGIC_OP)
        return MPI_ERR_OP;
    return MPI_SUCCESS;
}

/* count elements of t at buf: count, type, and the buffer. */
int weft__coll_check_data(const void *buf, int count, MPI_Datatype t)
{
    int err = weft__mpi_check_count(count);
    if (err == MPI_SUCCESS)
        err = weft__mpi_check_type(t);
    if (err == MPI_SUCCESS && buf != MPI_IN_PLACE)
        err = weft__mpi_check_buf(buf, count, t);
    return err;
}

int weft__coll_check_counts(const int *counts, int n)
{
    if (n > 0 && !counts)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return MPI_ERR_COUNT;
    return MPI_SUCCESS;
}

int weft__coll_check_blocks(const weft_coll_blocks_t *b, int n)
{
    switch (b->mode) {
    case WEFT_COLL_BLK_UNIFORM:
        return weft__coll_check_data(b->buf, b->count, b->type);
    case WEFT_COLL_BLK_V: {
        int err = n > 0 && (!b->counts || !b->displs) ? MPI_ERR_ARG
                                                      : weft__coll_check_counts(b->counts, n);
        return err ? err : weft__mpi_check_type(b->type);
    }
    default: {
        if (n > 0 && (!b->counts || !b->types || (!b->displs && !b->adispls)))
            return MPI_ERR_ARG;
        int err = weft__coll_check_counts(b->counts, n);
        for (int i = 0; i < n && err == MPI_SUCCESS; i++)
            err = weft__mpi_check_type(b->types[i]);
        return err;
    }
    }
}

/* A rank of an intracommunicator; on an intercommunicator MPI_ROOT,
 * MPI_PROC_NULL or a rank of the remote group. */
int weft__coll_check_root(MPI_Comm comm, int root)
{
    if (comm->inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL)
            return MPI_SUCCESS;
        return (root < 0 || root >= comm->remote_group->size) ? MPI_ERR_ROOT : MPI_SUCCESS;
    }
    return (root < 0 || root >= comm->size) ? MPI_ERR_ROOT : MPI_SUCCESS;
}

int weft__coll_check_alias(const void *sbuf, const void *rbuf, int count)
{
    return (count > 0 && sbuf == rbuf && sbuf != MPI_BOTTOM) ? MPI_ERR_BUFFER : MPI_SUCCESS;
}

int weft__coll_finish(weft__mpi_sched_t *s, int err, MPI_Comm comm, MPI_Request *request,
                      const char *name)
{
    if (err == MPI_SUCCESS && !weft__coll_pin.dry)
        err = request ? weft__coll_start(s, comm, request) : weft__coll_run(s);
    else
        weft__coll_discard(s);
    return err == MPI_SUCCESS ? MPI_SUCCESS : weft__mpi_err(comm, err, name);
}

/* ---------------------------------------------------------------- barrier, bcast */

static int barrier(MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Ibarrier" : "MPI_Barrier";
    COLL_CHECK_COMM(comm, name);
    COLL_NEW_SCHED(s, comm, req, name);
    int err = comm->inter ? weft__coll_inter_barrier(s, comm) : weft__coll_b_barrier(s, comm);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Barrier(MPI_Comm comm)
{
    return barrier(comm, NULL);
}
WEFT_MPI_ALIAS(Barrier)

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ibarrier");
    return barrier(comm, request);
}
WEFT_MPI_ALIAS(Ibarrier)

/* A blocking bcast of a contiguous buffer runs without a schedule: the
 * binomial tree of weft__coll_b_bcast, same messages and tags (so ranks
 * taking either path interoperate), posted and waited for directly. As with
 * a schedule, a failed receive (a dead parent, a poison, a truncation) sends
 * the children poisons instead of the data (see "failures" in
 * mpi_coll_int.h), so none is left waiting and none takes what we did not
 * get for the root's data. */
static int bcast_direct(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
    int p = comm->size;
    size_t n = t->size * (size_t)count;
    uint32_t seq = weft__coll_next_seq(comm, false);
    uint64_t tag = weft_coll_tag(seq, 1, 0); /* the schedule's phase 1, step 0 */
    if (p == 1)
        return MPI_SUCCESS;
    char none;
    void *data = n ? buf : &none; /* zero bytes still make a message */
    weft__coll_direct_t d = {.nreq = 0};
    int rc = WEFT_OK;
    int vr = (comm->rank - root + p) % p;
    int mask = weft_coll_bino_mask(p, vr);
    if (vr) {
        rc = weft__coll_post_direct(&d, comm, (vr - mask + root) % p, tag, data, n, false, WEFT_OK);
        int wrc = weft__coll_wait_direct(&d);
        rc = rc != WEFT_OK ? rc : wrc;
    }
    int got = rc; /* what the children get: the data, or the poison of this */
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            int prc =
                weft__coll_post_direct(&d, comm, (vr + mask + root) % p, tag, data, n, true, got);
            rc = rc != WEFT_OK ? rc : prc;
        }
    }
    int wrc = weft__coll_wait_direct(&d);
    rc = rc != WEFT_OK ? rc : wrc;
    return rc == WEFT_OK ? MPI_SUCCESS : weft__mpi_err_from_weft(rc);
}

static int bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Ibcast" : "MPI_Bcast";
    COLL_CHECK_COMM(comm, name);
    COLL_CHECK(comm, req, weft__coll_check_root(comm, root), name);
    if (!comm->inter || root != MPI_PROC_NULL)
        COLL_CHECK(comm, req, weft__coll_check_data(buf, count, t), name);
    if (!req && !comm->inter && t->contig && t->true_lb == 0) {
        int e = bcast_direct(buf, count, t, root, comm);
        return e == MPI_SUCCESS ? MPI_SUCCESS : weft__mpi_err(comm, e, name);
    }
    COLL_NEW_SCHED(s, comm, req, name);
    int err = comm->inter ? weft__coll_inter_bcast(s, comm, buf, count, t, root)
                          : weft__coll_b_bcast(s, comm, buf, (size_t)count, t, root);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast(buffer, count, datatype, root, comm, NULL);
}
WEFT_MPI_ALIAS(Bcast)

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ibcast");
    return bcast(buffer, count, datatype, root, comm, request);
}
WEFT_MPI_ALIAS(Ibcast)

/* ---------------------------------------------------------------- gather, scatter */

/* The arguments of gather and scatter: mine is what a non-root rank sends or
 * receives (MPI_IN_PLACE at an intracommunicator's root: the root's own block
 * stays where it is), all the root's blocks, one per peer. */
static int check_rooted(MPI_Comm comm, int root, const void *mine, int count, MPI_Datatype type,
                        const weft_coll_blocks_t *all)
{
    int err = weft__coll_check_root(comm, root);
    if (err)
        return err;
    bool inter = comm->inter;
    bool is_root = inter ? root == MPI_ROOT : comm->rank == root;
    bool moves = !inter || (root != MPI_ROOT && root != MPI_PROC_NULL);
    if (moves && !(mine == MPI_IN_PLACE && !inter && is_root) &&
        (err = mine == MPI_IN_PLACE ? MPI_ERR_BUFFER : weft__coll_check_data(mine, count, type)))
        return err;
    if (!is_root)
        return MPI_SUCCESS;
    if ((err = weft__coll_check_blocks(all, weft__mpi_comm_peer_size(comm))))
        return err;
    return inter || mine == MPI_IN_PLACE ? MPI_SUCCESS
                                         : weft__coll_check_alias(mine, all->buf, count);
}

static int gather(const void *sbuf, int scount, MPI_Datatype stype, const weft_coll_blocks_t *rb,
                  int root, MPI_Comm comm, MPI_Request *req, const char *name)
{
    COLL_CHECK_COMM(comm, name);
    COLL_CHECK(comm, req, check_rooted(comm, root, sbuf, scount, stype, rb), name);
    COLL_NEW_SCHED(s, comm, req, name);
    int err = comm->inter ? weft__coll_inter_gather(s, comm, sbuf, scount, stype, rb, root)
                          : weft__coll_b_gather(s, comm, sbuf, (size_t)scount, stype, rb, root);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    return gather(sendbuf, sendcount, sendtype, &rb, root, comm, NULL, "MPI_Gather");
}
WEFT_MPI_ALIAS(Gather)

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Igather");
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    return gather(sendbuf, sendcount, sendtype, &rb, root, comm, request, "MPI_Igather");
}
WEFT_MPI_ALIAS(Igather)

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, displs, recvtype);
    return gather(sendbuf, sendcount, sendtype, &rb, root, comm, NULL, "MPI_Gatherv");
}
WEFT_MPI_ALIAS(Gatherv)

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Igatherv");
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, displs, recvtype);
    return gather(sendbuf, sendcount, sendtype, &rb, root, comm, request, "MPI_Igatherv");
}
WEFT_MPI_ALIAS(Igatherv)

static int scatter(const weft_coll_blocks_t *sb, void *rbuf, int rcount, MPI_Datatype rtype,
                   int root, MPI_Comm comm, MPI_Request *req, const char *name)
{
    COLL_CHECK_COMM(comm, name);
    COLL_CHECK(comm, req, check_rooted(comm, root, rbuf, rcount, rtype, sb), name);
    COLL_NEW_SCHED(s, comm, req, name);
    int err = comm->inter ? weft__coll_inter_scatter(s, comm, sb, rbuf, rcount, rtype, root)
                          : weft__coll_b_scatter(s, comm, sb, rbuf, (size_t)rcount, rtype, root);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    weft_coll_blocks_t sb = weft__coll_uniform(sendbuf, sendcount, sendtype);
    return scatter(&sb, recvbuf, recvcount, recvtype, root, comm, NULL, "MPI_Scatter");
}
WEFT_MPI_ALIAS(Scatter)

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iscatter");
    weft_coll_blocks_t sb = weft__coll_uniform(sendbuf, sendcount, sendtype);
    return scatter(&sb, recvbuf, recvcount, recvtype, root, comm, request, "MPI_Iscatter");
}
WEFT_MPI_ALIAS(Iscatter)

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    weft_coll_blocks_t sb = weft__coll_vector(sendbuf, sendcounts, displs, sendtype);
    return scatter(&sb, recvbuf, recvcount, recvtype, root, comm, NULL, "MPI_Scatterv");
}
WEFT_MPI_ALIAS(Scatterv)

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iscatterv");
    weft_coll_blocks_t sb = weft__coll_vector(sendbuf, sendcounts, displs, sendtype);
    return scatter(&sb, recvbuf, recvcount, recvtype, root, comm, request, "MPI_Iscatterv");
}
WEFT_MPI_ALIAS(Iscatterv)

/* ---------------------------------------------------------------- allgather */

static int allgather(const void *sbuf, int scount, MPI_Datatype stype, const weft_coll_blocks_t *rb,
                     MPI_Comm comm, MPI_Request *req, const char *name)
{
    COLL_CHECK_COMM(comm, name);
    if (sbuf == MPI_IN_PLACE)
        COLL_CHECK(comm, req, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        COLL_CHECK(comm, req, weft__coll_check_data(sbuf, scount, stype), name);
    COLL_CHECK(comm, req, weft__coll_check_blocks(rb, weft__mpi_comm_peer_size(comm)), name);
    if (sbuf != MPI_IN_PLACE && !comm->inter)
        COLL_CHECK(comm, req, weft__coll_check_alias(sbuf, rb->buf, scount), name);
    COLL_NEW_SCHED(s, comm, req, name);
    int err = comm->inter ? weft__coll_inter_allgather(s, comm, sbuf, scount, stype, rb)
                          : weft__coll_b_allgather(s, comm, sbuf, (size_t)scount, stype, rb);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    return allgather(sendbuf, sendcount, sendtype, &rb, comm, NULL, "MPI_Allgather");
}
WEFT_MPI_ALIAS(Allgather)

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iallgather");
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    return allgather(sendbuf, sendcount, sendtype, &rb, comm, request, "MPI_Iallgather");
}
WEFT_MPI_ALIAS(Iallgather)

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, displs, recvtype);
    return allgather(sendbuf, sendcount, sendtype, &rb, comm, NULL, "MPI_Allgatherv");
}
WEFT_MPI_ALIAS(Allgatherv)

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iallgatherv");
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, displs, recvtype);
    return allgather(sendbuf, sendcount, sendtype, &rb, comm, request, "MPI_Iallgatherv");
}
WEFT_MPI_ALIAS(Iallgatherv)

/* ---------------------------------------------------------------- alltoall */

/* Does b describe no data at all? Buffers that carry nothing may alias. */
static bool blocks_empty(const weft_coll_blocks_t *b, int n)
{
    for (int i = 0; i < n; i++) {
        char *p;
        size_t count;
        MPI_Datatype t;
        weft__coll_blk(b, i, &p, &count, &t);
        if (count && t->size)
            return false;
    }
    return true;
}

static int alltoall(const weft_coll_blocks_t *sb, const weft_coll_blocks_t *rb, MPI_Comm comm,
                    MPI_Request *req, const char *name)
{
    COLL_CHECK_COMM(comm, name);
    int n = weft__mpi_comm_peer_size(comm);
    bool in_place = sb->buf == MPI_IN_PLACE;
    if (in_place)
        COLL_CHECK(comm, req, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        COLL_CHECK(comm, req, weft__coll_check_blocks(sb, n), name);
    COLL_CHECK(comm, req, weft__coll_check_blocks(rb, n), name);
    if (!in_place && !comm->inter && sb->buf == rb->buf && sb->buf != MPI_BOTTOM &&
        !(blocks_empty(sb, n) && blocks_empty(rb, n)))
        COLL_CHECK(comm, req, MPI_ERR_BUFFER, name);
    COLL_NEW_SCHED(s, comm, req, name);
    int err = comm->inter ? weft__coll_inter_alltoall(s, comm, sb, rb)
                          : weft__coll_b_alltoall(s, comm, in_place ? NULL : sb, rb);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t sb = weft__coll_uniform(sendbuf, sendcount, sendtype);
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    return alltoall(&sb, &rb, comm, NULL, "MPI_Alltoall");
}
WEFT_MPI_ALIAS(Alltoall)

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoall");
    weft_coll_blocks_t sb = weft__coll_uniform(sendbuf, sendcount, sendtype);
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    return alltoall(&sb, &rb, comm, request, "MPI_Ialltoall");
}
WEFT_MPI_ALIAS(Ialltoall)

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t sb = weft__coll_vector(sendbuf, sendcounts, sdispls, sendtype);
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, rdispls, recvtype);
    return alltoall(&sb, &rb, comm, NULL, "MPI_Alltoallv");
}
WEFT_MPI_ALIAS(Alltoallv)

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoallv");
    weft_coll_blocks_t sb = weft__coll_vector(sendbuf, sendcounts, sdispls, sendtype);
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, rdispls, recvtype);
    return alltoall(&sb, &rb, comm, request, "MPI_Ialltoallv");
}
WEFT_MPI_ALIAS(Ialltoallv)

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    weft_coll_blocks_t sb = weft__coll_wblocks(sendbuf, sendcounts, sdispls, NULL, sendtypes);
    weft_coll_blocks_t rb = weft__coll_wblocks(recvbuf, recvcounts, rdispls, NULL, recvtypes);
    return alltoall(&sb, &rb, comm, NULL, "MPI_Alltoallw");
}
WEFT_MPI_ALIAS(Alltoallw)

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoallw");
    weft_coll_blocks_t sb = weft__coll_wblocks(sendbuf, sendcounts, sdispls, NULL, sendtypes);
    weft_coll_blocks_t rb = weft__coll_wblocks(recvbuf, recvcounts, rdispls, NULL, recvtypes);
    return alltoall(&sb, &rb, comm, request, "MPI_Ialltoallw");
}
WEFT_MPI_ALIAS(Ialltoallw)
