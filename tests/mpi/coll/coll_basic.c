/* Every intracommunicator collective on MPI_COMM_WORLD, checked against values
 * computed locally: int, double, a derived vector type, MPI_DOUBLE_INT with
 * MINLOC/MAXLOC, predefined and user operations (commutative and not),
 * MPI_IN_PLACE, every root, zero counts, a message large enough for rendezvous.
 * Argument "nb": the same through the I-variants and MPI_Wait. */
#include <limits.h>

#include "coll_test.h"

static int nb;
static int P, R;

static int val(int r, int i)
{
    return r * 1000 + i;
}

/* A non-commutative, associative operation on MPI_2INT: affine maps x -> a x + b
 * mod M, composed left (lower ranks) first. */
#define M 1000003
typedef struct {
    int a, b;
} aff_t;
static aff_t aff_op(aff_t x, aff_t y) /* first x, then y */
{
    aff_t r = {(int)((long long)y.a * x.a % M), (int)(((long long)y.a * x.b + y.b) % M)};
    return r;
}
static void aff_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    aff_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = aff_op(a[i], b[i]);
}
static aff_t aff_val(int r, int i)
{
    aff_t v = {2 + (r * 7 + i) % 5, (r * 3 + i) % 11};
    return v;
}
/* A commutative user sum on MPI_INT or on the vector type below (two ints at
 * 0 and 2 in an extent of 3): the function gets the caller's datatype. */
static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    int *a = in, *b = inout;
    if (*t == MPI_INT) {
        for (int i = 0; i < *len; i++)
            b[i] += a[i];
        return;
    }
    for (int i = 0; i < *len; i++) {
        b[3 * i] += a[3 * i];
        b[3 * i + 2] += a[3 * i + 2];
    }
}

static MPI_Op op_aff, op_usum;
static MPI_Datatype vec; /* 2 ints, stride 2: ints 0 and 2 of an extent of 3 ints */

static void test_barrier(void)
{
    for (int i = 0; i < 3; i++)
        COLL(nb, MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, &rq_));
    CHECK(1);
}

static void test_bcast(void)
{
    static const int counts[] = {0, 1, 7, 100000};
    for (int root = 0; root < P; root++) {
        for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            int n = counts[c];
            int *b = malloc((n + 1) * sizeof(int));
            for (int i = 0; i <= n; i++)
                b[i] = R == root ? val(root, i) : -1;
            COLL(nb, MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD),
                 MPI_Ibcast(b, n, MPI_INT, root, MPI_COMM_WORLD, &rq_));
            int bad = 0;
            for (int i = 0; i < n; i++)
                bad += b[i] != val(root, i);
            CHECK(bad == 0);
            CHECK(b[n] == (R == root ? val(root, n) : -1));
            free(b);
        }
        double d[5];
        for (int i = 0; i < 5; i++)
            d[i] = R == root ? 0.5 * i + root : 0;
        COLL(nb, MPI_Bcast(d, 5, MPI_DOUBLE, root, MPI_COMM_WORLD),
             MPI_Ibcast(d, 5, MPI_DOUBLE, root, MPI_COMM_WORLD, &rq_));
        for (int i = 0; i < 5; i++)
            CHECK(d[i] == 0.5 * i + root);
        /* Derived: 4 vectors; the holes stay untouched. */
        int v[12];
        for (int i = 0; i < 12; i++)
            v[i] = R == root ? val(root, i) : -7;
        COLL(nb, MPI_Bcast(v, 4, vec, root, MPI_COMM_WORLD),
             MPI_Ibcast(v, 4, vec, root, MPI_COMM_WORLD, &rq_));
        for (int i = 0; i < 12; i++)
            CHECK(v[i] == (i % 3 == 1 && R != root ? -7 : val(root, i)));
    }
}

static void test_reduce(void)
{
    enum { N = 33 };
    for (int root = 0; root < P; root++) {
        int s[N], r[N];
        for (int i = 0; i < N; i++) {
            s[i] = val(R, i);
            r[i] = -1;
        }
        COLL(nb, MPI_Reduce(s, r, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
             MPI_Ireduce(s, r, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq_));
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int q = 0; q < P; q++)
                want += val(q, i);
            CHECK(r[i] == (R == root ? want : -1));
            CHECK(s[i] == val(R, i));
        }
        /* In place at the root. */
        for (int i = 0; i < N; i++)
            r[i] = val(R, i);
        if (R == root)
            COLL(nb, MPI_Reduce(MPI_IN_PLACE, r, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD),
                 MPI_Ireduce(MPI_IN_PLACE, r, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD, &rq_));
        else
            COLL(nb, MPI_Reduce(r, NULL, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD),
                 MPI_Ireduce(r, NULL, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD, &rq_));
        if (R == root)
            for (int i = 0; i < N; i++)
                CHECK(r[i] == val(P - 1, i));
        /* Non-commutative user operation: rank order. */
        aff_t a[N], ar[N];
        for (int i = 0; i < N; i++)
            a[i] = aff_val(R, i);
        COLL(nb, MPI_Reduce(a, ar, N, MPI_2INT, op_aff, root, MPI_COMM_WORLD),
             MPI_Ireduce(a, ar, N, MPI_2INT, op_aff, root, MPI_COMM_WORLD, &rq_));
        if (R == root) {
            int bad = 0;
            for (int i = 0; i < N; i++) {
                aff_t w = aff_val(0, i);
                for (int q = 1; q < P; q++)
                    w = aff_op(w, aff_val(q, i));
                bad += ar[i].a != w.a || ar[i].b != w.b;
            }
            CHECK(bad == 0);
        }
        /* Commutative user operation on a derived type. */
        int v[9], vr[9];
        for (int i = 0; i < 9; i++) {
            v[i] = val(R, i);
            vr[i] = -3;
        }
        COLL(nb, MPI_Reduce(v, vr, 3, vec, op_usum, root, MPI_COMM_WORLD),
             MPI_Ireduce(v, vr, 3, vec, op_usum, root, MPI_COMM_WORLD, &rq_));
        if (R == root)
            for (int i = 0; i < 9; i++) {
                int want = 0;
                for (int q = 0; q < P; q++)
                    want += val(q, i);
                CHECK(vr[i] == (i % 3 == 1 ? -3 : want));
            }
        /* A predefined operation on the derived type. */
        for (int i = 0; i < 9; i++)
            vr[i] = -3;
        COLL(nb, MPI_Reduce(v, vr, 3, vec, MPI_SUM, root, MPI_COMM_WORLD),
             MPI_Ireduce(v, vr, 3, vec, MPI_SUM, root, MPI_COMM_WORLD, &rq_));
        if (R == root)
            for (int i = 0; i < 9; i++) {
                int want = 0;
                for (int q = 0; q < P; q++)
                    want += val(q, i);
                CHECK(vr[i] == (i % 3 == 1 ? -3 : want));
            }
        /* MINLOC / MAXLOC on MPI_DOUBLE_INT. */
        struct {
            double v;
            int i;
        } di[4], dmin[4], dmax[4];
        for (int i = 0; i < 4; i++) {
            di[i].v = (double)((R + i) % P);
            di[i].i = R;
        }
        COLL(nb, MPI_Reduce(di, dmin, 4, MPI_DOUBLE_INT, MPI_MINLOC, root, MPI_COMM_WORLD),
             MPI_Ireduce(di, dmin, 4, MPI_DOUBLE_INT, MPI_MINLOC, root, MPI_COMM_WORLD, &rq_));
        COLL(nb, MPI_Reduce(di, dmax, 4, MPI_DOUBLE_INT, MPI_MAXLOC, root, MPI_COMM_WORLD),
             MPI_Ireduce(di, dmax, 4, MPI_DOUBLE_INT, MPI_MAXLOC, root, MPI_COMM_WORLD, &rq_));
        if (R == root)
            for (int i = 0; i < 4; i++) {
                /* value 0 at rank (P - i) % P; value P-1 at rank (2P - 1 - i) % P. */
                CHECK(dmin[i].v == 0.0 && dmin[i].i == (P - i % P) % P);
                CHECK(dmax[i].v == P - 1 && dmax[i].i == (2 * P - 1 - i % P) % P);
            }
        /* Zero count. */
        COLL(nb, MPI_Reduce(s, r, 0, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
             MPI_Ireduce(s, r, 0, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq_));
    }
}

static void test_allreduce(void)
{
    enum { N = 1000 };
    static double d[N], dr[N];
    for (int i = 0; i < N; i++)
        d[i] = R + i * 0.25;
    COLL(nb, MPI_Allreduce(d, dr, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iallreduce(d, dr, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq_));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += dr[i] != P * (P - 1) / 2.0 + P * i * 0.25;
    CHECK(bad == 0);
    int x[3] = {R, -R, R * R};
    COLL(nb, MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD),
         MPI_Iallreduce(MPI_IN_PLACE, x, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &rq_));
    CHECK(x[0] == 0 && x[1] == -(P - 1) && x[2] == 0);
    aff_t a[5], ar[5];
    for (int i = 0; i < 5; i++)
        a[i] = aff_val(R, i);
    COLL(nb, MPI_Allreduce(a, ar, 5, MPI_2INT, op_aff, MPI_COMM_WORLD),
         MPI_Iallreduce(a, ar, 5, MPI_2INT, op_aff, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < 5; i++) {
        aff_t w = aff_val(0, i);
        for (int q = 1; q < P; q++)
            w = aff_op(w, aff_val(q, i));
        CHECK(ar[i].a == w.a && ar[i].b == w.b);
    }
    struct {
        double v;
        int i;
    } di = {R == P / 2 ? -1.0 : 5.0, R}, dm;
    COLL(nb, MPI_Allreduce(&di, &dm, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD),
         MPI_Iallreduce(&di, &dm, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD, &rq_));
    CHECK(dm.v == (P == 1 ? -1.0 : -1.0) && dm.i == P / 2);
    COLL(nb, MPI_Allreduce(d, dr, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iallreduce(d, dr, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq_));
    /* A small contiguous allreduce runs without a schedule, a strided one with
     * it: ranks whose types differ but whose signatures match (4 ints) take
     * different paths and must still agree. */
    int v[8] = {0}, vr[8] = {0};
    MPI_Datatype strided;
    CHECK(MPI_Type_vector(4, 1, 2, MPI_INT, &strided) == MPI_SUCCESS);
    CHECK(MPI_Type_commit(&strided) == MPI_SUCCESS);
    int odd = R % 2;
    for (int k = 0; k < 4; k++)
        v[odd ? 2 * k : k] = R * 10 + k;
    CHECK(MPI_Allreduce(v, vr, odd ? 1 : 4, odd ? strided : MPI_INT, MPI_SUM, MPI_COMM_WORLD) ==
          MPI_SUCCESS);
    for (int k = 0; k < 4; k++)
        CHECK(vr[odd ? 2 * k : k] == 10 * P * (P - 1) / 2 + P * k);
    MPI_Type_free(&strided);
}

static void test_gather_scatter(void)
{
    enum { N = 5 };
    int *all = malloc(sizeof(int) * N * P * 3);
    int *counts = malloc(sizeof(int) * P), *displs = malloc(sizeof(int) * P);
    for (int root = 0; root < P; root++) {
        int s[N];
        for (int i = 0; i < N; i++)
            s[i] = val(R, i);
        for (int i = 0; i < N * P; i++)
            all[i] = -1;
        COLL(nb, MPI_Gather(s, N, MPI_INT, all, N, MPI_INT, root, MPI_COMM_WORLD),
             MPI_Igather(s, N, MPI_INT, all, N, MPI_INT, root, MPI_COMM_WORLD, &rq_));
        if (R == root)
            for (int q = 0; q < P; q++)
                for (int i = 0; i < N; i++)
                    CHECK(all[q * N + i] == val(q, i));
        /* In place, received as vectors (3 ints of extent per 2 ints sent). */
        for (int i = 0; i < 3 * N * P; i++)
            all[i] = -1;
        if (R == root) {
            for (int i = 0; i < 2; i++)
                all[3 * root + 2 * i] = val(root, i);
            COLL(nb, MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, all, 1, vec, root, MPI_COMM_WORLD),
                 MPI_Igather(MPI_IN_PLACE, 2, MPI_INT, all, 1, vec, root, MPI_COMM_WORLD, &rq_));
            for (int q = 0; q < P; q++) {
                CHECK(all[3 * q] == val(q, 0) && all[3 * q + 2] == val(q, 1));
                CHECK(all[3 * q + 1] == -1);
            }
        } else {
            COLL(nb, MPI_Gather(s, 2, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD),
                 MPI_Igather(s, 2, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD, &rq_));
        }
        /* Gatherv: rank q sends q % 3 elements, stored backwards. */
        int off = 0;
        for (int q = P - 1; q >= 0; q--) {
            counts[q] = q % 3;
            displs[q] = off;
            off += counts[q] + 1;
        }
        for (int i = 0; i < N * P; i++)
            all[i] = -1;
        COLL(nb, MPI_Gatherv(s, R % 3, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD),
             MPI_Igatherv(s, R % 3, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD,
                          &rq_));
        if (R == root)
            for (int q = 0; q < P; q++) {
                for (int i = 0; i < counts[q]; i++)
                    CHECK(all[displs[q] + i] == val(q, i));
                CHECK(all[displs[q] + counts[q]] == -1);
            }
        /* Scatter and scatterv (the root's blocks are val(q, i)). */
        for (int q = 0; q < P; q++)
            for (int i = 0; i < N; i++)
                all[q * N + i] = val(q, i);
        int r[N];
        memset(r, 0xff, sizeof(r));
        COLL(nb, MPI_Scatter(all, N, MPI_INT, r, N, MPI_INT, root, MPI_COMM_WORLD),
             MPI_Iscatter(all, N, MPI_INT, r, N, MPI_INT, root, MPI_COMM_WORLD, &rq_));
        for (int i = 0; i < N; i++)
            CHECK(r[i] == val(R, i));
        if (R == root) {
            COLL(nb, MPI_Scatter(all, N, MPI_INT, MPI_IN_PLACE, N, MPI_INT, root, MPI_COMM_WORLD),
                 MPI_Iscatter(all, N, MPI_INT, MPI_IN_PLACE, N, MPI_INT, root, MPI_COMM_WORLD,
                              &rq_));
        } else {
            memset(r, 0xff, sizeof(r));
            COLL(nb, MPI_Scatter(NULL, 0, MPI_INT, r, N, MPI_INT, root, MPI_COMM_WORLD),
                 MPI_Iscatter(NULL, 0, MPI_INT, r, N, MPI_INT, root, MPI_COMM_WORLD, &rq_));
            for (int i = 0; i < N; i++)
                CHECK(r[i] == val(R, i));
        }
        for (int q = 0; q < P; q++) {
            counts[q] = (q + 1) % 4;
            displs[q] = q * N;
        }
        memset(r, 0xff, sizeof(r));
        COLL(nb,
             MPI_Scatterv(all, counts, displs, MPI_INT, r, (R + 1) % 4, MPI_INT, root,
                          MPI_COMM_WORLD),
             MPI_Iscatterv(all, counts, displs, MPI_INT, r, (R + 1) % 4, MPI_INT, root,
                           MPI_COMM_WORLD, &rq_));
        for (int i = 0; i < (R + 1) % 4; i++)
            CHECK(r[i] == val(R, i));
        CHECK(r[(R + 1) % 4] == -1);
    }
    free(all);
    free(counts);
    free(displs);
}

static void test_allgather(void)
{
    enum { N = 3 };
    int *all = malloc(sizeof(int) * 3 * N * P);
    int *counts = malloc(sizeof(int) * P), *displs = malloc(sizeof(int) * P);
    int s[N] = {val(R, 0), val(R, 1), val(R, 2)};
    for (int i = 0; i < N * P; i++)
        all[i] = -1;
    COLL(nb, MPI_Allgather(s, N, MPI_INT, all, N, MPI_INT, MPI_COMM_WORLD),
         MPI_Iallgather(s, N, MPI_INT, all, N, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < P; q++)
        for (int i = 0; i < N; i++)
            CHECK(all[q * N + i] == val(q, i));
    for (int i = 0; i < N * P; i++)
        all[i] = i / N == R ? val(R, i % N) : -1;
    COLL(nb, MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, all, N, MPI_INT, MPI_COMM_WORLD),
         MPI_Iallgather(MPI_IN_PLACE, 0, MPI_INT, all, N, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < P; q++)
        for (int i = 0; i < N; i++)
            CHECK(all[q * N + i] == val(q, i));
    /* Into vectors. */
    for (int i = 0; i < 3 * N * P; i++)
        all[i] = -1;
    COLL(nb, MPI_Allgather(s, 2, MPI_INT, all, 1, vec, MPI_COMM_WORLD),
         MPI_Iallgather(s, 2, MPI_INT, all, 1, vec, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < P; q++)
        CHECK(all[3 * q] == val(q, 0) && all[3 * q + 1] == -1 && all[3 * q + 2] == val(q, 1));
    int off = 0;
    for (int q = 0; q < P; q++) {
        counts[q] = (q * 2) % 3;
        displs[q] = off;
        off += counts[q];
    }
    for (int i = 0; i < N * P; i++)
        all[i] = -1;
    COLL(
        nb, MPI_Allgatherv(s, counts[R], MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD),
        MPI_Iallgatherv(s, counts[R], MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < P; q++)
        for (int i = 0; i < counts[q]; i++)
            CHECK(all[displs[q] + i] == val(q, i));
    free(all);
    free(counts);
    free(displs);
}

static void test_alltoall(void)
{
    enum { N = 4 };
    int *s = malloc(sizeof(int) * N * P), *r = malloc(sizeof(int) * N * P);
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * P);
    /* Block q of rank R holds val(R, 100 q + i). */
    for (int q = 0; q < P; q++)
        for (int i = 0; i < N; i++)
            s[q * N + i] = val(R, 100 * q + i);
    memset(r, 0xff, sizeof(int) * N * P);
    COLL(nb, MPI_Alltoall(s, N, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD),
         MPI_Ialltoall(s, N, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < P; q++)
        for (int i = 0; i < N; i++)
            CHECK(r[q * N + i] == val(q, 100 * R + i));
    memcpy(r, s, sizeof(int) * N * P);
    COLL(nb, MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD),
         MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < P; q++)
        for (int i = 0; i < N; i++)
            CHECK(r[q * N + i] == val(q, 100 * R + i));
    /* v: R sends (R + q) % 3 elements to q. */
    for (int q = 0; q < P; q++) {
        sc[q] = (R + q) % 3;
        sd[q] = q * N;
        rc[q] = (q + R) % 3;
        rd[q] = (P - 1 - q) * N;
    }
    memset(r, 0xff, sizeof(int) * N * P);
    COLL(nb, MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD),
         MPI_Ialltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < P; q++) {
        for (int i = 0; i < rc[q]; i++)
            CHECK(r[rd[q] + i] == val(q, 100 * R + i));
        if (rc[q] < N)
            CHECK(r[rd[q] + rc[q]] == -1);
    }
    /* w: byte displacements, MPI_INT out, MPI_INT or vector in. */
    for (int q = 0; q < P; q++) {
        sc[q] = 2;
        sd[q] = q * N * (int)sizeof(int);
        types[q] = MPI_INT;
    }
    int *rw = malloc(sizeof(int) * 3 * P);
    for (int i = 0; i < 3 * P; i++)
        rw[i] = -1;
    MPI_Datatype *rtypes = malloc(sizeof(MPI_Datatype) * P);
    for (int q = 0; q < P; q++) {
        rc[q] = 1;
        rd[q] = 3 * q * (int)sizeof(int);
        rtypes[q] = vec;
    }
    COLL(nb, MPI_Alltoallw(s, sc, sd, types, rw, rc, rd, rtypes, MPI_COMM_WORLD),
         MPI_Ialltoallw(s, sc, sd, types, rw, rc, rd, rtypes, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < P; q++)
        CHECK(rw[3 * q] == val(q, 100 * R) && rw[3 * q + 1] == -1 &&
              rw[3 * q + 2] == val(q, 100 * R + 1));
    free(rw);
    free(rtypes);
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(types);
}

static void test_reduce_scatter(void)
{
    enum { N = 3 };
    int *s = malloc(sizeof(int) * N * P), *r = malloc(sizeof(int) * N * P);
    int *counts = malloc(sizeof(int) * P);
    for (int i = 0; i < N * P; i++)
        s[i] = val(R, i);
    memset(r, 0xff, sizeof(int) * N * P);
    COLL(nb, MPI_Reduce_scatter_block(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Ireduce_scatter_block(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int q = 0; q < P; q++)
            want += val(q, R * N + i);
        CHECK(r[i] == want);
    }
    memcpy(r, s, sizeof(int) * N * P);
    COLL(nb, MPI_Reduce_scatter_block(MPI_IN_PLACE, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Ireduce_scatter_block(MPI_IN_PLACE, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int q = 0; q < P; q++)
            want += val(q, R * N + i);
        CHECK(r[i] == want);
    }
    int off = 0, mine = 0;
    for (int q = 0; q < P; q++) {
        counts[q] = (q + 2) % 4;
        if (q == R)
            mine = off;
        off += counts[q];
    }
    memset(r, 0xff, sizeof(int) * N * P);
    aff_t *a = malloc(sizeof(aff_t) * off + 1), *ar = malloc(sizeof(aff_t) * (N + 1));
    for (int i = 0; i < off; i++)
        a[i] = aff_val(R, i);
    COLL(nb, MPI_Reduce_scatter(a, ar, counts, MPI_2INT, op_aff, MPI_COMM_WORLD),
         MPI_Ireduce_scatter(a, ar, counts, MPI_2INT, op_aff, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < counts[R]; i++) {
        aff_t w = aff_val(0, mine + i);
        for (int q = 1; q < P; q++)
            w = aff_op(w, aff_val(q, mine + i));
        CHECK(ar[i].a == w.a && ar[i].b == w.b);
    }
    free(a);
    free(ar);
    free(s);
    free(r);
    free(counts);
}

/* What a user operation saw: calls, elements, the smallest len. */
static struct {
    long long calls, elements;
    int min_len;
} seen;

static void count_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in, (void)inout, (void)t;
    seen.calls++;
    seen.elements += *len;
    seen.min_len = *len < seen.min_len ? *len : seen.min_len;
}

/* A reduce-scatter whose total passes INT_MAX elements, of a type of no
 * bytes (so no memory): every combination the reduction makes must reach
 * the user function, in pieces of at most INT_MAX elements, and none may be
 * lost to an int that wrapped. Reduce-scatter reduces the whole vector to
 * rank 0 over a tree, so the ranks combine P - 1 whole vectors in all.
 * Two ranks at least. */
static void test_reduce_scatter_huge(void)
{
    if (P < 2)
        return; /* one int count cannot pass INT_MAX */
    MPI_Datatype none;
    MPI_Op op;
    MUSTMPI(MPI_Type_contiguous(0, MPI_INT, &none));
    MUSTMPI(MPI_Type_commit(&none));
    MUSTMPI(MPI_Op_create(count_fn, 1, &op));
    int *counts = malloc(sizeof(int) * P);
    long long total = 0;
    for (int q = 0; q < P; q++) {
        counts[q] = INT_MAX / P + 1;
        total += counts[q];
    }
    CHECK(total > INT_MAX);
    int sbuf = 0, rbuf = 0;
    seen.calls = seen.elements = 0;
    seen.min_len = INT_MAX;
    COLL(nb, MPI_Reduce_scatter(&sbuf, &rbuf, counts, none, op, MPI_COMM_WORLD),
         MPI_Ireduce_scatter(&sbuf, &rbuf, counts, none, op, MPI_COMM_WORLD, &rq_));
    CHECK(seen.calls == 0 || seen.min_len > 0); /* every piece a positive int */
    long long all = 0;
    MUSTMPI(MPI_Allreduce(&seen.elements, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all == (long long)(P - 1) * total);
    free(counts);
    MPI_Op_free(&op);
    MPI_Type_free(&none);
}

static void test_scan(void)
{
    enum { N = 6 };
    int s[N], r[N];
    for (int i = 0; i < N; i++) {
        s[i] = val(R, i);
        r[i] = -1;
    }
    COLL(nb, MPI_Scan(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iscan(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int q = 0; q <= R; q++)
            want += val(q, i);
        CHECK(r[i] == want);
    }
    for (int i = 0; i < N; i++)
        r[i] = -1;
    COLL(nb, MPI_Exscan(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iexscan(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int q = 0; q < R; q++)
            want += val(q, i);
        CHECK(r[i] == (R == 0 ? -1 : want));
    }
    aff_t a[N], ar[N];
    for (int i = 0; i < N; i++)
        ar[i] = a[i] = aff_val(R, i);
    COLL(nb, MPI_Scan(MPI_IN_PLACE, ar, N, MPI_2INT, op_aff, MPI_COMM_WORLD),
         MPI_Iscan(MPI_IN_PLACE, ar, N, MPI_2INT, op_aff, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < N; i++) {
        aff_t w = aff_val(0, i);
        for (int q = 1; q <= R; q++)
            w = aff_op(w, aff_val(q, i));
        CHECK(ar[i].a == w.a && ar[i].b == w.b);
    }
    COLL(nb, MPI_Exscan(a, ar, N, MPI_2INT, op_aff, MPI_COMM_WORLD),
         MPI_Iexscan(a, ar, N, MPI_2INT, op_aff, MPI_COMM_WORLD, &rq_));
    if (R > 0)
        for (int i = 0; i < N; i++) {
            aff_t w = aff_val(0, i);
            for (int q = 1; q < R; q++)
                w = aff_op(w, aff_val(q, i));
            CHECK(ar[i].a == w.a && ar[i].b == w.b);
        }
}

static void test_errors(void)
{
    int x = 0, y = 0;
    CHECK(MPI_Bcast(&x, 1, MPI_INT, P, MPI_COMM_WORLD) == MPI_ERR_ROOT);
    CHECK(MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT);
    CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD) == MPI_ERR_OP);
    CHECK(MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
    CHECK(MPI_Reduce(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
    CHECK(MPI_Barrier(MPI_COMM_NULL) == MPI_ERR_COMM);
    /* Missing count or displacement arrays where they are significant: every
     * rank of an allgatherv, the root of a gatherv or scatterv (on
     * MPI_COMM_SELF, so no other rank waits for it). */
    int one = 1, zero = 0, z[64] = {0};
    CHECK(MPI_Allgatherv(&x, 1, MPI_INT, z, NULL, z, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_ARG);
    CHECK(MPI_Allgatherv(&x, 1, MPI_INT, z, z, NULL, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK(MPI_Gatherv(&x, 1, MPI_INT, &y, NULL, &zero, MPI_INT, 0, MPI_COMM_SELF) == MPI_ERR_ARG);
    CHECK(MPI_Gatherv(&x, 1, MPI_INT, &y, &one, NULL, MPI_INT, 0, MPI_COMM_SELF) == MPI_ERR_ARG);
    CHECK(MPI_Scatterv(&x, NULL, &zero, MPI_INT, &y, 1, MPI_INT, 0, MPI_COMM_SELF) == MPI_ERR_ARG);
    MUSTMPI(MPI_Gatherv(&x, 1, MPI_INT, &y, &one, &zero, MPI_INT, 0, MPI_COMM_SELF));
    CHECK(y == x);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    /* Receivers that post less than the root sends: the root's children
     * (rank 1 is one in every tree) get MPI_ERR_TRUNCATE, the ranks below
     * them learn that another member failed (class MPI_ERR_OTHER, not a
     * truncation of their own), nothing is written past a buffer, and nobody
     * hangs. */
    int b[5] = {R, R, R, R, -9};
    int rc = MPI_Bcast(b, R == 0 ? 4 : 2, MPI_INT, 0, MPI_COMM_WORLD);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    if (R == 1)
        CHECK(cls == MPI_ERR_TRUNCATE);
    else if (R == 0)
        CHECK(cls == MPI_SUCCESS);
    else
        CHECK(cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_OTHER);
    if (cls == MPI_ERR_OTHER) {
        char es[MPI_MAX_ERROR_STRING];
        int elen;
        MUSTMPI(MPI_Error_string(rc, es, &elen));
        CHECK(strstr(es, "another member of the collective failed") != NULL);
    }
    CHECK(b[2] == R && b[4] == -9);
    MUSTMPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    nb = argc > 1 && strcmp(argv[1], "nb") == 0;
    P = t_size;
    R = t_rank;
    MUSTMPI(MPI_Op_create(aff_fn, 0, &op_aff));
    MUSTMPI(MPI_Op_create(sum_fn, 1, &op_usum));
    MUSTMPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MUSTMPI(MPI_Type_commit(&vec));
    test_barrier();
    test_bcast();
    test_reduce();
    test_allreduce();
    test_gather_scatter();
    test_allgather();
    test_alltoall();
    test_reduce_scatter();
    test_reduce_scatter_huge();
    test_scan();
    if (!nb)
        test_errors();
    MPI_Type_free(&vec);
    MPI_Op_free(&op_aff);
    MPI_Op_free(&op_usum);
    return t_finish(nb ? "coll_basic nb" : "coll_basic");
}
