/* Helpers of the MPI collective tests: checks that say where they failed, a
 * call that must succeed, and the ending that turns the counts into an exit
 * status (0 pass, 1 fail, 77 skip). */
#ifndef WEFT_COLL_TEST_H
#define WEFT_COLL_TEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_rank = -1, t_size = 0;
static long t_passed, t_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            t_passed++;                                                                            \
        } else {                                                                                   \
            if (t_failed++ < 20)                                                                   \
                fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", t_rank, __FILE__, __LINE__, \
                        #cond);                                                                    \
        }                                                                                          \
    } while (0)

#define MUSTMPI(call)                                                                              \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            char s_[MPI_MAX_ERROR_STRING];                                                         \
            int l_ = 0;                                                                            \
            MPI_Error_string(rc_, s_, &l_);                                                        \
            fprintf(stderr, "[rank %d] %s:%d: %s failed: %s (%d)\n", t_rank, __FILE__, __LINE__,   \
                    #call, s_, rc_);                                                               \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* Run a collective blocking, or as its I-variant (the call names &rq_) + Wait. */
#define COLL(nb, blocking, nonblocking)                                                            \
    do {                                                                                           \
        if (!(nb)) {                                                                               \
            MUSTMPI(blocking);                                                                     \
        } else {                                                                                   \
            MPI_Request rq_ = MPI_REQUEST_NULL;                                                    \
            MUSTMPI(nonblocking);                                                                  \
            MUSTMPI(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                            \
            CHECK(rq_ == MPI_REQUEST_NULL);                                                        \
        }                                                                                          \
    } while (0)

static inline void t_init(int *argc, char ***argv)
{
    MUSTMPI(MPI_Init(argc, argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* Every rank's verdict, combined; exits. */
static inline int t_finish(const char *name)
{
    long failed = t_failed, all = 0;
    MPI_Allreduce(&failed, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("%s: %d ranks, %ld checks on rank 0, %ld failed in all\n", name, t_size, t_passed,
               all);
    MPI_Finalize();
    return all ? 1 : 0;
}

static inline void t_skip(const char *why)
{
    if (t_rank == 0)
        printf("skipped: %s\n", why);
    MPI_Finalize();
    exit(77);
}

#endif
