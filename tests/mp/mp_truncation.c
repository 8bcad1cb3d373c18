/* Truncation: a message longer than the posted receive completes the receive
 * with WEFT_ETRUNC (from wait and in status.error), status.length says how many
 * bytes were delivered, those bytes are the message's first ones, and nothing is
 * written past the buffer (guard bytes), for eager and rendezvous sizes, with the
 * receive posted before the message arrives and after, and into an iovec. The
 * send completes with WEFT_OK. Register it again with WEFT_SHM_CMA=0 for the
 * RTR + fragments path. Rank 0 sends, rank 1 receives; extra ranks idle. */
#include "../common/test_util.h"

#define GUARD      64
#define GUARD_BYTE 0xC3
#define NOTE_COMM  9

typedef struct tcase {
    size_t msg_len;
    size_t pieces[3]; /* receive buffer: one piece, or up to three (iovec) */
    int npieces;
} tcase_t;

static const tcase_t cases[] = {
    {100, {64}, 1},
    {100, {0}, 1},
    {1, {0}, 1},
    {4000, {3999}, 1},
    {16000, {8000}, 1},
    {20000, {16000}, 1}, /* rendezvous (above 16 KiB) into an eager-sized buffer */
    {100000, {50000}, 1},
    {100000, {99999}, 1},
    {100001, {0}, 1},
    {3u << 20, {(1u << 20) + 3}, 1},
    {100, {30, 0, 40}, 3},
    {5000, {1000, 7, 10}, 3},
    {200000, {100000, 50001, 0}, 3},
    {(2u << 20) + 5, {(1u << 20) + 1, 4096, 333}, 3},
};

static void note(weft_ctx_t *ctx, int peer, bool send, uint64_t tag)
{
    test_note(ctx, peer, send, NOTE_COMM, tag);
}

static void sender(weft_ctx_t *ctx, const tcase_t *c, uint64_t tag, bool posted_first)
{
    uint8_t *buf = malloc(c->msg_len);
    if (!buf)
        exit(1);
    test_fill(buf, c->msg_len, tag);
    weft_request_t *req;
    weft_status_t st;
    if (posted_first)
        note(ctx, 1, false, tag);
    MUST(weft_sr_isend(ctx, 1, 0, tag, buf, c->msg_len, &req));
    if (!posted_first)
        note(ctx, 1, true, tag);
    int rc = weft_sr_wait(ctx, req, &st);
    if (rc != WEFT_OK)
        fprintf(stderr, "[rank 0] send of %zu B: %s\n", c->msg_len, weft_strerror(rc));
    CHECK(rc == WEFT_OK && st.error == WEFT_OK);
    free(buf);
}

static void receiver(weft_ctx_t *ctx, const tcase_t *c, uint64_t tag, bool posted_first)
{
    size_t cap = 0;
    for (int i = 0; i < c->npieces; i++)
        cap += c->pieces[i];
    /* Pieces laid out with a guard after each. */
    size_t region = cap + GUARD * (size_t)c->npieces;
    uint8_t *mem = malloc(region);
    uint8_t *ref = malloc(c->msg_len);
    if (!mem || !ref)
        exit(1);
    memset(mem, GUARD_BYTE, region);
    test_fill(ref, c->msg_len, tag);
    struct iovec iov[3];
    size_t at = 0;
    for (int i = 0; i < c->npieces; i++) {
        iov[i].iov_base = mem + at;
        iov[i].iov_len = c->pieces[i];
        at += c->pieces[i] + GUARD;
    }
    weft_request_t *req;
    weft_status_t st;
    if (!posted_first)
        note(ctx, 0, false, tag);
    if (c->npieces == 1)
        MUST(weft_sr_irecv(ctx, 0, 0, tag, mem, cap, &req));
    else
        MUST(weft_sr_irecvv(ctx, 0, 0, tag, iov, c->npieces, &req));
    if (posted_first)
        note(ctx, 0, true, tag);
    memset(&st, 0x11, sizeof st);
    int rc = weft_sr_wait(ctx, req, &st);
    bool ok = rc == WEFT_ETRUNC && st.error == WEFT_ETRUNC && st.length == cap && st.source == 0 &&
              st.tag == tag && st.comm == 0;
    if (!ok)
        fprintf(stderr,
                "[rank 1] %zu B into %zu B (%d pieces, %s): wait %s, status error %s, length "
                "%zu, source %d, tag %llu\n",
                c->msg_len, cap, c->npieces, posted_first ? "posted first" : "unexpected",
                weft_status_name(rc), weft_status_name(st.error), st.length, st.source,
                (unsigned long long)st.tag);
    CHECK(ok);
    /* The delivered bytes are the message's first cap bytes; guards intact. */
    size_t off = 0;
    for (int i = 0; i < c->npieces; i++) {
        const uint8_t *p = iov[i].iov_base;
        bool same = memcmp(p, ref + off, c->pieces[i]) == 0;
        if (!same)
            fprintf(stderr, "[rank 1] %zu B into %zu B: piece %d has wrong data\n", c->msg_len, cap,
                    i);
        CHECK(same);
        off += c->pieces[i];
        bool guard = true;
        for (size_t g = 0; g < GUARD; g++)
            guard &= p[c->pieces[i] + g] == GUARD_BYTE;
        if (!guard)
            fprintf(stderr, "[rank 1] %zu B into %zu B: written past piece %d\n", c->msg_len, cap,
                    i);
        CHECK(guard);
    }
    free(mem);
    free(ref);
}

int main(void)
{
    test_watchdog(60);
    weft_ctx_t *ctx = test_init("mp_truncation", 2);
    uint64_t tag = 1;
    for (int round = 0; round < 2; round++) {
        bool posted_first = round == 0;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++, tag++) {
            if (test_rank == 0)
                sender(ctx, &cases[i], tag, posted_first);
            else if (test_rank == 1)
                receiver(ctx, &cases[i], tag, posted_first);
        }
    }
    /* After all that, an exact-size message still goes through intact. */
    if (test_rank <= 1) {
        static uint8_t a[70000], b[70000 + GUARD];
        weft_request_t *req;
        weft_status_t st;
        if (test_rank == 0) {
            test_fill(a, sizeof a, 999);
            MUST(weft_sr_isend(ctx, 1, 0, 999, a, sizeof a, &req));
            MUST(weft_sr_wait(ctx, req, NULL));
        } else {
            memset(b, GUARD_BYTE, sizeof b);
            MUST(weft_sr_irecv(ctx, 0, 0, 999, b, sizeof a, &req));
            MUST(weft_sr_wait(ctx, req, &st));
            CHECK(st.length == sizeof a && test_verify(b, sizeof a, 999) < 0 &&
                  b[sizeof a] == GUARD_BYTE);
        }
    }
    MUST(weft_finalize(ctx));
    return test_summary("mp_truncation");
}
