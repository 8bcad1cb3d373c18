/* Synchronization of one-sided communication (MPI 3.1 §11.5): fence,
 * post/start/complete/wait, passive-target locks and flushes.
 *
 * An epoch's end needs every operation complete at its target
 * (weft__win_flush): operations on mapped memory are as soon as issued,
 * requests once the target answered a flush behind them. Fences are that
 * and a barrier. Post and complete are empty messages on the window's own
 * communicator (a start waits for the posts of its group, a wait for the
 * completes). A lock is the target's lock word (mpi_win_int.h): taken with
 * CPU atomics where it is mapped, by the target's server otherwise; an
 * unlock behind requests is a request itself, answered once those before
 * it are applied. MPI_MODE_NOCHECK skips the lock and the posts. */
#include <stdlib.h>

#include "mpi/mpi_win_int.h"

enum { TAG_POST = 1, TAG_COMPLETE = 2 };

/* ---------------------------------------------------------------- lock words */

bool weft__win_lock_try(weft__win_ctl_t *ctl, int type)
{
    uint64_t v = atomic_load(&ctl->lock);
    if (type == MPI_LOCK_EXCLUSIVE)
        return v == 0 && atomic_compare_exchange_strong(&ctl->lock, &v, WEFT_WIN_LOCK_EXCL);
    while (!(v & WEFT_WIN_LOCK_EXCL))
        if (atomic_compare_exchange_weak(&ctl->lock, &v, v + 1))
            return true;
    return false;
}

void weft__win_lock_word(weft__win_ctl_t *ctl, int type)
{
    weft_idle_t idle = {0};
    while (!weft__win_lock_try(ctl, type))
        if (weft_progress(weft__mpi.ctx) <= 0)
            weft_idle(weft__mpi.ctx, &idle);
}

void weft__win_unlock_word(weft__win_ctl_t *ctl, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        atomic_fetch_and(&ctl->lock, ~WEFT_WIN_LOCK_EXCL);
    else
        atomic_fetch_sub(&ctl->lock, 1);
}

/* Take (lock) or give back the lock of type on target t. */
static int lock_target(MPI_Win win, int t, int type, bool lock)
{
    weft__win_peer_t *p = &win->peer[t];
    if (p->path == WEFT_WIN_MAPPED) {
        if (lock) {
            /* Where the server also takes this word (for the origins that
             * do not map it), let it grant what waits first: a process
             * locking its own part in a loop would keep them out. */
            if (win->serve)
                weft_progress(weft__mpi.ctx);
            weft__win_lock_word(p->ctl, type);
        } else {
            weft__win_unlock_word(p->ctl, type);
            if (win->serve)
                weft_progress(weft__mpi.ctx);
        }
        return MPI_SUCCESS;
    }
    if (!lock) {
        /* The unlock request follows the others: its answer says they are
         * applied, so only the answers awaited need waiting for. */
        weft_idle_t idle = {0};
        while (atomic_load(&p->replies) > 0)
            if (weft_progress(weft__mpi.ctx) <= 0)
                weft_idle(weft__mpi.ctx, &idle);
        atomic_store(&p->unflushed, 0);
    }
    return weft__win_lock_remote(win, t, lock, type);
}

/* ---------------------------------------------------------------- passive target */

static int check_target(MPI_Win win, int rank)
{
    int rc = weft__win_check(win);
    if (!rc && (rank < 0 || rank >= win->size) && rank != MPI_PROC_NULL)
        rc = MPI_ERR_RANK;
    return rc;
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    int rc = check_target(win, rank);
    if (!rc && lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        rc = MPI_ERR_LOCKTYPE;
    if (!rc && (assert & ~MPI_MODE_NOCHECK))
        rc = MPI_ERR_ASSERT;
    if (rc || rank == MPI_PROC_NULL)
        return rc ? weft__mpi_err_win(win, rc, "MPI_Win_lock") : MPI_SUCCESS;
    weft__win_peer_t *p = &win->peer[rank];
    int none = 0;
    if (atomic_load(&win->lock_all) ||
        !atomic_compare_exchange_strong(&p->lock, &none, lock_type)) /* claimed, not held yet */
        return weft__mpi_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock");
    if (assert & MPI_MODE_NOCHECK)
        return MPI_SUCCESS;
    rc = lock_target(win, rank, lock_type, true);
    if (rc) {
        atomic_store(&p->lock, 0);
        return weft__mpi_err_win(win, rc, "MPI_Win_lock");
    }
    atomic_store(&p->lock, lock_type | WEFT_WIN_LOCK_HELD);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_lock)

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    int rc = check_target(win, rank);
    if (rc || rank == MPI_PROC_NULL)
        return rc ? weft__mpi_err_win(win, rc, "MPI_Win_unlock") : MPI_SUCCESS;
    weft__win_peer_t *p = &win->peer[rank];
    int held = atomic_load(&p->lock);
    if (!held)
        return weft__mpi_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_unlock");
    if (held & WEFT_WIN_LOCK_HELD)
        rc = lock_target(win, rank, held & ~WEFT_WIN_LOCK_HELD, false);
    else
        rc = weft__win_flush(win, rank);
    weft__win_publish(win);
    atomic_store(&p->lock, 0);
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_unlock") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_unlock)

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    int rc = weft__win_check(win);
    if (!rc && (assert & ~MPI_MODE_NOCHECK))
        rc = MPI_ERR_ASSERT;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_lock_all");
    for (int r = 0; r < win->size; r++)
        if (atomic_load(&win->peer[r].lock))
            return weft__mpi_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all");
    int none = 0;
    if (!atomic_compare_exchange_strong(&win->lock_all, &none, 1 + assert))
        return weft__mpi_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all");
    if (assert & MPI_MODE_NOCHECK)
        return MPI_SUCCESS;
    for (int r = 0; r < win->size && !rc; r++)
        if ((rc = lock_target(win, r, MPI_LOCK_SHARED, true)) != MPI_SUCCESS) {
            while (r-- > 0)
                lock_target(win, r, MPI_LOCK_SHARED, false);
            atomic_store(&win->lock_all, 0);
        }
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_lock_all") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win)
{
    int rc = weft__win_check(win);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_unlock_all");
    int all = atomic_load(&win->lock_all);
    if (!all)
        return weft__mpi_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all");
    if ((all - 1) & MPI_MODE_NOCHECK) {
        rc = weft__win_flush(win, -1);
    } else {
        for (int r = 0; r < win->size; r++) {
            int lrc = lock_target(win, r, MPI_LOCK_SHARED, false);
            if (lrc && !rc)
                rc = lrc;
        }
    }
    weft__win_publish(win);
    atomic_store(&win->lock_all, 0);
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_unlock_all") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_unlock_all)

/* The flushes need a passive-target epoch towards the target (§11.5.4). */
static int flush_common(MPI_Win win, int rank, bool all, bool local, const char *fn)
{
    int rc = all ? weft__win_check(win) : check_target(win, rank);
    if (rc)
        return weft__mpi_err_win(win, rc, fn);
    if (!all && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int lo = all ? 0 : rank, hi = all ? win->size : rank + 1;
    bool passive = atomic_load(&win->lock_all) != 0;
    for (int r = lo; !passive && r < hi; r++)
        passive = atomic_load(&win->peer[r].lock) != 0;
    if (!passive)
        return weft__mpi_err_win(win, MPI_ERR_RMA_SYNC, fn);
    if (local) {
        /* Puts and accumulates left their buffers when issued: local
         * completion waits only for the answers of gets and fetches. */
        if (win->serve)
            weft_progress(weft__mpi.ctx);
        for (int r = lo; r < hi; r++) {
            weft_idle_t idle = {0};
            while (atomic_load(&win->peer[r].replies) > 0)
                if (weft_progress(weft__mpi.ctx) <= 0)
                    weft_idle(weft__mpi.ctx, &idle);
        }
        return MPI_SUCCESS;
    }
    rc = weft__win_flush(win, all ? -1 : rank);
    return rc ? weft__mpi_err_win(win, rc, fn) : MPI_SUCCESS;
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
    /* Mapped memory inside a passive epoch: only the memory barrier. */
    if (!weft__win_check(win) && rank >= 0 && rank < win->size &&
        win->peer[rank].path == WEFT_WIN_MAPPED &&
        (atomic_load_explicit(&win->lock_all, memory_order_relaxed) ||
         atomic_load_explicit(&win->peer[rank].lock, memory_order_relaxed))) {
        weft__win_fence();
        if (win->serve)
            weft_progress(weft__mpi.ctx); /* the others' requests to this process */
        return MPI_SUCCESS;
    }
    return flush_common(win, rank, false, false, "MPI_Win_flush");
}
WEFT_MPI_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win)
{
    return flush_common(win, 0, true, false, "MPI_Win_flush_all");
}
WEFT_MPI_ALIAS(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    return flush_common(win, rank, false, true, "MPI_Win_flush_local");
}
WEFT_MPI_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win)
{
    return flush_common(win, 0, true, true, "MPI_Win_flush_local_all");
}
WEFT_MPI_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win)
{
    int rc = weft__win_check(win);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_sync");
    /* What this process's server applied is seen from here on, and what
     * this thread stored is seen by the others. */
    if (win->serve)
        weft_progress(weft__mpi.ctx); /* a program polling its window waits for those */
    weft__win_publish(win);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_sync)

/* ---------------------------------------------------------------- active target */

static bool passive_open(MPI_Win win)
{
    if (atomic_load(&win->lock_all))
        return true;
    for (int r = 0; r < win->size; r++)
        if (atomic_load(&win->peer[r].lock))
            return true;
    return false;
}

int PMPI_Win_fence(int assert, MPI_Win win)
{
    int rc = weft__win_check(win);
    if (!rc &&
        (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)))
        rc = MPI_ERR_ASSERT;
    if (!rc && (passive_open(win) || win->start_group != MPI_GROUP_NULL ||
                win->post_group != MPI_GROUP_NULL))
        rc = MPI_ERR_RMA_SYNC;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_fence");
    rc = weft__win_flush(win, -1);
    weft__win_publish(win);
    int brc = PMPI_Barrier(win->comm);
    weft__win_publish(win);
    atomic_store(&win->fence, !(assert &MPI_MODE_NOSUCCEED));
    if (!rc)
        rc = brc;
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_fence") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_fence)

/* The window ranks of group's members; MPI_ERR_GROUP when one is not in
 * the window. */
static int group_ranks(MPI_Win win, MPI_Group group, int **out)
{
    if (!group || group == MPI_GROUP_NULL || group->magic != WEFT_MPI_MAGIC_GROUP)
        return MPI_ERR_GROUP;
    int *r = malloc((size_t)(group->size ? group->size : 1) * sizeof *r);
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < group->size; i++) {
        r[i] = weft__mpi_comm_rank_of(win->comm, group->ranks[i]);
        if (r[i] < 0) {
            free(r);
            return MPI_ERR_GROUP;
        }
    }
    *out = r;
    return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    int rc = weft__win_check(win);
    if (!rc && (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)))
        rc = MPI_ERR_ASSERT;
    if (!rc && win->post_group != MPI_GROUP_NULL)
        rc = MPI_ERR_RMA_SYNC;
    int *ranks = NULL;
    if (!rc)
        rc = group_ranks(win, group, &ranks);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_post");
    int n = group->size;
    win->post_reqs = calloc((size_t)(n ? n : 1), sizeof *win->post_reqs);
    if (!win->post_reqs) {
        free(ranks);
        return weft__mpi_err_win(win, MPI_ERR_NO_MEM, "MPI_Win_post");
    }
    weft__win_publish(win);
    for (int i = 0; i < n && !rc; i++) {
        rc = PMPI_Irecv(NULL, 0, MPI_BYTE, ranks[i], TAG_COMPLETE, win->comm, &win->post_reqs[i]);
        if (!rc && !(assert &MPI_MODE_NOCHECK))
            rc = PMPI_Send(NULL, 0, MPI_BYTE, ranks[i], TAG_POST, win->comm);
    }
    free(ranks);
    weft__mpi_group_retain(group);
    win->post_group = group;
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_post") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_post)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    int rc = weft__win_check(win);
    if (!rc && (assert & ~MPI_MODE_NOCHECK))
        rc = MPI_ERR_ASSERT;
    if (!rc && win->start_group != MPI_GROUP_NULL)
        rc = MPI_ERR_RMA_SYNC;
    int *ranks = NULL;
    if (!rc)
        rc = group_ranks(win, group, &ranks);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_start");
    for (int i = 0; i < group->size && !rc; i++) {
        if (!(assert &MPI_MODE_NOCHECK))
            rc = PMPI_Recv(NULL, 0, MPI_BYTE, ranks[i], TAG_POST, win->comm, MPI_STATUS_IGNORE);
        atomic_store(&win->peer[ranks[i]].started, true);
    }
    free(ranks);
    weft__mpi_group_retain(group);
    win->start_group = group;
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_start") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win)
{
    int rc = weft__win_check(win);
    if (!rc && win->start_group == MPI_GROUP_NULL)
        rc = MPI_ERR_RMA_SYNC;
    int *ranks = NULL;
    if (!rc)
        rc = group_ranks(win, win->start_group, &ranks);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_complete");
    MPI_Group g = win->start_group;
    for (int i = 0; i < g->size; i++) {
        int frc = weft__win_flush(win, ranks[i]);
        if (frc && !rc)
            rc = frc;
        atomic_store(&win->peer[ranks[i]].started, false);
    }
    for (int i = 0; i < g->size; i++) {
        int src = PMPI_Send(NULL, 0, MPI_BYTE, ranks[i], TAG_COMPLETE, win->comm);
        if (src && !rc)
            rc = src;
    }
    free(ranks);
    win->start_group = MPI_GROUP_NULL;
    weft__mpi_group_release(g);
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_complete") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_complete)

/* The exposure epoch is over: every origin of the group completed. */
static void exposure_end(MPI_Win win)
{
    free(win->post_reqs);
    win->post_reqs = NULL;
    MPI_Group g = win->post_group;
    win->post_group = MPI_GROUP_NULL;
    weft__mpi_group_release(g);
    weft__win_publish(win);
}

int PMPI_Win_wait(MPI_Win win)
{
    int rc = weft__win_check(win);
    if (!rc && win->post_group == MPI_GROUP_NULL)
        rc = MPI_ERR_RMA_SYNC;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_wait");
    rc = PMPI_Waitall(win->post_group->size, win->post_reqs, MPI_STATUSES_IGNORE);
    exposure_end(win);
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_wait") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag)
{
    int rc = weft__win_check(win);
    if (!rc && !flag)
        rc = MPI_ERR_ARG;
    if (!rc && win->post_group == MPI_GROUP_NULL)
        rc = MPI_ERR_RMA_SYNC;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_test");
    rc = PMPI_Testall(win->post_group->size, win->post_reqs, flag, MPI_STATUSES_IGNORE);
    if (!rc && *flag)
        exposure_end(win);
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_test") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_test)
