/* Intercommunicators (MPI 3.1 §6.6): creation from two intracommunicators,
 * merge, dup, split and create.
 *
 * An intercommunicator k needs an id free at every member of both groups, and
 * its local_comm (an intracommunicator of the local group, for the collectives)
 * a second one. The two local_comms of one intercommunicator are disjoint, so
 * they share that second id, as the communicators of one split do.
 *
 * MPI_Intercomm_create: no communicator spans both groups yet, so the leaders
 * do the work. Each member sends its used-id bitmap to its leader (over
 * local_comm's third engine id); the leaders swap their group's membership and
 * the union of its bitmaps over peer_comm's third id with the user's tag (in a
 * tag range of its own), pick the two lowest ids free in both unions (the same
 * pair on both sides: the same bits) and send each member the pair and the
 * remote group. Under MPI_THREAD_MULTIPLE another thread of a member may take
 * one of the pair meanwhile (its own creation saw the same free bits), and so
 * may an MPI_Comm_idup progressing while a member waits; each member says
 * whether that can happen to it, the leaders pass it on, and if it can
 * anywhere every member then takes both or neither and says which; the leaders combine
 * their group's answers, swap them and tell the members, and unless all took
 * the pair everybody gives it back and starts again from fresh bitmaps (as
 * weft__mpi_comm_agree does for the other creations).
 *
 * Once an intercommunicator exists, its members all share its third engine id,
 * so merge, dup, split and create agree with weft__mpi_comm_agree over the
 * union of the two groups, listed in one order on both sides: first the group
 * whose leader (rank 0) has the lower world rank.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"

#define AUX_ID(c)     ((c)->id_p2p + 2) /* see mpi_comm.c */
#define INTERCOMM_TAG (1ull << 41)      /* above Comm_create_group's user tags */
#define CTX_WORDS     64
#define CTX_BITS      (64 * CTX_WORDS)

static int wrc_to_mpi(int wrc)
{
    return wrc < 0 ? weft__mpi_err_from_weft(wrc) : MPI_SUCCESS;
}

static int send_wait(int dest, uint32_t id, uint64_t tag, const void *buf, size_t len)
{
    weft_request_t *r;
    int wrc = weft_sr_isend(weft__mpi.ctx, dest, id, tag, buf, len, &r);
    if (wrc >= 0)
        wrc = weft_sr_wait(weft__mpi.ctx, r, NULL);
    return wrc_to_mpi(wrc);
}

static int recv_wait(int src, uint32_t id, uint64_t tag, void *buf, size_t len)
{
    weft_request_t *r;
    int wrc = weft_sr_irecv(weft__mpi.ctx, src, id, tag, buf, len, &r);
    if (wrc >= 0)
        wrc = weft_sr_wait(weft__mpi.ctx, r, NULL);
    return wrc_to_mpi(wrc);
}

/* Receive a message of unknown length from src: probe, allocate, receive. */
static int recv_alloc(int src, uint32_t id, uint64_t tag, void **buf, size_t *len)
{
    weft_status_t st;
    weft_request_t *r;
    int wrc = weft_sr_probe(weft__mpi.ctx, src, id, tag, &st);
    if (wrc < 0)
        return wrc_to_mpi(wrc);
    void *b = malloc(st.length ? st.length : 1);
    if (!b)
        return MPI_ERR_NO_MEM;
    wrc = weft_sr_irecv(weft__mpi.ctx, src, id, tag, b, st.length, &r);
    if (wrc >= 0)
        wrc = weft_sr_wait(weft__mpi.ctx, r, NULL);
    if (wrc < 0) {
        free(b);
        return wrc_to_mpi(wrc);
    }
    *buf = b;
    *len = st.length;
    return MPI_SUCCESS;
}

/* What a member sends its leader: its bitmap, then whether it may take ids
 * meanwhile (weft__mpi_ids_contended). */
typedef struct bitmap_msg {
    uint64_t mask[CTX_WORDS];
    uint64_t contended;
} bitmap_msg_t;

/* What the leaders swap: the union of their group's bitmaps, whether any
 * member of the group may take ids meanwhile, then the group. */
typedef struct leader_msg {
    uint64_t mask[CTX_WORDS];
    int contended;
    int size;
    int ranks[]; /* world ranks, in local_comm's order */
} leader_msg_t;

/* What a leader sends its members: the ids, whether any member of either
 * group may take ids meanwhile (then all confirm the pair), then the remote
 * group. */
typedef struct member_msg {
    int k, k_local, contended, size;
    int ranks[];
} member_msg_t;

/* The two lowest ids clear in mask, or -1. */
static int two_free(const uint64_t *mask, int *k1, int *k2)
{
    int found = 0;
    for (int b = 0; b < CTX_BITS && found < 2; b++) {
        if (!(mask[b / 64] & (1ull << (b % 64)))) {
            if (found++ == 0)
                *k1 = b;
            else
                *k2 = b;
        }
    }
    return found == 2 ? 0 : -1;
}

/* Build the intercommunicator over local/remote with id k and its local_comm
 * with id k_local (both already taken). */
int weft__mpi_intercomm_build(MPI_Group local, MPI_Group remote, int k, int k_local, MPI_Comm *out)
{
    MPI_Comm c = weft__mpi_comm_new(local, remote, k);
    if (!c) {
        weft__mpi_ctx_give(k);
        weft__mpi_ctx_give(k_local);
        return MPI_ERR_NO_MEM;
    }
    c->local_comm = weft__mpi_comm_new(local, NULL, k_local);
    if (!c->local_comm) {
        weft__mpi_ctx_give(k_local);
        weft__mpi_comm_release(c);
        return MPI_ERR_NO_MEM;
    }
    *out = c;
    return MPI_SUCCESS;
}

/* The leader's part of MPI_Intercomm_create: gather bitmaps, swap with the
 * remote leader (world rank peer, on peer_comm's id peer_id, tag ptag), choose
 * the ids, tell the members. */
static int create_leader(MPI_Comm local_comm, int peer, uint32_t peer_id, uint64_t ptag,
                         uint64_t ltag, member_msg_t **mm_out)
{
    int n = local_comm->size, me = local_comm->rank, rc;
    size_t lm_len = sizeof(leader_msg_t) + (size_t)n * sizeof(int);
    leader_msg_t *lm = calloc(1, lm_len), *rm = NULL;
    member_msg_t *mm = NULL;
    if (!lm)
        return MPI_ERR_NO_MEM;
    weft_lock_acquire(&weft__mpi.lock);
    memcpy(lm->mask, weft__mpi.ctx_mask, sizeof lm->mask);
    weft_lock_release(&weft__mpi.lock);
    lm->contended = weft__mpi_ids_contended();
    lm->size = n;
    memcpy(lm->ranks, local_comm->group->ranks, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        if (i == me)
            continue;
        bitmap_msg_t bm;
        weft_request_t *r;
        int wrc = weft_sr_irecv(weft__mpi.ctx, local_comm->group->ranks[i], AUX_ID(local_comm),
                                ltag, &bm, sizeof bm, &r);
        if (wrc >= 0)
            wrc = weft_sr_wait(weft__mpi.ctx, r, NULL);
        if ((rc = wrc_to_mpi(wrc)))
            goto out;
        for (int w = 0; w < CTX_WORDS; w++)
            lm->mask[w] |= bm.mask[w];
        lm->contended |= bm.contended != 0;
    }
    /* Swap with the remote leader: send first (non-blocking), then receive. */
    weft_request_t *sreq;
    int wrc = weft_sr_isend(weft__mpi.ctx, peer, peer_id, ptag, lm, lm_len, &sreq);
    if ((rc = wrc_to_mpi(wrc)))
        goto out;
    size_t rm_len = 0;
    rc = recv_alloc(peer, peer_id, ptag, (void **)&rm, &rm_len);
    wrc = weft_sr_wait(weft__mpi.ctx, sreq, NULL);
    if (!rc)
        rc = wrc_to_mpi(wrc);
    if (rc)
        goto out;
    if (rm_len < sizeof *rm || rm->size < 0 ||
        rm_len != sizeof *rm + (size_t)rm->size * sizeof(int)) {
        rc = MPI_ERR_INTERN;
        goto out;
    }
    for (int w = 0; w < CTX_WORDS; w++)
        lm->mask[w] |= rm->mask[w];
    size_t mm_len = sizeof *mm + (size_t)rm->size * sizeof(int);
    if (!(mm = malloc(mm_len))) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    mm->size = rm->size;
    mm->contended = lm->contended || rm->contended;
    memcpy(mm->ranks, rm->ranks, (size_t)rm->size * sizeof(int));
    /* Both leaders see the same union, so they choose the same pair; -1 tells
     * the members that all ids are in use. */
    if (two_free(lm->mask, &mm->k, &mm->k_local))
        mm->k = mm->k_local = -1;
    weft_request_t **reqs = calloc((size_t)n, sizeof *reqs);
    if (!reqs) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (i == me)
            continue;
        wrc = weft_sr_isend(weft__mpi.ctx, local_comm->group->ranks[i], AUX_ID(local_comm), ltag,
                            mm, mm_len, &reqs[i]);
        if (wrc < 0 && !rc)
            rc = wrc_to_mpi(wrc);
    }
    wrc = weft_sr_waitall(weft__mpi.ctx, n, reqs, NULL);
    if (!rc)
        rc = wrc_to_mpi(wrc);
    free(reqs);
out:
    free(lm);
    free(rm);
    if (rc) {
        free(mm);
        return rc;
    }
    *mm_out = mm;
    return MPI_SUCCESS;
}

/* After a round chose (k, k_local), with threads: take both here or neither,
 * and learn whether every member of both groups took them (*all_ok). The
 * members answer their leader on ltag; the leaders swap their group's answer
 * on ptag and tell the members. Ids taken here are given back unless all_ok. */
static int confirm(MPI_Comm local_comm, int local_leader, int peer, uint32_t peer_id, uint64_t ptag,
                   uint64_t ltag, int k, int k_local, bool *all_ok)
{
    uint8_t ok = weft__mpi_ctx_try_take(k, k_local), verdict = ok;
    uint32_t id = AUX_ID(local_comm);
    const int *ranks = local_comm->group->ranks;
    int rc = MPI_SUCCESS;
    if (local_comm->rank != local_leader) {
        rc = send_wait(ranks[local_leader], id, ltag, &ok, 1);
        if (!rc)
            rc = recv_wait(ranks[local_leader], id, ltag, &verdict, 1);
    } else {
        for (int i = 0; i < local_comm->size && !rc; i++) {
            uint8_t theirs = 0;
            if (i != local_comm->rank && !(rc = recv_wait(ranks[i], id, ltag, &theirs, 1)))
                verdict = verdict && theirs;
        }
        uint8_t ours = verdict, remote = 0;
        weft_request_t *sreq;
        if (!rc && !(rc = wrc_to_mpi(
                         weft_sr_isend(weft__mpi.ctx, peer, peer_id, ptag, &ours, 1, &sreq)))) {
            rc = recv_wait(peer, peer_id, ptag, &remote, 1);
            int src = wrc_to_mpi(weft_sr_wait(weft__mpi.ctx, sreq, NULL));
            if (!rc)
                rc = src;
        }
        verdict = ours && remote;
        for (int i = 0; i < local_comm->size && !rc; i++)
            if (i != local_comm->rank)
                rc = send_wait(ranks[i], id, ltag, &verdict, 1);
    }
    if (ok && (rc || !verdict)) {
        weft__mpi_ctx_give(k);
        weft__mpi_ctx_give(k_local);
    }
    *all_ok = !rc && verdict;
    return rc;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create";
    int rc = weft__mpi_check_comm(local_comm);
    if (!rc && local_comm->inter)
        rc = MPI_ERR_COMM;
    if (rc)
        return weft__mpi_err(NULL, rc, fn);
    if (local_leader < 0 || local_leader >= local_comm->size)
        return weft__mpi_err(local_comm, MPI_ERR_RANK, fn);
    if (tag < 0)
        return weft__mpi_err(local_comm, MPI_ERR_TAG, fn);
    if (!newintercomm)
        return weft__mpi_err(local_comm, MPI_ERR_ARG, fn);
    bool leader = local_comm->rank == local_leader;
    if (leader) {
        /* peer_comm is significant only at the leaders. */
        if ((rc = weft__mpi_check_comm(peer_comm)))
            return weft__mpi_err(local_comm, rc, fn);
        if (remote_leader < 0 || remote_leader >= weft__mpi_comm_peer_size(peer_comm))
            return weft__mpi_err(local_comm, MPI_ERR_RANK, fn);
    }
    uint64_t ltag = weft__mpi_comm_aux_tag(local_comm);
    uint64_t ptag = INTERCOMM_TAG | (uint64_t)tag;
    int peer = leader ? weft__mpi_comm_peer(peer_comm, remote_leader) : -1;
    uint32_t peer_id = leader ? AUX_ID(peer_comm) : 0;
    member_msg_t *mm = NULL;
    for (int round = 0;; round++) {
        uint64_t lt = weft__mpi_round_tag(ltag, round, 0), pt = weft__mpi_round_tag(ptag, round, 0);
        if (leader) {
            rc = create_leader(local_comm, peer, peer_id, pt, lt, &mm);
        } else {
            bitmap_msg_t bm;
            int lw = local_comm->group->ranks[local_leader];
            weft_lock_acquire(&weft__mpi.lock);
            memcpy(bm.mask, weft__mpi.ctx_mask, sizeof bm.mask);
            weft_lock_release(&weft__mpi.lock);
            bm.contended = weft__mpi_ids_contended();
            size_t len = 0;
            rc = send_wait(lw, AUX_ID(local_comm), lt, &bm, sizeof bm);
            if (!rc)
                rc = recv_alloc(lw, AUX_ID(local_comm), lt, (void **)&mm, &len);
            if (!rc && (len < sizeof *mm || mm->size < 0 ||
                        len != sizeof *mm + (size_t)mm->size * sizeof(int)))
                rc = MPI_ERR_INTERN;
        }
        if (!rc && mm->k < 0)
            rc = MPI_ERR_INTERN; /* every id in use */
        if (rc) {
            free(mm);
            return weft__mpi_err(local_comm, rc, fn);
        }
        if (!mm->contended) { /* nobody can have taken the pair meanwhile */
            weft__mpi_ctx_try_take(mm->k, mm->k_local);
            break;
        }
        bool all_ok;
        rc = confirm(local_comm, local_leader, peer, peer_id, weft__mpi_round_tag(ptag, round, 1),
                     weft__mpi_round_tag(ltag, round, 1), mm->k, mm->k_local, &all_ok);
        if (rc) {
            free(mm);
            return weft__mpi_err(local_comm, rc, fn);
        }
        if (all_ok)
            break;
        free(mm);
        mm = NULL;
    }
    MPI_Group remote = weft__mpi_group_new(mm->size, mm->ranks);
    if (!remote) {
        weft__mpi_ctx_give(mm->k);
        weft__mpi_ctx_give(mm->k_local);
        free(mm);
        return weft__mpi_err(local_comm, MPI_ERR_NO_MEM, fn);
    }
    rc = weft__mpi_intercomm_build(local_comm->group, remote, mm->k, mm->k_local, newintercomm);
    if (!rc)
        weft__mpi_comm_inherit_errh(*newintercomm, local_comm);
    weft__mpi_group_release(remote);
    free(mm);
    return rc ? weft__mpi_err(local_comm, rc, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Intercomm_create)

/* ---- operations over an existing intercommunicator ---- */

/* The union of both groups in the order both sides use: the group whose
 * leader has the lower world rank first. *me is my index, *local_first
 * whether my group comes first. */
static int *union_members(MPI_Comm c, int *me, bool *local_first)
{
    MPI_Group l = c->group, r = c->remote_group;
    bool lf = c->inter_first ? c->inter_first > 0 : l->ranks[0] < r->ranks[0];
    int *m = malloc((size_t)(l->size + r->size) * sizeof *m);
    if (!m)
        return NULL;
    MPI_Group first = lf ? l : r, second = lf ? r : l;
    memcpy(m, first->ranks, (size_t)first->size * sizeof *m);
    memcpy(m + first->size, second->ranks, (size_t)second->size * sizeof *m);
    *me = (lf ? 0 : r->size) + c->rank;
    *local_first = lf;
    return m;
}

/* Agree over the union of c's groups on a context id, exchanging extra_len
 * bytes per member (into extra_all, in union order). */
static int agree_union(MPI_Comm c, const void *extra, size_t extra_len, void *extra_all, int *k,
                       bool *local_first)
{
    int me;
    int *members = union_members(c, &me, local_first);
    if (!members)
        return MPI_ERR_NO_MEM;
    int n = c->size + c->remote_group->size;
    int rc = weft__mpi_comm_agree(c, weft__mpi_comm_aux_tag(c), members, n, me, extra, extra_len,
                                  extra_all, k);
    free(members);
    return rc;
}

static int check_inter(MPI_Comm c)
{
    int rc = weft__mpi_check_comm(c);
    if (!rc && !c->inter)
        rc = MPI_ERR_COMM;
    return rc;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *fn = "MPI_Intercomm_merge";
    int rc = check_inter(intercomm);
    if (rc)
        return weft__mpi_err(intercomm, rc, fn);
    if (!newintracomm)
        return weft__mpi_err(intercomm, MPI_ERR_ARG, fn);
    int n = intercomm->size + intercomm->remote_group->size;
    int *highs = malloc((size_t)n * sizeof *highs);
    if (!highs)
        return weft__mpi_err(intercomm, MPI_ERR_NO_MEM, fn);
    int mine = high != 0, k;
    bool local_first;
    if ((rc = agree_union(intercomm, &mine, sizeof mine, highs, &k, &local_first))) {
        free(highs);
        return weft__mpi_err(intercomm, rc, fn);
    }
    /* The leaders' flags decide (they must agree within a group): the low
     * group first; equal flags keep the union order (lower leader first). */
    int first_size = local_first ? intercomm->size : intercomm->remote_group->size;
    int first_high = highs[0], second_high = highs[first_size];
    free(highs);
    bool first_goes_first = first_high <= second_high;
    bool local_low = local_first == first_goes_first;
    MPI_Group l = intercomm->group, r = intercomm->remote_group;
    MPI_Group lo = local_low ? l : r, hi = local_low ? r : l;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    MPI_Group g = NULL;
    if (ranks) {
        memcpy(ranks, lo->ranks, (size_t)lo->size * sizeof *ranks);
        memcpy(ranks + lo->size, hi->ranks, (size_t)hi->size * sizeof *ranks);
        g = weft__mpi_group_new(n, ranks);
        free(ranks);
    }
    MPI_Comm c = g ? weft__mpi_comm_new(g, NULL, k) : NULL;
    weft__mpi_group_release(g);
    if (!c) {
        weft__mpi_ctx_give(k);
        return weft__mpi_err(intercomm, MPI_ERR_NO_MEM, fn);
    }
    weft__mpi_comm_inherit_errh(c, intercomm);
    *newintracomm = c;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Intercomm_merge)

/* The same groups, a fresh id for the intercommunicator (over the union) and
 * one for the local_comms (each group over its own local_comm: disjoint, so
 * the two may take different ids). */
int weft__mpi_intercomm_dup(MPI_Comm comm, MPI_Comm *out)
{
    int k, rc;
    bool local_first;
    if ((rc = agree_union(comm, NULL, 0, NULL, &k, &local_first)))
        return rc;
    MPI_Comm c = weft__mpi_comm_new(comm->group, comm->remote_group, k);
    if (!c) {
        weft__mpi_ctx_give(k);
        return MPI_ERR_NO_MEM;
    }
    c->inter_first = comm->inter_first;
    if ((rc = weft__mpi_comm_create_from(comm->local_comm, comm->local_comm->group,
                                         &c->local_comm))) {
        c->local_comm = NULL;
        weft__mpi_comm_release(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

/* Split and create (§6.4.2) build, from per-member (colour, key) pairs over the
 * union, the new local and remote groups of my colour; the members with one
 * colour on both sides form one new intercommunicator. Two agreements: one
 * carries the pairs and picks the intercommunicators' id (disjoint ones share
 * it), the second the local_comms' id. */
typedef struct sel {
    int color, key, pos;
} sel_t;

static int cmp_sel(const void *a, const void *b)
{
    const sel_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The members of side [from, from+n) of all with colour color, sorted by key
 * then by their rank in their group, which side (of n members) lists; NULL
 * group when none. The ranks come from side, as this process knows them: a
 * member's own world rank names nothing here when the sides are two jobs. */
static int side_group(sel_t *all, int from, MPI_Group side, int color, MPI_Group *out)
{
    int n = side->size;
    sel_t *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    int *ranks = malloc((size_t)(n ? n : 1) * sizeof *ranks);
    int m = 0;
    if (!s || !ranks) {
        free(s);
        free(ranks);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++)
        if (all[from + i].color == color)
            s[m++] = all[from + i];
    qsort(s, (size_t)m, sizeof *s, cmp_sel);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < m; i++) {
        if (s[i].pos < 0 || s[i].pos >= n)
            rc = MPI_ERR_INTERN;
        ranks[i] = rc ? 0 : side->ranks[s[i].pos];
    }
    *out = NULL;
    if (!rc && m && !(*out = weft__mpi_group_new(m, ranks)))
        rc = MPI_ERR_NO_MEM;
    free(s);
    free(ranks);
    return rc;
}

static int inter_select(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    int n = comm->size + comm->remote_group->size, k, k_local, rc;
    bool local_first;
    sel_t mine = {color, key, comm->rank};
    sel_t *all = malloc((size_t)n * sizeof *all);
    if (!all)
        return MPI_ERR_NO_MEM;
    if ((rc = agree_union(comm, &mine, sizeof mine, all, &k, &local_first))) {
        free(all);
        return rc;
    }
    if ((rc = agree_union(comm, NULL, 0, NULL, &k_local, &local_first))) {
        weft__mpi_ctx_give(k);
        free(all);
        return rc;
    }
    int lfrom = local_first ? 0 : comm->remote_group->size;
    int rfrom = local_first ? comm->size : 0;
    MPI_Group lg = NULL, rg = NULL;
    if (color != MPI_UNDEFINED) {
        rc = side_group(all, lfrom, comm->group, color, &lg);
        if (!rc)
            rc = side_group(all, rfrom, comm->remote_group, color, &rg);
    }
    free(all);
    if (rc || !lg || !rg) {
        weft__mpi_group_release(lg);
        weft__mpi_group_release(rg);
        weft__mpi_ctx_give(k);
        weft__mpi_ctx_give(k_local);
        if (!rc)
            *out = MPI_COMM_NULL;
        return rc;
    }
    rc = weft__mpi_intercomm_build(lg, rg, k, k_local, out);
    if (!rc) {
        (*out)->inter_first = comm->inter_first;
        weft__mpi_comm_inherit_errh(*out, comm);
    }
    weft__mpi_group_release(lg);
    weft__mpi_group_release(rg);
    return rc;
}

int weft__mpi_intercomm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    return inter_select(comm, color, key, out);
}

/* Comm_create on an intercommunicator: each side gives a subgroup of its own
 * group; a member's colour is 0 when in it, its key its rank there. */
int weft__mpi_intercomm_create_sub(MPI_Comm comm, MPI_Group group, MPI_Comm *out)
{
    bool in = group->rank != MPI_UNDEFINED;
    return inter_select(comm, in ? 0 : MPI_UNDEFINED, in ? group->rank : 0, out);
}
