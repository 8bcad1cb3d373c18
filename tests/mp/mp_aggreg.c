/* Bursts of small sends from several threads of each rank (WEFT_THREAD_MULTIPLE)
 * to rank 0's neighbour, with any tag and two communicators mixed, received
 * with wildcard tags in posting order: MPI's non-overtaking rule per
 * (source, communicator) must hold whatever the strategy packs together, and
 * every byte arrives once. Then the counters must say what the strategy did:
 * default sends one chunk per packet; aggreg, with bursts of 64 isends, packs
 * several (and WEFT_STATS=1 prints the lines ctest looks for).
 * Argument: threads per rank (default 3). */
#include <pthread.h>

#include "../common/test_util.h"

#define ROUNDS 40
#define BURST  64

static weft_ctx_t *ctx;
static int peer, nthreads;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void count(bool ok)
{
    pthread_mutex_lock(&count_lock);
    CHECK(ok);
    pthread_mutex_unlock(&count_lock);
}

/* Message (round, k) of thread id: length and key, the same on both ranks. */
static size_t msg_len(int id, int round, int k)
{
    return (size_t)((id * 31 + round * 7 + k * 13) % 257);
}

static uint64_t msg_key(int rank, int id, int round, int k)
{
    return ((uint64_t)rank << 48) | ((uint64_t)id << 32) | ((uint64_t)round << 16) | (uint64_t)k;
}

/* Thread id sends on communicator 10 + id with tags cycling over 5 values
 * and receives from the peer's thread id with a wildcard tag. */
static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg, me = weft_rank(ctx);
    uint32_t comm = 10 + (uint32_t)id;
    static __thread uint8_t sbuf[BURST][512], rbuf[BURST][512];
    for (int round = 0; round < ROUNDS; round++) {
        weft_request_t *rr[BURST], *sr[BURST];
        weft_status_t st[BURST];
        for (int k = 0; k < BURST; k++)
            count(weft_sr_irecv(ctx, peer, comm, WEFT_ANY_TAG, rbuf[k], sizeof rbuf[k], &rr[k]) ==
                  WEFT_OK);
        for (int k = 0; k < BURST; k++) {
            size_t len = msg_len(id, round, k);
            test_fill(sbuf[k], len, msg_key(me, id, round, k));
            count(weft_sr_isend(ctx, peer, comm, (uint64_t)(k % 5), sbuf[k], len, &sr[k]) ==
                  WEFT_OK);
        }
        count(weft_sr_waitall(ctx, BURST, sr, NULL) == WEFT_OK);
        count(weft_sr_waitall(ctx, BURST, rr, st) == WEFT_OK);
        for (int k = 0; k < BURST; k++) {
            size_t len = msg_len(id, round, k);
            count(st[k].length == len && st[k].tag == (uint64_t)(k % 5) && st[k].source == peer);
            count(test_verify(rbuf[k], len, msg_key(peer, id, round, k)) < 0);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    test_watchdog(100);
    nthreads = argc > 1 ? atoi(argv[1]) : 3;
    if (nthreads < 1 || nthreads > 16)
        nthreads = 3;
    weft_init_params_t p = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                            .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&p, &ctx));
    test_rank = weft_rank(ctx);
    int size = weft_size(ctx);
    if (size < 2) {
        printf("mp_aggreg: needs 2 ranks; skipped\n");
        weft_finalize(ctx);
        return 77;
    }
    /* Pairs (0,1), (2,3)...; an odd last rank talks to itself. */
    peer = test_rank ^ 1;
    if (peer >= size)
        peer = test_rank;
    pthread_t th[16];
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);

    weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_ALL};
    MUST(weft_counters_gate(ctx, peer, &gc));
    uint64_t messages = (uint64_t)nthreads * ROUNDS * BURST;
    CHECK(gc.messages_sent == messages);
    CHECK(gc.chunks_sent >= gc.packets_sent && gc.packets_sent > 0);
    if (!strcmp(gc.strategy, "default"))
        CHECK(gc.max_chunks_per_packet == 1 && gc.chunks_sent == gc.packets_sent);
    else if ((!strcmp(gc.strategy, "aggreg") || !strcmp(gc.strategy, "split_balance")) &&
             peer != test_rank)
        CHECK(gc.max_chunks_per_packet > 1 && gc.packets_sent < gc.chunks_sent);
    weft_gate_counters_t sum = {.field_mask = WEFT_GATE_COUNTERS_ALL};
    MUST(weft_counters_strategy(ctx, gc.strategy, &sum));
    CHECK(sum.messages_sent >= gc.messages_sent && sum.packets_sent >= gc.packets_sent);
    if (test_rank == 0)
        printf("mp_aggreg: %s/%s: %llu messages in %llu packets (%.2f chunks per packet, max "
               "%llu)\n",
               gc.driver, gc.strategy, (unsigned long long)gc.messages_sent,
               (unsigned long long)gc.packets_sent,
               (double)gc.chunks_sent / (double)(gc.packets_sent ? gc.packets_sent : 1),
               (unsigned long long)gc.max_chunks_per_packet);
    fflush(stdout);
    int rc = test_summary("mp_aggreg");
    MUST(weft_finalize(ctx));
    return rc;
}
