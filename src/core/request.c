/* Requests and the id table that names them on the wire. */
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"

/* Room for one more free request; false when the stack cannot grow. */
static bool free_room(struct weft_ctx *ctx)
{
    if (ctx->nfree_reqs < ctx->free_reqs_cap)
        return true;
    uint32_t cap = ctx->free_reqs_cap ? ctx->free_reqs_cap * 2 : 64;
    struct weft_request **a = realloc(ctx->free_reqs, cap * sizeof *a);
    if (!a)
        return false;
    ctx->free_reqs = a;
    ctx->free_reqs_cap = cap;
    return true;
}

struct weft_request *weft__request_reclaim(struct weft_ctx *ctx)
{
    /* Taken whole: an exchange, so no ABA. */
    if (!atomic_load_explicit(&ctx->returned, memory_order_relaxed))
        return NULL;
    struct weft_request *r = atomic_exchange_explicit(&ctx->returned, NULL, memory_order_acquire);
    while (r) {
        struct weft_request *next = r->next_free;
        if (free_room(ctx))
            ctx->free_reqs[ctx->nfree_reqs++] = r;
        else
            free(r);
        r = next;
    }
    return ctx->nfree_reqs ? ctx->free_reqs[ctx->nfree_reqs - 1] : NULL;
}

/* A request's memory, new. What weft__request_init leaves alone but a
 * completion reads must be valid from the start: no cooperative copy out,
 * no completion object. */
static struct weft_request *request_new(void)
{
    struct weft_request *req = aligned_alloc(_Alignof(struct weft_request), sizeof *req);
    if (req) {
        atomic_init(&req->coop_busy, 0);
        atomic_init(&req->coop_err, 0);
        req->has_comp = false;
    }
    return req;
}

struct weft_request *weft__request_alloc_slow(struct weft_ctx *ctx, uint8_t kind)
{
    struct weft_request *req = weft__request_reclaim(ctx);
    if (req)
        weft__request_take(ctx);
    else if (!(req = request_new()))
        return NULL;
    return weft__request_init(req, kind);
}

struct weft_request *weft__request_alloc_unlocked(struct weft_ctx *ctx, uint8_t kind)
{
    /* Taking returned whole (an exchange) has no ABA problem, as for the lock
     * holder; spare_lock orders the threads that share what it brought. */
    weft_lock_acquire(&ctx->spare_lock);
    struct weft_request *req = ctx->spare;
    if (!req)
        req = atomic_exchange_explicit(&ctx->returned, NULL, memory_order_acquire);
    if (req)
        ctx->spare = req->next_free;
    weft_lock_release(&ctx->spare_lock);
    if (!req && !(req = request_new()))
        return NULL;
    return weft__request_init(req, kind);
}

void weft__request_free(struct weft_ctx *ctx, struct weft_request *req)
{
    if (req->iov != req->iov_inline)
        free(req->iov);
    if (WEFT_UNLIKELY(!free_room(ctx))) {
        free(req);
        return;
    }
    ctx->free_reqs[ctx->nfree_reqs++] = req;
}

void weft__request_return(struct weft_ctx *ctx, struct weft_request *req)
{
    if (req->iov != req->iov_inline)
        free(req->iov);
    /* A push-only stack: the lock holder takes it whole, so no ABA. */
    struct weft_request *head = atomic_load_explicit(&ctx->returned, memory_order_relaxed);
    do
        req->next_free = head;
    while (!atomic_compare_exchange_weak_explicit(&ctx->returned, &head, req, memory_order_release,
                                                  memory_order_relaxed));
}

void weft__submit_defer(struct weft_ctx *ctx, struct weft_request *req)
{
    req->defer_slot = (uint8_t)weft__defer_slot();
    atomic_fetch_add_explicit(req->kind == WEFT_REQ_SEND ? &ctx->deferred[req->defer_slot].n
                                                         : &ctx->deferred[req->defer_slot].nrecv,
                              1, memory_order_relaxed);
    struct weft_request *head = atomic_load_explicit(&ctx->submitted, memory_order_relaxed);
    do
        req->next_submitted = head;
    while (!atomic_compare_exchange_weak_explicit(&ctx->submitted, &head, req, memory_order_seq_cst,
                                                  memory_order_relaxed));
    /* A progress thread asleep on doorbells would not see it (progress.c:
     * the push, then this look, both sequentially consistent). */
    if (WEFT_UNLIKELY(atomic_load(&ctx->progress_asleep)))
        weft__progress_kick(ctx);
}

WEFT_NOINLINE void weft__submit_drain(struct weft_ctx *ctx)
{
    struct weft_request *list =
        atomic_exchange_explicit(&ctx->submitted, NULL, memory_order_acquire);
    /* The stack holds the newest first: reverse it, so each thread's requests
     * enter the engine in the order it submitted them. */
    struct weft_request *fifo = NULL;
    while (list) {
        struct weft_request *next = list->next_submitted;
        list->next_submitted = fifo;
        fifo = list;
        list = next;
    }
    while (fifo) {
        struct weft_request *req = fifo;
        fifo = req->next_submitted;
        req->next_submitted = NULL;
        /* Read before the submission, which may complete the request and
         * let its thread free it. */
        unsigned slot = req->defer_slot;
        bool send = req->kind == WEFT_REQ_SEND;
        int rc = send ? weft__proto_send(ctx, req) : weft__proto_recv(ctx, req);
        if (rc)
            weft__request_complete(ctx, req, rc);
        /* After the submission: the submitting thread, once it sees nothing
         * of its own deferred, may send or post past the engine lock
         * (weft__proto_send_unlocked, weft__proto_recv_unlocked), and what
         * it sends or posts then must not overtake this one. */
        atomic_fetch_sub_explicit(send ? &ctx->deferred[slot].n : &ctx->deferred[slot].nrecv, 1,
                                  memory_order_release);
    }
}

/* Mark a request complete. The store of done is the last write: a thread in
 * test() that sees it sees the status too. */
void weft__request_complete(struct weft_ctx *ctx, struct weft_request *req, int error)
{
    if (req->coop_listed || req->coop_cell >= 0)
        weft__coop_finish(ctx, req);
    if (req->id) {
        weft__handle_remove(&ctx->handles, req->id);
        req->id = 0;
    }
    if (req->exposed) {
        const weft_driver_ops_t *ops = req->gate->drv_ops;
        if (req->rail_keys)
            weft__rail_unexpose(req);
        else if (ops->unexpose)
            ops->unexpose(req->gate->drv, &req->rkey);
        req->exposed = false;
    }
    weft_list_remove(&req->link);
    req->error = error;
    req->status.error = error;
    req->state = WEFT_RS_NONE;
    /* has_comp shares its cache line with id, read above: a request with no
     * completion object pays this predictable branch only. */
    if (WEFT_UNLIKELY(req->has_comp)) {
        weft__request_signal(ctx, req, true);
        return;
    }
    if (ctx->thread_level == WEFT_THREAD_MULTIPLE) {
        /* Ordered before the load of sleeping: a waiter that goes to sleep
         * either sees done or is seen and woken (progress.c). */
        atomic_store(&req->done, 1);
        weft__wake_waiter(ctx, req);
    } else {
        atomic_store_explicit(&req->done, 1, memory_order_release);
    }
}

/* A request a full queue kept on its overflow list (progress_cq.c) is
 * freed by the pop that takes its entry, in any thread, with no lock: so
 * with free(), not onto the context's lists, which the context's side alone
 * touches (and which may be gone by then: an entry may be popped after
 * finalize). The context allocates another when it needs one. */
static void request_release(weft__comp_node_t *node)
{
    struct weft_request *req = weft_container_of(node, struct weft_request, comp_node);
    if (req->iov != req->iov_inline)
        free(req->iov);
    free(req);
}

/* Give back a request whose object was signaled: onto the free stack under
 * the engine lock (or where there is none), else onto the returned stack. */
static void request_put(struct weft_ctx *ctx, struct weft_request *req, bool locked)
{
    req->has_comp = false;
    if (locked || ctx->lock.kind == WEFT_LOCK_NONE)
        weft__request_free(ctx, req);
    else
        weft__request_return(ctx, req);
}

/* Signal a handler out of the request: copied first, so that the request
 * is back (and the handler may post the next operation with it) before the
 * handler runs. */
static void handler_signal(struct weft_ctx *ctx, struct weft_request *req)
{
    weft__comp_node_t node = req->comp_node;
    request_put(ctx, req, false);
    weft__comp_signal(&node);
}

WEFT_NOINLINE void weft__request_signal(struct weft_ctx *ctx, struct weft_request *req, bool locked)
{
    weft__comp_node_t *n = &req->comp_node;
    n->entry.error = req->error;
    n->entry.source = req->status.source;
    n->entry.tag = req->status.tag;
    n->entry.length = req->status.length;
    n->release = request_release;
    /* Done, as a request without an object would be: whoever still holds a
     * stale pointer to it (a chunk of a lost packet) sees it finished. */
    atomic_store_explicit(&req->done, 1, memory_order_relaxed);
    if (n->comp->kind == WEFT_COMP_HANDLER) {
        if (!locked) {
            handler_signal(ctx, req);
            return;
        }
        /* Never under the engine lock: queued for weft__unlock. */
        n->next = NULL;
        if (ctx->comp_handlers_tail)
            ctx->comp_handlers_tail->next = n;
        else
            ctx->comp_handlers = n;
        ctx->comp_handlers_tail = n;
        return;
    }
    /* Counter, synchronizer, flag, queue: lock-free, fine under the lock. A
     * full queue keeps the request itself (then it is not ours any more). */
    if (!weft__comp_signal(n))
        request_put(ctx, req, locked);
}

int weft__comp_handlers_run(struct weft_ctx *ctx, weft__comp_node_t *list)
{
    int ran = 0;
    while (list) {
        weft__comp_node_t *next = list->next;
        handler_signal(ctx, weft_container_of(list, struct weft_request, comp_node));
        list = next;
        ran++;
    }
    return ran;
}

WEFT_NOINLINE int weft__progress_handlers(struct weft_ctx *ctx, weft__coop_copy_t *copy)
{
    weft__comp_node_t *list = ctx->comp_handlers;
    ctx->comp_handlers = ctx->comp_handlers_tail = NULL;
    weft_lock_release(&ctx->lock);
    if (copy->req)
        weft__coop_copy_run(copy, true);
    return weft__comp_handlers_run(ctx, list);
}

weft__chunk_t *weft__ctrl_alloc(struct weft_ctx *ctx)
{
    weft__chunk_t *c = ctx->free_chunks;
    if (c)
        ctx->free_chunks = c->next_free;
    else if (!(c = malloc(sizeof *c)))
        return NULL;
    weft_list_init(&c->link);
    c->queued = false;
    c->heap = true;
    c->req = NULL;
    c->iov = NULL;
    c->iovcnt = 0;
    c->offset = c->length = 0;
    return c;
}

void weft__ctrl_free(struct weft_ctx *ctx, weft__chunk_t *c)
{
    c->next_free = ctx->free_chunks;
    ctx->free_chunks = c;
}

int weft__handle_add(weft__handles_t *h, struct weft_request *req, uint64_t *id_out)
{
    if (h->free_head == UINT32_MAX || h->capacity == 0) {
        uint32_t ncap = h->capacity ? h->capacity * 2 : 64;
        void *n = realloc(h->slots, sizeof(*h->slots) * ncap);
        if (!n)
            return WEFT_ENOMEM;
        h->slots = n;
        /* Chain the new slots onto the free list; generations start at 1 so that
         * id 0 never names a request. */
        for (uint32_t i = h->capacity; i < ncap; i++) {
            h->slots[i].req = NULL;
            h->slots[i].gen = 1;
            h->slots[i].next_free = (i + 1 < ncap) ? i + 1 : UINT32_MAX;
        }
        h->free_head = h->capacity;
        h->capacity = ncap;
    }
    uint32_t slot = h->free_head;
    h->free_head = h->slots[slot].next_free;
    h->slots[slot].req = req;
    *id_out = ((uint64_t)h->slots[slot].gen << 32) | slot;
    return WEFT_OK;
}

struct weft_request *weft__handle_get(weft__handles_t *h, uint64_t id)
{
    uint32_t slot = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (slot >= h->capacity || h->slots[slot].gen != gen)
        return NULL;
    return h->slots[slot].req;
}

void weft__handle_remove(weft__handles_t *h, uint64_t id)
{
    uint32_t slot = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (slot >= h->capacity || h->slots[slot].gen != gen || !h->slots[slot].req)
        return;
    h->slots[slot].req = NULL;
    h->slots[slot].gen = gen + 1 ? gen + 1 : 1;
    h->slots[slot].next_free = h->free_head;
    h->free_head = slot;
}

void weft__handles_fini(weft__handles_t *h)
{
    free(h->slots);
    h->slots = NULL;
    h->capacity = 0;
    h->free_head = UINT32_MAX;
}
