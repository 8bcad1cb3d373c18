/* Seed 003's task chains (the HPX parcelport benchmark) over weft's native
 * API, 2 ranks: a chain is a token that hops from rank to rank, each hop's
 * arrival sending the next; many chains at once give the message rate, one
 * long chain the one-way latency. Modes, each run in the same launch:
 *
 *   am_cq       active messages delivered into one completion queue, popped
 *               by the rank's threads;
 *   am_handler  active messages delivered to a handler, which sends the next
 *               hop from inside the progressing thread;
 *   sr          the MPI pattern on the native tagged calls: a window of
 *               posted receives tested in turn (weft_sr_testany), every hop
 *               an isend whose request is tested later.
 *
 *   weft_chain [--size S] [--chains C] [--hops H] [--threads T] [--reps R]
 *              [--only MODE] [--serialized]
 *
 * The context runs at WEFT_THREAD_MULTIPLE (its engine lock a mutex);
 * --serialized (one thread only) runs it at WEFT_THREAD_SERIALIZED, with no
 * lock, to tell the lock's cost from the rest.
 *
 * Prints "# mode size chains hops threads rate_Mmsgs one_way_us" and
 * csv,chain_<mode>,<size>,rate_mmsgs|latency_us,<median over R>. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"
#include "weft/weft_am.h"

#define ID_HOP  1
#define ID_STOP 2
#define COMM    0x4242u
#define MAXW    512

static weft_ctx_t *ctx;
static weft_am_t *am;
static int rank, peer, nthreads = 1;
static size_t size = 8;
static uint8_t payload[65536];
static weft_cq_t *cq;
static atomic_int stop, ended;
static int target_end;

typedef struct {
    uint32_t chain, hops;
} token_t;

/* Send the next hop (retrying on WEFT_EAGAIN, progressing meanwhile). */
static void hop(weft_am_ep_t *ep, uint32_t chain, uint32_t hops)
{
    token_t t = {chain, hops};
    struct iovec iov = {payload, size};
    int rc;
    while ((rc = weft_am_send(ep, peer, ID_HOP, &t, sizeof t, &iov, 1, NULL, NULL, 0)) ==
           WEFT_EAGAIN)
        weft_progress(ctx);
    if (rc != WEFT_OK && rc != WEFT_INPROGRESS)
        CHECK(rc);
}

/* A token arrived: end its chain, or pass it on. */
static void arrived(weft_am_ep_t *ep, const weft_am_msg_t *m)
{
    token_t t;
    memcpy(&t, m->header, sizeof t);
    if (m->id == ID_STOP)
        atomic_store(&stop, 1);
    else if (t.hops == 0)
        atomic_fetch_add(&ended, 1);
    else
        hop(ep, t.chain, t.hops - 1);
}

/* ---- am_cq ---- */
typedef struct {
    int index;
    int chains, hops;
} job_t;

static void *cq_thread(void *arg)
{
    job_t *j = arg;
    weft_am_ep_t *ep;
    CHECK(weft_am_ep_create(am, &ep));
    if (rank == 0)
        for (int c = j->index; c < j->chains; c += nthreads)
            hop(ep, (uint32_t)c, (uint32_t)j->hops - 1);
    for (;;) {
        if (rank == 0 && atomic_load(&ended) == target_end)
            break;
        if (rank == 1 && atomic_load(&stop))
            break;
        weft_comp_entry_t e;
        if (weft_cq_pop(cq, &e) == WEFT_OK) {
            arrived(ep, e.user_context);
            weft_am_msg_release(e.user_context);
        } else {
            weft_progress(ctx);
        }
    }
    weft_am_ep_free(ep);
    return NULL;
}

/* ---- am_handler ---- */
static weft_am_ep_t *handler_ep;
static _Thread_local weft_am_ep_t *thread_ep; /* a handler sends from its thread's endpoint */
static void on_hop(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    arrived(thread_ep ? thread_ep : handler_ep, e->user_context);
}

static void *handler_thread(void *arg)
{
    (void)arg;
    CHECK(weft_am_ep_create(am, &thread_ep));
    while (!(rank == 0 ? atomic_load(&ended) == target_end : atomic_load(&stop)))
        weft_progress(ctx);
    weft_am_ep_free(thread_ep);
    thread_ep = NULL;
    return NULL;
}

static double run_am(bool use_cq, int chains, int hops)
{
    atomic_store(&stop, 0);
    atomic_store(&ended, 0);
    target_end = chains;
    weft_handler_t h;
    weft_handler_init(&h, on_hop, NULL);
    CHECK(weft_cq_create(4096, &cq));
    CHECK(weft_am_create(ctx, &am));
    CHECK(weft_am_register(am, ID_HOP, use_cq ? weft_cq_comp(cq) : weft_handler_comp(&h), NULL,
                           NULL));
    CHECK(weft_am_register(am, ID_STOP, use_cq ? weft_cq_comp(cq) : weft_handler_comp(&h), NULL,
                           NULL));
    CHECK(weft_am_ep_create(am, &handler_ep));
    bench_handshake(ctx, peer, COMM);
    double t0 = bench_now_us();
    pthread_t th[8];
    job_t jobs[8];
    if (!use_cq && rank == 0)
        for (int c = 0; c < chains; c++)
            hop(handler_ep, (uint32_t)c, (uint32_t)hops - 1);
    for (int i = 0; i < nthreads; i++) {
        jobs[i] = (job_t){i, chains, hops};
        pthread_create(&th[i], NULL, use_cq ? cq_thread : handler_thread, &jobs[i]);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    double t = bench_now_us() - t0;
    if (rank == 0) {
        token_t t0k = {0, 0};
        struct iovec none = {NULL, 0};
        int rc = weft_am_send(handler_ep, peer, ID_STOP, &t0k, sizeof t0k, &none, 1, NULL, NULL, 0);
        if (rc != WEFT_OK && rc != WEFT_INPROGRESS)
            CHECK(rc);
    }
    bench_handshake(ctx, peer, COMM);
    CHECK(weft_am_free(am));
    CHECK(weft_cq_free(cq));
    return t;
}

/* ---- sr: the MPI pattern ---- */
static double run_sr(int chains, int hops)
{
    int w = chains < MAXW ? chains : MAXW;
    static uint8_t bufs[MAXW][sizeof(token_t) + 65536];
    weft_request_t *rr[MAXW], *sr[MAXW] = {0};
    for (int i = 0; i < w; i++)
        CHECK(weft_sr_irecv(ctx, peer, COMM + 1, WEFT_ANY_TAG, bufs[i], sizeof bufs[i], &rr[i]));
    bench_handshake(ctx, peer, COMM);
    double t0 = bench_now_us();
    int ended_here = 0, ns = 0;
    static uint8_t out[MAXW][sizeof(token_t) + 65536];
    if (rank == 0) {
        for (int c = 0; c < chains; c++) {
            token_t t = {(uint32_t)c, (uint32_t)hops - 1};
            memcpy(out[ns], &t, sizeof t);
            CHECK(weft_sr_isend(ctx, peer, COMM + 1, 1, out[ns], sizeof t + size, &sr[ns]));
            ns = (ns + 1) % MAXW;
            if (sr[ns]) {
                CHECK(weft_sr_wait(ctx, sr[ns], NULL));
                sr[ns] = NULL;
            }
        }
    }
    for (;;) {
        if (rank == 0 && ended_here == chains)
            break;
        int idx, flag;
        weft_status_t st;
        CHECK(weft_sr_testany(ctx, w, rr, &idx, &flag, &st));
        if (!flag || idx < 0)
            continue;
        if (st.tag == 2)
            break; /* stop */
        token_t t;
        memcpy(&t, bufs[idx], sizeof t);
        CHECK(weft_sr_irecv(ctx, peer, COMM + 1, WEFT_ANY_TAG, bufs[idx], sizeof bufs[idx],
                            &rr[idx]));
        if (t.hops == 0) {
            ended_here++;
            continue;
        }
        t.hops--;
        if (sr[ns]) {
            CHECK(weft_sr_wait(ctx, sr[ns], NULL));
            sr[ns] = NULL;
        }
        memcpy(out[ns], &t, sizeof t);
        CHECK(weft_sr_isend(ctx, peer, COMM + 1, 1, out[ns], sizeof t + size, &sr[ns]));
        ns = (ns + 1) % MAXW;
    }
    double t = bench_now_us() - t0;
    if (rank == 0) {
        weft_request_t *r;
        CHECK(weft_sr_isend(ctx, peer, COMM + 1, 2, NULL, 0, &r));
        CHECK(weft_sr_wait(ctx, r, NULL));
    }
    for (int i = 0; i < MAXW; i++)
        if (sr[i])
            CHECK(weft_sr_wait(ctx, sr[i], NULL));
    for (int i = 0; i < w; i++) {
        if (!rr[i])
            continue;
        CHECK(weft_sr_cancel(ctx, rr[i]));
        weft_sr_wait(ctx, rr[i], NULL);
    }
    bench_handshake(ctx, peer, COMM);
    return t;
}

int main(int argc, char **argv)
{
    int chains = 64, hops = 20000, reps = 3;
    const char *only = NULL;
    int level = WEFT_THREAD_MULTIPLE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = bench_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--chains") && i + 1 < argc)
            chains = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hops") && i + 1 < argc)
            hops = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--serialized"))
            level = WEFT_THREAD_SERIALIZED;
        else {
            fprintf(stderr, "usage: weft_chain [--size S] [--chains C] [--hops H] [--threads T] "
                            "[--reps R] [--only am_cq|am_handler|sr] [--serialized]\n");
            return 2;
        }
    }
    if (size > sizeof payload || nthreads < 1 || nthreads > 8 || hops < 2 || hops % 2 ||
        chains < 1 || (level != WEFT_THREAD_MULTIPLE && nthreads > 1)) {
        fprintf(stderr, "weft_chain: size <= 64 KiB, 1 to 8 threads (1 when serialized), an even "
                        "hop count >= 2\n");
        return 2;
    }
    weft_init_params_t p = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL, .thread_level = level};
    CHECK(weft_init(&p, &ctx));
    rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "weft_chain: run it with 2 ranks\n");
        weft_finalize(ctx);
        return 2;
    }
    peer = 1 - rank;
    bench_pin_by_rank(rank);
    const char *modes[] = {"am_cq", "am_handler", "sr"};
    if (rank == 0)
        printf("# mode size chains hops threads rate_Mmsgs one_way_us\n");
    for (int m = 0; m < 3; m++) {
        if (only && strcmp(only, modes[m]))
            continue;
        if (m == 2 && nthreads > 1)
            continue; /* the MPI pattern runs in one thread */
        double rate[16], lat[16];
        int r;
        for (r = 0; r < reps && r < 16; r++) {
            /* the rate: chains at once; the latency: one chain */
            double t = m == 2 ? run_sr(chains, hops / 4) : run_am(m == 0, chains, hops / 4);
            rate[r] = (double)chains * (hops / 4) / t;
            t = m == 2 ? run_sr(1, hops) : run_am(m == 0, 1, hops);
            lat[r] = t / hops;
        }
        double mr = bench_median(rate, r), ml = bench_median(lat, r);
        if (rank == 0) {
            printf("%-10s %6zu %6d %6d %2d %10.3f %10.3f\n", modes[m], size, chains, hops, nthreads,
                   mr, ml);
            char name[64];
            snprintf(name, sizeof name, "chain_%s_t%d", modes[m], nthreads);
            bench_csv(name, (double)size, "rate_mmsgs", mr);
            bench_csv(name, (double)size, "latency_us", ml);
        }
    }
    CHECK(weft_finalize(ctx));
    return 0;
}
