/* Active messages and puts with a remote signal (weft_am.h) between real
 * processes, every rank to every rank (itself included):
 *
 *   1. messages of every size (header 0 to WEFT_AM_HEADER_MAX, payloads
 *      empty, short, past the short form, past the eager limit: rendezvous),
 *      in one or three pieces, into a queue; each checked: id, source,
 *      header, data;
 *   2. a handler that keeps every other message and releases it later, and
 *      an alloc function giving rendezvous payloads a buffer of the test's;
 *   3. puts with a signal into a region, small and large, counted by a
 *      counter; the region checked afterwards; a put past the region's end
 *      is delivered with WEFT_EINVAL;
 *   4. messages for an id that the target registers only later;
 *   5. WEFT_AM_IMMEDIATE against a peer that does not poll: WEFT_EAGAIN
 *      comes (the credit runs out), and what did leave is all delivered;
 *   then the layer freed and made again, and 1. once more;
 *   6. "mt": 4 threads per rank, each with its endpoint, sending while all
 *      pop one shared queue (WEFT_THREAD_MULTIPLE);
 *   "death": rank 1 dies; rank 0's messages to it fail with WEFT_EPEERDEAD
 *      naming rank 1 in their entries.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../common/test_util.h"
#include "weft/weft_am.h"

#define NOTE     0x77u
#define ID_CQ    3
#define ID_HAND  4
#define ID_PUT   5
#define ID_LATE  7
#define ID_IMM   8
#define ID_MT    9
#define ID_DEATH 10
#define PER_PEER 40
#define REGION   (1u << 20)
#define SLICE    (REGION / 8)

static weft_ctx_t *ctx;
static weft_am_t *am;
static weft_am_ep_t *ep;
static int rank, size;

static void barrier(uint64_t tag)
{
    test_barrier(ctx, NOTE, tag);
}

static size_t hlen_of(int i)
{
    return (size_t)((i * 37) % (WEFT_AM_HEADER_MAX + 1));
}

static size_t dlen_of(int i)
{
    static const size_t sizes[] = {0, 8, 100, 300, 4000, 8000, 9000, 70000, 300000};
    return sizes[i % (int)(sizeof sizes / sizeof sizes[0])];
}

static uint64_t key_of(int from, int to, int i, int part)
{
    return ((uint64_t)from << 40) | ((uint64_t)to << 24) | ((uint64_t)i << 4) | (uint64_t)part;
}

/* Payloads of queued sends, freed once their round's sends completed. */
static void *pending[100000];
static int npending;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

static void free_pending(void)
{
    for (int i = 0; i < npending; i++)
        free(pending[i]);
    npending = 0;
}

/* Send message i of this rank to peer for id, header and data filled; 1 if
 * it was queued (local is signaled for it), 0 if it left at once. */
static int send_one(weft_am_ep_t *e, int peer, uint32_t id, int i, weft_counter_t *local)
{
    uint8_t hdr[WEFT_AM_HEADER_MAX];
    size_t hlen = hlen_of(i), dlen = dlen_of(i);
    uint8_t *data = malloc(dlen + 1);
    test_fill(hdr, hlen, key_of(rank, peer, i, 0));
    test_fill(data, dlen, key_of(rank, peer, i, 1));
    /* Header's first bytes say which message it is (when there is room). */
    if (hlen >= 4)
        memcpy(hdr, &i, 4);
    struct iovec iov[3];
    int n = 1;
    iov[0] = (struct iovec){data, dlen};
    if (i % 2 && dlen >= 3) { /* three pieces */
        iov[0].iov_len = dlen / 3;
        iov[1] = (struct iovec){data + dlen / 3, dlen / 3};
        iov[2] = (struct iovec){data + 2 * (dlen / 3), dlen - 2 * (dlen / 3)};
        n = 3;
    }
    int rc = weft_am_send(e, peer, id, hdr, hlen, iov, n, weft_counter_comp(local), NULL, 0);
    CHECK(rc == WEFT_OK || rc == WEFT_INPROGRESS);
    if (rc != WEFT_INPROGRESS) {
        free(data);
        return 0;
    }
    pthread_mutex_lock(&pending_lock);
    pending[npending++] = data;
    pthread_mutex_unlock(&pending_lock);
    return 1;
}

/* Check a delivered message: which one it is, from its header (or, with no
 * room there, from its sizes), then its bytes. */
static void check_msg(const weft_am_msg_t *m, uint32_t id)
{
    CHECK(m->id == id);
    CHECK(m->error == WEFT_OK);
    CHECK(m->source >= 0 && m->source < size);
    int i = -1;
    if (m->hlen >= 4) {
        memcpy(&i, m->header, 4);
    } else {
        for (int k = 0; k < PER_PEER && i < 0; k++)
            if (hlen_of(k) == m->hlen && dlen_of(k) == m->length && hlen_of(k) < 4)
                i = k;
    }
    CHECK(i >= 0 && i < PER_PEER);
    if (i < 0 || i >= PER_PEER)
        return;
    CHECK(m->hlen == hlen_of(i));
    CHECK(m->length == dlen_of(i));
    if (m->hlen >= 4) {
        uint8_t want[WEFT_AM_HEADER_MAX];
        test_fill(want, m->hlen, key_of(m->source, rank, i, 0));
        memcpy(want, &i, 4);
        CHECK(memcmp(want, m->header, m->hlen) == 0);
    } else {
        CHECK(test_verify(m->header, m->hlen, key_of(m->source, rank, i, 0)) == -1);
    }
    CHECK(test_verify(m->data, m->length, key_of(m->source, rank, i, 1)) == -1);
}

/* The local completions of a round's queued sends. */
static void wait_local(weft_counter_t *c, int posted)
{
    MUST(weft_counter_wait(c, (uint64_t)posted, ctx));
    CHECK(weft_counter_errors(c) == 0);
}

/* ---- 1: a queue ---- */
static void round_cq(void)
{
    weft_cq_t *cq;
    MUST(weft_cq_create(64, &cq));
    MUST(weft_am_register(am, ID_CQ, weft_cq_comp(cq), NULL, NULL));
    barrier(1);
    weft_counter_t local;
    weft_counter_init(&local, 0);
    int queued = 0;
    for (int i = 0; i < PER_PEER; i++)
        for (int p = 0; p < size; p++)
            queued += send_one(ep, (rank + p) % size, ID_CQ, i, &local);
    int got = 0;
    while (got < PER_PEER * size) {
        weft_comp_entry_t e;
        MUST(weft_cq_wait_pop(cq, ctx, &e));
        weft_am_msg_t *m = e.user_context;
        CHECK(e.tag == ID_CQ && e.source == m->source && e.length == m->length);
        check_msg(m, ID_CQ);
        weft_am_msg_release(m);
        got++;
    }
    wait_local(&local, queued);
    free_pending();
    barrier(2);
    weft_cq_free(cq);
}

/* ---- 2: a handler that keeps messages, an alloc function ---- */
static weft_am_msg_t *kept[PER_PEER * 64];
static atomic_int nkept, nhandled;
static uint8_t *own_bufs[PER_PEER * 64];
static atomic_int nown;

static void on_msg(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    weft_am_msg_t *m = e->user_context;
    check_msg(m, ID_HAND);
    if (atomic_fetch_add(&nhandled, 1) % 2)
        kept[atomic_fetch_add(&nkept, 1)] = m, weft_am_msg_keep(m);
}

static void *own_alloc(size_t len, const weft_am_msg_t *m, void *arg)
{
    CHECK(arg == (void *)&nown);
    CHECK(m->id == ID_HAND && m->data == NULL);
    uint8_t *b = malloc(len);
    own_bufs[atomic_fetch_add(&nown, 1)] = b;
    return b;
}

static void round_handler(void)
{
    weft_handler_t h;
    weft_handler_init(&h, on_msg, NULL);
    MUST(weft_am_register(am, ID_HAND, weft_handler_comp(&h), own_alloc, &nown));
    CHECK(weft_am_register(am, ID_HAND, weft_handler_comp(&h), NULL, NULL) == WEFT_ESTATE);
    barrier(3);
    weft_counter_t local;
    weft_counter_init(&local, 0);
    int queued = 0;
    for (int i = 0; i < PER_PEER; i++)
        for (int p = 0; p < size; p++)
            queued += send_one(ep, (rank + p) % size, ID_HAND, i, &local);
    while (atomic_load(&nhandled) < PER_PEER * size)
        weft_progress(ctx);
    wait_local(&local, queued);
    free_pending();
    barrier(4);
    int k = atomic_load(&nkept);
    CHECK(k == PER_PEER * size / 2);
    for (int i = 0; i < k; i++) {
        check_msg(kept[i], ID_HAND); /* still valid */
        weft_am_msg_release(kept[i]);
    }
    for (int i = 0; i < atomic_load(&nown); i++)
        free(own_bufs[i]);
    CHECK(atomic_load(&nown) > 0);
}

/* ---- 3: puts with a signal ---- */
static void round_put(void)
{
    static uint8_t region[REGION];
    uint32_t rid;
    MUST(weft_am_region_register(am, region, sizeof region, &rid));
    CHECK(rid == 0);
    weft_counter_t arrived;
    weft_counter_init(&arrived, 0);
    MUST(weft_am_register(am, ID_PUT, weft_counter_comp(&arrived), NULL, NULL));
    barrier(5);
    /* Rank r writes slice r of every peer's region: 100 bytes, then 60000 */
    static uint8_t src[SLICE];
    weft_counter_t local;
    weft_counter_init(&local, 0);
    int queued = 0;
    for (int p = 0; p < size; p++) {
        int peer = (rank + p) % size;
        test_fill(src, SLICE, key_of(rank, peer, 0, 9));
        uint64_t off = (uint64_t)rank * SLICE;
        int rc = weft_am_put_signal(ep, peer, ID_PUT, "hi", 2, src, 100, rid, off,
                                    weft_counter_comp(&local), NULL, 0);
        CHECK(rc == WEFT_OK || rc == WEFT_INPROGRESS);
        queued += rc == WEFT_INPROGRESS;
        rc = weft_am_put_signal(ep, peer, ID_PUT, NULL, 0, src + 100, 60000, rid, off + 100,
                                weft_counter_comp(&local), NULL, 0);
        CHECK(rc == WEFT_INPROGRESS);
        queued++;
        MUST(weft_counter_wait(&local, (uint64_t)queued, ctx)); /* src is reused */
    }
    CHECK(weft_counter_errors(&local) == 0);
    MUST(weft_counter_wait(&arrived, 2u * (uint64_t)size, ctx));
    CHECK(weft_counter_errors(&arrived) == 0);
    barrier(6);
    for (int r = 0; r < size; r++)
        CHECK(test_verify(region + (size_t)r * SLICE, 60100, key_of(r, rank, 0, 9)) == -1);
    /* past the end: delivered with an error, nothing written */
    int peer = (rank + 1) % size;
    int rc = weft_am_put_signal(ep, peer, ID_PUT, NULL, 0, src, 64, rid, REGION - 10,
                                weft_counter_comp(&local), NULL, 0);
    CHECK(rc == WEFT_OK || rc == WEFT_INPROGRESS);
    MUST(weft_counter_wait(&arrived, 2u * (uint64_t)size + 1, ctx));
    CHECK(weft_counter_errors(&arrived) == 1);
    barrier(7);
}

/* ---- 4: an id registered late ---- */
static void round_late(void)
{
    weft_counter_t local;
    weft_counter_init(&local, 0);
    int queued = 0;
    for (int i = 0; i < 4; i++)
        queued += send_one(ep, (rank + 1) % size, ID_LATE, i, &local);
    wait_local(&local, queued);
    free_pending();
    barrier(8);
    /* give them time to arrive: a note after them from the sender */
    int from = (rank + size - 1) % size;
    test_note(ctx, (rank + 1) % size, true, NOTE, 80);
    test_note(ctx, from, false, NOTE, 80);
    weft_cq_t *cq;
    MUST(weft_cq_create(8, &cq));
    MUST(weft_am_register(am, ID_LATE, weft_cq_comp(cq), NULL, NULL));
    for (int got = 0; got < 4; got++) {
        weft_comp_entry_t e;
        MUST(weft_cq_wait_pop(cq, ctx, &e));
        check_msg(e.user_context, ID_LATE);
        CHECK(((weft_am_msg_t *)e.user_context)->source == from);
        weft_am_msg_release(e.user_context);
    }
    weft_am_counters_t c;
    MUST(weft_am_counters_get(am, &c));
    CHECK(c.waited >= 4);
    barrier(9);
    weft_cq_free(cq);
}

/* ---- 5: immediate sends against a peer that does not poll ---- */
static void round_immediate(void)
{
    weft_counter_t arrived;
    weft_counter_init(&arrived, 0);
    MUST(weft_am_register(am, ID_IMM, weft_counter_comp(&arrived), NULL, NULL));
    barrier(10);
    uint64_t sent = 0;
    int again = 0;
    if (size > 1 && rank == 0) {
        uint8_t payload[200] = {1};
        struct iovec iov = {payload, sizeof payload};
        for (int i = 0; i < 200000 && !again; i++) {
            int rc = weft_am_send(ep, 1, ID_IMM, NULL, 0, &iov, 1, NULL, NULL, WEFT_AM_IMMEDIATE);
            CHECK(rc == WEFT_OK || rc == WEFT_EAGAIN || rc == WEFT_INPROGRESS);
            if (rc == WEFT_EAGAIN)
                again = 1;
            else
                sent++;
        }
        CHECK(again == 1);
        weft_am_counters_t c;
        MUST(weft_am_counters_get(am, &c));
        CHECK(c.retries >= 1);
        weft_request_t *req;
        MUST(weft_sr_isend(ctx, 1, NOTE, 100, &sent, sizeof sent, &req));
        MUST(weft_sr_wait(ctx, req, NULL));
    } else if (size > 1 && rank == 1) {
        usleep(200000); /* not polling: the sender's credit runs out */
        weft_request_t *req;
        MUST(weft_sr_irecv(ctx, 0, NOTE, 100, &sent, sizeof sent, &req));
        MUST(weft_sr_wait(ctx, req, NULL));
        MUST(weft_counter_wait(&arrived, sent, ctx));
        CHECK(weft_counter_get(&arrived) == sent);
    }
    barrier(11);
}

/* ---- 6: threads, one endpoint each, one queue ---- */
#define THREADS 4
#define MT_PER  500
static weft_cq_t *mt_cq;
static atomic_int mt_got;

static pthread_mutex_t mt_lock = PTHREAD_MUTEX_INITIALIZER;

/* CHECK from the threads: its counters under a lock. */
static void mt_check(bool ok)
{
    pthread_mutex_lock(&mt_lock);
    CHECK(ok);
    pthread_mutex_unlock(&mt_lock);
}

static void *mt_thread(void *arg)
{
    weft_am_ep_t *e;
    MUST(weft_am_ep_create(am, &e));
    int t = (int)(intptr_t)arg;
    weft_counter_t local;
    weft_counter_init(&local, 0);
    int queued = 0;
    const int want = MT_PER * THREADS * size;
    /* The payload stays untouched until every local completion came. */
    static uint64_t vals[THREADS][2];
    vals[t][0] = (uint64_t)t;
    vals[t][1] = 0x5eed;
    struct iovec iov = {vals[t], sizeof vals[t]};
    for (int i = 0; i < MT_PER * size; i++) {
        int rc;
        while ((rc = weft_am_send(e, i % size, ID_MT, &t, sizeof t, &iov, 1,
                                  weft_counter_comp(&local), NULL, 0)) == WEFT_EAGAIN)
            ;
        mt_check(rc == WEFT_OK || rc == WEFT_INPROGRESS);
        queued += rc == WEFT_INPROGRESS;
        weft_comp_entry_t en;
        while (weft_cq_pop(mt_cq, &en) == WEFT_OK) {
            weft_am_msg_t *m = en.user_context;
            uint64_t v[2];
            memcpy(v, m->data, sizeof v);
            mt_check(m->length == 16 && m->hlen == sizeof(int) && v[1] == 0x5eed &&
                     memcmp(m->header, &v[0], sizeof(int)) == 0);
            weft_am_msg_release(m);
            atomic_fetch_add(&mt_got, 1);
        }
    }
    MUST(weft_counter_wait(&local, (uint64_t)queued, ctx));
    while (atomic_load(&mt_got) < want) {
        weft_comp_entry_t en;
        if (weft_cq_pop(mt_cq, &en) == WEFT_OK) {
            weft_am_msg_release(en.user_context);
            atomic_fetch_add(&mt_got, 1);
        } else {
            weft_progress(ctx);
        }
    }
    weft_am_ep_free(e);
    return NULL;
}

static void round_mt(void)
{
    MUST(weft_cq_create(256, &mt_cq));
    MUST(weft_am_register(am, ID_MT, weft_cq_comp(mt_cq), NULL, NULL));
    barrier(12);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, mt_thread, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    CHECK(atomic_load(&mt_got) == MT_PER * THREADS * size);
    barrier(13);
    weft_cq_free(mt_cq);
}

/* ---- death ---- */
static int death(void)
{
    if (rank == 1) {
        test_note(ctx, 0, true, NOTE, 200); /* about to die, never polling again */
        _exit(9);
    }
    if (rank != 0) {
        weft_finalize(ctx);
        return 0;
    }
    test_note(ctx, 1, false, NOTE, 200);
    weft_cq_t *cq;
    MUST(weft_cq_create(64, &cq));
    static uint8_t big[200000], small[64];
    int queued = 0, refused = 0;
    for (int i = 0; i < 6; i++) {
        struct iovec iov = {i % 2 ? small : big, i % 2 ? sizeof small : sizeof big};
        /* Queued (failing later) or, once the death is seen, refused. */
        int rc = weft_am_send(ep, 1, ID_DEATH, NULL, 0, &iov, 1, weft_cq_comp(cq), NULL, 0);
        CHECK(rc == WEFT_INPROGRESS || rc == WEFT_EPEERDEAD || rc == WEFT_OK);
        queued += rc == WEFT_INPROGRESS;
        refused += rc == WEFT_EPEERDEAD;
        usleep(20000);
    }
    int failed = 0;
    for (int i = 0; i < queued; i++) {
        weft_comp_entry_t e;
        MUST(weft_cq_wait_pop(cq, ctx, &e));
        CHECK(e.error == WEFT_EPEERDEAD && e.source == 1 && e.tag == ID_DEATH);
        failed += e.error == WEFT_EPEERDEAD;
    }
    printf("rank 0: %d messages failed in their entries, %d refused\n", failed, refused);
    if (test_failed == 0 && failed == queued && failed + refused > 0)
        printf("rank 0: am peer death seen\n");
    fflush(stdout);
    weft_am_free(am);
    weft_cq_free(cq);
    weft_finalize(ctx);
    return test_summary("mp_am");
}

int main(int argc, char **argv)
{
    bool mt = argc > 1 && strcmp(argv[1], "mt") == 0;
    bool die = argc > 1 && strcmp(argv[1], "death") == 0;
    test_watchdog(120);
    weft_init_params_t p = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                            .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&p, &ctx));
    rank = test_rank = weft_rank(ctx);
    size = weft_size(ctx);
    MUST(weft_am_create(ctx, &am));
    weft_am_t *again;
    CHECK(weft_am_create(ctx, &again) == WEFT_ESTATE);
    MUST(weft_am_ep_create(am, &ep));
    if (die)
        return death();
    if (mt) {
        round_mt();
    } else {
        round_cq();
        round_handler();
        round_put();
        round_late();
        round_immediate();
        /* A layer made again after one that pooled messages of every kind */
        barrier(14);
        MUST(weft_am_free(am));
        MUST(weft_am_create(ctx, &am));
        MUST(weft_am_ep_create(am, &ep));
        round_cq();
    }
    weft_am_counters_t c;
    MUST(weft_am_counters_get(am, &c));
    CHECK(c.delivered > 0);
    if (rank == 0)
        printf("mp_am: sent at once %llu, queued %llu, rendezvous %llu, retries %llu, "
               "delivered %llu, waited %llu\n",
               (unsigned long long)c.sent_now, (unsigned long long)c.sent_queued,
               (unsigned long long)c.sent_rdv, (unsigned long long)c.retries,
               (unsigned long long)c.delivered, (unsigned long long)c.waited);
    barrier(99);
    MUST(weft_am_free(am));
    MUST(weft_finalize(ctx));
    return test_summary("mp_am");
}
