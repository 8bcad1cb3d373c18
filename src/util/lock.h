/* A lock whose kind is chosen at run time from the thread level: none (single,
 * funneled, serialized), spin or mutex (multiple). The hot path pays one
 * predictable branch, never an #ifdef flavour.
 *
 * The spin kind is for short sections. A thread that finds it taken spins a
 * little, then yields its core between tries: with more threads than cores the
 * holder may have been preempted on the very core the spinner holds, and a
 * spinner that never yields keeps it from running for a whole time slice. */
#ifndef WEFT_LOCK_H
#define WEFT_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef enum weft_lock_kind {
    WEFT_LOCK_NONE = 0,
    WEFT_LOCK_SPIN = 1,
    WEFT_LOCK_MUTEX = 2,
} weft_lock_kind_t;

typedef struct weft_lock {
    weft_lock_kind_t kind;
    atomic_int spin;
    pthread_mutex_t mutex;
} weft_lock_t;

#define WEFT_LOCK_SPINS 64 /* tries between two yields of a spin lock's waiter */

/* Tell the core this thread spins (a pause hint), for every busy-wait loop. */
static inline void weft_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static inline void weft_lock_init(weft_lock_t *l, weft_lock_kind_t kind)
{
    l->kind = kind;
    atomic_init(&l->spin, 0);
    pthread_mutex_init(&l->mutex, NULL);
}

static inline void weft_lock_destroy(weft_lock_t *l)
{
    pthread_mutex_destroy(&l->mutex);
}

static inline bool weft_lock_try(weft_lock_t *l)
{
    switch (l->kind) {
    case WEFT_LOCK_NONE:
        return true;
    case WEFT_LOCK_SPIN:
        return !atomic_exchange_explicit(&l->spin, 1, memory_order_acquire);
    default:
        return pthread_mutex_trylock(&l->mutex) == 0;
    }
}

static inline void weft_lock_acquire(weft_lock_t *l)
{
    switch (l->kind) {
    case WEFT_LOCK_NONE:
        return;
    case WEFT_LOCK_SPIN:
        for (unsigned n = 0; atomic_exchange_explicit(&l->spin, 1, memory_order_acquire);) {
            while (atomic_load_explicit(&l->spin, memory_order_relaxed)) {
                if (++n % WEFT_LOCK_SPINS)
                    weft_cpu_relax();
                else
                    sched_yield();
            }
        }
        return;
    default:
        pthread_mutex_lock(&l->mutex);
    }
}

static inline void weft_lock_release(weft_lock_t *l)
{
    switch (l->kind) {
    case WEFT_LOCK_NONE:
        return;
    case WEFT_LOCK_SPIN:
        atomic_store_explicit(&l->spin, 0, memory_order_release);
        return;
    default:
        pthread_mutex_unlock(&l->mutex);
    }
}

#endif
