/* The MPI front end of the schedule engine (weft_coll.h): how MPI datatypes
 * and ops behave in a schedule, the collective numbering on communicators,
 * and running or starting a schedule as a blocking call or a request.
 *
 * The engine advances started schedules in every progress pass, the
 * progress thread's included, so a non-blocking collective moves on while
 * every application thread computes; a blocking one is polled here. */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"
#include "mpi/mpi_type_int.h"

/* ---------------------------------------------------------------- the front */

static size_t f_size(const void *t)
{
    return ((MPI_Datatype)t)->size;
}

static bool f_contig(const void *type, ptrdiff_t *offset)
{
    MPI_Datatype t = (MPI_Datatype)type;
    *offset = t->true_lb;
    return t->contig;
}

static int f_iov(const void *t, const void *buf, size_t count, struct iovec *iov, int max)
{
    return weft__mpi_type_iov((MPI_Datatype)t, buf, count, iov, max);
}

static void f_pack(const void *t, const void *buf, size_t count, size_t n, void *out)
{
    weft__mpi_type_pack((MPI_Datatype)t, buf, count, 0, n, out);
}

static void f_unpack(const void *t, void *buf, size_t count, size_t n, const void *in)
{
    weft__mpi_type_unpack((MPI_Datatype)t, buf, count, 0, n, in);
}

static size_t f_span(const void *type, size_t count, ptrdiff_t *offset)
{
    /* The last element gets its whole extent when that is larger than its true
     * extent: operations on pair types copy whole C structs, padding included. */
    MPI_Datatype t = (MPI_Datatype)type;
    size_t ext = (size_t)weft__mpi_type_extent(t), true_ext = (size_t)(t->true_ub - t->true_lb);
    *offset = t->true_lb;
    return count ? (true_ext > ext ? true_ext : ext) + (count - 1) * ext : 0;
}

static int f_reduce(const void *op, const void *in, void *inout, size_t count, const void *t)
{
    return weft__mpi_op_apply((MPI_Op)op, in, inout, count, (MPI_Datatype)t);
}

static bool f_commute(const void *op)
{
    return ((MPI_Op)op)->commute;
}

/* A step holds a reference on its datatypes and op: the application may free
 * them while a non-blocking collective is in flight (MPI 3.1 §4.1.9, §5.9.5). */
static bool f_hold(const void *obj, bool is_op)
{
    if (is_op) {
        if (weft__coll_check_op((MPI_Op)obj) != MPI_SUCCESS)
            return false;
        weft__mpi_op_retain((MPI_Op)obj);
        return true;
    }
    if (!weft__mpi_type_valid((MPI_Datatype)obj))
        return false;
    weft__mpi_type_retain((MPI_Datatype)obj);
    return true;
}

static void f_drop(const void *obj, bool is_op)
{
    if (is_op)
        weft__mpi_op_release((MPI_Op)obj);
    else
        weft__mpi_type_release((MPI_Datatype)obj);
}

static bool f_dead(int err)
{
    return err == MPIX_ERR_PROC_FAILED;
}

const weft_sched_front_t weft__mpi_coll_front = {
    .size = f_size,
    .contig = f_contig,
    .iov = f_iov,
    .pack = f_pack,
    .unpack = f_unpack,
    .span = f_span,
    .reduce = f_reduce,
    .commute = f_commute,
    .hold = f_hold,
    .drop = f_drop,
    .error = weft__mpi_err_from_weft,
    .dead = f_dead,
};

/* ---------------------------------------------------------------- numbering */

/* What the MPI layer keeps in a schedule (weft_sched_extra). */
typedef struct mpi_sched {
    MPI_Comm comm;
    uint32_t seq, seq_local; /* on comm, on comm->local_comm */
} mpi_sched_t;

static mpi_sched_t *ext(weft__mpi_sched_t *s)
{
    return weft_sched_extra(s);
}

weft__mpi_sched_t *weft__coll_new(MPI_Comm comm, bool nonblocking)
{
    weft__mpi_sched_t *s =
        weft_sched_new(weft__mpi.ctx, &weft__mpi_coll_front, sizeof(mpi_sched_t));
    if (!s)
        return NULL;
    mpi_sched_t *m = ext(s);
    m->comm = comm;
    if (weft__coll_pin.on) {
        m->seq = weft__coll_pin.seq;
        m->seq_local = weft__coll_pin.seq_local;
        return s;
    }
    m->seq = weft__coll_next_seq(comm, nonblocking);
    if (comm->inter && comm->local_comm)
        m->seq_local = weft__coll_next_seq(comm->local_comm, nonblocking);
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

uint32_t weft__coll_seq(weft__mpi_sched_t *s)
{
    return ext(s)->seq;
}

static int comm_world(const void *arg, int i)
{
    return weft__mpi_comm_peer((MPI_Comm)arg, i);
}

weft_coll_view_t weft__coll_view(weft__mpi_sched_t *s, MPI_Comm c)
{
    mpi_sched_t *m = ext(s);
    return (weft_coll_view_t){.size = c->size,
                              .rank = c->rank,
                              .world = comm_world,
                              .arg = c,
                              .comm = c->id_coll,
                              .seq = c == m->comm ? m->seq : m->seq_local};
}

static uint64_t tag_of(weft__mpi_sched_t *s, MPI_Comm c, int k)
{
    mpi_sched_t *m = ext(s);
    return weft_coll_tag(c == m->comm ? m->seq : m->seq_local, weft_sched_phase_of(s), k);
}

int weft__coll_send(weft__mpi_sched_t *s, MPI_Comm c, int peer, const void *buf, size_t count,
                    MPI_Datatype t, int k)
{
    return weft_sched_send(s, weft__mpi_comm_peer(c, peer), c->id_coll, tag_of(s, c, k), buf, count,
                           t);
}

int weft__coll_recv(weft__mpi_sched_t *s, MPI_Comm c, int peer, void *buf, size_t count,
                    MPI_Datatype t, int k)
{
    return weft_sched_recv(s, weft__mpi_comm_peer(c, peer), c->id_coll, tag_of(s, c, k), buf, count,
                           t);
}

/* ---------------------------------------------------------------- running */

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
        /* With a spare byte for a poison (weft_coll.h). */
        struct iovec iov[2] = {{.iov_base = buf, .iov_len = n ? n : 1},
                               {.iov_base = &d->spare[i], .iov_len = 1}};
        rc = weft_sr_irecvv(ctx, world, c->id_coll, tag, iov, 2, &d->reqs[i]);
    } else if (why != WEFT_OK)
        rc = weft_coll_isend_poison(ctx, world, c->id_coll, tag, n, why, &d->reqs[i], &d->tmp[i]);
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
            trc = weft_coll_recv_status(trc, d->n[i], ws.length);
        free(d->tmp[i]);
        rc = rc != WEFT_OK ? rc : trc;
        i++;
    }
    d->nreq = 0;
    return rc;
}

int weft__coll_run(weft__mpi_sched_t *s)
{
    /* Not started: this thread alone runs it, and no progress pass walks it. */
    weft_sched_round(s);
    int err = weft_sched_error(s);
    if (err != MPI_SUCCESS) {
        weft_sched_free(s);
        return err;
    }
    bool done = false;
    weft_idle_t idle = {0};
    err = weft_sched_poll(s, &done);
    while (!done) {
        weft__mpi_progress();
        err = weft_sched_poll(s, &done);
        if (!done)
            weft_idle(weft__mpi.ctx, &idle); /* a peer may need our core */
    }
    weft_sched_free(s);
    return err;
}

int weft__coll_start(weft__mpi_sched_t *s, MPI_Comm comm, MPI_Request *request)
{
    weft_sched_round(s);
    int err = weft_sched_error(s);
    if (err != MPI_SUCCESS) {
        weft_sched_free(s);
        return err;
    }
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_COLL, comm);
    if (!r) {
        weft_sched_free(s);
        return MPI_ERR_NO_MEM;
    }
    r->sched = s; /* the request's reference: ours */
    weft_sched_start(s);
    *request = r;
    return MPI_SUCCESS;
}
