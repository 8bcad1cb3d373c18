/* Completion objects signaled by the engine (weft_sr_isend_comp,
 * weft_sr_irecv_comp), in-process over the fake driver (fake_driver.h).
 *
 * What is checked: every path signals its object once, with the caller's
 * user_context and the status (source, tag, length): a lone send on an idle
 * track (built in the request, and copied by the driver: born complete,
 * signaled before the call returns), a receive posted before its message, a
 * receive whose message was already here (born complete), wildcards,
 * truncation (eager and rendezvous: WEFT_ETRUNC, the bytes delivered), sends
 * that wait for a busy track. Handlers run after the engine lock is
 * released, in the thread that progressed, also for a completion reported
 * by the driver outside any call; a handler may post the next operation. A
 * full queue keeps the engine's entries in order and gives them out after
 * the context is gone. A lost peer fails what depends on it
 * (WEFT_EPEERDEAD), a send to it fails at once and signals nothing, and what
 * is still posted at finalize completes with WEFT_ECANCELED. */
#include "comp_test.h"
#include "fake_driver.h"

static weft_comp_entry_t pop(weft_cq_t *cq, int *rc)
{
    weft_comp_entry_t e;
    memset(&e, 0, sizeof e);
    *rc = weft_cq_pop(cq, &e);
    return e;
}

/* The next entry of cq, which must be there now. */
static weft_comp_entry_t pop_now(weft_cq_t *cq)
{
    int rc;
    weft_comp_entry_t e = pop(cq, &rc);
    CHECK(rc == WEFT_OK);
    return e;
}

/* Sends that wait for a busy track, then leave in later passes. */
static void busy_window(weft_cq_t *cq, const uint8_t *b, uint8_t *rb)
{
    weft_comp_t *rc = weft_cq_comp(cq);
    weft_comp_entry_t e;
    int prc;
    struct weft_track *t = track(0);
    weft_sync_t window;
    MUST(weft_sync_init(&window, 3));
    t->mode = FAKE_BUSY;
    for (int i = 0; i < 3; i++)
        MUST(weft_sr_isend_comp(ctx[0], 1, 4, (uint64_t)i, b + i, 10, weft_sync_comp(&window),
                                NULL));
    CHECK(t->inflight && weft_sync_test(&window) == WEFT_INPROGRESS);
    for (int i = 0; i < 3; i++)
        MUST(weft_sr_irecv_comp(ctx[1], 0, 4, (uint64_t)i, rb + 100 * i, 10, rc,
                                (void *)(uintptr_t)(100 + i)));
    t->mode = FAKE_IDLE;
    fake_complete(t);
    for (int i = 0; i < 10 && weft_sync_test(&window) == WEFT_INPROGRESS; i++)
        pump(1);
    CHECK(weft_sync_test(&window) == WEFT_OK);
    pump(2);
    for (int i = 0; i < 3; i++) {
        e = pop_now(cq);
        CHECK(entry_is(&e, (void *)(uintptr_t)(100 + i), WEFT_OK, 0, (uint64_t)i, 10) &&
              !memcmp(rb + 100 * i, b + i, 10));
    }
    pop(cq, &prc);
    CHECK(prc == WEFT_EAGAIN);
}

static void test_paths(uint32_t caps)
{
    open_pair("default", caps);
    weft_counter_t sent;
    weft_cq_t *cq;
    MUST(weft_counter_init(&sent, 0));
    MUST(weft_cq_create(64, &cq));
    weft_comp_t *sc = weft_counter_comp(&sent), *rc = weft_cq_comp(cq);
    uint8_t *b = pattern(5000, 1);
    uint8_t rb[5000];
    weft_comp_entry_t e;
    int prc;

    /* A lone send on an idle track leaves and completes in the call. */
    MUST(weft_sr_isend_comp(ctx[0], 1, 3, 7, b, 8, sc, NULL));
    CHECK(weft_counter_get(&sent) == 1);
    /* A receive posted before its message arrives. */
    MUST(weft_sr_irecv_comp(ctx[1], 0, 3, 7, rb, 8, rc, rb));
    pop(cq, &prc);
    CHECK(prc == WEFT_EAGAIN);
    pump(2);
    e = pop_now(cq);
    CHECK(entry_is(&e, rb, WEFT_OK, 0, 7, 8) && !memcmp(rb, b, 8));

    /* A receive whose message is already here: signaled in the call. */
    MUST(weft_sr_isend_comp(ctx[0], 1, 3, 8, b + 8, 20, sc, NULL));
    pump(1);
    MUST(weft_sr_irecv_comp(ctx[1], 0, 3, 8, rb, 20, rc, (void *)8));
    e = pop_now(cq);
    CHECK(entry_is(&e, (void *)8, WEFT_OK, 0, 8, 20) && !memcmp(rb, b + 8, 20));

    /* Truncation, eager and rendezvous (above the fake's 1024 bytes): the
     * receive fails with what fitted, the send does not. */
    MUST(weft_sr_irecv_comp(ctx[1], 0, 3, 9, rb, 50, rc, (void *)9));
    MUST(weft_sr_isend_comp(ctx[0], 1, 3, 9, b, 100, sc, NULL));
    MUST(weft_sr_isend_comp(ctx[0], 1, 3, 10, b, 5000, sc, NULL));
    MUST(weft_sr_irecv_comp(ctx[1], 0, 3, 10, rb, 3000, rc, (void *)10));
    for (int i = 0; i < 20; i++)
        pump(1);
    e = pop_now(cq);
    weft_comp_entry_t e2 = pop_now(cq);
    if (e.user_context == (void *)10) { /* either may come first */
        weft_comp_entry_t x = e;
        e = e2;
        e2 = x;
    }
    CHECK(entry_is(&e, (void *)9, WEFT_ETRUNC, 0, 9, 50));
    CHECK(entry_is(&e2, (void *)10, WEFT_ETRUNC, 0, 10, 3000));
    CHECK(!memcmp(rb, b, 3000)); /* both wrote their message's first bytes */
    CHECK(weft_counter_get(&sent) == 4 && weft_counter_errors(&sent) == 0);

    /* Wildcards: the status names the message. */
    MUST(weft_sr_irecv_comp(ctx[1], WEFT_ANY_SOURCE, 3, WEFT_ANY_TAG, rb, 64, rc, (void *)11));
    MUST(weft_sr_isend_comp(ctx[0], 1, 3, 11, b, 33, sc, NULL));
    pump(2);
    e = pop_now(cq);
    CHECK(entry_is(&e, (void *)11, WEFT_OK, 0, 11, 33));

    /* Not on a track that copies what it sends: the fake's busy mode would
     * keep pointers into the caller's stack. */
    if (!(caps & WEFT_DRV_CAP_SEND_COPY))
        busy_window(cq, b, rb);

    /* Arguments. */
    weft_comp_t none = {.kind = 0};
    CHECK(weft_sr_isend_comp(ctx[0], 1, 0, 0, b, 1, NULL, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_isend_comp(ctx[0], 1, 0, 0, b, 1, &none, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_isend_comp(ctx[0], 1, 0, 0, NULL, 1, sc, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_isend_comp(ctx[0], 2, 0, 0, b, 1, sc, NULL) == WEFT_ERANK);
    CHECK(weft_sr_isend_comp(ctx[0], 1, 0, WEFT_ANY_TAG, b, 1, sc, NULL) == WEFT_ETAG);
    CHECK(weft_sr_isend_comp(NULL, 1, 0, 0, b, 1, sc, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_irecv_comp(ctx[1], 0, 0, 0, rb, 1, NULL, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_irecv_comp(ctx[1], 0, 0, 0, NULL, 1, rc, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_irecv_comp(ctx[1], -2, 0, 0, rb, 1, rc, NULL) == WEFT_ERANK);
    CHECK(weft_counter_get(&sent) == 5);
    close_pair();
    MUST(weft_cq_free(cq));
    free(b);
}

/* ---- handlers ---- */

typedef struct hstate {
    weft_ctx_t *ctx; /* whose lock must be free while the handler runs */
    int calls;
    weft_comp_entry_t last;
    pthread_t thread;
    /* Receives: post the next one from inside the handler, up to tag `upto`. */
    bool repost;
    uint64_t upto;
    uint8_t *buf;
    weft_handler_t *self;
} hstate_t;

static void on_complete(const weft_comp_entry_t *e, void *arg)
{
    hstate_t *h = arg;
    bool free_lock = weft_lock_try(&h->ctx->lock);
    CHECK(free_lock);
    if (free_lock)
        weft_lock_release(&h->ctx->lock);
    h->calls++;
    h->last = *e;
    h->thread = pthread_self();
    if (h->repost && e->tag < h->upto)
        MUST(weft_sr_irecv_comp(h->ctx, 0, 5, e->tag + 1, h->buf, 16, weft_handler_comp(h->self),
                                (void *)(uintptr_t)(e->tag + 1)));
}

static void test_handlers(void)
{
    open_pair("default", 0);
    /* A real lock, so that a handler run under it would find it taken. */
    for (int r = 0; r < 2; r++)
        weft_lock_init(&ctx[r]->lock, WEFT_LOCK_MUTEX);
    weft_handler_t hs, hr;
    hstate_t s = {.ctx = ctx[0]}, r = {.ctx = ctx[1]};
    MUST(weft_handler_init(&hs, on_complete, &s));
    MUST(weft_handler_init(&hr, on_complete, &r));
    uint8_t b[16] = "completion", rb[16];

    /* Born complete: the handler ran before the call returned. */
    MUST(weft_sr_isend_comp(ctx[0], 1, 5, 0, b, 10, weft_handler_comp(&hs), (void *)1));
    CHECK(s.calls == 1 && entry_is(&s.last, (void *)1, WEFT_OK, 0, 0, 10));
    CHECK(pthread_equal(s.thread, pthread_self()));
    /* Found by a progress pass: run by weft_progress after the release. */
    r.repost = true;
    r.upto = 4;
    r.buf = rb;
    r.self = &hr;
    MUST(weft_sr_irecv_comp(ctx[1], 0, 5, 0, rb, 16, weft_handler_comp(&hr), (void *)0));
    CHECK(r.calls == 0);
    weft_progress(ctx[1]);
    CHECK(r.calls == 1 && entry_is(&r.last, (void *)0, WEFT_OK, 0, 0, 10));
    /* The handler posted the next receive itself, each time. */
    for (uint64_t i = 1; i <= 4; i++)
        MUST(weft_sr_isend_comp(ctx[0], 1, 5, i, b, 10, weft_handler_comp(&hs), NULL));
    pump(6);
    CHECK(r.calls == 5 && entry_is(&r.last, (void *)4, WEFT_OK, 0, 4, 10));
    CHECK(s.calls == 5);

    /* A send completed by the driver outside any call: queued, and run by
     * the next pass. */
    struct weft_track *t = track(0);
    t->mode = FAKE_BUSY;
    MUST(weft_sr_isend_comp(ctx[0], 1, 6, 0, b, 10, weft_handler_comp(&hs), (void *)6));
    CHECK(s.calls == 5 && t->inflight);
    t->mode = FAKE_IDLE;
    fake_complete(t);
    CHECK(s.calls == 5);
    CHECK(weft_progress(ctx[0]) >= 1);
    CHECK(s.calls == 6 && entry_is(&s.last, (void *)6, WEFT_OK, 0, 0, 10));

    /* Still posted at finalize: canceled, and its handler runs there. */
    r.repost = false;
    MUST(weft_sr_irecv_comp(ctx[1], 0, 7, 0, rb, 16, weft_handler_comp(&hr), (void *)7));
    pump(2); /* the tag-6 message stays unexpected */
    CHECK(r.calls == 5);
    close_pair();
    CHECK(r.calls == 6 && entry_is(&r.last, (void *)7, WEFT_ECANCELED, 0, 0, 0));
}

/* A queue of two slots for eight receives: the engine keeps the rest, in
 * order, until pops take them, also after both contexts are gone. */
static void test_cq_full(void)
{
    enum { N = 8 };
    open_pair("default", 0);
    weft_cq_t *cq;
    weft_counter_t sent;
    MUST(weft_cq_create(2, &cq));
    MUST(weft_counter_init(&sent, 0));
    uint8_t *b = pattern(N * 16, 3), rb[N][16];
    for (int i = 0; i < N; i++)
        MUST(weft_sr_irecv_comp(ctx[1], 0, 0, (uint64_t)i, rb[i], 16, weft_cq_comp(cq),
                                (void *)(uintptr_t)i));
    for (int i = 0; i < N; i++)
        MUST(weft_sr_isend_comp(ctx[0], 1, 0, (uint64_t)i, b + 16 * i, 16, weft_counter_comp(&sent),
                                NULL));
    pump(4);
    CHECK(weft_counter_get(&sent) == N);
    close_pair();
    for (int i = 0; i < N; i++) {
        weft_comp_entry_t e = pop_now(cq);
        CHECK(entry_is(&e, (void *)(uintptr_t)i, WEFT_OK, 0, (uint64_t)i, 16) &&
              !memcmp(rb[i], b + 16 * i, 16));
    }
    int rc;
    pop(cq, &rc);
    CHECK(rc == WEFT_EAGAIN);
    MUST(weft_cq_free(cq));
    free(b);
}

/* The peer is lost: a receive naming it, a send in flight and two waiting
 * for the track fail with WEFT_EPEERDEAD; an any-source receive stays
 * posted until finalize cancels it. */
static void test_peer_lost(void)
{
    open_pair("default", 0);
    weft_cq_t *cq;
    MUST(weft_cq_create(16, &cq));
    weft_comp_t *c = weft_cq_comp(cq);
    uint8_t *b = pattern(5000, 4), rb[2][64];
    MUST(weft_sr_irecv_comp(ctx[0], 1, 0, 1, rb[0], 64, c, (void *)1));
    MUST(weft_sr_irecv_comp(ctx[0], WEFT_ANY_SOURCE, 0, 2, rb[1], 64, c, (void *)2));
    struct weft_track *t = track(0);
    t->mode = FAKE_BUSY;
    MUST(weft_sr_isend_comp(ctx[0], 1, 0, 3, b, 8, c, (void *)3));
    MUST(weft_sr_isend_comp(ctx[0], 1, 0, 4, b, 8, c, (void *)4));
    MUST(weft_sr_isend_comp(ctx[0], 1, 0, 5, b, 5000, c, (void *)5));
    CHECK(t->inflight);
    int rc;
    pop(cq, &rc);
    CHECK(rc == WEFT_EAGAIN);
    /* As tcp after a hang-up: the next poll fails what was in flight, then
     * reports the loss. */
    t->doomed = true;
    weft_progress(ctx[0]);
    bool seen[6] = {false};
    for (int i = 0; i < 4; i++) {
        weft_comp_entry_t e = pop_now(cq);
        uintptr_t k = (uintptr_t)e.user_context;
        CHECK(k == 1 || (k >= 3 && k <= 5));
        if (k < 6) {
            CHECK(!seen[k] && e.error == WEFT_EPEERDEAD);
            seen[k] = true;
        }
    }
    pop(cq, &rc);
    CHECK(rc == WEFT_EAGAIN);
    /* After the loss: a receive naming the peer fails at once, through its
     * object; a send to it fails in the call, signaling nothing. */
    MUST(weft_sr_irecv_comp(ctx[0], 1, 0, 6, rb[0], 64, c, (void *)6));
    weft_comp_entry_t e = pop_now(cq);
    CHECK(entry_is(&e, (void *)6, WEFT_EPEERDEAD, 0, 0, 0));
    CHECK(weft_sr_isend_comp(ctx[0], 1, 0, 7, b, 8, c, (void *)7) == WEFT_EPEERDEAD);
    pop(cq, &rc);
    CHECK(rc == WEFT_EAGAIN);
    t->mode = FAKE_IDLE;
    close_pair();
    e = pop_now(cq);
    CHECK(entry_is(&e, (void *)2, WEFT_ECANCELED, 0, 0, 0));
    MUST(weft_cq_free(cq));
    free(b);
}

int main(void)
{
    test_watchdog(100);
    test_paths(0);
    test_paths(WEFT_DRV_CAP_SEND_COPY);
    test_handlers();
    test_cq_full();
    test_peer_lost();
    return comp_summary("test_comp_engine");
}
