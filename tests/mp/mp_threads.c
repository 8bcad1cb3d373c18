/* Several threads of each rank send and receive at once on a context created
 * with WEFT_THREAD_MULTIPLE: each thread talks to the same thread number of
 * the peer rank on its own tag range, with eager and rendezvous sizes, and
 * waits with wait, test and waitall. Every byte is checked. Run it under
 * ThreadSanitizer too (-DWEFT_TSAN=ON). Argument: threads per rank. */
#include <pthread.h>

#include "../common/test_util.h"

#define ROUNDS 200

static weft_ctx_t *ctx;
static int peer;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void count(bool ok)
{
    pthread_mutex_lock(&count_lock);
    CHECK(ok);
    pthread_mutex_unlock(&count_lock);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    size_t max = 64 * 1024;
    uint8_t *sbuf = malloc(max), *rbuf = malloc(max);
    for (int i = 0; i < ROUNDS; i++) {
        size_t len = (size_t)((i * 7919 + id * 131) % 5 == 0 ? 40000 + i : (i * 37) % 2000);
        uint64_t tag = (uint64_t)id << 32 | (uint64_t)i;
        uint64_t skey = tag * 2 + (uint64_t)weft_rank(ctx), rkey = tag * 2 + (uint64_t)peer;
        test_fill(sbuf, len, skey);
        weft_request_t *reqs[2];
        weft_status_t st[2];
        int rc = weft_sr_irecv(ctx, peer, 7, tag, rbuf, max, &reqs[0]);
        count(rc == WEFT_OK);
        rc = weft_sr_isend(ctx, peer, 7, tag, sbuf, len, &reqs[1]);
        count(rc == WEFT_OK);
        if (i % 3 == 0) {
            count(weft_sr_waitall(ctx, 2, reqs, st) == WEFT_OK);
        } else if (i % 3 == 1) {
            for (int k = 0; k < 2; k++) {
                int flag = 0, rc2 = WEFT_OK;
                while (!flag && rc2 == WEFT_OK)
                    rc2 = weft_sr_test(ctx, reqs[k], &flag, &st[k]);
                count(rc2 == WEFT_OK && flag);
            }
        } else {
            count(weft_sr_wait(ctx, reqs[1], &st[1]) == WEFT_OK);
            count(weft_sr_wait(ctx, reqs[0], &st[0]) == WEFT_OK);
        }
        count(st[0].length == len && st[0].tag == tag && st[0].source == peer);
        count(test_verify(rbuf, len, rkey) < 0);
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    test_watchdog(200);
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&params, &ctx));
    test_rank = weft_rank(ctx);
    CHECK(weft_thread_level(ctx) == WEFT_THREAD_MULTIPLE);
    peer = test_rank ^ 1;
    if (peer >= weft_size(ctx))
        peer = test_rank;
    pthread_t th[64];
    for (int i = 0; i < nthreads && i < 64; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < nthreads && i < 64; i++)
        pthread_join(th[i], NULL);
    MUST(weft_finalize(ctx));
    return test_summary("mp_threads");
}
