/* Rendezvous without a staging copy: exposed regions and rget over a stream.
 *
 * expose() enters a buffer in the driver's region table; the rkey names its
 * slot, the slot's generation and the length, never an address. rget() sends a
 * GET frame (slot, generation, offset, length, op id); the peer's poll() checks
 * it against its table and answers with a DATA frame whose payload is written
 * with sendmsg() straight from the exposed buffer; our poll() reads that
 * payload with readv() straight into the rget's iovec (tcp_conn.c). A GET
 * that names no live region, or bytes outside it, is a protocol error: the
 * peer that sent it is dropped. */
#include <stdlib.h>
#include <string.h>

#include "drivers/tcp/tcp_int.h"
#include "util/log.h"

int weft__tcp_expose(weft_driver_t *d, const void *buf, size_t len, weft_rkey_t *rkey)
{
    if (len > UINT32_MAX)
        return WEFT_EUNSUPPORTED; /* one DATA frame carries at most 4 GiB - 1 */
    /* Free slots are a list threaded through the table, so a flood of
     * outstanding rendezvous sends costs O(1) per exposure, not a scan. */
    if (d->free_region == 0) {
        if (d->nregions > UINT32_MAX / 2)
            return WEFT_ENOMEM;
        uint32_t n = d->nregions ? d->nregions * 2 : 16;
        tcp_region_t *r = realloc(d->regions, sizeof *r * n);
        if (!r)
            return WEFT_ENOMEM;
        memset(r + d->nregions, 0, sizeof *r * (n - d->nregions));
        for (uint32_t k = n; k-- > d->nregions;) {
            r[k].next_free = d->free_region;
            d->free_region = k + 1;
        }
        d->regions = r;
        d->nregions = n;
    }
    uint32_t i = d->free_region - 1;
    tcp_region_t *r = &d->regions[i];
    d->free_region = r->next_free;
    r->buf = buf;
    r->len = len;
    r->used = true;
    r->gen++;
    if (r->gen == 0)
        r->gen = 1;
    rkey->len = TCP_RKEY_LEN;
    tcp_le32_put(rkey->bytes, i);
    tcp_le32_put(rkey->bytes + 4, r->gen);
    tcp_le64_put(rkey->bytes + 8, len);
    return WEFT_OK;
}

void weft__tcp_unexpose(weft_driver_t *d, const weft_rkey_t *rkey)
{
    if (rkey->len != TCP_RKEY_LEN)
        return;
    uint32_t slot = tcp_le32_get(rkey->bytes), gen = tcp_le32_get(rkey->bytes + 4);
    if (slot < d->nregions && d->regions[slot].used && d->regions[slot].gen == gen) {
        d->regions[slot].used = false;
        d->regions[slot].next_free = d->free_region;
        d->free_region = slot + 1;
    }
}

int weft__tcp_rget(weft_track_t *t, const struct iovec *local, int iovcnt, const weft_rkey_t *rkey,
                   uint64_t offset, size_t len, void *cookie)
{
    if (t->lost)
        return WEFT_EPEERDEAD;
    if (!t->up)
        return WEFT_EAGAIN;
    /* Check what we can here: the peer checks again against its own table. */
    if (rkey->len != TCP_RKEY_LEN || iovcnt < 0)
        return WEFT_EINVAL;
    uint64_t klen = tcp_le64_get(rkey->bytes + 8);
    size_t room = 0;
    for (int i = 0; i < iovcnt; i++)
        room += local[i].iov_len;
    if (offset > klen || len > klen - offset || room < len || len > UINT32_MAX)
        return WEFT_EINVAL;
    tcp_getop_t *g = malloc(sizeof *g);
    if (!g)
        return WEFT_ENOMEM;
    g->iov = iovcnt <= (int)WEFT_ARRAY_SIZE(g->iov_inline)
                 ? g->iov_inline
                 : malloc(sizeof *g->iov * (size_t)iovcnt);
    if (!g->iov) {
        free(g);
        return WEFT_ENOMEM;
    }
    /* Only the entries the data reaches, so the reader never walks past them. */
    int n = 0;
    for (size_t want = len; n < iovcnt && want; n++) {
        g->iov[n] = local[n];
        if (g->iov[n].iov_len > want)
            g->iov[n].iov_len = want;
        want -= g->iov[n].iov_len;
    }
    g->iovcnt = n;
    g->id = ++t->next_get_id;
    g->len = len;
    g->cookie = cookie;
    tcp_get_t body = {.slot = tcp_le32_get(rkey->bytes),
                      .gen = tcp_le32_get(rkey->bytes + 4),
                      .offset = offset,
                      .len = len};
    tcp_txop_t *op = &g->tx;
    memset(op, 0, sizeof *op);
    op->kind = TCP_FRAME_GET;
    weft__tcp_frame_encode(op->hdr, TCP_FRAME_GET, TCP_GET_BODY, g->id);
    weft__tcp_get_encode(op->hdr + TCP_FRAME_HDR, &body);
    op->hdr_len = TCP_FRAME_HDR + TCP_GET_BODY;
    weft_list_push_back(&t->gets, &g->link);
    /* A zero-length get still makes the round trip: the peer checks the key. */
    weft__tcp_tx_queue(t, op);
    return WEFT_INPROGRESS;
}

int weft__tcp_serve_get(weft_driver_t *d, weft_track_t *t, uint64_t id, const tcp_get_t *g)
{
    if (g->slot >= d->nregions)
        return WEFT_EPROTO;
    tcp_region_t *r = &d->regions[g->slot];
    if (!r->used || r->gen != g->gen || g->offset > r->len || g->len > r->len - g->offset)
        return WEFT_EPROTO;
    tcp_txop_t *op = malloc(sizeof *op);
    if (!op)
        return WEFT_ENOMEM;
    memset(op, 0, sizeof *op);
    op->kind = TCP_FRAME_DATA;
    op->heap = true;
    weft__tcp_frame_encode(op->hdr, TCP_FRAME_DATA, (uint32_t)g->len, id);
    op->hdr_len = TCP_FRAME_HDR;
    op->one.iov_base = (void *)(r->buf + g->offset);
    op->one.iov_len = g->len;
    op->iov = &op->one;
    op->iovcnt = 1;
    weft__tcp_tx_queue(t, op);
    return WEFT_OK;
}
