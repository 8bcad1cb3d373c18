/* The completion queue (progress_cq.c), one thread at a time: capacity
 * rounded up to a power of two; push until full (WEFT_EAGAIN), pop in order
 * until empty (WEFT_EAGAIN); batches; positions that wrap round the ring many
 * times; the engine's side keeps nodes on the overflow list when the ring
 * is full, and while the list is not empty, and pops give them back in
 * order after the ring's entries, releasing each; free releases what is
 * left; a waiter without a context asleep on an empty queue is woken by a
 * push, one with a context polls. */
#include "comp_test.h"

static int released;

static void release_node(weft__comp_node_t *n)
{
    released++;
    free(n);
}

static weft__comp_node_t *node(weft_cq_t *cq, uint64_t tag)
{
    weft__comp_node_t *n = calloc(1, sizeof *n);
    n->comp = weft_cq_comp(cq);
    n->release = release_node;
    n->entry = (weft_comp_entry_t){.user_context = n, .error = WEFT_OK, .tag = tag, .length = 1};
    return n;
}

/* Signal as the engine does; a node the ring took is the caller's again. */
static bool engine_signal(weft__comp_node_t *n)
{
    bool kept = weft__comp_signal(n);
    if (!kept)
        free(n);
    return kept;
}

static weft_comp_entry_t tagged(uint64_t tag)
{
    return (weft_comp_entry_t){.user_context = (void *)(uintptr_t)(tag + 1), .tag = tag};
}

static void check_ring(void)
{
    weft_cq_t *cq = NULL;
    CHECK(weft_cq_create(0, &cq) == WEFT_EINVAL && cq == NULL);
    CHECK(weft_cq_create(((size_t)1 << 30) + 1, &cq) == WEFT_EINVAL);
    CHECK(weft_cq_create(4, NULL) == WEFT_EINVAL);
    CHECK(weft_cq_comp(NULL) == NULL);
    CHECK(weft_cq_free(NULL) == WEFT_OK);
    MUST(weft_cq_create(5, &cq)); /* 8 slots */
    CHECK(weft_cq_comp(cq)->kind == WEFT_COMP_CQ && weft__comp_valid(weft_cq_comp(cq)));
    weft_comp_entry_t e, batch[16];
    CHECK(weft_cq_push(NULL, &e) == WEFT_EINVAL && weft_cq_push(cq, NULL) == WEFT_EINVAL);
    CHECK(weft_cq_pop(NULL, &e) == WEFT_EINVAL && weft_cq_pop(cq, NULL) == WEFT_EINVAL);
    CHECK(weft_cq_pop_batch(cq, NULL, 1) == WEFT_EINVAL && weft_cq_pop_batch(cq, batch, -1) < 0);
    CHECK(weft_cq_pop(cq, &e) == WEFT_EAGAIN);
    for (uint64_t i = 0; i < 8; i++) {
        e = tagged(i);
        CHECK(weft_cq_push(cq, &e) == WEFT_OK);
    }
    e = tagged(8);
    CHECK(weft_cq_push(cq, &e) == WEFT_EAGAIN);
    for (uint64_t i = 0; i < 8; i++)
        CHECK(weft_cq_pop(cq, &e) == WEFT_OK && e.tag == i &&
              e.user_context == (void *)(uintptr_t)(i + 1));
    CHECK(weft_cq_pop(cq, &e) == WEFT_EAGAIN);

    /* Batches, and positions far past the capacity. */
    uint64_t next_in = 0, next_out = 0;
    for (int round = 0; round < 1000; round++) {
        int k = round % 9;
        for (int i = 0; i < k; i++) {
            e = tagged(next_in);
            if (weft_cq_push(cq, &e) == WEFT_OK)
                next_in++;
        }
        int n = weft_cq_pop_batch(cq, batch, round % 4 + 1);
        CHECK(n >= 0 && n <= round % 4 + 1);
        for (int i = 0; i < n; i++)
            CHECK(batch[i].tag == next_out++);
    }
    int n;
    while ((n = weft_cq_pop_batch(cq, batch, 16)) > 0)
        for (int i = 0; i < n; i++)
            CHECK(batch[i].tag == next_out++);
    CHECK(n == 0 && next_out == next_in && next_in > 8 * 100); /* wrapped round many times */
    CHECK(weft_cq_pop_batch(cq, batch, 0) == 0);
    MUST(weft_cq_free(cq));
}

static void check_overflow(void)
{
    weft_cq_t *cq;
    MUST(weft_cq_create(2, &cq));
    weft_comp_entry_t e;
    released = 0;
    /* Two fit the ring; the next four wait on the list; a user's push finds
     * the ring full. */
    for (uint64_t i = 0; i < 6; i++)
        CHECK(engine_signal(node(cq, i)) == (i >= 2));
    e = tagged(100);
    CHECK(weft_cq_push(cq, &e) == WEFT_EAGAIN);
    /* One out of the ring: the engine's next entry still joins the list
     * (never past its own older ones); a user's push takes the ring slot. */
    CHECK(weft_cq_pop(cq, &e) == WEFT_OK && e.tag == 0);
    CHECK(engine_signal(node(cq, 6)));
    e = tagged(100);
    CHECK(weft_cq_push(cq, &e) == WEFT_OK);
    static const uint64_t order[] = {1, 100, 2, 3, 4, 5, 6};
    for (int i = 0; i < 7; i++) {
        CHECK(weft_cq_pop(cq, &e) == WEFT_OK && e.tag == order[i]);
        if (order[i] >= 2 && order[i] < 100)
            CHECK(e.length == 1 && e.user_context != NULL); /* the node's own entry */
    }
    CHECK(released == 5);
    CHECK(weft_cq_pop(cq, &e) == WEFT_EAGAIN);
    /* Empty list: the ring again. */
    CHECK(!engine_signal(node(cq, 7)));
    weft_comp_entry_t b[4];
    CHECK(weft_cq_pop_batch(cq, b, 4) == 1 && b[0].tag == 7);
    /* Batches take the list too; free releases what is left. */
    for (uint64_t i = 10; i < 20; i++)
        engine_signal(node(cq, i));
    CHECK(weft_cq_pop_batch(cq, b, 4) == 4 && b[0].tag == 10 && b[3].tag == 13);
    released = 0;
    MUST(weft_cq_free(cq));
    CHECK(released == 6);
}

static weft_cq_t *wq;
static weft_comp_entry_t got;
static int got_rc = -100;

static void *waiter(void *arg)
{
    got_rc = weft_cq_wait_pop(wq, arg, &got);
    return NULL;
}

static void check_wait(void)
{
    MUST(weft_cq_create(4, &wq));
    weft_comp_entry_t e;
    CHECK(weft_cq_wait_pop(NULL, NULL, &e) == WEFT_EINVAL);
    CHECK(weft_cq_wait_pop(wq, NULL, NULL) == WEFT_EINVAL);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
    CHECK(comp_sleeper_seen(&wq->wait));
    e = tagged(42);
    MUST(weft_cq_push(wq, &e));
    pthread_join(t, NULL);
    CHECK(got_rc == WEFT_OK && got.tag == 42);
    /* Woken by the engine's side too, from the overflow list. */
    for (uint64_t i = 0; i < 4; i++) {
        e = tagged(i);
        MUST(weft_cq_push(wq, &e));
    }
    CHECK(engine_signal(node(wq, 4)));
    for (uint64_t i = 0; i < 5; i++)
        CHECK(weft_cq_wait_pop(wq, NULL, &e) == WEFT_OK && e.tag == i);
    got_rc = -100;
    CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
    CHECK(comp_sleeper_seen(&wq->wait));
    for (uint64_t i = 0; i < 4; i++) {
        e = tagged(i);
        MUST(weft_cq_push(wq, &e)); /* the waiter may take some meanwhile */
    }
    pthread_join(t, NULL);
    CHECK(got_rc == WEFT_OK && got.tag == 0);
    for (uint64_t i = 1; i < 4; i++)
        CHECK(weft_cq_pop(wq, &e) == WEFT_OK && e.tag == i);

    /* With a context: the waiter polls while another thread pushes. */
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    got_rc = -100;
    CHECK(pthread_create(&t, NULL, waiter, ctx) == 0);
    sleep_ms(20);
    e = tagged(7);
    MUST(weft_cq_push(wq, &e));
    pthread_join(t, NULL);
    CHECK(got_rc == WEFT_OK && got.tag == 7);
    MUST(weft_finalize(ctx));
    MUST(weft_cq_free(wq));
}

int main(void)
{
    test_watchdog(100);
    check_ring();
    check_overflow();
    check_wait();
    return comp_summary("test_comp_cq");
}
