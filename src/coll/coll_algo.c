/* The builders of weft_coll.h: one collective's rounds over a view of its
 * members, in any front's types and ops (the group collectives and the MPI
 * layer's intracommunicator collectives use them).
 *
 *   barrier      dissemination (Hensgen, Finkel, Manber 1988): ceil(log2 P) rounds
 *   bcast        binomial tree from the root
 *   reduce       binomial tree; operands are always combined as
 *                (lower ranks) op (higher ranks), so non-commutative operations
 *                are reduced in rank order: towards rank 0, then sent to the root
 *   allreduce    recursive doubling (folding the ranks beyond a power of two)
 */
#include "weft/weft_coll.h"

static int send(weft_sched_t *s, const weft_coll_view_t *v, int peer, const void *buf, size_t count,
                const void *type, int k)
{
    return weft_sched_send(s, v->world(v->arg, peer), v->comm,
                           weft_coll_tag(v->seq, weft_sched_phase_of(s), k), buf, count, type);
}

static int recv(weft_sched_t *s, const weft_coll_view_t *v, int peer, void *buf, size_t count,
                const void *type, int k)
{
    return weft_sched_recv(s, v->world(v->arg, peer), v->comm,
                           weft_coll_tag(v->seq, weft_sched_phase_of(s), k), buf, count, type);
}

int weft_coll_build_barrier(weft_sched_t *s, const weft_coll_view_t *v)
{
    int p = v->size, r = v->rank;
    weft_sched_phase(s);
    for (int dist = 1, k = 0; dist < p; dist <<= 1, k++) {
        send(s, v, (r + dist) % p, NULL, 0, NULL, k);
        recv(s, v, (r - dist + p) % p, NULL, 0, NULL, k);
        weft_sched_round(s);
    }
    return weft_sched_error(s);
}

int weft_coll_build_bcast(weft_sched_t *s, const weft_coll_view_t *v, void *buf, size_t count,
                          const void *type, int root)
{
    int p = v->size;
    int vr = (v->rank - root + p) % p;
    int mask = weft_coll_bino_mask(p, vr);
    weft_sched_phase(s);
    if (vr) {
        recv(s, v, (vr - mask + root) % p, buf, count, type, 0);
        weft_sched_round(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p)
            send(s, v, (vr + mask + root) % p, buf, count, type, 0);
    }
    weft_sched_round(s);
    return weft_sched_error(s);
}

int weft_coll_build_reduce(weft_sched_t *s, const weft_coll_view_t *v, const void *src, void *dst,
                           size_t count, const void *type, const void *op, int root)
{
    int p = v->size, r = v->rank;
    /* Commutative: the tree is rooted at root. Otherwise at 0, so that the
     * subtrees are rank intervals, and the result then travels to root. */
    int top = weft_sched_commute(s, op) ? root : 0;
    int vr = (r - top + p) % p;
    const void *acc = src;
    weft_sched_phase(s);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            send(s, v, (vr - mask + top) % p, acc, count, type, 0);
            weft_sched_round(s);
            break;
        }
        if (vr + mask < p) {
            void *tmp = weft_sched_tmp_typed(s, count, type);
            if (!tmp)
                return weft_sched_error(s);
            recv(s, v, (vr + mask + top) % p, tmp, count, type, 0);
            /* tmp holds ranks above ours: acc op tmp keeps the order. */
            weft_sched_reduce(s, acc, tmp, count, type, op);
            acc = tmp;
            weft_sched_round(s);
        }
    }
    if (r == top && r == root) {
        if (acc != dst)
            weft_sched_copy(s, acc, count, type, dst, count, type);
    } else if (r == top) {
        send(s, v, root, acc, count, type, 1);
    } else if (r == root) {
        recv(s, v, top, dst, count, type, 1);
    }
    weft_sched_round(s);
    return weft_sched_error(s);
}

/* Recursive doubling (MPICH's MPIR_Allreduce_intra_recursive_doubling): with
 * P a power of two, log2 P rounds, in each of which a rank swaps its partial
 * result with the rank that differs in one bit and combines the two. Otherwise
 * the first 2*rem ranks (rem = P minus the largest power of two below it)
 * first fold in pairs, the odd one of each pair taking part for both, and get
 * the result back at the end: two more rounds. Each partial result covers a
 * run of consecutive ranks and the lower run is always the left operand, so
 * non-commutative operations are reduced in rank order. */
int weft_coll_build_allreduce(weft_sched_t *s, const weft_coll_view_t *v, const void *src,
                              void *dst, size_t count, const void *type, const void *op)
{
    enum { K_FOLD = 0, K_UNFOLD = 1, K_STEP = 2 };
    int p = v->size, r = v->rank;
    weft_sched_phase(s);
    if (src != dst) {
        weft_sched_copy(s, src, count, type, dst, count, type);
        weft_sched_round(s);
    }
    if (p == 1)
        return weft_sched_error(s);
    void *tmp = weft_sched_tmp_typed(s, count, type);
    if (!tmp)
        return weft_sched_error(s);
    weft_coll_rd_t rd = weft_coll_rd(p, r);
    int rem = rd.rem;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            send(s, v, r + 1, dst, count, type, K_FOLD);
        } else {
            recv(s, v, r - 1, tmp, count, type, K_FOLD);
            weft_sched_reduce(s, tmp, dst, count, type, op); /* (r - 1) op r */
        }
        weft_sched_round(s);
    }
    bool commute = weft_sched_commute(s, op);
    for (int mask = 1, k = K_STEP; rd.vr >= 0 && mask < rd.pof2; mask <<= 1, k++) {
        int peer = weft_coll_rd_rank(&rd, rd.vr ^ mask);
        send(s, v, peer, dst, count, type, k);
        recv(s, v, peer, tmp, count, type, k);
        if (commute || peer < r) {
            weft_sched_reduce(s, tmp, dst, count, type, op);
        } else {
            weft_sched_reduce(s, dst, tmp, count, type, op);
            weft_sched_copy(s, tmp, count, type, dst, count, type);
        }
        weft_sched_round(s);
    }
    if (r < 2 * rem) {
        if (r % 2)
            send(s, v, r - 1, dst, count, type, K_UNFOLD);
        else
            recv(s, v, r + 1, dst, count, type, K_UNFOLD);
        weft_sched_round(s);
    }
    return weft_sched_error(s);
}
