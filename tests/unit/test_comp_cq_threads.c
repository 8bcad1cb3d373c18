/* The completion queue under threads (progress_cq.c): 4 producers and 4
 * consumers on a small ring (so it is full often), 100000 entries each; two
 * producers push as an application does (retrying on WEFT_EAGAIN), two
 * signal as the engine does (their nodes go on the overflow list when the
 * ring is full, and the consumer that pops one releases it). Consumers take
 * single entries, batches, and wait without a context (sleeping on an empty
 * queue). Every entry must be popped exactly once, each consumer must see
 * each producer's entries in the order they were produced, and every kept
 * node must be released. The stops come once every entry is taken. Run it under ThreadSanitizer
 * too. */
#include <sched.h>

#include "comp_test.h"

#define PRODUCERS    4
#define CONSUMERS    4
#define PER_PRODUCER 100000
#define STOP_TAG     UINT64_MAX

static weft_cq_t *cq;
static atomic_uchar seen[PRODUCERS][PER_PRODUCER];
static atomic_long released, kept, bad, disorder, taken;

static void release_node(weft__comp_node_t *n)
{
    atomic_fetch_add(&released, 1);
    free(n);
}

static void *producer(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (uint64_t i = 0; i < PER_PRODUCER; i++) {
        weft_comp_entry_t e = {.source = id, .tag = (uint64_t)id << 32 | i, .length = i};
        if (id < 2) {
            while (weft_cq_push(cq, &e) == WEFT_EAGAIN)
                sched_yield();
            continue;
        }
        weft__comp_node_t *n = malloc(sizeof *n);
        n->comp = weft_cq_comp(cq);
        n->release = release_node;
        n->entry = e;
        if (weft__comp_signal(n))
            atomic_fetch_add(&kept, 1);
        else
            free(n);
    }
    return NULL;
}

static void push_stop(void)
{
    weft_comp_entry_t e = {.tag = STOP_TAG};
    while (weft_cq_push(cq, &e) == WEFT_EAGAIN)
        sched_yield();
}

/* One entry taken; false for a stop. last[]: this consumer's last sequence
 * number from each producer. */
static bool take(const weft_comp_entry_t *e, int64_t last[PRODUCERS])
{
    if (e->tag == STOP_TAG)
        return false;
    int p = e->source;
    uint64_t i = e->tag & 0xffffffffu;
    if (p < 0 || p >= PRODUCERS || i >= PER_PRODUCER || e->tag >> 32 != (uint64_t)p ||
        e->length != i) {
        atomic_fetch_add(&bad, 1);
        return true;
    }
    if ((int64_t)i <= last[p])
        atomic_fetch_add(&disorder, 1);
    last[p] = (int64_t)i;
    atomic_fetch_add(&seen[p][i], 1);
    atomic_fetch_add(&taken, 1);
    return true;
}

static void *consumer(void *arg)
{
    int id = (int)(intptr_t)arg;
    int64_t last[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++)
        last[p] = -1;
    weft_comp_entry_t batch[16];
    int stops = 0;
    for (unsigned round = 0; !stops; round++) {
        int n;
        if ((round + (unsigned)id) % 3 == 0) {
            n = weft_cq_pop_batch(cq, batch, 16);
        } else if (round % 3 == 1) {
            n = weft_cq_pop(cq, &batch[0]) == WEFT_OK;
        } else {
            if (weft_cq_wait_pop(cq, NULL, &batch[0]) != WEFT_OK)
                atomic_fetch_add(&bad, 1);
            n = 1;
        }
        for (int k = 0; k < n; k++)
            if (!take(&batch[k], last))
                stops++;
    }
    /* A batch may bring another consumer's stop: give it back. */
    while (--stops > 0)
        push_stop();
    return NULL;
}

int main(void)
{
    test_watchdog(110);
    MUST(weft_cq_create(256, &cq));
    pthread_t p[PRODUCERS], c[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++)
        CHECK(pthread_create(&c[i], NULL, consumer, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < PRODUCERS; i++)
        CHECK(pthread_create(&p[i], NULL, producer, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(p[i], NULL);
    /* The stops go last: an application's push may overtake the engine's
     * entries kept on the overflow list (only one producer's entries keep
     * their order), so they wait until every entry is taken. */
    while (atomic_load(&taken) + atomic_load(&bad) < (long)PRODUCERS * PER_PRODUCER)
        sched_yield();
    for (int i = 0; i < CONSUMERS; i++)
        push_stop();
    for (int i = 0; i < CONSUMERS; i++)
        pthread_join(c[i], NULL);
    long missing = 0, twice = 0;
    for (int pr = 0; pr < PRODUCERS; pr++)
        for (int i = 0; i < PER_PRODUCER; i++) {
            unsigned char n = atomic_load(&seen[pr][i]);
            missing += n == 0;
            twice += n > 1;
        }
    printf("kept on the overflow list: %ld of %d engine entries\n", atomic_load(&kept),
           2 * PER_PRODUCER);
    printf("missing %ld, twice %ld, bad %ld, out of order %ld\n", missing, twice, atomic_load(&bad),
           atomic_load(&disorder));
    CHECK(missing == 0 && twice == 0 && atomic_load(&bad) == 0 && atomic_load(&disorder) == 0);
    CHECK(atomic_load(&released) == atomic_load(&kept));
    weft_comp_entry_t e;
    CHECK(weft_cq_pop(cq, &e) == WEFT_EAGAIN);
    MUST(weft_cq_free(cq));
    return comp_summary("test_comp_cq_threads");
}
