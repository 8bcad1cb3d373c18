/* A lock whose kind is chosen at run time from the thread level: none (single,
 * funneled, serialized), spin or mutex (multiple). The hot path pays one
 * predictable branch, never an #ifdef flavour.
 *
 * The spin kind is for short sections. A thread that finds it taken spins a
 * little, then yields its core between tries: with more threads than cores the
 * holder may have been preempted on the very core the spinner holds, and a
 * spinner that never yields keeps it from running for a whole time slice.
 *
 * The mutex kind sleeps on a futex: the word is 0 (free), 1 (held) or 2 (held,
 * and a thread may sleep on it), after U. Drepper, "Futexes Are Tricky"
 * (2011), mutex 3. A try and a release without sleepers are one atomic
 * instruction each, inline; the engine takes this lock by try on every send,
 * receive and poll at WEFT_THREAD_MULTIPLE, where pthread_mutex_trylock and
 * unlock cost some 60 instructions together (type and elision checks). */
#ifndef WEFT_LOCK_H
#define WEFT_LOCK_H

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
    atomic_int word; /* spin: 0 or 1; mutex: 0, 1 or 2 (above) */
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

/* The mutex kind's slow paths (lock.c): sleep until the word may have
 * changed from 2; wake one sleeper. */
void weft__lock_sleep(atomic_int *word);
void weft__lock_wake(atomic_int *word);

static inline void weft_lock_init(weft_lock_t *l, weft_lock_kind_t kind)
{
    l->kind = kind;
    atomic_init(&l->word, 0);
}

static inline void weft_lock_destroy(weft_lock_t *l)
{
    (void)l;
}

static inline bool weft_lock_try(weft_lock_t *l)
{
    switch (l->kind) {
    case WEFT_LOCK_NONE:
        return true;
    case WEFT_LOCK_SPIN:
        return !atomic_exchange_explicit(&l->word, 1, memory_order_acquire);
    default: {
        int free_word = 0;
        return atomic_compare_exchange_strong_explicit(&l->word, &free_word, 1,
                                                       memory_order_acquire, memory_order_relaxed);
    }
    }
}

static inline void weft_lock_acquire(weft_lock_t *l)
{
    switch (l->kind) {
    case WEFT_LOCK_NONE:
        return;
    case WEFT_LOCK_SPIN:
        for (unsigned n = 0; atomic_exchange_explicit(&l->word, 1, memory_order_acquire);) {
            while (atomic_load_explicit(&l->word, memory_order_relaxed)) {
                if (++n % WEFT_LOCK_SPINS)
                    weft_cpu_relax();
                else
                    sched_yield();
            }
        }
        return;
    default:
        if (weft_lock_try(l))
            return;
        /* Mark the word contended (2) whenever we may sleep on it, so the
         * holder's release wakes somebody; taking it as 2 is harmless (one
         * wake too many at worst). */
        while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
            weft__lock_sleep(&l->word);
    }
}

static inline void weft_lock_release(weft_lock_t *l)
{
    switch (l->kind) {
    case WEFT_LOCK_NONE:
        return;
    case WEFT_LOCK_SPIN:
        atomic_store_explicit(&l->word, 0, memory_order_release);
        return;
    default:
        if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
            weft__lock_wake(&l->word);
    }
}

#endif
