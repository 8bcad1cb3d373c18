/* taskrt: see taskrt.h. Each rank turns the submitted tasks into a graph of
 * its own nodes: TASK (a task it runs), SEND (a tile version it owes another
 * rank) and RECV (a tile version it needs from another rank). Edges:
 *   - a task after the last writer of each local tile it accesses (RAW);
 *   - the writer of a local tile after every task and send that read the
 *     tile's previous version (WAR: tiles are updated in place, and a send
 *     reads the tile itself, with no copy);
 *   - a task after the RECV of each remote tile version it reads;
 *   - a SEND after the writer of the version it sends.
 * Nodes whose predecessors are done become ready: tasks go to the workers,
 * sends to the communicating thread, receives are posted at the start. */
#include "taskrt.h"

#include "app_util.h"

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef WEFT_MPI
#include <weft/weft_am.h>
#include <weft/weft_bcast.h>
#include <weft/weft_comp.h>
#include <weft/weft_topo.h>
#define TASKRT_AM_ID 7
#define TASKRT_COMM  0x7a5c0001u /* TASKRT_BCAST: the native communicator id of the tiles */
#endif

#define MAX_VERSIONS 1024 /* per tile: the MPI tag is tile * MAX_VERSIONS + version */

enum { N_TASK, N_SEND, N_RECV };

typedef struct node node_t;
struct node {
    int kind;
    int npred;
    int nsucc, capsucc;
    node_t **succ;
    /* TASK */
    taskrt_fn fn;
    void *args;
    void **mem;
    node_t **inputs; /* RECV nodes it reads */
    int ninputs;
    /* SEND, RECV */
    int tile, version, peer;
    void *buf;
    int readers;       /* RECV: tasks still to read it */
    node_t *next_recv; /* RECV: the tile's other versions received here */
    MPI_Request req;
};

typedef struct {
    int owner, version;
    void *mem;
    node_t *last_writer;
    node_t **readers; /* since the last write */
    int nreaders, capreaders;
    int *sent_to; /* ranks the current version goes to */
    int nsent, capsent;
    node_t *recvs; /* RECV nodes of this tile, newest first */
} tile_t;

struct taskrt {
    int backend, rank, size, nworkers, ntiles;
    size_t tile_bytes;
    tile_t *tiles;
    node_t **nodes;
    int nnodes, capnodes;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    node_t **ready, **sendq;
    int nready, nsendq;
    int remaining, stop;
    taskrt_stats_t stats;
    pthread_t *workers;
#ifdef WEFT_MPI
    weft_ctx_t *ctx;
    weft_am_t *am;
    weft_am_ep_t *ep;
    weft_cq_t *arrivals, *sent;
#endif
};

static void *xmalloc(size_t n)
{
    return app_xmalloc(n, "taskrt");
}

/* Appends p to the array *a of *n elements, *cap allocated. */
static void push(void *a, int *n, int *cap, const void *p, size_t size)
{
    char **arr = a;
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 4;
        char *g = realloc(*arr, size * (size_t)*cap);
        if (!g) {
            fprintf(stderr, "taskrt: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        *arr = g;
    }
    memcpy(*arr + size * (size_t)(*n)++, p, size);
}

static node_t *node_new(taskrt_t *rt, int kind)
{
    node_t *n = calloc(1, sizeof *n);
    if (!n) {
        fprintf(stderr, "taskrt: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    n->kind = kind;
    n->req = MPI_REQUEST_NULL;
    push(&rt->nodes, &rt->nnodes, &rt->capnodes, &n, sizeof n);
    return n;
}

static void edge(node_t *from, node_t *to)
{
    if (!from || from == to)
        return;
    push(&from->succ, &from->nsucc, &from->capsucc, &to, sizeof to);
    to->npred++;
}

/* Under rt->lock: n is done; its successors may become ready. */
static void node_done(taskrt_t *rt, node_t *n)
{
    for (int i = 0; i < n->nsucc; i++) {
        node_t *s = n->succ[i];
        if (--s->npred)
            continue;
        if (s->kind == N_TASK) {
            rt->ready[rt->nready++] = s;
            pthread_cond_signal(&rt->cond);
        } else if (s->kind == N_SEND) {
            rt->sendq[rt->nsendq++] = s;
        }
    }
    if (n->kind == N_TASK) {
        for (int i = 0; i < n->ninputs; i++)
            if (--n->inputs[i]->readers == 0) {
                free(n->inputs[i]->buf);
                n->inputs[i]->buf = NULL;
            }
        rt->stats.tasks++;
    }
    rt->remaining--;
}

static void *worker(void *arg)
{
    taskrt_t *rt = arg;
    pthread_mutex_lock(&rt->lock);
    for (;;) {
        while (!rt->stop && rt->nready == 0)
            pthread_cond_wait(&rt->cond, &rt->lock);
        if (rt->nready == 0)
            break;
        node_t *t = rt->ready[--rt->nready];
        pthread_mutex_unlock(&rt->lock);
        t->fn(t->mem, t->args);
        pthread_mutex_lock(&rt->lock);
        node_done(rt, t);
    }
    pthread_mutex_unlock(&rt->lock);
    return NULL;
}

#ifdef WEFT_MPI
/* The communicating thread, the comm thread first, the workers after it,
 * side by side on the rank's cores (weft_topo.h); the progress thread where
 * they leave room. */
static void place(taskrt_t *rt, pthread_t *workers)
{
    if (!app_owns_cpus()) /* collective */
        return;
    weft_tgroup_t *g;
    if (getenv("TASKRT_NO_PLACE") || weft_tgroup_create(NULL, WEFT_TGROUP_COMPACT, NULL, &g))
        return;
    weft_tgroup_join(g);
    for (int i = 0; i < rt->nworkers; i++)
        weft_tgroup_add_thread(g, workers[i]);
    weft_ctx_t *ctx = NULL;
    if (weft_world_acquire(NULL, &ctx) == WEFT_OK) {
        weft_tgroup_place(g, ctx);
        weft_world_release(ctx);
    }
    weft_tgroup_free(g);
}
#endif

int taskrt_create(int backend, int nworkers, int ntiles, size_t tile_bytes,
                  int (*owner)(int tile, void *arg), void *arg, taskrt_t **out)
{
#ifndef WEFT_MPI
    if (backend != TASKRT_MPI) {
        fprintf(stderr, "taskrt: the %s back end needs weft's MPI\n", taskrt_backend_name(backend));
        return -1;
    }
#endif
    taskrt_t *rt = calloc(1, sizeof *rt);
    if (!rt)
        return -1;
    rt->backend = backend;
    rt->nworkers = nworkers > 0 ? nworkers : 1;
    rt->ntiles = ntiles;
    rt->tile_bytes = tile_bytes;
    MPI_Comm_rank(MPI_COMM_WORLD, &rt->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &rt->size);
    rt->tiles = calloc((size_t)ntiles, sizeof *rt->tiles);
    if (!rt->tiles) {
        free(rt);
        return -1;
    }
    for (int t = 0; t < ntiles; t++) {
        rt->tiles[t].owner = owner(t, arg);
        if (rt->tiles[t].owner == rt->rank)
            rt->tiles[t].mem = xmalloc(tile_bytes);
    }
    pthread_mutex_init(&rt->lock, NULL);
    pthread_cond_init(&rt->cond, NULL);
    /* The workers wait for taskrt_run's first ready task; placing them
     * (reading the topology: milliseconds) is done here, not in the run. */
    rt->workers = xmalloc(sizeof *rt->workers * (size_t)rt->nworkers);
    for (int i = 0; i < rt->nworkers; i++)
        pthread_create(&rt->workers[i], NULL, worker, rt);
#ifdef WEFT_MPI
    place(rt, rt->workers);
#endif
    *out = rt;
    return 0;
}

void *taskrt_tile(taskrt_t *rt, int tile)
{
    return rt->tiles[tile].mem;
}

void taskrt_submit(taskrt_t *rt, taskrt_fn fn, const void *args, size_t argsize, int n,
                   const int *tiles, const int *modes)
{
    int w = -1;
    for (int i = 0; i < n; i++)
        if (modes[i] == TASKRT_RW && w < 0)
            w = i;
    int where = rt->tiles[tiles[w >= 0 ? w : 0]].owner;
    if (where != rt->rank) {
        /* Another rank's task: send it what it reads of mine, once per
         * version; count the version it writes. */
        for (int i = 0; i < n; i++) {
            tile_t *x = &rt->tiles[tiles[i]];
            if (i == w || x->owner != rt->rank)
                continue;
            bool sent = false;
            for (int k = 0; k < x->nsent && !sent; k++)
                sent = x->sent_to[k] == where;
            if (sent)
                continue;
            node_t *s = node_new(rt, N_SEND);
            s->tile = tiles[i];
            s->version = x->version;
            s->peer = where;
            s->buf = x->mem;
            edge(x->last_writer, s);
            push(&x->readers, &x->nreaders, &x->capreaders, &s, sizeof s);
            push(&x->sent_to, &x->nsent, &x->capsent, &where, sizeof where);
        }
        if (w >= 0)
            rt->tiles[tiles[w]].version++;
        return;
    }
    node_t *t = node_new(rt, N_TASK);
    t->fn = fn;
    t->args = xmalloc(argsize);
    memcpy(t->args, args, argsize);
    t->mem = xmalloc(sizeof *t->mem * (size_t)n);
    t->inputs = xmalloc(sizeof *t->inputs * (size_t)n);
    for (int i = 0; i < n; i++) {
        tile_t *x = &rt->tiles[tiles[i]];
        if (x->owner == rt->rank) {
            t->mem[i] = x->mem;
            edge(x->last_writer, t);
            if (i != w)
                push(&x->readers, &x->nreaders, &x->capreaders, &t, sizeof t);
            continue;
        }
        node_t *r = x->recvs;
        if (!r || r->version != x->version) {
            if (x->version >= MAX_VERSIONS) {
                fprintf(stderr, "taskrt: tile %d written more than %d times\n", tiles[i],
                        MAX_VERSIONS);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            r = node_new(rt, N_RECV);
            r->tile = tiles[i];
            r->version = x->version;
            r->peer = x->owner;
            r->buf = xmalloc(rt->tile_bytes);
            r->next_recv = x->recvs;
            x->recvs = r;
        }
        edge(r, t);
        r->readers++;
        t->inputs[t->ninputs++] = r;
        t->mem[i] = r->buf;
    }
    if (w >= 0) {
        tile_t *x = &rt->tiles[tiles[w]];
        for (int k = 0; k < x->nreaders; k++)
            edge(x->readers[k], t);
        x->nreaders = 0;
        x->nsent = 0;
        x->last_writer = t;
        x->version++;
    }
}

/* ---- running ---- */

#ifdef WEFT_MPI
typedef struct {
    int32_t tile, version;
} am_header_t;

static node_t *recv_of(taskrt_t *rt, int tile, int version)
{
    for (node_t *r = rt->tiles[tile].recvs; r; r = r->next_recv)
        if (r->version == version)
            return r;
    return NULL;
}

/* A tile sent by rendezvous lands straight in the buffer posted for it. */
static void *am_alloc(size_t len, const weft_am_msg_t *msg, void *arg)
{
    taskrt_t *rt = arg;
    const am_header_t *h = msg->header;
    if (msg->hlen != sizeof *h || h->tile < 0 || h->tile >= rt->ntiles)
        return NULL;
    node_t *r = recv_of(rt, h->tile, h->version);
    return r && len == rt->tile_bytes ? r->buf : NULL;
}

#endif

int taskrt_backend(const char *name)
{
    return !strcmp(name, "mpi")      ? TASKRT_MPI
           : !strcmp(name, "native") ? TASKRT_NATIVE
           : !strcmp(name, "bcast")  ? TASKRT_BCAST
                                     : -1;
}

const char *taskrt_backend_name(int backend)
{
    return backend == TASKRT_MPI ? "mpi" : backend == TASKRT_NATIVE ? "native" : "bcast";
}

#ifdef WEFT_MPI
/* TASKRT_BCAST: the sends of one tile version, started together. */
typedef struct {
    int n;
    node_t *nodes[];
} send_group_t;

/* Send batch[i] and the others of the batch for the same tile version: one
 * dynamic broadcast when they are several, else a plain send. Marks them
 * NULL in batch. */
static int send_group(taskrt_t *rt, node_t **batch, int n, int i)
{
    node_t *s = batch[i];
    uint64_t tag = (uint64_t)s->tile * MAX_VERSIONS + (uint64_t)s->version;
    send_group_t *g = xmalloc(sizeof *g + sizeof(node_t *) * (size_t)n);
    int peers[64];
    g->n = 0;
    for (int j = i; j < n; j++)
        if (batch[j] && batch[j]->tile == s->tile && batch[j]->version == s->version) {
            peers[g->n] = batch[j]->peer;
            g->nodes[g->n++] = batch[j];
            batch[j] = NULL;
        }
    int rc = g->n == 1 ? weft_sr_isend_comp(rt->ctx, s->peer, TASKRT_COMM, tag, s->buf,
                                            rt->tile_bytes, weft_cq_comp(rt->sent), g)
                       : weft_bcast_dynamic(rt->ctx, s->buf, rt->tile_bytes, peers, NULL, g->n,
                                            TASKRT_COMM, tag, NULL, weft_cq_comp(rt->sent), g);
    if (rc != WEFT_OK) {
        fprintf(stderr, "taskrt: sending a tile: %s\n", weft_strerror(rc));
        free(g);
        return -1;
    }
    return 0;
}
#endif

/* Starts the sends the workers made ready. */
static int start_sends(taskrt_t *rt, node_t **active, int *nactive)
{
    pthread_mutex_lock(&rt->lock);
    int n = rt->nsendq;
    node_t *batch[64];
    if (n > 64)
        n = 64;
    rt->nsendq -= n;
    memcpy(batch, rt->sendq + rt->nsendq, sizeof *batch * (size_t)n);
    pthread_mutex_unlock(&rt->lock);
    for (int i = 0; i < n; i++) {
        node_t *s = batch[i];
        rt->stats.sent++;
        if (rt->backend == TASKRT_MPI) {
            MPI_Isend(s->buf, (int)rt->tile_bytes, MPI_BYTE, s->peer,
                      s->tile * MAX_VERSIONS + s->version, MPI_COMM_WORLD, &s->req);
            active[(*nactive)++] = s;
            continue;
        }
#ifdef WEFT_MPI
        if (rt->backend == TASKRT_BCAST) {
            if (batch[i] && send_group(rt, batch, n, i))
                return -1;
            continue;
        }
        am_header_t h = {s->tile, s->version};
        struct iovec iov = {s->buf, rt->tile_bytes};
        int rc = weft_am_send(rt->ep, s->peer, TASKRT_AM_ID, &h, sizeof h, &iov, 1,
                              weft_cq_comp(rt->sent), s, 0);
        if (rc == WEFT_OK) {
            pthread_mutex_lock(&rt->lock);
            node_done(rt, s);
            pthread_mutex_unlock(&rt->lock);
        } else if (rc != WEFT_INPROGRESS) {
            fprintf(stderr, "taskrt: weft_am_send: %s\n", weft_strerror(rc));
            return -1;
        }
#endif
    }
    return n;
}

/* Completions of MPI requests among active (sends and receives). */
static int mpi_poll(taskrt_t *rt, node_t **active, int *nactive, MPI_Request *reqs, int *idx)
{
    if (*nactive == 0)
        return 0;
    for (int i = 0; i < *nactive; i++)
        reqs[i] = active[i]->req;
    int done = 0;
    MPI_Testsome(*nactive, reqs, &done, idx, MPI_STATUSES_IGNORE);
    if (done <= 0)
        return 0;
    pthread_mutex_lock(&rt->lock);
    for (int i = 0; i < done; i++) {
        node_t *n = active[idx[i]];
        n->req = MPI_REQUEST_NULL;
        rt->stats.recv += n->kind == N_RECV;
        node_done(rt, n);
        active[idx[i]] = NULL;
    }
    pthread_mutex_unlock(&rt->lock);
    int k = 0;
    for (int i = 0; i < *nactive; i++)
        if (active[i])
            active[k++] = active[i];
    *nactive = k;
    return done;
}

#ifdef WEFT_MPI
/* TASKRT_BCAST: tiles in place, and sends or broadcasts done. */
static int bcast_poll(taskrt_t *rt)
{
    weft_progress(rt->ctx);
    weft_comp_entry_t e;
    int n = 0;
    while (weft_cq_pop(rt->arrivals, &e) == WEFT_OK) {
        if (e.error != WEFT_OK || e.length != rt->tile_bytes) {
            fprintf(stderr, "taskrt: a tile receive failed: %s\n", weft_strerror(e.error));
            return -1;
        }
        pthread_mutex_lock(&rt->lock);
        rt->stats.recv++;
        node_done(rt, e.user_context);
        pthread_mutex_unlock(&rt->lock);
        n++;
    }
    while (weft_cq_pop(rt->sent, &e) == WEFT_OK) {
        send_group_t *g = e.user_context;
        if (e.error != WEFT_OK) {
            fprintf(stderr, "taskrt: a tile send failed: %s\n", weft_strerror(e.error));
            return -1;
        }
        pthread_mutex_lock(&rt->lock);
        for (int i = 0; i < g->n; i++)
            node_done(rt, g->nodes[i]);
        pthread_mutex_unlock(&rt->lock);
        free(g);
        n++;
    }
    return n;
}

/* Arrivals and local send completions from the two queues. */
static int am_poll(taskrt_t *rt)
{
    weft_progress(rt->ctx);
    weft_comp_entry_t e;
    int n = 0;
    while (weft_cq_pop(rt->arrivals, &e) == WEFT_OK) {
        weft_am_msg_t *m = e.user_context;
        const am_header_t *h = m->header;
        node_t *r = m->hlen == sizeof *h ? recv_of(rt, h->tile, h->version) : NULL;
        if (!r || m->error != WEFT_OK || m->length != rt->tile_bytes) {
            fprintf(stderr, "taskrt: unexpected tile message (%s)\n", weft_strerror(m->error));
            weft_am_msg_release(m);
            return -1;
        }
        if (m->data != r->buf)
            memcpy(r->buf, m->data, rt->tile_bytes);
        weft_am_msg_release(m);
        pthread_mutex_lock(&rt->lock);
        rt->stats.recv++;
        node_done(rt, r);
        pthread_mutex_unlock(&rt->lock);
        n++;
    }
    while (weft_cq_pop(rt->sent, &e) == WEFT_OK) {
        if (e.error != WEFT_OK) {
            fprintf(stderr, "taskrt: a tile send failed: %s\n", weft_strerror(e.error));
            return -1;
        }
        pthread_mutex_lock(&rt->lock);
        node_done(rt, e.user_context);
        pthread_mutex_unlock(&rt->lock);
        n++;
    }
    return n;
}
#endif

int taskrt_run(taskrt_t *rt)
{
    int rc = 0;
    node_t **ready = xmalloc(sizeof *ready * (size_t)(rt->nnodes + 1));
    node_t **sendq = xmalloc(sizeof *sendq * (size_t)(rt->nnodes + 1));
    node_t **active = xmalloc(sizeof *active * (size_t)(rt->nnodes + 1));
    MPI_Request *reqs = xmalloc(sizeof *reqs * (size_t)(rt->nnodes + 1));
    int *idx = xmalloc(sizeof *idx * (size_t)(rt->nnodes + 1)), nactive = 0;
#ifdef WEFT_MPI
    if (rt->backend == TASKRT_NATIVE) {
        /* Registered only now that every RECV node exists: a tile that
         * arrives earlier waits for the registration. */
        if (weft_world_acquire(NULL, &rt->ctx) != WEFT_OK || weft_am_create(rt->ctx, &rt->am) ||
            weft_am_ep_create(rt->am, &rt->ep) || weft_cq_create(4096, &rt->arrivals) ||
            weft_cq_create(4096, &rt->sent) ||
            weft_am_register(rt->am, TASKRT_AM_ID, weft_cq_comp(rt->arrivals), am_alloc, rt)) {
            fprintf(stderr, "taskrt: cannot set up active messages\n");
            return -1;
        }
    }
    if (rt->backend == TASKRT_BCAST &&
        (weft_world_acquire(NULL, &rt->ctx) != WEFT_OK || weft_cq_create(4096, &rt->arrivals) ||
         weft_cq_create(4096, &rt->sent))) {
        fprintf(stderr, "taskrt: cannot set up the completion queues\n");
        return -1;
    }
#endif
    /* The workers are waiting already: everything they see is set under
     * the lock. */
    pthread_mutex_lock(&rt->lock);
    rt->ready = ready;
    rt->sendq = sendq;
    rt->remaining = rt->nnodes;
    for (int i = 0; i < rt->nnodes; i++) {
        node_t *n = rt->nodes[i];
        if (n->kind == N_RECV && rt->backend == TASKRT_MPI) {
            MPI_Irecv(n->buf, (int)rt->tile_bytes, MPI_BYTE, n->peer,
                      n->tile * MAX_VERSIONS + n->version, MPI_COMM_WORLD, &n->req);
            active[nactive++] = n;
        }
#ifdef WEFT_MPI
        if (n->kind == N_RECV && rt->backend == TASKRT_BCAST &&
            weft_sr_irecv_comp(rt->ctx, n->peer, TASKRT_COMM,
                               (uint64_t)n->tile * MAX_VERSIONS + (uint64_t)n->version, n->buf,
                               rt->tile_bytes, weft_cq_comp(rt->arrivals), n) != WEFT_OK) {
            fprintf(stderr, "taskrt: cannot post a tile receive\n");
            rc = -1;
        }
#endif
        if (n->npred)
            continue;
        if (n->kind == N_TASK)
            rt->ready[rt->nready++] = n;
        else if (n->kind == N_SEND)
            rt->sendq[rt->nsendq++] = n;
    }
    pthread_cond_broadcast(&rt->cond);
    pthread_mutex_unlock(&rt->lock);
    int idle = 0;
    while (rc == 0) { /* a receive that could not be posted would never end */
        pthread_mutex_lock(&rt->lock);
        int left = rt->remaining;
        pthread_mutex_unlock(&rt->lock);
        if (left == 0)
            break;
        int got = start_sends(rt, active, &nactive);
        int done = rt->backend == TASKRT_MPI ? mpi_poll(rt, active, &nactive, reqs, idx) : 0;
#ifdef WEFT_MPI
        if (rt->backend == TASKRT_NATIVE)
            done = am_poll(rt);
        else if (rt->backend == TASKRT_BCAST)
            done = bcast_poll(rt);
#endif
        if (got < 0 || done < 0) {
            rc = -1;
            break;
        }
        /* Idle: yield, then nap, so the workers beside it keep the core. */
        if (got || done)
            idle = 0;
        else if (++idle < 64)
            sched_yield();
        else
            nanosleep(&(struct timespec){0, 20000}, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every tile delivered everywhere */
#ifdef WEFT_MPI
    if (rt->backend == TASKRT_NATIVE) {
        weft_am_ep_free(rt->ep);
        weft_am_free(rt->am);
        weft_cq_free(rt->arrivals);
        weft_cq_free(rt->sent);
        weft_world_release(rt->ctx);
    }
    if (rt->backend == TASKRT_BCAST) {
        weft_cq_free(rt->arrivals);
        weft_cq_free(rt->sent);
        weft_world_release(rt->ctx);
    }
#endif
    free(active);
    free(reqs);
    free(idx);
    return rc;
}

void taskrt_stats(const taskrt_t *rt, taskrt_stats_t *out)
{
    *out = rt->stats;
}

void taskrt_free(taskrt_t *rt)
{
    pthread_mutex_lock(&rt->lock);
    rt->stop = 1;
    pthread_cond_broadcast(&rt->cond);
    pthread_mutex_unlock(&rt->lock);
    for (int i = 0; i < rt->nworkers; i++)
        pthread_join(rt->workers[i], NULL);
    free(rt->workers);
    for (int i = 0; i < rt->nnodes; i++) {
        node_t *n = rt->nodes[i];
        free(n->succ);
        free(n->args);
        free(n->mem);
        free(n->inputs);
        if (n->kind == N_RECV)
            free(n->buf);
        free(n);
    }
    for (int t = 0; t < rt->ntiles; t++) {
        free(rt->tiles[t].mem);
        free(rt->tiles[t].readers);
        free(rt->tiles[t].sent_to);
    }
    free(rt->tiles);
    free(rt->nodes);
    free(rt->ready);
    free(rt->sendq);
    pthread_mutex_destroy(&rt->lock);
    pthread_cond_destroy(&rt->cond);
    free(rt);
}
