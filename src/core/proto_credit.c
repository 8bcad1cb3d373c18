/* Eager flow control: each peer may have at most WEFT_EAGER_CREDITS bytes of
 * eager data outstanding at a receiver (proto.c); the receiver hands bytes
 * back as messages are consumed, in CREDIT chunks. */
#include "core/core_int.h"
#include "core/kinds.h"

void weft__proto_nudge(weft__gate_t *g)
{
    /* credit_owed, the credit chunk's queued and dead change under the
     * engine lock, which the caller holds: only queuing takes the gate's. */
    if (g->credit_chunk.queued || g->dead)
        return;
    weft__gate_lock(g);
    weft__chunk_queue(g, &g->credit_chunk, false);
    weft__gate_mark_pending(g);
    weft__gate_unlock(g);
}

static int decode_credit(const uint8_t *p, weft__wire_chunk_t *c, uint64_t *payload)
{
    c->bytes = weft__le64_get(p + 8);
    return WEFT_OK;
}

static int on_credit(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    /* More credit than was ever granted is a lie. */
    int rc = WEFT_OK;
    weft__gate_lock(g);
    if (c->bytes > g->peer_window || (uint64_t)g->send_credit + c->bytes > g->peer_window)
        rc = WEFT_EPROTO;
    else
        g->send_credit += (int64_t)c->bytes;
    weft__gate_unlock(g);
    return rc;
}

const weft__kind_t weft__kind_credit = {
    .name = "CREDIT", .hdr = WEFT_WIRE_CREDIT_HDR, .decode = decode_credit, .handle = on_credit};
