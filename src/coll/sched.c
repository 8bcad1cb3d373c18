/* The schedule engine of the collectives (weft_coll.h): rounds of sends and
 * receives on the engine, then local copies and reductions, in the types and
 * operations of a front end (weft_sched_front_t).
 *
 * Why rounds and not a dependency graph: every algorithm the front ends use
 * (dissemination, binomial trees, recursive doubling, linear exchanges) is a
 * sequence of synchronous steps, and a round is the cheapest thing that
 * expresses them; it is the shape of the schedules of libNBC (Hoefler et al.,
 * "Implementation and performance analysis of non-blocking collective
 * operations for MPI", SC'07).
 *
 * Threads: a schedule is advanced by whichever thread gets its `busy` flag;
 * the others skip it. Started schedules sit on their context's list (under
 * the list's lock, never held while calling the engine), which the layer's
 * progress callback walks: it takes a reference on each before releasing the
 * lock, so a schedule that ends and is freed meanwhile stays valid until the
 * walk is done with it.
 *
 * Failures (see weft_coll.h): a failed step is remembered and the schedule
 * goes on, with poisons in place of the sends of its later rounds, so that
 * nobody waits for ever on it; its local steps are then skipped. */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "core/core_int.h"
#include "util/lock.h"
#include "weft/weft_coll.h"

/* Up to this many pieces a non-contiguous buffer goes to the engine as an
 * iovec; beyond, it is packed into a staging buffer. */
#define SCHED_IOV_MAX 16

typedef enum step_kind {
    STEP_SEND,
    STEP_RECV,
    STEP_COPY,
    STEP_REDUCE,
    STEP_CALL,
} step_kind_t;

typedef struct step {
    step_kind_t kind;
    int world; /* send/recv: the peer's job rank */
    uint32_t cid;
    uint64_t tag;
    const void *src; /* send data, copy source, reduce `in` */
    size_t scount;
    const void *stype;
    void *dst; /* receive buffer, copy destination, reduce `inout`, call's arg */
    size_t dcount;
    const void *dtype;
    const void *op;
    weft_request_t *wreq;
    char spare[2];            /* a receive's room for a poison past its data */
    void *staging;            /* packed data of a non-contiguous buffer */
    weft_sched_call_fn *call; /* STEP_CALL */
    uint8_t held;             /* HELD_*: the references step_hold took */
} step_t;

enum { HELD_STYPE = 1, HELD_DTYPE = 2, HELD_OP = 4 };

struct weft__scheds {
    weft_lock_t lock;
    weft_sched_t *head; /* read without the lock as a hint */
    int progress_id;
};

struct weft_sched {
    weft_sched_t *next; /* on the context's list */
    weft_ctx_t *ctx;
    const weft_sched_front_t *front;
    atomic_int refs;
    atomic_flag busy;
    atomic_bool listed;
    atomic_bool done;
    atomic_uint moves; /* rounds ended: how a walk tells that it moved the schedule */
    int err;           /* the first failure: later sends are poisons, local steps are skipped */
    uint32_t phase;
    step_t *steps;
    int nsteps, cap_steps;
    int *round_end; /* round r holds steps [round_end[r-1], round_end[r]) */
    int nrounds, cap_rounds;
    int cur;     /* round in progress; -1 before the first */
    int pending; /* its communication steps not yet complete */
    void **tmps;
    int ntmps, cap_tmps;
    weft_sched_end_fn *end; /* called once when the schedule ends */
    void *end_arg;
    alignas(max_align_t) unsigned char extra[];
};

static void *grow(void *p, int *cap, size_t elem)
{
    int n = *cap ? *cap * 2 : 8;
    void *q = realloc(p, (size_t)n * elem);
    if (q)
        *cap = n;
    return q;
}

/* The front's error for weft status rc. */
static int front_err(const weft_sched_t *s, int rc)
{
    return rc == WEFT_OK ? 0 : s->front->error(rc);
}

static void fail(weft_sched_t *s, int err)
{
    if (s->err == 0)
        s->err = err;
}

static int nomem(weft_sched_t *s)
{
    fail(s, front_err(s, WEFT_ENOMEM));
    return front_err(s, WEFT_ENOMEM);
}

weft_sched_t *weft_sched_new(weft_ctx_t *ctx, const weft_sched_front_t *front, size_t extra)
{
    if (!ctx)
        return NULL;
    weft_sched_t *s = calloc(1, sizeof(*s) + extra);
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->front = front ? front : &weft__coll_native_front;
    atomic_init(&s->refs, 1);
    atomic_flag_clear(&s->busy);
    atomic_init(&s->done, false);
    atomic_init(&s->listed, false);
    atomic_init(&s->moves, 0);
    s->cur = -1;
    return s;
}

void *weft_sched_extra(weft_sched_t *s)
{
    return s->extra;
}

void weft_sched_on_end(weft_sched_t *s, weft_sched_end_fn *fn, void *arg)
{
    s->end = fn;
    s->end_arg = arg;
}

void weft_sched_round(weft_sched_t *s)
{
    if (s->nrounds > 0 && s->round_end[s->nrounds - 1] == s->nsteps)
        return; /* the current round is still empty */
    if (s->nrounds == s->cap_rounds) {
        int *r = grow(s->round_end, &s->cap_rounds, sizeof(int));
        if (!r) {
            nomem(s);
            return;
        }
        s->round_end = r;
    }
    s->round_end[s->nrounds++] = s->nsteps;
}

void weft_sched_phase(weft_sched_t *s)
{
    weft_sched_round(s);
    s->phase++;
}

uint32_t weft_sched_phase_of(const weft_sched_t *s)
{
    return s->phase;
}

int weft_sched_error(const weft_sched_t *s)
{
    return s->err;
}

void weft_sched_fail(weft_sched_t *s, int err)
{
    fail(s, err);
}

bool weft_sched_commute(const weft_sched_t *s, const void *op)
{
    return s->front->commute(op);
}

static step_t *step_add(weft_sched_t *s, step_kind_t kind)
{
    if (s->nsteps == s->cap_steps) {
        step_t *st = grow(s->steps, &s->cap_steps, sizeof(step_t));
        if (!st) {
            nomem(s);
            return NULL;
        }
        s->steps = st;
    }
    step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    return st;
}

/* A step holds a reference on its types and op where the front takes them:
 * a program may free them while a non-blocking collective is in flight
 * (MPI 3.1 §4.1.9, §5.9.5), and they go with the schedule. */
static void step_hold(const weft_sched_t *s, step_t *st)
{
    bool (*hold)(const void *, bool) = s->front->hold;
    if (!hold)
        return;
    if (st->stype && hold(st->stype, false))
        st->held |= HELD_STYPE;
    if (st->dtype && hold(st->dtype, false))
        st->held |= HELD_DTYPE;
    if (st->op && hold(st->op, true))
        st->held |= HELD_OP;
}

static void step_release(const weft_sched_t *s, step_t *st)
{
    if (st->held & HELD_STYPE)
        s->front->drop(st->stype, false);
    if (st->held & HELD_DTYPE)
        s->front->drop(st->dtype, false);
    if (st->held & HELD_OP)
        s->front->drop(st->op, true);
}

/* Add step st (holding its types and op): 0, or the front's out-of-memory
 * error. */
static int add(weft_sched_t *s, step_t st)
{
    step_t *p = step_add(s, st.kind);
    if (!p)
        return front_err(s, WEFT_ENOMEM);
    *p = st;
    step_hold(s, p);
    return 0;
}

int weft_sched_send(weft_sched_t *s, int world, uint32_t comm, uint64_t tag, const void *buf,
                    size_t count, const void *type)
{
    return add(s, (step_t){.kind = STEP_SEND,
                           .world = world,
                           .cid = comm,
                           .tag = tag,
                           .src = buf,
                           .scount = count,
                           .stype = type});
}

int weft_sched_recv(weft_sched_t *s, int world, uint32_t comm, uint64_t tag, void *buf,
                    size_t count, const void *type)
{
    return add(s, (step_t){.kind = STEP_RECV,
                           .world = world,
                           .cid = comm,
                           .tag = tag,
                           .dst = buf,
                           .dcount = count,
                           .dtype = type});
}

int weft_sched_copy(weft_sched_t *s, const void *src, size_t scount, const void *stype, void *dst,
                    size_t dcount, const void *dtype)
{
    return add(s, (step_t){.kind = STEP_COPY,
                           .src = src,
                           .scount = scount,
                           .stype = stype,
                           .dst = dst,
                           .dcount = dcount,
                           .dtype = dtype});
}

/* The type is held twice (as both operands' type), and dropped twice. */
int weft_sched_reduce(weft_sched_t *s, const void *in, void *inout, size_t count, const void *type,
                      const void *op)
{
    return add(s, (step_t){.kind = STEP_REDUCE,
                           .src = in,
                           .scount = count,
                           .stype = type,
                           .dst = inout,
                           .dcount = count,
                           .dtype = type,
                           .op = op});
}

int weft_sched_call(weft_sched_t *s, weft_sched_call_fn *fn, void *arg)
{
    return add(s, (step_t){.kind = STEP_CALL, .call = fn, .dst = arg});
}

void *weft_sched_tmp(weft_sched_t *s, size_t n)
{
    if (s->ntmps == s->cap_tmps) {
        void **t = grow(s->tmps, &s->cap_tmps, sizeof(void *));
        if (!t) {
            nomem(s);
            return NULL;
        }
        s->tmps = t;
    }
    void *p = malloc(n ? n : 1);
    if (!p) {
        nomem(s);
        return NULL;
    }
    s->tmps[s->ntmps++] = p;
    return p;
}

void *weft_sched_tmp_typed(weft_sched_t *s, size_t count, const void *type)
{
    if (!type)
        return weft_sched_tmp(s, count);
    ptrdiff_t off = 0;
    size_t n = s->front->span(type, count, &off);
    char *p = weft_sched_tmp(s, n);
    return p ? p - off : NULL;
}

/* ---------------------------------------------------------------- data */

static size_t bytes(const weft_sched_t *s, size_t count, const void *type)
{
    return type ? count * s->front->size(type) : count;
}

/* Whether the data lies in one piece, at *p. */
static bool contig(const weft_sched_t *s, const void *buf, const void *type, char **p)
{
    ptrdiff_t off = 0;
    if (type && !s->front->contig(type, &off))
        return false;
    *p = (char *)buf + off;
    return true;
}

/* The packed bytes of count elements of type at buf, into out. */
static void pack(const weft_sched_t *s, const void *buf, size_t count, const void *type, void *out)
{
    size_t n = bytes(s, count, type);
    char *p;
    if (contig(s, buf, type, &p))
        memcpy(out, p, n);
    else
        s->front->pack(type, buf, count, n, out);
}

static void unpack(const weft_sched_t *s, void *buf, size_t count, const void *type, const void *in,
                   size_t n)
{
    char *p;
    if (contig(s, buf, type, &p))
        memcpy(p, in, n);
    else
        s->front->unpack(type, buf, count, n, in);
}

void *weft_sched_snapshot(weft_sched_t *s, const void *buf, size_t count, const void *type)
{
    void *p = weft_sched_tmp(s, bytes(s, count, type));
    if (p)
        pack(s, buf, count, type, p);
    return p;
}

/* ---------------------------------------------------------------- running */

static const char poison_byte = 1;

int weft_coll_isend_poison(weft_ctx_t *ctx, int world, uint32_t comm, uint64_t tag, size_t n,
                           int why, weft_request_t **req, void **tmp)
{
    size_t len = weft_coll_poison_len(n, why);
    *tmp = NULL;
    if (len > 1 && !(*tmp = calloc(1, len)))
        len = weft_coll_poison_len(n, WEFT_EPEERDEAD); /* a poison all the same */
    return weft_sr_isend(ctx, world, comm, tag, *tmp ? *tmp : &poison_byte, len, req);
}

/* Post a step; poison: the schedule failed before this round (a send is
 * then its poison). A weft status. */
static int post(weft_sched_t *s, step_t *st, bool poison)
{
    weft_ctx_t *ctx = s->ctx;
    bool send = st->kind == STEP_SEND;
    const void *t = send ? st->stype : st->dtype;
    size_t count = send ? st->scount : st->dcount;
    void *buf = send ? (void *)st->src : st->dst;
    size_t n = bytes(s, count, t);

    if (send && poison)
        return weft_coll_isend_poison(ctx, st->world, st->cid, st->tag, n,
                                      s->front->dead(s->err) ? WEFT_EPEERDEAD : WEFT_ETRUNC,
                                      &st->wreq, &st->staging);
    if (!send && n == 0)
        return weft_sr_irecv(ctx, st->world, st->cid, st->tag, st->spare, 2, &st->wreq);
    /* A receive has one spare byte past its data, for a poison. */
    struct iovec iov[SCHED_IOV_MAX + 1];
    int niov = 1;
    char *p;
    if (n == 0 || contig(s, buf, t, &p)) {
        p = n ? p : NULL;
        if (send)
            return weft_sr_isend(ctx, st->world, st->cid, st->tag, p, n, &st->wreq);
        iov[0].iov_base = p;
        iov[0].iov_len = n;
    } else {
        niov = s->front->iov(t, buf, count, iov, SCHED_IOV_MAX);
    }
    if (niov <= SCHED_IOV_MAX) {
        if (send)
            return weft_sr_isendv(ctx, st->world, st->cid, st->tag, iov, niov, &st->wreq);
        iov[niov].iov_base = st->spare;
        iov[niov].iov_len = 1;
        return weft_sr_irecvv(ctx, st->world, st->cid, st->tag, iov, niov + 1, &st->wreq);
    }
    st->staging = malloc(n + 1);
    if (!st->staging)
        return WEFT_ENOMEM;
    if (send) {
        s->front->pack(t, buf, count, n, st->staging);
        return weft_sr_isend(ctx, st->world, st->cid, st->tag, st->staging, n, &st->wreq);
    }
    return weft_sr_irecv(ctx, st->world, st->cid, st->tag, st->staging, n + 1, &st->wreq);
}

/* A local step; the front's error. */
static int run_local(weft_sched_t *s, step_t *st)
{
    if (st->kind == STEP_REDUCE)
        return s->front->reduce(st->op, st->src, st->dst, st->scount, st->stype);
    /* STEP_COPY */
    size_t sn = bytes(s, st->scount, st->stype);
    size_t dn = bytes(s, st->dcount, st->dtype);
    size_t n = sn < dn ? sn : dn;
    if (n == 0)
        return 0;
    char *sp, *dp;
    if (contig(s, st->src, st->stype, &sp)) {
        if (!contig(s, st->dst, st->dtype, &dp) || sp != dp)
            unpack(s, st->dst, st->dcount, st->dtype, sp, n);
        return 0;
    }
    if (contig(s, st->dst, st->dtype, &dp)) {
        s->front->pack(st->stype, st->src, st->scount, n, dp);
        return 0;
    }
    void *tmp = malloc(n);
    if (!tmp)
        return front_err(s, WEFT_ENOMEM);
    s->front->pack(st->stype, st->src, st->scount, n, tmp);
    s->front->unpack(st->dtype, st->dst, st->dcount, n, tmp);
    free(tmp);
    return 0;
}

/* Post the communication steps of round r; returns how many are in flight.
 * A step that cannot be posted (its peer is known dead, no memory) fails the
 * schedule, and the others still go: with their data, which earlier rounds
 * made whole, unless the schedule had failed before this round. */
static int round_start(weft_sched_t *s, int r)
{
    int first = r ? s->round_end[r - 1] : 0;
    int pending = 0;
    bool poison = s->err != 0;
    for (int i = first; i < s->round_end[r]; i++) {
        step_t *st = &s->steps[i];
        if (st->kind != STEP_SEND && st->kind != STEP_RECV)
            continue;
        int rc = post(s, st, poison);
        if (rc != WEFT_OK) {
            fail(s, front_err(s, rc));
            st->wreq = NULL;
            free(st->staging);
            st->staging = NULL;
            continue;
        }
        pending++;
    }
    return pending;
}

/* Test the round's requests; true when none is left. */
static bool round_test(weft_sched_t *s, int r)
{
    int first = r ? s->round_end[r - 1] : 0;
    for (int i = first; i < s->round_end[r] && s->pending > 0; i++) {
        step_t *st = &s->steps[i];
        if (!st->wreq)
            continue;
        int flag = 0;
        weft_status_t ws;
        int rc = weft_sr_check(s->ctx, st->wreq, &flag, &ws);
        if (!flag)
            continue;
        st->wreq = NULL;
        s->pending--;
        if (st->kind == STEP_RECV)
            rc = weft_coll_recv_status(rc, bytes(s, st->dcount, st->dtype), ws.length);
        if (rc == WEFT_OK && st->staging && st->kind == STEP_RECV)
            unpack(s, st->dst, st->dcount, st->dtype, st->staging, ws.length);
        free(st->staging);
        st->staging = NULL;
        if (rc != WEFT_OK)
            fail(s, front_err(s, rc));
    }
    return s->pending == 0;
}

/* The local steps of round r, once its communication is done; none once the
 * schedule has failed (their operands are not all there, and a protocol's
 * next exchange would rest on them). */
static int round_finish(weft_sched_t *s, int r)
{
    int err = 0;
    int first = r ? s->round_end[r - 1] : 0;
    for (int i = first; i < s->round_end[r] && s->err == 0; i++) {
        step_t *st = &s->steps[i];
        int rc = 0;
        if (st->kind == STEP_COPY || st->kind == STEP_REDUCE)
            rc = run_local(s, st);
        else if (st->kind == STEP_CALL)
            rc = st->call(s, st->dst); /* may add rounds: st is stale after */
        if (rc != 0 && err == 0)
            err = rc;
    }
    return err;
}

static void sched_unref(weft_sched_t *s)
{
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < s->nsteps; i++) {
        free(s->steps[i].staging);
        step_release(s, &s->steps[i]);
    }
    for (int i = 0; i < s->ntmps; i++)
        free(s->tmps[i]);
    free(s->tmps);
    free(s->steps);
    free(s->round_end);
    free(s);
}

static void unlist(weft_sched_t *s)
{
    /* Only a walk of the list under its lock makes listed false, dropping
     * the list's reference: one seen false needs nothing, and touches no
     * context (an owner may free its schedule after the context ended). */
    if (!atomic_load_explicit(&s->listed, memory_order_acquire))
        return;
    struct weft__scheds *l = s->ctx->scheds;
    weft_lock_acquire(&l->lock);
    bool was = atomic_load_explicit(&s->listed, memory_order_relaxed);
    if (was) {
        weft_sched_t **p = &l->head;
        while (*p && *p != s)
            p = &(*p)->next;
        if (*p)
            __atomic_store_n(p, s->next, __ATOMIC_RELEASE); /* read unlocked */
        atomic_store_explicit(&s->listed, false, memory_order_release);
        if (!l->head)
            weft_progress_arm(s->ctx, l->progress_id, 0);
    }
    weft_lock_release(&l->lock);
    if (was)
        sched_unref(s); /* the list's reference */
}

/* Advance s as far as it goes without blocking. Caller holds s->busy. */
static void advance(weft_sched_t *s)
{
    for (;;) {
        if (s->cur >= 0 && !round_test(s, s->cur))
            return;
        if (s->cur >= 0) {
            int err = round_finish(s, s->cur);
            if (err != 0)
                fail(s, err);
        }
        if (s->cur + 1 >= s->nrounds) {
            if (s->end) {
                weft_sched_end_fn *end = s->end;
                s->end = NULL;
                end(s, s->end_arg, s->err);
            }
            atomic_store_explicit(&s->done, true, memory_order_release);
            return;
        }
        s->cur++;
        atomic_fetch_add_explicit(&s->moves, 1, memory_order_relaxed);
        s->pending = round_start(s, s->cur);
    }
}

int weft_sched_poll(weft_sched_t *s, bool *done)
{
    if (atomic_load_explicit(&s->done, memory_order_acquire))
        goto out;
    if (atomic_flag_test_and_set_explicit(&s->busy, memory_order_acquire)) {
        *done = false; /* another thread is advancing it */
        return 0;
    }
    /* Another thread may have finished it between our first look and taking
     * busy: running its last round again would unpack into buffers the owner
     * is already reading. */
    if (!atomic_load_explicit(&s->done, memory_order_acquire))
        advance(s);
    atomic_flag_clear_explicit(&s->busy, memory_order_release);
    if (!atomic_load_explicit(&s->done, memory_order_acquire)) {
        *done = false;
        return 0;
    }
out:
    unlist(s); /* checks `listed` under the lock: other threads change it */
    *done = true;
    return s->err;
}

void weft_sched_free(weft_sched_t *s)
{
    if (!s)
        return;
    /* A started schedule still running stays listed (the list's reference
     * keeps it) and is freed by the walk that finds it ended. */
    if (atomic_load_explicit(&s->done, memory_order_acquire))
        unlist(s);
    sched_unref(s);
}

int weft_sched_start(weft_sched_t *s)
{
    weft_sched_round(s);
    if (s->err != 0)
        return s->err;
    struct weft__scheds *l = s->ctx->scheds;
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed); /* the list's */
    weft_lock_acquire(&l->lock);
    atomic_store_explicit(&s->listed, true, memory_order_relaxed);
    s->next = l->head;
    if (!s->next)
        weft_progress_arm(s->ctx, l->progress_id, 1);
    __atomic_store_n(&l->head, s, __ATOMIC_RELEASE);
    weft_lock_release(&l->lock);
    bool done;
    weft_sched_poll(s, &done); /* post the first round now */
    return 0;
}

bool weft_sched_active(weft_ctx_t *ctx)
{
    return ctx && ctx->scheds && __atomic_load_n(&ctx->scheds->head, __ATOMIC_ACQUIRE) != NULL;
}

int weft_sched_progress(weft_ctx_t *ctx)
{
    enum { SNAP = 32 };
    weft_sched_t *local[SNAP], **snap = local;
    int n = 0, cap = SNAP, moved = 0;
    if (!weft_sched_active(ctx))
        return 0;
    struct weft__scheds *l = ctx->scheds;
    weft_lock_acquire(&l->lock);
    for (weft_sched_t *s = l->head; s; s = s->next) {
        if (n == cap) {
            /* Many in flight: every one must move, or a peer waiting on an
             * old one could wait for ever. */
            weft_sched_t **more = malloc(sizeof(*more) * (size_t)cap * 2);
            if (!more)
                break;
            memcpy(more, snap, sizeof(*more) * (size_t)n);
            if (snap != local)
                free(snap);
            snap = more;
            cap *= 2;
        }
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
        snap[n++] = s;
    }
    weft_lock_release(&l->lock);
    for (int i = 0; i < n; i++) {
        bool done;
        unsigned before = atomic_load_explicit(&snap[i]->moves, memory_order_relaxed);
        weft_sched_poll(snap[i], &done);
        moved += done || atomic_load_explicit(&snap[i]->moves, memory_order_relaxed) != before;
        sched_unref(snap[i]);
    }
    if (snap != local)
        free(snap);
    return moved;
}

/* Unlist the schedules of front (every one when NULL, as the context ends:
 * its callback queue is gone by then, and the callback is not turned off). */
static void forget(weft_ctx_t *ctx, const weft_sched_front_t *front)
{
    struct weft__scheds *l = ctx ? ctx->scheds : NULL;
    if (!l)
        return;
    weft_sched_t *gone = NULL;
    weft_lock_acquire(&l->lock);
    for (weft_sched_t **p = &l->head; *p;) {
        weft_sched_t *s = *p;
        if (front && s->front != front) {
            p = &s->next;
            continue;
        }
        __atomic_store_n(p, s->next, __ATOMIC_RELEASE);
        atomic_store_explicit(&s->listed, false, memory_order_release);
        s->next = gone;
        gone = s;
    }
    if (!l->head && front)
        weft_progress_arm(ctx, l->progress_id, 0);
    weft_lock_release(&l->lock);
    while (gone) {
        weft_sched_t *next = gone->next;
        /* As the context ends, a schedule still running ends too, canceled
         * (its requests are gone): its owner hears it, as every operation
         * in flight at weft_finalize completes with WEFT_ECANCELED. */
        if (!front && gone->end && !atomic_load_explicit(&gone->done, memory_order_acquire)) {
            weft_sched_end_fn *end = gone->end;
            gone->end = NULL;
            fail(gone, front_err(gone, WEFT_ECANCELED));
            end(gone, gone->end_arg, gone->err);
        }
        sched_unref(gone);
        gone = next;
    }
}

void weft_sched_forget(weft_ctx_t *ctx, const weft_sched_front_t *front)
{
    if (front)
        forget(ctx, front);
}

static int sched_progress_cb(void *arg)
{
    return weft_sched_progress(arg);
}

int weft__sched_init(weft_ctx_t *ctx)
{
    struct weft__scheds *l = calloc(1, sizeof *l);
    if (!l)
        return WEFT_ENOMEM;
    weft_lock_init(&l->lock, WEFT_LOCK_SPIN);
    int rc = weft_progress_register(ctx, sched_progress_cb, ctx, &l->progress_id);
    if (rc) {
        weft_lock_destroy(&l->lock);
        free(l);
        return rc;
    }
    weft_progress_arm(ctx, l->progress_id, 0); /* until a schedule is listed */
    ctx->scheds = l;
    return WEFT_OK;
}

void weft__sched_fini(weft_ctx_t *ctx)
{
    struct weft__scheds *l = ctx->scheds;
    if (!l)
        return;
    /* Owners still holding schedules free them; here only the list goes. */
    forget(ctx, NULL);
    /* The callback stays registered: the context's queue goes with it (and
     * finds no list from now on). */
    ctx->scheds = NULL;
    weft_lock_destroy(&l->lock);
    free(l);
}
