/* Cooperative rendezvous on shared memory (coop.c) when the kernel refuses
 * single-copy access after init: a rank that makes itself non-dumpable
 * (prctl(PR_SET_DUMPABLE, 0), as security-minded codes do) can no longer be
 * read or written by its peer through process_vm_readv/writev.
 *
 * Both ranks first give up CAP_SYS_PTRACE (held when run as root), so the
 * kernel decides by dumpability alone.
 *
 * 1. Rank 1 turns non-dumpable, then receives 4 MiB from rank 0 (its receive
 *    is posted and published first, so rank 0 claims it and writes): rank
 *    0's first write is refused, and that piece and all the others go to
 *    rank 1, which reads them all, then sends rank 0 a packet to wake it
 *    (rank 0 watches the shared cell alone). No byte is missing and neither
 *    side reports an error.
 *    A second transfer: rank 0, refused before, tries no write at all (its
 *    pieces_refused stays at 1) and rank 1 reads every piece again.
 * 2. Rank 0 turns non-dumpable too: a transfer where nobody may copy fails
 *    on both sides with WEFT_EPERM, and the receive, posted smaller than the
 *    message, reports that rather than the truncation (its bytes never came).
 *    Rank 1 is refused once; rank 0 tries nothing.
 * 3. Rank 1's next receive from rank 0 takes the copy path, and works.
 * Under WEFT_WAIT=block, rank 0's wait in step 1, refused and left with
 * nothing to copy while rank 1 computes, must sleep on the doorbells.
 * Exits 77 (skip) where the kernel does not refuse (checked by rank 0 with a
 * one-byte read of rank 1 after step 1's prctl). */
#define _GNU_SOURCE /* process_vm_readv */
#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "../common/test_util.h"

#define SIZE (4u << 20)

static volatile uint64_t probe_word = 0x5eedf00dull;

/* Drop CAP_SYS_PTRACE from the effective set. */
static void drop_ptrace_cap(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    MUST(syscall(SYS_capget, &h, d) == 0 ? WEFT_OK : WEFT_ESYS);
    d[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
    MUST(syscall(SYS_capset, &h, d) == 0 ? WEFT_OK : WEFT_ESYS);
}

/* A word from rank `from` to the other; its value, at both ranks. */
static uint64_t word_from(weft_ctx_t *ctx, int me, int from, uint64_t word, uint64_t tag)
{
    weft_request_t *r;
    if (me == from)
        MUST(weft_sr_isend(ctx, 1 - me, 0, tag, &word, sizeof word, &r));
    else
        MUST(weft_sr_irecv(ctx, from, 0, tag, &word, sizeof word, &r));
    MUST(weft_sr_wait(ctx, r, NULL));
    return word;
}

/* Rank 0 to rank 1: go on. */
static void go(weft_ctx_t *ctx, int me, uint64_t tag)
{
    word_from(ctx, me, 0, 0, tag);
}

/* Rank 0 sends SIZE bytes of key's pattern; rank 1 receives into rlen bytes,
 * its receive posted before rank 0 sends, and published (rank 1 tells rank 0
 * so with a message of its own: one from rank 0 would come first in rank 1's
 * order, and the publication names the next message from rank 0). The
 * status of this rank's side. */
static weft_status_t transfer(weft_ctx_t *ctx, int me, uint8_t *buf, size_t rlen, uint64_t key)
{
    weft_status_t st = {0};
    weft_request_t *r;
    int rc;
    if (me == 1) {
        memset(buf, 0, SIZE);
        MUST(weft_sr_irecv(ctx, 0, 0, key, buf, rlen, &r));
        word_from(ctx, me, 1, 0, key + 1);
        /* Let rank 0 claim the published receive, and write. Under TSan on two
         * busy cores rank 0 took more than 100 ms now and then (a third of the
         * runs): rank 1 then matched the rendezvous itself and took the
         * publication back, and the steps below saw the other path. */
        usleep(400000);
        rc = weft_sr_wait(ctx, r, &st);
    } else {
        test_fill(buf, SIZE, key);
        word_from(ctx, me, 1, 0, key + 1);
        MUST(weft_sr_isend(ctx, 1, 0, key, buf, SIZE, &r));
        rc = weft_sr_wait(ctx, r, &st);
    }
    CHECK(rc == st.error);
    return st;
}

static weft_gate_counters_t gate_counters(weft_ctx_t *ctx, int peer)
{
    weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_ALL};
    MUST(weft_counters_gate(ctx, peer, &gc));
    CHECK(gc.field_mask & WEFT_GATE_COUNTERS_V4);
    return gc;
}

static uint64_t pieces_moved(weft_ctx_t *ctx, int peer)
{
    return gate_counters(ctx, peer).pieces_moved;
}

static uint64_t pieces_refused(weft_ctx_t *ctx, int peer)
{
    return gate_counters(ctx, peer).pieces_refused;
}

int main(void)
{
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    int me = test_rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "mp_coop_refused runs on 2 ranks\n");
        return 2;
    }
    drop_ptrace_cap();
    uint8_t *buf = malloc(SIZE);
    const uint64_t piece = 256u << 10; /* WEFT_RDV_PIECE's default */

    /* 1. Rank 1 refuses access; rank 0 checks that the kernel says so. */
    if (me == 1)
        CHECK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0);
    uint64_t pid = word_from(ctx, me, 1, (uint64_t)getpid(), 1);
    uint64_t addr = word_from(ctx, me, 1, (uint64_t)(uintptr_t)&probe_word, 2);
    uint64_t refused = 1;
    if (me == 0) {
        uint64_t got = 0;
        struct iovec l = {.iov_base = &got, .iov_len = sizeof got};
        struct iovec rv = {.iov_base = (void *)(uintptr_t)addr, .iov_len = sizeof got};
        refused = process_vm_readv((pid_t)pid, &l, 1, &rv, 1, 0) < 0 && errno == EPERM;
        if (!refused)
            printf("mp_coop_refused: the kernel lets rank 0 read a non-dumpable rank 1 "
                   "(got %#llx); skipped\n",
                   (unsigned long long)got);
    }
    refused = word_from(ctx, me, 0, refused, 3); /* rank 0's verdict, to rank 1 */
    if (!refused) {
        MUST(weft_finalize(ctx));
        free(buf);
        return 77;
    }
    uint64_t moved = pieces_moved(ctx, 1 - me);
    uint64_t ctrl = gate_counters(ctx, 1 - me).ctrl_sent;
    weft_counters_t c0, c1;
    MUST(weft_counters_get(ctx, &c0));
    weft_progress_counters_t pc0 = {.field_mask = WEFT_PROGRESS_COUNTERS_ALL}, pc1 = pc0;
    MUST(weft_counters_progress(ctx, &pc0));
    weft_status_t st = transfer(ctx, me, buf, SIZE, 10);
    CHECK(st.error == WEFT_OK);
    MUST(weft_counters_progress(ctx, &pc1));
    MUST(weft_counters_get(ctx, &c1));
    /* Rank 0 claimed the published receive, so the transfer took no control
     * chunk; rank 1, done with it while rank 0 waited, queued one packet for
     * rank 0 (the credit chunk) to ring its doorbell. Rank 1's next message
     * leaves behind what it queued. */
    uint64_t claimed = word_from(ctx, me, 0, c1.rdv_claimed - c0.rdv_claimed, 11);
    CHECK(claimed == 1);
    word_from(ctx, me, 1, 0, 12);
    if (me == 1)
        CHECK(gate_counters(ctx, 0).ctrl_sent - ctrl == 1);
    const char *wait = getenv("WEFT_WAIT");
    if (me == 0 && wait && !strcmp(wait, "block"))
        CHECK(pc1.wait_sleeps > pc0.wait_sleeps);
    if (me == 1) {
        CHECK(st.length == SIZE && test_verify(buf, SIZE, 10) < 0);
        /* Rank 1 moved every piece: rank 0's were all given back. */
        CHECK(pieces_moved(ctx, 0) - moved == SIZE / piece);
        CHECK(pieces_refused(ctx, 0) == 0);
    } else {
        CHECK(pieces_moved(ctx, 1) == moved);
        CHECK(pieces_refused(ctx, 1) == 1);
    }
    /* Refused once, rank 0 writes no more: rank 1 reads it all at once. */
    moved = pieces_moved(ctx, 1 - me);
    st = transfer(ctx, me, buf, SIZE, 15);
    CHECK(st.error == WEFT_OK);
    CHECK(pieces_refused(ctx, 1 - me) == (me == 0 ? 1u : 0u));
    if (me == 1) {
        CHECK(st.length == SIZE && test_verify(buf, SIZE, 15) < 0);
        CHECK(pieces_moved(ctx, 0) - moved == SIZE / piece);
    } else {
        CHECK(pieces_moved(ctx, 1) == moved);
    }

    /* 2. Nobody may copy: both sides fail, the truncated receive included. */
    if (me == 0)
        CHECK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0);
    go(ctx, me, 19);
    st = transfer(ctx, me, buf, SIZE / 2, 20);
    CHECK(st.error == WEFT_EPERM);
    CHECK(pieces_refused(ctx, 1 - me) == 1);

    /* 3. The copy path. */
    MUST(weft_counters_get(ctx, &c0));
    st = transfer(ctx, me, buf, SIZE, 30);
    CHECK(st.error == WEFT_OK);
    MUST(weft_counters_get(ctx, &c1));
    if (me == 1) {
        CHECK(st.length == SIZE && test_verify(buf, SIZE, 30) < 0);
        CHECK(c1.rdv_rtr == c0.rdv_rtr + 1);
    }
    MUST(weft_finalize(ctx));
    free(buf);
    return test_summary("mp_coop_refused");
}
