/* Wire protocol between the boot client (boot.c) and weftrun's key-value server.
 *
 * A stream socket (Unix for ranks on weftrun's machine, TCP for ranks on other
 * hosts) carries messages; each is a 12-byte header followed by a body of the
 * length the header gives. Every field is fixed-width little-endian, so the
 * format does not depend on the compiler's struct layout or the host.
 *
 *   header:      u32 magic "WFTB", u16 version, u16 type, u32 body length
 *   CHALLENGE    u8[16] nonce       (server -> client, first on every connection)
 *   HELLO        u32 rank, u32 size, u16 jobid length, jobid, u8[8] proof
 *                                                                 -> HELLO_REPLY
 *   LIFELINE     the body of HELLO: this connection is the rank's lifeline
 *                                                                 -> HELLO_REPLY
 *   HELLO_REPLY  i32 status
 *   PUT          u16 key length, key, u32 value length, value     (no reply)
 *   FENCE        (empty)                                          -> FENCE_REPLY
 *   FENCE_REPLY  i32 status (WEFT_OK, or WEFT_EPEERDEAD if a rank failed)
 *   GET          u16 key length, key                              -> GET_REPLY
 *   GET_REPLY    i32 status, u32 value length, value
 *   ABORT        i32 exit code, u16 message length, message       -> ABORT_REPLY
 *   ABORT_REPLY  i32 status
 *   BYE          (empty; the client leaves the job cleanly)       (no reply)
 *   END          (empty; server -> client on a lifeline: the job is ending)
 *
 * The proof is SipHash-2-4 under the job secret of nonce || jobid || u32 rank
 * (weft__boot_proof): a client proves it belongs to the job without sending the
 * secret, and a recorded HELLO is useless against another nonce. On a lifeline
 * the client sends nothing after LIFELINE; the server sends END when the job
 * ends, and the connection closing means the same (see docs/launcher.md).
 *
 * Whoever receives a message checks every length against the limits below and
 * against the body length before touching the bytes: a peer is never trusted.
 * The helpers are static inline so that weftrun needs only this header.
 */
#ifndef WEFT_BOOT_PROTO_H
#define WEFT_BOOT_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "boot/boot.h"
#include "util/siphash.h"

#define WEFT_BOOT_PROTO_MAGIC 0x42544657u /* "WFTB" read as little-endian */
/* Version 2: CHALLENGE, the proof in HELLO, LIFELINE and END. */
#define WEFT_BOOT_PROTO_VERSION  2
#define WEFT_BOOT_PROTO_HDR_SIZE 12
#define WEFT_BOOT_JOBID_MAX      63
#define WEFT_BOOT_NONCE_LEN      16
#define WEFT_BOOT_PROOF_LEN      8
#define WEFT_BOOT_ABORT_MSG_MAX  1024
/* The largest body of any message: a PUT or GET_REPLY of a maximal value. */
#define WEFT_BOOT_PROTO_BODY_MAX (2 + WEFT_BOOT_KEY_MAX + 4 + WEFT_BOOT_VALUE_MAX)

enum weft_boot_msg_type {
    WEFT_BOOT_MSG_HELLO = 1,
    WEFT_BOOT_MSG_HELLO_REPLY = 2,
    WEFT_BOOT_MSG_PUT = 3,
    WEFT_BOOT_MSG_FENCE = 4,
    WEFT_BOOT_MSG_FENCE_REPLY = 5,
    WEFT_BOOT_MSG_GET = 6,
    WEFT_BOOT_MSG_GET_REPLY = 7,
    WEFT_BOOT_MSG_ABORT = 8,
    WEFT_BOOT_MSG_ABORT_REPLY = 9,
    WEFT_BOOT_MSG_BYE = 10,
    WEFT_BOOT_MSG_CHALLENGE = 11,
    WEFT_BOOT_MSG_LIFELINE = 12,
    WEFT_BOOT_MSG_END = 13,
};

typedef struct weft_boot_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t body_len;
} weft_boot_hdr_t;

static inline void weft__boot_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void weft__boot_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint16_t weft__boot_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t weft__boot_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void weft__boot_hdr_encode(uint8_t *p, uint16_t type, uint32_t body_len)
{
    weft__boot_put32(p, WEFT_BOOT_PROTO_MAGIC);
    weft__boot_put16(p + 4, WEFT_BOOT_PROTO_VERSION);
    weft__boot_put16(p + 6, type);
    weft__boot_put32(p + 8, body_len);
}

/* The largest body a message of this type may carry, or -1 for an unknown type.
 * Receivers reject a header whose body length exceeds it before reading the body. */
static inline long weft__boot_body_max(uint16_t type)
{
    switch (type) {
    case WEFT_BOOT_MSG_HELLO:
    case WEFT_BOOT_MSG_LIFELINE:
        return 4 + 4 + 2 + WEFT_BOOT_JOBID_MAX + WEFT_BOOT_PROOF_LEN;
    case WEFT_BOOT_MSG_CHALLENGE:
        return WEFT_BOOT_NONCE_LEN;
    case WEFT_BOOT_MSG_HELLO_REPLY:
    case WEFT_BOOT_MSG_FENCE_REPLY:
    case WEFT_BOOT_MSG_ABORT_REPLY:
        return 4;
    case WEFT_BOOT_MSG_PUT:
        return 2 + WEFT_BOOT_KEY_MAX + 4 + WEFT_BOOT_VALUE_MAX;
    case WEFT_BOOT_MSG_FENCE:
    case WEFT_BOOT_MSG_BYE:
    case WEFT_BOOT_MSG_END:
        return 0;
    case WEFT_BOOT_MSG_GET:
        return 2 + WEFT_BOOT_KEY_MAX;
    case WEFT_BOOT_MSG_GET_REPLY:
        return 4 + 4 + WEFT_BOOT_VALUE_MAX;
    case WEFT_BOOT_MSG_ABORT:
        return 4 + 2 + WEFT_BOOT_ABORT_MSG_MAX;
    default:
        return -1;
    }
}

/* Decode and check a header: 0 if it is well formed (magic, version, known type,
 * body length within that type's limit), -1 otherwise. */
static inline int weft__boot_hdr_decode(const uint8_t *p, weft_boot_hdr_t *hdr)
{
    hdr->magic = weft__boot_get32(p);
    hdr->version = weft__boot_get16(p + 4);
    hdr->type = weft__boot_get16(p + 6);
    hdr->body_len = weft__boot_get32(p + 8);
    if (hdr->magic != WEFT_BOOT_PROTO_MAGIC || hdr->version != WEFT_BOOT_PROTO_VERSION)
        return -1;
    long max = weft__boot_body_max(hdr->type);
    if (max < 0 || hdr->body_len > (uint32_t)max)
        return -1;
    return 0;
}

/* Find the first message in p[0, avail): its whole length (header and body)
 * if it is all there, 0 if more bytes are needed, -1 if its header is
 * malformed (weft__boot_hdr_decode), which no more bytes can mend. *hdr is
 * set when the result is positive. */
static inline long weft__boot_msg_frame(const uint8_t *p, size_t avail, weft_boot_hdr_t *hdr)
{
    if (avail < WEFT_BOOT_PROTO_HDR_SIZE)
        return 0;
    weft_boot_hdr_t h;
    if (weft__boot_hdr_decode(p, &h) != 0)
        return -1;
    size_t total = WEFT_BOOT_PROTO_HDR_SIZE + (size_t)h.body_len;
    if (avail < total)
        return 0;
    *hdr = h;
    return (long)total;
}

/* A job id is non-empty, at most WEFT_BOOT_JOBID_MAX bytes of [A-Za-z0-9_-], so it
 * can be part of a file name (shm segments are /dev/shm/weft-<jobid>-...). */
static inline int weft__boot_jobid_valid(const char *id, size_t len)
{
    if (len == 0 || len > WEFT_BOOT_JOBID_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* Keys are non-empty, at most WEFT_BOOT_KEY_MAX bytes, with no NUL inside (they
 * are C strings on the client side). */
static inline int weft__boot_key_valid(const uint8_t *key, size_t len)
{
    return len > 0 && len <= WEFT_BOOT_KEY_MAX && memchr(key, 0, len) == NULL;
}

/* The proof of HELLO and LIFELINE: SipHash-2-4 under the job secret of
 * nonce || jobid || u32 rank, little-endian. jobid_len <= WEFT_BOOT_JOBID_MAX. */
static inline void weft__boot_proof(const uint8_t secret[WEFT_BOOT_SECRET_LEN],
                                    const uint8_t nonce[WEFT_BOOT_NONCE_LEN], const char *jobid,
                                    size_t jobid_len, uint32_t rank,
                                    uint8_t proof[WEFT_BOOT_PROOF_LEN])
{
    uint8_t data[WEFT_BOOT_NONCE_LEN + WEFT_BOOT_JOBID_MAX + 4];
    memcpy(data, nonce, WEFT_BOOT_NONCE_LEN);
    memcpy(data + WEFT_BOOT_NONCE_LEN, jobid, jobid_len);
    weft__boot_put32(data + WEFT_BOOT_NONCE_LEN + jobid_len, rank);
    uint64_t h = weft__siphash24(secret, data, WEFT_BOOT_NONCE_LEN + jobid_len + 4);
    weft__boot_put32(proof, (uint32_t)h);
    weft__boot_put32(proof + 4, (uint32_t)(h >> 32));
}

/* Encode a HELLO or LIFELINE body at p; returns its length. */
static inline size_t weft__boot_hello_encode(uint8_t *p, uint32_t rank, uint32_t size,
                                             const char *jobid, size_t jobid_len,
                                             const uint8_t proof[WEFT_BOOT_PROOF_LEN])
{
    weft__boot_put32(p, rank);
    weft__boot_put32(p + 4, size);
    weft__boot_put16(p + 8, (uint16_t)jobid_len);
    memcpy(p + 10, jobid, jobid_len);
    memcpy(p + 10 + jobid_len, proof, WEFT_BOOT_PROOF_LEN);
    return 10 + jobid_len + WEFT_BOOT_PROOF_LEN;
}

/* ---- body decoders ----
 *
 * Each takes a body whose length the header gave (the caller has all of it)
 * and checks every length inside it against that length and the limits before
 * the fields are used. The server's return NULL on success and otherwise what
 * is wrong, for its log line; the client's return 0 or -1. The pointers they
 * set point into the body. */

/* HELLO and LIFELINE, as the server receives them. */
typedef struct weft_boot_hello {
    uint32_t rank;
    uint32_t size;
    const uint8_t *jobid; /* not NUL-terminated */
    uint16_t jobid_len;   /* at most WEFT_BOOT_JOBID_MAX */
    const uint8_t *proof; /* WEFT_BOOT_PROOF_LEN bytes */
} weft_boot_hello_t;

static inline const char *weft__boot_hello_decode(const uint8_t *p, uint32_t len,
                                                  weft_boot_hello_t *out)
{
    if (len < 10)
        return "short HELLO";
    uint16_t idlen = weft__boot_get16(p + 8);
    if (idlen > WEFT_BOOT_JOBID_MAX || len != 10u + idlen + WEFT_BOOT_PROOF_LEN)
        return "HELLO length mismatch";
    out->rank = weft__boot_get32(p);
    out->size = weft__boot_get32(p + 4);
    out->jobid = p + 10;
    out->jobid_len = idlen;
    out->proof = p + 10 + idlen;
    return NULL;
}

/* Does a decoded HELLO name this job, with the proof that its sender knows
 * the job's secret, against the nonce of the CHALLENGE it answers? NULL if
 * so, else why not. The proof is compared in constant time. */
static inline const char *weft__boot_hello_verify(const weft_boot_hello_t *h, const char *jobid,
                                                  const uint8_t secret[WEFT_BOOT_SECRET_LEN],
                                                  const uint8_t nonce[WEFT_BOOT_NONCE_LEN])
{
    size_t idlen = strlen(jobid);
    if (h->jobid_len != idlen || memcmp(h->jobid, jobid, idlen) != 0)
        return "it belongs to another job";
    uint8_t proof[WEFT_BOOT_PROOF_LEN];
    weft__boot_proof(secret, nonce, jobid, idlen, h->rank, proof);
    if (weft__memcmp_ct(proof, h->proof, sizeof proof) != 0)
        return "it does not know the job secret";
    return NULL;
}

/* PUT: a valid key and a value of at most WEFT_BOOT_VALUE_MAX bytes. */
typedef struct weft_boot_put {
    const uint8_t *key; /* weft__boot_key_valid, not NUL-terminated */
    uint16_t key_len;
    const uint8_t *value;
    uint32_t value_len;
} weft_boot_put_t;

static inline const char *weft__boot_put_decode(const uint8_t *p, uint32_t len,
                                                weft_boot_put_t *out)
{
    if (len < 2)
        return "short PUT";
    uint16_t klen = weft__boot_get16(p);
    if (klen > WEFT_BOOT_KEY_MAX || len < 6u + klen)
        return "bad key length in PUT";
    if (!weft__boot_key_valid(p + 2, klen))
        return "bad key in PUT";
    uint32_t vlen = weft__boot_get32(p + 2 + klen);
    if (vlen > WEFT_BOOT_VALUE_MAX || len != 6u + klen + vlen)
        return "bad value length in PUT";
    out->key = p + 2;
    out->key_len = klen;
    out->value = p + 6 + klen;
    out->value_len = vlen;
    return NULL;
}

/* GET: a valid key and nothing after it. */
static inline const char *weft__boot_get_decode(const uint8_t *p, uint32_t len, const uint8_t **key,
                                                uint16_t *key_len)
{
    if (len < 2)
        return "short GET";
    uint16_t klen = weft__boot_get16(p);
    if (len != 2u + klen || !weft__boot_key_valid(p + 2, klen))
        return "bad key in GET";
    *key = p + 2;
    *key_len = klen;
    return NULL;
}

/* ABORT: an exit code and a message of at most WEFT_BOOT_ABORT_MSG_MAX bytes
 * (not necessarily text). */
typedef struct weft_boot_abort {
    int32_t code;
    const uint8_t *msg;
    uint16_t msg_len;
} weft_boot_abort_t;

static inline const char *weft__boot_abort_decode(const uint8_t *p, uint32_t len,
                                                  weft_boot_abort_t *out)
{
    if (len < 6)
        return "short ABORT";
    uint16_t mlen = weft__boot_get16(p + 4);
    if (len != 6u + mlen || mlen > WEFT_BOOT_ABORT_MSG_MAX)
        return "bad message length in ABORT";
    out->code = (int32_t)weft__boot_get32(p);
    out->msg = p + 6;
    out->msg_len = mlen;
    return NULL;
}

/* HELLO_REPLY, FENCE_REPLY and ABORT_REPLY, as the client receives them: an
 * i32 status and nothing else. */
static inline int weft__boot_status_decode(const uint8_t *p, uint32_t len, int *status)
{
    if (len != 4)
        return -1;
    *status = (int32_t)weft__boot_get32(p);
    return 0;
}

/* GET_REPLY: a status, then a value whose length must be what is left of the
 * body; a failed GET carries no value. */
typedef struct weft_boot_get_reply {
    int status;
    const uint8_t *value;
    uint32_t value_len;
} weft_boot_get_reply_t;

static inline int weft__boot_get_reply_decode(const uint8_t *p, uint32_t len,
                                              weft_boot_get_reply_t *out)
{
    if (len < 8)
        return -1;
    int status = (int32_t)weft__boot_get32(p);
    uint32_t vlen = weft__boot_get32(p + 4);
    if (vlen != len - 8 || (status != 0 && vlen != 0))
        return -1;
    out->status = status;
    out->value = p + 8;
    out->value_len = vlen;
    return 0;
}

#endif
