/* The flag (progress_comp.c): not set until signaled, then set with the
 * entry; reset only once set; a waiter without a context that sleeps is
 * woken by the signal; a waiter with a context (a job of size 1) polls it. */
#include "comp_test.h"

static weft_flag_t flag;
static weft_comp_entry_t got;
static int got_rc = -100;

static void *waiter(void *arg)
{
    got_rc = weft_flag_wait(&flag, arg, &got);
    return NULL;
}

int main(void)
{
    test_watchdog(100);
    CHECK(sizeof(weft_flag_t) == 64 && _Alignof(weft_flag_t) == 64);
    CHECK(weft_flag_init(NULL) == WEFT_EINVAL);
    CHECK(weft_flag_test(NULL, NULL) == WEFT_EINVAL);
    CHECK(weft_flag_reset(NULL) == WEFT_EINVAL);
    CHECK(weft_flag_wait(NULL, NULL, NULL) == WEFT_EINVAL);

    MUST(weft_flag_init(&flag));
    CHECK(weft_flag_comp(&flag)->kind == WEFT_COMP_FLAG && weft__comp_valid(weft_flag_comp(&flag)));
    weft_comp_entry_t e;
    memset(&e, 0x5a, sizeof e);
    CHECK(weft_flag_test(&flag, &e) == WEFT_INPROGRESS);
    CHECK(weft_flag_reset(&flag) == WEFT_ESTATE);
    int uc;
    comp_signal(weft_flag_comp(&flag), &uc, WEFT_ETRUNC, 3, 77, 12);
    CHECK(weft_flag_test(&flag, &e) == WEFT_OK && entry_is(&e, &uc, WEFT_ETRUNC, 3, 77, 12));
    CHECK(weft_flag_test(&flag, NULL) == WEFT_OK);
    CHECK(weft_flag_wait(&flag, NULL, &e) == WEFT_OK); /* set: returns at once */
    MUST(weft_flag_reset(&flag));
    CHECK(weft_flag_test(&flag, &e) == WEFT_INPROGRESS);

    /* A waiter without a context sleeps, and the signal wakes it. */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
    CHECK(comp_sleeper_seen(&((weft__flag_t *)&flag)->wait));
    comp_signal(weft_flag_comp(&flag), NULL, WEFT_OK, 1, 2, 3);
    pthread_join(t, NULL);
    CHECK(got_rc == WEFT_OK && entry_is(&got, NULL, WEFT_OK, 1, 2, 3));

    /* A waiter with a context polls it while the signal comes from a
     * thread that never calls weft. */
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    MUST(weft_flag_reset(&flag));
    got_rc = -100;
    CHECK(pthread_create(&t, NULL, waiter, ctx) == 0);
    sleep_ms(20);
    comp_signal(weft_flag_comp(&flag), &uc, WEFT_OK, 0, 9, 0);
    pthread_join(t, NULL);
    CHECK(got_rc == WEFT_OK && entry_is(&got, &uc, WEFT_OK, 0, 9, 0));
    MUST(weft_finalize(ctx));
    return comp_summary("test_comp_flag");
}
