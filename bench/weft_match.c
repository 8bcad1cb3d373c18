/* weft_match: the "shuffled" tag-matching micro-benchmark of seed 000 (the
 * NewMadeleine constant-time matching talk), over the native weft API.
 *
 *   weftrun -n 2 weft_match [--pin] [--quick] [--runs R] [--min N] [--max N] [--step K]
 *                           [--size S] [--only expected|unexpected]
 *
 * For N = 1, 2, 4, ... 4096 (--min/--max; --step K multiplies by K instead of
 * 2, ending on --max) and messages of S bytes (default 8):
 *
 * expected    rank 0 posts N receives with distinct tags 0..N-1, in order, then
 *             tells rank 1 (a zero-byte message on a control communicator); rank 1
 *             sends N messages whose tags are a shuffled permutation of 0..N-1.
 *             Each arrival must find its receive among the N posted: a linear
 *             posted queue costs O(N) per message, a hashed one O(1).
 * unexpected  rank 1 sends N messages with tags 0..N-1 in order, then a "done"
 *             message on the control communicator; once rank 0 has received it
 *             (so the N messages sit in its unexpected queue), it posts N receives
 *             in a shuffled order of the tags. Each receive must find its message.
 *
 * Rank 0 reports the time of the whole batch divided by N (from before the first
 * receive is posted to the completion of the last; nothing subtracted), median of
 * R repetitions (default 11, 5 with --quick) after one warm-up. The permutations
 * come from a fixed seed, so mpi_match.c (the plain-MPI twin) sees the same ones.
 * --only runs one variant (the other column prints 0), so a profile under
 * valgrind shows that variant's costs alone. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"
#include "weft/weft.h"

#define COMM_DATA 0u
#define COMM_CTRL 1u
#define TAG_GO    1u
#define TAG_DONE  2u

static weft_ctx_t *ctx;
static int rank, peer;
static weft_request_t **reqs;
static uint32_t *perm;
static char *buf;
static size_t msg;

static void ctrl_send(uint64_t tag)
{
    weft_request_t *r;
    CHECK(weft_sr_isend(ctx, peer, COMM_CTRL, tag, NULL, 0, &r));
    CHECK(weft_sr_wait(ctx, r, NULL));
}

static void ctrl_recv(uint64_t tag)
{
    weft_request_t *r;
    CHECK(weft_sr_irecv(ctx, peer, COMM_CTRL, tag, NULL, 0, &r));
    CHECK(weft_sr_wait(ctx, r, NULL));
}

static void make_perm(int n, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    bench_shuffle(perm, (size_t)n, seed);
}

/* Receives posted first; returns us per request on rank 0. */
static double run_expected(int n, uint64_t seed)
{
    double t = 0.0;
    if (rank == 0) {
        double t0 = bench_now_us();
        for (int i = 0; i < n; i++)
            CHECK(weft_sr_irecv(ctx, peer, COMM_DATA, (uint64_t)i, buf + (size_t)i * msg, msg,
                                &reqs[i]));
        ctrl_send(TAG_GO);
        CHECK(weft_sr_waitall(ctx, n, reqs, NULL));
        t = (bench_now_us() - t0) / n;
    } else {
        make_perm(n, seed);
        ctrl_recv(TAG_GO);
        for (int i = 0; i < n; i++)
            CHECK(
                weft_sr_isend(ctx, peer, COMM_DATA, perm[i], buf + (size_t)i * msg, msg, &reqs[i]));
        CHECK(weft_sr_waitall(ctx, n, reqs, NULL));
    }
    return t;
}

/* Messages arrive first; returns us per request on rank 0. */
static double run_unexpected(int n, uint64_t seed)
{
    double t = 0.0;
    if (rank == 0) {
        make_perm(n, seed);
        weft_request_t *done;
        CHECK(weft_sr_irecv(ctx, peer, COMM_CTRL, TAG_DONE, NULL, 0, &done));
        ctrl_send(TAG_GO);
        CHECK(weft_sr_wait(ctx, done, NULL));
        double t0 = bench_now_us();
        for (int i = 0; i < n; i++)
            CHECK(
                weft_sr_irecv(ctx, peer, COMM_DATA, perm[i], buf + (size_t)i * msg, msg, &reqs[i]));
        CHECK(weft_sr_waitall(ctx, n, reqs, NULL));
        t = (bench_now_us() - t0) / n;
    } else {
        ctrl_recv(TAG_GO);
        for (int i = 0; i < n; i++)
            CHECK(weft_sr_isend(ctx, peer, COMM_DATA, (uint64_t)i, buf + (size_t)i * msg, msg,
                                &reqs[i]));
        CHECK(weft_sr_isend(ctx, peer, COMM_CTRL, TAG_DONE, NULL, 0, &reqs[n]));
        CHECK(weft_sr_waitall(ctx, n + 1, reqs, NULL));
    }
    return t;
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.runs = 11, .min = 1, .max = 4096, .window = 1, .msg_size = 8};
    bool do_expected = true, do_unexpected = true;
    /* --only is ours; the rest goes to the common parser. */
    int nargs = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            do_expected = !strcmp(argv[i + 1], "expected");
            do_unexpected = !strcmp(argv[i + 1], "unexpected");
            if (!do_expected && !do_unexpected) {
                fprintf(stderr, "weft_match: --only expected|unexpected\n");
                return 2;
            }
            i++;
        } else {
            argv[nargs++] = argv[i];
        }
    }
    argc = nargs;
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin] [--quick] [--runs R] [--min N] [--max N] [--step K] [--size S] "
                         "[--only expected|unexpected]"))
        return 2;
    if (o.quick && o.runs == 11)
        o.runs = o.smoke ? 1 : 5;
    CHECK(weft_init(NULL, &ctx));
    rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        if (rank == 0)
            fprintf(stderr, "weft_match: needs exactly 2 ranks (weftrun -n 2)\n");
        weft_finalize(ctx);
        return 2;
    }
    peer = 1 - rank;
    int cpu = bench_pin_opts(rank, &o);
    msg = o.msg_size;
    int nmax = (int)o.max;
    reqs = calloc((size_t)nmax + 1, sizeof *reqs);
    perm = malloc(sizeof *perm * (size_t)nmax);
    buf = malloc((msg ? msg : 1) * (size_t)nmax);
    double *te = malloc(sizeof(double) * (size_t)o.runs);
    double *tu = malloc(sizeof(double) * (size_t)o.runs);
    if (!reqs || !perm || !buf || !te || !tu) {
        fprintf(stderr, "weft_match: out of memory\n");
        return 1;
    }
    memset(buf, 'm', (msg ? msg : 1) * (size_t)nmax);
    if (rank == 0) {
        printf("# weft_match: shuffled tags, %zu-byte messages; ranks pinned %s (rank 0 cpu %d); "
               "median of %d runs\n",
               msg, o.pin ? "yes" : "no", cpu, o.runs);
        printf("%-6s %18s %20s\n", "N", "expected_us_per_req", "unexpected_us_per_req");
        fflush(stdout);
    }
    for (int n = (int)o.min; n <= nmax; n = (int)bench_next((size_t)n, &o)) {
        /* warm-up: pools and tables reach their size */
        if (do_expected)
            run_expected(n, 1);
        if (do_unexpected)
            run_unexpected(n, 2);
        for (int r = 0; r < o.runs; r++) {
            uint64_t seed = (uint64_t)n * 1000u + (uint64_t)r + 1;
            te[r] = do_expected ? run_expected(n, seed) : 0.0;
            tu[r] = do_unexpected ? run_unexpected(n, seed ^ 0x5555) : 0.0;
        }
        if (rank == 0) {
            double e = bench_median(te, o.runs), u = bench_median(tu, o.runs);
            printf("%-6d %18.3f %20.3f\n", n, e, u);
            bench_csv("match_expected", n, "us_per_req", e);
            bench_csv("match_unexpected", n, "us_per_req", u);
        }
    }
    if (rank == 0) {
        weft_counters_t c;
        if (weft_counters_get(ctx, &c) == WEFT_OK)
            printf("# weft counters (rank 0): unexpected %llu, unexpected_max %llu\n",
                   (unsigned long long)c.unexpected, (unsigned long long)c.unexpected_max);
    }
    if (rank == 1) {
        weft_counters_t c;
        if (weft_counters_get(ctx, &c) == WEFT_OK && c.credit_stalls)
            fprintf(stderr,
                    "# weft counters (rank 1): eager %llu, rendezvous %llu, credit_stalls %llu\n",
                    (unsigned long long)c.eager_sent, (unsigned long long)c.rdv_sent,
                    (unsigned long long)c.credit_stalls);
    }
    free(reqs);
    free(perm);
    free(buf);
    free(te);
    free(tu);
    CHECK(weft_finalize(ctx));
    return 0;
}
