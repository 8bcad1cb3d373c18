/* MPI_THREAD_MULTIPLE: several threads per rank create intercommunicators at
 * once, each over its own duplicate of MPI_COMM_WORLD (split into two halves,
 * the duplicate as peer communicator), again and again. The context ids must
 * never be handed to two of them: every thread then talks over its
 * intercommunicator and its local group with the same tag as the others, so a
 * shared id shows as a message from another thread. Needs 2 ranks or more. */
#include <pthread.h>

#include "mpitest.h"

#define THREADS 4
#define ROUNDS  40

static MPI_Comm per_thread[THREADS];
static long failures[THREADS];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    long bad = 0;
    int half = mt_size / 2, low = mt_rank < half;
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm local, inter;
        if (MPI_Comm_split(per_thread[t], low, mt_rank, &local) != MPI_SUCCESS) {
            bad++;
            break;
        }
        /* Leaders: rank 0 of each half, world ranks 0 and half. */
        if (MPI_Intercomm_create(local, 0, per_thread[t], low ? half : 0, 7, &inter) !=
            MPI_SUCCESS) {
            bad++;
            MPI_Comm_free(&local);
            break;
        }
        int lrank, rsize;
        MPI_Comm_rank(inter, &lrank);
        MPI_Comm_remote_size(inter, &rsize);
        /* Point-to-point over the intercommunicator: rank r of each side sends
         * to rank r of the other (the larger side's extra ranks to its last). */
        int peer = lrank < rsize ? lrank : rsize - 1;
        int out[2] = {t, i}, in[2] = {-1, -1};
        MPI_Request r[2];
        int nr = 0;
        /* How many of the remote side send to me: those whose peer I am. */
        int senders = 0;
        int my_size = low ? half : mt_size - half;
        for (int q = 0; q < rsize; q++)
            senders += (q < my_size ? q : my_size - 1) == lrank;
        MPI_Isend(out, 2, MPI_INT, peer, 0, inter, &r[nr++]);
        for (int s = 0; s < senders; s++) {
            MPI_Status st;
            in[0] = in[1] = -1;
            MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, 0, inter, &st);
            if (in[0] != t || in[1] != i)
                bad++;
        }
        MPI_Waitall(nr, r, MPI_STATUSES_IGNORE);
        /* A collective over the intercommunicator (its local groups' id too):
         * the low group's leader broadcasts (t, i) to the high group. */
        int b[2] = {-1, -1};
        if (low) {
            b[0] = t, b[1] = i;
            MPI_Bcast(b, 2, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
        } else {
            MPI_Bcast(b, 2, MPI_INT, 0, inter);
            if (b[0] != t || b[1] != i)
                bad++;
        }
        int sum = 0, one = t;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
        if (sum != t * rsize)
            bad++;
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    failures[t] = bad;
    return NULL;
}

int main(int argc, char **argv)
{
    mt_init_multiple(&argc, &argv);
    if (mt_size < 2) {
        if (mt_rank == 0)
            printf("intercomm_threads: needs 2 ranks or more; skipped\n");
        MPI_Finalize();
        return 77;
    }
    for (int t = 0; t < THREADS; t++)
        MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &per_thread[t]));
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(failures[t] == 0);
        if (failures[t])
            fprintf(stderr, "[rank %d] thread %d: %ld wrong messages or failed calls\n", mt_rank, t,
                    failures[t]);
    }
    for (int t = 0; t < THREADS; t++)
        MPI_MUST(MPI_Comm_free(&per_thread[t]));
    return mt_finish("intercomm_threads");
}
