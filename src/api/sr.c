/* The native send/receive interface: argument checks, request set-up, and the
 * waiting loops. Everything else is the engine's. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"

/* Waits follow WEFT_WAIT (progress.c); a probing thread polls and waits
 * between polls as weft_idle says. */

static int set_iov(struct weft_request *req, const struct iovec *iov, int iovcnt)
{
    if (iovcnt == 1) { /* the common, contiguous case */
        if (!iov[0].iov_base && iov[0].iov_len)
            return WEFT_EINVAL;
        req->iov_inline[0] = iov[0];
        req->iovcnt = 1;
        req->length = iov[0].iov_len;
        return WEFT_OK;
    }
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (!iov[i].iov_base && iov[i].iov_len)
            return WEFT_EINVAL;
        if (total + iov[i].iov_len < total)
            return WEFT_EINVAL;
        total += iov[i].iov_len;
    }
    if (iovcnt > (int)WEFT_ARRAY_SIZE(req->iov_inline)) {
        req->iov = malloc(sizeof(struct iovec) * (size_t)iovcnt);
        if (!req->iov) {
            req->iov = req->iov_inline;
            return WEFT_ENOMEM;
        }
    }
    if (iovcnt)
        memcpy(req->iov, iov, sizeof(struct iovec) * (size_t)iovcnt);
    req->iovcnt = iovcnt;
    req->length = total;
    return WEFT_OK;
}

/* The bytes of an iovec (for the trace). */
static uint64_t iov_total(const struct iovec *iov, int iovcnt)
{
    uint64_t n = 0;
    for (int i = 0; i < iovcnt; i++)
        n += iov[i].iov_len;
    return n;
}

static int check_common(weft_ctx_t *ctx, const struct iovec *iov, int iovcnt,
                        weft_request_t **req_out)
{
    if (!ctx || !req_out || iovcnt < 0 || (iovcnt > 0 && !iov))
        return WEFT_EINVAL;
    return WEFT_OK;
}

/* A request is submitted at once by a thread that gets the engine lock (after
 * whatever other threads queued), and queued without waiting, lock-free, when
 * another thread holds it (at WEFT_THREAD_MULTIPLE): the holder submits it,
 * in order. A small send to an idle shm gate is the exception: it leaves at
 * once under the gate's lock (weft__proto_send_unlocked). Errors of a queued
 * request come from its completion. A request for it comes from the
 * context's list under the lock, else from what threads returned, else from
 * malloc. */
static inline struct weft_request *submit_alloc(weft_ctx_t *ctx, uint8_t kind, bool locked)
{
    return locked ? weft__request_alloc(ctx, kind) : weft__request_alloc_unlocked(ctx, kind);
}

static int submit_end(weft_ctx_t *ctx, struct weft_request *req, bool locked, int rc,
                      weft_request_t **req_out)
{
    if (rc == WEFT_OK && !locked) {
        weft__submit_defer(ctx, req);
        *req_out = req;
        return WEFT_OK;
    }
    if (rc == WEFT_OK) {
        if (atomic_load_explicit(&ctx->submitted, memory_order_relaxed))
            weft__submit_drain(ctx);
        rc = req->kind == WEFT_REQ_SEND ? weft__proto_send(ctx, req) : weft__proto_recv(ctx, req);
    }
    if (rc == WEFT_OK)
        *req_out = req;
    else if (locked)
        weft__request_free(ctx, req);
    else
        weft__request_return(ctx, req);
    if (locked)
        weft_lock_release(&ctx->lock);
    return rc;
}

/* A send's fields beside its data (set before: req->length). */
static inline void send_init(weft_ctx_t *ctx, struct weft_request *req, int dest, uint32_t comm,
                             uint64_t tag, bool sync)
{
    req->peer = dest;
    req->gate = &ctx->gates[dest];
    req->sync = sync;
    req->answered = false;
    req->status.source = ctx->rank;
    req->status.tag = tag;
    req->status.comm = comm;
    req->status.length = req->length;
}

static int isend(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag, const struct iovec *iov,
                 int iovcnt, bool sync, weft_request_t **req_out)
{
    int rc = check_common(ctx, iov, iovcnt, req_out);
    if (rc)
        return rc;
    if (!weft__peer_valid(ctx, dest))
        return WEFT_ERANK;
    if (tag > WEFT_TAG_MAX)
        return WEFT_ETAG;
    WEFT_TRACE(WEFT_TR_ISEND, WEFT_TR_I, dest, tag, iov_total(iov, iovcnt), comm);
    bool locked = weft_lock_try(&ctx->lock);
    bool lone = !sync && iovcnt == 1 && (iov[0].iov_base || !iov[0].iov_len);
    if (locked && lone && !atomic_load_explicit(&ctx->submitted, memory_order_relaxed)) {
        struct weft_request *req =
            weft__proto_send_fast(ctx, dest, comm, tag, iov[0].iov_base, iov[0].iov_len);
        if (req) {
            weft_lock_release(&ctx->lock);
            *req_out = req;
            return WEFT_OK;
        }
    }
    struct weft_request *req = submit_alloc(ctx, WEFT_REQ_SEND, locked);
    /* Another thread holds the engine: a small message to an idle gate
     * whose track allows it leaves now, under the gate's lock alone, rather
     * than waiting for the holder. */
    if (!locked && lone && req &&
        weft__proto_send_unlocked(ctx, req, dest, comm, tag, iov[0].iov_base, iov[0].iov_len)) {
        *req_out = req;
        return WEFT_OK;
    }
    if (!req) {
        if (locked)
            weft_lock_release(&ctx->lock);
        return WEFT_ENOMEM;
    }
    rc = set_iov(req, iov, iovcnt);
    send_init(ctx, req, dest, comm, tag, sync);
    return submit_end(ctx, req, locked, rc, req_out);
}

int weft_sr_isend(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag, const void *buf,
                  size_t len, weft_request_t **req_out)
{
    if (!buf && len)
        return WEFT_EINVAL;
    struct iovec v = {.iov_base = (void *)buf, .iov_len = len};
    return isend(ctx, dest, comm, tag, &v, 1, false, req_out);
}

int weft_sr_issend(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag, const void *buf,
                   size_t len, weft_request_t **req_out)
{
    if (!buf && len)
        return WEFT_EINVAL;
    struct iovec v = {.iov_base = (void *)buf, .iov_len = len};
    return isend(ctx, dest, comm, tag, &v, 1, true, req_out);
}

int weft_sr_isendv(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag, const struct iovec *iov,
                   int iovcnt, weft_request_t **req_out)
{
    return isend(ctx, dest, comm, tag, iov, iovcnt, false, req_out);
}

static int irecv(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, const struct iovec *iov,
                 int iovcnt, weft_request_t **req_out)
{
    int rc = check_common(ctx, iov, iovcnt, req_out);
    if (rc)
        return rc;
    if (src != WEFT_ANY_SOURCE && !weft__peer_valid(ctx, src))
        return WEFT_ERANK;
    WEFT_TRACE(WEFT_TR_IRECV, WEFT_TR_I, src, tag, iov_total(iov, iovcnt), comm);
    bool locked = weft_lock_try(&ctx->lock);
    if (locked && weft__match_any_unexpected(ctx->match) && src >= 0 && tag != WEFT_ANY_TAG &&
        iovcnt == 1 && (iov[0].iov_base || !iov[0].iov_len) &&
        !atomic_load_explicit(&ctx->submitted, memory_order_relaxed)) {
        struct weft_request *req =
            weft__proto_recv_fast(ctx, src, comm, tag, iov[0].iov_base, iov[0].iov_len);
        if (req) {
            weft_lock_release(&ctx->lock);
            *req_out = req;
            return WEFT_OK;
        }
    }
    struct weft_request *req = submit_alloc(ctx, WEFT_REQ_RECV, locked);
    if (!req) {
        if (locked)
            weft_lock_release(&ctx->lock);
        return WEFT_ENOMEM;
    }
    rc = set_iov(req, iov, iovcnt);
    req->peer = src;
    req->match.comm = comm;
    req->match.source = src;
    req->match.tag = tag;
    /* Another thread holds the engine: a small receive that finds no
     * message waiting is posted now, under the matching structure's lock
     * alone, rather than when the holder drains the deferred stack. */
    if (rc == WEFT_OK && !locked && weft__proto_recv_unlocked(ctx, req)) {
        *req_out = req;
        return WEFT_OK;
    }
    return submit_end(ctx, req, locked, rc, req_out);
}

int weft_sr_irecv(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, void *buf, size_t len,
                  weft_request_t **req_out)
{
    if (!buf && len)
        return WEFT_EINVAL;
    struct iovec v = {.iov_base = buf, .iov_len = len};
    return irecv(ctx, src, comm, tag, &v, 1, req_out);
}

int weft_sr_irecvv(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, const struct iovec *iov,
                   int iovcnt, weft_request_t **req_out)
{
    return irecv(ctx, src, comm, tag, iov, iovcnt, req_out);
}

static inline bool req_done(const struct weft_request *req)
{
    return atomic_load_explicit(&req->done, memory_order_acquire) != 0;
}

/* Hand a completed request back: copy its status, free it, return its result. */
static int retire(weft_ctx_t *ctx, struct weft_request *req, weft_status_t *status)
{
    int rc = req->error;
    if (status)
        *status = req->status;
    if (ctx->lock.kind == WEFT_LOCK_NONE)
        weft__request_free(ctx, req);
    else
        weft__request_return(ctx, req); /* completions are handed back without the lock */
    return rc;
}

int weft_sr_wait(weft_ctx_t *ctx, weft_request_t *req, weft_status_t *status)
{
    if (!ctx)
        return WEFT_EINVAL;
    if (!req)
        return WEFT_OK;
    weft__wait(ctx, req);
    return retire(ctx, req, status);
}

int weft_sr_check(weft_ctx_t *ctx, weft_request_t *req, int *flag, weft_status_t *status)
{
    if (!ctx || !flag)
        return WEFT_EINVAL;
    if (!req || req_done(req)) {
        *flag = 1;
        return req ? retire(ctx, req, status) : WEFT_OK;
    }
    *flag = 0;
    return WEFT_OK;
}

int weft_sr_test(weft_ctx_t *ctx, weft_request_t *req, int *flag, weft_status_t *status)
{
    if (ctx && req && !req_done(req))
        weft__progress_try(ctx);
    return weft_sr_check(ctx, req, flag, status);
}

int weft_sr_waitall(weft_ctx_t *ctx, int n, weft_request_t **reqs, weft_status_t *statuses)
{
    if (!ctx || n < 0 || (n > 0 && !reqs))
        return WEFT_EINVAL;
    int first = WEFT_OK;
    for (int i = 0; i < n; i++) {
        if (!reqs[i])
            continue;
        int rc = weft_sr_wait(ctx, reqs[i], statuses ? &statuses[i] : NULL);
        reqs[i] = NULL;
        if (rc && !first)
            first = rc;
    }
    return first;
}

int weft_sr_testany(weft_ctx_t *ctx, int n, weft_request_t **reqs, int *index, int *flag,
                    weft_status_t *status)
{
    if (!ctx || n < 0 || (n > 0 && !reqs) || !index || !flag)
        return WEFT_EINVAL;
    bool any = false;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            if (!reqs[i])
                continue;
            any = true;
            if (req_done(reqs[i])) {
                struct weft_request *req = reqs[i];
                reqs[i] = NULL;
                *index = i;
                *flag = 1;
                return retire(ctx, req, status);
            }
        }
        if (!any)
            break;
        if (pass == 0)
            weft__progress_try(ctx);
    }
    *index = -1;
    *flag = any ? 0 : 1;
    return WEFT_OK;
}

int weft_sr_iprobe(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, int *flag,
                   weft_status_t *status)
{
    if (!ctx || !flag)
        return WEFT_EINVAL;
    if (src != WEFT_ANY_SOURCE && !weft__peer_valid(ctx, src))
        return WEFT_ERANK;
    weft_lock_acquire(&ctx->lock);
    weft__progress_locked(ctx);
    weft__match_lock(ctx);
    weft__match_msg_t *m = weft__match_peek(ctx->match, comm, src, tag);
    weft__match_unlock(ctx);
    *flag = m != NULL;
    if (m && status) {
        weft__unexpected_t *u = weft_container_of(m, weft__unexpected_t, match);
        status->source = u->match.source;
        status->comm = m->comm;
        status->tag = m->tag;
        status->length = u->length;
        status->error = WEFT_OK;
    }
    int dead = (!m && src >= 0) ? ctx->gates[src].dead : 0;
    weft_lock_release(&ctx->lock);
    return dead;
}

int weft_sr_improbe(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, int *flag,
                    weft_message_t **msg, weft_status_t *status)
{
    if (!ctx || !flag || !msg)
        return WEFT_EINVAL;
    if (src != WEFT_ANY_SOURCE && !weft__peer_valid(ctx, src))
        return WEFT_ERANK;
    weft_lock_acquire(&ctx->lock);
    weft__progress_locked(ctx);
    weft__match_lock(ctx);
    weft__match_msg_t *m = weft__match_peek(ctx->match, comm, src, tag);
    /* Out of matching, but still on ctx->unexpected, so finalize frees a
     * message that was probed and never received. */
    if (m)
        weft__match_remove_msg(ctx->match, m);
    weft__match_unlock(ctx);
    *flag = m != NULL;
    if (m) {
        weft__unexpected_t *u = weft_container_of(m, weft__unexpected_t, match);
        if (status) {
            status->source = u->match.source;
            status->comm = m->comm;
            status->tag = m->tag;
            status->length = u->length;
            status->error = WEFT_OK;
        }
        *msg = (weft_message_t *)u;
    }
    int dead = (!m && src >= 0) ? ctx->gates[src].dead : 0;
    weft_lock_release(&ctx->lock);
    return dead;
}

int weft_sr_imrecvv(weft_ctx_t *ctx, weft_message_t *msg, const struct iovec *iov, int iovcnt,
                    weft_request_t **req_out)
{
    int rc = check_common(ctx, iov, iovcnt, req_out);
    if (rc)
        return rc;
    if (!msg)
        return WEFT_EINVAL;
    weft__unexpected_t *u = (weft__unexpected_t *)msg;
    weft_lock_acquire(&ctx->lock);
    struct weft_request *req = weft__request_alloc(ctx, WEFT_REQ_RECV);
    if (!req) {
        rc = WEFT_ENOMEM;
        goto out_unlock;
    }
    if ((rc = set_iov(req, iov, iovcnt))) {
        weft__request_free(ctx, req);
        goto out_unlock;
    }
    req->peer = u->match.source;
    req->match.comm = u->match.comm;
    req->match.source = u->match.source;
    req->match.tag = u->match.tag;
    weft__proto_consume(ctx, req, u);
    *req_out = req;
out_unlock:
    weft_lock_release(&ctx->lock);
    return rc;
}

int weft_sr_probe(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, weft_status_t *status)
{
    int flag = 0;
    weft_idle_t idle = {0};
    for (;;) {
        int rc = weft_sr_iprobe(ctx, src, comm, tag, &flag, status);
        if (rc || flag)
            return rc;
        weft_idle(ctx, &idle);
    }
}

int weft_sr_cancel(weft_ctx_t *ctx, weft_request_t *req)
{
    if (!ctx || !req)
        return WEFT_EINVAL;
    int rc = WEFT_ESTATE;
    weft_lock_acquire(&ctx->lock);
    weft__submit_drain(ctx); /* it may still be queued */
    if (req->kind == WEFT_REQ_SEND) {
        /* Only the receiver knows whether the message matched: asked there.
         * When that is this process, the answer is local: a few passes carry
         * the CANCEL and its answer through the self driver, so the send is
         * decided before the call returns, as a program that tests it at
         * once and then receives what was not taken back expects. */
        rc = weft__proto_send_cancel(ctx, req);
        for (int pass = 0; rc == WEFT_INPROGRESS && req->peer == ctx->rank &&
                           req->cancel != WEFT_CANCEL_NONE && pass < 16;
             pass++)
            weft__progress_locked(ctx);
        weft__unlock(ctx);
        return rc;
    }
    /* A receive published for a cooperative rendezvous (coop.c) can no longer
     * be canceled once its sender has claimed it. */
    if (req->state == WEFT_RS_POSTED &&
        (req->peer < 0 || weft__coop_cancel(&ctx->gates[req->peer], req)) &&
        weft__proto_recv_cancel(ctx, req)) {
        weft__request_complete(ctx, req, WEFT_ECANCELED);
        rc = WEFT_OK;
    }
    weft_lock_release(&ctx->lock);
    return rc;
}

/* ---- operations that signal a completion object ----
 *
 * The paths of isend and irecv, with the request armed for its object
 * (has_comp) before anything can complete it: the engine then signals the
 * object and frees the request (weft__request_signal). A request a fast
 * path made complete at once is signaled here, once the engine lock is
 * released, so that a handler runs outside it. The fast paths are entered
 * through their _comp entries, so that the flag paths above keep theirs to
 * themselves (send.c, WEFT_FAST_PATH) and pay nothing for this. */

static inline void comp_arm(struct weft_request *req, weft_comp_t *comp, void *user_context)
{
    req->has_comp = true;
    req->comp_node.comp = comp;
    req->comp_node.entry.user_context = user_context;
}

/* A fast path made req: complete (born so), or, only under the engine lock,
 * in flight; then it is armed before the release, so that its completion
 * (under the lock) finds it armed, and not touched after. */
static int comp_fast(weft_ctx_t *ctx, struct weft_request *req, bool locked, weft_comp_t *comp,
                     void *user_context)
{
    comp_arm(req, comp, user_context);
    bool done = atomic_load_explicit(&req->done, memory_order_relaxed);
    if (locked)
        weft__unlock(ctx);
    if (done)
        weft__request_signal(ctx, req, false);
    return WEFT_OK;
}

/* Submit an armed request, as submit_end: queued without the lock, or
 * submitted, and the handlers of what completed meanwhile run once the lock
 * is released; on an error nothing is signaled. */
static int comp_submit(weft_ctx_t *ctx, struct weft_request *req, bool locked)
{
    if (!locked) {
        weft__submit_defer(ctx, req);
        return WEFT_OK;
    }
    if (atomic_load_explicit(&ctx->submitted, memory_order_relaxed))
        weft__submit_drain(ctx);
    int rc = req->kind == WEFT_REQ_SEND ? weft__proto_send(ctx, req) : weft__proto_recv(ctx, req);
    if (rc) {
        req->has_comp = false;
        weft__request_free(ctx, req);
    }
    weft__unlock(ctx);
    return rc;
}

int weft_sr_isend_comp(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag, const void *buf,
                       size_t len, weft_comp_t *comp, void *user_context)
{
    if (!ctx || (!buf && len) || !weft__comp_valid(comp))
        return WEFT_EINVAL;
    if (!weft__peer_valid(ctx, dest))
        return WEFT_ERANK;
    if (tag > WEFT_TAG_MAX)
        return WEFT_ETAG;
    WEFT_TRACE(WEFT_TR_ISEND, WEFT_TR_I, dest, tag, len, comm);
    bool locked = weft_lock_try(&ctx->lock);
    struct weft_request *req;
    if (locked && !atomic_load_explicit(&ctx->submitted, memory_order_relaxed) &&
        (req = weft__proto_send_fast_comp(ctx, dest, comm, tag, buf, len)))
        return comp_fast(ctx, req, true, comp, user_context);
    req = submit_alloc(ctx, WEFT_REQ_SEND, locked);
    if (!locked && req && weft__proto_send_unlocked_comp(ctx, req, dest, comm, tag, buf, len))
        return comp_fast(ctx, req, false, comp, user_context);
    if (!req) {
        if (locked)
            weft_lock_release(&ctx->lock);
        return WEFT_ENOMEM;
    }
    req->iov_inline[0] = (struct iovec){.iov_base = (void *)buf, .iov_len = len};
    req->iovcnt = 1;
    req->length = len;
    send_init(ctx, req, dest, comm, tag, false);
    comp_arm(req, comp, user_context);
    return comp_submit(ctx, req, locked);
}

int weft_sr_irecv_comp(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, void *buf, size_t len,
                       weft_comp_t *comp, void *user_context)
{
    if (!ctx || (!buf && len) || !weft__comp_valid(comp))
        return WEFT_EINVAL;
    if (src != WEFT_ANY_SOURCE && !weft__peer_valid(ctx, src))
        return WEFT_ERANK;
    WEFT_TRACE(WEFT_TR_IRECV, WEFT_TR_I, src, tag, len, comm);
    bool locked = weft_lock_try(&ctx->lock);
    struct weft_request *req;
    if (locked && weft__match_any_unexpected(ctx->match) && src >= 0 && tag != WEFT_ANY_TAG &&
        !atomic_load_explicit(&ctx->submitted, memory_order_relaxed) &&
        (req = weft__proto_recv_fast_comp(ctx, src, comm, tag, buf, len)))
        return comp_fast(ctx, req, true, comp, user_context);
    req = submit_alloc(ctx, WEFT_REQ_RECV, locked);
    if (!req) {
        if (locked)
            weft_lock_release(&ctx->lock);
        return WEFT_ENOMEM;
    }
    req->iov_inline[0] = (struct iovec){.iov_base = buf, .iov_len = len};
    req->iovcnt = 1;
    req->length = len;
    req->peer = src;
    req->match.comm = comm;
    req->match.source = src;
    req->match.tag = tag;
    comp_arm(req, comp, user_context);
    if (!locked && weft__proto_recv_unlocked_comp(ctx, req))
        return WEFT_OK;
    return comp_submit(ctx, req, locked);
}

int weft_sr_isendv_comp(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag,
                        const struct iovec *iov, int iovcnt, weft_comp_t *comp, void *user_context)
{
    if (!ctx || iovcnt < 0 || (iovcnt > 0 && !iov) || !weft__comp_valid(comp))
        return WEFT_EINVAL;
    if (iovcnt == 1)
        return weft_sr_isend_comp(ctx, dest, comm, tag, iov[0].iov_base, iov[0].iov_len, comp,
                                  user_context);
    if (!weft__peer_valid(ctx, dest))
        return WEFT_ERANK;
    if (tag > WEFT_TAG_MAX)
        return WEFT_ETAG;
    WEFT_TRACE(WEFT_TR_ISEND, WEFT_TR_I, dest, tag, iov_total(iov, iovcnt), comm);
    bool locked = weft_lock_try(&ctx->lock);
    struct weft_request *req = submit_alloc(ctx, WEFT_REQ_SEND, locked);
    if (!req) {
        if (locked)
            weft_lock_release(&ctx->lock);
        return WEFT_ENOMEM;
    }
    int rc = set_iov(req, iov, iovcnt);
    if (rc) {
        if (locked) {
            weft__request_free(ctx, req);
            weft_lock_release(&ctx->lock);
        } else {
            weft__request_return(ctx, req);
        }
        return rc;
    }
    send_init(ctx, req, dest, comm, tag, false);
    comp_arm(req, comp, user_context);
    return comp_submit(ctx, req, locked);
}
