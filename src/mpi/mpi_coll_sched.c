/* The schedule engine of the collectives: rounds of sends and receives posted
 * on the engine's collective communicator id, then local copies and reductions
 * (see mpi_coll_int.h for the model).
 *
 * Why rounds and not a dependency graph: every algorithm used here (dissemination,
 * binomial trees, recursive doubling, linear exchanges) is a sequence of
 * synchronous steps, and a round is the cheapest thing that expresses them; it is
 * the shape of the schedules of libNBC (Hoefler et al., "Implementation and
 * performance analysis of non-blocking collective operations for MPI", SC'07).
 *
 * Threads: a schedule is advanced by whichever thread gets its `busy` flag; the
 * others skip it. Active non-blocking schedules sit on weft__mpi.scheds (under
 * weft__mpi.lock, never held while calling the engine); progress_all takes a
 * reference on each before releasing the lock, so a schedule that completes and
 * is freed meanwhile stays valid until it is done with. */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"
#include "mpi/mpi_type_int.h"

/* Up to this many pieces a non-contiguous buffer goes to the engine as an iovec;
 * beyond, it is packed into a staging buffer. */
#define COLL_IOV_MAX 16

typedef enum step_kind {
    STEP_SEND,
    STEP_RECV,
    STEP_COPY,
    STEP_REDUCE,
    STEP_CALL,
} step_kind_t;

typedef struct step {
    step_kind_t kind;
    int world; /* send/recv: the peer's world rank */
    uint32_t cid;
    uint64_t tag;
    const void *src; /* send data, copy source, reduce `in` */
    size_t scount;
    MPI_Datatype stype;
    void *dst; /* receive buffer, copy destination, reduce `inout` */
    size_t dcount;
    MPI_Datatype dtype;
    MPI_Op op;
    weft_request_t *wreq;
    char spare[2];            /* a receive's room for a poison past its data */
    void *staging;            /* packed data of a non-contiguous buffer */
    weft__coll_call_fn *call; /* STEP_CALL, with dst as its argument */
    uint8_t held;             /* HELD_*: the references step_hold took */
} step_t;

enum { HELD_STYPE = 1, HELD_DTYPE = 2, HELD_OP = 4 };

struct weft__mpi_sched {
    weft__mpi_sched_t *next; /* on weft__mpi.scheds */
    atomic_int refs;
    atomic_flag busy;
    bool listed;
    atomic_bool done;
    atomic_uint moves; /* rounds ended: how a walk tells that it moved the schedule */
    int err;           /* the first failure: later sends are poisons, local steps are skipped */
    MPI_Comm comm;
    uint32_t seq, seq_local; /* on comm, on comm->local_comm */
    uint32_t phase;
    step_t *steps;
    int nsteps, cap_steps;
    int *round_end; /* round r holds steps [round_end[r-1], round_end[r]) */
    int nrounds, cap_rounds;
    int cur;     /* round in progress; -1 before the first */
    int pending; /* its communication steps not yet complete */
    void **tmps;
    int ntmps, cap_tmps;
    weft__coll_end_fn *end; /* called once when the schedule ends */
    void *end_arg;
};

static void *grow(void *p, int *cap, size_t elem)
{
    int n = *cap ? *cap * 2 : 8;
    void *q = realloc(p, (size_t)n * elem);
    if (q)
        *cap = n;
    return q;
}

weft__mpi_sched_t *weft__coll_new(MPI_Comm comm, bool nonblocking)
{
    weft__mpi_sched_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    atomic_flag_clear(&s->busy);
    atomic_init(&s->done, false);
    s->comm = comm;
    s->cur = -1;
    if (weft__coll_pin.on) {
        s->seq = weft__coll_pin.seq;
        s->seq_local = weft__coll_pin.seq_local;
        return s;
    }
    s->seq = weft__coll_next_seq(comm, nonblocking);
    if (comm->inter && comm->local_comm)
        s->seq_local = weft__coll_next_seq(comm->local_comm, nonblocking);
    return s;
}

void weft__coll_skip_seq(MPI_Comm comm, bool nonblocking)
{
    if (weft__coll_pin.on)
        return; /* a persistent init's numbers are its own */
    weft__coll_next_seq(comm, nonblocking);
    if (comm->inter && comm->local_comm)
        weft__coll_next_seq(comm->local_comm, nonblocking);
}

void weft__coll_on_end(weft__mpi_sched_t *s, weft__coll_end_fn *fn, void *arg)
{
    s->end = fn;
    s->end_arg = arg;
}

uint32_t weft__coll_seq(const weft__mpi_sched_t *s)
{
    return s->seq;
}

void weft__coll_round(weft__mpi_sched_t *s)
{
    if (s->nrounds > 0 && s->round_end[s->nrounds - 1] == s->nsteps)
        return; /* the current round is still empty */
    if (s->nrounds == s->cap_rounds) {
        int *r = grow(s->round_end, &s->cap_rounds, sizeof(int));
        if (!r) {
            s->err = MPI_ERR_NO_MEM;
            return;
        }
        s->round_end = r;
    }
    s->round_end[s->nrounds++] = s->nsteps;
}

void weft__coll_phase(weft__mpi_sched_t *s)
{
    weft__coll_round(s);
    s->phase++;
}

static step_t *step_add(weft__mpi_sched_t *s, step_kind_t kind)
{
    if (s->nsteps == s->cap_steps) {
        step_t *st = grow(s->steps, &s->cap_steps, sizeof(step_t));
        if (!st) {
            s->err = MPI_ERR_NO_MEM;
            return NULL;
        }
        s->steps = st;
    }
    step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    return st;
}

/* A step holds a reference on its datatypes and op: the application may free
 * them while a non-blocking collective is in flight (MPI 3.1 §4.1.9, §5.9.5),
 * and they go with the schedule. */
static void step_hold(step_t *st)
{
    if (weft__mpi_type_valid(st->stype)) {
        weft__mpi_type_retain(st->stype);
        st->held |= HELD_STYPE;
    }
    if (weft__mpi_type_valid(st->dtype)) {
        weft__mpi_type_retain(st->dtype);
        st->held |= HELD_DTYPE;
    }
    if (st->op && weft__coll_check_op(st->op) == MPI_SUCCESS) {
        weft__mpi_op_retain(st->op);
        st->held |= HELD_OP;
    }
}

static void step_release(step_t *st)
{
    if (st->held & HELD_STYPE)
        weft__mpi_type_release(st->stype);
    if (st->held & HELD_DTYPE)
        weft__mpi_type_release(st->dtype);
    if (st->held & HELD_OP)
        weft__mpi_op_release(st->op);
}

static step_t *comm_step(weft__mpi_sched_t *s, step_kind_t kind, MPI_Comm c, int peer, int k)
{
    step_t *st = step_add(s, kind);
    if (!st)
        return NULL;
    uint32_t seq = (c == s->comm) ? s->seq : s->seq_local;
    st->world = weft__mpi_comm_peer(c, peer);
    st->cid = c->id_coll;
    st->tag = weft__coll_tag(seq, s->phase, k);
    return st;
}

int weft__coll_send(weft__mpi_sched_t *s, MPI_Comm c, int peer, const void *buf, size_t count,
                    MPI_Datatype t, int k)
{
    step_t *st = comm_step(s, STEP_SEND, c, peer, k);
    if (!st)
        return MPI_ERR_NO_MEM;
    st->src = buf;
    st->scount = count;
    st->stype = t;
    step_hold(st);
    return MPI_SUCCESS;
}

int weft__coll_recv(weft__mpi_sched_t *s, MPI_Comm c, int peer, void *buf, size_t count,
                    MPI_Datatype t, int k)
{
    step_t *st = comm_step(s, STEP_RECV, c, peer, k);
    if (!st)
        return MPI_ERR_NO_MEM;
    st->dst = buf;
    st->dcount = count;
    st->dtype = t;
    step_hold(st);
    return MPI_SUCCESS;
}

int weft__coll_copy(weft__mpi_sched_t *s, const void *src, size_t scount, MPI_Datatype stype,
                    void *dst, size_t dcount, MPI_Datatype dtype)
{
    step_t *st = step_add(s, STEP_COPY);
    if (!st)
        return MPI_ERR_NO_MEM;
    st->src = src;
    st->scount = scount;
    st->stype = stype;
    st->dst = dst;
    st->dcount = dcount;
    st->dtype = dtype;
    step_hold(st);
    return MPI_SUCCESS;
}

int weft__coll_reduce(weft__mpi_sched_t *s, const void *in, void *inout, size_t count,
                      MPI_Datatype t, MPI_Op op)
{
    step_t *st = step_add(s, STEP_REDUCE);
    if (!st)
        return MPI_ERR_NO_MEM;
    st->src = in;
    st->dst = inout;
    st->scount = st->dcount = count;
    st->stype = st->dtype = t;
    st->op = op;
    step_hold(st);
    return MPI_SUCCESS;
}

int weft__coll_call(weft__mpi_sched_t *s, weft__coll_call_fn *fn, void *arg)
{
    step_t *st = step_add(s, STEP_CALL);
    if (!st)
        return MPI_ERR_NO_MEM;
    st->call = fn;
    st->dst = arg;
    return MPI_SUCCESS;
}

void *weft__coll_tmp(weft__mpi_sched_t *s, size_t n)
{
    if (s->ntmps == s->cap_tmps) {
        void **t = grow(s->tmps, &s->cap_tmps, sizeof(void *));
        if (!t) {
            s->err = MPI_ERR_NO_MEM;
            return NULL;
        }
        s->tmps = t;
    }
    void *p = malloc(n ? n : 1);
    if (!p) {
        s->err = MPI_ERR_NO_MEM;
        return NULL;
    }
    s->tmps[s->ntmps++] = p;
    return p;
}

void *weft__coll_tmp_typed(weft__mpi_sched_t *s, size_t count, MPI_Datatype t)
{
    /* The last element gets its whole extent when that is larger than its true
     * extent: operations on pair types copy whole C structs, padding included. */
    size_t n = 0, ext = (size_t)weft__mpi_type_extent(t),
           true_ext = (size_t)(t->true_ub - t->true_lb);
    if (count > 0)
        n = (true_ext > ext ? true_ext : ext) + (count - 1) * ext;
    char *p = weft__coll_tmp(s, n);
    return p ? p - t->true_lb : NULL;
}

/* Packed bytes of count elements of t at buf, into out. */
static void pack(const void *buf, size_t count, MPI_Datatype t, void *out)
{
    size_t n = weft__coll_bytes(count, t);
    if (!t || t->contig)
        memcpy(out, (const char *)buf + (t ? t->true_lb : 0), n);
    else
        weft__mpi_type_pack(t, buf, count, 0, n, out);
}

static void unpack(void *buf, size_t count, MPI_Datatype t, const void *in, size_t n)
{
    if (!t || t->contig)
        memcpy((char *)buf + (t ? t->true_lb : 0), in, n);
    else
        weft__mpi_type_unpack(t, buf, count, 0, n, in);
}

void *weft__coll_snapshot(weft__mpi_sched_t *s, const void *buf, size_t count, MPI_Datatype t)
{
    void *p = weft__coll_tmp(s, weft__coll_bytes(count, t));
    if (p)
        pack(buf, count, t, p);
    return p;
}

/* ---------------------------------------------------------------- running */

static const char poison_byte = 1;

int weft__coll_isend_poison(int world, uint32_t cid, uint64_t tag, size_t n, int why,
                            weft_request_t **req, void **tmp)
{
    size_t len = weft__coll_poison_len(n, why);
    *tmp = NULL;
    if (len > 1 && !(*tmp = calloc(1, len)))
        len = weft__coll_poison_len(n, WEFT_EPEERDEAD); /* a poison all the same */
    return weft_sr_isend(weft__mpi.ctx, world, cid, tag, *tmp ? *tmp : &poison_byte, len, req);
}

/* Post a step; poison: the schedule failed before this round (a send is
 * then its poison). */
static int post(weft__mpi_sched_t *s, step_t *st, bool poison)
{
    weft_ctx_t *ctx = weft__mpi.ctx;
    bool send = st->kind == STEP_SEND;
    MPI_Datatype t = send ? st->stype : st->dtype;
    size_t count = send ? st->scount : st->dcount;
    void *buf = send ? (void *)st->src : st->dst;
    size_t n = weft__coll_bytes(count, t);

    if (send && poison)
        return weft__coll_isend_poison(
            st->world, st->cid, st->tag, n,
            s->err == MPIX_ERR_PROC_FAILED ? WEFT_EPEERDEAD : WEFT_ETRUNC, &st->wreq, &st->staging);
    if (!send && n == 0)
        return weft_sr_irecv(ctx, st->world, st->cid, st->tag, st->spare, 2, &st->wreq);
    /* A receive has one spare byte past its data, for a poison (see
     * mpi_coll_int.h). */
    struct iovec iov[COLL_IOV_MAX + 1];
    int niov = 1;
    if (!t || t->contig || n == 0) {
        char *p = n ? (char *)buf + (t ? t->true_lb : 0) : NULL;
        if (send)
            return weft_sr_isend(ctx, st->world, st->cid, st->tag, p, n, &st->wreq);
        iov[0].iov_base = p;
        iov[0].iov_len = n;
    } else {
        niov = weft__mpi_type_iov(t, buf, count, iov, COLL_IOV_MAX);
    }
    if (niov <= COLL_IOV_MAX) {
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
        weft__mpi_type_pack(t, buf, count, 0, n, st->staging);
        return weft_sr_isend(ctx, st->world, st->cid, st->tag, st->staging, n, &st->wreq);
    }
    return weft_sr_irecv(ctx, st->world, st->cid, st->tag, st->staging, n + 1, &st->wreq);
}

static int run_local(step_t *st)
{
    if (st->kind == STEP_REDUCE)
        return weft__mpi_op_apply(st->op, st->src, st->dst, st->scount, st->stype);
    /* STEP_COPY */
    size_t sn = weft__coll_bytes(st->scount, st->stype);
    size_t dn = weft__coll_bytes(st->dcount, st->dtype);
    size_t n = sn < dn ? sn : dn;
    if (n == 0)
        return MPI_SUCCESS;
    bool scontig = !st->stype || st->stype->contig;
    bool dcontig = !st->dtype || st->dtype->contig;
    if (scontig) {
        const char *p = (const char *)st->src + (st->stype ? st->stype->true_lb : 0);
        if (p != (char *)st->dst + (st->dtype ? st->dtype->true_lb : 0))
            unpack(st->dst, st->dcount, st->dtype, p, n);
        return MPI_SUCCESS;
    }
    if (dcontig) {
        weft__mpi_type_pack(st->stype, st->src, st->scount, 0, n,
                            (char *)st->dst + (st->dtype ? st->dtype->true_lb : 0));
        return MPI_SUCCESS;
    }
    void *tmp = malloc(n);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    weft__mpi_type_pack(st->stype, st->src, st->scount, 0, n, tmp);
    weft__mpi_type_unpack(st->dtype, st->dst, st->dcount, 0, n, tmp);
    free(tmp);
    return MPI_SUCCESS;
}

static void fail(weft__mpi_sched_t *s, int weft_rc)
{
    if (s->err == MPI_SUCCESS)
        s->err = weft__mpi_err_from_weft(weft_rc);
}

/* Post the communication steps of round r; returns how many are in flight.
 * A step that cannot be posted (its peer is known dead, no memory) fails the
 * schedule, and the others still go: with their data, which earlier rounds
 * made whole, unless the schedule had failed before this round. */
static int round_start(weft__mpi_sched_t *s, int r)
{
    int first = r ? s->round_end[r - 1] : 0;
    int pending = 0;
    bool poison = s->err != MPI_SUCCESS;
    for (int i = first; i < s->round_end[r]; i++) {
        step_t *st = &s->steps[i];
        if (st->kind != STEP_SEND && st->kind != STEP_RECV)
            continue;
        int rc = post(s, st, poison);
        if (rc != WEFT_OK) {
            fail(s, rc);
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
static bool round_test(weft__mpi_sched_t *s, int r)
{
    int first = r ? s->round_end[r - 1] : 0;
    for (int i = first; i < s->round_end[r] && s->pending > 0; i++) {
        step_t *st = &s->steps[i];
        if (!st->wreq)
            continue;
        int flag = 0;
        weft_status_t ws;
        int rc = weft_sr_check(weft__mpi.ctx, st->wreq, &flag, &ws);
        if (!flag)
            continue;
        st->wreq = NULL;
        s->pending--;
        if (st->kind == STEP_RECV)
            rc = weft__coll_recv_status(rc, weft__coll_bytes(st->dcount, st->dtype), ws.length);
        if (rc == WEFT_OK && st->staging && st->kind == STEP_RECV)
            unpack(st->dst, st->dcount, st->dtype, st->staging, ws.length);
        free(st->staging);
        st->staging = NULL;
        if (rc != WEFT_OK)
            fail(s, rc);
    }
    return s->pending == 0;
}

/* The local steps of round r, once its communication is done; none once the
 * schedule has failed (their operands are not all there, and a protocol's
 * next exchange would rest on them). */
static int round_finish(weft__mpi_sched_t *s, int r)
{
    int err = MPI_SUCCESS;
    int first = r ? s->round_end[r - 1] : 0;
    for (int i = first; i < s->round_end[r] && s->err == MPI_SUCCESS; i++) {
        step_t *st = &s->steps[i];
        int rc = MPI_SUCCESS;
        if (st->kind == STEP_COPY || st->kind == STEP_REDUCE)
            rc = run_local(st);
        else if (st->kind == STEP_CALL)
            rc = st->call(s, st->dst); /* may add rounds: st is stale after */
        if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
            err = rc;
    }
    return err;
}

static void sched_unref(weft__mpi_sched_t *s)
{
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < s->nsteps; i++) {
        free(s->steps[i].staging);
        step_release(&s->steps[i]);
    }
    for (int i = 0; i < s->ntmps; i++)
        free(s->tmps[i]);
    free(s->tmps);
    free(s->steps);
    free(s->round_end);
    free(s);
}

static void unlist(weft__mpi_sched_t *s)
{
    weft_lock_acquire(&weft__mpi.lock);
    bool was = s->listed;
    if (was) {
        weft__mpi_sched_t **p = &weft__mpi.scheds;
        while (*p && *p != s)
            p = &(*p)->next;
        if (*p)
            __atomic_store_n(p, s->next, __ATOMIC_RELEASE); /* read unlocked */
        s->listed = false;
        if (!weft__mpi.scheds)
            weft__mpi_progress_arm(false);
    }
    weft_lock_release(&weft__mpi.lock);
    if (was)
        sched_unref(s); /* the list's reference */
}

/* Advance s as far as it goes without blocking. Caller holds s->busy. */
static void advance(weft__mpi_sched_t *s)
{
    /* A failed step (a dead peer, a poison, a truncated message, a failed
     * local step) is remembered, and the schedule goes on with poisons in
     * place of its later sends (see "failures" in mpi_coll_int.h): stopping
     * would leave the ranks that wait on our later rounds hanging. */
    for (;;) {
        if (s->cur >= 0 && !round_test(s, s->cur))
            return;
        if (s->cur >= 0) {
            int err = round_finish(s, s->cur);
            if (err != MPI_SUCCESS && s->err == MPI_SUCCESS)
                s->err = err;
        }
        if (s->cur + 1 >= s->nrounds) {
            if (s->end) {
                weft__coll_end_fn *end = s->end;
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

int weft__mpi_sched_poll(weft__mpi_sched_t *s, bool *done)
{
    if (atomic_load_explicit(&s->done, memory_order_acquire))
        goto out;
    if (atomic_flag_test_and_set_explicit(&s->busy, memory_order_acquire)) {
        *done = false; /* another thread is advancing it */
        return MPI_SUCCESS;
    }
    /* Another thread may have finished it between our first look and taking
     * busy: running its last round again would unpack into buffers the owner
     * is already reading. */
    if (!atomic_load_explicit(&s->done, memory_order_acquire))
        advance(s);
    atomic_flag_clear_explicit(&s->busy, memory_order_release);
    if (!atomic_load_explicit(&s->done, memory_order_acquire)) {
        *done = false;
        return MPI_SUCCESS;
    }
out:
    unlist(s); /* checks `listed` under the lock: other threads change it */
    *done = true;
    return s->err;
}

void weft__mpi_sched_free(weft__mpi_sched_t *s)
{
    if (!s)
        return;
    unlist(s);
    sched_unref(s);
}

void weft__coll_discard(weft__mpi_sched_t *s)
{
    weft__mpi_sched_free(s);
}

void weft__mpi_progress_arm(bool on)
{
    if (weft__mpi.progress_id >= 0)
        weft_progress_arm(weft__mpi.ctx, weft__mpi.progress_id, on);
}

int weft__mpi_progress_cb(void *arg)
{
    (void)arg;
    return weft__mpi_sched_progress_all();
}

int weft__mpi_sched_progress_all(void)
{
    enum { SNAP = 32 };
    weft__mpi_sched_t *local[SNAP], **snap = local;
    int n = 0, cap = SNAP, moved = 0;
    /* Cheap check first: no active schedule, nothing to do. */
    if (!weft__mpi_scheds_active())
        return 0;
    weft_lock_acquire(&weft__mpi.lock);
    for (weft__mpi_sched_t *s = weft__mpi.scheds; s; s = s->next) {
        if (n == cap) {
            /* Many in flight: every one must move, or a peer waiting on an
             * old one could wait for ever. */
            weft__mpi_sched_t **more = malloc(sizeof(*more) * (size_t)cap * 2);
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
    weft_lock_release(&weft__mpi.lock);
    for (int i = 0; i < n; i++) {
        bool done;
        unsigned before = atomic_load_explicit(&snap[i]->moves, memory_order_relaxed);
        weft__mpi_sched_poll(snap[i], &done);
        moved += done || atomic_load_explicit(&snap[i]->moves, memory_order_relaxed) != before;
        sched_unref(snap[i]);
    }
    if (snap != local)
        free(snap);
    return moved;
}

void weft__mpi_sched_fini(void)
{
    /* Requests still holding schedules free them; here only the list goes. */
    weft_lock_acquire(&weft__mpi.lock);
    weft__mpi_sched_t *s = weft__mpi.scheds;
    __atomic_store_n(&weft__mpi.scheds, NULL, __ATOMIC_RELEASE);
    weft__mpi_progress_arm(false);
    weft_lock_release(&weft__mpi.lock);
    while (s) {
        weft__mpi_sched_t *next = s->next;
        s->listed = false;
        sched_unref(s);
        s = next;
    }
}

int weft__coll_post_direct(weft__coll_direct_t *d, MPI_Comm c, int peer, uint64_t tag, void *buf,
                           size_t n, bool send, int why)
{
    if (!buf)
        return WEFT_OK;
    weft_ctx_t *ctx = weft__mpi.ctx;
    int world = weft__mpi_comm_peer(c, peer);
    int i = d->nreq;
    int rc;
    d->tmp[i] = NULL;
    if (!send) {
        /* With a spare byte for a poison (see above). */
        struct iovec iov[2] = {{.iov_base = buf, .iov_len = n ? n : 1},
                               {.iov_base = &d->spare[i], .iov_len = 1}};
        rc = weft_sr_irecvv(ctx, world, c->id_coll, tag, iov, 2, &d->reqs[i]);
    } else if (why != WEFT_OK)
        rc = weft__coll_isend_poison(world, c->id_coll, tag, n, why, &d->reqs[i], &d->tmp[i]);
    else
        rc = weft_sr_isend(ctx, world, c->id_coll, tag, buf, n, &d->reqs[i]);
    if (rc != WEFT_OK) {
        free(d->tmp[i]);
        return rc;
    }
    d->n[i] = send ? SIZE_MAX : n;
    d->nreq++;
    return WEFT_OK;
}

int weft__coll_wait_direct(weft__coll_direct_t *d)
{
    weft_ctx_t *ctx = weft__mpi.ctx;
    int rc = WEFT_OK;
    bool scheds = weft__mpi_scheds_active();
    weft_idle_t idle = {0};
    for (int i = 0; i < d->nreq;) {
        weft_status_t ws;
        int flag = 1, trc;
        if (scheds) {
            /* Non-blocking collectives in flight move on while we wait. */
            weft__mpi_progress();
            trc = weft_sr_check(ctx, d->reqs[i], &flag, &ws);
        } else {
            trc = weft_sr_wait(ctx, d->reqs[i], &ws);
        }
        if (!flag) {
            weft_idle(ctx, &idle);
            continue;
        }
        if (d->n[i] != SIZE_MAX)
            trc = weft__coll_recv_status(trc, d->n[i], ws.length);
        free(d->tmp[i]);
        rc = rc != WEFT_OK ? rc : trc;
        i++;
    }
    d->nreq = 0;
    return rc;
}

int weft__coll_run(weft__mpi_sched_t *s)
{
    weft__coll_round(s);
    if (s->err != MPI_SUCCESS) {
        int err = s->err;
        weft__mpi_sched_free(s);
        return err;
    }
    bool done = false;
    weft_idle_t idle = {0};
    int err = weft__mpi_sched_poll(s, &done);
    while (!done) {
        weft__mpi_progress();
        err = weft__mpi_sched_poll(s, &done);
        if (!done)
            weft_idle(weft__mpi.ctx, &idle); /* a peer may need our core */
    }
    weft__mpi_sched_free(s);
    return err;
}

int weft__coll_start(weft__mpi_sched_t *s, MPI_Comm comm, MPI_Request *request)
{
    weft__coll_round(s);
    if (s->err != MPI_SUCCESS) {
        int err = s->err;
        weft__mpi_sched_free(s);
        return err;
    }
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_COLL, comm);
    if (!r) {
        weft__mpi_sched_free(s);
        return MPI_ERR_NO_MEM;
    }
    r->sched = s;
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    weft_lock_acquire(&weft__mpi.lock);
    s->listed = true;
    s->next = weft__mpi.scheds;
    if (!s->next)
        weft__mpi_progress_arm(true);
    __atomic_store_n(&weft__mpi.scheds, s, __ATOMIC_RELEASE);
    weft_lock_release(&weft__mpi.lock);
    bool done;
    weft__mpi_sched_poll(s, &done); /* post the first round now */
    *request = r;
    return MPI_SUCCESS;
}
