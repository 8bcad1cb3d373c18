/* Requests: completion (wait/test in all variants), persistent requests,
 * generalized requests, cancel (MPI 3.1 §3.7-3.9, §12.2). Allocation is in
 * mpi_req_alloc.c.
 *
 * An MPI request wraps an engine request (p2p), a collective schedule, or a
 * generalized request. Completing it caches the status in the request, so
 * MPI_Request_get_status can look without freeing, and a persistent request
 * keeps its arguments to start again.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"

struct weft_mpi_request weft_mpi_request_null = {
    .magic = WEFT_MPI_MAGIC_REQ, .kind = WEFT_MPI_REQ_DONE, .complete = true};

/* Requests the application freed while their operation still ran
 * (MPI_Request_free): they complete in the background and are reaped by
 * progress. Linked through next_free, which a live request does not use. */
static MPI_Request detached;
static atomic_int detached_count;

static void detach(MPI_Request r)
{
    r->freed = true;
    weft_lock_acquire(&weft__mpi.lock);
    r->next_free = detached;
    detached = r;
    weft_lock_release(&weft__mpi.lock);
    atomic_fetch_add_explicit(&detached_count, 1, memory_order_release);
}

/* Free the detached requests that completed; with `wait`, wait for all of them
 * first (receives nobody will match are cancelled: finalize must not hang). */
static void reap_detached(bool wait)
{
    if (!atomic_load_explicit(&detached_count, memory_order_acquire))
        return;
    weft_lock_acquire(&weft__mpi.lock);
    MPI_Request list = detached, keep = NULL;
    detached = NULL;
    weft_lock_release(&weft__mpi.lock);
    while (list) {
        MPI_Request r = list;
        list = r->next_free;
        if (wait && r->kind == WEFT_MPI_REQ_RECV && !r->complete)
            weft_sr_cancel(weft__mpi.ctx, r->wreq);
        if (wait && r->kind == WEFT_MPI_REQ_PAIR && !r->complete &&
            r->part[0]->kind == WEFT_MPI_REQ_RECV && !r->part[0]->complete)
            weft_sr_cancel(weft__mpi.ctx, r->part[0]->wreq);
        if (wait)
            weft__mpi_req_wait_complete(r);
        else
            weft__mpi_req_poll(r);
        if (r->complete) {
            atomic_fetch_sub_explicit(&detached_count, 1, memory_order_relaxed);
            weft__mpi_req_free(r);
        } else {
            r->next_free = keep;
            keep = r;
        }
    }
    if (!keep)
        return;
    weft_lock_acquire(&weft__mpi.lock);
    MPI_Request tail = keep;
    while (tail->next_free)
        tail = tail->next_free;
    tail->next_free = detached;
    detached = keep;
    weft_lock_release(&weft__mpi.lock);
}

void weft__mpi_req_drain(void)
{
    reap_detached(true);
}

void weft__mpi_progress(void)
{
    weft_progress(weft__mpi.ctx); /* the schedules too */
    reap_detached(false);
}

/* The MPI error of a finished p2p engine request (a cancel is a success). */
static inline int p2p_error(int wrc)
{
    /* Success inline: every completion asks, the mapping is out of line. */
    return wrc == WEFT_OK || wrc == WEFT_ECANCELED ? MPI_SUCCESS : weft__mpi_err_from_weft(wrc);
}

/* The MPI status of p2p request r whose engine request finished. */
static void p2p_status(MPI_Status *st, MPI_Request r, const weft_status_t *ws, int wrc)
{
    weft__mpi_status_set(st, r->comm, ws, p2p_error(wrc));
    if (r->kind == WEFT_MPI_REQ_SEND) {
        /* A send's status says nothing about the receiver. */
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
    }
    if (wrc == WEFT_ECANCELED)
        st->weft_cancelled = 1;
}

/* A p2p engine request finished: record the status, unpack staged data. */
static void finish_p2p(MPI_Request r, const weft_status_t *ws, int wrc)
{
    p2p_status(&r->status, r, ws, wrc);
    if (r->kind == WEFT_MPI_REQ_RECV && r->staging && r->user_buf) {
        size_t got = ws->length;
        size_t cap = r->user_type->size * (size_t)r->user_count;
        weft__mpi_type_unpack(r->user_type, r->user_buf, (size_t)r->user_count, 0,
                              got < cap ? got : cap, r->staging);
    }
    if (r->staging && r->kind == WEFT_MPI_REQ_RECV) {
        free(r->staging);
        r->staging = NULL;
    }
    if (r->user_type) {
        weft__mpi_type_release(r->user_type);
        r->user_type = NULL;
    }
    r->complete = true;
}

int weft__mpi_req_poll(MPI_Request r)
{
    if (r->complete)
        return MPI_SUCCESS;
    switch (r->kind) {
    case WEFT_MPI_REQ_SEND:
    case WEFT_MPI_REQ_RECV: {
        int flag = 0;
        weft_status_t ws;
        if (r->wreq && !weft_sr_done(r->wreq))
            return MPI_SUCCESS; /* the usual answer of a scan, in one load */
        /* No progress here: every caller progresses once between its looks. */
        int wrc = weft_sr_check(weft__mpi.ctx, r->wreq, &flag, &ws);
        if (flag) {
            r->wreq = NULL;
            finish_p2p(r, &ws, wrc);
        }
        return MPI_SUCCESS;
    }
    case WEFT_MPI_REQ_GREQ:
        if (atomic_load_explicit(&r->greq_done, memory_order_acquire)) {
            MPI_Status st;
            weft__mpi_status_empty(&st);
            int rc = r->query_fn ? r->query_fn(r->extra_state, &st) : MPI_SUCCESS;
            r->status = st;
            if (rc != MPI_SUCCESS)
                r->status.MPI_ERROR = rc;
            r->complete = true;
        }
        return MPI_SUCCESS;
    case WEFT_MPI_REQ_COLL: {
        bool done = false;
        int rc = weft_sched_poll(r->sched, &done);
        if (done || rc) {
            weft__mpi_status_empty(&r->status);
            r->status.MPI_ERROR = rc;
            r->complete = true;
        }
        return MPI_SUCCESS;
    }
    case WEFT_MPI_REQ_PAIR: {
        MPI_Request *part = r->part;
        weft__mpi_req_poll(part[0]);
        weft__mpi_req_poll(part[1]);
        if (!part[0]->complete || !part[1]->complete)
            return MPI_SUCCESS;
        /* The receive's status; the send's error if only the send failed. */
        r->status = part[0]->status;
        if (r->status.MPI_ERROR == MPI_SUCCESS)
            r->status.MPI_ERROR = part[1]->status.MPI_ERROR;
        weft__mpi_req_free_pair(r);
        r->complete = true;
        return MPI_SUCCESS;
    }
    case WEFT_MPI_REQ_PCOLL:
        weft__pcoll_poll(r);
        return MPI_SUCCESS;
    case WEFT_MPI_REQ_PART:
        weft__mpi_part_poll(r);
        return MPI_SUCCESS;
    case WEFT_MPI_REQ_DONE:
        r->complete = true;
        return MPI_SUCCESS;
    case WEFT_MPI_REQ_BSEND:
        weft__mpi_bsend_poll(r);
        return MPI_SUCCESS;
    }
    return MPI_ERR_INTERN;
}

int weft__mpi_req_wait_complete(MPI_Request r)
{
    /* A lone p2p request with no collective in flight: the engine's own wait,
     * with its waiting policy, is the fastest way. */
    if ((r->kind == WEFT_MPI_REQ_SEND || r->kind == WEFT_MPI_REQ_RECV) && !r->complete &&
        !weft__mpi_scheds_active()) {
        weft_status_t ws;
        int wrc = weft_sr_wait(weft__mpi.ctx, r->wreq, &ws);
        r->wreq = NULL;
        finish_p2p(r, &ws, wrc);
        return MPI_SUCCESS;
    }
    weft_idle_t idle = {0};
    for (;;) {
        weft__mpi_req_poll(r);
        if (r->complete)
            return MPI_SUCCESS;
        weft__mpi_progress();
        weft_idle(weft__mpi.ctx, &idle);
    }
}

static bool valid_req(MPI_Request r)
{
    return r && r->magic == WEFT_MPI_MAGIC_REQ;
}

/* Is this request inactive (null, or persistent and not started)? Those
 * complete at once with an empty status (§3.7.3). */
static bool inactive(MPI_Request r)
{
    return r == MPI_REQUEST_NULL || (r->persistent && !r->active);
}

/* A request failed: keep a reference to its communicator in *failed (unless
 * an earlier one failed), for the error handler that report() calls once the
 * request is retired. Retiring releases the request's own reference, which
 * may be the communicator's last after MPI_Comm_free. */
static void note_failure(MPI_Comm *failed, MPI_Request r)
{
    if (!*failed) {
        weft__mpi_comm_retain(r->comm);
        *failed = r->comm;
    }
}

/* Report err through the handler of failed (noted by note_failure) and let
 * the communicator go. Returns err. */
static int report(MPI_Comm failed, int err, const char *fn)
{
    weft__mpi_err(failed, err, fn);
    weft__mpi_comm_release(failed);
    return err;
}

/* Hand a completed request's status to the caller and retire the request:
 * free it, or make a persistent one inactive. Returns the request's error,
 * and notes its communicator in *failed when there is one. */
static int retire(MPI_Request *slot, MPI_Status *status, bool set_error, MPI_Comm *failed)
{
    MPI_Request r = *slot;
    int err = r->status.MPI_ERROR;
    if (status) {
        int keep = status->MPI_ERROR;
        *status = r->status;
        if (!set_error)
            status->MPI_ERROR = keep;
    }
    if (r->kind == WEFT_MPI_REQ_GREQ) {
        if (r->free_fn) {
            int frc = r->free_fn(r->extra_state);
            if (frc && !err)
                err = frc;
        }
    }
    if (err)
        note_failure(failed, r);
    if (r->persistent) {
        r->active = false;
        r->complete = false;
        if (r->freed) {
            weft__mpi_req_free(r);
            *slot = MPI_REQUEST_NULL;
        }
    } else {
        weft__mpi_req_free(r);
        *slot = MPI_REQUEST_NULL;
    }
    return err;
}

/* Wait for a send or receive that holds nothing but its engine request (not
 * persistent, nothing staged, no datatype kept), hand its status to the
 * caller and free it, in one step: the engine's own wait, and no status
 * cached in the request. False, with nothing changed, when r is not such a
 * request or collectives are in flight (their schedules must move while we
 * wait): then the general path runs. */
static bool wait_retire_p2p(MPI_Request *slot, MPI_Status *status, bool set_error, int *err,
                            MPI_Comm *failed)
{
    MPI_Request r = *slot;
    if ((r->kind != WEFT_MPI_REQ_SEND && r->kind != WEFT_MPI_REQ_RECV) || r->complete ||
        r->persistent || r->staging || r->user_type || weft__mpi_scheds_active())
        return false;
    weft_status_t ws; /* only read for the caller's status: not copied otherwise */
    int wrc = weft_sr_wait(weft__mpi.ctx, r->wreq, status ? &ws : NULL);
    *err = p2p_error(wrc);
    if (status) {
        int keep = status->MPI_ERROR;
        p2p_status(status, r, &ws, wrc);
        if (!set_error)
            status->MPI_ERROR = keep;
    }
    if (*err)
        note_failure(failed, r);
    weft__mpi_req_recycle(r);
    *slot = MPI_REQUEST_NULL;
    return true;
}

static void empty_status(MPI_Status *status, bool set_error)
{
    if (status) {
        int keep = status->MPI_ERROR;
        weft__mpi_status_empty(status);
        if (!set_error)
            status->MPI_ERROR = keep;
    }
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!request || !valid_req(*request))
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Wait");
    MPI_Request r = *request;
    if (inactive(r)) {
        empty_status(status, false);
        return MPI_SUCCESS;
    }
    MPI_Comm failed = NULL;
    int err;
    if (!wait_retire_p2p(request, status, false, &err, &failed)) {
        weft__mpi_req_wait_complete(r);
        err = retire(request, status, false, &failed);
    }
    return err ? report(failed, err, "MPI_Wait") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Wait)

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!request || !valid_req(*request) || !flag)
        return weft__mpi_err(NULL, !flag ? MPI_ERR_ARG : MPI_ERR_REQUEST, "MPI_Test");
    MPI_Request r = *request;
    if (inactive(r)) {
        *flag = 1;
        empty_status(status, false);
        return MPI_SUCCESS;
    }
    weft__mpi_req_poll(r);
    if (!r->complete) {
        weft__mpi_progress();
        weft__mpi_req_poll(r);
    }
    *flag = r->complete;
    if (!r->complete)
        return MPI_SUCCESS;
    MPI_Comm failed = NULL;
    int err = retire(request, status, false, &failed);
    return err ? report(failed, err, "MPI_Test") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Test)

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (!valid_req(request) || !flag)
        return weft__mpi_err(NULL, !flag ? MPI_ERR_ARG : MPI_ERR_REQUEST, "MPI_Request_get_status");
    if (inactive(request)) {
        *flag = 1;
        empty_status(status, false);
        return MPI_SUCCESS;
    }
    weft__mpi_req_poll(request);
    if (!request->complete) {
        weft__mpi_progress();
        weft__mpi_req_poll(request);
    }
    *flag = request->complete;
    if (request->complete && status) {
        int keep = status->MPI_ERROR;
        *status = request->status;
        status->MPI_ERROR = keep;
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Request_get_status)

int PMPI_Request_free(MPI_Request *request)
{
    if (!request || !valid_req(*request) || *request == MPI_REQUEST_NULL)
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Request_free");
    MPI_Request r = *request;
    *request = MPI_REQUEST_NULL;
    if (r->persistent && !r->active) {
        weft__mpi_req_free(r);
        return MPI_SUCCESS;
    }
    /* An active operation still runs to completion (its buffers stay the
     * user's concern); it must not wait here, since its peer may need this
     * process to go on first (§3.7.3). Progress reaps it once complete. */
    if (r->kind == WEFT_MPI_REQ_GREQ) {
        r->freed = true;
        if (atomic_load(&r->greq_done)) {
            if (r->free_fn)
                r->free_fn(r->extra_state);
            weft__mpi_req_free(r);
        }
        return MPI_SUCCESS;
    }
    detach(r);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Request_free)

/* ---- multiple completion ---- */

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    if (count < 0 || (count > 0 && !reqs))
        return weft__mpi_err(NULL, count < 0 ? MPI_ERR_COUNT : MPI_ERR_REQUEST, "MPI_Waitall");
    for (int i = 0; i < count; i++)
        if (!valid_req(reqs[i]))
            return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Waitall");
    /* Each request is retired as soon as it completes: one pass, and its
     * lines are still in cache when it goes back. MPI_ERR_IN_STATUS goes
     * through the handler of the first request that failed (failed_comm). */
    MPI_Comm failed_comm = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses ? &statuses[i] : NULL;
        MPI_Request r = reqs[i];
        if (inactive(r)) {
            if (st)
                weft__mpi_status_empty(st);
            continue;
        }
        int err;
        if (!wait_retire_p2p(&reqs[i], st, true, &err, &failed_comm)) {
            weft__mpi_req_wait_complete(r);
            retire(&reqs[i], st, true, &failed_comm);
        }
    }
    return failed_comm ? report(failed_comm, MPI_ERR_IN_STATUS, "MPI_Waitall") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Waitall)

int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    if (count < 0 || !flag || (count > 0 && !reqs))
        return weft__mpi_err(NULL, count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Testall");
    bool all = true;
    for (int i = 0; i < count; i++) {
        if (!valid_req(reqs[i]))
            return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Testall");
        if (inactive(reqs[i]))
            continue;
        weft__mpi_req_poll(reqs[i]);
        if (!reqs[i]->complete)
            all = false;
    }
    if (!all) {
        weft__mpi_progress();
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    MPI_Comm failed_comm = NULL; /* the first failed request's */
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses ? &statuses[i] : NULL;
        if (inactive(reqs[i])) {
            if (st)
                weft__mpi_status_empty(st);
            continue;
        }
        retire(&reqs[i], st, true, &failed_comm);
    }
    return failed_comm ? report(failed_comm, MPI_ERR_IN_STATUS, "MPI_Testall") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Testall)

#define SCAN_BAD (-2)

/* One pass of Testany: index of a completed active request, -1 if none is
 * complete, MPI_UNDEFINED if none is active, SCAN_BAD for an invalid
 * handle among those it looked at. No progress: the caller makes it between
 * two passes. */
static int scan_any(int count, MPI_Request reqs[])
{
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        MPI_Request r = reqs[i];
        if (!valid_req(r))
            return SCAN_BAD;
        if (inactive(r))
            continue;
        any_active = true;
        if (r->complete)
            return i;
        /* A send or receive still in flight: one load, no call. */
        if ((r->kind == WEFT_MPI_REQ_SEND || r->kind == WEFT_MPI_REQ_RECV) && r->wreq &&
            !weft_sr_done(r->wreq))
            continue;
        weft__mpi_req_poll(r);
        if (r->complete)
            return i;
    }
    return any_active ? -1 : MPI_UNDEFINED;
}

static int check_reqs(int count, MPI_Request reqs[], const char *fn)
{
    if (count < 0)
        return weft__mpi_err(NULL, MPI_ERR_COUNT, fn);
    if (count > 0 && !reqs)
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, fn);
    for (int i = 0; i < count; i++)
        if (!valid_req(reqs[i]))
            return weft__mpi_err(NULL, MPI_ERR_REQUEST, fn);
    return MPI_SUCCESS;
}

int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    if (count < 0)
        return weft__mpi_err(NULL, MPI_ERR_COUNT, "MPI_Testany");
    if (count > 0 && !reqs)
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Testany");
    if (!index || !flag)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Testany");
    /* The handles are checked by the passes themselves (the usual call
     * finds nothing and looks at all of them): one walk fewer per call. */
    int i = scan_any(count, reqs);
    if (i == -1) {
        weft__mpi_progress();
        i = scan_any(count, reqs);
    }
    if (i == SCAN_BAD)
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Testany");
    if (i == MPI_UNDEFINED) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        empty_status(status, false);
        return MPI_SUCCESS;
    }
    if (i < 0) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = i;
    MPI_Comm failed = NULL;
    int err = retire(&reqs[i], status, false, &failed);
    return err ? report(failed, err, "MPI_Testany") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Testany)

int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    int rc = check_reqs(count, reqs, "MPI_Waitany");
    if (rc)
        return rc;
    if (!index)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Waitany");
    weft_idle_t idle = {0};
    for (;;) {
        int i = scan_any(count, reqs);
        if (i == MPI_UNDEFINED) {
            *index = MPI_UNDEFINED;
            empty_status(status, false);
            return MPI_SUCCESS;
        }
        if (i >= 0) {
            *index = i;
            MPI_Comm failed = NULL;
            int err = retire(&reqs[i], status, false, &failed);
            return err ? report(failed, err, "MPI_Waitany") : MPI_SUCCESS;
        }
        weft__mpi_progress();
        weft_idle(weft__mpi.ctx, &idle);
    }
}
WEFT_MPI_ALIAS(Waitany)

/* One pass of Testsome: retire every completed request; *failed_comm: the
 * communicator of the first that failed. */
static int some_pass(int count, MPI_Request reqs[], int *outcount, int indices[],
                     MPI_Status statuses[], MPI_Comm *failed_comm)
{
    int n = 0;
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        if (inactive(reqs[i]))
            continue;
        any_active = true;
        weft__mpi_req_poll(reqs[i]);
        if (!reqs[i]->complete)
            continue;
        retire(&reqs[i], statuses ? &statuses[n] : NULL, true, failed_comm);
        indices[n++] = i;
    }
    *outcount = any_active ? n : MPI_UNDEFINED;
    return n;
}

static int some(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[],
                bool wait, const char *fn)
{
    int rc = check_reqs(count, reqs, fn);
    if (rc)
        return rc;
    if (!outcount || (count > 0 && !indices))
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    MPI_Comm failed_comm = NULL;
    weft_idle_t idle = {0};
    for (;;) {
        some_pass(count, reqs, outcount, indices, statuses, &failed_comm);
        if (*outcount != 0 || !wait)
            break;
        weft__mpi_progress();
        weft_idle(weft__mpi.ctx, &idle);
    }
    if (*outcount == 0)
        weft__mpi_progress();
    return failed_comm ? report(failed_comm, MPI_ERR_IN_STATUS, fn) : MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    return some(incount, reqs, outcount, indices, statuses, true, "MPI_Waitsome");
}
WEFT_MPI_ALIAS(Waitsome)

int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    return some(incount, reqs, outcount, indices, statuses, false, "MPI_Testsome");
}
WEFT_MPI_ALIAS(Testsome)

/* ---- cancel ---- */

int PMPI_Cancel(MPI_Request *request)
{
    if (!request || !valid_req(*request) || *request == MPI_REQUEST_NULL)
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
    MPI_Request r = *request;
    if (inactive(r))
        return MPI_SUCCESS;
    if (r->kind == WEFT_MPI_REQ_BSEND) {
        /* Complete since its data was copied, but the message may still wait
         * for its receive: then it is taken back like any send, and its space
         * in the attached buffer is released (§3.8.4). The request stays open
         * until the receiver's answer. */
        weft__mpi_bsend_cancel(r);
        return MPI_SUCCESS;
    }
    if (r->complete)
        return MPI_SUCCESS;
    switch (r->kind) {
    case WEFT_MPI_REQ_RECV:
    case WEFT_MPI_REQ_SEND:
        /* A receive is canceled here and now unless it matched (WEFT_ESTATE:
         * it completes normally). A send is asked of its receiver, which
         * takes the message back if no receive matched it yet: the request
         * then completes as canceled, else as sent (WEFT_INPROGRESS). MPI_Wait
         * tells which, and MPI_Test_cancelled says so. */
        weft_sr_cancel(weft__mpi.ctx, r->wreq);
        break;
    case WEFT_MPI_REQ_PAIR:
        /* Both halves: the receive goes unless it matched, the send is
         * asked of its receiver; the status tells of the receive. */
        PMPI_Cancel(&r->part[0]);
        PMPI_Cancel(&r->part[1]);
        break;
    case WEFT_MPI_REQ_GREQ:
        if (r->cancel_fn) {
            int rc = r->cancel_fn(r->extra_state, atomic_load(&r->greq_done));
            if (rc != MPI_SUCCESS)
                return weft__mpi_err(r->comm, rc, "MPI_Cancel");
        }
        break;
    default:
        /* A send to MPI_PROC_NULL (nothing to take back) or a collective:
         * not canceled, as the standard allows (§3.8.4). */
        break;
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cancel)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Test_cancelled");
    *flag = status->weft_cancelled != 0;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Test_cancelled)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled");
    status->weft_cancelled = flag != 0;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Status_set_cancelled)

/* MPI 4.1's accessors of the public fields: for languages and tools that do
 * not see MPI_Status's layout. */
#define STATUS_FIELD(Name, field)                                                                  \
    int PMPI_Status_get_##Name(const MPI_Status *status, int *value)                               \
    {                                                                                              \
        if (!status || !value)                                                                     \
            return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_get_" #Name);                      \
        *value = status->field;                                                                    \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    WEFT_MPI_ALIAS(Status_get_##Name)                                                              \
    int PMPI_Status_set_##Name(MPI_Status *status, int value)                                      \
    {                                                                                              \
        if (!status)                                                                               \
            return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_set_" #Name);                      \
        status->field = value;                                                                     \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    WEFT_MPI_ALIAS(Status_set_##Name)

STATUS_FIELD(source, MPI_SOURCE)
STATUS_FIELD(tag, MPI_TAG)
STATUS_FIELD(error, MPI_ERROR)

/* ---- persistent requests ---- */

static int persistent(const void *buf, int count, MPI_Datatype type, int peer, int tag,
                      MPI_Comm comm, int mode, MPI_Request *request, const char *fn)
{
    int rc;
    bool recv = mode == WEFT_MPI_MODE_RECV;
    if ((rc = weft__mpi_check_init()) || (rc = weft__mpi_check_comm(comm)) ||
        (rc = weft__mpi_check_count(count)) || (rc = weft__mpi_check_type(type)))
        return weft__mpi_err(comm, rc, fn);
    if (!(tag >= 0 || (recv && tag == MPI_ANY_TAG)))
        return weft__mpi_err(comm, MPI_ERR_TAG, fn);
    if (!(peer == MPI_PROC_NULL || (recv && peer == MPI_ANY_SOURCE) ||
          (peer >= 0 && peer < weft__mpi_comm_peer_size(comm))))
        return weft__mpi_err(comm, MPI_ERR_RANK, fn);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_REQUEST, fn);
    /* A persistent buffered send is a buffered send each time it starts, and
     * cancellable the same way (§3.9). */
    int kind = recv                        ? WEFT_MPI_REQ_RECV
               : mode == WEFT_MPI_MODE_BUF ? WEFT_MPI_REQ_BSEND
                                           : WEFT_MPI_REQ_SEND;
    MPI_Request r = weft__mpi_req_alloc(kind, comm);
    if (!r)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    if (kind == WEFT_MPI_REQ_BSEND) {
        r->bsend = NULL;
        r->bsend_cancel = false;
    }
    r->persistent = true;
    weft__mpi_req_record(r, buf, count, type, peer, tag, mode);
    /* Every MPI_Start reads the type again, and the application may free it
     * first (MPI 3.1 §4.1.9): the request holds a reference until it is
     * freed. */
    weft__mpi_type_retain(type);
    *request = r;
    return MPI_SUCCESS;
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return persistent(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_STD, request,
                      "MPI_Send_init");
}
WEFT_MPI_ALIAS(Send_init)

int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return persistent(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_SYNC, request,
                      "MPI_Ssend_init");
}
WEFT_MPI_ALIAS(Ssend_init)

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return persistent(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_BUF, request,
                      "MPI_Bsend_init");
}
WEFT_MPI_ALIAS(Bsend_init)

int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return persistent(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_READY, request,
                      "MPI_Rsend_init");
}
WEFT_MPI_ALIAS(Rsend_init)

int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return persistent(buf, count, datatype, source, tag, comm, WEFT_MPI_MODE_RECV, request,
                      "MPI_Recv_init");
}
WEFT_MPI_ALIAS(Recv_init)

int PMPI_Start(MPI_Request *request)
{
    if (!request || !valid_req(*request) || !(*request)->persistent || (*request)->active)
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Start");
    MPI_Request r = *request;
    if (r->kind == WEFT_MPI_REQ_PCOLL)
        return weft__pcoll_start(r);
    if (r->kind == WEFT_MPI_REQ_PART)
        return weft__mpi_part_start(r);
    r->complete = false;
    r->active = true;
    weft__mpi_status_empty(&r->status);
    if (r->peer == MPI_PROC_NULL) {
        weft__mpi_status_proc_null(&r->status);
        r->complete = true;
        return MPI_SUCCESS;
    }
    if (r->mode == WEFT_MPI_MODE_BUF) {
        /* Its last copy, if still in flight, goes on alone. */
        weft__mpi_bsend_forget(r);
        r->bsend_cancel = false;
        int rc = weft__mpi_bsend_start(r->buf, r->count, r->type, r->peer, r->tag, r->comm, r,
                                       "MPI_Start");
        r->complete = true;
        if (rc)
            r->active = false;
        return rc;
    }
    free(r->staging);
    r->staging = NULL;
    int wrc = r->kind == WEFT_MPI_REQ_RECV ? weft__mpi_recv_start(r) : weft__mpi_send_start(r);
    if (wrc < 0) {
        r->active = false;
        return weft__mpi_err(r->comm, weft__mpi_err_from_weft(wrc), "MPI_Start");
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Start)

int PMPI_Startall(int count, MPI_Request reqs[])
{
    if (count < 0 || (count > 0 && !reqs))
        return weft__mpi_err(NULL, count < 0 ? MPI_ERR_COUNT : MPI_ERR_REQUEST, "MPI_Startall");
    for (int i = 0; i < count; i++) {
        int rc = PMPI_Start(&reqs[i]);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Startall)

/* ---- generalized requests ---- */

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    if (!request)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Grequest_start");
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_GREQ, MPI_COMM_WORLD);
    if (!r)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start");
    r->query_fn = query_fn;
    r->free_fn = free_fn;
    r->cancel_fn = cancel_fn;
    r->extra_state = extra_state;
    atomic_init(&r->greq_done, 0);
    *request = r;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request)
{
    if (!valid_req(request) || request->kind != WEFT_MPI_REQ_GREQ)
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete");
    atomic_store_explicit(&request->greq_done, 1, memory_order_release);
    if (request->freed) {
        /* Freed by the application before completing: nobody will wait. */
        if (request->free_fn)
            request->free_fn(request->extra_state);
        weft__mpi_req_free(request);
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Grequest_complete)
