/* mpi_chain: seed 003's task chains (the HPX parcelport benchmark) in plain
 * MPI, the pattern an MPI parcelport uses: a window of posted MPI_Irecv with
 * MPI_ANY_TAG tested by MPI_Testany, every hop an MPI_Isend whose request is
 * waited for only when its slot comes round again. A chain is a token that
 * hops between the 2 ranks, each arrival sending the next hop; 64 chains at
 * once give the message rate, one chain the one-way time per hop. Built by
 * bench/weft-bench and bench/run_chain.sh against weft, Open MPI and MPICH; weft_chain runs the
 * same chains over weft's active messages.
 *
 *   mpirun -n 2 mpi_chain [--pin] [--quick|--smoke] [--runs R] [--min S] [--max S]
 *                         [--window C]
 *
 * Sizes from --min to --max (default 8 B to 4 KiB, by 8), C chains (64).
 * Prints csv,chain,<size>,rate_Mhops and csv,chain_lat,<size>,us_per_hop,
 * each the median of R runs. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

#define TAG_HOP  1
#define TAG_STOP 2
#define SLOTS    512

typedef struct {
    uint32_t chain, hops;
} token_t;

static int rank, peer;
static MPI_Comm comm, ctrl;
static size_t len;
static int window;
static char *rbuf, *sbuf;
static MPI_Request *rr, sr[SLOTS];
static int ns;

static void hop(token_t t)
{
    if (sr[ns] != MPI_REQUEST_NULL)
        MPI_Wait(&sr[ns], MPI_STATUS_IGNORE);
    char *out = sbuf + (size_t)ns * (sizeof t + len);
    memcpy(out, &t, sizeof t);
    MPI_Isend(out, (int)(sizeof t + len), MPI_BYTE, peer, TAG_HOP, comm, &sr[ns]);
    ns = (ns + 1) % SLOTS;
}

/* Microseconds for chains chains of hops hops each (hops even: every chain
 * ends at rank 0). */
static double run(int chains, int hops)
{
    size_t slot = sizeof(token_t) + len;
    for (int i = 0; i < window; i++)
        MPI_Irecv(rbuf + (size_t)i * slot, (int)slot, MPI_BYTE, peer, MPI_ANY_TAG, comm, &rr[i]);
    MPI_Barrier(ctrl);
    double t0 = bench_now_us();
    int ended = 0;
    if (rank == 0)
        for (int c = 0; c < chains; c++)
            hop((token_t){(uint32_t)c, (uint32_t)hops - 1});
    while (rank != 0 || ended < chains) {
        int idx, flag;
        MPI_Status st;
        MPI_Testany(window, rr, &idx, &flag, &st);
        if (!flag || idx == MPI_UNDEFINED)
            continue;
        if (st.MPI_TAG == TAG_STOP)
            break;
        token_t t;
        memcpy(&t, rbuf + (size_t)idx * slot, sizeof t);
        MPI_Irecv(rbuf + (size_t)idx * slot, (int)slot, MPI_BYTE, peer, MPI_ANY_TAG, comm,
                  &rr[idx]);
        if (t.hops == 0)
            ended++;
        else
            hop((token_t){t.chain, t.hops - 1});
    }
    double us = bench_now_us() - t0;
    if (rank == 0)
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_STOP, comm);
    for (int i = 0; i < SLOTS; i++)
        MPI_Wait(&sr[i], MPI_STATUS_IGNORE);
    for (int i = 0; i < window; i++)
        if (rr[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&rr[i]);
            MPI_Wait(&rr[i], MPI_STATUS_IGNORE);
        }
    MPI_Barrier(ctrl);
    /* rank 0's clock: it started the chains and saw them end */
    MPI_Bcast(&us, 1, MPI_DOUBLE, 0, ctrl);
    return us;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 5, .min = 8, .max = 4096, .window = 64, .step = 8};
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin] [--quick|--smoke] [--runs R] [--min S] [--max S] [--window C]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 5)
        o.runs = o.smoke ? 1 : 3;
    int cpu = bench_mpi_setup("mpi_chain", &o, &rank, &peer, &comm, &ctrl);
    window = o.window;
    rr = calloc((size_t)window, sizeof *rr);
    rbuf = malloc((size_t)window * (sizeof(token_t) + o.max));
    sbuf = calloc(SLOTS, sizeof(token_t) + o.max);
    double *v = malloc(sizeof(double) * (size_t)o.runs);
    if (!rr || !rbuf || !sbuf || !v) {
        fprintf(stderr, "mpi_chain: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < SLOTS; i++)
        sr[i] = MPI_REQUEST_NULL;
    /* hops in all: about 200 000 (full), 40 000 (quick), 2 000 (smoke) */
    int total = o.smoke ? 2000 : o.quick ? 40000 : 200000;
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_chain (%s): %d chains; ranks pinned %s (rank 0 cpu %d); median of %d runs\n",
               lib, window, o.pin ? "yes" : "no", cpu, o.runs);
        printf("# size rate_Mhops us_per_hop\n");
        fflush(stdout);
    }
    for (len = o.min; len <= o.max; len = bench_next(len, &o)) {
        int hops = (total / window) & ~1;
        run(window, hops); /* warm up */
        for (int r = 0; r < o.runs; r++)
            v[r] = (double)window * hops / run(window, hops);
        double rate = bench_median(v, o.runs);
        int lhops = (total / 4) & ~1;
        for (int r = 0; r < o.runs; r++)
            v[r] = run(1, lhops) / lhops;
        double lat = bench_median(v, o.runs);
        if (rank == 0) {
            printf("%6zu %10.3f %10.3f\n", len, rate, lat);
            bench_csv("chain", (double)len, "rate_Mhops", rate);
            bench_csv("chain_lat", (double)len, "us_per_hop", lat);
        }
    }
    free(rr);
    free(rbuf);
    free(sbuf);
    free(v);
    MPI_Comm_free(&comm);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
