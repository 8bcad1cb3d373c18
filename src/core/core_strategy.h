/* The engine's private declarations, part three: packet strategies
 * (strategy/, the scheduler's hook) and multi-rail gates (rail.c).
 * Included by core_int.h after its types; include core_int.h, not this. */
#ifndef WEFT_CORE_STRATEGY_H
#define WEFT_CORE_STRATEGY_H

#ifndef WEFT_CORE_INT_H
#error "include core/core_int.h"
#endif

/* Strategies (strategy/). */
struct weft__strategy_ops {
    const char *name;
    /* Fill pkt from the gate's backlog with weft__packet_add (chunks stay
     * linked: the scheduler commits what the driver took). Returns the number
     * of chunks added. */
    int (*build)(weft__gate_t *g, weft__packet_t *pkt);
    /* After a packet leaves, the track counts as busy until the next progress
     * pass (as NewMadeleine's does until its send is polled complete): a burst
     * of submissions meanwhile forms a backlog for build to aggregate. A
     * submission on a track idle since the last pass still leaves at once. */
    bool hold;
    /* Rendezvous to a multi-rail gate are exposed on every rail, so the
     * receiver pulls them in parts, one per rail, in proportion to bandwidth. */
    bool split;
};
/* The driver copied a packet of total bytes carrying one message of len bytes
 * (a track with WEFT_DRV_CAP_SEND_COPY; the send fast path built the packet
 * itself): count it as commit would, and start the strategy's hold. Inline:
 * the send fast paths' only step outside proto.c. */
static inline void weft__sched_lone_copied(weft__gate_t *g, size_t total, uint64_t len)
{
    weft__gate_stats_t *st = &g->stats;
    st->packets_sent++;
    st->chunks_sent++;
    st->wire_bytes_sent += total;
    if (!st->max_chunks)
        st->max_chunks = 1;
    st->messages_sent++;
    st->msg_bytes_sent += len;
    WEFT_TRACE5(WEFT_TR_LONE, WEFT_TR_I, g->peer, total, len, 0, (uintptr_t)g->drv_ops->name);
    g->held_count = 0;
    if (g->strategy->hold)
        weft__sched_hold_start(g);
}

extern const weft__strategy_ops_t weft__strategy_default;
extern const weft__strategy_ops_t weft__strategy_aggreg;
extern const weft__strategy_ops_t weft__strategy_split_balance;
const weft__strategy_ops_t *weft__strategy_find(const char *name);
/* Every strategy built in; *count receives their number. */
const weft__strategy_ops_t *const *weft__strategy_list(size_t *count);
/* Append one chunk (or the next RDATA fragment) to a packet being built; false
 * if it does not fit. The chunk stays in the backlog: the scheduler commits
 * (unlinks, advances fragments) only once the driver took the packet, so a
 * refused packet (WEFT_EAGAIN) needs no undo. Shared by all strategies. */
bool weft__packet_add(weft__gate_t *g, weft__packet_t *pkt, weft__chunk_t *c);

/* Multi-rail (rail.c). Upcalls of an extra rail's driver instance: they find
 * the gate through the rail and go on as rail 0's would. */
const weft_driver_upcalls_t *weft__rail_upcalls(struct weft_ctx *ctx, weft_driver_upcalls_t *up);
/* Expose a send's buffer on every rail of its gate (req->rkey, rail_keys).
 * WEFT_OK, or an error with nothing left exposed. */
int weft__rail_expose(weft__gate_t *g, struct weft_request *req);
void weft__rail_unexpose(struct weft_request *req);
/* Rail k (0: the gate's own track) of g reported its peer lost; the other
 * rails are shut down. True once every rail has reported, when the gate may
 * die (weft__gate_lost). */
bool weft__rail_lost(weft__gate_t *g, int k);
/* Part k (0: the gate's own track) of a multi-rail read completed. */
void weft__rail_part_done(weft__gate_t *g, int k, struct weft_request *req, int status);
/* A receive matched a rendezvous whose rkey holds nkeys keys: read it in
 * parts over the rails. WEFT_OK when started (rget_done finishes it),
 * WEFT_EUNSUPPORTED when it cannot be split (the caller reads it whole). */
int weft__rail_rget(weft__gate_t *g, struct weft_request *req, uint64_t accept,
                    const weft_rkey_t *rkey, int nkeys);

#endif
