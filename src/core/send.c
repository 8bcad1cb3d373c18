/* The sending side of the protocols: a message made eager or rendezvous (the
 * choice and the credit rules are proto.c's header), the fast and the
 * unlocked sends of a lone small message, the cancel of a send, and what
 * happens once the driver has sent a packet. The entries take the gate's
 * sending-side lock (weft__gate_lock_t, core_int.h) around what they touch
 * of the gate; the functions named *_locked expect it held. */
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "util/log.h"

void weft__proto_send_release(struct weft_ctx *ctx, struct weft_request *req, int err)
{
    if (err && !req->status.error)
        req->status.error = err;
    if (--req->holds == 0)
        weft__request_complete(ctx, req, req->status.error);
}

/* Make req's chunk the gate's next message, eager, charged to its credit
 * (the sequence number is taken by number_message). */
static inline void eager_chunk(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req,
                               uint64_t cost)
{
    weft__chunk_t *c = &req->chunk;
    g->send_credit -= (int64_t)cost;
    c->kind = req->sync ? WEFT_CHUNK_EAGER_SYNC : WEFT_CHUNK_EAGER;
    c->hdr_len = (uint16_t)weft__wire_put_eager(c->hdr, req->sync, g->send_seq, req->status.tag,
                                                req->status.comm, req->length, req->id);
    c->length = req->length;
    req->holds = req->sync ? 2 : 1;
    g->sent.eager++;
}

/* The message takes the gate's next sequence number. */
static inline void number_message(weft__gate_t *g, struct weft_request *req)
{
    req->seq = g->send_seq++;
    g->sent.bytes += req->length;
}

static int send_locked(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req);

int weft__proto_send(struct weft_ctx *ctx, struct weft_request *req)
{
    weft__gate_t *g = req->gate;
    weft__gate_lock(g);
    int rc = send_locked(ctx, g, req);
    weft__gate_unlock(g);
    return rc;
}

/* weft__proto_send, under the gate's lock. */
static int send_locked(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req)
{
    if (g->dead)
        return WEFT_EPEERDEAD;
    uint64_t len = req->length;
    uint64_t cost = weft__eager_cost(len);
    weft__chunk_t *c = &req->chunk;
    int rc;

    c->iov = req->iov;
    c->iovcnt = req->iovcnt;
    c->offset = 0;
    /* Eager needs the whole message in one packet: its bytes and its iovec
     * entries (beside the packet header, chunk header and padding). */
    if (len <= g->eager_max && (uint64_t)g->send_credit >= cost &&
        req->iovcnt <= g->eager_max_iov) {
        if (req->sync && (rc = weft__handle_add(&ctx->handles, req, &req->id)) < 0)
            return rc;
        eager_chunk(ctx, g, req, cost);
    } else {
        if (len <= g->eager_max && (uint64_t)g->send_credit < cost) {
            g->sent.credit_stalls++;
            WEFT_TRACE(WEFT_TR_CREDIT_STALL, WEFT_TR_I, g->peer, len, 0, 0);
        }
        if ((rc = weft__handle_add(&ctx->handles, req, &req->id)) < 0)
            return rc;
        const weft_rkey_t *rkey = NULL;
        /* Only a contiguous buffer can be exposed for a single-copy read;
         * scattered data goes by RTR and RDATA, gathered by the driver. A
         * multi-rail gate whose strategy splits exposes it on every rail. */
        if ((g->caps.flags & WEFT_DRV_CAP_RGET) && g->drv_ops->expose && req->iovcnt == 1 &&
            len > 0) {
            if (g->nrails && g->strategy->split ? weft__rail_expose(g, req) == WEFT_OK
                                                : g->drv_ops->expose(g->drv, req->iov[0].iov_base,
                                                                     len, &req->rkey) == WEFT_OK) {
                req->exposed = true;
                rkey = &req->rkey;
            }
        }
        c->kind = WEFT_CHUNK_RDV;
        c->hdr_len = (uint16_t)weft__wire_put_rdv(c->hdr, g->send_seq, req->status.tag,
                                                  req->status.comm, len, req->id, rkey);
        if (rkey && req->rail_keys > 1)
            c->hdr[1] = (uint8_t)(req->rail_keys - 1); /* flags: rail keys after the first */
        c->length = 0;
        req->holds = 2;
        g->sent.rdv++;
        WEFT_TRACE(WEFT_TR_RDV, WEFT_TR_I, g->peer, req->status.tag, len, 0);
    }
    number_message(g, req);
    /* Found if the peer dies while it is in flight; its completion unlinks
     * it. Linked before the submission, never after: a deferred send's
     * thread may see it complete inside weft__sched_submit, retire it and
     * make a new request of its memory before this thread reads it again. */
    weft_list_push_back(&ctx->live_requests, &req->link);
    if (c->kind == WEFT_CHUNK_RDV)
        weft__coop_watch(ctx, req);
    /* The submitting thread runs the scheduler itself: with an idle track the
     * message leaves now, with no queue hop. Not a field of req is read
     * after it. */
    weft__sched_submit(g, c);
    return WEFT_OK;
}

/* A track that copies what it sends: the packet of one eager message is
 * gathered from a header on the stack (the short form for a small payload)
 * and the payload, in one piece (buf) or two (buf, then b: blen is 0 but for
 * weft__proto_send_now, and folds away in the other callers). false when the
 * driver has no room (nothing sent, nothing changed), or has failed, which
 * the general path meets again and reports. A copy still in flight
 * (WEFT_INPROGRESS) keeps the gate busy until send_done, with a packet of no
 * chunks as its cookie. Under the gate's lock. */
static inline __attribute__((always_inline)) bool lone_copied(weft__gate_t *g, uint32_t comm,
                                                              uint64_t tag, const void *buf,
                                                              size_t len, const void *b,
                                                              size_t blen, uint64_t cost)
{
    uint8_t hdr[WEFT_WIRE_PKT_HDR + WEFT_WIRE_CHUNK_HDR_MAX];
    size_t hlen, total;
    const uint32_t seq = g->send_seq;
    const size_t all = len + blen;
    if (all <= WEFT_WIRE_SHORT_MAX) {
        /* The short form: the driver carries the packet's exact length. */
        hlen = weft__wire_put_short(hdr, seq, tag, comm);
        total = hlen + all;
    } else {
        hlen = WEFT_WIRE_PKT_HDR +
               weft__wire_put_eager(hdr + WEFT_WIRE_PKT_HDR, false, seq, tag, comm, all, 0);
        total = weft__wire_chunk_size(hlen, all);
        weft__wire_put_packet(hdr, 1, total);
    }
    static const uint8_t pad[WEFT_WIRE_ALIGN];
    struct iovec iov[4];
    int n = 1;
    iov[0] = (struct iovec){hdr, hlen};
    if (len)
        iov[n++] = (struct iovec){(void *)buf, len};
    if (blen)
        iov[n++] = (struct iovec){(void *)b, blen};
    if (total > hlen + all)
        iov[n++] = (struct iovec){(void *)pad, total - hlen - all};
    g->packet.nchunks = 0; /* the gate is idle: its packet is free */
    int rc = g->drv_ops->send(g->track, iov, n, &g->packet);
    if (rc != WEFT_OK && rc != WEFT_INPROGRESS)
        return false;
    if (rc == WEFT_INPROGRESS)
        g->busy = true;
    g->send_credit -= (int64_t)cost;
    g->send_seq = seq + 1;
    g->sent.eager++;
    g->sent.bytes += all;
    weft__sched_lone_copied(g, total, all);
    return true;
}

/* lone_copied for a send of the request-returning or completion-object
 * calls: a send the driver takes makes a request born complete, one cache
 * line written (its data is copied: the buffer may be reused). req is
 * untouched when it returns false. */
static inline __attribute__((always_inline)) bool
send_copied(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req, uint32_t comm,
            uint64_t tag, const void *buf, size_t len, uint64_t cost)
{
    const uint32_t seq = g->send_seq;
    if (!lone_copied(g, comm, tag, buf, len, NULL, 0, cost))
        return false;
    weft__request_born_done(req, WEFT_REQ_SEND, ctx->rank, comm, tag, len, WEFT_OK);
    /* What a cancel of it reads (weft__proto_send_cancel reopens a completed
     * eager send and asks the receiver for its message by sequence number). */
    req->peer = g->peer;
    req->id = 0;
    req->gate = g;
    req->length = len;
    req->holds = 0;
    req->sync = req->answered = false;
    req->cancel = WEFT_CANCEL_NONE;
    req->seq = seq;
    req->chunk.kind = WEFT_CHUNK_EAGER;
    req->chunk.queued = false;
    return true;
}

/* Whether a lone eager message of this cost may leave g at once: nothing
 * queued or in flight, no hold, the peer alive, credit enough. */
static inline bool gate_idle(const weft__gate_t *g, uint64_t cost)
{
    return !g->held && !g->busy && !g->dead && (uint64_t)g->send_credit >= cost &&
           weft__backlog_empty(g);
}

static struct weft_request *send_fast_locked(struct weft_ctx *ctx, weft__gate_t *g, int dest,
                                             uint32_t comm, uint64_t tag, const void *buf,
                                             size_t len);

/* The path of most small sends, with weft__proto_send's eager case and the
 * scheduler's lone-message case fused: no iovec to copy, no strategy, and a
 * message the driver takes at once completes here. Every condition the
 * general path would weigh is checked first; what does not fit goes there. */
struct weft_request *weft__proto_send_fast(struct weft_ctx *ctx, int dest, uint32_t comm,
                                           uint64_t tag, const void *buf, size_t len)
{
    weft__gate_t *g = &ctx->gates[dest];
    if (dest == ctx->rank || len > g->eager_max)
        return NULL;
    weft__gate_lock(g);
    struct weft_request *req = send_fast_locked(ctx, g, dest, comm, tag, buf, len);
    weft__gate_unlock(g);
    return req;
}

/* The entries below come in pairs, one for the request-returning sends and
 * one for those with a completion object (sr.c), with the same code inlined
 * into both (WEFT_FAST_PATH): each entry has one caller, so link-time
 * optimization builds the flag path as it would with no second one (it
 * inlines functions called once). The fast path above has a lighter second
 * entry of its own instead: given a second caller, weft__proto_send_fast and
 * send_fast_locked are no longer inlined into the flag send. */
#define WEFT_FAST_PATH static inline __attribute__((always_inline))

struct weft_request *weft__proto_send_fast_comp(struct weft_ctx *ctx, int dest, uint32_t comm,
                                                uint64_t tag, const void *buf, size_t len)
{
    weft__gate_t *g = &ctx->gates[dest];
    const uint64_t cost = weft__eager_cost(len);
    if (!(g->caps.flags & WEFT_DRV_CAP_SEND_COPY) || dest == ctx->rank || len > g->eager_max)
        return NULL;
    weft__gate_lock(g);
    struct weft_request *req = gate_idle(g, cost) ? weft__request_peek(ctx) : NULL;
    if (req && send_copied(ctx, g, req, comm, tag, buf, len, cost))
        weft__request_take(ctx);
    else
        req = NULL;
    weft__gate_unlock(g);
    return req;
}

WEFT_FAST_PATH bool send_unlocked(struct weft_ctx *ctx, struct weft_request *req, int dest,
                                  uint32_t comm, uint64_t tag, const void *buf, size_t len)
{
    weft__gate_t *g = &ctx->gates[dest];
    const uint32_t caps = WEFT_DRV_CAP_SEND_MT | WEFT_DRV_CAP_SEND_COPY;
    /* A send of this thread still waiting for the lock holder must leave
     * first: its slot counts them until they are submitted (request.c). */
    if ((g->caps.flags & caps) != caps || dest == ctx->rank || len > g->eager_max ||
        atomic_load_explicit(&ctx->deferred[weft__defer_slot()].n, memory_order_acquire))
        return false;
    uint64_t cost = weft__eager_cost(len);
    weft__gate_lock(g);
    bool sent = gate_idle(g, cost) && send_copied(ctx, g, req, comm, tag, buf, len, cost);
    if (sent)
        g->stats.sent_unlocked++;
    weft__gate_unlock(g);
    return sent;
}

bool weft__proto_send_unlocked(struct weft_ctx *ctx, struct weft_request *req, int dest,
                               uint32_t comm, uint64_t tag, const void *buf, size_t len)
{
    return send_unlocked(ctx, req, dest, comm, tag, buf, len);
}

bool weft__proto_send_unlocked_comp(struct weft_ctx *ctx, struct weft_request *req, int dest,
                                    uint32_t comm, uint64_t tag, const void *buf, size_t len)
{
    return send_unlocked(ctx, req, dest, comm, tag, buf, len);
}

/* weft__proto_send_fast under the gate's lock. */
static struct weft_request *send_fast_locked(struct weft_ctx *ctx, weft__gate_t *g, int dest,
                                             uint32_t comm, uint64_t tag, const void *buf,
                                             size_t len)
{
    uint64_t cost = weft__eager_cost(len);
    if (!gate_idle(g, cost))
        return NULL;
    if (g->caps.flags & WEFT_DRV_CAP_SEND_COPY) {
        struct weft_request *req = weft__request_peek(ctx);
        if (!req || !send_copied(ctx, g, req, comm, tag, buf, len, cost))
            return NULL;
        weft__request_take(ctx);
        return req;
    }
    struct weft_request *req = weft__request_alloc(ctx, WEFT_REQ_SEND);
    if (!req)
        return NULL;
    req->iov_inline[0].iov_base = (void *)buf;
    req->iov_inline[0].iov_len = len;
    req->iovcnt = 1;
    req->length = len;
    req->peer = dest;
    req->gate = g;
    req->status.source = ctx->rank;
    req->status.tag = tag;
    req->status.comm = comm;
    req->status.length = len;
    weft__chunk_t *c = &req->chunk;
    c->iov = req->iov;
    c->iovcnt = 1;
    c->offset = 0;
    eager_chunk(ctx, g, req, cost);
    number_message(g, req);
    if (weft__sched_send_fast(g, c)) {
        req->holds = 0;
        weft__request_complete(ctx, req, WEFT_OK);
    } else if (!atomic_load_explicit(&req->done, memory_order_relaxed)) {
        weft_list_push_back(&ctx->live_requests, &req->link);
    }
    return req;
}

void weft__proto_chunk_failed(weft__gate_t *g, weft__chunk_t *c, int err)
{
    struct weft_ctx *ctx = g->ctx;
    if (c->heap) {
        weft_log_warn("dropped a control chunk (kind %d) for rank %d: %s", c->kind, g->peer,
                      weft_strerror(err));
        weft__ctrl_free(ctx, c);
        return;
    }
    struct weft_request *req = c->req;
    if (!req || atomic_load_explicit(&req->done, memory_order_relaxed))
        return;
    /* Nothing of it may stay queued: once complete, a thread waiting on it
     * may retire it and another make a new request of its memory at once,
     * without the engine lock (WEFT_THREAD_MULTIPLE). A late failure of its
     * announcement finds its data queued by the peer's RTR, for one. */
    if (req->chunk.queued)
        weft__chunk_unqueue(&req->chunk);
    if (req->data.queued)
        weft__chunk_unqueue(&req->data);
    weft__request_complete(ctx, req, err);
}

void weft__proto_chunks_sent(weft__gate_t *g, weft__packet_t *pkt, int status)
{
    struct weft_ctx *ctx = g->ctx;
    if (status < 0) {
        /* The packet is lost: whatever it carried fails now, whatever else its
         * requests were waiting for. */
        for (int i = 0; i < pkt->nchunks; i++)
            weft__proto_chunk_failed(g, pkt->chunks[i], status);
        return;
    }
    for (int i = 0; i < pkt->nchunks; i++) {
        weft__chunk_t *c = pkt->chunks[i];
        if (c->heap) {
            weft__ctrl_free(ctx, c);
            continue;
        }
        struct weft_request *req = c->req;
        if (!req)
            continue; /* the gate's credit chunk */
        if (c == &req->data) {
            if (c->offset == c->length && !c->queued)
                weft__proto_send_release(ctx, req, status);
            continue;
        }
        if (req->cancel == WEFT_CANCEL_WANTED)
            weft__proto_cancel_ask(g, req);
        weft__proto_send_release(ctx, req, status);
    }
}

void weft__proto_send_done(void *owner, void *peer_cookie, void *send_cookie, int status)
{
    weft__gate_t *g = peer_cookie;
    weft__gate_lock(g);
    g->busy = false;
    weft__proto_chunks_sent(g, send_cookie, status);
    weft__gate_mark_pending(g);
    weft__gate_unlock(g);
}

bool weft__proto_send_now_mt(const struct weft_ctx *ctx, int dest)
{
    return (ctx->gates[dest].caps.flags & WEFT_DRV_CAP_SEND_MT) != 0;
}

int weft__proto_send_now(struct weft_ctx *ctx, int dest, uint32_t comm, uint64_t tag, const void *a,
                         size_t alen, const void *b, size_t blen)
{
    weft__gate_t *g = &ctx->gates[dest];
    if (dest == ctx->rank || alen + blen > g->eager_max)
        return WEFT_EUNSUPPORTED;
    const uint64_t cost = weft__eager_cost(alen + blen);
    int rc = WEFT_EAGAIN;
    weft__gate_lock(g);
    if (g->dead)
        rc = WEFT_EPEERDEAD;
    else if (!gate_idle(g, cost))
        rc = WEFT_EAGAIN;
    else if (!(g->caps.flags & WEFT_DRV_CAP_SEND_COPY))
        rc = WEFT_EUNSUPPORTED;
    else if (lone_copied(g, comm, tag, a, alen, b, blen, cost))
        rc = WEFT_OK;
    weft__gate_unlock(g);
    return rc;
}
