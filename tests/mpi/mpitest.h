/* Helpers for weft's MPI test programs: checks that count failures and name
 * the rank, and a closing line. Plain MPI: these programs also build against
 * other MPI implementations. */
#ifndef WEFT_MPITEST_H
#define WEFT_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_rank = -1, mt_size = 0;
static long mt_passed, mt_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            mt_passed++;                                                                           \
        } else {                                                                                   \
            mt_failed++;                                                                           \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", mt_rank, __FILE__, __LINE__,    \
                    #cond);                                                                        \
        }                                                                                          \
    } while (0)

/* An MPI call that must succeed. */
#define MPI_MUST(call)                                                                             \
    do {                                                                                           \
        int mt_rc_ = (call);                                                                       \
        if (mt_rc_ != MPI_SUCCESS) {                                                               \
            char mt_s_[MPI_MAX_ERROR_STRING];                                                      \
            int mt_l_;                                                                             \
            MPI_Error_string(mt_rc_, mt_s_, &mt_l_);                                               \
            fprintf(stderr, "[rank %d] %s:%d: %s failed: %s\n", mt_rank, __FILE__, __LINE__,       \
                    #call, mt_s_);                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
        }                                                                                          \
    } while (0)

/* The error class of an MPI return code. */
static inline int mt_class(int rc)
{
    int c = rc;
    MPI_Error_class(rc, &c);
    return c;
}

/* A recognisable pattern of n ints for key, and whether b holds it. */
static inline void mt_fill(int *b, int n, int key)
{
    for (int i = 0; i < n; i++)
        b[i] = key * 1000003 + i;
}

static inline int mt_verify(const int *b, int n, int key)
{
    for (int i = 0; i < n; i++)
        if (b[i] != key * 1000003 + i)
            return 0;
    return 1;
}

static inline void mt_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
}

/* mt_init at MPI_THREAD_MULTIPLE; the level provided is checked. */
static inline void mt_init_multiple(int *argc, char ***argv)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    CHECK(provided == MPI_THREAD_MULTIPLE);
}

/* Sum the checks of every rank (with point-to-point only, so that tests of the
 * point-to-point layer do not depend on collectives), print one line on rank
 * 0, finalize, and return the exit code. */
static inline int mt_finish(const char *name)
{
    int tag = 32000;
    long mine[2] = {mt_passed, mt_failed}, sum[2] = {mt_passed, mt_failed};
    if (mt_rank == 0) {
        for (int r = 1; r < mt_size; r++) {
            long got[2];
            MPI_Recv(got, 2, MPI_LONG, r, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sum[0] += got[0];
            sum[1] += got[1];
        }
        for (int r = 1; r < mt_size; r++)
            MPI_Send(sum, 2, MPI_LONG, r, tag, MPI_COMM_WORLD);
    } else {
        MPI_Send(mine, 2, MPI_LONG, 0, tag, MPI_COMM_WORLD);
        MPI_Recv(sum, 2, MPI_LONG, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    long ptotal = sum[0], total = sum[1];
    if (mt_rank == 0)
        printf("%s (%d ranks): %ld passed, %ld failed\n", name, mt_size, ptotal, total);
    MPI_Finalize();
    return total ? 1 : 0;
}

#endif
