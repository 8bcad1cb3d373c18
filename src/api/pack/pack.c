/* Incremental messages (weft/weft_pack.h), on the engine's tagged messages.
 *
 * A group of up to WEFT_PACK_GROUP pieces travels as one head message and
 * zero or more body messages. The head:
 *
 *   magic u32 | pieces u16 | flags u16 (HEAD_MORE) | seq u64
 *   table: one u64 per piece, length (56 bits) | kind << 56
 *   data:  the COPY pieces' bytes in piece order, then the REF pieces'
 *
 * A COPY piece (at most COPY_MAX bytes) was copied into the pack when packed;
 * a REF piece is gathered from the caller's buffer by the head's iovec; a
 * BODY piece is a message of its own. The first head goes on the user's
 * (comm, tag); bodies, and the heads of later groups (HEAD_MORE said one
 * follows), on PACK_COMM under seq, a tag no other pack of this process
 * uses, so that concurrent packs to one peer never mix their pieces and the
 * receiver's posted receives meet them in the order they were sent.
 *
 * Which pieces ride in the head is decided when the group leaves: express
 * pieces first, while they fit, then cheaper ones up to
 * WEFT_PACK_INLINE_MAX; the rest are bodies, so a large cheaper piece goes
 * by rendezvous into the receiver's buffer. The receiver takes the head
 * into a buffer of HEAD_MAX bytes and copies inline pieces out of it as they
 * are unpacked. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/wire.h"
#include "util/param.h"
#include "util/util.h"
#include "weft/weft_pack.h"

#define PACK_COMM  0xffffff16u
#define PACK_MAGIC 0x31706b77u /* "wkp1" */
#define HEAD_HDR   16
#define HEAD_MAX   16384 /* eager at every driver's default threshold (self's: 16 KiB) */
#define COPY_MAX   64
#define STAGE_MAX  512
#define REF_MAX    32 /* gathered pieces per head: within every driver's iovec */
#define HEAD_MORE  1u
#define LEN_MASK   ((UINT64_C(1) << 56) - 1)

enum { KIND_COPY = 1, KIND_REF = 2, KIND_BODY = 3 };

/* Tags of packs with bodies or several groups: unique in the process. */
static _Atomic uint64_t next_seq;

/* WEFT_PACK_INLINE_MAX, read at the process's first pack. */
static size_t inline_max(void)
{
    static _Atomic size_t cached = SIZE_MAX;
    size_t v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v == SIZE_MAX) {
        v = (size_t)weft__param_size("WEFT_PACK_INLINE_MAX", 8192);
        atomic_store_explicit(&cached, v == SIZE_MAX ? v - 1 : v, memory_order_relaxed);
    }
    return v;
}

/* Requests a pack or unpack waits for at its end. */
typedef struct reqs {
    weft_request_t **v;
    int n, cap;
    weft_request_t *inline_v[8];
} reqs_t;

static int reqs_push(reqs_t *r, weft_request_t *req)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 32;
        weft_request_t **v = malloc((size_t)cap * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        memcpy(v, r->v, (size_t)r->n * sizeof *v);
        if (r->v != r->inline_v)
            free(r->v);
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = req;
    return WEFT_OK;
}

static void reqs_init(reqs_t *r)
{
    r->v = r->inline_v;
    r->n = 0;
    r->cap = (int)WEFT_ARRAY_SIZE(r->inline_v);
}

/* Wait for every request and free the array (the pack's or unpack's end):
 * the first error, or err if there was one. */
static int reqs_wait(weft_ctx_t *ctx, reqs_t *r, int err)
{
    int rc = weft_sr_waitall(ctx, r->n, r->v, NULL);
    if (r->v != r->inline_v)
        free(r->v);
    return err ? err : rc;
}

static int mode_valid(int mode)
{
    return mode == WEFT_PACK_EXPRESS || mode == WEFT_PACK_CHEAPER;
}

static int args_valid(weft_ctx_t *ctx, int rank, uint64_t tag, int any_ok)
{
    if (rank < (any_ok ? WEFT_ANY_SOURCE : 0) || rank >= weft_size(ctx))
        return WEFT_ERANK;
    if (tag > WEFT_TAG_MAX && !(any_ok && tag == WEFT_ANY_TAG))
        return WEFT_ETAG;
    return WEFT_OK;
}

/* ---------------------------------------------------------------- packing */

struct weft_pack {
    weft_ctx_t *ctx;
    int dest;
    uint32_t comm;
    uint64_t tag;
    uint64_t seq; /* 0 until the pack needs one */
    size_t inline_max;
    int err;       /* the first send's error */
    int sent;      /* groups sent */
    int n;         /* pieces in the group being packed */
    size_t staged; /* bytes of COPY pieces in stage */
    const void *ptr[WEFT_PACK_GROUP];
    uint8_t mode[WEFT_PACK_GROUP];
    reqs_t reqs;
    uint8_t head[HEAD_HDR + 8 * WEFT_PACK_GROUP];
    unsigned char stage[STAGE_MAX];
};

static uint64_t piece_len(const uint8_t *table, int i)
{
    return weft__le64_get(table + 8 * i) & LEN_MASK;
}

static void piece_set(uint8_t *table, int i, uint64_t len, int kind)
{
    weft__le64_put(table + 8 * i, len | (uint64_t)kind << 56);
}

/* Choose which uncopied pieces ride in the head: express ones first. */
static int place(weft_pack_t *p, uint8_t *table, int *nbody)
{
    size_t room = HEAD_MAX - HEAD_HDR - 8 * (size_t)p->n - p->staged;
    int nref = 0;
    *nbody = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < p->n; i++) {
            int want = pass ? WEFT_PACK_CHEAPER : WEFT_PACK_EXPRESS;
            if (p->ptr[i] == NULL || p->mode[i] != want)
                continue; /* copied, or not this pass's */
            uint64_t len = piece_len(table, i);
            int fits = len <= room && nref < REF_MAX && (pass == 0 || len <= p->inline_max);
            if (fits) {
                room -= len;
                nref++;
            } else
                (*nbody)++;
            piece_set(table, i, len, fits ? KIND_REF : KIND_BODY);
        }
    return nref;
}

/* Send the group packed so far; more: another group follows. */
static int flush(weft_pack_t *p, int more)
{
    uint8_t *table = p->head + HEAD_HDR;
    int nbody;
    int nref = place(p, table, &nbody);
    if (!p->seq && (nbody || more))
        p->seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed) + 1;
    weft__le32_put(p->head, PACK_MAGIC);
    weft__le16_put(p->head + 4, (uint16_t)p->n);
    weft__le16_put(p->head + 6, more ? HEAD_MORE : 0);
    weft__le64_put(p->head + 8, p->seq);

    struct iovec iov[2 + REF_MAX];
    int niov = 0;
    iov[niov++] = (struct iovec){p->head, HEAD_HDR + 8 * (size_t)p->n};
    if (p->staged)
        iov[niov++] = (struct iovec){p->stage, p->staged};
    for (int i = 0; i < p->n && nref; i++)
        if (weft__le64_get(table + 8 * i) >> 56 == KIND_REF)
            iov[niov++] = (struct iovec){(void *)p->ptr[i], piece_len(table, i)};

    weft_request_t *head = NULL;
    int rc = p->sent ? weft_sr_isendv(p->ctx, p->dest, PACK_COMM, p->seq, iov, niov, &head)
                     : weft_sr_isendv(p->ctx, p->dest, p->comm, p->tag, iov, niov, &head);
    for (int i = 0; i < p->n && nbody && rc == WEFT_OK; i++) {
        if (weft__le64_get(table + 8 * i) >> 56 != KIND_BODY)
            continue;
        weft_request_t *req;
        rc =
            weft_sr_isend(p->ctx, p->dest, PACK_COMM, p->seq, p->ptr[i], piece_len(table, i), &req);
        if (rc == WEFT_OK && (rc = reqs_push(&p->reqs, req)) != WEFT_OK)
            weft_sr_wait(p->ctx, req, NULL);
    }
    p->sent++;
    p->n = 0;
    p->staged = 0;
    /* The next group reuses the head and the stage, so this head must be
     * out first; the bodies (the caller's buffers) wait until pack_end. */
    if (head && (more || reqs_push(&p->reqs, head) != WEFT_OK)) {
        int hrc = weft_sr_wait(p->ctx, head, NULL);
        rc = rc ? rc : hrc;
    }
    return rc;
}

int weft_pack_begin(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag, weft_pack_t **out)
{
    if (!ctx || !out)
        return WEFT_EINVAL;
    int rc = args_valid(ctx, dest, tag, 0);
    if (rc != WEFT_OK)
        return rc;
    weft_pack_t *p = malloc(sizeof *p);
    if (!p)
        return WEFT_ENOMEM;
    p->ctx = ctx;
    p->dest = dest;
    p->comm = comm;
    p->tag = tag;
    p->seq = 0;
    p->inline_max = inline_max();
    p->err = WEFT_OK;
    p->sent = 0;
    p->n = 0;
    p->staged = 0;
    reqs_init(&p->reqs);
    *out = p;
    return WEFT_OK;
}

int weft_pack(weft_pack_t *p, const void *ptr, size_t len, int mode)
{
    if (!p || (!ptr && len) || !mode_valid(mode) || len > LEN_MASK)
        return WEFT_EINVAL;
    if (p->err)
        return p->err;
    if (p->n == WEFT_PACK_GROUP && (p->err = flush(p, 1)) != WEFT_OK)
        return p->err;
    int i = p->n++;
    p->mode[i] = (uint8_t)mode;
    if (len <= COPY_MAX && p->staged + len <= STAGE_MAX) {
        if (len)
            memcpy(p->stage + p->staged, ptr, len);
        p->staged += len;
        p->ptr[i] = NULL;
        piece_set(p->head + HEAD_HDR, i, len, KIND_COPY);
    } else {
        p->ptr[i] = ptr;
        piece_set(p->head + HEAD_HDR, i, len, 0);
    }
    return WEFT_OK;
}

int weft_pack_end(weft_pack_t *p)
{
    if (!p)
        return WEFT_EINVAL;
    int err = p->err ? p->err : flush(p, 0);
    err = reqs_wait(p->ctx, &p->reqs, err);
    free(p);
    return err;
}

/* -------------------------------------------------------------- unpacking */

struct weft_unpack {
    weft_ctx_t *ctx;
    int src; /* the sender, once the first head came */
    uint64_t tag;
    uint64_t seq;
    int more;        /* another group follows this one */
    int n, i;        /* pieces of this group; the next one's index */
    int err;         /* the first error of an express piece or a group */
    size_t copy_off; /* the next COPY piece's bytes in buf */
    size_t ref_off;  /* the next REF piece's */
    reqs_t reqs;     /* cheaper bodies */
    _Alignas(8) uint8_t buf[HEAD_MAX];
};

/* Check a head of len bytes in u->buf and start its group. */
static int open_group(weft_unpack_t *u, size_t len)
{
    const uint8_t *b = u->buf;
    if (len < HEAD_HDR || weft__le32_get(b) != PACK_MAGIC)
        return WEFT_EPROTO;
    unsigned n = weft__le16_get(b + 4);
    size_t data = HEAD_HDR + 8 * (size_t)n;
    if (n > WEFT_PACK_GROUP || data > len)
        return WEFT_EPROTO;
    uint64_t copy = 0, ref = 0, body = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t e = weft__le64_get(b + HEAD_HDR + 8 * i), l = e & LEN_MASK;
        switch (e >> 56) {
        case KIND_COPY:
            copy += l;
            break;
        case KIND_REF:
            ref += l;
            break;
        case KIND_BODY:
            body++;
            break;
        default:
            return WEFT_EPROTO;
        }
        if (copy > HEAD_MAX || ref > HEAD_MAX)
            return WEFT_EPROTO;
    }
    if (data + copy + ref != len)
        return WEFT_EPROTO;
    uint64_t seq = weft__le64_get(b + 8);
    int more = weft__le16_get(b + 6) & HEAD_MORE;
    if (!seq && (more || body))
        return WEFT_EPROTO;
    u->seq = seq;
    u->more = more;
    u->n = (int)n;
    u->i = 0;
    u->copy_off = data;
    u->ref_off = data + copy;
    return WEFT_OK;
}

/* Receive a head from (src, comm, tag) into u->buf and open its group. */
static int take_head(weft_unpack_t *u, int src, uint32_t comm, uint64_t tag)
{
    weft_request_t *req;
    weft_status_t st;
    int rc = weft_sr_irecv(u->ctx, src, comm, tag, u->buf, HEAD_MAX, &req);
    if (rc == WEFT_OK)
        rc = weft_sr_wait(u->ctx, req, &st);
    if (rc == WEFT_ETRUNC)
        return WEFT_EPROTO; /* not a pack's: a pack's head fits */
    if (rc != WEFT_OK)
        return rc;
    u->src = st.source;
    u->tag = st.tag;
    return open_group(u, st.length);
}

/* Make the next piece's description current; WEFT_ENOTFOUND past the last. */
static int next_piece(weft_unpack_t *u)
{
    while (u->i == u->n) {
        if (u->err)
            return u->err;
        if (!u->more)
            return WEFT_ENOTFOUND;
        uint64_t tag = u->tag;
        int rc = take_head(u, u->src, PACK_COMM, u->seq);
        u->tag = tag;
        if (rc != WEFT_OK)
            return u->err = rc;
    }
    return WEFT_OK;
}

int weft_unpack_begin(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, weft_unpack_t **out)
{
    if (!ctx || !out)
        return WEFT_EINVAL;
    int rc = args_valid(ctx, src, tag, 1);
    if (rc != WEFT_OK)
        return rc;
    weft_unpack_t *u = malloc(sizeof *u);
    if (!u)
        return WEFT_ENOMEM;
    u->ctx = ctx;
    u->err = WEFT_OK;
    reqs_init(&u->reqs);
    if ((rc = take_head(u, src, comm, tag)) != WEFT_OK) {
        free(u);
        return rc;
    }
    *out = u;
    return WEFT_OK;
}

int weft_unpack_source(const weft_unpack_t *u)
{
    return u ? u->src : WEFT_EINVAL;
}

uint64_t weft_unpack_tag(const weft_unpack_t *u)
{
    return u ? u->tag : WEFT_ANY_TAG;
}

int weft_unpack_next(weft_unpack_t *u, size_t *len)
{
    if (!u || !len)
        return WEFT_EINVAL;
    int rc = next_piece(u);
    if (rc == WEFT_OK)
        *len = (size_t)piece_len(u->buf + HEAD_HDR, u->i);
    return rc;
}

int weft_unpack(weft_unpack_t *u, void *ptr, size_t len, int mode)
{
    if (!u || (!ptr && len) || !mode_valid(mode))
        return WEFT_EINVAL;
    int rc = next_piece(u);
    if (rc != WEFT_OK)
        return rc;
    uint64_t e = weft__le64_get(u->buf + HEAD_HDR + 8 * u->i++);
    size_t plen = (size_t)(e & LEN_MASK), n = WEFT_MIN(plen, len);
    switch (e >> 56) {
    case KIND_COPY:
        if (n)
            memcpy(ptr, u->buf + u->copy_off, n);
        u->copy_off += plen;
        break;
    case KIND_REF:
        if (n)
            memcpy(ptr, u->buf + u->ref_off, n);
        u->ref_off += plen;
        break;
    default: {
        weft_request_t *req;
        if ((rc = weft_sr_irecv(u->ctx, u->src, PACK_COMM, u->seq, ptr, len, &req)) != WEFT_OK)
            return rc;
        if (mode == WEFT_PACK_EXPRESS)
            return weft_sr_wait(u->ctx, req, NULL);
        if ((rc = reqs_push(&u->reqs, req)) != WEFT_OK)
            weft_sr_wait(u->ctx, req, NULL);
        return rc;
    }
    }
    return plen > len ? WEFT_ETRUNC : WEFT_OK;
}

int weft_unpack_end(weft_unpack_t *u)
{
    if (!u)
        return WEFT_EINVAL;
    /* Pieces nobody unpacked: their bodies are taken (a rendezvous would
     * hold its sender otherwise) and dropped. */
    int left = 0, rc;
    while ((rc = next_piece(u)) == WEFT_OK) {
        uint64_t e = weft__le64_get(u->buf + HEAD_HDR + 8 * u->i++);
        left = 1;
        if (e >> 56 != KIND_BODY)
            continue;
        weft_request_t *req;
        if ((rc = weft_sr_irecv(u->ctx, u->src, PACK_COMM, u->seq, NULL, 0, &req)) != WEFT_OK)
            break;
        rc = weft_sr_wait(u->ctx, req, NULL);
        if (rc != WEFT_OK && rc != WEFT_ETRUNC)
            break;
    }
    int err = rc == WEFT_ENOTFOUND ? WEFT_OK : rc;
    err = reqs_wait(u->ctx, &u->reqs, err);
    free(u);
    return err ? err : left ? WEFT_ETRUNC : WEFT_OK;
}
