/* Protocols (proto.c, proto_*.c): sends and receives on gates, sinks,
 * injection and claims for the layers that route messages themselves,
 * credits, cancels. Part of the engine's private objects (core_int.h). */
#ifndef WEFT_CORE_PROTO_H
#define WEFT_CORE_PROTO_H

#include "core/ctx.h"

/* Give communicator id comm (a sink's) to fn(arg), or take it back (fn NULL).
 * Messages of comm that arrived before stay unexpected in the matcher, for
 * the sink's owner to receive. WEFT_EINVAL for an id outside the sinks',
 * WEFT_ESTATE if it has a sink already. Takes the engine lock. */
int weft__sink_set(struct weft_ctx *ctx, uint32_t comm, weft__sink_fn fn, void *arg);
/* Send, without a request, a lone eager message on comm gathered from
 * pieces a (alen bytes) and b (blen), when it can leave now: the gate's track
 * copies what it sends (its buffers are free when this returns), nothing is
 * queued or in flight on the gate, credit is there. WEFT_OK: sent.
 * WEFT_EAGAIN: the gate is busy, backed up or short of credit (nothing done).
 * WEFT_EUNSUPPORTED: not this way, though the gate is idle (a track that
 * does not copy: a request-carrying send leaves at once), or never this way
 * (this process, over the eager limit). WEFT_EPEERDEAD. Takes the gate's lock;
 * the caller holds the engine lock unless the track has WEFT_DRV_CAP_SEND_MT
 * (weft__proto_send_now_mt says). */
int weft__proto_send_now(struct weft_ctx *ctx, int dest, uint32_t comm, uint64_t tag, const void *a,
                         size_t alen, const void *b, size_t blen);
/* Whether weft__proto_send_now may be called for dest without the engine
 * lock. */
bool weft__proto_send_now_mt(const struct weft_ctx *ctx, int dest);
int weft__proto_send(struct weft_ctx *ctx, struct weft_request *req);
/* A standard send of len contiguous bytes to dest that can go eager, alone, on
 * an idle gate: a new request, sent (usually complete already). NULL when
 * the message needs the general path (weft__proto_send); nothing changed
 * then. Caller holds the engine lock, with no deferred submission waiting. */
struct weft_request *weft__proto_send_fast(struct weft_ctx *ctx, int dest, uint32_t comm,
                                           uint64_t tag, const void *buf, size_t len);
/* The fast paths again, for the operations with a completion object (sr.c),
 * so that each entry has one caller and the flag paths are inlined as before
 * (send.c, WEFT_FAST_PATH). The send's: only a track that copies what it
 * sends (the message leaves, its request born complete); NULL elsewhere,
 * where the general path sends a lone message at once too. */
struct weft_request *weft__proto_send_fast_comp(struct weft_ctx *ctx, int dest, uint32_t comm,
                                                uint64_t tag, const void *buf, size_t len);
bool weft__proto_send_unlocked_comp(struct weft_ctx *ctx, struct weft_request *req, int dest,
                                    uint32_t comm, uint64_t tag, const void *buf, size_t len);
struct weft_request *weft__proto_recv_fast_comp(struct weft_ctx *ctx, int src, uint32_t comm,
                                                uint64_t tag, void *buf, size_t len);
bool weft__proto_recv_unlocked_comp(struct weft_ctx *ctx, struct weft_request *req);
/* The same for a thread that found the engine lock taken: the message leaves
 * under the gate's lock alone, from req (weft__request_alloc_unlocked, whose
 * fields are then set as a completed send's). true when it left; false when
 * it must be deferred (not a WEFT_DRV_CAP_SEND_MT track, a gate not idle, a
 * request of this context still waiting for submission, no room), nothing
 * changed then. */
bool weft__proto_send_unlocked(struct weft_ctx *ctx, struct weft_request *req, int dest,
                               uint32_t comm, uint64_t tag, const void *buf, size_t len);
int weft__proto_recv(struct weft_ctx *ctx, struct weft_request *req);
/* A receive of up to len bytes from src (a rank) with tag (not a wildcard)
 * whose message already waits, eager: a new request, complete, with the data
 * copied into buf. NULL when the receive needs the general path (no such
 * message yet, a rendezvous or synchronous one, no free request); nothing
 * changed then. Caller holds the engine lock, with no deferred submission
 * waiting. */
struct weft_request *weft__proto_recv_fast(struct weft_ctx *ctx, int src, uint32_t comm,
                                           uint64_t tag, void *buf, size_t len);
int weft__proto_packet(void *owner, void *peer_cookie, const void *buf, size_t len);
void weft__proto_send_done(void *owner, void *peer_cookie, void *send_cookie, int status);
void weft__proto_rget_done(void *owner, void *peer_cookie, void *op_cookie, int status);
void weft__proto_peer_lost(void *owner, void *peer_cookie, int status);
/* A rendezvous read into req (whole, or its last part) ended with status. */
void weft__proto_rget_finish(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req,
                             int status);
/* The peer of g is gone (every rail of it reported): fail what depends on it. */
void weft__gate_lost(struct weft_ctx *ctx, weft__gate_t *g, int status);
/* A chunk can never be sent (it was unlinked): fail whatever owns it. */
void weft__proto_chunk_failed(weft__gate_t *g, weft__chunk_t *c, int err);
/* A packet's chunks have left (the driver accepted them). */
void weft__proto_chunks_sent(weft__gate_t *g, weft__packet_t *pkt, int status);
/* Free an unexpected-message descriptor and its data. */
void weft__unexpected_free(struct weft_ctx *ctx, weft__unexpected_t *u);
/* Consume an unexpected message into a receive that matched it. */
void weft__proto_consume(struct weft_ctx *ctx, struct weft_request *req, weft__unexpected_t *u);
/* Deliver len bytes at data through matching as if rank src had sent them
 * on (comm, tag): a posted receive that matches takes them (copied), else
 * they wait as an unexpected message. With give, data is malloc'd and
 * becomes the engine's (freed here or kept with the message); without, it
 * stays the caller's and is copied where it must be kept. For a layer that
 * routes messages itself (the dynamic broadcast): the receiver cannot tell
 * them from a send. Takes the engine lock; a handler may run here.
 * WEFT_ENOMEM (given data freed all the same). */
int weft__proto_inject(struct weft_ctx *ctx, int src, uint32_t comm, uint64_t tag, void *data,
                       size_t len, bool give);
/* Take, for a message of len bytes from src on (comm, tag) that is on its
 * way in pieces, the receive it matches, if one is posted with one buffer of
 * at least len bytes: out of matching and of every list, so neither a death
 * nor finalize completes it; its buffer in *buf, status set. The taker
 * writes the data there and ends it with weft__proto_claim_end, once no
 * write into the buffer can come any more. NULL: none (the message then goes
 * by weft__proto_inject). Takes the engine lock. */
struct weft_request *weft__proto_claim(struct weft_ctx *ctx, int src, uint32_t comm, uint64_t tag,
                                       size_t len, void **buf);
/* Complete a claimed receive: len bytes arrived (err WEFT_OK), or the
 * message failed (err). Takes the engine lock; a handler may run here. */
void weft__proto_claim_end(struct weft_ctx *ctx, struct weft_request *req, size_t len, int err);
/* What an eager message of len bytes costs of the receiver's credit: its
 * bytes and a fixed overhead, so a flood of empty messages is bounded too. */
#define WEFT_CREDIT_OVERHEAD 64
static inline uint64_t weft__eager_cost(uint64_t len)
{
    return len + WEFT_CREDIT_OVERHEAD;
}
/* Queue a control chunk on g (freed instead if the peer is dead); takes the
 * gate's lock. */
void weft__proto_queue_ctrl(weft__gate_t *g, weft__chunk_t *c);
/* Send the peer a packet, so that its doorbell rings: the gate's credit
 * chunk, with whatever credit is owed (maybe none), unless it is queued
 * already. For a peer that waits on shared memory alone, which no packet
 * would otherwise wake. Under the engine lock. */
void weft__proto_nudge(weft__gate_t *g);
/* Eager bytes of this peer were consumed: return them as credit, in batches
 * (proto_credit.c). Inline: every eager receive returns its bytes. */
static inline void weft__proto_credit_return(weft__gate_t *g, uint64_t cost)
{
    g->eager_held -= cost;
    g->credit_owed += cost;
    if (g->credit_owed >= g->ctx->eager_credits / 4)
        weft__proto_nudge(g);
}
/* Queue the CANCEL of a send whose message has left (proto_cancel.c). */
void weft__proto_cancel_ask(weft__gate_t *g, struct weft_request *req);
/* Release one hold of a send; it completes when none is left. */
void weft__proto_send_release(struct weft_ctx *ctx, struct weft_request *req, int err);
/* Ask the receiver to take back a send's message if no receive matched it yet
 * (MPI_Cancel of a send). WEFT_INPROGRESS: asked, the send completes with
 * WEFT_ECANCELED or as sent; WEFT_ESTATE: it matched or failed already;
 * WEFT_ENOMEM. A send that completed locally (eager) is reopened. */
int weft__proto_send_cancel(struct weft_ctx *ctx, struct weft_request *req);

/* Post a receive without the engine lock, under match_lock alone, when that
 * is enough: a small receive (no cooperative publication), no unexpected
 * message that matches it (taking one is the engine's), no receive of this
 * thread still deferred (it must be posted first), and a peer not lost.
 * false: nothing done, the request is left for the engine (deferred). */
bool weft__proto_recv_unlocked(struct weft_ctx *ctx, struct weft_request *req);
/* Take a posted receive out of matching (cancel): whether it was still
 * posted. The caller then completes it. Takes match_lock. */
bool weft__proto_recv_cancel(struct weft_ctx *ctx, struct weft_request *req);

#endif
