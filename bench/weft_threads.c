/* Multithreaded latency and message rate over the native API (seed 000's N-to-N).
 *
 * Two ranks, T threads each (WEFT_THREAD_MULTIPLE). Thread i of rank 0 talks
 * only to thread i of rank 1, on its own tag:
 *   latency  ping-pong of 8-byte messages; one-way latency = round trip / 2,
 *            the median over threads of each thread's mean;
 *   rate     rank 0's threads send windows of 64 8-byte isends, rank 1's
 *            threads receive them (irecvs posted first) and answer each
 *            window with one ack; aggregate messages per second over all
 *            threads.
 *   mixed    (with --mixed SIZE) the latency ping-pong again, while one more
 *            thread per rank streams SIZE-byte messages from rank 1 to
 *            rank 0 (isend + wait, irecv + wait) until the ping-pong ends:
 *            what a large transfer costs the small messages of the other
 *            threads (on shared memory its pieces are copied outside the
 *            engine lock).
 * Usage: weftrun -n 2 weft_threads [--threads 1,2,4,8] [--iters N] [--mixed SIZE]
 * Prints CSV: threads,latency_us,rate_msgs_per_s; with --mixed also
 * mixed,threads,size,latency_us,stream_GBps. The waiting policy comes from
 * WEFT_WAIT (spin, fixed_spin, block). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"

#define WINDOW 64

static weft_ctx_t *ctx;
static int me, iters;
static pthread_barrier_t barrier;
static double thread_lat[64];
static size_t mixed_size;   /* --mixed: bytes per streamed message, 0: no mixed run */
static atomic_int lat_left; /* latency threads still running */
static uint64_t streamed;   /* rank 0: bytes the stream delivered */

static void *lat_thread(void *arg)
{
    int id = (int)(intptr_t)arg;
    char sbuf[8] = {0}, rbuf[8];
    weft_request_t *r;
    pthread_barrier_wait(&barrier);
    double t0 = bench_now_us();
    for (int i = 0; i < iters; i++) {
        if (me == 0) {
            CHECK(weft_sr_isend(ctx, 1, 0, (uint64_t)id, sbuf, 8, &r));
            CHECK(weft_sr_wait(ctx, r, NULL));
            CHECK(weft_sr_irecv(ctx, 1, 0, (uint64_t)id, rbuf, 8, &r));
            CHECK(weft_sr_wait(ctx, r, NULL));
        } else {
            CHECK(weft_sr_irecv(ctx, 0, 0, (uint64_t)id, rbuf, 8, &r));
            CHECK(weft_sr_wait(ctx, r, NULL));
            CHECK(weft_sr_isend(ctx, 0, 0, (uint64_t)id, sbuf, 8, &r));
            CHECK(weft_sr_wait(ctx, r, NULL));
        }
    }
    thread_lat[id] = (bench_now_us() - t0) / iters / 2;
    atomic_fetch_sub(&lat_left, 1);
    return NULL;
}

/* Rank 1 streams mixed_size-byte messages to rank 0 while its latency
 * threads run, then one short message that tells rank 0 the stream ended. */
static void *stream_thread(void *arg)
{
    (void)arg;
    char *buf = malloc(mixed_size);
    CHECK(buf ? WEFT_OK : WEFT_ENOMEM);
    memset(buf, 1, mixed_size);
    weft_request_t *r;
    weft_status_t st;
    streamed = 0;
    pthread_barrier_wait(&barrier);
    for (bool last = false; !last;) {
        if (me == 1) {
            last = atomic_load(&lat_left) == 0;
            CHECK(weft_sr_isend(ctx, 0, 3, 0, buf, last ? 1 : mixed_size, &r));
            CHECK(weft_sr_wait(ctx, r, NULL));
        } else {
            CHECK(weft_sr_irecv(ctx, 1, 3, 0, buf, mixed_size, &r));
            CHECK(weft_sr_wait(ctx, r, &st));
            last = st.length < mixed_size;
            streamed += st.length;
        }
    }
    free(buf);
    return NULL;
}

static void *rate_thread(void *arg)
{
    int id = (int)(intptr_t)arg;
    char buf[WINDOW][8];
    char ack = 0;
    weft_request_t *reqs[WINDOW], *r;
    pthread_barrier_wait(&barrier);
    int windows = iters / WINDOW > 0 ? iters / WINDOW : 1;
    for (int w = 0; w < windows; w++) {
        if (me == 0) {
            for (int k = 0; k < WINDOW; k++)
                CHECK(weft_sr_isend(ctx, 1, 1, (uint64_t)id, buf[k], 8, &reqs[k]));
            CHECK(weft_sr_waitall(ctx, WINDOW, reqs, NULL));
            CHECK(weft_sr_irecv(ctx, 1, 2, (uint64_t)id, &ack, 1, &r));
            CHECK(weft_sr_wait(ctx, r, NULL));
        } else {
            for (int k = 0; k < WINDOW; k++)
                CHECK(weft_sr_irecv(ctx, 0, 1, (uint64_t)id, buf[k], 8, &reqs[k]));
            CHECK(weft_sr_waitall(ctx, WINDOW, reqs, NULL));
            CHECK(weft_sr_isend(ctx, 0, 2, (uint64_t)id, &ack, 1, &r));
            CHECK(weft_sr_wait(ctx, r, NULL));
        }
    }
    return NULL;
}

/* nthreads threads of fn, and one of extra if not NULL; microseconds from
 * their common start to the end of the last. */
static double run(int nthreads, void *(*fn)(void *), void *(*extra)(void *))
{
    pthread_t th[65];
    int all = nthreads + (extra != NULL);
    atomic_store(&lat_left, nthreads);
    pthread_barrier_init(&barrier, NULL, (unsigned)all + 1);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, fn, (void *)(intptr_t)i);
    if (extra)
        pthread_create(&th[nthreads], NULL, extra, NULL);
    /* Both ranks start together: a zero-byte exchange, then release the threads. */
    char b = 0;
    weft_request_t *r[2];
    CHECK(weft_sr_irecv(ctx, 1 - me, 9, 0, &b, 0, &r[0]));
    CHECK(weft_sr_isend(ctx, 1 - me, 9, 0, &b, 0, &r[1]));
    CHECK(weft_sr_waitall(ctx, 2, r, NULL));
    double t0 = bench_now_us();
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < all; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    return bench_now_us() - t0;
}

int main(int argc, char **argv)
{
    const char *list = "1,2,4,8";
    iters = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            list = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mixed") && i + 1 < argc)
            mixed_size = bench_parse_size(argv[++i]);
        else {
            fprintf(stderr, "usage: weft_threads [--threads 1,2,4,8] [--iters N] [--mixed SIZE]\n");
            return 2;
        }
    }
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level = WEFT_THREAD_MULTIPLE};
    CHECK(weft_init(&params, &ctx));
    me = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "weft_threads runs on exactly 2 ranks\n");
        return 2;
    }
    if (me == 0)
        printf("threads,latency_us,rate_msgs_per_s\n");
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        int n = atoi(tok);
        if (n < 1 || n > 64)
            continue;
        run(n, lat_thread, NULL);
        double lat = bench_median(thread_lat, n);
        double us = run(n, rate_thread, NULL);
        int windows = iters / WINDOW > 0 ? iters / WINDOW : 1;
        double rate = (double)n * windows * WINDOW / (us * 1e-6);
        if (me == 0) {
            printf("%d,%.2f,%.0f\n", n, lat, rate);
            fflush(stdout);
        }
        if (mixed_size > 1) {
            us = run(n, lat_thread, stream_thread);
            lat = bench_median(thread_lat, n);
            if (me == 0) {
                printf("mixed,%d,%zu,%.2f,%.2f\n", n, mixed_size, lat, (double)streamed / us / 1e3);
                fflush(stdout);
            }
        }
    }
    CHECK(weft_finalize(ctx));
    return 0;
}
