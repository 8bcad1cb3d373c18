/* Collectives on intracommunicators: the algorithms, as schedule builders (the
 * public functions are in mpi_coll.c and mpi_coll_reduce.c).
 *
 * Algorithms (simple first, O(log P) rounds where that is easy):
 *   barrier, bcast, reduce, allreduce
 *                the engine's builders (weft_coll.h, src/coll/coll_algo.c)
 *   gather(v), scatter(v), allgather(v), alltoall(v,w)
 *                every message of the collective posted in one round
 *   reduce_scatter(_block)  reduce to rank 0 + scatterv
 *   scan, exscan recursive doubling, order kept for non-commutative operations
 *                (as in MPICH's MPIR_Scan_intra_recursive_doubling)
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"

/* barrier, bcast, reduce: the engine's builders over c. */
int weft__coll_b_barrier(weft__mpi_sched_t *s, MPI_Comm c)
{
    weft_coll_view_t v = weft__coll_view(s, c);
    return weft_coll_build_barrier(s, &v);
}

int weft__coll_b_bcast(weft__mpi_sched_t *s, MPI_Comm c, void *buf, size_t count, MPI_Datatype t,
                       int root)
{
    weft_coll_view_t v = weft__coll_view(s, c);
    return weft_coll_build_bcast(s, &v, buf, count, t, root);
}

int weft__coll_b_reduce(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst, size_t count,
                        MPI_Datatype t, MPI_Op op, int root)
{
    weft_coll_view_t v = weft__coll_view(s, c);
    return weft_coll_build_reduce(s, &v, src, dst, count, t, op, root);
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
int weft__coll_b_gather(weft__mpi_sched_t *s, MPI_Comm c, const void *sbuf, size_t scount,
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
int weft__coll_b_allgather(weft__mpi_sched_t *s, MPI_Comm c, const void *sbuf, size_t scount,
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
int weft__coll_b_alltoall(weft__mpi_sched_t *s, MPI_Comm c, const weft_coll_blocks_t *sb,
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

/* Recursive doubling: the engine's builder over c. */
int weft__coll_b_allreduce(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst,
                           size_t count, MPI_Datatype t, MPI_Op op)
{
    weft_coll_view_t v = weft__coll_view(s, c);
    return weft_coll_build_allreduce(s, &v, src, dst, count, t, op);
}

int weft__coll_end_to_end(weft__mpi_sched_t *s, int p, const int *counts, MPI_Datatype t,
                          weft_coll_blocks_t *b, size_t *total)
{
    MPI_Aint *adispls = weft__coll_tmp(s, (size_t)p * sizeof(MPI_Aint));
    if (!adispls)
        return MPI_ERR_NO_MEM;
    MPI_Aint ext = weft__mpi_type_extent(t);
    *total = 0;
    for (int i = 0; i < p; i++) {
        adispls[i] = (MPI_Aint)*total * ext;
        *total += (size_t)counts[i];
    }
    *b = weft__coll_wblocks(NULL, counts, NULL, adispls, NULL);
    b->type = t; /* every block's */
    return MPI_SUCCESS;
}

/* Reduce everything to rank 0, then scatter counts[i] elements to rank i. */
int weft__coll_b_reduce_scatter(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst,
                                const int *counts, MPI_Datatype t, MPI_Op op)
{
    weft_coll_blocks_t b;
    size_t total;
    int err = weft__coll_end_to_end(s, c->size, counts, t, &b, &total);
    if (err)
        return err;
    void *all = NULL;
    if (c->rank == 0 && !(all = weft__coll_tmp_typed(s, total, t)))
        return MPI_ERR_NO_MEM;
    err = weft__coll_b_reduce(s, c, src, all, total, t, op, 0);
    if (err)
        return err;
    b.buf = all;
    return weft__coll_b_scatter(s, c, &b, dst, (size_t)counts[c->rank], t, 0);
}

int weft__coll_b_scan(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst, size_t count,
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
