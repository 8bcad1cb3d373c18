/* Multi-rail gates (docs/architecture.md, "Multi-rail and split_balance").
 *
 * A gate's extra rails are tracks of other instances of a driver to the same
 * peer (WEFT_TCP_RAILS=2: two tcp connections, on one interface or on the
 * interfaces WEFT_TCP_IF lists). Packets, and so every message and its
 * sequence number, stay on rail 0: order never depends on the rails. A large
 * rendezvous to a gate whose strategy splits (split_balance) is exposed on
 * every rail, one key per rail in the RDV; the receiver pulls one part per
 * rail, in proportion to the rails' bandwidth (caps, or WEFT_RAIL_BW), each
 * straight into its slice of the posted buffer, and ACKs once every part is
 * in. */
#include <string.h>

#include "core/core_int.h"
#include "util/log.h"
#include "util/util.h"

/* Measurement: an estimate per this much service time of a rail. */
#define METER_NS 5000000u

static double *rail_bw(weft__gate_t *g, int k)
{
    return k ? &g->rails[k - 1].bandwidth : &g->bandwidth;
}

/* Without WEFT_RAIL_BW, each completed part tells how fast its rail serves:
 * a rail answers its reads in order, so a part was served from when it was
 * issued or the rail's previous part completed, whichever is later, until
 * now. Every METER_NS of service the rail's bandwidth becomes the mean of the
 * old figure and the new one (the first replaces the driver's guess), so the
 * shares follow what each link really delivers, e.g. a shaped or shared one. */
static void meter(weft__gate_t *g, int k, const struct weft_request *req)
{
    weft__rail_meter_t *m = &g->meter[k];
    uint64_t now = weft__now_ns();
    uint64_t from = WEFT_MAX(req->rail_t0, m->last_done);
    m->last_done = now;
    if (!req->rail_len[k] || now <= from)
        return;
    m->bytes += req->rail_len[k];
    m->ns += now - from;
    if (m->ns < METER_NS)
        return;
    double seen = (double)m->bytes * 1e3 / (double)m->ns; /* MB/s */
    double *bw = rail_bw(g, k);
    *bw = m->samples++ ? (*bw + seen) / 2 : seen;
    m->bytes = m->ns = 0;
    weft_log_debug("rail %d to rank %d: %.0f MB/s measured, %.0f MB/s used", k, g->peer, seen, *bw);
}

void weft__rail_part_done(weft__gate_t *g, int k, struct weft_request *req, int status)
{
    if (g->rail_measure && status == WEFT_OK)
        meter(g, k, req);
    /* The last part decides. */
    if (status != WEFT_OK && req->error == WEFT_OK)
        req->error = status;
    if (--req->rail_parts)
        return;
    status = req->error;
    req->error = WEFT_OK;
    weft__proto_rget_finish(g->ctx, g, req, status);
}

static weft__gate_t *gate_of(void *peer_cookie)
{
    return ((weft__rail_t *)peer_cookie)->gate;
}

static int rail_packet(void *owner, void *peer_cookie, const void *buf, size_t len)
{
    /* The peer sends packets on rail 0 only; one here is still checked in
     * full, as on rail 0. */
    return weft__proto_packet(owner, gate_of(peer_cookie), buf, len);
}

static void rail_send_done(void *owner, void *peer_cookie, void *send_cookie, int status)
{
    /* No packet is ever sent on an extra rail. */
    weft_log_error("send completion on an extra rail to rank %d (ignored)",
                   gate_of(peer_cookie)->peer);
}

static void rail_rget_done(void *owner, void *peer_cookie, void *op_cookie, int status)
{
    /* Only parts of multi-rail reads are ever issued on an extra rail. */
    weft__rail_t *r = peer_cookie;
    weft__rail_part_done(r->gate, (int)(r - r->gate->rails) + 1, op_cookie, status);
}

static void rail_peer_lost(void *owner, void *peer_cookie, int status)
{
    weft__rail_t *r = peer_cookie;
    weft__gate_t *g = r->gate;
    if (weft__rail_lost(g, (int)(r - g->rails) + 1))
        weft__gate_lost(owner, g, status);
}

/* A gate is one peer: losing any of its connections loses the peer, so the
 * first rail to report shuts the others down (their next poll reports them
 * lost too). The gate dies only once every rail has reported: until then a
 * rail's driver may still write from a send's exposed buffer (a GET's answer)
 * or into a receive's, which the application may reuse as soon as the request
 * has failed. Each driver completes what it has in flight before its
 * peer_lost, so when the last one reports, nothing touches those buffers. */
bool weft__rail_lost(weft__gate_t *g, int k)
{
    uint8_t all = (uint8_t)((1u << (g->nrails + 1)) - 1);
    bool first = g->rails_down == 0;
    g->rails_down |= (uint8_t)(1u << k);
    if (first && g->rails_down != all) {
        weft_log_info("rank %d lost on rail %d: dropping its other rails", g->peer, k);
        for (int i = 0; i <= g->nrails; i++) {
            if (g->rails_down & (1u << i))
                continue;
            const weft_driver_ops_t *ops = i ? g->rails[i - 1].drv_ops : g->drv_ops;
            if (ops->shutdown)
                ops->shutdown(i ? g->rails[i - 1].track : g->track);
        }
    }
    return g->rails_down == all;
}

const weft_driver_upcalls_t *weft__rail_upcalls(struct weft_ctx *ctx, weft_driver_upcalls_t *up)
{
    up->owner = ctx;
    up->packet = rail_packet;
    up->send_done = rail_send_done;
    up->rget_done = rail_rget_done;
    up->peer_lost = rail_peer_lost;
    return up;
}

int weft__rail_expose(weft__gate_t *g, struct weft_request *req)
{
    weft_rkey_t keys[WEFT_MAX_RAILS] = {{0}};
    if (g->drv_ops->expose(g->drv, req->iov[0].iov_base, req->length, &keys[0]) != WEFT_OK)
        return WEFT_EUNSUPPORTED;
    size_t kl = keys[0].len;
    /* The first rails whose keys fit in an RDV (tcp's are 16 bytes: two). */
    int n = WEFT_MIN(1 + g->nrails, WEFT_WIRE_RDV_KEYS_MAX);
    if (kl)
        n = WEFT_MIN(n, (int)(WEFT_RKEY_MAX / kl));
    int i = 1;
    for (; i < n; i++) {
        weft__rail_t *r = &g->rails[i - 1];
        if (!r->drv_ops->expose ||
            r->drv_ops->expose(r->drv, req->iov[0].iov_base, req->length, &keys[i]) != WEFT_OK ||
            keys[i].len != keys[0].len)
            break;
    }
    if (i < n || kl == 0 || n < 2) {
        /* Fall back to rail 0 alone (keys[i], if exposed with another
         * length, is undone too). */
        for (int k = 1; k <= i && k < n; k++)
            if (k < i || keys[k].len)
                g->rails[k - 1].drv_ops->unexpose(g->rails[k - 1].drv, &keys[k]);
        req->rkey = keys[0];
        req->rail_keys = 1;
        req->rail_key_len = (uint8_t)kl;
        return WEFT_OK;
    }
    req->rkey.len = (uint32_t)(kl * (size_t)n);
    for (int k = 0; k < n; k++)
        memcpy(req->rkey.bytes + kl * (size_t)k, keys[k].bytes, kl);
    req->rail_keys = (uint8_t)n;
    req->rail_key_len = (uint8_t)kl;
    return WEFT_OK;
}

void weft__rail_unexpose(struct weft_request *req)
{
    weft__gate_t *g = req->gate;
    for (int k = 0; k < req->rail_keys; k++) {
        weft_rkey_t key = {.len = req->rail_key_len};
        memcpy(key.bytes, req->rkey.bytes + (size_t)req->rail_key_len * (size_t)k,
               req->rail_key_len);
        const weft_driver_ops_t *ops = k ? g->rails[k - 1].drv_ops : g->drv_ops;
        weft_driver_t *drv = k ? g->rails[k - 1].drv : g->drv;
        if (ops->unexpose)
            ops->unexpose(drv, &key);
    }
    req->rail_keys = 0;
}

int weft__rail_rget(weft__gate_t *g, struct weft_request *req, uint64_t accept,
                    const weft_rkey_t *rkey, int nkeys)
{
    int n = WEFT_MIN(nkeys, 1 + g->nrails);
    if (n < 2 || req->iovcnt != 1 || accept < 2 * 4096)
        return WEFT_EUNSUPPORTED;
    size_t kl = rkey->len / (uint32_t)nkeys;
    /* A measured rail keeps at least an eighth of the fastest one's share,
     * so it still gets parts to be measured by. */
    double bw[WEFT_MAX_RAILS], top = 0, total = 0;
    for (int k = 0; k < n; k++)
        top = WEFT_MAX(top, bw[k] = *rail_bw(g, k));
    for (int k = 0; k < n; k++)
        total += bw[k] = g->rail_measure ? WEFT_MAX(bw[k], top / 8) : bw[k];
    /* Parts in proportion to bandwidth, cut at 4 KiB; the last takes the rest. */
    uint64_t start[WEFT_MAX_RAILS + 1];
    start[0] = 0;
    for (int k = 1; k < n; k++) {
        uint64_t part = (uint64_t)((double)accept * bw[k - 1] / total) & ~(uint64_t)4095;
        start[k] = WEFT_MIN(start[k - 1] + part, accept);
    }
    start[n] = accept;
    for (int k = 0; k < n; k++)
        req->rail_len[k] = start[k + 1] - start[k];
    req->rail_t0 = g->rail_measure ? weft__now_ns() : 0;
    req->rail_parts = (uint8_t)n;
    req->state = WEFT_RS_RDV_RECV;
    weft_list_push_back(&g->ctx->live_requests, &req->link);
    for (int k = 0; k < n; k++) {
        weft_rkey_t key = {.len = (uint32_t)kl};
        memcpy(key.bytes, rkey->bytes + kl * (size_t)k, kl);
        struct iovec part = {.iov_base = (char *)req->iov[0].iov_base + start[k],
                             .iov_len = start[k + 1] - start[k]};
        weft_track_t *t = k ? g->rails[k - 1].track : g->track;
        const weft_driver_ops_t *ops = k ? g->rails[k - 1].drv_ops : g->drv_ops;
        int rc = part.iov_len ? ops->rget(t, &part, 1, &key, start[k], part.iov_len, req) : WEFT_OK;
        if (rc == WEFT_INPROGRESS)
            continue;
        /* Done (or failed) at once: account as its completion would; after a
         * failure the parts not issued yet never will be. */
        if (rc != WEFT_OK)
            req->rail_parts = (uint8_t)(req->rail_parts - (n - k - 1));
        weft__rail_part_done(g, k, req, rc);
        if (rc != WEFT_OK)
            break;
    }
    g->rail_splits++;
    weft_log_debug("rendezvous of %llu bytes from rank %d read over %d rails",
                   (unsigned long long)accept, g->peer, n);
    return WEFT_OK;
}
