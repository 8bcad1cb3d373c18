/* The progress callback queue: what a progress pass runs.
 *
 * Everything that must advance without a caller asking for it registers a
 * callback here. The engine keeps two queues: one run under the engine lock
 * by whoever holds it (driver polls, the submission drain, pending gates,
 * cooperative copies), one run without it by the thread that made the pass
 * (front ends: MPI's collective schedules; later active messages, RMA,
 * broadcast forwarding). weft_progress, every waiting thread and the
 * progress thread run both, so nothing advances "only when MPI is called".
 *
 * A queue is a fixed array of slots. Adding and removing take a small lock;
 * running takes none. In a queue run by many threads at once (shared), each
 * slot has an `armed` word its owner may turn off while it has nothing to
 * advance, and a `running` word: a thread that finds it taken skips the
 * callback (another thread is running it), so a callback never runs twice
 * at once, nor inside itself when it waits on the engine. Removing waits
 * until no thread runs the callback, so its argument may be freed after. */
#ifndef WEFT_PROGRESS_QUEUE_H
#define WEFT_PROGRESS_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* Callbacks a queue holds: the 16 that weft_progress_register promises the
 * program and its front ends, and the two every context's collectives
 * (src/coll: the dynamic broadcast, the schedules) take at init. */
#define WEFT__PQ_MAX 18

/* A callback: returns how many events it handled (> 0 when it did work),
 * 0 when it found nothing. */
typedef int (*weft__pq_fn)(void *arg);

typedef struct weft__pq_slot {
    _Atomic(weft__pq_fn) fn; /* NULL: free */
    void *arg;               /* written before fn is published */
    atomic_bool running;     /* shared queues: a thread runs fn */
    atomic_bool armed;       /* shared queues: run it (its owner turns it off while idle) */
} weft__pq_slot_t;

typedef struct weft__pq {
    atomic_int n;      /* slots ever used: runners look at slot[0, n) */
    atomic_int narmed; /* callbacks registered and armed: 0 spares a shared run */
    pthread_mutex_t reg;
    weft__pq_slot_t slot[WEFT__PQ_MAX];
} weft__pq_t;

void weft__pq_init(weft__pq_t *q);
void weft__pq_destroy(weft__pq_t *q);
/* Register fn(arg): its slot (>= 0), or WEFT_ENOBUFS when the queue is full. */
int weft__pq_add(weft__pq_t *q, weft__pq_fn fn, void *arg);
/* Unregister the callback of slot id; returns once no thread runs it. Must
 * not be called from inside that callback. WEFT_EINVAL for a free slot. */
int weft__pq_remove(weft__pq_t *q, int id);

/* Run every callback once, where the caller serializes the runs (the engine
 * lock). Returns the events. */
static inline int weft__pq_run_serial(weft__pq_t *q)
{
    int events = 0;
    int n = atomic_load_explicit(&q->n, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        weft__pq_fn fn = atomic_load_explicit(&q->slot[i].fn, memory_order_acquire);
        if (fn) {
            int e = fn(q->slot[i].arg);
            if (e > 0)
                events += e;
        }
    }
    return events;
}

/* Turn the callback of slot id on or off in a shared queue: an owner with
 * nothing to advance turns it off, so passes skip it for one load. A new
 * callback is on. */
static inline void weft__pq_arm(weft__pq_t *q, int id, bool on)
{
    if (id < 0 || id >= WEFT__PQ_MAX ||
        !atomic_load_explicit(&q->slot[id].fn, memory_order_relaxed))
        return;
    if (atomic_exchange_explicit(&q->slot[id].armed, on, memory_order_relaxed) != on)
        atomic_fetch_add_explicit(&q->narmed, on ? 1 : -1, memory_order_relaxed);
}

/* Run every armed callback that no other thread is running. Returns the
 * events. */
int weft__pq_run_shared(weft__pq_t *q);

/* Whether a shared run has anything to run: a callback registered and armed
 * (cheap: one relaxed load, inline in every pass). */
static inline bool weft__pq_any_armed(const weft__pq_t *q)
{
    return atomic_load_explicit(&q->narmed, memory_order_relaxed) != 0;
}

#endif
