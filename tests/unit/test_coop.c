/* Cooperative rendezvous (src/core/coop.c) tested in-process over the fake
 * driver's shared cells (fake_driver.h): deterministic interleavings of the
 * two sides that real processes only hit by chance.
 *
 * What is checked: a receiver that finds its publication half claimed takes
 * it back, and the message moves the matched way; a sender whose writes the
 * kernel refuses gives its pieces back and the receiver moves them all, and
 * it claims no later publication; when both sides are refused both report
 * WEFT_EPERM, which outranks truncation, whichever side was refused first,
 * failing the pieces left at once, and the receiver's next receives take the copy path; a sender
 * still at work after its receiver completed on a peer loss writes nothing more. */
#include "fake_driver.h"

enum { COOP_LEN = 128 << 10 }; /* 32 pieces of 4 KiB (WEFT_RDV_PIECE=4K) */

static uint64_t pieces_moved(int r)
{
    weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_ALL};
    MUST(weft_counters_gate(ctx[r], 1 - r, &gc));
    return gc.pieces_moved;
}

enum { RECV_FIRST, CLAIMING, SEND_FIRST };

/* One message of len bytes from rank 0 into a receive of rlen bytes: posted
 * first (so it is published; CLAIMING: and then found half claimed), or
 * (SEND_FIRST) once the rendezvous waits at rank 1 (so it matches, and rank 1
 * starts the transfer). The statuses of both sides. */
static void coop_one(size_t len, size_t rlen, uint64_t key, int how, weft_status_t st[2])
{
    uint8_t *b = pattern(len, key);
    uint8_t *rb = calloc(1, rlen);
    weft_request_t *r, *s;
    if (how == SEND_FIRST) {
        MUST(weft_sr_isend(ctx[0], 1, 0, 5, b, len, &s));
        weft_progress(ctx[0]);
        weft_progress(ctx[1]); /* the rendezvous is unexpected at rank 1 */
        MUST(weft_sr_irecv(ctx[1], 0, 0, 5, rb, rlen, &r));
    } else {
        MUST(weft_sr_irecv(ctx[1], 0, 0, 5, rb, rlen, &r));
    }
    if (how == CLAIMING) {
        /* The sender stopped (or died) between the two compare-and-swaps of
         * a claim: the cell's first word, its state, reads (gen << 8) |
         * CLAIMING. 2 and 3 are CELL_PUBLISHED and CELL_CLAIMING of
         * src/core/coop.c, part of the cell's shared layout. */
        _Atomic uint64_t *state = (_Atomic uint64_t *)(void *)fake.cells[1];
        uint64_t v = atomic_load(state);
        CHECK((v & 0xff) == 2); /* published */
        atomic_store(state, (v & ~0xffull) | 3);
    }
    if (how != SEND_FIRST)
        MUST(weft_sr_isend(ctx[0], 1, 0, 5, b, len, &s));
    weft_request_t *reqs0[1] = {s}, *reqs1[1] = {r};
    CHECK(finish_all((weft_request_t **[2]){reqs0, reqs1}, (int[2]){1, 1},
                     (weft_status_t *[2]){&st[0], &st[1]}, true));
    if (!st[1].error || st[1].error == WEFT_ETRUNC)
        CHECK(test_verify(rb, WEFT_MIN(len, rlen), key) == -1);
    free(b);
    free(rb);
}

/* A receiver that finds its publication half claimed takes it back, and the
 * message moves the matched way: nobody waits for a sender that may never
 * write its second store. */
static void test_coop_claim_revoked(void)
{
    open_pair("default", WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT | WEFT_DRV_CAP_CELLS);
    weft_status_t st[2];
    coop_one(COOP_LEN, COOP_LEN, 71, CLAIMING, st);
    CHECK(st[0].error == WEFT_OK && st[1].error == WEFT_OK && st[1].length == COOP_LEN);
    weft_counters_t k0, k1;
    MUST(weft_counters_get(ctx[0], &k0));
    MUST(weft_counters_get(ctx[1], &k1));
    CHECK(k1.rdv_published == 1 && k0.rdv_claimed == 0 && k1.rdv_coop == 1);
    /* The cell is free again: the next receive is published and claimed. */
    coop_one(COOP_LEN, COOP_LEN, 72, RECV_FIRST, st);
    CHECK(st[0].error == WEFT_OK && st[1].error == WEFT_OK);
    MUST(weft_counters_get(ctx[0], &k0));
    CHECK(k0.rdv_claimed == 1);
    close_pair();
}

/* The kernel refuses the sender's writes (the receiver became non-dumpable):
 * the pieces it took go back to the receiver, which moves them all; no byte
 * is missing and neither side reports an error. Refused once, the sender
 * claims no later publication (it could not write into it). */
static void test_coop_put_refused(void)
{
    open_pair("default", WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT | WEFT_DRV_CAP_CELLS);
    fake.rput_refuse[0] = 100;
    weft_status_t st[2];
    for (int i = 0; i < 3; i++) {
        uint64_t moved = pieces_moved(1);
        coop_one(COOP_LEN, COOP_LEN, 80 + (uint64_t)i, RECV_FIRST, st);
        CHECK(st[0].error == WEFT_OK && st[1].error == WEFT_OK && st[1].length == COOP_LEN);
        CHECK(pieces_moved(1) - moved == COOP_LEN / 4096 && pieces_moved(0) == 0);
    }
    weft_counters_t k0, k1;
    MUST(weft_counters_get(ctx[0], &k0));
    MUST(weft_counters_get(ctx[1], &k1));
    CHECK(k1.rdv_published == 3 && k0.rdv_claimed == 1);
    fake.rput_refuse[0] = 0;
    close_pair();
}

/* The kernel refuses both sides: the transfer fails on both with
 * WEFT_EPERM, which outranks the receive's truncation (its bytes never came);
 * the receiver's next receives from that peer take the copy path and work. */
static void test_coop_both_refused(void)
{
    open_pair("default", WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT | WEFT_DRV_CAP_CELLS);
    fake.rput_refuse[0] = 100;
    fake.drv[1]->rget_mode = RGET_REFUSE;
    weft_status_t st[2];
    coop_one(COOP_LEN, COOP_LEN / 2, 90, RECV_FIRST, st);
    CHECK(st[1].error == WEFT_EPERM && st[0].error == WEFT_EPERM);
    /* Once both are refused, a side fails every piece left in one claim, not
     * one piece per progress call (32 pieces would take 16 rounds or more). */
    CHECK(finish_rounds <= 4);
    weft_counters_t k1;
    MUST(weft_counters_get(ctx[1], &k1));
    uint64_t rtr = k1.rdv_rtr;
    coop_one(COOP_LEN, COOP_LEN, 91, RECV_FIRST, st);
    CHECK(st[0].error == WEFT_OK && st[1].error == WEFT_OK && st[1].length == COOP_LEN);
    MUST(weft_counters_get(ctx[1], &k1));
    CHECK(k1.rdv_rtr == rtr + 1);
    fake.rput_refuse[0] = 0;
    close_pair();
    /* One piece, both refused, each way round: the side refused first gives
     * the piece back, the other, refused too, fails it. Both must report the
     * failure: the message never arrived. Published: the sender claims and
     * is refused first. Matched: the receiver starts, and is refused first. */
    setenv("WEFT_RDV_PIECE", "1M", 1);
    open_pair("default", WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT | WEFT_DRV_CAP_CELLS);
    fake.rput_refuse[0] = 100;
    fake.drv[1]->rget_mode = RGET_REFUSE;
    coop_one(COOP_LEN, COOP_LEN, 92, RECV_FIRST, st);
    CHECK(st[1].error == WEFT_EPERM && st[0].error == WEFT_EPERM);
    weft_counters_t k0;
    MUST(weft_counters_get(ctx[0], &k0));
    CHECK(k0.rdv_claimed == 1);
    close_pair();
    open_pair("default", WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT | WEFT_DRV_CAP_CELLS);
    fake.rput_refuse[0] = 100;
    fake.drv[1]->rget_mode = RGET_REFUSE;
    coop_one(COOP_LEN, COOP_LEN, 93, SEND_FIRST, st);
    CHECK(st[1].error == WEFT_EPERM && st[0].error == WEFT_EPERM);
    MUST(weft_counters_get(ctx[1], &k1));
    CHECK(k1.rdv_coop == 1);
    fake.rput_refuse[0] = 0;
    close_pair();
    setenv("WEFT_RDV_PIECE", "4K", 1);
}

/* The receiver of a cooperative transfer under way loses its peer (as after
 * a protocol error: the peer lives on): the receive completes, its buffer
 * goes back to the user, and the sender, still at work, must find nothing
 * left to claim, so it writes no byte into that buffer. */
static void test_coop_lost_receiver(void)
{
    open_pair("default", WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT | WEFT_DRV_CAP_CELLS);
    uint8_t *b = pattern(COOP_LEN, 95), *rb = calloc(1, COOP_LEN);
    weft_request_t *r, *s;
    MUST(weft_sr_isend(ctx[0], 1, 0, 5, b, COOP_LEN, &s));
    weft_progress(ctx[1]);                                  /* the rendezvous waits, unexpected */
    MUST(weft_sr_irecv(ctx[1], 0, 0, 5, rb, COOP_LEN, &r)); /* matched */
    weft_progress(ctx[1]);                                  /* COOP leaves; rank 1 moves a piece */
    CHECK(!atomic_load(&((struct weft_request *)r)->done));
    struct weft_track *t1 = track(1);
    t1->lost = true;
    fake.drv[1]->up.peer_lost(fake.drv[1]->up.owner, t1->cookie, WEFT_EPEERDEAD);
    CHECK(weft_sr_wait(ctx[1], r, NULL) == WEFT_EPEERDEAD);
    uint64_t puts = fake.drv[0]->nrput;
    for (int i = 0; i < 100; i++)
        weft_progress(ctx[0]); /* takes COOP, then finds every piece taken */
    CHECK(fake.drv[0]->nrput == puts);
    struct weft_track *t0 = track(0);
    t0->lost = true;
    fake.drv[0]->up.peer_lost(fake.drv[0]->up.owner, t0->cookie, WEFT_EPEERDEAD);
    CHECK(weft_sr_wait(ctx[0], s, NULL) == WEFT_EPEERDEAD);
    close_pair();
    free(b);
    free(rb);
}

int main(void)
{
    test_watchdog(100);
    setenv("WEFT_RDV_PIECE", "4K", 1);
    test_coop_claim_revoked();
    test_coop_put_refused();
    test_coop_both_refused();
    test_coop_lost_receiver();
    return test_summary("test_coop");
}
