/* Multithreaded stress: T threads per rank send and receive at random, with
 * wildcards, and complete with a random mix of test, testany, wait and waitall.
 *
 * Every rank derives the same plan from a seed: each thread of each rank sends
 * MSGS messages to random (rank, thread) pairs, of random sizes (mostly small,
 * some rendezvous, a few large enough for cooperative transfers). A message to
 * thread t is received by thread t of its destination through one of four
 * communicators, which says how it is matched:
 *   comm 4t+0  source and tag given
 *   comm 4t+1  any source, the message's tag
 *   comm 4t+2  the source given, any tag (non-overtaking: in send order)
 *   comm 4t+3  any source and any tag
 * Tags are unique message ids and the bytes derive from them, so whatever a
 * receive matched is checked, and every id must arrive exactly once.
 *
 * A thread posts its sends and receives in a random order, testing random
 * outstanding requests on the way (never blocking until all its operations
 * are posted, so no cycle of waits can form), then completes the rest with
 * waits. Levels: "multiple" (any thread calls at any time) and "serialized"
 * (each call under one application mutex, completion by test only).
 * Arguments: threads [seed [multiple|serialized]]. Waiting policy and progress
 * thread come from the environment (WEFT_WAIT, WEFT_PROGRESS_THREAD). */
#include <pthread.h>
#include <sched.h>

#include "../common/test_util.h"

#define MSGS       64 /* per sending thread */
#define MAX_T      16
#define MAX_RANKS  8
#define WILD_MAX   (48u << 10) /* receives that may match any size post this much */
#define SIZE_LARGE (320u << 10)

typedef struct msg {
    int src, src_t, dst, dst_t;
    int kind; /* 0..3: how it is received */
    size_t size;
} msg_t;

typedef struct op {
    int id;
    bool send;
} op_t;

typedef struct pend {
    weft_request_t *req;
    int id; /* send: message; receive: the message it was posted for */
    bool send;
    uint8_t *buf;
    size_t cap;
    int got; /* receive: the message it delivered */
} pend_t;

static weft_ctx_t *ctx;
static int me, nranks, nthreads;
static bool serialized;
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static msg_t *plan;
static int nmsg;
static uint8_t *seen;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void count(bool ok)
{
    pthread_mutex_lock(&count_lock);
    CHECK(ok);
    pthread_mutex_unlock(&count_lock);
}

static void enter(void)
{
    if (serialized)
        pthread_mutex_lock(&big_lock);
}

static void leave(void)
{
    if (serialized)
        pthread_mutex_unlock(&big_lock);
}

static void make_plan(uint64_t seed)
{
    nmsg = nranks * nthreads * MSGS;
    plan = calloc((size_t)nmsg, sizeof *plan);
    seen = calloc((size_t)nmsg, 1);
    uint64_t s = seed;
    int id = 0;
    for (int r = 0; r < nranks; r++)
        for (int t = 0; t < nthreads; t++)
            for (int k = 0; k < MSGS; k++, id++) {
                msg_t *m = &plan[id];
                m->src = r;
                m->src_t = t;
                m->dst = (int)(rng_next(&s) % (uint64_t)nranks);
                m->dst_t = (int)(rng_next(&s) % (uint64_t)nthreads);
                m->kind = (int)(rng_next(&s) % 4);
                uint64_t p = rng_next(&s) % 100;
                m->size = p < 70   ? rng_next(&s) % 2048
                          : p < 95 ? 2048 + rng_next(&s) % (WILD_MAX - 2048)
                                   : SIZE_LARGE;
                if (m->kind != 0 && m->size > WILD_MAX)
                    m->size = WILD_MAX; /* a wildcard receive does not know the size */
            }
}

static uint32_t comm_of(const msg_t *m)
{
    return (uint32_t)(4 * m->dst_t + m->kind);
}

/* Post the receive for message id (wildcards per its kind). */
static int post_recv(int id, pend_t *p)
{
    const msg_t *m = &plan[id];
    p->cap = m->kind == 0 ? (m->size ? m->size : 1) : WILD_MAX;
    p->buf = malloc(p->cap);
    p->id = id;
    p->send = false;
    p->got = -1;
    int src = m->kind == 1 || m->kind == 3 ? WEFT_ANY_SOURCE : m->src;
    uint64_t tag = m->kind >= 2 ? WEFT_ANY_TAG : (uint64_t)id;
    enter();
    int rc = weft_sr_irecv(ctx, src, comm_of(m), tag, p->buf, p->cap, &p->req);
    leave();
    return rc;
}

static int post_send(int id, pend_t *p)
{
    const msg_t *m = &plan[id];
    p->cap = m->size;
    p->buf = malloc(m->size ? m->size : 1);
    test_fill(p->buf, m->size, (uint64_t)id);
    p->id = id;
    p->send = true;
    enter();
    int rc = weft_sr_isend(ctx, m->dst, comm_of(m), (uint64_t)id, p->buf, m->size, &p->req);
    leave();
    return rc;
}

/* A request completed: check what it delivered. */
static void finish(int t, pend_t *p, int rc, const weft_status_t *st)
{
    count(rc == WEFT_OK);
    if (!p->send && rc == WEFT_OK) {
        int id = (int)st->tag;
        bool valid = st->tag < (uint64_t)nmsg;
        count(valid);
        if (valid) {
            const msg_t *m = &plan[id];
            count(m->dst == me && m->dst_t == t && st->source == m->src && st->length == m->size);
            count(test_verify(p->buf, st->length, (uint64_t)id) < 0);
            pthread_mutex_lock(&count_lock);
            CHECK(!seen[id]);
            seen[id] = 1;
            pthread_mutex_unlock(&count_lock);
            p->got = id;
        }
    }
    free(p->buf);
    p->req = NULL;
}

static bool try_one(int t, pend_t *p)
{
    int flag = 0;
    weft_status_t st;
    enter();
    int rc = weft_sr_test(ctx, p->req, &flag, &st);
    leave();
    if (flag)
        finish(t, p, rc, &st);
    return flag;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t s = 0x5eed0000ull + (uint64_t)(me * MAX_T + t);
    int nops = 0;
    op_t *ops = malloc(sizeof(op_t) * (size_t)nmsg * 2);
    for (int id = 0; id < nmsg; id++) {
        if (plan[id].src == me && plan[id].src_t == t)
            ops[nops++] = (op_t){id, true};
        if (plan[id].dst == me && plan[id].dst_t == t)
            ops[nops++] = (op_t){id, false};
    }
    /* Shuffle, then put the sends back in id order among themselves, and the
     * kind-2 receives too (both streams are matched by order). */
    for (int i = nops - 1; i > 0; i--) {
        int j = (int)(rng_next(&s) % (uint64_t)(i + 1));
        op_t tmp = ops[i];
        ops[i] = ops[j];
        ops[j] = tmp;
    }
    for (int group = 0; group < 2; group++) {
        int *pos = malloc(sizeof(int) * (size_t)nops), n = 0;
        for (int i = 0; i < nops; i++)
            if (group == 0 ? ops[i].send : !ops[i].send && plan[ops[i].id].kind == 2)
                pos[n++] = i;
        for (int a = 1; a < n; a++) /* insertion sort of the ids at those positions */
            for (int b = a; b > 0 && ops[pos[b - 1]].id > ops[pos[b]].id; b--) {
                int tmp = ops[pos[b]].id;
                ops[pos[b]].id = ops[pos[b - 1]].id;
                ops[pos[b - 1]].id = tmp;
            }
        free(pos);
    }

    pend_t *pend = calloc((size_t)nops, sizeof *pend);
    for (int i = 0; i < nops; i++) {
        int rc = ops[i].send ? post_send(ops[i].id, &pend[i]) : post_recv(ops[i].id, &pend[i]);
        count(rc == WEFT_OK);
        /* Test a few random outstanding requests on the way. */
        for (int k = 0; k < 2; k++) {
            int j = (int)(rng_next(&s) % (uint64_t)(i + 1));
            if (pend[j].req)
                try_one(t, &pend[j]);
        }
    }
    /* Complete the rest: wait, waitall on a run, testany, or test loops. */
    for (int i = 0; i < nops; i++) {
        if (!pend[i].req)
            continue;
        uint64_t how = serialized ? 0 : rng_next(&s) % 3;
        if (how == 1) {
            weft_status_t st;
            int rc = weft_sr_wait(ctx, pend[i].req, &st);
            finish(t, &pend[i], rc, &st);
        } else if (how == 2) {
            weft_request_t *reqs[4];
            weft_status_t sts[4];
            int idx[4], n = 0;
            for (int j = i; j < nops && n < 4; j++)
                if (pend[j].req) {
                    idx[n] = j;
                    reqs[n++] = pend[j].req;
                }
            weft_sr_waitall(ctx, n, reqs, sts);
            for (int k = 0; k < n; k++)
                finish(t, &pend[idx[k]], sts[k].error, &sts[k]);
        } else {
            while (!try_one(t, &pend[i]))
                sched_yield();
        }
    }
    /* Non-overtaking: the kind-2 receives, in posting order, got each sender
     * thread's messages in its send (id) order. */
    int last[MAX_RANKS][MAX_T];
    for (int r = 0; r < MAX_RANKS; r++)
        for (int u = 0; u < MAX_T; u++)
            last[r][u] = -1;
    for (int i = 0; i < nops; i++) {
        if (pend[i].send || plan[pend[i].id].kind != 2 || pend[i].got < 0)
            continue;
        const msg_t *m = &plan[pend[i].got];
        count(pend[i].got > last[m->src][m->src_t]);
        last[m->src][m->src_t] = pend[i].got;
    }
    free(pend);
    free(ops);
    return NULL;
}

int main(int argc, char **argv)
{
    test_watchdog(240);
    nthreads = argc > 1 ? atoi(argv[1]) : 4;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 42;
    serialized = argc > 3 && !strcmp(argv[3], "serialized");
    if (nthreads < 1 || nthreads > MAX_T)
        nthreads = 4;
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level =
                                     serialized ? WEFT_THREAD_SERIALIZED : WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&params, &ctx));
    me = test_rank = weft_rank(ctx);
    nranks = weft_size(ctx);
    if (nranks > MAX_RANKS) {
        fprintf(stderr, "mp_stress runs on at most %d ranks\n", MAX_RANKS);
        return 2;
    }
    make_plan(seed);
    pthread_t th[MAX_T];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    int expected = 0, got = 0;
    for (int id = 0; id < nmsg; id++)
        if (plan[id].dst == me) {
            expected++;
            got += seen[id];
        }
    CHECK(got == expected);
    MUST(weft_finalize(ctx));
    if (me == 0)
        printf("mp_stress: %d ranks x %d threads, %d messages, %s\n", nranks, nthreads, nmsg,
               serialized ? "serialized" : "multiple");
    free(plan);
    free(seen);
    return test_summary("mp_stress");
}
