/* One-sided operations (MPI 3.1 §11.3): put, get, the accumulates and the
 * atomics, on any flavour and any path (mpi_win_int.h), and the server
 * that applies the requests of origins that reach this process by message.
 *
 * An operation walks the target datatype into pieces (byte ranges from the
 * target's base, in type-map order, adjacent ones merged) and moves the
 * origin's data as one packed stream against them. Accumulates work on the
 * elements of the one predefined type both sides are made of: the stream
 * is converted to an array of it (the same bytes, but for the pair types
 * whose members leave a hole), and each element is applied atomically: a
 * CPU compare-and-swap on 1, 2, 4 and 8 bytes, otherwise under the
 * target's accumulate lock, which every applier of that target takes. Two
 * accumulates to one location use the same type (§11.7.1), so they always
 * agree on which.
 *
 * Requests carry their target pieces (byte ranges for puts and gets,
 * element runs for accumulates) and data, split below WEFT_WIN_REQ_MAX.
 * The server is a progress callback with SLOTS receives posted on
 * WEFT_WIN_COMM_REQ, completing into one queue; it never runs twice at once
 * (weft_progress_register), so requests are applied in the order they
 * arrived. Answers (data, old values, flush and lock grants) go on
 * WEFT_WIN_COMM_REPLY with the tag the origin chose and posted a receive
 * for; the origin's handler finishes the operation when its last answer
 * is in. */
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_type_int.h"
#include "mpi/mpi_win_int.h"
#include "weft/weft_comp.h"

#define SLOTS 16

enum { K_PUT = 1, K_GET, K_ACC, K_GACC, K_CAS, K_FLUSH, K_LOCK, K_UNLOCK, K_PUT_RDV };

typedef struct win_req {
    uint32_t win, kind;
    uint16_t type, op; /* indices in basic_types[] and ops[] */
    uint32_t nseg;
    uint64_t reply_tag;
    uint64_t len; /* data bytes after the segments */
    int32_t origin, lock_type;
    uint64_t pad;
} win_req_t;
/* The data after the header and the segments is aligned for any type. */
_Static_assert(sizeof(win_req_t) % 16 == 0, "a request's data is 16-byte aligned");

/* A piece of the target: bytes (off, len) for puts and gets; for
 * accumulates, len elements from off. off is from the target's base. */
typedef struct win_seg {
    uint64_t off, len;
} win_seg_t;

/* ---------------------------------------------------------------- type and op numbers */

#define TYPE_ENTRY(mpi, obj) &weft_mpi_type_##obj,
static MPI_Datatype const basic_types[] = {WEFT_MPI_PREDEFINED_TYPES(TYPE_ENTRY)};
#undef TYPE_ENTRY
#define OP_ENTRY(mpi, obj) &weft_mpi_op_##obj,
static MPI_Op const ops[] = {WEFT_MPI_PREDEFINED_OPS(OP_ENTRY)};
#undef OP_ENTRY
#define NTYPES (sizeof basic_types / sizeof basic_types[0])
#define NOPS   (sizeof ops / sizeof ops[0])

static int type_index(MPI_Datatype t)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (basic_types[i] == t)
            return (int)i;
    return -1;
}

static int op_index(MPI_Op op)
{
    for (size_t i = 0; i < NOPS; i++)
        if (ops[i] == op)
            return (int)i;
    return -1;
}

/* ---------------------------------------------------------------- applying */

/* The target's accumulate lock (ctl->acc: -1 held exclusively, else the
 * number of shared holders). Appliers of CPU atomics (short runs of 1 to 8
 * byte elements) share it; an applier of a whole run at once (a long run,
 * or elements no CPU atomic covers) holds it alone. So the two never touch
 * one element at the same time, and long runs go at memory speed. */
#define ACC_BULK 16

static void acc_enter(weft__win_ctl_t *ctl, bool alone)
{
    for (unsigned spins = 1;; spins++) {
        int v = atomic_load_explicit(&ctl->acc, memory_order_relaxed);
        if ((alone ? v == 0 : v >= 0) &&
            atomic_compare_exchange_weak_explicit(&ctl->acc, &v, alone ? -1 : v + 1,
                                                  memory_order_acquire, memory_order_relaxed))
            return;
        if (spins % 64 == 0)
            sched_yield(); /* the holder may be waiting for this core */
    }
}

static void acc_leave(weft__win_ctl_t *ctl, bool alone)
{
    if (alone)
        atomic_store_explicit(&ctl->acc, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(&ctl->acc, 1, memory_order_release);
}

/* The value op gives from origin element in and target value cur. */
#define NEXT(T)                                                                                    \
    T nv = cur;                                                                                    \
    if (op == MPI_REPLACE)                                                                         \
        memcpy(&nv, in, sizeof nv);                                                                \
    else                                                                                           \
        weft__mpi_op_apply(op, in, &nv, 1, basic);

#define CAS_LOOP(T)                                                                                \
    do {                                                                                           \
        T *t = (T *)tgt, cur = __atomic_load_n(t, __ATOMIC_ACQUIRE);                               \
        if (op != MPI_NO_OP) {                                                                     \
            if (op == MPI_SUM && int_like) {                                                       \
                T v;                                                                               \
                memcpy(&v, in, sizeof v);                                                          \
                cur = __atomic_fetch_add(t, v, __ATOMIC_ACQ_REL);                                  \
            } else {                                                                               \
                for (;;) {                                                                         \
                    NEXT(T)                                                                        \
                    if (__atomic_compare_exchange_n(t, &cur, nv, false, __ATOMIC_ACQ_REL,          \
                                                    __ATOMIC_ACQUIRE))                             \
                        break;                                                                     \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        if (old)                                                                                   \
            memcpy(old, &cur, sizeof cur);                                                         \
    } while (0)

/* Apply op to n elements of basic at tgt from src (both arrays of it);
 * old, when not NULL, receives the values before. Atomic per element
 * against every other applier of the same target (ctl). */
static void apply(MPI_Op op, MPI_Datatype basic, char *tgt, const char *src, size_t n, char *old,
                  weft__win_ctl_t *ctl)
{
    size_t ext = (size_t)weft__mpi_type_extent(basic);
    bool int_like = basic->basic == WEFT_MPI_B_INT || basic->basic == WEFT_MPI_B_UINT;
    if (basic->size != ext || (ext != 1 && ext != 2 && ext != 4 && ext != 8) || n >= ACC_BULK) {
        acc_enter(ctl, true);
        if (old)
            memcpy(old, tgt, n * ext);
        if (op != MPI_NO_OP)
            weft__mpi_op_apply(op, src, tgt, n, basic);
        acc_leave(ctl, true);
        return;
    }
    acc_enter(ctl, false);
    for (size_t i = 0; i < n; i++, tgt += ext, src += ext, old = old ? old + ext : NULL) {
        const char *in = src;
        switch (ext) {
        case 1:
            CAS_LOOP(uint8_t);
            break;
        case 2:
            CAS_LOOP(uint16_t);
            break;
        case 4:
            CAS_LOOP(uint32_t);
            break;
        default:
            CAS_LOOP(uint64_t);
            break;
        }
    }
    acc_leave(ctl, false);
}

/* Compare-and-swap of one element of ext bytes (1, 2, 4 or 8). */
static void cas(char *tgt, const char *val, const char *cmp, char *old, size_t ext,
                weft__win_ctl_t *ctl)
{
    acc_enter(ctl, false);
#define CAS_ONE(T)                                                                                 \
    do {                                                                                           \
        T c, v;                                                                                    \
        memcpy(&c, cmp, sizeof c);                                                                 \
        memcpy(&v, val, sizeof v);                                                                 \
        __atomic_compare_exchange_n((T *)tgt, &c, v, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);   \
        memcpy(old, &c, sizeof c);                                                                 \
    } while (0)
    switch (ext) {
    case 1:
        CAS_ONE(uint8_t);
        break;
    case 2:
        CAS_ONE(uint16_t);
        break;
    case 4:
        CAS_ONE(uint32_t);
        break;
    default:
        CAS_ONE(uint64_t);
        break;
    }
#undef CAS_ONE
    acc_leave(ctl, false);
}

/* ---------------------------------------------------------------- walking the target */

/* The pieces of count elements of t from off, merged where adjacent. */
typedef struct walk {
    MPI_Datatype t;
    size_t count, e;
    int s;
    MPI_Aint off;
    bool have;
    MPI_Aint p_off;
    size_t p_len;
} walk_t;

static void walk_init(walk_t *w, MPI_Datatype t, size_t count, MPI_Aint off)
{
    *w = (walk_t){.t = t, .count = count, .off = off};
}

static bool walk_next(walk_t *w, MPI_Aint *off, size_t *len)
{
    if (w->t->contig) {
        /* One range: the common case, without a step per element. */
        if (w->e == w->count)
            return false;
        w->e = w->count;
        *off = w->off + w->t->true_lb;
        *len = w->count * w->t->size;
        return *len > 0;
    }
    MPI_Aint ext = weft__mpi_type_extent(w->t);
    while (w->e < w->count) {
        const weft_mpi_seg_t *sg = &w->t->segs[w->s];
        MPI_Aint o = w->off + (MPI_Aint)w->e * ext + sg->off;
        size_t l = sg->len;
        if (++w->s == w->t->nsegs) {
            w->s = 0;
            w->e++;
        }
        if (!l)
            continue;
        if (w->have && w->p_off + (MPI_Aint)w->p_len == o) {
            w->p_len += l;
            continue;
        }
        bool had = w->have;
        MPI_Aint po = w->p_off;
        size_t pl = w->p_len;
        w->have = true;
        w->p_off = o;
        w->p_len = l;
        if (had) {
            *off = po;
            *len = pl;
            return true;
        }
    }
    if (!w->have)
        return false;
    w->have = false;
    *off = w->p_off;
    *len = w->p_len;
    return true;
}

/* Accumulates: the runs of elements of basic (esz bytes of data, ext in
 * memory) in the pieces of the walk; an element starts at the piece byte
 * whose place in the packed stream is a multiple of esz. */
typedef struct runs {
    walk_t w;
    size_t esz, ext;
    size_t pos; /* packed bytes walked */
    MPI_Aint p_off;
    size_t p_len, p_at; /* the piece being cut, and how far */
    bool have;
} runs_t;

static bool runs_next(runs_t *r, MPI_Aint *off, size_t *n)
{
    bool got = false;
    for (;;) {
        if (!r->have) {
            if (!walk_next(&r->w, &r->p_off, &r->p_len))
                return got;
            r->have = true;
            r->p_at = 0;
        }
        if (r->esz == r->ext) {
            /* Whole elements: the piece is one run. */
            size_t k = (r->p_len - r->p_at) / r->esz;
            if (got && *off + (MPI_Aint)(*n * r->ext) != r->p_off + (MPI_Aint)r->p_at)
                return true;
            if (!got)
                *off = r->p_off + (MPI_Aint)r->p_at, *n = 0;
            *n += k;
            got = true;
            r->pos += r->p_len - r->p_at;
            r->have = false;
            continue;
        }
        /* Elements with holes: each starts where the stream reaches a
         * multiple of esz. */
        size_t skip = (r->esz - r->pos % r->esz) % r->esz;
        if (r->p_at + skip >= r->p_len) {
            r->pos += r->p_len - r->p_at;
            r->have = false;
            continue;
        }
        r->p_at += skip;
        r->pos += skip;
        MPI_Aint at = r->p_off + (MPI_Aint)r->p_at;
        if (got && *off + (MPI_Aint)(*n * r->ext) != at)
            return true;
        if (!got)
            *off = at, *n = 0;
        (*n)++;
        got = true;
        size_t step = r->esz < r->p_len - r->p_at ? r->esz : r->p_len - r->p_at;
        r->p_at += step;
        r->pos += step;
    }
}

/* ---------------------------------------------------------------- the server */

/* A flush or unlock waiting for large puts' data (win->rdv_pending). */
typedef struct held {
    struct held *next;
    MPI_Win win;
    int origin, source, kind, lock_type;
    uint64_t reply_tag;
} held_t;

/* Where a large put's data lands: counted until it is in. */
typedef struct rdv_in {
    MPI_Win win;
    int origin;
    char *scratch; /* a put outside the window: received here, dropped */
} rdv_in_t;

typedef struct pending_lock {
    struct pending_lock *next;
    MPI_Win win;
    int source, type;
    uint64_t reply_tag;
} pending_lock_t;

static struct {
    bool up;
    weft_ctx_t *ctx;
    weft_cq_t *cq;
    char *slot[SLOTS];
    int progress_id;
    atomic_int users;
    weft_handler_t free_buf, reply_done, data_in, data_sent;
    weft_counter_t fire; /* sends that need nothing done once sent */
    /* Flushes and unlocks held back until their origin's large puts are in
     * place; the server's own. */
    struct held *held;
    pending_lock_t *locks; /* waiting for the lock word; the server's own */
    _Atomic uint64_t next_tag;
} srv;

static void free_buf(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    free(e->user_context);
}

static int post(int i)
{
    return weft_sr_irecv_comp(srv.ctx, WEFT_ANY_SOURCE, WEFT_WIN_COMM_REQ, WEFT_ANY_TAG,
                              srv.slot[i], WEFT_WIN_REQ_MAX, weft_cq_comp(srv.cq), &srv.slot[i]);
}

/* Send len bytes at buf (malloc'd, given away) as the answer tagged tag. */
static void answer(int dest, uint64_t tag, void *buf, size_t len)
{
    if (weft_sr_isend_comp(srv.ctx, dest, WEFT_WIN_COMM_REPLY, tag, buf, len,
                           weft_handler_comp(&srv.free_buf), buf) != WEFT_OK)
        free(buf);
}

static void answer_code(int dest, uint64_t tag, int32_t code)
{
    int32_t *c = malloc(sizeof *c);
    if (c) {
        *c = code;
        answer(dest, tag, c, sizeof *c);
    }
}

/* This process's bytes [off, off + len) of win, or NULL when outside. */
static char *target_at(MPI_Win win, uint64_t off, uint64_t len)
{
    if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return weft__win_attached(win, (uintptr_t)off, len) ? weft__mpi_at(NULL, (MPI_Aint)off)
                                                            : NULL;
    if (off > (uint64_t)win->bytes || len > (uint64_t)win->bytes - off)
        return NULL;
    return (char *)win->base + off;
}

static void serve_lock(MPI_Win win, int source, int type, uint64_t tag)
{
    if (weft__win_lock_try(win->ctl, type)) {
        answer_code(source, tag, 0);
        return;
    }
    pending_lock_t *p = malloc(sizeof *p);
    if (!p) {
        answer_code(source, tag, MPI_ERR_NO_MEM);
        return;
    }
    *p = (pending_lock_t){.win = win, .source = source, .type = type, .reply_tag = tag};
    pending_lock_t **pp = &srv.locks;
    while (*pp)
        pp = &(*pp)->next;
    *pp = p; /* in arrival order */
}

/* Grant what the lock words now allow. */
static int retry_locks(void)
{
    int n = 0;
    for (pending_lock_t **pp = &srv.locks; *pp;) {
        pending_lock_t *p = *pp;
        if (weft__win_lock_try(p->win->ctl, p->type)) {
            *pp = p->next;
            answer_code(p->source, p->reply_tag, 0);
            free(p);
            n++;
        } else {
            pp = &p->next;
        }
    }
    return n;
}

/* Keep the first failure of a completion (as an MPI class) in *slot. */
static void note_failure(atomic_int *slot, const weft_comp_entry_t *e)
{
    int none = 0;
    if (e->error != WEFT_OK)
        atomic_compare_exchange_strong(slot, &none, weft__mpi_err_from_weft(e->error));
}

static void data_in(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    rdv_in_t *in = e->user_context;
    note_failure(&in->win->req_err[in->origin], e);
    free(in->scratch);
    atomic_fetch_sub_explicit(&in->win->rdv_pending[in->origin], 1, memory_order_release);
    free(in);
}

/* A flush or an unlock: answered now, or held until the origin's large
 * puts are in place. */
static void finish_epoch_op(MPI_Win win, int origin, int source, int kind, int lock_type,
                            uint64_t tag)
{
    if (atomic_load_explicit(&win->rdv_pending[origin], memory_order_acquire) > 0) {
        held_t *h = malloc(sizeof *h);
        if (h) {
            *h = (held_t){.win = win,
                          .origin = origin,
                          .source = source,
                          .kind = kind,
                          .lock_type = lock_type,
                          .reply_tag = tag};
            held_t **pp = &srv.held;
            while (*pp)
                pp = &(*pp)->next;
            *pp = h;
            return;
        }
    }
    if (kind == K_UNLOCK)
        weft__win_unlock_word(win->ctl, lock_type);
    answer_code(source, tag, atomic_exchange(&win->req_err[origin], 0));
    if (kind == K_UNLOCK)
        retry_locks();
}

static int release_held(void)
{
    int n = 0;
    for (held_t **pp = &srv.held; *pp;) {
        held_t *h = *pp;
        if (atomic_load_explicit(&h->win->rdv_pending[h->origin], memory_order_acquire) > 0) {
            pp = &h->next;
            continue;
        }
        *pp = h->next;
        finish_epoch_op(h->win, h->origin, h->source, h->kind, h->lock_type, h->reply_tag);
        free(h);
        n++;
    }
    return n;
}

/* A large put's announcement: its data comes by itself on
 * WEFT_WIN_COMM_DATA, received straight into the window. */
static void serve_put_rdv(MPI_Win win, const weft_comp_entry_t *e, const win_req_t *r,
                          const win_seg_t *seg)
{
    rdv_in_t *in = calloc(1, sizeof *in);
    char *t = r->nseg == 1 ? target_at(win, seg->off, seg->len) : NULL;
    if (in && !t) {
        atomic_store(&win->req_err[r->origin], MPI_ERR_RMA_RANGE);
        t = in->scratch = malloc(r->nseg == 1 && seg->len ? seg->len : 1);
    }
    if (!in || !t) {
        free(in);
        atomic_store(&win->req_err[r->origin], MPI_ERR_NO_MEM);
        return;
    }
    in->win = win;
    in->origin = r->origin;
    atomic_fetch_add(&win->rdv_pending[r->origin], 1);
    if (weft_sr_irecv_comp(srv.ctx, e->source, WEFT_WIN_COMM_DATA, r->reply_tag, t,
                           r->nseg == 1 ? seg->len : 0, weft_handler_comp(&srv.data_in),
                           in) != WEFT_OK) {
        atomic_fetch_sub(&win->rdv_pending[r->origin], 1);
        atomic_store(&win->req_err[r->origin], MPI_ERR_OTHER);
        free(in->scratch);
        free(in);
    }
}

static void serve(const weft_comp_entry_t *e)
{
    const char *buf = *(char **)e->user_context;
    const win_req_t *r = (const win_req_t *)buf;
    if (e->length < sizeof *r)
        return;
    MPI_Win win = weft__win_find(r->win);
    if (!win || r->origin < 0 || r->origin >= win->size ||
        r->nseg > (e->length - sizeof *r) / sizeof(win_seg_t)) {
        weft__mpi_say("one-sided request for no window of this process, dropped");
        return;
    }
    (void)atomic_load_explicit(&win->served, memory_order_acquire);
    const win_seg_t *seg = (const win_seg_t *)(r + 1);
    const char *data = (const char *)(seg + r->nseg);
    size_t have = e->length - sizeof *r - r->nseg * sizeof *seg;
    MPI_Datatype basic = r->type < NTYPES ? basic_types[r->type] : MPI_BYTE;
    MPI_Op op = r->op < NOPS ? ops[r->op] : MPI_NO_OP;
    size_t ext = (size_t)weft__mpi_type_extent(basic);
    atomic_int *err = &win->req_err[r->origin];
    switch (r->kind) {
    case K_PUT:
    case K_ACC:
    case K_GET:
    case K_GACC: {
        bool elems = r->kind == K_ACC || r->kind == K_GACC;
        bool reply = r->kind == K_GET || r->kind == K_GACC;
        size_t total = 0;
        for (uint32_t i = 0; i < r->nseg; i++)
            total += elems ? seg[i].len * ext : seg[i].len;
        char *whole = r->kind == K_GET && r->nseg == 1 ? target_at(win, seg[0].off, total) : NULL;
        if (whole) {
            /* One range: answered from the window itself, no copy. */
            if (weft_sr_isend_comp(srv.ctx, e->source, WEFT_WIN_COMM_REPLY, r->reply_tag, whole,
                                   total, weft_counter_comp(&srv.fire), NULL) != WEFT_OK)
                atomic_store(err, MPI_ERR_OTHER);
            break;
        }
        bool short_data =
            r->kind != K_GET && (r->kind != K_GACC || op != MPI_NO_OP) && total > have;
        char *out = reply ? calloc(1, total ? total : 1) : NULL;
        if (short_data || (reply && !out)) {
            /* A request that does not hold what it says: applied not at all,
             * answered all the same (zeros) so that the origin does not wait
             * for ever, and told at its next flush. */
            atomic_store(err, short_data ? MPI_ERR_OTHER : MPI_ERR_NO_MEM);
            if (out)
                answer(e->source, r->reply_tag, out, total);
            return;
        }
        size_t at = 0;
        for (uint32_t i = 0; i < r->nseg; i++) {
            size_t bytes = elems ? seg[i].len * ext : seg[i].len;
            char *t = target_at(win, seg[i].off, bytes);
            if (!t) {
                atomic_store(err, MPI_ERR_RMA_RANGE);
            } else if (r->kind == K_PUT) {
                memcpy(t, data + at, bytes);
            } else if (r->kind == K_GET) {
                memcpy(out + at, t, bytes);
            } else {
                apply(op, basic, t, data + at, seg[i].len, reply ? out + at : NULL, win->ctl);
            }
            at += bytes;
        }
        if (reply)
            answer(e->source, r->reply_tag, out, total);
        break;
    }
    case K_CAS: {
        char *out = calloc(1, ext ? ext : 1);
        char *t = r->nseg == 1 && have >= 2 * ext ? target_at(win, seg[0].off, ext) : NULL;
        if (!t)
            atomic_store(err, MPI_ERR_RMA_RANGE);
        else if (out)
            cas(t, data, data + ext, out, ext, win->ctl);
        if (out)
            answer(e->source, r->reply_tag, out, ext);
        break;
    }
    case K_FLUSH:
    case K_UNLOCK:
        finish_epoch_op(win, r->origin, e->source, (int)r->kind, r->lock_type, r->reply_tag);
        break;
    case K_LOCK:
        serve_lock(win, e->source, r->lock_type, r->reply_tag);
        break;
    case K_PUT_RDV:
        serve_put_rdv(win, e, r, seg);
        break;
    default:
        break;
    }
    atomic_fetch_add_explicit(&win->served, 1, memory_order_release);
}

static int server(void *arg)
{
    (void)arg;
    int n = 0;
    weft_comp_entry_t e;
    while (weft_cq_pop(srv.cq, &e) == WEFT_OK) {
        if (e.error != WEFT_OK)
            continue; /* canceled at the engine's end, or its sender died */
        serve(&e);
        post((int)((char **)e.user_context - srv.slot));
        n++;
    }
    if (srv.held)
        n += release_held();
    if (srv.locks)
        n += retry_locks();
    return n;
}

static void reply_done(const weft_comp_entry_t *e, void *arg);
static void data_sent(const weft_comp_entry_t *e, void *arg);

int weft__win_server_start(void)
{
    static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&start_lock);
    int rc = WEFT_OK;
    if (!srv.up) {
        srv.ctx = weft__mpi.ctx;
        weft_handler_init(&srv.free_buf, free_buf, NULL);
        weft_handler_init(&srv.reply_done, reply_done, NULL);
        weft_handler_init(&srv.data_in, data_in, NULL);
        weft_handler_init(&srv.data_sent, data_sent, NULL);
        weft_counter_init(&srv.fire, 0);
        if (!srv.cq)
            rc = weft_cq_create(2 * SLOTS, &srv.cq);
        for (int i = 0; rc == WEFT_OK && i < SLOTS; i++)
            if (!srv.slot[i] && !(srv.slot[i] = malloc(WEFT_WIN_REQ_MAX)))
                rc = WEFT_ENOMEM;
        if (rc == WEFT_OK)
            rc = weft_progress_register(srv.ctx, server, NULL, &srv.progress_id);
        if (rc == WEFT_OK) {
            weft_progress_arm(srv.ctx, srv.progress_id, 0);
            for (int i = 0; rc == WEFT_OK && i < SLOTS; i++)
                rc = post(i);
        }
        srv.up = rc == WEFT_OK;
    }
    pthread_mutex_unlock(&start_lock);
    return rc == WEFT_OK ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void weft__win_server_use(bool on)
{
    int was = atomic_fetch_add(&srv.users, on ? 1 : -1);
    if (srv.up && (on ? was == 0 : was == 1))
        weft_progress_arm(srv.ctx, srv.progress_id, on);
}

void weft__mpi_win_fini(void)
{
    /* The posted receives stay with the engine until it ends: their buffers
     * and queue are kept for it (and for an instance started again on it). */
    if (srv.up)
        weft_progress_unregister(srv.ctx, srv.progress_id);
    srv.up = false;
    atomic_store(&srv.users, 0);
    for (pending_lock_t *p = srv.locks, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    srv.locks = NULL;
    for (held_t *h = srv.held, *next; h; h = next) {
        next = h->next;
        free(h);
    }
    srv.held = NULL;
}

/* ---------------------------------------------------------------- the origin's side */

/* An operation whose answers are awaited: where they land and what to do
 * once the last one is in. */
typedef struct op_rec {
    atomic_int left;
    weft__win_peer_t *peer;
    char *stage;        /* answers land here (NULL: in the user's buffer) */
    MPI_Datatype basic; /* GACC with holes: stage holds an array of it */
    size_t nelem;       /* its elements */
    MPI_Datatype utype; /* then unpacked into ucount of utype at ubuf */
    void *ubuf;
    size_t ucount, bytes;
    MPI_Request req;
    bool heap; /* allocated (else on the stack of a call that finishes it) */
} op_rec_t;

static void req_done(MPI_Request r);
static MPI_Request greq_new(void);

/* Let rec go: its stage, its type, its request completed. */
static void rec_drop(op_rec_t *rec)
{
    free(rec->stage);
    if (rec->utype)
        weft__mpi_type_release(rec->utype);
    if (rec->req)
        req_done(rec->req);
    if (rec->heap)
        free(rec);
}

/* Finish rec: its data into the user's buffer, its request complete. */
static void rec_finish(op_rec_t *rec)
{
    if (rec->stage) {
        char *packed = rec->stage;
        size_t ext = rec->basic ? (size_t)weft__mpi_type_extent(rec->basic) : 0;
        if (rec->basic && ext != rec->basic->size) {
            packed = malloc(rec->bytes ? rec->bytes : 1);
            if (packed)
                weft__mpi_type_pack(rec->basic, rec->stage, rec->nelem, 0, rec->bytes, packed);
        }
        if (packed)
            weft__mpi_type_unpack(rec->utype, rec->ubuf, rec->ucount, 0, rec->bytes, packed);
        if (packed != rec->stage)
            free(packed);
    }
    rec_drop(rec);
}

static void reply_done(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    op_rec_t *rec = e->user_context;
    weft__win_peer_t *peer = rec->peer;
    note_failure(&peer->err, e);
    if (atomic_fetch_sub(&rec->left, 1) == 1)
        rec_finish(rec);
    atomic_fetch_sub(&peer->replies, 1);
}

/* A large put's data in flight: its target, and the MPI_Rput request that
 * completes when the buffer is the application's again. */
typedef struct rdv_out {
    weft__win_peer_t *peer;
    MPI_Request req;
} rdv_out_t;

/* Complete a generalized request made by an operation (its last answer,
 * its data sent). */
static void req_done(MPI_Request r)
{
    PMPI_Grequest_complete(r);
}

static void data_sent(const weft_comp_entry_t *e, void *arg)
{
    (void)arg;
    rdv_out_t *out = e->user_context;
    weft__win_peer_t *peer = out->peer;
    note_failure(&peer->err, e);
    if (out->req)
        req_done(out->req);
    free(out);
    atomic_fetch_sub(&peer->replies, 1);
}

static uint64_t new_tag(void)
{
    return atomic_fetch_add(&srv.next_tag, 1) + 1;
}

/* Post the receive of an answer of len bytes into at for rec. */
static int expect(weft__win_peer_t *peer, uint64_t tag, void *at, size_t len, op_rec_t *rec)
{
    atomic_fetch_add(&peer->replies, 1);
    atomic_fetch_add(&rec->left, 1);
    int rc = weft_sr_irecv_comp(weft__mpi.ctx, peer->world, WEFT_WIN_COMM_REPLY, tag, at, len,
                                weft_handler_comp(&srv.reply_done), rec);
    if (rc != WEFT_OK) {
        atomic_fetch_sub(&peer->replies, 1);
        atomic_fetch_sub(&rec->left, 1);
        return weft__mpi_err_from_weft(rc);
    }
    return MPI_SUCCESS;
}

static int send_req(weft__win_peer_t *peer, char *buf, size_t len)
{
    int rc = weft_sr_isend_comp(weft__mpi.ctx, peer->world, WEFT_WIN_COMM_REQ, 0, buf, len,
                                weft_handler_comp(&srv.free_buf), buf);
    if (rc != WEFT_OK) {
        free(buf);
        return weft__mpi_err_from_weft(rc);
    }
    return MPI_SUCCESS;
}

/* A request with no pieces (flush, lock, unlock), answered with a code. */
static int ask(MPI_Win win, int t, int kind, int lock_type)
{
    weft__win_peer_t *peer = &win->peer[t];
    win_req_t *r = calloc(1, sizeof *r);
    op_rec_t *rec = calloc(1, sizeof *rec);
    int32_t code = 0;
    if (!r || !rec) {
        free(r);
        free(rec);
        return MPI_ERR_NO_MEM;
    }
    rec->peer = peer;
    atomic_init(&rec->left, 1); /* ours, until the answer is in */
    *r = (win_req_t){.win = win->id,
                     .kind = (uint32_t)kind,
                     .origin = win->rank,
                     .lock_type = lock_type,
                     .reply_tag = new_tag()};
    int rc = expect(peer, r->reply_tag, &code, sizeof code, rec);
    if (rc == MPI_SUCCESS)
        rc = send_req(peer, (char *)r, sizeof *r);
    else
        free(r);
    weft_idle_t idle = {0};
    while (rc == MPI_SUCCESS && atomic_load(&rec->left) > 1)
        if (weft_progress(weft__mpi.ctx) <= 0)
            weft_idle(weft__mpi.ctx, &idle);
    free(rec);
    int err = atomic_exchange(&peer->err, 0);
    return rc ? rc : err ? err : code;
}

int weft__win_lock_remote(MPI_Win win, int t, bool lock, int type)
{
    return ask(win, t, lock ? K_LOCK : K_UNLOCK, type);
}

int weft__win_flush(MPI_Win win, int t)
{
    int lo = t < 0 ? 0 : t, hi = t < 0 ? win->size : t + 1;
    int rc = MPI_SUCCESS;
    /* Every MPI call moves the others' requests to this process along, a
     * flush of mapped memory too: a program polling its own window in a
     * loop of flushes waits for them. */
    if (win->serve)
        weft_progress(weft__mpi.ctx);
    for (int r = lo; r < hi; r++) {
        weft__win_peer_t *p = &win->peer[r];
        if (atomic_load_explicit(&p->unflushed, memory_order_relaxed) > 0 &&
            atomic_exchange(&p->unflushed, 0) > 0) {
            int frc = ask(win, r, K_FLUSH, 0);
            if (frc && !rc)
                rc = frc;
        }
        weft_idle_t idle = {0};
        while (atomic_load(&p->replies) > 0)
            if (weft_progress(weft__mpi.ctx) <= 0)
                weft_idle(weft__mpi.ctx, &idle);
        int err =
            atomic_load_explicit(&p->err, memory_order_relaxed) ? atomic_exchange(&p->err, 0) : 0;
        if (err && !rc)
            rc = err;
    }
    weft__win_fence();
    return rc;
}

/* ---------------------------------------------------------------- one operation */

typedef struct op_args {
    int kind;
    const void *obuf;
    int ocount;
    MPI_Datatype otype;
    void *rbuf; /* GACC, CAS: results */
    int rcount;
    MPI_Datatype rtype;
    const void *cbuf; /* CAS: compare */
    int target;
    MPI_Aint disp;
    int tcount;
    MPI_Datatype ttype;
    MPI_Op op;
    MPI_Request *req;
} op_args_t;

/* The origin's data as one packed stream: the buffer itself when contiguous,
 * else a packed copy (*own set to free it). */
static const char *stream_of(const void *buf, int count, MPI_Datatype t, char **own)
{
    *own = NULL;
    size_t len = (size_t)count * t->size;
    if (t->contig)
        return weft__mpi_at(buf, t->true_lb);
    *own = malloc(len ? len : 1);
    if (*own)
        weft__mpi_type_pack(t, buf, (size_t)count, 0, len, *own);
    return *own;
}

/* Whether the target bytes of a's target type lie in the target's window. */
static bool in_range(const weft__win_peer_t *p, const op_args_t *a, MPI_Aint toff)
{
    MPI_Aint ext = weft__mpi_type_extent(a->ttype);
    MPI_Aint last = (MPI_Aint)(a->tcount - 1) * ext;
    MPI_Aint lo = toff + a->ttype->true_lb + (last < 0 ? last : 0);
    MPI_Aint hi = toff + a->ttype->true_ub + (last > 0 ? last : 0);
    return lo >= 0 && hi <= (MPI_Aint)p->size;
}

/* Bytes through the kernel: the pieces of a at the target against the
 * stream; false when the kernel refuses (the path goes to requests). */
static bool cma_move(weft__win_peer_t *p, const op_args_t *a, MPI_Aint toff, char *stream, bool put)
{
    enum { NIOV = 64 };
    struct iovec local[1], remote[NIOV];
    walk_t w;
    walk_init(&w, a->ttype, (size_t)a->tcount, toff);
    MPI_Aint off;
    size_t len, pos = 0;
    bool more = true;
    while (more) {
        int n = 0;
        size_t bytes = 0;
        while (n < NIOV && (more = walk_next(&w, &off, &len))) {
            remote[n].iov_base = (void *)(uintptr_t)(p->base + (uint64_t)off);
            remote[n++].iov_len = len;
            bytes += len;
        }
        if (!n)
            break;
        local[0].iov_base = stream + pos;
        local[0].iov_len = bytes;
        ssize_t done = put ? process_vm_writev(p->pid, local, 1, remote, (unsigned long)n, 0)
                           : process_vm_readv(p->pid, local, 1, remote, (unsigned long)n, 0);
        if (done != (ssize_t)bytes)
            return false;
        pos += bytes;
    }
    return true;
}

/* Build and send the requests of a to a peer reached by message. data: the
 * stream (PUT), the element array (ACC, GACC) or NULL (GET); answers land
 * from dest (GET: the packed stream, GACC: the old elements) for rec. */
/* A large put of one contiguous range from the application's own buffer:
 * an announcement, then the data by the engine's rendezvous, which the
 * target receives into the window; the buffer is free again once sent
 * (counted with the answers, which flush_local waits for). */
static int put_rdv(MPI_Win win, weft__win_peer_t *p, uint64_t off, const char *data, size_t len,
                   MPI_Request *req)
{
    rdv_out_t *out = calloc(1, sizeof *out);
    if (!out)
        return MPI_ERR_NO_MEM;
    out->peer = p;
    if (req) {
        out->req = *req = greq_new();
        if (!out->req) {
            free(out);
            return MPI_ERR_NO_MEM;
        }
    }
    win_req_t *r = calloc(1, sizeof *r + sizeof(win_seg_t));
    if (!r)
        return MPI_ERR_NO_MEM;
    *r = (win_req_t){
        .win = win->id, .kind = K_PUT_RDV, .nseg = 1, .origin = win->rank, .reply_tag = new_tag()};
    win_seg_t *sg = (win_seg_t *)(r + 1);
    sg->off = off;
    sg->len = len;
    uint64_t tag = r->reply_tag;
    int rc = send_req(p, (char *)r, sizeof *r + sizeof *sg);
    atomic_fetch_add(&p->unflushed, 1);
    if (rc == MPI_SUCCESS) {
        atomic_fetch_add(&p->replies, 1);
        int wrc = weft_sr_isend_comp(weft__mpi.ctx, p->world, WEFT_WIN_COMM_DATA, tag, data, len,
                                     weft_handler_comp(&srv.data_sent), out);
        if (wrc == WEFT_OK)
            return MPI_SUCCESS;
        atomic_fetch_sub(&p->replies, 1);
        rc = weft__mpi_err_from_weft(wrc);
    }
    if (out->req)
        req_done(out->req); /* failed: nothing in flight (MPI_Wait sees it done) */
    free(out);
    return rc;
}

static int by_request(MPI_Win win, const op_args_t *a, MPI_Aint toff, const char *data, char *dest,
                      op_rec_t *rec, MPI_Datatype basic)
{
    weft__win_peer_t *p = &win->peer[a->target];
    bool elems = a->kind == K_ACC || a->kind == K_GACC;
    bool carries =
        a->kind == K_PUT || a->kind == K_ACC || (a->kind == K_GACC && a->op != MPI_NO_OP);
    size_t unit = elems ? (size_t)weft__mpi_type_extent(basic) : 1;
    int tix = elems ? type_index(basic) : 0, oix = elems ? op_index(a->op) : 0;
    if (tix < 0 || oix < 0)
        return MPI_ERR_TYPE;
    walk_t w;
    runs_t rs;
    if (elems)
        rs = (runs_t){.esz = basic->size, .ext = unit};
    walk_init(elems ? &rs.w : &w, a->ttype, (size_t)a->tcount, toff);
    MPI_Aint off = 0;
    size_t len = 0, pos = 0; /* units of the current piece left; data bytes done */
    bool have = false, done = false;
    int rc = MPI_SUCCESS;
    while (!done && rc == MPI_SUCCESS) {
        char *buf = malloc(WEFT_WIN_REQ_MAX);
        if (!buf)
            return MPI_ERR_NO_MEM;
        win_req_t *r = (win_req_t *)buf;
        *r = (win_req_t){.win = win->id,
                         .kind = (uint32_t)a->kind,
                         .type = (uint16_t)tix,
                         .op = (uint16_t)oix,
                         .origin = win->rank};
        win_seg_t *seg = (win_seg_t *)(r + 1);
        size_t room = WEFT_WIN_REQ_MAX - sizeof *r, start = pos;
        /* Pieces while a segment and at least one unit of data fit. */
        while (room >= sizeof *seg + (carries ? unit : 0)) {
            if (!have) {
                have = elems ? runs_next(&rs, &off, &len) : walk_next(&w, &off, &len);
                if (!have) {
                    done = true;
                    break;
                }
            }
            size_t fit = carries ? (room - sizeof *seg) / unit : len;
            size_t take = len < fit ? len : fit;
            seg[r->nseg].off = (uint64_t)off;
            seg[r->nseg++].len = take;
            room -= sizeof *seg + (carries ? take * unit : 0);
            pos += take * unit;
            off += (MPI_Aint)(take * unit);
            len -= take;
            if (!len)
                have = false;
        }
        if (!r->nseg) {
            free(buf);
            break;
        }
        size_t bytes = pos - start;
        char *d = (char *)(seg + r->nseg);
        if (carries) {
            memcpy(d, data + start, bytes);
            r->len = bytes;
        }
        size_t total = (size_t)(d - buf) + (carries ? bytes : 0);
        if (a->kind == K_GET || a->kind == K_GACC) {
            r->reply_tag = new_tag();
            rc = expect(p, r->reply_tag, dest + start, bytes, rec);
        }
        if (rc == MPI_SUCCESS)
            rc = send_req(p, buf, total);
        else
            free(buf);
        atomic_fetch_add(&p->unflushed, 1);
    }
    return rc;
}

/* A generalized request that the operation's end completes (req_done):
 * no callbacks, an empty status. */
static MPI_Request greq_new(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    PMPI_Grequest_start(NULL, NULL, NULL, NULL, &r);
    return r;
}

/* A request complete at once (a put's, or one that moves nothing). */
static MPI_Request done_req(MPI_Win win)
{
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_DONE, win->comm);
    if (r) {
        r->complete = true;
        weft__mpi_status_empty(&r->status);
    }
    return r;
}

/* Run a: checks, then the path of its target. */
static int win_op(MPI_Win win, op_args_t *a)
{
    if (a->req)
        *a->req = MPI_REQUEST_NULL;
    int rc = weft__win_check(win);
    if (rc)
        return rc;
    if (a->target == MPI_PROC_NULL) {
        if (a->req)
            *a->req = done_req(win);
        return MPI_SUCCESS;
    }
    if (a->target < 0 || a->target >= win->size)
        return MPI_ERR_RANK;
    bool uses_origin = a->kind == K_PUT || a->kind == K_ACC || a->kind == K_CAS ||
                       (a->kind == K_GACC && a->op != MPI_NO_OP);
    if (a->kind == K_GET) {
        /* the origin buffer receives */
        a->rbuf = (void *)a->obuf;
        a->rcount = a->ocount;
        a->rtype = a->otype;
    }
    if (a->ocount < 0 || a->tcount < 0 || a->rcount < 0)
        return MPI_ERR_COUNT;
    if ((uses_origin && weft__mpi_check_type(a->otype)) || weft__mpi_check_type(a->ttype) ||
        ((a->kind == K_GET || a->kind == K_GACC || a->kind == K_CAS) &&
         weft__mpi_check_type(a->rtype)))
        return MPI_ERR_TYPE;
    if (!weft__win_access(win, a->target))
        return MPI_ERR_RMA_SYNC;
    /* Nothing to move, anywhere: done, whatever the types (as the other
     * implementations do). */
    bool has_result = a->kind == K_GET || a->kind == K_GACC || a->kind == K_CAS;
    if ((!a->tcount || !a->ttype->size) && (!uses_origin || !a->ocount || !a->otype->size) &&
        (!has_result || !a->rcount || !a->rtype->size)) {
        if (a->req)
            *a->req = done_req(win);
        return MPI_SUCCESS;
    }
    MPI_Datatype basic = NULL;
    if (a->kind == K_ACC || a->kind == K_GACC || a->kind == K_CAS) {
        if (!a->op || a->op->magic != WEFT_MPI_MAGIC_OP || !a->op->predefined)
            return MPI_ERR_OP;
        basic = a->ttype->reduce_type;
        if (!basic || (uses_origin && a->otype->reduce_type != basic) ||
            (a->kind != K_ACC && a->rtype->reduce_type != basic))
            return MPI_ERR_TYPE;
        /* An operation that moves nothing is not checked against its type
         * (as the other implementations do). */
        if (a->op != MPI_REPLACE && a->op != MPI_NO_OP && a->tcount && a->ttype->size &&
            weft__mpi_op_check_type(a->op, basic) != MPI_SUCCESS)
            return MPI_ERR_OP;
    }
    size_t bytes = (size_t)a->tcount * a->ttype->size;
    if ((uses_origin && a->kind != K_CAS && (size_t)a->ocount * a->otype->size != bytes) ||
        ((a->kind == K_GET || a->kind == K_GACC) && (size_t)a->rcount * a->rtype->size != bytes))
        return MPI_ERR_TYPE;
    weft__win_peer_t *p = &win->peer[a->target];
    MPI_Aint toff = win->flavor == MPI_WIN_FLAVOR_DYNAMIC ? a->disp : a->disp * p->disp_unit;
    bool self_dyn = win->flavor == MPI_WIN_FLAVOR_DYNAMIC && a->target == win->rank;
    if (bytes && win->flavor != MPI_WIN_FLAVOR_DYNAMIC && !in_range(p, a, toff))
        return MPI_ERR_RMA_RANGE;
    if (!bytes) {
        if (a->req)
            *a->req = done_req(win);
        return MPI_SUCCESS;
    }
    /* The origin's side: its stream; for accumulates an element array. */
    char *own = NULL, *conv = NULL;
    const char *stream = uses_origin ? stream_of(a->obuf, a->ocount, a->otype, &own) : NULL;
    if (uses_origin && !stream)
        return MPI_ERR_NO_MEM;
    size_t nelem = basic ? bytes / basic->size : 0;
    size_t bext = basic ? (size_t)weft__mpi_type_extent(basic) : 0;
    if (stream && basic && bext != basic->size) {
        conv = malloc(nelem * bext);
        if (!conv) {
            free(own);
            return MPI_ERR_NO_MEM;
        }
        weft__mpi_type_unpack(basic, conv, nelem, 0, bytes, stream);
        stream = conv;
    }
    /* Where results land: the user's buffer when it is one packed range,
     * else a stage the finish unpacks. */
    size_t rbytes = a->kind == K_GACC || a->kind == K_CAS ? nelem * bext : bytes;
    bool reply = a->kind == K_GET || a->kind == K_GACC || a->kind == K_CAS;
    /* Mapped memory and the kernel's copies finish within this call: their
     * record stays here. */
    bool sync = p->path == WEFT_WIN_MAPPED ||
                (p->path == WEFT_WIN_CMA && (a->kind == K_PUT || a->kind == K_GET));
    op_rec_t *rec = NULL, here = {0};
    char *dest = NULL;
    if (reply) {
        rec = sync ? &here : calloc(1, sizeof *rec);
        if (!rec) {
            free(own);
            free(conv);
            return MPI_ERR_NO_MEM;
        }
        rec->heap = !sync;
        rec->peer = p;
        atomic_init(&rec->left, 1); /* ours, until the requests are out */
        bool direct = a->rtype->contig && (!basic || bext == basic->size);
        if (direct) {
            dest = weft__mpi_at(a->rbuf, a->rtype->true_lb);
        } else {
            dest = rec->stage = malloc(rbytes ? rbytes : 1);
            rec->basic = a->kind == K_GET ? NULL : basic;
            rec->nelem = nelem;
            rec->utype = a->rtype;
            rec->ubuf = a->rbuf;
            rec->ucount = (size_t)a->rcount;
            rec->bytes = bytes;
            weft__mpi_type_retain(a->rtype);
            if (!dest) {
                rec_finish(rec);
                free(own);
                free(conv);
                return MPI_ERR_NO_MEM;
            }
        }
        if (a->req && !sync) {
            *a->req = rec->req = greq_new(); /* the last answer completes it */
        }
    }
    int path = p->path;
    char *mapped = NULL;
    if (path == WEFT_WIN_MAPPED) {
        if (self_dyn) {
            MPI_Aint ext = weft__mpi_type_extent(a->ttype);
            MPI_Aint last = (MPI_Aint)(a->tcount - 1) * ext;
            MPI_Aint lo = toff + a->ttype->true_lb + (last < 0 ? last : 0);
            MPI_Aint hi = toff + a->ttype->true_ub + (last > 0 ? last : 0);
            if (!weft__win_attached(win, (uintptr_t)lo, (size_t)(hi - lo)))
                rc = MPI_ERR_RMA_RANGE;
            mapped = NULL; /* absolute addresses */
        } else {
            mapped = p->mapped;
        }
    }
    if (rc == MPI_SUCCESS && path == WEFT_WIN_CMA && (a->kind == K_PUT || a->kind == K_GET)) {
        if (!cma_move(p, a, toff, a->kind == K_PUT ? (char *)stream : dest, a->kind == K_PUT)) {
            /* Not allowed here: messages from now on, this one too. */
            p->path = WEFT_WIN_REQUEST;
            free(own);
            free(conv);
            if (rec)
                rec_drop(rec);
            return win_op(win, a);
        }
        path = -1; /* done */
    } else if (path == WEFT_WIN_CMA) {
        path = WEFT_WIN_REQUEST;
    }
    if (rc == MPI_SUCCESS && path == WEFT_WIN_MAPPED) {
        if (a->kind == K_CAS) {
            cas(weft__mpi_at(mapped, toff), stream, a->cbuf, dest, bext, p->ctl);
        } else if (a->kind == K_PUT || a->kind == K_GET) {
            walk_t w;
            walk_init(&w, a->ttype, (size_t)a->tcount, toff);
            MPI_Aint off;
            size_t len, pos = 0;
            while (walk_next(&w, &off, &len)) {
                char *t = weft__mpi_at(mapped, off);
                if (a->kind == K_PUT)
                    memmove(t, stream + pos, len);
                else
                    memmove(dest + pos, t, len);
                pos += len;
            }
        } else {
            runs_t rs = {.esz = basic->size, .ext = bext};
            walk_init(&rs.w, a->ttype, (size_t)a->tcount, toff);
            MPI_Aint off;
            size_t n, pos = 0;
            while (runs_next(&rs, &off, &n)) {
                apply(a->op, basic, weft__mpi_at(mapped, off), stream ? stream + pos : NULL, n,
                      dest ? dest + pos : NULL, p->ctl);
                pos += n * bext;
            }
        }
    } else if (rc == MPI_SUCCESS && path == WEFT_WIN_REQUEST) {
        if (a->kind == K_CAS) {
            /* One element: the value, then the compare value. */
            char *buf = malloc(sizeof(win_req_t) + sizeof(win_seg_t) + 2 * bext);
            int tix = type_index(basic);
            if (!buf || tix < 0) {
                free(buf);
                rc = buf ? MPI_ERR_TYPE : MPI_ERR_NO_MEM;
            } else {
                win_req_t *r = (win_req_t *)buf;
                *r = (win_req_t){.win = win->id,
                                 .kind = K_CAS,
                                 .type = (uint16_t)tix,
                                 .nseg = 1,
                                 .origin = win->rank,
                                 .len = 2 * bext,
                                 .reply_tag = new_tag()};
                win_seg_t *sg = (win_seg_t *)(r + 1);
                sg->off = (uint64_t)toff;
                sg->len = 1;
                memcpy(sg + 1, stream, bext);
                memcpy((char *)(sg + 1) + bext, a->cbuf, bext);
                rc = expect(p, r->reply_tag, dest, bext, rec);
                if (rc == MPI_SUCCESS)
                    rc = send_req(p, buf, sizeof *r + sizeof *sg + 2 * bext);
                else
                    free(buf);
                atomic_fetch_add(&p->unflushed, 1);
            }
        } else {
            if (a->kind == K_PUT && !own && a->ttype->contig && bytes >= WEFT_WIN_PUT_RDV)
                rc = put_rdv(win, p, (uint64_t)(toff + a->ttype->true_lb), stream, bytes, a->req);
            else
                rc = by_request(win, a, toff, stream, dest, rec, basic);
        }
    }
    if (own)
        free(own);
    if (conv)
        free(conv);
    if (rec && atomic_fetch_sub(&rec->left, 1) == 1)
        rec_finish(rec); /* every answer is in, or there were none */
    if (a->req && *a->req == MPI_REQUEST_NULL && (!reply || sync))
        *a->req = done_req(win);
    return rc;
}

/* ---------------------------------------------------------------- the calls */

static inline bool contig_type(MPI_Datatype t)
{
    return t && t->magic == WEFT_MPI_MAGIC_TYPE && t->committed && t->contig;
}

/* Puts and gets of contiguous data to mapped memory, the common case: the
 * target's bytes, *len of them, or NULL when anything (an error included)
 * takes the general path. */
static inline char *fast_at(MPI_Win win, int target, MPI_Aint disp, MPI_Datatype ot, int oc,
                            MPI_Datatype tt, int tc, size_t *len)
{
    if (weft__win_check(win) || target < 0 || target >= win->size || oc < 0 || tc < 0 ||
        !contig_type(ot) || !contig_type(tt) || win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return NULL;
    const weft__win_peer_t *p = &win->peer[target];
    size_t bytes = (size_t)tc * tt->size;
    MPI_Aint off = disp * p->disp_unit + tt->true_lb;
    if (p->path != WEFT_WIN_MAPPED || !bytes || (size_t)oc * ot->size != bytes || off < 0 ||
        (uint64_t)off + bytes > p->size || !weft__win_access(win, target))
        return NULL;
    *len = bytes;
    return p->mapped + off;
}

static int run(MPI_Win win, op_args_t *a, const char *fn)
{
    int rc = win_op(win, a);
    return rc ? weft__mpi_err_win(win, rc, fn) : MPI_SUCCESS;
}

/* Accumulates of a predefined type to mapped memory (one type at both
 * ends, as Fetch_and_op always has): the target's element, or NULL for
 * the general path. */
static inline char *fast_acc(MPI_Win win, int target, MPI_Aint disp, MPI_Datatype t, int count,
                             MPI_Op op, weft__win_ctl_t **ctl)
{
    size_t len;
    char *at = fast_at(win, target, disp, t, count, t, count, &len);
    if (!at || !t->predefined || !op || op->magic != WEFT_MPI_MAGIC_OP || !op->predefined ||
        (op != MPI_REPLACE && op != MPI_NO_OP && weft__mpi_op_check_type(op, t) != MPI_SUCCESS))
        return NULL;
    *ctl = win->peer[target].ctl;
    return at;
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    size_t len;
    char *t = fast_at(win, target_rank, target_disp, origin_datatype, origin_count, target_datatype,
                      target_count, &len);
    if (t) {
        memmove(t, weft__mpi_at(origin_addr, origin_datatype->true_lb), len);
        return MPI_SUCCESS;
    }
    op_args_t a = {K_PUT,       origin_addr, origin_count, origin_datatype, NULL, 0,   NULL, NULL,
                   target_rank, target_disp, target_count, target_datatype, NULL, NULL};
    return run(win, &a, "MPI_Put");
}
WEFT_MPI_ALIAS(Put)

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    size_t len;
    const char *t = fast_at(win, target_rank, target_disp, origin_datatype, origin_count,
                            target_datatype, target_count, &len);
    if (t) {
        memmove(weft__mpi_at(origin_addr, origin_datatype->true_lb), t, len);
        return MPI_SUCCESS;
    }
    op_args_t a = {K_GET,       origin_addr, origin_count, origin_datatype, NULL, 0,   NULL, NULL,
                   target_rank, target_disp, target_count, target_datatype, NULL, NULL};
    return run(win, &a, "MPI_Get");
}
WEFT_MPI_ALIAS(Get)

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    weft__win_ctl_t *ctl;
    char *t = origin_datatype == target_datatype && origin_count == target_count
                  ? fast_acc(win, target_rank, target_disp, target_datatype, target_count, op, &ctl)
                  : NULL;
    if (t) {
        apply(op, target_datatype, t, weft__mpi_at(origin_addr, 0), (size_t)target_count, NULL,
              ctl);
        return MPI_SUCCESS;
    }
    op_args_t a = {K_ACC,       origin_addr, origin_count, origin_datatype, NULL, 0,   NULL, NULL,
                   target_rank, target_disp, target_count, target_datatype, op,   NULL};
    return run(win, &a, "MPI_Accumulate");
}
WEFT_MPI_ALIAS(Accumulate)

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    op_args_t a = {K_GACC,      origin_addr,  origin_count,    origin_datatype,
                   result_addr, result_count, result_datatype, NULL,
                   target_rank, target_disp,  target_count,    target_datatype,
                   op,          NULL};
    return run(win, &a, "MPI_Get_accumulate");
}
WEFT_MPI_ALIAS(Get_accumulate)

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    weft__win_ctl_t *ctl;
    char *t = fast_acc(win, target_rank, target_disp, datatype, 1, op, &ctl);
    if (t && result_addr && (origin_addr || op == MPI_NO_OP)) {
        apply(op, datatype, t, origin_addr, 1, result_addr, ctl);
        return MPI_SUCCESS;
    }
    op_args_t a = {K_GACC, origin_addr, 1,           datatype, result_addr, 1,  datatype,
                   NULL,   target_rank, target_disp, 1,        datatype,    op, NULL};
    return run(win, &a, "MPI_Fetch_and_op");
}
WEFT_MPI_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    int rc = weft__mpi_check_type(datatype);
    if (!rc && (!datatype->predefined ||
                (datatype->basic != WEFT_MPI_B_INT && datatype->basic != WEFT_MPI_B_UINT &&
                 datatype->basic != WEFT_MPI_B_BOOL && datatype->basic != WEFT_MPI_B_BYTE) ||
                datatype->size > 8))
        rc = MPI_ERR_TYPE;
    if (rc)
        return weft__mpi_err_win(win, weft__win_check(win) ? MPI_ERR_WIN : rc,
                                 "MPI_Compare_and_swap");
    weft__win_ctl_t *ctl;
    char *t = fast_acc(win, target_rank, target_disp, datatype, 1, MPI_REPLACE, &ctl);
    if (t && origin_addr && compare_addr && result_addr) {
        cas(t, origin_addr, compare_addr, result_addr, datatype->size, ctl);
        return MPI_SUCCESS;
    }
    op_args_t a = {K_CAS,       origin_addr, 1, datatype, result_addr, 1,   datatype, compare_addr,
                   target_rank, target_disp, 1, datatype, MPI_REPLACE, NULL};
    return run(win, &a, "MPI_Compare_and_swap");
}
WEFT_MPI_ALIAS(Compare_and_swap)

/* The request-based forms (§11.3.5): complete locally, which for a put or
 * an accumulate is at once (the data was copied or sent), for a get or a
 * fetch when its answer is in. Only inside a passive-target epoch. */
static int run_req(MPI_Win win, op_args_t *a, MPI_Request *request, const char *fn)
{
    if (request)
        *request = MPI_REQUEST_NULL;
    int rc = weft__win_check(win);
    if (!rc && !request)
        rc = MPI_ERR_ARG;
    if (!rc && a->target >= 0 && a->target < win->size && !atomic_load(&win->lock_all) &&
        !atomic_load(&win->peer[a->target].lock))
        rc = MPI_ERR_RMA_SYNC;
    if (rc)
        return weft__mpi_err_win(win, rc, fn);
    a->req = request;
    return run(win, a, fn);
}

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    op_args_t a = {K_PUT,       origin_addr, origin_count, origin_datatype, NULL, 0,   NULL, NULL,
                   target_rank, target_disp, target_count, target_datatype, NULL, NULL};
    return run_req(win, &a, request, "MPI_Rput");
}
WEFT_MPI_ALIAS(Rput)

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    op_args_t a = {K_GET,       origin_addr, origin_count, origin_datatype, NULL, 0,   NULL, NULL,
                   target_rank, target_disp, target_count, target_datatype, NULL, NULL};
    return run_req(win, &a, request, "MPI_Rget");
}
WEFT_MPI_ALIAS(Rget)

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    op_args_t a = {K_ACC,       origin_addr, origin_count, origin_datatype, NULL, 0,   NULL, NULL,
                   target_rank, target_disp, target_count, target_datatype, op,   NULL};
    return run_req(win, &a, request, "MPI_Raccumulate");
}
WEFT_MPI_ALIAS(Raccumulate)

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    op_args_t a = {K_GACC,      origin_addr,  origin_count,    origin_datatype,
                   result_addr, result_count, result_datatype, NULL,
                   target_rank, target_disp,  target_count,    target_datatype,
                   op,          NULL};
    return run_req(win, &a, request, "MPI_Rget_accumulate");
}
WEFT_MPI_ALIAS(Rget_accumulate)
