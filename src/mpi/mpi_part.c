/* Partitioned communication (MPI 4.0 §4): MPI_Psend_init, MPI_Precv_init,
 * MPI_Pready(_range, _list), MPI_Parrived.
 *
 * For threads that each produce part of one message: each partition leaves
 * as its own engine message the moment MPI_Pready marks it, from whichever
 * thread marks it, without a lock (the engine takes sends from any thread),
 * so the first partitions travel while the last are still being computed.
 *
 * Wire. Partitioned traffic has an engine communicator id of its own, the
 * communicator's fourth (4k + 3, beside point-to-point, collectives and the
 * layer's exchanges), so it never meets other messages. A pair of requests is
 * a channel, named in the engine tag by the user's tag and a serial: the n-th
 * MPI_Psend_init to (dest, tag) on a communicator pairs with the n-th
 * MPI_Precv_init from (source, tag) there, in the order of the init calls
 * (§4.2.2). The counters live in the communicator object, so one made later
 * on a reused id starts again from 0 at every member. The low bits carry the sender's partition
 * index, or HELLO:
 *
 *   engine tag = tag << 32 | (serial mod 4096) << 20 | index
 *
 * Sender and receiver may partition differently (§4.2): at its first start,
 * the sender tells the receiver its partitioning (a HELLO message: partition
 * count and bytes per partition); the receiver then posts one receive per
 * sender partition, at that partition's bytes of its own buffer, every run.
 * A receive partition has arrived once every sender partition that overlaps
 * its bytes has. Non-contiguous data is packed (send) or unpacked (receive)
 * per partition through a staging buffer.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"
#include "util/lock.h"

#define PART_INDEX_BITS 20
#define PART_HELLO      ((1u << PART_INDEX_BITS) - 1) /* also the most partitions + 1 */
#define PART_SERIALS    4096u

struct weft__mpi_part {
    bool send;
    char *buf;          /* the user's buffer at its true lower bound (contiguous) */
    const void *origin; /* the user's buffer as given */
    MPI_Datatype type;  /* referenced */
    int partitions, count;
    size_t pbytes;    /* bytes of one of this side's partitions */
    int peer;         /* world rank */
    uint32_t id;      /* engine communicator id */
    uint64_t chan;    /* tag << 32 | serial << 20 */
    char *staging;    /* non-contiguous data, packed, whole message */
    bool started;     /* a run was started once (the sender has said HELLO) */
    weft_lock_t lock; /* the receiver's polls, and anyone's Test/Wait */
    /* This run, per sender partition: its engine request until it completed
     * (a send's comes from whichever thread called MPI_Pready), done flags. */
    _Atomic(weft_request_t *) *reqs;
    atomic_bool *ready; /* sender: marked ready this run */
    bool *done;
    int ndone;
    int err; /* the run's first error (MPI class) */
    /* Sender: the HELLO in flight and its words. Receiver: the sender's
     * partitioning, once known (nsp > 0). */
    weft_request_t *hello;
    uint64_t hello_words[2];
    int nsp;
    size_t spbytes;
};

/* The next serial of (peer, tag) for this side on comm: one counter per key,
 * in a list on the communicator (inits are rare). */
struct weft__mpi_part_serial {
    int peer, tag;
    bool send;
    uint32_t next;
    struct weft__mpi_part_serial *link;
};

static int next_serial(MPI_Comm comm, int peer, int tag, bool send, uint32_t *out)
{
    int rc = MPI_SUCCESS;
    weft_lock_acquire(&weft__mpi.lock);
    struct weft__mpi_part_serial *e = comm->part_serials;
    while (e && !(e->peer == peer && e->tag == tag && e->send == send))
        e = e->link;
    if (!e && (e = calloc(1, sizeof *e))) {
        *e = (struct weft__mpi_part_serial){
            .peer = peer, .tag = tag, .send = send, .link = comm->part_serials};
        comm->part_serials = e;
    }
    if (e)
        *out = e->next++ % PART_SERIALS;
    else
        rc = MPI_ERR_NO_MEM;
    weft_lock_release(&weft__mpi.lock);
    return rc;
}

void weft__mpi_part_comm_fini(MPI_Comm c)
{
    while (c->part_serials) {
        struct weft__mpi_part_serial *e = c->part_serials;
        c->part_serials = e->link;
        free(e);
    }
}

void weft__mpi_part_fini(void)
{
    weft__mpi_part_comm_fini(MPI_COMM_WORLD);
    weft__mpi_part_comm_fini(MPI_COMM_SELF);
}

/* Free p and what it owns (not its type's reference). */
static void part_destroy(struct weft__mpi_part *p)
{
    free(p->ready);
    free(p->reqs);
    free(p->done);
    free(p->staging);
    weft_lock_destroy(&p->lock);
    free(p);
}

static uint64_t part_tag(const struct weft__mpi_part *p, unsigned index)
{
    return p->chan | index;
}

static int init(const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int peer,
                int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request, bool send,
                const char *fn)
{
    int rc = weft__mpi_check_init();
    if (!rc)
        rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, fn);
    if (!request)
        rc = MPI_ERR_REQUEST;
    else if (!info || info->magic != WEFT_MPI_MAGIC_INFO)
        rc = MPI_ERR_INFO;
    else if (partitions < 1 || partitions >= (int)PART_HELLO)
        rc = MPI_ERR_ARG;
    else if (count < 0 || count > INT_MAX)
        rc = MPI_ERR_COUNT;
    else if (tag < 0 || tag > INT_MAX)
        rc = MPI_ERR_TAG; /* no wildcards (§4.2.1) */
    else if (peer < 0 || peer >= weft__mpi_comm_peer_size(comm))
        rc = MPI_ERR_RANK; /* nor MPI_PROC_NULL, MPI_ANY_SOURCE */
    else if (!(rc = weft__mpi_check_type(type)))
        rc = weft__mpi_check_buf(buf, count > 0, type);
    if (rc)
        return weft__mpi_err(comm, rc, fn);
    struct weft__mpi_part *p = calloc(1, sizeof *p);
    if (!p)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    p->send = send;
    p->origin = buf;
    p->type = type;
    p->partitions = partitions;
    p->count = (int)count;
    p->pbytes = type->size * (size_t)count;
    p->peer = weft__mpi_comm_peer(comm, peer);
    p->id = comm->id_p2p + 3;
    p->buf = (char *)buf + type->true_lb;
    uint32_t serial = 0;
    size_t total = p->pbytes * (size_t)partitions;
    if ((rc = next_serial(comm, peer, tag, send, &serial)) ||
        (!type->contig && !(p->staging = malloc(total ? total : 1)))) {
        free(p);
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_NO_MEM, fn);
    }
    p->chan = (uint64_t)tag << 32 | (uint64_t)serial << PART_INDEX_BITS;
    weft_lock_init(&p->lock, weft__mpi.thread_level == MPI_THREAD_MULTIPLE ? WEFT_LOCK_MUTEX
                                                                           : WEFT_LOCK_NONE);
    if (send) {
        p->ready = calloc((size_t)partitions, sizeof *p->ready);
        p->reqs = calloc((size_t)partitions, sizeof *p->reqs);
        p->done = calloc((size_t)partitions, sizeof *p->done);
    }
    MPI_Request r = NULL;
    if ((send && (!p->ready || !p->reqs || !p->done)) ||
        !(r = weft__mpi_req_alloc(WEFT_MPI_REQ_PART, comm))) {
        part_destroy(p);
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    }
    weft__mpi_type_retain(type);
    r->persistent = true;
    r->type = NULL; /* the part holds the type */
    r->peer = peer;
    r->tag = tag;
    r->prt = p;
    *request = r;
    return MPI_SUCCESS;
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init(buf, partitions, count, datatype, dest, tag, comm, info, request, true,
                "MPI_Psend_init");
}
WEFT_MPI_ALIAS(Psend_init)

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init(buf, partitions, count, datatype, source, tag, comm, info, request, false,
                "MPI_Precv_init");
}
WEFT_MPI_ALIAS(Precv_init)

/* Post the receive of sender partition i: its bytes of our buffer, cut to
 * what the buffer holds (a longer message then ends in MPI_ERR_TRUNCATE). */
static int post_recv(struct weft__mpi_part *p, int i)
{
    size_t total = p->pbytes * (size_t)p->partitions;
    size_t off = p->spbytes * (size_t)i;
    size_t len = off >= total ? 0 : total - off < p->spbytes ? total - off : p->spbytes;
    char *at = (p->staging ? p->staging : p->buf) + (off < total ? off : 0);
    weft_request_t *w = NULL;
    int wrc = weft_sr_irecv(weft__mpi.ctx, p->peer, p->id, part_tag(p, (unsigned)i), at, len, &w);
    atomic_store_explicit(&p->reqs[i], w, memory_order_release);
    return weft__mpi_err_from_weft(wrc);
}

/* Receiver: the sender's partitioning is known (from its HELLO): make room
 * for it and post this run's receives. */
static int learned(struct weft__mpi_part *p)
{
    p->nsp = (int)p->hello_words[0];
    p->spbytes = (size_t)p->hello_words[1];
    if (p->nsp < 1 || p->nsp >= (int)PART_HELLO)
        return MPI_ERR_INTERN;
    p->reqs = calloc((size_t)p->nsp, sizeof *p->reqs);
    p->done = calloc((size_t)p->nsp, sizeof *p->done);
    if (!p->reqs || !p->done)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < p->nsp && !rc; i++)
        rc = post_recv(p, i);
    return rc;
}

int weft__mpi_part_start(MPI_Request r)
{
    struct weft__mpi_part *p = r->prt;
    r->complete = false;
    r->active = true;
    weft__mpi_status_empty(&r->status);
    p->ndone = 0;
    p->err = MPI_SUCCESS;
    int n = p->send ? p->partitions : p->nsp;
    if (p->done)
        memset(p->done, 0, (size_t)n * sizeof *p->done);
    int rc = MPI_SUCCESS, wrc = WEFT_OK;
    if (p->send) {
        for (int i = 0; i < p->partitions; i++) {
            atomic_store_explicit(&p->ready[i], false, memory_order_relaxed);
            atomic_store_explicit(&p->reqs[i], NULL, memory_order_relaxed);
        }
        if (!p->started) {
            p->hello_words[0] = (uint64_t)p->partitions;
            p->hello_words[1] = (uint64_t)p->pbytes;
            wrc = weft_sr_isend(weft__mpi.ctx, p->peer, p->id, part_tag(p, PART_HELLO),
                                p->hello_words, sizeof p->hello_words, &p->hello);
        }
        atomic_thread_fence(memory_order_release); /* before any MPI_Pready */
    } else if (p->nsp) {
        for (int i = 0; i < p->nsp && !rc; i++)
            rc = post_recv(p, i);
    } else if (!p->hello) {
        wrc = weft_sr_irecv(weft__mpi.ctx, p->peer, p->id, part_tag(p, PART_HELLO), p->hello_words,
                            sizeof p->hello_words, &p->hello);
    }
    p->started = true;
    if (!rc)
        rc = weft__mpi_err_from_weft(wrc);
    if (rc)
        r->active = false;
    return rc ? weft__mpi_err(r->comm, rc, "MPI_Start") : MPI_SUCCESS;
}

/* Sender partition i of this run has completed: unpack it (receiver,
 * staging) and count it. */
static void part_done(struct weft__mpi_part *p, int i, const weft_status_t *ws, int wrc)
{
    if (wrc != WEFT_OK && !p->err)
        p->err = weft__mpi_err_from_weft(wrc);
    if (!p->send && p->staging && ws) {
        size_t total = p->pbytes * (size_t)p->partitions;
        size_t off = p->spbytes * (size_t)i;
        size_t len = ws->length;
        if (off < total)
            weft__mpi_type_unpack(p->type, (void *)p->origin, (size_t)p->count * p->partitions, off,
                                  len < total - off ? len : total - off, p->staging + off);
    }
    p->done[i] = true;
    p->ndone++;
}

/* Test what is in flight: the HELLO, then each partition's request. Under
 * p->lock. */
static void poll_locked(struct weft__mpi_part *p)
{
    if (p->hello) {
        int flag = 0;
        weft_status_t ws;
        int wrc = weft_sr_check(weft__mpi.ctx, p->hello, &flag, &ws);
        if (flag) {
            p->hello = NULL;
            int rc = wrc != WEFT_OK ? weft__mpi_err_from_weft(wrc) : p->send ? 0 : learned(p);
            if (rc && !p->err)
                p->err = rc;
        }
    }
    int n = p->send ? p->partitions : p->nsp;
    for (int i = 0; i < n; i++) {
        if (p->done[i])
            continue;
        weft_request_t *w = atomic_load_explicit(&p->reqs[i], memory_order_acquire);
        if (!w)
            continue;
        int flag = 0;
        weft_status_t ws;
        int wrc = weft_sr_check(weft__mpi.ctx, w, &flag, &ws);
        if (flag) {
            atomic_store_explicit(&p->reqs[i], NULL, memory_order_relaxed);
            part_done(p, i, &ws, wrc);
        }
    }
}

void weft__mpi_part_poll(MPI_Request r)
{
    struct weft__mpi_part *p = r->prt;
    if (!r->active || !weft_lock_try(&p->lock))
        return;
    poll_locked(p);
    int n = p->send ? p->partitions : p->nsp;
    bool all = n > 0 && p->ndone == n && !(p->send && p->hello);
    if (all || (p->err && !p->send && !p->nsp)) {
        weft__mpi_status_empty(&r->status);
        if (!p->send) {
            r->status.MPI_SOURCE = r->peer;
            r->status.MPI_TAG = r->tag;
            size_t total = p->pbytes * (size_t)p->partitions;
            size_t got = p->spbytes * (size_t)p->nsp;
            r->status.weft_count = (long long)(got < total ? got : total);
            if (got > total && !p->err)
                p->err = MPI_ERR_TRUNCATE;
        }
        r->status.MPI_ERROR = p->err;
        r->complete = true;
        r->active = false;
    }
    weft_lock_release(&p->lock);
}

void weft__mpi_part_free(MPI_Request r)
{
    struct weft__mpi_part *p = r->prt;
    if (!p)
        return;
    /* A receiver's HELLO not yet come, on a request freed unused: withdrawn. */
    if (p->hello) {
        if (!p->send)
            weft_sr_cancel(weft__mpi.ctx, p->hello);
        weft_sr_wait(weft__mpi.ctx, p->hello, NULL);
    }
    weft__mpi_type_release(p->type);
    part_destroy(p);
    r->prt = NULL;
}

static int check_part_req(MPI_Request r, bool send)
{
    return r && r != MPI_REQUEST_NULL && r->magic == WEFT_MPI_MAGIC_REQ &&
                   r->kind == WEFT_MPI_REQ_PART && r->prt->send == send
               ? MPI_SUCCESS
               : MPI_ERR_REQUEST;
}

/* Mark partition i ready and send it, from the calling thread. */
static int ready(MPI_Request r, int i)
{
    struct weft__mpi_part *p = r->prt;
    if (i < 0 || i >= p->partitions)
        return MPI_ERR_ARG;
    if (!r->active || atomic_exchange_explicit(&p->ready[i], true, memory_order_acq_rel))
        return MPI_ERR_REQUEST; /* not started, or marked twice in this run */
    const char *from = p->buf + p->pbytes * (size_t)i;
    if (p->staging) {
        char *to = p->staging + p->pbytes * (size_t)i;
        weft__mpi_type_pack(p->type, p->origin, (size_t)p->count * p->partitions,
                            p->pbytes * (size_t)i, p->pbytes, to);
        from = to;
    }
    weft_request_t *w = NULL;
    int wrc =
        weft_sr_isend(weft__mpi.ctx, p->peer, p->id, part_tag(p, (unsigned)i), from, p->pbytes, &w);
    if (wrc != WEFT_OK)
        return weft__mpi_err_from_weft(wrc);
    atomic_store_explicit(&p->reqs[i], w, memory_order_release);
    return MPI_SUCCESS;
}

int PMPI_Pready(int partition, MPI_Request request)
{
    int rc = check_part_req(request, true);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Pready");
    return weft__mpi_err(request->comm, ready(request, partition), "MPI_Pready");
}
WEFT_MPI_ALIAS(Pready)

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    int rc = check_part_req(request, true);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Pready_range");
    if (partition_low > partition_high)
        rc = MPI_ERR_ARG;
    for (int i = partition_low; !rc && i <= partition_high; i++)
        rc = ready(request, i);
    return weft__mpi_err(request->comm, rc, "MPI_Pready_range");
}
WEFT_MPI_ALIAS(Pready_range)

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    int rc = check_part_req(request, true);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Pready_list");
    if (length < 0 || (length > 0 && !array_of_partitions))
        rc = MPI_ERR_ARG;
    for (int i = 0; !rc && i < length; i++)
        rc = ready(request, array_of_partitions[i]);
    return weft__mpi_err(request->comm, rc, "MPI_Pready_list");
}
WEFT_MPI_ALIAS(Pready_list)

/* Whether every sender partition over receive partition i's bytes is in. */
static bool arrived(const struct weft__mpi_part *p, int i)
{
    if (!p->nsp)
        return false;
    if (p->pbytes == 0 || p->spbytes == 0)
        return p->ndone == p->nsp;
    size_t lo = p->pbytes * (size_t)i, hi = lo + p->pbytes;
    size_t first = lo / p->spbytes, last = (hi - 1) / p->spbytes;
    for (size_t s = first; s <= last; s++)
        if (s >= (size_t)p->nsp || !p->done[s])
            return s >= (size_t)p->nsp; /* bytes no partition carries: none will come */
    return true;
}

int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    int rc = check_part_req(request, false);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Parrived");
    struct weft__mpi_part *p = request->prt;
    if (!flag || partition < 0 || partition >= p->partitions)
        return weft__mpi_err(request->comm, MPI_ERR_ARG, "MPI_Parrived");
    /* A completed run (or an inactive request) has everything in. */
    if (!request->active) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    weft_lock_acquire(&p->lock);
    poll_locked(p);
    *flag = arrived(p, partition);
    weft_lock_release(&p->lock);
    if (!*flag)
        weft__mpi_progress();
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Parrived)
