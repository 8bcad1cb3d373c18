/* The aggregation strategy (NewMadeleine's "aggreg", seeds 000 and 004): when
 * the track is free, fill one packet with control chunks first (ACK, RTR, RTP,
 * DONE, CREDIT: small, and someone waits on each), then as many pending
 * messages as fit, whatever their tag, communicator or submitting thread, then
 * rendezvous data in the room left.
 *
 * Order: messages carry per-gate sequence numbers that the receiver checks, so
 * they go in backlog (= submission) order and the first one that does not fit
 * ends the run: a later message never passes it. Control chunks keep their
 * order among themselves too (an RTP must reach the sender before the ACK
 * that follows it). Neither class depends on the other's order, and RDATA
 * fragments carry their offset. The backlog keeps the classes in three lists
 * (sched.c), so each is found without walking the others.
 *
 * With the strategy's hold, a packet that leaves makes the track count as busy
 * until the next progress pass, so a burst of sends (a window of isends, or
 * several threads) gathers into a backlog while one packet is on its way; a
 * lone message on an idle track still leaves at once through the scheduler's
 * fast path, with nothing to aggregate and nothing to pay. */
#include "core/core_int.h"

static inline weft__chunk_t *chunk_at(weft_list_t *pos)
{
    return weft_list_entry(pos, weft__chunk_t, link);
}

static int aggreg_build(weft__gate_t *g, weft__packet_t *pkt)
{
    weft_list_t *ctrl = &g->backlog[WEFT_CLASS_CTRL], *rdata = &g->backlog[WEFT_CLASS_RDATA],
                *msgs = &g->backlog[WEFT_CLASS_MESSAGE], *pos;
    /* Control chunks, in order, up to the first that does not fit. */
    for (pos = ctrl->next; pos != ctrl; pos = pos->next)
        if (!weft__packet_add(g, pkt, chunk_at(pos)))
            break;
    /* Messages, in sequence order, up to the first that does not fit. */
    for (pos = msgs->next; pos != msgs; pos = pos->next)
        if (!weft__packet_add(g, pkt, chunk_at(pos)))
            break;
    /* Rendezvous data in the room left (a fragment is cut to fit). */
    for (pos = rdata->next; pos != rdata; pos = pos->next)
        if (!weft__packet_add(g, pkt, chunk_at(pos)))
            break;
    return pkt->nchunks;
}

const weft__strategy_ops_t weft__strategy_aggreg = {
    .name = "aggreg",
    .build = aggreg_build,
    .hold = true,
};

/* split_balance: aggreg's packets (on rail 0), and rendezvous to a
 * multi-rail gate exposed on every rail so the receiver reads them in parts
 * in proportion to the rails' bandwidth (rail.c). On a single-rail gate it is
 * aggreg. */
const weft__strategy_ops_t weft__strategy_split_balance = {
    .name = "split_balance",
    .build = aggreg_build,
    .hold = true,
    .split = true,
};
