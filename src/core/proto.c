/* Protocols: eager (copy) below a gate's threshold, rendezvous above it, eager
 * flow control by credits, and the handling of every chunk that arrives.
 *
 * Eager: the payload travels inline; if the receive is not posted yet, the
 * receiver copies it aside. Each peer may have at most WEFT_EAGER_CREDITS bytes
 * of eager data outstanding at a receiver (each message also costs a fixed
 * overhead, so a flood of empty messages is bounded too); credits come back as
 * messages are consumed. A sender out of credit sends a rendezvous instead, so it
 * never blocks and never deadlocks, and the receiver only keeps small
 * descriptors: the data stays in the sender's memory.
 *
 * Rendezvous: RDV carries the length and, where the track can, a key to read
 * the sender's buffer (process_vm_readv on shared memory). Once matched, the
 * receiver reads the data itself (single copy) and ACKs; otherwise it sends RTR
 * and the sender streams RDATA fragments straight from the user buffer. Where
 * the two processes share memory, large messages move cooperatively instead
 * (coop.c): in pieces, by whichever side is inside the library.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "core/core_int.h"
#include "core/kinds.h"
#include "util/log.h"

/* Copy len bytes of src into an iovec starting at byte offset off. */
static void copy_to_iov(const struct iovec *iov, int iovcnt, uint64_t off, const uint8_t *src,
                        uint64_t len)
{
    for (int i = 0; i < iovcnt && len; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        size_t take = WEFT_MIN(iov[i].iov_len - off, len);
        weft__copy((char *)iov[i].iov_base + off, src, take);
        src += take;
        len -= take;
        off = 0;
    }
}

/* The first n bytes of a receive (n <= req->length): one entry, or the walk. */
static inline void copy_to_recv(const struct weft_request *req, const uint8_t *src, uint64_t n)
{
    if (WEFT_LIKELY(req->iovcnt == 1))
        weft__copy(req->iov[0].iov_base, src, n);
    else
        copy_to_iov(req->iov, req->iovcnt, 0, src, n);
}

void weft__proto_queue_ctrl(weft__gate_t *g, weft__chunk_t *c)
{
    if (g->dead) {
        weft__ctrl_free(g->ctx, c);
        return;
    }
    weft__gate_lock(g);
    weft__chunk_queue(g, c, false);
    weft__gate_mark_pending(g);
    weft__gate_unlock(g);
}

static void send_ack(weft__gate_t *g, uint64_t sreq)
{
    WEFT_TRACE(WEFT_TR_ACK, WEFT_TR_I, g->peer, 0, 0, 0);
    weft__chunk_t *c = weft__ctrl_alloc(g->ctx);
    if (!c) {
        weft_log_error("out of memory for an ACK to rank %d: its send will not complete", g->peer);
        return;
    }
    c->kind = WEFT_CHUNK_ACK;
    c->hdr_len = (uint16_t)weft__wire_put_ack(c->hdr, sreq);
    weft__proto_queue_ctrl(g, c);
}

/* A receive fed by RDATA is done when every byte it accepted is in. */
static void recv_maybe_complete(struct weft_ctx *ctx, struct weft_request *req)
{
    if (req->expected == 0)
        weft__request_complete(ctx, req, req->status.error);
}

/* Send an RTR: the sender will stream the accepted bytes as RDATA. */
static void rdv_rtr(struct weft_ctx *ctx, struct weft_request *req, weft__gate_t *g)
{
    int rc = weft__handle_add(&ctx->handles, req, &req->id);
    weft__chunk_t *c = rc == WEFT_OK ? weft__ctrl_alloc(ctx) : NULL;
    if (!c) {
        weft__request_complete(ctx, req, WEFT_ENOMEM);
        return;
    }
    req->state = WEFT_RS_RDV_RECV;
    req->expected = req->status.length;
    c->kind = WEFT_CHUNK_RTR;
    c->hdr_len = (uint16_t)weft__wire_put_rtr(c->hdr, req->peer_sreq, req->id, req->expected);
    weft_list_push_back(&ctx->live_requests, &req->link);
    ctx->counters.rdv_rtr++;
    WEFT_TRACE(WEFT_TR_RTR, WEFT_TR_I, g->peer, req->expected, 0, 0);
    weft__proto_queue_ctrl(g, c);
}

/* A receive matched a rendezvous of len bytes. */
static void rdv_start(struct weft_ctx *ctx, struct weft_request *req, weft__gate_t *g, uint64_t len,
                      uint64_t sreq, const weft_rkey_t *rkey, int nkeys)
{
    uint64_t accept = WEFT_MIN(len, (uint64_t)req->length);
    req->expected = 0;
    req->rail_parts = 0;
    req->gate = g;
    req->peer_sreq = sreq;
    req->status.length = accept;
    req->status.error = len > req->length ? WEFT_ETRUNC : WEFT_OK;
    if (g->dead) {
        weft__request_complete(ctx, req, g->dead);
        return;
    }
    if (accept == 0) {
        send_ack(g, sreq);
        weft__request_complete(ctx, req, req->status.error);
        return;
    }
    weft_rkey_t first;
    if (rkey->len && nkeys > 1) {
        /* Several rail keys: read in parts over the rails, or with the
         * first key alone where that cannot be done. */
        if ((g->caps.flags & WEFT_DRV_CAP_RGET) &&
            weft__rail_rget(g, req, accept, rkey, nkeys) == WEFT_OK)
            return;
        first.len = rkey->len / (uint32_t)nkeys;
        memcpy(first.bytes, rkey->bytes, first.len);
        rkey = &first;
    }
    if (rkey->len && (g->caps.flags & WEFT_DRV_CAP_RGET)) {
        if (weft__coop_start_recv(ctx, req, g, accept, rkey))
            return;
        int rc = g->drv_ops->rget(g->track, req->iov, req->iovcnt, rkey, 0, accept, req);
        if (rc == WEFT_OK) {
            ctx->counters.rdv_rget++;
            send_ack(g, sreq);
            weft__request_complete(ctx, req, req->status.error);
            return;
        }
        if (rc == WEFT_INPROGRESS) {
            req->state = WEFT_RS_RDV_RECV;
            weft_list_push_back(&ctx->live_requests, &req->link);
            return;
        }
        if (rc == WEFT_EPEERDEAD) {
            weft__request_complete(ctx, req, rc);
            return;
        }
        /* EPERM and friends: the copy path always works. */
        weft_log_debug("single-copy read from rank %d failed (%s); using RTR", g->peer,
                       weft_strerror(rc));
    }
    rdv_rtr(ctx, req, g);
}

void weft__proto_rget_done(void *owner, void *peer_cookie, void *op_cookie, int status)
{
    struct weft_ctx *ctx = owner;
    struct weft_request *req = op_cookie;
    weft__gate_t *g = peer_cookie;
    if (req->rail_parts) {
        weft__rail_part_done(g, 0, req, status); /* rail 0's part of a multi-rail read */
        return;
    }
    weft__proto_rget_finish(ctx, g, req, status);
}

void weft__proto_rget_finish(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req,
                             int status)
{
    weft_list_remove(&req->link);
    if (status == WEFT_OK) {
        ctx->counters.rdv_rget++;
        send_ack(g, req->peer_sreq);
        weft__request_complete(ctx, req, req->status.error);
    } else if (status == WEFT_EPEERDEAD) {
        weft__request_complete(ctx, req, status);
    } else {
        rdv_rtr(ctx, req, g);
    }
}

void weft__unexpected_free(struct weft_ctx *ctx, weft__unexpected_t *u)
{
    if (u->kind != WEFT_CHUNK_RDV && u->length > WEFT_UNEXP_SMALL)
        free(u->data_heap);
    weft_slab_free(&ctx->unexpected, u);
}

void weft__proto_consume(struct weft_ctx *ctx, struct weft_request *req, weft__unexpected_t *u)
{
    weft__gate_t *g = &ctx->gates[u->match.source];
    req->status.source = g->peer;
    req->status.tag = u->match.tag;
    req->status.comm = u->match.comm;
    req->gate = g;
    if (u->kind == WEFT_CHUNK_RDV) {
        rdv_start(ctx, req, g, u->length, u->sreq, &u->rkey, u->nkeys);
    } else {
        uint64_t n = WEFT_MIN(u->length, (uint64_t)req->length);
        copy_to_recv(req, weft__unexpected_data(u), n);
        req->status.length = n;
        if (u->kind != WEFT__UNEXP_LOCAL)
            weft__proto_credit_return(g, weft__eager_cost(u->length));
        if (u->kind == WEFT_CHUNK_EAGER_SYNC)
            send_ack(g, u->sreq);
        weft__request_complete(ctx, req, u->length > req->length ? WEFT_ETRUNC : WEFT_OK);
    }
    weft__unexpected_free(ctx, u);
}

struct weft_request *weft__proto_claim(struct weft_ctx *ctx, int src, uint32_t comm, uint64_t tag,
                                       size_t len, void **buf)
{
    weft_lock_acquire(&ctx->lock);
    weft__match_lock(ctx);
    weft__match_recv_t *m = weft__match_first_recv(ctx->match, comm, src, tag);
    struct weft_request *req = m ? weft_container_of(m, struct weft_request, match) : NULL;
    /* A receive published to the sender for a cooperative rendezvous is
     * taken back first; one the sender claimed already is left alone. */
    if (req && (req->iovcnt != 1 || req->iov[0].iov_len < len || req->state != WEFT_RS_POSTED ||
                !weft__coop_cancel(&ctx->gates[src], req)))
        req = NULL;
    if (req) {
        weft__match_arrive(ctx->match, comm, src, tag); /* unlinks req */
        weft_list_remove(&req->link);
        weft_list_init(&req->link);
        req->state = WEFT_RS_NONE;
        req->status.source = src;
        req->status.tag = tag;
        req->status.comm = comm;
        req->gate = &ctx->gates[src];
        *buf = req->iov[0].iov_base;
    }
    weft__match_unlock(ctx);
    weft__unlock(ctx);
    return req;
}

void weft__proto_claim_end(struct weft_ctx *ctx, struct weft_request *req, size_t len, int err)
{
    weft_lock_acquire(&ctx->lock);
    req->status.length = err ? 0 : len;
    weft__request_complete(ctx, req, err);
    weft__unlock(ctx);
}

int weft__proto_inject(struct weft_ctx *ctx, int src, uint32_t comm, uint64_t tag, void *data,
                       size_t len, bool give)
{
    int rc = WEFT_OK;
    weft_lock_acquire(&ctx->lock);
    weft__match_lock(ctx);
    weft__match_recv_t *m = weft__match_arrive(ctx->match, comm, src, tag);
    if (m) {
        struct weft_request *req = weft_container_of(m, struct weft_request, match);
        weft_list_remove(&req->link);
        req->state = WEFT_RS_NONE;
        weft__match_unlock(ctx);
        req->status.source = src;
        req->status.tag = tag;
        req->status.comm = comm;
        req->gate = &ctx->gates[src];
        uint64_t n = WEFT_MIN((uint64_t)len, (uint64_t)req->length);
        copy_to_recv(req, data, n);
        req->status.length = n;
        weft__request_complete(ctx, req, len > req->length ? WEFT_ETRUNC : WEFT_OK);
        if (give)
            free(data);
        weft__unlock(ctx);
        return WEFT_OK;
    }
    weft__unexpected_t *u = weft_slab_alloc(&ctx->unexpected);
    if (u && !give && len > WEFT_UNEXP_SMALL) {
        void *copy = malloc(len);
        if (copy)
            memcpy(copy, data, len);
        else
            weft_slab_free(&ctx->unexpected, u), u = NULL;
        data = copy;
        give = true;
    }
    if (!u) {
        rc = WEFT_ENOMEM;
        if (give)
            free(data);
        goto out;
    }
    memset(&u->match, 0, sizeof u->match);
    u->match.comm = comm;
    u->match.source = src;
    u->match.tag = tag;
    u->kind = WEFT__UNEXP_LOCAL;
    u->seq = 0;
    u->sreq = 0;
    u->nkeys = 0;
    u->length = len;
    if (len > WEFT_UNEXP_SMALL) {
        u->data_heap = data;
    } else {
        if (len)
            memcpy(u->data, data, len);
        if (give)
            free(data);
    }
    if ((rc = weft__match_add_unexpected(ctx->match, &u->match)))
        weft__unexpected_free(ctx, u);
    else
        ctx->counters.unexpected++;
out:
    weft__match_unlock(ctx);
    weft__unlock(ctx);
    return rc;
}

/* The receive fast path and the receive without the engine lock have two
 * entries each, as the send's (send.c, WEFT_FAST_PATH): one for the
 * request-returning receives and one for those with a completion object. */
#define WEFT_FAST_PATH static inline __attribute__((always_inline))

WEFT_FAST_PATH struct weft_request *recv_fast(struct weft_ctx *ctx, int src, uint32_t comm,
                                              uint64_t tag, void *buf, size_t len)
{
    struct weft_request *req = weft__request_peek(ctx);
    if (!req)
        return NULL; /* a request to make: the general path */
    weft__match_lock(ctx);
    weft__match_msg_t *m = weft__match_peek(ctx->match, comm, src, tag);
    weft__unexpected_t *u = m ? weft_container_of(m, weft__unexpected_t, match) : NULL;
    if (u && u->kind == WEFT_CHUNK_EAGER)
        weft__match_remove_msg(ctx->match, m);
    weft__match_unlock(ctx);
    if (!u || u->kind != WEFT_CHUNK_EAGER)
        return NULL; /* none, or a handshake to answer: the general path */
    weft__request_take(ctx);
    uint64_t n = WEFT_MIN(u->length, (uint64_t)len);
    weft__copy(buf, weft__unexpected_data(u), n);
    weft__proto_credit_return(&ctx->gates[src], weft__eager_cost(u->length));
    int err = u->length > len ? WEFT_ETRUNC : WEFT_OK;
    weft__unexpected_free(ctx, u);
    weft__request_born_done(req, WEFT_REQ_RECV, src, comm, tag, n, err);
    return req;
}

struct weft_request *weft__proto_recv_fast(struct weft_ctx *ctx, int src, uint32_t comm,
                                           uint64_t tag, void *buf, size_t len)
{
    return recv_fast(ctx, src, comm, tag, buf, len);
}

struct weft_request *weft__proto_recv_fast_comp(struct weft_ctx *ctx, int src, uint32_t comm,
                                                uint64_t tag, void *buf, size_t len)
{
    return recv_fast(ctx, src, comm, tag, buf, len);
}

/* Post req (the matcher said no message matches it): under match_lock. */
static inline void recv_posted(struct weft_ctx *ctx, struct weft_request *req)
{
    req->state = WEFT_RS_POSTED;
    req->expected = 0;
    req->rail_parts = 0;
    weft_list_push_back(&ctx->posted, &req->link);
}

/* Take a posted receive out of matching: whether it was still posted (and
 * is now unlinked, state NONE). Under match_lock. */
static bool recv_unpost(struct weft_ctx *ctx, struct weft_request *req)
{
    if (req->state != WEFT_RS_POSTED || !weft__match_cancel(ctx->match, &req->match))
        return false;
    weft_list_remove(&req->link);
    req->state = WEFT_RS_NONE;
    return true;
}

bool weft__proto_recv_cancel(struct weft_ctx *ctx, struct weft_request *req)
{
    weft__match_lock(ctx);
    bool was = recv_unpost(ctx, req);
    weft__match_unlock(ctx);
    return was;
}

int weft__proto_recv(struct weft_ctx *ctx, struct weft_request *req)
{
    int err;
    weft__match_lock(ctx);
    weft__match_msg_t *m = weft__match_post(ctx->match, &req->match, &err);
    if (!err && !m)
        recv_posted(ctx, req);
    weft__match_unlock(ctx);
    if (err)
        return err;
    if (m) {
        weft__proto_consume(ctx, req, weft_container_of(m, weft__unexpected_t, match));
        return WEFT_OK;
    }
    if (req->peer >= 0 && ctx->gates[req->peer].dead) {
        if (weft__proto_recv_cancel(ctx, req))
            weft__request_complete(ctx, req, ctx->gates[req->peer].dead);
        return WEFT_OK;
    }
    if (req->length >= ctx->rdv_split) /* a small receive never pays the call */
        weft__coop_publish(ctx, req);
    return WEFT_OK;
}

WEFT_FAST_PATH bool recv_unlocked(struct weft_ctx *ctx, struct weft_request *req)
{
    if (req->length >= ctx->rdv_split ||
        atomic_load_explicit(&ctx->deferred[weft__defer_slot()].nrecv, memory_order_acquire))
        return false;
    const weft__match_recv_t *r = &req->match;
    bool posted = false;
    weft__match_lock(ctx);
    /* A lost peer's receives fail by the engine: dead_posted is set under
     * this lock before it fails those posted, so either it finds this one
     * or this thread sees it. */
    if ((r->source < 0 || !ctx->gates[r->source].dead_posted) &&
        !weft__match_peek(ctx->match, r->comm, r->source, r->tag)) {
        /* No message matches (peek, under the same lock): post only posts. */
        int err;
        weft__match_post(ctx->match, &req->match, &err);
        if (!err) {
            recv_posted(ctx, req);
            posted = true;
        }
    }
    weft__match_unlock(ctx);
    return posted;
}

bool weft__proto_recv_unlocked(struct weft_ctx *ctx, struct weft_request *req)
{
    return recv_unlocked(ctx, req);
}

bool weft__proto_recv_unlocked_comp(struct weft_ctx *ctx, struct weft_request *req)
{
    return recv_unlocked(ctx, req);
}

/* A message no receive matched: recorded as unexpected, its eager data
 * copied aside (bounded by the credit window). Called under match_lock, which
 * it releases. */
static int on_unexpected(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c,
                         bool eager)
{
    int rc = WEFT_ENOMEM;
    weft__unexpected_t *u = weft_slab_alloc(&ctx->unexpected);
    if (!u)
        goto out;
    if (eager && c->len > WEFT_UNEXP_SMALL && !(u->data_heap = malloc(c->len))) {
        weft_slab_free(&ctx->unexpected, u);
        goto out;
    }
    memset(&u->match, 0, sizeof u->match);
    u->match.comm = c->comm;
    u->match.source = g->peer;
    u->match.tag = c->tag;
    u->kind = c->kind;
    u->seq = c->seq;
    u->length = c->len;
    u->sreq = c->sreq;
    u->nkeys = (uint8_t)(c->flags + 1);
    if (!eager)
        u->rkey = c->rkey;
    else if (c->len)
        weft__copy((uint8_t *)weft__unexpected_data(u), c->payload, c->len);
    if ((rc = weft__match_add_unexpected(ctx->match, &u->match))) {
        weft__unexpected_free(ctx, u);
        goto out;
    }
    ctx->counters.unexpected++;
    uint64_t depth = weft__match_unexpected_count(ctx->match);
    if (depth > ctx->counters.unexpected_max)
        ctx->counters.unexpected_max = depth;
    WEFT_TRACE(WEFT_TR_UNEXPECTED, WEFT_TR_I, g->peer, c->tag, c->len, depth);
out:
    weft__match_unlock(ctx);
    return rc;
}

/* Whether c is a sink's message (weft__sink_fn says what a sink gets).
 * Without a sink it is matched as any other message. */
static inline bool sink_comm(const weft__wire_chunk_t *c)
{
    return WEFT_UNLIKELY(c->comm - WEFT__SINK_COMM < WEFT__SINKS);
}

/* An eager message on a sink's id: given to the sink, if there is one. */
static bool sink_take(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    weft__sink_fn fn = ctx->sinks[c->comm - WEFT__SINK_COMM].fn;
    if (!fn)
        return false;
    fn(ctx->sinks[c->comm - WEFT__SINK_COMM].arg, g->peer, c->tag, c->payload, (size_t)c->len,
       false);
    weft__proto_credit_return(g, weft__eager_cost(c->len));
    if (c->kind == WEFT_CHUNK_EAGER_SYNC)
        send_ack(g, c->sreq);
    return true;
}

/* A rendezvous on a sink's id was left unexpected: the sink is told. */
static void sink_rdv(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    weft__sink_fn fn = ctx->sinks[c->comm - WEFT__SINK_COMM].fn;
    if (fn)
        fn(ctx->sinks[c->comm - WEFT__SINK_COMM].arg, g->peer, c->tag, NULL, (size_t)c->len, true);
}

int weft__sink_set(struct weft_ctx *ctx, uint32_t comm, weft__sink_fn fn, void *arg)
{
    if (!ctx || comm - WEFT__SINK_COMM >= WEFT__SINKS)
        return WEFT_EINVAL;
    weft_lock_acquire(&ctx->lock);
    if (fn && ctx->sinks[comm - WEFT__SINK_COMM].fn) {
        weft__unlock(ctx);
        return WEFT_ESTATE;
    }
    ctx->sinks[comm - WEFT__SINK_COMM].arg = arg;
    ctx->sinks[comm - WEFT__SINK_COMM].fn = fn;
    weft__unlock(ctx);
    return WEFT_OK;
}

/* A message chunk (EAGER, EAGER_SYNC, RDV) arrived from g. */
static int on_message(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    bool eager = c->kind != WEFT_CHUNK_RDV;
    if (c->seq != g->recv_seq) {
        weft_log_error("rank %d sent message sequence %u, expected %u", g->peer, c->seq,
                       g->recv_seq);
        return WEFT_EPROTO;
    }
    if (eager) {
        /* The peer may not exceed the window this rank granted it (the packet
         * decoder already bounded the payload by what arrived). */
        uint64_t cost = weft__eager_cost(c->len);
        if (g->eager_held + cost > ctx->eager_credits) {
            weft_log_error("rank %d overran its eager credit", g->peer);
            return WEFT_EPROTO;
        }
        g->eager_held += cost;
    }
    g->recv_seq++;
    ctx->counters.chunks_received++;
    if (sink_comm(c) && eager && sink_take(ctx, g, c))
        return WEFT_OK;
    /* From the lookup to the unexpected message's recording, one match_lock
     * section: a receive posted without the engine lock in between would
     * otherwise miss the message. */
    weft__match_lock(ctx);
    weft__match_recv_t *m = weft__match_arrive(ctx->match, c->comm, g->peer, c->tag);
    /* The message a publication was waiting for: it ends the publication, or
     * it is the rendezvous that claimed it (then it matched the published
     * receive). Unmatched, the lookup is made again after it: a receive may
     * have been posted meanwhile. */
    bool publication = g->published && c->seq == g->published_seq;
    if (!m && publication) {
        weft__match_unlock(ctx);
        int rc = weft__coop_arrival(ctx, g, c, NULL);
        if (rc)
            return rc < 0 ? rc : WEFT_OK;
        weft__match_lock(ctx);
        m = weft__match_arrive(ctx->match, c->comm, g->peer, c->tag);
        publication = false;
    }
    if (!m) {
        int rc = on_unexpected(ctx, g, c, eager); /* releases match_lock */
        if (rc == WEFT_OK && !eager && sink_comm(c))
            sink_rdv(ctx, g, c);
        return rc;
    }
    struct weft_request *req = weft_container_of(m, struct weft_request, match);
    weft_list_remove(&req->link);
    req->state = WEFT_RS_NONE;
    weft__match_unlock(ctx);
    WEFT_TRACE(WEFT_TR_MATCH, WEFT_TR_I, g->peer, c->tag, c->len, 1);
    req->status.source = g->peer;
    req->status.tag = c->tag;
    req->status.comm = c->comm;
    req->gate = g;
    if (publication) {
        int rc = weft__coop_arrival(ctx, g, c, req);
        if (rc)
            return rc < 0 ? rc : WEFT_OK;
    }
    if (!eager) {
        rdv_start(ctx, req, g, c->len, c->sreq, &c->rkey, c->flags + 1);
        return WEFT_OK;
    }
    uint64_t n = WEFT_MIN(c->len, (uint64_t)req->length);
    copy_to_recv(req, c->payload, n);
    req->status.length = n;
    weft__proto_credit_return(g, weft__eager_cost(c->len));
    if (c->kind == WEFT_CHUNK_EAGER_SYNC)
        send_ack(g, c->sreq);
    weft__request_complete(ctx, req, c->len > req->length ? WEFT_ETRUNC : WEFT_OK);
    return WEFT_OK;
}

/* Stream bytes [from, to) of a send's data as RDATA fragments for the
 * receiver's request rreq; the last fragment sent releases the send. */
static void stream_rdata(weft__gate_t *g, struct weft_request *req, uint64_t from, uint64_t to,
                         uint64_t rreq)
{
    weft__chunk_t *d = &req->data;
    d->kind = WEFT_CHUNK_RDATA;
    d->iov = req->iov;
    d->iovcnt = req->iovcnt;
    d->offset = from;
    d->length = to;
    d->rreq = rreq;
    weft__gate_lock(g);
    weft__chunk_queue(g, d, false);
    weft__gate_mark_pending(g);
    weft__gate_unlock(g);
}

static int on_rtr(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    struct weft_request *req = weft__handle_get(&ctx->handles, c->sreq);
    if (!req || req->kind != WEFT_REQ_SEND || req->gate != g || req->chunk.kind != WEFT_CHUNK_RDV ||
        req->answered || c->len > req->length)
        return WEFT_EPROTO;
    req->answered = true;
    weft__coop_unwatch(req);
    ctx->counters.chunks_received++;
    if (c->len == 0) {
        weft__proto_send_release(ctx, req, WEFT_OK);
        return WEFT_OK;
    }
    stream_rdata(g, req, 0, c->len, c->rreq);
    return WEFT_OK;
}

static int on_rdata(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    struct weft_request *req = weft__handle_get(&ctx->handles, c->rreq);
    if (!req || req->kind != WEFT_REQ_RECV || req->gate != g || req->state != WEFT_RS_RDV_RECV ||
        c->len > req->expected || c->offset > req->status.length ||
        c->len > req->status.length - c->offset)
        return WEFT_EPROTO;
    copy_to_iov(req->iov, req->iovcnt, c->offset, c->payload, c->len);
    req->expected -= c->len;
    ctx->counters.chunks_received++;
    recv_maybe_complete(ctx, req);
    return WEFT_OK;
}

static int on_ack(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    struct weft_request *req = weft__handle_get(&ctx->handles, c->sreq);
    if (!req || req->kind != WEFT_REQ_SEND || req->gate != g ||
        req->chunk.kind == WEFT_CHUNK_EAGER || req->answered)
        return WEFT_EPROTO;
    req->answered = true;
    weft__coop_unwatch(req);
    ctx->counters.chunks_received++;
    weft__proto_send_release(ctx, req, WEFT_OK);
    return WEFT_OK;
}

/* A well-formed packet of len bytes arrived from g. */
static inline void packet_counted(struct weft_ctx *ctx, weft__gate_t *g, size_t len)
{
    ctx->counters.packets_received++;
    g->stats.packets_received++;
    g->stats.wire_bytes_received += len;
}

int weft__proto_packet(void *owner, void *peer_cookie, const void *buf, size_t len)
{
    struct weft_ctx *ctx = owner;
    weft__gate_t *g = peer_cookie;
    weft__wire_iter_t it;
    weft__wire_chunk_t c;
    int rc;
    WEFT_TRACE(WEFT_TR_ARRIVE, WEFT_TR_I, g->peer, len, 0, 0);
    if (WEFT_LIKELY(weft__wire_lone_eager(buf, len, &c))) {
        /* A lone small message: no iterator, nothing else to dispatch. */
        packet_counted(ctx, g, len);
        g->stats.chunks_received++;
        if ((rc = on_message(ctx, g, &c)))
            goto malformed;
        return WEFT_OK;
    }
    rc = weft__wire_open(buf, len, &it);
    if (rc)
        goto malformed;
    if (it.remaining > 1) {
        /* An aggregated packet is checked whole before any chunk acts, so a
         * malformed one is rejected without delivering its first chunks. */
        weft__wire_iter_t check = it;
        while ((rc = weft__wire_next(&check, &c)) == 1)
            ;
        if (rc)
            goto malformed;
    }
    packet_counted(ctx, g, len);
    while ((rc = weft__wire_next(&it, &c)) == 1) {
        g->stats.chunks_received++;
        rc = weft__kinds[c.kind]->handle(ctx, g, &c);
        if (rc)
            goto malformed;
    }
    if (rc == 0)
        return WEFT_OK;
malformed:
    weft_log_error("rejected a packet of %zu bytes from rank %d: %s", len, g->peer,
                   weft_strerror(rc));
    return rc < 0 ? rc : WEFT_EPROTO;
}

/* A peer is gone: fail every request that can only complete through it. */
void weft__proto_peer_lost(void *owner, void *peer_cookie, int status)
{
    weft__gate_t *g = peer_cookie;
    /* A multi-rail gate dies once all its rails have reported (rail.c). */
    if (g->nrails && !weft__rail_lost(g, 0))
        return;
    weft__gate_lost(owner, g, status);
}

static void gate_lost_locked(struct weft_ctx *ctx, weft__gate_t *g, int status);

void weft__gate_lost(struct weft_ctx *ctx, weft__gate_t *g, int status)
{
    weft__gate_lock(g);
    gate_lost_locked(ctx, g, status);
    weft__gate_unlock(g);
}

static void gate_lost_locked(struct weft_ctx *ctx, weft__gate_t *g, int status)
{
    if (g->dead)
        return;
    weft__coll_peer_lost(ctx, g->peer);
    g->dead = status < 0 ? status : WEFT_EPEERDEAD;
    if (g->dead == WEFT_EPROTO)
        g->dead = WEFT_EPEERDEAD;
    if (g->peer < ctx->size && !ctx->finalizing)
        weft_log_error("rank %d is lost (%s); its requests fail with WEFT_EPEERDEAD", g->peer,
                       weft_strerror(status));
    int failed = 0;
    for (weft__chunk_t *c; (c = weft__backlog_first(g));) {
        weft__chunk_unqueue(c);
        if (c->heap)
            weft__ctrl_free(ctx, c);
    }
    weft_lock_acquire(&ctx->pending_lock);
    if (g->on_pending) {
        weft_list_remove(&g->pending_link);
        g->on_pending = false;
    }
    weft_lock_release(&ctx->pending_lock);
    weft_list_t *pos, *tmp;
    weft_list_for_each_safe(pos, tmp, &ctx->live_requests)
    {
        struct weft_request *req = weft_list_entry(pos, struct weft_request, link);
        if (req->kind == WEFT_REQ_SEND && req->gate == g) {
            weft__request_complete(ctx, req, WEFT_EPEERDEAD);
            failed++;
        } else if (req->kind == WEFT_REQ_RECV && req->state == WEFT_RS_RDV_RECV && req->gate == g) {
            /* Every rail reported its rgets (rget_done) before its loss, so
             * no part of a multi-rail read is left. */
            weft__request_complete(ctx, req, WEFT_EPEERDEAD);
            failed++;
        }
    }
    /* The receives posted from it: taken out under match_lock (a leaf, so
     * the gate's lock held here does not matter), failed after. */
    weft_list_t lost;
    weft_list_init(&lost);
    weft__match_lock(ctx);
    g->dead_posted = g->dead;
    weft_list_for_each_safe(pos, tmp, &ctx->posted)
    {
        struct weft_request *req = weft_list_entry(pos, struct weft_request, link);
        if (req->peer == g->peer && recv_unpost(ctx, req))
            weft_list_push_back(&lost, &req->link);
    }
    weft__match_unlock(ctx);
    weft_list_for_each_safe(pos, tmp, &lost)
    {
        struct weft_request *req = weft_list_entry(pos, struct weft_request, link);
        weft__request_complete(ctx, req, WEFT_EPEERDEAD);
        failed++;
    }
    /* A linked process of another job (api/link.c) may end whenever its job
     * does: news only when it takes requests with it. */
    if (g->peer >= ctx->size && !ctx->finalizing) {
        if (failed && !g->quiet)
            weft_log_warn("linked process %d (of another job) is lost (%s); %d requests fail "
                          "with WEFT_EPEERDEAD",
                          g->peer, weft_strerror(status), failed);
        else
            weft_log_info("linked process %d (of another job) ended", g->peer);
    }
}

/* ---------------------------------------------------------------- kinds */

static int decode_msg(const uint8_t *p, weft__wire_chunk_t *c, uint64_t *payload)
{
    c->seq = weft__le32_get(p + 4);
    c->tag = weft__le64_get(p + 8);
    c->comm = weft__le32_get(p + 16);
    if (weft__le32_get(p + 20) != 0 || c->tag == UINT64_MAX)
        return WEFT_EPROTO;
    c->len = weft__le64_get(p + 24);
    if (c->kind == WEFT_CHUNK_EAGER_SYNC)
        c->sreq = weft__le64_get(p + 32);
    if (c->kind != WEFT_CHUNK_RDV) {
        *payload = c->len;
        return WEFT_OK;
    }
    c->sreq = weft__le64_get(p + 32);
    c->rkey.len = weft__le32_get(p + 40);
    if (c->rkey.len > WEFT_RKEY_MAX || weft__le32_get(p + 44) != 0 ||
        (c->flags && (c->rkey.len == 0 || c->rkey.len % (c->flags + 1u))))
        return WEFT_EPROTO;
    memcpy(c->rkey.bytes, p + 48, c->rkey.len);
    return WEFT_OK;
}

static int decode_rtr(const uint8_t *p, weft__wire_chunk_t *c, uint64_t *payload)
{
    c->sreq = weft__le64_get(p + 8);
    c->rreq = weft__le64_get(p + 16);
    c->len = weft__le64_get(p + 24);
    return WEFT_OK;
}

static int decode_rdata(const uint8_t *p, weft__wire_chunk_t *c, uint64_t *payload)
{
    c->rreq = weft__le64_get(p + 8);
    c->offset = weft__le64_get(p + 16);
    c->len = weft__le64_get(p + 24);
    *payload = c->len;
    return WEFT_OK;
}

static int decode_ack(const uint8_t *p, weft__wire_chunk_t *c, uint64_t *payload)
{
    c->sreq = weft__le64_get(p + 8);
    return WEFT_OK;
}

const weft__kind_t weft__kind_eager = {.name = "EAGER",
                                       .hdr = WEFT_WIRE_EAGER_HDR,
                                       .message = true,
                                       .decode = decode_msg,
                                       .handle = on_message};
const weft__kind_t weft__kind_eager_sync = {.name = "EAGER_SYNC",
                                            .hdr = WEFT_WIRE_EAGER_SYNC_HDR,
                                            .message = true,
                                            .decode = decode_msg,
                                            .handle = on_message};
const weft__kind_t weft__kind_rdv = {.name = "RDV",
                                     .hdr = WEFT_WIRE_RDV_HDR,
                                     .message = true,
                                     .flags = true,
                                     .decode = decode_msg,
                                     .handle = on_message};
const weft__kind_t weft__kind_rtr = {
    .name = "RTR", .hdr = WEFT_WIRE_RTR_HDR, .decode = decode_rtr, .handle = on_rtr};
const weft__kind_t weft__kind_rdata = {
    .name = "RDATA", .hdr = WEFT_WIRE_RDATA_HDR, .decode = decode_rdata, .handle = on_rdata};
const weft__kind_t weft__kind_ack = {
    .name = "ACK", .hdr = WEFT_WIRE_ACK_HDR, .decode = decode_ack, .handle = on_ack};
