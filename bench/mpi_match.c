/* mpi_match: the plain-MPI twin of weft_match.c, seed 000's shuffled
 * tag-matching micro-benchmark (same N, message size, permutations, handshakes
 * and medians). Built by bench/weft-bench with each MPI's compiler wrapper.
 *
 *   mpirun -n 2 mpi_match [--pin] [--quick|--smoke] [--runs R] [--min N] [--max N] [--step K]
 *                         [--size S]
 *
 * expected: rank 0 posts N Irecvs (tags 0..N-1), rank 1 Isends N messages with
 * shuffled tags; unexpected: the N messages arrive first (tags in order), then
 * rank 0 posts Irecvs in shuffled tag order. Time per request = batch time / N
 * on rank 0. Data on one duplicated communicator, handshakes on another, so
 * control messages never sit in the queues being measured. See weft_match.c. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

#define TAG_GO   1
#define TAG_DONE 2

static MPI_Comm data, ctrl;
static int rank, peer;
static MPI_Request *reqs;
static uint32_t *perm;
static char *buf;
static size_t msg;

static void ctrl_send(int tag)
{
    MPI_Send(NULL, 0, MPI_BYTE, peer, tag, ctrl);
}

static void ctrl_recv(int tag)
{
    MPI_Recv(NULL, 0, MPI_BYTE, peer, tag, ctrl, MPI_STATUS_IGNORE);
}

static void make_perm(int n, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    bench_shuffle(perm, (size_t)n, seed);
}

static double run_expected(int n, uint64_t seed)
{
    double t = 0.0;
    if (rank == 0) {
        double t0 = bench_now_us();
        for (int i = 0; i < n; i++)
            MPI_Irecv(buf + (size_t)i * msg, (int)msg, MPI_BYTE, peer, i, data, &reqs[i]);
        ctrl_send(TAG_GO);
        bench_waitall(n, reqs);
        t = (bench_now_us() - t0) / n;
    } else {
        make_perm(n, seed);
        ctrl_recv(TAG_GO);
        for (int i = 0; i < n; i++)
            MPI_Isend(buf + (size_t)i * msg, (int)msg, MPI_BYTE, peer, (int)perm[i], data,
                      &reqs[i]);
        bench_waitall(n, reqs);
    }
    return t;
}

static double run_unexpected(int n, uint64_t seed)
{
    double t = 0.0;
    if (rank == 0) {
        make_perm(n, seed);
        MPI_Request done;
        MPI_Irecv(NULL, 0, MPI_BYTE, peer, TAG_DONE, ctrl, &done);
        ctrl_send(TAG_GO);
        MPI_Wait(&done, MPI_STATUS_IGNORE);
        double t0 = bench_now_us();
        for (int i = 0; i < n; i++)
            MPI_Irecv(buf + (size_t)i * msg, (int)msg, MPI_BYTE, peer, (int)perm[i], data,
                      &reqs[i]);
        bench_waitall(n, reqs);
        t = (bench_now_us() - t0) / n;
    } else {
        ctrl_recv(TAG_GO);
        for (int i = 0; i < n; i++)
            MPI_Isend(buf + (size_t)i * msg, (int)msg, MPI_BYTE, peer, i, data, &reqs[i]);
        MPI_Isend(NULL, 0, MPI_BYTE, peer, TAG_DONE, ctrl, &reqs[n]);
        bench_waitall(n + 1, reqs);
    }
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 11, .min = 1, .max = 4096, .window = 1, .msg_size = 8};
    if (bench_parse_opts(
            argc, argv, &o,
            "[--pin] [--quick|--smoke] [--runs R] [--min N] [--max N] [--step K] [--size S]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 11)
        o.runs = o.smoke ? 1 : 5;
    int cpu = bench_mpi_setup("mpi_match", &o, &rank, &peer, &data, &ctrl);
    msg = o.msg_size;
    int nmax = (int)o.max;
    reqs = calloc((size_t)nmax + 1, sizeof *reqs);
    perm = malloc(sizeof *perm * (size_t)nmax);
    buf = malloc((msg ? msg : 1) * (size_t)nmax);
    double *te = malloc(sizeof(double) * (size_t)o.runs);
    double *tu = malloc(sizeof(double) * (size_t)o.runs);
    if (!reqs || !perm || !buf || !te || !tu) {
        fprintf(stderr, "mpi_match: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'm', (msg ? msg : 1) * (size_t)nmax);
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_match (%s): shuffled tags, %zu-byte messages; ranks pinned %s (rank 0 cpu "
               "%d); median of %d runs\n",
               lib, msg, o.pin ? "yes" : "no", cpu, o.runs);
        printf("# %-6s %18s %20s\n", "N", "expected_us_per_req", "unexpected_us_per_req");
        fflush(stdout);
    }
    for (int n = (int)o.min; n <= nmax; n = (int)bench_next((size_t)n, &o)) {
        run_expected(n, 1);
        run_unexpected(n, 2);
        for (int r = 0; r < o.runs; r++) {
            uint64_t seed = (uint64_t)n * 1000u + (uint64_t)r + 1;
            te[r] = run_expected(n, seed);
            tu[r] = run_unexpected(n, seed ^ 0x5555);
        }
        if (rank == 0) {
            double e = bench_median(te, o.runs), u = bench_median(tu, o.runs);
            printf("# %-6d %18.3f %20.3f\n", n, e, u);
            bench_csv("match_expected", n, "us_per_req", e);
            bench_csv("match_unexpected", n, "us_per_req", u);
        }
    }
    free(reqs);
    free(perm);
    free(buf);
    free(te);
    free(tu);
    MPI_Comm_free(&data);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
