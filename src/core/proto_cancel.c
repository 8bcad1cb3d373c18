/* Cancelling a send (MPI_Cancel on a send): the CANCEL and CANCEL_REPLY
 * chunks, both sides.
 *
 * MPI lets a send be cancelled until a receive matched it. The message may be
 * sitting in the receiver's unexpected queue (eager data, or a rendezvous
 * announcement), so only the receiver can tell: the sender sends CANCEL naming
 * the message's sequence number, and the receiver answers CANCEL_REPLY: taken
 * back (removed from matching, its eager credit returned: the application
 * never sees it) or matched. CANCEL is a control chunk and control chunks
 * overtake queued messages, so it leaves only once the message has left
 * (a cancel asked before waits in WEFT_CANCEL_WANTED); on one track it then
 * arrives after the message. The send holds one step more while the answer is
 * due, so it cannot complete (and drop its wire id) before it. */
#include "core/core_int.h"
#include "core/kinds.h"

/* Queue the CANCEL of a send whose message has left. */
void weft__proto_cancel_ask(weft__gate_t *g, struct weft_request *req)
{
    weft__chunk_t *c = weft__ctrl_alloc(g->ctx);
    if (!c) {
        /* Not asked: the send goes on as if the message had matched. */
        req->cancel = WEFT_CANCEL_NONE;
        weft__proto_send_release(g->ctx, req, WEFT_OK);
        return;
    }
    c->kind = WEFT_CHUNK_CANCEL;
    c->hdr_len = (uint16_t)weft__wire_put_cancel(c->hdr, req->id, req->seq);
    req->cancel = WEFT_CANCEL_ASKED;
    weft__proto_queue_ctrl(g, c);
}

static int send_cancel_locked(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req);

int weft__proto_send_cancel(struct weft_ctx *ctx, struct weft_request *req)
{
    weft__gate_t *g = req->gate;
    weft__gate_lock(g);
    int rc = send_cancel_locked(ctx, g, req);
    weft__gate_unlock(g);
    return rc;
}

static int send_cancel_locked(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req)
{
    bool done = atomic_load_explicit(&req->done, memory_order_relaxed);
    if (req->cancel != WEFT_CANCEL_NONE)
        return WEFT_INPROGRESS; /* asked already */
    /* A send that the receiver answered (ACK, RTR, COOP, or its publication
     * claimed) matched; one that completed other than as a plain eager send
     * that left matched or failed. */
    if (req->answered || g->dead || (done && (req->error || req->chunk.kind != WEFT_CHUNK_EAGER)))
        return WEFT_ESTATE;
    if (!req->id && weft__handle_add(&ctx->handles, req, &req->id) < 0)
        return WEFT_ENOMEM;
    if (done) {
        /* An eager send completes once its message left, matched or not:
         * reopen it until the receiver answers. */
        req->error = req->status.error = WEFT_OK;
        req->holds = 0;
        weft_list_push_back(&ctx->live_requests, &req->link);
        atomic_store_explicit(&req->done, 0, memory_order_relaxed);
    }
    req->holds++;
    weft__coop_unwatch(req); /* a rendezvous being taken back must not claim a publication */
    if (req->chunk.queued)
        req->cancel = WEFT_CANCEL_WANTED; /* asked once the message leaves (chunks_sent) */
    else
        weft__proto_cancel_ask(g, req);
    return WEFT_INPROGRESS;
}

/* The receiver's side: take the message back if it is still unexpected and in
 * matching (a matched probe took it out: it counts as matched). */
static int on_cancel(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    bool taken = false;
    weft__chunk_t *r = weft__ctrl_alloc(ctx); /* first: an answer is owed once taken */
    if (!r)
        return WEFT_ENOMEM;
    ctx->counters.chunks_received++;
    /* A message not arrived yet (which one track never lets happen) is
     * answered "matched": it will be delivered, and the send completes as
     * sent. The walk is linear in the unexpected messages: a cancel is rare. */
    if (weft__seq_before(c->seq, g->recv_seq)) {
        weft_slab_cursor_t cur = {0, 0};
        weft__unexpected_t *u;
        while ((u = weft_slab_next(&ctx->unexpected, &cur))) {
            if (u->match.source != g->peer || u->seq != c->seq || u->kind == WEFT__UNEXP_LOCAL)
                continue;
            weft__match_lock(ctx);
            bool inside = weft__match_msg_inside(&u->match);
            if (inside)
                weft__match_remove_msg(ctx->match, &u->match);
            weft__match_unlock(ctx);
            if (inside) {
                if (u->kind != WEFT_CHUNK_RDV)
                    weft__proto_credit_return(g, weft__eager_cost(u->length));
                weft__unexpected_free(ctx, u);
                taken = true;
            }
            break;
        }
    }
    r->kind = WEFT_CHUNK_CANCEL_REPLY;
    r->hdr_len = (uint16_t)weft__wire_put_cancel_reply(r->hdr, c->sreq, taken);
    weft__proto_queue_ctrl(g, r);
    return WEFT_OK;
}

static int on_cancel_reply(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    struct weft_request *req = weft__handle_get(&ctx->handles, c->sreq);
    if (!req || req->kind != WEFT_REQ_SEND || req->gate != g || req->cancel != WEFT_CANCEL_ASKED)
        return WEFT_EPROTO;
    ctx->counters.chunks_received++;
    req->cancel = WEFT_CANCEL_NONE;
    if (c->taken)
        weft__request_complete(ctx, req, WEFT_ECANCELED);
    else
        weft__proto_send_release(ctx, req, WEFT_OK);
    return WEFT_OK;
}

static int decode_cancel(const uint8_t *p, weft__wire_chunk_t *c, uint64_t *payload)
{
    c->sreq = weft__le64_get(p + 8);
    uint32_t word = weft__le32_get(p + 16);
    /* Only a request with an id can be answered; a reply is yes or no. */
    if (c->sreq == 0 || weft__le32_get(p + 20) != 0 ||
        (c->kind == WEFT_CHUNK_CANCEL_REPLY && word > 1))
        return WEFT_EPROTO;
    if (c->kind == WEFT_CHUNK_CANCEL)
        c->seq = word;
    else
        c->taken = word == 1;
    return WEFT_OK;
}

const weft__kind_t weft__kind_cancel = {
    .name = "CANCEL", .hdr = WEFT_WIRE_CANCEL_HDR, .decode = decode_cancel, .handle = on_cancel};
const weft__kind_t weft__kind_cancel_reply = {.name = "CANCEL_REPLY",
                                              .hdr = WEFT_WIRE_CANCEL_HDR,
                                              .decode = decode_cancel,
                                              .handle = on_cancel_reply};
