/* Finding completions among N outstanding operations, 2 ranks: rank 1 posts
 * N receives with distinct tags, rank 0 sends N 8-byte messages to them in a
 * shuffled order, and rank 1 finds every completion:
 *
 *   cq    each receive signals one completion queue (weft_sr_irecv_comp);
 *         the receiver pops it: a completion costs a pop, whatever N;
 *   scan  each receive has a request; the receiver looks at all N in turn,
 *         taking those done, and progresses once between two looks (what
 *         MPI_Testsome does; mpi_cq runs MPI_Testsome itself).
 *
 * The time counted is rank 1's, from the moment its receives are posted and
 * the sender told, to the last completion; per completion.
 *
 *   weft_cq [--min N] [--max N] [--runs R]
 *
 * csv,cq_<mode>,<N>,us_per_completion,<median over R>. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"

#define COMM  0x4444u
#define ROUND 8192 /* completions per run, at least N */

static weft_ctx_t *ctx;
static int rank;
static uint64_t *vals;
static uint32_t *order;

static double run(bool cq_mode, int n)
{
    int rounds = ROUND / n > 0 ? ROUND / n : 1;
    double us = 0;
    weft_cq_t *cq = NULL;
    weft_request_t **reqs = calloc((size_t)n, sizeof *reqs);
    if (cq_mode)
        CHECK(weft_cq_create((size_t)n, &cq));
    for (int r = 0; r < rounds; r++) {
        if (rank == 0) {
            bench_shuffle(order, (size_t)n, (uint64_t)r + 1);
            bench_recv_wait(ctx, 1, COMM + 1, 0, NULL, 0);
            weft_request_t *s;
            for (int i = 0; i < n; i++) {
                CHECK(weft_sr_isend(ctx, 1, COMM, order[i], &vals[i], sizeof vals[i], &s));
                CHECK(weft_sr_wait(ctx, s, NULL));
            }
            continue;
        }
        for (int i = 0; i < n; i++) {
            if (cq_mode)
                CHECK(weft_sr_irecv_comp(ctx, 0, COMM, (uint64_t)i, &vals[i], sizeof vals[i],
                                         weft_cq_comp(cq), NULL));
            else
                CHECK(weft_sr_irecv(ctx, 0, COMM, (uint64_t)i, &vals[i], sizeof vals[i], &reqs[i]));
        }
        double t0 = bench_now_us();
        bench_send_wait(ctx, 0, COMM + 1, 0, NULL, 0);
        int left = n;
        while (left > 0) {
            if (cq_mode) {
                weft_comp_entry_t e;
                if (weft_cq_pop(cq, &e) == WEFT_OK) {
                    CHECK(e.error);
                    left--;
                } else {
                    weft_progress(ctx);
                }
                continue;
            }
            int found = 0;
            for (int i = 0; i < n; i++) {
                int flag;
                if (!reqs[i])
                    continue;
                CHECK(weft_sr_check(ctx, reqs[i], &flag, NULL));
                if (flag) {
                    reqs[i] = NULL;
                    found++;
                }
            }
            left -= found;
            if (!found)
                weft_progress(ctx);
        }
        us += bench_now_us() - t0;
    }
    weft_cq_free(cq);
    free(reqs);
    bench_handshake(ctx, 1 - rank, COMM + 2);
    return us / ((double)rounds * n);
}

int main(int argc, char **argv)
{
    int min = 1, max = 4096, runs = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--min") && i + 1 < argc)
            min = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: weft_cq [--min N] [--max N] [--runs R]\n");
            return 2;
        }
    }
    if (min < 1 || max < min || max > ROUND || runs < 1 || runs > 64) {
        fprintf(stderr, "weft_cq: 1 <= min <= max <= %d, 1 to 64 runs\n", ROUND);
        return 2;
    }
    CHECK(weft_init(NULL, &ctx));
    rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "weft_cq: run it with 2 ranks\n");
        return 2;
    }
    bench_pin_by_rank(rank);
    vals = calloc((size_t)max, sizeof *vals);
    order = calloc((size_t)max, sizeof *order);
    if (rank == 1)
        printf("# N cq_us scan_us (per completion)\n");
    for (int n = min; n <= max; n *= 4) {
        for (int i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        double v[2][64];
        for (int r = 0; r < runs; r++)
            for (int m = 0; m < 2; m++)
                v[m][r] = run(m == 0, n);
        if (rank == 1) {
            double cq = bench_median(v[0], runs), scan = bench_median(v[1], runs);
            printf("%5d %9.3f %9.3f\n", n, cq, scan);
            bench_csv("cq_pop", n, "us_per_completion", cq);
            bench_csv("cq_scan", n, "us_per_completion", scan);
        }
    }
    free(vals);
    free(order);
    CHECK(weft_finalize(ctx));
    return 0;
}
