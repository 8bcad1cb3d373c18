/* Cancel of sends (weft_sr_cancel on a send request), rank 0 sending to rank 1:
 *  - unmatched: an eager send, a rendezvous send and a synchronous send (eager
 *    and rendezvous sizes) that rank 1 has not received are canceled: the
 *    cancel returns WEFT_INPROGRESS, the wait WEFT_ECANCELED; the next message
 *    on the same key is what rank 1's receive gets, and nothing else is left
 *    for it to probe;
 *  - matched: rank 1 received the message before the cancel: the send
 *    completes as sent (WEFT_OK) and rank 1 has the data;
 *  - a race: rank 1 keeps receiving with a wildcard receive while rank 0
 *    sends and cancels every other message at once; each message is either
 *    canceled at rank 0 or received at rank 1, never both, never neither;
 *  - to itself: a message a rank sent to itself is canceled the same way.
 * With the argument "death" (run under weftrun --keep-going), rank 1 dies
 * while rank 0 cancels sends it never received: every wait returns within
 * seconds, canceled or WEFT_EPEERDEAD, and rank 0 prints "rank 0: cancel
 * survived the death". */
#include <time.h>

#include "../common/test_util.h"

#define SYNC 100u
#define DATA 7u

static void note(weft_ctx_t *ctx, int peer, bool send, uint64_t tag)
{
    test_note(ctx, peer, send, SYNC, tag);
}

static int isend(weft_ctx_t *ctx, int dest, bool sync, uint64_t tag, const void *buf, size_t len,
                 weft_request_t **req)
{
    return sync ? weft_sr_issend(ctx, dest, DATA, tag, buf, len, req)
                : weft_sr_isend(ctx, dest, DATA, tag, buf, len, req);
}

/* Cancel a send no receive has matched, then send the next message on the
 * same key: the receiver's receive must get that one. */
static void unmatched(weft_ctx_t *ctx, size_t len, bool m, uint64_t tag)
{
    uint8_t *buf = malloc(len + 1);
    if (test_rank == 0) {
        weft_request_t *req;
        weft_status_t st;
        test_fill(buf, len, tag * 10 + 1);
        MUST(isend(ctx, 1, m, tag, buf, len, &req));
        int rc = weft_sr_cancel(ctx, req);
        if (rc != WEFT_INPROGRESS)
            fprintf(stderr, "[rank 0] cancel of an unmatched send of %zu B: %s\n", len,
                    weft_status_name(rc));
        CHECK(rc == WEFT_INPROGRESS);
        CHECK(weft_sr_cancel(ctx, req) == WEFT_INPROGRESS); /* twice: still asked */
        rc = weft_sr_wait(ctx, req, &st);
        if (rc != WEFT_ECANCELED)
            fprintf(stderr, "[rank 0] unmatched send of %zu B (sync %d) ended with %s\n", len, m,
                    weft_status_name(rc));
        CHECK(rc == WEFT_ECANCELED && st.error == WEFT_ECANCELED);
        test_fill(buf, len, tag * 10 + 2);
        MUST(isend(ctx, 1, m, tag, buf, len, &req));
        note(ctx, 1, true, tag); /* the receive may be posted now */
        CHECK(weft_sr_wait(ctx, req, NULL) == WEFT_OK);
    } else {
        note(ctx, 0, false, tag);
        weft_request_t *req;
        weft_status_t st;
        memset(buf, 0, len + 1);
        MUST(weft_sr_irecv(ctx, 0, DATA, tag, buf, len + 1, &req));
        MUST(weft_sr_wait(ctx, req, &st));
        CHECK(st.length == len && test_verify(buf, len, tag * 10 + 2) < 0);
        int flag = 1;
        MUST(weft_sr_iprobe(ctx, 0, DATA, tag, &flag, &st));
        CHECK(flag == 0); /* the canceled message is gone */
    }
    free(buf);
}

/* Cancel after the receive has matched and completed: the send is not
 * canceled and its data arrived. */
static void matched(weft_ctx_t *ctx, size_t len, bool m, uint64_t tag)
{
    uint8_t *buf = malloc(len + 1);
    if (test_rank == 0) {
        weft_request_t *req;
        test_fill(buf, len, tag);
        MUST(isend(ctx, 1, m, tag, buf, len, &req));
        note(ctx, 1, false, tag); /* rank 1 has the data */
        int rc = weft_sr_cancel(ctx, req);
        /* Asked (eager: the receiver answers "matched"), or known matched. */
        CHECK(rc == WEFT_INPROGRESS || rc == WEFT_ESTATE);
        rc = weft_sr_wait(ctx, req, NULL);
        if (rc != WEFT_OK)
            fprintf(stderr, "[rank 0] matched send of %zu B ended with %s\n", len,
                    weft_status_name(rc));
        CHECK(rc == WEFT_OK);
    } else {
        weft_request_t *req;
        weft_status_t st;
        MUST(weft_sr_irecv(ctx, 0, DATA, tag, buf, len, &req));
        MUST(weft_sr_wait(ctx, req, &st));
        CHECK(st.length == len && test_verify(buf, len, tag) < 0);
        note(ctx, 0, true, tag);
    }
    free(buf);
}

/* Rank 0 sends n messages and cancels the odd ones at once while rank 1
 * receives whatever comes with a wildcard receive; the last message says
 * which cancels succeeded. */
#define RACE_N 400
static void race(weft_ctx_t *ctx, size_t len)
{
    static uint8_t outcome[RACE_N]; /* rank 0: 1 = canceled; rank 1: 1 = received */
    uint8_t *buf = malloc((len + 8) * RACE_N);
    memset(outcome, 0, sizeof outcome);
    const uint64_t last = RACE_N;
    if (test_rank == 0) {
        weft_request_t **reqs = calloc(RACE_N, sizeof *reqs);
        note(ctx, 1, false, 1000 + len);
        for (int i = 0; i < RACE_N; i++) {
            uint8_t *b = buf + (size_t)i * (len + 8);
            test_fill(b, len, (uint64_t)i);
            MUST(weft_sr_isend(ctx, 1, DATA + 1, (uint64_t)i, b, len, &reqs[i]));
            if (i % 2) {
                int rc = weft_sr_cancel(ctx, reqs[i]);
                CHECK(rc == WEFT_INPROGRESS || rc == WEFT_ESTATE);
            }
        }
        int canceled = 0;
        for (int i = 0; i < RACE_N; i++) {
            int rc = weft_sr_wait(ctx, reqs[i], NULL);
            CHECK(rc == WEFT_OK || (rc == WEFT_ECANCELED && i % 2));
            outcome[i] = rc == WEFT_ECANCELED;
            canceled += outcome[i];
        }
        printf("rank 0: race of %d sends of %zu B: %d of %d cancels succeeded\n", RACE_N, len,
               canceled, RACE_N / 2);
        weft_request_t *req;
        MUST(weft_sr_isend(ctx, 1, DATA + 1, last, outcome, sizeof outcome, &req));
        MUST(weft_sr_wait(ctx, req, NULL));
        free(reqs);
    } else {
        uint8_t *b = malloc(len + sizeof outcome);
        note(ctx, 0, true, 1000 + len);
        for (;;) {
            weft_request_t *req;
            weft_status_t st;
            MUST(weft_sr_irecv(ctx, 0, DATA + 1, WEFT_ANY_TAG, b, len + sizeof outcome, &req));
            MUST(weft_sr_wait(ctx, req, &st));
            if (st.tag == last) {
                CHECK(st.length == sizeof outcome);
                int bad = 0;
                for (int i = 0; i < RACE_N; i++)
                    if (outcome[i] == b[i]) /* received and canceled, or neither */
                        bad++;
                if (bad)
                    fprintf(stderr,
                            "[rank 1] race: %d messages both or neither canceled and "
                            "received\n",
                            bad);
                CHECK(bad == 0);
                break;
            }
            CHECK(st.tag < last && st.length == len && test_verify(b, len, st.tag) < 0);
            if (st.tag < last)
                outcome[st.tag] = 1;
        }
        free(b);
    }
    free(buf);
}

/* A message to oneself, unexpected, taken back. */
static void to_self(weft_ctx_t *ctx, size_t len)
{
    uint8_t *buf = malloc(len + 1);
    int me = test_rank;
    weft_request_t *s, *r;
    weft_status_t st;
    test_fill(buf, len, 1);
    MUST(weft_sr_isend(ctx, me, DATA + 2, 5, buf, len, &s));
    CHECK(weft_sr_cancel(ctx, s) == WEFT_INPROGRESS);
    CHECK(weft_sr_wait(ctx, s, NULL) == WEFT_ECANCELED);
    test_fill(buf, len, 2);
    MUST(weft_sr_isend(ctx, me, DATA + 2, 5, buf, len, &s));
    uint8_t *got = malloc(len + 1);
    MUST(weft_sr_irecv(ctx, me, DATA + 2, 5, got, len, &r));
    MUST(weft_sr_wait(ctx, r, &st));
    CHECK(st.length == len && test_verify(got, len, 2) < 0);
    CHECK(weft_sr_wait(ctx, s, NULL) == WEFT_OK);
    free(got);
    free(buf);
}

/* Rank 1 dies holding unexpected messages of rank 0, which cancels them: one
 * at once (racing the death), the others once rank 1 is gone but perhaps not
 * yet seen gone, one after its death was seen. */
static int death(weft_ctx_t *ctx)
{
    static uint8_t small[100], big[300000];
    if (test_rank == 1) {
        note(ctx, 0, false, 1); /* rank 0's messages are on their way */
        _exit(9);
    }
    if (test_rank != 0) {
        weft_finalize(ctx);
        return 0;
    }
    weft_request_t *reqs[4];
    MUST(weft_sr_isend(ctx, 1, DATA, 1, small, sizeof small, &reqs[0]));
    MUST(weft_sr_isend(ctx, 1, DATA, 2, big, sizeof big, &reqs[1]));
    MUST(weft_sr_issend(ctx, 1, DATA, 3, small, sizeof small, &reqs[2]));
    MUST(weft_sr_isend(ctx, 1, DATA, 4, small, sizeof small, &reqs[3]));
    note(ctx, 1, true, 1);
    double t0 = test_now_s();
    for (int i = 0; i < 3; i++) {
        int rc = weft_sr_cancel(ctx, reqs[i]);
        /* Asked, or already failed because the death was seen. */
        CHECK(rc == WEFT_INPROGRESS || rc == WEFT_ESTATE);
        if (i == 0)
            usleep(50000);
    }
    for (int i = 0; i < 3; i++) {
        int rc = weft_sr_wait(ctx, reqs[i], NULL);
        printf("rank 0: send %d to the dying rank ended with %s\n", i, weft_status_name(rc));
        /* Nobody received them: canceled, or failed with the peer; an eager
         * send whose cancel came after the death was seen completed as sent. */
        CHECK(rc == WEFT_ECANCELED || rc == WEFT_EPEERDEAD || (rc == WEFT_OK && i == 0));
    }
    CHECK(test_now_s() - t0 < 10.0);
    /* Once the death is seen, a cancel is refused at once, and the eager send
     * that left before it completes as sent. */
    weft_request_t *req;
    uint8_t b[8];
    MUST(weft_sr_irecv(ctx, 1, DATA, 9, b, sizeof b, &req));
    CHECK(weft_sr_wait(ctx, req, NULL) == WEFT_EPEERDEAD);
    CHECK(weft_sr_cancel(ctx, reqs[3]) == WEFT_ESTATE);
    CHECK(weft_sr_wait(ctx, reqs[3], NULL) == WEFT_OK);
    CHECK(weft_sr_isend(ctx, 1, DATA, 5, small, sizeof small, &req) == WEFT_EPEERDEAD);
    if (test_failed == 0)
        printf("rank 0: cancel survived the death\n");
    fflush(stdout);
    weft_finalize(ctx);
    return test_summary("mp_cancel_send");
}

int main(int argc, char **argv)
{
    test_watchdog(60);
    weft_ctx_t *ctx = test_init("mp_cancel_send", 2);
    if (argc > 1 && !strcmp(argv[1], "death"))
        return death(ctx);
    if (test_rank <= 1) {
        static const size_t lens[] = {0, 100, 300000};
        uint64_t tag = 1;
        for (int sync = 0; sync < 2; sync++)
            for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
                unmatched(ctx, lens[i], sync, tag++);
                matched(ctx, lens[i], sync, tag++);
            }
        race(ctx, 8);
        race(ctx, 70000);
        to_self(ctx, 100);
        to_self(ctx, 300000);
    }
    MUST(weft_finalize(ctx));
    return test_summary("mp_cancel_send");
}
