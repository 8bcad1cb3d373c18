/* Probes, cancellation and synchronous sends, between ranks 0 and 1:
 *  - iprobe before a message exists finds nothing, after it arrived finds it
 *    (and does not consume it); probe blocks until it arrives; probes with
 *    wildcards report the real source, tag and length (eager and rendezvous);
 *  - cancel of a posted receive: wait returns WEFT_ECANCELED, and a later
 *    message goes to the next receive, not to the canceled one;
 *  - cancel after the receive matched: WEFT_ESTATE, and the receive completes
 *    normally with its data; cancel of a send whose receive was posted: the
 *    send completes as sent (mp_cancel_send tests send cancellation);
 *  - issend completes only once the receiver posted the receive: rank 1 holds
 *    its receive back ~300 ms while rank 0 tests the issend, which must not be
 *    done in that time (eager, zero-byte and rendezvous sizes). */
#include <sched.h>
#include <time.h>

#include "../common/test_util.h"

#define SYNC 100u

static void note(weft_ctx_t *ctx, int peer, bool send, uint64_t tag)
{
    test_note(ctx, peer, send, SYNC, tag);
}

static void send_msg(weft_ctx_t *ctx, uint32_t comm, uint64_t tag, size_t len)
{
    uint8_t *b = malloc(len + 1);
    test_fill(b, len, tag * 100 + comm);
    weft_request_t *req;
    MUST(weft_sr_isend(ctx, 1, comm, tag, b, len, &req));
    MUST(weft_sr_wait(ctx, req, NULL));
    free(b);
}

static void recv_msg(weft_ctx_t *ctx, uint32_t comm, uint64_t tag, size_t len)
{
    uint8_t *b = malloc(len + 1);
    weft_request_t *req;
    weft_status_t st;
    MUST(weft_sr_irecv(ctx, 0, comm, tag, b, len, &req));
    MUST(weft_sr_wait(ctx, req, &st));
    CHECK(st.length == len && st.tag == tag && st.comm == comm);
    CHECK(test_verify(b, len, tag * 100 + comm) < 0);
    free(b);
}

/* ---- probes ---- */

static void probes(weft_ctx_t *ctx)
{
    int flag;
    weft_status_t st;
    static const size_t lens[] = {1000, 200000};
    for (int i = 0; i < 2; i++) {
        uint32_t comm = 1 + (uint32_t)i;
        size_t len = lens[i];
        if (test_rank == 1) {
            flag = 1;
            MUST(weft_sr_iprobe(ctx, 0, comm, 5, &flag, &st));
            CHECK(flag == 0);
            MUST(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, comm, WEFT_ANY_TAG, &flag, &st));
            CHECK(flag == 0);
            note(ctx, 0, true, comm); /* rank 0 may send now */
            memset(&st, 0, sizeof st);
            MUST(weft_sr_probe(ctx, 0, comm, 5, &st));
            CHECK(st.source == 0 && st.tag == 5 && st.comm == comm && st.length == len &&
                  st.error == WEFT_OK);
            /* A probe does not consume: found again, with every wildcard. */
            MUST(weft_sr_iprobe(ctx, 0, comm, 5, &flag, &st));
            CHECK(flag == 1 && st.length == len);
            memset(&st, 0, sizeof st);
            MUST(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, comm, 5, &flag, &st));
            CHECK(flag == 1 && st.source == 0 && st.tag == 5 && st.length == len);
            memset(&st, 0, sizeof st);
            MUST(weft_sr_iprobe(ctx, 0, comm, WEFT_ANY_TAG, &flag, &st));
            CHECK(flag == 1 && st.source == 0 && st.tag == 5 && st.length == len);
            memset(&st, 0, sizeof st);
            MUST(weft_sr_probe(ctx, WEFT_ANY_SOURCE, comm, WEFT_ANY_TAG, &st));
            CHECK(st.source == 0 && st.tag == 5 && st.comm == comm && st.length == len);
            /* Not on another tag, nor on another comm. */
            MUST(weft_sr_iprobe(ctx, 0, comm, 6, &flag, &st));
            CHECK(flag == 0);
            MUST(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, comm + 50, WEFT_ANY_TAG, &flag, &st));
            CHECK(flag == 0);
            recv_msg(ctx, comm, 5, len);
            MUST(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, comm, WEFT_ANY_TAG, &flag, &st));
            CHECK(flag == 0);
        } else {
            note(ctx, 1, false, comm);
            send_msg(ctx, comm, 5, len);
        }
    }
    /* Blocking probe that really waits: rank 0 sends only after a pause. */
    if (test_rank == 1) {
        double t0 = test_now_s();
        MUST(weft_sr_probe(ctx, WEFT_ANY_SOURCE, 3, WEFT_ANY_TAG, &st));
        CHECK(test_now_s() - t0 > 0.05);
        CHECK(st.source == 0 && st.tag == 77 && st.length == 33);
        recv_msg(ctx, 3, 77, 33);
    } else {
        usleep(150000);
        send_msg(ctx, 3, 77, 33);
    }
}

/* ---- cancellation ---- */

static void cancels(weft_ctx_t *ctx)
{
    weft_status_t st;
    if (test_rank == 1) {
        /* A posted receive that nothing matched yet. */
        uint8_t b[64];
        weft_request_t *r1, *r2;
        MUST(weft_sr_irecv(ctx, 0, 5, 9, b, sizeof b, &r1));
        CHECK(weft_sr_cancel(ctx, r1) == WEFT_OK);
        memset(&st, 0, sizeof st);
        CHECK(weft_sr_wait(ctx, r1, &st) == WEFT_ECANCELED);
        CHECK(st.error == WEFT_ECANCELED);
        /* A wildcard receive too; test() reports the cancellation. */
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 5, WEFT_ANY_TAG, b, sizeof b, &r1));
        CHECK(weft_sr_cancel(ctx, r1) == WEFT_OK);
        int flag = 0;
        CHECK(weft_sr_test(ctx, r1, &flag, &st) == WEFT_ECANCELED && flag == 1);
        /* The next message on that key goes to the next receive. */
        MUST(weft_sr_irecv(ctx, 0, 5, 9, b, sizeof b, &r1));
        MUST(weft_sr_irecv(ctx, 0, 5, 9, b + 32, 32, &r2));
        CHECK(weft_sr_cancel(ctx, r1) == WEFT_OK);
        note(ctx, 0, true, 1);
        CHECK(weft_sr_wait(ctx, r1, NULL) == WEFT_ECANCELED);
        CHECK(weft_sr_wait(ctx, r2, &st) == WEFT_OK && st.length == 20);
        CHECK(test_verify(b + 32, 20, 9 * 100 + 5) < 0);

        /* Receives that matched already: eager, rendezvous. The note comes
         * after the message on the same channel, so once rank 1 has the note,
         * the message has been matched. */
        static const size_t lens[] = {500, 300000};
        for (int i = 0; i < 2; i++) {
            size_t len = lens[i];
            uint8_t *buf = malloc(len);
            MUST(weft_sr_irecv(ctx, 0, 6, (uint64_t)i, buf, len, &r1));
            note(ctx, 0, true, 10 + (uint64_t)i);
            note(ctx, 0, false, 20 + (uint64_t)i);
            int rc = weft_sr_cancel(ctx, r1);
            if (rc != WEFT_ESTATE)
                fprintf(stderr, "[rank 1] cancel after match (%zu B): %s\n", len,
                        weft_status_name(rc));
            CHECK(rc == WEFT_ESTATE);
            rc = weft_sr_wait(ctx, r1, &st);
            CHECK(rc == WEFT_OK && st.error == WEFT_OK && st.length == len);
            CHECK(test_verify(buf, len, (uint64_t)i * 100 + 6) < 0);
            free(buf);
        }
    } else {
        note(ctx, 1, false, 1);
        send_msg(ctx, 5, 9, 20);
        static const size_t lens[] = {500, 300000};
        for (int i = 0; i < 2; i++) {
            size_t len = lens[i];
            uint8_t *buf = malloc(len);
            test_fill(buf, len, (uint64_t)i * 100 + 6);
            weft_request_t *req;
            note(ctx, 1, false, 10 + (uint64_t)i);
            MUST(weft_sr_isend(ctx, 1, 6, (uint64_t)i, buf, len, &req));
            /* The receive was posted before the send: the cancel is asked
             * (or the send is already known to have matched) and fails. */
            int rc = weft_sr_cancel(ctx, req);
            CHECK(rc == WEFT_INPROGRESS || rc == WEFT_ESTATE);
            note(ctx, 1, true, 20 + (uint64_t)i);
            CHECK(weft_sr_wait(ctx, req, &st) == WEFT_OK);
            free(buf);
        }
    }
}

/* ---- synchronous sends ----
 * An issend completes only once its receive matched: rank 1 posts its
 * receive only after rank 0 has polled the issend for a while and said "go",
 * so every one of those polls must see it incomplete. (Ordered by messages,
 * not by sleeping: a loaded machine cannot make it pass or fail by timing.) */

#define SSEND_POLLS 20

static void ssends(weft_ctx_t *ctx)
{
    static const size_t lens[] = {100, 0, 100000};
    for (int i = 0; i < 3; i++) {
        size_t len = lens[i];
        uint64_t tag = 40 + (uint64_t)i;
        if (test_rank == 0) {
            uint8_t *buf = malloc(len + 1);
            test_fill(buf, len, tag * 100 + 7);
            weft_request_t *req;
            MUST(weft_sr_issend(ctx, 1, 7, tag, buf, len, &req));
            int flag = 0, polls = 0;
            for (; polls < SSEND_POLLS && !flag; polls++) {
                MUST(weft_sr_test(ctx, req, &flag, NULL));
                usleep(1000);
            }
            if (flag)
                fprintf(stderr,
                        "[rank 0] issend of %zu B completed after %d polls, before the "
                        "receive was posted\n",
                        len, polls);
            CHECK(flag == 0);
            note(ctx, 1, true, tag); /* go: rank 1 posts its receive now */
            if (!flag)
                CHECK(weft_sr_wait(ctx, req, NULL) == WEFT_OK);
            free(buf);
        } else {
            note(ctx, 0, false, tag);
            recv_msg(ctx, 7, tag, len);
        }
    }
}

int main(void)
{
    test_watchdog(60);
    weft_ctx_t *ctx = test_init("mp_probe_cancel", 2);
    if (test_rank <= 1) {
        probes(ctx);
        cancels(ctx);
        ssends(ctx);
    }
    MUST(weft_finalize(ctx));
    return test_summary("mp_probe_cancel");
}
