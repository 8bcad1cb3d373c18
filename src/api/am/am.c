/* Active messages and puts with a remote signal (weft/weft_am.h).
 *
 * On the wire a message is an engine message on the layer's sink id
 * (AM_COMM): the engine hands it to am_sink without matching, under its
 * lock. Its tag says what it is:
 *
 *   bits 0-15 handler id | 16-23 form | 24-31 header bytes | 32-63 the
 *   sender's count (tags unique per sender, for the rendezvous fallback)
 *
 * and its payload, by form:
 *
 *   EAGER      header | data
 *   PUT        region u32 | rsv u32 | offset u64 | header | data
 *   ANNOUNCE   length u64 | data tag u64 | header
 *   PUT_ANN    length u64 | data tag u64 | region u32 | rsv u32 | offset u64 | header
 *
 * An announced payload follows as an engine message on AM_DATA with the
 * data tag (endpoint << 32 | its count), which the target receives into the
 * buffer its alloc function gave (or the region), by the engine's
 * rendezvous. A sink message that itself came by rendezvous (its sender was
 * short of credit) is received by its tag into a buffer of the layer's and
 * then taken as if it had arrived eagerly.
 *
 * What the sink may not do under the engine lock (call a handler, an alloc
 * function, post a receive) goes to the deferred list, which the layer's
 * progress callback runs after each pass, unlocked. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "progress/progress.h"
#include "util/log.h"
#include "weft/weft_am.h"

#define AM_COMM    WEFT__SINK_COMM
#define AM_DATA    0xffffff14u
#define AM_REGIONS 64
#define AM_SMALL   256 /* header + data a pooled message holds */
#define AM_PREFIX  24  /* the longest payload prefix before the header (PUT_ANN) */
#define AM_GATHER  16  /* payload pieces sent without allocating an iovec */

enum { FORM_EAGER = 0, FORM_PUT = 1, FORM_ANNOUNCE = 2, FORM_PUT_ANN = 3 };

/* What a deferred entry asks for. */
enum { DEF_HANDLER = 1, DEF_ANNOUNCE = 2, DEF_FETCH = 3 };

typedef struct am_msg {
    weft_am_msg_t pub;
    weft__comp_node_t node;
    struct weft_am *am;
    struct am_msg *next; /* deferred list, waiting list, free list */
    int def;             /* DEF_* while deferred */
    bool kept;
    bool pooled;     /* from the free list (AM_SMALL bytes inline) */
    bool data_owned; /* data is the layer's malloc, freed with the message */
    uint64_t data_tag;
    uint8_t *fetched; /* DEF_FETCH: the buffer the sink message is received into */
    uint64_t wire_tag;
    _Alignas(8) uint8_t inline_[];
} am_msg_t;

typedef struct am_handler {
    weft_comp_t *comp;
    weft_am_alloc_fn alloc;
    void *arg;
    am_msg_t *waiting, *waiting_tail; /* arrived before the registration */
} am_handler_t;

/* A message handed to the scheduler: its prefix and header, and where its
 * completion goes. */
typedef struct am_posted {
    weft__comp_node_t node; /* the user's local completion */
    struct am_posted *next; /* a free list */
    weft_comp_t *local;
    void *user_context;
    int peer;
    uint32_t id;
    size_t length;
    uint8_t wire[AM_PREFIX + WEFT_AM_HEADER_MAX];
} am_posted_t;

struct weft_am_ep {
    struct weft_am *am;
    struct weft_am_ep *next; /* the layer's list */
    uint32_t index;
    uint32_t count;     /* tags and data tags */
    am_posted_t *spare; /* free posted objects, the endpoint's own */
    _Atomic uint64_t sent_now, sent_queued, sent_rdv, retries;
};

struct weft_am {
    weft_ctx_t *ctx;
    int progress_id;
    weft_lock_t lock; /* handlers' waiting lists, regions, endpoints, free messages */
    am_handler_t handlers[WEFT_AM_ID_MAX + 1];
    struct {
        uint8_t *base;
        size_t len;
    } regions[AM_REGIONS];
    _Atomic uint32_t nregions;
    struct weft_am_ep *eps;
    uint32_t next_ep;
    am_msg_t *free_msgs;
    /* The deferred list, oldest first, and whether it has anything. */
    weft_lock_t def_lock;
    am_msg_t *def_head, *def_tail;
    atomic_int def_n;
    /* Internal completions: a rendezvous payload in place, a sink message
     * received by rendezvous. */
    weft_handler_t data_done, fetch_done;
    _Atomic uint64_t delivered, waited;
};

/* ---------------------------------------------------------------- messages */

static am_msg_t *msg_new(struct weft_am *am, size_t inline_len)
{
    am_msg_t *m = NULL;
    if (inline_len <= AM_SMALL) {
        weft_lock_acquire(&am->lock);
        if ((m = am->free_msgs))
            am->free_msgs = m->next;
        weft_lock_release(&am->lock);
        if (!m && !(m = malloc(sizeof *m + AM_SMALL)))
            return NULL;
        m->pooled = true;
    } else {
        if (!(m = malloc(sizeof *m + inline_len)))
            return NULL;
        m->pooled = false;
    }
    m->am = am;
    m->next = NULL;
    m->def = 0;
    m->kept = false;
    m->data_owned = false;
    m->fetched = NULL;
    m->pub.error = WEFT_OK;
    m->pub.region = UINT32_MAX;
    m->pub.region_offset = 0;
    m->pub.reserved = 0;
    return m;
}

static void msg_free(am_msg_t *m)
{
    struct weft_am *am = m->am;
    if (m->data_owned)
        free(m->pub.data);
    m->data_owned = false;
    if (!m->pooled) {
        free(m);
        return;
    }
    weft_lock_acquire(&am->lock);
    m->next = am->free_msgs;
    am->free_msgs = m;
    weft_lock_release(&am->lock);
}

void weft_am_msg_keep(weft_am_msg_t *msg)
{
    if (msg)
        weft_container_of(msg, am_msg_t, pub)->kept = true;
}

void weft_am_msg_release(weft_am_msg_t *msg)
{
    if (msg)
        msg_free(weft_container_of(msg, am_msg_t, pub));
}

static void node_kept(weft__comp_node_t *node)
{
    (void)node; /* the message is the consumer's once popped */
}

static void defer(struct weft_am *am, am_msg_t *m, int what)
{
    m->def = what;
    m->next = NULL;
    weft_lock_acquire(&am->def_lock);
    if (am->def_tail)
        am->def_tail->next = m;
    else
        am->def_head = m;
    am->def_tail = m;
    atomic_fetch_add_explicit(&am->def_n, 1, memory_order_release);
    weft_lock_release(&am->def_lock);
}

/* Hand m to its handler's completion object; unlocked says whether a
 * handler function may run here. */
static void deliver(struct weft_am *am, am_msg_t *m, bool unlocked)
{
    am_handler_t *h = &am->handlers[m->pub.id];
    weft_comp_t *comp =
        atomic_load_explicit((_Atomic(weft_comp_t *) *)&h->comp, memory_order_acquire);
    if (!comp) {
        weft_lock_acquire(&am->lock);
        if (!(comp = h->comp)) {
            m->next = NULL;
            if (h->waiting_tail)
                h->waiting_tail->next = m;
            else
                h->waiting = m;
            h->waiting_tail = m;
            atomic_fetch_add_explicit(&am->waited, 1, memory_order_relaxed);
        }
        weft_lock_release(&am->lock);
        if (!comp)
            return;
    }
    if (comp->kind == WEFT_COMP_HANDLER && !unlocked) {
        defer(am, m, DEF_HANDLER);
        return;
    }
    weft__comp_node_t *n = &m->node;
    n->next = NULL;
    n->comp = comp;
    n->release = node_kept;
    n->entry.error = m->pub.error;
    n->entry.source = m->pub.source;
    n->entry.tag = m->pub.id;
    n->entry.length = m->pub.length;
    atomic_fetch_add_explicit(&am->delivered, 1, memory_order_relaxed);
    switch (comp->kind) {
    case WEFT_COMP_CQ:
        n->entry.user_context = &m->pub;
        weft__comp_signal(n);
        return;
    case WEFT_COMP_HANDLER:
        n->entry.user_context = &m->pub;
        m->kept = false;
        weft__comp_signal(n);
        if (!m->kept)
            msg_free(m);
        return;
    default:
        n->entry.user_context = NULL;
        weft__comp_signal(n);
        msg_free(m);
        return;
    }
}

/* ---------------------------------------------------------------- arrival */

static inline uint32_t tag_id(uint64_t t)
{
    return (uint32_t)(t & 0xffff);
}
static inline int tag_form(uint64_t t)
{
    return (int)((t >> 16) & 0xff);
}
static inline uint32_t tag_hlen(uint64_t t)
{
    return (uint32_t)((t >> 24) & 0xff);
}

/* Where a put writes: NULL when the region is unknown or too small. */
static uint8_t *region_at(struct weft_am *am, uint32_t region, uint64_t offset, uint64_t len)
{
    if (region >= atomic_load_explicit(&am->nregions, memory_order_acquire))
        return NULL;
    size_t size = am->regions[region].len;
    if (offset > size || len > size - offset)
        return NULL;
    return am->regions[region].base + offset;
}

/* A sink message of len bytes at p from peer, tag t: made a message and
 * delivered, or deferred. */
static void take(struct weft_am *am, int peer, uint64_t t, const uint8_t *p, size_t len,
                 bool unlocked)
{
    const int form = tag_form(t);
    const uint32_t hlen = tag_hlen(t), id = tag_id(t);
    size_t prefix = form == FORM_PUT        ? 16
                    : form == FORM_ANNOUNCE ? 16
                    : form == FORM_PUT_ANN  ? 32
                                            : 0;
    if (id > WEFT_AM_ID_MAX || form > FORM_PUT_ANN || hlen > WEFT_AM_HEADER_MAX ||
        len < prefix + hlen) {
        weft_log_error("dropped a malformed active message from rank %d", peer);
        return;
    }
    const size_t dlen = len - prefix - hlen;
    const bool copy_data = form == FORM_EAGER;
    am_msg_t *m = msg_new(am, hlen + (copy_data ? dlen : 0));
    if (!m) {
        weft_log_error("dropped an active message from rank %d: out of memory", peer);
        return;
    }
    m->pub.id = id;
    m->pub.source = peer;
    m->pub.hlen = hlen;
    m->pub.header = m->inline_;
    m->wire_tag = t;
    if (hlen)
        memcpy(m->inline_, p + prefix, hlen);
    switch (form) {
    case FORM_EAGER:
        m->pub.data = m->inline_ + hlen;
        m->pub.length = dlen;
        if (dlen)
            memcpy(m->pub.data, p + prefix + hlen, dlen);
        deliver(am, m, unlocked);
        return;
    case FORM_PUT: {
        uint32_t region = weft__le32_get(p);
        uint64_t off = weft__le64_get(p + 8);
        uint8_t *dst = region_at(am, region, off, dlen);
        m->pub.region = region;
        m->pub.region_offset = off;
        m->pub.length = dlen;
        m->pub.data = dst;
        if (dst && dlen)
            memcpy(dst, p + prefix + hlen, dlen);
        if (!dst)
            m->pub.error = WEFT_EINVAL;
        deliver(am, m, unlocked);
        return;
    }
    default: /* announced: the payload comes by rendezvous */
        m->pub.length = weft__le64_get(p);
        m->data_tag = weft__le64_get(p + 8);
        m->pub.data = NULL;
        if (form == FORM_PUT_ANN) {
            m->pub.region = weft__le32_get(p + 16);
            m->pub.region_offset = weft__le64_get(p + 24);
        }
        defer(am, m, DEF_ANNOUNCE);
        return;
    }
}

static void am_sink(void *arg, int peer, uint64_t tag, const void *payload, size_t len, bool rdv)
{
    struct weft_am *am = arg;
    if (!rdv) {
        take(am, peer, tag, payload, len, false);
        return;
    }
    /* To be received by its tag into a buffer of ours, then taken. */
    am_msg_t *m = msg_new(am, 0);
    if (!m) {
        weft_log_error("dropped an active message from rank %d: out of memory", peer);
        return;
    }
    m->pub.source = peer;
    m->pub.length = len;
    m->wire_tag = tag;
    defer(am, m, DEF_FETCH);
}

/* A rendezvous payload is in place. */
static void data_done(const weft_comp_entry_t *e, void *arg)
{
    struct weft_am *am = arg;
    am_msg_t *m = e->user_context;
    m->pub.error = e->error;
    deliver(am, m, true);
}

/* A sink message that came by rendezvous is here. */
static void fetch_done(const weft_comp_entry_t *e, void *arg)
{
    struct weft_am *am = arg;
    am_msg_t *m = e->user_context;
    if (e->error)
        weft_log_error("lost an active message from rank %d: %s", m->pub.source,
                       weft_strerror(e->error));
    else
        take(am, m->pub.source, m->wire_tag, m->fetched, (size_t)m->pub.length, true);
    free(m->fetched);
    m->fetched = NULL;
    msg_free(m);
}

static void run_deferred(struct weft_am *am, am_msg_t *m)
{
    weft_ctx_t *ctx = am->ctx;
    int rc;
    switch (m->def) {
    case DEF_HANDLER:
        deliver(am, m, true);
        return;
    case DEF_FETCH:
        if (!(m->fetched = malloc(m->pub.length ? m->pub.length : 1))) {
            weft_log_error("lost an active message from rank %d: out of memory", m->pub.source);
            msg_free(m);
            return;
        }
        rc = weft_sr_irecv_comp(ctx, m->pub.source, AM_COMM, m->wire_tag, m->fetched, m->pub.length,
                                &am->fetch_done.comp, m);
        if (rc) {
            weft_log_error("lost an active message from rank %d: %s", m->pub.source,
                           weft_strerror(rc));
            free(m->fetched);
            msg_free(m);
        }
        return;
    default: /* DEF_ANNOUNCE */
        break;
    }
    void *buf = NULL;
    if (m->pub.region != UINT32_MAX) {
        if (!(buf = region_at(am, m->pub.region, m->pub.region_offset, m->pub.length)))
            m->pub.error = WEFT_EINVAL;
    } else {
        am_handler_t *h = &am->handlers[m->pub.id];
        if (h->alloc)
            buf = h->alloc(m->pub.length, &m->pub, h->arg);
        if (!buf) {
            buf = malloc(m->pub.length ? m->pub.length : 1);
            m->data_owned = buf != NULL;
            if (!buf)
                m->pub.error = WEFT_ENOMEM;
        }
    }
    /* A payload that has nowhere to go is received into nothing: the
     * sender's side ends (as truncated), the target's message carries the
     * error. */
    m->pub.data = buf;
    rc = weft_sr_irecv_comp(ctx, m->pub.source, AM_DATA, m->data_tag, buf, buf ? m->pub.length : 0,
                            &am->data_done.comp, m);
    if (rc) {
        m->pub.error = rc;
        deliver(am, m, true);
    }
}

static int am_progress(void *arg)
{
    struct weft_am *am = arg;
    if (!atomic_load_explicit(&am->def_n, memory_order_acquire))
        return 0;
    weft_lock_acquire(&am->def_lock);
    am_msg_t *m = am->def_head;
    am->def_head = am->def_tail = NULL;
    atomic_store_explicit(&am->def_n, 0, memory_order_relaxed);
    weft_lock_release(&am->def_lock);
    int n = 0;
    while (m) {
        am_msg_t *next = m->next;
        run_deferred(am, m);
        m = next;
        n++;
    }
    return n;
}

/* ---------------------------------------------------------------- sending */

/* Posted objects, and the handler their sends complete into, belong to the
 * process, not to a layer: a send may complete after its layer was freed
 * (at weft_finalize, say), and its object then still finds its way back.
 * The stack holds objects returned from any thread, lock-free, taken whole
 * by an endpoint that has none. */
static _Atomic(am_posted_t *) posted_returned;
static weft_handler_t posted_handler;
static pthread_once_t posted_once = PTHREAD_ONCE_INIT;
static void posted_done(const weft_comp_entry_t *e, void *arg);
static void posted_init(void)
{
    weft_handler_init(&posted_handler, posted_done, NULL);
}

/* A count that one thread writes (its endpoint's) and any thread reads. */
static inline void bump(_Atomic uint64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static am_posted_t *posted_get(struct weft_am_ep *ep)
{
    if (!ep->spare)
        ep->spare = atomic_exchange_explicit(&posted_returned, NULL, memory_order_acquire);
    am_posted_t *p = ep->spare;
    if (p) {
        ep->spare = p->next;
        return p;
    }
    return malloc(sizeof *p);
}

static void posted_put(am_posted_t *p)
{
    am_posted_t *head = atomic_load_explicit(&posted_returned, memory_order_relaxed);
    do
        p->next = head;
    while (!atomic_compare_exchange_weak_explicit(&posted_returned, &head, p, memory_order_release,
                                                  memory_order_relaxed));
}

static void posted_release(weft__comp_node_t *node)
{
    posted_put(weft_container_of(node, am_posted_t, node));
}

/* A queued message left (or failed): the user's local completion. */
static void posted_done(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    am_posted_t *p = e->user_context;
    if (!p->local) {
        posted_put(p);
        return;
    }
    weft__comp_node_t *n = &p->node;
    n->next = NULL;
    n->comp = p->local;
    n->release = posted_release;
    n->entry.user_context = p->user_context;
    n->entry.error = e->error;
    n->entry.source = p->peer;
    n->entry.tag = p->id;
    n->entry.length = p->length;
    if (!weft__comp_signal(n))
        posted_put(p);
}

/* Where a posted message's completion goes, and what its entry says. */
static inline void posted_fill(am_posted_t *p, weft_comp_t *local, void *user_context, int peer,
                               uint32_t id, size_t length)
{
    p->local = local;
    p->user_context = user_context;
    p->peer = peer;
    p->id = id;
    p->length = length;
}

static inline uint64_t make_tag(uint32_t id, int form, size_t hlen, uint32_t count)
{
    return (uint64_t)id | ((uint64_t)form << 16) | ((uint64_t)hlen << 24) | ((uint64_t)count << 32);
}

/* Send the sink message prefix+header (a, alen) then the payload iov: at
 * once when it can, else queued with the local completion (local may be NULL
 * for the announce of a rendezvous, whose data send has it). */
static int send_sink(struct weft_am_ep *ep, int peer, uint64_t tag, const uint8_t *a, size_t alen,
                     const struct iovec *iov, int iovcnt, size_t dlen, weft_comp_t *local,
                     void *user_context, unsigned flags)
{
    weft_ctx_t *ctx = ep->am->ctx;
    /* The payload in one piece for the immediate path. */
    const void *b = NULL;
    uint8_t gathered[WEFT_AM_EAGER_MAX];
    if (iovcnt == 1) {
        b = iov[0].iov_base;
    } else if (iovcnt > 1 && alen + dlen <= WEFT_AM_EAGER_MAX) {
        size_t off = 0;
        for (int i = 0; i < iovcnt; i++) {
            if (iov[i].iov_len)
                memcpy(gathered + off, iov[i].iov_base, iov[i].iov_len);
            off += iov[i].iov_len;
        }
        b = gathered;
    }
    int rc = WEFT_EUNSUPPORTED;
    /* A message of this thread still waiting for the engine's holder leaves
     * first (weft_sr_isend's rule). */
    if (!atomic_load_explicit(&ctx->deferred[weft__defer_slot()].n, memory_order_acquire)) {
        if (weft__proto_send_now_mt(ctx, peer)) {
            rc = weft__proto_send_now(ctx, peer, AM_COMM, tag, a, alen, b, dlen);
        } else if (weft_lock_try(&ctx->lock)) {
            if (!atomic_load_explicit(&ctx->submitted, memory_order_relaxed))
                rc = weft__proto_send_now(ctx, peer, AM_COMM, tag, a, alen, b, dlen);
            weft__unlock(ctx);
        } else {
            rc = WEFT_EAGAIN;
        }
    }
    if (rc == WEFT_OK) {
        bump(&ep->sent_now);
        return WEFT_OK;
    }
    if (rc == WEFT_EPEERDEAD)
        return rc;
    if (rc == WEFT_EAGAIN && (flags & WEFT_AM_IMMEDIATE)) {
        bump(&ep->retries);
        return WEFT_EAGAIN;
    }
    am_posted_t *p = posted_get(ep);
    if (!p)
        return WEFT_ENOMEM;
    memcpy(p->wire, a, alen);
    posted_fill(p, local, user_context, peer, tag_id(tag), dlen);
    struct iovec stack[AM_GATHER + 1], *v = stack;
    if (iovcnt + 1 > (int)WEFT_ARRAY_SIZE(stack) &&
        !(v = malloc(sizeof *v * (size_t)(iovcnt + 1)))) {
        posted_put(p);
        return WEFT_ENOMEM;
    }
    v[0] = (struct iovec){p->wire, alen};
    for (int i = 0; i < iovcnt; i++)
        v[i + 1] = iov[i];
    rc = weft_sr_isendv_comp(ctx, peer, AM_COMM, tag, v, iovcnt + 1, &posted_handler.comp, p);
    if (v != stack)
        free(v);
    if (rc) {
        posted_put(p);
        return rc;
    }
    bump(&ep->sent_queued);
    return WEFT_INPROGRESS;
}

static int check_send(struct weft_am_ep *ep, int peer, uint32_t id, const void *header, size_t hlen,
                      const struct iovec *iov, int iovcnt, weft_comp_t *local, size_t *dlen)
{
    if (!ep || id > WEFT_AM_ID_MAX || hlen > WEFT_AM_HEADER_MAX || (hlen && !header) ||
        iovcnt < 0 || (iovcnt && !iov) || (local && !weft__comp_valid(local)))
        return WEFT_EINVAL;
    if (peer < 0 || peer >= weft_size(ep->am->ctx))
        return WEFT_ERANK;
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++) {
        if ((!iov[i].iov_base && iov[i].iov_len) || n + iov[i].iov_len < n)
            return WEFT_EINVAL;
        n += iov[i].iov_len;
    }
    *dlen = n;
    return WEFT_OK;
}

/* The payload by rendezvous: the announce (prefix a of alen bytes, ending
 * with the header), then the data on AM_DATA with the local completion. */
static int send_rdv(struct weft_am_ep *ep, int peer, uint32_t id, int form, size_t hlen, uint8_t *a,
                    size_t alen, const struct iovec *iov, int iovcnt, size_t dlen,
                    weft_comp_t *local, void *user_context)
{
    weft_ctx_t *ctx = ep->am->ctx;
    uint32_t count = ep->count++;
    uint64_t data_tag = ((uint64_t)ep->index << 32) | count;
    weft__le64_put(a, dlen);
    weft__le64_put(a + 8, data_tag);
    int rc =
        send_sink(ep, peer, make_tag(id, form, hlen, count), a, alen, NULL, 0, 0, NULL, NULL, 0);
    if (rc < 0)
        return rc;
    /* The data: completion to the user's local object through a posted
     * object of ours, for the target rank in its entry. */
    am_posted_t *p = posted_get(ep);
    if (!p)
        return WEFT_ENOMEM;
    posted_fill(p, local, user_context, peer, id, dlen);
    rc = weft_sr_isendv_comp(ctx, peer, AM_DATA, data_tag, iov, iovcnt, &posted_handler.comp, p);
    if (rc) {
        posted_put(p);
        return rc;
    }
    bump(&ep->sent_rdv);
    return WEFT_INPROGRESS;
}

int weft_am_send(weft_am_ep_t *ep, int peer, uint32_t id, const void *header, size_t hlen,
                 const struct iovec *iov, int iovcnt, weft_comp_t *local, void *user_context,
                 unsigned flags)
{
    size_t dlen;
    int rc = check_send(ep, peer, id, header, hlen, iov, iovcnt, local, &dlen);
    if (rc)
        return rc;
    uint8_t a[AM_PREFIX + WEFT_AM_HEADER_MAX];
    if (hlen + dlen <= WEFT_AM_EAGER_MAX) {
        if (hlen)
            memcpy(a, header, hlen);
        return send_sink(ep, peer, make_tag(id, FORM_EAGER, hlen, ep->count++), a, hlen, iov,
                         iovcnt, dlen, local, user_context, flags);
    }
    if (flags & WEFT_AM_IMMEDIATE)
        return WEFT_EAGAIN; /* a rendezvous never leaves inside the call */
    if (hlen)
        memcpy(a + 16, header, hlen);
    return send_rdv(ep, peer, id, FORM_ANNOUNCE, hlen, a, 16 + hlen, iov, iovcnt, dlen, local,
                    user_context);
}

int weft_am_put_signal(weft_am_ep_t *ep, int peer, uint32_t id, const void *header, size_t hlen,
                       const void *buf, size_t len, uint32_t region, uint64_t offset,
                       weft_comp_t *local, void *user_context, unsigned flags)
{
    struct iovec iov = {(void *)buf, len};
    size_t dlen;
    int rc = check_send(ep, peer, id, header, hlen, &iov, 1, local, &dlen);
    if (rc)
        return rc;
    uint8_t a[AM_PREFIX + 8 + WEFT_AM_HEADER_MAX];
    if (16 + hlen + len <= WEFT_AM_EAGER_MAX) {
        weft__le32_put(a, region);
        weft__le32_put(a + 4, 0);
        weft__le64_put(a + 8, offset);
        if (hlen)
            memcpy(a + 16, header, hlen);
        return send_sink(ep, peer, make_tag(id, FORM_PUT, hlen, ep->count++), a, 16 + hlen, &iov, 1,
                         len, local, user_context, flags);
    }
    if (flags & WEFT_AM_IMMEDIATE)
        return WEFT_EAGAIN;
    weft__le32_put(a + 16, region);
    weft__le32_put(a + 20, 0);
    weft__le64_put(a + 24, offset);
    if (hlen)
        memcpy(a + 32, header, hlen);
    return send_rdv(ep, peer, id, FORM_PUT_ANN, hlen, a, 32 + hlen, &iov, 1, len, local,
                    user_context);
}

/* ---------------------------------------------------------------- the layer */

int weft_am_create(weft_ctx_t *ctx, weft_am_t **am_out)
{
    if (!ctx || !am_out)
        return WEFT_EINVAL;
    struct weft_am *am = calloc(1, sizeof *am);
    if (!am)
        return WEFT_ENOMEM;
    am->ctx = ctx;
    weft_lock_init(&am->lock, WEFT_LOCK_SPIN);
    weft_lock_init(&am->def_lock, WEFT_LOCK_SPIN);
    pthread_once(&posted_once, posted_init);
    weft_handler_init(&am->data_done, data_done, am);
    weft_handler_init(&am->fetch_done, fetch_done, am);
    int rc = weft_progress_register(ctx, am_progress, am, &am->progress_id);
    if (rc) {
        free(am);
        return rc;
    }
    if ((rc = weft__sink_set(ctx, AM_COMM, am_sink, am))) {
        weft_progress_unregister(ctx, am->progress_id);
        free(am);
        return rc;
    }
    /* Messages that arrived before the sink: received as the sink would
     * have been told of rendezvous ones. */
    for (;;) {
        int flag = 0;
        weft_status_t st;
        if (weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, AM_COMM, WEFT_ANY_TAG, &flag, &st) || !flag)
            break;
        am_msg_t *m = msg_new(am, 0);
        if (!m)
            break;
        m->pub.source = st.source;
        m->pub.length = st.length;
        m->wire_tag = st.tag;
        m->def = DEF_FETCH;
        run_deferred(am, m);
    }
    *am_out = am;
    return WEFT_OK;
}

weft_ctx_t *weft_am_ctx(const weft_am_t *am)
{
    return am ? am->ctx : NULL;
}

static void msgs_free(am_msg_t *m)
{
    while (m) {
        am_msg_t *next = m->next;
        if (m->data_owned)
            free(m->pub.data);
        free(m->fetched);
        free(m);
        m = next;
    }
}

int weft_am_free(weft_am_t *am)
{
    if (!am)
        return WEFT_OK;
    weft__sink_set(am->ctx, AM_COMM, NULL, NULL);
    weft_progress_unregister(am->ctx, am->progress_id);
    for (uint32_t i = 0; i <= WEFT_AM_ID_MAX; i++)
        msgs_free(am->handlers[i].waiting);
    msgs_free(am->def_head);
    msgs_free(am->free_msgs);
    while (am->eps)
        weft_am_ep_free(am->eps);
    free(am);
    return WEFT_OK;
}

int weft_am_register(weft_am_t *am, uint32_t id, weft_comp_t *comp, weft_am_alloc_fn alloc,
                     void *arg)
{
    if (!am || id > WEFT_AM_ID_MAX || !weft__comp_valid(comp))
        return WEFT_EINVAL;
    am_handler_t *h = &am->handlers[id];
    weft_lock_acquire(&am->lock);
    if (h->comp) {
        weft_lock_release(&am->lock);
        return WEFT_ESTATE;
    }
    h->alloc = alloc;
    h->arg = arg;
    atomic_store_explicit((_Atomic(weft_comp_t *) *)&h->comp, comp, memory_order_release);
    am_msg_t *m = h->waiting;
    h->waiting = h->waiting_tail = NULL;
    weft_lock_release(&am->lock);
    /* What waited for it, in the order it arrived (unlocked: handlers may run). */
    while (m) {
        am_msg_t *next = m->next;
        deliver(am, m, true);
        m = next;
    }
    return WEFT_OK;
}

int weft_am_region_register(weft_am_t *am, void *base, size_t len, uint32_t *region_out)
{
    if (!am || !region_out || (!base && len))
        return WEFT_EINVAL;
    weft_lock_acquire(&am->lock);
    uint32_t n = atomic_load_explicit(&am->nregions, memory_order_relaxed);
    if (n == AM_REGIONS) {
        weft_lock_release(&am->lock);
        return WEFT_ENOBUFS;
    }
    am->regions[n].base = base;
    am->regions[n].len = len;
    atomic_store_explicit(&am->nregions, n + 1, memory_order_release);
    weft_lock_release(&am->lock);
    *region_out = n;
    return WEFT_OK;
}

int weft_am_ep_create(weft_am_t *am, weft_am_ep_t **ep_out)
{
    if (!am || !ep_out)
        return WEFT_EINVAL;
    struct weft_am_ep *ep = calloc(1, sizeof *ep);
    if (!ep)
        return WEFT_ENOMEM;
    ep->am = am;
    weft_lock_acquire(&am->lock);
    ep->index = am->next_ep++;
    ep->next = am->eps;
    am->eps = ep;
    weft_lock_release(&am->lock);
    *ep_out = ep;
    return WEFT_OK;
}

int weft_am_ep_free(weft_am_ep_t *ep)
{
    if (!ep)
        return WEFT_OK;
    struct weft_am *am = ep->am;
    weft_lock_acquire(&am->lock);
    for (struct weft_am_ep **pp = &am->eps; *pp; pp = &(*pp)->next) {
        if (*pp == ep) {
            *pp = ep->next;
            break;
        }
    }
    weft_lock_release(&am->lock);
    /* Its spare objects go to the layer's stack: what is in flight comes
     * back there too. */
    while (ep->spare) {
        am_posted_t *next = ep->spare->next;
        posted_put(ep->spare);
        ep->spare = next;
    }
    free(ep);
    return WEFT_OK;
}

int weft_am_counters_get(weft_am_t *am, weft_am_counters_t *out)
{
    if (!am || !out)
        return WEFT_EINVAL;
    memset(out, 0, sizeof *out);
    weft_lock_acquire(&am->lock);
    for (struct weft_am_ep *ep = am->eps; ep; ep = ep->next) {
        out->sent_now += atomic_load_explicit(&ep->sent_now, memory_order_relaxed);
        out->sent_queued += atomic_load_explicit(&ep->sent_queued, memory_order_relaxed);
        out->sent_rdv += atomic_load_explicit(&ep->sent_rdv, memory_order_relaxed);
        out->retries += atomic_load_explicit(&ep->retries, memory_order_relaxed);
    }
    weft_lock_release(&am->lock);
    out->delivered = atomic_load_explicit(&am->delivered, memory_order_relaxed);
    out->waited = atomic_load_explicit(&am->waited, memory_order_relaxed);
    return WEFT_OK;
}
