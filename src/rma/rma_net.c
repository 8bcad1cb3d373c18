/* One-sided operations (weft_rma.h): on mapped memory a copy or a CPU
 * atomic; to a process whose regions are not mapped here, a message its
 * progress engine serves.
 *
 * The server is a progress callback: RMA_SLOTS receives stay posted on
 * WEFT_RMA_COMM_REQ (any source, any tag: the tag is the operation), each
 * signaling one completion queue; the callback pops what arrived, serves
 * it and posts the slot again. Requests are served in the order they
 * matched, which is the order each sender sent them (puts longer than
 * RMA_CHUNK go in pieces of it, small enough to stay eager, so a later
 * small message cannot complete first). A put is answered with an empty ACK
 * that the initiator's own server counts (weft_rma_quiet waits for them);
 * a get or an atomic is answered on WEFT_RMA_COMM_REPLY with a tag the
 * initiator chose and posted a receive for. Replies and acks are sent with
 * completion objects, so the server keeps no requests: a handler frees a
 * reply's buffer once sent. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "rma/rma.h"
#include "util/log.h"
#include "weft/weft_comp.h"

#define RMA_SLOTS 16
#define RMA_CHUNK (8u << 10)

enum { TAG_PUT = 1, TAG_PUT_SIGNAL, TAG_GET, TAG_AMO, TAG_ACK };

/* What a request carries before its data (a put's). */
typedef struct rma_req {
    uint32_t kind; /* region */
    uint32_t op;   /* an atomic's */
    uint64_t off, len;
    uint64_t reply_tag;
    uint64_t operand, compare;
    /* put with signal: where the signal is and how it changes */
    uint32_t sig_kind, sig_add;
    uint64_t sig_off;
} rma_req_t;

typedef struct slot {
    char *buf; /* rma_req_t, then up to RMA_CHUNK bytes */
} slot_t;

struct weft__rma_net {
    weft_ctx_t *ctx;
    weft_cq_t *cq;
    slot_t slots[RMA_SLOTS];
    int progress_id;
    weft_handler_t free_buf;   /* frees a sent reply's buffer */
    weft_counter_t fire;       /* what needs no action once sent */
    atomic_long outstanding;   /* puts sent and not acknowledged */
    _Atomic uint64_t next_tag; /* reply tags */
};

static void free_buf(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    free(e->user_context);
}

static int post(struct weft__rma_net *n, int i)
{
    return weft_sr_irecv_comp(n->ctx, WEFT_ANY_SOURCE, WEFT_RMA_COMM_REQ, WEFT_ANY_TAG,
                              n->slots[i].buf, sizeof(rma_req_t) + RMA_CHUNK, weft_cq_comp(n->cq),
                              &n->slots[i]);
}

uint64_t weft__rma_amo_local(void *p, size_t size, int op, uint64_t v, uint64_t cmp)
{
#define AMO_CASES(T)                                                                               \
    do {                                                                                           \
        T *t = p, a = (T)v, c = (T)cmp, old;                                                       \
        switch (op) {                                                                              \
        case WEFT_RMA_AMO_FETCH:                                                                   \
            old = __atomic_load_n(t, __ATOMIC_SEQ_CST);                                            \
            break;                                                                                 \
        case WEFT_RMA_AMO_SET:                                                                     \
            old = 0;                                                                               \
            __atomic_store_n(t, a, __ATOMIC_SEQ_CST);                                              \
            break;                                                                                 \
        case WEFT_RMA_AMO_SWAP:                                                                    \
            old = __atomic_exchange_n(t, a, __ATOMIC_SEQ_CST);                                     \
            break;                                                                                 \
        case WEFT_RMA_AMO_CSWAP:                                                                   \
            __atomic_compare_exchange_n(t, &c, a, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);      \
            old = c;                                                                               \
            break;                                                                                 \
        case WEFT_RMA_AMO_ADD:                                                                     \
            old = __atomic_fetch_add(t, a, __ATOMIC_SEQ_CST);                                      \
            break;                                                                                 \
        case WEFT_RMA_AMO_AND:                                                                     \
            old = __atomic_fetch_and(t, a, __ATOMIC_SEQ_CST);                                      \
            break;                                                                                 \
        case WEFT_RMA_AMO_OR:                                                                      \
            old = __atomic_fetch_or(t, a, __ATOMIC_SEQ_CST);                                       \
            break;                                                                                 \
        default:                                                                                   \
            old = __atomic_fetch_xor(t, a, __ATOMIC_SEQ_CST);                                      \
            break;                                                                                 \
        }                                                                                          \
        return (uint64_t)old;                                                                      \
    } while (0)
    if (size == 4)
        AMO_CASES(uint32_t);
    AMO_CASES(uint64_t);
#undef AMO_CASES
}

/* Serve one request that arrived in slot s. */
static void serve(struct weft__rma_net *n, const weft_comp_entry_t *e)
{
    weft_ctx_t *ctx = n->ctx;
    slot_t *s = e->user_context;
    if (e->error != WEFT_OK)
        return; /* canceled at finalize, or its sender died */
    if (e->tag == TAG_ACK) {
        atomic_fetch_sub(&n->outstanding, 1);
        return;
    }
    const rma_req_t *r = (const rma_req_t *)s->buf;
    if (e->length < sizeof *r)
        return;
    size_t len = (size_t)r->len;
    char *at = weft__rma_at(ctx, (int)r->kind, r->off, len);
    if (!at) {
        weft_log_error("rma: rank %d addressed bytes outside this process's region %u", e->source,
                       r->kind);
        return;
    }
    switch (e->tag) {
    case TAG_PUT:
    case TAG_PUT_SIGNAL:
        if (len > e->length - sizeof *r)
            return;
        memcpy(at, s->buf + sizeof *r, len);
        if (e->tag == TAG_PUT_SIGNAL) {
            uint64_t *sig = weft__rma_at(ctx, (int)r->sig_kind, r->sig_off, sizeof *sig);
            if (sig)
                weft__rma_amo_local(sig, 8, r->sig_add ? WEFT_RMA_AMO_ADD : WEFT_RMA_AMO_SET,
                                    r->operand, 0);
        }
        weft_sr_isend_comp(ctx, e->source, WEFT_RMA_COMM_REQ, TAG_ACK, NULL, 0,
                           weft_counter_comp(&n->fire), NULL);
        break;
    case TAG_GET:
        weft_sr_isend_comp(ctx, e->source, WEFT_RMA_COMM_REPLY, r->reply_tag, at, len,
                           weft_counter_comp(&n->fire), NULL);
        break;
    case TAG_AMO: {
        uint64_t *old = malloc(sizeof *old);
        if (!old)
            return;
        *old = weft__rma_amo_local(at, len, (int)r->op, r->operand, r->compare);
        if (weft_sr_isend_comp(ctx, e->source, WEFT_RMA_COMM_REPLY, r->reply_tag, old, sizeof *old,
                               weft_handler_comp(&n->free_buf), old) != WEFT_OK)
            free(old);
        break;
    }
    default:
        break;
    }
}

static int server(void *arg)
{
    struct weft__rma_net *n = arg;
    int events = 0;
    weft_comp_entry_t e;
    while (weft_cq_pop(n->cq, &e) == WEFT_OK) {
        serve(n, &e);
        if (e.error == WEFT_OK)
            post(n, (int)((slot_t *)e.user_context - n->slots));
        events++;
    }
    return events;
}

int weft__rma_net_start(weft_ctx_t *ctx)
{
    struct weft__rma_net **np = weft__rma_net_of(ctx);
    if (*np)
        return WEFT_OK;
    struct weft__rma_net *n = calloc(1, sizeof *n);
    if (!n)
        return WEFT_ENOMEM;
    n->ctx = ctx;
    int rc = weft_cq_create(2 * RMA_SLOTS, &n->cq);
    for (int i = 0; rc == WEFT_OK && i < RMA_SLOTS; i++)
        if (!(n->slots[i].buf = malloc(sizeof(rma_req_t) + RMA_CHUNK)))
            rc = WEFT_ENOMEM;
    if (rc == WEFT_OK) {
        weft_handler_init(&n->free_buf, free_buf, NULL);
        weft_counter_init(&n->fire, 0);
        rc = weft_progress_register(ctx, server, n, &n->progress_id);
    }
    for (int i = 0; rc == WEFT_OK && i < RMA_SLOTS; i++)
        rc = post(n, i);
    if (rc != WEFT_OK) {
        *np = n;
        weft__rma_net_fini(ctx);
        return rc;
    }
    *np = n;
    return WEFT_OK;
}

void weft__rma_net_arm(weft_ctx_t *ctx, bool on)
{
    struct weft__rma_net *n = *weft__rma_net_of(ctx);
    if (n)
        weft_progress_arm(ctx, n->progress_id, on);
}

void weft__rma_net_fini(weft_ctx_t *ctx)
{
    struct weft__rma_net **np = weft__rma_net_of(ctx);
    struct weft__rma_net *n = *np;
    if (!n)
        return;
    /* The context's end canceled the posted slots (their entries are in the
     * queue) and took the callbacks down with it. */
    for (int i = 0; i < RMA_SLOTS; i++)
        free(n->slots[i].buf);
    weft_cq_free(n->cq);
    free(n);
    *np = NULL;
}

/* ---- the initiator's side ---- */

static struct weft__rma_net *net(weft_ctx_t *ctx)
{
    return ctx->rma ? *weft__rma_net_of(ctx) : NULL;
}

/* Send a request (header, then len bytes of data) to pe; the buffer goes
 * with the message and is freed once sent. */
static int send_req(weft_ctx_t *ctx, struct weft__rma_net *n, int pe, uint64_t tag,
                    const rma_req_t *r, const void *data, size_t len)
{
    char *buf = malloc(sizeof *r + len);
    if (!buf)
        return WEFT_ENOMEM;
    memcpy(buf, r, sizeof *r);
    if (len)
        memcpy(buf + sizeof *r, data, len);
    int rc = weft_sr_isend_comp(ctx, pe, WEFT_RMA_COMM_REQ, tag, buf, sizeof *r + len,
                                weft_handler_comp(&n->free_buf), buf);
    if (rc != WEFT_OK)
        free(buf);
    return rc;
}

static int check(weft_ctx_t *ctx, int pe)
{
    if (!ctx)
        return WEFT_EINVAL;
    if (pe < 0 || pe >= ctx->size)
        return WEFT_ERANK;
    return net(ctx) ? WEFT_OK : WEFT_ESTATE;
}

static int put(weft_ctx_t *ctx, int pe, void *dest, const void *src, size_t len, uint64_t *sig,
               uint64_t value, int add)
{
    int rc = check(ctx, pe);
    if (rc)
        return rc;
    void *p = weft_rma_ptr_range(ctx, pe, dest, len ? len : 1);
    if (p) {
        if (len)
            memmove(p, src, len);
        if (sig) {
            void *s = weft_rma_ptr_range(ctx, pe, sig, sizeof *sig);
            if (!s)
                return WEFT_EINVAL;
            weft__rma_amo_local(s, 8, add ? WEFT_RMA_AMO_ADD : WEFT_RMA_AMO_SET, value, 0);
        }
        return WEFT_OK;
    }
    struct weft__rma_net *n = net(ctx);
    rma_req_t r = {0};
    int kind;
    if (!weft__rma_locate(ctx, dest, len, &kind, &r.off))
        return WEFT_EINVAL;
    r.kind = (uint32_t)kind;
    if (sig) {
        int sk;
        if (!weft__rma_locate(ctx, sig, sizeof *sig, &sk, &r.sig_off))
            return WEFT_EINVAL;
        r.sig_kind = (uint32_t)sk;
        r.sig_add = add != 0;
        r.operand = value;
    }
    const char *s = src;
    size_t done = 0;
    do {
        size_t piece = len - done < RMA_CHUNK ? len - done : RMA_CHUNK;
        bool last = done + piece == len;
        r.len = piece;
        atomic_fetch_add(&n->outstanding, 1);
        rc = send_req(ctx, n, pe, sig && last ? TAG_PUT_SIGNAL : TAG_PUT, &r, s + done, piece);
        if (rc != WEFT_OK) {
            atomic_fetch_sub(&n->outstanding, 1);
            return rc;
        }
        done += piece;
        r.off += piece;
    } while (done < len);
    return WEFT_OK;
}

WEFT_API int weft_rma_put(weft_ctx_t *ctx, int pe, void *dest, const void *src, size_t len)
{
    return put(ctx, pe, dest, src, len, NULL, 0, 0);
}

WEFT_API int weft_rma_put_signal(weft_ctx_t *ctx, int pe, void *dest, const void *src, size_t len,
                                 uint64_t *sig, uint64_t value, int add)
{
    if (!sig)
        return WEFT_EINVAL;
    return put(ctx, pe, dest, src, len, sig, value, add);
}

/* Post the receive of a reply of len bytes into buf, then send the request;
 * wait for the reply. */
static int ask(weft_ctx_t *ctx, struct weft__rma_net *n, int pe, uint64_t tag, rma_req_t *r,
               void *buf, size_t len)
{
    r->reply_tag = atomic_fetch_add(&n->next_tag, 1);
    weft_request_t *req;
    int rc = weft_sr_irecv(ctx, pe, WEFT_RMA_COMM_REPLY, r->reply_tag, buf, len, &req);
    if (rc != WEFT_OK)
        return rc;
    rc = send_req(ctx, n, pe, tag, r, NULL, 0);
    if (rc != WEFT_OK) {
        weft_sr_cancel(ctx, req);
        weft_sr_wait(ctx, req, NULL);
        return rc;
    }
    weft_status_t st;
    rc = weft_sr_wait(ctx, req, &st);
    return rc != WEFT_OK ? rc : st.length == len ? WEFT_OK : WEFT_EPROTO;
}

WEFT_API int weft_rma_get(weft_ctx_t *ctx, int pe, void *dest, const void *src, size_t len)
{
    int rc = check(ctx, pe);
    if (rc)
        return rc;
    const void *p = weft_rma_ptr_range(ctx, pe, src, len ? len : 1);
    if (p) {
        if (len)
            memmove(dest, p, len);
        return WEFT_OK;
    }
    rma_req_t r = {0};
    int kind;
    if (!weft__rma_locate(ctx, src, len, &kind, &r.off))
        return WEFT_EINVAL;
    if (!len)
        return WEFT_OK;
    r.kind = (uint32_t)kind;
    r.len = len;
    return ask(ctx, net(ctx), pe, TAG_GET, &r, dest, len);
}

WEFT_API int weft_rma_amo(weft_ctx_t *ctx, int pe, weft_rma_amo_op_t op, void *target, size_t size,
                          uint64_t operand, uint64_t compare, uint64_t *old)
{
    int rc = check(ctx, pe);
    if (rc)
        return rc;
    if ((size != 4 && size != 8) || op < WEFT_RMA_AMO_FETCH || op > WEFT_RMA_AMO_XOR)
        return WEFT_EINVAL;
    void *p = weft_rma_ptr_range(ctx, pe, target, size);
    uint64_t v;
    if (p) {
        v = weft__rma_amo_local(p, size, op, operand, compare);
    } else {
        rma_req_t r = {0};
        int kind;
        if (!weft__rma_locate(ctx, target, size, &kind, &r.off))
            return WEFT_EINVAL;
        r.kind = (uint32_t)kind;
        r.op = (uint32_t)op;
        r.len = size;
        r.operand = operand;
        r.compare = compare;
        if ((rc = ask(ctx, net(ctx), pe, TAG_AMO, &r, &v, sizeof v)) != WEFT_OK)
            return rc;
    }
    if (old)
        *old = v;
    return WEFT_OK;
}

WEFT_API int weft_rma_quiet(weft_ctx_t *ctx)
{
    struct weft__rma_net *n = ctx ? net(ctx) : NULL;
    atomic_thread_fence(memory_order_seq_cst);
    if (!n)
        return ctx ? WEFT_OK : WEFT_EINVAL;
    weft_idle_t idle = {0};
    while (atomic_load(&n->outstanding) > 0) {
        weft_progress(ctx);
        weft_idle(ctx, &idle);
    }
    return WEFT_OK;
}
