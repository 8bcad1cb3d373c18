/* The progress callback queue (see progress_queue.h). */
#include "progress/progress_queue.h"

#include <sched.h>

#include "util/trace.h"

#include "weft/weft.h"

void weft__pq_init(weft__pq_t *q)
{
    atomic_init(&q->n, 0);
    atomic_init(&q->narmed, 0);
    pthread_mutex_init(&q->reg, NULL);
    for (int i = 0; i < WEFT__PQ_MAX; i++) {
        atomic_init(&q->slot[i].fn, NULL);
        q->slot[i].arg = NULL;
        atomic_init(&q->slot[i].running, false);
        atomic_init(&q->slot[i].armed, false);
    }
}

void weft__pq_destroy(weft__pq_t *q)
{
    pthread_mutex_destroy(&q->reg);
}

int weft__pq_add(weft__pq_t *q, weft__pq_fn fn, void *arg)
{
    if (!fn)
        return WEFT_EINVAL;
    pthread_mutex_lock(&q->reg);
    int n = atomic_load_explicit(&q->n, memory_order_relaxed);
    int id = 0;
    while (id < n && atomic_load_explicit(&q->slot[id].fn, memory_order_relaxed))
        id++;
    if (id == WEFT__PQ_MAX) {
        pthread_mutex_unlock(&q->reg);
        return WEFT_ENOBUFS;
    }
    /* A runner reads arg only after it sees fn (release/acquire); a slot
     * reused after a removal has no runner left (weft__pq_remove waited). */
    q->slot[id].arg = arg;
    atomic_store_explicit(&q->slot[id].armed, true, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->narmed, 1, memory_order_relaxed);
    atomic_store(&q->slot[id].fn, fn);
    if (id == n)
        atomic_store_explicit(&q->n, n + 1, memory_order_release);
    pthread_mutex_unlock(&q->reg);
    return id;
}

int weft__pq_remove(weft__pq_t *q, int id)
{
    if (id < 0 || id >= WEFT__PQ_MAX)
        return WEFT_EINVAL;
    pthread_mutex_lock(&q->reg);
    if (!atomic_load_explicit(&q->slot[id].fn, memory_order_relaxed)) {
        pthread_mutex_unlock(&q->reg);
        return WEFT_EINVAL;
    }
    /* Sequentially consistent on both sides: either a runner that takes
     * `running` after this store sees fn NULL, or this loop sees it running
     * and waits for it. */
    atomic_store(&q->slot[id].fn, NULL);
    if (atomic_exchange_explicit(&q->slot[id].armed, false, memory_order_relaxed))
        atomic_fetch_sub_explicit(&q->narmed, 1, memory_order_relaxed);
    while (atomic_load(&q->slot[id].running))
        sched_yield();
    pthread_mutex_unlock(&q->reg);
    return WEFT_OK;
}

int weft__pq_run_shared(weft__pq_t *q)
{
    int events = 0;
    int n = atomic_load_explicit(&q->n, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        weft__pq_slot_t *s = &q->slot[i];
        if (!atomic_load_explicit(&s->armed, memory_order_relaxed) ||
            !atomic_load_explicit(&s->fn, memory_order_relaxed) ||
            atomic_load_explicit(&s->running, memory_order_relaxed) ||
            atomic_exchange(&s->running, true))
            continue;
        weft__pq_fn fn = atomic_load(&s->fn);
        if (fn) {
            /* Traced when it did something: every pass runs every callback. */
            uint64_t t0 = WEFT_UNLIKELY(weft__trace_on()) ? weft__now_ns() : 0;
            int e = fn(s->arg);
            if (e > 0) {
                events += e;
                WEFT_TRACE(WEFT_TR_CALLBACK, WEFT_TR_I, i, e, t0 ? weft__now_ns() - t0 : 0, 0);
            }
        }
        atomic_store_explicit(&s->running, false, memory_order_release);
    }
    return events;
}
