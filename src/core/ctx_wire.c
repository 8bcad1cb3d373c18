/* The context's wire-up (weft_init, ctx.c): which node this process is on,
 * the drivers it may open and opens, and the gates: one track per peer
 * through the driver that reaches it, extra rails where a driver has them,
 * the peer's eager window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core_int.h"
#include "core/registry.h"
#include "util/log.h"
#include "util/param.h"

#define DRIVERS_DEFAULT "every driver"

/* Which node this process runs on: host name and kernel boot id, unless
 * WEFT_NODE_ID says otherwise (network-namespace test clusters share both). */
void weft__ctx_node_id(char *buf, size_t len)
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
int weft__ctx_known_drivers(weft_ctx_t *ctx, const weft_init_params_t *params)
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

int weft__ctx_find_node(weft_ctx_t *ctx, int **node_ranks, int *node_size, int *node_index)
{
    char mine[WEFT__NODE_ID_MAX], other[WEFT__NODE_ID_MAX], key[64];
    weft__ctx_node_id(mine, sizeof mine);
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

/* Publish the address of driver instance drv under key, for the peers'
 * connect: < 0 on failure. */
static int publish(weft_ctx_t *ctx, const weft_driver_ops_t *ops, weft_driver_t *drv,
                   const char *key)
{
    uint8_t blob[WEFT_ADDR_MAX];
    size_t len = sizeof blob;
    int rc = ops->address(drv, blob, &len);
    return rc < 0 ? rc : weft__boot_put(ctx->boot, key, blob, len);
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
        char key[64];
        snprintf(key, sizeof key, "addr.%s.%d.%d", ops->name, i, ctx->rank);
        if ((rc = publish(ctx, ops, drv, key)) < 0)
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

int weft__ctx_open_drivers(weft_ctx_t *ctx, const int *node_ranks, int node_size, int node_index,
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
        char key[64];
        snprintf(key, sizeof key, "addr.%s.%d", ops->name, ctx->rank);
        if ((rc = publish(ctx, ops, drv, key)) < 0)
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

int weft__ctx_connect_gate(weft_ctx_t *ctx, weft__gate_t *g, bool same_node)
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
bool weft__ctx_gates_alloc(weft_ctx_t *ctx, int cap)
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

void weft__ctx_gates_free(weft_ctx_t *ctx)
{
    if (ctx->gates) {
        size_t len = (size_t)ctx->peers_cap * sizeof *ctx->gates;
        munmap(ctx->gates, len ? len : 1);
    }
    ctx->gates = NULL;
}
