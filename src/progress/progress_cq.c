/* The completion queue: D. Vyukov's bounded MPMC queue ("Bounded MPMC
 * queue", 1024cores.net, 2010), and an overflow list for the engine.
 *
 * Each slot holds a sequence number: position p's slot is free for the
 * producer of p when its number is p, and full for the consumer of p when it
 * is p + 1; the consumer hands it to the producer of p + capacity by setting
 * it to that. A producer claims p by a compare-and-swap of head, writes the
 * entry, then publishes the number; a consumer the same with tail. No thread
 * ever waits for another except a consumer that finds the oldest slot
 * claimed but not yet written: it reports the queue empty for that instant.
 *
 * The engine must not lose an entry, and must not block or allocate when
 * the ring is full: it puts the completed operation's own node (which holds
 * the entry) on the overflow list instead, under a spin lock, and a pop
 * takes from the list only when every position of the ring is claimed by a
 * pop (not even a slot is being written), so entries of one producer come
 * out of one thread's pops in their order. While
 * the list is not empty the engine appends to it rather than to the ring,
 * for the same reason. The list is the rare path; an application whose
 * queue overflows often wants a larger capacity.
 *
 * A producer publishes with a sequentially consistent store, then looks at
 * the waiters (progress_int.h); a waiter looks at the oldest slot and the
 * list with sequentially consistent loads after announcing itself. */
#include <stdlib.h>

#include "progress/progress_int.h"

#define CQ_MAX_CAPACITY ((size_t)1 << 30)

int weft_cq_create(size_t capacity, weft_cq_t **cq_out)
{
    if (!cq_out || capacity == 0 || capacity > CQ_MAX_CAPACITY)
        return WEFT_EINVAL;
    size_t cap = 2;
    while (cap < capacity)
        cap <<= 1;
    weft_cq_t *cq = aligned_alloc(_Alignof(weft_cq_t), sizeof *cq);
    if (!cq)
        return WEFT_ENOMEM;
    memset(cq, 0, sizeof *cq);
    cq->slots = aligned_alloc(_Alignof(weft__cq_slot_t), cap * sizeof *cq->slots);
    if (!cq->slots) {
        free(cq);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < cap; i++)
        atomic_init(&cq->slots[i].seq, i);
    cq->comp.kind = WEFT_COMP_CQ;
    cq->mask = cap - 1;
    atomic_init(&cq->head, 0);
    atomic_init(&cq->tail, 0);
    weft_lock_init(&cq->overflow_lock, WEFT_LOCK_SPIN);
    atomic_init(&cq->overflow_n, 0);
    atomic_init(&cq->wait.sleepers, 0);
    atomic_init(&cq->wait.seq, 0);
    atomic_init(&cq->wait.inside, 0);
    *cq_out = cq;
    return WEFT_OK;
}

int weft_cq_free(weft_cq_t *cq)
{
    if (!cq)
        return WEFT_OK;
    weft__waitword_settle(&cq->wait); /* a producer may still be on its way out */
    for (weft__comp_node_t *n = cq->overflow_head, *next; n; n = next) {
        next = n->next;
        n->release(n);
    }
    weft_lock_destroy(&cq->overflow_lock);
    free(cq->slots);
    free(cq);
    return WEFT_OK;
}

weft_comp_t *weft_cq_comp(weft_cq_t *cq)
{
    return cq ? &cq->comp : NULL;
}

/* Into the ring: false when it is full. */
static bool ring_push(weft_cq_t *cq, const weft_comp_entry_t *e)
{
    size_t pos = atomic_load_explicit(&cq->head, memory_order_relaxed);
    weft__cq_slot_t *s;
    for (;;) {
        s = &cq->slots[pos & cq->mask];
        size_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)seq - (intptr_t)pos;
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&cq->head, &pos, pos + 1,
                                                      memory_order_relaxed, memory_order_relaxed))
                break;
        } else if (dif < 0) {
            return false; /* the slot still holds the entry of pos - capacity */
        } else {
            pos = atomic_load_explicit(&cq->head, memory_order_relaxed);
        }
    }
    s->entry = *e;
    atomic_store(&s->seq, pos + 1); /* sequentially consistent: before the look at waiters */
    return true;
}

/* Out of the ring: false when its oldest slot holds nothing (yet). */
static bool ring_pop(weft_cq_t *cq, weft_comp_entry_t *e)
{
    size_t pos = atomic_load_explicit(&cq->tail, memory_order_relaxed);
    weft__cq_slot_t *s;
    for (;;) {
        s = &cq->slots[pos & cq->mask];
        size_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)seq - (intptr_t)(pos + 1);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&cq->tail, &pos, pos + 1,
                                                      memory_order_relaxed, memory_order_relaxed))
                break;
        } else if (dif < 0) {
            return false;
        } else {
            pos = atomic_load_explicit(&cq->tail, memory_order_relaxed);
        }
    }
    *e = s->entry;
    atomic_store_explicit(&s->seq, pos + cq->mask + 1, memory_order_release);
    return true;
}

int weft_cq_push(weft_cq_t *cq, const weft_comp_entry_t *entry)
{
    if (!cq || !entry)
        return WEFT_EINVAL;
    weft__waitword_enter(&cq->wait);
    if (!ring_push(cq, entry)) {
        weft__waitword_leave(&cq->wait);
        return WEFT_EAGAIN;
    }
    weft__waitword_wake(&cq->wait);
    return WEFT_OK;
}

bool weft__cq_signal(weft_cq_t *cq, weft__comp_node_t *node)
{
    weft__waitword_enter(&cq->wait);
    if (WEFT_LIKELY(!atomic_load_explicit(&cq->overflow_n, memory_order_relaxed)) &&
        ring_push(cq, &node->entry)) {
        weft__waitword_wake(&cq->wait);
        return false;
    }
    node->next = NULL;
    weft_lock_acquire(&cq->overflow_lock);
    if (cq->overflow_tail)
        cq->overflow_tail->next = node;
    else
        cq->overflow_head = node;
    cq->overflow_tail = node;
    atomic_fetch_add(&cq->overflow_n, 1);
    weft_lock_release(&cq->overflow_lock);
    weft__waitword_wake(&cq->wait);
    return true;
}

/* The overflow list's oldest node, once the ring holds nothing. */
static bool overflow_pop(weft_cq_t *cq, weft_comp_entry_t *e)
{
    if (!atomic_load_explicit(&cq->overflow_n, memory_order_acquire))
        return false;
    weft_lock_acquire(&cq->overflow_lock);
    /* Every ring entry its producer pushed before a node now on the list
     * shows in head (the push came before that producer's append, under
     * this lock): while one of them is not yet claimed by a pop, the list
     * must wait, or a thread that pops both would get them out of order.
     * Looked at under the lock, so that no such push can come between the
     * look and the take. */
    weft__comp_node_t *n = NULL;
    if (atomic_load_explicit(&cq->head, memory_order_acquire) ==
        atomic_load_explicit(&cq->tail, memory_order_acquire))
        n = cq->overflow_head;
    if (n) {
        cq->overflow_head = n->next;
        if (!cq->overflow_head)
            cq->overflow_tail = NULL;
        atomic_fetch_sub(&cq->overflow_n, 1);
    }
    weft_lock_release(&cq->overflow_lock);
    if (!n)
        return false;
    *e = n->entry;
    n->release(n);
    return true;
}

int weft_cq_pop(weft_cq_t *cq, weft_comp_entry_t *entry)
{
    if (!cq || !entry)
        return WEFT_EINVAL;
    if (ring_pop(cq, entry) || overflow_pop(cq, entry))
        return WEFT_OK;
    return WEFT_EAGAIN;
}

int weft_cq_pop_batch(weft_cq_t *cq, weft_comp_entry_t *entries, int max)
{
    if (!cq || !entries || max < 0)
        return WEFT_EINVAL;
    int n = 0;
    while (n < max && (ring_pop(cq, &entries[n]) || overflow_pop(cq, &entries[n])))
        n++;
    return n;
}

/* Something to pop: the oldest slot written, or a node on the list. */
static bool cq_ready(void *obj)
{
    weft_cq_t *cq = obj;
    size_t pos = atomic_load(&cq->tail);
    return atomic_load(&cq->slots[pos & cq->mask].seq) == pos + 1 || atomic_load(&cq->overflow_n);
}

int weft_cq_wait_pop(weft_cq_t *cq, weft_ctx_t *ctx, weft_comp_entry_t *entry)
{
    if (!cq || !entry)
        return WEFT_EINVAL;
    while (weft_cq_pop(cq, entry) != WEFT_OK)
        weft__comp_wait(&cq->wait, cq_ready, cq, ctx);
    return WEFT_OK;
}
