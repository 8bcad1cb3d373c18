/* Scattered data, and ranks that do not share settings.
 *
 * Rank 0 sends messages gathered from many small iovec pieces (more pieces
 * than any packet can carry: 70, 1000 and 20000) and rank 1 receives them
 * scattered into pieces of another size; then the reverse. Every byte is
 * checked. With the argument "mismatch", each rank first sets its own
 * WEFT_RDV_THRESHOLD and WEFT_EAGER_CREDITS (rank 0: 60K and 4M, rank 1: 8K and
 * 4K): a sender must respect the window its peer grants, and eager messages
 * above the receiver's own threshold are still fine. */
#include "../common/test_util.h"

static void split(uint8_t *buf, size_t len, size_t piece, struct iovec **iov, int *n)
{
    *n = (int)((len + piece - 1) / piece);
    *iov = malloc(sizeof(struct iovec) * (size_t)(*n ? *n : 1));
    for (int i = 0; i < *n; i++) {
        (*iov)[i].iov_base = buf + (size_t)i * piece;
        (*iov)[i].iov_len = (piece < len - (size_t)i * piece ? piece : len - (size_t)i * piece);
    }
}

static void one(weft_ctx_t *ctx, int from, size_t len, size_t spiece, size_t rpiece, uint64_t key)
{
    int me = weft_rank(ctx), peer = 1 - me;
    uint8_t *buf = malloc(len + 1);
    struct iovec *iov;
    int n;
    weft_request_t *req;
    weft_status_t st;
    if (me == from) {
        test_fill(buf, len, key);
        split(buf, len, spiece, &iov, &n);
        MUST(weft_sr_isendv(ctx, peer, 5, key, iov, n, &req));
        CHECK(weft_sr_wait(ctx, req, NULL) == WEFT_OK);
    } else {
        memset(buf, 0, len + 1);
        split(buf, len, rpiece, &iov, &n);
        MUST(weft_sr_irecvv(ctx, peer, 5, key, iov, n, &req));
        CHECK(weft_sr_wait(ctx, req, &st) == WEFT_OK);
        CHECK(st.length == len);
        long bad = test_verify(buf, len, key);
        if (bad >= 0)
            fprintf(stderr, "[rank %d] %zu bytes in %zu-byte pieces: wrong byte at %ld\n", me, len,
                    spiece, bad);
        CHECK(bad < 0);
    }
    free(iov);
    free(buf);
}

int main(int argc, char **argv)
{
    test_watchdog(100);
    if (argc > 1 && !strcmp(argv[1], "mismatch")) {
        const char *r = getenv("WEFT_RANK");
        bool zero = !r || !strcmp(r, "0");
        setenv("WEFT_RDV_THRESHOLD", zero ? "60K" : "8K", 1);
        setenv("WEFT_EAGER_CREDITS", zero ? "4M" : "4K", 1);
    }
    weft_ctx_t *ctx = test_init("mp_iov", 2);
    struct {
        size_t len, spiece, rpiece;
    } cases[] = {
        {560, 8, 7},         /* 70 pieces: more than one packet's iovec */
        {8000, 8, 16},       /* 1000 pieces */
        {160000, 8, 4096},   /* 20000 pieces, a rendezvous */
        {1 << 20, 4096, 24}, /* contiguous-ish send, very scattered receive */
        {50000, 50000, 3},   /* eager or not depending on the rank's threshold */
        {3000, 3000, 3000},
    };
    uint64_t key = 1;
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int from = 0; from < 2; from++)
                one(ctx, from, cases[i].len, cases[i].spiece, cases[i].rpiece, key++);
    /* Many eager messages in flight at once from both sides: the window each
     * receiver granted must hold. */
    enum { MANY = 2000 };
    static uint8_t sb[MANY][200], rb[MANY][200];
    weft_request_t *reqs[2 * MANY];
    int peer = 1 - weft_rank(ctx);
    for (int i = 0; i < MANY; i++) {
        test_fill(sb[i], sizeof sb[i], (uint64_t)(weft_rank(ctx) * MANY + i));
        MUST(weft_sr_isend(ctx, peer, 6, (uint64_t)i, sb[i], sizeof sb[i], &reqs[i]));
    }
    for (int i = 0; i < MANY; i++)
        MUST(weft_sr_irecv(ctx, peer, 6, (uint64_t)i, rb[i], sizeof rb[i], &reqs[MANY + i]));
    CHECK(weft_sr_waitall(ctx, 2 * MANY, reqs, NULL) == WEFT_OK);
    long bad = 0;
    for (int i = 0; i < MANY; i++)
        bad += test_verify(rb[i], sizeof rb[i], (uint64_t)(peer * MANY + i)) >= 0;
    CHECK(bad == 0);
    MUST(weft_finalize(ctx));
    return test_summary("mp_iov");
}
