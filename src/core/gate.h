/* Gates (one per peer), their packets and rails, and the scheduler that
 * turns a gate's backlog into packets (sched.c). Part of the engine's
 * private objects (core_int.h). */
#ifndef WEFT_CORE_GATE_H
#define WEFT_CORE_GATE_H

#include <pthread.h>

#include "core/request.h"
#include "drivers/driver.h"
#include "util/lock.h"

typedef struct weft__strategy_ops weft__strategy_ops_t;

/* The packet being built or in flight on a track: its iovec points at the
 * headers in hdrs[] and at user payloads. */
#define WEFT_PKT_MAX_CHUNKS 64
#define WEFT_PKT_MAX_IOV    (2 + 3 * WEFT_PKT_MAX_CHUNKS)
/* Chunks with at most WEFT_PKT_COPY_MAX payload bytes are copied into the
 * packet (up to WEFT_PKT_STAGE bytes) instead of gathered from their owners:
 * one memcpy of a few dozen bytes costs less than an iovec entry in the
 * kernel, and a packet of 64 small messages stays within any driver's max_iov. */
#define WEFT_PKT_COPY_MAX 256
#define WEFT_PKT_STAGE    4096
typedef struct weft__packet {
    int nchunks;
    int iovcnt;
    size_t length;
    weft__chunk_t *chunks[WEFT_PKT_MAX_CHUNKS];
    struct iovec iov[WEFT_PKT_MAX_IOV];
    uint64_t frag_end[WEFT_PKT_MAX_CHUNKS]; /* RDATA: offset after this fragment */
    size_t stage_used;
    /* The staging area follows the packet header with no gap: small chunks
     * copied there extend the header's iovec entry (weft__packet_add). */
    uint8_t pkt_hdr[WEFT_WIRE_PKT_HDR];
    uint8_t stage[WEFT_PKT_STAGE];
    uint8_t rdata_hdr[WEFT_PKT_MAX_CHUNKS][WEFT_WIRE_RDATA_HDR];
} weft__packet_t;

/* Traffic of one gate: what its strategy sent (counted when the driver takes a
 * packet) and what arrived from the peer. Read by weft_counters_gate and
 * printed at finalize with WEFT_STATS=1. */
typedef struct weft__gate_stats {
    uint64_t packets_sent, chunks_sent, max_chunks; /* max_chunks: most chunks in one packet */
    uint64_t wire_bytes_sent;                       /* packet bytes, headers included */
    uint64_t messages_sent, msg_bytes_sent;         /* user messages (EAGER, EAGER_SYNC, RDV) */
    uint64_t rdv_sent;                              /* of which rendezvous */
    uint64_t ctrl_sent;                             /* ACK, RTR, CREDIT, RTP, DONE */
    uint64_t rdata_bytes_sent;                      /* rendezvous data streamed in packets */
    uint64_t held;                                  /* submissions that waited for the hold */
    uint64_t sent_unlocked;                         /* messages sent under the gate's lock alone */
    uint64_t packets_received, chunks_received, wire_bytes_received;
} weft__gate_stats_t;

/* An extra rail of a gate: one more track to the same peer, through another
 * instance of a driver (WEFT_TCP_RAILS). Rail 0 is the gate's own track, which
 * carries every packet; extra rails carry parts of large rendezvous (pulled by
 * the receiver), so message order never depends on them. */
typedef struct weft__rail {
    weft__gate_t *gate;
    const weft_driver_ops_t *drv_ops;
    weft_driver_t *drv;
    weft_track_t *track;
    weft_track_caps_t caps;
    double bandwidth; /* MB/s: caps', WEFT_RAIL_BW's, or measured */
} weft__rail_t;

/* What a multi-rail gate measures of each rail while it reads parts over it
 * (rail.c), when WEFT_RAIL_BW does not fix the shares. */
typedef struct weft__rail_meter {
    uint64_t last_done; /* when the rail's last part completed (ns) */
    uint64_t bytes, ns; /* parts and their service time since the last estimate */
    uint32_t samples;   /* estimates made */
} weft__rail_meter_t;

/* What a gate's sends count for weft_counters_get (summed over the gates):
 * counted under the gate's lock, by whichever thread sends. */
typedef struct weft__gate_sent {
    uint64_t eager, rdv, bytes; /* user messages by protocol, their payload bytes */
    uint64_t credit_stalls;     /* eager sends turned into rendezvous for lack of credit */
} weft__gate_sent_t;

/* The lock of a gate's sending side (see "One peer" below). It is recursive
 * for the thread that holds it: a driver may report a send complete from
 * inside send(), and an answer to a packet is queued from inside the packet's
 * upcall, both on the gate the thread already holds. A spin lock where a
 * thread may send without the engine lock (an engine lock that is not none,
 * a track with WEFT_DRV_CAP_SEND_MT), none elsewhere: there the engine lock
 * alone serialises every access. */
typedef struct weft__gate_lock {
    weft_lock_t lock;
    atomic_uintptr_t owner; /* the holding thread, 0 when free */
    unsigned depth;         /* the holder's nested acquisitions */
} weft__gate_lock_t;

/* One peer.
 *
 * Locking. The engine lock covers everything of the context, gates included.
 * A gate's sending side (backlog, packet, busy, held and the hold's counts,
 * sequence numbers sent, send credit, the send counters in stats and sent,
 * dead's writes) is also covered by the gate's own lock, which every access
 * takes: a thread that finds the engine lock taken may still send a small
 * eager message on a track with WEFT_DRV_CAP_SEND_MT under the gate's lock
 * alone (weft__proto_send_unlocked). The order is engine lock, then gate
 * locks (an engine holder may hold several), then the pending list's lock;
 * a thread holding a gate's lock without the engine lock takes no other
 * lock but the pending list's. */
struct weft__gate {
    struct weft_ctx *ctx;
    int peer;
    int dead; /* 0, or the status it died with */
    /* A linked process (api/link.c) whose end is expected: its loss is no
     * error, and is not said. */
    bool quiet;
    /* dead, as receives see it: set under ctx->match_lock when the posted
     * receives from this peer are failed (weft__gate_lost), read there by
     * a thread posting without the engine lock. */
    int dead_posted;
    const weft_driver_ops_t *drv_ops;
    weft_driver_t *drv;
    weft_track_t *track;
    weft_track_caps_t caps;
    const weft__strategy_ops_t *strategy;
    bool busy;            /* a packet is in flight on the track */
    bool on_pending;      /* linked in ctx->pending_gates */
    bool held;            /* strategy->hold: a packet left since the last progress pass */
    uint32_t held_count;  /* submissions queued while held */
    uint8_t hold_misses;  /* holds in a row that delayed one lone message */
    uint8_t hold_skip;    /* packets still to send without holding after them */
    size_t eager_max;     /* largest eager payload */
    int eager_max_iov;    /* most iovec entries of an eager payload */
    size_t rdata_max;     /* largest RDATA fragment */
    uint32_t send_seq;    /* next sequence number to send */
    uint32_t recv_seq;    /* next sequence number expected */
    int64_t send_credit;  /* eager bytes we may still send to this peer */
    uint64_t peer_window; /* the eager window the peer grants us (its WEFT_EAGER_CREDITS) */
    uint64_t credit_owed; /* eager bytes consumed here, not yet returned */
    uint64_t eager_held;  /* eager bytes of this peer received, not yet consumed */
    /* Chunks waiting for the track, one list per class (WEFT_CLASS_*):
     * control chunks, RDATA streams, messages; each in queuing order. */
    weft_list_t backlog[3];
    weft_list_t pending_link; /* in ctx->pending_gates */
    weft__chunk_t credit_chunk;
    /* Shared cells for cooperative rendezvous (NULL without WEFT_DRV_CAP_CELLS). */
    weft__cell_t *cells_in;         /* in our memory: transfers from the peer */
    weft__cell_t *cells_out;        /* in the peer's memory: transfers to it */
    uint32_t cells_used;            /* bitmap of cells_in taken */
    uint8_t cell_next;              /* where the search for a free cell starts */
    struct weft_request *published; /* the receive published in cells_in[0] */
    uint32_t published_seq;         /* the sequence number that may claim it */
    /* The kernel refused to let this process read (get) or write (put) the
     * peer's memory in a cooperative transfer: later receives from it take
     * the copy path; later sends to it claim no published receive. */
    atomic_bool coop_get_refused, coop_put_refused;
    /* Pieces of cooperative transfers this process moved on the gate, and of
     * those, how many outside the engine lock (counted by the copier); and
     * the pieces whose copy the kernel refused. */
    atomic_ullong pieces_moved, pieces_unlocked, pieces_refused;
    weft__gate_stats_t stats;
    weft__gate_sent_t sent;
    weft__gate_lock_t slock; /* the sending side's lock (above) */
    int nrails;              /* extra rails in rails[] */
    uint8_t rails_down;      /* rails that reported the peer lost (bit 0: the gate's track) */
    double bandwidth;        /* rail 0's, MB/s */
    uint64_t rail_splits;    /* rendezvous received in parts over several rails */
    bool rail_measure;       /* shares follow the measured bandwidth (no WEFT_RAIL_BW) */
    weft__rail_meter_t meter[WEFT_MAX_RAILS];
    weft__rail_t rails[WEFT_MAX_RAILS - 1];
    weft__packet_t packet;
};

/* What names the calling thread: its thread pointer (one instruction where
 * the compiler offers it; pthread_self returns the same on glibc). */
static inline uintptr_t weft__thread_self(void)
{
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 &&                                  \
    (defined(__x86_64__) || defined(__aarch64__))
    return (uintptr_t)__builtin_thread_pointer();
#else
    return (uintptr_t)pthread_self();
#endif
}

/* The gate's sending-side lock (weft__gate_lock_t): taken again by its holder
 * at no cost but a count. */
static inline void weft__gate_lock(weft__gate_t *g)
{
    weft__gate_lock_t *l = &g->slock;
    if (l->lock.kind == WEFT_LOCK_NONE)
        return;
    uintptr_t me = weft__thread_self();
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me) {
        l->depth++;
        return;
    }
    weft_lock_acquire(&l->lock);
    atomic_store_explicit(&l->owner, me, memory_order_relaxed);
    l->depth = 1;
}
static inline void weft__gate_unlock(weft__gate_t *g)
{
    weft__gate_lock_t *l = &g->slock;
    if (l->lock.kind == WEFT_LOCK_NONE || --l->depth)
        return;
    atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
    weft_lock_release(&l->lock);
}

/* Scheduler (sched.c). */
/* Queue a chunk on its gate's backlog, which holds three runs in this order:
 * control chunks, RDATA streams, messages (each in queuing order). */
void weft__chunk_queue(weft__gate_t *g, weft__chunk_t *c, bool front);
/* Take a queued chunk off its gate's backlog. */
static inline void weft__chunk_unqueue(weft__chunk_t *c)
{
    weft_list_remove(&c->link);
    c->queued = false;
}
/* Whether nothing waits in g's backlog; its first chunk (control first, then
 * RDATA, then messages), or NULL. */
static inline bool weft__backlog_empty(const weft__gate_t *g)
{
    return weft_list_empty(&g->backlog[0]) && weft_list_empty(&g->backlog[1]) &&
           weft_list_empty(&g->backlog[2]);
}
static inline weft__chunk_t *weft__backlog_first(const weft__gate_t *g)
{
    for (int cls = 0; cls < 3; cls++)
        if (!weft_list_empty(&g->backlog[cls]))
            return weft_list_entry(g->backlog[cls].next, weft__chunk_t, link);
    return NULL;
}
enum { WEFT_CLASS_CTRL = 0, WEFT_CLASS_RDATA = 1, WEFT_CLASS_MESSAGE = 2 };
int weft__chunk_class(uint8_t kind);
/* Put a gate with work waiting on the context's list, which every progress
 * call drains (a live gate only). */
void weft__gate_mark_pending(weft__gate_t *g);
/* Submit a message chunk (EAGER, EAGER_SYNC or RDV): with an idle track and an
 * empty backlog it leaves at once, alone in its packet; otherwise it joins the
 * backlog for the strategy. */
void weft__sched_submit(weft__gate_t *g, weft__chunk_t *c);
/* The same for the send fast path, on a gate the caller found idle (not held,
 * not busy, nothing in the backlog): 1 when the driver took the packet at once
 * (counted; the caller completes the chunk's request), else 0, with the chunk
 * queued, in flight or failed as weft__sched_submit would leave it. */
int weft__sched_send_fast(weft__gate_t *g, weft__chunk_t *c);
/* A packet left on a gate whose strategy holds: hold, or not (the gate
 * learned that holding does not pay). */
void weft__sched_hold_start(weft__gate_t *g);
/* weft__sched_lone_copied: with the strategies (core_strategy.h). */
/* The iovec of a packet carrying one message: its headers (hlen bytes, packet
 * header first), the payload, and the zero padding up to total bytes.
 * Returns the number of entries (1 to 3). */
int weft__sched_lone_iov(struct iovec iov[3], const void *hdr, size_t hlen, const void *payload,
                         uint64_t len, size_t total);
/* Build and send packets while the gate's track is idle. Returns events done. */
int weft__sched_gate(weft__gate_t *g);
int weft__sched_pending(struct weft_ctx *ctx);

/* Gates: set up (before its track) and attached to the driver whose track
 * it got (ctx.c). */
void weft__gate_init(struct weft_ctx *ctx, weft__gate_t *g, int peer,
                     const weft__strategy_ops_t *st);
void weft__gate_attach(struct weft_ctx *ctx, weft__gate_t *g, const weft_driver_ops_t *ops,
                       weft_driver_t *drv);
#endif
