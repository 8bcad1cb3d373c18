/* Collectives on intracommunicators: the algorithms (as schedule builders) and
 * the public functions, blocking and non-blocking. A blocking collective builds
 * the same schedule as its I-variant and runs it to completion.
 *
 * Algorithms (simple first, O(log P) rounds where that is easy):
 *   barrier      dissemination (Hensgen, Finkel, Manber 1988): ceil(log2 P) rounds
 *   bcast        binomial tree from the root
 *   reduce       binomial tree; operands are always combined as
 *                (lower ranks) op (higher ranks), so non-commutative operations
 *                are reduced in rank order: towards rank 0, then sent to the root
 *   allreduce    reduce to rank 0 + bcast
 *   gather(v), scatter(v), allgather(v), alltoall(v,w)
 *                every message of the collective posted in one round
 *   reduce_scatter(_block)  reduce to rank 0 + scatterv
 *   scan, exscan recursive doubling, order kept for non-commutative operations
 *                (as in MPICH's MPIR_Scan_intra_recursive_doubling)
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"

/* ---------------------------------------------------------------- builders */

int weft__coll_b_barrier(weft__mpi_sched_t *s, MPI_Comm c)
{
    int p = c->size, r = c->rank;
    weft__coll_phase(s);
    for (int dist = 1, k = 0; dist < p; dist <<= 1, k++) {
        weft__coll_send(s, c, (r + dist) % p, NULL, 0, NULL, k);
        weft__coll_recv(s, c, (r - dist + p) % p, NULL, 0, NULL, k);
        weft__coll_round(s);
    }
    return MPI_SUCCESS;
}

int weft__coll_b_bcast(weft__mpi_sched_t *s, MPI_Comm c, void *buf, size_t count, MPI_Datatype t,
                       int root)
{
    int p = c->size;
    int vr = (c->rank - root + p) % p;
    int mask = 1;
    weft__coll_phase(s);
    while (mask < p) {
        if (vr & mask) {
            weft__coll_recv(s, c, (vr - mask + root) % p, buf, count, t, 0);
            weft__coll_round(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p)
            weft__coll_send(s, c, (vr + mask + root) % p, buf, count, t, 0);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

int weft__coll_b_reduce(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst, size_t count,
                        MPI_Datatype t, MPI_Op op, int root)
{
    int p = c->size, r = c->rank;
    /* Commutative: the tree is rooted at root. Otherwise at 0, so that the
     * subtrees are rank intervals, and the result then travels to root. */
    int top = op->commute ? root : 0;
    int vr = (r - top + p) % p;
    const void *acc = src;
    weft__coll_phase(s);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            weft__coll_send(s, c, (vr - mask + top) % p, acc, count, t, 0);
            weft__coll_round(s);
            break;
        }
        if (vr + mask < p) {
            void *tmp = weft__coll_tmp_typed(s, count, t);
            if (!tmp)
                return MPI_ERR_NO_MEM;
            weft__coll_recv(s, c, (vr + mask + top) % p, tmp, count, t, 0);
            /* tmp holds ranks above ours: acc op tmp keeps the order. */
            weft__coll_reduce(s, acc, tmp, count, t, op);
            acc = tmp;
            weft__coll_round(s);
        }
    }
    if (r == top && r == root) {
        if (acc != dst)
            weft__coll_copy(s, acc, count, t, dst, count, t);
    } else if (r == top) {
        weft__coll_send(s, c, root, acc, count, t, 1);
    } else if (r == root) {
        weft__coll_recv(s, c, top, dst, count, t, 1);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

int weft__coll_b_scatter(weft__mpi_sched_t *s, MPI_Comm c, const weft_coll_blocks_t *b, void *rbuf,
                         size_t rcount, MPI_Datatype rtype, int root)
{
    weft__coll_phase(s);
    if (c->rank != root) {
        weft__coll_recv(s, c, root, rbuf, rcount, rtype, 0);
        weft__coll_round(s);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < c->size; i++) {
        char *p;
        size_t n;
        MPI_Datatype t;
        weft__coll_blk(b, i, &p, &n, &t);
        if (i != root)
            weft__coll_send(s, c, i, p, n, t, 0);
        else if (rbuf != MPI_IN_PLACE)
            weft__coll_copy(s, p, n, t, rbuf, rcount, rtype);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

/* Root receives block i of b from rank i; the others send (sbuf, scount, stype). */
static int b_gather(weft__mpi_sched_t *s, MPI_Comm c, const void *sbuf, size_t scount,
                    MPI_Datatype stype, const weft_coll_blocks_t *b, int root)
{
    weft__coll_phase(s);
    if (c->rank != root) {
        weft__coll_send(s, c, root, sbuf, scount, stype, 0);
        weft__coll_round(s);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < c->size; i++) {
        char *p;
        size_t n;
        MPI_Datatype t;
        weft__coll_blk(b, i, &p, &n, &t);
        if (i != root)
            weft__coll_recv(s, c, i, p, n, t, 0);
        else if (sbuf != MPI_IN_PLACE)
            weft__coll_copy(s, sbuf, scount, stype, p, n, t);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

/* Everyone sends (sbuf...) to every other rank and receives block i from i.
 * sbuf == MPI_IN_PLACE: our data is already our block of b. */
static int b_allgather(weft__mpi_sched_t *s, MPI_Comm c, const void *sbuf, size_t scount,
                       MPI_Datatype stype, const weft_coll_blocks_t *b)
{
    int r = c->rank;
    char *mine;
    size_t mn;
    MPI_Datatype mt;
    weft__coll_blk(b, r, &mine, &mn, &mt);
    if (sbuf == MPI_IN_PLACE) {
        sbuf = mine;
        scount = mn;
        stype = mt;
    }
    weft__coll_phase(s);
    for (int i = 0; i < c->size; i++) {
        char *p;
        size_t n;
        MPI_Datatype t;
        weft__coll_blk(b, i, &p, &n, &t);
        if (i == r) {
            if (sbuf != mine)
                weft__coll_copy(s, sbuf, scount, stype, p, n, t);
            continue;
        }
        weft__coll_recv(s, c, i, p, n, t, 0);
        weft__coll_send(s, c, i, sbuf, scount, stype, 0);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

/* Block i of sb goes to rank i, block i of rb comes from rank i. sb == NULL:
 * in place (the data to send is rb's, taken now). */
static int b_alltoall(weft__mpi_sched_t *s, MPI_Comm c, const weft_coll_blocks_t *sb,
                      const weft_coll_blocks_t *rb)
{
    int r = c->rank;
    weft__coll_phase(s);
    for (int i = 0; i < c->size; i++) {
        char *rp, *sp;
        size_t rn, sn;
        MPI_Datatype rt, st;
        weft__coll_blk(rb, i, &rp, &rn, &rt);
        if (!sb) {
            if (i == r)
                continue;
            void *snap = weft__coll_snapshot(s, rp, rn, rt);
            if (!snap)
                return MPI_ERR_NO_MEM;
            weft__coll_recv(s, c, i, rp, rn, rt, 0);
            weft__coll_send(s, c, i, snap, weft__coll_bytes(rn, rt), NULL, 0);
            continue;
        }
        weft__coll_blk(sb, i, &sp, &sn, &st);
        if (i == r) {
            weft__coll_copy(s, sp, sn, st, rp, rn, rt);
            continue;
        }
        weft__coll_recv(s, c, i, rp, rn, rt, 0);
        weft__coll_send(s, c, i, sp, sn, st, 0);
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

static int b_allreduce(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst, size_t count,
                       MPI_Datatype t, MPI_Op op)
{
    int err = weft__coll_b_reduce(s, c, src, dst, count, t, op, 0);
    if (err)
        return err;
    return weft__coll_b_bcast(s, c, dst, count, t, 0);
}

/* Reduce everything to rank 0, then scatter counts[i] elements to rank i. */
static int b_reduce_scatter(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst,
                            const int *counts, MPI_Datatype t, MPI_Op op)
{
    int p = c->size;
    int *displs = weft__coll_tmp(s, (size_t)p * sizeof(int));
    if (!displs)
        return MPI_ERR_NO_MEM;
    size_t total = 0;
    for (int i = 0; i < p; i++) {
        displs[i] = (int)total;
        total += (size_t)counts[i];
    }
    void *all = NULL;
    if (c->rank == 0 && !(all = weft__coll_tmp_typed(s, total, t)))
        return MPI_ERR_NO_MEM;
    int err = weft__coll_b_reduce(s, c, src, all, total, t, op, 0);
    if (err)
        return err;
    weft_coll_blocks_t b = {
        .mode = WEFT_COLL_BLK_V, .buf = all, .type = t, .counts = counts, .displs = displs};
    return weft__coll_b_scatter(s, c, &b, dst, (size_t)counts[c->rank], t, 0);
}

static int b_scan(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst, size_t count,
                  MPI_Datatype t, MPI_Op op, bool exclusive)
{
    int p = c->size, r = c->rank;
    void *partial = weft__coll_tmp_typed(s, count, t);
    if (!partial)
        return MPI_ERR_NO_MEM;
    weft__coll_phase(s);
    weft__coll_copy(s, src, count, t, partial, count, t);
    if (!exclusive && src != dst)
        weft__coll_copy(s, src, count, t, dst, count, t);
    weft__coll_round(s);
    bool have = !exclusive; /* dst already holds something to combine with */
    for (int mask = 1, k = 0; mask < p; mask <<= 1, k++) {
        int peer = r ^ mask;
        if (peer >= p)
            continue;
        void *tmp = weft__coll_tmp_typed(s, count, t);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        weft__coll_recv(s, c, peer, tmp, count, t, k);
        weft__coll_send(s, c, peer, partial, count, t, k);
        if (r > peer) {
            /* tmp covers the ranks just below everything we hold. */
            if (have) {
                weft__coll_reduce(s, tmp, dst, count, t, op);
            } else {
                weft__coll_copy(s, tmp, count, t, dst, count, t);
                have = true;
            }
            weft__coll_reduce(s, tmp, partial, count, t, op);
        } else {
            weft__coll_reduce(s, partial, tmp, count, t, op);
            partial = tmp;
        }
        weft__coll_round(s);
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- checks */

#define CHECK_COMM(comm, name)                                                                     \
    do {                                                                                           \
        int e_ = weft__mpi_check_comm(comm);                                                       \
        if (e_ != MPI_SUCCESS)                                                                     \
            return weft__mpi_err(NULL, e_, name);                                                  \
    } while (0)

#define CHECK(comm, expr, name)                                                                    \
    do {                                                                                           \
        int e_ = (expr);                                                                           \
        if (e_ != MPI_SUCCESS)                                                                     \
            return weft__mpi_err(comm, e_, name);                                                  \
    } while (0)

/* The public checks and the common ending, shared with mpi_coll_inter.c and
 * mpi_coll_neighbor.c. */
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

static int check_counts(const int *counts, int n)
{
    if (n > 0 && !counts)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return MPI_ERR_COUNT;
    return MPI_SUCCESS;
}

static int check_root(MPI_Comm comm, int root)
{
    return (root < 0 || root >= comm->size) ? MPI_ERR_ROOT : MPI_SUCCESS;
}

/* Send and receive buffers that are the same memory, where the standard asks
 * for MPI_IN_PLACE instead. */
static int check_alias(const void *sbuf, const void *rbuf, int count)
{
    return (count > 0 && sbuf == rbuf && sbuf != MPI_BOTTOM) ? MPI_ERR_BUFFER : MPI_SUCCESS;
}

int weft__coll_finish(weft__mpi_sched_t *s, int err, MPI_Comm comm, MPI_Request *request,
                      const char *name)
{
    if (err == MPI_SUCCESS)
        err = request ? weft__coll_start(s, comm, request) : weft__coll_run(s);
    else
        weft__coll_discard(s);
    return err == MPI_SUCCESS ? MPI_SUCCESS : weft__mpi_err(comm, err, name);
}

#define NEW_SCHED(s, comm, name)                                                                   \
    weft__mpi_sched_t *s = weft__coll_new(comm);                                                   \
    if (!s)                                                                                        \
    return weft__mpi_err(comm, MPI_ERR_NO_MEM, name)

/* Roots of intercommunicator collectives: MPI_ROOT, MPI_PROC_NULL or a remote rank. */
static int check_inter_root(MPI_Comm comm, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    return (root < 0 || root >= comm->remote_group->size) ? MPI_ERR_ROOT : MPI_SUCCESS;
}

/* ---------------------------------------------------------------- barrier, bcast */

static int barrier(MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Ibarrier" : "MPI_Barrier";
    CHECK_COMM(comm, name);
    NEW_SCHED(s, comm, name);
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

static int bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Ibcast" : "MPI_Bcast";
    CHECK_COMM(comm, name);
    CHECK(comm, comm->inter ? check_inter_root(comm, root) : check_root(comm, root), name);
    if (!comm->inter || root != MPI_PROC_NULL)
        CHECK(comm, weft__coll_check_data(buf, count, t), name);
    NEW_SCHED(s, comm, name);
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

static int gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                  MPI_Comm comm, MPI_Request *req, const char *name)
{
    CHECK_COMM(comm, name);
    bool v = rcounts != NULL || displs != NULL;
    bool inter = comm->inter;
    CHECK(comm, inter ? check_inter_root(comm, root) : check_root(comm, root), name);
    bool is_root = inter ? root == MPI_ROOT : comm->rank == root;
    bool sends = inter ? (root != MPI_ROOT && root != MPI_PROC_NULL) : true;
    int nblocks = inter ? comm->remote_group->size : comm->size;
    if (sends && !(sbuf == MPI_IN_PLACE && !inter && is_root))
        CHECK(comm,
              sbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : weft__coll_check_data(sbuf, scount, stype),
              name);
    if (is_root) {
        if (v) {
            CHECK(comm, (!rcounts || !displs) ? MPI_ERR_ARG : check_counts(rcounts, nblocks), name);
            CHECK(comm, weft__mpi_check_type(rtype), name);
        } else {
            CHECK(comm, weft__coll_check_data(rbuf, rcount, rtype), name);
        }
        if (!inter && sbuf != MPI_IN_PLACE)
            CHECK(comm, check_alias(sbuf, rbuf, scount), name);
    }
    weft_coll_blocks_t b = {.mode = v ? WEFT_COLL_BLK_V : WEFT_COLL_BLK_UNIFORM,
                            .buf = rbuf,
                            .count = rcount,
                            .type = rtype,
                            .counts = rcounts,
                            .displs = displs};
    NEW_SCHED(s, comm, name);
    int err = inter ? weft__coll_inter_gather(s, comm, sbuf, scount, stype, &b, root)
                    : b_gather(s, comm, sbuf, (size_t)scount, stype, &b, root);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, root,
                  comm, NULL, "MPI_Gather");
}
WEFT_MPI_ALIAS(Gather)

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Igather");
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, root,
                  comm, request, "MPI_Igather");
}
WEFT_MPI_ALIAS(Igather)

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    static const int none[1];
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts ? recvcounts : none,
                  displs ? displs : none, recvtype, root, comm, NULL, "MPI_Gatherv");
}
WEFT_MPI_ALIAS(Gatherv)

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    static const int none[1];
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Igatherv");
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts ? recvcounts : none,
                  displs ? displs : none, recvtype, root, comm, request, "MPI_Igatherv");
}
WEFT_MPI_ALIAS(Igatherv)

static int scatter(const void *sbuf, int scount, const int *scounts, const int *displs,
                   MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                   MPI_Comm comm, MPI_Request *req, const char *name)
{
    CHECK_COMM(comm, name);
    bool v = scounts != NULL || displs != NULL;
    bool inter = comm->inter;
    CHECK(comm, inter ? check_inter_root(comm, root) : check_root(comm, root), name);
    bool is_root = inter ? root == MPI_ROOT : comm->rank == root;
    bool recvs = inter ? (root != MPI_ROOT && root != MPI_PROC_NULL) : true;
    int nblocks = inter ? comm->remote_group->size : comm->size;
    if (recvs && !(rbuf == MPI_IN_PLACE && !inter && is_root))
        CHECK(comm,
              rbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : weft__coll_check_data(rbuf, rcount, rtype),
              name);
    if (is_root) {
        if (v) {
            CHECK(comm, (!scounts || !displs) ? MPI_ERR_ARG : check_counts(scounts, nblocks), name);
            CHECK(comm, weft__mpi_check_type(stype), name);
        } else {
            CHECK(comm, weft__coll_check_data(sbuf, scount, stype), name);
        }
        if (!inter && rbuf != MPI_IN_PLACE)
            CHECK(comm, check_alias(sbuf, rbuf, rcount), name);
    }
    weft_coll_blocks_t b = {.mode = v ? WEFT_COLL_BLK_V : WEFT_COLL_BLK_UNIFORM,
                            .buf = sbuf,
                            .count = scount,
                            .type = stype,
                            .counts = scounts,
                            .displs = displs};
    NEW_SCHED(s, comm, name);
    int err = inter ? weft__coll_inter_scatter(s, comm, &b, rbuf, rcount, rtype, root)
                    : weft__coll_b_scatter(s, comm, &b, rbuf, (size_t)rcount, rtype, root);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, recvtype, root,
                   comm, NULL, "MPI_Scatter");
}
WEFT_MPI_ALIAS(Scatter)

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iscatter");
    return scatter(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, recvtype, root,
                   comm, request, "MPI_Iscatter");
}
WEFT_MPI_ALIAS(Iscatter)

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    static const int none[1];
    return scatter(sendbuf, 0, sendcounts ? sendcounts : none, displs ? displs : none, sendtype,
                   recvbuf, recvcount, recvtype, root, comm, NULL, "MPI_Scatterv");
}
WEFT_MPI_ALIAS(Scatterv)

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    static const int none[1];
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iscatterv");
    return scatter(sendbuf, 0, sendcounts ? sendcounts : none, displs ? displs : none, sendtype,
                   recvbuf, recvcount, recvtype, root, comm, request, "MPI_Iscatterv");
}
WEFT_MPI_ALIAS(Iscatterv)

/* ---------------------------------------------------------------- allgather */

static int allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm,
                     MPI_Request *req, const char *name)
{
    CHECK_COMM(comm, name);
    bool v = rcounts != NULL || displs != NULL;
    int nblocks = weft__mpi_comm_peer_size(comm);
    if (sbuf == MPI_IN_PLACE)
        CHECK(comm, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        CHECK(comm, weft__coll_check_data(sbuf, scount, stype), name);
    if (v) {
        CHECK(comm, (!rcounts || !displs) ? MPI_ERR_ARG : check_counts(rcounts, nblocks), name);
        CHECK(comm, weft__mpi_check_type(rtype), name);
    } else {
        CHECK(comm, weft__coll_check_data(rbuf, rcount, rtype), name);
    }
    if (sbuf != MPI_IN_PLACE && !comm->inter)
        CHECK(comm, check_alias(sbuf, rbuf, scount), name);
    weft_coll_blocks_t b = {.mode = v ? WEFT_COLL_BLK_V : WEFT_COLL_BLK_UNIFORM,
                            .buf = rbuf,
                            .count = rcount,
                            .type = rtype,
                            .counts = rcounts,
                            .displs = displs};
    NEW_SCHED(s, comm, name);
    int err = comm->inter ? weft__coll_inter_allgather(s, comm, sbuf, scount, stype, &b)
                          : b_allgather(s, comm, sbuf, (size_t)scount, stype, &b);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, comm,
                     NULL, "MPI_Allgather");
}
WEFT_MPI_ALIAS(Allgather)

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iallgather");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, comm,
                     request, "MPI_Iallgather");
}
WEFT_MPI_ALIAS(Iallgather)

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    static const int none[1];
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts ? recvcounts : none,
                     displs ? displs : none, recvtype, comm, NULL, "MPI_Allgatherv");
}
WEFT_MPI_ALIAS(Allgatherv)

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    static const int none[1];
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Iallgatherv");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts ? recvcounts : none,
                     displs ? displs : none, recvtype, comm, request, "MPI_Iallgatherv");
}
WEFT_MPI_ALIAS(Iallgatherv)

/* ---------------------------------------------------------------- alltoall */

/* Check the n blocks of b (types of w-blocks included). */
static int check_blocks(const weft_coll_blocks_t *b, int n)
{
    switch (b->mode) {
    case WEFT_COLL_BLK_UNIFORM:
        return weft__coll_check_data(b->buf, b->count, b->type);
    case WEFT_COLL_BLK_V: {
        int err = (!b->counts || !b->displs) ? MPI_ERR_ARG : check_counts(b->counts, n);
        return err ? err : weft__mpi_check_type(b->type);
    }
    default: {
        if (n > 0 && (!b->counts || !b->types || (!b->displs && !b->adispls)))
            return MPI_ERR_ARG;
        int err = check_counts(b->counts, n);
        for (int i = 0; i < n && err == MPI_SUCCESS; i++)
            err = weft__mpi_check_type(b->types[i]);
        return err;
    }
    }
}

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
    CHECK_COMM(comm, name);
    int n = weft__mpi_comm_peer_size(comm);
    bool in_place = sb->buf == MPI_IN_PLACE;
    if (in_place)
        CHECK(comm, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        CHECK(comm, check_blocks(sb, n), name);
    CHECK(comm, check_blocks(rb, n), name);
    if (!in_place && !comm->inter && sb->buf == rb->buf && sb->buf != MPI_BOTTOM &&
        !(blocks_empty(sb, n) && blocks_empty(rb, n)))
        CHECK(comm, MPI_ERR_BUFFER, name);
    NEW_SCHED(s, comm, name);
    int err = comm->inter ? weft__coll_inter_alltoall(s, comm, sb, rb)
                          : b_alltoall(s, comm, in_place ? NULL : sb, rb);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t sb = {
        .mode = WEFT_COLL_BLK_UNIFORM, .buf = sendbuf, .count = sendcount, .type = sendtype};
    weft_coll_blocks_t rb = {
        .mode = WEFT_COLL_BLK_UNIFORM, .buf = recvbuf, .count = recvcount, .type = recvtype};
    return alltoall(&sb, &rb, comm, NULL, "MPI_Alltoall");
}
WEFT_MPI_ALIAS(Alltoall)

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    weft_coll_blocks_t sb = {
        .mode = WEFT_COLL_BLK_UNIFORM, .buf = sendbuf, .count = sendcount, .type = sendtype};
    weft_coll_blocks_t rb = {
        .mode = WEFT_COLL_BLK_UNIFORM, .buf = recvbuf, .count = recvcount, .type = recvtype};
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoall");
    return alltoall(&sb, &rb, comm, request, "MPI_Ialltoall");
}
WEFT_MPI_ALIAS(Ialltoall)

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t sb = {.mode = WEFT_COLL_BLK_V,
                             .buf = sendbuf,
                             .type = sendtype,
                             .counts = sendcounts,
                             .displs = sdispls};
    weft_coll_blocks_t rb = {.mode = WEFT_COLL_BLK_V,
                             .buf = recvbuf,
                             .type = recvtype,
                             .counts = recvcounts,
                             .displs = rdispls};
    return alltoall(&sb, &rb, comm, NULL, "MPI_Alltoallv");
}
WEFT_MPI_ALIAS(Alltoallv)

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    weft_coll_blocks_t sb = {.mode = WEFT_COLL_BLK_V,
                             .buf = sendbuf,
                             .type = sendtype,
                             .counts = sendcounts,
                             .displs = sdispls};
    weft_coll_blocks_t rb = {.mode = WEFT_COLL_BLK_V,
                             .buf = recvbuf,
                             .type = recvtype,
                             .counts = recvcounts,
                             .displs = rdispls};
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoallv");
    return alltoall(&sb, &rb, comm, request, "MPI_Ialltoallv");
}
WEFT_MPI_ALIAS(Ialltoallv)

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    weft_coll_blocks_t sb = {.mode = WEFT_COLL_BLK_W,
                             .buf = sendbuf,
                             .types = sendtypes,
                             .counts = sendcounts,
                             .displs = sdispls};
    weft_coll_blocks_t rb = {.mode = WEFT_COLL_BLK_W,
                             .buf = recvbuf,
                             .types = recvtypes,
                             .counts = recvcounts,
                             .displs = rdispls};
    return alltoall(&sb, &rb, comm, NULL, "MPI_Alltoallw");
}
WEFT_MPI_ALIAS(Alltoallw)

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    weft_coll_blocks_t sb = {.mode = WEFT_COLL_BLK_W,
                             .buf = sendbuf,
                             .types = sendtypes,
                             .counts = sendcounts,
                             .displs = sdispls};
    weft_coll_blocks_t rb = {.mode = WEFT_COLL_BLK_W,
                             .buf = recvbuf,
                             .types = recvtypes,
                             .counts = recvcounts,
                             .displs = rdispls};
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoallw");
    return alltoall(&sb, &rb, comm, request, "MPI_Ialltoallw");
}
WEFT_MPI_ALIAS(Ialltoallw)

/* ---------------------------------------------------------------- reductions */

static int reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
                  MPI_Comm comm, MPI_Request *req)
{
    const char *name = req ? "MPI_Ireduce" : "MPI_Reduce";
    CHECK_COMM(comm, name);
    bool inter = comm->inter;
    CHECK(comm, inter ? check_inter_root(comm, root) : check_root(comm, root), name);
    CHECK(comm, weft__coll_check_op(op), name);
    CHECK(comm, weft__mpi_check_count(count), name);
    CHECK(comm, weft__mpi_check_type(t), name);
    bool is_root = inter ? root == MPI_ROOT : comm->rank == root;
    if (sbuf == MPI_IN_PLACE)
        CHECK(comm, (is_root && !inter) ? MPI_SUCCESS : MPI_ERR_BUFFER, name);
    else if (is_root && !inter)
        CHECK(comm, check_alias(sbuf, rbuf, count), name);
    NEW_SCHED(s, comm, name);
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
    CHECK_COMM(comm, name);
    CHECK(comm, weft__coll_check_op(op), name);
    CHECK(comm, weft__coll_check_data(rbuf, count, t), name);
    if (sbuf == MPI_IN_PLACE)
        CHECK(comm, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        CHECK(comm, check_alias(sbuf, rbuf, count), name);
    NEW_SCHED(s, comm, name);
    int err = comm->inter ? weft__coll_inter_allreduce(s, comm, sbuf, rbuf, count, t, op)
                          : b_allreduce(s, comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf,
                                        (size_t)count, t, op);
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
    CHECK(comm, weft__coll_check_op(op), name);
    CHECK(comm, weft__mpi_check_type(t), name);
    CHECK(comm, check_counts(counts, n), name);
    if (sbuf == MPI_IN_PLACE)
        CHECK(comm, comm->inter ? MPI_ERR_BUFFER : MPI_SUCCESS, name);
    else
        CHECK(comm, check_alias(sbuf, rbuf, counts[comm->rank]), name);
    NEW_SCHED(s, comm, name);
    int err = comm->inter ? weft__coll_inter_reduce_scatter(s, comm, sbuf, rbuf, counts, t, op)
                          : b_reduce_scatter(s, comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf,
                                             counts, t, op);
    return weft__coll_finish(s, err, comm, req, name);
}

/* Reduce_scatter_block: the counts, all equal, in a temporary array. */
static int reduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                                MPI_Comm comm, MPI_Request *req, const char *name)
{
    CHECK_COMM(comm, name);
    CHECK(comm, weft__mpi_check_count(count), name);
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
    CHECK_COMM(comm, "MPI_Reduce_scatter");
    return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, NULL,
                          "MPI_Reduce_scatter");
}
WEFT_MPI_ALIAS(Reduce_scatter)

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    CHECK_COMM(comm, "MPI_Ireduce_scatter");
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ireduce_scatter");
    return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request,
                          "MPI_Ireduce_scatter");
}
WEFT_MPI_ALIAS(Ireduce_scatter)

static int scan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                MPI_Request *req, bool exclusive, const char *name)
{
    CHECK_COMM(comm, name);
    CHECK(comm, comm->inter ? MPI_ERR_COMM : MPI_SUCCESS, name);
    CHECK(comm, weft__coll_check_op(op), name);
    CHECK(comm, weft__coll_check_data(rbuf, count, t), name);
    if (sbuf != MPI_IN_PLACE)
        CHECK(comm, check_alias(sbuf, rbuf, count), name);
    NEW_SCHED(s, comm, name);
    int err =
        b_scan(s, comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, (size_t)count, t, op, exclusive);
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
