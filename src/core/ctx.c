/* The context: joining the job (bootstrap, drivers, gates) and leaving it.
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
#include <sys/mman.h>
#include <unistd.h>

#include "core/core_int.h"
#include "coll/coll.h"
#include "rma/rma.h"
#include "core/registry.h"
#include "util/log.h"
#include "util/param.h"

#define NODE_ID_MAX 256

#define DRIVERS_DEFAULT "every driver"

/* Which node this process runs on: host name and kernel boot id, unless
 * WEFT_NODE_ID says otherwise (network-namespace test clusters share both). */
static void node_id(char *buf, size_t len)
{
    const char *forced = weft__param_str("WEFT_NODE_ID", NULL);
    if (forced) {
        snprintf(buf, len, "%s", forced);
        return;
    }
    char host[128] = "", boot[64] = "";
    gethostname(host, sizeof host - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = 0;
        fclose(f);
        boot[strcspn(boot, "\n")] = 0;
    }
    snprintf(buf, len, "%s/%s", host, boot);
}

/* Is a driver allowed by WEFT_DRIVERS (a comma-separated list; unset:
 * every one)? One that reaches only this process always is. */
static bool driver_allowed(const weft_driver_ops_t *ops)
{
    if (ops->reach == WEFT_DRV_REACH_SELF)
        return true;
    const char *list = weft__param_str("WEFT_DRIVERS", NULL);
    if (!list)
        return true;
    size_t n = strlen(ops->name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !strncmp(p, ops->name, n))
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

/* The drivers this context may open (ctx->known): the built-in ones and the
 * program's own, highest preference first (a stable order: the built-in
 * list's among equals, the program's after). */
static int known_drivers(weft_ctx_t *ctx, const weft_init_params_t *params)
{
    size_t nb;
    const weft_driver_ops_t *const *b = weft__drivers_builtin(&nb);
    int n = 0;
    for (size_t i = 0; i < nb; i++)
        ctx->known[n++] = b[i];
    if (params && (params->field_mask & WEFT_INIT_FIELD_DRIVERS)) {
        if (params->ndrivers < 0 || (params->ndrivers && !params->drivers))
            return WEFT_EINVAL;
        for (int i = 0; i < params->ndrivers; i++) {
            const weft_driver_ops_t *ops = params->drivers[i];
            if (!ops || !ops->name || !ops->reach || !ops->init || !ops->connect || !ops->send ||
                !ops->poll || n == WEFT_MAX_KNOWN_DRIVERS)
                return WEFT_EINVAL;
            ctx->known[n++] = ops;
        }
    }
    for (int i = 1; i < n; i++) /* insertion sort: stable */
        for (int j = i; j > 0 && ctx->known[j]->preference > ctx->known[j - 1]->preference; j--) {
            const weft_driver_ops_t *t = ctx->known[j];
            ctx->known[j] = ctx->known[j - 1];
            ctx->known[j - 1] = t;
        }
    ctx->nknown = n;
    return WEFT_OK;
}

static int find_node(weft_ctx_t *ctx, int **node_ranks, int *node_size, int *node_index)
{
    char mine[NODE_ID_MAX], other[NODE_ID_MAX], key[64];
    node_id(mine, sizeof mine);
    snprintf(key, sizeof key, "node.%d", ctx->rank);
    int rc = weft__boot_put(ctx->boot, key, mine, strlen(mine) + 1);
    if (rc == WEFT_OK)
        rc = weft__boot_fence(ctx->boot);
    if (rc)
        return rc;
    int *ranks = malloc(sizeof(int) * (size_t)ctx->size);
    if (!ranks)
        return WEFT_ENOMEM;
    int n = 0;
    for (int r = 0; r < ctx->size; r++) {
        size_t len = sizeof other;
        if (r != ctx->rank) {
            snprintf(key, sizeof key, "node.%d", r);
            rc = weft__boot_get(ctx->boot, key, other, &len);
            if (rc) {
                /* Past a fence every joined rank's key is there: this one
                 * left (or exited) without ever starting weft. */
                if (rc == WEFT_ENOTFOUND)
                    weft_log_error("rank %d never joined the job: it exited, or ended "
                                   "before it called weft_init (MPI_Init)",
                                   r);
                free(ranks);
                return rc == WEFT_ENOTFOUND ? WEFT_EPEERDEAD : rc;
            }
            other[sizeof other - 1] = 0;
        }
        if (r == ctx->rank || !strcmp(mine, other)) {
            if (r == ctx->rank)
                *node_index = n;
            ranks[n++] = r;
        }
    }
    *node_ranks = ranks;
    *node_size = n;
    return WEFT_OK;
}

const weft_driver_upcalls_t *weft__ctx_upcalls(weft_ctx_t *ctx, weft_driver_upcalls_t *up)
{
    up->owner = ctx;
    up->packet = weft__proto_packet;
    up->send_done = weft__proto_send_done;
    up->rget_done = weft__proto_rget_done;
    up->peer_lost = weft__proto_peer_lost;
    return up;
}

_Static_assert(WEFT_BOOT_SECRET_LEN == WEFT_DRV_SECRET_LEN, "one secret size");

void weft__ctx_add_driver(weft_ctx_t *ctx, const weft_driver_ops_t *ops, weft_driver_t *drv)
{
    int i = ctx->ndrivers++;
    ctx->drivers[i].ops = ops;
    ctx->drivers[i].drv = drv;
    if (i != ctx->self_driver) {
        ctx->poll[ctx->npoll].poll = ops->poll;
        ctx->poll[ctx->npoll].drv = drv;
        ctx->npoll++;
    }
}

/* ops->rails_param > 1 (WEFT_TCP_RAILS): more instances of the driver, each
 * a rail of every gate on it (rail.c), publishing addr.<name>.<i>.<rank>. */
static int open_rails(weft_ctx_t *ctx, const weft_driver_ops_t *ops, weft_driver_params_t *params)
{
    uint64_t rails = weft__param_size(ops->rails_param, 1);
    if (rails > WEFT_MAX_RAILS) {
        weft_log_warn("%s=%llu: using %d", ops->rails_param, (unsigned long long)rails,
                      WEFT_MAX_RAILS);
        rails = WEFT_MAX_RAILS;
    }
    weft_driver_upcalls_t up;
    weft__rail_upcalls(ctx, &up);
    for (int i = 1; i < (int)rails; i++) {
        if (ctx->ndrivers == WEFT_MAX_DRIVERS)
            return WEFT_EUNSUPPORTED;
        weft_driver_params_t p = *params;
        p.instance = i;
        weft_driver_t *drv;
        int rc = ops->init(&p, &up, &drv);
        if (rc) {
            weft_log_error("%s rail %d failed to start: %s", ops->name, i, weft_strerror(rc));
            return rc;
        }
        ctx->rail_ops = ops;
        ctx->rail_driver[ctx->nrail_drivers++] = ctx->ndrivers;
        weft__ctx_add_driver(ctx, ops, drv);
        uint8_t blob[WEFT_ADDR_MAX];
        size_t len = sizeof blob;
        char key[64];
        if ((rc = ops->address(drv, blob, &len)) < 0)
            return rc;
        snprintf(key, sizeof key, "addr.%s.%d.%d", ops->name, i, ctx->rank);
        if ((rc = weft__boot_put(ctx->boot, key, blob, len)) < 0)
            return rc;
    }
    return WEFT_OK;
}

/* Bandwidth of rail k of a gate: WEFT_RAIL_BW's k-th entry (MB/s), else the
 * driver's own figure. */
static double rail_bandwidth(int k, double caps_bw)
{
    const char *list = weft__param_str("WEFT_RAIL_BW", NULL);
    for (const char *p = list; p && *p; k--) {
        if (k == 0) {
            double v = strtod(p, NULL);
            return v > 0 ? v : caps_bw;
        }
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return caps_bw;
}

/* Connect the extra rails of a gate on the driver that has them. */
static int connect_rails(weft_ctx_t *ctx, weft__gate_t *g)
{
    const weft_driver_ops_t *ops = ctx->rail_ops;
    g->bandwidth = rail_bandwidth(0, g->caps.bandwidth_mbs);
    g->rail_measure = !weft__param_str("WEFT_RAIL_BW", NULL);
    for (int i = 0; i < ctx->nrail_drivers; i++) {
        weft_driver_t *drv = ctx->drivers[ctx->rail_driver[i]].drv;
        uint8_t blob[WEFT_ADDR_MAX];
        size_t len = sizeof blob;
        char key[64];
        snprintf(key, sizeof key, "addr.%s.%d.%d", ops->name, i + 1, g->peer);
        int rc = weft__boot_get(ctx->boot, key, blob, &len);
        if (rc)
            return rc;
        weft__rail_t *r = &g->rails[i];
        r->gate = g;
        rc = ops->connect(drv, g->peer, blob, len, r, &r->track, &r->caps);
        if (rc) {
            weft_log_error("cannot connect rail %d to rank %d: %s", i + 1, g->peer,
                           weft_strerror(rc));
            return rc;
        }
        r->drv_ops = ops;
        r->drv = drv;
        r->bandwidth = rail_bandwidth(i + 1, r->caps.bandwidth_mbs);
        g->nrails++;
    }
    return WEFT_OK;
}

static int open_drivers(weft_ctx_t *ctx, const int *node_ranks, int node_size, int node_index,
                        bool doorbell)
{
    weft_driver_params_t params = {
        .rank = ctx->rank,
        .size = ctx->size,
        .job_id = weft__boot_job_id(ctx->boot),
        .job_secret = weft__boot_secret(ctx->boot),
        .node_ranks = node_ranks,
        .node_size = node_size,
        .node_index = node_index,
        .threaded = ctx->lock.kind != WEFT_LOCK_NONE,
        .doorbell = doorbell,
    };
    ctx->drv_params = params;
    ctx->drv_params.node_ranks = NULL; /* freed after init; links need none */
    weft_driver_upcalls_t up;
    weft__ctx_upcalls(ctx, &up);
    uint8_t window[8];
    char wkey[64];
    weft__le64_put(window, ctx->eager_credits);
    snprintf(wkey, sizeof wkey, "window.%d", ctx->rank);
    int wrc = weft__boot_put(ctx->boot, wkey, window, sizeof window);
    if (wrc)
        return wrc;
    /* A network driver is needed only for peers on other nodes, or for node
     * peers when no node driver is allowed (WEFT_DRIVERS=tcp). */
    bool node_driver = false;
    for (int i = 0; i < ctx->nknown; i++)
        node_driver |=
            (ctx->known[i]->reach & WEFT_DRV_REACH_NODE) && driver_allowed(ctx->known[i]);
    bool need_net = node_size < ctx->size || (!node_driver && ctx->size > 1);
    for (int i = 0; i < ctx->nknown; i++) {
        const weft_driver_ops_t *ops = ctx->known[i];
        if (!driver_allowed(ops))
            continue;
        unsigned reach = ops->reach;
        bool useful = (reach & WEFT_DRV_REACH_SELF) ||
                      ((reach & WEFT_DRV_REACH_NODE) && node_size > 1) ||
                      ((reach & WEFT_DRV_REACH_NET) && need_net);
        if (!useful || ctx->ndrivers == WEFT_MAX_DRIVERS)
            continue;
        /* Not named, a native-only driver stands in only on a native fabric. */
        params.only_native = ops->native_only && !weft__param_str("WEFT_DRIVERS", NULL);
        params.instance = 0;
        weft_driver_t *drv;
        int rc = ops->init(&params, &up, &drv);
        if (rc && params.only_native) {
            /* Not asked for by name: another network driver does the job. */
            if (rc != WEFT_EUNSUPPORTED)
                weft_log_warn("driver %s failed to start (%s); using the next one", ops->name,
                              weft_strerror(rc));
            continue;
        }
        if (rc) {
            weft_log_error("driver %s failed to start: %s", ops->name, weft_strerror(rc));
            return rc;
        }
        /* The driver that reaches only this process is polled only after a
         * send to oneself (self_pending). */
        if (reach == WEFT_DRV_REACH_SELF && ctx->self_driver < 0)
            ctx->self_driver = ctx->ndrivers;
        weft__ctx_add_driver(ctx, ops, drv);
        uint8_t blob[WEFT_ADDR_MAX];
        size_t len = sizeof blob;
        char key[64];
        if ((rc = ops->address(drv, blob, &len)) < 0)
            return rc;
        snprintf(key, sizeof key, "addr.%s.%d", ops->name, ctx->rank);
        if ((rc = weft__boot_put(ctx->boot, key, blob, len)) < 0)
            return rc;
        if (ops->rails_param && !ctx->nrail_drivers && (rc = open_rails(ctx, ops, &params)))
            return rc;
    }
    return WEFT_OK;
}

/* What a gate may send, from its track's caps; its strategy, unless
 * WEFT_STRATEGY chose one for every gate, is the one its track asks for, else
 * its driver's default. */
static void gate_limits(weft__gate_t *g)
{
    /* The largest payloads that fit a packet with their header and padding. */
    size_t room = g->caps.max_packet - WEFT_WIRE_PKT_HDR - WEFT_WIRE_ALIGN;
    size_t thr = weft__param_size("WEFT_RDV_THRESHOLD", g->caps.rdv_threshold);
    g->eager_max = WEFT_MIN(thr, room - WEFT_WIRE_EAGER_SYNC_HDR);
    g->eager_max_iov = WEFT_MIN(g->caps.max_iov, WEFT_PKT_MAX_IOV) - 3;
    g->rdata_max = room - WEFT_WIRE_RDATA_HDR;
    if (!g->strategy && g->caps.strategy)
        g->strategy = weft__strategy_find(g->caps.strategy);
    if (!g->strategy)
        g->strategy = weft__strategy_find(g->drv_ops->strategy ? g->drv_ops->strategy : "default");
    /* Sending without the engine lock: only where there is one to find
     * taken, and only on a track that allows it. */
    if (g->ctx->lock.kind != WEFT_LOCK_NONE && (g->caps.flags & WEFT_DRV_CAP_SEND_MT))
        g->slock.lock.kind = WEFT_LOCK_SPIN;
}

/* A gate connected by (ops, drv): what the engine derives from its track. */
void weft__gate_attach(struct weft_ctx *ctx, weft__gate_t *g, const weft_driver_ops_t *ops,
                       weft_driver_t *drv)
{
    g->drv_ops = ops;
    g->drv = drv;
    weft__coop_gate_init(ctx, g);
    gate_limits(g);
}

/* Whether peer opened the driver of ctx->drivers[i] (published its address). */
static bool peer_has(weft_ctx_t *ctx, int i, int peer)
{
    char key[64];
    uint8_t blob[WEFT_ADDR_MAX];
    size_t len = sizeof blob;
    snprintf(key, sizeof key, "addr.%s.%d", ctx->drivers[i].ops->name, peer);
    return weft__boot_get(ctx->boot, key, blob, &len) == WEFT_OK;
}

/* The driver for peer: one that reaches only this process for itself; for
 * a peer of the node, the preferred node driver both opened, else the
 * preferred network driver both opened. ctx->drivers is in preference order
 * (opened so), rails aside. -1 if none. */
static int driver_for(weft_ctx_t *ctx, int peer, bool same_node)
{
    if (peer == ctx->rank)
        return ctx->self_driver;
    for (int pass = same_node ? 0 : 1; pass < 2; pass++) {
        unsigned want = pass == 0 ? WEFT_DRV_REACH_NODE : WEFT_DRV_REACH_NET;
        for (int i = 0; i < ctx->ndrivers; i++) {
            bool rail = false;
            for (int k = 0; k < ctx->nrail_drivers; k++)
                rail |= ctx->rail_driver[k] == i;
            if (!rail && (ctx->drivers[i].ops->reach & want) && peer_has(ctx, i, peer))
                return i;
        }
    }
    return -1;
}

static int connect_gate(weft_ctx_t *ctx, weft__gate_t *g, bool same_node)
{
    int di = driver_for(ctx, g->peer, same_node);
    if (di < 0) {
        weft_log_error("no driver reaches rank %d (WEFT_DRIVERS=%s)", g->peer,
                       weft__param_str("WEFT_DRIVERS", DRIVERS_DEFAULT));
        return WEFT_EUNSUPPORTED;
    }
    const weft_driver_ops_t *ops = ctx->drivers[di].ops;
    uint8_t blob[WEFT_ADDR_MAX];
    size_t len = sizeof blob;
    char key[64];
    snprintf(key, sizeof key, "addr.%s.%d", ops->name, g->peer);
    int rc = weft__boot_get(ctx->boot, key, blob, &len);
    if (rc)
        return rc;
    rc = ops->connect(ctx->drivers[di].drv, g->peer, blob, len, g, &g->track, &g->caps);
    if (rc) {
        weft_log_error("cannot connect to rank %d with %s: %s", g->peer, ops->name,
                       weft_strerror(rc));
        return rc;
    }
    weft__gate_attach(ctx, g, ops, ctx->drivers[di].drv);
    g->bandwidth = g->caps.bandwidth_mbs;
    if (ops == ctx->rail_ops && ctx->nrail_drivers && (rc = connect_rails(ctx, g)))
        return rc;
    /* Eager credit is the window the peer grants, which its own
     * WEFT_EAGER_CREDITS sets: ranks need not agree. */
    uint8_t window[8];
    len = sizeof window;
    snprintf(key, sizeof key, "window.%d", g->peer);
    if ((rc = weft__boot_get(ctx->boot, key, window, &len)) != WEFT_OK || len != sizeof window)
        return rc ? rc : WEFT_EBOOT;
    g->peer_window = weft__le64_get(window);
    g->send_credit = (int64_t)g->peer_window;
    return WEFT_OK;
}

void weft__gate_init(weft_ctx_t *ctx, weft__gate_t *g, int peer, const weft__strategy_ops_t *st)
{
    g->ctx = ctx;
    g->peer = peer;
    g->strategy = st;
    g->peer_window = ctx->eager_credits;
    g->send_credit = (int64_t)ctx->eager_credits;
    /* A test hook: both sides start their sequence numbers here, to exercise
     * wrap-around of the 32-bit counters. */
    g->send_seq = g->recv_seq = (uint32_t)weft__param_size("WEFT_SEQ_START", 0);
    for (int cls = 0; cls < 3; cls++)
        weft_list_init(&g->backlog[cls]);
    weft_list_init(&g->pending_link);
    weft_list_init(&g->credit_chunk.link);
    g->credit_chunk.kind = WEFT_CHUNK_CREDIT;
    g->credit_chunk.hdr_len = WEFT_WIRE_CREDIT_HDR;
    weft_lock_init(&g->slock.lock, WEFT_LOCK_NONE); /* gate_limits may make it a spin lock */
}

/* The gates of the job's ranks and room for cap in all, which never moves
 * (requests and drivers hold pointers to gates). Mapped, not calloc'd: the
 * pages of gates never used stay untouched, at no cost, where a calloc
 * (a sanitizer's above all) would clear them every time. npeers = size. */
static bool gates_alloc(weft_ctx_t *ctx, int cap)
{
    size_t len = (size_t)cap * sizeof *ctx->gates;
    void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    ctx->gates = p;
    ctx->peers_cap = cap;
    atomic_store_explicit(&ctx->npeers, ctx->size, memory_order_relaxed);
    return true;
}

static void gates_free(weft_ctx_t *ctx)
{
    if (ctx->gates) {
        size_t len = (size_t)ctx->peers_cap * sizeof *ctx->gates;
        munmap(ctx->gates, len ? len : 1);
    }
    ctx->gates = NULL;
}

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
    gates_free(ctx);
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
    if (known_drivers(ctx, params) != WEFT_OK) {
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
    if (!gates_alloc(ctx, ctx->size +
                              (int)WEFT_MIN(weft__param_size("WEFT_LINKS_MAX", 1024), 1u << 20))) {
        rc = WEFT_ENOMEM;
        goto err;
    }
    for (int r = 0; r < ctx->size; r++)
        weft__gate_init(ctx, &ctx->gates[r], r, st);
    /* Before any peer can reach this rank: it may forward a broadcast at once. */
    if ((rc = weft__coll_init(ctx)))
        goto err;
    if ((rc = find_node(ctx, &node_ranks, &node_size, &node_index)))
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
    if ((rc = open_drivers(ctx, node_ranks, node_size, node_index,
                           progress_thread || ctx->wait_doorbells)))
        goto err;
    if ((rc = weft__boot_fence(ctx->boot)))
        goto err;
    for (int r = 0, n = 0; r < ctx->size; r++) {
        bool same = n < node_size && node_ranks[n] == r;
        n += same;
        if ((rc = connect_gate(ctx, &ctx->gates[r], same)))
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
    char node[NODE_ID_MAX];
    node_id(node, sizeof node);
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
    if (!gates_alloc(ctx, size))
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
