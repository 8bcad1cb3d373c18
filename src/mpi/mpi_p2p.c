/* Point-to-point (MPI 3.1 chapter 3) mapped straight onto the engine.
 *
 * A communicator is a pair of engine communicator ids; an MPI tag is the engine
 * tag; ranks are translated through the communicator's group. Contiguous data
 * goes to the engine as one buffer, a derived datatype as an iovec of its
 * segments (the driver gathers: no packing copy), and only a type with more
 * pieces than an iovec may carry goes through a staging buffer.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"

/* Most iovec entries handed to the engine in one message; beyond, we pack. */
#define P2P_MAX_IOV 64

void weft__mpi_status_set(MPI_Status *st, MPI_Comm comm, const weft_status_t *ws, int err)
{
    st->MPI_SOURCE = ws->source >= 0 ? weft__mpi_comm_rank_of(comm, ws->source) : MPI_ANY_SOURCE;
    st->MPI_TAG = ws->tag == WEFT_ANY_TAG ? MPI_ANY_TAG : (int)ws->tag;
    st->MPI_ERROR = err;
    st->weft_cancelled = ws->error == WEFT_ECANCELED;
    st->weft_count = (long long)ws->length;
}

static int check_tag(int tag, bool recv)
{
    if (tag >= 0 && tag <= INT_MAX)
        return MPI_SUCCESS;
    return recv && tag == MPI_ANY_TAG ? MPI_SUCCESS : MPI_ERR_TAG;
}

static int check_peer(MPI_Comm comm, int peer, bool recv)
{
    if (peer == MPI_PROC_NULL || (recv && peer == MPI_ANY_SOURCE))
        return MPI_SUCCESS;
    return peer >= 0 && peer < weft__mpi_comm_peer_size(comm) ? MPI_SUCCESS : MPI_ERR_RANK;
}

/* The checks every send and receive starts with. */
static int check_p2p(const void *buf, int count, MPI_Datatype type, int peer, int tag,
                     MPI_Comm comm, bool recv)
{
    int rc;
    if ((rc = weft__mpi_check_init()) || (rc = weft__mpi_check_comm(comm)) ||
        (rc = weft__mpi_check_count(count)) || (rc = weft__mpi_check_type(type)) ||
        (rc = check_tag(tag, recv)) || (rc = check_peer(comm, peer, recv)) ||
        (rc = weft__mpi_check_buf(buf, count, type)))
        return rc;
    return MPI_SUCCESS;
}

static int engine_err(MPI_Comm comm, int wrc, const char *fn)
{
    return weft__mpi_err(comm, weft__mpi_err_from_weft(wrc), fn);
}

/* Start the engine send of r (whose buf/count/type/peer/tag/mode are set). */
int weft__mpi_send_start(MPI_Request r)
{
    MPI_Comm comm = r->comm;
    MPI_Datatype t = r->type;
    int dest = weft__mpi_comm_peer(comm, r->peer);
    size_t len = t->size * (size_t)r->count;
    weft_ctx_t *ctx = weft__mpi.ctx;
    bool sync = r->mode == WEFT_MPI_MODE_SYNC;
    if (t->contig || len == 0) {
        const char *p = (const char *)r->buf + t->true_lb;
        return sync ? weft_sr_issend(ctx, dest, comm->id_p2p, (uint64_t)r->tag, p, len, &r->wreq)
                    : weft_sr_isend(ctx, dest, comm->id_p2p, (uint64_t)r->tag, p, len, &r->wreq);
    }
    struct iovec iov[P2P_MAX_IOV];
    int n = weft__mpi_type_iov(t, r->buf, (size_t)r->count, iov, P2P_MAX_IOV);
    if (n <= P2P_MAX_IOV && !sync)
        return weft_sr_isendv(ctx, dest, comm->id_p2p, (uint64_t)r->tag, iov, n, &r->wreq);
    /* Too many pieces for one iovec (or a synchronous send, which the engine
     * takes contiguous): pack once. */
    r->staging = malloc(len);
    if (!r->staging)
        return WEFT_ENOMEM;
    weft__mpi_type_pack(t, r->buf, (size_t)r->count, 0, len, r->staging);
    return sync ? weft_sr_issend(ctx, dest, comm->id_p2p, (uint64_t)r->tag, r->staging, len,
                                 &r->wreq)
                : weft_sr_isend(ctx, dest, comm->id_p2p, (uint64_t)r->tag, r->staging, len,
                                &r->wreq);
}

/* Post the engine receive of r. */
int weft__mpi_recv_start(MPI_Request r)
{
    MPI_Comm comm = r->comm;
    MPI_Datatype t = r->type;
    int src = r->peer == MPI_ANY_SOURCE ? WEFT_ANY_SOURCE : weft__mpi_comm_peer(comm, r->peer);
    uint64_t tag = r->tag == MPI_ANY_TAG ? WEFT_ANY_TAG : (uint64_t)r->tag;
    size_t len = t->size * (size_t)r->count;
    weft_ctx_t *ctx = weft__mpi.ctx;
    void *buf = (void *)r->buf;
    if (t->contig || len == 0)
        return weft_sr_irecv(ctx, src, comm->id_p2p, tag, (char *)buf + t->true_lb, len, &r->wreq);
    struct iovec iov[P2P_MAX_IOV];
    int n = weft__mpi_type_iov(t, buf, (size_t)r->count, iov, P2P_MAX_IOV);
    if (n <= P2P_MAX_IOV)
        return weft_sr_irecvv(ctx, src, comm->id_p2p, tag, iov, n, &r->wreq);
    r->staging = malloc(len);
    if (!r->staging)
        return WEFT_ENOMEM;
    r->user_buf = buf;
    r->user_count = r->count;
    r->user_type = t;
    weft__mpi_type_retain(t); /* the application may free it before completion */
    return weft_sr_irecv(ctx, src, comm->id_p2p, tag, r->staging, len, &r->wreq);
}

/* Buffered sends (MPI 3.1 §3.6): the message is copied into the attached
 * buffer's budget at once and sent from the copy, so the call never waits for
 * the receiver. The copies are tracked and released as their sends complete.
 *
 * MPI_Ibsend's request completes at once but stays linked to its copy (user),
 * so that MPI_Cancel can still take the message back while no receive matched
 * it: the copy's send is canceled like any send, and the request reopens until
 * the receiver's answer, which reaping or polling the request hands over. */
typedef struct weft__mpi_bsend {
    struct weft__mpi_bsend *next;
    MPI_Request req;  /* the send from the copy */
    MPI_Request user; /* MPI_Ibsend's request, until it is freed */
    size_t bytes;
} bsend_t;

static bsend_t *bsends;
static size_t bsend_used;
/* Guards the list, the budget and the links between copies and MPI_Ibsend's
 * requests; taken before weft__mpi.lock (which request allocation takes), never
 * after it. Never held while waiting: progress reaps requests freed with
 * MPI_Request_free, and freeing an MPI_Ibsend's request takes this lock
 * (weft__mpi_bsend_forget). */
static pthread_mutex_t bsend_lock = PTHREAD_MUTEX_INITIALIZER;

/* The copy's send ended: tell a request waiting on a cancel how, and unlink. */
static void bsend_unlink(bsend_t *b)
{
    MPI_Request u = b->user;
    if (!u)
        return;
    if (u->bsend_cancel)
        u->status.weft_cancelled = b->req->status.weft_cancelled;
    u->bsend = NULL;
    b->user = NULL;
}

/* Free the copies whose sends ended. Polls each once, no more: the caller
 * holds bsend_lock. */
static void bsend_reap(void)
{
    bsend_t **pp = &bsends;
    while (*pp) {
        bsend_t *b = *pp;
        weft__mpi_req_poll(b->req);
        if (b->req->complete) {
            bsend_unlink(b);
            *pp = b->next;
            bsend_used -= b->bytes + MPI_BSEND_OVERHEAD;
            weft__mpi_req_free(b->req);
            free(b);
        } else {
            pp = &b->next;
        }
    }
}

void weft__mpi_bsend_cancel(MPI_Request r)
{
    pthread_mutex_lock(&bsend_lock);
    bsend_t *b = r->bsend;
    /* Once its send was collected (an eager one leaves at once, and the next
     * buffered send reaps it), the copy is gone and the message is on its own:
     * not canceled then, as the standard allows. */
    if (b && !r->bsend_cancel && !b->req->complete &&
        weft_sr_cancel(weft__mpi.ctx, b->req->wreq) >= 0) { /* asked the receiver */
        r->bsend_cancel = true;
        r->complete = false;
    }
    pthread_mutex_unlock(&bsend_lock);
}

void weft__mpi_bsend_poll(MPI_Request r)
{
    pthread_mutex_lock(&bsend_lock);
    /* Reaping collects the answer, releases the copy's space (and that of
     * every other send that ended) and unlinks; without a link it is in. */
    if (r->bsend)
        bsend_reap();
    if (!r->bsend)
        r->complete = true;
    pthread_mutex_unlock(&bsend_lock);
}

void weft__mpi_bsend_forget(MPI_Request r)
{
    pthread_mutex_lock(&bsend_lock);
    if (r->bsend)
        r->bsend->user = NULL;
    r->bsend = NULL;
    pthread_mutex_unlock(&bsend_lock);
}

/* Copy and start one buffered send; user, if given, is MPI_Ibsend's request
 * (or a started persistent buffered send), to be linked to the copy. */
int weft__mpi_bsend_start(const void *buf, int count, MPI_Datatype t, int dest, int tag,
                          MPI_Comm comm, MPI_Request user, const char *fn)
{
    size_t len = t->size * (size_t)count;
    pthread_mutex_lock(&bsend_lock);
    bsend_reap();
    if (!weft__mpi.bsend_buf ||
        bsend_used + len + MPI_BSEND_OVERHEAD > (size_t)weft__mpi.bsend_size) {
        pthread_mutex_unlock(&bsend_lock);
        return weft__mpi_err(comm, MPI_ERR_BUFFER, fn);
    }
    bsend_t *b = calloc(1, sizeof *b);
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_SEND, comm);
    void *copy = malloc(len ? len : 1);
    if (!b || !r || !copy) {
        free(b);
        free(copy);
        if (r)
            weft__mpi_req_free(r);
        pthread_mutex_unlock(&bsend_lock);
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    }
    weft__mpi_type_pack(t, buf, (size_t)count, 0, len, copy);
    r->staging = copy;
    weft__mpi_req_record(r, copy, (int)len, MPI_BYTE, dest, tag, WEFT_MPI_MODE_STD);
    int wrc = weft__mpi_send_start(r);
    if (wrc < 0) {
        weft__mpi_req_free(r);
        free(b);
        pthread_mutex_unlock(&bsend_lock);
        return engine_err(comm, wrc, fn);
    }
    b->req = r;
    b->bytes = len;
    b->user = user;
    if (user)
        user->bsend = b;
    b->next = bsends;
    bsends = b;
    bsend_used += len + MPI_BSEND_OVERHEAD;
    pthread_mutex_unlock(&bsend_lock);
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    if (size < 0 || (!buffer && size > 0))
        return weft__mpi_err(NULL, size < 0 ? MPI_ERR_SIZE : MPI_ERR_BUFFER, "MPI_Buffer_attach");
    pthread_mutex_lock(&bsend_lock);
    bool busy = weft__mpi.bsend_buf != NULL;
    if (!busy) {
        weft__mpi.bsend_buf = buffer ? buffer : (void *)1;
        weft__mpi.bsend_size = size;
    }
    pthread_mutex_unlock(&bsend_lock);
    return busy ? weft__mpi_err(NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Buffer_attach)

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    if (!buffer_addr || !size)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Buffer_detach");
    /* Detach blocks until every buffered message has left (§3.6.1). The
     * lock is released while progress runs (see bsend_lock). MPI_Finalize
     * detaches this way too (§8.7). */
    weft_idle_t idle = {0};
    for (;;) {
        pthread_mutex_lock(&bsend_lock);
        bsend_reap();
        if (!bsends)
            break;
        pthread_mutex_unlock(&bsend_lock);
        weft__mpi_progress();
        weft_idle(weft__mpi.ctx, &idle);
    }
    void *b = weft__mpi.bsend_buf;
    *(void **)buffer_addr = b == (void *)1 ? NULL : b;
    *size = weft__mpi.bsend_size;
    weft__mpi.bsend_buf = NULL;
    weft__mpi.bsend_size = 0;
    pthread_mutex_unlock(&bsend_lock);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Buffer_detach)

/* An already complete request: the operation names MPI_PROC_NULL. */
static int proc_null_request(MPI_Comm comm, MPI_Request *request, const char *fn)
{
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_DONE, comm);
    if (!r)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    r->complete = true;
    weft__mpi_status_proc_null(&r->status);
    *request = r;
    return MPI_SUCCESS;
}

/* A standard send of len contiguous bytes at p to dest, a rank of comm (not
 * MPI_PROC_NULL): the engine takes a size_t, where an MPI count of MPI_BYTE
 * would stop at INT_MAX bytes (MPI_Sendrecv_replace's packed copy). */
static inline __attribute__((always_inline)) int send_bytes(const void *p, size_t len, int dest,
                                                            int tag, MPI_Comm comm,
                                                            MPI_Request *request, const char *fn)
{
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_SEND, comm);
    if (!r)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    int wrc = weft_sr_isend(weft__mpi.ctx, weft__mpi_comm_peer(comm, dest), comm->id_p2p,
                            (uint64_t)tag, p, len, &r->wreq);
    if (wrc < 0) {
        weft__mpi_req_free(r);
        return engine_err(comm, wrc, fn);
    }
    *request = r;
    return MPI_SUCCESS;
}

/* Every non-blocking send and receive goes through here. */
static int start_op(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                    int mode, MPI_Request *request, const char *fn)
{
    bool recv = mode == WEFT_MPI_MODE_RECV;
    int rc = check_p2p(buf, count, type, peer, tag, comm, recv);
    if (rc)
        return weft__mpi_err(comm, rc, fn);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_REQUEST, fn);
    if (peer == MPI_PROC_NULL)
        return proc_null_request(comm, request, fn);
    if (mode == WEFT_MPI_MODE_BUF) {
        MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_BSEND, comm);
        if (!r)
            return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
        r->complete = true;
        r->bsend = NULL;
        r->bsend_cancel = false;
        if ((rc = weft__mpi_bsend_start(buf, count, type, peer, tag, comm, r, fn))) {
            weft__mpi_req_free(r);
            return rc;
        }
        *request = r;
        return MPI_SUCCESS;
    }
    size_t len = type->size * (size_t)count;
    /* One contiguous buffer, not synchronous: the engine call alone, as
     * send_start and recv_start would make it, without recording the
     * arguments in the request (only MPI_Start reads them again). */
    bool contig = (type->contig || len == 0) && mode != WEFT_MPI_MODE_SYNC;
    char *p = (char *)buf + type->true_lb;
    if (contig && !recv)
        return send_bytes(p, len, peer, tag, comm, request, fn);
    MPI_Request r = weft__mpi_req_alloc(recv ? WEFT_MPI_REQ_RECV : WEFT_MPI_REQ_SEND, comm);
    if (!r)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    int wrc;
    if (contig) {
        wrc = weft_sr_irecv(
            weft__mpi.ctx,
            peer == MPI_ANY_SOURCE ? WEFT_ANY_SOURCE : weft__mpi_comm_peer(comm, peer),
            comm->id_p2p, tag == MPI_ANY_TAG ? WEFT_ANY_TAG : (uint64_t)tag, p, len, &r->wreq);
    } else {
        weft__mpi_req_record(r, buf, count, type, peer, tag, mode);
        wrc = recv ? weft__mpi_recv_start(r) : weft__mpi_send_start(r);
    }
    if (wrc < 0) {
        weft__mpi_req_free(r);
        return engine_err(comm, wrc, fn);
    }
    *request = r;
    return MPI_SUCCESS;
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return start_op(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_STD, request, "MPI_Isend");
}
WEFT_MPI_ALIAS(Isend)

int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return start_op(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_SYNC, request,
                    "MPI_Issend");
}
WEFT_MPI_ALIAS(Issend)

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return start_op(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_BUF, request,
                    "MPI_Ibsend");
}
WEFT_MPI_ALIAS(Ibsend)

/* A ready send may be sent as a standard one: the receive is posted, so the
 * engine's eager or rendezvous path is what the user asked for anyway. */
int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return start_op(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_READY, request,
                    "MPI_Irsend");
}
WEFT_MPI_ALIAS(Irsend)

int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return start_op(buf, count, datatype, source, tag, comm, WEFT_MPI_MODE_RECV, request,
                    "MPI_Irecv");
}
WEFT_MPI_ALIAS(Irecv)

/* Blocking calls: start, then wait on the request. The request is freed by
 * PMPI_Wait; its errors were already reported through the handler there. */
static int blocking(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                    int mode, MPI_Status *status, const char *fn)
{
    MPI_Request r;
    int rc = start_op(buf, count, type, peer, tag, comm, mode, &r, fn);
    if (rc)
        return rc;
    return PMPI_Wait(&r, status);
}

int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return blocking(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_STD, MPI_STATUS_IGNORE,
                    "MPI_Send");
}
WEFT_MPI_ALIAS(Send)

int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return blocking(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_SYNC, MPI_STATUS_IGNORE,
                    "MPI_Ssend");
}
WEFT_MPI_ALIAS(Ssend)

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return blocking(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_BUF, MPI_STATUS_IGNORE,
                    "MPI_Bsend");
}
WEFT_MPI_ALIAS(Bsend)

int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return blocking(buf, count, datatype, dest, tag, comm, WEFT_MPI_MODE_READY, MPI_STATUS_IGNORE,
                    "MPI_Rsend");
}
WEFT_MPI_ALIAS(Rsend)

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    return blocking(buf, count, datatype, source, tag, comm, WEFT_MPI_MODE_RECV, status,
                    "MPI_Recv");
}
WEFT_MPI_ALIAS(Recv)

/* Sendrecv's end, once its receive r[0] is posted and its send r[1] too,
 * unless that failed with rc (then the receive is withdrawn). */
static int sendrecv_finish(MPI_Request r[2], int rc, MPI_Status *status)
{
    if (rc) {
        PMPI_Cancel(&r[0]);
        PMPI_Wait(&r[0], MPI_STATUS_IGNORE);
        return rc;
    }
    int rc1 = PMPI_Wait(&r[1], MPI_STATUS_IGNORE);
    int rc0 = PMPI_Wait(&r[0], status);
    return rc0 ? rc0 : rc1;
}

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    MPI_Request r[2];
    int rc = start_op(recvbuf, recvcount, recvtype, source, recvtag, comm, WEFT_MPI_MODE_RECV,
                      &r[0], "MPI_Sendrecv");
    if (rc)
        return rc;
    rc = start_op(sendbuf, sendcount, sendtype, dest, sendtag, comm, WEFT_MPI_MODE_STD, &r[1],
                  "MPI_Sendrecv");
    return sendrecv_finish(r, rc, status);
}
WEFT_MPI_ALIAS(Sendrecv)

/* The send of a _replace call: its data packed first, so the receive may land
 * in buf, into a copy of *len bytes (NULL: no memory), sent as bytes by
 * replace_send (more than INT_MAX of them is fine there, where a count of
 * MPI_BYTE would not be). */
static void *replace_copy(const void *buf, int count, MPI_Datatype datatype, size_t *len)
{
    *len = datatype->size * (size_t)count;
    void *copy = malloc(*len ? *len : 1);
    if (copy)
        weft__mpi_type_pack(datatype, buf, (size_t)count, 0, *len, copy);
    return copy;
}

static int replace_send(const void *copy, size_t len, int dest, int tag, MPI_Comm comm,
                        MPI_Request *r, const char *fn)
{
    return dest == MPI_PROC_NULL ? proc_null_request(comm, r, fn)
                                 : send_bytes(copy, len, dest, tag, comm, r, fn);
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    static const char fn[] = "MPI_Sendrecv_replace";
    int rc = check_p2p(buf, count, datatype, dest, sendtag, comm, false);
    if (rc)
        return weft__mpi_err(comm, rc, fn);
    size_t len;
    void *copy = replace_copy(buf, count, datatype, &len);
    if (!copy)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    MPI_Request r[2];
    rc = start_op(buf, count, datatype, source, recvtag, comm, WEFT_MPI_MODE_RECV, &r[0], fn);
    if (!rc)
        rc = sendrecv_finish(r, replace_send(copy, len, dest, sendtag, comm, &r[1], fn), status);
    free(copy);
    return rc;
}
WEFT_MPI_ALIAS(Sendrecv_replace)

/* MPI_Isendrecv(_replace) (MPI 4.0 §3.10): one request p over a receive and
 * a send, both posted; it completes once both have, with the receive's status
 * (weft__mpi_req_poll). copy: what the send reads, freed with p. */
static MPI_Request pair_new(MPI_Comm comm, void *copy)
{
    MPI_Request p = weft__mpi_req_alloc(WEFT_MPI_REQ_PAIR, comm);
    if (p) {
        p->part[0] = p->part[1] = NULL;
        p->part_copy = copy;
    } else {
        free(copy);
    }
    return p;
}

/* p's send failed to start (rc): withdraw its receive and let p go. */
static int pair_undo(MPI_Request p, int rc)
{
    PMPI_Cancel(&p->part[0]);
    PMPI_Wait(&p->part[0], MPI_STATUS_IGNORE);
    weft__mpi_req_free(p);
    return rc;
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Isendrecv";
    int rc = weft__mpi_check_init();
    if (!rc)
        rc = weft__mpi_check_comm(comm);
    if (!rc && !request)
        rc = MPI_ERR_REQUEST;
    if (rc)
        return weft__mpi_err(comm, rc, fn);
    MPI_Request p = pair_new(comm, NULL);
    if (!p)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    rc = start_op(recvbuf, recvcount, recvtype, source, recvtag, comm, WEFT_MPI_MODE_RECV,
                  &p->part[0], fn);
    if (rc) {
        weft__mpi_req_free(p);
        return rc;
    }
    rc = start_op(sendbuf, sendcount, sendtype, dest, sendtag, comm, WEFT_MPI_MODE_STD, &p->part[1],
                  fn);
    if (rc)
        return pair_undo(p, rc);
    *request = p;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Isendrecv)

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Isendrecv_replace";
    int rc = check_p2p(buf, count, datatype, dest, sendtag, comm, false);
    if (rc)
        return weft__mpi_err(comm, rc, fn);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_REQUEST, fn);
    size_t len;
    void *copy = replace_copy(buf, count, datatype, &len);
    if (!copy)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    MPI_Request p = pair_new(comm, copy);
    if (!p)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, fn);
    rc = start_op(buf, count, datatype, source, recvtag, comm, WEFT_MPI_MODE_RECV, &p->part[0], fn);
    if (rc) {
        weft__mpi_req_free(p);
        return rc;
    }
    rc = replace_send(copy, len, dest, sendtag, comm, &p->part[1], fn);
    if (rc)
        return pair_undo(p, rc);
    *request = p;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Isendrecv_replace)

/* ---- probes ---- */

static int probe_args(int source, int tag, MPI_Comm comm, int *src, uint64_t *wtag)
{
    int rc;
    if ((rc = weft__mpi_check_init()) || (rc = weft__mpi_check_comm(comm)) ||
        (rc = check_tag(tag, true)) || (rc = check_peer(comm, source, true)))
        return rc;
    *src = source < 0 ? WEFT_ANY_SOURCE : weft__mpi_comm_peer(comm, source); /* ANY or PROC_NULL */
    *wtag = tag == MPI_ANY_TAG ? WEFT_ANY_TAG : (uint64_t)tag;
    return MPI_SUCCESS;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    int src;
    uint64_t wtag;
    int rc = probe_args(source, tag, comm, &src, &wtag);
    if (rc || !flag)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Iprobe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status)
            weft__mpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    weft_status_t ws;
    int wrc = weft_sr_iprobe(weft__mpi.ctx, src, comm->id_p2p, wtag, flag, &ws);
    if (wrc < 0)
        return engine_err(comm, wrc, "MPI_Iprobe");
    if (*flag && status)
        weft__mpi_status_set(status, comm, &ws, status->MPI_ERROR);
    /* Active collectives must move even while the caller only probes. */
    if (!*flag && weft__mpi_scheds_active())
        weft__mpi_progress();
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Iprobe)

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int src;
    uint64_t wtag;
    int rc = probe_args(source, tag, comm, &src, &wtag);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Probe");
    if (source == MPI_PROC_NULL) {
        if (status)
            weft__mpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    weft_idle_t idle = {0};
    for (;;) {
        int flag;
        rc = PMPI_Iprobe(source, tag, comm, &flag, status);
        if (rc || flag)
            return rc;
        weft__mpi_progress();
        weft_idle(weft__mpi.ctx, &idle);
    }
}
WEFT_MPI_ALIAS(Probe)

/* ---- matched probes (§3.8.2): the message leaves matching at the probe, so
 * no other thread's receive can take it before MPI_Mrecv ---- */

struct weft_mpi_message weft_mpi_message_null = {.magic = WEFT_MPI_MAGIC_MSG};
struct weft_mpi_message weft_mpi_message_no_proc = {.magic = WEFT_MPI_MAGIC_MSG};

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    int src;
    uint64_t wtag;
    int rc = probe_args(source, tag, comm, &src, &wtag);
    if (rc || !flag || !message)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Improbe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        if (status)
            weft__mpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    MPI_Message m = malloc(sizeof *m);
    if (!m)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Improbe");
    weft_status_t ws;
    int wrc = weft_sr_improbe(weft__mpi.ctx, src, comm->id_p2p, wtag, flag, &m->wmsg, &ws);
    if (wrc < 0 || !*flag) {
        free(m);
        if (wrc < 0)
            return engine_err(comm, wrc, "MPI_Improbe");
        if (weft__mpi_scheds_active())
            weft__mpi_progress();
        return MPI_SUCCESS;
    }
    m->magic = WEFT_MPI_MAGIC_MSG;
    m->comm = comm;
    weft__mpi_comm_retain(comm); /* MPI_Comm_free may come before MPI_Mrecv */
    weft__mpi_status_set(&m->status, comm, &ws, MPI_SUCCESS);
    if (status) {
        int keep = status->MPI_ERROR;
        *status = m->status;
        status->MPI_ERROR = keep;
    }
    *message = m;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Improbe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    weft_idle_t idle = {0};
    for (;;) {
        int flag;
        int rc = PMPI_Improbe(source, tag, comm, &flag, message, status);
        if (rc || flag)
            return rc;
        weft__mpi_progress();
        weft_idle(weft__mpi.ctx, &idle);
    }
}
WEFT_MPI_ALIAS(Mprobe)

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    if (!message || !*message || (*message)->magic != WEFT_MPI_MAGIC_MSG ||
        *message == MPI_MESSAGE_NULL)
        return weft__mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Imrecv");
    MPI_Message m = *message;
    MPI_Comm comm = m == MPI_MESSAGE_NO_PROC ? MPI_COMM_SELF : m->comm;
    int rc;
    if ((rc = weft__mpi_check_count(count)) || (rc = weft__mpi_check_type(datatype)) ||
        (rc = weft__mpi_check_buf(buf, count, datatype)))
        return weft__mpi_err(comm, rc, "MPI_Imrecv");
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Imrecv");
    if (m == MPI_MESSAGE_NO_PROC) {
        if ((rc = proc_null_request(comm, request, "MPI_Imrecv")))
            return rc;
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_RECV, comm);
    if (!r)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Imrecv");
    size_t len = datatype->size * (size_t)count;
    struct iovec iov[P2P_MAX_IOV];
    int n;
    if (datatype->contig || len == 0) {
        iov[0].iov_base = (char *)buf + datatype->true_lb;
        iov[0].iov_len = len;
        n = 1;
    } else {
        n = weft__mpi_type_iov(datatype, buf, (size_t)count, iov, P2P_MAX_IOV);
        if (n > P2P_MAX_IOV) {
            r->staging = malloc(len);
            if (!r->staging) {
                weft__mpi_req_free(r);
                return weft__mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Imrecv");
            }
            r->user_buf = buf;
            r->user_count = count;
            r->user_type = datatype;
            weft__mpi_type_retain(datatype);
            iov[0].iov_base = r->staging;
            iov[0].iov_len = len;
            n = 1;
        }
    }
    int wrc = weft_sr_imrecvv(weft__mpi.ctx, m->wmsg, iov, n, &r->wreq);
    m->magic = WEFT_MPI_MAGIC_DEAD;
    free(m);
    *message = MPI_MESSAGE_NULL;
    if (wrc < 0) {
        weft__mpi_req_free(r);
        rc = engine_err(comm, wrc, "MPI_Imrecv");
    } else {
        *request = r;
    }
    weft__mpi_comm_release(comm); /* the message's reference (the request has its own) */
    return rc;
}
WEFT_MPI_ALIAS(Imrecv)

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    MPI_Request r;
    int rc = PMPI_Imrecv(buf, count, datatype, message, &r);
    if (rc)
        return rc;
    return PMPI_Wait(&r, status);
}
WEFT_MPI_ALIAS(Mrecv)
