/* Cooperative rendezvous: a large message on a track that shares memory with
 * its peer (WEFT_DRV_CAP_CELLS, shm) is moved in pieces by whichever side is
 * inside the library, so a peer that computes never stalls the transfer
 * (seed 001: Isend + compute + Wait must overlap, on either side).
 *
 * Each direction of a pair has COOP_CELLS cells in the receiver's memory, which
 * both processes map. A cell coordinates one transfer:
 *
 *   state  (gen << 8) | CELL_*: only the receiver allocates and frees a cell
 *          (bumping gen), so a stale claim from the sender always fails.
 *   claim  (gen << 32) | next piece: a side takes piece k by compare-and-swap.
 *   done   (gen << 32) | pieces moved: each side adds one after its copy
 *          (all those left at once when both sides fail them).
 *   fail   (gen << 32) | the first failed piece's error: the receiver reports
 *          it, whichever side's copy failed.
 *
 * A copy the kernel refuses (EPERM: the peer made itself non-dumpable after
 * init, or a ptrace policy forbids it) moved nothing, so the piece goes back
 * to the other side through one of the cell's redo slots, and the refused
 * side takes no more pieces of that transfer (its bit in denied). When both
 * sides are refused, the pieces left fail, and the transfer ends in error on
 * both. A receiver refused once sends later receives from that peer the copy
 * path's way.
 *
 * The receiver's side reads pieces from the sender's exposed buffer (rget),
 * the sender's side writes them into the receiver's exposed buffer (rput).
 * Both complete when done reaches the piece count: nothing is sent at the end.
 * The receiver frees the cell then; a sender that looks later sees either the
 * full count or a newer generation, and knows its data has been read.
 *
 * Two ways to start a transfer:
 *
 * - Matched: a receive matches an RDV (with the sender's key); the receiver
 *   takes a cell and sends COOP (cell, gen, length, piece size, its own key).
 *   From then on both sides move pieces; the receiver alone can finish.
 *
 * - Published: a receive posted before its message arrives, from a named
 *   source with a named tag, is written into cell 0 of that pair together with
 *   the sequence number X the receiver expects next from that source, if it is
 *   the oldest posted receive such a message would match. The sender whose RDV
 *   carries sequence number X, the same communicator and tag and fits the
 *   buffer claims the cell (PUBLISHED -> CLAIMING -> CLAIMED, writing its
 *   request id) and starts writing at once, even if the receiver computes and
 *   never looks at its ring. MPI's order holds: the message with number X is
 *   the first the receiver processes from that sender after posting, and no
 *   older receive can take it. When the receiver processes message X it
 *   withdraws the publication (PUBLISHED -> FREE) unless it was claimed, in
 *   which case message X must be that claiming RDV and the receive joins the
 *   transfer.
 *
 * Every cell operation runs under the engine lock of its process; the two
 * processes coordinate only through the atomics above. The driver's rget and
 * rput complete at once on such tracks, and may run without the engine lock:
 * a piece is claimed under the lock, and a thread that waits copies it after
 * releasing the lock (weft__progress_try), so other threads keep the engine
 * while it copies, and threads of one process copy pieces side by side. The
 * request stays held (coop_busy) until the copy ends; its completion waits
 * for that (weft__coop_finish).
 */
#include <sched.h>

#include "core/core_int.h"
#include "core/kinds.h"
#include "util/log.h"

/* Values of the shared cell layout: both processes read them, and
 * tests/unit/test_coop.c writes CLAIMING over PUBLISHED. */
enum {
    CELL_FREE = 0,
    CELL_ACTIVE = 1,    /* a matched transfer */
    CELL_PUBLISHED = 2, /* cell 0: a posted receive, open to a claim */
    CELL_CLAIMING = 3,  /* cell 0: the sender is writing its request id */
    CELL_CLAIMED = 4,   /* cell 0: a published receive taken by the sender */
};

/* The two sides of a transfer, as bits of a cell's denied word. */
enum { SIDE_SEND = 1, SIDE_RECV = 2 };

#define COOP_CELLS 16
#define COOP_REDO  12 /* pieces given back at once, at most; more fail */
/* Pieces per transfer, at most: a redo slot keeps the side in bit 31. */
#define COOP_MAX_PIECES 0x7ffffffeu

struct weft__cell {
    _Atomic uint64_t state; /* (gen << 8) | CELL_* */
    uint64_t sreq;          /* published: the claiming send's id */
    uint32_t seq;           /* published: the sequence number of the message that may claim */
    uint32_t comm;
    uint64_t tag;
    uint64_t len;   /* published: the receive buffer's length */
    uint64_t piece; /* bytes per piece */
    weft_rkey_t rkey;
    _Alignas(64) _Atomic uint64_t claim; /* (gen << 32) | next piece */
    _Atomic uint64_t done;               /* (gen << 32) | pieces moved */
    _Atomic uint64_t fail;               /* (gen << 32) | (uint32_t)error of a failed piece */
    _Atomic uint64_t denied;             /* (gen << 32) | SIDE_* refused by the kernel */
    /* (gen << 32) | giver << 31 | piece + 1 (giver 1: the receiver); empty
     * when the piece field is 0 or gen is older. */
    _Atomic uint64_t redo[COOP_REDO];
};
_Static_assert(sizeof(weft__cell_t) * COOP_CELLS <= WEFT_DRV_CELL_BYTES,
               "coop cells do not fit the shared block");

static inline uint64_t cell_state(uint32_t gen, int st)
{
    return ((uint64_t)gen << 8) | (uint64_t)st;
}

static inline uint32_t pieces_of(uint64_t len, uint64_t piece)
{
    return (uint32_t)((len + piece - 1) / piece);
}

void weft__coop_gate_init(struct weft_ctx *ctx, weft__gate_t *g)
{
    g->cells_in = g->cells_out = NULL;
    g->cells_used = 0;
    g->published = NULL;
    if (!(g->caps.flags & WEFT_DRV_CAP_CELLS) || !g->drv_ops->cells || !ctx->coop_piece)
        return;
    g->cells_in = g->drv_ops->cells(g->track, true);
    g->cells_out = g->drv_ops->cells(g->track, false);
    if (!g->cells_in || !g->cells_out)
        g->cells_in = g->cells_out = NULL;
}

/* Piece size: at least the configured one, and few enough pieces that the
 * count fits a redo slot (COOP_MAX_PIECES). */
static uint64_t piece_size(struct weft_ctx *ctx, uint64_t len)
{
    uint64_t piece = ctx->coop_piece;
    while (len / piece >= COOP_MAX_PIECES)
        piece *= 2;
    return piece;
}

/* A transfer starts: no error yet (the request's memory may have served a
 * transfer before). coop_busy needs no reset: every copy gives its hold
 * back before its request can complete, so it is 0 at rest. */
static inline void coop_reset(struct weft_request *req)
{
    atomic_store_explicit(&req->coop_err, 0, memory_order_relaxed);
}

static void list_add(struct weft_ctx *ctx, struct weft_request *req)
{
    if (!req->coop_listed) {
        weft_list_push_back(&ctx->coop, &req->coop_link);
        req->coop_listed = true;
    }
}

static void list_drop(struct weft_request *req)
{
    if (req->coop_listed) {
        weft_list_remove(&req->coop_link);
        req->coop_listed = false;
    }
}

/* Take a free cell among [first, COOP_CELLS) of the pair's incoming block and
 * open generation gen+1 on it, in state st. -1 when all are in use. */
static int cell_open(weft__gate_t *g, int first, int last, int st, uint32_t *gen_out)
{
    /* Round the cells: a sender that looks at a finished transfer late most
     * likely finds its cell still at that generation (and its fail word). */
    int n = last - first;
    int start = g->cell_next >= first && g->cell_next < last ? g->cell_next - first : 0;
    for (int j = 0; j < n; j++) {
        int i = first + (start + j) % n;
        if (g->cells_used & (1u << i))
            continue;
        weft__cell_t *cell = &g->cells_in[i];
        uint32_t gen =
            (uint32_t)(atomic_load_explicit(&cell->state, memory_order_relaxed) >> 8) + 1;
        atomic_store_explicit(&cell->claim, (uint64_t)gen << 32, memory_order_relaxed);
        atomic_store_explicit(&cell->done, (uint64_t)gen << 32, memory_order_relaxed);
        atomic_store_explicit(&cell->fail, (uint64_t)gen << 32, memory_order_relaxed);
        atomic_store_explicit(&cell->denied, (uint64_t)gen << 32, memory_order_relaxed);
        if (st == CELL_ACTIVE)
            atomic_store_explicit(&cell->state, cell_state(gen, st), memory_order_release);
        g->cells_used |= 1u << i;
        g->cell_next = (uint8_t)(i + 1);
        *gen_out = gen;
        return i;
    }
    return -1;
}

static void cell_close(weft__gate_t *g, int i, uint32_t gen)
{
    /* Nothing left to take: a sender still at work (the receive completed
     * by a peer loss while the peer lives on, after a protocol error) claims
     * no further piece of a buffer now back with the user. */
    weft__cell_t *cell = &g->cells_in[i];
    atomic_store_explicit(&cell->claim, ((uint64_t)gen << 32) | UINT32_MAX, memory_order_relaxed);
    for (int k = 0; k < COOP_REDO; k++)
        atomic_store_explicit(&cell->redo[k], (uint64_t)gen << 32, memory_order_relaxed);
    atomic_store_explicit(&cell->state, cell_state(gen, CELL_FREE), memory_order_release);
    g->cells_used &= ~(1u << i);
}

void weft__coop_publish(struct weft_ctx *ctx, struct weft_request *req)
{
    if (req->peer < 0 || req->iovcnt != 1 || req->length < ctx->rdv_split ||
        req->match.tag == WEFT_ANY_TAG)
        return;
    weft__gate_t *g = &ctx->gates[req->peer];
    if (!g->cells_in || g->dead || g->published || (g->cells_used & 1u) ||
        atomic_load_explicit(&g->coop_get_refused, memory_order_relaxed))
        return;
    weft__match_lock(ctx);
    bool first = weft__match_first_recv(ctx->match, req->match.comm, req->peer, req->match.tag) ==
                 &req->match;
    weft__match_unlock(ctx);
    if (!first)
        return;
    if (!req->exposed) {
        if (g->drv_ops->expose(g->drv, req->iov[0].iov_base, req->length, &req->rkey) != WEFT_OK)
            return;
        req->exposed = true;
    }
    req->gate = g;
    uint32_t gen = 0;
    cell_open(g, 0, 1, CELL_PUBLISHED, &gen);
    weft__cell_t *cell = &g->cells_in[0];
    cell->sreq = 0;
    cell->seq = g->recv_seq;
    cell->comm = req->match.comm;
    cell->tag = req->match.tag;
    cell->len = req->length;
    cell->piece = piece_size(ctx, req->length);
    cell->rkey = req->rkey;
    atomic_store_explicit(&cell->state, cell_state(gen, CELL_PUBLISHED), memory_order_release);
    req->coop_cell = 0;
    req->coop_gen = gen;
    req->coop_piece = cell->piece;
    g->published = req;
    g->published_seq = g->recv_seq;
    ctx->counters.rdv_published++;
}

/* Take a publication back. False when the sender claimed it first. A sender
 * caught between its two stores (CLAIMING) loses its claim: its closing
 * compare-and-swap fails, and it goes on as an unanswered rendezvous. So no
 * side ever waits for the other here, and a sender that dies mid-claim
 * leaves nothing to wait for. */
static bool withdraw(weft__gate_t *g)
{
    struct weft_request *req = g->published;
    _Atomic uint64_t *state = &g->cells_in[0].state;
    const uint64_t pub = cell_state(req->coop_gen, CELL_PUBLISHED);
    const uint64_t claiming = cell_state(req->coop_gen, CELL_CLAIMING);
    uint64_t st = atomic_load_explicit(state, memory_order_acquire);
    for (;;) {
        if (st != pub && st != claiming)
            return false;
        if (atomic_compare_exchange_weak_explicit(state, &st, cell_state(req->coop_gen, CELL_FREE),
                                                  memory_order_acq_rel, memory_order_acquire))
            break;
    }
    g->cells_used &= ~1u;
    g->published = NULL;
    req->coop_cell = -1;
    return true;
}

bool weft__coop_cancel(weft__gate_t *g, struct weft_request *req)
{
    return g->published != req || withdraw(g);
}

int weft__coop_arrival(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c,
                       struct weft_request *matched)
{
    struct weft_request *req = g->published;
    if (withdraw(g))
        return 0;
    /* Claimed: this message must be the claiming rendezvous, and it must take
     * the published receive. */
    weft__cell_t *cell = &g->cells_in[0];
    uint64_t st = atomic_load_explicit(&cell->state, memory_order_acquire);
    if (st != cell_state(req->coop_gen, CELL_CLAIMED) || matched != req ||
        c->kind != WEFT_CHUNK_RDV || c->sreq != cell->sreq || c->len > req->length || c->len == 0 ||
        !c->rkey.len) {
        weft_log_error("rank %d claimed a published receive with a message that does not fit it",
                       g->peer);
        return WEFT_EPROTO;
    }
    g->published = NULL;
    req->state = WEFT_RS_RDV_RECV;
    req->peer_sreq = c->sreq;
    req->status.length = c->len;
    req->status.error = WEFT_OK;
    req->coop_len = c->len;
    req->coop_pieces = pieces_of(c->len, req->coop_piece);
    coop_reset(req);
    req->coop_rkey = c->rkey;
    weft_list_push_back(&ctx->live_requests, &req->link);
    list_add(ctx, req);
    return 1;
}

bool weft__coop_start_recv(struct weft_ctx *ctx, struct weft_request *req, weft__gate_t *g,
                           uint64_t accept, const weft_rkey_t *rkey)
{
    if (!g->cells_in || req->iovcnt != 1 || accept < ctx->rdv_split ||
        atomic_load_explicit(&g->coop_get_refused, memory_order_relaxed))
        return false;
    int rc = weft__handle_add(&ctx->handles, req, &req->id);
    if (rc)
        return false;
    weft__chunk_t *c = weft__ctrl_alloc(ctx);
    uint32_t gen = 0;
    int i = c ? cell_open(g, 1, COOP_CELLS, CELL_ACTIVE, &gen) : -1;
    if (i < 0 || (!req->exposed && g->drv_ops->expose(g->drv, req->iov[0].iov_base, accept,
                                                      &req->rkey) != WEFT_OK)) {
        if (i >= 0)
            cell_close(g, i, gen);
        if (c)
            weft__ctrl_free(ctx, c);
        weft__handle_remove(&ctx->handles, req->id);
        req->id = 0;
        return false;
    }
    req->exposed = true;
    req->state = WEFT_RS_RDV_RECV;
    req->coop_cell = (int8_t)i;
    req->coop_gen = gen;
    req->coop_piece = piece_size(ctx, accept);
    req->coop_len = accept;
    req->coop_pieces = pieces_of(accept, req->coop_piece);
    coop_reset(req);
    req->coop_rkey = *rkey;
    c->kind = WEFT_CHUNK_COOP;
    c->hdr_len = (uint16_t)weft__wire_put_coop(c->hdr, req->peer_sreq, (uint32_t)i, gen, accept,
                                               req->coop_piece, &req->rkey);
    weft__gate_lock(g);
    weft__chunk_queue(g, c, false);
    weft__gate_mark_pending(g);
    weft__gate_unlock(g);
    weft_list_push_back(&ctx->live_requests, &req->link);
    list_add(ctx, req);
    ctx->counters.rdv_coop++;
    return true;
}

void weft__coop_watch(struct weft_ctx *ctx, struct weft_request *req)
{
    weft__gate_t *g = req->gate;
    if (g->cells_out && req->exposed && req->length >= ctx->rdv_split &&
        !atomic_load_explicit(&g->coop_put_refused, memory_order_relaxed)) {
        req->coop_watch = true;
        list_add(ctx, req);
    }
}

void weft__coop_unwatch(struct weft_request *req)
{
    if (req->coop_watch) {
        req->coop_watch = false;
        list_drop(req);
    }
}

int weft__coop_on_coop(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c)
{
    struct weft_request *req = weft__handle_get(&ctx->handles, c->sreq);
    if (!req || req->kind != WEFT_REQ_SEND || req->gate != g || req->chunk.kind != WEFT_CHUNK_RDV ||
        req->answered || !req->exposed || !g->cells_out || c->cell == 0 || c->cell >= COOP_CELLS ||
        c->len > req->length || c->piece < 4096 || c->len / c->piece >= COOP_MAX_PIECES)
        return WEFT_EPROTO;
    req->answered = true;
    req->coop_watch = false;
    req->coop_cell = (int8_t)c->cell;
    req->coop_gen = c->gen;
    req->coop_piece = c->piece;
    req->coop_len = c->len;
    req->coop_pieces = pieces_of(c->len, c->piece);
    coop_reset(req);
    req->coop_rkey = c->rkey;
    /* Writing into this peer was refused before (the kernel's verdict holds
     * for the peer's life): say so in the cell at once, so the receiver
     * reads every piece and this side tries none of them. */
    if (atomic_load_explicit(&g->coop_put_refused, memory_order_relaxed))
        atomic_fetch_or_explicit(&g->cells_out[c->cell].denied, SIDE_SEND, memory_order_acq_rel);
    ctx->counters.chunks_received++;
    list_add(ctx, req);
    return WEFT_OK;
}

/* Sender: the receiver published a receive that this rendezvous fits. */
static void try_claim(struct weft_ctx *ctx, struct weft_request *req)
{
    weft__gate_t *g = req->gate;
    if (atomic_load_explicit(&g->coop_put_refused, memory_order_relaxed))
        return; /* writing into the receiver's buffer was refused before */
    weft__cell_t *cell = &g->cells_out[0];
    uint64_t st = atomic_load_explicit(&cell->state, memory_order_acquire);
    if ((st & 0xff) != CELL_PUBLISHED)
        return;
    if (cell->seq != req->seq || cell->comm != req->status.comm || cell->tag != req->status.tag ||
        cell->len < req->length || cell->piece < 4096 ||
        req->length / cell->piece >= COOP_MAX_PIECES || !cell->rkey.len ||
        cell->rkey.len > WEFT_RKEY_MAX)
        return;
    weft_rkey_t rkey = cell->rkey;
    uint64_t piece = cell->piece;
    uint32_t gen = (uint32_t)(st >> 8);
    if (!atomic_compare_exchange_strong_explicit(&cell->state, &st, cell_state(gen, CELL_CLAIMING),
                                                 memory_order_acq_rel, memory_order_relaxed))
        return; /* withdrawn or reused meanwhile: the fields read may be stale */
    cell->sreq = req->id;
    uint64_t claiming = cell_state(gen, CELL_CLAIMING);
    if (!atomic_compare_exchange_strong_explicit(&cell->state, &claiming,
                                                 cell_state(gen, CELL_CLAIMED),
                                                 memory_order_release, memory_order_relaxed))
        return; /* the receiver took the publication back meanwhile (withdraw) */
    req->answered = true;
    req->coop_watch = false;
    req->coop_cell = 0;
    req->coop_gen = gen;
    req->coop_piece = piece;
    req->coop_len = req->length;
    req->coop_pieces = pieces_of(req->length, piece);
    coop_reset(req);
    req->coop_rkey = rkey;
    ctx->counters.rdv_claimed++;
}

static inline unsigned side_of(const struct weft_request *req)
{
    return req->kind == WEFT_REQ_RECV ? SIDE_RECV : SIDE_SEND;
}

static inline unsigned other_side(const struct weft_request *req)
{
    return 3u ^ side_of(req);
}

/* Whether a cell word ((gen << 32) | value) is of req's transfer. */
static inline bool of_transfer(const struct weft_request *req, uint64_t word)
{
    return (uint32_t)(word >> 32) == req->coop_gen;
}

/* A redo slot's fields: piece + 1 (0: empty) and the side that gave it. */
static inline uint32_t redo_piece(uint64_t v)
{
    return (uint32_t)(v & 0x7fffffffu);
}

static inline unsigned redo_giver(uint64_t v)
{
    return (v >> 31) & 1 ? SIDE_RECV : SIDE_SEND;
}

/* The sides of req's transfer whose copies the kernel refused. */
static inline unsigned denied_sides(const struct weft_request *req, weft__cell_t *cell)
{
    uint64_t d = atomic_load_explicit(&cell->denied, memory_order_acquire);
    return of_transfer(req, d) ? (unsigned)(d & 3) : 0;
}

/* The cell of req's transfer. */
static inline weft__cell_t *cell_of(const struct weft_request *req)
{
    const weft__gate_t *g = req->gate;
    return req->kind == WEFT_REQ_RECV ? &g->cells_in[req->coop_cell]
                                      : &g->cells_out[req->coop_cell];
}

bool weft__coop_busy(struct weft_ctx *ctx)
{
    for (weft_list_t *pos = ctx->coop.next; pos != &ctx->coop; pos = pos->next) {
        struct weft_request *req = weft_list_entry(pos, struct weft_request, coop_link);
        if (req->coop_watch)
            continue;
        /* A side the kernel refused waits for the other to move the rest. */
        unsigned denied = denied_sides(req, cell_of(req));
        if ((denied & side_of(req)) && denied != 3)
            continue;
        return true;
    }
    return false;
}

/* Take a piece the other side gave back; its number, or -1. */
static int64_t take_redo(const struct weft_request *req, weft__cell_t *cell)
{
    for (int i = 0; i < COOP_REDO; i++) {
        uint64_t v = atomic_load_explicit(&cell->redo[i], memory_order_acquire);
        if (!of_transfer(req, v) || !redo_piece(v) || redo_giver(v) != other_side(req))
            continue;
        if (atomic_compare_exchange_strong_explicit(&cell->redo[i], &v,
                                                    (uint64_t)req->coop_gen << 32,
                                                    memory_order_acquire, memory_order_relaxed))
            return (int64_t)redo_piece(v) - 1;
    }
    return -1;
}

/* Give piece k back to the other side; false when every redo slot is taken. */
static bool give_back(const struct weft_request *req, weft__cell_t *cell, uint32_t k)
{
    uint64_t gen = (uint64_t)req->coop_gen << 32;
    uint64_t mine = gen | (side_of(req) == SIDE_RECV ? 1ull << 31 : 0) | ((uint64_t)k + 1);
    for (int i = 0; i < COOP_REDO; i++) {
        uint64_t v = atomic_load_explicit(&cell->redo[i], memory_order_relaxed);
        if (of_transfer(req, v) && redo_piece(v))
            continue; /* in use */
        if (atomic_compare_exchange_strong_explicit(&cell->redo[i], &v, mine, memory_order_release,
                                                    memory_order_relaxed))
            return true;
    }
    return false;
}

/* Record a piece that failed: in the request (this side reports it) and in
 * the cell (the other side reports it too: see transfer_error). True for
 * the request's first. */
static bool piece_failed(struct weft_request *req, weft__cell_t *cell, int rc)
{
    int expect = 0;
    bool first = atomic_compare_exchange_strong_explicit(
        &req->coop_err, &expect, rc, memory_order_relaxed, memory_order_relaxed);
    uint64_t none = (uint64_t)req->coop_gen << 32;
    atomic_compare_exchange_strong_explicit(&cell->fail, &none, none | (uint32_t)rc,
                                            memory_order_relaxed, memory_order_relaxed);
    return first;
}

/* Claim the next piece of req's transfer into *cp, if one is left; returns
 * 1 if it did. A piece the other side gave back comes first. A side the
 * kernel refused takes pieces only when both are refused, to fail them:
 * then it takes every piece left at once (nothing will copy them).
 * The request is held (coop_busy) until weft__coop_copy_run has moved the
 * piece, so nothing completes it, and no buffer is given back to the user,
 * while the copy runs outside the engine lock. */
static int claim_piece(struct weft_request *req, weft__cell_t *cell, weft__coop_copy_t *cp)
{
    unsigned denied = denied_sides(req, cell);
    int fail = denied & side_of(req) ? WEFT_EPERM : 0;
    /* Only a refused side gives pieces back, after setting its denied bit:
     * until the other side's shows, no redo slot needs a look. */
    int64_t k = denied & other_side(req) ? take_redo(req, cell) : -1;
    uint32_t count = 1;
    if (k < 0) {
        if (fail && denied != 3)
            return 0;
        uint64_t cur = atomic_load_explicit(&cell->claim, memory_order_relaxed);
        for (;;) {
            if (!of_transfer(req, cur) || (uint32_t)cur >= req->coop_pieces)
                return 0;
            count = fail ? req->coop_pieces - (uint32_t)cur : 1;
            if (atomic_compare_exchange_weak_explicit(&cell->claim, &cur, cur + count,
                                                      memory_order_acquire, memory_order_relaxed))
                break;
        }
        k = (uint32_t)cur;
    } else if (k >= req->coop_pieces) {
        /* Not a piece of this transfer: the peer wrote nonsense. Nothing is
         * counted for it (the count must not end the transfer while a real
         * piece may still be copied). A peer that corrupts the cell can stall
         * the transfer so; only its death (or finalize) ends it then. */
        piece_failed(req, cell, WEFT_EPROTO);
        return 0;
    }
    atomic_fetch_add_explicit(&req->coop_busy, 1, memory_order_relaxed);
    cp->req = req;
    cp->cell = cell;
    cp->index = (uint32_t)k;
    cp->count = count;
    cp->fail = fail;
    cp->off = (uint64_t)k * req->coop_piece;
    cp->len = fail ? 0 : (size_t)WEFT_MIN(req->coop_piece, req->coop_len - cp->off);
    return 1;
}

void weft__coop_copy_run(const weft__coop_copy_t *cp, bool unlocked)
{
    struct weft_request *req = cp->req;
    weft__gate_t *g = req->gate;
    struct iovec part = {.iov_base = (char *)req->iov[0].iov_base + cp->off, .iov_len = cp->len};
    int rc = cp->fail;
    if (!rc) {
        WEFT_TRACE(WEFT_TR_PIECE, WEFT_TR_B, g->peer, cp->len, unlocked, 0);
        rc = req->kind == WEFT_REQ_RECV
                 ? g->drv_ops->rget(g->track, &part, 1, &req->coop_rkey, cp->off, cp->len, req)
                 : g->drv_ops->rput(g->track, &part, 1, &req->coop_rkey, cp->off, cp->len, req);
        WEFT_TRACE(WEFT_TR_PIECE, WEFT_TR_E, 0, 0, 0, 0);
    }
    if (rc == WEFT_EPERM && !cp->fail) {
        /* Refused before anything moved: the other side may copy the piece,
         * unless it was refused too (then this side fails the piece, so
         * the side refused last always has the error to report). */
        atomic_fetch_add_explicit(&g->pieces_refused, 1, memory_order_relaxed);
        atomic_store_explicit(req->kind == WEFT_REQ_RECV ? &g->coop_get_refused
                                                         : &g->coop_put_refused,
                              true, memory_order_relaxed);
        uint64_t was =
            atomic_fetch_or_explicit(&cp->cell->denied, side_of(req), memory_order_acq_rel);
        bool other = of_transfer(req, was) && (was & other_side(req));
        if (!other && give_back(req, cp->cell, cp->index)) {
            weft_log_info("single-copy %s rank %d refused; the peer copies instead",
                          req->kind == WEFT_REQ_RECV ? "read from" : "write to", g->peer);
            atomic_fetch_sub_explicit(&req->coop_busy, 1, memory_order_release);
            return;
        }
    }
    if (rc != WEFT_OK) {
        /* The piece still counts as moved, so the transfer ends (in error) on
         * both sides instead of waiting for ever. */
        if (piece_failed(req, cp->cell, rc == WEFT_INPROGRESS ? WEFT_EPROTO : rc))
            weft_log_warn("single-copy transfer with rank %d failed: %s", g->peer,
                          weft_strerror(rc));
    } else {
        atomic_fetch_add_explicit(&g->pieces_moved, 1, memory_order_relaxed);
        if (unlocked)
            atomic_fetch_add_explicit(&g->pieces_unlocked, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&cp->cell->done, cp->count, memory_order_acq_rel);
    /* The last touch of req: once the hold is gone it may complete. */
    atomic_fetch_sub_explicit(&req->coop_busy, 1, memory_order_release);
}

/* Whether every piece of the transfer has been moved (or the receiver has
 * already recycled the cell, which it does only after that). */
static bool all_moved(const struct weft_request *req, weft__cell_t *cell)
{
    uint64_t d = atomic_load_explicit(&cell->done, memory_order_acquire);
    return !of_transfer(req, d) || (uint32_t)d >= req->coop_pieces;
}

/* The error a finished transfer reports: this side's own, else one the
 * cell recorded while it still holds this transfer (the receiver's always
 * does). A sender that looks late may find its cell reused: not after a
 * refusal (a failure by EPERM means the receiver was refused too, and it
 * opens no more cells for that peer), only after a copy that failed
 * otherwise (EFAULT on a buffer the program freed, the kernel's ENOMEM), and
 * only once the receiver's round of the cells has come back to it. A failed
 * copy outranks truncation: the bytes are missing. */
static void transfer_error(struct weft_request *req, weft__cell_t *cell)
{
    int err = atomic_load_explicit(&req->coop_err, memory_order_relaxed);
    if (!err) {
        uint64_t f = atomic_load_explicit(&cell->fail, memory_order_relaxed);
        if (of_transfer(req, f))
            err = (int32_t)(uint32_t)f;
        if (err >= 0)
            err = err ? WEFT_EPROTO : 0; /* the peer wrote nonsense */
    }
    if (err && (!req->status.error || req->status.error == WEFT_ETRUNC))
        req->status.error = err;
}

WEFT_NOINLINE int weft__coop_progress(struct weft_ctx *ctx, weft__coop_copy_t *out)
{
    int events = 0;
    bool moved = false;
    weft_list_t *pos, *tmp;
    weft_list_for_each_safe(pos, tmp, &ctx->coop)
    {
        struct weft_request *req = weft_list_entry(pos, struct weft_request, coop_link);
        if (req->coop_watch) {
            try_claim(ctx, req);
            if (req->coop_watch)
                continue;
            events++;
        }
        weft__cell_t *cell = cell_of(req);
        /* One piece per call: progress work stays a small task, and a thread
         * that waits calls again at once. Handed to the caller when it can
         * copy after releasing the engine lock; copied here otherwise. */
        if (!moved) {
            weft__coop_copy_t cp;
            if (claim_piece(req, cell, out ? out : &cp)) {
                moved = true;
                events++;
                if (!out)
                    weft__coop_copy_run(&cp, false);
            }
        }
        if (!all_moved(req, cell))
            continue;
        events++;
        /* The other side, refused, waited for this one to move it all and
         * watches only the cell: a packet wakes it if it sleeps on its
         * doorbells (WEFT_WAIT=block), instead of its next timeout. */
        unsigned denied = denied_sides(req, cell);
        if ((denied & other_side(req)) && !(denied & side_of(req)))
            weft__proto_nudge(req->gate);
        transfer_error(req, cell);
        if (req->kind == WEFT_REQ_RECV) {
            weft__request_complete(ctx, req, req->status.error);
        } else {
            list_drop(req);
            weft__proto_send_release(ctx, req, WEFT_OK);
        }
    }
    return events;
}

void weft__coop_finish(struct weft_ctx *ctx, struct weft_request *req)
{
    (void)ctx;
    /* A piece still being copied outside the engine lock (only the end of a
     * copy is left: it needs no lock, so this wait is short and cannot
     * deadlock); then nobody touches the buffer or the request any more. */
    while (atomic_load_explicit(&req->coop_busy, memory_order_acquire))
        sched_yield();
    list_drop(req);
    req->coop_watch = false;
    if (req->kind == WEFT_REQ_RECV && req->coop_cell >= 0) {
        weft__gate_t *g = req->gate;
        if (g->published == req && !withdraw(g)) {
            /* Claimed by a peer that is now gone (only peer death completes a
             * claimed receive before its transfer): nobody writes any more. */
            g->published = NULL;
        }
        if (req->coop_cell >= 0)
            cell_close(g, req->coop_cell, req->coop_gen);
    }
    req->coop_cell = -1;
}

static int decode_coop(const uint8_t *p, weft__wire_chunk_t *c, uint64_t *payload)
{
    c->sreq = weft__le64_get(p + 8);
    c->cell = weft__le32_get(p + 16);
    c->gen = weft__le32_get(p + 20);
    c->len = weft__le64_get(p + 24);
    c->piece = weft__le64_get(p + 32);
    c->rkey.len = weft__le32_get(p + 40);
    if (c->rkey.len == 0 || c->rkey.len > WEFT_RKEY_MAX || weft__le32_get(p + 44) != 0 ||
        c->len == 0 || c->piece == 0)
        return WEFT_EPROTO;
    memcpy(c->rkey.bytes, p + 48, c->rkey.len);
    return WEFT_OK;
}

const weft__kind_t weft__kind_coop = {
    .name = "COOP", .hdr = WEFT_WIRE_COOP_HDR, .decode = decode_coop, .handle = weft__coop_on_coop};
