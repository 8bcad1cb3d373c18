/* Remote procedure calls on active messages (weft/weft_rpc.h).
 *
 * A call is an active message for the layer's id: its header holds the
 * service, the caller's call id and, when they fit, the arguments (else they
 * are the payload). The reply is a message for id + 1 with the call id and a
 * status in its header and the result as payload. The caller keeps its
 * calls in a table indexed by the low half of the call id (the high half a
 * generation, so a stale reply finds nothing); a reply's rendezvous payload
 * is received straight into the caller's buffer (the alloc function of id +
 * 1 looks the call up).
 *
 * A target's death: the first call to a rank posts a zero-byte receive from
 * it that no message ever matches (RPC_WATCH); the engine fails it when the
 * rank dies, and its handler fails every call still waiting on that rank.
 * Receives still posted at weft_finalize complete there as canceled, so the
 * handler and its records outlive the layer (a static handler, records freed
 * by it). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "progress/progress.h"
#include "util/log.h"
#include "weft/weft_rpc.h"

#define RPC_WATCH   0xffffff15u
#define CALL_HDR    16 /* service u32 | flags u32 | call id u64 */
#define CALL_INLINE (WEFT_AM_HEADER_MAX - CALL_HDR)
#define REPLY_HDR   16 /* call id u64 | status i32 | rsv u32 */
#define FLAG_INLINE 1u

typedef struct rpc_pending {
    weft__comp_node_t node;
    struct weft_rpc *rpc;
    void *reply;
    size_t cap;
    int peer;
    uint32_t service;
    uint32_t gen; /* of its slot when taken */
    uint32_t slot;
} rpc_pending_t;

struct weft_rpc_call {
    struct weft_rpc *rpc;
    int source;
    uint64_t id;
};

/* A watch on one target, freed by the watch handler. */
typedef struct rpc_watch {
    struct weft_rpc *rpc; /* NULL once the layer is freed */
    int peer;
} rpc_watch_t;

struct weft_rpc {
    weft_am_t *am;
    weft_ctx_t *ctx;
    uint32_t id;
    weft_handler_t on_call, on_reply;
    struct {
        weft_rpc_service_fn fn;
        void *arg;
    } services[WEFT_RPC_SERVICE_MAX + 1];
    weft_lock_t lock; /* the table, the services, the watches */
    rpc_pending_t **slots;
    uint32_t *gens;
    uint32_t nslots, *free_slots, nfree;
    weft_am_ep_t *own_ep; /* the layer's own replies (an unknown service), under own_lock */
    weft_lock_t own_lock;
    rpc_watch_t **watches; /* by rank, once a call went there */
    bool *dead;            /* ranks seen dead */
};

/* The handlers that may run after the layer was freed (at weft_finalize):
 * the watches', and that of a copy of ours that has left. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static weft_handler_t watch_handler, sent_handler;
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;

/* ---------------------------------------------------------------- the table */

static int table_add(struct weft_rpc *r, rpc_pending_t *p)
{
    weft_lock_acquire(&r->lock);
    if (!r->nfree) {
        uint32_t n = r->nslots ? 2 * r->nslots : 64;
        rpc_pending_t **s = realloc(r->slots, sizeof *s * n);
        if (s)
            r->slots = s;
        uint32_t *g = s ? realloc(r->gens, sizeof *g * n) : NULL;
        if (g)
            r->gens = g;
        uint32_t *f = g ? realloc(r->free_slots, sizeof *f * n) : NULL;
        if (!f) {
            weft_lock_release(&r->lock);
            return WEFT_ENOMEM;
        }
        r->free_slots = f;
        for (uint32_t i = r->nslots; i < n; i++) {
            r->slots[i] = NULL;
            r->gens[i] = 0;
            r->free_slots[r->nfree++] = n - 1 - (i - r->nslots);
        }
        r->nslots = n;
    }
    uint32_t slot = r->free_slots[--r->nfree];
    r->slots[slot] = p;
    p->slot = slot;
    p->gen = ++r->gens[slot];
    weft_lock_release(&r->lock);
    return WEFT_OK;
}

static inline uint64_t call_id(const rpc_pending_t *p)
{
    return ((uint64_t)p->gen << 32) | p->slot;
}

/* The call of id, taken out of the table (take) or only looked at; NULL
 * for a stale or forged id. */
static rpc_pending_t *table_find(struct weft_rpc *r, uint64_t id, bool take)
{
    uint32_t slot = (uint32_t)id, gen = (uint32_t)(id >> 32);
    rpc_pending_t *p = NULL;
    weft_lock_acquire(&r->lock);
    if (slot < r->nslots && r->slots[slot] && r->gens[slot] == gen) {
        p = r->slots[slot];
        if (take) {
            r->slots[slot] = NULL;
            r->free_slots[r->nfree++] = slot;
        }
    }
    weft_lock_release(&r->lock);
    return p;
}

static void pending_release(weft__comp_node_t *n)
{
    free(weft_container_of(n, rpc_pending_t, node));
}

/* Signal the caller's object for p, taken out of the table. */
static void finish(rpc_pending_t *p, int error, size_t length)
{
    p->node.next = NULL;
    p->node.release = pending_release;
    p->node.entry.error = error;
    p->node.entry.source = p->peer;
    p->node.entry.tag = p->service;
    p->node.entry.length = length;
    if (!weft__comp_signal(&p->node))
        free(p);
}

/* ---------------------------------------------------------------- watches */

static void watch_done(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    rpc_watch_t *w = e->user_context;
    pthread_mutex_lock(&watch_lock);
    struct weft_rpc *r = w->rpc;
    if (r && e->error == WEFT_EPEERDEAD) {
        /* Every call waiting on that rank fails. */
        weft_lock_acquire(&r->lock);
        r->dead[w->peer] = true;
        r->watches[w->peer] = NULL;
        rpc_pending_t **lost = malloc(sizeof *lost * (r->nslots ? r->nslots : 1));
        uint32_t n = 0;
        for (uint32_t i = 0; lost && i < r->nslots; i++) {
            rpc_pending_t *p = r->slots[i];
            if (p && p->peer == w->peer) {
                lost[n++] = p;
                r->slots[i] = NULL;
                r->free_slots[r->nfree++] = i;
            }
        }
        weft_lock_release(&r->lock);
        for (uint32_t i = 0; i < n; i++)
            finish(lost[i], WEFT_EPEERDEAD, 0);
        free(lost);
    } else if (r) {
        weft_lock_acquire(&r->lock);
        r->watches[w->peer] = NULL;
        weft_lock_release(&r->lock);
    }
    pthread_mutex_unlock(&watch_lock);
    free(w);
}

static void sent_done(const weft_comp_entry_t *e, void *arg);

static void handlers_init(void)
{
    weft_handler_init(&watch_handler, watch_done, NULL);
    weft_handler_init(&sent_handler, sent_done, NULL);
}

/* Watch peer from now on (once). */
static int watch(struct weft_rpc *r, int peer)
{
    weft_lock_acquire(&r->lock);
    bool dead = r->dead[peer], have = r->watches[peer] != NULL;
    weft_lock_release(&r->lock);
    if (dead)
        return WEFT_EPEERDEAD;
    if (have || peer == weft_rank(r->ctx))
        return WEFT_OK;
    rpc_watch_t *w = malloc(sizeof *w);
    if (!w)
        return WEFT_ENOMEM;
    w->rpc = r;
    w->peer = peer;
    pthread_mutex_lock(&watch_lock);
    weft_lock_acquire(&r->lock);
    have = r->watches[peer] != NULL;
    if (!have)
        r->watches[peer] = w;
    weft_lock_release(&r->lock);
    pthread_mutex_unlock(&watch_lock);
    if (have) {
        free(w);
        return WEFT_OK;
    }
    int rc = weft_sr_irecv_comp(r->ctx, peer, RPC_WATCH, r->id, NULL, 0, &watch_handler.comp, w);
    if (rc) {
        pthread_mutex_lock(&watch_lock);
        weft_lock_acquire(&r->lock);
        r->watches[peer] = NULL;
        weft_lock_release(&r->lock);
        pthread_mutex_unlock(&watch_lock);
        free(w);
    }
    return rc == WEFT_EPEERDEAD ? rc : WEFT_OK;
}

/* ---------------------------------------------------------------- sending */

static void sent_done(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    free(e->user_context);
}

/* Send a message whose payload (len bytes) the caller may reuse at once:
 * copied, and the copy freed once it has left. */
static int send_copy(struct weft_rpc *r, weft_am_ep_t *ep, int peer, uint32_t id, const void *hdr,
                     size_t hlen, const void *data, size_t len)
{
    void *copy = NULL;
    if (len && !(copy = malloc(len)))
        return WEFT_ENOMEM;
    if (len)
        memcpy(copy, data, len);
    struct iovec iov = {copy, len};
    int rc = weft_am_send(ep, peer, id, hdr, hlen, &iov, 1, &sent_handler.comp, copy, 0);
    if (rc == WEFT_INPROGRESS)
        return WEFT_OK;
    free(copy);
    return rc;
}

int weft_rpc_call(weft_rpc_t *r, weft_am_ep_t *ep, int peer, uint32_t service, const void *args,
                  size_t len, void *reply, size_t reply_cap, weft_comp_t *done, void *user_context)
{
    if (!r || !ep || service > WEFT_RPC_SERVICE_MAX || (len && !args) || (reply_cap && !reply) ||
        !weft__comp_valid(done))
        return WEFT_EINVAL;
    if (peer < 0 || peer >= weft_size(r->ctx))
        return WEFT_ERANK;
    int rc = watch(r, peer);
    if (rc)
        return rc;
    rpc_pending_t *p = malloc(sizeof *p);
    if (!p)
        return WEFT_ENOMEM;
    p->rpc = r;
    p->reply = reply;
    p->cap = reply_cap;
    p->peer = peer;
    p->service = service;
    p->node.comp = done;
    p->node.entry.user_context = user_context;
    if ((rc = table_add(r, p))) {
        free(p);
        return rc;
    }
    uint8_t hdr[WEFT_AM_HEADER_MAX];
    bool in_header = len <= CALL_INLINE;
    weft__le32_put(hdr, service);
    weft__le32_put(hdr + 4, in_header ? FLAG_INLINE : 0);
    weft__le64_put(hdr + 8, call_id(p));
    if (in_header && len)
        memcpy(hdr + CALL_HDR, args, len);
    rc = send_copy(r, ep, peer, r->id, hdr, CALL_HDR + (in_header ? len : 0),
                   in_header ? NULL : args, in_header ? 0 : len);
    if (rc && table_find(r, call_id(p), true))
        free(p);
    return rc;
}

/* ---------------------------------------------------------------- serving */

int weft_rpc_call_source(const weft_rpc_call_t *call)
{
    return call ? call->source : -1;
}

static int reply_status(weft_rpc_call_t *call, weft_am_ep_t *ep, int status, const void *data,
                        size_t len)
{
    uint8_t hdr[REPLY_HDR];
    weft__le64_put(hdr, call->id);
    weft__le32_put(hdr + 8, (uint32_t)status);
    weft__le32_put(hdr + 12, 0);
    struct weft_rpc *r = call->rpc;
    int rc = send_copy(r, ep, call->source, r->id + 1, hdr, sizeof hdr, data, len);
    free(call);
    return rc;
}

int weft_rpc_reply(weft_rpc_call_t *call, weft_am_ep_t *ep, const void *data, size_t len)
{
    if (!call || !ep || (len && !data))
        return WEFT_EINVAL;
    return reply_status(call, ep, WEFT_OK, data, len);
}

static void on_call(const weft_comp_entry_t *e, void *arg)
{
    struct weft_rpc *r = arg;
    weft_am_msg_t *m = e->user_context;
    if (m->hlen < CALL_HDR || m->error) {
        weft_log_error("dropped a malformed call from rank %d", m->source);
        return;
    }
    const uint8_t *h = m->header;
    uint32_t service = weft__le32_get(h);
    bool in_header = weft__le32_get(h + 4) & FLAG_INLINE;
    weft_rpc_call_t *call = malloc(sizeof *call);
    if (!call) {
        weft_log_error("dropped a call from rank %d: out of memory", m->source);
        return;
    }
    call->rpc = r;
    call->source = m->source;
    call->id = weft__le64_get(h + 8);
    weft_rpc_service_fn fn = NULL;
    void *sarg = NULL;
    if (service <= WEFT_RPC_SERVICE_MAX) {
        weft_lock_acquire(&r->lock);
        fn = r->services[service].fn;
        sarg = r->services[service].arg;
        weft_lock_release(&r->lock);
    }
    if (!fn) {
        weft_lock_acquire(&r->own_lock);
        reply_status(call, r->own_ep, WEFT_ENOTFOUND, NULL, 0);
        weft_lock_release(&r->own_lock);
        return;
    }
    if (in_header)
        fn(call, h + CALL_HDR, m->hlen - CALL_HDR, sarg);
    else
        fn(call, m->data, m->length, sarg);
}

/* A rendezvous reply goes straight into the caller's buffer when it fits. */
static void *reply_alloc(size_t len, const weft_am_msg_t *m, void *arg)
{
    struct weft_rpc *r = arg;
    if (m->hlen < REPLY_HDR)
        return NULL;
    rpc_pending_t *p = table_find(r, weft__le64_get(m->header), false);
    return p && len <= p->cap ? p->reply : NULL;
}

static void on_reply(const weft_comp_entry_t *e, void *arg)
{
    struct weft_rpc *r = arg;
    weft_am_msg_t *m = e->user_context;
    if (m->hlen < REPLY_HDR)
        return;
    rpc_pending_t *p = table_find(r, weft__le64_get(m->header), true);
    if (!p)
        return; /* its call failed already (the target was seen dead) */
    int status = (int32_t)weft__le32_get((const uint8_t *)m->header + 8);
    size_t n = m->length < p->cap ? m->length : p->cap;
    if (m->error)
        status = m->error;
    else if (n && m->data != p->reply)
        memcpy(p->reply, m->data, n);
    if (status == WEFT_OK && m->length > p->cap)
        status = WEFT_ETRUNC;
    finish(p, status, status == WEFT_ENOTFOUND ? 0 : n);
}

/* ---------------------------------------------------------------- the layer */

int weft_rpc_create(weft_am_t *am, uint32_t id, weft_rpc_t **rpc_out)
{
    if (!am || !rpc_out || id >= WEFT_AM_ID_MAX)
        return WEFT_EINVAL;
    struct weft_rpc *r = calloc(1, sizeof *r);
    if (!r)
        return WEFT_ENOMEM;
    r->am = am;
    r->ctx = weft_am_ctx(am);
    r->id = id;
    int size = weft_size(r->ctx);
    r->watches = calloc((size_t)size, sizeof *r->watches);
    r->dead = calloc((size_t)size, sizeof *r->dead);
    if (!r->watches || !r->dead) {
        free(r->watches);
        free(r->dead);
        free(r);
        return WEFT_ENOMEM;
    }
    weft_lock_init(&r->lock, WEFT_LOCK_SPIN);
    weft_lock_init(&r->own_lock, WEFT_LOCK_SPIN);
    weft_handler_init(&r->on_call, on_call, r);
    weft_handler_init(&r->on_reply, on_reply, r);
    pthread_once(&watch_once, handlers_init);
    int rc = weft_am_ep_create(am, &r->own_ep);
    if (rc == WEFT_OK)
        rc = weft_am_register(am, id, &r->on_call.comp, NULL, NULL);
    if (rc == WEFT_OK)
        rc = weft_am_register(am, id + 1, &r->on_reply.comp, reply_alloc, r);
    if (rc) {
        weft_am_ep_free(r->own_ep);
        free(r->watches);
        free(r->dead);
        free(r);
        return rc;
    }
    *rpc_out = r;
    return WEFT_OK;
}

int weft_rpc_free(weft_rpc_t *r)
{
    if (!r)
        return WEFT_OK;
    /* Watches still posted outlive the layer: their handler frees them. */
    pthread_mutex_lock(&watch_lock);
    for (int i = 0; i < weft_size(r->ctx); i++)
        if (r->watches[i])
            r->watches[i]->rpc = NULL;
    pthread_mutex_unlock(&watch_lock);
    weft_am_ep_free(r->own_ep);
    for (uint32_t i = 0; i < r->nslots; i++)
        free(r->slots[i]);
    free(r->slots);
    free(r->gens);
    free(r->free_slots);
    free(r->watches);
    free(r->dead);
    free(r);
    return WEFT_OK;
}

int weft_rpc_register(weft_rpc_t *r, uint32_t service, weft_rpc_service_fn fn, void *arg)
{
    if (!r || service > WEFT_RPC_SERVICE_MAX || !fn)
        return WEFT_EINVAL;
    int rc = WEFT_OK;
    weft_lock_acquire(&r->lock);
    if (r->services[service].fn) {
        rc = WEFT_ESTATE;
    } else {
        r->services[service].fn = fn;
        r->services[service].arg = arg;
    }
    weft_lock_release(&r->lock);
    return rc;
}
