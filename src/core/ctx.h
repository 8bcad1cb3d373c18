/* The context: one per weft_init, what every thread of the process shares
 * (ctx.c). Part of the engine's private objects (core_int.h). */
#ifndef WEFT_CORE_CTX_H
#define WEFT_CORE_CTX_H

#include <pthread.h>
#include <sched.h>

#include "boot/boot.h"
#include "core/gate.h"
#include "progress/progress_queue.h"
#include "util/slab.h"
#include "util/trace.h"

#define WEFT_MAX_DRIVERS       8
#define WEFT_MAX_KNOWN_DRIVERS 16 /* built-in ones and a program's own */
/* Slots of the per-thread deferred counts (struct weft_ctx, deferred). */
#define WEFT_DEFER_SLOTS 16

/* Waiting policies (WEFT_WAIT, progress.c). */
enum {
    WEFT__WAIT_SPIN = 0,
    WEFT__WAIT_FIXED_SPIN = 1,
    WEFT__WAIT_BLOCK = 2,
    WEFT__WAIT_YIELD = 3,
};

/* A thread asleep in a wait: the flag it sleeps on. */
typedef struct weft__sleeper {
    weft_list_t link;
    atomic_int *flag;
} weft__sleeper_t;

/* A sink takes every message sent on its communicator id, in the order
 * they arrive from each peer, instead of the matcher: an eager one as
 * (peer, tag, its payload, len) with rdv false, the payload valid during the
 * call only; one that came by rendezvous (a sender short of credit) is left
 * unexpected in the matcher, and the sink told (payload NULL, rdv true), so
 * that it posts the receive that takes it (by source and tag: tags the sink's
 * senders keep unique). Called under the engine lock, from inside a packet's
 * dispatch: it must not call weft; it copies what it keeps. Communicator ids
 * WEFT__SINK_COMM to WEFT__SINK_COMM + WEFT__SINKS - 1. */
typedef void (*weft__sink_fn)(void *arg, int peer, uint64_t tag, const void *payload, size_t len,
                              bool rdv);
#define WEFT__SINK_COMM 0xffffff10u
#define WEFT__SINKS     4

struct weft_ctx {
    weft_lock_t lock; /* the engine lock; kind follows the thread level */
    int thread_level;
    int rank, size;
    weft_boot_t *boot;
    struct weft__rma *rma;       /* symmetric regions (src/rma), NULL until made */
    struct weft__bcast *bcast;   /* the dynamic broadcast (src/coll), from weft_init on */
    struct weft__scheds *scheds; /* listed collective schedules (src/coll), from weft_init on */
    weft__gate_t *gates;
    int ndrivers;
    struct {
        const weft_driver_ops_t *ops;
        weft_driver_t *drv;
    } drivers[WEFT_MAX_DRIVERS];
    /* What a progress pass runs under the engine lock (weft__progress_step):
     * the submission drain and the self driver (its queue holds packets only
     * after a send to oneself: self_pending), every other driver's poll
     * (weft__ctx_add_driver), the pending gates and the cooperative copies,
     * then the callbacks protocols add (pass, weft__ctx_pass_add). */
    weft__pq_t pass;
    int npoll;
    struct {
        int (*poll)(weft_driver_t *d);
        weft_driver_t *drv;
    } poll[WEFT_MAX_DRIVERS];
    /* What every thread that made a pass runs after it, without the engine
     * lock: the front ends' callbacks (weft_progress_register). */
    weft__pq_t callbacks;
    weft__match_t *match;
    /* The drivers it may open, highest preference first (ctx.c). */
    const weft_driver_ops_t *known[WEFT_MAX_KNOWN_DRIVERS];
    int nknown;
    const weft_driver_ops_t *rail_ops; /* the driver with rails (its rails_param > 1) */
    int nrail_drivers;                 /* its extra instances */
    int rail_driver[WEFT_MAX_RAILS - 1];
    weft__handles_t handles;
    weft_list_t pending_gates; /* gates with a backlog and an idle track */
    weft_lock_t pending_lock;  /* guards pending_gates and every gate's on_pending */
    atomic_bool pending_any;   /* pending_gates is not empty (read without its lock) */
    weft_list_t live_requests; /* unfinished sends, receives reading a rendezvous */
    /* The matching structure (match), the posted receives' list and their
     * state POSTED are guarded by match_lock as well as the engine lock: a
     * thread without the engine lock posts a receive under match_lock alone
     * (weft__proto_recv_unlocked). A leaf: it may be taken under any other
     * lock (peer loss takes it under a gate's), and none is taken under it. */
    weft_lock_t match_lock;
    weft_list_t posted;           /* posted receives (state WEFT_RS_POSTED), by link */
    weft_slab_cache_t unexpected; /* every unexpected message's descriptor */
    /* Free requests, a stack of pointers: taking one reads this array, not
     * the request (which a burst of thousands has left cold), and prefetches
     * the next one for the write that will follow. */
    struct weft_request **free_reqs;
    uint32_t nfree_reqs, free_reqs_cap;
    /* Lock-free hand-over at WEFT_THREAD_MULTIPLE: requests a thread submitted
     * while another held the engine (drained in order by the next holder), and
     * requests retired without the lock (taken back by request_alloc). */
    _Atomic(struct weft_request *) submitted;
    _Atomic(struct weft_request *) returned;
    /* Sends in submitted, or taken from it and not yet submitted, counted by
     * the submitting thread's slot (weft__defer_slot): a thread sends past the
     * engine lock only when its own slot is zero, so its message never passes
     * one of its own still waiting for the holder; another thread's waiting
     * sends do not hold it back (two threads' messages are not ordered). Each
     * slot has a cache line. */
    struct {
        _Alignas(WEFT_CACHELINE) atomic_uint n;
        atomic_uint nrecv; /* the same for receives (weft__proto_recv_unlocked) */
    } deferred[WEFT_DEFER_SLOTS];
    /* Requests for threads without the engine lock: taken from returned
     * whole, handed out one by one under spare_lock. */
    struct weft_request *spare;
    weft_lock_t spare_lock;
    weft__chunk_t *free_chunks;
    bool self_pending; /* packets may wait in the self driver's queue */
    int self_driver;   /* index of the self driver in drivers[] */
    int node_leader;   /* lowest rank on this process's node */
    /* Peers: the job's ranks (0 .. size-1), then the processes of other jobs
     * that links added (api/link.c), up to peers_cap gates in all. npeers only
     * grows, stored with release once its gate is whole, so that a thread
     * that reads it (acquire) may use every gate below it. */
    atomic_int npeers;
    int peers_cap;
    /* Links: this process's id for them (0 until its first card), the
     * driver they go through (-1 until one is opened), and the processes
     * linked so far by id, so that a process met again keeps its gate. */
    uint64_t link_id;
    int link_driver;
    struct weft__linked {
        uint64_t id;
        int peer;
    } * linked;
    int nlinked, linked_cap;
    /* What the drivers were told at init (node_ranks aside), for a driver
     * that a link opens later. */
    weft_driver_params_t drv_params;
    int node_size;          /* ranks on this node */
    int node_index;         /* this rank's place among them */
    uint64_t spin_ns;       /* how long a waiting thread polls before yielding */
    uint64_t eager_credits; /* window granted to each peer */
    uint64_t rdv_split;     /* rendezvous this large move cooperatively (coop.c) */
    uint64_t coop_piece;    /* bytes per piece of a cooperative rendezvous */
    weft_list_t coop;       /* requests with a cooperative transfer to move or watch */
    weft_counters_t counters;
    bool finalizing;
    /* Completions of handler kind found under the engine lock, oldest first:
     * their handlers run once the lock is released (weft__unlock), never
     * under it. Guarded by the engine lock. */
    weft__comp_node_t *comp_handlers, *comp_handlers_tail;
    /* Sinks (weft__sink_set): the layers that take the messages of a
     * communicator id of their own without matching. Written before any
     * such message can arrive, read under the engine lock. */
    struct {
        weft__sink_fn fn;
        void *arg;
    } sinks[WEFT__SINKS];
    /* Waiting (progress.c). */
    int wait_policy;         /* WEFT__WAIT_* */
    atomic_int poller;       /* a waiting thread polls for everybody */
    atomic_int nsleepers;    /* waiting threads asleep */
    atomic_uint completions; /* requests completed at WEFT_THREAD_MULTIPLE, ever */
    weft_lock_t sleep_lock;  /* guards sleepers */
    weft_list_t sleepers;
    pthread_t progress_thread;
    bool progress_running;
    bool progress_pinned; /* the progress thread runs on progress_cpus */
    cpu_set_t progress_cpus;
    atomic_int progress_stop;
    /* eventfd that ends a sleep on the drivers' doorbells (the progress
     * thread's, or a waiter's under wait_doorbells); -1 when nobody sleeps so */
    int progress_kick;
    /* Threads asleep, or about to sleep, on the doorbells (progress.c):
     * whoever adds work that only a pass would see kicks them. */
    atomic_int progress_asleep;
    /* What it did (weft_counters_progress); written by it alone. */
    _Atomic uint64_t progress_sleeps, progress_woken, progress_kicked, progress_events;
    /* WEFT_WAIT=block or fixed_spin without a progress thread: a waiter that
     * polled in vain sleeps on the doorbells (progress.c). */
    bool wait_doorbells;
    _Atomic uint64_t wait_sleeps, wait_woken;
};

/* The calling thread's slot in ctx->deferred: its thread pointer hashed (two
 * threads may share one, which only holds one back more often). */
static inline unsigned weft__defer_slot(void)
{
    uint64_t h = (uint64_t)weft__thread_self() * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 60) & (WEFT_DEFER_SLOTS - 1);
}

/* ctx->match_lock: a leaf (nothing else is taken under it). */
static inline void weft__match_lock(struct weft_ctx *ctx)
{
    weft_lock_acquire(&ctx->match_lock);
}
static inline void weft__match_unlock(struct weft_ctx *ctx)
{
    weft_lock_release(&ctx->match_lock);
}

/* The context's free requests (request.c). */
/* Move what threads returned without the lock (ctx->returned) onto the free
 * stack; its top after that, NULL if none (caller holds the engine lock). */
struct weft_request *weft__request_reclaim(struct weft_ctx *ctx);
/* The free request that weft__request_take would hand out, NULL if none
 * (caller holds the engine lock). At WEFT_THREAD_MULTIPLE retired requests
 * come back by the returned stack, so an empty free stack takes it back
 * first: the fast paths would otherwise fall to the general ones. */
static inline struct weft_request *weft__request_peek(struct weft_ctx *ctx)
{
    if (WEFT_LIKELY(ctx->nfree_reqs))
        return ctx->free_reqs[ctx->nfree_reqs - 1];
    return weft__request_reclaim(ctx);
}
/* Take the request weft__request_peek returned off the free stack. */
static inline void weft__request_take(struct weft_ctx *ctx)
{
    uint32_t n = --ctx->nfree_reqs;
    if (n)
        __builtin_prefetch(ctx->free_reqs[n - 1], 1);
}
/* weft__request_alloc when the free stack is empty. */
struct weft_request *weft__request_alloc_slow(struct weft_ctx *ctx, uint8_t kind);
/* A request from the context's free stack (caller holds the engine lock). */
static inline struct weft_request *weft__request_alloc(struct weft_ctx *ctx, uint8_t kind)
{
    struct weft_request *req = weft__request_peek(ctx);
    if (WEFT_UNLIKELY(!req))
        return weft__request_alloc_slow(ctx, kind);
    weft__request_take(ctx);
    return weft__request_init(req, kind);
}
int weft__progress_locked(struct weft_ctx *ctx);
/* One progress pass (weft__progress_locked), a piece of cooperative transfer
 * handed out in *copy instead of being copied under the lock. */
int weft__progress_step(struct weft_ctx *ctx, weft__coop_copy_t *copy);
/* Add fn(arg) to every pass, run under the engine lock after the engine's
 * own work (a protocol's work that must advance on its own): its slot, or
 * WEFT_ENOBUFS. */
int weft__ctx_pass_add(struct weft_ctx *ctx, weft__pq_fn fn, void *arg);
/* Counters (stats.c): print one line per gate with traffic to stderr when
 * WEFT_STATS=1 (finalize calls it). */
void weft__stats_print(struct weft_ctx *ctx);
/* The engine's upcalls for a driver instance of ctx (ctx.c). */
const weft_driver_upcalls_t *weft__ctx_upcalls(struct weft_ctx *ctx, weft_driver_upcalls_t *up);
/* Whether peer names a gate (a rank of the job or a linked process). */
static inline bool weft__peer_valid(struct weft_ctx *ctx, int peer)
{
    return peer >= 0 && peer < atomic_load_explicit(&ctx->npeers, memory_order_acquire);
}

/* ctx->counters with what the gates count added (caller holds the engine lock). */
void weft__counters_sum(struct weft_ctx *ctx, weft_counters_t *out);

/* Wire-up (ctx_wire.c). This process's node: host name and boot id, or
 * WEFT_NODE_ID, in buf. */
#define WEFT__NODE_ID_MAX 256
void weft__ctx_node_id(char *buf, size_t len);
/* ctx->known: the built-in drivers and params' own, highest preference
 * first. WEFT_EINVAL for a malformed driver of the program's. */
int weft__ctx_known_drivers(weft_ctx_t *ctx, const weft_init_params_t *params);
/* The ranks on this node (published and fenced): *node_ranks (malloc'd),
 * their number and this rank's place among them. */
int weft__ctx_find_node(weft_ctx_t *ctx, int **node_ranks, int *node_size, int *node_index);
/* Open the drivers some peer needs (and their rails), publish their
 * addresses. */
int weft__ctx_open_drivers(weft_ctx_t *ctx, const int *node_ranks, int node_size, int node_index,
                           bool doorbell);
/* Connect g's track (and rails) through the driver that reaches its peer. */
int weft__ctx_connect_gate(weft_ctx_t *ctx, weft__gate_t *g, bool same_node);
/* The gates of the job's ranks, room for cap in all (never moves); free them. */
bool weft__ctx_gates_alloc(weft_ctx_t *ctx, int cap);
void weft__ctx_gates_free(weft_ctx_t *ctx);

/* Append an opened driver to ctx->drivers, and to ctx->poll unless it is
 * the self driver (ctx->self_driver names it before). The caller checked
 * that there is room (WEFT_MAX_DRIVERS). */
void weft__ctx_add_driver(weft_ctx_t *ctx, const weft_driver_ops_t *ops, weft_driver_t *drv);
/* A test hook, not public API: a context of size ranks for rank, every gate
 * (itself included) on one track of the driver ops, no bootstrap. strategy
 * NULL means the driver's default. Freed by weft_finalize (no fence). */
int weft__ctx_create_local(int rank, int size, const weft_driver_ops_t *ops, const char *strategy,
                           struct weft_ctx **ctx_out);

#endif
