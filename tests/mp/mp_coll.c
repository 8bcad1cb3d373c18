/* The group collectives (weft_coll.h) between real processes:
 *
 *   every collective on the group of all ranks, blocking: barrier; bcast
 *   from every root, of a buffer and of pieces (in place, and staged); reduce to every root and
 * allreduce with every op on every type it takes, counts 0 to 3000, in place too; allgather and
 *   alltoall; each result checked element by element;
 *   a subgroup (the odd ranks, in reverse order) on its own engine id, the
 *   others calling nothing;
 *   a schedule built by hand on the engine (weft_sched_*), with a step
 *   that adds the next round;
 *   non-blocking: several collectives of two groups in flight at once,
 *   completing into a queue and flags;
 *   with a progress thread (WEFT_PROGRESS_THREAD=1): a non-blocking
 *   allreduce ends while the application only reads its flag, calling
 *   nothing of weft;
 *   bad arguments, after which the group still works;
 *   a non-blocking collective still in flight at finalize, signaled there
 *   with WEFT_ECANCELED;
 *   "death": rank 1 dies; every other rank's allreduce ends with
 *   WEFT_EPEERDEAD or WEFT_EMEMBER, none waits for ever.
 */
#include <stdlib.h>

#include "../common/test_util.h"
#include "weft/weft_coll.h"

#define COMM_ALL  21u
#define COMM_SUB  22u
#define COMM_PAIR 23u
#define COMM_HAND 24u
#define NOTE      0x7cu

static weft_ctx_t *ctx;
static int rank, size;

static const size_t counts[] = {0, 1, 5, 3000};
#define NCOUNTS (sizeof counts / sizeof counts[0])

static const size_t tsize[WEFT_COLL_NDTYPES] = {1, 4, 4, 8, 8, 4, 8};

/* Member i's element j for op (small integers: every type holds them, and
 * floating sums and products stay exact). */
static int64_t value(int i, size_t j, weft_coll_op_t op)
{
    if (op == WEFT_COLL_PROD)
        return 1 + (int64_t)((i + j) % 2);
    return (int64_t)((i * 37 + j * 11) % 1000);
}

static void put(void *buf, weft_coll_dtype_t t, size_t j, int64_t v)
{
    switch (t) {
    case WEFT_COLL_INT32:
        ((int32_t *)buf)[j] = (int32_t)v;
        break;
    case WEFT_COLL_UINT32:
        ((uint32_t *)buf)[j] = (uint32_t)v;
        break;
    case WEFT_COLL_INT64:
        ((int64_t *)buf)[j] = v;
        break;
    case WEFT_COLL_UINT64:
        ((uint64_t *)buf)[j] = (uint64_t)v;
        break;
    case WEFT_COLL_FLOAT:
        ((float *)buf)[j] = (float)v;
        break;
    case WEFT_COLL_DOUBLE:
        ((double *)buf)[j] = (double)v;
        break;
    default:
        ((uint8_t *)buf)[j] = (uint8_t)v;
        break;
    }
}

static int64_t get(const void *buf, weft_coll_dtype_t t, size_t j)
{
    switch (t) {
    case WEFT_COLL_INT32:
        return ((const int32_t *)buf)[j];
    case WEFT_COLL_UINT32:
        return ((const uint32_t *)buf)[j];
    case WEFT_COLL_INT64:
        return ((const int64_t *)buf)[j];
    case WEFT_COLL_UINT64:
        return (int64_t)((const uint64_t *)buf)[j];
    case WEFT_COLL_FLOAT:
        return (int64_t)((const float *)buf)[j];
    case WEFT_COLL_DOUBLE:
        return (int64_t)((const double *)buf)[j];
    default:
        return ((const uint8_t *)buf)[j];
    }
}

static int64_t fold(int64_t a, int64_t b, weft_coll_op_t op)
{
    switch (op) {
    case WEFT_COLL_SUM:
        return a + b;
    case WEFT_COLL_PROD:
        return a * b;
    case WEFT_COLL_MIN:
        return a < b ? a : b;
    case WEFT_COLL_MAX:
        return a > b ? a : b;
    case WEFT_COLL_BAND:
        return a & b;
    case WEFT_COLL_BOR:
        return a | b;
    default:
        return a ^ b;
    }
}

/* The reduction over the n members of element j. */
static int64_t expect(int n, size_t j, weft_coll_op_t op)
{
    int64_t acc = value(0, j, op);
    for (int i = 1; i < n; i++)
        acc = fold(acc, value(i, j, op), op);
    return acc;
}

static bool is_float(weft_coll_dtype_t t)
{
    return t == WEFT_COLL_FLOAT || t == WEFT_COLL_DOUBLE;
}

/* Every op on every type it takes, at every count: reduce to each root (in
 * place at the root every other time), allreduce (in place for odd counts). */
static void reductions(weft_coll_group_t *g)
{
    int me = weft_coll_group_rank(g), n = weft_coll_group_size(g);
    long bad = 0;
    for (int t = WEFT_COLL_INT32; t < WEFT_COLL_NDTYPES; t++)
        for (int op = 0; op < WEFT_COLL_NOPS; op++) {
            if (op >= WEFT_COLL_BAND && is_float(t))
                continue;
            for (size_t c = 0; c < NCOUNTS; c++) {
                size_t cnt = counts[c];
                uint8_t *src = malloc(cnt * tsize[t] + 1), *dst = malloc(cnt * tsize[t] + 1);
                for (int root = 0; root < n; root++) {
                    for (size_t j = 0; j < cnt; j++)
                        put(src, t, j, value(me, j, op));
                    bool inplace = me == root && root % 2;
                    CHECK(weft_coll_reduce(g, src, inplace ? src : dst, cnt, t, op, root, NULL,
                                           NULL) == WEFT_OK);
                    if (me == root)
                        for (size_t j = 0; j < cnt; j++)
                            bad += get(inplace ? src : dst, t, j) != expect(n, j, op);
                }
                for (size_t j = 0; j < cnt; j++)
                    put(src, t, j, value(me, j, op));
                bool inplace = cnt % 2;
                CHECK(weft_coll_allreduce(g, src, inplace ? src : dst, cnt, t, op, NULL, NULL) ==
                      WEFT_OK);
                for (size_t j = 0; j < cnt; j++)
                    bad += get(inplace ? src : dst, t, j) != expect(n, j, op);
                free(src);
                free(dst);
            }
        }
    CHECK(bad == 0);
}

static void movements(weft_coll_group_t *g)
{
    int me = weft_coll_group_rank(g), n = weft_coll_group_size(g);
    long bad = 0;
    CHECK(weft_coll_barrier(g, NULL, NULL) == WEFT_OK);
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t cnt = counts[c] * 3 + 1;
        double *buf = malloc(cnt * sizeof(double));
        for (int root = 0; root < n; root++) {
            for (size_t j = 0; j < cnt; j++)
                buf[j] = me == root ? (double)(root * 100000 + (int)j) : -1;
            CHECK(weft_coll_bcast(g, buf, cnt, WEFT_COLL_DOUBLE, root, NULL, NULL) == WEFT_OK);
            for (size_t j = 0; j < cnt; j++)
                bad += buf[j] != (double)(root * 100000 + (int)j);
        }
        free(buf);
        uint8_t *src = malloc(cnt * (size_t)n), *dst = malloc(cnt * (size_t)n);
        for (size_t j = 0; j < cnt; j++)
            src[j] = (uint8_t)(me * 7 + j);
        memset(dst, 0xee, cnt * (size_t)n);
        CHECK(weft_coll_allgather(g, src, dst, cnt, WEFT_COLL_BYTE, NULL, NULL) == WEFT_OK);
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < cnt; j++)
                bad += dst[(size_t)i * cnt + j] != (uint8_t)(i * 7 + j);
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < cnt; j++)
                src[(size_t)i * cnt + j] = (uint8_t)(me * 31 + i * 5 + j);
        memset(dst, 0xee, cnt * (size_t)n);
        CHECK(weft_coll_alltoall(g, src, dst, cnt, WEFT_COLL_BYTE, NULL, NULL) == WEFT_OK);
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < cnt; j++)
                bad += dst[(size_t)i * cnt + j] != (uint8_t)(i * 31 + me * 5 + j);
        free(src);
        free(dst);
    }
    CHECK(bad == 0);
}

/* bcastv from every root: 3 pieces (sent and received in place) and 40
 * (through a staging buffer), each piece checked. */
static void pieces(weft_coll_group_t *g)
{
    int me = weft_coll_group_rank(g), n = weft_coll_group_size(g);
    enum { MAXP = 40 };
    const int npieces[] = {3, MAXP};
    uint8_t *bufs[MAXP];
    struct iovec iov[MAXP];
    long bad = 0;
    for (int c = 0; c < 2; c++)
        for (int root = 0; root < n; root++) {
            int np = npieces[c];
            for (int i = 0; i < np; i++) {
                iov[i].iov_len = (size_t)(i * 37 % 500 + (i % 3 == 0 ? 0 : 1));
                bufs[i] = malloc(iov[i].iov_len + 1);
                iov[i].iov_base = bufs[i];
                for (size_t j = 0; j < iov[i].iov_len; j++)
                    bufs[i][j] = me == root ? (uint8_t)(root * 13 + i * 7 + j) : 0xee;
            }
            CHECK(weft_coll_bcastv(g, iov, np, root, NULL, NULL) == WEFT_OK);
            for (int i = 0; i < np; i++) {
                for (size_t j = 0; j < iov[i].iov_len; j++)
                    bad += bufs[i][j] != (uint8_t)(root * 13 + i * 7 + j);
                free(bufs[i]);
            }
        }
    CHECK(bad == 0);
    CHECK(weft_coll_bcastv(g, NULL, 2, 0, NULL, NULL) == WEFT_EINVAL);
}

/* A schedule built by hand on the engine (no front: bytes): a ring shift,
 * then a call step that adds a second shift the other way, started and
 * polled; extra bytes of the caller's. */
typedef struct ring {
    int64_t out, in, back;
    int calls;
} ring_t;

static int ring_again(weft_sched_t *s, void *arg)
{
    ring_t *r = arg;
    r->calls++;
    if (r->in != (rank - 1 + size) % size * 1000)
        return WEFT_EPROTO; /* becomes the schedule's error */
    weft_sched_phase(s);
    uint64_t tag = weft_coll_tag(7, weft_sched_phase_of(s), 0);
    weft_sched_send(s, (rank - 1 + size) % size, COMM_HAND, tag, &r->in, sizeof r->in, NULL);
    weft_sched_recv(s, (rank + 1) % size, COMM_HAND, tag, &r->back, sizeof r->back, NULL);
    weft_sched_round(s);
    return 0;
}

static void by_hand(void)
{
    weft_sched_t *s = weft_sched_new(ctx, NULL, sizeof(ring_t));
    CHECK(s != NULL);
    if (!s)
        return;
    ring_t *r = weft_sched_extra(s);
    CHECK(r->calls == 0 && r->in == 0); /* zeroed */
    r->out = rank * 1000;
    uint64_t tag = weft_coll_tag(7, weft_sched_phase_of(s), 0);
    CHECK(weft_sched_send(s, (rank + 1) % size, COMM_HAND, tag, &r->out, sizeof r->out, NULL) == 0);
    CHECK(weft_sched_recv(s, (rank - 1 + size) % size, COMM_HAND, tag, &r->in, sizeof r->in,
                          NULL) == 0);
    weft_sched_round(s);
    CHECK(weft_sched_call(s, ring_again, r) == 0);
    CHECK(weft_sched_start(s) == 0);
    bool done = false;
    int err = 0;
    while (!done) {
        err = weft_sched_poll(s, &done);
        if (!done)
            weft_progress(ctx);
    }
    CHECK(err == 0 && r->calls == 1);
    CHECK(r->back == rank * 1000); /* ours, there and back */
    weft_sched_free(s);
}

/* Three collectives of g and one of sub (when a member) in flight at once. */
static void nonblocking(weft_coll_group_t *g, weft_coll_group_t *sub)
{
    enum { N = 3000 };
    weft_cq_t *cq;
    MUST(weft_cq_create(16, &cq));
    int64_t a[N], b[N], r1[N], r2[N];
    for (int j = 0; j < N; j++) {
        a[j] = value(rank, (size_t)j, WEFT_COLL_SUM);
        b[j] = rank == 0 ? j * 3 : -1;
    }
    weft_flag_t f;
    weft_flag_init(&f);
    int tags[4] = {1, 2, 3, 4};
    MUST(weft_coll_allreduce(g, a, r1, N, WEFT_COLL_INT64, WEFT_COLL_SUM, weft_cq_comp(cq),
                             &tags[0]));
    MUST(weft_coll_bcast(g, b, N, WEFT_COLL_INT64, 0, weft_cq_comp(cq), &tags[1]));
    MUST(weft_coll_barrier(g, weft_flag_comp(&f), &tags[2]));
    int want = 3;
    if (sub) {
        MUST(weft_coll_allreduce(sub, a, r2, N, WEFT_COLL_INT64, WEFT_COLL_MAX, weft_cq_comp(cq),
                                 &tags[3]));
        want++;
    }
    int seen = 0, mask = 0;
    weft_comp_entry_t e;
    while (seen < want - 1) {
        CHECK(weft_cq_wait_pop(cq, ctx, &e) == WEFT_OK);
        CHECK(e.error == WEFT_OK);
        CHECK(e.source == rank);
        mask |= 1 << (*(int *)e.user_context - 1);
        seen++;
    }
    CHECK(weft_flag_wait(&f, ctx, &e) == WEFT_OK);
    CHECK(e.error == WEFT_OK && e.user_context == &tags[2] && e.length == 0);
    CHECK(mask == (sub ? 0xb : 0x3));
    long bad = 0;
    for (int j = 0; j < N; j++) {
        bad += r1[j] != expect(size, (size_t)j, WEFT_COLL_SUM);
        bad += b[j] != j * 3;
    }
    if (sub) {
        /* sub's members are the odd ranks: the largest value over them. */
        for (int j = 0; j < N; j++) {
            int64_t m = -1;
            for (int i = 1; i < size; i += 2)
                m = value(i, (size_t)j, WEFT_COLL_SUM) > m ? value(i, (size_t)j, WEFT_COLL_SUM) : m;
            bad += r2[j] != m;
        }
    }
    CHECK(bad == 0);
    weft_cq_free(cq);
}

/* With a progress thread: the collective ends while this thread only reads
 * its flag (weft_flag_test makes no progress). */
static void by_the_progress_thread(weft_coll_group_t *g)
{
    enum { N = 1 << 16 };
    double *a = malloc(N * sizeof(double)), *r = malloc(N * sizeof(double));
    for (int j = 0; j < N; j++)
        a[j] = rank + j % 3;
    weft_flag_t f;
    weft_flag_init(&f);
    MUST(
        weft_coll_allreduce(g, a, r, N, WEFT_COLL_DOUBLE, WEFT_COLL_SUM, weft_flag_comp(&f), NULL));
    weft_comp_entry_t e;
    unsigned long spins = 0;
    while (weft_flag_test(&f, &e) == WEFT_INPROGRESS)
        spins++; /* the application's "computation": no weft call */
    CHECK(e.error == WEFT_OK && e.length == N * sizeof(double));
    long bad = 0;
    for (int j = 0; j < N; j++)
        bad += r[j] != (double)size * (size - 1) / 2 + (double)size * (j % 3);
    CHECK(bad == 0);
    free(a);
    free(r);
    if (rank == 0)
        printf("mp_coll: allreduce of %d doubles ended by the progress thread (%lu spins)\n", N,
               spins);
}

static void bad_arguments(weft_coll_group_t *g)
{
    int x = 0;
    weft_coll_group_t *h;
    CHECK(weft_coll_group_create(NULL, NULL, 0, 30, &h) == WEFT_EINVAL);
    int twice[2] = {0, 0};
    CHECK(weft_coll_group_create(ctx, twice, 2, 30, &h) == WEFT_EINVAL);
    int outside[1] = {size};
    CHECK(weft_coll_group_create(ctx, outside, 1, 30, &h) == WEFT_ERANK);
    if (size > 1) {
        int other[1] = {(rank + 1) % size};
        CHECK(weft_coll_group_create(ctx, other, 1, 30, &h) == WEFT_ERANK); /* not a member */
    }
    CHECK(weft_coll_bcast(g, NULL, 4, WEFT_COLL_INT32, 0, NULL, NULL) == WEFT_EINVAL);
    CHECK(weft_coll_bcast(g, &x, 1, WEFT_COLL_INT32, size, NULL, NULL) == WEFT_EINVAL);
    CHECK(weft_coll_allreduce(g, &x, &x, 1, WEFT_COLL_BYTE, WEFT_COLL_SUM, NULL, NULL) ==
          WEFT_EINVAL);
    CHECK(weft_coll_allreduce(g, &x, &x, 1, WEFT_COLL_FLOAT, WEFT_COLL_BXOR, NULL, NULL) ==
          WEFT_EINVAL);
    CHECK(weft_coll_allreduce(g, &x, &x, 1, (weft_coll_dtype_t)99, WEFT_COLL_SUM, NULL, NULL) ==
          WEFT_EINVAL);
    CHECK(weft_coll_reduce(g, &x, &x, 1, WEFT_COLL_INT32, (weft_coll_op_t)99, 0, NULL, NULL) ==
          WEFT_EINVAL);
    CHECK(weft_coll_barrier(NULL, NULL, NULL) == WEFT_EINVAL);
    /* The failed calls counted alike everywhere: the group still works. */
    int32_t v = rank + 1, sum = 0;
    CHECK(weft_coll_allreduce(g, &v, &sum, 1, WEFT_COLL_INT32, WEFT_COLL_SUM, NULL, NULL) ==
          WEFT_OK);
    CHECK(sum == size * (size + 1) / 2);
}

static int death(weft_coll_group_t *g)
{
    test_barrier(ctx, NOTE, 1); /* every rank is up (tcp: connected) before one dies */
    if (rank == 1)
        _exit(9);
    enum { N = 1000 };
    int64_t a[N], r[N];
    for (int j = 0; j < N; j++)
        a[j] = j;
    int rc = weft_coll_allreduce(g, a, r, N, WEFT_COLL_INT64, WEFT_COLL_SUM, NULL, NULL);
    CHECK(rc == WEFT_EPEERDEAD || rc == WEFT_EMEMBER);
    int rc2 = weft_coll_barrier(g, NULL, NULL);
    CHECK(rc2 == WEFT_EPEERDEAD || rc2 == WEFT_EMEMBER);
    /* The test passes on this line (ranks that die exit non-zero). */
    if (!test_failed)
        printf("rank %d: coll death seen (%s, %s)\n", rank, weft_status_name(rc),
               weft_status_name(rc2));
    fflush(stdout);
    weft_coll_group_free(g);
    weft_finalize(ctx);
    return test_summary("mp_coll");
}

int main(int argc, char **argv)
{
    test_watchdog(300);
    weft_init_params_t ip = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                             .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&ip, &ctx));
    rank = test_rank = weft_rank(ctx);
    size = weft_size(ctx);
    weft_coll_group_t *all, *sub = NULL;
    MUST(weft_coll_group_create(ctx, NULL, 0, COMM_ALL, &all));
    CHECK(weft_coll_group_rank(all) == rank && weft_coll_group_size(all) == size);
    if (argc > 1 && strcmp(argv[1], "death") == 0) {
        if (size < 3) {
            printf("mp_coll death: needs 3 ranks; skipped\n");
            weft_finalize(ctx);
            return 77;
        }
        return death(all);
    }
    int odd[64], nodd = 0;
    for (int r = size - 1; r >= 0 && nodd < 64; r--)
        if (r % 2)
            odd[nodd++] = r;
    if (rank % 2) {
        MUST(weft_coll_group_create(ctx, odd, nodd, COMM_SUB, &sub));
        CHECK(weft_coll_group_size(sub) == nodd);
        CHECK(odd[weft_coll_group_rank(sub)] == rank);
    }
    movements(all);
    pieces(all);
    reductions(all);
    if (sub) {
        movements(sub);
        reductions(sub);
    }
    by_hand();
    nonblocking(all, sub);
    const char *pt = getenv("WEFT_PROGRESS_THREAD");
    if (pt && strcmp(pt, "1") == 0)
        CHECK(weft_progress_thread_running(ctx));
    if (weft_progress_thread_running(ctx))
        by_the_progress_thread(all);
    bad_arguments(all);
    CHECK(weft_coll_barrier(all, NULL, NULL) == WEFT_OK);
    /* A collective still in flight at finalize: rank 0 waits for a bcast
     * from rank 1, which never calls it; finalize signals it canceled. */
    weft_coll_group_t *pair = NULL;
    weft_flag_t pending;
    weft_flag_init(&pending);
    int64_t never[4];
    if (size > 1 && rank == 0) {
        int two[2] = {0, 1};
        MUST(weft_coll_group_create(ctx, two, 2, COMM_PAIR, &pair));
        MUST(weft_coll_bcast(pair, never, 4, WEFT_COLL_INT64, 1, weft_flag_comp(&pending), NULL));
    }
    weft_coll_group_free(sub);
    weft_coll_group_free(all);
    weft_finalize(ctx);
    if (pair) {
        weft_comp_entry_t e;
        CHECK(weft_flag_test(&pending, &e) == WEFT_OK && e.error == WEFT_ECANCELED);
        weft_coll_group_free(pair);
    }
    return test_summary("mp_coll");
}
