/* Completion objects between two ranks (weft_sr_isend_comp,
 * weft_sr_irecv_comp): each rank posts a window of receives and sends to
 * its peer, eager and rendezvous sizes, and checks every entry it gets:
 * user_context, length, source, tag, error, and the bytes.
 *
 *   1. receives posted first into a queue, sends counted by a counter;
 *   2. sends first, counted by a synchronizer; the receives, posted once the
 *      peer's messages are here (unexpected), half of them into buffers too
 *      short (WEFT_ETRUNC with the bytes that fitted), into a queue;
 *   3. handlers for both sides, run by the thread that progresses;
 *   4. a flag per receive.
 *
 * Arguments: "mt" runs the rounds in 4 threads per rank at
 * WEFT_THREAD_MULTIPLE (each on its own communicator, one queue and one
 * counter shared by all); "mt null" also waits with no context, which needs
 * a progress thread (WEFT_PROGRESS_THREAD=1). Extra ranks only take part in
 * init and finalize. */
#include <pthread.h>
#include <stdatomic.h>

#include "../common/test_util.h"

#define WINDOW  48
#define THREADS 4
#define MAXLEN  (40000 + WINDOW)

static weft_ctx_t *ctx;
static int peer;
static bool threaded, null_waits;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

/* Shared by the threads in "mt": every thread's sends count here, and its
 * first round's receives land in this queue. */
static weft_counter_t all_sent;
static weft_cq_t *shared_cq;

static void count(bool ok)
{
    pthread_mutex_lock(&count_lock);
    CHECK(ok);
    pthread_mutex_unlock(&count_lock);
}

/* Eager and rendezvous sizes, some empty. */
static size_t len_of(int i)
{
    return i % 6 == 0 ? (size_t)(40000 + i) : (size_t)((i * 997) % 3000);
}

static uint64_t key_of(int from, uint32_t comm, int i)
{
    return (uint64_t)from << 48 | (uint64_t)comm << 16 | (uint64_t)i;
}

typedef struct round_state round_state_t;

/* What a receive's user_context points at: whose it is, and which. */
typedef struct slot {
    round_state_t *s;
    int i;
} slot_t;

/* One thread's buffers and the entries it saw (cache-line aligned: it holds
 * flags). */
struct round_state {
    weft_flag_t flags[WINDOW];
    uint32_t comm;
    uint8_t *sbuf[WINDOW], *rbuf[WINDOW];
    slot_t slots[WINDOW];
    atomic_int seen[WINDOW];
    /* Handlers (phase 3). */
    atomic_int sends_done, recvs_done;
    weft_comp_entry_t recv_entry[WINDOW];
    atomic_int recv_calls[WINDOW];
};

static pthread_barrier_t phase_barrier;

static void *uc_of(round_state_t *s, int i)
{
    return &s->slots[i];
}

static void clear_seen(round_state_t *s)
{
    for (int i = 0; i < WINDOW; i++)
        atomic_store(&s->seen[i], 0);
}

static weft_ctx_t *waiter_ctx(void)
{
    return null_waits ? NULL : ctx;
}

/* The entry of a receive (of any thread: its user_context says whose):
 * message i into a buffer of its length, or (truncating) of half of it for
 * odd i. */
static void check_recv_entry(const weft_comp_entry_t *e, bool truncating)
{
    const slot_t *slot = e->user_context;
    bool known = slot && slot->i >= 0 && slot->i < WINDOW && &slot->s->slots[slot->i] == slot;
    count(known);
    if (!known)
        return;
    round_state_t *s = slot->s;
    int i = slot->i;
    size_t len = len_of((int)i);
    bool short_buf = truncating && i % 2 == 1 && len > 0;
    size_t cap = short_buf ? len / 2 : len;
    int want = short_buf ? WEFT_ETRUNC : WEFT_OK;
    bool ok = e->error == want && e->length == cap && e->source == peer && e->tag == (uint64_t)i;
    if (!ok)
        fprintf(stderr,
                "[rank %d] comm %u message %d: error %s (want %s), length %zu (want %zu), "
                "source %d, tag %llu\n",
                test_rank, s->comm, i, weft_status_name(e->error), weft_status_name(want),
                e->length, cap, e->source, (unsigned long long)e->tag);
    count(ok);
    count(atomic_fetch_add(&s->seen[i], 1) == 0);
    /* The bytes delivered are the message's first ones. */
    uint8_t *ref = malloc(len ? len : 1);
    test_fill(ref, len, key_of(peer, s->comm, i));
    count(memcmp(s->rbuf[i], ref, cap) == 0);
    free(ref);
}

/* 1. Receives first, into a queue; sends counted. With threads, queue and
 * counter are every thread's: each waits for all the sends, pops its share
 * of entries (any thread's), and the threads meet before the buffers are
 * used again. */
static void phase_posted(round_state_t *s, weft_cq_t *cq, weft_counter_t *sent, uint64_t total)
{
    clear_seen(s);
    for (int i = 0; i < WINDOW; i++)
        count(weft_sr_irecv_comp(ctx, peer, s->comm, (uint64_t)i, s->rbuf[i], len_of(i),
                                 weft_cq_comp(cq), uc_of(s, i)) == WEFT_OK);
    for (int i = 0; i < WINDOW; i++)
        count(weft_sr_isend_comp(ctx, peer, s->comm, (uint64_t)i, s->sbuf[i], len_of(i),
                                 weft_counter_comp(sent), NULL) == WEFT_OK);
    count(weft_counter_wait(sent, total, waiter_ctx()) == WEFT_OK);
    count(weft_counter_errors(sent) == 0);
    for (int i = 0; i < WINDOW; i++) {
        weft_comp_entry_t e;
        count(weft_cq_wait_pop(cq, waiter_ctx(), &e) == WEFT_OK);
        check_recv_entry(&e, false);
    }
    if (threaded)
        pthread_barrier_wait(&phase_barrier);
}

/* 2. Sends first (a synchronizer); receives once the messages are here,
 * half of them too short. */
static void phase_unexpected(round_state_t *s, weft_cq_t *cq)
{
    weft_sync_t window;
    MUST(weft_sync_init(&window, WINDOW));
    for (int i = 0; i < WINDOW; i++)
        count(weft_sr_isend_comp(ctx, peer, s->comm + 1, (uint64_t)i, s->sbuf[i], len_of(i),
                                 weft_sync_comp(&window), NULL) == WEFT_OK);
    /* The peer's messages (or their announcements) are here once its note
     * is: one order per peer. */
    test_note(ctx, peer, true, s->comm + 2, 0);
    test_note(ctx, peer, false, s->comm + 2, 0);
    clear_seen(s);
    for (int i = 0; i < WINDOW; i++) {
        size_t len = len_of(i), cap = i % 2 == 1 && len > 0 ? len / 2 : len;
        count(weft_sr_irecv_comp(ctx, peer, s->comm + 1, (uint64_t)i, s->rbuf[i], cap,
                                 weft_cq_comp(cq), uc_of(s, i)) == WEFT_OK);
    }
    for (int i = 0; i < WINDOW; i++) {
        weft_comp_entry_t e;
        count(weft_cq_wait_pop(cq, waiter_ctx(), &e) == WEFT_OK);
        check_recv_entry(&e, true);
    }
    count(weft_sync_wait(&window, waiter_ctx()) == WEFT_OK);
}

static void on_send(const weft_comp_entry_t *e, void *arg)
{
    round_state_t *s = arg;
    count(e->error == WEFT_OK && e->source == weft_rank(ctx));
    atomic_fetch_add(&s->sends_done, 1);
}

static void on_recv(const weft_comp_entry_t *e, void *arg)
{
    round_state_t *s = arg;
    const slot_t *slot = e->user_context;
    if (slot && slot->s == s && slot->i >= 0 && slot->i < WINDOW) {
        s->recv_entry[slot->i] = *e;
        atomic_fetch_add(&s->recv_calls[slot->i], 1);
    }
    atomic_fetch_add(&s->recvs_done, 1);
}

/* 3. Handlers on both sides; the thread that waits progresses. */
static void phase_handlers(round_state_t *s)
{
    weft_handler_t hs, hr;
    MUST(weft_handler_init(&hs, on_send, s));
    MUST(weft_handler_init(&hr, on_recv, s));
    atomic_store(&s->sends_done, 0);
    atomic_store(&s->recvs_done, 0);
    for (int i = 0; i < WINDOW; i++)
        atomic_store(&s->recv_calls[i], 0);
    uint32_t comm = s->comm + 3;
    for (int i = 0; i < WINDOW; i++) {
        count(weft_sr_irecv_comp(ctx, peer, comm, (uint64_t)i, s->rbuf[i], len_of(i),
                                 weft_handler_comp(&hr), uc_of(s, i)) == WEFT_OK);
        count(weft_sr_isend_comp(ctx, peer, comm, (uint64_t)i, s->sbuf[i], len_of(i),
                                 weft_handler_comp(&hs), NULL) == WEFT_OK);
    }
    weft_idle_t idle = {0};
    while (atomic_load(&s->sends_done) < WINDOW || atomic_load(&s->recvs_done) < WINDOW) {
        if (weft_progress(ctx) > 0)
            idle = (weft_idle_t){0};
        else
            weft_idle(ctx, &idle);
    }
    count(atomic_load(&s->sends_done) == WINDOW && atomic_load(&s->recvs_done) == WINDOW);
    clear_seen(s);
    for (int i = 0; i < WINDOW; i++) {
        count(atomic_load(&s->recv_calls[i]) == 1);
        check_recv_entry(&s->recv_entry[i], false);
    }
}

/* 4. A flag per receive (the sends counted, on a counter of this thread). */
static void phase_flags(round_state_t *s, weft_counter_t *sent)
{
    uint64_t base = weft_counter_get(sent);
    uint32_t comm = s->comm + 4;
    for (int i = 0; i < WINDOW; i++) {
        MUST(weft_flag_init(&s->flags[i]));
        count(weft_sr_irecv_comp(ctx, peer, comm, (uint64_t)i, s->rbuf[i], len_of(i),
                                 weft_flag_comp(&s->flags[i]), uc_of(s, i)) == WEFT_OK);
    }
    for (int i = 0; i < WINDOW; i++)
        count(weft_sr_isend_comp(ctx, peer, comm, (uint64_t)i, s->sbuf[i], len_of(i),
                                 weft_counter_comp(sent), NULL) == WEFT_OK);
    clear_seen(s);
    for (int i = WINDOW - 1; i >= 0; i--) {
        weft_comp_entry_t e;
        count(weft_flag_wait(&s->flags[i], waiter_ctx(), &e) == WEFT_OK);
        check_recv_entry(&e, false);
    }
    count(weft_counter_wait(sent, base + WINDOW, waiter_ctx()) == WEFT_OK);
}

static void *run(void *arg)
{
    int id = (int)(intptr_t)arg;
    size_t size = (sizeof(round_state_t) + 63) / 64 * 64;
    round_state_t *s = aligned_alloc(64, size);
    if (!s)
        exit(1);
    memset(s, 0, size);
    s->comm = 100 + 10 * (uint32_t)id;
    for (int i = 0; i < WINDOW; i++) {
        s->slots[i] = (slot_t){s, i};
        size_t len = len_of(i);
        s->sbuf[i] = malloc(len ? len : 1);
        s->rbuf[i] = malloc(MAXLEN);
        /* The same bytes whichever communicator the message goes on. */
        test_fill(s->sbuf[i], len, key_of(weft_rank(ctx), s->comm, i));
    }
    weft_cq_t *cq;
    weft_counter_t own;
    MUST(weft_cq_create(WINDOW / 4, &cq)); /* small: the engine overflows it */
    MUST(weft_counter_init(&own, 0));
    if (threaded)
        phase_posted(s, shared_cq, &all_sent, (uint64_t)THREADS * WINDOW);
    else
        phase_posted(s, cq, &own, WINDOW);
    phase_unexpected(s, cq);
    phase_handlers(s);
    phase_flags(s, &own);
    weft_comp_entry_t e;
    count(weft_cq_pop(cq, &e) == WEFT_EAGAIN);
    MUST(weft_cq_free(cq));
    for (int i = 0; i < WINDOW; i++) {
        free(s->sbuf[i]);
        free(s->rbuf[i]);
    }
    free(s);
    return NULL;
}

int main(int argc, char **argv)
{
    test_watchdog(110);
    threaded = argc > 1 && !strcmp(argv[1], "mt");
    null_waits = threaded && argc > 2 && !strcmp(argv[2], "null");
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level =
                                     threaded ? WEFT_THREAD_MULTIPLE : WEFT_THREAD_SINGLE};
    MUST(weft_init(&params, &ctx));
    test_rank = weft_rank(ctx);
    if (weft_size(ctx) < 2) {
        printf("mp_comp: needs 2 ranks; skipped\n");
        weft_finalize(ctx);
        return 77;
    }
    if (null_waits && !getenv("WEFT_PROGRESS_THREAD")) {
        printf("mp_comp: waits without a context need WEFT_PROGRESS_THREAD=1; skipped\n");
        weft_finalize(ctx);
        return 77;
    }
    if (test_rank < 2) {
        peer = 1 - test_rank;
        MUST(weft_counter_init(&all_sent, 0));
        MUST(weft_cq_create(WINDOW, &shared_cq));
        if (threaded) {
            pthread_barrier_init(&phase_barrier, NULL, THREADS);
            pthread_t t[THREADS];
            for (int i = 0; i < THREADS; i++)
                count(pthread_create(&t[i], NULL, run, (void *)(intptr_t)i) == 0);
            for (int i = 0; i < THREADS; i++)
                pthread_join(t[i], NULL);
            CHECK(weft_counter_get(&all_sent) == (uint64_t)THREADS * WINDOW);
            /* How often the threads sent past the engine lock (the born
             * complete path without the lock): for the log, it depends on
             * timing. */
            weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_ALL};
            if (weft_counters_gate(ctx, peer, &gc) == WEFT_OK)
                printf("[rank %d] sends past the engine lock: %llu\n", test_rank,
                       (unsigned long long)gc.sent_unlocked);
            pthread_barrier_destroy(&phase_barrier);
        } else {
            run(0);
        }
        MUST(weft_cq_free(shared_cq));
    }
    MUST(weft_finalize(ctx));
    return test_summary("mp_comp");
}
