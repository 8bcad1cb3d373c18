/* The counter (progress_comp.c): it starts at its initial value and counts
 * every signal, failed ones included, which it also counts apart; threads
 * signaling at once lose no count; a waiter without a context that sleeps is
 * woken when the count reaches its value, one with a context polls. */
#include "comp_test.h"

#define THREADS 4
#define SIGNALS 100000

static weft_counter_t counter;
static int waited = -100;
static uint64_t seen;

static void *signaler(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < SIGNALS; i++)
        comp_signal(weft_counter_comp(&counter), NULL, i % 10 == id ? WEFT_EPEERDEAD : WEFT_OK, id,
                    (uint64_t)i, 0);
    return NULL;
}

typedef struct goal {
    uint64_t value;
    weft_ctx_t *ctx;
} goal_t;

static void *waiter(void *arg)
{
    goal_t *g = arg;
    waited = weft_counter_wait(&counter, g->value, g->ctx);
    seen = weft_counter_get(&counter);
    return NULL;
}

int main(void)
{
    test_watchdog(100);
    CHECK(sizeof(weft_counter_t) == 64 && _Alignof(weft_counter_t) == 64);
    CHECK(weft_counter_init(NULL, 0) == WEFT_EINVAL);
    CHECK(weft_counter_get(NULL) == 0 && weft_counter_errors(NULL) == 0);
    CHECK(weft_counter_wait(NULL, 1, NULL) == WEFT_EINVAL);

    MUST(weft_counter_init(&counter, 5));
    CHECK(weft_counter_comp(&counter)->kind == WEFT_COMP_COUNTER);
    CHECK(weft_counter_get(&counter) == 5 && weft_counter_errors(&counter) == 0);
    CHECK(weft_counter_wait(&counter, 5, NULL) == WEFT_OK); /* reached: at once */
    comp_signal(weft_counter_comp(&counter), NULL, WEFT_OK, 0, 0, 0);
    comp_signal(weft_counter_comp(&counter), NULL, WEFT_ETRUNC, 0, 0, 0);
    comp_signal(weft_counter_comp(&counter), NULL, WEFT_OK, 0, 0, 0);
    CHECK(weft_counter_get(&counter) == 8 && weft_counter_errors(&counter) == 1);

    /* A waiter for the last count, asleep while the threads signal. */
    MUST(weft_counter_init(&counter, 0));
    goal_t g = {(uint64_t)THREADS * SIGNALS, NULL};
    pthread_t w, t[THREADS];
    CHECK(pthread_create(&w, NULL, waiter, &g) == 0);
    CHECK(comp_sleeper_seen(&((weft__counter_t *)&counter)->wait));
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, signaler, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_join(w, NULL);
    CHECK(waited == WEFT_OK && seen == (uint64_t)THREADS * SIGNALS);
    CHECK(weft_counter_get(&counter) == (uint64_t)THREADS * SIGNALS);
    CHECK(weft_counter_errors(&counter) == (uint64_t)THREADS * (SIGNALS / 10));

    /* With a context: the waiter polls (a job of size 1) until another
     * thread's signal. */
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    MUST(weft_counter_init(&counter, 0));
    g = (goal_t){2, ctx};
    waited = -100;
    CHECK(pthread_create(&w, NULL, waiter, &g) == 0);
    comp_signal(weft_counter_comp(&counter), NULL, WEFT_OK, 0, 0, 0);
    sleep_ms(20);
    comp_signal(weft_counter_comp(&counter), NULL, WEFT_OK, 0, 0, 0);
    pthread_join(w, NULL);
    CHECK(waited == WEFT_OK && seen == 2);
    MUST(weft_finalize(ctx));
    return comp_summary("test_comp_counter");
}
