/* Intercommunicator collectives (MPI 3.1 §5.2.2) between the even and the odd
 * ranks of MPI_COMM_WORLD: MPI_ROOT / MPI_PROC_NULL roots, results that come
 * from the other group, blocking and non-blocking. Skips (77) on one rank, or
 * when intercommunicators are not available. */
#include "coll_test.h"

static int color, l, ls, rs; /* group (0 even, 1 odd), local rank and size, remote size */

static int val(int c, int r, int i)
{
    return c * 10000 + r * 100 + i;
}

static void run(MPI_Comm ic, int nb)
{
    enum { N = 4 };
    int other = 1 - color;
    COLL(nb, MPI_Barrier(ic), MPI_Ibarrier(ic, &rq_));

    /* Bcast from group 0's rank 0, then from group 1's last rank. */
    for (int from = 0; from < 2; from++) {
        int root_l = from == 0 ? 0 : (color == 1 ? ls - 1 : rs - 1);
        int b[N];
        for (int i = 0; i < N; i++)
            b[i] = color == from && l == root_l ? val(from, root_l, i) : -1;
        int root = color == from ? (l == root_l ? MPI_ROOT : MPI_PROC_NULL) : root_l;
        COLL(nb, MPI_Bcast(b, N, MPI_INT, root, ic), MPI_Ibcast(b, N, MPI_INT, root, ic, &rq_));
        for (int i = 0; i < N; i++)
            CHECK(b[i] == (color == from && l != root_l ? -1 : val(from, root_l, i)));
    }

    /* Reduce to group 0's rank 0 of group 1's values. */
    int s[N], r[N];
    for (int i = 0; i < N; i++) {
        s[i] = val(color, l, i);
        r[i] = -1;
    }
    int root = color == 0 ? (l == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    COLL(nb, MPI_Reduce(s, r, N, MPI_INT, MPI_SUM, root, ic),
         MPI_Ireduce(s, r, N, MPI_INT, MPI_SUM, root, ic, &rq_));
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int q = 0; q < rs; q++)
            want += val(1, q, i);
        CHECK(r[i] == (color == 0 && l == 0 ? want : -1));
    }

    /* Allreduce: each group gets the other's sum. */
    COLL(nb, MPI_Allreduce(s, r, N, MPI_INT, MPI_SUM, ic),
         MPI_Iallreduce(s, r, N, MPI_INT, MPI_SUM, ic, &rq_));
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int q = 0; q < rs; q++)
            want += val(other, q, i);
        CHECK(r[i] == want);
    }

    /* Gather to and scatter from group 1's rank 0. */
    int *all = malloc(sizeof(int) * N * (rs > ls ? rs : ls));
    root = color == 1 ? (l == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    COLL(nb, MPI_Gather(s, N, MPI_INT, all, N, MPI_INT, root, ic),
         MPI_Igather(s, N, MPI_INT, all, N, MPI_INT, root, ic, &rq_));
    if (color == 1 && l == 0)
        for (int q = 0; q < rs; q++)
            for (int i = 0; i < N; i++)
                CHECK(all[q * N + i] == val(0, q, i));
    if (color == 1 && l == 0)
        for (int q = 0; q < rs; q++)
            for (int i = 0; i < N; i++)
                all[q * N + i] = val(1, q, 50 + i);
    COLL(nb, MPI_Scatter(all, N, MPI_INT, r, N, MPI_INT, root, ic),
         MPI_Iscatter(all, N, MPI_INT, r, N, MPI_INT, root, ic, &rq_));
    if (color == 0)
        for (int i = 0; i < N; i++)
            CHECK(r[i] == val(1, l, 50 + i));
    free(all);

    /* Allgather and alltoall: blocks from every remote rank. */
    all = malloc(sizeof(int) * N * rs);
    COLL(nb, MPI_Allgather(s, N, MPI_INT, all, N, MPI_INT, ic),
         MPI_Iallgather(s, N, MPI_INT, all, N, MPI_INT, ic, &rq_));
    for (int q = 0; q < rs; q++)
        for (int i = 0; i < N; i++)
            CHECK(all[q * N + i] == val(other, q, i));
    int *sa = malloc(sizeof(int) * N * rs);
    for (int q = 0; q < rs; q++)
        for (int i = 0; i < N; i++)
            sa[q * N + i] = val(color, l, 10 * q + i);
    COLL(nb, MPI_Alltoall(sa, N, MPI_INT, all, N, MPI_INT, ic),
         MPI_Ialltoall(sa, N, MPI_INT, all, N, MPI_INT, ic, &rq_));
    for (int q = 0; q < rs; q++)
        for (int i = 0; i < N; i++)
            CHECK(all[q * N + i] == val(other, q, 10 * l + i));
    free(sa);
    free(all);

    /* Reduce_scatter_block: both groups reduce N * (size of group 0) ... the
     * totals must agree, so only when the groups have the same size. */
    if (ls == rs) {
        int *in = malloc(sizeof(int) * N * ls);
        for (int i = 0; i < N * ls; i++)
            in[i] = val(color, l, i);
        COLL(nb, MPI_Reduce_scatter_block(in, r, N, MPI_INT, MPI_SUM, ic),
             MPI_Ireduce_scatter_block(in, r, N, MPI_INT, MPI_SUM, ic, &rq_));
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int q = 0; q < rs; q++)
                want += val(other, q, l * N + i);
            CHECK(r[i] == want);
        }
        free(in);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (t_size < 2)
        t_skip("an intercommunicator needs two ranks");
    color = t_rank % 2;
    MPI_Comm local, ic;
    if (MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &local) != MPI_SUCCESS)
        t_skip("MPI_Comm_split is not available");
    if (MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, &ic) != MPI_SUCCESS)
        t_skip("MPI_Intercomm_create is not available");
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MPI_Comm_rank(ic, &l);
    MPI_Comm_size(ic, &ls);
    MPI_Comm_remote_size(ic, &rs);
    run(ic, 0);
    run(ic, 1);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return t_finish("coll_inter");
}
