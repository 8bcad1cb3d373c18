/* What the plain-MPI benchmarks share: the set-up, a banner naming the MPI
 * library, and iteration counts that every rank agrees on. Header only, so the
 * programs build with nothing but an MPI's compiler wrapper (weft's, Open
 * MPI's or MPICH's). */
#ifndef WEFT_BENCH_MPI_H
#define WEFT_BENCH_MPI_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

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
    return bench_pin_opts(*rank, o);
}

/* The first line of MPI_Get_library_version, so every log says which MPI ran. */
static inline void bench_mpi_library(char *out, size_t len)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(lib, &n);
    lib[n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    size_t k = strcspn(lib, "\n");
    if (k >= len)
        k = len - 1;
    memcpy(out, lib, k);
    out[k] = '\0';
}

/* One message to or from peer, waited for. */
static inline void bench_mpi_send_wait(MPI_Comm c, int peer, int tag, const void *buf, size_t len)
{
    MPI_Request r;
    MPI_Isend(buf, (int)len, MPI_BYTE, peer, tag, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static inline void bench_mpi_recv_wait(MPI_Comm c, int peer, int tag, void *buf, size_t len)
{
    MPI_Request r;
    MPI_Irecv(buf, (int)len, MPI_BYTE, peer, tag, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* The zero-byte handshake of the native benchmarks (bench_handshake), not
 * MPI_Barrier, whose cost and skew differ between implementations. */
static inline void bench_mpi_handshake(MPI_Comm c, int rank, int peer)
{
    if (rank == 0) {
        bench_mpi_send_wait(c, peer, 0, NULL, 0);
        bench_mpi_recv_wait(c, peer, 0, NULL, 0);
    } else {
        bench_mpi_recv_wait(c, peer, 0, NULL, 0);
        bench_mpi_send_wait(c, peer, 0, NULL, 0);
    }
}

/* MPI_Waitall without statuses. MPICH declares the status argument as an array,
 * and GCC 12 then warns (-Wstringop-overflow) that MPI_STATUSES_IGNORE, a null
 * pointer, is too small for it: a false positive silenced here, once. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
static inline void bench_waitall(int n, MPI_Request *reqs)
{
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}
#pragma GCC diagnostic pop

/* A timed loop: runs `iters` iterations and returns the microseconds they took
 * on this rank. */
typedef double (*bench_loop_fn)(void *arg, long iters);

/* How many iterations make one run last about target_us: a pilot of `pilot`
 * iterations is timed, the slowest rank's time decides (so every rank gets the
 * same count, which the loops need), and the answer is kept within [lo, hi].
 * Calibrating by time rather than by a fixed count keeps a slow implementation
 * or a noisy moment from stretching a run without bound. */
static inline long bench_mpi_iters(MPI_Comm comm, bench_loop_fn fn, void *arg, long pilot,
                                   double target_us, long lo, long hi)
{
    double t = fn(arg, pilot), tmax = t;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    double n = tmax > 0.0 ? target_us / tmax * (double)pilot : (double)hi;
    if (n > (double)hi)
        return hi;
    return n < (double)lo ? lo : (long)n;
}

/* The slowest rank's value of x (what a timed collective phase costs). */
static inline double bench_mpi_max(MPI_Comm comm, double x)
{
    double m = x;
    MPI_Allreduce(&x, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
    return m;
}

#endif
