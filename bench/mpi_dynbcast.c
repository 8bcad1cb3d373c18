/* One piece of data from rank 0 to every other rank, three ways:
 *
 *   bcast    MPI_Bcast on MPI_COMM_WORLD (a communicator made beforehand);
 *   sendall  the root sends to each destination (MPI_Isend, MPI_Waitall),
 *            each receives (MPI_Recv);
 *   dynamic  weft's dynamic broadcast (weft_bcast_dynamic, binomial tree)
 *            from the root, each destination a plain weft_sr_irecv: only
 *            when built against weft's MPI (the native API shares MPI's
 *            context).
 *
 * Every repetition starts after a barrier; each rank times its own part
 * (the root until its call returns, a destination until the data is in
 * its buffer) and the line gives the slowest rank's mean: the time for the
 * data to reach everyone. The dynamic broadcast's root then waits for its
 * completion (every destination acknowledged) outside the timed part, as
 * MPI_Bcast's root does not wait for its destinations at all. Prints
 *   csv,dynbcast,<method>,<ranks>,<bytes>,us,<microseconds>
 *   mpi_dynbcast [--min B] [--max B] [--methods bcast,sendall,dynamic] [--reps N] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef WEFT_MPI
#include <weft/weft_bcast.h>
#endif

static int rank, size;

static int reps_for(size_t len, int reps)
{
    if (len <= 65536)
        return reps;
    long r = (long)reps * 65536 / (long)len;
    return r < 3 ? 3 : (int)r;
}

static void run_bcast(char *buf, size_t len)
{
    MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void run_sendall(char *buf, size_t len, MPI_Request *reqs)
{
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            MPI_Isend(buf, (int)len, MPI_BYTE, r, 7, MPI_COMM_WORLD, &reqs[r - 1]);
        MPI_Waitall(size - 1, reqs, MPI_STATUSES_IGNORE);
    } else {
        MPI_Recv(buf, (int)len, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

#ifdef WEFT_MPI
static weft_ctx_t *wctx;
static weft_flag_t done;

/* The timed part; the root's completion is waited for in run_dynamic_end. */
static void run_dynamic(char *buf, size_t len, const int *dests, uint64_t tag)
{
    if (rank == 0) {
        weft_flag_init(&done);
        if (weft_bcast_dynamic(wctx, buf, len, dests, NULL, size - 1, 77, tag, NULL,
                               weft_flag_comp(&done), NULL) != WEFT_OK)
            MPI_Abort(MPI_COMM_WORLD, 2);
    } else {
        weft_request_t *req;
        if (weft_sr_irecv(wctx, 0, 77, tag, buf, len, &req) || weft_sr_wait(wctx, req, NULL))
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void run_dynamic_end(void)
{
    weft_comp_entry_t e;
    if (rank == 0 && (weft_flag_wait(&done, wctx, &e) || e.error))
        MPI_Abort(MPI_COMM_WORLD, 3);
}
#endif

int main(int argc, char **argv)
{
    size_t min = 8, max = 16u << 20;
    int reps = 100;
    const char *methods = "bcast,sendall,dynamic";
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min"))
            min = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--max"))
            max = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--methods"))
            methods = argv[i + 1];
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = malloc(max);
    memset(buf, rank, max);
    MPI_Request *reqs = malloc((size_t)size * sizeof *reqs);
    int *dests = malloc((size_t)size * sizeof *dests);
    for (int r = 1; r < size; r++)
        dests[r - 1] = r;
#ifdef WEFT_MPI
    if (weft_world_acquire(NULL, &wctx) != WEFT_OK || weft_rank(wctx) != rank)
        MPI_Abort(MPI_COMM_WORLD, 1);
#endif
#ifdef WEFT_MPI
    uint64_t tag = 1;
#endif
    char list[256];
    snprintf(list, sizeof list, "%s", methods);
    for (char *save = NULL, *m = strtok_r(list, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
        int kind = !strcmp(m, "bcast")     ? 0
                   : !strcmp(m, "sendall") ? 1
                   : !strcmp(m, "dynamic") ? 2
                                           : -1;
#ifndef WEFT_MPI
        if (kind == 2)
            continue;
#endif
        if (kind < 0)
            continue;
        for (size_t len = min; len <= max; len *= 8) {
            int n = reps_for(len, reps);
            double sum = 0;
            for (int i = -2; i < n; i++) { /* two rounds to warm up */
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (kind == 0)
                    run_bcast(buf, len);
                else if (kind == 1)
                    run_sendall(buf, len, reqs);
#ifdef WEFT_MPI
                else
                    run_dynamic(buf, len, dests, tag++);
#endif
                double t = MPI_Wtime() - t0;
#ifdef WEFT_MPI
                if (kind == 2)
                    run_dynamic_end();
#endif
                if (i >= 0)
                    sum += t;
            }
            double mean = sum / n, worst;
            MPI_Reduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("csv,dynbcast,%s,%d,%zu,us,%.2f\n", m, size, len, worst * 1e6);
            fflush(stdout);
        }
    }
#ifdef WEFT_MPI
    weft_world_release(wctx);
#endif
    free(dests);
    free(reqs);
    free(buf);
    MPI_Finalize();
    return 0;
}
