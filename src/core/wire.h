/* The wire format: what travels between two engines.
 *
 * A packet is a 16-byte header followed by a run of chunks:
 *
 *   packet header   u32 magic "WEFT" | u8 version | u8 flags (0) | u16 nchunks
 *                   | u64 length (whole packet, header included)
 *
 * Every chunk starts with u8 kind | u8 flags | u16 reserved (0), has a fixed
 * header size per kind, may carry a payload, and is padded to 8 bytes. All
 * fields are fixed-width little-endian; every length is 64-bit. A decoder
 * checks every field against the bytes actually received and rejects the whole
 * packet (WEFT_EPROTO) on the first inconsistency: nothing from the network is
 * trusted.
 *
 *   EAGER      seq u32 | tag u64 | comm u32 | rsv u32 | len u64 | payload      (32 + len)
 *   EAGER_SYNC as EAGER, then sreq u64 before the payload: ACK wanted    (40 + len)
 *   RDV        seq | tag | comm | rsv | len u64 | sreq u64 | rkey_len u32 | rsv u32
 *              | rkey[32]; flags = rail keys in rkey after the first        (80)
 *   RTR        rsv u32 | sreq u64 | rreq u64 | len u64: "send me len bytes"  (32)
 *   RDATA      rsv u32 | rreq u64 | offset u64 | len u64 | payload         (32 + len)
 *   ACK        rsv u32 | sreq u64: the receiver is done with send sreq      (16)
 *   CREDIT     rsv u32 | bytes u64: eager credit returned to the sender     (16)
 *   COOP       rsv u32 | sreq u64 | cell u32 | gen u32 | len u64 | piece u64 | rkey_len u32
 *              | rsv u32 | rkey[32]: "move the len bytes of send sreq into my buffer rkey,
 *              pieces of piece bytes claimed through shared cell (cell, gen)"  (80)
 *   CANCEL     rsv u32 | sreq u64 | seq u32 | rsv u32: "take back message seq, sent by
 *              request sreq, if no receive has matched it yet"             (24)
 *   CANCEL_REPLY rsv u32 | sreq u64 | taken u32 (0 or 1) | rsv u32: the answer to a
 *              CANCEL: 1 = removed unmatched (the receiver never sees it), 0 = matched (24)
 *
 * A message alone in its packet may instead take the *short form*, a packet
 * of one EAGER message in 20 bytes of header and no padding:
 *
 *   short packet    u16 magic "ws" | u8 version | u8 flags (0) | u32 seq | u64 tag
 *                   | u32 comm | payload: the packet's length less 20 bytes
 *
 * The copying drivers (shm, ofi) carry a packet's exact length, and a small
 * message's bytes decide how many cache lines (or, over libfabric's shm
 * provider, inline command lines) cross between cores: 28 bytes for an 8-byte
 * message instead of 56. Senders use it for payloads up to WEFT_WIRE_SHORT_MAX;
 * decoders accept it whatever its length.
 *
 * Version 3 added CANCEL and CANCEL_REPLY; version 4 the short form.
 */
#ifndef WEFT_WIRE_H
#define WEFT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "drivers/driver.h"

#define WEFT_WIRE_MAGIC   0x54464557u /* "WEFT" read as little-endian u32 */
#define WEFT_WIRE_VERSION 4
#define WEFT_WIRE_PKT_HDR 16
#define WEFT_WIRE_ALIGN   8

#define WEFT_WIRE_SHORT_MAGIC 0x7377u /* "ws" read as little-endian u16 */
#define WEFT_WIRE_SHORT_HDR   20
#define WEFT_WIRE_SHORT_MAX   256 /* payload bytes a sender puts in the short form */

typedef enum weft__chunk_kind {
    WEFT_CHUNK_EAGER = 1,
    WEFT_CHUNK_EAGER_SYNC = 2,
    WEFT_CHUNK_RDV = 3,
    WEFT_CHUNK_RTR = 4,
    WEFT_CHUNK_RDATA = 5,
    WEFT_CHUNK_ACK = 6,
    WEFT_CHUNK_CREDIT = 7,
    WEFT_CHUNK_COOP = 8,
    WEFT_CHUNK_CANCEL = 9,
    WEFT_CHUNK_CANCEL_REPLY = 10,
    WEFT_CHUNK_KIND_MAX = 11,
} weft__chunk_kind_t;

#define WEFT_WIRE_EAGER_HDR      32
#define WEFT_WIRE_EAGER_SYNC_HDR 40
#define WEFT_WIRE_RDV_HDR        80
#define WEFT_WIRE_RTR_HDR        32
#define WEFT_WIRE_RDATA_HDR      32
#define WEFT_WIRE_ACK_HDR        16
#define WEFT_WIRE_CREDIT_HDR     16
#define WEFT_WIRE_COOP_HDR       80
#define WEFT_WIRE_CANCEL_HDR     24
#define WEFT_WIRE_CHUNK_HDR_MAX  80
/* An RDV's flags byte counts the rail keys after the first in its rkey (a
 * multi-rail gate: the receiver pulls one part per rail); the rkey's length
 * is then a multiple of the key count. */
#define WEFT_WIRE_RDV_KEYS_MAX 4

/* A decoded chunk. Fields that a kind does not carry are zero (rkey.bytes is
 * meaningful only up to rkey.len). */
typedef struct weft__wire_chunk {
    uint8_t kind;
    uint8_t flags;
    uint32_t seq; /* message chunks; CANCEL: the message to take back */
    uint32_t comm;
    uint64_t tag;
    uint64_t len;    /* message length (EAGER/RDV), accepted length (RTR), fragment (RDATA) */
    uint64_t sreq;   /* sender's request id */
    uint64_t rreq;   /* receiver's request id */
    uint64_t offset; /* RDATA */
    uint64_t bytes;  /* CREDIT */
    uint64_t piece;  /* COOP */
    uint32_t cell;   /* COOP */
    uint32_t gen;    /* COOP */
    bool taken;      /* CANCEL_REPLY: the message was taken back */
    weft_rkey_t rkey;
    const uint8_t *payload; /* EAGER, EAGER_SYNC, RDATA: len bytes */
} weft__wire_chunk_t;

/* Iterator over a received packet. */
typedef struct weft__wire_iter {
    const uint8_t *pos, *end;
    uint32_t remaining; /* chunks still to decode */
    bool short_form;    /* a short packet: its one message starts at pos */
} weft__wire_iter_t;

/* Header size of a chunk kind (0 for an unknown kind). */
size_t weft__wire_chunk_hdr_size(uint8_t kind);

/* Bytes a chunk occupies with its payload and padding. */
static inline size_t weft__wire_chunk_size(size_t hdr, uint64_t payload)
{
    return (hdr + (size_t)payload + (WEFT_WIRE_ALIGN - 1)) & ~(size_t)(WEFT_WIRE_ALIGN - 1);
}

/* Encoders: write a header into buf (at least its size), return its size. */
size_t weft__wire_put_packet(uint8_t *buf, uint16_t nchunks, uint64_t length);
/* The whole header of a short packet (WEFT_WIRE_SHORT_HDR bytes); the payload
 * follows it. */
size_t weft__wire_put_short(uint8_t *buf, uint32_t seq, uint64_t tag, uint32_t comm);
size_t weft__wire_put_eager(uint8_t *buf, bool sync, uint32_t seq, uint64_t tag, uint32_t comm,
                            uint64_t len, uint64_t sreq);
size_t weft__wire_put_rdv(uint8_t *buf, uint32_t seq, uint64_t tag, uint32_t comm, uint64_t len,
                          uint64_t sreq, const weft_rkey_t *rkey);
size_t weft__wire_put_rtr(uint8_t *buf, uint64_t sreq, uint64_t rreq, uint64_t len);
size_t weft__wire_put_rdata(uint8_t *buf, uint64_t rreq, uint64_t offset, uint64_t len);
size_t weft__wire_put_ack(uint8_t *buf, uint64_t sreq);
size_t weft__wire_put_credit(uint8_t *buf, uint64_t bytes);
size_t weft__wire_put_coop(uint8_t *buf, uint64_t sreq, uint32_t cell, uint32_t gen, uint64_t len,
                           uint64_t piece, const weft_rkey_t *rkey);
size_t weft__wire_put_cancel(uint8_t *buf, uint64_t sreq, uint32_t seq);
size_t weft__wire_put_cancel_reply(uint8_t *buf, uint64_t sreq, bool taken);

/* Check a packet's header against len received bytes and start iterating.
 * WEFT_OK or WEFT_EPROTO. */
int weft__wire_open(const void *buf, size_t len, weft__wire_iter_t *it);
/* Decode the next chunk: 1 when *out was filled, 0 at the end of the packet
 * (which must then have been consumed exactly), WEFT_EPROTO on a malformed chunk. */
int weft__wire_next(weft__wire_iter_t *it, weft__wire_chunk_t *out);

/* Little-endian field access that is safe on any alignment. */
static inline void weft__le16_put(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void weft__le32_put(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    memcpy(p, &v, 4);
}
static inline void weft__le64_put(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}
static inline uint16_t weft__le16_get(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t weft__le32_get(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}
static inline uint64_t weft__le64_get(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* Fill c as the lone-eager decoders do (see weft__wire_lone_eager); 1. Both
 * forms keep seq at +4, tag at +8 and comm at +16 of their message header h. */
static inline int weft__wire_fill_eager(weft__wire_chunk_t *c, const uint8_t *h, uint64_t tag,
                                        uint64_t plen, const uint8_t *payload)
{
    c->kind = WEFT_CHUNK_EAGER;
    c->flags = 0;
    c->seq = weft__le32_get(h + 4);
    c->tag = tag;
    c->comm = weft__le32_get(h + 16);
    c->len = plen;
    c->sreq = 0;
    c->rkey.len = 0;
    c->payload = plen ? payload : NULL;
    return 1;
}

/* A short packet of len bytes at p: 1 and c filled as an EAGER chunk when it
 * is one and well-formed (magic, version, flags 0, a tag that is not the
 * wildcard), else 0. */
static inline int weft__wire_short(const uint8_t *p, size_t len, weft__wire_chunk_t *c)
{
    const uint32_t word = WEFT_WIRE_SHORT_MAGIC | (uint32_t)WEFT_WIRE_VERSION << 16;
    if (len < WEFT_WIRE_SHORT_HDR || weft__le32_get(p) != word)
        return 0;
    uint64_t tag = weft__le64_get(p + 8);
    if (tag == UINT64_MAX)
        return 0;
    return weft__wire_fill_eager(c, p, tag, len - WEFT_WIRE_SHORT_HDR, p + WEFT_WIRE_SHORT_HDR);
}

/* The shape of most small messages: a packet of exactly one EAGER chunk, in
 * the short form or the long one. Decoded in one pass with every check
 * weft__wire_open and weft__wire_next make for it, filling what an EAGER
 * chunk carries (kind, seq, tag, comm, len, payload; flags, sreq and rkey.len
 * zero, the other fields left as they were). 1 when the packet is that shape
 * and well-formed; 0 otherwise, the general decoder's to judge (malformed
 * packets included). */
static inline int weft__wire_lone_eager(const void *buf, size_t len, weft__wire_chunk_t *c)
{
    const uint8_t *p = buf;
    if (len >= 1 && p[0] == (uint8_t)WEFT_WIRE_SHORT_MAGIC)
        return weft__wire_short(p, len, c);
    const size_t hdr = WEFT_WIRE_PKT_HDR + WEFT_WIRE_EAGER_HDR;
    /* magic, version, packet flags 0, one chunk; then kind EAGER, chunk flags
     * and reserved 0. */
    const uint64_t pkt_word =
        (uint64_t)WEFT_WIRE_MAGIC | (uint64_t)WEFT_WIRE_VERSION << 32 | (uint64_t)1 << 48;
    if (len < hdr || weft__le64_get(p) != pkt_word || weft__le64_get(p + 8) != len ||
        weft__le32_get(p + WEFT_WIRE_PKT_HDR) != WEFT_CHUNK_EAGER)
        return 0;
    const uint8_t *q = p + WEFT_WIRE_PKT_HDR;
    uint64_t tag = weft__le64_get(q + 8), plen = weft__le64_get(q + 24);
    /* The payload fits in what arrived and the padded chunk ends the packet. */
    if (weft__le32_get(q + 20) != 0 || tag == UINT64_MAX || plen > len - hdr ||
        weft__wire_chunk_size(WEFT_WIRE_EAGER_HDR, plen) != len - WEFT_WIRE_PKT_HDR)
        return 0;
    return weft__wire_fill_eager(c, q, tag, plen, q + WEFT_WIRE_EAGER_HDR);
}

#endif
