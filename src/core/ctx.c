/* The context: joining the job (bootstrap, drivers, gates: ctx_wire.c) and
 * leaving it.
 *
 * Wire-up: every rank publishes which node it runs on and one address blob per
 * driver, fences, connects one track per peer (self for itself, shm within the
 * node, tcp between nodes), fences again so every segment is mapped everywhere,
 * then lets drivers finish (shm unlinks its segment, tcp waits for its
 * handshakes). A driver starts only where some peer needs it, so a job on one
 * node opens no socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/core_int.h"
#include "coll/coll.h"
#include "rma/rma.h"
#include "util/log.h"
#include "util/param.h"

static void ctx_free(weft_ctx_t *ctx)
{
    if (ctx->progress_kick >= 0)
        close(ctx->progress_kick);
    if (ctx->gates) {
        for (int i = 0; i < atomic_load(&ctx->npeers); i++) {
            if (ctx->gates[i].track)
                ctx->gates[i].drv_ops->disconnect(ctx->gates[i].track);
            for (int k = 0; k < ctx->gates[i].nrails; k++)
                ctx->gates[i].rails[k].drv_ops->disconnect(ctx->gates[i].rails[k].track);
            weft_lock_destroy(&ctx->gates[i].slock.lock);
        }
    }
    for (int i = 0; i < ctx->ndrivers; i++)
        ctx->drivers[i].ops->fini(ctx->drivers[i].drv);
    weft_slab_cursor_t cur = {0, 0};
    weft__unexpected_t *u;
    while ((u = weft_slab_next(&ctx->unexpected, &cur)))
        if (u->kind != WEFT_CHUNK_RDV && u->length > WEFT_UNEXP_SMALL)
            free(u->data_heap);
    weft_slab_fini(&ctx->unexpected);
    for (struct weft_request *r = atomic_load(&ctx->returned), *next; r; r = next) {
        next = r->next_free;
        free(r);
    }
    for (struct weft_request *r = ctx->spare, *next; r; r = next) {
        next = r->next_free;
        free(r);
    }
    while (ctx->nfree_reqs)
        free(ctx->free_reqs[--ctx->nfree_reqs]);
    free(ctx->free_reqs);
    while (ctx->free_chunks) {
        weft__chunk_t *c = ctx->free_chunks;
        ctx->free_chunks = c->next_free;
        free(c);
    }
    if (ctx->match)
        weft__match_destroy(ctx->match);
    weft__handles_fini(&ctx->handles);
    weft__pq_destroy(&ctx->pass);
    weft__pq_destroy(&ctx->callbacks);
    weft__ctx_gates_free(ctx);
    free(ctx->linked);
    weft__rma_fini(ctx);
    weft__coll_fini(ctx);
    if (ctx->boot)
        weft__boot_fini(ctx->boot);
    weft_lock_destroy(&ctx->lock);
    weft_lock_destroy(&ctx->sleep_lock);
    weft_lock_destroy(&ctx->pending_lock);
    weft_lock_destroy(&ctx->spare_lock);
    weft_lock_destroy(&ctx->match_lock);
    free(ctx);
}

/* A context with its lists, locks and settings, not yet connected. */
static weft_ctx_t *ctx_new(int level, bool locked)
{
    /* Cache-line aligned: the per-thread counts have a line each. */
    weft_ctx_t *ctx = aligned_alloc(_Alignof(weft_ctx_t), sizeof *ctx);
    if (!ctx)
        return NULL;
    memset(ctx, 0, sizeof *ctx);
    weft_lock_init(&ctx->lock, locked ? WEFT_LOCK_MUTEX : WEFT_LOCK_NONE);
    ctx->thread_level = level;
    ctx->self_driver = -1; /* until the self driver opens */
    ctx->link_driver = -1; /* until a link opens one (api/link.c) */
    weft_lock_init(&ctx->sleep_lock, WEFT_LOCK_SPIN);
    weft_lock_init(&ctx->pending_lock, locked ? WEFT_LOCK_SPIN : WEFT_LOCK_NONE);
    weft_lock_init(&ctx->spare_lock, WEFT_LOCK_SPIN);
    weft_lock_init(&ctx->match_lock, locked ? WEFT_LOCK_SPIN : WEFT_LOCK_NONE);
    weft_list_init(&ctx->sleepers);
    ctx->handles.free_head = UINT32_MAX;
    weft_list_init(&ctx->pending_gates);
    weft_list_init(&ctx->live_requests);
    weft_list_init(&ctx->posted);
    /* 192-byte objects: cannot fail. */
    (void)weft_slab_init(&ctx->unexpected, sizeof(weft__unexpected_t), WEFT_UNEXP_KEPT);
    weft_list_init(&ctx->coop);
    weft__pq_init(&ctx->pass);
    weft__pq_init(&ctx->callbacks);
    ctx->eager_credits = weft__param_size("WEFT_EAGER_CREDITS", 4u << 20);
    if (ctx->eager_credits < 4096)
        ctx->eager_credits = 4096;
    if (ctx->eager_credits > (1ull << 40))
        ctx->eager_credits = 1ull << 40;
    ctx->rdv_split = weft__param_size("WEFT_RDV_SPLIT", 64u << 10);
    ctx->coop_piece = WEFT_MAX(weft__param_size("WEFT_RDV_PIECE", 256u << 10), 4096u);
    ctx->spin_ns = weft__param_size("WEFT_SPIN_US", 10) * 1000;
    ctx->progress_kick = -1;
    return ctx;
}

int weft_init(const weft_init_params_t *params, weft_ctx_t **ctx_out)
{
    if (!ctx_out)
        return WEFT_EINVAL;
    int level = WEFT_THREAD_SINGLE;
    if (params && (params->field_mask & WEFT_INIT_FIELD_THREAD_LEVEL)) {
        level = params->thread_level;
        if (level < WEFT_THREAD_SINGLE || level > WEFT_THREAD_MULTIPLE)
            return WEFT_EINVAL;
    }
    /* Unset: each gate gets its driver's default (gate_limits). */
    const char *st_name = weft__param_str("WEFT_STRATEGY", NULL);
    const weft__strategy_ops_t *st = st_name ? weft__strategy_find(st_name) : NULL;
    if (st_name && !st) {
        weft_log_error("unknown WEFT_STRATEGY=%s", st_name);
        return WEFT_EINVAL;
    }
    int policy = weft__wait_policy_parse(weft__param_str("WEFT_WAIT", "yield"));
    if (policy < 0) {
        weft_log_error("unknown WEFT_WAIT=%s (yield, spin, fixed_spin or block)",
                       weft__param_str("WEFT_WAIT", ""));
        return WEFT_EINVAL;
    }
    bool progress_thread = weft__param_size("WEFT_PROGRESS_THREAD", 0) != 0;
    if (weft__trace_start(weft__param_str("WEFT_TRACE", NULL),
                          weft__param_size("WEFT_TRACE_EVENTS", 1u << 18)) != 0)
        return WEFT_ENOMEM;
    /* A progress thread shares the engine with the application at any level. */
    weft_ctx_t *ctx = ctx_new(level, level == WEFT_THREAD_MULTIPLE || progress_thread);
    if (!ctx)
        return WEFT_ENOMEM;
    if (weft__ctx_known_drivers(ctx, params) != WEFT_OK) {
        weft_log_error("weft_init: a driver in params->drivers lacks a name, reach or operation");
        ctx_free(ctx);
        return WEFT_EINVAL;
    }
    ctx->wait_policy = policy;
    /* Waiters that may sleep sleep on the drivers' doorbells too, unless a
     * progress thread watches them (progress.c). */
    ctx->wait_doorbells =
        !progress_thread && (policy == WEFT__WAIT_BLOCK || policy == WEFT__WAIT_FIXED_SPIN);

    int *node_ranks = NULL, node_size = 0, node_index = 0;
    int rc = weft__boot_init(&ctx->boot);
    if (rc)
        goto err;
    ctx->rank = weft__boot_rank(ctx->boot);
    ctx->size = weft__boot_size(ctx->boot);
    weft__log_set_rank(ctx->rank);
    if ((rc = weft__match_create(&ctx->match)))
        goto err;
    /* Room for the peers of other jobs that links may add (api/link.c). */
    if (!weft__ctx_gates_alloc(
            ctx, ctx->size + (int)WEFT_MIN(weft__param_size("WEFT_LINKS_MAX", 1024), 1u << 20))) {
        rc = WEFT_ENOMEM;
        goto err;
    }
    for (int r = 0; r < ctx->size; r++)
        weft__gate_init(ctx, &ctx->gates[r], r, st);
    /* Before any peer can reach this rank: it may forward a broadcast at once. */
    if ((rc = weft__coll_init(ctx)))
        goto err;
    if ((rc = weft__ctx_find_node(ctx, &node_ranks, &node_size, &node_index)))
        goto err;
    ctx->node_leader = node_ranks[0];
    ctx->node_size = node_size;
    ctx->node_index = node_index;
    /* More ranks than cpus: a waiter that polls on keeps a core that a peer
     * needs for the very message it waits for, so it yields at once. */
    if (!weft__param_str("WEFT_SPIN_US", NULL) && weft__node_oversubscribed(ctx)) {
        ctx->spin_ns = 0;
        weft_log_info("%d ranks on this node, more than its cpus: waiters yield at once",
                      node_size);
    }
    if ((rc = weft__ctx_open_drivers(ctx, node_ranks, node_size, node_index,
                                     progress_thread || ctx->wait_doorbells)))
        goto err;
    if ((rc = weft__boot_fence(ctx->boot)))
        goto err;
    for (int r = 0, n = 0; r < ctx->size; r++) {
        bool same = n < node_size && node_ranks[n] == r;
        n += same;
        if ((rc = weft__ctx_connect_gate(ctx, &ctx->gates[r], same)))
            goto err;
    }
    if ((rc = weft__boot_fence(ctx->boot)))
        goto err;
    for (int i = 0; i < ctx->ndrivers; i++)
        if ((rc = ctx->drivers[i].ops->connected(ctx->drivers[i].drv)))
            goto err;
    free(node_ranks);
    if (progress_thread && (rc = weft__progress_thread_start(ctx)))
        goto err_nofree;
    if (ctx->wait_doorbells) {
        ctx->progress_kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (ctx->progress_kick < 0) {
            weft_log_warn("eventfd: %s: waiters will poll", strerror(errno));
            ctx->wait_doorbells = false;
        }
    }
    *ctx_out = ctx;
    return WEFT_OK;
err:
    free(node_ranks);
err_nofree:
    weft_log_error("init failed: %s", weft_strerror(rc));
    ctx_free(ctx);
    return rc;
}

static bool backlogs_empty(weft_ctx_t *ctx)
{
    for (int r = 0; r < atomic_load(&ctx->npeers); r++) {
        weft__gate_t *g = &ctx->gates[r];
        weft__gate_lock(g);
        bool idle = g->dead || (!g->busy && weft__backlog_empty(g));
        weft__gate_unlock(g);
        if (!idle)
            return false;
    }
    return true;
}

int weft_finalize(weft_ctx_t *ctx)
{
    if (!ctx)
        return WEFT_EINVAL;
    /* A broadcast this rank forwards may still wait for it (coll.h). */
    for (uint64_t end = weft__now_ns() + 30000000000ull; weft__coll_busy(ctx);) {
        if (weft__now_ns() > end) {
            weft_log_warn("finalize: a dynamic broadcast still waits for ranks below this one");
            break;
        }
        if (weft_progress(ctx) <= 0)
            sched_yield();
    }
    weft__progress_thread_stop(ctx);
    weft_lock_acquire(&ctx->lock);
    weft__submit_drain(ctx);
    ctx->finalizing = true;
    /* Credits are of no use to anybody now; ACKs and data still owed to peers
     * are, so they get a bounded time to leave. */
    for (int r = 0; r < atomic_load(&ctx->npeers); r++) {
        weft__gate_t *g = &ctx->gates[r];
        weft__gate_lock(g);
        if (g->credit_chunk.queued)
            weft__chunk_unqueue(&g->credit_chunk);
        weft__gate_unlock(g);
    }
    uint64_t deadline = weft__now_ns() + 2000000000ull;
    while (!backlogs_empty(ctx) && weft__now_ns() < deadline)
        weft__progress_locked(ctx);
    weft__stats_print(ctx);
    char node[WEFT__NODE_ID_MAX];
    weft__ctx_node_id(node, sizeof node);
    weft__trace_finish(ctx->rank, ctx->size, node);
    int rc = ctx->boot ? weft__boot_fence(ctx->boot) : WEFT_OK;
    /* Requests still in flight are abandoned: freed with the context. */
    weft__coll_abandon(ctx);
    weft_list_t *pos, *tmp;
    weft_list_for_each_safe(pos, tmp, &ctx->posted)
    {
        struct weft_request *req = weft_list_entry(pos, struct weft_request, link);
        weft__proto_recv_cancel(ctx, req);
        weft_list_remove(&req->link); /* unlinked already, unless not posted after all */
        weft_list_push_back(&ctx->live_requests, &req->link);
    }
    weft_list_for_each_safe(pos, tmp, &ctx->live_requests)
    {
        struct weft_request *req = weft_list_entry(pos, struct weft_request, link);
        bool signaled = req->has_comp; /* its object gets it, and the request goes back */
        weft__request_complete(ctx, req, WEFT_ECANCELED);
        if (!signaled)
            weft__request_free(ctx, req);
    }
    for (int r = 0; r < atomic_load(&ctx->npeers); r++) {
        weft__gate_t *g = &ctx->gates[r];
        weft__gate_lock(g);
        for (weft__chunk_t *c; (c = weft__backlog_first(g));) {
            weft__chunk_unqueue(c);
            if (c->heap)
                weft__ctrl_free(ctx, c);
        }
        weft__gate_unlock(g);
    }
    weft__unlock(ctx); /* the handlers of what was canceled run here */
    ctx_free(ctx);
    return rc;
}

int weft_rank(const weft_ctx_t *ctx)
{
    return ctx->rank;
}

int weft_size(const weft_ctx_t *ctx)
{
    return ctx->size;
}

int weft_thread_level(const weft_ctx_t *ctx)
{
    return ctx->thread_level;
}

int weft__progress_locked(weft_ctx_t *ctx)
{
    return weft__progress_step(ctx, NULL);
}

int weft__progress_step(weft_ctx_t *ctx, weft__coop_copy_t *copy)
{
    /* The engine's own work is written out, each part behind a cheap look:
     * the pass is what a waiter repeats, and every call in it is latency
     * (as callbacks, an empty pass cost 102 instructions instead of 69). */
    int events = 0;
    if (atomic_load_explicit(&ctx->submitted, memory_order_relaxed)) {
        weft__submit_drain(ctx);
        events++;
    }
    /* The self driver has work only after a send to oneself. */
    if (WEFT_UNLIKELY(ctx->self_pending)) {
        int n = ctx->drivers[ctx->self_driver].ops->poll(ctx->drivers[ctx->self_driver].drv);
        ctx->self_pending = n > 0;
        if (n > 0)
            events += n;
    }
    for (int i = 0; i < ctx->npoll; i++) {
        int n = ctx->poll[i].poll(ctx->poll[i].drv);
        if (n > 0)
            events += n;
    }
    if (atomic_load_explicit(&ctx->pending_any, memory_order_relaxed))
        events += weft__sched_pending(ctx);
    if (!weft_list_empty(&ctx->coop))
        events += weft__coop_progress(ctx, copy);
    /* What protocols add (weft__ctx_pass_add). */
    if (WEFT_UNLIKELY(atomic_load_explicit(&ctx->pass.n, memory_order_relaxed)))
        events += weft__pq_run_serial(&ctx->pass);
    return events;
}

int weft__ctx_pass_add(weft_ctx_t *ctx, weft__pq_fn fn, void *arg)
{
    return weft__pq_add(&ctx->pass, fn, arg);
}

int weft_progress_register(weft_ctx_t *ctx, weft_progress_fn fn, void *arg, int *id_out)
{
    if (!ctx || !fn || !id_out)
        return WEFT_EINVAL;
    int id = weft__pq_add(&ctx->callbacks, fn, arg);
    if (id < 0)
        return id;
    *id_out = id;
    /* A progress thread asleep on the doorbells runs it at its next pass. */
    weft__progress_wanted(ctx);
    return WEFT_OK;
}

int weft_progress_unregister(weft_ctx_t *ctx, int id)
{
    if (!ctx)
        return WEFT_EINVAL;
    return weft__pq_remove(&ctx->callbacks, id);
}

int weft_progress_arm(weft_ctx_t *ctx, int id, int on)
{
    if (!ctx || id < 0 || id >= WEFT__PQ_MAX)
        return WEFT_EINVAL;
    weft__pq_arm(&ctx->callbacks, id, on != 0);
    if (on)
        weft__progress_wanted(ctx);
    return WEFT_OK;
}

int weft_progress_thread_running(const weft_ctx_t *ctx)
{
    return ctx && ctx->progress_running;
}

int weft_progress(weft_ctx_t *ctx)
{
    if (!ctx)
        return WEFT_EINVAL;
    /* A thread that finds another one progressing goes on: never a convoy. */
    return weft__progress_try(ctx);
}

int weft_counters_get(weft_ctx_t *ctx, weft_counters_t *out)
{
    if (!ctx || !out)
        return WEFT_EINVAL;
    weft_lock_acquire(&ctx->lock);
    weft__counters_sum(ctx, out);
    weft_lock_release(&ctx->lock);
    return WEFT_OK;
}

int weft__ctx_create_local(int rank, int size, const weft_driver_ops_t *ops, const char *strategy,
                           weft_ctx_t **ctx_out)
{
    const weft__strategy_ops_t *st = strategy ? weft__strategy_find(strategy) : NULL;
    if (strategy && !st)
        return WEFT_EINVAL;
    weft_ctx_t *ctx = ctx_new(WEFT_THREAD_SINGLE, false);
    if (!ctx)
        return WEFT_ENOMEM;
    ctx->rank = rank;
    ctx->size = size;
    ctx->spin_ns = 0;
    int rc = weft__match_create(&ctx->match);
    if (rc)
        goto err;
    rc = WEFT_ENOMEM;
    if (!weft__ctx_gates_alloc(ctx, size))
        goto err;
    weft_driver_params_t params = {.rank = rank, .size = size, .job_id = "local"};
    weft_driver_upcalls_t up;
    weft_driver_t *drv;
    if ((rc = ops->init(&params, weft__ctx_upcalls(ctx, &up), &drv)))
        goto err;
    weft__ctx_add_driver(ctx, ops, drv);
    for (int r = 0; r < size; r++) {
        weft__gate_t *g = &ctx->gates[r];
        weft__gate_init(ctx, g, r, st);
        if ((rc = ops->connect(drv, r, NULL, 0, g, &g->track, &g->caps)))
            goto err;
        weft__gate_attach(ctx, g, ops, drv);
    }
    *ctx_out = ctx;
    return WEFT_OK;
err:
    ctx_free(ctx);
    return rc;
}
