/* weft_aggreg: what packet aggregation buys (WEFT_STRATEGY=default vs aggreg),
 * between ranks 0 and 1 over the native weft API.
 *
 *   weftrun -n 2 weft_aggreg [--test rate|brate|multi|lat|all] [--threads T] [--runs R] [--quick]
 *                            [--pin] [--min S] [--max S] [--window W]
 *
 * rate   message rate of small non-blocking sends, as OSU's osu_mbw_mr: each of
 *        1..T threads of rank 0 sends windows of W (default 64) isends of one
 *        size to its twin thread on rank 1 (own tag), waits for them, then for
 *        a 4-byte ack from the twin, which posted W irecvs and waited for
 *        them; messages per second counted over all threads. Sizes 8 B to
 *        4 KiB (--min/--max).
 * multi  seed 004's multi-packet ping-pong: 16 KiB cut into k = 1..64 equal
 *        pieces, sent back to back as k isends (tags 0..k-1) and returned the
 *        same way; half the round trip in us.
 * brate  as rate with 8-byte messages and one thread, but every send waited
 *        for before the next (a loop of blocking sends: nothing to aggregate).
 * lat    8-byte blocking ping-pong (isend + wait, irecv + wait): what a lone
 *        message costs, in us one-way.
 *
 * Each value is the median of R runs (default 7; 5 with --quick) after a
 * warm-up run. With T > 1 the context is initialised at WEFT_THREAD_MULTIPLE,
 * otherwise at WEFT_THREAD_SINGLE. Lines are "test param1 param2 value", so
 * bench/run_aggreg.sh can alternate strategies and take medians. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"
#include "weft/weft.h"

#define COMM_DATA 0u
#define COMM_CTRL 1u
#define COMM_ACK  2u
#define MAX_T     4
#define MULTI_LEN (16u << 10)

static weft_ctx_t *ctx;
static int rank, peer;

typedef struct rate_arg {
    int id;
    size_t len;
    long iters;
    int window;
    bool blocking;
} rate_arg_t;

static void *rate_thread(void *p)
{
    rate_arg_t *a = p;
    char buf[4096], ack[4] = {0};
    weft_request_t *reqs[256];
    memset(buf, 'a' + a->id, sizeof buf);
    for (long i = 0; i < a->iters; i++) {
        if (rank == 0) {
            for (int w = 0; w < a->window; w++) {
                CHECK(weft_sr_isend(ctx, peer, COMM_DATA, (uint64_t)a->id, buf, a->len, &reqs[w]));
                if (a->blocking)
                    CHECK(weft_sr_wait(ctx, reqs[w], NULL));
            }
            if (!a->blocking)
                CHECK(weft_sr_waitall(ctx, a->window, reqs, NULL));
            bench_recv_wait(ctx, peer, COMM_ACK, (uint64_t)a->id, ack, sizeof ack);
        } else {
            for (int w = 0; w < a->window; w++)
                CHECK(weft_sr_irecv(ctx, peer, COMM_DATA, (uint64_t)a->id, buf, a->len, &reqs[w]));
            CHECK(weft_sr_waitall(ctx, a->window, reqs, NULL));
            bench_send_wait(ctx, peer, COMM_ACK, (uint64_t)a->id, ack, sizeof ack);
        }
    }
    return NULL;
}

/* Messages per second of nthreads threads, iters windows each. */
static double run_rate(int nthreads, size_t len, long iters, int window, bool blocking)
{
    pthread_t th[MAX_T];
    rate_arg_t args[MAX_T];
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    for (int t = 0; t < nthreads; t++) {
        args[t] = (rate_arg_t){
            .id = t, .len = len, .iters = iters, .window = window, .blocking = blocking};
        if (nthreads == 1)
            rate_thread(&args[t]);
        else if (pthread_create(&th[t], NULL, rate_thread, &args[t])) {
            fprintf(stderr, "weft_aggreg: pthread_create failed\n");
            exit(1);
        }
    }
    if (nthreads > 1)
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
    double us = bench_now_us() - t0;
    return (double)nthreads * (double)window * (double)iters / us * 1e6;
}

/* Seed 004: MULTI_LEN bytes in k pieces, there and back; one-way us. */
static double run_multi(char *sbuf, char *rbuf, int k, long iters)
{
    weft_request_t *reqs[64];
    size_t piece = MULTI_LEN / (size_t)k;
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        for (int turn = 0; turn < 2; turn++) {
            if ((rank == 0) == (turn == 0)) {
                for (int j = 0; j < k; j++)
                    CHECK(weft_sr_isend(ctx, peer, COMM_DATA, (uint64_t)j, sbuf + (size_t)j * piece,
                                        piece, &reqs[j]));
            } else {
                for (int j = 0; j < k; j++)
                    CHECK(weft_sr_irecv(ctx, peer, COMM_DATA, (uint64_t)j, rbuf + (size_t)j * piece,
                                        piece, &reqs[j]));
            }
            CHECK(weft_sr_waitall(ctx, k, reqs, NULL));
        }
    }
    return (bench_now_us() - t0) / (double)iters / 2.0;
}

static double run_lat(long iters)
{
    char sbuf[8] = {0}, rbuf[8];
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            bench_send_wait(ctx, peer, COMM_DATA, 0, sbuf, sizeof sbuf);
            bench_recv_wait(ctx, peer, COMM_DATA, 0, rbuf, sizeof rbuf);
        } else {
            bench_recv_wait(ctx, peer, COMM_DATA, 0, rbuf, sizeof rbuf);
            bench_send_wait(ctx, peer, COMM_DATA, 0, sbuf, sizeof sbuf);
        }
    }
    return (bench_now_us() - t0) / (double)iters / 2.0;
}

static const char *strategy_name(void)
{
    weft_gate_counters_t c = {.field_mask = WEFT_GATE_COUNTERS_ALL};
    if (weft_counters_gate(ctx, peer, &c) != WEFT_OK)
        return "?";
    static char name[40];
    snprintf(name, sizeof name, "%s/%s", c.driver, c.strategy);
    return name;
}

int main(int argc, char **argv)
{
    const char *test = "all";
    int threads = 4;
    /* Our own options first; the rest are the common ones. */
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--test") && i + 1 < argc)
            test = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else
            argv[n++] = argv[i];
    }
    argc = n;
    bench_opts_t o = {.runs = 7, .min = 8, .max = 4096, .window = 64};
    if (bench_parse_opts(
            argc, argv, &o,
            "[--test rate|brate|multi|lat|all] [--threads T] [--pin] [--quick] [--runs R] "
            "[--min S] [--max S] [--window W]") ||
        threads < 1 || threads > MAX_T || o.window < 1 || o.window > 256 || o.max > 4096) {
        fprintf(stderr, "weft_aggreg: threads 1..%d, window 1..256, sizes up to 4096\n", MAX_T);
        return 2;
    }
    if (o.quick && o.runs == 7)
        o.runs = 5;
    weft_init_params_t ip = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                             .thread_level =
                                 threads > 1 ? WEFT_THREAD_MULTIPLE : WEFT_THREAD_SINGLE};
    CHECK(weft_init(&ip, &ctx));
    rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        if (rank == 0)
            fprintf(stderr, "weft_aggreg: needs exactly 2 ranks (weftrun -n 2)\n");
        weft_finalize(ctx);
        return 2;
    }
    peer = 1 - rank;
    if (o.pin)
        bench_pin_by_rank(rank);
    double *v = malloc(sizeof(double) * (size_t)o.runs);
    char *sbuf = malloc(MULTI_LEN), *rbuf = malloc(MULTI_LEN);
    if (!v || !sbuf || !rbuf)
        return 1;
    memset(sbuf, 'a', MULTI_LEN);
    bool all = !strcmp(test, "all");
    if (rank == 0) {
        printf("# weft_aggreg: %s, %d runs per point, median; window %d\n", strategy_name(), o.runs,
               o.window);
        fflush(stdout);
    }
    if (all || !strcmp(test, "rate")) {
        if (rank == 0)
            printf("# rate <size> <threads> <messages/s>\n");
        long iters = o.quick ? 100 : 400;
        for (int t = 1; t <= threads; t *= 2) {
            for (size_t len = o.min; len <= o.max; len *= 2) {
                run_rate(t, len, iters / 10 + 1, o.window, false);
                for (int r = 0; r < o.runs; r++)
                    v[r] = run_rate(t, len, iters, o.window, false);
                if (rank == 0) {
                    printf("rate %zu %d %.0f\n", len, t, bench_median(v, o.runs));
                    fflush(stdout);
                }
            }
        }
    }
    if (all || !strcmp(test, "brate")) {
        if (rank == 0)
            printf("# brate 8 1 <messages/s, each send waited for>\n");
        long iters = o.quick ? 100 : 400;
        run_rate(1, 8, iters / 10 + 1, o.window, true);
        for (int r = 0; r < o.runs; r++)
            v[r] = run_rate(1, 8, iters, o.window, true);
        if (rank == 0) {
            printf("brate 8 1 %.0f\n", bench_median(v, o.runs));
            fflush(stdout);
        }
    }
    if (all || !strcmp(test, "multi")) {
        if (rank == 0)
            printf("# multi <pieces> <piece size> <one-way us for 16 KiB>\n");
        long iters = o.quick ? 500 : 2000;
        for (int k = 1; k <= 64; k *= 2) {
            run_multi(sbuf, rbuf, k, iters / 10 + 1);
            for (int r = 0; r < o.runs; r++)
                v[r] = run_multi(sbuf, rbuf, k, iters);
            if (rank == 0) {
                printf("multi %d %u %.3f\n", k, MULTI_LEN / (unsigned)k, bench_median(v, o.runs));
                fflush(stdout);
            }
        }
    }
    if (all || !strcmp(test, "lat")) {
        if (rank == 0)
            printf("# lat 8 1 <one-way us>\n");
        long iters = o.quick ? 5000 : 20000;
        run_lat(iters / 10 + 1);
        for (int r = 0; r < o.runs; r++)
            v[r] = run_lat(iters);
        if (rank == 0) {
            printf("lat 8 1 %.3f\n", bench_median(v, o.runs));
            fflush(stdout);
        }
    }
    free(v);
    free(sbuf);
    free(rbuf);
    CHECK(weft_finalize(ctx));
    return 0;
}
