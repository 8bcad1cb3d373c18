/* Collectives after a member died (mpirun --keep-going, 3 to 5 ranks).
 *
 *   fault_coll early|late
 *
 * The last rank leaves right after a barrier (_exit). The survivors then run
 * every kind of collective on MPI_COMM_WORLD, with MPI_ERRORS_RETURN: the
 * small blocking ones that skip the schedule (allreduce, bcast) and the
 * scheduled ones (large, non-blocking). `early`: they first wait until the
 * death is known (a receive from the dead rank fails); `late`: they start at
 * once, so the death is found in the middle of the collectives.
 *
 * What must hold:
 *   - nothing hangs (a member that failed a step still sends its later
 *     messages, as poisons);
 *   - a collective that returns MPI_SUCCESS has the right result, as if the
 *     dead rank had taken part: never one that misses its contribution;
 *   - a collective that fails says MPIX_ERR_PROC_FAILED;
 *   - those whose result depends on every member (barrier, allreduce,
 *     allgather, alltoall, reduce_scatter) fail at every survivor;
 *   - afterwards, collectives on a communicator of the survivors (made
 *     before the death) work.
 *
 * Rank 0 prints "fault_coll: N passed, M failed"; the test passes on
 * "0 failed". MPI_Finalize is not called: WORLD has a dead member. */
#include <unistd.h>

#include "mpitest.h"

enum { BIG = 1000 }; /* ints: beyond the direct allreduce's 1 KiB */

static int n, dead;
static MPI_Comm world;

/* rc is MPI_SUCCESS, or must be MPIX_ERR_PROC_FAILED (and must not be
 * MPI_SUCCESS when `must_fail`). Returns whether the result is to be checked. */
static int outcome(const char *what, int rc, int must_fail)
{
    if (rc != MPI_SUCCESS) {
        if (mt_class(rc) != MPIX_ERR_PROC_FAILED)
            fprintf(stderr, "[rank %d] %s: class %d\n", mt_rank, what, mt_class(rc));
        CHECK(mt_class(rc) == MPIX_ERR_PROC_FAILED);
        return 0;
    }
    if (must_fail)
        fprintf(stderr, "[rank %d] %s succeeded without the dead rank\n", mt_rank, what);
    CHECK(!must_fail);
    return 1;
}

/* Whether out holds, element by element, the sum over every rank r (the dead
 * one included) of r + i. */
static int summed(const int *out, int count)
{
    for (int i = 0; i < count; i++)
        if (out[i] != n * (n - 1) / 2 + n * i)
            return 0;
    return 1;
}

static int wait_rc(int rc, MPI_Request *req)
{
    return rc == MPI_SUCCESS ? MPI_Wait(req, MPI_STATUS_IGNORE) : rc;
}

static void sum_all(int count, int nonblocking)
{
    int *in = malloc(sizeof(int) * count), *out = malloc(sizeof(int) * count);
    for (int i = 0; i < count; i++)
        in[i] = mt_rank + i;
    MPI_Request req;
    int rc = nonblocking
                 ? wait_rc(MPI_Iallreduce(in, out, count, MPI_INT, MPI_SUM, world, &req), &req)
                 : MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, world);
    if (outcome(nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce", rc, 1))
        CHECK(summed(out, count));
    free(in);
    free(out);
}

static void bcast(int count, int root, int nonblocking)
{
    int *b = malloc(sizeof(int) * count);
    if (mt_rank == root)
        mt_fill(b, count, 42);
    else
        memset(b, 0, sizeof(int) * count);
    MPI_Request req;
    int rc = nonblocking ? wait_rc(MPI_Ibcast(b, count, MPI_INT, root, world, &req), &req)
                         : MPI_Bcast(b, count, MPI_INT, root, world);
    if (outcome("MPI_Bcast", rc, 0))
        CHECK(mt_verify(b, count, 42));
    free(b);
}

static void reduce(int count)
{
    int *in = malloc(sizeof(int) * count), *out = malloc(sizeof(int) * count);
    for (int i = 0; i < count; i++)
        in[i] = mt_rank + i;
    int rc = MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, 0, world);
    if (outcome("MPI_Reduce", rc, 0) && mt_rank == 0)
        CHECK(summed(out, count));
    free(in);
    free(out);
}

static void scan(void)
{
    int v = mt_rank + 1, out = -1;
    if (outcome("MPI_Scan", MPI_Scan(&v, &out, 1, MPI_INT, MPI_SUM, world), 0))
        CHECK(out == (mt_rank + 1) * (mt_rank + 2) / 2);
}

static void gathers(void)
{
    int *all = malloc(sizeof(int) * BIG * n), *mine = malloc(sizeof(int) * BIG);
    mt_fill(mine, BIG, mt_rank);
    int rc = MPI_Gather(mine, BIG, MPI_INT, all, BIG, MPI_INT, 0, world);
    if (outcome("MPI_Gather", rc, 0) && mt_rank == 0)
        for (int r = 0; r < n; r++)
            CHECK(mt_verify(all + r * BIG, BIG, r));
    rc = MPI_Allgather(mine, BIG, MPI_INT, all, BIG, MPI_INT, world);
    if (outcome("MPI_Allgather", rc, 1))
        for (int r = 0; r < n; r++)
            CHECK(mt_verify(all + r * BIG, BIG, r));
    int *to = malloc(sizeof(int) * n), *from = malloc(sizeof(int) * n);
    for (int r = 0; r < n; r++)
        to[r] = mt_rank * 100 + r;
    if (outcome("MPI_Alltoall", MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, world), 1))
        for (int r = 0; r < n; r++)
            CHECK(from[r] == r * 100 + mt_rank);
    for (int r = 0; r < n; r++)
        to[r] = r + mt_rank;
    int got = -1;
    rc = MPI_Reduce_scatter_block(to, &got, 1, MPI_INT, MPI_SUM, world);
    if (outcome("MPI_Reduce_scatter_block", rc, 1))
        CHECK(got == n * mt_rank + n * (n - 1) / 2);
    free(to);
    free(from);
    free(all);
    free(mine);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    n = mt_size;
    dead = n - 1;
    int late = argc > 1 && !strcmp(argv[1], "late");
    if (n < 3) {
        if (mt_rank == 0)
            fprintf(stderr, "fault_coll: needs 3 ranks or more\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm alive;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, mt_rank != dead ? 0 : MPI_UNDEFINED, mt_rank, &alive));
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &world));
    MPI_MUST(MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN));
    MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == dead)
        _exit(9);

    if (!late) {
        int x;
        MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int rc = MPI_Recv(&x, 1, MPI_INT, dead, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc != MPI_SUCCESS && mt_class(rc) == MPIX_ERR_PROC_FAILED);
    }
    /* One survivor takes its time: the others reach later steps first. */
    if (late && mt_rank == 1)
        usleep(20000);

    sum_all(1, 0);   /* direct */
    sum_all(BIG, 0); /* scheduled */
    sum_all(1, 1);
    for (int root = 0; root < n; root++) {
        bcast(BIG, root, 0); /* direct */
        bcast(BIG, root, 1);
    }
    reduce(1);
    reduce(BIG);
    scan();
    gathers();
    outcome("MPI_Barrier", MPI_Barrier(world), 1);
    MPI_Request req;
    outcome("MPI_Ibarrier", wait_rc(MPI_Ibarrier(world, &req), &req), 1);

    /* The survivors' own communicator is untouched by all that. */
    int one = 1, sum = 0;
    MPI_MUST(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, alive));
    CHECK(sum == n - 1);
    int buf[BIG];
    if (mt_rank == 0)
        mt_fill(buf, BIG, 7);
    MPI_MUST(MPI_Bcast(buf, BIG, MPI_INT, 0, alive));
    CHECK(mt_verify(buf, BIG, 7));

    long mine[2] = {mt_passed, mt_failed}, tot[2];
    MPI_MUST(MPI_Reduce(mine, tot, 2, MPI_LONG, MPI_SUM, 0, alive));
    if (mt_rank == 0)
        printf("fault_coll: %ld passed, %ld failed\n", tot[0], tot[1]);
    fflush(stdout);
    _exit(0);
}
