/* Communicators (MPI 3.1 §6.4): creation, context ids, names, comparison.
 *
 * A communicator k owns three engine communicator ids: 4k (point-to-point), 4k+1
 * (collectives) and 4k+2 (this file's own exchanges), so the three kinds of
 * traffic never match each other. A new communicator needs a k that no member
 * uses: the members exchange their bitmaps of used ids and take the lowest id
 * free everywhere (as MPICH does). Disjoint communicators made by one split may
 * share an id, since no message can cross between them.
 *
 * The exchanges run over the parent's third id, gathered at the parent's first
 * member and sent back; they are collective over the parent (or over the group,
 * for MPI_Comm_create_group, with the user's tag), so every member makes the
 * same sequence of them and a per-communicator counter names each one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"

struct weft_mpi_comm weft_mpi_comm_world;
struct weft_mpi_comm weft_mpi_comm_self;
struct weft_mpi_comm weft_mpi_comm_null = {
    .magic = WEFT_MPI_MAGIC_COMM, .predefined = true, .name = "MPI_COMM_NULL"};

#define AUX_TAG (1ull << 40) /* above any user tag of MPI_Comm_create_group */
/* MPI_Comm_create_from_group's agreements on the world, apart from
 * MPI_Comm_create_group's (user tags) and MPI_Intercomm_create's (1 << 41). */
#define FROM_GROUP_TAG (1ull << 42)

int weft__mpi_check_comm(MPI_Comm comm)
{
    return comm && comm->magic == WEFT_MPI_MAGIC_COMM && comm != MPI_COMM_NULL && !comm->freed
               ? MPI_SUCCESS
               : MPI_ERR_COMM;
}

static uint32_t aux_id(MPI_Comm c)
{
    return c->id_p2p + 2;
}

/* Fill world_to_rank for the group that sends to us. */
static int map_senders(MPI_Comm c)
{
    MPI_Group from = c->inter ? c->remote_group : c->group;
    int n = weft__mpi.world_size;
    for (int i = 0; i < from->size; i++)
        n = from->ranks[i] >= n ? from->ranks[i] + 1 : n;
    c->world_to_rank = malloc((size_t)n * sizeof *c->world_to_rank);
    if (!c->world_to_rank)
        return MPI_ERR_NO_MEM;
    c->w2r_len = n;
    for (int i = 0; i < n; i++)
        c->world_to_rank[i] = -1;
    for (int i = 0; i < from->size; i++)
        c->world_to_rank[from->ranks[i]] = i;
    return MPI_SUCCESS;
}

/* A new communicator object over group (retained), context k. */
static MPI_Comm comm_new(MPI_Group group, MPI_Group remote, unsigned k)
{
    MPI_Comm c = aligned_alloc(_Alignof(struct weft_mpi_comm), sizeof *c); /* refs' line */
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->magic = WEFT_MPI_MAGIC_COMM;
    atomic_init(&c->refs, 1);
    c->id_p2p = WEFT_MPI_ID_P2P(k);
    c->id_coll = c->id_p2p + 1;
    c->group = group;
    weft__mpi_group_retain(group);
    c->rank = group->rank;
    c->size = group->size;
    if (remote) {
        c->inter = true;
        c->remote_group = remote;
        weft__mpi_group_retain(remote);
    }
    c->errhandler = &weft_mpi_errors_are_fatal;
    if (map_senders(c) != MPI_SUCCESS) {
        weft__mpi_comm_release(c);
        return NULL;
    }
    return c;
}

/* A new communicator inherits its parent's error handler (MPI 3.1 §8.3). */
void weft__mpi_comm_inherit_errh(MPI_Comm c, MPI_Comm parent)
{
    MPI_Errhandler e = parent->errhandler;
    if (!e->predefined)
        atomic_fetch_add(&e->refs, 1);
    weft__mpi_errh_release(c->errhandler);
    c->errhandler = e;
}

static void ctx_take(unsigned k)
{
    weft__mpi.ctx_mask[k / 64] |= 1ull << (k % 64);
}

static void ctx_give(unsigned k)
{
    weft__mpi.ctx_mask[k / 64] &= ~(1ull << (k % 64));
}

void weft__mpi_comm_destroy(MPI_Comm c)
{
    weft_lock_acquire(&weft__mpi.lock);
    /* Only now may a new communicator take k: a request still pending on this
     * one after MPI_Comm_free would match the newcomer's traffic. Several
     * communicators of one split share k; the bit goes when the last of them
     * on this process goes, and a process is in at most one of them. An
     * MPI_Comm_idup that failed has no id (WEFT_MPI_CTX_BITS). */
    if (c->id_p2p / 4 < WEFT_MPI_CTX_BITS)
        ctx_give(c->id_p2p / 4);
    weft_lock_release(&weft__mpi.lock);
    weft__mpi_group_release(c->group);
    weft__mpi_group_release(c->remote_group);
    if (c->local_comm)
        weft__mpi_comm_release(c->local_comm);
    weft__mpi_errh_release(c->errhandler);
    weft__mpi_info_release(c->info);
    weft__mpi_topo_free(c->topo);
    weft__mpi_part_comm_fini(c);
    free(c->world_to_rank);
    c->magic = WEFT_MPI_MAGIC_DEAD;
    free(c);
}

/* ---- exchanges among the members of a group, over a parent's aux id ---- */

/* Every member of `members` (world ranks; me = my index) contributes len bytes;
 * all get every contribution, in member order, in all[]. */
static int exchange(uint32_t id, uint64_t tag, const int *members, int n, int me, const void *mine,
                    size_t len, void *all)
{
    weft_ctx_t *ctx = weft__mpi.ctx;
    int rc;
    memcpy((char *)all + (size_t)me * len, mine, len);
    if (n == 1)
        return WEFT_OK;
    if (me != 0) {
        weft_request_t *r;
        if ((rc = weft_sr_isend(ctx, members[0], id, tag, mine, len, &r)) < 0 ||
            (rc = weft_sr_wait(ctx, r, NULL)) < 0)
            return rc;
        if ((rc = weft_sr_irecv(ctx, members[0], id, tag, all, len * (size_t)n, &r)) < 0 ||
            (rc = weft_sr_wait(ctx, r, NULL)) < 0)
            return rc;
        return WEFT_OK;
    }
    for (int i = 1; i < n; i++) {
        weft_request_t *r;
        if ((rc = weft_sr_irecv(ctx, members[i], id, tag, (char *)all + (size_t)i * len, len, &r)) <
                0 ||
            (rc = weft_sr_wait(ctx, r, NULL)) < 0)
            return rc;
    }
    weft_request_t **reqs = malloc((size_t)n * sizeof *reqs);
    if (!reqs)
        return WEFT_ENOMEM;
    int first = WEFT_OK;
    for (int i = 1; i < n; i++) {
        reqs[i] = NULL;
        rc = weft_sr_isend(ctx, members[i], id, tag, all, len * (size_t)n, &reqs[i]);
        if (rc < 0 && first == WEFT_OK)
            first = rc;
    }
    rc = weft_sr_waitall(ctx, n - 1, reqs + 1, NULL);
    free(reqs);
    return first != WEFT_OK ? first : rc;
}

int weft__mpi_ctx_lowest_free(const uint64_t *used)
{
    for (int b = 0; b < WEFT_MPI_CTX_BITS; b++)
        if (!(used[b / 64] & (1ull << (b % 64))))
            return b;
    return -1;
}

int weft__mpi_ctx_exhausted(void)
{
    static atomic_flag said = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&said)) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "no communicator can be made: at most %d communicators live at once "
                 "(MPI_COMM_WORLD, MPI_COMM_SELF and every one not yet freed); free some "
                 "with MPI_Comm_free (this creation fails with MPI_ERR_OTHER)",
                 WEFT_MPI_CTX_BITS);
        weft__mpi_say(msg);
    }
    return MPI_ERR_OTHER;
}

static bool ctx_used(int k)
{
    return weft__mpi.ctx_mask[k / 64] & (1ull << (k % 64));
}

bool weft__mpi_ctx_try_take(int k, int k2)
{
    weft_lock_acquire(&weft__mpi.lock);
    bool free_here = !ctx_used(k) && (k2 < 0 || !ctx_used(k2));
    if (free_here) {
        ctx_take((unsigned)k);
        if (k2 >= 0)
            ctx_take((unsigned)k2);
    }
    weft_lock_release(&weft__mpi.lock);
    return free_here;
}

uint64_t weft__mpi_round_tag(uint64_t tag, int round, int phase)
{
    return tag | ((uint64_t)(2 * round + phase + 1) << 48);
}

bool weft__mpi_ids_contended(void)
{
    return weft__mpi.thread_level == MPI_THREAD_MULTIPLE || atomic_load(&weft__mpi.idups) > 0;
}

/* Agree on a context id free at every member: exchange used-id bitmaps. Also
 * carries `extra` bytes per member (the split colours and keys), gathered into
 * extra_all. Returns the id, or -1 (error in *rc). */
static int agree(uint32_t id, uint64_t tag, const int *members, int n, int me, const void *extra,
                 size_t extra_len, void *extra_all, int *rc)
{
    /* Each contribution: the used-id bitmap, one byte saying whether this
     * process may take ids meanwhile (other threads, MPI_Comm_idup agreements
     * in flight), then extra. */
    const size_t mask_len = sizeof weft__mpi.ctx_mask + 1;
    size_t len = mask_len + extra_len;
    char *mine = malloc(len), *all = malloc(len * (size_t)n);
    uint8_t *oks = malloc((size_t)n);
    int k = -1;
    if (!mine || !all || !oks) {
        *rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if (extra_len)
        memcpy(mine + mask_len, extra, extra_len);
    /* With several threads, or an MPI_Comm_idup progressing while we wait, two
     * agreements of this process (on different parents) may pick the same
     * free id at once; then the members learn it in a second exchange and all
     * try again, now seeing the id taken. Every member must make the same
     * choice of exchanges, so any member's reason is everyone's. */
    for (int round = 0;; round++) {
        weft_lock_acquire(&weft__mpi.lock);
        memcpy(mine, weft__mpi.ctx_mask, sizeof weft__mpi.ctx_mask);
        weft_lock_release(&weft__mpi.lock);
        mine[sizeof weft__mpi.ctx_mask] = weft__mpi_ids_contended();
        int wrc = exchange(id, weft__mpi_round_tag(tag, round, 0), members, n, me, mine, len, all);
        if (wrc < 0) {
            *rc = weft__mpi_err_from_weft(wrc);
            goto out;
        }
        uint64_t used[64] = {0};
        bool threads = false;
        for (int i = 0; i < n; i++) {
            /* Entries are len bytes apart, len not always a multiple of 8. */
            uint64_t m[64];
            memcpy(m, all + (size_t)i * len, sizeof m);
            for (int w = 0; w < 64; w++)
                used[w] |= m[w];
            threads = threads || all[(size_t)i * len + sizeof m];
        }
        k = weft__mpi_ctx_lowest_free(used);
        if (k < 0) {
            *rc = weft__mpi_ctx_exhausted();
            goto out;
        }
        uint8_t ok = weft__mpi_ctx_try_take(k, -1);
        if (!threads)
            break; /* nobody else can have taken it */
        wrc = exchange(id, weft__mpi_round_tag(tag, round, 1), members, n, me, &ok, 1, oks);
        if (wrc < 0) {
            if (ok)
                weft__mpi_ctx_give(k);
            k = -1;
            *rc = weft__mpi_err_from_weft(wrc);
            goto out;
        }
        bool all_ok = true;
        for (int i = 0; i < n; i++)
            all_ok = all_ok && oks[i];
        if (all_ok)
            break;
        if (ok)
            weft__mpi_ctx_give(k);
    }
    if (extra_len)
        for (int i = 0; i < n; i++)
            memcpy((char *)extra_all + (size_t)i * extra_len, all + (size_t)i * len + mask_len,
                   extra_len);
    *rc = MPI_SUCCESS;
out:
    free(mine);
    free(all);
    free(oks);
    return *rc == MPI_SUCCESS ? k : -1;
}

/* A counter per communicator names the exchanges on its aux id; every member
 * makes the same sequence of collective creations on it. */
static uint64_t aux_tag(MPI_Comm parent)
{
    return AUX_TAG | (uint64_t)atomic_fetch_add(&parent->aux_seq, 1);
}

int weft__mpi_comm_create_from(MPI_Comm parent, MPI_Group group, MPI_Comm *out)
{
    /* Collective over the parent: all parent members agree on an id, those in
     * group build the communicator. */
    int rc;
    int k = agree(aux_id(parent), aux_tag(parent), parent->group->ranks, parent->size, parent->rank,
                  NULL, 0, NULL, &rc);
    if (k < 0)
        return rc;
    if (group->rank == MPI_UNDEFINED) {
        weft_lock_acquire(&weft__mpi.lock);
        ctx_give((unsigned)k);
        weft_lock_release(&weft__mpi.lock);
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    MPI_Comm c = comm_new(group, NULL, (unsigned)k);
    if (!c) {
        weft_lock_acquire(&weft__mpi.lock);
        ctx_give((unsigned)k);
        weft_lock_release(&weft__mpi.lock);
        return MPI_ERR_NO_MEM;
    }
    weft__mpi_comm_inherit_errh(c, parent);
    *out = c;
    return MPI_SUCCESS;
}

int weft__mpi_comms_init(void)
{
    int n = weft__mpi.world_size, me = weft__mpi.world_rank;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (!ranks)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    MPI_Group wg = weft__mpi_group_new(n, ranks);
    MPI_Group sg = weft__mpi_group_new(1, &me);
    free(ranks);
    if (!wg || !sg)
        return MPI_ERR_NO_MEM;
    struct {
        MPI_Comm c;
        MPI_Group g;
        unsigned k;
        const char *name;
    } pre[2] = {{MPI_COMM_WORLD, wg, 0, "MPI_COMM_WORLD"}, {MPI_COMM_SELF, sg, 1, "MPI_COMM_SELF"}};
    for (int i = 0; i < 2; i++) {
        MPI_Comm c = pre[i].c;
        memset(c, 0, sizeof *c);
        c->magic = WEFT_MPI_MAGIC_COMM;
        c->predefined = true;
        atomic_init(&c->refs, 1);
        c->id_p2p = WEFT_MPI_ID_P2P(pre[i].k);
        c->id_coll = c->id_p2p + 1;
        c->group = pre[i].g;
        c->rank = pre[i].g->rank;
        c->size = pre[i].g->size;
        c->errhandler = &weft_mpi_errors_are_fatal;
        snprintf(c->name, sizeof c->name, "%s", pre[i].name);
        if (map_senders(c) != MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
        ctx_take(pre[i].k);
    }
    return MPI_SUCCESS;
}

void weft__mpi_comms_fini(void)
{
    /* MPI_Finalize deleted MPI_COMM_SELF's attributes first; this catches
     * one that a delete callback set meanwhile. */
    weft__mpi_attrs_delete_all(MPI_COMM_SELF);
    weft__mpi_attrs_delete_all(MPI_COMM_WORLD);
    MPI_Comm pre[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2; i++) {
        MPI_Comm c = pre[i];
        MPI_Group g = c->group;
        g->predefined = false; /* the world and self groups are ours to free */
        weft__mpi_group_release(g);
        weft__mpi_errh_release(c->errhandler);
        weft__mpi_info_release(c->info);
        free(c->world_to_rank);
        c->world_to_rank = NULL;
        c->magic = 0;
    }
    memset(weft__mpi.ctx_mask, 0, sizeof weft__mpi.ctx_mask);
    free(weft__mpi.idup_prio);
    weft__mpi.idup_prio = NULL;
    weft__mpi.nidup_prio = weft__mpi.cap_idup_prio = 0;
    atomic_store(&weft__mpi.idups, 0);
}

/* ---- queries ---- */

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !size)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_size");
    *size = comm->size;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_size)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !rank)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_rank");
    *rank = comm->rank;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_rank)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !flag)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_test_inter");
    *flag = comm->inter;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_test_inter)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    int rc = weft__mpi_check_comm(comm);
    if (!rc && !comm->inter)
        rc = MPI_ERR_COMM;
    if (rc || !size)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_remote_size");
    *size = comm->remote_group->size;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_remote_size)

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !group)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_group");
    weft__mpi_group_retain(comm->group);
    /* The world's group is predefined here, but the application frees what
     * it gets: hand out a counted reference to a copy in that case. */
    if (comm->group->predefined) {
        MPI_Group g = weft__mpi_group_new(comm->group->size, comm->group->ranks);
        if (!g)
            return weft__mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Comm_group");
        *group = g;
        return MPI_SUCCESS;
    }
    *group = comm->group;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_group)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    int rc = weft__mpi_check_comm(comm);
    if (!rc && !comm->inter)
        rc = MPI_ERR_COMM;
    if (rc || !group)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_remote_group");
    weft__mpi_group_retain(comm->remote_group);
    *group = comm->remote_group;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_remote_group)

static bool same_members(MPI_Group a, MPI_Group b, bool ordered)
{
    if (a->size != b->size)
        return false;
    for (int i = 0; i < a->size; i++) {
        if (ordered) {
            if (a->ranks[i] != b->ranks[i])
                return false;
            continue;
        }
        bool found = false;
        for (int j = 0; j < b->size && !found; j++)
            found = a->ranks[i] == b->ranks[j];
        if (!found)
            return false;
    }
    return true;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    int rc = weft__mpi_check_comm(comm1);
    if (!rc)
        rc = weft__mpi_check_comm(comm2);
    if (rc || !result)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Comm_compare");
    if (comm1 == comm2)
        *result = MPI_IDENT;
    else if (comm1->inter != comm2->inter)
        *result = MPI_UNEQUAL;
    else if (same_members(comm1->group, comm2->group, true) &&
             (!comm1->inter || same_members(comm1->remote_group, comm2->remote_group, true)))
        *result = MPI_CONGRUENT;
    else if (same_members(comm1->group, comm2->group, false) &&
             (!comm1->inter || same_members(comm1->remote_group, comm2->remote_group, false)))
        *result = MPI_SIMILAR;
    else
        *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_compare)

/* ---- creation ---- */

/* What a duplicate inherits (§6.4.2): error handler, attributes (through
 * their copy callbacks), topology, info hints. */
int weft__mpi_comm_dup_inherit(MPI_Comm comm, MPI_Info info, MPI_Comm c)
{
    int rc;
    weft__mpi_comm_inherit_errh(c, comm);
    if (comm->topo && (rc = weft__mpi_topo_dup(comm->topo, &c->topo)))
        return rc;
    if (info != MPI_INFO_NULL && info) {
        if ((rc = weft__mpi_info_dup_internal(info, &c->info)))
            return rc;
    } else if (comm->info && (rc = weft__mpi_info_dup_internal(comm->info, &c->info))) {
        return rc;
    }
    return weft__mpi_attrs_copy(comm, c);
}

static int dup_common(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, const char *fn)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !newcomm)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, fn);
    MPI_Comm c;
    if (comm->inter) {
        /* Intercommunicator: both groups agree, over the local intracommunicator
         * and then through the leaders; see mpi_intercomm.c. */
        rc = weft__mpi_intercomm_dup(comm, &c);
    } else {
        rc = weft__mpi_comm_create_from(comm, comm->group, &c);
    }
    if (rc)
        return weft__mpi_err(comm, rc, fn);
    if ((rc = weft__mpi_comm_dup_inherit(comm, info, c))) {
        weft__mpi_comm_release(c);
        *newcomm = MPI_COMM_NULL;
        return weft__mpi_err(comm, rc, fn);
    }
    *newcomm = c;
    return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return dup_common(comm, MPI_INFO_NULL, newcomm, "MPI_Comm_dup");
}
WEFT_MPI_ALIAS(Comm_dup)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    if (!info || info->magic != WEFT_MPI_MAGIC_INFO)
        return weft__mpi_err(comm, MPI_ERR_INFO, "MPI_Comm_dup_with_info");
    return dup_common(comm, info, newcomm, "MPI_Comm_dup_with_info");
}
WEFT_MPI_ALIAS(Comm_dup_with_info)

static bool valid_group(MPI_Group g)
{
    return g && g->magic == WEFT_MPI_MAGIC_GROUP && g != MPI_GROUP_NULL;
}

/* Is every member of g a member of parent's local group? */
static bool subset(MPI_Group g, MPI_Comm parent)
{
    for (int i = 0; i < g->size; i++) {
        bool found = false;
        for (int j = 0; j < parent->size && !found; j++)
            found = parent->group->ranks[j] == g->ranks[i];
        if (!found)
            return false;
    }
    return true;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_create");
    if (!valid_group(group) || !subset(group, comm))
        return weft__mpi_err(comm, MPI_ERR_GROUP, "MPI_Comm_create");
    if (!newcomm)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_create");
    if (comm->inter) {
        rc = weft__mpi_intercomm_create_sub(comm, group, newcomm);
        return rc ? weft__mpi_err(comm, rc, "MPI_Comm_create") : MPI_SUCCESS;
    }
    MPI_Group g = group;
    if (group->predefined && group->size) {
        g = weft__mpi_group_new(group->size, group->ranks);
        if (!g)
            return weft__mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Comm_create");
    }
    rc = weft__mpi_comm_create_from(comm, g, newcomm);
    if (g != group)
        weft__mpi_group_release(g);
    return rc ? weft__mpi_err(comm, rc, "MPI_Comm_create") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_create)

/* MPI_Comm_create_group's work, once comm and group are checked: the
 * agreement runs among the group's members only, named by tag (§6.4.2). */
static int create_group(MPI_Comm comm, MPI_Group group, uint64_t tag, MPI_Comm *newcomm)
{
    if (group->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int rc;
    int k = agree(aux_id(comm), tag, group->ranks, group->size, group->rank, NULL, 0, NULL, &rc);
    if (k < 0)
        return rc;
    MPI_Comm c = comm_new(group, NULL, (unsigned)k);
    if (!c)
        return MPI_ERR_NO_MEM;
    weft__mpi_comm_inherit_errh(c, comm);
    *newcomm = c;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_create_group");
    if (comm->inter)
        return weft__mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_create_group");
    if (!valid_group(group) || !subset(group, comm))
        return weft__mpi_err(comm, MPI_ERR_GROUP, "MPI_Comm_create_group");
    if (tag < 0)
        return weft__mpi_err(comm, MPI_ERR_TAG, "MPI_Comm_create_group");
    if (!newcomm)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_create_group");
    rc = create_group(comm, group, (uint64_t)tag, newcomm);
    return rc ? weft__mpi_err(comm, rc, "MPI_Comm_create_group") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_create_group)

/* A string tag's number: FNV-1a, 31 bits. */
uint32_t weft__mpi_stringtag_hash(const char *stringtag)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)stringtag; *c; c++)
        h = (h ^ *c) * 16777619u;
    return h & 0x7fffffffu;
}

int weft__mpi_comm_from_group(MPI_Group group, const char *stringtag, MPI_Comm *newcomm)
{
    if (!valid_group(group) || group->rank == MPI_UNDEFINED) /* only members call it */
        return MPI_ERR_GROUP;
    return create_group(MPI_COMM_WORLD, group, FROM_GROUP_TAG | weft__mpi_stringtag_hash(stringtag),
                        newcomm);
}

typedef struct split_entry {
    int color, key, rank, world;
} split_entry_t;

static int cmp_split(const void *a, const void *b)
{
    const split_entry_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int weft__mpi_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *fn)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !newcomm)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, fn);
    if (color < 0 && color != MPI_UNDEFINED)
        return weft__mpi_err(comm, MPI_ERR_ARG, fn);
    if (comm->inter) {
        rc = weft__mpi_intercomm_split(comm, color, key, newcomm);
        return rc ? weft__mpi_err(comm, rc, fn) : MPI_SUCCESS;
    }
    int n = comm->size;
    split_entry_t me = {color, key, comm->rank, weft__mpi.world_rank};
    split_entry_t *all = malloc((size_t)n * sizeof *all);
    if (!all)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    int k = agree(aux_id(comm), aux_tag(comm), comm->group->ranks, n, comm->rank, &me, sizeof me,
                  all, &rc);
    if (k < 0) {
        free(all);
        return weft__mpi_err(comm, rc, fn);
    }
    if (color == MPI_UNDEFINED) {
        weft_lock_acquire(&weft__mpi.lock);
        ctx_give((unsigned)k);
        weft_lock_release(&weft__mpi.lock);
        free(all);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (all[i].color == color)
            all[m++] = all[i];
    qsort(all, (size_t)m, sizeof *all, cmp_split);
    int *ranks = malloc((size_t)m * sizeof *ranks);
    MPI_Group g = NULL;
    if (ranks) {
        for (int i = 0; i < m; i++)
            ranks[i] = all[i].world;
        g = weft__mpi_group_new(m, ranks);
    }
    free(ranks);
    free(all);
    MPI_Comm c = g ? comm_new(g, NULL, (unsigned)k) : NULL;
    weft__mpi_group_release(g);
    if (!c) {
        weft_lock_acquire(&weft__mpi.lock);
        ctx_give((unsigned)k);
        weft_lock_release(&weft__mpi.lock);
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    }
    weft__mpi_comm_inherit_errh(c, comm);
    *newcomm = c;
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return weft__mpi_comm_split(comm, color, key, newcomm, "MPI_Comm_split");
}
WEFT_MPI_ALIAS(Comm_split)

int PMPI_Comm_free(MPI_Comm *comm)
{
    if (!comm || weft__mpi_check_comm(*comm) || (*comm)->predefined)
        return weft__mpi_err(NULL, MPI_ERR_COMM, "MPI_Comm_free");
    MPI_Comm c = *comm;
    int rc = weft__mpi_attrs_delete_all(c);
    if (rc)
        return weft__mpi_err(c, rc, "MPI_Comm_free");
    /* Pending operations on it complete normally (§6.4.3): their requests
     * hold references, and the handle's goes now. */
    *comm = MPI_COMM_NULL;
    c->freed = true;
    weft__mpi_comm_release(c);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_free)

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !comm_name)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_set_name");
    snprintf(comm->name, sizeof comm->name, "%s", comm_name);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    if (comm == MPI_COMM_NULL && comm_name && resultlen) {
        snprintf(comm_name, MPI_MAX_OBJECT_NAME, "MPI_COMM_NULL");
        *resultlen = (int)strlen(comm_name);
        return MPI_SUCCESS;
    }
    int rc = weft__mpi_check_comm(comm);
    if (rc || !comm_name || !resultlen)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_get_name");
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", comm->name);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_get_name)

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_set_info");
    if (!info || info->magic != WEFT_MPI_MAGIC_INFO)
        return weft__mpi_err(comm, MPI_ERR_INFO, "MPI_Comm_set_info");
    MPI_Info copy = NULL;
    if (info != MPI_INFO_NULL && (rc = weft__mpi_info_dup_internal(info, &copy)))
        return weft__mpi_err(comm, rc, "MPI_Comm_set_info");
    weft__mpi_info_release(comm->info);
    comm->info = copy;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !info_used)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Comm_get_info");
    if (comm->info)
        rc = weft__mpi_info_dup_internal(comm->info, info_used);
    else
        rc = PMPI_Info_create(info_used);
    return rc ? weft__mpi_err(comm, rc, "MPI_Comm_get_info") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_get_info)

/* For the parts that agree on ids over other groups (intercommunicators). */
int weft__mpi_comm_agree(MPI_Comm over, uint64_t tag, const int *members, int n, int me,
                         const void *extra, size_t extra_len, void *extra_all, int *k_out)
{
    int rc;
    int k = agree(aux_id(over), tag, members, n, me, extra, extra_len, extra_all, &rc);
    if (k < 0)
        return rc;
    *k_out = k;
    return MPI_SUCCESS;
}

uint64_t weft__mpi_comm_aux_tag(MPI_Comm comm)
{
    return aux_tag(comm);
}

MPI_Comm weft__mpi_comm_new(MPI_Group group, MPI_Group remote, int k)
{
    return comm_new(group, remote, (unsigned)k);
}

void weft__mpi_ctx_give(int k)
{
    weft_lock_acquire(&weft__mpi.lock);
    ctx_give((unsigned)k);
    weft_lock_release(&weft__mpi.lock);
}
