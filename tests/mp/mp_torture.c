/* Randomized torture test. Every rank derives the same plan from a seed: a few
 * thousand messages with random source, destination (itself included), size
 * (mostly small, some around the rendezvous threshold, a few of several MiB)
 * and communicator. The communicator says how the message is received:
 *   comm 0  fully specified (source, tag)
 *   comm 1  any source, with the tag
 *   comm 2  any tag, with the source
 *   comm 3  any source and any tag
 * The tag of every message is its unique id, and its bytes derive from (id,
 * source), so every receive is checked whatever it matched, and every id must
 * arrive exactly once: no loss, no duplicate, no mix-up. Within a comm each
 * rank posts exactly as many receives per matching key as messages come, so
 * none starves. Each rank interleaves its sends and receive postings in its own
 * random order (also derived from the seed, so a receiver knows the order in
 * which each sender sends on comm 2, and checks non-overtaking on it), testing
 * random requests on the way; then it completes the rest with a random mix of
 * wait, waitall, test and testany.
 * Arguments: [seed [messages [rounds]]]. With rounds > 1 the whole plan runs
 * again with the next seed, in the same context, after a barrier (no message
 * of one round can match a receive of the next); a negative value -S runs
 * rounds for S seconds (rank 0 decides). Every 10 rounds, and after the last,
 * rank 0 prints its resident memory: the soak run (bench/soak.sh) checks it
 * stays flat. */
#include <malloc.h>
#include <sched.h>
#include <time.h>

#include "../common/test_util.h"

#define NCOMM         4
#define COMM_ROUNDS   NCOMM /* the between-round barrier */
#define MAX_RANKS     16
#define WILD_SIZE_MAX (48u << 10) /* comm 3 receives are posted with the largest */

typedef struct msg {
    int src, dst;
    uint32_t comm;
    size_t size;
} msg_t;

typedef struct op {
    int id;    /* message */
    bool send; /* send it, or post a receive for it */
} op_t;

/* An outstanding request and what it was for. */
typedef struct pending {
    bool send;
    int id; /* send: the message; receive: the message it should get, or -1 */
    uint32_t comm;
    uint8_t *buf;
    size_t len;
} pending_t;

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int me, nranks, nmsg;
static msg_t *plan;
static op_t *ops[MAX_RANKS];
static int nops[MAX_RANKS];
static uint8_t *seen;
static long received, sent;

static pending_t *pend;
static weft_request_t **reqs;
static int npend, nleft;

static uint64_t body_key(int id, int src)
{
    return ((uint64_t)id << 8) ^ (uint64_t)src ^ 0x70u;
}

static void make_plan(uint64_t seed)
{
    uint64_t s = seed;
    for (int i = 0; i < nmsg; i++) {
        msg_t *m = &plan[i];
        m->src = (int)(rng_next(&s) % (uint64_t)nranks);
        m->dst = (int)(rng_next(&s) % (uint64_t)nranks);
        m->comm = (uint32_t)(rng_next(&s) % NCOMM);
        uint64_t cls = rng_next(&s) % 1000, r = rng_next(&s);
        if (cls < 840)
            m->size = r % 2049;
        else if (cls < 985)
            m->size = 2048 + r % (96u << 10);
        else
            m->size = (96u << 10) + r % (3u << 20);
        if (m->comm == 3 && m->size > WILD_SIZE_MAX)
            m->size = r % (WILD_SIZE_MAX + 1);
    }
    /* Each rank's order of operations: Fisher-Yates with its own stream. */
    for (int r = 0; r < nranks; r++) {
        int n = 0;
        for (int i = 0; i < nmsg; i++) {
            if (plan[i].src == r)
                n++;
            if (plan[i].dst == r)
                n++;
        }
        ops[r] = malloc(sizeof(op_t) * (size_t)(n ? n : 1));
        nops[r] = 0;
        for (int i = 0; i < nmsg; i++) {
            if (plan[i].src == r)
                ops[r][nops[r]++] = (op_t){i, true};
            if (plan[i].dst == r)
                ops[r][nops[r]++] = (op_t){i, false};
        }
        uint64_t rs = seed ^ (0xA0761D6478BD642Full * (uint64_t)(r + 1));
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(rng_next(&rs) % (uint64_t)(i + 1));
            op_t t = ops[r][i];
            ops[r][i] = ops[r][j];
            ops[r][j] = t;
        }
    }
}

static void complete(int k, int rc, const weft_status_t *st)
{
    pending_t *p = &pend[k];
    nleft--;
    if (p->send) {
        if (rc != WEFT_OK)
            fprintf(stderr, "[rank %d] send of message %d failed: %s\n", me, p->id,
                    weft_strerror(rc));
        CHECK(rc == WEFT_OK);
        sent++;
        free(p->buf);
        p->buf = NULL;
        return;
    }
    received++;
    CHECK(rc == WEFT_OK && st->error == rc);
    uint64_t id = st->tag;
    if (rc != WEFT_OK || id >= (uint64_t)nmsg) {
        fprintf(stderr, "[rank %d] receive on comm %u: %s, tag %llu from %d\n", me, p->comm,
                weft_strerror(rc), (unsigned long long)id, st->source);
        CHECK(id < (uint64_t)nmsg);
        free(p->buf);
        p->buf = NULL;
        return;
    }
    const msg_t *m = &plan[id];
    CHECK(m->dst == me);
    CHECK(st->source == m->src && st->comm == m->comm && p->comm == m->comm);
    CHECK(st->length == m->size);
    if (p->id >= 0 && (uint64_t)p->id != id)
        fprintf(stderr, "[rank %d] comm %u receive expected message %d, got %llu\n", me, p->comm,
                p->id, (unsigned long long)id);
    CHECK(p->id < 0 || (uint64_t)p->id == id);
    if (seen[id])
        fprintf(stderr, "[rank %d] message %llu received twice\n", me, (unsigned long long)id);
    CHECK(!seen[id]);
    seen[id] = 1;
    long bad =
        test_verify(p->buf, st->length < p->len ? st->length : p->len, body_key((int)id, m->src));
    if (bad >= 0)
        fprintf(stderr, "[rank %d] message %llu (%zu B from %d, comm %u): wrong byte at %ld\n", me,
                (unsigned long long)id, m->size, m->src, m->comm, bad);
    CHECK(bad < 0);
    free(p->buf);
    p->buf = NULL;
}

static void idle_pause(int *idle)
{
    if (++*idle >= 16) {
        *idle = 0;
        sched_yield();
    }
}

/* One run of the plan of seed; verbose: print the counters line. */
static void torture_round(weft_ctx_t *ctx, uint64_t seed, bool verbose)
{
    received = sent = 0;
    npend = nleft = 0;
    plan = calloc((size_t)nmsg, sizeof *plan);
    seen = calloc((size_t)nmsg, 1);
    if (!plan || !seen)
        exit(1);
    make_plan(seed);

    /* For comm 2 (any tag, known source) the k-th receive this rank posts for
     * source s must get the k-th comm-2 message s sends here, in s's order. */
    int *order2[MAX_RANKS], n2[MAX_RANKS], next2[MAX_RANKS];
    size_t wild_max = 0;
    for (int s = 0; s < nranks; s++) {
        order2[s] = malloc(sizeof(int) * (size_t)(nops[s] + 1));
        n2[s] = next2[s] = 0;
        for (int k = 0; k < nops[s]; k++) {
            const op_t *o = &ops[s][k];
            if (o->send && plan[o->id].dst == me && plan[o->id].comm == 2)
                order2[s][n2[s]++] = o->id;
        }
    }
    for (int i = 0; i < nmsg; i++)
        if (plan[i].dst == me && plan[i].comm == 3 && plan[i].size > wild_max)
            wild_max = plan[i].size;

    int n = nops[me];
    pend = calloc((size_t)(n ? n : 1), sizeof *pend);
    reqs = calloc((size_t)(n ? n : 1), sizeof *reqs);
    if (!pend || !reqs)
        exit(1);
    uint64_t rs = seed * 31 + (uint64_t)me;
    weft_status_t st;
    int flag, index, idle = 0;

    /* Phase 1: post everything in this rank's order, never blocking (a blocking
     * wait here could wait for a peer that waits for us), testing on the way. */
    for (int k = 0; k < n; k++) {
        const op_t *o = &ops[me][k];
        const msg_t *m = &plan[o->id];
        pending_t *p = &pend[npend];
        p->send = o->send;
        p->comm = m->comm;
        if (o->send) {
            p->id = o->id;
            p->len = m->size;
            p->buf = malloc(m->size ? m->size : 1);
            test_fill(p->buf, m->size, body_key(o->id, me));
            MUST(weft_sr_isend(ctx, m->dst, m->comm, (uint64_t)o->id, p->buf, m->size,
                               &reqs[npend]));
        } else {
            int src = m->src;
            uint64_t tag = (uint64_t)o->id;
            switch (m->comm) {
            case 0:
                p->id = o->id;
                p->len = m->size;
                break;
            case 1:
                p->id = o->id;
                p->len = m->size;
                src = WEFT_ANY_SOURCE;
                break;
            case 2:
                /* Receive ops are ours in our order; the message each gets
                 * is the sender's next one on comm 2. */
                p->id = next2[src] < n2[src] ? order2[src][next2[src]++] : -1;
                CHECK(p->id >= 0);
                p->len = p->id >= 0 ? plan[p->id].size : 0;
                tag = WEFT_ANY_TAG;
                break;
            default:
                p->id = -1;
                p->len = wild_max;
                src = WEFT_ANY_SOURCE;
                tag = WEFT_ANY_TAG;
                break;
            }
            p->buf = malloc(p->len ? p->len : 1);
            MUST(weft_sr_irecv(ctx, src, m->comm, tag, p->buf, p->len, &reqs[npend]));
        }
        npend++;
        nleft++;
        uint64_t r = rng_next(&rs) % 100;
        if (r < 20) {
            int j = (int)(rng_next(&rs) % (uint64_t)npend);
            if (reqs[j]) {
                int rc = weft_sr_test(ctx, reqs[j], &flag, &st);
                if (flag) {
                    reqs[j] = NULL;
                    complete(j, rc, &st);
                }
            }
        } else if (r < 30) {
            int rc = weft_sr_testany(ctx, npend, reqs, &index, &flag, &st);
            if (flag && index >= 0)
                complete(index, rc, &st);
        } else if (r < 35) {
            weft_progress(ctx);
        }
    }
    for (int s = 0; s < nranks; s++)
        CHECK(next2[s] == n2[s]);

    /* Phase 2: every rank has posted everything it will; finish with a random
     * mix of the completion calls. */
    weft_status_t *sts = calloc(64, sizeof *sts);
    int lo = 0;
    while (nleft > 0) {
        while (lo < npend && !reqs[lo])
            lo++;
        uint64_t r = rng_next(&rs) % 4;
        if (r == 0) {
            /* wait on a random outstanding request at or after the oldest */
            int j = lo + (int)(rng_next(&rs) % (uint64_t)(npend - lo));
            while (!reqs[j])
                j = (j + 1 < npend) ? j + 1 : lo;
            weft_request_t *q = reqs[j];
            reqs[j] = NULL;
            int rc = weft_sr_wait(ctx, q, &st);
            complete(j, rc, &st);
        } else if (r == 1) {
            /* waitall over a window */
            int w = 1 + (int)(rng_next(&rs) % 64);
            if (w > npend - lo)
                w = npend - lo;
            bool had[64];
            for (int j = 0; j < w; j++)
                had[j] = reqs[lo + j] != NULL;
            int rc = weft_sr_waitall(ctx, w, reqs + lo, sts);
            int first = WEFT_OK;
            for (int j = 0; j < w; j++) {
                CHECK(reqs[lo + j] == NULL);
                if (!had[j])
                    continue;
                if (sts[j].error && !first)
                    first = sts[j].error;
                complete(lo + j, sts[j].error, &sts[j]);
            }
            CHECK(rc == first);
        } else if (r == 2) {
            /* test one until done */
            int j = lo + (int)(rng_next(&rs) % (uint64_t)(npend - lo));
            while (!reqs[j])
                j = (j + 1 < npend) ? j + 1 : lo;
            for (;;) {
                int rc = weft_sr_test(ctx, reqs[j], &flag, &st);
                if (flag) {
                    reqs[j] = NULL;
                    complete(j, rc, &st);
                    break;
                }
                idle_pause(&idle);
            }
        } else {
            /* testany until one is done */
            for (;;) {
                int rc = weft_sr_testany(ctx, npend - lo, reqs + lo, &index, &flag, &st);
                if (flag) {
                    CHECK(index >= 0);
                    if (index >= 0)
                        complete(lo + index, rc, &st);
                    break;
                }
                idle_pause(&idle);
            }
        }
    }

    long expected = 0;
    for (int i = 0; i < nmsg; i++) {
        if (plan[i].dst != me)
            continue;
        expected++;
        if (!seen[i])
            fprintf(stderr, "[rank %d] message %d from %d never arrived\n", me, i, plan[i].src);
        CHECK(seen[i]);
    }
    CHECK(received == expected);

    weft_counters_t c;
    MUST(weft_counters_get(ctx, &c));
    if (verbose && me == 0) {
        uint64_t total = 0;
        size_t biggest = 0;
        for (int i = 0; i < nmsg; i++) {
            total += plan[i].size;
            biggest = plan[i].size > biggest ? plan[i].size : biggest;
        }
        printf("mp_torture: seed %llu, %d messages, %llu bytes in all, largest %zu\n",
               (unsigned long long)seed, nmsg, (unsigned long long)total, biggest);
    }
    if (verbose)
        printf("mp_torture: rank %d sent %ld, received %ld of %d messages; eager %llu, "
               "rendezvous %llu (get %llu, rtr %llu), credit stalls %llu, unexpected peak "
               "%llu\n",
               me, sent, received, nmsg, (unsigned long long)c.eager_sent,
               (unsigned long long)c.rdv_sent, (unsigned long long)c.rdv_rget,
               (unsigned long long)c.rdv_rtr, (unsigned long long)c.credit_stalls,
               (unsigned long long)c.unexpected_max);
    fflush(stdout);
    for (int s = 0; s < nranks; s++) {
        free(order2[s]);
        free(ops[s]);
    }
    free(sts);
    free(pend);
    free(reqs);
    free(plan);
    free(seen);
}

/* Between rounds: every rank tells rank 0 it is done, rank 0 answers go (1)
 * or stop (0) to all. A barrier too: every receive of the round completed
 * everywhere before any rank sends in the next. */
static void send1(weft_ctx_t *ctx, int peer, uint64_t tag, uint8_t *b)
{
    weft_request_t *q;
    MUST(weft_sr_isend(ctx, peer, COMM_ROUNDS, tag, b, 1, &q));
    MUST(weft_sr_wait(ctx, q, NULL));
}

static void recv1(weft_ctx_t *ctx, int peer, uint64_t tag, uint8_t *b)
{
    weft_request_t *q;
    MUST(weft_sr_irecv(ctx, peer, COMM_ROUNDS, tag, b, 1, &q));
    MUST(weft_sr_wait(ctx, q, NULL));
}

static bool next_round(weft_ctx_t *ctx, bool go)
{
    uint8_t b = go;
    if (me == 0) {
        for (int r = 1; r < nranks; r++)
            recv1(ctx, r, 0, &b);
        b = go;
        for (int r = 1; r < nranks; r++)
            send1(ctx, r, 1, &b);
    } else {
        send1(ctx, 0, 0, &b);
        recv1(ctx, 0, 1, &b);
    }
    return b != 0;
}

/* This process's resident and peak resident memory, in KiB, after handing
 * the heap's free pages back (the plan's buffers of up to 3 MiB come and go,
 * and what malloc keeps of them would hide a leak or fake one). */
static void memory_kib(long *rss, long *hwm)
{
    malloc_trim(0);
    *rss = *hwm = -1;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6))
            *rss = atol(line + 6);
        else if (!strncmp(line, "VmHWM:", 6))
            *hwm = atol(line + 6);
    }
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20240611;
    nmsg = argc > 2 ? atoi(argv[2]) : 3000;
    long rounds = argc > 3 ? atol(argv[3]) : 1;
    /* A round takes seconds at most; a timed run, its time and that. */
    test_watchdog(rounds < 0 ? (unsigned)(-rounds) + 110
                             : 110 * (unsigned)(rounds > 1 ? rounds : 1));
    double end = rounds < 0 ? test_now_s() + (double)-rounds : 0;
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    test_rank = me = weft_rank(ctx);
    nranks = weft_size(ctx);
    if (nranks > MAX_RANKS) {
        weft_finalize(ctx);
        return 77;
    }
    long done = 0;
    for (bool go = true; go;) {
        torture_round(ctx, seed + (uint64_t)done, done == 0);
        done++;
        bool more = rounds < 0 ? test_now_s() < end : done < rounds;
        if (nranks > 1 || rounds != 1)
            more = next_round(ctx, more);
        if (me == 0 && (rounds != 1) && (done % 10 == 0 || !more)) {
            long rss, hwm;
            memory_kib(&rss, &hwm);
            printf("mp_torture: round %ld, rank 0 resident %ld KiB (peak %ld KiB)\n", done, rss,
                   hwm);
            fflush(stdout);
        }
        go = more;
    }
    MUST(weft_finalize(ctx));
    return test_summary("mp_torture");
}
