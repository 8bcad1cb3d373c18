/* What the plain-MPI twins share: the two-rank set-up. Header only, so the twins
 * build with nothing but an MPI's compiler wrapper. */
#ifndef WEFT_BENCH_MPI_H
#define WEFT_BENCH_MPI_H

#include <mpi.h>
#include <stdio.h>

#include "bench_common.h"

/* Check there are exactly 2 ranks, find this rank and its peer, duplicate a
 * data and a control communicator, and pin when asked. Returns the CPU pinned
 * to, or -1. */
static inline int bench_mpi_setup(const char *name, const bench_opts_t *o, int *rank, int *peer,
                                  MPI_Comm *data, MPI_Comm *ctrl)
{
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (*rank == 0)
            fprintf(stderr, "%s: needs exactly 2 ranks\n", name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *peer = 1 - *rank;
    MPI_Comm_dup(MPI_COMM_WORLD, data);
    MPI_Comm_dup(MPI_COMM_WORLD, ctrl);
    return o->pin ? bench_pin_by_rank(*rank) : -1;
}

#endif
