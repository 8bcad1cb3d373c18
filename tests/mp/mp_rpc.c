/* Remote procedure calls (weft_rpc.h) between real processes, every rank
 * calling every rank (itself included), all calls in flight at once:
 *
 *   service 1 replies at once with its arguments and its rank;
 *   service 2 replies later, from another thread (a queue of calls and a
 *     replier thread with its own endpoint);
 *   service 3 replies 100 000 bytes (by rendezvous into the caller's buffer);
 *   arguments in the header (small) and as payload (2000 bytes);
 *   a service nobody registered: WEFT_ENOTFOUND; a reply buffer too small:
 *     WEFT_ETRUNC with what fitted.
 *   "death": rank 1 takes service 2's calls and dies without replying; rank
 *     0's calls fail with WEFT_EPEERDEAD naming rank 1.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../common/test_util.h"
#include "weft/weft_rpc.h"

/* Services run on the progress thread too: checks take a lock (LCHECK). */

#define NOTE  0x78u
#define CALLS 60
#define BIG   100000

static weft_ctx_t *ctx;
static weft_am_t *am;
static weft_rpc_t *rpc;
static weft_am_ep_t *ep;
static int rank, size;

/* ---- services ----
 * They run in whichever thread progresses (the progress thread too), so
 * they reply through an endpoint of that thread's. */
static _Thread_local weft_am_ep_t *svc_ep;
static weft_am_ep_t *thread_ep(void)
{
    if (!svc_ep)
        MUST(weft_am_ep_create(am, &svc_ep));
    return svc_ep;
}

static void echo(weft_rpc_call_t *call, const void *args, size_t len, void *arg)
{
    (void)arg;
    uint8_t out[4096];
    LCHECK(len + sizeof(int) <= sizeof out);
    memcpy(out, args, len);
    memcpy(out + len, &rank, sizeof rank);
    MUST(weft_rpc_reply(call, thread_ep(), out, len + sizeof rank));
}

static pthread_mutex_t later_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t later_cond = PTHREAD_COND_INITIALIZER;
static weft_rpc_call_t *later[CALLS * 64];
static uint64_t later_arg[CALLS * 64];
static int nlater, later_stop;
static bool keep_calls; /* death: take calls, never reply */
static atomic_int replier_bad;

static void later_service(weft_rpc_call_t *call, const void *args, size_t len, void *arg)
{
    (void)arg;
    LCHECK(len == sizeof(uint64_t));
    pthread_mutex_lock(&later_lock);
    later[nlater] = call;
    memcpy(&later_arg[nlater], args, sizeof(uint64_t));
    nlater++;
    pthread_cond_signal(&later_cond);
    pthread_mutex_unlock(&later_lock);
}

static void *replier(void *arg)
{
    (void)arg;
    weft_am_ep_t *my;
    MUST(weft_am_ep_create(am, &my));
    int done = 0;
    pthread_mutex_lock(&later_lock);
    for (;;) {
        while (done == nlater && !later_stop)
            pthread_cond_wait(&later_cond, &later_lock);
        if (done == nlater && later_stop)
            break;
        weft_rpc_call_t *c = later[done];
        uint64_t v = later_arg[done] * 3 + 1;
        done++;
        pthread_mutex_unlock(&later_lock);
        if (!keep_calls) {
            /* counted apart: CHECK's counters are the main thread's */
            if (weft_rpc_call_source(c) < 0 || weft_rpc_call_source(c) >= size)
                atomic_fetch_add(&replier_bad, 1);
            MUST(weft_rpc_reply(c, my, &v, sizeof v));
        }
        pthread_mutex_lock(&later_lock);
    }
    pthread_mutex_unlock(&later_lock);
    weft_am_ep_free(my);
    return NULL;
}

static void big_service(weft_rpc_call_t *call, const void *args, size_t len, void *arg)
{
    (void)arg;
    uint64_t key;
    LCHECK(len == sizeof key);
    memcpy(&key, args, sizeof key);
    uint8_t *out = malloc(BIG);
    test_fill(out, BIG, key);
    MUST(weft_rpc_reply(call, thread_ep(), out, BIG)); /* copied if it cannot leave now */
    free(out);
}

/* ---- the caller's side ---- */
typedef struct {
    int kind, peer, i;
    uint8_t args[2000];
    size_t alen;
    uint8_t *reply;
    size_t cap;
} call_t;

static void check_reply(call_t *c, const weft_comp_entry_t *e)
{
    LCHECK(e->source == c->peer);
    switch (c->kind) {
    case 1: /* echo, small or payload arguments */
        LCHECK(e->error == WEFT_OK && e->tag == 1);
        LCHECK(e->length == c->alen + sizeof(int));
        LCHECK(memcmp(c->reply, c->args, c->alen) == 0);
        LCHECK(memcmp(c->reply + c->alen, &c->peer, sizeof(int)) == 0);
        break;
    case 2: { /* later */
        uint64_t v, a;
        memcpy(&v, c->reply, sizeof v);
        memcpy(&a, c->args, sizeof a);
        LCHECK(e->error == WEFT_OK && e->length == sizeof v && v == a * 3 + 1);
        break;
    }
    case 3: { /* big */
        uint64_t key;
        memcpy(&key, c->args, sizeof key);
        LCHECK(e->error == WEFT_OK && e->length == BIG);
        LCHECK(test_verify(c->reply, BIG, key) == -1);
        break;
    }
    case 4: /* unknown service */
        LCHECK(e->error == WEFT_ENOTFOUND && e->tag == 9);
        break;
    case 5: { /* truncated echo: 10 bytes fitted */
        LCHECK(e->error == WEFT_ETRUNC && e->length == 10);
        LCHECK(memcmp(c->reply, c->args, 10) == 0);
        break;
    }
    }
}

/* Freed at the end, after a barrier: the thread that pushed the last entry
 * may still be inside its signal (the wake check) when the entry is popped. */
static weft_cq_t *cq;

static void run(void)
{
    MUST(weft_cq_create(64, &cq));
    int n = CALLS * size;
    call_t *calls = calloc((size_t)n, sizeof *calls);
    for (int k = 0; k < n; k++) {
        call_t *c = &calls[k];
        c->peer = k % size;
        c->i = k;
        c->kind = 1 + k % 5;
        uint32_t service = (uint32_t)c->kind;
        c->cap = 4096;
        switch (c->kind) {
        case 1:
            c->alen = k % 2 ? 40 : 2000;
            test_fill(c->args, c->alen, (uint64_t)k * 7 + (uint64_t)rank);
            break;
        case 2:
        case 3: {
            uint64_t a = ((uint64_t)rank << 32) | (uint64_t)k;
            memcpy(c->args, &a, sizeof a);
            c->alen = sizeof a;
            if (c->kind == 3)
                c->cap = BIG;
            break;
        }
        case 4:
            service = 9;
            c->alen = 0;
            break;
        case 5:
            service = 1;
            c->alen = 30;
            test_fill(c->args, c->alen, (uint64_t)k);
            c->cap = 10;
            break;
        }
        c->reply = malloc(c->cap);
        MUST(weft_rpc_call(rpc, ep, c->peer, service, c->args, c->alen, c->reply, c->cap,
                           weft_cq_comp(cq), c));
    }
    for (int got = 0; got < n; got++) {
        weft_comp_entry_t e;
        MUST(weft_cq_wait_pop(cq, ctx, &e));
        check_reply(e.user_context, &e);
    }
    for (int k = 0; k < n; k++)
        free(calls[k].reply);
    free(calls);
}

static void barrier(uint64_t tag)
{
    test_barrier(ctx, NOTE, tag);
}

static int death(pthread_t th)
{
    if (rank == 1) {
        /* take rank 0's calls, then die without replying */
        for (int n = 0; n < 3;) {
            weft_progress(ctx);
            pthread_mutex_lock(&later_lock);
            n = nlater;
            pthread_mutex_unlock(&later_lock);
        }
        _exit(9);
    }
    if (rank != 0) {
        weft_finalize(ctx);
        return 0;
    }
    weft_cq_t *cq;
    MUST(weft_cq_create(8, &cq));
    uint64_t a = 5, r[3];
    for (int i = 0; i < 3; i++)
        MUST(weft_rpc_call(rpc, ep, 1, 2, &a, sizeof a, &r[i], sizeof r[i], weft_cq_comp(cq),
                           &r[i]));
    int failed = 0;
    for (int i = 0; i < 3; i++) {
        weft_comp_entry_t e;
        MUST(weft_cq_wait_pop(cq, ctx, &e));
        LCHECK(e.error == WEFT_EPEERDEAD && e.source == 1 && e.tag == 2);
        failed += e.error == WEFT_EPEERDEAD;
    }
    int rc = weft_rpc_call(rpc, ep, 1, 2, &a, sizeof a, &r[0], sizeof r[0], weft_cq_comp(cq), NULL);
    LCHECK(rc == WEFT_EPEERDEAD);
    if (test_failed == 0 && failed == 3)
        printf("rank 0: rpc peer death seen\n");
    fflush(stdout);
    pthread_mutex_lock(&later_lock);
    later_stop = 1;
    pthread_cond_signal(&later_cond);
    pthread_mutex_unlock(&later_lock);
    pthread_join(th, NULL);
    weft_rpc_free(rpc);
    weft_am_free(am);
    weft_cq_free(cq);
    weft_finalize(ctx);
    return test_summary("mp_rpc");
}

int main(int argc, char **argv)
{
    bool die = argc > 1 && strcmp(argv[1], "death") == 0;
    keep_calls = die;
    test_watchdog(120);
    weft_init_params_t p = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                            .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&p, &ctx));
    rank = test_rank = weft_rank(ctx);
    size = weft_size(ctx);
    MUST(weft_am_create(ctx, &am));
    MUST(weft_am_ep_create(am, &ep));
    MUST(weft_rpc_create(am, 100, &rpc));
    MUST(weft_rpc_register(rpc, 1, echo, NULL));
    MUST(weft_rpc_register(rpc, 2, later_service, NULL));
    MUST(weft_rpc_register(rpc, 3, big_service, NULL));
    LCHECK(weft_rpc_register(rpc, 3, big_service, NULL) == WEFT_ESTATE);
    LCHECK(weft_rpc_register(rpc, WEFT_RPC_SERVICE_MAX + 1, big_service, NULL) == WEFT_EINVAL);
    pthread_t th;
    pthread_create(&th, NULL, replier, NULL);
    barrier(1);
    if (die)
        return death(th);
    run();
    barrier(2);
    pthread_mutex_lock(&later_lock);
    later_stop = 1;
    pthread_cond_signal(&later_cond);
    pthread_mutex_unlock(&later_lock);
    pthread_join(th, NULL);
    LCHECK(atomic_load(&replier_bad) == 0);
    barrier(3);
    weft_cq_free(cq);
    MUST(weft_rpc_free(rpc));
    MUST(weft_am_free(am));
    MUST(weft_finalize(ctx));
    return test_summary("mp_rpc");
}
