/* MPI requests' memory: a cache per thread and a shared stack (the hot path
 * of every Isend and Irecv), allocation, free, and what finalize gives back.
 * Completion is in mpi_req.c. */
#include <pthread.h>
#include <stdlib.h>

#include "mpi/mpi_int.h"

/* Free requests. Every Isend and Irecv takes one and every completion gives
 * it back, so this is the hot path of a message-rate loop: each thread keeps a
 * cache of its own (no lock, no atomic operation), a thread with CACHE_MAX
 * cached gives the next ones to a shared stack, and a thread with none takes
 * that stack whole. The shared stack is only pushed to and taken whole
 * (exchange), so it has no ABA problem. A thread's cache goes back to the
 * shared stack when the thread ends (a key destructor). */
#define CACHE_MAX 256

typedef struct req_cache {
    MPI_Request head;
    /* Requests freed into the cache and not taken since: what CACHE_MAX
     * bounds. What a refill brought is not counted (counting it would walk
     * the whole stack), so the cache holds at most that plus CACHE_MAX. */
    int count;
    bool armed; /* the thread-exit destructor is set for this thread */
} req_cache_t;

/* initial-exec: every Isend and Irecv reads it, and the default model of a
 * shared library reaches it through a call into the dynamic loader. The 16
 * bytes fit in the static TLS space glibc keeps for libraries loaded later,
 * so a libmpi.so opened with dlopen (mpi4py) still loads. */
static _Thread_local req_cache_t cache __attribute__((tls_model("initial-exec")));
static _Atomic(MPI_Request) shared_free;
static pthread_key_t cache_key;
static pthread_once_t cache_key_once = PTHREAD_ONCE_INIT;
static bool cache_key_ok;

static void shared_push(MPI_Request first, MPI_Request last)
{
    MPI_Request head = atomic_load_explicit(&shared_free, memory_order_relaxed);
    do
        last->next_free = head;
    while (!atomic_compare_exchange_weak_explicit(&shared_free, &head, first, memory_order_release,
                                                  memory_order_relaxed));
}

/* Hand a cache's requests to the shared stack. */
static void cache_flush(req_cache_t *c)
{
    if (!c->head)
        return;
    MPI_Request last = c->head;
    while (last->next_free)
        last = last->next_free;
    shared_push(c->head, last);
    c->head = NULL;
    c->count = 0;
}

static void cache_thread_exit(void *arg)
{
    cache_flush(arg);
}

static void cache_key_create(void)
{
    cache_key_ok = pthread_key_create(&cache_key, cache_thread_exit) == 0;
}

/* Make sure the thread's cache is flushed when the thread ends: before the
 * cache first holds anything (a free into it, or a refill that takes more
 * than one request). */
static void cache_arm(req_cache_t *c)
{
    if (!c->armed) {
        pthread_once(&cache_key_once, cache_key_create);
        c->armed = !cache_key_ok || pthread_setspecific(cache_key, c) == 0;
    }
}

/* The cache is empty: take the shared stack, or make a new request. */
static MPI_Request cache_refill(req_cache_t *c)
{
    MPI_Request r = atomic_exchange_explicit(&shared_free, NULL, memory_order_acquire);
    if (!r)
        return aligned_alloc(_Alignof(struct weft_mpi_request), sizeof *r);
    if (r->next_free)
        cache_arm(c); /* the rest stays in this thread's cache */
    c->head = r->next_free;
    c->count = 0;
    return r;
}

MPI_Request weft__mpi_req_alloc(weft_mpi_req_kind_t kind, MPI_Comm comm)
{
    req_cache_t *c = &cache;
    MPI_Request r = c->head;
    if (r) {
        c->head = r->next_free;
        if (c->count > 0)
            c->count--;
        /* A burst leaves the next one cold: fetch its first line (its link
         * and what this function writes) while the caller uses this one. */
        if (c->head)
            __builtin_prefetch(c->head, 1);
    } else if (!(r = cache_refill(c))) {
        return NULL;
    }
    /* Only what every path reads; each kind's constructor sets the rest
     * (p2p arguments, generalized-request callbacks, the staged buffer's
     * user_buf and user_count along with staging). */
    r->magic = WEFT_MPI_MAGIC_REQ;
    r->kind = kind;
    r->persistent = r->active = r->complete = r->freed = false;
    r->comm = comm;
    weft__mpi_comm_retain(comm); /* MPI_Comm_free may come before the end */
    r->wreq = NULL;
    weft__mpi_status_empty(&r->status);
    r->staging = NULL;
    r->user_type = NULL;
    r->sched = NULL;
    return r;
}

void weft__mpi_req_recycle(MPI_Request r)
{
    weft__mpi_comm_release(r->comm);
    r->magic = WEFT_MPI_MAGIC_DEAD;
    req_cache_t *c = &cache;
    if (c->count >= CACHE_MAX) {
        shared_push(r, r);
        return;
    }
    if (__builtin_expect(!c->armed, 0))
        cache_arm(c);
    r->next_free = c->head;
    c->head = r;
    c->count++;
}

void weft__mpi_req_free_pair(MPI_Request r)
{
    for (int i = 0; i < 2; i++) {
        if (r->part[i] && r->part[i] != MPI_REQUEST_NULL) {
            weft__mpi_req_free(r->part[i]);
            r->part[i] = NULL;
        }
    }
    free(r->part_copy);
    r->part_copy = NULL;
}

void weft__mpi_req_free(MPI_Request r)
{
    if (r->kind == WEFT_MPI_REQ_BSEND)
        weft__mpi_bsend_forget(r);
    if (r->kind == WEFT_MPI_REQ_PAIR)
        weft__mpi_req_free_pair(r);
    if (r->kind == WEFT_MPI_REQ_PCOLL)
        weft__pcoll_free(r);
    if (r->kind == WEFT_MPI_REQ_PART)
        weft__mpi_part_free(r);
    if (r->sched) {
        weft_sched_free(r->sched);
        r->sched = NULL;
    }
    if (r->staging) {
        free(r->staging);
        r->staging = NULL;
    }
    if (r->user_type) {
        weft__mpi_type_release(r->user_type);
        r->user_type = NULL;
    }
    if (r->persistent && r->type) {
        weft__mpi_type_release(r->type); /* its reference (persistent() in mpi_req.c) */
        r->type = NULL;
    }
    weft__mpi_req_recycle(r);
}

/* Finalize: free what this thread and the shared stack hold (caches of
 * threads still running stay theirs; they reach the stack when they end). */
void weft__mpi_req_fini(void)
{
    cache_flush(&cache);
    MPI_Request r = atomic_exchange_explicit(&shared_free, NULL, memory_order_acquire);
    while (r) {
        MPI_Request next = r->next_free;
        free(r);
        r = next;
    }
}
