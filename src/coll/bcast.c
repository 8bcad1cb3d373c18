/* The dynamic broadcast (weft/weft_bcast.h).
 *
 * A broadcast is named by (root, seq). The root sends each child of its
 * tree an ANNOUNCE on the sink id BC_CTRL, whose payload is
 *
 *   root u32 | seq u32 | comm u32 | flags u32 | tag u64 | length u64 |
 *   piece u64 | nsub u32 | rsv u32 | nsub ranks (i32) | inline data
 *
 * flags: INLINE (the data is in it), REDO (the root serving a rank itself
 * after a death). nsub ranks are the child's subtree, the child excluded,
 * in priority order; the child builds its own children from them as the
 * root did (tree_children). Larger data follows in pieces on BC_DATA under
 * tag (root, seq, piece), received straight into the child's buffer (by
 * the engine's rendezvous where the piece is large) and forwarded to its
 * children as each one lands. A rank acknowledges to its parent on BC_ACK,
 * tag (root, seq, round), once it has the data and its children answered:
 *
 *   ndead u32 | nunserved u32 | dead ranks | unserved ranks
 *
 * A child that dies fails the receive its parent posted for its ACK: the
 * parent reports it dead and its subtree unserved. Once every child of the
 * root answered, the root sends the unserved (live) ranks the data itself
 * (round 2, flat: they have no children then), and then signals the
 * caller's object. A rank that got the data already answers a REDO at once
 * (and takes round 2's pieces into nothing); the ring of broadcasts
 * delivered lately tells it so after its state went. A rank whose parent
 * died answers the root directly.
 *
 * Every piece receive ends: a parent answers each of its own piece
 * receives down the tree once, by the piece or, where it lost it, by a
 * zero-byte tombstone on its tag.
 *
 * The data reaches the application as a message from the root on (comm,
 * tag): into the receive posted for it, taken out of matching when the
 * ANNOUNCE is read (weft__proto_claim) and completed once no receive
 * writes into it and no forward reads from it; else through the engine's
 * matching once whole (weft__proto_inject).
 *
 * Threads: the sink (under the engine lock) and the completion handlers only
 * queue events. States are touched only by the holder of `work` (the
 * progress callback, or the root's call), which is taken by a try: nobody
 * waits for it, and nothing that calls weft holds another lock of ours. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "core/core_int.h"
#include "core/wire.h"
#include "progress/progress.h"
#include "util/log.h"
#include "util/param.h"
#include "weft/weft_bcast.h"

#define BC_CTRL   (WEFT__SINK_COMM + 1)
#define BC_DATA   0xffffff17u
#define BC_ACK    0xffffff18u
#define BC_HDR    48
#define BC_RING   1024   /* broadcasts delivered lately, for REDO */
#define BC_PIECES 65535u /* pieces a broadcast may have (the tag's 16 bits) */

enum { F_INLINE = 1, F_REDO = 2 };
/* EV_PIECE: a piece from the parent; EV_PIECE2: from the root (round 2). */
enum { EV_ANNOUNCE = 1, EV_FETCH, EV_PIECE, EV_PIECE2, EV_ACK, EV_SENT, EV_START, EV_LOST };

typedef struct bc_event {
    struct bc_event *next;
    int kind;
    int error;
    int source;
    uint64_t tag;
    size_t len;
    void *ptr;     /* EV_PIECE, EV_START: the state; EV_ACK: the child; EV_SENT: a token */
    uint8_t *data; /* EV_ANNOUNCE: the payload (malloc'd) */
} bc_event_t;

struct bc_state;

/* A child of a rank's tree, and the receive of its ACK. */
typedef struct bc_child {
    struct bc_state *s;
    int rank;
    const int *sub; /* its subtree (in s->route), itself excluded */
    int nsub;
    uint8_t *ack;
    size_t ack_cap;
} bc_child_t;

typedef struct ivec {
    int *v;
    int n, cap;
} ivec_t;

typedef struct bc_state {
    struct bc_state *next;
    int root;
    uint32_t seq, comm;
    uint32_t round;       /* the root's: 1, then 2 once it serves the unserved itself */
    uint32_t tree, arity; /* the tree's shape, passed down */
    uint64_t tag, len, piece;
    uint32_t npieces, nhave;
    uint8_t *buf;
    /* The application's receive the pieces land in (weft__proto_claim), its
     * buffer buf, until every receive into it and forward out of it ended. */
    struct weft_request *claimed;
    bool own_buf, is_root, delivered, answered, redo_ack;
    int ack_to;         /* the rank this one acknowledges to */
    uint32_t ack_round; /* and the round it names */
    int *route;         /* the subtree below this rank */
    int nroute;
    bc_child_t *child;
    int nchild, acks_left;
    bc_child_t *served; /* the root's round 2: ranks it serves itself */
    int nserved;
    uint8_t *have; /* a byte per piece */
    /* What a piece's receive completes with: a failed receive's entry names
     * neither its tag nor its source, so the piece is where this points. */
    struct bc_state **slot;
    int recv_out; /* piece receives in flight into buf */
    int fwd_out;  /* piece sends in flight out of buf */
    int acks_out; /* ACK receives in flight */
    ivec_t dead, unserved;
    /* The root's completion. */
    weft_comp_t *done;
    void *user_context;
} bc_state_t;

/* A send whose bytes are ours (ANNOUNCE, ACK): freed once it left. */
typedef struct bc_token {
    struct weft__bcast *bc;
    _Alignas(8) uint8_t wire[];
} bc_token_t;

struct weft__bcast {
    weft_ctx_t *ctx;
    int progress_id;
    weft_lock_t ev_lock;
    bc_event_t *ev_head, *ev_tail;
    atomic_int nev;
    weft_lock_t work;
    bc_state_t *states;
    _Atomic uint32_t seq;
    _Atomic uint64_t ctl_count;
    uint64_t ring[BC_RING];
    unsigned ring_pos;
    weft_handler_t h_piece, h_piece2, h_ack, h_sent_piece, h_sent_token, h_fetch, h_drop;
    size_t piece_default, inline_default;
    _Atomic uint64_t started, received, forwarded, redone, dead;
};

/* ------------------------------------------------------------ small helpers */

static int ivec_push(ivec_t *v, int x)
{
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 8;
        int *p = realloc(v->v, (size_t)cap * sizeof *p);
        if (!p)
            return WEFT_ENOMEM;
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return WEFT_OK;
}

static bool ivec_has(const ivec_t *v, int x)
{
    for (int i = 0; i < v->n; i++)
        if (v->v[i] == x)
            return true;
    return false;
}

static inline uint64_t id_of(int root, uint32_t seq)
{
    return (uint64_t)(uint32_t)root << 32 | seq;
}

static inline uint64_t piece_tag(int root, uint32_t seq, uint32_t k)
{
    return (uint64_t)(uint32_t)root << 40 | (uint64_t)(seq & 0xffffffu) << 16 | k;
}

static inline uint64_t ack_tag(int root, uint32_t seq, uint32_t round)
{
    return piece_tag(root, seq, round);
}

static inline uint64_t piece_len(const bc_state_t *s, uint32_t k)
{
    uint64_t off = (uint64_t)k * s->piece;
    return WEFT_MIN(s->piece, s->len - off);
}

/* The children of the rank first in a list of n + 1 ranks (itself, then
 * sub[0..n)): each child is a contiguous run of sub, its first rank the
 * child and the rest its subtree, so the ranks nearest the front (the
 * highest priority) are nearest the root. Binomial: the first child takes
 * half of what is left, the next half of the rest... (subtrees of 2^k);
 * k-ary: arity runs of equal size; chain: one run. Fills start[] and
 * size[] (at most n entries) and returns how many children. */
static int tree_children(int n, uint32_t tree, uint32_t arity, int *start, int *size)
{
    int nc = 0, pos = 0;
    if (tree == WEFT_BCAST_CHAIN) {
        arity = 1;
        tree = WEFT_BCAST_KARY;
    }
    if (tree == WEFT_BCAST_KARY) {
        int k = (int)WEFT_MIN((uint32_t)n, arity ? arity : 2u);
        for (int i = 0; i < k; i++) {
            int len = n / k + (i < n % k);
            if (len) {
                start[nc] = pos;
                size[nc++] = len;
            }
            pos += len;
        }
        return nc;
    }
    for (int left = n; left > 0;) {
        int len = (left + 1) / 2;
        start[nc] = pos;
        size[nc++] = len;
        pos += len;
        left -= len;
    }
    return nc;
}

/* ------------------------------------------------------------------ events */

/* After the event's count went up (a sequentially consistent
 * read-modify-write, which orders it before this as a fence would). */
static void arm(struct weft__bcast *bc)
{
    weft_progress_arm(bc->ctx, bc->progress_id, 1);
}

static void push(struct weft__bcast *bc, bc_event_t *ev)
{
    ev->next = NULL;
    weft_lock_acquire(&bc->ev_lock);
    if (bc->ev_tail)
        bc->ev_tail->next = ev;
    else
        bc->ev_head = ev;
    bc->ev_tail = ev;
    atomic_fetch_add_explicit(&bc->nev, 1, memory_order_seq_cst);
    weft_lock_release(&bc->ev_lock);
    arm(bc);
}

static bc_event_t *event_new(int kind)
{
    bc_event_t *ev = calloc(1, sizeof *ev);
    if (ev)
        ev->kind = kind;
    return ev;
}

/* Queue what a completion said; a lost event is logged (out of memory). */
static void push_entry(struct weft__bcast *bc, int kind, const weft_comp_entry_t *e)
{
    bc_event_t *ev = event_new(kind);
    if (!ev) {
        weft_log_error("dynamic broadcast: out of memory; an event is lost");
        return;
    }
    ev->error = e->error;
    ev->source = e->source;
    ev->tag = e->tag;
    ev->len = e->length;
    ev->ptr = e->user_context;
    push(bc, ev);
}

static void on_piece(const weft_comp_entry_t *e, void *arg)
{
    push_entry(arg, EV_PIECE, e);
}

static void on_piece2(const weft_comp_entry_t *e, void *arg)
{
    push_entry(arg, EV_PIECE2, e);
}

static void on_ack(const weft_comp_entry_t *e, void *arg)
{
    push_entry(arg, EV_ACK, e);
}

static void on_sent_piece(const weft_comp_entry_t *e, void *arg)
{
    push_entry(arg, EV_SENT, e);
}

/* Our own bytes left: nothing waits for them. */
static void on_sent_token(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    free(e->user_context);
}

/* A piece of round 2 this rank had already was taken into nothing. */
static void on_dropped(const weft_comp_entry_t *e, void *arg)
{
    (void)e;
    (void)arg;
}

/* A routing message that came by rendezvous is here: taken as an arrival. */
static void on_fetch(const weft_comp_entry_t *e, void *arg)
{
    bc_event_t *ev = e->user_context;
    if (e->error) {
        weft_log_error("dynamic broadcast: lost a routing message from rank %d: %s", ev->source,
                       weft_strerror(e->error));
        free(ev->data);
        free(ev);
        return;
    }
    ev->kind = EV_ANNOUNCE;
    push(arg, ev);
}

/* The engine's sink for BC_CTRL: under the engine lock, so only a copy. */
static void bc_sink(void *arg, int peer, uint64_t tag, const void *payload, size_t len, bool rdv)
{
    struct weft__bcast *bc = arg;
    bc_event_t *ev = event_new(rdv ? EV_FETCH : EV_ANNOUNCE);
    if (ev && !(ev->data = malloc(len ? len : 1))) {
        free(ev);
        ev = NULL;
    }
    if (!ev) {
        weft_log_error("dynamic broadcast: out of memory; a routing message from rank %d is lost",
                       peer);
        return;
    }
    ev->source = peer;
    ev->tag = tag;
    ev->len = len;
    if (!rdv && len)
        memcpy(ev->data, payload, len);
    push(bc, ev);
}

/* ------------------------------------------------------------------ sending */

static int send_token(struct weft__bcast *bc, int peer, uint32_t comm, uint64_t tag, bc_token_t *t,
                      size_t len)
{
    int rc = weft_sr_isend_comp(bc->ctx, peer, comm, tag, t->wire, len, &bc->h_sent_token.comp, t);
    if (rc)
        free(t);
    return rc;
}

/* The ANNOUNCE for a child whose subtree is sub[0..nsub). */
static int send_announce(struct weft__bcast *bc, const bc_state_t *s, int peer, const int *sub,
                         int nsub, bool redo)
{
    bool inl = s->npieces == 0;
    size_t len = BC_HDR + 4 * (size_t)nsub + (inl ? s->len : 0);
    bc_token_t *t = malloc(sizeof *t + len);
    if (!t)
        return WEFT_ENOMEM;
    t->bc = bc;
    uint8_t *p = t->wire;
    weft__le32_put(p, (uint32_t)s->root);
    weft__le32_put(p + 4, s->seq);
    weft__le32_put(p + 8, s->comm);
    weft__le32_put(p + 12, (inl ? F_INLINE : 0) | (redo ? F_REDO : 0));
    weft__le64_put(p + 16, s->tag);
    weft__le64_put(p + 24, s->len);
    weft__le64_put(p + 32, s->piece);
    weft__le32_put(p + 40, (uint32_t)nsub);
    weft__le32_put(p + 44, s->tree | s->arity << 8);
    for (int i = 0; i < nsub; i++)
        weft__le32_put(p + BC_HDR + 4 * (size_t)i, (uint32_t)sub[i]);
    if (inl && s->len)
        memcpy(p + BC_HDR + 4 * (size_t)nsub, s->buf, s->len);
    uint64_t tag = atomic_fetch_add_explicit(&bc->ctl_count, 1, memory_order_relaxed);
    return send_token(bc, peer, BC_CTRL, tag, t, len);
}

static void send_piece(struct weft__bcast *bc, bc_state_t *s, int peer, uint32_t k)
{
    uint64_t off = (uint64_t)k * s->piece;
    if (weft_sr_isend_comp(bc->ctx, peer, BC_DATA, piece_tag(s->root, s->seq, k), s->buf + off,
                           piece_len(s, k), &bc->h_sent_piece.comp, s) == WEFT_OK)
        s->fwd_out++;
}

static void send_ack(struct weft__bcast *bc, bc_state_t *s, int peer, uint32_t round, bool report)
{
    int nd = report ? s->dead.n : 0, nu = report ? s->unserved.n : 0;
    size_t len = 8 + 4 * (size_t)(nd + nu);
    bc_token_t *t = malloc(sizeof *t + len);
    if (!t) {
        weft_log_error("dynamic broadcast: out of memory; an acknowledgement is lost");
        return;
    }
    t->bc = bc;
    weft__le32_put(t->wire, (uint32_t)nd);
    weft__le32_put(t->wire + 4, (uint32_t)nu);
    for (int i = 0; i < nd; i++)
        weft__le32_put(t->wire + 8 + 4 * (size_t)i, (uint32_t)s->dead.v[i]);
    for (int i = 0; i < nu; i++)
        weft__le32_put(t->wire + 8 + 4 * (size_t)(nd + i), (uint32_t)s->unserved.v[i]);
    /* A parent that is gone fails it: nothing more to do then. */
    send_token(bc, peer, BC_ACK, ack_tag(s->root, s->seq, round), t, len);
}

/* Post the receive of child c's ACK for round. */
static void watch_child(struct weft__bcast *bc, bc_state_t *s, bc_child_t *c, uint32_t round)
{
    c->s = s;
    c->ack_cap = 8 + 8 * (size_t)(c->nsub + 1);
    if (!(c->ack = malloc(c->ack_cap))) {
        c->ack_cap = 0; /* the ACK then truncates: it counts as an answer with nothing to report */
    }
    s->acks_out++;
    if (weft_sr_irecv_comp(bc->ctx, c->rank, BC_ACK, ack_tag(s->root, s->seq, round), c->ack,
                           c->ack_cap, &bc->h_ack.comp, c) != WEFT_OK) {
        weft_comp_entry_t e = {.user_context = c, .error = WEFT_EPEERDEAD, .source = c->rank};
        push_entry(bc, EV_ACK, &e);
    }
}

/* Make the children of s from s->route (round 1), announce the broadcast
 * to them and watch their ACKs. */
static int start_children(struct weft__bcast *bc, bc_state_t *s)
{
    if (s->nroute == 0)
        return WEFT_OK;
    int *start = malloc(2 * (size_t)s->nroute * sizeof *start);
    if (!start)
        return WEFT_ENOMEM;
    int *size = start + s->nroute;
    int nc = tree_children(s->nroute, s->tree, s->arity, start, size);
    if (!(s->child = calloc((size_t)nc, sizeof *s->child))) {
        free(start);
        return WEFT_ENOMEM;
    }
    s->nchild = s->acks_left = nc;
    for (int i = 0; i < nc; i++) {
        bc_child_t *c = &s->child[i];
        c->rank = s->route[start[i]];
        c->sub = s->route + start[i] + 1;
        c->nsub = size[i] - 1;
        watch_child(bc, s, c, 1);
        if (send_announce(bc, s, c->rank, c->sub, c->nsub, false) == WEFT_OK && !s->is_root)
            atomic_fetch_add_explicit(&bc->forwarded, 1, memory_order_relaxed);
    }
    free(start);
    return WEFT_OK;
}

/* ------------------------------------------------------------------- states */

static bc_state_t *state_find(struct weft__bcast *bc, int root, uint32_t seq)
{
    for (bc_state_t *s = bc->states; s; s = s->next)
        if (s->root == root && s->seq == seq)
            return s;
    return NULL;
}

static void state_free(bc_state_t *s)
{
    for (int i = 0; i < s->nchild; i++)
        free(s->child[i].ack);
    for (int i = 0; i < s->nserved; i++)
        free(s->served[i].ack);
    free(s->child);
    free(s->served);
    free(s->route);
    free(s->have);
    free(s->slot);
    if (s->own_buf)
        free(s->buf);
    free(s->dead.v);
    free(s->unserved.v);
    free(s);
}

static void state_unlink(struct weft__bcast *bc, bc_state_t *s)
{
    for (bc_state_t **pp = &bc->states; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            return;
        }
}

static bool ring_has(const struct weft__bcast *bc, uint64_t id)
{
    for (unsigned i = 0; i < BC_RING; i++)
        if (bc->ring[i] == id)
            return true;
    return false;
}

/* The data is whole here, and the ring remembers it after s goes. */
static void mark_delivered(struct weft__bcast *bc, bc_state_t *s)
{
    s->delivered = true;
    bc->ring[bc->ring_pos++ % BC_RING] = id_of(s->root, s->seq);
    atomic_fetch_add_explicit(&bc->received, 1, memory_order_relaxed);
}

/* The data is whole here: to the application, through matching. */
static void deliver(struct weft__bcast *bc, bc_state_t *s)
{
    mark_delivered(bc, s);
    /* Nobody reads or writes the buffer any more: the engine may keep it. */
    bool give = s->fwd_out == 0 && s->recv_out == 0 && s->own_buf;
    uint8_t *data = s->buf;
    if (give) {
        s->buf = NULL;
        s->own_buf = false;
    }
    if (weft__proto_inject(bc->ctx, s->root, s->comm, s->tag, data, s->len, give))
        weft_log_error("dynamic broadcast from rank %d: out of memory; not delivered", s->root);
}

/* The root serves the ranks left unserved itself (round 2). */
static void redo(struct weft__bcast *bc, bc_state_t *s)
{
    ivec_t todo = {0};
    for (int i = 0; i < s->unserved.n; i++) {
        int r = s->unserved.v[i];
        if (!ivec_has(&s->dead, r) && !ivec_has(&todo, r) && ivec_push(&todo, r))
            break;
    }
    s->unserved.n = 0;
    s->round = 2;
    if (todo.n == 0)
        return;
    if (!(s->served = calloc((size_t)todo.n, sizeof *s->served))) {
        free(todo.v);
        return;
    }
    for (int i = 0; i < todo.n; i++) {
        bc_child_t *c = &s->served[s->nserved++];
        c->rank = todo.v[i];
        s->acks_left++;
        watch_child(bc, s, c, 2);
        send_announce(bc, s, c->rank, NULL, 0, true);
        for (uint32_t k = 0; k < s->npieces; k++)
            send_piece(bc, s, c->rank, k);
    }
    atomic_fetch_add_explicit(&bc->redone, (uint64_t)todo.n, memory_order_relaxed);
    free(todo.v);
}

static void signal_done(bc_state_t *s, int error, int source)
{
    weft_comp_entry_t e = {.user_context = s->user_context,
                           .error = error,
                           .source = source,
                           .tag = s->tag,
                           .length = (size_t)s->len};
    weft__comp_signal_copy(s->done, &e); /* s goes right after */
}

/* Move s on as far as what arrived allows. */
static void advance(struct weft__bcast *bc, bc_state_t *s)
{
    bool all = s->nhave == s->npieces;
    if (!s->delivered && all) {
        if (s->claimed) /* in place already; ended below */
            mark_delivered(bc, s);
        else
            deliver(bc, s);
    }
    /* The application's receive ends once nothing writes or reads its
     * buffer any more: whole, or for good without its root. */
    if (s->claimed && s->fwd_out == 0 && s->recv_out == 0 &&
        (all || bc->ctx->gates[s->root].dead)) {
        weft__proto_claim_end(bc->ctx, s->claimed, (size_t)s->len,
                              all ? WEFT_OK : bc->ctx->gates[s->root].dead);
        s->claimed = NULL;
    }
    if (s->delivered && s->redo_ack) {
        s->redo_ack = false;
        send_ack(bc, s, s->root, 2, false);
    }
    if (!s->answered && (s->delivered || s->is_root) && s->acks_left == 0) {
        if (s->is_root && s->round == 1 && s->unserved.n) {
            redo(bc, s);
            if (s->acks_left)
                return;
        }
        s->answered = true;
        if (s->is_root) {
            atomic_fetch_add_explicit(&bc->dead, (uint64_t)s->dead.n, memory_order_relaxed);
            /* Signaled once this layer is done with the caller's buffer. */
        } else if (bc->ctx->gates[s->ack_to].dead && s->ack_to != s->root) {
            /* The parent died: the root hears it from this rank itself
             * (its round 2 takes the answer, even one sent before it asks),
             * so that a rank that has the data and then ends its job is not
             * taken for dead. */
            send_ack(bc, s, s->root, 2, true);
        } else {
            send_ack(bc, s, s->ack_to, s->ack_round, true);
        }
    }
    if (s->answered && s->fwd_out == 0 && s->recv_out == 0 && s->acks_out == 0 && !s->claimed) {
        state_unlink(bc, s);
        if (s->is_root)
            signal_done(s, s->dead.n ? WEFT_EPEERDEAD : WEFT_OK,
                        s->dead.n ? s->dead.v[0] : s->root);
        state_free(s);
    }
}

/* Take piece k of broadcast (root, seq) from rank from into nothing: the
 * root's round 2 sends every piece, and its sends must end. */
static void drop_piece(struct weft__bcast *bc, int from, int root, uint32_t seq, uint32_t k)
{
    weft_sr_irecv_comp(bc->ctx, from, BC_DATA, piece_tag(root, seq, k), NULL, 0, &bc->h_drop.comp,
                       NULL);
}

/* Post the receives of the pieces s still lacks, from rank from; with
 * every_one (the root's round 2, which sends them all) those it has are
 * taken into nothing. */
static void want_pieces(struct weft__bcast *bc, bc_state_t *s, int from, bool every_one)
{
    for (uint32_t k = 0; k < s->npieces; k++) {
        if (s->have[k]) {
            if (every_one)
                drop_piece(bc, from, s->root, s->seq, k);
            continue;
        }
        uint64_t off = (uint64_t)k * s->piece;
        s->recv_out++;
        if (weft_sr_irecv_comp(bc->ctx, from, BC_DATA, piece_tag(s->root, s->seq, k), s->buf + off,
                               piece_len(s, k), every_one ? &bc->h_piece2.comp : &bc->h_piece.comp,
                               &s->slot[k]) != WEFT_OK) {
            weft_comp_entry_t e = {.user_context = &s->slot[k], .error = WEFT_EPEERDEAD};
            push_entry(bc, every_one ? EV_PIECE2 : EV_PIECE, &e);
        }
    }
}

/* A routing message from rank from. */
static void on_announce(struct weft__bcast *bc, int from, const uint8_t *p, size_t len)
{
    weft_ctx_t *ctx = bc->ctx;
    if (len < BC_HDR)
        goto bad;
    int root = (int)weft__le32_get(p);
    uint32_t seq = weft__le32_get(p + 4), comm = weft__le32_get(p + 8);
    uint32_t flags = weft__le32_get(p + 12);
    uint64_t tag = weft__le64_get(p + 16), dlen = weft__le64_get(p + 24);
    uint64_t piece = weft__le64_get(p + 32);
    uint32_t nsub = weft__le32_get(p + 40);
    uint32_t tree = weft__le32_get(p + 44) & 0xff, arity = weft__le32_get(p + 44) >> 8;
    bool inl = flags & F_INLINE, is_redo = flags & F_REDO;
    if (root < 0 || root >= ctx->size || nsub > (uint32_t)ctx->size || (len - BC_HDR) / 4 < nsub ||
        len - BC_HDR - 4 * (size_t)nsub != (inl ? dlen : 0) ||
        (!inl && (piece == 0 || (dlen + piece - 1) / piece > BC_PIECES)))
        goto bad;
    const uint8_t *ranks = p + BC_HDR, *data = ranks + 4 * (size_t)nsub;
    bc_state_t *s = state_find(bc, root, seq);
    if (is_redo) {
        if (s) {
            s->redo_ack = true;
            if (!s->delivered && inl) {
                memcpy(s->buf, data, (size_t)dlen);
                s->nhave = s->npieces;
            } else {
                want_pieces(bc, s, root, true);
            }
            advance(bc, s);
            return;
        }
        if (ring_has(bc, id_of(root, seq))) {
            bc_state_t tmp = {.root = root, .seq = seq};
            for (uint32_t k = 0; !inl && k < (uint32_t)((dlen + piece - 1) / piece); k++)
                drop_piece(bc, root, root, seq, k);
            send_ack(bc, &tmp, root, 2, false);
            return;
        }
    } else if (s) {
        goto bad;
    }
    if (!(s = calloc(1, sizeof *s)))
        goto nomem;
    s->root = root;
    s->seq = seq;
    s->comm = comm;
    s->tag = tag;
    s->len = dlen;
    s->piece = inl ? 0 : piece;
    s->npieces = inl ? 0 : (uint32_t)((dlen + piece - 1) / piece);
    s->ack_to = is_redo ? root : from;
    s->ack_round = is_redo ? 2 : 1;
    s->tree = tree;
    s->arity = arity;
    s->own_buf = false;
    if (!(s->have = calloc(s->npieces ? s->npieces : 1, 1)) ||
        !(s->slot = malloc((s->npieces ? s->npieces : 1) * sizeof *s->slot)) ||
        (nsub && !(s->route = malloc(nsub * sizeof *s->route)))) {
        state_free(s);
        goto nomem;
    }
    for (uint32_t k = 0; k < s->npieces; k++)
        s->slot[k] = s;
    for (uint32_t i = 0; i < nsub; i++) {
        s->route[i] = (int)weft__le32_get(ranks + 4 * (size_t)i);
        if (s->route[i] < 0 || s->route[i] >= ctx->size) {
            state_free(s);
            goto bad;
        }
    }
    /* Pieces land in the application's buffer where its receive is posted
     * already; else in ours, handed to matching once whole. */
    void *ubuf = NULL;
    if (!inl && dlen && (s->claimed = weft__proto_claim(ctx, root, comm, tag, (size_t)dlen, &ubuf)))
        s->buf = ubuf;
    else if ((s->buf = malloc(dlen ? (size_t)dlen : 1)))
        s->own_buf = true;
    else {
        state_free(s);
        goto nomem;
    }
    s->nroute = (int)nsub;
    if (inl && dlen)
        memcpy(s->buf, data, (size_t)dlen);
    s->next = bc->states;
    bc->states = s;
    start_children(bc, s);
    if (!inl)
        want_pieces(bc, s, from, false);
    advance(bc, s);
    return;
bad:
    weft_log_error("dynamic broadcast: dropped a malformed routing message from rank %d", from);
    return;
nomem:
    weft_log_error("dynamic broadcast: out of memory; dropped a broadcast from rank %d", from);
}

/* A piece that will not come from this rank: a message of no bytes on its
 * tag, which ends the child's receive of it without writing anything. */
static void send_tombstone(struct weft__bcast *bc, bc_state_t *s, int peer, uint32_t k)
{
    weft_sr_isend_comp(bc->ctx, peer, BC_DATA, piece_tag(s->root, s->seq, k), NULL, 0,
                       &bc->h_sent_token.comp, NULL);
}

static void on_piece_event(struct weft__bcast *bc, bc_event_t *ev)
{
    bc_state_t **slot = ev->ptr, *s = *slot;
    uint32_t k = (uint32_t)(slot - s->slot);
    s->recv_out--;
    if (k >= s->npieces) {
        advance(bc, s);
        return;
    }
    /* A failure, or a tombstone from a parent that lost the piece. */
    if (ev->error == WEFT_OK && ev->len == piece_len(s, k) && !s->have[k]) {
        s->have[k] = 1;
        s->nhave++;
    }
    /* Each receive from the parent ends once, and so is answered down the
     * tree once: by the piece, or by a tombstone where this rank has none,
     * so that every receive posted below ends too. A rank served by the
     * root itself (round 2) has no children. */
    if (ev->kind == EV_PIECE)
        for (int i = 0; i < s->nchild; i++) {
            if (s->have[k])
                send_piece(bc, s, s->child[i].rank, k);
            else
                send_tombstone(bc, s, s->child[i].rank, k);
            atomic_fetch_add_explicit(&bc->forwarded, 1, memory_order_relaxed);
        }
    advance(bc, s);
}

static void on_ack_event(struct weft__bcast *bc, bc_event_t *ev)
{
    bc_child_t *c = ev->ptr;
    bc_state_t *s = c->s;
    s->acks_out--;
    s->acks_left--;
    if (ev->error && ev->error != WEFT_ETRUNC) {
        /* It died (or its answer is lost): its subtree is served again. */
        if (!ivec_has(&s->dead, c->rank))
            ivec_push(&s->dead, c->rank);
        for (int i = 0; i < c->nsub; i++)
            ivec_push(&s->unserved, c->sub[i]);
    } else if (ev->len >= 8 && ev->error == WEFT_OK) {
        uint32_t nd = weft__le32_get(c->ack), nu = weft__le32_get(c->ack + 4);
        if ((ev->len - 8) / 4 >= (uint64_t)nd + nu) {
            for (uint32_t i = 0; i < nd; i++) {
                int r = (int)weft__le32_get(c->ack + 8 + 4 * (size_t)i);
                if (!ivec_has(&s->dead, r))
                    ivec_push(&s->dead, r);
            }
            for (uint32_t i = 0; i < nu; i++)
                ivec_push(&s->unserved, (int)weft__le32_get(c->ack + 8 + 4 * (size_t)(nd + i)));
        }
    }
    advance(bc, s);
}

static void run_event(struct weft__bcast *bc, bc_event_t *ev)
{
    switch (ev->kind) {
    case EV_ANNOUNCE:
        on_announce(bc, ev->source, ev->data, ev->len);
        break;
    case EV_FETCH: {
        /* Received by its tag into the buffer made for it, then taken. */
        int rc = weft_sr_irecv_comp(bc->ctx, ev->source, BC_CTRL, ev->tag, ev->data, ev->len,
                                    &bc->h_fetch.comp, ev);
        if (rc == WEFT_OK)
            return; /* the event is the receive's now */
        weft_log_error("dynamic broadcast: lost a routing message from rank %d: %s", ev->source,
                       weft_strerror(rc));
        break;
    }
    case EV_PIECE:
    case EV_PIECE2:
        on_piece_event(bc, ev);
        break;
    case EV_ACK:
        on_ack_event(bc, ev);
        break;
    case EV_SENT: {
        bc_state_t *s = ev->ptr;
        s->fwd_out--;
        advance(bc, s);
        break;
    }
    case EV_START: {
        bc_state_t *s = ev->ptr;
        s->next = bc->states;
        bc->states = s;
        start_children(bc, s);
        for (uint32_t k = 0; k < s->npieces; k++)
            for (int i = 0; i < s->nchild; i++)
                send_piece(bc, s, s->child[i].rank, k);
        advance(bc, s);
        break;
    }
    case EV_LOST: /* the broadcasts it was the root of may end now */
        for (bc_state_t *s = bc->states, *next; s; s = next) {
            next = s->next;
            if (s->root == ev->source)
                advance(bc, s);
        }
        break;
    default:
        break;
    }
    free(ev->data);
    free(ev);
}

/* Run the queued events, unless another thread does. */
static int drain(struct weft__bcast *bc)
{
    int n = 0;
    while (atomic_load_explicit(&bc->nev, memory_order_seq_cst) && weft_lock_try(&bc->work)) {
        for (;;) {
            weft_lock_acquire(&bc->ev_lock);
            bc_event_t *ev = bc->ev_head;
            bc->ev_head = bc->ev_tail = NULL;
            atomic_store_explicit(&bc->nev, 0, memory_order_seq_cst);
            weft_lock_release(&bc->ev_lock);
            if (!ev)
                break;
            while (ev) {
                bc_event_t *next = ev->next;
                run_event(bc, ev);
                ev = next;
                n++;
            }
        }
        weft_lock_release(&bc->work);
    }
    return n;
}

static int bc_progress(void *arg)
{
    struct weft__bcast *bc = arg;
    /* Off first, then look (a read-modify-write: after the store as a fence
     * would be, and ThreadSanitizer knows it): an event queued after the
     * look arms it again. */
    weft_progress_arm(bc->ctx, bc->progress_id, 0);
    if (!atomic_fetch_add(&bc->nev, 0))
        return 0;
    weft_progress_arm(bc->ctx, bc->progress_id, 1);
    return drain(bc);
}

/* -------------------------------------------------------------- the caller */

typedef struct prio_rank {
    int rank, prio, index;
} prio_rank_t;

static int prio_cmp(const void *a, const void *b)
{
    const prio_rank_t *x = a, *y = b;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int rank_cmp(const void *a, const void *b)
{
    const prio_rank_t *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int weft_bcast_dynamic(weft_ctx_t *ctx, const void *buf, size_t len, const int *ranks,
                       const int *priorities, int n, uint32_t comm, uint64_t tag,
                       const weft_bcast_opts_t *opts, weft_comp_t *done, void *user_context)
{
    if (!ctx || !weft__comp_valid(done) || (len && !buf) || (n && !ranks) || n < 0 ||
        tag == WEFT_ANY_TAG)
        return WEFT_EINVAL;
    struct weft__bcast *bc = ctx->bcast;
    uint32_t tree = opts ? opts->tree : WEFT_BCAST_BINOMIAL;
    if (tree > WEFT_BCAST_CHAIN)
        return WEFT_EINVAL;
    if (!bc || ctx->size >= (1 << 24))
        return WEFT_EUNSUPPORTED;
    size_t piece = opts && opts->piece ? opts->piece : bc->piece_default;
    size_t inl = opts && opts->inline_max ? opts->inline_max : bc->inline_default;
    bool inline_data = len <= inl;
    if (!inline_data && (len + piece - 1) / piece > BC_PIECES)
        return WEFT_EUNSUPPORTED;
    prio_rank_t *pr = malloc(((size_t)n + 1) * sizeof *pr);
    bc_state_t *s = calloc(1, sizeof *s);
    bc_event_t *ev = event_new(EV_START);
    int rc = WEFT_ENOMEM;
    if (!pr || !s || !ev || (n && !(s->route = malloc((size_t)n * sizeof *s->route))))
        goto fail;
    for (int i = 0; i < n; i++) {
        pr[i] = (prio_rank_t){ranks[i], priorities ? priorities[i] : 0, i};
        if (ranks[i] < 0 || ranks[i] >= ctx->size || ranks[i] == ctx->rank) {
            rc = WEFT_ERANK;
            goto fail;
        }
    }
    qsort(pr, (size_t)n, sizeof *pr, rank_cmp);
    for (int i = 1; i < n; i++)
        if (pr[i].rank == pr[i - 1].rank) {
            rc = WEFT_EINVAL;
            goto fail;
        }
    qsort(pr, (size_t)n, sizeof *pr, prio_cmp);
    for (int i = 0; i < n; i++)
        s->route[i] = pr[i].rank;
    free(pr);
    s->nroute = n;
    s->is_root = true;
    s->root = s->ack_to = ctx->rank;
    s->seq = atomic_fetch_add_explicit(&bc->seq, 1, memory_order_relaxed);
    s->comm = comm;
    s->tag = tag;
    s->len = len;
    s->piece = inline_data ? 0 : piece;
    s->npieces = inline_data ? 0 : (uint32_t)((len + piece - 1) / piece);
    s->nhave = s->npieces;
    s->buf = (uint8_t *)buf; /* read only: the caller's */
    s->delivered = true;
    s->round = 1;
    s->done = done;
    s->user_context = user_context;
    s->tree = tree;
    s->arity = opts ? WEFT_MIN(opts->arity, 0xffffffu) : 0;
    ev->ptr = s;
    atomic_fetch_add_explicit(&bc->started, 1, memory_order_relaxed);
    push(bc, ev);
    drain(bc);
    return WEFT_OK;
fail:
    free(pr);
    free(ev);
    if (s)
        state_free(s);
    return rc;
}

int weft_bcast_counters_get(weft_ctx_t *ctx, weft_bcast_counters_t *out)
{
    if (!ctx || !out || !ctx->bcast)
        return WEFT_EINVAL;
    struct weft__bcast *bc = ctx->bcast;
    out->started = atomic_load(&bc->started);
    out->received = atomic_load(&bc->received);
    out->forwarded = atomic_load(&bc->forwarded);
    out->redone = atomic_load(&bc->redone);
    out->dead = atomic_load(&bc->dead);
    return WEFT_OK;
}

/* ---------------------------------------------------------------- the layer */

void weft__coll_peer_lost(struct weft_ctx *ctx, int peer)
{
    struct weft__bcast *bc = ctx->bcast;
    bc_event_t *ev = bc ? event_new(EV_LOST) : NULL;
    if (!ev)
        return;
    ev->source = peer;
    push(bc, ev);
}

void weft__coll_abandon(struct weft_ctx *ctx)
{
    struct weft__bcast *bc = ctx->bcast;
    if (!bc || !weft_lock_try(&bc->work))
        return;
    for (bc_state_t *s = bc->states; s; s = s->next)
        if (s->claimed) {
            weft_list_push_back(&ctx->live_requests, &s->claimed->link);
            s->claimed = NULL;
        }
    weft_lock_release(&bc->work);
}

bool weft__coll_busy(struct weft_ctx *ctx)
{
    struct weft__bcast *bc = ctx->bcast;
    if (!bc)
        return false;
    drain(bc);
    if (!weft_lock_try(&bc->work))
        return true; /* another thread is at it */
    bool busy = atomic_load_explicit(&bc->nev, memory_order_acquire) != 0;
    for (bc_state_t *s = bc->states; s && !busy; s = s->next)
        busy =
            !s->is_root && !s->answered && !ctx->gates[s->root].dead && !ctx->gates[s->ack_to].dead;
    weft_lock_release(&bc->work);
    return busy;
}

int weft__coll_init(struct weft_ctx *ctx)
{
    int rc = weft__sched_init(ctx);
    if (rc)
        return rc;
    struct weft__bcast *bc = calloc(1, sizeof *bc);
    if (!bc) {
        weft__sched_fini(ctx);
        return WEFT_ENOMEM;
    }
    bc->ctx = ctx;
    weft_lock_init(&bc->ev_lock, WEFT_LOCK_SPIN);
    weft_lock_init(&bc->work, WEFT_LOCK_SPIN);
    weft_handler_init(&bc->h_piece, on_piece, bc);
    weft_handler_init(&bc->h_piece2, on_piece2, bc);
    weft_handler_init(&bc->h_ack, on_ack, bc);
    weft_handler_init(&bc->h_sent_piece, on_sent_piece, bc);
    weft_handler_init(&bc->h_sent_token, on_sent_token, bc);
    weft_handler_init(&bc->h_fetch, on_fetch, bc);
    weft_handler_init(&bc->h_drop, on_dropped, bc);
    bc->piece_default = weft__param_size("WEFT_BCAST_PIECE", 256 * 1024);
    if (bc->piece_default == 0)
        bc->piece_default = 256 * 1024;
    bc->inline_default = weft__param_size("WEFT_BCAST_INLINE", 4096);
    for (unsigned i = 0; i < BC_RING; i++)
        bc->ring[i] = UINT64_MAX;
    rc = weft_progress_register(ctx, bc_progress, bc, &bc->progress_id);
    if (rc) {
        free(bc);
        weft__sched_fini(ctx);
        return rc;
    }
    weft_progress_arm(ctx, bc->progress_id, 0);
    if ((rc = weft__sink_set(ctx, BC_CTRL, bc_sink, bc))) {
        weft_progress_unregister(ctx, bc->progress_id);
        free(bc);
        weft__sched_fini(ctx);
        return rc;
    }
    ctx->bcast = bc;
    return WEFT_OK;
}

void weft__coll_fini(struct weft_ctx *ctx)
{
    weft__sched_fini(ctx);
    struct weft__bcast *bc = ctx->bcast;
    if (!bc)
        return;
    ctx->bcast = NULL;
    for (bc_event_t *ev = bc->ev_head, *next; ev; ev = next) {
        next = ev->next;
        if (ev->kind == EV_START) {
            bc_state_t *s = ev->ptr;
            s->next = bc->states;
            bc->states = s;
        }
        free(ev->data);
        free(ev);
    }
    for (bc_state_t *s = bc->states, *next; s; s = next) {
        next = s->next;
        if (s->is_root)
            signal_done(s, WEFT_ECANCELED, s->root);
        state_free(s);
    }
    weft_lock_destroy(&bc->ev_lock);
    weft_lock_destroy(&bc->work);
    free(bc);
}
