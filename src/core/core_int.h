/* The engine's private objects: context, gates, requests, chunks.
 *
 * The application thread never touches the network directly: it builds a
 * request, queues its chunk on the gate of the destination, and the scheduler
 * turns the gate's backlog into packets whenever the gate's track is idle
 * (seed 000: "decouple MPI_Send/Recv from NIC send/recv"). With an idle track
 * the submitting thread runs the scheduler itself, so a lone message leaves at
 * once with no hand-off.
 */
#ifndef WEFT_CORE_INT_H
#define WEFT_CORE_INT_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "boot/boot.h"
#include "core/match.h"
#include "core/wire.h"
#include "drivers/driver.h"
#include "progress/progress_queue.h"
#include "progress/progress.h"
#include "util/list.h"
#include "util/lock.h"
#include "util/slab.h"
#include "util/trace.h"
#include "util/util.h"
#include "weft/weft.h"

typedef struct weft__gate weft__gate_t;
typedef struct weft__strategy_ops weft__strategy_ops_t;
typedef struct weft__cell weft__cell_t;
typedef struct weft__coop_copy weft__coop_copy_t;

/* An outgoing chunk waiting in a gate's backlog. It is embedded in the object
 * it belongs to (a send request, a receive request, the gate), so queuing
 * allocates nothing. The header is encoded when the chunk is queued, except for
 * RDATA, whose header changes with every fragment. */
typedef struct weft__chunk {
    weft_list_t link;
    uint8_t kind;
    bool queued;
    uint16_t hdr_len;
    /* Room for a packet header right before the chunk header, so a chunk that
     * leaves alone goes out as one contiguous header (see sched_lone). */
    uint8_t lone_pkt_hdr[WEFT_WIRE_PKT_HDR];
    uint8_t hdr[WEFT_WIRE_CHUNK_HDR_MAX];
    /* Payload: a range of the owner's iovec. */
    const struct iovec *iov;
    int iovcnt;
    uint64_t offset;          /* next byte of the payload to send (RDATA fragments) */
    uint64_t length;          /* payload bytes in all (EAGER) or still to send (RDATA: end) */
    uint64_t rreq;            /* RDATA: receiver's request id */
    struct weft_request *req; /* owner, or NULL for control chunks */
    bool heap;                /* a control chunk from ctx->free_chunks, freed once sent */
    struct weft__chunk *next_free;
} weft__chunk_t;

typedef enum weft__req_kind {
    WEFT_REQ_SEND = 1,
    WEFT_REQ_RECV = 2,
} weft__req_kind_t;

/* Where a receive stands (a send's progress is its holds and answered). */
enum {
    WEFT_RS_NONE = 0,
    WEFT_RS_POSTED,   /* receive posted in the matcher */
    WEFT_RS_RDV_RECV, /* receive matched a rendezvous, its data still to come */
};

/* Tracks a gate may have to its peer (multi-rail, rail.c). */
#define WEFT_MAX_RAILS 4

/* Where the cancel of a send stands (weft__proto_send_cancel). */
enum {
    WEFT_CANCEL_NONE = 0,
    WEFT_CANCEL_WANTED, /* asked while the message still waits for the track */
    WEFT_CANCEL_ASKED,  /* CANCEL queued or sent: waiting for the receiver's answer */
};

/* Requests are cache-line aligned (weft__request_alloc*). The first line holds
 * what waiting for, retiring and recycling a completed request touch (done,
 * error, status, iov), so a thread that waits for thousands of requests reads
 * one line of each; the free-list link shares the status's bytes, dead once the
 * request is free. */
struct weft_request {
    /* Common to sends and receives, hot: the first cache lines. */
    _Alignas(WEFT_CACHELINE) atomic_int done; /* 0 until complete; read without the lock by
                                               * test; a futex */
    atomic_int sleeping;                      /* 1 while a waiter sleeps: its futex (progress.c) */
    uint8_t kind;
    uint8_t state;
    bool exposed; /* rkey must be unexposed at completion */
    /* Cooperative rendezvous (coop.c), read by every completion, so here. */
    bool coop_listed; /* in ctx->coop */
    int8_t coop_cell; /* the shared cell, -1 when none */
    bool coop_watch;  /* send: a rendezvous that may claim a published receive */
    /* A multi-rail send: rkey holds one key per rail, rail_key_len bytes each
     * (rail 0's first); each is unexposed on its rail's driver. Here, not
     * with rkey, because every request resets rail_keys. */
    uint8_t rail_keys;
    uint8_t rail_key_len;
    int error; /* result once done */
    int iovcnt;
    struct iovec *iov; /* user data */
    union {
        weft_status_t status;           /* while live */
        struct weft_request *next_free; /* on a free list */
    };
    /* Second line. */
    int peer;           /* destination, or requested source (may be ANY) */
    uint8_t defer_slot; /* deferred: the submitting thread's slot in ctx->deferred */
    /* A completion object in comp_node signals the completion, and the
     * engine frees the request (weft__request_signal). false on every free
     * request, so nothing that makes one needs to write it. */
    bool has_comp;
    uint64_t id;        /* handle for the wire (sreq/rreq), 0 if none */
    weft__gate_t *gate; /* gate of the peer once known */
    size_t length;      /* total bytes of iov */
    struct iovec iov_inline[2];
    weft_list_t link;                    /* in the context's list of live requests (peer death) */
    struct weft_request *next_submitted; /* in ctx->submitted, waiting to be submitted */
    /* What only one kind needs: a receive never touches the send part, so a
     * posted receive costs a few cache lines, not the whole object. A receive
     * that finds its message at once through the general path writes the first
     * three lines only (the receive fast path, one): the fields after match
     * are set when it is posted or starts a rendezvous. */
    union {
        struct { /* WEFT_REQ_RECV */
            weft__match_recv_t match;
            uint64_t expected;  /* RDATA (or DONE) bytes still to come */
            uint64_t peer_sreq; /* rendezvous: the sender's request id */
            uint8_t rail_parts; /* multi-rail rendezvous: parts still being read */
            uint64_t rail_t0;   /* multi-rail rendezvous: when its parts were issued */
            uint64_t rail_len[WEFT_MAX_RAILS]; /* and each rail's part */
        };
        struct {                 /* WEFT_REQ_SEND */
            int holds;           /* steps left before the send completes */
            bool sync;           /* synchronous: complete once matched */
            bool answered;       /* the receiver's ACK, RTR or COOP arrived (or a claim) */
            uint8_t cancel;      /* WEFT_CANCEL_*: where a cancel of this send stands */
            uint32_t seq;        /* the message's sequence number */
            weft__chunk_t chunk; /* the message's chunk: EAGER, EAGER_SYNC or RDV */
            weft__chunk_t data;  /* RDATA fragments after an RTR */
        };
    };
    weft_rkey_t rkey; /* our buffer, exposed for a peer's rget or rput */
    /* A cooperative rendezvous (coop.c): the peer's buffer, the shared cell
     * and the pieces. */
    weft_list_t coop_link; /* in ctx->coop */
    uint32_t coop_gen;
    uint32_t coop_pieces;
    uint64_t coop_piece;
    uint64_t coop_len;
    weft_rkey_t coop_rkey;
    atomic_uint coop_busy; /* pieces being copied outside the engine lock */
    atomic_int coop_err;   /* the first error of such a copy */
    /* With has_comp: the object, the caller's user_context and, at the
     * completion, the status (progress/progress.h). Last: only a request
     * with a completion object touches it. */
    weft__comp_node_t comp_node;
};

/* Eager data up to this size is copied into the unexpected descriptor itself. */
#define WEFT_UNEXP_SMALL 64
/* The kind of an unexpected message a layer of this process delivered
 * (weft__proto_inject): its data is whole here, no credit or ACK is owed to
 * anybody, and no CANCEL names it. Outside the wire's chunk kinds. */
#define WEFT__UNEXP_LOCAL 0x40

/* An unexpected message: arrived before its receive was posted. Eager data up
 * to WEFT_UNEXP_SMALL bytes is copied into data[], larger eager data into a
 * buffer of its own; a rendezvous keeps only its descriptor (the data stays in
 * the sender's memory, so a flood of large sends costs the receiver nothing).
 *
 * Descriptors come from a slab (ctx->unexpected, util/slab.h): 192 bytes,
 * cache-line aligned, allocated lowest address first, so a burst's messages
 * lie in arrival order, next to their neighbours in the matching FIFOs. What a
 * receive naming source and tag reads to take a small message (key,
 * exact-key link, length, kind and up to 16 bytes of data) is the second cache
 * line; the first holds what only wildcard receives and rare paths read. The
 * peer is the match key's source (its gate is ctx->gates[source]). The slab is
 * also the list of every descriptor that finalize frees and a cancel
 * searches. */
typedef struct weft__unexpected {
    uint64_t sreq;           /* EAGER_SYNC and RDV: the sender's request id */
    weft__match_msg_t match; /* its key starts the second cache line */
    uint64_t length;         /* message length */
    uint32_t seq;            /* the sender's sequence number: what a CANCEL names */
    uint8_t kind;            /* EAGER, EAGER_SYNC, RDV or WEFT__UNEXP_LOCAL */
    uint8_t nkeys;           /* rail keys in rkey (RDV) */
    union {
        uint8_t data[WEFT_UNEXP_SMALL]; /* eager data up to WEFT_UNEXP_SMALL bytes */
        uint8_t *data_heap;             /* larger eager data */
        weft_rkey_t rkey;               /* RDV */
    };
} weft__unexpected_t;

_Static_assert(offsetof(struct weft_request, done) == 0 && sizeof(atomic_int) == sizeof(int),
               "weft_sr_done (weft.h) reads a request's first word");
_Static_assert(offsetof(struct weft_request, status) + sizeof(weft_status_t) <= WEFT_CACHELINE,
               "what retiring a request reads is its first cache line");

_Static_assert(sizeof(weft__unexpected_t) <= 3 * WEFT_CACHELINE, "a descriptor is 3 cache lines");
_Static_assert(offsetof(weft__unexpected_t, match.comm) == WEFT_CACHELINE &&
                   offsetof(weft__unexpected_t, data) <= 2 * WEFT_CACHELINE - 16,
               "key, link, length, kind and 16 bytes of data share the second cache line");

/* Empty descriptor slabs kept after a burst: 52 slabs of 16 KiB at most. */
#define WEFT_UNEXP_KEPT 4096

/* The eager data of an unexpected message. */
static inline const uint8_t *weft__unexpected_data(const weft__unexpected_t *u)
{
    return u->length <= WEFT_UNEXP_SMALL ? u->data : u->data_heap;
}

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

/* A table mapping wire ids to live requests. An id is (generation << 32) | slot:
 * a stale or forged id from a peer never reaches a freed request. */
typedef struct weft__handles {
    struct {
        struct weft_request *req;
        uint32_t gen;
        uint32_t next_free;
    } * slots;
    uint32_t capacity;
    uint32_t free_head; /* UINT32_MAX when empty */
} weft__handles_t;

#define WEFT_MAX_DRIVERS       8
#define WEFT_MAX_KNOWN_DRIVERS 16 /* built-in ones and a program's own */
/* Slots of the per-thread deferred counts (struct weft_ctx, deferred). */
#define WEFT_DEFER_SLOTS 16

/* Waiting policies (WEFT_WAIT, progress.c). */
enum {
    WEFT__WAIT_SPIN = 0,
    WEFT__WAIT_FIXED_SPIN = 1,
    WEFT__WAIT_BLOCK = 2,
    WEFT__WAIT_YIELD = 3,
};

/* A thread asleep in a wait: the flag it sleeps on. */
typedef struct weft__sleeper {
    weft_list_t link;
    atomic_int *flag;
} weft__sleeper_t;

/* A sink takes every message sent on its communicator id, in the order
 * they arrive from each peer, instead of the matcher: an eager one as
 * (peer, tag, its payload, len) with rdv false, the payload valid during the
 * call only; one that came by rendezvous (a sender short of credit) is left
 * unexpected in the matcher, and the sink told (payload NULL, rdv true), so
 * that it posts the receive that takes it (by source and tag: tags the sink's
 * senders keep unique). Called under the engine lock, from inside a packet's
 * dispatch: it must not call weft; it copies what it keeps. Communicator ids
 * WEFT__SINK_COMM to WEFT__SINK_COMM + WEFT__SINKS - 1. */
typedef void (*weft__sink_fn)(void *arg, int peer, uint64_t tag, const void *payload, size_t len,
                              bool rdv);
#define WEFT__SINK_COMM 0xffffff10u
#define WEFT__SINKS     4

struct weft_ctx {
    weft_lock_t lock; /* the engine lock; kind follows the thread level */
    int thread_level;
    int rank, size;
    weft_boot_t *boot;
    struct weft__rma *rma;     /* symmetric regions (src/rma), NULL until made */
    struct weft__bcast *bcast; /* the dynamic broadcast (src/coll), from weft_init on */
    struct weft__scheds *scheds; /* listed collective schedules (src/coll), from weft_init on */
    weft__gate_t *gates;
    int ndrivers;
    struct {
        const weft_driver_ops_t *ops;
        weft_driver_t *drv;
    } drivers[WEFT_MAX_DRIVERS];
    /* What a progress pass runs under the engine lock (weft__progress_step):
     * the submission drain and the self driver (its queue holds packets only
     * after a send to oneself: self_pending), every other driver's poll
     * (weft__ctx_add_driver), the pending gates and the cooperative copies,
     * then the callbacks protocols add (pass, weft__ctx_pass_add). */
    weft__pq_t pass;
    int npoll;
    struct {
        int (*poll)(weft_driver_t *d);
        weft_driver_t *drv;
    } poll[WEFT_MAX_DRIVERS];
    /* What every thread that made a pass runs after it, without the engine
     * lock: the front ends' callbacks (weft_progress_register). */
    weft__pq_t callbacks;
    weft__match_t *match;
    /* The drivers it may open, highest preference first (ctx.c). */
    const weft_driver_ops_t *known[WEFT_MAX_KNOWN_DRIVERS];
    int nknown;
    const weft_driver_ops_t *rail_ops; /* the driver with rails (its rails_param > 1) */
    int nrail_drivers;                 /* its extra instances */
    int rail_driver[WEFT_MAX_RAILS - 1];
    weft__handles_t handles;
    weft_list_t pending_gates; /* gates with a backlog and an idle track */
    weft_lock_t pending_lock;  /* guards pending_gates and every gate's on_pending */
    atomic_bool pending_any;   /* pending_gates is not empty (read without its lock) */
    weft_list_t live_requests; /* unfinished sends, receives reading a rendezvous */
    /* The matching structure (match), the posted receives' list and their
     * state POSTED are guarded by match_lock as well as the engine lock: a
     * thread without the engine lock posts a receive under match_lock alone
     * (weft__proto_recv_unlocked). A leaf: it may be taken under any other
     * lock (peer loss takes it under a gate's), and none is taken under it. */
    weft_lock_t match_lock;
    weft_list_t posted;           /* posted receives (state WEFT_RS_POSTED), by link */
    weft_slab_cache_t unexpected; /* every unexpected message's descriptor */
    /* Free requests, a stack of pointers: taking one reads this array, not
     * the request (which a burst of thousands has left cold), and prefetches
     * the next one for the write that will follow. */
    struct weft_request **free_reqs;
    uint32_t nfree_reqs, free_reqs_cap;
    /* Lock-free hand-over at WEFT_THREAD_MULTIPLE: requests a thread submitted
     * while another held the engine (drained in order by the next holder), and
     * requests retired without the lock (taken back by request_alloc). */
    _Atomic(struct weft_request *) submitted;
    _Atomic(struct weft_request *) returned;
    /* Sends in submitted, or taken from it and not yet submitted, counted by
     * the submitting thread's slot (weft__defer_slot): a thread sends past the
     * engine lock only when its own slot is zero, so its message never passes
     * one of its own still waiting for the holder; another thread's waiting
     * sends do not hold it back (two threads' messages are not ordered). Each
     * slot has a cache line. */
    struct {
        _Alignas(WEFT_CACHELINE) atomic_uint n;
        atomic_uint nrecv; /* the same for receives (weft__proto_recv_unlocked) */
    } deferred[WEFT_DEFER_SLOTS];
    /* Requests for threads without the engine lock: taken from returned
     * whole, handed out one by one under spare_lock. */
    struct weft_request *spare;
    weft_lock_t spare_lock;
    weft__chunk_t *free_chunks;
    bool self_pending; /* packets may wait in the self driver's queue */
    int self_driver;   /* index of the self driver in drivers[] */
    int node_leader;   /* lowest rank on this process's node */
    /* Peers: the job's ranks (0 .. size-1), then the processes of other jobs
     * that links added (api/link.c), up to peers_cap gates in all. npeers only
     * grows, stored with release once its gate is whole, so that a thread
     * that reads it (acquire) may use every gate below it. */
    atomic_int npeers;
    int peers_cap;
    /* Links: this process's id for them (0 until its first card), the
     * driver they go through (-1 until one is opened), and the processes
     * linked so far by id, so that a process met again keeps its gate. */
    uint64_t link_id;
    int link_driver;
    struct weft__linked {
        uint64_t id;
        int peer;
    } * linked;
    int nlinked, linked_cap;
    /* What the drivers were told at init (node_ranks aside), for a driver
     * that a link opens later. */
    weft_driver_params_t drv_params;
    int node_size;          /* ranks on this node */
    int node_index;         /* this rank's place among them */
    uint64_t spin_ns;       /* how long a waiting thread polls before yielding */
    uint64_t eager_credits; /* window granted to each peer */
    uint64_t rdv_split;     /* rendezvous this large move cooperatively (coop.c) */
    uint64_t coop_piece;    /* bytes per piece of a cooperative rendezvous */
    weft_list_t coop;       /* requests with a cooperative transfer to move or watch */
    weft_counters_t counters;
    bool finalizing;
    /* Completions of handler kind found under the engine lock, oldest first:
     * their handlers run once the lock is released (weft__unlock), never
     * under it. Guarded by the engine lock. */
    weft__comp_node_t *comp_handlers, *comp_handlers_tail;
    /* Sinks (weft__sink_set): the layers that take the messages of a
     * communicator id of their own without matching. Written before any
     * such message can arrive, read under the engine lock. */
    struct {
        weft__sink_fn fn;
        void *arg;
    } sinks[WEFT__SINKS];
    /* Waiting (progress.c). */
    int wait_policy;         /* WEFT__WAIT_* */
    atomic_int poller;       /* a waiting thread polls for everybody */
    atomic_int nsleepers;    /* waiting threads asleep */
    atomic_uint completions; /* requests completed at WEFT_THREAD_MULTIPLE, ever */
    weft_lock_t sleep_lock;  /* guards sleepers */
    weft_list_t sleepers;
    pthread_t progress_thread;
    bool progress_running;
    bool progress_pinned; /* the progress thread runs on progress_cpus */
    cpu_set_t progress_cpus;
    atomic_int progress_stop;
    /* eventfd that ends a sleep on the drivers' doorbells (the progress
     * thread's, or a waiter's under wait_doorbells); -1 when nobody sleeps so */
    int progress_kick;
    /* Threads asleep, or about to sleep, on the doorbells (progress.c):
     * whoever adds work that only a pass would see kicks them. */
    atomic_int progress_asleep;
    /* What it did (weft_counters_progress); written by it alone. */
    _Atomic uint64_t progress_sleeps, progress_woken, progress_kicked, progress_events;
    /* WEFT_WAIT=block or fixed_spin without a progress thread: a waiter that
     * polled in vain sleeps on the doorbells (progress.c). */
    bool wait_doorbells;
    _Atomic uint64_t wait_sleeps, wait_woken;
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

/* The calling thread's slot in ctx->deferred: its thread pointer hashed (two
 * threads may share one, which only holds one back more often). */
static inline unsigned weft__defer_slot(void)
{
    uint64_t h = (uint64_t)weft__thread_self() * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 60) & (WEFT_DEFER_SLOTS - 1);
}

/* ctx->match_lock: a leaf (nothing else is taken under it). */
static inline void weft__match_lock(struct weft_ctx *ctx)
{
    weft_lock_acquire(&ctx->match_lock);
}
static inline void weft__match_unlock(struct weft_ctx *ctx)
{
    weft_lock_release(&ctx->match_lock);
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

/* Requests (request.c). */
/* Reset the fields every path reads; the protocol fills the rest. */
static inline struct weft_request *weft__request_init(struct weft_request *req, uint8_t kind)
{
    atomic_store_explicit(&req->done, 0, memory_order_relaxed);
    atomic_store_explicit(&req->sleeping, 0, memory_order_relaxed);
    req->kind = kind;
    req->state = WEFT_RS_NONE;
    req->exposed = false;
    req->rail_keys = 0;
    req->error = WEFT_OK;
    req->id = 0;
    req->gate = NULL;
    memset(&req->status, 0, sizeof req->status);
    weft_list_init(&req->link);
    req->iov = req->iov_inline;
    req->iovcnt = 0;
    if (kind == WEFT_REQ_RECV) {
        /* expected and rail_parts are set by weft__proto_recv when the receive
         * is posted, or when it starts a rendezvous: a receive that takes its
         * message at once never writes their cache line. */
        memset(&req->match, 0, sizeof req->match);
    } else {
        weft_list_init(&req->chunk.link);
        weft_list_init(&req->data.link);
        req->chunk.queued = req->data.queued = false;
        req->chunk.heap = req->data.heap = false;
        req->chunk.req = req->data.req = req;
        req->holds = 0;
        req->sync = req->answered = false;
        req->cancel = WEFT_CANCEL_NONE;
    }
    req->coop_listed = req->coop_watch = false;
    req->coop_cell = -1;
    req->next_submitted = NULL;
    return req;
}

/* Move what threads returned without the lock (ctx->returned) onto the free
 * stack; its top after that, NULL if none (caller holds the engine lock). */
struct weft_request *weft__request_reclaim(struct weft_ctx *ctx);
/* The free request that weft__request_take would hand out, NULL if none
 * (caller holds the engine lock). At WEFT_THREAD_MULTIPLE retired requests
 * come back by the returned stack, so an empty free stack takes it back
 * first: the fast paths would otherwise fall to the general ones. */
static inline struct weft_request *weft__request_peek(struct weft_ctx *ctx)
{
    if (WEFT_LIKELY(ctx->nfree_reqs))
        return ctx->free_reqs[ctx->nfree_reqs - 1];
    return weft__request_reclaim(ctx);
}
/* Take the request weft__request_peek returned off the free stack. */
static inline void weft__request_take(struct weft_ctx *ctx)
{
    uint32_t n = --ctx->nfree_reqs;
    if (n)
        __builtin_prefetch(ctx->free_reqs[n - 1], 1);
}
/* weft__request_alloc when the free stack is empty. */
struct weft_request *weft__request_alloc_slow(struct weft_ctx *ctx, uint8_t kind);
/* A request from the context's free stack (caller holds the engine lock). */
static inline struct weft_request *weft__request_alloc(struct weft_ctx *ctx, uint8_t kind)
{
    struct weft_request *req = weft__request_peek(ctx);
    if (WEFT_UNLIKELY(!req))
        return weft__request_alloc_slow(ctx, kind);
    weft__request_take(ctx);
    return weft__request_init(req, kind);
}
/* A request for a thread that does not hold the engine lock: one that
 * threads returned (ctx->spare), else a new one. */
struct weft_request *weft__request_alloc_unlocked(struct weft_ctx *ctx, uint8_t kind);
void weft__request_free(struct weft_ctx *ctx, struct weft_request *req);
/* Free a request without the engine lock (any thread, lock-free). */
void weft__request_return(struct weft_ctx *ctx, struct weft_request *req);
/* Queue a ready request for the engine without the lock (lock-free); the
 * next lock holder submits it (weft__submit_drain), in submission order. */
void weft__submit_defer(struct weft_ctx *ctx, struct weft_request *req);
void weft__submit_drain(struct weft_ctx *ctx);
void weft__request_complete(struct weft_ctx *ctx, struct weft_request *req, int error);
/* Completion objects (request.c). req, with has_comp, is complete (error and
 * status set): signal its object with an entry of user_context and the
 * status, and give req back, unless the object keeps it (a full queue's
 * overflow list, whose pop frees it). locked: the caller holds the engine
 * lock (or there is none); a handler then waits in ctx->comp_handlers for
 * weft__unlock. Not locked: a handler runs here. */
void weft__request_signal(struct weft_ctx *ctx, struct weft_request *req, bool locked);
/* Run the handlers of list (taken from ctx->comp_handlers under the lock,
 * which the caller has released) and give their requests back. Returns how
 * many ran. */
int weft__comp_handlers_run(struct weft_ctx *ctx, weft__comp_node_t *list);
int weft__handle_add(weft__handles_t *h, struct weft_request *req, uint64_t *id_out);
struct weft_request *weft__handle_get(weft__handles_t *h, uint64_t id);
void weft__handle_remove(weft__handles_t *h, uint64_t id);
void weft__handles_fini(weft__handles_t *h);

/* Control chunks (ACK, RTR) live apart from requests, so a receive may complete
 * and be freed while its ACK still waits for the track. */
weft__chunk_t *weft__ctrl_alloc(struct weft_ctx *ctx);
void weft__ctrl_free(struct weft_ctx *ctx, weft__chunk_t *c);

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
/* weft__sched_lone_copied: below, with the strategies. */
/* The iovec of a packet carrying one message: its headers (hlen bytes, packet
 * header first), the payload, and the zero padding up to total bytes.
 * Returns the number of entries (1 to 3). */
int weft__sched_lone_iov(struct iovec iov[3], const void *hdr, size_t hlen, const void *payload,
                         uint64_t len, size_t total);
/* The first cache line of a request that completes as it is made (the
 * fast paths): what test, wait, retiring and the cancel of a receive read of
 * it (a send's caller sets what a send's cancel reads). The other fields are
 * reset by weft__request_init when it is reused. The status is written field
 * by field, not copied from a status built on the caller's stack: such a copy
 * reads back, in wide loads, what narrow stores just wrote, which the CPU
 * cannot forward, so the load waits for every older store to leave, and on
 * the send path those are the stores into the peer's ring, each a cache line
 * the peer's core holds. */
static inline void weft__request_born_done(struct weft_request *req, uint8_t kind, int source,
                                           uint32_t comm, uint64_t tag, size_t length, int error)
{
    atomic_store_explicit(&req->sleeping, 0, memory_order_relaxed);
    req->kind = kind;
    req->state = WEFT_RS_NONE;
    req->exposed = false;
    req->coop_listed = req->coop_watch = false;
    req->coop_cell = -1;
    req->rail_keys = 0;
    req->error = error;
    req->iovcnt = 1;
    req->iov = req->iov_inline;
    req->status.source = source;
    req->status.comm = comm;
    req->status.tag = tag;
    req->status.length = length;
    req->status.error = error;
    atomic_store_explicit(&req->done, 1, memory_order_release);
}
/* Build and send packets while the gate's track is idle. Returns events done. */
int weft__sched_gate(weft__gate_t *g);
int weft__sched_pending(struct weft_ctx *ctx);

/* Protocols (proto.c). */
/* Give communicator id comm (a sink's) to fn(arg), or take it back (fn NULL).
 * Messages of comm that arrived before stay unexpected in the matcher, for
 * the sink's owner to receive. WEFT_EINVAL for an id outside the sinks',
 * WEFT_ESTATE if it has a sink already. Takes the engine lock. */
int weft__sink_set(struct weft_ctx *ctx, uint32_t comm, weft__sink_fn fn, void *arg);
/* Send, without a request, a lone eager message on comm gathered from
 * pieces a (alen bytes) and b (blen), when it can leave now: the gate's track
 * copies what it sends (its buffers are free when this returns), nothing is
 * queued or in flight on the gate, credit is there. WEFT_OK: sent.
 * WEFT_EAGAIN: the gate is busy, backed up or short of credit (nothing done).
 * WEFT_EUNSUPPORTED: not this way, though the gate is idle (a track that
 * does not copy: a request-carrying send leaves at once), or never this way
 * (this process, over the eager limit). WEFT_EPEERDEAD. Takes the gate's lock;
 * the caller holds the engine lock unless the track has WEFT_DRV_CAP_SEND_MT
 * (weft__proto_send_now_mt says). */
int weft__proto_send_now(struct weft_ctx *ctx, int dest, uint32_t comm, uint64_t tag, const void *a,
                         size_t alen, const void *b, size_t blen);
/* Whether weft__proto_send_now may be called for dest without the engine
 * lock. */
bool weft__proto_send_now_mt(const struct weft_ctx *ctx, int dest);
int weft__proto_send(struct weft_ctx *ctx, struct weft_request *req);
/* A standard send of len contiguous bytes to dest that can go eager, alone, on
 * an idle gate: a new request, sent (usually complete already). NULL when
 * the message needs the general path (weft__proto_send); nothing changed
 * then. Caller holds the engine lock, with no deferred submission waiting. */
struct weft_request *weft__proto_send_fast(struct weft_ctx *ctx, int dest, uint32_t comm,
                                           uint64_t tag, const void *buf, size_t len);
/* The fast paths again, for the operations with a completion object (sr.c),
 * so that each entry has one caller and the flag paths are inlined as before
 * (send.c, WEFT_FAST_PATH). The send's: only a track that copies what it
 * sends (the message leaves, its request born complete); NULL elsewhere,
 * where the general path sends a lone message at once too. */
struct weft_request *weft__proto_send_fast_comp(struct weft_ctx *ctx, int dest, uint32_t comm,
                                                uint64_t tag, const void *buf, size_t len);
bool weft__proto_send_unlocked_comp(struct weft_ctx *ctx, struct weft_request *req, int dest,
                                    uint32_t comm, uint64_t tag, const void *buf, size_t len);
struct weft_request *weft__proto_recv_fast_comp(struct weft_ctx *ctx, int src, uint32_t comm,
                                                uint64_t tag, void *buf, size_t len);
bool weft__proto_recv_unlocked_comp(struct weft_ctx *ctx, struct weft_request *req);
/* The same for a thread that found the engine lock taken: the message leaves
 * under the gate's lock alone, from req (weft__request_alloc_unlocked, whose
 * fields are then set as a completed send's). true when it left; false when
 * it must be deferred (not a WEFT_DRV_CAP_SEND_MT track, a gate not idle, a
 * request of this context still waiting for submission, no room), nothing
 * changed then. */
bool weft__proto_send_unlocked(struct weft_ctx *ctx, struct weft_request *req, int dest,
                               uint32_t comm, uint64_t tag, const void *buf, size_t len);
int weft__proto_recv(struct weft_ctx *ctx, struct weft_request *req);
/* A receive of up to len bytes from src (a rank) with tag (not a wildcard)
 * whose message already waits, eager: a new request, complete, with the data
 * copied into buf. NULL when the receive needs the general path (no such
 * message yet, a rendezvous or synchronous one, no free request); nothing
 * changed then. Caller holds the engine lock, with no deferred submission
 * waiting. */
struct weft_request *weft__proto_recv_fast(struct weft_ctx *ctx, int src, uint32_t comm,
                                           uint64_t tag, void *buf, size_t len);
int weft__proto_packet(void *owner, void *peer_cookie, const void *buf, size_t len);
void weft__proto_send_done(void *owner, void *peer_cookie, void *send_cookie, int status);
void weft__proto_rget_done(void *owner, void *peer_cookie, void *op_cookie, int status);
void weft__proto_peer_lost(void *owner, void *peer_cookie, int status);
/* A rendezvous read into req (whole, or its last part) ended with status. */
void weft__proto_rget_finish(struct weft_ctx *ctx, weft__gate_t *g, struct weft_request *req,
                             int status);
/* The peer of g is gone (every rail of it reported): fail what depends on it. */
void weft__gate_lost(struct weft_ctx *ctx, weft__gate_t *g, int status);
/* A chunk can never be sent (it was unlinked): fail whatever owns it. */
void weft__proto_chunk_failed(weft__gate_t *g, weft__chunk_t *c, int err);
/* A packet's chunks have left (the driver accepted them). */
void weft__proto_chunks_sent(weft__gate_t *g, weft__packet_t *pkt, int status);
/* Free an unexpected-message descriptor and its data. */
void weft__unexpected_free(struct weft_ctx *ctx, weft__unexpected_t *u);
/* Consume an unexpected message into a receive that matched it. */
void weft__proto_consume(struct weft_ctx *ctx, struct weft_request *req, weft__unexpected_t *u);
/* Deliver len bytes at data through matching as if rank src had sent them
 * on (comm, tag): a posted receive that matches takes them (copied), else
 * they wait as an unexpected message. With give, data is malloc'd and
 * becomes the engine's (freed here or kept with the message); without, it
 * stays the caller's and is copied where it must be kept. For a layer that
 * routes messages itself (the dynamic broadcast): the receiver cannot tell
 * them from a send. Takes the engine lock; a handler may run here.
 * WEFT_ENOMEM (given data freed all the same). */
int weft__proto_inject(struct weft_ctx *ctx, int src, uint32_t comm, uint64_t tag, void *data,
                       size_t len, bool give);
/* Take, for a message of len bytes from src on (comm, tag) that is on its
 * way in pieces, the receive it matches, if one is posted with one buffer of
 * at least len bytes: out of matching and of every list, so neither a death
 * nor finalize completes it; its buffer in *buf, status set. The taker
 * writes the data there and ends it with weft__proto_claim_end, once no
 * write into the buffer can come any more. NULL: none (the message then goes
 * by weft__proto_inject). Takes the engine lock. */
struct weft_request *weft__proto_claim(struct weft_ctx *ctx, int src, uint32_t comm, uint64_t tag,
                                       size_t len, void **buf);
/* Complete a claimed receive: len bytes arrived (err WEFT_OK), or the
 * message failed (err). Takes the engine lock; a handler may run here. */
void weft__proto_claim_end(struct weft_ctx *ctx, struct weft_request *req, size_t len, int err);
int weft__progress_locked(struct weft_ctx *ctx);
/* One progress pass (weft__progress_locked), a piece of cooperative transfer
 * handed out in *copy instead of being copied under the lock. */
int weft__progress_step(struct weft_ctx *ctx, weft__coop_copy_t *copy);
/* Add fn(arg) to every pass, run under the engine lock after the engine's
 * own work (a protocol's work that must advance on its own): its slot, or
 * WEFT_ENOBUFS. */
int weft__ctx_pass_add(struct weft_ctx *ctx, weft__pq_fn fn, void *arg);
/* What an eager message of len bytes costs of the receiver's credit: its
 * bytes and a fixed overhead, so a flood of empty messages is bounded too. */
#define WEFT_CREDIT_OVERHEAD 64
static inline uint64_t weft__eager_cost(uint64_t len)
{
    return len + WEFT_CREDIT_OVERHEAD;
}
/* Queue a control chunk on g (freed instead if the peer is dead); takes the
 * gate's lock. */
void weft__proto_queue_ctrl(weft__gate_t *g, weft__chunk_t *c);
/* Send the peer a packet, so that its doorbell rings: the gate's credit
 * chunk, with whatever credit is owed (maybe none), unless it is queued
 * already. For a peer that waits on shared memory alone, which no packet
 * would otherwise wake. Under the engine lock. */
void weft__proto_nudge(weft__gate_t *g);
/* Eager bytes of this peer were consumed: return them as credit, in batches
 * (proto_credit.c). Inline: every eager receive returns its bytes. */
static inline void weft__proto_credit_return(weft__gate_t *g, uint64_t cost)
{
    g->eager_held -= cost;
    g->credit_owed += cost;
    if (g->credit_owed >= g->ctx->eager_credits / 4)
        weft__proto_nudge(g);
}
/* Queue the CANCEL of a send whose message has left (proto_cancel.c). */
void weft__proto_cancel_ask(weft__gate_t *g, struct weft_request *req);
/* Release one hold of a send; it completes when none is left. */
void weft__proto_send_release(struct weft_ctx *ctx, struct weft_request *req, int err);
/* Ask the receiver to take back a send's message if no receive matched it yet
 * (MPI_Cancel of a send). WEFT_INPROGRESS: asked, the send completes with
 * WEFT_ECANCELED or as sent; WEFT_ESTATE: it matched or failed already;
 * WEFT_ENOMEM. A send that completed locally (eager) is reopened. */
int weft__proto_send_cancel(struct weft_ctx *ctx, struct weft_request *req);

/* Post a receive without the engine lock, under match_lock alone, when that
 * is enough: a small receive (no cooperative publication), no unexpected
 * message that matches it (taking one is the engine's), no receive of this
 * thread still deferred (it must be posted first), and a peer not lost.
 * false: nothing done, the request is left for the engine (deferred). */
bool weft__proto_recv_unlocked(struct weft_ctx *ctx, struct weft_request *req);
/* Take a posted receive out of matching (cancel): whether it was still
 * posted. The caller then completes it. Takes match_lock. */
bool weft__proto_recv_cancel(struct weft_ctx *ctx, struct weft_request *req);

/* Counters (stats.c): print one line per gate with traffic to stderr when
 * WEFT_STATS=1 (finalize calls it). */
void weft__stats_print(struct weft_ctx *ctx);
/* The engine's upcalls for a driver instance of ctx (ctx.c). */
const weft_driver_upcalls_t *weft__ctx_upcalls(struct weft_ctx *ctx, weft_driver_upcalls_t *up);
/* Gates: set up (before its track) and attached to the driver whose track
 * it got (ctx.c). */
void weft__gate_init(struct weft_ctx *ctx, weft__gate_t *g, int peer,
                     const weft__strategy_ops_t *st);
void weft__gate_attach(struct weft_ctx *ctx, weft__gate_t *g, const weft_driver_ops_t *ops,
                       weft_driver_t *drv);
/* Whether peer names a gate (a rank of the job or a linked process). */
static inline bool weft__peer_valid(struct weft_ctx *ctx, int peer)
{
    return peer >= 0 && peer < atomic_load_explicit(&ctx->npeers, memory_order_acquire);
}

/* ctx->counters with what the gates count added (caller holds the engine lock). */
void weft__counters_sum(struct weft_ctx *ctx, weft_counters_t *out);

/* Append an opened driver to ctx->drivers, and to ctx->poll unless it is
 * the self driver (ctx->self_driver names it before). The caller checked
 * that there is room (WEFT_MAX_DRIVERS). */
void weft__ctx_add_driver(weft_ctx_t *ctx, const weft_driver_ops_t *ops, weft_driver_t *drv);
/* A test hook, not public API: a context of size ranks for rank, every gate
 * (itself included) on one track of the driver ops, no bootstrap. strategy
 * NULL means the driver's default. Freed by weft_finalize (no fence). */
int weft__ctx_create_local(int rank, int size, const weft_driver_ops_t *ops, const char *strategy,
                           struct weft_ctx **ctx_out);

/* By concern, after the types above: */
#include "core/core_progress.h" /* cooperative rendezvous, waiting, progress */
#include "core/core_strategy.h" /* strategies, multi-rail */

#endif
