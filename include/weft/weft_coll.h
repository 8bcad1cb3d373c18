/* weft — collectives below the front ends.
 *
 * Two levels:
 *
 *   groups      barrier, bcast (of a buffer or of pieces), reduce,
 *               allreduce, allgather and alltoall over a fixed set of
 *               ranks (weft_coll_group_t), on the built-in element types
 *               and operations below; blocking, or non-blocking with a
 *               completion object (weft_comp.h).
 *   schedules   the engine under them and under weft's MPI collectives
 *               (weft_sched_t): rounds of sends and receives, then local
 *               copies and reductions, advanced by every thread that makes
 *               progress — the progress thread too (WEFT_PROGRESS_THREAD=1),
 *               so a non-blocking collective moves on while every
 *               application thread computes. A front end (an MPI, a task
 *               runtime) builds its own collectives on it with its own
 *               element types and operations (weft_sched_front_t).
 *
 * Failures: a member that dies, or a step that fails, does not leave the
 * others waiting. The rank that saw the failure sends every later message
 * of the collective all the same, each replaced by a short "poison" that
 * makes its receive fail: with WEFT_EPEERDEAD after a death, WEFT_EMEMBER
 * after any other failure. So every member whose result depends on the
 * failed one ends with an error, and the others may end with a correct
 * result (a bcast leaf fed by live ranks).
 */
#ifndef WEFT_WEFT_COLL_H
#define WEFT_WEFT_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "weft.h"
#include "weft_comp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- groups */

/* Element types of the group collectives. */
typedef enum weft_coll_dtype {
    WEFT_COLL_BYTE = 0, /* no arithmetic: bcast, allgather, alltoall, barrier only */
    WEFT_COLL_INT32,
    WEFT_COLL_UINT32,
    WEFT_COLL_INT64,
    WEFT_COLL_UINT64,
    WEFT_COLL_FLOAT,
    WEFT_COLL_DOUBLE,
    WEFT_COLL_NDTYPES
} weft_coll_dtype_t;

/* Reduction operations (all commutative). The bitwise ones take integer
 * types only. */
typedef enum weft_coll_op {
    WEFT_COLL_SUM = 0,
    WEFT_COLL_PROD,
    WEFT_COLL_MIN,
    WEFT_COLL_MAX,
    WEFT_COLL_BAND,
    WEFT_COLL_BOR,
    WEFT_COLL_BXOR,
    WEFT_COLL_NOPS
} weft_coll_op_t;

typedef struct weft_coll_group weft_coll_group_t;

/* A group of the n ranks in ranks[] (distinct job ranks, this rank among
 * them; NULL: every rank of the job, n ignored) whose collectives travel on
 * engine communicator id comm: every member creates it with the same ranks
 * in the same order and the same comm, and nothing else may send on that
 * id meanwhile. A member's place in ranks[] is its rank in the group.
 * Members call the group's collectives in the same order (blocking and
 * non-blocking alike); calls from several threads on one group must be
 * ordered by the program. Errors: WEFT_EINVAL (NULL ctx or out, n < 1, a
 * repeated rank), WEFT_ERANK (a rank outside the job; this rank missing),
 * WEFT_ENOMEM. Thread-safe. */
WEFT_API int weft_coll_group_create(weft_ctx_t *ctx, const int *ranks, int n, uint32_t comm,
                                    weft_coll_group_t **out);
/* Free g; its non-blocking collectives must have completed. NULL: nothing. */
WEFT_API void weft_coll_group_free(weft_coll_group_t *g);
/* This rank's place in g, and g's number of members. */
WEFT_API int weft_coll_group_rank(const weft_coll_group_t *g);
WEFT_API int weft_coll_group_size(const weft_coll_group_t *g);

/* Each collective below: with done NULL it blocks until it ends and returns
 * its status (WEFT_OK, WEFT_EPEERDEAD, WEFT_EMEMBER, WEFT_ETRUNC when the
 * members' counts differ); with done it returns WEFT_OK once started and
 * signals done once it ended, with the entry's user_context as given, error
 * its status, source this rank, tag 0 and length the bytes of this rank's
 * result. Buffers must stay valid and untouched until then; one still in
 * flight at weft_finalize is signaled there, with WEFT_ECANCELED (or the
 * error it had already). Errors before anything starts: WEFT_EINVAL (NULL g, a NULL buffer with
 * count > 0, an unknown type or op, an op on WEFT_COLL_BYTE or a bitwise op on a floating type, a
 * root outside the group), WEFT_ENOMEM; a failed call still counts in the order of g's collectives,
 * as if it had run. */

/* Every member has entered before any leaves. */
WEFT_API int weft_coll_barrier(weft_coll_group_t *g, weft_comp_t *done, void *user_context);
/* count elements at buf from root to every member (binomial tree). */
WEFT_API int weft_coll_bcast(weft_coll_group_t *g, void *buf, size_t count, weft_coll_dtype_t t,
                             int root, weft_comp_t *done, void *user_context);
/* The same for a message in iovcnt pieces (iov: the root's data, the
 * others' room for it, the same total length at every member): sent and
 * received in place where the engine takes that many pieces (16), else
 * through one staging buffer. The iov array itself may go once this
 * returns. */
WEFT_API int weft_coll_bcastv(weft_coll_group_t *g, const struct iovec *iov, int iovcnt, int root,
                              weft_comp_t *done, void *user_context);
/* dst at root = src of every member combined by op, element-wise; dst is
 * used at root only and may be src there. */
WEFT_API int weft_coll_reduce(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                              weft_coll_dtype_t t, weft_coll_op_t op, int root, weft_comp_t *done,
                              void *user_context);
/* dst at every member = src of every member combined by op (recursive
 * doubling); dst may be src. */
WEFT_API int weft_coll_allreduce(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                                 weft_coll_dtype_t t, weft_coll_op_t op, weft_comp_t *done,
                                 void *user_context);
/* Block i of dst (count elements at dst + i * count) = src of member i. */
WEFT_API int weft_coll_allgather(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                                 weft_coll_dtype_t t, weft_comp_t *done, void *user_context);
/* Block i of src goes to member i; block i of dst comes from member i
 * (blocks of count elements). src and dst must not overlap. */
WEFT_API int weft_coll_alltoall(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                                weft_coll_dtype_t t, weft_comp_t *done, void *user_context);

/* ---------------------------------------------------------------- schedules */

typedef struct weft_sched weft_sched_t;

/* How a front end's element types and operations behave. A step names its
 * data as (buf, count, type): type NULL means count bytes at buf, and the
 * engine handles it without the front end; any other type is the front
 * end's, passed back to these functions as given. Errors are in the front
 * end's own codes (0: success), into which weft statuses are translated. */
typedef struct weft_sched_front {
    /* Bytes of one element's data. */
    size_t (*size)(const void *type);
    /* Whether count elements at buf lie in one piece starting at buf +
     * *offset; else they go through iov, or pack and unpack. */
    bool (*contig)(const void *type, ptrdiff_t *offset);
    /* The pieces of count elements at buf into iov (up to max); returns how
     * many there are, more than max when they did not fit. */
    int (*iov)(const void *type, const void *buf, size_t count, struct iovec *iov, int max);
    /* The first n bytes of the packed data of count elements at buf, to out;
     * and back. */
    void (*pack)(const void *type, const void *buf, size_t count, size_t n, void *out);
    void (*unpack)(const void *type, void *buf, size_t count, size_t n, const void *in);
    /* Bytes a temporary of count elements needs, and the offset to subtract
     * from its allocation to make it the address a buffer would have. */
    size_t (*span)(const void *type, size_t count, ptrdiff_t *offset);
    /* inout[i] = in[i] op inout[i] for count elements; the front's error. */
    int (*reduce)(const void *op, const void *in, void *inout, size_t count, const void *type);
    /* Whether op is commutative (reductions may then combine in any order). */
    bool (*commute)(const void *op);
    /* Take a reference on a type (is_op false) or op the schedule keeps
     * until it is freed: true when one was taken, and drop is called for it
     * then. NULL: none are taken. */
    bool (*hold)(const void *obj, bool is_op);
    void (*drop)(const void *obj, bool is_op);
    /* The front's error for a weft status (never called with WEFT_OK). */
    int (*error)(int status);
    /* Whether a front error means a member died (its poisons then say
     * WEFT_EPEERDEAD, others WEFT_EMEMBER). */
    bool (*dead)(int err);
} weft_sched_front_t;

/* A new, empty schedule on ctx for front (NULL: bytes alone, every type
 * NULL and no reduction, weft statuses as errors), with extra bytes of the
 * front's own (zeroed, weft_sched_extra). NULL when out of memory. */
WEFT_API weft_sched_t *weft_sched_new(weft_ctx_t *ctx, const weft_sched_front_t *front,
                                      size_t extra);
/* The extra bytes given to weft_sched_new. */
WEFT_API void *weft_sched_extra(weft_sched_t *s);
/* Close the current round: steps added next belong to a new one. The
 * communication steps of a round are all posted when it starts; its local
 * steps run, in the order they were added, once they all completed. */
WEFT_API void weft_sched_round(weft_sched_t *s);
/* Close the round and open a new tag phase (weft_coll_tag): for the next
 * part of a composition. */
WEFT_API void weft_sched_phase(weft_sched_t *s);
/* The current phase. */
WEFT_API uint32_t weft_sched_phase_of(const weft_sched_t *s);

/* Communication steps with job rank world on engine communicator id comm
 * (weft_sr_isend). A receive is posted with one spare byte past its data,
 * for a poison; buffers stay the caller's until the schedule ends. */
WEFT_API int weft_sched_send(weft_sched_t *s, int world, uint32_t comm, uint64_t tag,
                             const void *buf, size_t count, const void *type);
WEFT_API int weft_sched_recv(weft_sched_t *s, int world, uint32_t comm, uint64_t tag, void *buf,
                             size_t count, const void *type);
/* Local steps. copy: the packed data of the two sides, the shorter decides. */
WEFT_API int weft_sched_copy(weft_sched_t *s, const void *src, size_t scount, const void *stype,
                             void *dst, size_t dcount, const void *dtype);
/* inout = in op inout, count elements of type. */
WEFT_API int weft_sched_reduce(weft_sched_t *s, const void *in, void *inout, size_t count,
                               const void *type, const void *op);
/* A local step that calls fn(s, arg) when its round's communication is done.
 * fn may add steps and rounds (closing them with weft_sched_round): the
 * schedule goes on with them. A non-zero return is the schedule's error. */
typedef int weft_sched_call_fn(weft_sched_t *s, void *arg);
WEFT_API int weft_sched_call(weft_sched_t *s, weft_sched_call_fn *fn, void *arg);
/* fn(s, arg, err) is called once when s ends, whatever its outcome (err:
 * the schedule's error, 0 if none), by the thread that advanced it last,
 * before weft_sched_poll says it is done. Not called for a schedule freed
 * before it ran (neither started nor polled). */
typedef void weft_sched_end_fn(weft_sched_t *s, void *arg, int err);
WEFT_API void weft_sched_on_end(weft_sched_t *s, weft_sched_end_fn *fn, void *arg);
/* Steps return 0, or the front's out-of-memory error (which also becomes
 * the schedule's error). */

/* A temporary of n bytes, freed with the schedule; NULL when out of memory. */
WEFT_API void *weft_sched_tmp(weft_sched_t *s, size_t n);
/* A temporary for count elements of type, as the address a buffer of them
 * would have (the front's span). */
WEFT_API void *weft_sched_tmp_typed(weft_sched_t *s, size_t count, const void *type);
/* The packed bytes, taken now, of count elements of type at buf. */
WEFT_API void *weft_sched_snapshot(weft_sched_t *s, const void *buf, size_t count,
                                   const void *type);
/* The schedule's error so far (0: none); set it (kept if one was set). */
WEFT_API int weft_sched_error(const weft_sched_t *s);
WEFT_API void weft_sched_fail(weft_sched_t *s, int err);
/* Whether op of s's front is commutative. */
WEFT_API bool weft_sched_commute(const weft_sched_t *s, const void *op);

/* Close the last round and list s on its context, where every progress
 * pass advances it; posts its first round now. s stays the caller's
 * (weft_sched_poll, weft_sched_free). Returns s's error, and then lists
 * nothing. */
WEFT_API int weft_sched_start(weft_sched_t *s);
/* Advance s if no other thread does; *done once it ended: returns its
 * error (0 for success). A blocking owner may also poll a schedule it never
 * started (its last round closed with weft_sched_round): it then moves in
 * these polls only, and costs the progress passes nothing. Thread-safe. */
WEFT_API int weft_sched_poll(weft_sched_t *s, bool *done);
/* Let go of s: unlisted if it ended or never started; one still running
 * goes on to its end, then is freed. NULL: nothing. */
WEFT_API void weft_sched_free(weft_sched_t *s);
/* Whether any schedule is listed on ctx (a hint, read without a lock). */
WEFT_API bool weft_sched_active(weft_ctx_t *ctx);
/* Advance every listed schedule of ctx once; how many moved. */
WEFT_API int weft_sched_progress(weft_ctx_t *ctx);
/* Unlist every schedule of front on ctx (a front end that ends while ctx
 * lives on): they move no more, and are freed by their owners. */
WEFT_API void weft_sched_forget(weft_ctx_t *ctx, const weft_sched_front_t *front);

/* A view of a set of members for the builders below: size and this rank's
 * place, world(arg, i) the job rank of member i, comm the engine id and
 * seq the collective's number (the same at every member) in the tags. */
typedef struct weft_coll_view {
    int size, rank;
    int (*world)(const void *arg, int i);
    const void *arg;
    uint32_t comm;
    uint32_t seq;
} weft_coll_view_t;

/* The tag of message k (< 2^24) of a phase of collective number seq: seq
 * in the high 32 bits, (phase mod 128, k) below. */
static inline uint64_t weft_coll_tag(uint32_t seq, uint32_t phase, int k)
{
    return ((uint64_t)seq << 32) | ((uint64_t)(phase & 0x7f) << 24) | (uint32_t)(k & 0xffffff);
}

/* Builders: each opens its own phase and adds the rounds of one collective
 * over v; they return 0 or the front's out-of-memory error. Algorithms:
 * barrier by dissemination; bcast by a binomial tree from root; reduce by
 * a binomial tree, operands always combined as (lower ranks) op (higher
 * ranks), so a non-commutative op reduces in rank order (towards member 0,
 * then sent to root); allreduce by recursive doubling, folding the members
 * beyond a power of two, in rank order too; allgather and alltoall with
 * every message in one round. src may be dst for reduce and allreduce. */
WEFT_API int weft_coll_build_barrier(weft_sched_t *s, const weft_coll_view_t *v);
WEFT_API int weft_coll_build_bcast(weft_sched_t *s, const weft_coll_view_t *v, void *buf,
                                   size_t count, const void *type, int root);
WEFT_API int weft_coll_build_reduce(weft_sched_t *s, const weft_coll_view_t *v, const void *src,
                                    void *dst, size_t count, const void *type, const void *op,
                                    int root);
WEFT_API int weft_coll_build_allreduce(weft_sched_t *s, const weft_coll_view_t *v, const void *src,
                                       void *dst, size_t count, const void *type, const void *op);

/* The shapes the builders use, for a front end's paths that run without a
 * schedule and must send the very messages a schedule would. Binomial tree
 * over p members rooted at virtual rank 0 (bcast): for virtual rank vr,
 * the lowest set bit of vr (its parent is vr - mask), or for the root the
 * smallest power of two >= p; its children are vr + m for m = mask / 2,
 * mask / 4, ... 1, those below p. */
static inline int weft_coll_bino_mask(int p, int vr)
{
    int mask = 1;
    while (mask < p && !(vr & mask))
        mask <<= 1;
    return mask;
}

/* Recursive doubling over p members (allreduce): the first 2 * rem fold in
 * pairs (even into odd) so that pof2 members, the largest power of two <= p,
 * exchange; vr is this member's place among them, -1 when folded away. */
typedef struct weft_coll_rd {
    int pof2, rem, vr;
} weft_coll_rd_t;

static inline weft_coll_rd_t weft_coll_rd(int p, int r)
{
    weft_coll_rd_t rd = {.pof2 = 1};
    while (rd.pof2 * 2 <= p)
        rd.pof2 *= 2;
    rd.rem = p - rd.pof2;
    rd.vr = r >= 2 * rd.rem ? r - rd.rem : r % 2 ? r / 2 : -1;
    return rd;
}

/* The member whose place among the exchanging ones is vpeer. */
static inline int weft_coll_rd_rank(const weft_coll_rd_t *rd, int vpeer)
{
    return vpeer < rd->rem ? vpeer * 2 + 1 : vpeer + rd->rem;
}

/* The poison protocol, for a front end's paths that run without a
 * schedule and must send the very messages a schedule would. After a
 * failure, a send of n bytes becomes a poison of this length (why:
 * WEFT_EPEERDEAD, or another status): after a death none for data, one byte
 * for a message of none (a receive of 0 bytes posts room for one), so its
 * receive fails with WEFT_EPEERDEAD; after another failure one byte more
 * than the data (a message of none counting as one), which arrives whole in
 * the receive's spare byte and makes it fail with WEFT_EMEMBER. A message
 * longer than that still truncates. */
static inline size_t weft_coll_poison_len(size_t n, int why)
{
    if (why == WEFT_EPEERDEAD)
        return n ? 0 : 1;
    return (n ? n : 1) + 1;
}
/* The status of a receive of n bytes (posted with room for max(n, 1) and a
 * spare byte) that ended with rc after got bytes. */
static inline int weft_coll_recv_status(int rc, size_t n, size_t got)
{
    if (rc != WEFT_OK)
        return rc;
    if (got == weft_coll_poison_len(n, WEFT_EPEERDEAD))
        return WEFT_EPEERDEAD;
    return got == weft_coll_poison_len(n, WEFT_ETRUNC) ? WEFT_EMEMBER : WEFT_OK;
}
/* Post the poison of a send of n bytes to world on (comm, tag); *tmp gets a
 * buffer to free once the request has completed (NULL if none). */
WEFT_API int weft_coll_isend_poison(weft_ctx_t *ctx, int world, uint32_t comm, uint64_t tag,
                                    size_t n, int why, weft_request_t **req, void **tmp);

#ifdef __cplusplus
}
#endif

#endif
