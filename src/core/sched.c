/* The scheduler: when a gate's track is idle, ask the gate's strategy to build
 * the next packet from the backlog, hand it to the driver, and commit what was
 * taken only once the driver accepted it (NewMadeleine's try-and-commit). */
#include <stddef.h>
#include <string.h>

#include "core/core_int.h"

static const uint8_t zero_pad[WEFT_WIRE_ALIGN];

_Static_assert(offsetof(weft__packet_t, stage) ==
                   offsetof(weft__packet_t, pkt_hdr) + WEFT_WIRE_PKT_HDR,
               "the staging area follows the packet header");

int weft__chunk_class(uint8_t kind)
{
    switch (kind) {
    case WEFT_CHUNK_EAGER:
    case WEFT_CHUNK_EAGER_SYNC:
    case WEFT_CHUNK_RDV:
        return WEFT_CLASS_MESSAGE;
    case WEFT_CHUNK_RDATA:
        return WEFT_CLASS_RDATA;
    default:
        return WEFT_CLASS_CTRL;
    }
}

/* The backlog is kept as three lists: control chunks, RDATA streams,
 * messages, each in queuing order. A strategy finds each class without
 * walking the others (a long run of messages never hides an ACK, thousands of
 * rendezvous streams in progress never slow the queuing of one more), and the
 * order within a class, which the protocol needs, is kept. */
void weft__chunk_queue(weft__gate_t *g, weft__chunk_t *c, bool front)
{
    weft_list_t *l = &g->backlog[weft__chunk_class(c->kind)];
    if (front)
        weft_list_push_front(l, &c->link);
    else
        weft_list_push_back(l, &c->link);
    c->queued = true;
}

/* Describe bytes [off, off+len) of an iovec with at most max entries at out.
 * Returns the number of entries, or -1 if more are needed. */
static int iov_slice(const struct iovec *iov, int iovcnt, uint64_t off, uint64_t len,
                     struct iovec *out, int max)
{
    int n = 0;
    for (int i = 0; i < iovcnt && len; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        size_t take = WEFT_MIN(iov[i].iov_len - off, len);
        if (n == max)
            return -1;
        out[n].iov_base = (char *)iov[i].iov_base + off;
        out[n].iov_len = take;
        n++;
        len -= take;
        off = 0;
    }
    return n;
}

/* Copy the first len bytes of an iovec to dst. */
static void iov_copy(const struct iovec *iov, int iovcnt, uint8_t *dst, uint64_t len)
{
    for (int i = 0; i < iovcnt && len; i++) {
        size_t take = WEFT_MIN(iov[i].iov_len, len);
        memcpy(dst, iov[i].iov_base, take);
        dst += take;
        len -= take;
    }
}

/* How many of the len bytes at off fit in at most max entries of an iovec. */
static uint64_t iov_fit(const struct iovec *iov, int iovcnt, uint64_t off, uint64_t len, int max)
{
    uint64_t got = 0;
    for (int i = 0; i < iovcnt && got < len && max > 0; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        got += WEFT_MIN(iov[i].iov_len - off, len - got);
        off = 0;
        max--;
    }
    return got;
}

bool weft__packet_add(weft__gate_t *g, weft__packet_t *pkt, weft__chunk_t *c)
{
    if (pkt->nchunks == WEFT_PKT_MAX_CHUNKS)
        return false;
    if (pkt->nchunks == 0) {
        pkt->iov[0].iov_base = pkt->pkt_hdr;
        pkt->iov[0].iov_len = WEFT_WIRE_PKT_HDR;
        pkt->iovcnt = 1;
        pkt->length = WEFT_WIRE_PKT_HDR;
        pkt->stage_used = 0;
    }
    size_t room = g->caps.max_packet - pkt->length;
    int max_iov = WEFT_MIN(g->caps.max_iov, WEFT_PKT_MAX_IOV) - pkt->iovcnt;
    const void *hdr = c->hdr;
    size_t hdr_len = c->hdr_len;
    uint64_t off = 0, len = c->length;
    int i = pkt->nchunks;

    if (c->kind == WEFT_CHUNK_RDATA) {
        /* A fragment as large as the room left allows, cut at 8 bytes so the
         * next fragment stays aligned. */
        if (room < WEFT_WIRE_RDATA_HDR + WEFT_WIRE_ALIGN)
            return false;
        off = c->offset;
        len = WEFT_MIN(c->length - off, (room - WEFT_WIRE_RDATA_HDR) & ~(uint64_t)7);
        len = WEFT_MIN(len, g->rdata_max);
        /* A scattered buffer: the fragment ends where the iovec entries the
         * packet has room for end. */
        if (max_iov > 2)
            len = iov_fit(c->iov, c->iovcnt, off, len, max_iov - 2);
        if (len == 0 && c->length != off)
            return false;
        hdr = pkt->rdata_hdr[i];
        hdr_len = weft__wire_put_rdata(pkt->rdata_hdr[i], c->rreq, off, len);
        pkt->frag_end[i] = off + len;
    } else if (c->kind == WEFT_CHUNK_CREDIT) {
        weft__wire_put_credit(c->hdr, g->credit_owed);
    }
    size_t total = weft__wire_chunk_size(hdr_len, len);
    if (total > room)
        return false;
    if (c->kind != WEFT_CHUNK_RDATA && len <= WEFT_PKT_COPY_MAX &&
        pkt->stage_used + total <= WEFT_PKT_STAGE) {
        /* A small chunk is copied whole (header, payload, padding) into the
         * packet's staging area, right behind the previous copy: a run of
         * small chunks is one iovec entry (the packet header's, which sits
         * just before the area), not two or three each. */
        uint8_t *dst = pkt->stage + pkt->stage_used;
        struct iovec *last = &pkt->iov[pkt->iovcnt - 1];
        bool joins = (uint8_t *)last->iov_base + last->iov_len == dst;
        if (!joins && max_iov < 1)
            return false;
        memcpy(dst, hdr, hdr_len);
        if (len)
            iov_copy(c->iov, c->iovcnt, dst + hdr_len, len);
        memset(dst + hdr_len + len, 0, total - hdr_len - len);
        if (joins) {
            last->iov_len += total;
        } else {
            pkt->iov[pkt->iovcnt].iov_base = dst;
            pkt->iov[pkt->iovcnt].iov_len = total;
            pkt->iovcnt++;
        }
        pkt->stage_used += total;
        pkt->length += total;
        pkt->chunks[i] = c;
        pkt->nchunks++;
        return true;
    }
    if (max_iov < 2)
        return false;
    struct iovec *v = &pkt->iov[pkt->iovcnt];
    v[0].iov_base = (void *)hdr;
    v[0].iov_len = hdr_len;
    int n = 1;
    if (len) {
        int m = iov_slice(c->iov, c->iovcnt, off, len, v + 1, max_iov - 2);
        if (m < 0)
            return false;
        n += m;
    }
    size_t pad = total - hdr_len - len;
    if (pad) {
        v[n].iov_base = (void *)zero_pad;
        v[n].iov_len = pad;
        n++;
    }
    pkt->iovcnt += n;
    pkt->length += total;
    pkt->chunks[i] = c;
    pkt->nchunks++;
    return true;
}

/* The driver took the packet: unlink what was taken, advance fragments, and
 * count it (a packet still in flight counts as sent). */
static void commit(weft__gate_t *g, weft__packet_t *pkt)
{
    weft__gate_stats_t *st = &g->stats;
    WEFT_TRACE5(WEFT_TR_PACKET, WEFT_TR_I, g->peer, pkt->nchunks, pkt->length,
                (uintptr_t)g->strategy->name, (uintptr_t)g->drv_ops->name);
    st->packets_sent++;
    st->chunks_sent += (uint64_t)pkt->nchunks;
    st->wire_bytes_sent += pkt->length;
    if ((uint64_t)pkt->nchunks > st->max_chunks)
        st->max_chunks = (uint64_t)pkt->nchunks;
    for (int i = 0; i < pkt->nchunks; i++) {
        weft__chunk_t *c = pkt->chunks[i];
        switch (c->kind) {
        case WEFT_CHUNK_EAGER:
        case WEFT_CHUNK_EAGER_SYNC:
            st->messages_sent++;
            st->msg_bytes_sent += c->length;
            break;
        case WEFT_CHUNK_RDV:
            st->messages_sent++;
            st->rdv_sent++;
            st->msg_bytes_sent += c->req ? c->req->length : 0;
            break;
        case WEFT_CHUNK_RDATA:
            st->rdata_bytes_sent += pkt->frag_end[i] - c->offset;
            break;
        default:
            st->ctrl_sent++;
            break;
        }
        if (c->kind == WEFT_CHUNK_RDATA) {
            c->offset = pkt->frag_end[i];
            if (c->offset < c->length)
                continue;
        } else if (c->kind == WEFT_CHUNK_CREDIT) {
            g->credit_owed = 0;
        }
        weft__chunk_unqueue(c);
    }
}

void weft__gate_mark_pending(weft__gate_t *g)
{
    struct weft_ctx *ctx = g->ctx;
    if (g->dead)
        return;
    weft_lock_acquire(&ctx->pending_lock);
    if (!g->on_pending) {
        weft_list_push_back(&ctx->pending_gates, &g->pending_link);
        g->on_pending = true;
        atomic_store_explicit(&ctx->pending_any, true, memory_order_relaxed);
    }
    weft_lock_release(&ctx->pending_lock);
}

void weft__sched_hold_start(weft__gate_t *g)
{
    /* Until the next progress pass, submissions join the backlog. */
    if (g->hold_skip) {
        g->hold_skip--;
    } else {
        g->held = true;
        weft__gate_mark_pending(g);
    }
}

/* A packet left: start a hold where the strategy holds. */
static inline void hold_after(weft__gate_t *g)
{
    g->held_count = 0;
    if (g->strategy->hold)
        weft__sched_hold_start(g);
}

/* The driver took the packet (at once or in flight): count it, and start a
 * hold where the strategy holds. */
static void taken(weft__gate_t *g, weft__packet_t *pkt)
{
    if (g->peer == g->ctx->rank && g->ctx->self_driver >= 0)
        g->ctx->self_pending = true;
    commit(g, pkt);
    hold_after(g);
}

/* What follows the driver's answer rc (not WEFT_EAGAIN) to a packet. */
static void sent(weft__gate_t *g, weft__packet_t *pkt, int rc)
{
    taken(g, pkt);
    if (rc == WEFT_INPROGRESS) {
        g->busy = true;
        return;
    }
    weft__proto_chunks_sent(g, pkt, rc);
}

/* Hand a built packet to the driver and account for the answer. Returns 1 when
 * the driver took it, 0 when it had no room (the caller keeps the chunks). */
static int send_packet(weft__gate_t *g, weft__packet_t *pkt)
{
    int rc = g->drv_ops->send(g->track, pkt->iov, pkt->iovcnt, pkt);
    if (rc == WEFT_EAGAIN)
        return 0;
    sent(g, pkt, rc);
    return 1;
}

/* The lone-message path. With nothing waiting and the track idle, every
 * strategy would build the same packet: this chunk alone. So it is built here
 * directly (packet header written just before the chunk header: one iovec
 * entry for both) and the strategy is not consulted. */
int weft__sched_lone_iov(struct iovec iov[3], const void *hdr, size_t hlen, const void *payload,
                         uint64_t len, size_t total)
{
    iov[0] = (struct iovec){(void *)hdr, hlen};
    int n = 1;
    if (len)
        iov[n++] = (struct iovec){(void *)payload, len};
    if (total > hlen + len)
        iov[n++] = (struct iovec){(void *)zero_pad, total - hlen - len};
    return n;
}

static weft__packet_t *lone_packet(weft__gate_t *g, weft__chunk_t *c)
{
    weft__packet_t *pkt = &g->packet;
    uint64_t len = c->length;
    size_t hlen = WEFT_WIRE_PKT_HDR + c->hdr_len;
    size_t total = weft__wire_chunk_size(hlen, len);
    weft__wire_put_packet(c->lone_pkt_hdr, 1, total);
    pkt->iovcnt = weft__sched_lone_iov(pkt->iov, c->lone_pkt_hdr, hlen,
                                       len ? c->iov[0].iov_base : NULL, len, total);
    pkt->length = total;
    pkt->chunks[0] = c;
    pkt->nchunks = 1;
    return pkt;
}

/* The chunk is not in the backlog (commit's unlink of it is a no-op); with no
 * room it joins the backlog like any other. */
static void lone_full(weft__gate_t *g, weft__chunk_t *c)
{
    weft__chunk_queue(g, c, false);
    weft__gate_mark_pending(g);
}

void weft__sched_submit(weft__gate_t *g, weft__chunk_t *c)
{
    if (g->held) {
        /* A packet left since the last progress pass: more may be coming,
         * so this one waits to share a packet. A packet's worth of chunks
         * leaves without waiting for the pass (a thread that only submits
         * still sends full packets, and the backlog stays bounded). */
        weft__chunk_queue(g, c, false);
        g->stats.held++;
        if (++g->held_count == 1)
            weft__progress_wanted(g->ctx); /* a sleeping progress thread makes the pass */
        if (g->held_count >= WEFT_PKT_MAX_CHUNKS)
            weft__sched_gate(g);
        return;
    }
    if (g->busy || !weft__backlog_empty(g) || (c->length && c->iovcnt != 1)) {
        weft__chunk_queue(g, c, false);
        weft__sched_gate(g);
        return;
    }
    if (!send_packet(g, lone_packet(g, c)))
        lone_full(g, c);
}

int weft__sched_send_fast(weft__gate_t *g, weft__chunk_t *c)
{
    weft__packet_t *pkt = lone_packet(g, c);
    int rc = g->drv_ops->send(g->track, pkt->iov, pkt->iovcnt, pkt);
    if (WEFT_LIKELY(rc == WEFT_OK)) {
        taken(g, pkt);
        return 1;
    }
    if (rc == WEFT_EAGAIN)
        lone_full(g, c);
    else
        sent(g, pkt, rc);
    return 0;
}

int weft__sched_gate(weft__gate_t *g)
{
    int events = 0;
    while (!g->busy && !g->dead && !weft__backlog_empty(g)) {
        weft__packet_t *pkt = &g->packet;
        pkt->nchunks = 0;
        if (g->strategy->build(g, pkt) <= 0) {
            /* Not even the first chunk fits an empty packet: it never will.
             * Fail it rather than block the gate for ever. */
            weft__chunk_t *c = weft__backlog_first(g);
            weft__chunk_unqueue(c);
            weft__proto_chunk_failed(g, c, WEFT_EUNSUPPORTED);
            events++;
            continue;
        }
        weft__wire_put_packet(pkt->pkt_hdr, (uint16_t)pkt->nchunks, pkt->length);
        if (!send_packet(g, pkt)) {
            /* The track is full: the progress loop retries this gate. */
            weft__gate_mark_pending(g);
            return events;
        }
        events++;
    }
    return events;
}

/* Learn whether holding pays on this gate. A hold that gathered nothing cost
 * nothing (a ping-pong: the answer comes after a progress pass). One that
 * gathered two or more messages saved packets. One that gathered exactly one
 * only delayed it: a thread sending and waiting message after message (a loop
 * of blocking sends). After HOLD_MISSES such holds in a row the gate stops
 * holding for HOLD_SKIP packets, then tries again, so that pattern pays for
 * the hold about once in HOLD_SKIP messages instead of every time. */
#define HOLD_MISSES 2
#define HOLD_SKIP   32

static void hold_end(weft__gate_t *g)
{
    g->held = false;
    if (g->held_count != 1) {
        if (g->held_count > 1)
            g->hold_misses = 0;
        return;
    }
    if (++g->hold_misses >= HOLD_MISSES) {
        g->hold_misses = 0;
        g->hold_skip = HOLD_SKIP;
    }
}

WEFT_NOINLINE int weft__sched_pending(struct weft_ctx *ctx)
{
    int events = 0;
    /* Take the list as it is now: a gate that is still full goes back on the
     * context's list for the next round, not on this one. The gates are
     * taken off one at a time under the list's lock: a gate still on todo
     * keeps on_pending, so nobody links it elsewhere meanwhile, and one taken
     * off may be marked again (by a sender on its lock) while it is served. */
    weft_list_t todo;
    weft_lock_acquire(&ctx->pending_lock);
    if (weft_list_empty(&ctx->pending_gates)) {
        weft_lock_release(&ctx->pending_lock);
        return 0;
    }
    todo = ctx->pending_gates;
    todo.next->prev = &todo;
    todo.prev->next = &todo;
    weft_list_init(&ctx->pending_gates);
    atomic_store_explicit(&ctx->pending_any, false, memory_order_relaxed);
    for (;;) {
        if (weft_list_empty(&todo)) {
            weft_lock_release(&ctx->pending_lock);
            return events;
        }
        weft__gate_t *g = weft_list_entry(todo.next, weft__gate_t, pending_link);
        weft_list_remove(&g->pending_link);
        g->on_pending = false;
        weft_lock_release(&ctx->pending_lock);
        weft__gate_lock(g);
        /* A progress pass ends the hold: what gathered meanwhile leaves now. */
        if (g->held)
            hold_end(g);
        events += weft__sched_gate(g);
        weft__gate_unlock(g);
        weft_lock_acquire(&ctx->pending_lock);
    }
}
