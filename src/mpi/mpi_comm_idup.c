/* MPI_Comm_idup (MPI 3.1 §6.4.2): a duplicate whose context id is agreed by a
 * non-blocking schedule on the parent (mpi_comm.c has the blocking
 * agreement, the ids and the communicator objects). */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"

/* MPI_Comm_idup must not wait for the other members (a member may reach it
 * only after something we do next), so the agreement on the new id is a
 * non-blocking collective schedule on the parent, advanced by whatever MPI
 * call the process makes: an all-reduce (OR) of the used-id bitmaps, each
 * member takes the lowest id free everywhere, an all-reduce of "could not"
 * (another agreement of this process took it meanwhile), and on any "could
 * not" another try. For an intercommunicator the all-reduces are over the
 * local group and then across (the union of both groups), and two ids are
 * taken: the new intercommunicator's and its local_comm's.
 *
 * Two idups in flight at once (overlapping groups, started in different
 * orders) would pick the same id, each win it at a different member, and try
 * again for ever. So, as MPICH does, only one of a process's idups offers its
 * free ids at a time: the one of lowest priority value (parent id, then
 * sequence number on the parent, the same at every member); the others offer
 * none and try again. The globally first one always gets through.
 *
 * The new communicator is made at the call (error handler, attributes,
 * topology, info are those of the parent then) and gets its id when the
 * request completes; it may not be used before (§5.12). A failure to
 * communicate (a dead peer) leaves it without an id: the request returns the
 * error. */
typedef struct idup {
    MPI_Comm parent, c;
    uint64_t prio;
    uint64_t mine[65], used[65];         /* [64]: some member offered nothing */
    uint64_t used_remote[65];            /* intercommunicators: the remote group's */
    uint64_t bad, anybad, anybad_remote; /* could not take the ids */
    int k, k_local; /* taken by this member, or -1; k_local: for c->local_comm */
} idup_t;

/* The OR over every member of the parent (both groups of an intercommunicator)
 * of n words at in, into out (and out_remote, then ORed into out, for an
 * intercommunicator); once it is done, next(s, d) runs in a round of its own. */
static int idup_or(weft__mpi_sched_t *s, idup_t *d, uint64_t *in, uint64_t *out,
                   uint64_t *out_remote, int n, weft__coll_call_fn *next)
{
    weft__coll_phase(s);
    int rc;
    if (!d->parent->inter) {
        rc = weft__coll_b_allreduce(s, d->parent, in, out, (size_t)n, MPI_UINT64_T, MPI_BOR);
    } else {
        rc = weft__coll_b_allreduce(s, d->parent->local_comm, in, out, (size_t)n, MPI_UINT64_T,
                                    MPI_BOR);
        weft__coll_phase(s);
        if (!rc)
            rc = weft__coll_inter_allreduce(s, d->parent, in, out_remote, n, MPI_UINT64_T, MPI_BOR);
    }
    weft__coll_round(s);
    if (!rc)
        rc = weft__coll_call(s, next, d);
    weft__coll_round(s);
    return rc;
}

static weft__coll_call_fn idup_pick, idup_check;

static int idup_prio_add(uint64_t prio)
{
    weft_lock_acquire(&weft__mpi.lock);
    if (weft__mpi.nidup_prio == weft__mpi.cap_idup_prio) {
        int cap = weft__mpi.cap_idup_prio ? 2 * weft__mpi.cap_idup_prio : 8;
        uint64_t *p = realloc(weft__mpi.idup_prio, (size_t)cap * sizeof *p);
        if (!p) {
            weft_lock_release(&weft__mpi.lock);
            return MPI_ERR_NO_MEM;
        }
        weft__mpi.idup_prio = p;
        weft__mpi.cap_idup_prio = cap;
    }
    weft__mpi.idup_prio[weft__mpi.nidup_prio++] = prio;
    weft_lock_release(&weft__mpi.lock);
    atomic_fetch_add(&weft__mpi.idups, 1);
    return MPI_SUCCESS;
}

static void idup_prio_remove(uint64_t prio)
{
    weft_lock_acquire(&weft__mpi.lock);
    for (int i = 0; i < weft__mpi.nidup_prio; i++)
        if (weft__mpi.idup_prio[i] == prio) {
            weft__mpi.idup_prio[i] = weft__mpi.idup_prio[--weft__mpi.nidup_prio];
            break;
        }
    weft_lock_release(&weft__mpi.lock);
    atomic_fetch_sub(&weft__mpi.idups, 1);
}

static int idup_round(weft__mpi_sched_t *s, idup_t *d)
{
    weft_lock_acquire(&weft__mpi.lock);
    bool first = true;
    for (int i = 0; i < weft__mpi.nidup_prio; i++)
        first = first && weft__mpi.idup_prio[i] >= d->prio;
    if (first)
        memcpy(d->mine, weft__mpi.ctx_mask, sizeof weft__mpi.ctx_mask);
    else
        memset(d->mine, 0xff, sizeof weft__mpi.ctx_mask);
    weft_lock_release(&weft__mpi.lock);
    d->mine[64] = !first;
    return idup_or(s, d, d->mine, d->used, d->used_remote, 65, idup_pick);
}

static int idup_pick(weft__mpi_sched_t *s, void *arg)
{
    idup_t *d = arg;
    d->k = d->k_local = -1;
    if (d->parent->inter)
        for (int w = 0; w < 65; w++)
            d->used[w] |= d->used_remote[w];
    if (!d->used[64]) {
        /* An intercommunicator takes two ids: its own and its local_comm's. */
        int k = weft__mpi_ctx_lowest_free(d->used), k2 = -1;
        if (k < 0)
            return weft__mpi_ctx_exhausted();
        if (d->parent->inter) {
            d->used[k / 64] |= 1ull << (k % 64);
            if ((k2 = weft__mpi_ctx_lowest_free(d->used)) < 0)
                return weft__mpi_ctx_exhausted();
        }
        if (weft__mpi_ctx_try_take(k, k2)) { /* both or neither */
            d->k = k;
            d->k_local = k2;
        }
    }
    d->bad = d->k < 0 || (d->parent->inter && d->k_local < 0);
    d->anybad_remote = 0;
    return idup_or(s, d, &d->bad, &d->anybad, &d->anybad_remote, 1, idup_check);
}

static int idup_check(weft__mpi_sched_t *s, void *arg)
{
    idup_t *d = arg;
    if (d->anybad || d->anybad_remote) {
        if (d->k >= 0)
            weft__mpi_ctx_give(d->k);
        if (d->k_local >= 0)
            weft__mpi_ctx_give(d->k_local);
        d->k = d->k_local = -1;
        return idup_round(s, d);
    }
    d->c->id_p2p = WEFT_MPI_ID_P2P(d->k);
    d->c->id_coll = d->c->id_p2p + 1;
    if (d->c->local_comm) {
        d->c->local_comm->id_p2p = WEFT_MPI_ID_P2P(d->k_local);
        d->c->local_comm->id_coll = d->c->local_comm->id_p2p + 1;
    }
    d->k = d->k_local = -1; /* the new communicator's now, freed with it */
    return MPI_SUCCESS;
}

/* The agreement ended, with the new ids or not (a dead peer stops it between
 * any two steps): give back ids taken but not given to the communicator, and
 * leave the priority list, or every later idup of this process would wait
 * behind this one for ever. */
static void idup_end(weft__mpi_sched_t *s, void *arg, int err)
{
    (void)s;
    (void)err;
    idup_t *d = arg;
    if (d->k >= 0)
        weft__mpi_ctx_give(d->k);
    if (d->k_local >= 0)
        weft__mpi_ctx_give(d->k_local);
    d->k = d->k_local = -1;
    idup_prio_remove(d->prio);
}

/* MPI_Comm_idup(_with_info): info NULL (MPI_INFO_NULL) keeps comm's hints. */
static int idup(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request,
                const char *fn)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc || !newcomm || !request)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, fn);
    /* No ids yet. */
    MPI_Comm c =
        weft__mpi_comm_new(comm->group, comm->inter ? comm->remote_group : NULL, WEFT_MPI_CTX_BITS);
    if (!c)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    if (comm->inter &&
        !(c->local_comm = weft__mpi_comm_new(comm->local_comm->group, NULL, WEFT_MPI_CTX_BITS))) {
        rc = MPI_ERR_NO_MEM;
        goto err_release;
    }
    if ((rc = weft__mpi_comm_dup_inherit(comm, info, c)))
        goto err_release;
    weft__mpi_sched_t *s = weft__coll_new(comm, true);
    idup_t *d = s ? weft__coll_tmp(s, sizeof *d) : NULL;
    if (!d) {
        rc = MPI_ERR_NO_MEM;
        if (s)
            weft__coll_discard(s);
        goto err_release;
    }
    *d = (idup_t){.parent = comm,
                  .c = c,
                  .prio = (uint64_t)comm->id_p2p << 32 | weft__coll_seq(s),
                  .k = -1,
                  .k_local = -1};
    if ((rc = idup_prio_add(d->prio))) {
        weft__coll_discard(s);
        goto err_release;
    }
    if ((rc = idup_round(s, d))) {
        weft__coll_discard(s);
        goto err_unlist;
    }
    /* From here the schedule's end leaves the list (idup_end); a start that
     * fails frees s without starting it. */
    weft__coll_on_end(s, idup_end, d);
    if ((rc = weft__coll_start(s, comm, request))) /* frees s on failure */
        goto err_unlist;
    *newcomm = c;
    return MPI_SUCCESS;
err_unlist:
    idup_prio_remove(d->prio);
err_release:
    weft__mpi_comm_release(c);
    return weft__mpi_err(comm, rc, fn);
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup(comm, MPI_INFO_NULL, newcomm, request, "MPI_Comm_idup");
}
WEFT_MPI_ALIAS(Comm_idup)

/* MPI 4.0: as MPI_Comm_dup_with_info, non-blocking. */
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    static const char fn[] = "MPI_Comm_idup_with_info";
    if (!info || info->magic != WEFT_MPI_MAGIC_INFO)
        return weft__mpi_err(comm, MPI_ERR_INFO, fn);
    return idup(comm, info, newcomm, request, fn);
}
WEFT_MPI_ALIAS(Comm_idup_with_info)
