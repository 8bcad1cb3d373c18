/* Completion objects inside: the layouts behind the public objects' private
 * storage, and the way their waiters sleep. Private to src/progress. */
#ifndef WEFT_PROGRESS_INT_H
#define WEFT_PROGRESS_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "progress/progress.h"
#include "util/lock.h"
#include "util/util.h"

/* Where waiters without a context sleep (a futex), after this pattern:
 * the waiter announces itself (sleepers, a read-modify-write), looks at the
 * object once more, and sleeps on seq as it read it before announcing; the
 * signaler changes the object with a sequentially consistent operation, then
 * looks at sleepers, and if somebody announced, bumps seq and wakes. Either
 * the waiter's look sees the change, or the signaler's look sees the waiter,
 * whose futex_wait then returns at once (seq moved) or is woken. A sleep also
 * ends after WEFT__WAIT_SLEEP_NS, a safety net only.
 *
 * A program may free or reuse an object as soon as its wait returns (a flag
 * on the stack), while the signaler is still looking at sleepers. So a
 * signaler counts itself in `inside` before it changes the object and out
 * after its last access, and a wait that saw the change returns only once
 * nobody is inside (weft__waitword_settle): a few instructions at most. */
typedef struct weft__waitword {
    atomic_uint sleepers;
    atomic_uint seq;
    atomic_uint inside; /* signalers between their change and their last access */
} weft__waitword_t;

#define WEFT__WAIT_SLEEP_NS 10000000ll

/* After the signaler's sequentially consistent change of the object: wake
 * the waiters that announced themselves, if any. */
void weft__waitword_wake_slow(weft__waitword_t *w);
/* A signaler's first step, before it changes the object. */
static inline void weft__waitword_enter(weft__waitword_t *w)
{
    atomic_fetch_add(&w->inside, 1);
}
/* Its last access, when it wakes nobody. */
static inline void weft__waitword_leave(weft__waitword_t *w)
{
    atomic_fetch_sub_explicit(&w->inside, 1, memory_order_release);
}
/* Its last: wake the sleepers, and touch the object no more. */
static inline void weft__waitword_wake(weft__waitword_t *w)
{
    if (WEFT_UNLIKELY(atomic_load(&w->sleepers)))
        weft__waitword_wake_slow(w);
    weft__waitword_leave(w);
}
/* Once the object is seen changed: until no signaler still touches it. */
static inline void weft__waitword_settle(weft__waitword_t *w)
{
    while (atomic_load_explicit(&w->inside, memory_order_acquire))
        weft_cpu_relax();
}

/* Wait until ready(obj) is true: with a context, making progress between
 * looks (weft_progress, weft_idle); without, spinning a little, then
 * sleeping on w. ready must read the object with sequentially consistent
 * loads (the other half of the pattern above). */
void weft__comp_wait(weft__waitword_t *w, bool (*ready)(void *obj), void *obj, weft_ctx_t *ctx);

/* The objects' layouts in their public structs' private storage (checked
 * in progress_comp.c). Each public struct is one cache line, aligned. */
typedef struct weft__flag {
    weft_comp_t comp;
    atomic_int done;
    weft__waitword_t wait;
    weft_comp_entry_t entry; /* written before done, read after it */
} weft__flag_t;

typedef struct weft__counter {
    weft_comp_t comp;
    _Atomic uint64_t value;
    _Atomic uint64_t errors;
    weft__waitword_t wait;
} weft__counter_t;

typedef struct weft__sync {
    weft_comp_t comp;
    _Atomic int64_t left; /* signals still expected; <= 0 once complete */
    int64_t n;            /* what init armed it for (reset arms it again) */
    atomic_int error;     /* the first error a signal carried */
    weft__waitword_t wait;
} weft__sync_t;

/* A completion queue (progress_cq.c): a ring of slots, each with its
 * sequence number, one cache line each; producers' and consumers' positions
 * on lines of their own, and the overflow list and the waiters apart. */
typedef struct weft__cq_slot {
    _Alignas(WEFT_CACHELINE) atomic_size_t seq;
    weft_comp_entry_t entry;
} weft__cq_slot_t;

struct weft_cq {
    weft_comp_t comp;
    size_t mask; /* capacity - 1 */
    weft__cq_slot_t *slots;
    _Alignas(WEFT_CACHELINE) atomic_size_t head; /* next position to fill */
    _Alignas(WEFT_CACHELINE) atomic_size_t tail; /* next position to take */
    /* Nodes the engine left when the ring was full, oldest first; their
     * number is read without the lock. */
    _Alignas(WEFT_CACHELINE) weft_lock_t overflow_lock;
    atomic_size_t overflow_n;
    weft__comp_node_t *overflow_head, *overflow_tail;
    _Alignas(WEFT_CACHELINE) weft__waitword_t wait;
};

/* The engine's push: into the ring, or, when the ring is full or the
 * overflow list is not empty (so one producer's entries never overtake each
 * other), node onto the list (true: kept). */
bool weft__cq_signal(weft_cq_t *cq, weft__comp_node_t *node);

#endif
