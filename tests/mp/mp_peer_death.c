/* A peer dies: rank 1 exchanges one message with rank 0, then calls _exit(9)
 * while rank 0 waits on a receive from it.
 *  - Under weftrun's default policy the job ends within seconds and weftrun
 *    names rank 1 (the test checks weftrun's line).
 *  - Under weftrun --keep-going rank 0 survives: its wait returns
 *    WEFT_EPEERDEAD (it prints how long that took, about 0.02 s here; a wait
 *    that never returns is caught by the watchdog), and a send to the dead
 *    rank fails
 *    with WEFT_EPEERDEAD (from isend or from its wait). Rank 0 then prints
 *    "rank 0: peer death detected" and exits 0 (weftrun still exits non-zero,
 *    because rank 1 failed: the test decides on that line).
 * Eager messages rank 1 sent before it died are still received; its unfinished
 * rendezvous fails; probes of it return WEFT_EPEERDEAD.
 * Other ranks (if any) just leave. With the argument "kill", rank 1 dies by
 * SIGKILL instead. */
#include <time.h>

#include "../common/test_util.h"

int main(int argc, char **argv)
{
    /* "kill": rank 1 dies by SIGKILL instead of _exit(9). */
    bool kill_self = argc > 1 && !strcmp(argv[1], "kill");
    test_watchdog(100);
    weft_ctx_t *ctx = test_init("mp_peer_death", 2);
    uint8_t ping[100], pong[100];
    weft_request_t *sreq, *rreq;
    weft_status_t st;
    if (test_rank == 1) {
        MUST(weft_sr_irecv(ctx, 0, 0, 1, ping, sizeof ping, &rreq));
        MUST(weft_sr_wait(ctx, rreq, NULL));
        test_fill(pong, sizeof pong, 2);
        MUST(weft_sr_isend(ctx, 0, 0, 2, pong, sizeof pong, &sreq));
        MUST(weft_sr_wait(ctx, sreq, NULL));
        /* Last words: eager messages that complete here before the death, and
         * a rendezvous that never can. */
        static uint8_t words[3][64], big[100000];
        for (int i = 0; i < 3; i++) {
            test_fill(words[i], sizeof words[i], 10 + (uint64_t)i);
            MUST(weft_sr_isend(ctx, 0, 0, 10 + (uint64_t)i, words[i], sizeof words[i], &sreq));
            MUST(weft_sr_wait(ctx, sreq, NULL));
        }
        MUST(weft_sr_isend(ctx, 0, 0, 13, big, sizeof big, &sreq));
        fflush(stdout);
        if (kill_self)
            raise(SIGKILL); /* no exit path at all: the kernel closes what is open */
        _exit(9);
    }
    if (test_rank != 0) {
        weft_finalize(ctx); /* fails with rank 1 gone: nothing to check here */
        return 0;
    }
    test_fill(ping, sizeof ping, 1);
    MUST(weft_sr_irecv(ctx, 1, 0, 2, pong, sizeof pong, &rreq));
    MUST(weft_sr_isend(ctx, 1, 0, 1, ping, sizeof ping, &sreq));
    MUST(weft_sr_wait(ctx, sreq, NULL));
    MUST(weft_sr_wait(ctx, rreq, &st));
    CHECK(test_verify(pong, sizeof pong, 2) < 0);

    /* Rank 1 exits now; this receive can only fail. It is large enough to be
     * published for a cooperative transfer on shm (coop.c), which must fail
     * too. */
    static uint8_t big3[1 << 20];
    double t0 = test_now_s();
    MUST(weft_sr_irecv(ctx, 1, 0, 3, big3, sizeof big3, &rreq));
    int rc = weft_sr_wait(ctx, rreq, &st);
    double took = test_now_s() - t0;
    printf("rank 0: wait on the dead peer returned %s after %.3f s\n", weft_status_name(rc), took);
    CHECK(rc == WEFT_EPEERDEAD && st.error == WEFT_EPEERDEAD);

    /* Messages that arrived before the death are still there to receive. */
    for (int i = 0; i < 3; i++) {
        uint8_t w[64];
        MUST(weft_sr_irecv(ctx, 1, 0, 10 + (uint64_t)i, w, sizeof w, &rreq));
        rc = weft_sr_wait(ctx, rreq, &st);
        if (rc != WEFT_OK)
            fprintf(stderr, "[rank 0] message %d sent before the death: %s\n", 10 + i,
                    weft_status_name(rc));
        CHECK(rc == WEFT_OK && st.length == sizeof w &&
              test_verify(w, sizeof w, 10 + (uint64_t)i) < 0);
    }
    /* A rendezvous whose data died with its sender fails. */
    static uint8_t bigr[100000];
    MUST(weft_sr_irecv(ctx, 1, 0, 13, bigr, sizeof bigr, &rreq));
    rc = weft_sr_wait(ctx, rreq, &st);
    if (rc != WEFT_EPEERDEAD)
        fprintf(stderr, "[rank 0] rendezvous from the dead rank: %s\n", weft_status_name(rc));
    CHECK(rc == WEFT_EPEERDEAD);
    /* Probes of the dead rank report it instead of waiting for ever. */
    int flag = 1;
    CHECK(weft_sr_iprobe(ctx, 1, 0, 99, &flag, &st) == WEFT_EPEERDEAD);
    CHECK(weft_sr_probe(ctx, 1, 0, 99, &st) == WEFT_EPEERDEAD);

    /* A send to the dead peer fails too, at once or from its wait. */
    rc = weft_sr_isend(ctx, 1, 0, 4, ping, sizeof ping, &sreq);
    if (rc == WEFT_OK)
        rc = weft_sr_wait(ctx, sreq, NULL);
    CHECK(rc == WEFT_EPEERDEAD);
    /* So does a new receive from it, and a rendezvous-size send. */
    rc = weft_sr_irecv(ctx, 1, 0, 5, pong, sizeof pong, &rreq);
    if (rc == WEFT_OK)
        rc = weft_sr_wait(ctx, rreq, NULL);
    CHECK(rc == WEFT_EPEERDEAD);
    static uint8_t big[200000];
    rc = weft_sr_isend(ctx, 1, 0, 6, big, sizeof big, &sreq);
    if (rc == WEFT_OK)
        rc = weft_sr_wait(ctx, sreq, NULL);
    CHECK(rc == WEFT_EPEERDEAD);
    /* Talking to itself still works. */
    MUST(weft_sr_isend(ctx, 0, 0, 7, ping, sizeof ping, &sreq));
    MUST(weft_sr_irecv(ctx, 0, 0, 7, pong, sizeof pong, &rreq));
    MUST(weft_sr_wait(ctx, sreq, NULL));
    MUST(weft_sr_wait(ctx, rreq, &st));
    CHECK(test_verify(pong, sizeof pong, 1) < 0);

    if (test_failed == 0)
        printf("rank 0: peer death detected\n");
    fflush(stdout);
    /* Finalize cannot fence with a dead rank; it must still return. */
    rc = weft_finalize(ctx);
    printf("rank 0: finalize returned %s\n", weft_status_name(rc));
    return test_summary("mp_peer_death");
}
