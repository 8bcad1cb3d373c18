/* Progress callbacks (weft_progress_register): what a front end registers
 * runs in every progress pass, on the progress thread too, never twice at
 * once nor inside itself, and not after it was unregistered.
 *
 *   mp_progress_cb            (any number of ranks; WEFT_PROGRESS_THREAD=1
 *                              adds the check that the thread runs it)
 *
 * 1. A callback that counts its calls, and calls weft_progress itself (it
 *    must not run inside itself): weft_progress runs it.
 * 2. With a progress thread: the count grows while this thread makes no
 *    weft call (given up after 20 s, and the check fails).
 * 3. Four threads call weft_progress in a loop: the callback never runs
 *    twice at once (its `inside` word), and every call of it is counted.
 * 4. The queue holds 16; the 17th registration is refused; a callback
 *    turned off (weft_progress_arm) is skipped until turned on again;
 *    unregistering twice is refused; an unregistered callback is not
 *    called again.
 * 5. A callback that sends to the next rank and receives from the previous
 *    one, driven only by this thread's weft_progress: a callback may call
 *    any weft function.
 * 6. weft_sr_check and weft_sr_done look at a request without progressing
 *    (the callback does not run); weft_sr_test progresses. */
#include <pthread.h>
#include <stdatomic.h>

#include "../common/test_util.h"

#define GIVE_UP_S 20.0
#define THREADS   4
#define ROUNDS    20000

static weft_ctx_t *ctx;
static atomic_long calls;
static atomic_int inside, overlapped, nested;

static int counting(void *arg)
{
    (void)arg;
    if (atomic_exchange(&inside, 1))
        atomic_store(&overlapped, 1);
    atomic_fetch_add(&calls, 1);
    /* Inside itself: this pass must not run the callback again. */
    long before = atomic_load(&calls);
    weft_progress(ctx);
    if (atomic_load(&calls) != before)
        atomic_store(&nested, 1);
    atomic_store(&inside, 0);
    return 0;
}

static int idle_cb(void *arg)
{
    atomic_fetch_add((atomic_long *)arg, 1);
    return 0;
}

static void *spinner(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++)
        weft_progress(ctx);
    return NULL;
}

/* Step 5: a ring exchange run from inside a callback. */
typedef struct {
    int state; /* 0: post, 1: wait, 2: done */
    weft_request_t *r[2];
    int out, in;
} ring_t;

static int ring_cb(void *arg)
{
    ring_t *g = arg;
    int n = weft_size(ctx), me = weft_rank(ctx);
    int state = __atomic_load_n(&g->state, __ATOMIC_RELAXED);
    if (state == 0) {
        g->out = me;
        MUST(weft_sr_irecv(ctx, (me + n - 1) % n, 7, 1, &g->in, sizeof g->in, &g->r[0]));
        MUST(weft_sr_isend(ctx, (me + 1) % n, 7, 1, &g->out, sizeof g->out, &g->r[1]));
        __atomic_store_n(&g->state, 1, __ATOMIC_RELAXED);
        return 1;
    }
    if (state != 1)
        return 0;
    for (int i = 0; i < 2; i++) {
        int flag = 0;
        if (g->r[i]) {
            MUST(weft_sr_test(ctx, g->r[i], &flag, NULL));
            if (flag)
                g->r[i] = NULL;
        }
    }
    if (g->r[0] || g->r[1])
        return 0;
    __atomic_store_n(&g->state, 2, __ATOMIC_RELEASE);
    return 1;
}

int main(void)
{
    test_watchdog(120);
    weft_init_params_t p = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                            .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&p, &ctx));
    test_rank = weft_rank(ctx);
    int n = weft_size(ctx), me = weft_rank(ctx);

    /* 1 */
    int id;
    MUST(weft_progress_register(ctx, counting, NULL, &id));
    /* A progress thread may be running it: this pass then skips it. */
    long c0 = atomic_load(&calls);
    double t0 = test_now_s();
    do
        weft_progress(ctx);
    while (atomic_load(&calls) == c0 && test_now_s() - t0 < GIVE_UP_S);
    CHECK(atomic_load(&calls) > c0);
    CHECK(!atomic_load(&nested));

    /* 2 */
    if (weft_progress_thread_running(ctx)) {
        long c1 = atomic_load(&calls);
        double start = test_now_s();
        while (atomic_load(&calls) == c1 && test_now_s() - start < GIVE_UP_S)
            ;
        CHECK(atomic_load(&calls) > c1);
    }

    /* 3 */
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, spinner, NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK(!atomic_load(&overlapped));
    CHECK(!atomic_load(&nested));

    /* 4 */
    atomic_long idle_calls = 0;
    int ids[16], k = 0, rc;
    while ((rc = weft_progress_register(ctx, idle_cb, &idle_calls, &ids[k])) == WEFT_OK)
        k++;
    CHECK(rc == WEFT_ENOBUFS && k == 15);
    CHECK(weft_progress_register(ctx, NULL, NULL, &ids[0]) == WEFT_EINVAL);
    /* Each runs in every pass (one the progress thread runs is skipped). */
    t0 = test_now_s();
    do
        weft_progress(ctx);
    while (atomic_load(&idle_calls) < 15 * 10 && test_now_s() - t0 < GIVE_UP_S);
    CHECK(atomic_load(&idle_calls) >= 15 * 10);
    for (int i = 0; i < k; i++)
        CHECK(weft_progress_unregister(ctx, ids[i]) == WEFT_OK);
    CHECK(weft_progress_unregister(ctx, ids[0]) == WEFT_EINVAL);
    CHECK(weft_progress_unregister(ctx, 99) == WEFT_EINVAL);
    /* Turned off, it is skipped; turned on, it runs again. */
    CHECK(weft_progress_arm(ctx, id, 0) == WEFT_OK);
    /* A pass already past the look (the progress thread's) may still run
     * it once; 100 passes of ours would run it 100 times. */
    long off = atomic_load(&calls);
    for (int i = 0; i < 100; i++)
        weft_progress(ctx);
    CHECK(atomic_load(&calls) - off <= 1);
    off = atomic_load(&calls);
    CHECK(weft_progress_arm(ctx, id, 1) == WEFT_OK);
    t0 = test_now_s();
    do
        weft_progress(ctx);
    while (atomic_load(&calls) == off && test_now_s() - t0 < GIVE_UP_S);
    CHECK(atomic_load(&calls) > off);
    CHECK(weft_progress_arm(ctx, -1, 1) == WEFT_EINVAL);
    CHECK(weft_progress_unregister(ctx, id) == WEFT_OK);
    long after = atomic_load(&calls), idle_after = atomic_load(&idle_calls);
    for (int i = 0; i < 100; i++)
        weft_progress(ctx);
    CHECK(atomic_load(&calls) == after && atomic_load(&idle_calls) == idle_after);

    /* 5: only the callback sends and receives. */
    ring_t g = {.state = 0};
    MUST(weft_progress_register(ctx, ring_cb, &g, &id));
    double start = test_now_s();
    while (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != 2 && test_now_s() - start < GIVE_UP_S)
        weft_progress(ctx);
    MUST(weft_progress_unregister(ctx, id));
    CHECK(__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == 2);
    CHECK(g.in == (me + n - 1) % n);

    /* 6: weft_sr_check makes no progress (without a progress thread the
     * callback then never runs); weft_sr_test does. */
    if (!weft_progress_thread_running(ctx)) {
        MUST(weft_progress_register(ctx, counting, NULL, &id));
        weft_request_t *r, *s;
        uint64_t v = 0, w = 42;
        int flag = 1;
        MUST(weft_sr_irecv(ctx, me, 77, 1, &v, sizeof v, &r));
        long c6 = atomic_load(&calls);
        for (int i = 0; i < 1000; i++)
            MUST(weft_sr_check(ctx, r, &flag, NULL));
        CHECK(flag == 0 && atomic_load(&calls) == c6 && !weft_sr_done(r));
        for (int i = 0; i < 10; i++)
            MUST(weft_sr_test(ctx, r, &flag, NULL));
        CHECK(flag == 0 && atomic_load(&calls) > c6);
        MUST(weft_sr_isend(ctx, me, 77, 1, &w, sizeof w, &s));
        MUST(weft_sr_wait(ctx, s, NULL));
        while (!weft_sr_done(r))
            weft_progress(ctx);
        MUST(weft_sr_check(ctx, r, &flag, NULL));
        CHECK(flag == 1 && v == 42);
        MUST(weft_sr_check(ctx, NULL, &flag, NULL));
        CHECK(flag == 1 && weft_sr_check(ctx, NULL, NULL, NULL) == WEFT_EINVAL);
        MUST(weft_progress_unregister(ctx, id));
    }

    MUST(weft_finalize(ctx));
    return test_summary("mp_progress_cb");
}
