/* Incremental messages (weft_pack.h) between real processes. Each rank packs
 * to the next rank (in a sender thread) and unpacks from the previous one:
 *
 *   "length, then body": an express length, then the body as a cheaper
 *     piece into a buffer allocated after reading it (0 B to 300 KiB: inline,
 *     a message of its own, a rendezvous);
 *   the distributed-shared-memory exchange of NewMadeleine's paper: a
 *     request of four express fields, an answer with a page (8 and 64 KiB);
 *   200 pieces of mixed sizes and modes (several groups), unpacked with
 *     the other mode from the one packed;
 *   weft_unpack_next, WEFT_ENOTFOUND past the end, WEFT_ETRUNC for a short
 *     buffer, pieces left unpacked (bodies dropped, the sender released);
 *   four threads packing to one peer and tag at once, four threads
 *     unpacking them at once, every message whole;
 *   a plain message on a pack's tag, and heads that lie (too many pieces,
 *     a body or more groups without a sequence, a bad kind, lengths that
 *     do not add up): WEFT_EPROTO; the same head told true is taken;
 *     bad arguments;
 *   "death": rank 1 dies; rank 0's unpack from it and pack to it fail with
 *     WEFT_EPEERDEAD.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "../common/test_util.h"
#include "weft/weft_pack.h"

#define COMM    7u
#define NOTE    0x79u
#define THREADS 4
#define PER_THR 12

static weft_ctx_t *ctx;
static int rank, size, next, prev;

static const size_t body_sizes[] = {0, 5, 100, 4096, 8192, 9000, 20000, 300000};
#define NBODY (sizeof body_sizes / sizeof body_sizes[0])

/* Piece i of the many-pieces message: its size and mode. */
static size_t many_len(int i)
{
    return i % 17 == 3 ? 70000 : (size_t)(i * 37 % 3001);
}
static int many_mode(int i)
{
    return i % 3 ? WEFT_PACK_CHEAPER : WEFT_PACK_EXPRESS;
}
#define MANY 200

/* Key of a message's data: its sender, a case and an index. */
static uint64_t key(int from, int what, int i)
{
    return (uint64_t)from << 32 | (uint64_t)what << 16 | (uint64_t)i;
}

/* ---- the sending side, in its own thread ---- */

static void send_body(int i)
{
    size_t len = body_sizes[i];
    uint8_t *b = malloc(len + 1);
    test_fill(b, len, key(rank, 1, i));
    weft_pack_t *p;
    MUST(weft_pack_begin(ctx, next, COMM, 1, &p));
    uint64_t l = len;
    MUST(weft_pack(p, &l, sizeof l, WEFT_PACK_EXPRESS));
    MUST(weft_pack(p, b, len, WEFT_PACK_CHEAPER));
    MUST(weft_pack_end(p));
    free(b);
}

static void send_many(void)
{
    uint8_t *bufs[MANY];
    weft_pack_t *p;
    MUST(weft_pack_begin(ctx, next, COMM, 3, &p));
    for (int i = 0; i < MANY; i++) {
        bufs[i] = malloc(many_len(i) + 1);
        test_fill(bufs[i], many_len(i), key(rank, 3, i));
        MUST(weft_pack(p, bufs[i], many_len(i), many_mode(i)));
    }
    MUST(weft_pack_end(p));
    for (int i = 0; i < MANY; i++)
        free(bufs[i]);
}

/* Five pieces; the receiver takes a short first one and leaves the rest. */
static void send_partial(void)
{
    static uint8_t big[100000], small[40];
    test_fill(big, sizeof big, key(rank, 4, 1));
    test_fill(small, sizeof small, key(rank, 4, 0));
    weft_pack_t *p;
    MUST(weft_pack_begin(ctx, next, COMM, 4, &p));
    MUST(weft_pack(p, small, sizeof small, WEFT_PACK_EXPRESS));
    MUST(weft_pack(p, big, sizeof big, WEFT_PACK_EXPRESS));
    MUST(weft_pack(p, big, 3000, WEFT_PACK_CHEAPER));
    MUST(weft_pack(p, big, sizeof big, WEFT_PACK_CHEAPER));
    MUST(weft_pack(p, small, 0, WEFT_PACK_CHEAPER));
    MUST(weft_pack_end(p)); /* the dropped rendezvous let it go */
}

static void *sender(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < NBODY; i++)
        send_body((int)i);
    /* the 300 KiB body went by rendezvous, not through a copy */
    weft_counters_t c;
    MUST(weft_counters_get(ctx, &c));
    LCHECK(c.rdv_sent >= 1);
    send_many();
    send_partial();
    return NULL;
}

/* ---- the receiving side ---- */

static void recv_body(int i)
{
    weft_unpack_t *u;
    MUST(weft_unpack_begin(ctx, prev, COMM, 1, &u));
    LCHECK(weft_unpack_source(u) == prev && weft_unpack_tag(u) == 1);
    size_t n;
    MUST(weft_unpack_next(u, &n));
    LCHECK(n == sizeof(uint64_t));
    uint64_t len = 0;
    MUST(weft_unpack(u, &len, sizeof len, WEFT_PACK_EXPRESS));
    LCHECK(len == body_sizes[i]);
    uint8_t *b = malloc(len + 1);
    MUST(weft_unpack(u, b, len, WEFT_PACK_CHEAPER));
    LCHECK(weft_unpack_next(u, &n) == WEFT_ENOTFOUND);
    LCHECK(weft_unpack(u, b, len, WEFT_PACK_CHEAPER) == WEFT_ENOTFOUND);
    MUST(weft_unpack_end(u));
    LCHECK(test_verify(b, len, key(prev, 1, i)) < 0);
    free(b);
}

static void recv_many(void)
{
    uint8_t *bufs[MANY];
    weft_unpack_t *u;
    MUST(weft_unpack_begin(ctx, prev, COMM, 3, &u));
    for (int i = 0; i < MANY; i++) {
        size_t n = 0;
        MUST(weft_unpack_next(u, &n));
        LCHECK(n == many_len(i));
        bufs[i] = malloc(many_len(i) + 1);
        /* the other mode than the sender's: either way the data arrives */
        int mode = many_mode(i) == WEFT_PACK_EXPRESS ? WEFT_PACK_CHEAPER : WEFT_PACK_EXPRESS;
        MUST(weft_unpack(u, bufs[i], many_len(i), mode));
        if (mode == WEFT_PACK_EXPRESS)
            LCHECK(test_verify(bufs[i], many_len(i), key(prev, 3, i)) < 0);
    }
    MUST(weft_unpack_end(u));
    for (int i = 0; i < MANY; i++) {
        LCHECK(test_verify(bufs[i], many_len(i), key(prev, 3, i)) < 0);
        free(bufs[i]);
    }
}

static void recv_partial(void)
{
    weft_unpack_t *u;
    uint8_t got[16] = {0};
    MUST(weft_unpack_begin(ctx, prev, COMM, 4, &u));
    LCHECK(weft_unpack(u, got, sizeof got, WEFT_PACK_EXPRESS) == WEFT_ETRUNC);
    LCHECK(test_verify(got, sizeof got, key(prev, 4, 0)) < 0);
    /* a rendezvous piece into a short buffer: what fits, and WEFT_ETRUNC */
    LCHECK(weft_unpack(u, got, sizeof got, WEFT_PACK_EXPRESS) == WEFT_ETRUNC);
    LCHECK(test_verify(got, sizeof got, key(prev, 4, 1)) < 0);
    /* three pieces left, one of them by rendezvous: dropped */
    LCHECK(weft_unpack_end(u) == WEFT_ETRUNC);
}

/* The exchange of NewMadeleine's shared-memory example: the client asks for
 * a page with four express fields; the server answers its number, whether
 * it has it, and the page as a cheaper piece. Rank 0 serves rank 1. */
static void dsm(size_t page)
{
    if (size < 2 || rank > 1)
        return;
    uint8_t *buf = malloc(page);
    for (int round = 0; round < 5; round++) {
        int32_t id = rank, num = 40 + round, diff = 0, access = 2;
        int32_t found = round != 3;
        if (rank == 1) {
            weft_pack_t *p;
            MUST(weft_pack_begin(ctx, 0, COMM, 10, &p));
            MUST(weft_pack(p, &id, sizeof id, WEFT_PACK_EXPRESS));
            MUST(weft_pack(p, &num, sizeof num, WEFT_PACK_EXPRESS));
            MUST(weft_pack(p, &diff, sizeof diff, WEFT_PACK_EXPRESS));
            MUST(weft_pack(p, &access, sizeof access, WEFT_PACK_EXPRESS));
            MUST(weft_pack_end(p));
            weft_unpack_t *u;
            int32_t gnum = -1, gfound = -1;
            MUST(weft_unpack_begin(ctx, 0, COMM, 11, &u));
            MUST(weft_unpack(u, &gnum, sizeof gnum, WEFT_PACK_EXPRESS));
            MUST(weft_unpack(u, &gfound, sizeof gfound, WEFT_PACK_EXPRESS));
            if (gfound)
                MUST(weft_unpack(u, buf, page, WEFT_PACK_CHEAPER));
            MUST(weft_unpack_end(u));
            LCHECK(gnum == num && gfound == found);
            if (gfound)
                LCHECK(test_verify(buf, page, key(0, 10, num)) < 0);
        } else {
            weft_unpack_t *u;
            int32_t f[4] = {-1, -1, -1, -1};
            MUST(weft_unpack_begin(ctx, WEFT_ANY_SOURCE, COMM, 10, &u));
            for (int k = 0; k < 4; k++)
                MUST(weft_unpack(u, &f[k], sizeof f[k], WEFT_PACK_EXPRESS));
            int src = weft_unpack_source(u);
            MUST(weft_unpack_end(u));
            LCHECK(src == 1 && f[0] == 1 && f[1] == num && f[2] == 0 && f[3] == 2);
            test_fill(buf, page, key(0, 10, f[1]));
            weft_pack_t *p;
            MUST(weft_pack_begin(ctx, src, COMM, 11, &p));
            MUST(weft_pack(p, &f[1], sizeof f[1], WEFT_PACK_EXPRESS));
            MUST(weft_pack(p, &found, sizeof found, WEFT_PACK_EXPRESS));
            if (found)
                MUST(weft_pack(p, buf, page, WEFT_PACK_CHEAPER));
            MUST(weft_pack_end(p));
        }
    }
    free(buf);
}

/* ---- threads packing and unpacking one peer and tag at once ---- */

static void *thr_send(void *arg)
{
    int t = (int)(intptr_t)arg;
    static _Thread_local uint8_t buf[50000];
    for (int m = 0; m < PER_THR; m++) {
        uint32_t who[2] = {(uint32_t)t, (uint32_t)m};
        size_t len = m % 3 == 0 ? sizeof buf : (size_t)(m * 811 % 9000);
        test_fill(buf, len, key(rank, 20 + t, m));
        weft_pack_t *p;
        MUST(weft_pack_begin(ctx, next, COMM, 20, &p));
        MUST(weft_pack(p, who, sizeof who, WEFT_PACK_EXPRESS));
        uint64_t l = len;
        MUST(weft_pack(p, &l, sizeof l, WEFT_PACK_EXPRESS));
        MUST(weft_pack(p, buf, len, WEFT_PACK_CHEAPER));
        MUST(weft_pack(p, buf, len / 2, WEFT_PACK_CHEAPER));
        MUST(weft_pack_end(p));
    }
    return NULL;
}

static atomic_int seen[THREADS];

static void *thr_recv(void *arg)
{
    (void)arg;
    static _Thread_local uint8_t buf[50000], half[25000];
    for (int m = 0; m < PER_THR; m++) {
        weft_unpack_t *u;
        uint32_t who[2];
        uint64_t l = 0;
        MUST(weft_unpack_begin(ctx, prev, COMM, 20, &u));
        MUST(weft_unpack(u, who, sizeof who, WEFT_PACK_EXPRESS));
        MUST(weft_unpack(u, &l, sizeof l, WEFT_PACK_EXPRESS));
        LCHECK(who[0] < THREADS && l <= sizeof buf);
        MUST(weft_unpack(u, buf, sizeof buf, WEFT_PACK_CHEAPER));
        MUST(weft_unpack(u, half, sizeof half, WEFT_PACK_CHEAPER));
        MUST(weft_unpack_end(u));
        if (who[0] < THREADS && l <= sizeof buf) {
            uint64_t k = key(prev, 20 + (int)who[0], (int)who[1]);
            LCHECK(test_verify(buf, l, k) < 0 && test_verify(half, l / 2, k) < 0);
            atomic_fetch_add(&seen[who[0]], 1);
        }
    }
    return NULL;
}

static void threads(void)
{
    pthread_t s[THREADS], r[THREADS];
    for (int t = 0; t < THREADS; t++) {
        pthread_create(&s[t], NULL, thr_send, (void *)(intptr_t)t);
        pthread_create(&r[t], NULL, thr_recv, NULL);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(s[t], NULL);
        pthread_join(r[t], NULL);
    }
    for (int t = 0; t < THREADS; t++)
        LCHECK(atomic_load(&seen[t]) == PER_THR);
}

static void bad_input(void)
{
    weft_pack_t *p;
    weft_unpack_t *u;
    LCHECK(weft_pack_begin(ctx, size, COMM, 1, &p) == WEFT_ERANK);
    LCHECK(weft_pack_begin(ctx, -1, COMM, 1, &p) == WEFT_ERANK);
    LCHECK(weft_pack_begin(ctx, 0, COMM, WEFT_ANY_TAG, &p) == WEFT_ETAG);
    LCHECK(weft_pack_begin(NULL, 0, COMM, 1, &p) == WEFT_EINVAL);
    LCHECK(weft_unpack_begin(ctx, size, COMM, 1, &u) == WEFT_ERANK);
    LCHECK(weft_pack_end(NULL) == WEFT_EINVAL && weft_unpack_end(NULL) == WEFT_EINVAL);
    /* a message that is not a pack's, on a pack's tag */
    uint8_t junk[40];
    test_fill(junk, sizeof junk, 99);
    weft_request_t *req;
    MUST(weft_sr_isend(ctx, next, COMM, 30, junk, sizeof junk, &req));
    LCHECK(weft_unpack_begin(ctx, prev, COMM, 30, &u) == WEFT_EPROTO);
    MUST(weft_sr_wait(ctx, req, NULL));
    /* heads with the right magic that lie: every one refused before any
     * piece is read (the layout: magic, pieces, flags, sequence, table);
     * the sixth tells the truth and is taken */
    for (int bad = 0; bad < 6; bad++) {
        uint8_t h[16 + 8 * 2 + 8] = {0};
        uint32_t magic = 0x31706b77u; /* what pack.c writes, little-endian */
        memcpy(h, &magic, 4);
        uint16_t n = 2, flags = 0;
        uint64_t seq = 0, e0 = 4 | (uint64_t)1 << 56, e1 = 4 | (uint64_t)1 << 56;
        size_t len = sizeof h;
        switch (bad) {
        case 0:
            n = 65;
            break; /* more pieces than a group */
        case 1:
            e1 = 4 | (uint64_t)3 << 56;
            break; /* a body without a sequence */
        case 2:
            e1 = 4 | (uint64_t)9 << 56;
            break; /* no such kind */
        case 3:
            e1 = 5 | (uint64_t)1 << 56;
            break; /* lengths that do not add up */
        case 4:
            flags = 1;
            break; /* "more groups" without a sequence */
        }
        memcpy(h + 4, &n, 2);
        memcpy(h + 6, &flags, 2);
        memcpy(h + 8, &seq, 8);
        memcpy(h + 16, &e0, 8);
        memcpy(h + 24, &e1, 8);
        h[32] = 7;
        h[36] = 9;
        MUST(weft_sr_isend(ctx, next, COMM, 32, h, len, &req));
        if (bad < 5) {
            LCHECK(weft_unpack_begin(ctx, prev, COMM, 32, &u) == WEFT_EPROTO);
        } else {
            int32_t a = 0, b = 0;
            MUST(weft_unpack_begin(ctx, prev, COMM, 32, &u));
            MUST(weft_unpack(u, &a, sizeof a, WEFT_PACK_EXPRESS));
            MUST(weft_unpack(u, &b, sizeof b, WEFT_PACK_CHEAPER));
            MUST(weft_unpack_end(u));
            LCHECK(a == 7 && b == 9);
        }
        MUST(weft_sr_wait(ctx, req, NULL));
    }
    /* bad modes and pointers, then a valid empty pack */
    MUST(weft_pack_begin(ctx, next, COMM, 31, &p));
    LCHECK(weft_pack(p, junk, 4, 0) == WEFT_EINVAL);
    LCHECK(weft_pack(p, junk, 4, 3) == WEFT_EINVAL);
    LCHECK(weft_pack(p, NULL, 4, WEFT_PACK_EXPRESS) == WEFT_EINVAL);
    MUST(weft_pack_end(p));
    MUST(weft_unpack_begin(ctx, prev, COMM, 31, &u));
    size_t n;
    LCHECK(weft_unpack_next(u, &n) == WEFT_ENOTFOUND);
    LCHECK(weft_unpack(u, junk, 4, 5) == WEFT_EINVAL);
    MUST(weft_unpack_end(u));
}

static int death(void)
{
    if (rank == 1) {
        test_note(ctx, 0, true, NOTE, 50);
        _exit(9);
    }
    if (rank == 0) {
        weft_unpack_t *u;
        test_note(ctx, 1, false, NOTE, 50);
        int rc = weft_unpack_begin(ctx, 1, COMM, 51, &u);
        LCHECK(rc == WEFT_EPEERDEAD);
        static uint8_t big[200000];
        weft_pack_t *p;
        rc = weft_pack_begin(ctx, 1, COMM, 52, &p);
        if (rc == WEFT_OK) {
            weft_pack(p, big, sizeof big, WEFT_PACK_CHEAPER);
            rc = weft_pack_end(p);
        }
        LCHECK(rc == WEFT_EPEERDEAD);
        if (test_failed == 0)
            printf("rank 0: pack peer death seen\n");
        fflush(stdout);
    }
    weft_finalize(ctx);
    return test_summary("mp_pack");
}

int main(int argc, char **argv)
{
    test_watchdog(120);
    weft_init_params_t ip = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                             .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&ip, &ctx));
    rank = test_rank = weft_rank(ctx);
    size = weft_size(ctx);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    if (argc > 1 && strcmp(argv[1], "death") == 0) {
        if (size < 2) {
            printf("mp_pack death: needs 2 ranks; skipped\n");
            weft_finalize(ctx);
            return 77;
        }
        return death();
    }
    pthread_t th;
    pthread_create(&th, NULL, sender, NULL);
    for (size_t i = 0; i < NBODY; i++)
        recv_body((int)i);
    recv_many();
    recv_partial();
    pthread_join(th, NULL);
    test_barrier(ctx, NOTE, 1);
    dsm(8192);
    dsm(65536);
    test_barrier(ctx, NOTE, 2);
    threads();
    test_barrier(ctx, NOTE, 3);
    bad_input();
    test_barrier(ctx, NOTE, 4);
    MUST(weft_finalize(ctx));
    return test_summary("mp_pack");
}
