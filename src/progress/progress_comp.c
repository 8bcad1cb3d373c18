/* Completion objects: flag, counter, synchronizer, handler; the one signal
 * the engine calls for all of them; and how their waiters wait.
 *
 * A signal is one atomic operation on the object's cache line (each public
 * object is a line of its own, so producers on different objects never share
 * one), then a look at its waiters' announcement, which is on the same line
 * and changes only when a waiter without a context goes to sleep: a signal
 * with nobody asleep costs the read-modify-write and a load. The atomic
 * operation is sequentially consistent, as the announcement's look is: that
 * pair against the waiter's announce-then-look is what makes a lost wake-up
 * impossible (progress_int.h). */
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "progress/progress_int.h"
#include "util/lock.h"

_Static_assert(sizeof(weft__flag_t) <= sizeof(weft_flag_t) &&
                   _Alignof(weft_flag_t) == WEFT_CACHELINE && sizeof(weft_flag_t) == WEFT_CACHELINE,
               "a flag is one cache line");
_Static_assert(sizeof(weft__counter_t) <= sizeof(weft_counter_t) &&
                   _Alignof(weft_counter_t) == WEFT_CACHELINE &&
                   sizeof(weft_counter_t) == WEFT_CACHELINE,
               "a counter is one cache line");
_Static_assert(sizeof(weft__sync_t) <= sizeof(weft_sync_t) &&
                   _Alignof(weft_sync_t) == WEFT_CACHELINE && sizeof(weft_sync_t) == WEFT_CACHELINE,
               "a synchronizer is one cache line");
_Static_assert(offsetof(weft__flag_t, comp) == 0 && offsetof(weft__counter_t, comp) == 0 &&
                   offsetof(weft__sync_t, comp) == 0,
               "every object starts with its weft_comp_t");

/* Spins of a waiter without a context before it sleeps. */
#define WAIT_SPINS 2000

static void futex_wait(atomic_uint *word, unsigned val, long long ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000)};
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

void weft__waitword_wake_slow(weft__waitword_t *w)
{
    atomic_fetch_add(&w->seq, 1);
    syscall(SYS_futex, (unsigned *)&w->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Sleep until a signal after the announcement (or the safety timeout). */
static void waitword_sleep(weft__waitword_t *w, bool (*ready)(void *obj), void *obj)
{
    unsigned seq = atomic_load(&w->seq);
    atomic_fetch_add(&w->sleepers, 1);
    if (!ready(obj))
        futex_wait(&w->seq, seq, WEFT__WAIT_SLEEP_NS);
    atomic_fetch_sub(&w->sleepers, 1);
}

static void comp_wait(weft__waitword_t *w, bool (*ready)(void *obj), void *obj, weft_ctx_t *ctx);

void weft__comp_wait(weft__waitword_t *w, bool (*ready)(void *obj), void *obj, weft_ctx_t *ctx)
{
    comp_wait(w, ready, obj, ctx);
    weft__waitword_settle(w);
}

static void comp_wait(weft__waitword_t *w, bool (*ready)(void *obj), void *obj, weft_ctx_t *ctx)
{
    if (ready(obj))
        return;
    if (ctx) {
        /* The thread progresses for everybody while it waits; weft_idle
         * decides when it yields its core or sleeps on the doorbells. */
        weft_idle_t idle = {0};
        while (!ready(obj)) {
            if (weft_progress(ctx) > 0)
                idle = (weft_idle_t){0};
            else
                weft_idle(ctx, &idle);
        }
        return;
    }
    for (unsigned spins = 0; !ready(obj);) {
        if (spins < WAIT_SPINS) {
            spins++;
            weft_cpu_relax();
        } else {
            waitword_sleep(w, ready, obj);
        }
    }
}

bool weft__comp_valid(const weft_comp_t *comp)
{
    return comp && comp->kind >= WEFT_COMP_FLAG && comp->kind <= WEFT_COMP_HANDLER;
}

/* ---- flag ---- */

int weft_flag_init(weft_flag_t *f)
{
    if (!f)
        return WEFT_EINVAL;
    weft__flag_t *o = (weft__flag_t *)f;
    memset(f, 0, sizeof *f);
    o->comp.kind = WEFT_COMP_FLAG;
    atomic_init(&o->done, 0);
    atomic_init(&o->wait.sleepers, 0);
    atomic_init(&o->wait.seq, 0);
    atomic_init(&o->wait.inside, 0);
    return WEFT_OK;
}

static bool flag_ready(void *obj)
{
    return atomic_load(&((weft__flag_t *)obj)->done) != 0;
}

int weft_flag_test(weft_flag_t *f, weft_comp_entry_t *entry)
{
    if (!f)
        return WEFT_EINVAL;
    weft__flag_t *o = (weft__flag_t *)f;
    if (!atomic_load_explicit(&o->done, memory_order_acquire) ||
        atomic_load_explicit(&o->wait.inside, memory_order_acquire))
        return WEFT_INPROGRESS;
    if (entry)
        *entry = o->entry;
    return WEFT_OK;
}

int weft_flag_wait(weft_flag_t *f, weft_ctx_t *ctx, weft_comp_entry_t *entry)
{
    if (!f)
        return WEFT_EINVAL;
    weft__flag_t *o = (weft__flag_t *)f;
    weft__comp_wait(&o->wait, flag_ready, o, ctx);
    return weft_flag_test(f, entry);
}

int weft_flag_reset(weft_flag_t *f)
{
    if (!f)
        return WEFT_EINVAL;
    weft__flag_t *o = (weft__flag_t *)f;
    if (!atomic_load_explicit(&o->done, memory_order_acquire))
        return WEFT_ESTATE;
    atomic_store_explicit(&o->done, 0, memory_order_relaxed);
    return WEFT_OK;
}

static inline void flag_signal(weft__flag_t *o, const weft_comp_entry_t *e)
{
    weft__waitword_enter(&o->wait);
    o->entry = *e;
    atomic_store(&o->done, 1); /* sequentially consistent: before the look at sleepers */
    weft__waitword_wake(&o->wait);
}

/* ---- counter ---- */

int weft_counter_init(weft_counter_t *c, uint64_t value)
{
    if (!c)
        return WEFT_EINVAL;
    weft__counter_t *o = (weft__counter_t *)c;
    memset(c, 0, sizeof *c);
    o->comp.kind = WEFT_COMP_COUNTER;
    atomic_init(&o->value, value);
    atomic_init(&o->errors, 0);
    atomic_init(&o->wait.sleepers, 0);
    atomic_init(&o->wait.seq, 0);
    atomic_init(&o->wait.inside, 0);
    return WEFT_OK;
}

uint64_t weft_counter_get(const weft_counter_t *c)
{
    if (!c)
        return 0;
    return atomic_load_explicit(&((const weft__counter_t *)c)->value, memory_order_acquire);
}

uint64_t weft_counter_errors(const weft_counter_t *c)
{
    if (!c)
        return 0;
    return atomic_load_explicit(&((const weft__counter_t *)c)->errors, memory_order_acquire);
}

/* What a counter waiter waits for: the counter and the value. */
typedef struct counter_goal {
    weft__counter_t *o;
    uint64_t value;
} counter_goal_t;

static bool counter_ready(void *obj)
{
    counter_goal_t *g = obj;
    return atomic_load(&g->o->value) >= g->value;
}

int weft_counter_wait(weft_counter_t *c, uint64_t value, weft_ctx_t *ctx)
{
    if (!c)
        return WEFT_EINVAL;
    counter_goal_t g = {(weft__counter_t *)c, value};
    weft__comp_wait(&g.o->wait, counter_ready, &g, ctx);
    return WEFT_OK;
}

static inline void counter_signal(weft__counter_t *o, const weft_comp_entry_t *e)
{
    weft__waitword_enter(&o->wait);
    /* The error first: whoever sees the count sees the errors among it. */
    if (e->error)
        atomic_fetch_add_explicit(&o->errors, 1, memory_order_relaxed);
    atomic_fetch_add(&o->value, 1);
    weft__waitword_wake(&o->wait);
}

/* ---- synchronizer ---- */

int weft_sync_init(weft_sync_t *s, uint32_t n)
{
    if (!s)
        return WEFT_EINVAL;
    weft__sync_t *o = (weft__sync_t *)s;
    memset(s, 0, sizeof *s);
    o->comp.kind = WEFT_COMP_SYNC;
    o->n = n;
    atomic_init(&o->left, (int64_t)n);
    atomic_init(&o->error, WEFT_OK);
    atomic_init(&o->wait.sleepers, 0);
    atomic_init(&o->wait.seq, 0);
    atomic_init(&o->wait.inside, 0);
    return WEFT_OK;
}

static bool sync_ready(void *obj)
{
    return atomic_load(&((weft__sync_t *)obj)->left) <= 0;
}

int weft_sync_test(weft_sync_t *s)
{
    if (!s)
        return WEFT_EINVAL;
    weft__sync_t *o = (weft__sync_t *)s;
    if (atomic_load_explicit(&o->left, memory_order_acquire) > 0 ||
        atomic_load_explicit(&o->wait.inside, memory_order_acquire))
        return WEFT_INPROGRESS;
    return atomic_load_explicit(&o->error, memory_order_relaxed);
}

int weft_sync_wait(weft_sync_t *s, weft_ctx_t *ctx)
{
    if (!s)
        return WEFT_EINVAL;
    weft__sync_t *o = (weft__sync_t *)s;
    weft__comp_wait(&o->wait, sync_ready, o, ctx);
    return weft_sync_test(s);
}

int weft_sync_reset(weft_sync_t *s)
{
    if (!s)
        return WEFT_EINVAL;
    weft__sync_t *o = (weft__sync_t *)s;
    if (atomic_load_explicit(&o->left, memory_order_acquire) > 0)
        return WEFT_ESTATE;
    atomic_store_explicit(&o->error, WEFT_OK, memory_order_relaxed);
    atomic_store_explicit(&o->left, o->n, memory_order_release);
    return WEFT_OK;
}

static inline void sync_signal(weft__sync_t *o, const weft_comp_entry_t *e)
{
    weft__waitword_enter(&o->wait);
    if (e->error) {
        int none = WEFT_OK;
        atomic_compare_exchange_strong_explicit(&o->error, &none, e->error, memory_order_relaxed,
                                                memory_order_relaxed);
    }
    /* Only the signal that completes it can have a waiter to wake; the
     * decrement releases the error to whoever sees it complete. */
    if (atomic_fetch_sub(&o->left, 1) == 1)
        weft__waitword_wake(&o->wait);
    else
        weft__waitword_leave(&o->wait);
}

/* ---- handler ---- */

int weft_handler_init(weft_handler_t *h, weft_handler_fn_t fn, void *arg)
{
    if (!h || !fn)
        return WEFT_EINVAL;
    h->comp.kind = WEFT_COMP_HANDLER;
    h->comp.reserved = 0;
    h->fn = fn;
    h->arg = arg;
    return WEFT_OK;
}

/* ---- the signal ---- */

bool weft__comp_signal(weft__comp_node_t *node)
{
    weft_comp_t *comp = node->comp;
    switch (comp->kind) {
    case WEFT_COMP_COUNTER:
        counter_signal((weft__counter_t *)comp, &node->entry);
        return false;
    case WEFT_COMP_CQ:
        return weft__cq_signal(weft_container_of(comp, weft_cq_t, comp), node);
    case WEFT_COMP_SYNC:
        sync_signal((weft__sync_t *)comp, &node->entry);
        return false;
    case WEFT_COMP_FLAG:
        flag_signal((weft__flag_t *)comp, &node->entry);
        return false;
    default: { /* WEFT_COMP_HANDLER */
        const weft_handler_t *h = (const weft_handler_t *)comp;
        h->fn(&node->entry, h->arg);
        return false;
    }
    }
}

static void copy_release(weft__comp_node_t *node)
{
    free(node);
}

void weft__comp_signal_copy(weft_comp_t *comp, const weft_comp_entry_t *entry)
{
    weft__comp_node_t local = {.comp = comp, .entry = *entry};
    if (comp->kind != WEFT_COMP_CQ) {
        (void)weft__comp_signal(&local); /* keeps nothing */
        return;
    }
    weft__comp_node_t *n = malloc(sizeof *n);
    while (!n) {
        /* No memory for a node the queue could keep: wait for room in its
         * ring, where the entry is copied and nothing is kept. */
        weft_cq_t *cq = weft_container_of(comp, weft_cq_t, comp);
        if (weft_cq_push(cq, entry) == WEFT_OK)
            return;
        sched_yield();
        n = malloc(sizeof *n);
    }
    *n = local;
    n->release = copy_release;
    if (!weft__comp_signal(n))
        free(n);
}
