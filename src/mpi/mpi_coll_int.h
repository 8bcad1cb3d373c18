/* Private to the collectives (mpi_coll*.c): how an algorithm builds a schedule.
 *
 * A schedule is a list of rounds. A round holds communication steps (sends and
 * receives, all posted on the engine when the round starts) and local steps
 * (typed copies and reductions) that run, in the order they were added, once
 * every communication step of the round has completed. Then the next round
 * starts. So a builder that needs a local step *before* a send puts it in an
 * earlier round (coll_round()).
 *
 * Every buffer a step names is fixed when the schedule is built: temporaries
 * come from coll_tmp*(), owned by the schedule and freed with it. Message tags
 * are the collective's sequence number on the communicator (taken when the
 * schedule is made: members start collectives in the same order) in the high
 * 32 bits, and (phase, k) below, where a builder picks k and coll_phase() opens a
 * new phase, so that concurrent collectives, and the parts of one, never mix.
 */
#ifndef WEFT_MPI_COLL_INT_H
#define WEFT_MPI_COLL_INT_H

#include "mpi/mpi_int.h"

/* A new, empty schedule on comm (for an intercommunicator, also on its
 * local_comm), numbered as a blocking or a non-blocking collective
 * (weft__coll_next_seq). NULL when out of memory. */
weft__mpi_sched_t *weft__coll_new(MPI_Comm comm, bool nonblocking);

/* Take the sequence numbers a schedule made now would take (weft__coll_new),
 * for a call that fails before it makes one. */
void weft__coll_skip_seq(MPI_Comm comm, bool nonblocking);

/* The schedule's sequence number on its communicator: the same at every
 * member (they start collectives in the same order). */
uint32_t weft__coll_seq(weft__mpi_sched_t *s);

/* The members of c (s's communicator, or its local_comm) as the engine's
 * builders see them, with the number s has on c. */
weft_coll_view_t weft__coll_view(weft__mpi_sched_t *s, MPI_Comm c);

/* Close the current round: steps added next belong to a new one. */
static inline void weft__coll_round(weft__mpi_sched_t *s)
{
    weft_sched_round(s);
}
/* Start a new tag phase (and a new round): for the next part of a composition. */
static inline void weft__coll_phase(weft__mpi_sched_t *s)
{
    weft_sched_phase(s);
}

/* Send count elements of t at buf to rank peer of the group that c sends to
 * (remote group for an intercommunicator); t == NULL means count bytes.
 * k distinguishes messages of one phase between the same pair (< 2^24). */
int weft__coll_send(weft__mpi_sched_t *s, MPI_Comm c, int peer, const void *buf, size_t count,
                    MPI_Datatype t, int k);
int weft__coll_recv(weft__mpi_sched_t *s, MPI_Comm c, int peer, void *buf, size_t count,
                    MPI_Datatype t, int k);
/* Local steps. copy: the packed streams of the two sides (the shorter decides). */
static inline int weft__coll_copy(weft__mpi_sched_t *s, const void *src, size_t scount,
                                  MPI_Datatype stype, void *dst, size_t dcount, MPI_Datatype dtype)
{
    return weft_sched_copy(s, src, scount, stype, dst, dcount, dtype);
}
/* inout = in op inout, count elements of t. */
static inline int weft__coll_reduce(weft__mpi_sched_t *s, const void *in, void *inout, size_t count,
                                    MPI_Datatype t, MPI_Op op)
{
    return weft_sched_reduce(s, in, inout, count, t, op);
}

/* A local step that calls fn(s, arg) when its round's communication is done
 * (weft_sched_call): a protocol whose next exchange depends on the last (an
 * agreement that may need another try) is one schedule. */
typedef weft_sched_call_fn weft__coll_call_fn;
static inline int weft__coll_call(weft__mpi_sched_t *s, weft__coll_call_fn *fn, void *arg)
{
    return weft_sched_call(s, fn, arg);
}

/* fn(s, arg, err) is called once when s ends, whatever its outcome
 * (weft_sched_on_end): for what a protocol holds until it ends, in success
 * or failure (a dead peer stops a schedule before its later steps run). */
typedef weft_sched_end_fn weft__coll_end_fn;
static inline void weft__coll_on_end(weft__mpi_sched_t *s, weft__coll_end_fn *fn, void *arg)
{
    weft_sched_on_end(s, fn, arg);
}

/* A temporary of n bytes, freed with the schedule. NULL when out of memory. */
static inline void *weft__coll_tmp(weft__mpi_sched_t *s, size_t n)
{
    return weft_sched_tmp(s, n);
}
/* A temporary for count elements of t, returned as the address a user buffer
 * would have (the type's true lower bound already subtracted). */
static inline void *weft__coll_tmp_typed(weft__mpi_sched_t *s, size_t count, MPI_Datatype t)
{
    return weft_sched_tmp_typed(s, count, t);
}
/* A packed copy, taken now, of count elements of t at buf (for MPI_IN_PLACE). */
static inline void *weft__coll_snapshot(weft__mpi_sched_t *s, const void *buf, size_t count,
                                        MPI_Datatype t)
{
    return weft_sched_snapshot(s, buf, count, t);
}

/* Set by a persistent collective around the build of its schedule
 * (mpi_coll_persist.c): weft__coll_new gives s the sequence numbers its init
 * took instead of new ones, and with dry, weft__coll_finish checks and
 * discards s instead of starting it. Per thread: only the building thread
 * sees it. */
typedef struct weft__coll_pin {
    bool on, dry;
    uint32_t seq, seq_local;
} weft__coll_pin_t;
extern _Thread_local weft__coll_pin_t weft__coll_pin;

/* Blocking: run s to completion (progressing everything) and free it. */
int weft__coll_run(weft__mpi_sched_t *s);
/* Non-blocking: make s the schedule of a new request, activate it. */
int weft__coll_start(weft__mpi_sched_t *s, MPI_Comm comm, MPI_Request *request);
/* Free a schedule that was built but never started. */
static inline void weft__coll_discard(weft__mpi_sched_t *s)
{
    weft_sched_free(s);
}

/* ---------------------------------------------------------------- blocks */

/* The per-rank blocks of a vector argument: uniform (count elements of type,
 * block i at i * count extents), v (counts[i] at displs[i] extents), w (counts[i]
 * of types[i] at displs[i] bytes) or wa (as w with MPI_Aint displacements). */
typedef enum weft_coll_blk_mode {
    WEFT_COLL_BLK_UNIFORM,
    WEFT_COLL_BLK_V,
    WEFT_COLL_BLK_W,
    WEFT_COLL_BLK_WA,
} weft_coll_blk_mode_t;

typedef struct weft_coll_blocks {
    weft_coll_blk_mode_t mode;
    const void *buf;
    int count;
    MPI_Datatype type;
    const int *counts, *displs;
    const MPI_Aint *adispls;
    const MPI_Datatype *types;
} weft_coll_blocks_t;

/* The blocks a public function's arguments describe. */
static inline weft_coll_blocks_t weft__coll_uniform(const void *buf, int count, MPI_Datatype t)
{
    return (weft_coll_blocks_t){
        .mode = WEFT_COLL_BLK_UNIFORM, .buf = buf, .count = count, .type = t};
}
static inline weft_coll_blocks_t weft__coll_vector(const void *buf, const int *counts,
                                                   const int *displs, MPI_Datatype t)
{
    return (weft_coll_blocks_t){
        .mode = WEFT_COLL_BLK_V, .buf = buf, .counts = counts, .displs = displs, .type = t};
}
static inline weft_coll_blocks_t weft__coll_wblocks(const void *buf, const int *counts,
                                                    const int *displs, const MPI_Aint *adispls,
                                                    const MPI_Datatype *types)
{
    return (weft_coll_blocks_t){.mode = adispls ? WEFT_COLL_BLK_WA : WEFT_COLL_BLK_W,
                                .buf = buf,
                                .counts = counts,
                                .displs = displs,
                                .adispls = adispls,
                                .types = types};
}

static inline void weft__coll_blk(const weft_coll_blocks_t *b, int i, char **p, size_t *count,
                                  MPI_Datatype *t)
{
    const char *base = (const char *)b->buf;
    switch (b->mode) {
    case WEFT_COLL_BLK_UNIFORM:
        *p = (char *)base + (MPI_Aint)i * b->count * weft__mpi_type_extent(b->type);
        *count = (size_t)b->count;
        *t = b->type;
        break;
    case WEFT_COLL_BLK_V:
        *p = (char *)base + (MPI_Aint)b->displs[i] * weft__mpi_type_extent(b->type);
        *count = (size_t)b->counts[i];
        *t = b->type;
        break;
    case WEFT_COLL_BLK_W:
        *p = (char *)base + b->displs[i];
        *count = (size_t)b->counts[i];
        *t = b->types[i];
        break;
    default: /* WEFT_COLL_BLK_WA: types NULL means type for every block */
        *p = (char *)base + b->adispls[i];
        *count = (size_t)b->counts[i];
        *t = b->types ? b->types[i] : b->type;
        break;
    }
}

/* ---------------------------------------------------------------- algorithms */

/* p blocks of counts[i] elements of t laid end to end (what reduce-scatter
 * scatters): *b, whose buf the caller sets, with byte displacements (so the
 * total may pass INT_MAX elements), and the total element count. */
int weft__coll_end_to_end(weft__mpi_sched_t *s, int p, const int *counts, MPI_Datatype t,
                          weft_coll_blocks_t *b, size_t *total);

/* Builders shared by the intra, inter and neighbourhood collectives; c is an
 * intracommunicator (an intercommunicator's local_comm, for instance). Each
 * opens its own phase. src is never MPI_IN_PLACE (the caller resolves it). */
int weft__coll_b_barrier(weft__mpi_sched_t *s, MPI_Comm c);
int weft__coll_b_bcast(weft__mpi_sched_t *s, MPI_Comm c, void *buf, size_t count, MPI_Datatype t,
                       int root);
/* Reduce count elements of src on every rank into dst at root. */
int weft__coll_b_reduce(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst, size_t count,
                        MPI_Datatype t, MPI_Op op, int root);
/* Root sends block i of b to rank i (its own block is copied into recv unless
 * recv.buf is MPI_IN_PLACE); the others receive into recv's block 0. */
int weft__coll_b_scatter(weft__mpi_sched_t *s, MPI_Comm c, const weft_coll_blocks_t *b, void *rbuf,
                         size_t rcount, MPI_Datatype rtype, int root);
/* Root receives block i of b from rank i; the others send (sbuf, scount, stype). */
int weft__coll_b_gather(weft__mpi_sched_t *s, MPI_Comm c, const void *sbuf, size_t scount,
                        MPI_Datatype stype, const weft_coll_blocks_t *b, int root);
/* Everyone sends (sbuf...) to every other rank and receives block i from i.
 * sbuf == MPI_IN_PLACE: our data is already our block of b. */
int weft__coll_b_allgather(weft__mpi_sched_t *s, MPI_Comm c, const void *sbuf, size_t scount,
                           MPI_Datatype stype, const weft_coll_blocks_t *b);
/* Block i of sb goes to rank i, block i of rb comes from rank i. sb == NULL:
 * in place (the data to send is rb's, taken now). */
int weft__coll_b_alltoall(weft__mpi_sched_t *s, MPI_Comm c, const weft_coll_blocks_t *sb,
                          const weft_coll_blocks_t *rb);
/* Reduce to rank 0, then bcast. */
int weft__coll_b_allreduce(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst,
                           size_t count, MPI_Datatype t, MPI_Op op);
/* Reduce everything to rank 0, then scatter counts[i] elements to rank i. */
int weft__coll_b_reduce_scatter(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst,
                                const int *counts, MPI_Datatype t, MPI_Op op);
/* Prefix reduction by recursive doubling: inclusive (scan) or exclusive (exscan). */
int weft__coll_b_scan(weft__mpi_sched_t *s, MPI_Comm c, const void *src, void *dst, size_t count,
                      MPI_Datatype t, MPI_Op op, bool exclusive);

/* ---------------------------------------------------------------- shared by the public functions
 */

/* Argument checks (mpi_coll.c): each returns MPI_SUCCESS or an error class. */
int weft__coll_check_op(MPI_Op op);
/* count, type, and buffer (MPI_IN_PLACE passes) of count elements of t at buf. */
int weft__coll_check_data(const void *buf, int count, MPI_Datatype t);
/* n counts, none negative. */
int weft__coll_check_counts(const int *counts, int n);
/* The n blocks of b: counts, displacements, types (each of w-blocks). */
int weft__coll_check_blocks(const weft_coll_blocks_t *b, int n);
/* The root argument of a rooted collective on comm (intra or inter). */
int weft__coll_check_root(MPI_Comm comm, int root);
/* The number of in- and out-neighbours of this member on comm's topology
 * (MPI_ERR_TOPOLOGY without one, *in and *out untouched). */
int weft__coll_degrees(MPI_Comm comm, int *in, int *out);
/* Send and receive buffers that are the same memory, where the standard asks
 * for MPI_IN_PLACE instead. */
int weft__coll_check_alias(const void *sbuf, const void *rbuf, int count);
/* Run (request == NULL) or start s; err != MPI_SUCCESS: discard s. Reports
 * errors through comm's handler under name. */
int weft__coll_finish(weft__mpi_sched_t *s, int err, MPI_Comm comm, MPI_Request *request,
                      const char *name);

/* In the public functions: return through the error handler on a failed
 * check, and take a new schedule. */
#define COLL_CHECK_COMM(comm, name)                                                                \
    do {                                                                                           \
        int e_ = weft__mpi_check_comm(comm);                                                       \
        if (e_ != MPI_SUCCESS)                                                                     \
            return weft__mpi_err(NULL, e_, name);                                                  \
    } while (0)

/* A check of a collective's arguments (req: its request, NULL when
 * blocking). A call that fails it still takes its sequence number, as the
 * members whose checks passed did: otherwise this rank's next collective
 * would take this one's number, and match the others' messages of this one
 * (a bcast handing over another call's data). */
#define COLL_CHECK(comm, req, expr, name)                                                          \
    do {                                                                                           \
        int e_ = (expr);                                                                           \
        if (e_ != MPI_SUCCESS) {                                                                   \
            weft__coll_skip_seq(comm, (req) != NULL);                                              \
            return weft__mpi_err(comm, e_, name);                                                  \
        }                                                                                          \
    } while (0)

/* The sequence number of a new collective call on comm. Blocking and
 * non-blocking calls are numbered apart, in the two halves of the space (MPI
 * never matches one kind with the other): a rank that starts a non-blocking
 * collective and then enters a blocking one still meets a rank that enters
 * the blocking one first and starts the non-blocking one after. MPI asks
 * every rank to call them in one order, but programs (mpi4py's iagree
 * fallback, an Iallreduce around a Barrier) rely on this, and other MPIs
 * allow it too. */
static inline uint32_t weft__coll_next_seq(MPI_Comm comm, bool nonblocking)
{
    atomic_uint *c = nonblocking ? &comm->coll_seq_nb : &comm->coll_seq;
    uint32_t n = atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
    return (n & 0x7fffffffu) | (nonblocking ? 0x80000000u : 0);
}

/* ---------------------------------------------------------------- failures
 *
 * Collectives follow the engine's poison protocol (weft_coll.h): a rank
 * whose collective failed a step still sends every later message of it, as
 * a poison, so nobody waits for ever. A receive that gets one fails with
 * WEFT_EPEERDEAD (MPIX_ERR_PROC_FAILED) after a death, with WEFT_EMEMBER
 * (WEFT_MPI_ERR_COLL_MEMBER, of class MPI_ERR_OTHER) after another failure,
 * distinct from a truncation of its own. Every rank whose result depends on
 * a failed member fails; a rank whose part was complete (a bcast leaf fed
 * by live ranks, a reduce's non-root) may succeed, with a correct result.
 * Members always send a message of the size its receiver expects (the type
 * signatures match), so a poison is never taken for data. */

/* Small blocking collectives that run without a schedule (allreduce, bcast)
 * send the very messages their schedule would: weft__coll_post_direct posts
 * one of them on c's collective id into d (nothing when buf is NULL; a receive
 * of 0 bytes needs room for one at buf; a send with `why` a failure sends its
 * poison), and weft__coll_wait_direct waits for those of d, moving
 * non-blocking collectives in flight meanwhile, and empties d. Both return a
 * weft status: the first error, a poison received counting as one. A request
 * posted before a failure is still waited for (a receive then waits for its
 * message: the peer sends it, or its poison). */
#define WEFT_COLL_DIRECT_MAX 34 /* a binomial tree's parent and children */
typedef struct weft__coll_direct {
    weft_request_t *reqs[WEFT_COLL_DIRECT_MAX];
    size_t n[WEFT_COLL_DIRECT_MAX];   /* a receive's expected bytes; SIZE_MAX: a send */
    void *tmp[WEFT_COLL_DIRECT_MAX];  /* a poison's bytes */
    char spare[WEFT_COLL_DIRECT_MAX]; /* a receive's room for a poison's last byte */
    int nreq;
} weft__coll_direct_t;
int weft__coll_post_direct(weft__coll_direct_t *d, MPI_Comm c, int peer, uint64_t tag, void *buf,
                           size_t n, bool send, int why);
int weft__coll_wait_direct(weft__coll_direct_t *d);

#define COLL_NEW_SCHED(s, comm, req, name)                                                         \
    weft__mpi_sched_t *s = weft__coll_new(comm, (req) != NULL);                                    \
    if (!s)                                                                                        \
    return weft__mpi_err(comm, MPI_ERR_NO_MEM, name)

/* Intercommunicator variants live in mpi_coll_inter.c. */
int weft__coll_inter_barrier(weft__mpi_sched_t *s, MPI_Comm comm);
int weft__coll_inter_bcast(weft__mpi_sched_t *s, MPI_Comm comm, void *buf, int count,
                           MPI_Datatype t, int root);
int weft__coll_inter_reduce(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, void *rbuf,
                            int count, MPI_Datatype t, MPI_Op op, int root);
int weft__coll_inter_allreduce(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, void *rbuf,
                               int count, MPI_Datatype t, MPI_Op op);
int weft__coll_inter_gather(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, int scount,
                            MPI_Datatype stype, const weft_coll_blocks_t *rb, int root);
int weft__coll_inter_scatter(weft__mpi_sched_t *s, MPI_Comm comm, const weft_coll_blocks_t *sb,
                             void *rbuf, int rcount, MPI_Datatype rtype, int root);
int weft__coll_inter_allgather(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf, int scount,
                               MPI_Datatype stype, const weft_coll_blocks_t *rb);
int weft__coll_inter_alltoall(weft__mpi_sched_t *s, MPI_Comm comm, const weft_coll_blocks_t *sb,
                              const weft_coll_blocks_t *rb);
int weft__coll_inter_reduce_scatter(weft__mpi_sched_t *s, MPI_Comm comm, const void *sbuf,
                                    void *rbuf, const int *counts, MPI_Datatype t, MPI_Op op);

static inline size_t weft__coll_bytes(size_t count, MPI_Datatype t)
{
    return t ? count * t->size : count;
}

#endif
