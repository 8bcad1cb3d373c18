/* Links: processes of other jobs as peers (weft/weft_link.h).
 *
 * A card is: u32 magic "WLNK", u16 version, u16 address length, u64 process
 * id, u64 eager window (what the process grants its peers, as
 * window.<rank> does in the job), the driver's address blob, zeros to
 * WEFT_LINK_CARD_LEN. The process id is drawn at random once per context
 * (getrandom), never 0. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/core_int.h"
#include "core/core_strategy.h"
#include "weft/weft_link.h"
#include "core/wire.h"
#include "util/log.h"
#include "util/param.h"

#define CARD_MAGIC   0x4b4e4c57u /* "WLNK" */
#define CARD_VERSION 1u
#define CARD_HDR     24
#define CARD_ADDR    (WEFT_LINK_CARD_LEN - CARD_HDR)

/* The driver links go through: an open one that offers them, else the first
 * known network driver that does, opened now. Engine lock held. */
static int link_driver(weft_ctx_t *ctx)
{
    if (ctx->link_driver >= 0)
        return ctx->link_driver;
    for (int i = 0; i < ctx->ndrivers; i++)
        if (ctx->drivers[i].ops->link) {
            bool rail = false;
            for (int k = 0; k < ctx->nrail_drivers; k++)
                rail |= ctx->rail_driver[k] == i;
            if (!rail)
                return ctx->link_driver = i;
        }
    for (int i = 0; i < ctx->nknown; i++) {
        const weft_driver_ops_t *ops = ctx->known[i];
        if (!ops->link || !(ops->reach & WEFT_DRV_REACH_NET))
            continue;
        if (ctx->ndrivers == WEFT_MAX_DRIVERS)
            return WEFT_EUNSUPPORTED;
        weft_driver_params_t params = ctx->drv_params;
        params.only_native = false;
        params.instance = 0;
        weft_driver_upcalls_t up;
        weft_driver_t *drv;
        int rc = ops->init(&params, weft__ctx_upcalls(ctx, &up), &drv);
        if (rc) {
            weft_log_error("cannot open driver %s for links to other jobs: %s", ops->name,
                           weft_strerror(rc));
            return rc;
        }
        weft__ctx_add_driver(ctx, ops, drv);
        /* A thread asleep on the doorbells it knew learns of the new one. */
        if (ctx->progress_kick >= 0)
            weft__progress_kick(ctx);
        return ctx->link_driver = ctx->ndrivers - 1;
    }
    weft_log_error("no driver offers links to other jobs (tcp is needed)");
    return WEFT_EUNSUPPORTED;
}

static uint64_t draw_id(void)
{
    uint64_t id = 0;
    while (!id)
        if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
            id = weft__now_ns() ^ ((uint64_t)getpid() << 40);
    return id;
}

int weft_link_card(weft_ctx_t *ctx, uint8_t card[WEFT_LINK_CARD_LEN])
{
    weft_lock_acquire(&ctx->lock);
    int rc = link_driver(ctx);
    if (rc < 0)
        goto out;
    if (!ctx->link_id)
        ctx->link_id = draw_id();
    memset(card, 0, WEFT_LINK_CARD_LEN);
    size_t len = CARD_ADDR;
    if ((rc = ctx->drivers[rc].ops->address(ctx->drivers[rc].drv, card + CARD_HDR, &len)) < 0)
        goto out;
    weft__le32_put(card, CARD_MAGIC);
    weft__le16_put(card + 4, CARD_VERSION);
    weft__le16_put(card + 6, (uint16_t)len);
    weft__le64_put(card + 8, ctx->link_id);
    weft__le64_put(card + 16, ctx->eager_credits);
    rc = WEFT_OK;
out:
    weft_lock_release(&ctx->lock);
    return rc;
}

/* A card's fields; false when it is not one. */
static bool card_read(const uint8_t *card, uint64_t *id, uint64_t *window, size_t *addr_len)
{
    if (weft__le32_get(card) != CARD_MAGIC || weft__le16_get(card + 4) != CARD_VERSION)
        return false;
    *addr_len = weft__le16_get(card + 6);
    *id = weft__le64_get(card + 8);
    *window = weft__le64_get(card + 16);
    return *id && *addr_len <= CARD_ADDR && *window >= 4096;
}

uint64_t weft_link_card_id(const uint8_t card[WEFT_LINK_CARD_LEN])
{
    uint64_t id, window;
    size_t len;
    return card_read(card, &id, &window, &len) ? id : 0;
}

/* A gate for the process of card, through driver di. Engine lock held. */
static int link_one(weft_ctx_t *ctx, int di, const uint8_t *card, const uint8_t *secret, int *peer)
{
    uint64_t id, window;
    size_t addr_len;
    if (!card_read(card, &id, &window, &addr_len))
        return WEFT_EPROTO;
    if (id == ctx->link_id) {
        *peer = ctx->rank;
        return WEFT_OK;
    }
    for (int i = 0; i < ctx->nlinked; i++)
        if (ctx->linked[i].id == id) {
            *peer = ctx->linked[i].peer;
            /* Met again: whatever said its end was expected no longer holds. */
            ctx->gates[*peer].quiet = false;
            return WEFT_OK;
        }
    int n = atomic_load_explicit(&ctx->npeers, memory_order_relaxed);
    if (n == ctx->peers_cap) {
        weft_log_error("this process linked %d processes of other jobs: raise WEFT_LINKS_MAX",
                       ctx->peers_cap - ctx->size);
        return WEFT_ENOBUFS;
    }
    if (ctx->nlinked == ctx->linked_cap) {
        int cap = ctx->linked_cap ? 2 * ctx->linked_cap : 16;
        struct weft__linked *l = realloc(ctx->linked, (size_t)cap * sizeof *l);
        if (!l)
            return WEFT_ENOMEM;
        ctx->linked = l;
        ctx->linked_cap = cap;
    }
    const char *st_name = weft__param_str("WEFT_STRATEGY", NULL);
    weft__gate_t *g = &ctx->gates[n];
    weft__gate_init(ctx, g, n, st_name ? weft__strategy_find(st_name) : NULL);
    const weft_driver_ops_t *ops = ctx->drivers[di].ops;
    weft_drv_link_t link = {.mine = ctx->link_id, .peer = id};
    memcpy(link.secret, secret, WEFT_LINK_SECRET_LEN);
    int rc =
        ops->link(ctx->drivers[di].drv, &link, card + CARD_HDR, addr_len, g, &g->track, &g->caps);
    if (rc) {
        weft_lock_destroy(&g->slock.lock);
        memset(g, 0, sizeof *g);
        return rc;
    }
    weft__gate_attach(ctx, g, ops, ctx->drivers[di].drv);
    g->bandwidth = g->caps.bandwidth_mbs;
    g->peer_window = window;
    g->send_credit = (int64_t)window;
    ctx->linked[ctx->nlinked].id = id;
    ctx->linked[ctx->nlinked].peer = n;
    ctx->nlinked++;
    atomic_store_explicit(&ctx->npeers, n + 1, memory_order_release);
    *peer = n;
    return WEFT_OK;
}

int weft_link_open(weft_ctx_t *ctx, int n, const uint8_t *cards,
                   const uint8_t secret[WEFT_LINK_SECRET_LEN], int *peers)
{
    weft_lock_acquire(&ctx->lock);
    int rc = link_driver(ctx);
    if (rc >= 0 && !ctx->link_id)
        ctx->link_id = draw_id();
    for (int i = 0, di = rc; rc >= 0 && i < n; i++)
        rc = link_one(ctx, di, cards + (size_t)i * WEFT_LINK_CARD_LEN, secret, &peers[i]);
    weft__unlock(ctx);
    return rc < 0 ? rc : WEFT_OK;
}

int weft_link_wait(weft_ctx_t *ctx, int n, const int *peers)
{
    if (!ctx || n < 0 || (n && !peers))
        return WEFT_EINVAL;
    for (int i = 0; i < n; i++)
        if (!weft__peer_valid(ctx, peers[i]))
            return WEFT_ERANK;
    for (int from = 0;;) {
        weft_lock_acquire(&ctx->lock);
        int rc = WEFT_OK;
        /* Those before `from` were up already. */
        for (; from < n && rc == WEFT_OK; from++) {
            weft__gate_t *g = &ctx->gates[peers[from]];
            int up = g->dead                ? WEFT_EPEERDEAD
                     : !g->track            ? 1 /* ourselves, through self */
                     : g->drv_ops->track_up ? g->drv_ops->track_up(g->track)
                                            : 1;
            if (up < 0)
                rc = up;
            else if (up == 0)
                break;
        }
        int events = from < n && rc == WEFT_OK ? weft__progress_locked(ctx) : 0;
        weft__unlock(ctx);
        if (rc != WEFT_OK || from == n)
            return rc;
        if (events <= 0)
            sched_yield();
    }
}

int weft_link_npeers(weft_ctx_t *ctx)
{
    return atomic_load_explicit(&ctx->npeers, memory_order_acquire);
}

bool weft_link_is_linked(weft_ctx_t *ctx, int peer)
{
    return peer >= ctx->size && weft__peer_valid(ctx, peer);
}

void weft_link_quiet(weft_ctx_t *ctx, int peer)
{
    if (!weft_link_is_linked(ctx, peer))
        return;
    weft_lock_acquire(&ctx->lock);
    ctx->gates[peer].quiet = true;
    weft_lock_release(&ctx->lock);
}

_Static_assert(sizeof(weft_launch_app_t) == sizeof(weft_boot_app_t) &&
                   offsetof(weft_launch_app_t, env) == offsetof(weft_boot_app_t, env),
               "weft_launch_app_t is the boot layer's weft_boot_app_t");

int weft_launch(weft_ctx_t *ctx, const weft_launch_app_t *apps, int napps, const char *hosts,
                const char *hostfile, const char *wdir)
{
    if (!ctx || !apps || napps < 1)
        return WEFT_EINVAL;
    for (int a = 0; a < napps; a++)
        if (!apps[a].argv || !apps[a].argv[0] || apps[a].np < 1)
            return WEFT_EINVAL;
    /* Not under the engine lock: a launcher takes its time, and the call
     * touches none of the boot object's state (the store's), only the
     * launcher's connection, which is thread-safe (PMIx). */
    return ctx->boot ? weft__boot_spawn(ctx->boot, (const weft_boot_app_t *)apps, napps, hosts,
                                        hostfile, wdir)
                     : WEFT_EUNSUPPORTED;
}
