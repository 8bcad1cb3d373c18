/* Collectives from several threads at once (MPI_THREAD_MULTIPLE): each thread
 * has its own duplicate of MPI_COMM_WORLD and runs blocking and non-blocking
 * collectives on it, so schedules of different threads progress each other
 * through weft__mpi_sched_progress_all. Skips (77) without MPI_THREAD_MULTIPLE. */
#include <pthread.h>

#include "coll_test.h"

enum { T = 4, ITERS = 100 };
static MPI_Comm comms[T];
static long fails[T];

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm c = comms[t];
    for (int it = 0; it < ITERS; it++) {
        int x = t_rank + it + t, sum = -1, b[8], g[64];
        if (MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c) != MPI_SUCCESS ||
            sum != t_size * (t_size - 1) / 2 + t_size * (it + t))
            fails[t]++;
        for (int i = 0; i < 8; i++)
            b[i] = t_rank == it % t_size ? it * 8 + i : -1;
        MPI_Request rq[2];
        MPI_Ibcast(b, 8, MPI_INT, it % t_size, c, &rq[0]);
        MPI_Iallgather(&x, 1, MPI_INT, g, 1, MPI_INT, c, &rq[1]);
        int flag = 0;
        while (!flag)
            MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 8; i++)
            if (b[i] != it * 8 + i)
                fails[t]++;
        for (int q = 0; q < t_size; q++)
            if (g[q] != q + it + t)
                fails[t]++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MUSTMPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    if (provided < MPI_THREAD_MULTIPLE)
        t_skip("no MPI_THREAD_MULTIPLE");
    for (int t = 0; t < T; t++)
        MUSTMPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        CHECK(fails[t] == 0);
        MPI_Comm_free(&comms[t]);
    }
    return t_finish("coll_threads");
}
