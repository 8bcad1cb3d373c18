/* Persistent collectives (MPI 4.0, MPI_Bcast_init and the others): each one
 * initialised once and started RUNS times with new data, its result checked
 * every time; started in different orders on different ranks (MPI 4.0
 * allows it); with MPI_Startall; mixed with blocking and non-blocking
 * collectives; MPI_IN_PLACE data taken at each start; an intercommunicator;
 * neighbourhood collectives on a ring; MPI_Request_free while inactive and
 * while active; bad arguments refused at init; count, displacement and type
 * arrays, datatypes and ops freed and overwritten right after init. */
#include "coll_test.h"

#define RUNS 3
#define N    64

static int p, me;

/* One run of persistent request r: start, wait; the request stays. */
static void run(MPI_Request *r)
{
    MUSTMPI(MPI_Start(r));
    MUSTMPI(MPI_Wait(r, MPI_STATUS_IGNORE));
    CHECK(*r != MPI_REQUEST_NULL);
}

static void done(MPI_Request *r)
{
    MUSTMPI(MPI_Request_free(r));
    CHECK(*r == MPI_REQUEST_NULL);
}

static int val(int rank, int run, int i)
{
    return rank * 1000 + run * 100 + i;
}

static void rooted(void)
{
    int root = p - 1;
    int buf[N] = {0}, out[N] = {0}, in[N] = {0};
    int *all = malloc(sizeof(int) * (size_t)p * N);
    MPI_Request bc, red, ga, sc, bar;
    MUSTMPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &bar));
    MUSTMPI(MPI_Bcast_init(buf, N, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &bc));
    MUSTMPI(MPI_Reduce_init(out, in, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &red));
    MUSTMPI(MPI_Gather_init(out, N, MPI_INT, all, N, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &ga));
    MUSTMPI(
        MPI_Scatter_init(all, N, MPI_INT, in, N, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &sc));
    for (int r = 0; r < RUNS; r++) {
        run(&bar);
        for (int i = 0; i < N; i++)
            buf[i] = me == root ? val(root, r, i) : -1;
        run(&bc);
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= buf[i] == val(root, r, i);
        CHECK(ok);

        for (int i = 0; i < N; i++)
            out[i] = val(me, r, i);
        run(&red);
        if (me == 0) {
            ok = 1;
            for (int i = 0; i < N; i++) {
                long want = 0;
                for (int k = 0; k < p; k++)
                    want += val(k, r, i);
                ok &= in[i] == want;
            }
            CHECK(ok);
        }
        run(&ga);
        if (me == root) {
            ok = 1;
            for (int k = 0; k < p; k++)
                for (int i = 0; i < N; i++)
                    ok &= all[k * N + i] == val(k, r, i);
            CHECK(ok);
        }
        if (me == 0)
            for (int k = 0; k < p; k++)
                for (int i = 0; i < N; i++)
                    all[k * N + i] = val(k, r + 7, i);
        run(&sc);
        ok = 1;
        for (int i = 0; i < N; i++)
            ok &= in[i] == val(me, r + 7, i);
        CHECK(ok);
    }
    done(&bar);
    done(&bc);
    done(&red);
    done(&ga);
    done(&sc);
    free(all);
}

/* The v-variants, with rank k's block k + 1 long, in reverse order. */
static void vectors(void)
{
    int *counts = malloc(sizeof(int) * (size_t)p), *displs = malloc(sizeof(int) * (size_t)p);
    int total = 0;
    for (int k = p - 1; k >= 0; k--) {
        counts[k] = k + 1;
        displs[k] = total;
        total += k + 1;
    }
    int *all = calloc((size_t)total, sizeof(int)), *mine = calloc((size_t)p, sizeof(int));
    int *gath = malloc(sizeof(int) * (size_t)total);
    MPI_Request gv, sv, agv;
    MUSTMPI(MPI_Gatherv_init(mine, me + 1, MPI_INT, gath, counts, displs, MPI_INT, 0,
                             MPI_COMM_WORLD, MPI_INFO_NULL, &gv));
    MUSTMPI(MPI_Scatterv_init(all, counts, displs, MPI_INT, mine, me + 1, MPI_INT, 0,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &sv));
    MUSTMPI(MPI_Allgatherv_init(mine, me + 1, MPI_INT, gath, counts, displs, MPI_INT,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &agv));
    for (int r = 0; r < RUNS; r++) {
        if (me == 0)
            for (int k = 0; k < p; k++)
                for (int i = 0; i < counts[k]; i++)
                    all[displs[k] + i] = val(k, r, i);
        run(&sv);
        int ok = 1;
        for (int i = 0; i <= me; i++)
            ok &= mine[i] == val(me, r, i);
        CHECK(ok);
        for (int i = 0; i <= me; i++)
            mine[i] = val(me, r + 5, i);
        memset(gath, 0xff, sizeof(int) * (size_t)total);
        run(&gv);
        if (me == 0) {
            ok = 1;
            for (int k = 0; k < p; k++)
                for (int i = 0; i < counts[k]; i++)
                    ok &= gath[displs[k] + i] == val(k, r + 5, i);
            CHECK(ok);
        }
        memset(gath, 0xff, sizeof(int) * (size_t)total);
        run(&agv);
        ok = 1;
        for (int k = 0; k < p; k++)
            for (int i = 0; i < counts[k]; i++)
                ok &= gath[displs[k] + i] == val(k, r + 5, i);
        CHECK(ok);
    }
    done(&gv);
    done(&sv);
    done(&agv);
    free(counts);
    free(displs);
    free(all);
    free(mine);
    free(gath);
}

/* allgather, alltoall(v, w): rank k sends val(k, r, j) to rank j. */
static void exchanges(void)
{
    size_t pp = (size_t)p;
    int *s = malloc(sizeof(int) * pp), *d = malloc(sizeof(int) * pp);
    int *ones = malloc(sizeof(int) * pp), *disp = malloc(sizeof(int) * pp);
    int *bdisp = malloc(sizeof(int) * pp);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * pp);
    for (int k = 0; k < p; k++) {
        ones[k] = 1;
        disp[k] = k;
        bdisp[k] = k * (int)sizeof(int);
        types[k] = MPI_INT;
    }
    int x = 0;
    MPI_Request ag, a2a, a2av, a2aw;
    MUSTMPI(MPI_Allgather_init(&x, 1, MPI_INT, d, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &ag));
    MUSTMPI(MPI_Alltoall_init(s, 1, MPI_INT, d, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &a2a));
    MUSTMPI(MPI_Alltoallv_init(s, ones, disp, MPI_INT, d, ones, disp, MPI_INT, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &a2av));
    MUSTMPI(MPI_Alltoallw_init(s, ones, bdisp, types, d, ones, bdisp, types, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &a2aw));
    MPI_Request *each[] = {&a2a, &a2av, &a2aw};
    for (int r = 0; r < RUNS; r++) {
        x = val(me, r, 0);
        run(&ag);
        int ok = 1;
        for (int k = 0; k < p; k++)
            ok &= d[k] == val(k, r, 0);
        CHECK(ok);
        for (int v = 0; v < 3; v++) {
            for (int j = 0; j < p; j++)
                s[j] = val(me, r * 3 + v, j);
            memset(d, 0xff, sizeof(int) * pp);
            run(each[v]);
            ok = 1;
            for (int k = 0; k < p; k++)
                ok &= d[k] == val(k, r * 3 + v, me);
            CHECK(ok);
        }
    }
    done(&ag);
    done(&a2a);
    done(&a2av);
    done(&a2aw);
    free(s);
    free(d);
    free(ones);
    free(disp);
    free(bdisp);
    free(types);
}

static void reductions(void)
{
    size_t pp = (size_t)p;
    int in[N] = {0}, out[N], inplace[N] = {0}, scan, exscan, x = 0;
    int *counts = malloc(sizeof(int) * pp), *big = malloc(sizeof(int) * pp * 2);
    int rs[2];
    for (int k = 0; k < p; k++)
        counts[k] = 2;
    MPI_Request ar, arip, rsb, rsc, sc, ex;
    MUSTMPI(MPI_Allreduce_init(in, out, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &ar));
    MUSTMPI(MPI_Allreduce_init(MPI_IN_PLACE, inplace, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &arip));
    MUSTMPI(MPI_Reduce_scatter_block_init(big, rs, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                          MPI_INFO_NULL, &rsb));
    MUSTMPI(MPI_Reduce_scatter_init(big, rs, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &rsc));
    MUSTMPI(MPI_Scan_init(&x, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &sc));
    MUSTMPI(MPI_Exscan_init(&x, &exscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ex));
    for (int r = 0; r < RUNS; r++) {
        for (int i = 0; i < N; i++) {
            in[i] = val(me, r, i);
            inplace[i] = val(me, r, i); /* the start takes the data as it is now */
        }
        run(&ar);
        run(&arip);
        int ok = 1;
        for (int i = 0; i < N; i++) {
            long sum = 0;
            for (int k = 0; k < p; k++)
                sum += val(k, r, i);
            ok &= out[i] == val(p - 1, r, i) && inplace[i] == sum;
        }
        CHECK(ok);
        MPI_Request *both[] = {&rsb, &rsc};
        for (int v = 0; v < 2; v++) {
            for (int j = 0; j < 2 * p; j++)
                big[j] = val(me, r + v, j);
            rs[0] = rs[1] = -1;
            run(both[v]);
            long want[2] = {0, 0};
            for (int k = 0; k < p; k++)
                for (int t = 0; t < 2; t++)
                    want[t] += val(k, r + v, 2 * me + t);
            CHECK(rs[0] == want[0] && rs[1] == want[1]);
        }
        x = me + 1 + r;
        run(&sc);
        exscan = -12345;
        run(&ex);
        int below = 0;
        for (int k = 0; k < me; k++)
            below += k + 1 + r;
        CHECK(scan == below + x);
        if (me > 0)
            CHECK(exscan == below);
    }
    done(&ar);
    done(&arip);
    done(&rsb);
    done(&rsc);
    done(&sc);
    done(&ex);
    free(counts);
    free(big);
}

/* On a periodic ring: neighbours are left then right. */
static void neighbours(void)
{
    MPI_Comm ring;
    int dims[1] = {p}, periods[1] = {1};
    MUSTMPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int left = (me + p - 1) % p, right = (me + 1) % p;
    int x = 0, s[2] = {0, 0}, d[2], ones[2] = {1, 1}, disp[2] = {0, 1};
    MPI_Aint bdisp[2] = {0, sizeof(int)};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Request req[5];
    MUSTMPI(
        MPI_Neighbor_allgather_init(&x, 1, MPI_INT, d, 1, MPI_INT, ring, MPI_INFO_NULL, &req[0]));
    MUSTMPI(MPI_Neighbor_allgatherv_init(&x, 1, MPI_INT, d, ones, disp, MPI_INT, ring,
                                         MPI_INFO_NULL, &req[1]));
    MUSTMPI(MPI_Neighbor_alltoall_init(s, 1, MPI_INT, d, 1, MPI_INT, ring, MPI_INFO_NULL, &req[2]));
    MUSTMPI(MPI_Neighbor_alltoallv_init(s, ones, disp, MPI_INT, d, ones, disp, MPI_INT, ring,
                                        MPI_INFO_NULL, &req[3]));
    MUSTMPI(MPI_Neighbor_alltoallw_init(s, ones, bdisp, types, d, ones, bdisp, types, ring,
                                        MPI_INFO_NULL, &req[4]));
    for (int r = 0; r < RUNS; r++) {
        for (int v = 0; v < 5; v++) {
            x = val(me, r, v);
            s[0] = val(me, r, 10 + v); /* to the left */
            s[1] = val(me, r, 20 + v); /* to the right */
            d[0] = d[1] = -1;
            run(&req[v]);
            if (v < 2)
                CHECK(d[0] == val(left, r, v) && d[1] == val(right, r, v));
            else /* from the left its "to the right", from the right its "to the left" */
                CHECK(d[0] == val(left, r, 20 + v) && d[1] == val(right, r, 10 + v));
        }
    }
    for (int v = 0; v < 5; v++)
        done(&req[v]);
    MPI_Comm_free(&ring);
}

/* Arrays of n ints, each filled by fill(k). */
static int *ints(int n, int (*fill)(int))
{
    int *a = malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int k = 0; k < n; k++)
        a[k] = fill(k);
    return a;
}

static int one_more(int k)
{
    return k + 1;
}

static int tri(int k) /* 0, 1, 3, 6...: where block k + 1 long starts */
{
    return k * (k + 1) / 2;
}

static void scribble_free(int *a, int n)
{
    for (int k = 0; k < n; k++)
        a[k] = -777;
    free(a);
}

/* User op: elementwise sum. */
static void add(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* The caller frees its arrays, datatypes and op right after init (bindings
 * such as mpi4py pass temporary arrays): the requests keep their own. Rank k
 * contributes blocks k + 1 long (gatherv, scatterv, allgatherv) and sends
 * block j of j + 1 ints to rank j (alltoallv, alltoallw through a derived
 * type, neighbourhood alltoallw on a ring); reduce_scatter with a user op. */
static void kept_arguments(void)
{
    int total = tri(p), *mine = calloc((size_t)p, sizeof(int));
    int *gath = malloc(sizeof(int) * (size_t)total), *all = malloc(sizeof(int) * (size_t)total);
    int *a2s = malloc(sizeof(int) * (size_t)total), *a2d = malloc(sizeof(int) * (size_t)p * p);
    int *counts = ints(p, one_more), *displs = ints(p, tri);
    MPI_Datatype vint; /* an int, but derived */
    MUSTMPI(MPI_Type_contiguous(1, MPI_INT, &vint));
    MUSTMPI(MPI_Type_commit(&vint));
    MPI_Request q[7];
    MUSTMPI(MPI_Gatherv_init(mine, me + 1, vint, gath, counts, displs, vint, 0, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &q[0]));
    MUSTMPI(MPI_Scatterv_init(all, counts, displs, vint, mine, me + 1, vint, p - 1, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[1]));
    MUSTMPI(MPI_Allgatherv_init(mine, me + 1, MPI_INT, gath, counts, displs, vint, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &q[2]));
    /* alltoall(v, w): block j (j + 1 ints) to rank j, from rank k at k * p. */
    int *rcounts = malloc(sizeof(int) * (size_t)p), *rdispls = malloc(sizeof(int) * (size_t)p);
    int *bs = malloc(sizeof(int) * (size_t)p), *br = malloc(sizeof(int) * (size_t)p);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)p);
    for (int k = 0; k < p; k++) {
        rcounts[k] = me + 1;
        rdispls[k] = k * p;
        bs[k] = displs[k] * (int)sizeof(int);
        br[k] = rdispls[k] * (int)sizeof(int);
        types[k] = vint;
    }
    MUSTMPI(MPI_Alltoallv_init(a2s, counts, displs, vint, a2d, rcounts, rdispls, MPI_INT,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &q[3]));
    MUSTMPI(MPI_Alltoallw_init(a2s, counts, bs, types, a2d, rcounts, br, types, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &q[4]));
    MPI_Op op;
    MUSTMPI(MPI_Op_create(add, 1, &op));
    int rs[N], *rsin = malloc(sizeof(int) * (size_t)total);
    MUSTMPI(
        MPI_Reduce_scatter_init(rsin, rs, counts, vint, op, MPI_COMM_WORLD, MPI_INFO_NULL, &q[5]));
    MPI_Comm ring;
    int dims[1] = {p}, periods[1] = {1}, ns[2], nd[2];
    MUSTMPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int *nones = malloc(2 * sizeof(int));
    MPI_Aint *ndisp = malloc(2 * sizeof(MPI_Aint));
    MPI_Datatype *ntypes = malloc(2 * sizeof(MPI_Datatype));
    for (int i = 0; i < 2; i++) {
        nones[i] = 1;
        ndisp[i] = i * (MPI_Aint)sizeof(int);
        ntypes[i] = vint;
    }
    MUSTMPI(MPI_Neighbor_alltoallw_init(ns, nones, ndisp, ntypes, nd, nones, ndisp, ntypes, ring,
                                        MPI_INFO_NULL, &q[6]));

    /* Everything the requests must have kept, gone. */
    MUSTMPI(MPI_Op_free(&op));
    MUSTMPI(MPI_Type_free(&vint));
    scribble_free(counts, p);
    scribble_free(displs, p);
    scribble_free(rcounts, p);
    scribble_free(rdispls, p);
    scribble_free(bs, p);
    scribble_free(br, p);
    free(types);
    scribble_free(nones, 2);
    free(ndisp);
    free(ntypes);
    int *reuse = ints(8 * p, tri); /* likely where the arrays were */

    int left = (me + p - 1) % p, right = (me + 1) % p;
    for (int r = 0; r < RUNS; r++) {
        for (int i = 0; i <= me; i++)
            mine[i] = val(me, r, i);
        memset(gath, 0xff, sizeof(int) * (size_t)total);
        run(&q[0]);
        int ok = 1;
        if (me == 0)
            for (int k = 0; k < p; k++)
                for (int i = 0; i <= k; i++)
                    ok &= gath[tri(k) + i] == val(k, r, i);
        CHECK(ok);
        if (me == p - 1)
            for (int k = 0; k < p; k++)
                for (int i = 0; i <= k; i++)
                    all[tri(k) + i] = val(k, r + 3, i);
        run(&q[1]);
        ok = 1;
        for (int i = 0; i <= me; i++)
            ok &= mine[i] == val(me, r + 3, i);
        CHECK(ok);
        memset(gath, 0xff, sizeof(int) * (size_t)total);
        run(&q[2]);
        ok = 1;
        for (int k = 0; k < p; k++)
            for (int i = 0; i <= k; i++)
                ok &= gath[tri(k) + i] == val(k, r + 3, i);
        CHECK(ok);
        for (int v = 3; v <= 4; v++) {
            for (int j = 0; j < p; j++)
                for (int i = 0; i <= j; i++)
                    a2s[tri(j) + i] = val(me, r * 2 + v, j * 10 + i);
            memset(a2d, 0xff, sizeof(int) * (size_t)p * p);
            run(&q[v]);
            ok = 1;
            for (int k = 0; k < p; k++)
                for (int i = 0; i <= me; i++)
                    ok &= a2d[k * p + i] == val(k, r * 2 + v, me * 10 + i);
            CHECK(ok);
        }
        for (int j = 0; j < total; j++)
            rsin[j] = val(me, r, j);
        memset(rs, 0xff, sizeof rs);
        run(&q[5]);
        ok = 1;
        for (int i = 0; i <= me; i++) {
            int want = 0;
            for (int k = 0; k < p; k++)
                want += val(k, r, tri(me) + i);
            ok &= rs[i] == want;
        }
        CHECK(ok);
        ns[0] = val(me, r, 1); /* to the left */
        ns[1] = val(me, r, 2); /* to the right */
        nd[0] = nd[1] = -1;
        run(&q[6]);
        CHECK(nd[0] == val(left, r, 2) && nd[1] == val(right, r, 1));
    }
    for (int v = 0; v < 7; v++)
        done(&q[v]);
    MPI_Comm_free(&ring);
    free(reuse);
    free(mine);
    free(gath);
    free(all);
    free(a2s);
    free(a2d);
    free(rsin);
}

/* Two persistent allreduces started in opposite orders on even and odd
 * ranks, then with MPI_Startall, and one in flight across blocking and
 * non-blocking collectives. */
static void orders(void)
{
    int a = 0, b = 0, sa, sb;
    MPI_Request q[2];
    MUSTMPI(MPI_Allreduce_init(&a, &sa, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    MUSTMPI(MPI_Allreduce_init(&b, &sb, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    for (int r = 0; r < RUNS; r++) {
        a = me + r;
        b = me * 2 + r;
        if (me % 2) {
            MUSTMPI(MPI_Start(&q[1]));
            MUSTMPI(MPI_Start(&q[0]));
        } else {
            MUSTMPI(MPI_Start(&q[0]));
            MUSTMPI(MPI_Start(&q[1]));
        }
        MUSTMPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        CHECK(sa == p * (p - 1) / 2 + p * r && sb == (p - 1) * 2 + r);

        a = me;
        MUSTMPI(MPI_Startall(2, q));
        int flag = 0;
        while (!flag)
            MUSTMPI(MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE));
        CHECK(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL);
        CHECK(sa == p * (p - 1) / 2);

        /* In flight across other collectives on the same communicator. */
        MUSTMPI(MPI_Start(&q[0]));
        int x = me, y = -1, z = me;
        MUSTMPI(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Request ib;
        MUSTMPI(MPI_Ibcast(&z, 1, MPI_INT, 0, MPI_COMM_WORLD, &ib));
        MUSTMPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        MUSTMPI(MPI_Wait(&ib, MPI_STATUS_IGNORE));
        MUSTMPI(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        CHECK(y == p - 1 && z == 0 && sa == p * (p - 1) / 2);
    }
    done(&q[0]);
    done(&q[1]);
}

/* Allreduce over an intercommunicator of the even and the odd ranks: each
 * side gets the other side's sum. */
static void inter(void)
{
    if (p < 2)
        return;
    MPI_Comm half, ic;
    MUSTMPI(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    MUSTMPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 77, &ic));
    int x = 0, sum;
    MPI_Request r;
    MUSTMPI(MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &r));
    for (int k = 0; k < RUNS; k++) {
        x = me + k;
        run(&r);
        int want = 0;
        for (int j = 0; j < p; j++)
            if (j % 2 != me % 2)
                want += j + k;
        CHECK(sum == want);
    }
    done(&r);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
}

/* Freed while active: it still completes, and later collectives match. */
static void free_active(void)
{
    static int x, y;
    MPI_Request r;
    MUSTMPI(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    x = 1;
    MUSTMPI(MPI_Start(&r));
    done(&r);
    int z = 0;
    MUSTMPI(MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(z == p);
    MUSTMPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Bad arguments fail at init, through the handler (MPI_ERRORS_RETURN here),
 * and leave no request. */
static void bad_arguments(void)
{
    int x = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Bcast_init(&x, 1, MPI_INT, p, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    int cls = rc;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT && r == MPI_REQUEST_NULL);
    rc = MPI_Allreduce_init(&x, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL, &r);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INFO);
    rc = MPI_Reduce_init(&x, &x, -1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT && r == MPI_REQUEST_NULL);
    rc = MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &r);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM);
    /* Starting a request that is not persistent, or one already active. */
    MPI_Request q;
    MUSTMPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q));
    MUSTMPI(MPI_Start(&q));
    rc = MPI_Start(&q);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST);
    MUSTMPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    done(&q);
    /* The collectives after a refused init still match. */
    int y = 0;
    x = 1;
    MUSTMPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == p);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    p = t_size;
    me = t_rank;
    rooted();
    vectors();
    exchanges();
    reductions();
    neighbours();
    kept_arguments();
    orders();
    inter();
    free_active();
    bad_arguments();
    return t_finish("coll_persist");
}
