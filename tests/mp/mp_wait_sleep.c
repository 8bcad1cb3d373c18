/* Under WEFT_WAIT=block or fixed_spin without a progress thread, a waiting
 * thread that polled in vain sleeps on the drivers' doorbells (progress.c)
 * and the arrival it waits for wakes it. Run on 2 ranks:
 *
 *   mp_wait_sleep [single|multiple|idle]   (default single)
 *
 * Rank 1 waits for messages that rank 0 sends only after 300 ms (it watches
 * its clock, outside weft): a small one (eager), then a large one
 * (rendezvous: the handshake and the data too must reach the sleeper). Each
 * wait must have slept on the doorbells (wait_sleeps grew) and been woken
 * by one (wait_woken grew): a wait that only polled, or slept until its
 * 10 ms timeout every time, fails. The arrival may find the sleeper awake
 * between two sleeps (a timeout ended one and its pass runs: rare, but a
 * slow build under load makes the pass long), so a round that saw no wake
 * is run again, up to ATTEMPTS times; without a working doorbell none ever
 * does. With "multiple", 4 threads of rank 1
 * wait at once, each for its own message: one sleeps on the doorbells, the
 * others on their requests, and all must get theirs. With "idle", one
 * thread waits in its own loop of weft_sr_test and weft_idle instead.
 * Last, the roles turn: rank 0 waits for a large send whose receive rank 1
 * posts only after 300 ms. Until then the rendezvous has nothing to move
 * (its sender only watches for a receive to claim, coop.c), so that wait
 * too must sleep, and rank 1's answer through the ring wake it. */
#include <pthread.h>

#include "../common/test_util.h"

#define LARGE    (4u << 20)
#define NTHREADS 4
#define DELAY_S  0.3
#define ATTEMPTS 3

static weft_ctx_t *ctx;
static bool own_loop; /* "idle": wait by weft_sr_test and weft_idle */

static void sync_ranks(int peer, uint64_t tag)
{
    char a = 1, b = 0;
    weft_request_t *r[2];
    MUST(weft_sr_irecv(ctx, peer, 1, tag, &b, 1, &r[0]));
    MUST(weft_sr_isend(ctx, peer, 1, tag, &a, 1, &r[1]));
    MUST(weft_sr_waitall(ctx, 2, r, NULL));
}

static void counters(weft_progress_counters_t *pc)
{
    *pc = (weft_progress_counters_t){.field_mask = WEFT_PROGRESS_COUNTERS_ALL};
    MUST(weft_counters_progress(ctx, pc));
    CHECK(pc->field_mask == WEFT_PROGRESS_COUNTERS_ALL);
}

static void away(double s)
{
    for (double end = test_now_s() + s; test_now_s() < end;)
        usleep(1000);
}

typedef struct {
    uint8_t *buf;
    size_t len;
    uint64_t tag;
    bool ok; /* checked by the main thread (the check counters are not atomic) */
} job_t;

/* Wait for r as the mode says; its status in *st. */
static void wait_for(weft_request_t *r, weft_status_t *st)
{
    if (own_loop) {
        weft_idle_t idle = {0};
        int done = 0;
        for (;;) {
            MUST(weft_sr_test(ctx, r, &done, st));
            if (done)
                break;
            weft_idle(ctx, &idle);
        }
    } else {
        MUST(weft_sr_wait(ctx, r, st));
    }
}

static void *receive(void *arg)
{
    job_t *j = arg;
    weft_request_t *r;
    weft_status_t st;
    MUST(weft_sr_irecv(ctx, 0, 0, j->tag, j->buf, j->len, &r));
    wait_for(r, &st);
    j->ok = st.length == j->len && st.tag == j->tag && test_verify(j->buf, j->len, j->tag) < 0;
    return NULL;
}

/* Rank from tells the other whether its wait was woken, so both run the
 * same number of rounds; the outcome, at both ranks. */
static bool share(int me, int from, bool woken, uint64_t tag)
{
    char w = woken, got = 0;
    weft_request_t *r[2];
    MUST(weft_sr_irecv(ctx, 1 - me, 1, tag + 1000, &got, 1, &r[0]));
    MUST(weft_sr_isend(ctx, 1 - me, 1, tag + 1000, &w, 1, &r[1]));
    MUST(weft_sr_waitall(ctx, 2, r, NULL));
    return me == from ? woken : got;
}

/* Rank 1 waits in n threads for n messages of len bytes that rank 0 sends
 * after DELAY_S. Returns, at both ranks, whether rank 1's waits were woken
 * by a doorbell. */
static bool round_of(int me, int n, size_t len, uint64_t tag)
{
    bool woken = false;
    uint8_t *buf = malloc((size_t)n * len);
    job_t jobs[NTHREADS];
    weft_progress_counters_t before, after;
    sync_ranks(1 - me, tag);
    counters(&before);
    if (me == 0) {
        weft_request_t *r[NTHREADS];
        away(DELAY_S);
        for (int i = 0; i < n; i++) {
            test_fill(buf + (size_t)i * len, len, tag + (uint64_t)i);
            MUST(weft_sr_isend(ctx, 1, 0, tag + (uint64_t)i, buf + (size_t)i * len, len, &r[i]));
        }
        MUST(weft_sr_waitall(ctx, n, r, NULL));
    } else {
        pthread_t th[NTHREADS];
        for (int i = 0; i < n; i++) {
            jobs[i] = (job_t){buf + (size_t)i * len, len, tag + (uint64_t)i, false};
            if (n == 1)
                receive(&jobs[i]);
            else
                CHECK(pthread_create(&th[i], NULL, receive, &jobs[i]) == 0);
        }
        for (int i = 0; n > 1 && i < n; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < n; i++)
            CHECK(jobs[i].ok);
        counters(&after);
        CHECK(after.wait_sleeps > before.wait_sleeps);
        woken = after.wait_woken > before.wait_woken;
        printf("rank 1: %d x %zu bytes: %llu sleeps on the doorbells, %llu woken by one\n", n, len,
               (unsigned long long)(after.wait_sleeps - before.wait_sleeps),
               (unsigned long long)(after.wait_woken - before.wait_woken));
    }
    free(buf);
    return share(me, 1, woken, tag);
}

/* Rank 0 waits for a send of LARGE bytes whose receive rank 1 posts after
 * DELAY_S. Returns, at both ranks, whether rank 0's wait was woken by a
 * doorbell. */
static bool sender_round(int me, int n, size_t len, uint64_t tag)
{
    (void)n;
    bool woken = false;
    uint8_t *buf = malloc(len);
    weft_progress_counters_t before, after;
    weft_request_t *r;
    weft_status_t st;
    if (me == 0)
        test_fill(buf, len, tag);
    sync_ranks(1 - me, tag);
    if (me == 0) {
        counters(&before);
        MUST(weft_sr_isend(ctx, 1, 0, tag, buf, len, &r));
        /* Rank 1's delay starts from this note, sent just before the wait:
         * on a loaded machine the way here from the sync can take longer
         * than the delay, and the wait would find the receive there. */
        char go = 1;
        weft_request_t *note;
        MUST(weft_sr_isend(ctx, 1, 2, tag, &go, 1, &note));
        MUST(weft_sr_wait(ctx, note, NULL));
        wait_for(r, &st);
        counters(&after);
        CHECK(after.wait_sleeps > before.wait_sleeps);
        woken = after.wait_woken > before.wait_woken;
        printf("rank 0: a send of %zu bytes: %llu sleeps on the doorbells, %llu woken by one\n",
               len, (unsigned long long)(after.wait_sleeps - before.wait_sleeps),
               (unsigned long long)(after.wait_woken - before.wait_woken));
    } else {
        char go = 0;
        weft_request_t *note;
        MUST(weft_sr_irecv(ctx, 0, 2, tag, &go, 1, &note));
        MUST(weft_sr_wait(ctx, note, NULL));
        away(DELAY_S);
        MUST(weft_sr_irecv(ctx, 0, 0, tag, buf, len, &r));
        MUST(weft_sr_wait(ctx, r, &st));
        CHECK(st.length == len && test_verify(buf, len, tag) < 0);
    }
    free(buf);
    return share(me, 0, woken, tag);
}

/* Rounds of len bytes until one was woken by a doorbell (at most ATTEMPTS). */
static void rounds_of(bool (*round)(int, int, size_t, uint64_t), int waiter, int me, int n,
                      size_t len, uint64_t tag)
{
    bool woken = false;
    for (int a = 0; a < ATTEMPTS && !woken; a++)
        woken = round(me, n, len, tag + 100 * (uint64_t)a);
    if (me == waiter)
        CHECK(woken);
}

int main(int argc, char **argv)
{
    test_watchdog(60);
    bool multiple = argc > 1 && !strcmp(argv[1], "multiple");
    own_loop = argc > 1 && !strcmp(argv[1], "idle");
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level =
                                     multiple ? WEFT_THREAD_MULTIPLE : WEFT_THREAD_SINGLE};
    MUST(weft_init(&params, &ctx));
    int me = test_rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "mp_wait_sleep runs on 2 ranks\n");
        return 2;
    }
    int n = multiple ? NTHREADS : 1;
    rounds_of(round_of, 1, me, n, 100, 10);
    rounds_of(round_of, 1, me, n, LARGE, 2000);
    rounds_of(sender_round, 0, me, 1, LARGE, 4000);
    MUST(weft_finalize(ctx));
    return test_summary("mp_wait_sleep");
}
