/* Eager flow control under a flood: rank 0 starts N small sends (64 B to 1 KiB)
 * to rank 1 at once, while rank 1 sleeps ~0.5 s before it receives them, in
 * order, with a window of posted receives (half of the pause it polls, so
 * the flood arrives unexpected). Every message must arrive, in send
 * order, intact. With a small WEFT_EAGER_CREDITS the sender runs out of credit
 * while the receiver sleeps, so rank 0's credit_stalls must be > 0 (the stalled
 * sends fall back to rendezvous); rank 1 reports its peak unexpected depth.
 * Arguments: [messages [expect_stalls]]; expect_stalls 1 (default) checks the
 * counter. */
#include <sched.h>
#include <time.h>

#include "../common/test_util.h"

#define WINDOW 256

static size_t msg_len(long i)
{
    return 64 + (size_t)((i * 7919) % 961); /* 64 .. 1024 */
}

int main(int argc, char **argv)
{
    test_watchdog(290); /* a loaded machine under sanitizers; ctest bounds each variant */
    long n = argc > 1 ? atol(argv[1]) : 20000;
    int expect_stalls = argc > 2 ? atoi(argv[2]) : 1;
    weft_ctx_t *ctx = test_init("mp_flood", 2);
    size_t *off = malloc(sizeof(size_t) * (size_t)(n + 1));
    off[0] = 0;
    for (long i = 0; i < n; i++)
        off[i + 1] = off[i] + msg_len(i);
    uint8_t *data = malloc(off[n] + 1);
    if (!off || !data)
        return 1;
    double t0 = test_now_s();

    if (test_rank == 0) {
        /* Each message starts with its number, the rest is its pattern. */
        weft_request_t **reqs = malloc(sizeof *reqs * (size_t)n);
        for (long i = 0; i < n; i++) {
            test_fill(data + off[i], msg_len(i), (uint64_t)i);
            memcpy(data + off[i], &i, sizeof i);
        }
        double tp = test_now_s();
        for (long i = 0; i < n; i++)
            MUST(weft_sr_isend(ctx, 1, 0, 3, data + off[i], msg_len(i), &reqs[i]));
        double posted = test_now_s() - tp;
        int rc = weft_sr_waitall(ctx, (int)n, reqs, NULL);
        CHECK(rc == WEFT_OK);
        weft_counters_t c;
        MUST(weft_counters_get(ctx, &c));
        printf("mp_flood: rank 0 posted %ld sends in %.3f s, all done after %.3f s; eager %llu, "
               "rendezvous %llu, credit stalls %llu\n",
               n, posted, test_now_s() - t0, (unsigned long long)c.eager_sent,
               (unsigned long long)c.rdv_sent, (unsigned long long)c.credit_stalls);
        if (expect_stalls)
            CHECK(c.credit_stalls > 0);
        CHECK(c.eager_sent + c.rdv_sent == (uint64_t)n);
        free(reqs);
    } else if (test_rank == 1) {
        /* Half the pause asleep, half polling with no receive posted: the
         * flood piles up as unexpected messages, bounded by the credits for
         * eager data (rendezvous descriptors keep the rest at the sender). */
        usleep(250000);
        /* Poll until the flood has started arriving (a slow sender, e.g. under
         * a sanitizer, may not have begun yet; 20 s bound), then 0.25 s more. */
        weft_counters_t c0;
        double tp = test_now_s(), first = 0;
        while (test_now_s() - tp < 20 && (!first || test_now_s() - first < 0.25)) {
            if (weft_progress(ctx) <= 0)
                usleep(100);
            MUST(weft_counters_get(ctx, &c0));
            if (!first && c0.unexpected > 0)
                first = test_now_s();
        }
        MUST(weft_counters_get(ctx, &c0));
        CHECK(c0.unexpected > 0);
        memset(data, 0xEE, off[n] + 1);
        weft_request_t *win[WINDOW] = {0};
        long posted = 0, done = 0;
        while (done < n) {
            while (posted < n && posted - done < WINDOW) {
                /* Each receive has exactly its own message's length: one
                 * out of order shows as a wrong number or a truncation. */
                MUST(weft_sr_irecv(ctx, 0, 0, 3, data + off[posted], msg_len(posted),
                                   &win[posted % WINDOW]));
                posted++;
            }
            weft_status_t st;
            MUST(weft_sr_wait(ctx, win[done % WINDOW], &st));
            win[done % WINDOW] = NULL;
            long got;
            memcpy(&got, data + off[done], sizeof got);
            if (got != done || st.length != msg_len(done)) {
                fprintf(stderr, "[rank 1] receive %ld got message %ld (%zu B)\n", done, got,
                        st.length);
                CHECK(got == done);
                exit(1); /* every later check would fail too */
            }
            /* Restore the pattern's first bytes and verify all of it. */
            uint8_t head[sizeof(long)];
            test_fill(head, sizeof head, (uint64_t)done);
            memcpy(data + off[done], head, sizeof head);
            long bad = test_verify(data + off[done], msg_len(done), (uint64_t)done);
            if (bad >= 0)
                fprintf(stderr, "[rank 1] message %ld: wrong byte at %ld\n", done, bad);
            CHECK(bad < 0 && st.source == 0 && st.tag == 3);
            done++;
        }
        CHECK(data[off[n]] == 0xEE);
        weft_counters_t c;
        MUST(weft_counters_get(ctx, &c));
        printf("mp_flood: rank 1 received %ld messages in order after %.3f s; unexpected %llu, "
               "unexpected peak %llu\n",
               n, test_now_s() - t0, (unsigned long long)c.unexpected,
               (unsigned long long)c.unexpected_max);
    }
    fflush(stdout);
    MUST(weft_finalize(ctx));
    free(off);
    free(data);
    return test_summary("mp_flood");
}
