/* Argument checking of the native send/receive interface, in a job of size 1
 * (the program runs alone, without weftrun): every bad argument gets its own
 * clear status, weft_strerror() names every status, and once the bad calls are
 * behind it the singleton still sends to itself, eager and rendezvous, with
 * contiguous and scattered buffers on either side. */
#include "../common/test_util.h"

#define EAGER_LEN 1000
#define RDV_LEN   (300u << 10) /* above every driver's rendezvous threshold */

static void check_status_strings(void)
{
    static const int codes[] = {
#define X_CODE(name, value, text) value,
        WEFT_STATUS_LIST(X_CODE)
#undef X_CODE
    };
    int n = (int)(sizeof codes / sizeof codes[0]);
    for (int i = 0; i < n; i++) {
        const char *s = weft_strerror(codes[i]);
        CHECK(s != NULL && s[0] != 0);
        CHECK(strcmp(s, "unknown status") != 0);
        CHECK(strcmp(weft_status_name(codes[i]), "WEFT_?") != 0);
        for (int j = 0; j < i; j++) {
            const char *t = weft_strerror(codes[j]);
            if (s && t && !strcmp(s, t)) {
                fprintf(stderr, "statuses %d and %d share the sentence \"%s\"\n", codes[i],
                        codes[j], s);
                CHECK(false);
            }
        }
    }
    CHECK(weft_strerror(12345) != NULL);
    CHECK(!strcmp(weft_status_name(WEFT_ETRUNC), "WEFT_ETRUNC"));
}

static void check_bad_arguments(weft_ctx_t *ctx)
{
    uint8_t buf[16] = {0};
    weft_request_t *req = NULL;
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};

    /* Ranks: -1 and 1 do not exist in a job of size 1. */
    CHECK(weft_sr_isend(ctx, -1, 0, 0, buf, sizeof buf, &req) == WEFT_ERANK);
    CHECK(weft_sr_isend(ctx, 1, 0, 0, buf, sizeof buf, &req) == WEFT_ERANK);
    CHECK(weft_sr_issend(ctx, 1, 0, 0, buf, sizeof buf, &req) == WEFT_ERANK);
    CHECK(weft_sr_isendv(ctx, 7, 0, 0, &iov, 1, &req) == WEFT_ERANK);
    CHECK(weft_sr_irecv(ctx, 7, 0, 0, buf, sizeof buf, &req) == WEFT_ERANK);
    CHECK(weft_sr_irecv(ctx, -2, 0, 0, buf, sizeof buf, &req) == WEFT_ERANK);
    CHECK(weft_sr_irecvv(ctx, 1, 0, 0, &iov, 1, &req) == WEFT_ERANK);
    /* A send may not carry the wildcard tag, nor a send go to "any source". */
    CHECK(weft_sr_isend(ctx, 0, 0, WEFT_ANY_TAG, buf, sizeof buf, &req) == WEFT_ETAG);
    CHECK(weft_sr_issend(ctx, 0, 0, WEFT_ANY_TAG, buf, sizeof buf, &req) == WEFT_ETAG);
    CHECK(weft_sr_isendv(ctx, 0, 0, WEFT_ANY_TAG, &iov, 1, &req) == WEFT_ETAG);
    CHECK(weft_sr_isend(ctx, WEFT_ANY_SOURCE, 0, 0, buf, sizeof buf, &req) == WEFT_ERANK);
    /* NULL buffers with a length, NULL request pointers, bad iovec counts. */
    CHECK(weft_sr_isend(ctx, 0, 0, 0, NULL, 8, &req) == WEFT_EINVAL);
    CHECK(weft_sr_issend(ctx, 0, 0, 0, NULL, 8, &req) == WEFT_EINVAL);
    CHECK(weft_sr_irecv(ctx, 0, 0, 0, NULL, 8, &req) == WEFT_EINVAL);
    CHECK(weft_sr_isend(ctx, 0, 0, 0, buf, sizeof buf, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_irecv(ctx, 0, 0, 0, buf, sizeof buf, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_isendv(ctx, 0, 0, 0, &iov, 1, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_isendv(ctx, 0, 0, 0, &iov, -1, &req) == WEFT_EINVAL);
    CHECK(weft_sr_irecvv(ctx, 0, 0, 0, &iov, -1, &req) == WEFT_EINVAL);
    CHECK(weft_sr_isendv(ctx, 0, 0, 0, NULL, 2, &req) == WEFT_EINVAL);
    struct iovec holey[2] = {{buf, 4}, {NULL, 4}};
    CHECK(weft_sr_isendv(ctx, 0, 0, 0, holey, 2, &req) == WEFT_EINVAL);
    CHECK(weft_sr_irecvv(ctx, 0, 0, 0, holey, 2, &req) == WEFT_EINVAL);
    /* NULL context. */
    CHECK(weft_sr_isend(NULL, 0, 0, 0, buf, sizeof buf, &req) == WEFT_EINVAL);
    CHECK(weft_sr_irecv(NULL, 0, 0, 0, buf, sizeof buf, &req) == WEFT_EINVAL);
    CHECK(weft_sr_wait(NULL, NULL, NULL) == WEFT_EINVAL);
    /* Waiting on nothing is fine; testing nothing is "done". */
    weft_status_t st;
    CHECK(weft_sr_wait(ctx, NULL, NULL) == WEFT_OK);
    CHECK(weft_sr_wait(ctx, NULL, &st) == WEFT_OK);
    int flag = 0, index = 5;
    CHECK(weft_sr_test(ctx, NULL, &flag, NULL) == WEFT_OK && flag == 1);
    weft_request_t *none[3] = {NULL, NULL, NULL};
    CHECK(weft_sr_testany(ctx, 3, none, &index, &flag, NULL) == WEFT_OK && flag == 1 &&
          index == -1);
    CHECK(weft_sr_waitall(ctx, 3, none, NULL) == WEFT_OK);
    CHECK(weft_sr_waitall(ctx, -1, none, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_cancel(ctx, NULL) == WEFT_EINVAL);
    CHECK(weft_sr_iprobe(ctx, 3, 0, 0, &flag, NULL) == WEFT_ERANK);
    CHECK(weft_sr_iprobe(ctx, 0, 0, 0, NULL, NULL) == WEFT_EINVAL);
    CHECK(weft_counters_get(ctx, NULL) == WEFT_EINVAL);
    /* Nothing above left a message or receive behind. */
    CHECK(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, 0, WEFT_ANY_TAG, &flag, NULL) == WEFT_OK &&
          flag == 0);
}

/* Send len bytes to ourselves in one of four shapes and check what arrives. */
static void self_exchange(weft_ctx_t *ctx, size_t len, bool send_iov, bool recv_iov, uint64_t tag)
{
    uint8_t *sbuf = malloc(len + 1), *rbuf = malloc(len + 64);
    if (!sbuf || !rbuf)
        exit(1);
    test_fill(sbuf, len, tag);
    memset(rbuf, 0xA5, len + 64);
    weft_request_t *sreq, *rreq;
    weft_status_t st;
    /* Uneven pieces, one of them empty. */
    size_t a = len / 3, b = len / 2 - len / 3;
    struct iovec siov[4] = {{sbuf, a}, {sbuf + a, 0}, {sbuf + a, b}, {sbuf + a + b, len - a - b}};
    struct iovec riov[3] = {{rbuf, b}, {rbuf + b, a}, {rbuf + a + b, len - a - b}};
    /* Post the receive second for half the cases, so both the expected and the
     * unexpected paths run. */
    bool recv_first = (tag & 1) != 0;
    if (recv_first) {
        if (recv_iov)
            MUST(weft_sr_irecvv(ctx, 0, 3, tag, riov, 3, &rreq));
        else
            MUST(weft_sr_irecv(ctx, 0, 3, tag, rbuf, len, &rreq));
    }
    if (send_iov)
        MUST(weft_sr_isendv(ctx, 0, 3, tag, siov, 4, &sreq));
    else
        MUST(weft_sr_isend(ctx, 0, 3, tag, sbuf, len, &sreq));
    if (!recv_first) {
        if (recv_iov)
            MUST(weft_sr_irecvv(ctx, WEFT_ANY_SOURCE, 3, tag, riov, 3, &rreq));
        else
            MUST(weft_sr_irecv(ctx, 0, 3, WEFT_ANY_TAG, rbuf, len, &rreq));
    }
    MUST(weft_sr_wait(ctx, rreq, &st));
    MUST(weft_sr_wait(ctx, sreq, NULL));
    CHECK(st.source == 0 && st.comm == 3 && st.tag == tag && st.length == len &&
          st.error == WEFT_OK);
    long bad = test_verify(rbuf, len, tag);
    if (bad >= 0)
        fprintf(stderr, "self send of %zu bytes (send iov %d, recv iov %d): wrong byte at %ld\n",
                len, send_iov, recv_iov, bad);
    CHECK(bad < 0);
    CHECK(rbuf[len] == 0xA5 && rbuf[len + 63] == 0xA5);
    free(sbuf);
    free(rbuf);
}

/* A synchronous send to oneself completes only once the receive is posted; a
 * longer message truncates into a shorter receive, eager and rendezvous. */
static void self_sync_and_truncation(weft_ctx_t *ctx)
{
    static uint8_t sbuf[RDV_LEN], rbuf[RDV_LEN + 64];
    size_t lens[] = {10, RDV_LEN};
    for (int i = 0; i < 2; i++) {
        size_t len = lens[i];
        uint64_t tag = 7000 + (uint64_t)i;
        test_fill(sbuf, len, tag);
        weft_request_t *sreq, *rreq;
        weft_status_t st;
        int flag = 1;
        MUST(weft_sr_issend(ctx, 0, 4, tag, sbuf, len, &sreq));
        for (int k = 0; k < 100; k++)
            weft_progress(ctx);
        MUST(weft_sr_test(ctx, sreq, &flag, NULL));
        CHECK(flag == 0); /* nobody received it yet */
        memset(rbuf, 0xA5, sizeof rbuf);
        size_t cap = len / 2;
        MUST(weft_sr_irecv(ctx, 0, 4, tag, rbuf, cap, &rreq));
        int rc = weft_sr_wait(ctx, rreq, &st);
        CHECK(rc == WEFT_ETRUNC && st.error == WEFT_ETRUNC && st.length == cap);
        CHECK(test_verify(rbuf, cap, tag) < 0 && rbuf[cap] == 0xA5 && rbuf[cap + 63] == 0xA5);
        if (!flag)
            CHECK(weft_sr_wait(ctx, sreq, NULL) == WEFT_OK);
    }
}

/* weft_idle: spins, reads the clock every 64 calls, and once idle for the
 * patience (WEFT_SPIN_US, 10 us by default here) yields between polls; never
 * under WEFT_WAIT=spin. */
static void check_idle(weft_ctx_t *ctx)
{
    weft_idle(NULL, NULL); /* harmless */
    weft_idle(ctx, NULL);
    weft_idle_t st = {0};
    for (int i = 0; i < 63; i++)
        weft_idle(ctx, &st);
    CHECK(st.since == 0 && !st.yielding);
    const char *wait = getenv("WEFT_WAIT");
    bool spin = wait && !strcmp(wait, "spin");
    weft_idle(ctx, &st);
    CHECK(spin ? st.since == 0 : st.since != 0);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        weft_idle(ctx, &st);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (!st.yielding && t.tv_sec - t0.tv_sec < 2);
    CHECK(spin ? !st.yielding : st.yielding != 0);
}

int main(void)
{
    test_watchdog(60);
    CHECK(weft_init(NULL, NULL) == WEFT_EINVAL);
    weft_init_params_t bad = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL, .thread_level = 9};
    weft_ctx_t *ctx = NULL;
    CHECK(weft_init(&bad, &ctx) == WEFT_EINVAL && ctx == NULL);
    check_status_strings();

    MUST(weft_init(NULL, &ctx));
    test_rank = weft_rank(ctx);
    CHECK(weft_rank(ctx) == 0 && weft_size(ctx) == 1);
    check_bad_arguments(ctx);
    check_idle(ctx);

    uint64_t tag = 100;
    size_t lens[] = {0, 1, EAGER_LEN, 16383, 16384, 16385, RDV_LEN, RDV_LEN + 13};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        for (int shape = 0; shape < 4; shape++)
            for (int order = 0; order < 2; order++)
                self_exchange(ctx, lens[i], shape & 1, shape & 2, tag++ * 2 + (uint64_t)order);

    self_sync_and_truncation(ctx);
    weft_counters_t c;
    MUST(weft_counters_get(ctx, &c));
    CHECK(c.eager_sent > 0 && c.rdv_sent > 0);
    MUST(weft_finalize(ctx));
    return test_summary("test_sr_args");
}
