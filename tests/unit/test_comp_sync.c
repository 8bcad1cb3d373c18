/* The synchronizer (progress_comp.c): complete once n signals came, with
 * the first error among them; reset only once complete, arming it again for
 * n with the error cleared; n = 0 is complete at once; signals past the n-th
 * change nothing; threads signaling at once complete it exactly at the last
 * one, and wake a waiter without a context asleep on it. */
#include "comp_test.h"

#define THREADS 4
#define SIGNALS 20000

static weft_sync_t sync_obj;
static int waited = -100;

static void *signaler(void *arg)
{
    (void)arg;
    for (int i = 0; i < SIGNALS; i++)
        comp_signal(weft_sync_comp(&sync_obj), NULL, WEFT_OK, 0, (uint64_t)i, 0);
    return NULL;
}

static void *waiter(void *arg)
{
    waited = weft_sync_wait(&sync_obj, arg);
    return NULL;
}

int main(void)
{
    test_watchdog(100);
    CHECK(sizeof(weft_sync_t) == 64 && _Alignof(weft_sync_t) == 64);
    CHECK(weft_sync_init(NULL, 1) == WEFT_EINVAL);
    CHECK(weft_sync_test(NULL) == WEFT_EINVAL);
    CHECK(weft_sync_reset(NULL) == WEFT_EINVAL);
    CHECK(weft_sync_wait(NULL, NULL) == WEFT_EINVAL);

    MUST(weft_sync_init(&sync_obj, 3));
    CHECK(weft_sync_comp(&sync_obj)->kind == WEFT_COMP_SYNC);
    CHECK(weft_sync_test(&sync_obj) == WEFT_INPROGRESS);
    CHECK(weft_sync_reset(&sync_obj) == WEFT_ESTATE);
    comp_signal(weft_sync_comp(&sync_obj), NULL, WEFT_OK, 0, 0, 0);
    comp_signal(weft_sync_comp(&sync_obj), NULL, WEFT_ETRUNC, 0, 0, 0);
    CHECK(weft_sync_test(&sync_obj) == WEFT_INPROGRESS);
    comp_signal(weft_sync_comp(&sync_obj), NULL, WEFT_EPEERDEAD, 0, 0, 0);
    CHECK(weft_sync_test(&sync_obj) == WEFT_ETRUNC); /* complete, the first error */
    CHECK(weft_sync_wait(&sync_obj, NULL) == WEFT_ETRUNC);
    comp_signal(weft_sync_comp(&sync_obj), NULL, WEFT_OK, 0, 0, 0); /* one too many */
    CHECK(weft_sync_test(&sync_obj) == WEFT_ETRUNC);
    MUST(weft_sync_reset(&sync_obj));
    CHECK(weft_sync_test(&sync_obj) == WEFT_INPROGRESS);
    for (int i = 0; i < 3; i++)
        comp_signal(weft_sync_comp(&sync_obj), NULL, WEFT_OK, 0, 0, 0);
    CHECK(weft_sync_test(&sync_obj) == WEFT_OK);

    MUST(weft_sync_init(&sync_obj, 0));
    CHECK(weft_sync_test(&sync_obj) == WEFT_OK);
    MUST(weft_sync_reset(&sync_obj));
    CHECK(weft_sync_test(&sync_obj) == WEFT_OK);

    /* Threads at once, a waiter asleep on it. */
    MUST(weft_sync_init(&sync_obj, THREADS * SIGNALS));
    pthread_t w, t[THREADS];
    CHECK(pthread_create(&w, NULL, waiter, NULL) == 0);
    CHECK(comp_sleeper_seen(&((weft__sync_t *)&sync_obj)->wait));
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, signaler, NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_join(w, NULL);
    CHECK(waited == WEFT_OK && weft_sync_test(&sync_obj) == WEFT_OK);
    CHECK(atomic_load(&((weft__sync_t *)&sync_obj)->left) == 0);

    /* With a context: the waiter polls until the last signal. */
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    MUST(weft_sync_init(&sync_obj, 2));
    waited = -100;
    CHECK(pthread_create(&w, NULL, waiter, ctx) == 0);
    comp_signal(weft_sync_comp(&sync_obj), NULL, WEFT_ECANCELED, 0, 0, 0);
    sleep_ms(20);
    comp_signal(weft_sync_comp(&sync_obj), NULL, WEFT_OK, 0, 0, 0);
    pthread_join(w, NULL);
    CHECK(waited == WEFT_ECANCELED);
    MUST(weft_finalize(ctx));
    return comp_summary("test_comp_sync");
}
