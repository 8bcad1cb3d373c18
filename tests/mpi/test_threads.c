/* MPI_THREAD_MULTIPLE: several threads per rank send and receive at once on a
 * shared communicator (distinct tags) and on communicators they duplicate
 * concurrently, with wildcards, waits and tests. Zero loss, exact contents.
 * Then a communicator is freed while every thread's requests on it are
 * pending: the threads' completions release it concurrently. */
#include <pthread.h>

#include "mpitest.h"

#define THREADS 4
#define ROUNDS  200

static MPI_Comm per_thread[THREADS];
static long failures[THREADS];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    long bad = 0;
    /* Each thread duplicates its own communicator while the others do too:
     * the context id agreement must not hand two of them the same id. */
    MPI_Comm mine;
    if (MPI_Comm_dup(per_thread[t], &mine) != MPI_SUCCESS)
        bad++;
    for (int i = 0; i < ROUNDS; i++) {
        int out[2] = {mt_rank, t * 100000 + i}, in[2] = {-1, -1}, in2[2] = {-1, -1};
        MPI_Request r[4];
        MPI_Irecv(in, 2, MPI_INT, left, t, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(in2, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, mine, &r[1]);
        MPI_Isend(out, 2, MPI_INT, right, t, MPI_COMM_WORLD, &r[2]);
        MPI_Isend(out, 2, MPI_INT, right, i, mine, &r[3]);
        if (i % 2) {
            MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
        } else {
            int done = 0;
            while (!done)
                MPI_Testall(4, r, &done, MPI_STATUSES_IGNORE);
        }
        if (in[0] != left || in[1] != t * 100000 + i || in2[0] != left || in2[1] != t * 100000 + i)
            bad++;
    }
    MPI_Comm_free(&mine);
    failures[t] = bad;
    return NULL;
}

/* The communicator freed under the threads' pending requests. */
static MPI_Comm doomed;
static pthread_barrier_t posted;

static void *doomed_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int out = t * 1000 + mt_rank, in = -1;
    MPI_Request r[2];
    MPI_Status st[2];
    long bad = MPI_Irecv(&in, 1, MPI_INT, left, t, doomed, &r[0]) != MPI_SUCCESS;
    bad += MPI_Isend(&out, 1, MPI_INT, right, t, doomed, &r[1]) != MPI_SUCCESS;
    /* The main thread frees the communicator between the two. */
    pthread_barrier_wait(&posted);
    pthread_barrier_wait(&posted);
    bad += MPI_Waitall(2, r, st) != MPI_SUCCESS || in != t * 1000 + left ||
           st[0].MPI_SOURCE != left || st[0].MPI_TAG != t;
    failures[t] = bad;
    return NULL;
}

static void free_under_threads(void)
{
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &doomed));
    pthread_barrier_init(&posted, NULL, THREADS + 1);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, doomed_worker, (void *)(intptr_t)t);
    pthread_barrier_wait(&posted);
    MPI_MUST(MPI_Comm_free(&doomed));
    pthread_barrier_wait(&posted);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(failures[t] == 0);
    }
    pthread_barrier_destroy(&posted);
    /* Its context went back with the last request: a new communicator works
     * and is isolated from the world. */
    MPI_Comm next;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &next));
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size, got = -1;
    MPI_MUST(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, next,
                          MPI_STATUS_IGNORE));
    CHECK(got == left);
    MPI_MUST(MPI_Comm_free(&next));
}

int main(int argc, char **argv)
{
    mt_init_multiple(&argc, &argv);
    for (int t = 0; t < THREADS; t++)
        MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &per_thread[t]));
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(failures[t] == 0);
    }
    for (int t = 0; t < THREADS; t++)
        MPI_MUST(MPI_Comm_free(&per_thread[t]));
    free_under_threads();
    return mt_finish("threads");
}
