/* Wire encode and decode. The decoder is the one place where bytes from the
 * network become engine values, so it checks everything: magic, version, the
 * packet length against what arrived, each chunk's kind, reserved fields, header
 * and payload bounds, and that the chunk count matches the bytes exactly. */
#include "core/wire.h"
#include "core/kinds.h"
#include "weft/weft.h"

size_t weft__wire_chunk_hdr_size(uint8_t kind)
{
    const weft__kind_t *k = weft__kind_get(kind);
    return k ? k->hdr : 0;
}

size_t weft__wire_put_packet(uint8_t *buf, uint16_t nchunks, uint64_t length)
{
    weft__le32_put(buf, WEFT_WIRE_MAGIC);
    buf[4] = WEFT_WIRE_VERSION;
    buf[5] = 0;
    weft__le16_put(buf + 6, nchunks);
    weft__le64_put(buf + 8, length);
    return WEFT_WIRE_PKT_HDR;
}

static void put_common(uint8_t *buf, uint8_t kind)
{
    buf[0] = kind;
    buf[1] = 0;
    buf[2] = buf[3] = 0;
}

static void put_msg(uint8_t *buf, uint8_t kind, uint32_t seq, uint64_t tag, uint32_t comm,
                    uint64_t len)
{
    put_common(buf, kind);
    weft__le32_put(buf + 4, seq);
    weft__le64_put(buf + 8, tag);
    weft__le32_put(buf + 16, comm);
    weft__le32_put(buf + 20, 0);
    weft__le64_put(buf + 24, len);
}

size_t weft__wire_put_eager(uint8_t *buf, bool sync, uint32_t seq, uint64_t tag, uint32_t comm,
                            uint64_t len, uint64_t sreq)
{
    put_msg(buf, sync ? WEFT_CHUNK_EAGER_SYNC : WEFT_CHUNK_EAGER, seq, tag, comm, len);
    if (!sync)
        return WEFT_WIRE_EAGER_HDR;
    weft__le64_put(buf + 32, sreq);
    return WEFT_WIRE_EAGER_SYNC_HDR;
}

size_t weft__wire_put_rdv(uint8_t *buf, uint32_t seq, uint64_t tag, uint32_t comm, uint64_t len,
                          uint64_t sreq, const weft_rkey_t *rkey)
{
    put_msg(buf, WEFT_CHUNK_RDV, seq, tag, comm, len);
    weft__le64_put(buf + 32, sreq);
    uint32_t klen = rkey ? rkey->len : 0;
    weft__le32_put(buf + 40, klen);
    weft__le32_put(buf + 44, 0);
    memset(buf + 48, 0, WEFT_RKEY_MAX);
    if (klen)
        memcpy(buf + 48, rkey->bytes, klen);
    return WEFT_WIRE_RDV_HDR;
}

size_t weft__wire_put_rtr(uint8_t *buf, uint64_t sreq, uint64_t rreq, uint64_t len)
{
    put_common(buf, WEFT_CHUNK_RTR);
    weft__le32_put(buf + 4, 0);
    weft__le64_put(buf + 8, sreq);
    weft__le64_put(buf + 16, rreq);
    weft__le64_put(buf + 24, len);
    return WEFT_WIRE_RTR_HDR;
}

size_t weft__wire_put_rdata(uint8_t *buf, uint64_t rreq, uint64_t offset, uint64_t len)
{
    put_common(buf, WEFT_CHUNK_RDATA);
    weft__le32_put(buf + 4, 0);
    weft__le64_put(buf + 8, rreq);
    weft__le64_put(buf + 16, offset);
    weft__le64_put(buf + 24, len);
    return WEFT_WIRE_RDATA_HDR;
}

size_t weft__wire_put_ack(uint8_t *buf, uint64_t sreq)
{
    put_common(buf, WEFT_CHUNK_ACK);
    weft__le32_put(buf + 4, 0);
    weft__le64_put(buf + 8, sreq);
    return WEFT_WIRE_ACK_HDR;
}

size_t weft__wire_put_credit(uint8_t *buf, uint64_t bytes)
{
    put_common(buf, WEFT_CHUNK_CREDIT);
    weft__le32_put(buf + 4, 0);
    weft__le64_put(buf + 8, bytes);
    return WEFT_WIRE_CREDIT_HDR;
}

size_t weft__wire_put_coop(uint8_t *buf, uint64_t sreq, uint32_t cell, uint32_t gen, uint64_t len,
                           uint64_t piece, const weft_rkey_t *rkey)
{
    put_common(buf, WEFT_CHUNK_COOP);
    weft__le32_put(buf + 4, 0);
    weft__le64_put(buf + 8, sreq);
    weft__le32_put(buf + 16, cell);
    weft__le32_put(buf + 20, gen);
    weft__le64_put(buf + 24, len);
    weft__le64_put(buf + 32, piece);
    weft__le32_put(buf + 40, rkey->len);
    weft__le32_put(buf + 44, 0);
    memset(buf + 48, 0, WEFT_RKEY_MAX);
    memcpy(buf + 48, rkey->bytes, rkey->len);
    return WEFT_WIRE_COOP_HDR;
}

/* CANCEL and CANCEL_REPLY share a layout: a send's id and one 32-bit word. */
static size_t put_cancel(uint8_t *buf, uint8_t kind, uint64_t sreq, uint32_t word)
{
    put_common(buf, kind);
    weft__le32_put(buf + 4, 0);
    weft__le64_put(buf + 8, sreq);
    weft__le32_put(buf + 16, word);
    weft__le32_put(buf + 20, 0);
    return WEFT_WIRE_CANCEL_HDR;
}

size_t weft__wire_put_cancel(uint8_t *buf, uint64_t sreq, uint32_t seq)
{
    return put_cancel(buf, WEFT_CHUNK_CANCEL, sreq, seq);
}

size_t weft__wire_put_cancel_reply(uint8_t *buf, uint64_t sreq, bool taken)
{
    return put_cancel(buf, WEFT_CHUNK_CANCEL_REPLY, sreq, taken ? 1 : 0);
}

size_t weft__wire_put_short(uint8_t *buf, uint32_t seq, uint64_t tag, uint32_t comm)
{
    weft__le16_put(buf, WEFT_WIRE_SHORT_MAGIC);
    buf[2] = WEFT_WIRE_VERSION;
    buf[3] = 0;
    weft__le32_put(buf + 4, seq);
    weft__le64_put(buf + 8, tag);
    weft__le32_put(buf + 16, comm);
    return WEFT_WIRE_SHORT_HDR;
}

int weft__wire_open(const void *buf, size_t len, weft__wire_iter_t *it)
{
    const uint8_t *p = buf;
    it->short_form = p && len >= 1 && p[0] == (uint8_t)WEFT_WIRE_SHORT_MAGIC;
    if (it->short_form) {
        /* Checked whole by weft__wire_next. */
        it->remaining = 1;
        it->pos = p;
        it->end = p + len;
        return WEFT_OK;
    }
    if (!p || len < WEFT_WIRE_PKT_HDR)
        return WEFT_EPROTO;
    if (weft__le32_get(p) != WEFT_WIRE_MAGIC || p[4] != WEFT_WIRE_VERSION || p[5] != 0)
        return WEFT_EPROTO;
    uint64_t plen = weft__le64_get(p + 8);
    if (plen != len)
        return WEFT_EPROTO;
    it->remaining = weft__le16_get(p + 6);
    it->pos = p + WEFT_WIRE_PKT_HDR;
    it->end = p + len;
    return WEFT_OK;
}

int weft__wire_next(weft__wire_iter_t *it, weft__wire_chunk_t *c)
{
    size_t avail = (size_t)(it->end - it->pos);
    if (it->remaining == 0)
        return avail == 0 ? 0 : WEFT_EPROTO;
    if (it->short_form) {
        memset(c, 0, sizeof *c);
        if (!weft__wire_short(it->pos, avail, c))
            return WEFT_EPROTO;
        it->remaining = 0;
        it->pos = it->end;
        return 1;
    }
    if (avail < 4)
        return WEFT_EPROTO;
    const uint8_t *p = it->pos;
    uint8_t kind = p[0];
    const weft__kind_t *k = weft__kind_get(kind);
    size_t hdr = k ? k->hdr : 0;
    /* Flags: only a kind that has them (RDV: the number of rail keys beyond
     * the first). */
    if (hdr == 0 || hdr > avail || (p[1] != 0 && !k->flags) || p[1] >= WEFT_WIRE_RDV_KEYS_MAX ||
        weft__le16_get(p + 2) != 0 || (!k->message && weft__le32_get(p + 4) != 0))
        return WEFT_EPROTO;
    /* Only the fields every kind may leave unset are cleared (the rkey's bytes
     * are read only up to its length). */
    c->kind = kind;
    c->flags = p[1];
    c->seq = c->comm = 0;
    c->tag = c->len = c->sreq = c->rreq = c->offset = c->bytes = c->piece = 0;
    c->cell = c->gen = 0;
    c->taken = false;
    c->rkey.len = 0;
    c->payload = NULL;
    uint64_t payload = 0;
    if (k->decode(p, c, &payload))
        return WEFT_EPROTO;
    /* Payload must fit in what arrived; compare without overflowing. */
    if (payload > avail - hdr)
        return WEFT_EPROTO;
    size_t total = weft__wire_chunk_size(hdr, payload);
    if (total > avail)
        return WEFT_EPROTO;
    c->payload = payload ? p + hdr : NULL;
    it->pos = p + total;
    it->remaining--;
    return 1;
}
