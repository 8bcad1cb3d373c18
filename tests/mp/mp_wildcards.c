/* Wildcard receives with several senders: rank 0 receives, ranks 1.. send.
 *  - any source, any tag, and both: the status names the real source, tag and
 *    length, and messages of one sender on one (comm, tag) arrive in send order
 *    (non-overtaking), eager and rendezvous mixed;
 *  - posting order: an older wildcard receive gets a message before a newer
 *    specific one, and the other way round, for receives posted before the
 *    messages arrive and for messages that wait unexpected;
 *  - communicators: a message on one comm never matches a receive on another.
 * Needs at least 2 ranks (3 or more for several senders). */
#include "../common/test_util.h"

#define K        60 /* messages per sender per pattern */
#define SYNC     1000u
#define HDR      16 /* payload starts with (sender, seq, tag) */
#define RDV_SIZE (40u << 10)

static int me, nranks;
static uint64_t sync_tag;

/* Rank 0 gathers a zero-byte note from every other rank, then releases them:
 * a barrier made of messages, on a comm of its own. */
static void barrier(weft_ctx_t *ctx)
{
    uint64_t tag = sync_tag++;
    if (me == 0) {
        weft_request_t *req;
        for (int r = 1; r < nranks; r++) {
            MUST(weft_sr_irecv(ctx, r, SYNC, tag, NULL, 0, &req));
            MUST(weft_sr_wait(ctx, req, NULL));
        }
        for (int r = 1; r < nranks; r++) {
            MUST(weft_sr_isend(ctx, r, SYNC, tag, NULL, 0, &req));
            MUST(weft_sr_wait(ctx, req, NULL));
        }
    } else {
        weft_request_t *req;
        MUST(weft_sr_isend(ctx, 0, SYNC, tag, NULL, 0, &req));
        MUST(weft_sr_wait(ctx, req, NULL));
        MUST(weft_sr_irecv(ctx, 0, SYNC, tag, NULL, 0, &req));
        MUST(weft_sr_wait(ctx, req, NULL));
    }
}

static size_t pattern_len(int sender, int seq)
{
    if (seq % 7 == 3)
        return RDV_SIZE + (size_t)sender * 8 + (size_t)seq; /* rendezvous */
    return HDR + (size_t)((sender * 131 + seq * 17) % 900);
}

static uint64_t pattern_tag(int sender, int seq, int mode)
{
    /* mode 0: one tag for all; otherwise tags that vary per message. */
    return mode == 0 ? 7 : (uint64_t)(1000 + (sender * 7 + seq * 13) % 11);
}

static uint64_t body_key(int sender, int seq, uint32_t comm)
{
    return ((uint64_t)comm << 48) | ((uint64_t)sender << 32) | (uint64_t)seq;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void send_stream(weft_ctx_t *ctx, uint32_t comm, int mode)
{
    weft_request_t *reqs[K];
    uint8_t *bufs[K];
    for (int s = 0; s < K; s++) {
        size_t len = pattern_len(me, s);
        uint64_t tag = pattern_tag(me, s, mode);
        bufs[s] = malloc(len);
        if (!bufs[s])
            exit(1);
        test_fill(bufs[s], len, body_key(me, s, comm));
        put_u32(bufs[s], (uint32_t)me);
        put_u32(bufs[s] + 4, (uint32_t)s);
        put_u32(bufs[s] + 8, (uint32_t)tag);
        MUST(weft_sr_isend(ctx, 0, comm, tag, bufs[s], len, &reqs[s]));
    }
    MUST(weft_sr_waitall(ctx, K, reqs, NULL));
    for (int s = 0; s < K; s++)
        free(bufs[s]);
}

/* Rank 0: receive K messages from every sender with (src, tag) as given, which
 * may be wildcards, and check status and per-sender order. mode as sent. */
static void recv_stream(weft_ctx_t *ctx, uint32_t comm, int mode, int src_kind, bool any_tag)
{
    int n = K * (nranks - 1);
    weft_request_t **reqs = calloc((size_t)n, sizeof *reqs);
    uint8_t **bufs = calloc((size_t)n, sizeof *bufs);
    weft_status_t *sts = calloc((size_t)n, sizeof *sts);
    int next_seq[64] = {0};
    int per_sender_posted[64] = {0};
    size_t cap = RDV_SIZE + 4096;
    /* Post receives before the senders start (barrier afterwards), so the
     * matching runs on posted receives for half the streams... */
    for (int i = 0; i < n; i++) {
        int src = WEFT_ANY_SOURCE;
        if (src_kind == 1) /* specific source, interleaved over senders */
            src = 1 + i % (nranks - 1);
        uint64_t tag = any_tag ? WEFT_ANY_TAG : 7;
        if (src >= 0)
            per_sender_posted[src]++;
        bufs[i] = malloc(cap);
        if (!bufs[i])
            exit(1);
        MUST(weft_sr_irecv(ctx, src, comm, tag, bufs[i], cap, &reqs[i]));
    }
    barrier(ctx); /* senders start now */
    MUST(weft_sr_waitall(ctx, n, reqs, sts));
    /* Receives of one class complete in posting order for each sender. */
    for (int i = 0; i < n; i++) {
        weft_status_t *st = &sts[i];
        CHECK(st->error == WEFT_OK && st->comm == comm);
        if (st->length < HDR) {
            CHECK(st->length >= HDR);
            continue;
        }
        int sender = (int)get_u32(bufs[i]), seq = (int)get_u32(bufs[i] + 4);
        uint64_t tag = get_u32(bufs[i] + 8);
        CHECK(sender == st->source);
        if (src_kind == 1)
            CHECK(st->source == 1 + i % (nranks - 1));
        CHECK(sender >= 1 && sender < nranks);
        if (sender < 1 || sender >= nranks)
            continue;
        CHECK(st->tag == tag && tag == pattern_tag(sender, seq, mode));
        CHECK(st->length == pattern_len(sender, seq));
        if (seq != next_seq[sender])
            fprintf(stderr, "[rank 0] comm %u: from %d got seq %d, expected %d (overtaken)\n", comm,
                    sender, seq, next_seq[sender]);
        CHECK(seq == next_seq[sender]);
        next_seq[sender] = seq + 1;
        /* The body past the header. */
        uint8_t *ref = malloc(st->length);
        test_fill(ref, st->length, body_key(sender, seq, comm));
        CHECK(memcmp(bufs[i] + HDR, ref + HDR, st->length - HDR) == 0);
        free(ref);
    }
    for (int r = 1; r < nranks; r++)
        CHECK(next_seq[r] == K);
    for (int i = 0; i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    free(sts);
}

static int recv_one(weft_ctx_t *ctx, weft_request_t *req, weft_status_t *st, uint8_t *buf)
{
    MUST(weft_sr_wait(ctx, req, st));
    CHECK(st->length == 8);
    return (int)get_u32(buf + 4);
}

/* A small numbered message from rank 1 to rank 0. */
static void send_small(weft_ctx_t *ctx, uint32_t comm, uint64_t tag, uint32_t number)
{
    uint8_t b[8];
    put_u32(b, (uint32_t)me);
    put_u32(b + 4, number);
    weft_request_t *req;
    MUST(weft_sr_isend(ctx, 0, comm, tag, b, 8, &req));
    MUST(weft_sr_wait(ctx, req, NULL));
}

/* Order of posted receives of different classes on comm 10..: the oldest
 * matching receive wins, whatever its class. */
static void posting_order(weft_ctx_t *ctx)
{
    uint8_t b[4][8];
    weft_request_t *r[4];
    weft_status_t st;
    /* 1. wildcard (any source) posted before a specific one. */
    if (me == 0) {
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 10, 5, b[0], 8, &r[0]));
        MUST(weft_sr_irecv(ctx, 1, 10, 5, b[1], 8, &r[1]));
        /* 2. specific posted before wildcards of each class. */
        MUST(weft_sr_irecv(ctx, 1, 11, 5, b[2], 8, &r[2]));
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 11, WEFT_ANY_TAG, b[3], 8, &r[3]));
    }
    barrier(ctx);
    if (me == 1) {
        send_small(ctx, 10, 5, 1);
        send_small(ctx, 10, 5, 2);
        send_small(ctx, 11, 5, 3);
        send_small(ctx, 11, 5, 4);
    }
    if (me == 0) {
        int n0 = recv_one(ctx, r[0], &st, b[0]);
        CHECK(st.source == 1 && st.tag == 5);
        int n1 = recv_one(ctx, r[1], &st, b[1]);
        int n2 = recv_one(ctx, r[2], &st, b[2]);
        int n3 = recv_one(ctx, r[3], &st, b[3]);
        CHECK(st.source == 1 && st.tag == 5 && st.comm == 11);
        if (n0 != 1 || n1 != 2 || n2 != 3 || n3 != 4)
            fprintf(stderr, "[rank 0] posting order: got %d %d %d %d, expected 1 2 3 4\n", n0, n1,
                    n2, n3);
        CHECK(n0 == 1 && n1 == 2);
        CHECK(n2 == 3 && n3 == 4);
    }
    barrier(ctx);
    /* 3. All four classes posted in one order, then the messages; every
     * message matches all four, so each goes to the oldest still posted. */
    if (me == 0) {
        MUST(weft_sr_irecv(ctx, 1, 12, WEFT_ANY_TAG, b[0], 8, &r[0]));
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 12, WEFT_ANY_TAG, b[1], 8, &r[1]));
        MUST(weft_sr_irecv(ctx, 1, 12, 9, b[2], 8, &r[2]));
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 12, 9, b[3], 8, &r[3]));
    }
    barrier(ctx);
    if (me == 1)
        for (uint32_t i = 1; i <= 4; i++)
            send_small(ctx, 12, 9, i);
    if (me == 0)
        for (int i = 0; i < 4; i++) {
            int n = recv_one(ctx, r[i], &st, b[i]);
            CHECK(n == i + 1 && st.source == 1 && st.tag == 9 && st.comm == 12);
        }
    barrier(ctx);
    /* 4. Messages first (unexpected), with different tags; then receives of
     * each class take the oldest message they match. */
    if (me == 1) {
        send_small(ctx, 13, 1, 1);
        send_small(ctx, 13, 2, 2);
        send_small(ctx, 13, 3, 3);
        send_small(ctx, 13, 2, 4);
    }
    barrier(ctx); /* rank 1's messages were sent before its barrier note, so
                     they have arrived once rank 0 has that note */
    if (me == 0) {
        int flag = 0;
        MUST(weft_sr_iprobe(ctx, 1, 13, 2, &flag, &st));
        CHECK(flag == 1 && st.tag == 2);
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 13, 3, b[0], 8, &r[0]));
        CHECK(recv_one(ctx, r[0], &st, b[0]) == 3 && st.tag == 3);
        MUST(weft_sr_irecv(ctx, 1, 13, WEFT_ANY_TAG, b[0], 8, &r[0]));
        CHECK(recv_one(ctx, r[0], &st, b[0]) == 1 && st.tag == 1);
        MUST(weft_sr_irecv(ctx, 1, 13, 2, b[0], 8, &r[0]));
        CHECK(recv_one(ctx, r[0], &st, b[0]) == 2 && st.tag == 2);
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 13, WEFT_ANY_TAG, b[0], 8, &r[0]));
        CHECK(recv_one(ctx, r[0], &st, b[0]) == 4 && st.tag == 2 && st.source == 1);
        MUST(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, 13, WEFT_ANY_TAG, &flag, NULL));
        CHECK(flag == 0);
    }
    barrier(ctx);
}

/* A message on comm 21 never matches receives on comm 20, and vice versa. */
static void comm_isolation(weft_ctx_t *ctx)
{
    uint8_t b[3][8];
    weft_request_t *r[3];
    weft_status_t st;
    if (me == 0) {
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 20, WEFT_ANY_TAG, b[0], 8, &r[0]));
        MUST(weft_sr_irecv(ctx, 1, 20, 42, b[1], 8, &r[1]));
        MUST(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 20, 42, b[2], 8, &r[2]));
    }
    barrier(ctx);
    if (me == 1)
        send_small(ctx, 21, 42, 1); /* comm 21: must wait unexpected */
    barrier(ctx);
    if (me == 0) {
        int flag = 1;
        for (int i = 0; i < 3; i++) {
            MUST(weft_sr_test(ctx, r[i], &flag, NULL));
            CHECK(flag == 0);
        }
        MUST(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, 20, WEFT_ANY_TAG, &flag, NULL));
        CHECK(flag == 0);
        MUST(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, 21, WEFT_ANY_TAG, &flag, &st));
        CHECK(flag == 1 && st.comm == 21 && st.tag == 42 && st.source == 1);
        /* Cancel the comm-20 receives, then take the message on its comm. */
        for (int i = 1; i < 3; i++) {
            CHECK(weft_sr_cancel(ctx, r[i]) == WEFT_OK);
            CHECK(weft_sr_wait(ctx, r[i], &st) == WEFT_ECANCELED);
        }
        weft_request_t *q;
        MUST(weft_sr_irecv(ctx, 1, 21, 42, b[1], 8, &q));
        CHECK(recv_one(ctx, q, &st, b[1]) == 1 && st.comm == 21);
    }
    barrier(ctx);
    /* A message on comm 20 does reach the one still posted there. */
    if (me == 1)
        send_small(ctx, 20, 43, 2);
    if (me == 0) {
        CHECK(recv_one(ctx, r[0], &st, b[0]) == 2 && st.comm == 20 && st.tag == 43);
    }
    barrier(ctx);
}

int main(void)
{
    test_watchdog(100);
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    test_rank = me = weft_rank(ctx);
    nranks = weft_size(ctx);
    if (nranks < 2 || nranks > 64) {
        if (me == 0)
            printf("mp_wildcards: needs 2 to 64 ranks; skipped\n");
        weft_finalize(ctx);
        return 77;
    }
    /* Streams: (comm, tag mode, receive source kind, any tag). Source kind 0
     * is WEFT_ANY_SOURCE, 1 a specific sender. */
    static const struct {
        uint32_t comm;
        int mode, src_kind;
        bool any_tag;
    } streams[] = {
        {1, 0, 0, false}, /* any source, one tag */
        {2, 1, 1, true},  /* any tag, specific source */
        {3, 1, 0, true},  /* both wildcards */
        {4, 0, 1, false}, /* fully specified, for reference */
    };
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
        if (me == 0) {
            recv_stream(ctx, streams[i].comm, streams[i].mode, streams[i].src_kind,
                        streams[i].any_tag);
        } else {
            barrier(ctx);
            send_stream(ctx, streams[i].comm, streams[i].mode);
        }
        barrier(ctx);
    }
    /* The same streams again with the messages first (unexpected). */
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
        uint32_t comm = streams[i].comm + 100;
        if (me != 0)
            send_stream(ctx, comm, streams[i].mode);
        else {
            /* Let the messages pile up before posting. */
            usleep(50000);
            recv_stream(ctx, comm, streams[i].mode, streams[i].src_kind, streams[i].any_tag);
        }
        if (me != 0)
            barrier(ctx); /* recv_stream's own barrier */
        barrier(ctx);
    }
    posting_order(ctx);
    comm_isolation(ctx);
    MUST(weft_finalize(ctx));
    return test_summary("mp_wildcards");
}
