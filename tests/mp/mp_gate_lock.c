/* Sending past the engine lock (WEFT_THREAD_MULTIPLE, shared memory): while
 * rank 0's main thread holds the engine lock, another of its threads sends.
 *   1. A small message to an idle gate leaves under the gate's lock alone:
 *      its request is complete at once, with the engine still held, and the
 *      gate counts it in sent_unlocked.
 *   2. Order: a rendezvous that must wait for the engine's holder, then a
 *      small message. The small one must not overtake it (it waits too), so
 *      rank 1's two receives for any tag match the rendezvous first.
 *      Another thread's small message is not held back by those two (the
 *      deferred sends are counted per thread): it leaves at once.
 *   3. Threads sending small messages while the main thread polls (so holds
 *      the engine most of the time) and takes rank 1's messages on the same
 *      gate; everything checked at both ends, byte for byte, in order.
 *   4. Receives posted while the main thread holds the engine lock (the
 *      messages come only after, on rank 0's word): a small one, named or
 *      from any source, is posted at once under the matching structure's
 *      lock alone; one for which a message already waits, and one that
 *      comes after a receive of the same thread still deferred (a large
 *      one), wait for the holder, and the deferred one still matches first.
 * The engine lock is taken through the internal header: the test needs
 * "another thread holds the engine" for certain. */
#include <pthread.h>
#include <unistd.h>

#include "../common/test_util.h"
#include "core/core_int.h"

#define BIG       (256 * 1024) /* a rendezvous on shm */
#define NT        4            /* threads of part 3 */
#define PER       500          /* messages each */
#define TAG_ONE   1
#define TAG_BIG   2
#define TAG_SMALL 3
#define TAG_MANY  100

static weft_ctx_t *ctx;
static uint8_t *big;

static int recv_from0(uint32_t comm, uint64_t tag, void *buf, size_t len, weft_status_t *st)
{
    weft_request_t *r;
    int rc = weft_sr_irecv(ctx, 0, comm, tag, buf, len, &r);
    return rc ? rc : weft_sr_wait(ctx, r, st);
}

static uint64_t sent_unlocked(void)
{
    weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_ALL};
    MUST(weft_counters_gate(ctx, 1, &gc));
    CHECK(gc.field_mask & WEFT_GATE_COUNTERS_V2);
    return gc.sent_unlocked;
}

static void *part1(void *arg)
{
    (void)arg;
    uint64_t v = 0x1122334455667788ull;
    weft_request_t *r;
    MUST(weft_sr_isend(ctx, 1, 0, TAG_ONE, &v, sizeof v, &r));
    /* The engine is held by the main thread: only the unlocked path
     * completes a send now. */
    CHECK(atomic_load(&r->done) != 0);
    MUST(weft_sr_wait(ctx, r, NULL));
    return NULL;
}

static weft_request_t *order_reqs[2];
static uint64_t small_v = 42;
static unsigned part2_slot;

static void *part2(void *arg)
{
    (void)arg;
    part2_slot = weft__defer_slot();
    MUST(weft_sr_isend(ctx, 1, 0, TAG_BIG, big, BIG, &order_reqs[0]));
    MUST(weft_sr_isend(ctx, 1, 0, TAG_SMALL, &small_v, sizeof small_v, &order_reqs[1]));
    /* Both wait for the engine's holder: the second came after a deferred one. */
    CHECK(atomic_load(&order_reqs[0]->done) == 0);
    CHECK(atomic_load(&order_reqs[1]->done) == 0);
    CHECK(atomic_load(&ctx->deferred[part2_slot].n) == 2);
    return NULL;
}

/* Part 2's other thread: one whose slot differs from part 2's (a thread
 * that shares it says so and waits, alive, so the next one gets another
 * thread pointer). */
enum { OTHER_PENDING, OTHER_COLLIDED, OTHER_DONE };
static atomic_int other_outcome, other_release;
static weft_request_t *other_req; /* waited for once the engine is free */
static uint64_t other_v = 0x99;

static void *part2_other(void *arg)
{
    (void)arg;
    if (weft__defer_slot() == part2_slot) {
        atomic_store(&other_outcome, OTHER_COLLIDED);
        while (!atomic_load(&other_release))
            usleep(100);
        return NULL;
    }
    MUST(weft_sr_isend(ctx, 1, 2, TAG_ONE, &other_v, sizeof other_v, &other_req));
    CHECK(atomic_load(&other_req->done) != 0); /* left past the engine lock */
    atomic_store(&other_outcome, OTHER_DONE);
    return NULL;
}

/* Run part2_other until a thread with a slot of its own has sent. */
static void part2_others(void)
{
    pthread_t th[WEFT_DEFER_SLOTS + 1];
    int n = 0;
    for (;;) {
        atomic_store(&other_outcome, OTHER_PENDING);
        pthread_create(&th[n++], NULL, part2_other, NULL);
        while (atomic_load(&other_outcome) == OTHER_PENDING)
            usleep(100);
        if (atomic_load(&other_outcome) == OTHER_DONE || n == (int)WEFT_ARRAY_SIZE(th))
            break;
    }
    CHECK(atomic_load(&other_outcome) == OTHER_DONE);
    atomic_store(&other_release, 1);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

static void fill4(uint64_t v[4], int id, int i)
{
    for (int k = 0; k < 4; k++)
        v[k] = (uint64_t)id << 40 | (uint64_t)i << 8 | (uint64_t)k;
}

static void *part3(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < PER; i++) {
        uint64_t v[4];
        fill4(v, id, i);
        weft_request_t *r;
        MUST(weft_sr_isend(ctx, 1, 1, TAG_MANY + (uint64_t)id, v, sizeof v, &r));
        MUST(weft_sr_wait(ctx, r, NULL));
    }
    return NULL;
}

/* Rank 1's side of part 3: messages to rank 0 while it sends, so the
 * engine's holder there handles arrivals (and returns credit) on the very
 * gate its senders use. */
static void *echo(void *arg)
{
    (void)arg;
    for (int i = 0; i < NT * PER; i++) {
        uint64_t v[4];
        fill4(v, NT, i);
        weft_request_t *r;
        MUST(weft_sr_isend(ctx, 0, 3, 0, v, sizeof v, &r));
        MUST(weft_sr_wait(ctx, r, NULL));
    }
    return NULL;
}

/* Part 4: receives posted by another thread while the engine is held. */
#define COMM_RECV 4
static weft_request_t *rq[2];
static uint64_t rv[2];
static uint8_t *rlarge;

static void *post_small(void *arg)
{
    int src = (int)(intptr_t)arg; /* 1, or WEFT_ANY_SOURCE */
    MUST(weft_sr_irecv(ctx, src, COMM_RECV, 1, &rv[0], sizeof rv[0], &rq[0]));
    return NULL;
}

static void *post_ordered(void *arg)
{
    (void)arg;
    MUST(weft_sr_irecv(ctx, 1, COMM_RECV, 3, rlarge, ctx->rdv_split, &rq[0]));
    MUST(weft_sr_irecv(ctx, 1, COMM_RECV, 3, &rv[1], sizeof rv[1], &rq[1]));
    return NULL;
}

static void go(void) /* rank 1 may send its next message */
{
    uint8_t b = 0;
    weft_request_t *r;
    MUST(weft_sr_isend(ctx, 1, 5, 0, &b, 1, &r));
    MUST(weft_sr_wait(ctx, r, NULL));
}

/* Run fn on another thread while this one holds the engine lock; returns
 * with the lock still held (the caller checks, then releases it). */
static void with_engine_held(void *(*fn)(void *), void *arg)
{
    pthread_t th;
    weft_lock_acquire(&ctx->lock);
    pthread_create(&th, NULL, fn, arg);
    pthread_join(th, NULL);
}

static void part4(void)
{
    weft_status_t st;
    /* 4a, 4b: named and any source, posted at once. */
    for (int i = 0; i < 2; i++) {
        with_engine_held(post_small, (void *)(intptr_t)(i ? WEFT_ANY_SOURCE : 1));
        CHECK(rq[0]->state == WEFT_RS_POSTED && !weft_list_empty(&ctx->posted));
        weft_lock_release(&ctx->lock);
        go();
        MUST(weft_sr_wait(ctx, rq[0], &st));
        CHECK(rv[0] == 0x11u + (uint64_t)i && st.source == 1);
    }
    /* 4c: a large receive (deferred) then a small one of the same thread:
     * both wait, and the first takes the first message. */
    rlarge = calloc(1, ctx->rdv_split);
    with_engine_held(post_ordered, NULL);
    CHECK(rq[0]->state != WEFT_RS_POSTED && rq[1]->state != WEFT_RS_POSTED);
    CHECK(weft_list_empty(&ctx->posted));
    weft_lock_release(&ctx->lock);
    go();
    MUST(weft_sr_wait(ctx, rq[0], &st));
    CHECK(st.length == sizeof(uint64_t) && !memcmp(rlarge, &(uint64_t){0x31}, 8));
    MUST(weft_sr_wait(ctx, rq[1], &st));
    CHECK(rv[1] == 0x32);
    free(rlarge);
    /* 4d: the message is already here (unexpected): taking it is the
     * holder's. */
    go();
    MUST(weft_sr_probe(ctx, 1, COMM_RECV, 1, &st));
    with_engine_held(post_small, (void *)(intptr_t)1);
    CHECK(rq[0]->state != WEFT_RS_POSTED && !atomic_load(&rq[0]->done));
    weft_lock_release(&ctx->lock);
    MUST(weft_sr_wait(ctx, rq[0], &st));
    CHECK(rv[0] == 0x44);
}

/* Rank 1's side of part 4: each message on rank 0's word. */
static void part4_peer(void)
{
    static const uint64_t v[] = {0x11, 0x12, 0x31, 0x32, 0x44};
    static const uint64_t tags[] = {1, 1, 3, 3, 1};
    uint8_t b;
    for (int i = 0; i < 5; i++) {
        if (i != 3) /* the two of 4c come on one word */
            MUST(recv_from0(5, 0, &b, 1, NULL));
        weft_request_t *r;
        MUST(weft_sr_isend(ctx, 0, COMM_RECV, tags[i], &v[i], sizeof v[i], &r));
        MUST(weft_sr_wait(ctx, r, NULL));
    }
}

static void sender(void)
{
    pthread_t th[NT];
    /* 1 */
    uint64_t first = sent_unlocked(), before = first;
    weft_lock_acquire(&ctx->lock);
    pthread_create(&th[0], NULL, part1, NULL);
    pthread_join(th[0], NULL);
    weft_lock_release(&ctx->lock);
    CHECK(sent_unlocked() == before + 1);
    /* 2 */
    before = sent_unlocked();
    weft_lock_acquire(&ctx->lock);
    pthread_create(&th[0], NULL, part2, NULL);
    pthread_join(th[0], NULL);
    part2_others();
    weft_lock_release(&ctx->lock);
    MUST(weft_sr_wait(ctx, other_req, NULL));
    CHECK(sent_unlocked() == before + 1); /* part2_others' only */
    MUST(weft_sr_waitall(ctx, 2, order_reqs, NULL));
    /* 3: the main thread polls (holding the engine most of the time) and
     * takes rank 1's messages while the threads send. */
    uint64_t(*in)[4] = calloc(NT * PER, sizeof *in);
    weft_request_t **rin = calloc(NT * PER, sizeof *rin);
    for (int i = 0; i < NT * PER; i++)
        MUST(weft_sr_irecv(ctx, 1, 3, 0, in[i], sizeof in[i], &rin[i]));
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, part3, (void *)(intptr_t)t);
    for (int done = 0; done < NT * PER;) {
        /* Hold the engine a while each time, as a holder preempted in a
         * progress pass would: the senders run meanwhile. */
        weft_lock_acquire(&ctx->lock);
        weft__progress_locked(ctx);
        usleep(20);
        weft_lock_release(&ctx->lock);
        int flag = 1;
        while (done < NT * PER && flag) {
            MUST(weft_sr_test(ctx, rin[done], &flag, NULL));
            if (flag) {
                uint64_t v[4];
                fill4(v, NT, done);
                CHECK(!memcmp(v, in[done], sizeof v));
                done++;
            }
        }
    }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    free(in);
    free(rin);
    printf("rank 0: %llu of %d messages left past the engine lock\n",
           (unsigned long long)(sent_unlocked() - first), 3 + NT * PER);
    part4();
}

static void receiver(void)
{
    uint64_t v = 0;
    weft_status_t st;
    MUST(recv_from0(0, TAG_ONE, &v, sizeof v, &st));
    CHECK(v == 0x1122334455667788ull && st.length == sizeof v);
    /* Any tag: the first receive must take the rendezvous sent first. */
    uint8_t *rbig = malloc(BIG);
    MUST(recv_from0(0, WEFT_ANY_TAG, rbig, BIG, &st));
    CHECK(st.tag == TAG_BIG && st.length == BIG);
    CHECK(test_verify(rbig, BIG, 7) < 0);
    MUST(recv_from0(0, WEFT_ANY_TAG, &v, sizeof v, &st));
    CHECK(st.tag == TAG_SMALL && v == 42);
    MUST(recv_from0(2, TAG_ONE, &v, sizeof v, &st));
    CHECK(v == 0x99);
    free(rbig);
    /* Each thread's messages in its order. */
    pthread_t th;
    pthread_create(&th, NULL, echo, NULL);
    int next[NT] = {0};
    for (int n = 0; n < NT * PER; n++) {
        uint64_t m[4];
        MUST(recv_from0(1, WEFT_ANY_TAG, m, sizeof m, &st));
        int id = (int)(st.tag - TAG_MANY);
        CHECK(id >= 0 && id < NT && st.length == sizeof m);
        if (id < 0 || id >= NT)
            continue;
        for (int k = 0; k < 4; k++)
            CHECK(m[k] == ((uint64_t)id << 40 | (uint64_t)next[id] << 8 | (uint64_t)k));
        next[id]++;
    }
    pthread_join(th, NULL);
    part4_peer();
}

int main(void)
{
    test_watchdog(60);
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&params, &ctx));
    test_rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "mp_gate_lock: needs 2 ranks\n");
        return 77;
    }
    weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_ALL};
    MUST(weft_counters_gate(ctx, test_rank ^ 1, &gc));
    if (strcmp(gc.driver, "shm") != 0) {
        fprintf(stderr, "mp_gate_lock: the gate's driver is %s, not shm\n", gc.driver);
        MUST(weft_finalize(ctx));
        return 77;
    }
    big = malloc(BIG);
    test_fill(big, BIG, 7);
    if (test_rank == 0)
        sender();
    else
        receiver();
    test_note(ctx, test_rank ^ 1, test_rank == 1, 2, 0);
    free(big);
    MUST(weft_finalize(ctx));
    return test_summary("mp_gate_lock");
}
