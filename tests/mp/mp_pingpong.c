/* Ping-pong with data checks for every size class from 0 to 64 MiB: powers of
 * two, their neighbours, and odd sizes, so every protocol (eager, rendezvous by
 * single copy, rendezvous by RTR + fragments) and every boundary is crossed.
 * Ranks pair up (0-1, 2-3...); an odd last rank talks to itself. Optional
 * argument: the largest size (default 64 MiB). */
#include "../common/test_util.h"

static void exchange(weft_ctx_t *ctx, int peer, bool first, size_t len, uint8_t *sbuf,
                     uint8_t *rbuf, uint64_t key)
{
    weft_request_t *sreq, *rreq;
    weft_status_t st;
    test_fill(sbuf, len, key + (uint64_t)weft_rank(ctx));
    memset(rbuf, 0xA5, len + 64);
    if (first) {
        /* The receive is posted before the send is waited on, so a rank
         * alone (talking to itself) never waits for a receive it has not
         * posted yet. */
        MUST(weft_sr_isend(ctx, peer, 0, len, sbuf, len, &sreq));
        MUST(weft_sr_irecv(ctx, peer, 0, len, rbuf, len, &rreq));
        MUST(weft_sr_wait(ctx, sreq, NULL));
        MUST(weft_sr_wait(ctx, rreq, &st));
    } else {
        MUST(weft_sr_irecv(ctx, peer, 0, len, rbuf, len, &rreq));
        MUST(weft_sr_wait(ctx, rreq, &st));
        MUST(weft_sr_isend(ctx, peer, 0, len, sbuf, len, &sreq));
        MUST(weft_sr_wait(ctx, sreq, NULL));
    }
    CHECK(st.source == peer);
    CHECK(st.tag == len);
    CHECK(st.length == len);
    long bad = test_verify(rbuf, len, key + (uint64_t)peer);
    if (bad >= 0)
        fprintf(stderr, "[rank %d] size %zu: wrong byte at %ld\n", weft_rank(ctx), len, bad);
    CHECK(bad < 0);
    /* Nothing written past the posted length. */
    CHECK(rbuf[len] == 0xA5 && rbuf[len + 63] == 0xA5);
}

int main(int argc, char **argv)
{
    test_watchdog(590); /* ofi over its shm provider takes ~50 s under ASan, loaded */
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (64u << 20);
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    test_rank = weft_rank(ctx);
    int size = weft_size(ctx);
    int peer = test_rank ^ 1;
    if (peer >= size)
        peer = test_rank;
    bool first = test_rank <= peer;
    uint8_t *sbuf = malloc(max + 64), *rbuf = malloc(max + 64);
    if (!sbuf || !rbuf)
        return 1;
    size_t sizes[512];
    int n = 0;
    sizes[n++] = 0;
    for (size_t p = 1; p <= max; p <<= 1) {
        if (p > 1)
            sizes[n++] = p - 1;
        sizes[n++] = p;
        if (p + 1 <= max)
            sizes[n++] = p + 1;
        if (p * 3 / 2 + 7 <= max && p >= 8)
            sizes[n++] = p * 3 / 2 + 7; /* odd, between two powers */
    }
    for (int i = 0; i < n; i++)
        exchange(ctx, peer, first, sizes[i], sbuf, rbuf, (uint64_t)i * 1000);
    /* Again in reverse, so the large protocols run on a warm engine too. */
    for (int i = n - 1; i >= 0; i--)
        exchange(ctx, peer, peer == test_rank ? true : !first, sizes[i], sbuf, rbuf,
                 (uint64_t)i * 7777);
    if (test_rank == 0) {
        weft_counters_t c;
        MUST(weft_counters_get(ctx, &c));
        printf("mp_pingpong: %d sizes up to %zu bytes; eager %llu, rendezvous %llu (get %llu, "
               "rtr %llu, coop %llu, published %llu, claimed %llu)\n",
               n, max, (unsigned long long)c.eager_sent, (unsigned long long)c.rdv_sent,
               (unsigned long long)c.rdv_rget, (unsigned long long)c.rdv_rtr,
               (unsigned long long)c.rdv_coop, (unsigned long long)c.rdv_published,
               (unsigned long long)c.rdv_claimed);
    }
    MUST(weft_finalize(ctx));
    free(sbuf);
    free(rbuf);
    return test_summary("mp_pingpong");
}
