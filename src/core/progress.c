/* Waiting and background progress (PIOMan's role in seed 000).
 *
 * Waiting (WEFT_WAIT). Any thread inside a wait makes progress for everybody
 * through a try-lock: a thread that finds the engine busy goes on, never a
 * convoy.
 *   yield       (default) every waiter polls; past WEFT_SPIN_US without an
 *               event it yields its core between polls, so with more threads
 *               than cores the thread that has work (here or in the peer
 *               process) gets the core within a poll or two;
 *   spin        every waiter polls and never yields (spare cores only);
 *   fixed_spin  at WEFT_THREAD_MULTIPLE one waiter, the poller, polls for
 *               everybody (an atomic baton); the others spin on their own
 *               request's flag for WEFT_SPIN_US, then sleep on it as a futex;
 *   block       as fixed_spin, sleeping at once.
 * Under fixed_spin and block a completion stores the request's flag and wakes
 * its thread only if it sleeps (both sides order their store before their
 * load, so no wake is lost; a sleep also ends after 1 ms as a safety net).
 * Under every policy but spin, a polling thread that completed another
 * thread's request yields its core at once, handing it to the thread that now
 * has work (with more threads than cores, that thread may share our core). The poller yields after
 * WEFT_SPIN_US without an event (at once under block), or, without a progress thread and where
 * every driver has a doorbell, sleeps on the doorbells as the progress thread does (doorbell_sleep:
 * its request's sleeping word at 2, so whoever completes the request kicks the eventfd). When it
 * leaves it wakes one sleeper, which takes the baton. Below WEFT_THREAD_MULTIPLE one thread waits
 * at a time and polls.
 *
 * yield is the default because it measured best here with 2 to 8 threads per
 * rank on 2 cores: a futex wake costs an inter-processor interrupt and a trip
 * through the run queue (tens of microseconds on a virtual machine), a yield
 * between two polls costs one system call. The sleeping policies free the
 * cores for other work (compute threads, a progress thread) instead.
 *
 * Background progress. WEFT_PROGRESS_THREAD=1 starts a thread that polls
 * whenever the engine lock is free. It runs at SCHED_IDLE, so it takes only
 * cycles no application thread wants, and it is placed on a core the
 * application leaves free, or beside the application's core (place.c,
 * WEFT_PROGRESS_CPU). With it, rendezvous handshakes and
 * cooperative transfers (coop.c) advance while every application thread
 * computes. The engine lock is then a mutex at every thread level.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core_int.h"
#include "topo/topo.h"
#include "util/log.h"
#include "util/param.h"

#define CLOCK_EVERY   64        /* idle polls between two reads of the clock */
#define SLEEP_TIMEOUT 1000000ll /* ns: a sleeping waiter looks again at least this often */
/* A progress thread asleep on doorbells looks again at least this often (ms):
 * deadlines that ring no doorbell (a handshake's) are met this late. */
#define PROGRESS_SLEEP_MS 10

static void futex_wait(atomic_int *word, int val, long long ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000)};
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake(atomic_int *word)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

int weft__wait_policy_parse(const char *s)
{
    if (!strcmp(s, "spin"))
        return WEFT__WAIT_SPIN;
    if (!strcmp(s, "yield"))
        return WEFT__WAIT_YIELD;
    if (!strcmp(s, "fixed_spin"))
        return WEFT__WAIT_FIXED_SPIN;
    if (!strcmp(s, "block"))
        return WEFT__WAIT_BLOCK;
    return -1;
}

static inline bool is_done(const atomic_int *flag)
{
    return atomic_load_explicit(flag, memory_order_acquire) != 0;
}

/* What a sleep on the doorbells came to (doorbell_sleep). */
enum { SLEPT, WORKED, BUSY, MUST_POLL };
static int doorbell_sleep(weft_ctx_t *ctx, bool waiter, struct weft_request *req, int *policy);

/* A waiter that found nothing for its patience gives its core away: under
 * wait_doorbells, where may_sleep, it sleeps on the drivers' doorbells where
 * every driver in use has one (true, also when its last pass found work),
 * else it yields (false). req: what it waits for, NULL from weft_idle. */
static bool rest(weft_ctx_t *ctx, struct weft_request *req, bool may_sleep)
{
    if (ctx->wait_doorbells && may_sleep) {
        int how = doorbell_sleep(ctx, true, req, NULL);
        if (how == SLEPT || how == WORKED)
            return true;
    }
    sched_yield();
    return false;
}

/* Poll for everybody until req is done. Past its patience without an event
 * a waiter rests between polls. */
static void poll_until(weft_ctx_t *ctx, struct weft_request *req)
{
    const atomic_int *flag = &req->done;
    unsigned spins = 0;
    uint64_t idle_since = 0;
    uint64_t patience = ctx->wait_policy == WEFT__WAIT_BLOCK ? 0 : ctx->spin_ns;
    unsigned done_before = atomic_load_explicit(&ctx->completions, memory_order_relaxed);
    /* No patience at all (more ranks than cpus, or WEFT_SPIN_US=0): the peer
     * we wait for may need this very core, so give it up after every poll that
     * found nothing, not after a batch of them. */
    bool eager_yield = ctx->spin_ns == 0 && ctx->wait_policy != WEFT__WAIT_SPIN;
    while (!is_done(flag)) {
        if (weft__progress_try(ctx) > 0) {
            spins = 0;
            idle_since = 0;
            /* We completed another thread's request: hand it our core, it has
             * work now (a no-op where cores are spare). */
            unsigned n = atomic_load_explicit(&ctx->completions, memory_order_relaxed);
            if (n != done_before && ctx->wait_policy != WEFT__WAIT_SPIN && !is_done(flag)) {
                done_before = n;
                sched_yield();
            }
            continue;
        }
        if (eager_yield) {
            rest(ctx, req, true);
            continue;
        }
        if (ctx->wait_policy == WEFT__WAIT_SPIN || ++spins < CLOCK_EVERY) {
            weft_cpu_relax();
            continue;
        }
        spins = 0;
        uint64_t now = weft__now_ns();
        if (!idle_since) {
            idle_since = now;
        } else if (now - idle_since >= patience && rest(ctx, req, true)) {
            idle_since = 0;
        }
    }
}

/* weft_idle past its patience rests; it may sleep only where no other
 * thread can complete what the caller's loop waits for (below
 * WEFT_THREAD_MULTIPLE; wait_doorbells means no progress thread): only this
 * thread's passes can, and a doorbell says when one would find something. */
static void idle_rest(weft_ctx_t *ctx)
{
    rest(ctx, NULL, ctx->thread_level != WEFT_THREAD_MULTIPLE);
}

void weft_idle(weft_ctx_t *ctx, weft_idle_t *st)
{
    if (!ctx || !st)
        return;
    if (ctx->wait_policy == WEFT__WAIT_SPIN) {
        weft_cpu_relax();
        return;
    }
    if (st->yielding) {
        idle_rest(ctx);
        return;
    }
    if (ctx->spin_ns == 0) { /* no patience: see poll_until */
        sched_yield();
        return;
    }
    if (++st->spins < CLOCK_EVERY) {
        weft_cpu_relax();
        return;
    }
    st->spins = 0;
    uint64_t now = weft__now_ns();
    if (!st->since)
        st->since = now;
    uint64_t patience = ctx->wait_policy == WEFT__WAIT_BLOCK ? 0 : ctx->spin_ns;
    if (now - st->since >= patience) {
        st->yielding = 1;
        idle_rest(ctx);
    }
}

/* A thread sleeps on its request's `sleeping` word, set to 1 while it sleeps
 * on it as a futex, 2 while it sleeps on the doorbells (doorbell_sleep: then
 * it is woken by a kick); whoever wakes it sets the word back to 0 first, so a wake that comes
 * before the thread is inside futex_wait is not lost (the kernel sees the word changed and returns
 * at once). A futex on the request's done flag would lose the baton's hand-over below, which leaves
 * done as it is. */
static void wake_sleeper(weft_ctx_t *ctx, atomic_int *word)
{
    if (!atomic_load(word))
        return;
    int how = atomic_exchange(word, 0);
    if (how == 1)
        futex_wake(word);
    else if (how == 2) /* asleep on the doorbells (doorbell_sleep) */
        weft__progress_kick(ctx);
}

/* The poller leaves: hand the baton to a sleeper. */
static void wake_one_sleeper(weft_ctx_t *ctx)
{
    weft_lock_acquire(&ctx->sleep_lock);
    if (!weft_list_empty(&ctx->sleepers)) {
        weft__sleeper_t *s = weft_list_entry(ctx->sleepers.next, weft__sleeper_t, link);
        wake_sleeper(ctx, s->flag);
    }
    weft_lock_release(&ctx->sleep_lock);
}

/* Sleep until the request is done, the poller leaves, or the safety timeout.
 * Either the waker sees sleeping set (and clears it before waking us), or we
 * see done or no poller: every store comes before the loads on both sides. */
static void sleep_on(weft_ctx_t *ctx, struct weft_request *req)
{
    weft__sleeper_t me = {.flag = &req->sleeping};
    weft_lock_acquire(&ctx->sleep_lock);
    weft_list_push_back(&ctx->sleepers, &me.link);
    atomic_fetch_add(&ctx->nsleepers, 1);
    weft_lock_release(&ctx->sleep_lock);
    atomic_store(&req->sleeping, 1);
    if (!atomic_load(&req->done) && atomic_load(&ctx->poller))
        futex_wait(&req->sleeping, 1, SLEEP_TIMEOUT);
    atomic_store_explicit(&req->sleeping, 0, memory_order_relaxed);
    weft_lock_acquire(&ctx->sleep_lock);
    weft_list_remove(&me.link);
    atomic_fetch_sub(&ctx->nsleepers, 1);
    weft_lock_release(&ctx->sleep_lock);
}

static void wait_req(weft_ctx_t *ctx, struct weft_request *req);

void weft__wait(weft_ctx_t *ctx, struct weft_request *req)
{
    if (is_done(&req->done))
        return;
    WEFT_TRACE(WEFT_TR_WAIT, WEFT_TR_B, 0, 0, 0, 0);
    wait_req(ctx, req);
    WEFT_TRACE(WEFT_TR_WAIT, WEFT_TR_E, 0, 0, 0, 0);
}

/* weft__wait, past its first look. */
static void wait_req(weft_ctx_t *ctx, struct weft_request *req)
{
    /* One waiter at a time, or every waiter polls: no baton. */
    if (ctx->thread_level != WEFT_THREAD_MULTIPLE || ctx->wait_policy == WEFT__WAIT_YIELD ||
        ctx->wait_policy == WEFT__WAIT_SPIN) {
        poll_until(ctx, req);
        return;
    }
    unsigned spins = 0;
    uint64_t start = 0;
    for (;;) {
        if (is_done(&req->done))
            return;
        if (!atomic_load_explicit(&ctx->poller, memory_order_relaxed) &&
            !atomic_exchange(&ctx->poller, 1)) {
            poll_until(ctx, req);
            atomic_store(&ctx->poller, 0);
            if (atomic_load(&ctx->nsleepers))
                wake_one_sleeper(ctx);
            return;
        }
        /* Somebody polls for us. */
        if (ctx->wait_policy == WEFT__WAIT_FIXED_SPIN) {
            if (++spins < CLOCK_EVERY) {
                weft_cpu_relax();
                continue;
            }
            spins = 0;
            uint64_t now = weft__now_ns();
            if (!start)
                start = now;
            if (now - start < ctx->spin_ns)
                continue;
        }
        sleep_on(ctx, req);
    }
}

void weft__wake_waiter(struct weft_ctx *ctx, struct weft_request *req)
{
    atomic_fetch_add_explicit(&ctx->completions, 1, memory_order_relaxed);
    wake_sleeper(ctx, &req->sleeping);
}

/* The progress thread's scheduling policy: SCHED_IDLE while it must poll
 * (it takes only cycles nobody else wants), SCHED_OTHER while it sleeps on
 * doorbells (woken by one, it gets a core at once, even from computing
 * threads, for the little work the event brings). It starts at the
 * initializing thread's policy and drops to SCHED_IDLE only for a driver
 * without a doorbell: without
 * privilege (RLIMIT_NICE 0) Linux refuses the way back. Changed only when it
 * differs from *cur; a refusal is logged once and leaves it as it is. */
static void progress_policy(int policy, int *cur)
{
    if (*cur == policy)
        return;
    struct sched_param sp = {0};
    int rc = pthread_setschedparam(pthread_self(), policy, &sp);
    if (rc == 0) {
        *cur = policy;
        return;
    }
    static atomic_int told;
    if (!atomic_exchange(&told, 1))
        weft_log_info("progress thread: scheduling policy %s refused (%s)",
                      policy == SCHED_IDLE ? "SCHED_IDLE" : "SCHED_OTHER", strerror(rc));
    *cur = -2; /* unknown: the next change tries again */
}

/* The doorbells of every driver, after fds[0] (the kick): SLEPT when the
 * thread may sleep on them, MUST_POLL when a driver without a doorbell has
 * peers (only polling finds their work), BUSY when work waits now (a
 * submission, a cooperative transfer under way, a driver's). A rendezvous
 * that only watches for a receive to claim is no work: if the receive is
 * posted, its answer comes through the ring, which rings. Under the engine
 * lock. */
static int doorbells(weft_ctx_t *ctx, struct pollfd *fds, int *n)
{
    for (int i = 0; i < ctx->ndrivers; i++) {
        const weft_driver_ops_t *ops = ctx->drivers[i].ops;
        int fd = ops->wait_fd ? ops->wait_fd(ctx->drivers[i].drv) : WEFT_DRV_WAIT_POLL;
        if (fd == WEFT_DRV_WAIT_POLL)
            return MUST_POLL;
        if (fd == WEFT_DRV_WAIT_BUSY)
            return BUSY;
        if (fd >= 0)
            fds[(*n)++] = (struct pollfd){.fd = fd, .events = POLLIN};
    }
    if (atomic_load_explicit(&ctx->submitted, memory_order_relaxed) || weft__coop_busy(ctx))
        return BUSY;
    return SLEPT;
}

/* Sleep on the doorbells until one rings, a kick comes or PROGRESS_SLEEP_MS
 * pass (SLEPT). At once BUSY when another thread holds the engine (it polls),
 * MUST_POLL when sleeping could miss work (see doorbells), or WORKED when
 * the last pass (below) found some. The progress thread sleeps with
 * *policy its scheduling policy; a waiter (wait_doorbells) with the request
 * it waits for, which it watches too: whoever completes it sees the waiter's
 * sleeping word at 2 and kicks (wake_sleeper); or with none, from weft_idle,
 * where no other thread can complete what its loop waits for. */
static int doorbell_sleep(weft_ctx_t *ctx, bool waiter, struct weft_request *req, int *policy)
{
    struct pollfd fds[1 + WEFT_MAX_DRIVERS];
    int n = 0;
    fds[n++] = (struct pollfd){.fd = ctx->progress_kick, .events = POLLIN};
    /* Announce the sleep, then make a last pass (it drains the submissions
     * and ends the holds of gates): work that appears after it comes with a
     * look at the announcement and a kick (weft__submit_defer,
     * weft__progress_wanted). Both sides are sequentially consistent. The
     * doorbells are armed after the pass, so that a driver may take a poll
     * by another thread for a sign that somebody else is watching (shm). */
    atomic_fetch_add(&ctx->progress_asleep, 1);
    int events = weft__progress_try(ctx);
    int can = WORKED;
    if (events > 0) {
        if (!waiter)
            atomic_fetch_add_explicit(&ctx->progress_events, (uint64_t)events,
                                      memory_order_relaxed);
    } else if (!weft_lock_try(&ctx->lock)) {
        can = BUSY;
    } else {
        can = doorbells(ctx, fds, &n);
        weft_lock_release(&ctx->lock);
    }
    if (can != SLEPT) {
        atomic_fetch_sub(&ctx->progress_asleep, 1);
        return can;
    }
    if (policy)
        progress_policy(SCHED_OTHER, policy);
    if (req)
        atomic_store(&req->sleeping, 2);
    /* The pass finds the engine taken at times: a submission deferred before
     * the announcement then still waits, and must not wait out the sleep. */
    bool stop = waiter ? req && atomic_load(&req->done) : atomic_load(&ctx->progress_stop);
    if (!atomic_load(&ctx->submitted) && !stop) {
        atomic_fetch_add_explicit(waiter ? &ctx->wait_sleeps : &ctx->progress_sleeps, 1,
                                  memory_order_relaxed);
        WEFT_TRACE(WEFT_TR_SLEEP, WEFT_TR_B, 0, 0, 0, 0);
        int woke = poll(fds, (nfds_t)n, PROGRESS_SLEEP_MS);
        WEFT_TRACE(WEFT_TR_SLEEP, WEFT_TR_E, 0, 0, 0, 0);
        if (woke > 0) {
            if (fds[0].revents) {
                uint64_t v;
                ssize_t r = read(ctx->progress_kick, &v, sizeof v);
                (void)r;
                if (!waiter)
                    atomic_fetch_add_explicit(&ctx->progress_kicked, 1, memory_order_relaxed);
            }
            for (int i = 1; i < n; i++)
                if (fds[i].revents) {
                    atomic_fetch_add_explicit(waiter ? &ctx->wait_woken : &ctx->progress_woken, 1,
                                              memory_order_relaxed);
                    break;
                }
        }
    }
    if (req)
        atomic_store_explicit(&req->sleeping, 0, memory_order_relaxed);
    atomic_fetch_sub(&ctx->progress_asleep, 1);
    return SLEPT;
}

void weft__progress_kick(struct weft_ctx *ctx)
{
    uint64_t one = 1;
    ssize_t w = write(ctx->progress_kick, &one, sizeof one);
    (void)w; /* EAGAIN: the counter is already far from zero, a wake is due */
}

static void *progress_main(void *arg)
{
    weft_ctx_t *ctx = arg;
    int policy; /* inherited from the initializing thread; see progress_policy */
    struct sched_param sp;
    if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0)
        policy = -2;
    pthread_setname_np(pthread_self(), "weft-progress");
    weft__trace_thread_name("progress");
    if (ctx->progress_pinned &&
        pthread_setaffinity_np(pthread_self(), sizeof ctx->progress_cpus, &ctx->progress_cpus))
        weft_log_warn("progress thread: cannot pin it where WEFT_PROGRESS_CPU says");
    unsigned idle = 0;
    uint64_t idle_since = 0;
    while (!atomic_load_explicit(&ctx->progress_stop, memory_order_acquire)) {
        int n = weft__progress_try(ctx);
        if (n > 0) {
            atomic_fetch_add_explicit(&ctx->progress_events, (uint64_t)n, memory_order_relaxed);
            idle = 0;
            idle_since = 0;
            continue;
        }
        if (++idle < CLOCK_EVERY) {
            weft_cpu_relax();
            continue;
        }
        idle = 0;
        /* WEFT_SPIN_US without an event: sleep on the doorbells where every
         * driver has one, else keep polling at idle priority. With the engine
         * taken, the policy stays: dropping to idle priority now, a thread
         * that computes beside it would starve it once the holder leaves. */
        uint64_t now = weft__now_ns();
        if (!idle_since)
            idle_since = now;
        if (now - idle_since >= ctx->spin_ns) {
            int how = doorbell_sleep(ctx, false, NULL, &policy);
            if (how == SLEPT || how == WORKED) {
                idle_since = 0;
                continue;
            }
            if (how == MUST_POLL)
                progress_policy(SCHED_IDLE, &policy);
        }
        sched_yield();
    }
    return NULL;
}

int weft__progress_thread_start(weft_ctx_t *ctx)
{
    atomic_store(&ctx->progress_stop, 0);
    ctx->progress_kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ctx->progress_kick < 0) {
        weft_log_error("cannot start the progress thread: eventfd: %s", strerror(errno));
        return WEFT_ESYS;
    }
    /* Placed from here, the application's thread (place.c). */
    ctx->progress_pinned = weft__progress_place(ctx, &ctx->progress_cpus);
    int rc = pthread_create(&ctx->progress_thread, NULL, progress_main, ctx);
    if (rc) {
        weft_log_error("cannot start the progress thread: %s", strerror(rc));
        close(ctx->progress_kick);
        ctx->progress_kick = -1;
        return WEFT_ESYS;
    }
    ctx->progress_running = true;
    return WEFT_OK;
}

int weft__progress_thread_move(weft_ctx_t *ctx, const cpu_set_t *cpus)
{
    if (!ctx->progress_running)
        return WEFT_ESTATE;
    if (pthread_setaffinity_np(ctx->progress_thread, sizeof *cpus, cpus) != 0)
        return WEFT_ESYS;
    char text[256];
    weft__topo_list(cpus, text, sizeof text);
    weft_log_info("progress thread moved to cpu %s, beside the thread groups", text);
    return WEFT_OK;
}

int weft__progress_thread_where(weft_ctx_t *ctx, cpu_set_t *out)
{
    if (!ctx->progress_running)
        return WEFT_ESTATE;
    return pthread_getaffinity_np(ctx->progress_thread, sizeof *out, out) ? WEFT_ESYS : WEFT_OK;
}

void weft__progress_thread_stop(weft_ctx_t *ctx)
{
    if (!ctx->progress_running)
        return;
    atomic_store(&ctx->progress_stop, 1);
    weft__progress_kick(ctx);
    pthread_join(ctx->progress_thread, NULL);
    ctx->progress_running = false;
    close(ctx->progress_kick);
    ctx->progress_kick = -1;
}
