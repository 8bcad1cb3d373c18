/* Partitioned communication (MPI 4.0 §4): even ranks send to the odd rank
 * above them (an odd rank out sends to itself), each request started RUNS
 * times with new data:
 *   - the same partitioning on both sides, partitions marked in reverse
 *     order, the receiver watching MPI_Parrived before it waits;
 *   - different partitionings (6 x 10 ints sent, 4 x 15 received), each
 *     receive partition's data checked as soon as it has arrived;
 *   - partitions marked by 4 threads at once (MPI_THREAD_MULTIPLE);
 *   - a strided datatype on one side, contiguous on the other, both ways;
 *   - MPI_Pready_range and MPI_Pready_list; 1 MiB partitions;
 *   - two channels with one tag, paired in init order though marked in the
 *     other order;
 *   - a channel on a communicator that took the context id of a freed one
 *     where only some ranks had used partitioned requests;
 *   - bad arguments refused. */
#include <pthread.h>

#include "mpitest.h"

#define RUNS 3

static int me, np, peer, sender, receiver;

static int val(int run, int i)
{
    return run * 1000003 + i * 7 + 1;
}

/* Start s (if sending) and r (if receiving), mark partitions by mark(),
 * watch arrivals, wait. want(i) checks element i of the receive buffer. */
typedef struct job {
    MPI_Request s, r;
    int *sbuf, *rbuf;
    int n;      /* ints in the message */
    int rparts; /* receive partitions */
    int run;
} job_t;

/* The requests of a message of n ints, sparts partitions sent, rparts
 * received, and its buffers. */
static void job_init_on(job_t *j, int sparts, int rparts, int n, int tag, MPI_Comm comm)
{
    *j = (job_t){.n = n, .rparts = rparts};
    j->sbuf = calloc((size_t)n, sizeof(int));
    j->rbuf = calloc((size_t)n, sizeof(int));
    if (sender)
        MPI_MUST(MPI_Psend_init(j->sbuf, sparts, n / sparts, MPI_INT, peer, tag, comm,
                                MPI_INFO_NULL, &j->s));
    if (receiver)
        MPI_MUST(MPI_Precv_init(j->rbuf, rparts, n / rparts, MPI_INT, sender ? me : peer, tag, comm,
                                MPI_INFO_NULL, &j->r));
}

static void job_init(job_t *j, int sparts, int rparts, int n, int tag)
{
    job_init_on(j, sparts, rparts, n, tag, MPI_COMM_WORLD);
}

static void job_free(job_t *j)
{
    if (sender)
        MPI_MUST(MPI_Request_free(&j->s));
    if (receiver)
        MPI_MUST(MPI_Request_free(&j->r));
    free(j->sbuf);
    free(j->rbuf);
}

/* A run: new data, then both requests started. */
static void job_start(job_t *j)
{
    if (sender)
        for (int i = 0; i < j->n; i++)
            j->sbuf[i] = val(j->run, i);
    if (receiver) {
        for (int i = 0; i < j->n; i++)
            j->rbuf[i] = -1;
        MPI_MUST(MPI_Start(&j->r));
    }
    if (sender)
        MPI_MUST(MPI_Start(&j->s));
}

/* Poll MPI_Parrived over every receive partition until all are in; each is
 * checked when it arrives. */
static void watch(job_t *j)
{
    int per = j->n / j->rparts, left = j->rparts, bad = 0;
    int *seen = calloc((size_t)j->rparts, sizeof(int));
    while (left > 0) {
        for (int p = 0; p < j->rparts; p++) {
            if (seen[p])
                continue;
            int flag = 0;
            MPI_MUST(MPI_Parrived(j->r, p, &flag));
            if (!flag)
                continue;
            seen[p] = 1;
            left--;
            for (int i = p * per; i < (p + 1) * per; i++)
                bad += j->rbuf[i] != val(j->run, i);
        }
    }
    CHECK(bad == 0);
    free(seen);
}

static void check_all(job_t *j)
{
    int bad = 0;
    for (int i = 0; i < j->n; i++)
        bad += j->rbuf[i] != val(j->run, i);
    CHECK(bad == 0);
}

static void simple(int sparts, int rparts, int n, int tag)
{
    job_t j;
    job_init(&j, sparts, rparts, n, tag);
    for (j.run = 0; j.run < RUNS; j.run++) {
        job_start(&j);
        if (sender) {
            for (int p = sparts - 1; p >= 0; p--)
                MPI_MUST(MPI_Pready(p, j.s));
        }
        if (receiver) {
            watch(&j);
            MPI_Status st;
            MPI_MUST(MPI_Wait(&j.r, &st));
            int count = -1;
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == n && st.MPI_SOURCE == (sender ? me : peer));
            check_all(&j);
        }
        if (sender)
            MPI_MUST(MPI_Wait(&j.s, MPI_STATUS_IGNORE));
    }
    job_free(&j);
}

typedef struct marker {
    MPI_Request s;
    int first, step, parts;
} marker_t;

static void *mark_some(void *arg)
{
    marker_t *m = arg;
    for (int p = m->first; p < m->parts; p += m->step)
        MPI_Pready(p, m->s);
    return NULL;
}

/* 32 partitions marked by 4 threads, interleaved. */
static void threads(void)
{
    int provided;
    MPI_Query_thread(&provided);
    if (provided != MPI_THREAD_MULTIPLE)
        return;
    enum { PARTS = 32, PER = 257, T = 4 };
    job_t j;
    job_init(&j, PARTS, PARTS, PARTS * PER, 30);
    for (j.run = 0; j.run < RUNS; j.run++) {
        job_start(&j);
        if (sender) {
            pthread_t th[T];
            marker_t m[T];
            for (int t = 0; t < T; t++) {
                m[t] = (marker_t){.s = j.s, .first = t, .step = T, .parts = PARTS};
                pthread_create(&th[t], NULL, mark_some, &m[t]);
            }
            /* The main thread waits while the others mark. */
            MPI_MUST(MPI_Wait(&j.s, MPI_STATUS_IGNORE));
            for (int t = 0; t < T; t++)
                pthread_join(th[t], NULL);
        }
        if (receiver) {
            watch(&j);
            MPI_MUST(MPI_Wait(&j.r, MPI_STATUS_IGNORE));
            check_all(&j);
        }
    }
    job_free(&j);
}

/* A strided type (every other int) on one side: 4 partitions of 50. */
static void strided(int strided_side_sends)
{
    enum { PARTS = 4, PER = 50, N = PARTS * PER };
    MPI_Datatype every_other, one;
    MPI_Type_vector(1, 1, 2, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, 2 * sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    MPI_Type_free(&one);
    int *wide = calloc(2 * N, sizeof(int)), *narrow = calloc(N, sizeof(int));
    MPI_Request s = MPI_REQUEST_NULL, r = MPI_REQUEST_NULL;
    int src = sender ? me : peer;
    if (sender)
        MPI_MUST(MPI_Psend_init(strided_side_sends ? wide : narrow, PARTS, PER,
                                strided_side_sends ? every_other : MPI_INT, peer, 40,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    int *rbuf = sender && receiver   ? calloc(2 * N, sizeof(int))
                : strided_side_sends ? narrow
                                     : wide;
    if (receiver)
        MPI_MUST(MPI_Precv_init(rbuf, PARTS, PER, strided_side_sends ? MPI_INT : every_other, src,
                                40, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_Type_free(&every_other); /* the requests keep it */
    for (int run = 0; run < RUNS; run++) {
        if (sender)
            for (int i = 0; i < N; i++) {
                if (strided_side_sends) {
                    wide[2 * i] = val(run, i);
                    wide[2 * i + 1] = -5;
                } else {
                    narrow[i] = val(run, i);
                }
            }
        if (receiver)
            for (int i = 0; i < 2 * N && (!strided_side_sends || i < N); i++)
                rbuf[i] = -1;
        if (receiver)
            MPI_MUST(MPI_Start(&r));
        if (sender) {
            MPI_MUST(MPI_Start(&s));
            MPI_MUST(MPI_Pready_range(0, PARTS - 1, s));
            MPI_MUST(MPI_Wait(&s, MPI_STATUS_IGNORE));
        }
        if (receiver) {
            MPI_MUST(MPI_Wait(&r, MPI_STATUS_IGNORE));
            int bad = 0;
            for (int i = 0; i < N; i++) {
                if (strided_side_sends)
                    bad += rbuf[i] != val(run, i);
                else
                    bad += rbuf[2 * i] != val(run, i) || rbuf[2 * i + 1] != -1;
            }
            CHECK(bad == 0);
        }
    }
    if (sender)
        MPI_Request_free(&s);
    if (receiver)
        MPI_Request_free(&r);
    if (sender && receiver)
        free(rbuf);
    free(wide);
    free(narrow);
}

/* Two channels on one tag: paired in init order, marked in the other. */
static void two_channels(void)
{
    int a[8], b[8], ra[8], rb[8];
    for (int i = 0; i < 8; i++) {
        a[i] = 100 + i;
        b[i] = 200 + i;
        ra[i] = rb[i] = -1;
    }
    MPI_Request s[2], r[2];
    int src = sender ? me : peer;
    if (sender) {
        MPI_MUST(MPI_Psend_init(a, 2, 4, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &s[0]));
        MPI_MUST(MPI_Psend_init(b, 2, 4, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &s[1]));
    }
    if (receiver) {
        MPI_MUST(MPI_Precv_init(ra, 1, 8, MPI_INT, src, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
        MPI_MUST(MPI_Precv_init(rb, 8, 1, MPI_INT, src, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
        MPI_MUST(MPI_Startall(2, r));
    }
    if (sender) {
        MPI_MUST(MPI_Startall(2, s));
        int both[2] = {1, 0};
        MPI_MUST(MPI_Pready_list(2, both, s[1]));
        MPI_MUST(MPI_Pready_list(2, both, s[0]));
        MPI_MUST(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
        MPI_Request_free(&s[0]);
        MPI_Request_free(&s[1]);
    }
    if (receiver) {
        MPI_MUST(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        int bad = 0;
        for (int i = 0; i < 8; i++)
            bad += ra[i] != 100 + i || rb[i] != 200 + i;
        CHECK(bad == 0);
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    }
}

/* Each rank uses a partitioned channel on a duplicate of MPI_COMM_SELF and
 * frees it; a duplicate of MPI_COMM_WORLD then likely takes the same context
 * id, and its channels must pair from scratch. */
static void reused_ids(void)
{
    MPI_Comm self, world;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_SELF, &self));
    int x[2] = {me, me}, y[2] = {-1, -1};
    MPI_Request s, r;
    MPI_MUST(MPI_Psend_init(x, 2, 1, MPI_INT, 0, 0, self, MPI_INFO_NULL, &s));
    MPI_MUST(MPI_Precv_init(y, 1, 2, MPI_INT, 0, 0, self, MPI_INFO_NULL, &r));
    MPI_MUST(MPI_Start(&r));
    MPI_MUST(MPI_Start(&s));
    MPI_MUST(MPI_Pready_range(0, 1, s));
    MPI_MUST(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_MUST(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(y[0] == me && y[1] == me);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    MPI_MUST(MPI_Comm_free(&self));
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &world));
    job_t j;
    job_init_on(&j, 2, 2, 8, 0, world);
    for (j.run = 0; j.run < RUNS; j.run++) {
        job_start(&j);
        if (sender)
            MPI_MUST(MPI_Pready_range(0, 1, j.s));
        if (receiver) {
            watch(&j);
            MPI_MUST(MPI_Wait(&j.r, MPI_STATUS_IGNORE));
            check_all(&j);
        }
        if (sender)
            MPI_MUST(MPI_Wait(&j.s, MPI_STATUS_IGNORE));
    }
    job_free(&j);
    MPI_MUST(MPI_Comm_free(&world));
}

static void bad_arguments(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x[4] = {0, 0, 0, 0};
    MPI_Request q = MPI_REQUEST_NULL;
    CHECK(mt_class(MPI_Psend_init(x, 2, 2, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &q)) == MPI_ERR_RANK);
    CHECK(mt_class(MPI_Precv_init(x, 2, 2, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                                  &q)) == MPI_ERR_TAG);
    CHECK(mt_class(MPI_Psend_init(x, 0, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q)) ==
          MPI_ERR_ARG);
    CHECK(mt_class(MPI_Psend_init(x, 2, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q)) ==
          MPI_ERR_COUNT);
    /* Marks: on a receive, out of range, before the start, twice. */
    MPI_Request s, r;
    MPI_MUST(MPI_Psend_init(x, 2, 2, MPI_INT, me, 60, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_MUST(MPI_Precv_init(x, 2, 2, MPI_INT, me, 60, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK(mt_class(MPI_Pready(0, r)) == MPI_ERR_REQUEST);
    CHECK(mt_class(MPI_Pready(0, s)) == MPI_ERR_REQUEST); /* not started */
    int y[4] = {1, 2, 3, 4};
    MPI_Request_free(&r);
    MPI_MUST(MPI_Precv_init(y, 1, 4, MPI_INT, me, 61, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_Request s2;
    MPI_MUST(MPI_Psend_init(x, 2, 2, MPI_INT, me, 61, MPI_COMM_WORLD, MPI_INFO_NULL, &s2));
    MPI_MUST(MPI_Start(&r));
    MPI_MUST(MPI_Start(&s2));
    CHECK(mt_class(MPI_Pready(2, s2)) == MPI_ERR_ARG);
    MPI_MUST(MPI_Pready(1, s2));
    CHECK(mt_class(MPI_Pready(1, s2)) == MPI_ERR_REQUEST); /* twice */
    MPI_MUST(MPI_Pready(0, s2));
    MPI_MUST(MPI_Wait(&s2, MPI_STATUS_IGNORE));
    MPI_MUST(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_Request_free(&s);
    MPI_Request_free(&s2);
    MPI_Request_free(&r);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    mt_rank = me;
    mt_size = np;
    /* Pairs (2k, 2k+1); an odd rank out both sends and receives, to itself. */
    if (me % 2 == 0 && me + 1 < np) {
        peer = me + 1;
        sender = 1;
    } else if (me % 2 == 1) {
        peer = me - 1;
        receiver = 1;
    } else {
        peer = me;
        sender = receiver = 1;
    }
    simple(8, 8, 8 * 1000, 10);
    simple(6, 4, 60, 11);
    simple(4, 6, 60, 12);
    simple(1, 16, 16 * 3, 13);
    simple(4, 4, 4 * 262144, 14); /* 1 MiB partitions: rendezvous */
    threads();
    strided(1);
    strided(0);
    two_channels();
    reused_ids();
    bad_arguments();
    return mt_finish("test_part");
}
