/* Non-blocking collectives advance while the application makes no MPI call,
 * when weft runs a progress thread (WEFT_PROGRESS_THREAD=1): the MPI layer's
 * schedules are a progress callback of the engine, which the thread runs.
 *
 * Rank 0 starts its MPI_Iallreduce only once every other rank has started
 * its own and told it so, and from then on those ranks make no MPI call:
 * they watch a counter that the user-defined operation bumps. The operation
 * runs on a rank only once a peer's data has arrived, which is after its
 * last MPI call, so only the progress thread can have applied it. The
 * result is checked after MPI_Wait. Each watch gives up after 20 s (the
 * check fails). Then the same with an MPI_Ibarrier and the MPI_Iallreduce in
 * flight together: two schedules, both moved by the thread. */
#include <stdatomic.h>
#include <time.h>

#include "coll_test.h"

#define GIVE_UP_S 20.0
#define COUNT     (1 << 16)

static atomic_int op_calls;

static void sum_counting(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
    atomic_fetch_add(&op_calls, 1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Watch op_calls grow past `from` with no MPI call; true if it did. */
static int watch_op(int from)
{
    double start = now_s();
    while (atomic_load(&op_calls) <= from && now_s() - start < GIVE_UP_S)
        ;
    return atomic_load(&op_calls) > from;
}

/* Rank 0 waits for every other rank's "started" note, then starts. */
static void started(int tag)
{
    char b = 0;
    if (t_rank == 0) {
        for (int r = 1; r < t_size; r++)
            MUSTMPI(MPI_Recv(&b, 1, MPI_CHAR, r, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        MUSTMPI(MPI_Send(&b, 1, MPI_CHAR, 0, tag, MPI_COMM_WORLD));
    }
}

static void allreduce(MPI_Op op, int *in, int *out, int with_barrier)
{
    for (int i = 0; i < COUNT; i++) {
        in[i] = t_rank + i;
        out[i] = -1;
    }
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int before = atomic_load(&op_calls);
    if (t_rank != 0) {
        if (with_barrier)
            MUSTMPI(MPI_Ibarrier(MPI_COMM_WORLD, &rq[1]));
        MUSTMPI(MPI_Iallreduce(in, out, COUNT, MPI_INT, op, MPI_COMM_WORLD, &rq[0]));
        started(with_barrier ? 2 : 1);
        CHECK(watch_op(before));
    } else {
        started(with_barrier ? 2 : 1);
        if (with_barrier)
            MUSTMPI(MPI_Ibarrier(MPI_COMM_WORLD, &rq[1]));
        MUSTMPI(MPI_Iallreduce(in, out, COUNT, MPI_INT, op, MPI_COMM_WORLD, &rq[0]));
    }
    MUSTMPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    long bad = 0;
    int base = t_size * (t_size - 1) / 2;
    for (int i = 0; i < COUNT; i++)
        bad += out[i] != base + t_size * i;
    CHECK(bad == 0);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    const char *pt = getenv("WEFT_PROGRESS_THREAD");
    if (!pt || atoi(pt) == 0)
        t_skip("needs WEFT_PROGRESS_THREAD=1");
    MPI_Op op;
    MUSTMPI(MPI_Op_create(sum_counting, 1, &op));
    int *in = malloc(COUNT * sizeof(int)), *out = malloc(COUNT * sizeof(int));
    allreduce(op, in, out, 0);
    allreduce(op, in, out, 1);
    MPI_Op_free(&op);
    free(in);
    free(out);
    return t_finish("coll_async");
}
