/* Collectives on intercommunicators (MPI 3.1 §5.2.2): messages between the two
 * groups go on the intercommunicator (peer ranks are remote ranks); work inside
 * one group goes on comm->local_comm with the intracommunicator builders.
 *
 *   barrier      local barrier; the two leaders (local rank 0) exchange a
 *                zero-byte message; local bcast of zero bytes
 *   bcast        root -> remote rank 0, then a bcast inside the receiving group
 *   reduce       reduce inside the sending group to its rank 0, which sends to root
 *   allreduce    each group reduces to its leader, leaders swap, each group bcasts
 *                what it received (the result in A is the reduction of B's data)
 *   gather(v), scatter(v)      root <-> every remote rank directly
 *   allgather(v), alltoall(v,w) every rank <-> every remote rank, one round
 *   reduce_scatter(_block)      as allreduce, then a scatterv inside the group
 */
#include "mpi/mpi_coll_int.h"

static int need_local(MPI_Comm comm)
{
    return comm->local_comm ? MPI_SUCCESS : MPI_ERR_COMM;
}

int weft__coll_inter_barrier(weft__mpi_sched_t *s, MPI_Comm comm)
{
    MPI_Comm lc = comm->local_comm;
    if (need_local(comm))
        return MPI_ERR_COMM;
    weft__coll_b_barrier(s, lc);
    weft__coll_phase(s);
    if (lc->rank == 0) {
        weft__coll_send(s, comm, 0, NULL, 0, NULL, 0);
        weft__coll_recv(s, comm, 0, NULL, 0, NULL, 0);
    }
    weft__coll_round(s);
    return weft__coll_b_bcast(s, lc, NULL, 0, NULL, 0);
}

int weft__coll_inter_bcast(weft__mpi_sched_t *s, MPI_Comm comm, void *buf, int count,
                           MPI_Datatype t, int root)
{
    weft__coll_phase(s);
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        weft__coll_send(s, comm, 0, buf, (size_t)count, t, 0);
        weft__coll_round(s);
        return MPI_SUCCESS;
    }
    MPI_Comm lc = comm->local_comm;
    if (need_local(comm))
        return MPI_ERR_COMM;
    if (lc->rank == 0)
        weft__coll_recv(s, comm, root, buf, (size_t)count, t, 0);
    weft__coll_round(s);
    return weft__coll_b_bcast(s, lc, buf, (size_t)count, t, 0);
}

int weft__coll_inter_reduce(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, void *rbuf,
                            int count, MPI_Datatype t, MPI_Op op, int root)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        weft__coll_phase(s);
        weft__coll_recv(s, comm, 0, rbuf, (size_t)count, t, 0);
        weft__coll_round(s);
        return MPI_SUCCESS;
    }
    MPI_Comm lc = comm->local_comm;
    if (need_local(comm))
        return MPI_ERR_COMM;
    void *tmp = NULL;
    if (lc->rank == 0 && !(tmp = weft__coll_tmp_typed(s, (size_t)count, t)))
        return MPI_ERR_NO_MEM;
    /* The message that crosses is tagged with phase 1, as the root's receive:
     * the local reduction opened it (on local_comm, a tag space of its own). */
    int err = weft__coll_b_reduce(s, lc, sbuf, tmp, (size_t)count, t, op, 0);
    if (err)
        return err;
    weft__coll_round(s);
    if (lc->rank == 0)
        weft__coll_send(s, comm, root, tmp, (size_t)count, t, 0);
    weft__coll_round(s);
    return MPI_SUCCESS;
}

/* Reduce inside each group to its leader, swap with the remote leader into
 * `into` (at the leader), total elements. Returns the leader's temporary. */
static int reduce_and_swap(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, void *into,
                           size_t total, MPI_Datatype t, MPI_Op op)
{
    MPI_Comm lc = comm->local_comm;
    void *mine = NULL;
    if (lc->rank == 0 && !(mine = weft__coll_tmp_typed(s, total, t)))
        return MPI_ERR_NO_MEM;
    int err = weft__coll_b_reduce(s, lc, sbuf, mine, total, t, op, 0);
    if (err)
        return err;
    weft__coll_round(s);
    if (lc->rank == 0) {
        weft__coll_send(s, comm, 0, mine, total, t, 1);
        weft__coll_recv(s, comm, 0, into, total, t, 1);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

int weft__coll_inter_allreduce(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, void *rbuf,
                               int count, MPI_Datatype t, MPI_Op op)
{
    if (need_local(comm))
        return MPI_ERR_COMM;
    int err = reduce_and_swap(s, comm, sbuf, rbuf, (size_t)count, t, op);
    if (err)
        return err;
    return weft__coll_b_bcast(s, comm->local_comm, rbuf, (size_t)count, t, 0);
}

int weft__coll_inter_reduce_scatter(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf,
                                    void *rbuf, const int *counts, MPI_Datatype t, MPI_Op op)
{
    if (need_local(comm))
        return MPI_ERR_COMM;
    MPI_Comm lc = comm->local_comm;
    weft_coll_blocks_t b;
    size_t total;
    int err = weft__coll_end_to_end(s, lc->size, counts, t, &b, &total);
    if (err)
        return err;
    void *theirs = NULL;
    if (lc->rank == 0 && !(theirs = weft__coll_tmp_typed(s, total, t)))
        return MPI_ERR_NO_MEM;
    err = reduce_and_swap(s, comm, sbuf, theirs, total, t, op);
    if (err)
        return err;
    b.buf = theirs;
    return weft__coll_b_scatter(s, lc, &b, rbuf, (size_t)counts[lc->rank], t, 0);
}

int weft__coll_inter_gather(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, int scount,
                            MPI_Datatype stype, const weft_coll_blocks_t *rb, int root)
{
    weft__coll_phase(s);
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root != MPI_ROOT) {
        weft__coll_send(s, comm, root, sbuf, (size_t)scount, stype, 0);
    } else {
        for (int i = 0; i < comm->remote_group->size; i++) {
            char *p;
            size_t n;
            MPI_Datatype t;
            weft__coll_blk(rb, i, &p, &n, &t);
            weft__coll_recv(s, comm, i, p, n, t, 0);
        }
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

int weft__coll_inter_scatter(weft__mpi_sched_t *s, MPI_Comm comm, const weft_coll_blocks_t *sb,
                             void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
    weft__coll_phase(s);
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root != MPI_ROOT) {
        weft__coll_recv(s, comm, root, rbuf, (size_t)rcount, rtype, 0);
    } else {
        for (int i = 0; i < comm->remote_group->size; i++) {
            char *p;
            size_t n;
            MPI_Datatype t;
            weft__coll_blk(sb, i, &p, &n, &t);
            weft__coll_send(s, comm, i, p, n, t, 0);
        }
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

int weft__coll_inter_allgather(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, int scount,
                               MPI_Datatype stype, const weft_coll_blocks_t *rb)
{
    weft__coll_phase(s);
    for (int i = 0; i < comm->remote_group->size; i++) {
        char *p;
        size_t n;
        MPI_Datatype t;
        weft__coll_blk(rb, i, &p, &n, &t);
        weft__coll_recv(s, comm, i, p, n, t, 0);
        weft__coll_send(s, comm, i, sbuf, (size_t)scount, stype, 0);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

int weft__coll_inter_alltoall(weft__mpi_sched_t *s, MPI_Comm comm, const weft_coll_blocks_t *sb,
                              const weft_coll_blocks_t *rb)
{
    weft__coll_phase(s);
    for (int i = 0; i < comm->remote_group->size; i++) {
        char *p;
        size_t n;
        MPI_Datatype t;
        weft__coll_blk(rb, i, &p, &n, &t);
        weft__coll_recv(s, comm, i, p, n, t, 0);
        weft__coll_blk(sb, i, &p, &n, &t);
        weft__coll_send(s, comm, i, p, n, t, 0);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}
