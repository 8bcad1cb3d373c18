/* Helpers of the group, intercommunicator, topology and handle tests: checks
 * that say where they failed, a call that must succeed, and an ending that
 * needs no collective (each rank exits with its own verdict; weftrun fails
 * the job when any rank fails). */
#ifndef WEFT_TOPO_CHECK_H
#define WEFT_TOPO_CHECK_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_rank = -1, t_size = 0;
static long t_passed, t_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            t_passed++;                                                                            \
        } else if (t_failed++ < 30) {                                                              \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", t_rank, __FILE__, __LINE__,     \
                    #cond);                                                                        \
        }                                                                                          \
    } while (0)

/* The error class a call returned (the world's handler returns errors). */
#define CHECK_CLASS(call, cls)                                                                     \
    do {                                                                                           \
        int rc_ = (call), c_ = rc_;                                                                \
        MPI_Error_class(rc_, &c_);                                                                 \
        if (c_ != (cls))                                                                           \
            fprintf(stderr, "[rank %d] %s:%d: %s gave class %d, not %d\n", t_rank, __FILE__,       \
                    __LINE__, #call, c_, (cls));                                                   \
        CHECK(c_ == (cls));                                                                        \
    } while (0)

#define MUSTMPI(call)                                                                              \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            fprintf(stderr, "[rank %d] %s:%d: %s failed (%d)\n", t_rank, __FILE__, __LINE__,       \
                    #call, rc_);                                                                   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static inline void t_init(int *argc, char ***argv)
{
    MUSTMPI(MPI_Init(argc, argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static inline int t_finish(const char *name)
{
    printf("%s: rank %d of %d, %ld checks, %ld failed\n", name, t_rank, t_size, t_passed, t_failed);
    MPI_Finalize();
    return t_failed ? 1 : 0;
}

static inline void t_skip(const char *why)
{
    if (t_rank == 0)
        printf("skipped: %s\n", why);
    MPI_Finalize();
    exit(77);
}

#endif
