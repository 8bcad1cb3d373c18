/* The group collectives of weft_coll.h: a fixed set of ranks, the built-in
 * element types and operations (the native front of the schedules), and the
 * builders of coll_algo.c plus allgather and alltoall. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "progress/progress.h"
#include "weft/weft_coll.h"

/* ---------------------------------------------------------------- the native front */

/* A built-in type, or the layout of one message in pieces (bcastv): iov
 * set, one element of size bytes, the buffer argument unused. */
typedef struct native_type {
    weft_coll_dtype_t id;
    size_t size;
    const struct iovec *iov;
    int iovcnt;
} native_type_t;

#define TYPE(id, size)                                                                             \
    {                                                                                              \
        id, size, NULL, 0                                                                          \
    }
static const native_type_t types[WEFT_COLL_NDTYPES] = {
    TYPE(WEFT_COLL_BYTE, 1),   TYPE(WEFT_COLL_INT32, 4),  TYPE(WEFT_COLL_UINT32, 4),
    TYPE(WEFT_COLL_INT64, 8),  TYPE(WEFT_COLL_UINT64, 8), TYPE(WEFT_COLL_FLOAT, 4),
    TYPE(WEFT_COLL_DOUBLE, 8),
};
#undef TYPE
static const weft_coll_op_t ops[WEFT_COLL_NOPS] = {
    WEFT_COLL_SUM,  WEFT_COLL_PROD, WEFT_COLL_MIN,  WEFT_COLL_MAX,
    WEFT_COLL_BAND, WEFT_COLL_BOR,  WEFT_COLL_BXOR,
};

static size_t n_size(const void *type)
{
    return ((const native_type_t *)type)->size;
}

static bool n_contig(const void *type, ptrdiff_t *offset)
{
    *offset = 0;
    return !((const native_type_t *)type)->iov;
}

static int n_iov(const void *type, const void *buf, size_t count, struct iovec *iov, int max)
{
    (void)buf;
    (void)count; /* one */
    const native_type_t *t = type;
    for (int i = 0; i < t->iovcnt && i < max; i++)
        iov[i] = t->iov[i];
    return t->iovcnt;
}

/* The first n bytes of the pieces, gathered to out, or scattered from in. */
static void n_pack(const void *type, const void *buf, size_t count, size_t n, void *out)
{
    (void)buf;
    (void)count;
    const native_type_t *t = type;
    char *o = out;
    for (int i = 0; i < t->iovcnt && n; i++) {
        size_t k = t->iov[i].iov_len < n ? t->iov[i].iov_len : n;
        memcpy(o, t->iov[i].iov_base, k);
        o += k;
        n -= k;
    }
}

static void n_unpack(const void *type, void *buf, size_t count, size_t n, const void *in)
{
    (void)buf;
    (void)count;
    const native_type_t *t = type;
    const char *p = in;
    for (int i = 0; i < t->iovcnt && n; i++) {
        size_t k = t->iov[i].iov_len < n ? t->iov[i].iov_len : n;
        memcpy(t->iov[i].iov_base, p, k);
        p += k;
        n -= k;
    }
}

static size_t n_span(const void *type, size_t count, ptrdiff_t *offset)
{
    *offset = 0;
    return count * n_size(type);
}

/* out[i] = a[i] op out[i] on one C type. */
#define ARITH(T)                                                                                   \
    do {                                                                                           \
        const T *a = in;                                                                           \
        T *b = inout;                                                                              \
        for (size_t i = 0; i < count; i++) {                                                       \
            switch (o) {                                                                           \
            case WEFT_COLL_SUM:                                                                    \
                b[i] = a[i] + b[i];                                                                \
                break;                                                                             \
            case WEFT_COLL_PROD:                                                                   \
                b[i] = a[i] * b[i];                                                                \
                break;                                                                             \
            case WEFT_COLL_MIN:                                                                    \
                b[i] = a[i] < b[i] ? a[i] : b[i];                                                  \
                break;                                                                             \
            default:                                                                               \
                b[i] = a[i] > b[i] ? a[i] : b[i];                                                  \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)
#define BITS(T)                                                                                    \
    do {                                                                                           \
        const T *a = in;                                                                           \
        T *b = inout;                                                                              \
        for (size_t i = 0; i < count; i++)                                                         \
            b[i] = o == WEFT_COLL_BAND  ? (T)(a[i] & b[i])                                         \
                   : o == WEFT_COLL_BOR ? (T)(a[i] | b[i])                                         \
                                        : (T)(a[i] ^ b[i]);                                        \
    } while (0)
#define INTEGER(T)                                                                                 \
    do {                                                                                           \
        if (o >= WEFT_COLL_BAND)                                                                   \
            BITS(T);                                                                               \
        else                                                                                       \
            ARITH(T);                                                                              \
    } while (0)

static int n_reduce(const void *op, const void *in, void *inout, size_t count, const void *type)
{
    if (!type || !op)
        return WEFT_EINVAL; /* a schedule of bytes (weft_sched_new with no front) */
    weft_coll_op_t o = *(const weft_coll_op_t *)op;
    switch (((const native_type_t *)type)->id) {
    case WEFT_COLL_INT32:
        INTEGER(int32_t);
        break;
    case WEFT_COLL_UINT32:
        INTEGER(uint32_t);
        break;
    case WEFT_COLL_INT64:
        INTEGER(int64_t);
        break;
    case WEFT_COLL_UINT64:
        INTEGER(uint64_t);
        break;
    case WEFT_COLL_FLOAT:
        ARITH(float);
        break;
    case WEFT_COLL_DOUBLE:
        ARITH(double);
        break;
    default:
        return WEFT_EINVAL; /* checked before: no op on bytes */
    }
    return WEFT_OK;
}

static bool n_commute(const void *op)
{
    (void)op;
    return true;
}

static int n_error(int status)
{
    return status;
}

static bool n_dead(int err)
{
    return err == WEFT_EPEERDEAD;
}

const weft_sched_front_t weft__coll_native_front = {
    .size = n_size,
    .contig = n_contig,
    .iov = n_iov,
    .pack = n_pack,
    .unpack = n_unpack,
    .span = n_span,
    .reduce = n_reduce,
    .commute = n_commute,
    .error = n_error,
    .dead = n_dead,
};

/* ---------------------------------------------------------------- groups */

struct weft_coll_group {
    weft_ctx_t *ctx;
    int size, rank;
    uint32_t comm;
    atomic_uint seq; /* collectives started: the number of the next one */
    int world[];
};

int weft_coll_group_create(weft_ctx_t *ctx, const int *ranks, int n, uint32_t comm,
                           weft_coll_group_t **out)
{
    if (!ctx || !out)
        return WEFT_EINVAL;
    int job = weft_size(ctx), me = weft_rank(ctx);
    if (!ranks)
        n = job;
    if (n < 1)
        return WEFT_EINVAL;
    weft_coll_group_t *g = calloc(1, sizeof(*g) + (size_t)n * sizeof(int));
    if (!g)
        return WEFT_ENOMEM;
    g->ctx = ctx;
    g->size = n;
    g->rank = -1;
    g->comm = comm;
    atomic_init(&g->seq, 0);
    int rc = WEFT_OK;
    for (int i = 0; i < n && rc == WEFT_OK; i++) {
        int w = ranks ? ranks[i] : i;
        if (w < 0 || w >= job)
            rc = WEFT_ERANK;
        for (int j = 0; j < i && rc == WEFT_OK; j++)
            if (g->world[j] == w)
                rc = WEFT_EINVAL;
        g->world[i] = w;
        if (w == me)
            g->rank = i;
    }
    if (rc == WEFT_OK && g->rank < 0)
        rc = WEFT_ERANK;
    if (rc != WEFT_OK) {
        free(g);
        return rc;
    }
    *out = g;
    return WEFT_OK;
}

void weft_coll_group_free(weft_coll_group_t *g)
{
    free(g);
}

int weft_coll_group_rank(const weft_coll_group_t *g)
{
    return g ? g->rank : -1;
}

int weft_coll_group_size(const weft_coll_group_t *g)
{
    return g ? g->size : 0;
}

static int group_world(const void *arg, int i)
{
    return ((const weft_coll_group_t *)arg)->world[i];
}

/* What a non-blocking call signals when its schedule ends. */
typedef struct call {
    weft_comp_t *done;
    void *user_context;
    int source;
    size_t length;
} call_t;

static void call_end(weft_sched_t *s, void *arg, int err)
{
    (void)s;
    call_t *c = arg;
    weft_comp_entry_t e = {
        .user_context = c->user_context, .error = err, .source = c->source, .length = c->length};
    weft__comp_signal_copy(c->done, &e);
}

/* A new schedule for g's next collective, and its view. The number is
 * taken even when the call then fails: the members' next collectives must
 * still meet. */
static weft_sched_t *begin(weft_coll_group_t *g, weft_coll_view_t *v)
{
    uint32_t seq = atomic_fetch_add_explicit(&g->seq, 1, memory_order_relaxed);
    *v = (weft_coll_view_t){.size = g->size,
                            .rank = g->rank,
                            .world = group_world,
                            .arg = g,
                            .comm = g->comm,
                            .seq = seq};
    return weft_sched_new(g->ctx, NULL, sizeof(call_t));
}

/* Run s (built with error err) to its end, or start it to signal done. */
static int finish(weft_coll_group_t *g, weft_sched_t *s, int err, size_t length, weft_comp_t *done,
                  void *user_context)
{
    if (!s)
        return WEFT_ENOMEM;
    if (!err && done && !weft__comp_valid(done))
        err = WEFT_EINVAL;
    if (err) {
        weft_sched_free(s);
        return err;
    }
    if (done) {
        call_t *c = weft_sched_extra(s);
        *c = (call_t){.done = done,
                      .user_context = user_context,
                      .source = weft_rank(g->ctx),
                      .length = length};
        weft_sched_on_end(s, call_end, c);
        err = weft_sched_start(s);
        weft_sched_free(s); /* started: it runs to its end, and signals done */
        return err;
    }
    /* Blocking: not started, this thread alone runs it (no progress pass
     * walks it). */
    weft_sched_round(s);
    if ((err = weft_sched_error(s))) {
        weft_sched_free(s);
        return err;
    }
    bool ended = false;
    weft_idle_t idle = {0};
    err = weft_sched_poll(s, &ended);
    while (!ended) {
        weft_progress(g->ctx);
        err = weft_sched_poll(s, &ended);
        if (!ended)
            weft_idle(g->ctx, &idle); /* a peer may need our core */
    }
    weft_sched_free(s);
    return err;
}

/* Arguments every call checks: the bytes of count elements of t (n blocks
 * of them) into *len, and op when has_op. */
static int check(const weft_coll_group_t *g, weft_coll_dtype_t t, size_t count, int blocks,
                 const void *a, const void *b, bool has_op, weft_coll_op_t op, size_t *len)
{
    if (!g || (unsigned)t >= WEFT_COLL_NDTYPES)
        return WEFT_EINVAL;
    if (count && (!a || !b))
        return WEFT_EINVAL;
    if (has_op) {
        if ((unsigned)op >= WEFT_COLL_NOPS || t == WEFT_COLL_BYTE)
            return WEFT_EINVAL;
        if (op >= WEFT_COLL_BAND && (t == WEFT_COLL_FLOAT || t == WEFT_COLL_DOUBLE))
            return WEFT_EINVAL;
    }
    if (count > SIZE_MAX / types[t].size / (size_t)blocks)
        return WEFT_EINVAL;
    *len = count * types[t].size;
    return WEFT_OK;
}

#define SKIP_ON(g, rc)                                                                             \
    do {                                                                                           \
        if (rc) {                                                                                  \
            if (g)                                                                                 \
                atomic_fetch_add_explicit(&(g)->seq, 1, memory_order_relaxed);                     \
            return rc;                                                                             \
        }                                                                                          \
    } while (0)

int weft_coll_barrier(weft_coll_group_t *g, weft_comp_t *done, void *user_context)
{
    if (!g)
        return WEFT_EINVAL;
    weft_coll_view_t v;
    weft_sched_t *s = begin(g, &v);
    return finish(g, s, s ? weft_coll_build_barrier(s, &v) : 0, 0, done, user_context);
}

int weft_coll_bcast(weft_coll_group_t *g, void *buf, size_t count, weft_coll_dtype_t t, int root,
                    weft_comp_t *done, void *user_context)
{
    size_t len = 0;
    int rc = check(g, t, count, 1, buf, buf, false, 0, &len);
    if (!rc && (root < 0 || root >= g->size))
        rc = WEFT_EINVAL;
    SKIP_ON(g, rc);
    weft_coll_view_t v;
    weft_sched_t *s = begin(g, &v);
    return finish(g, s, s ? weft_coll_build_bcast(s, &v, buf, count, &types[t], root) : 0, len,
                  done, user_context);
}

int weft_coll_bcastv(weft_coll_group_t *g, const struct iovec *iov, int iovcnt, int root,
                     weft_comp_t *done, void *user_context)
{
    size_t len = 0;
    int rc = g && iovcnt >= 0 && (iov || !iovcnt) ? WEFT_OK : WEFT_EINVAL;
    for (int i = 0; rc == WEFT_OK && i < iovcnt; i++) {
        if ((!iov[i].iov_base && iov[i].iov_len) || iov[i].iov_len > SIZE_MAX - len)
            rc = WEFT_EINVAL;
        else
            len += iov[i].iov_len;
    }
    if (!rc && (root < 0 || root >= g->size))
        rc = WEFT_EINVAL;
    SKIP_ON(g, rc);
    weft_coll_view_t v;
    weft_sched_t *s = begin(g, &v);
    if (!s)
        return WEFT_ENOMEM;
    /* The layout, and a copy of the caller's array, live with the schedule. */
    native_type_t *t = weft_sched_tmp(s, sizeof *t);
    struct iovec *copy = weft_sched_tmp(s, (size_t)iovcnt * sizeof *copy);
    int err = weft_sched_error(s);
    if (!err) {
        memcpy(copy, iov, (size_t)iovcnt * sizeof *copy);
        *t = (native_type_t){.id = WEFT_COLL_BYTE, .size = len, .iov = copy, .iovcnt = iovcnt};
        err = weft_coll_build_bcast(s, &v, NULL, 1, t, root);
    }
    return finish(g, s, err, len, done, user_context);
}

int weft_coll_reduce(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                     weft_coll_dtype_t t, weft_coll_op_t op, int root, weft_comp_t *done,
                     void *user_context)
{
    size_t len = 0;
    int rc = check(g, t, count, 1, src, src, true, op, &len);
    if (!rc && (root < 0 || root >= g->size))
        rc = WEFT_EINVAL;
    if (!rc && count && g->rank == root && !dst)
        rc = WEFT_EINVAL;
    SKIP_ON(g, rc);
    weft_coll_view_t v;
    weft_sched_t *s = begin(g, &v);
    int err = 0;
    if (s)
        err = weft_coll_build_reduce(s, &v, src, dst, count, &types[t], &ops[op], root);
    return finish(g, s, err, g->rank == root ? len : 0, done, user_context);
}

int weft_coll_allreduce(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                        weft_coll_dtype_t t, weft_coll_op_t op, weft_comp_t *done,
                        void *user_context)
{
    size_t len = 0;
    int rc = check(g, t, count, 1, src, dst, true, op, &len);
    SKIP_ON(g, rc);
    weft_coll_view_t v;
    weft_sched_t *s = begin(g, &v);
    int err = 0;
    if (s)
        err = weft_coll_build_allreduce(s, &v, src, dst, count, &types[t], &ops[op]);
    return finish(g, s, err, len, done, user_context);
}

/* allgather (every member sends src to each other one) and alltoall (block
 * i of src to member i), in one round. */
static int build_exchange(weft_sched_t *s, const weft_coll_view_t *v, const char *src, char *dst,
                          size_t len, bool all_to_all)
{
    weft_sched_phase(s);
    uint64_t tag = weft_coll_tag(v->seq, weft_sched_phase_of(s), 0);
    for (int i = 0; i < v->size; i++) {
        const char *out = all_to_all ? src + (size_t)i * len : src;
        if (i == v->rank) {
            weft_sched_copy(s, out, len, NULL, dst + (size_t)i * len, len, NULL);
            continue;
        }
        int w = v->world(v->arg, i);
        weft_sched_recv(s, w, v->comm, tag, dst + (size_t)i * len, len, NULL);
        weft_sched_send(s, w, v->comm, tag, out, len, NULL);
    }
    weft_sched_round(s);
    return weft_sched_error(s);
}

static int exchange(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                    weft_coll_dtype_t t, bool all_to_all, weft_comp_t *done, void *user_context)
{
    size_t len = 0;
    int rc = check(g, t, count, g ? g->size : 1, src, dst, false, 0, &len);
    SKIP_ON(g, rc);
    weft_coll_view_t v;
    weft_sched_t *s = begin(g, &v);
    int err = s ? build_exchange(s, &v, src, dst, len, all_to_all) : 0;
    return finish(g, s, err, len * (size_t)g->size, done, user_context);
}

int weft_coll_allgather(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                        weft_coll_dtype_t t, weft_comp_t *done, void *user_context)
{
    return exchange(g, src, dst, count, t, false, done, user_context);
}

int weft_coll_alltoall(weft_coll_group_t *g, const void *src, void *dst, size_t count,
                       weft_coll_dtype_t t, weft_comp_t *done, void *user_context)
{
    return exchange(g, src, dst, count, t, true, done, user_context);
}
