/* Requests (request.c): what an operation is to the engine, the chunks it
 * queues on a gate, the unexpected messages that wait for a receive, and the
 * table of wire ids. Part of the engine's private objects (core_int.h). */
#ifndef WEFT_CORE_REQUEST_H
#define WEFT_CORE_REQUEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "core/match.h"
#include "core/wire.h"
#include "progress/progress.h"
#include "util/list.h"
#include "util/util.h"
#include "weft/weft.h"

struct weft_ctx;
typedef struct weft__gate weft__gate_t;
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

#endif
