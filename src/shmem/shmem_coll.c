/* Collectives (§9.9) on teams and on the deprecated active sets.
 *
 * A collective is a barrier, then each member getting what it needs from
 * the others' source buffers (a copy out of a mapped PE's memory, else a
 * get through the engine), then a barrier (so nobody reuses a source still
 * being read). The barrier is a counter on the team's first PE (its root)
 * and a generation in every member, in the library's own words at the start
 * of the symmetric heap: the last to arrive resets the counter, then moves
 * every member's generation on, which releases it. An active set is a strided team made for
 * the call; its pSync is not touched. */
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "shmem/shmem_int.h"

/* A barrier's words: at the team's root, the team it serves (its key) and
 * the arrivals; in every member's copy, the barriers it saw complete. */
typedef struct barrier_slot {
    _Alignas(64) _Atomic uint64_t key;
    atomic_long count;
    atomic_long gen;
} barrier_slot_t;

#define BARRIER_SLOTS 128

struct weft_shmem_sync {
    barrier_slot_t slots[BARRIER_SLOTS];
    _Alignas(64) size_t collect_n; /* this PE's element count in a collect */
};

size_t weft__shmem_sync_size(void)
{
    return (sizeof(struct weft_shmem_sync) + 4095) / 4096 * 4096;
}

/* An atomic on pe's copy of a word of the library's sync area (given by its
 * address in this PE's copy): a CPU atomic when mapped, else a request. */
static uint64_t sync_amo(int pe, void *word, weft_rma_amo_op_t op, uint64_t v, uint64_t c)
{
    uint64_t old = 0;
    int rc = weft_rma_amo(weft__shmem.ctx, pe, op, word, 8, v, c, &old);
    if (rc != WEFT_OK)
        weft__shmem_fatal("barrier", "PE %d: %s", pe, weft_strerror(rc));
    return old;
}

/* Copy len bytes of pe's src (symmetric) into dest: a get. */
static void fetch(void *dest, const void *src, size_t len, int pe, const char *fn)
{
    weft__shmem_check_rc(weft_rma_get(weft__shmem.ctx, pe, dest, src, len), src, len, pe, fn);
}

/* The slot of team t at its root: teams that share a root may run barriers
 * at the same time (the world and an active set of some of its PEs), so
 * each (stride, size) has a slot of its own there, claimed by whichever
 * member comes first and kept. */
static barrier_slot_t *slot_of(shmem_team_t t)
{
    uint64_t key = ((uint64_t)(uint32_t)t->stride << 32 | (uint32_t)t->size) + 1;
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < BARRIER_SLOTS; i++) {
        barrier_slot_t *s = &weft__shmem.sync->slots[(h + i) % BARRIER_SLOTS];
        uint64_t k = sync_amo(t->start, &s->key, WEFT_RMA_AMO_CSWAP, key, 0);
        if (k == 0 || k == key)
            return s; /* claimed now, or before */
    }
    weft__shmem_fatal("barrier", "more than %d teams with PE %d as first member", BARRIER_SLOTS,
                      t->start);
}

void weft__shmem_team_barrier(shmem_team_t t)
{
    weft_rma_quiet(weft__shmem.ctx); /* this PE's puts are in place */
    if (t->size <= 1)
        return;
    /* Arrivals are counted at the root; the last to arrive resets the count
     * and releases every member by moving the generation in the member's
     * own copy of the slot, where the member waits. So a member waits on
     * its own memory, and once it has left, nobody needs anything of it
     * for this barrier (it may stop serving requests: finalize). */
    barrier_slot_t *s = slot_of(t);
    long gen = atomic_load(&s->gen);
    if ((long)sync_amo(t->start, &s->count, WEFT_RMA_AMO_ADD, 1, 0) == t->size - 1) {
        sync_amo(t->start, &s->count, WEFT_RMA_AMO_SET, 0, 0);
        for (int i = 0; i < t->size; i++)
            sync_amo(weft__shmem_team_pe(t, i), &s->gen, WEFT_RMA_AMO_ADD, 1, 0);
        return;
    }
    unsigned spins = 0;
    while (atomic_load(&s->gen) == gen)
        weft__shmem_pause(&spins);
}

/* An active set as a team, checked. */
static struct weft_shmem_team active_set(int start, int log_stride, int size, const char *fn)
{
    weft__shmem_check_init(fn);
    if (log_stride < 0 || log_stride > 30 || size < 1 || start < 0 ||
        start + (long)(size - 1) * (1L << log_stride) >= weft__shmem.npes)
        weft__shmem_fatal(fn,
                          "the active set (start %d, log stride %d, size %d) does not fit "
                          "in %d PEs",
                          start, log_stride, size, weft__shmem.npes);
    struct weft_shmem_team t = {
        .start = start, .stride = 1 << log_stride, .size = size, .my_pe = -1};
    int d = weft__shmem.me - start;
    if (d >= 0 && d % t.stride == 0 && d / t.stride < size)
        t.my_pe = d / t.stride;
    if (t.my_pe < 0)
        weft__shmem_fatal(fn, "PE %d is not in the active set it was called with", weft__shmem.me);
    return t;
}

/* A team argument this PE is a member of; NULL (return -1) if invalid. */
static shmem_team_t member(shmem_team_t team, const char *fn)
{
    weft__shmem_check_init(fn);
    if (team == SHMEM_TEAM_INVALID || team->my_pe < 0)
        return NULL;
    return team;
}

/* ---- barrier and sync ---- */

WEFT_SHMEM_EXPORT int shmem_team_sync(shmem_team_t team)
{
    shmem_team_t t = member(team, "shmem_team_sync");
    if (!t)
        return -1;
    weft__shmem_team_barrier(t);
    return 0;
}

WEFT_SHMEM_EXPORT void shmem_barrier_all(void)
{
    weft__shmem_check_init("shmem_barrier_all");
    weft__shmem_team_barrier(SHMEM_TEAM_WORLD);
}

WEFT_SHMEM_EXPORT void shmem_sync_all(void)
{
    weft__shmem_check_init("shmem_sync_all");
    weft__shmem_team_barrier(SHMEM_TEAM_WORLD);
}

WEFT_SHMEM_EXPORT void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    struct weft_shmem_team t = active_set(PE_start, logPE_stride, PE_size, "shmem_barrier");
    weft__shmem_team_barrier(&t);
}

WEFT_SHMEM_EXPORT void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    struct weft_shmem_team t = active_set(PE_start, logPE_stride, PE_size, "shmem_sync");
    weft__shmem_team_barrier(&t);
}

/* ---- data movement ---- */

static void broadcast(shmem_team_t t, void *dest, const void *source, size_t len, int root,
                      bool root_too, const char *fn)
{
    if (root < 0 || root >= t->size)
        weft__shmem_fatal(fn, "root %d is not in the team (size %d)", root, t->size);
    weft__shmem_team_barrier(t);
    if (t->my_pe != root || root_too)
        fetch(dest, source, len, weft__shmem_team_pe(t, root), fn);
    weft__shmem_team_barrier(t);
}

static void collect(shmem_team_t t, void *dest, const void *source, size_t nelems, size_t es,
                    bool fixed, const char *fn)
{
    weft__shmem.sync->collect_n = nelems;
    weft__shmem_team_barrier(t);
    char *d = dest;
    for (int i = 0; i < t->size; i++) {
        int pe = weft__shmem_team_pe(t, i);
        size_t n = nelems;
        if (!fixed)
            fetch(&n, &weft__shmem.sync->collect_n, sizeof n, pe, fn);
        fetch(d, source, n * es, pe, fn);
        d += n * es;
    }
    weft__shmem_team_barrier(t);
}

static void alltoalls(shmem_team_t t, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                      size_t nelems, size_t es, const char *fn)
{
    weft__shmem_team_barrier(t);
    char *d = dest;
    const char *s = source;
    for (int j = 0; j < t->size; j++) {
        int pe = weft__shmem_team_pe(t, j);
        size_t first = (size_t)t->my_pe * nelems;
        if (dst == 1 && sst == 1) { /* one block from each */
            fetch(d + (size_t)j * nelems * es, s + first * es, nelems * es, pe, fn);
            continue;
        }
        for (size_t k = 0; k < nelems; k++) {
            size_t di = ((size_t)j * nelems + k) * (size_t)dst;
            size_t si = (first + k) * (size_t)sst;
            fetch(d + di * es, s + si * es, es, pe, fn);
        }
    }
    weft__shmem_team_barrier(t);
}

WEFT_SHMEM_EXPORT int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source,
                                         size_t nelems, int PE_root)
{
    shmem_team_t t = member(team, "shmem_broadcastmem");
    if (!t)
        return -1;
    broadcast(t, dest, source, nelems, PE_root, true, "shmem_broadcastmem");
    return 0;
}

WEFT_SHMEM_EXPORT int shmem_collectmem(shmem_team_t team, void *dest, const void *source,
                                       size_t nelems)
{
    shmem_team_t t = member(team, "shmem_collectmem");
    if (!t)
        return -1;
    collect(t, dest, source, nelems, 1, false, "shmem_collectmem");
    return 0;
}

WEFT_SHMEM_EXPORT int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source,
                                        size_t nelems)
{
    shmem_team_t t = member(team, "shmem_fcollectmem");
    if (!t)
        return -1;
    collect(t, dest, source, nelems, 1, true, "shmem_fcollectmem");
    return 0;
}

WEFT_SHMEM_EXPORT int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source,
                                        size_t nelems)
{
    shmem_team_t t = member(team, "shmem_alltoallmem");
    if (!t)
        return -1;
    alltoalls(t, dest, source, 1, 1, nelems, 1, "shmem_alltoallmem");
    return 0;
}

WEFT_SHMEM_EXPORT int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source,
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems)
{
    shmem_team_t t = member(team, "shmem_alltoallsmem");
    if (!t)
        return -1;
    alltoalls(t, dest, source, dst, sst, nelems, 1, "shmem_alltoallsmem");
    return 0;
}

#define DEF_COLL(T, N)                                                                             \
    WEFT_SHMEM_EXPORT int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source,       \
                                                size_t nelems, int PE_root)                        \
    {                                                                                              \
        shmem_team_t t = member(team, "shmem_" #N "_broadcast");                                   \
        if (!t)                                                                                    \
            return -1;                                                                             \
        broadcast(t, dest, source, nelems * sizeof(T), PE_root, true, "shmem_" #N "_broadcast");   \
        return 0;                                                                                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source,         \
                                              size_t nelems)                                       \
    {                                                                                              \
        shmem_team_t t = member(team, "shmem_" #N "_collect");                                     \
        if (!t)                                                                                    \
            return -1;                                                                             \
        collect(t, dest, source, nelems, sizeof(T), false, "shmem_" #N "_collect");                \
        return 0;                                                                                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source,        \
                                               size_t nelems)                                      \
    {                                                                                              \
        shmem_team_t t = member(team, "shmem_" #N "_fcollect");                                    \
        if (!t)                                                                                    \
            return -1;                                                                             \
        collect(t, dest, source, nelems, sizeof(T), true, "shmem_" #N "_fcollect");                \
        return 0;                                                                                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source,        \
                                               size_t nelems)                                      \
    {                                                                                              \
        shmem_team_t t = member(team, "shmem_" #N "_alltoall");                                    \
        if (!t)                                                                                    \
            return -1;                                                                             \
        alltoalls(t, dest, source, 1, 1, nelems, sizeof(T), "shmem_" #N "_alltoall");              \
        return 0;                                                                                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source,       \
                                                ptrdiff_t dst, ptrdiff_t sst, size_t nelems)       \
    {                                                                                              \
        shmem_team_t t = member(team, "shmem_" #N "_alltoalls");                                   \
        if (!t)                                                                                    \
            return -1;                                                                             \
        alltoalls(t, dest, source, dst, sst, nelems, sizeof(T), "shmem_" #N "_alltoalls");         \
        return 0;                                                                                  \
    }
WEFT_SHMEM_RMA_TYPES(DEF_COLL)

/* The active-set forms: the root's dest is left alone in broadcast (§9.9.7
 * of 1.4), as codes written for it expect. */
#define DEF_ACTIVE(B, BYTES)                                                                       \
    WEFT_SHMEM_EXPORT void shmem_broadcast##B(void *dest, const void *source, size_t nelems,       \
                                              int PE_root, int PE_start, int logPE_stride,         \
                                              int PE_size, long *pSync)                            \
    {                                                                                              \
        (void)pSync;                                                                               \
        struct weft_shmem_team t =                                                                 \
            active_set(PE_start, logPE_stride, PE_size, "shmem_broadcast" #B);                     \
        broadcast(&t, dest, source, nelems *(BYTES), PE_root, false, "shmem_broadcast" #B);        \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_collect##B(void *dest, const void *source, size_t nelems,         \
                                            int PE_start, int logPE_stride, int PE_size,           \
                                            long *pSync)                                           \
    {                                                                                              \
        (void)pSync;                                                                               \
        struct weft_shmem_team t =                                                                 \
            active_set(PE_start, logPE_stride, PE_size, "shmem_collect" #B);                       \
        collect(&t, dest, source, nelems, (BYTES), false, "shmem_collect" #B);                     \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_fcollect##B(void *dest, const void *source, size_t nelems,        \
                                             int PE_start, int logPE_stride, int PE_size,          \
                                             long *pSync)                                          \
    {                                                                                              \
        (void)pSync;                                                                               \
        struct weft_shmem_team t =                                                                 \
            active_set(PE_start, logPE_stride, PE_size, "shmem_fcollect" #B);                      \
        collect(&t, dest, source, nelems, (BYTES), true, "shmem_fcollect" #B);                     \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_alltoall##B(void *dest, const void *source, size_t nelems,        \
                                             int PE_start, int logPE_stride, int PE_size,          \
                                             long *pSync)                                          \
    {                                                                                              \
        (void)pSync;                                                                               \
        struct weft_shmem_team t =                                                                 \
            active_set(PE_start, logPE_stride, PE_size, "shmem_alltoall" #B);                      \
        alltoalls(&t, dest, source, 1, 1, nelems, (BYTES), "shmem_alltoall" #B);                   \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_alltoalls##B(void *dest, const void *source, ptrdiff_t dst,       \
                                              ptrdiff_t sst, size_t nelems, int PE_start,          \
                                              int logPE_stride, int PE_size, long *pSync)          \
    {                                                                                              \
        (void)pSync;                                                                               \
        struct weft_shmem_team t =                                                                 \
            active_set(PE_start, logPE_stride, PE_size, "shmem_alltoalls" #B);                     \
        alltoalls(&t, dest, source, dst, sst, nelems, (BYTES), "shmem_alltoalls" #B);              \
    }
DEF_ACTIVE(32, 4)
DEF_ACTIVE(64, 8)

/* ---- reductions: into a private buffer from every member's source, then
 * (after a barrier: a source may be a dest) into dest. ---- */

#define OP_and(a, b)  ((a) & (b))
#define OP_or(a, b)   ((a) | (b))
#define OP_xor(a, b)  ((a) ^ (b))
#define OP_max(a, b)  ((a) > (b) ? (a) : (b))
#define OP_min(a, b)  ((a) < (b) ? (a) : (b))
#define OP_sum(a, b)  ((a) + (b))
#define OP_prod(a, b) ((a) * (b))

#define DEF_REDUCE_BODY(T, N, OP)                                                                  \
    static void N##_##OP##_run(shmem_team_t t, T *dest, const T *source, size_t n, const char *fn) \
    {                                                                                              \
        T *acc = n ? malloc(2 * n * sizeof(T)) : NULL, *in = acc ? acc + n : NULL;                 \
        if (n && !acc)                                                                             \
            weft__shmem_fatal(fn, "out of memory");                                                \
        weft__shmem_team_barrier(t);                                                               \
        for (int i = 0; i < t->size && n; i++) {                                                   \
            fetch(i ? in : acc, source, n * sizeof(T), weft__shmem_team_pe(t, i), fn);             \
            for (size_t k = 0; i && k < n; k++)                                                    \
                acc[k] = OP_##OP(acc[k], in[k]);                                                   \
        }                                                                                          \
        weft__shmem_team_barrier(t);                                                               \
        if (n)                                                                                     \
            memcpy(dest, acc, n * sizeof(T));                                                      \
        free(acc);                                                                                 \
    }

#define DEF_REDUCE(T, N, OP)                                                                       \
    DEF_REDUCE_BODY(T, N, OP)                                                                      \
    WEFT_SHMEM_EXPORT int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source,   \
                                                    size_t nreduce)                                \
    {                                                                                              \
        shmem_team_t t = member(team, "shmem_" #N "_" #OP "_reduce");                              \
        if (!t)                                                                                    \
            return -1;                                                                             \
        N##_##OP##_run(t, dest, source, nreduce, "shmem_" #N "_" #OP "_reduce");                   \
        return 0;                                                                                  \
    }
#define DEF_REDUCE_BIT(T, N)   DEF_REDUCE(T, N, and) DEF_REDUCE(T, N, or) DEF_REDUCE(T, N, xor)
#define DEF_REDUCE_CMP(T, N)   DEF_REDUCE(T, N, max) DEF_REDUCE(T, N, min)
#define DEF_REDUCE_ARITH(T, N) DEF_REDUCE(T, N, sum) DEF_REDUCE(T, N, prod)
WEFT_SHMEM_REDUCE_BIT(DEF_REDUCE_BIT)
WEFT_SHMEM_REDUCE_CMP(DEF_REDUCE_CMP)
WEFT_SHMEM_REDUCE_ARITH(DEF_REDUCE_ARITH)

/* The active-set reductions run the team ones' code; their types are among
 * the team reductions' (short's and the bitwise int types' aside). */
#define DEF_TOALL(T, N, OP)                                                                        \
    WEFT_SHMEM_EXPORT void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce,        \
                                                     int PE_start, int logPE_stride, int PE_size,  \
                                                     T *pWrk, long *pSync)                         \
    {                                                                                              \
        (void)pWrk;                                                                                \
        (void)pSync;                                                                               \
        struct weft_shmem_team t =                                                                 \
            active_set(PE_start, logPE_stride, PE_size, "shmem_" #N "_" #OP "_to_all");            \
        toall_##N##_##OP(&t, dest, source, nreduce < 0 ? 0 : (size_t)nreduce,                      \
                         "shmem_" #N "_" #OP "_to_all");                                           \
    }
/* The bitwise to_all types are signed (short, int, long, long long): their
 * own bodies. The others reuse the team reductions'. */
#define DEF_TOALL_OWN(T, N, OP)                                                                    \
    DEF_REDUCE_BODY(T, toall_own_##N, OP)                                                          \
    static void toall_##N##_##OP(shmem_team_t t, T *d, const T *s, size_t n, const char *fn)       \
    {                                                                                              \
        toall_own_##N##_##OP##_run(t, d, s, n, fn);                                                \
    }                                                                                              \
    DEF_TOALL(T, N, OP)
#define DEF_TOALL_BIT(T, N)                                                                        \
    DEF_TOALL_OWN(T, N, and) DEF_TOALL_OWN(T, N, or) DEF_TOALL_OWN(T, N, xor)
#define DEF_TOALL_CMP(T, N)   DEF_TOALL_OWN(T, N, max) DEF_TOALL_OWN(T, N, min)
#define DEF_TOALL_ARITH(T, N) DEF_TOALL_OWN(T, N, sum) DEF_TOALL_OWN(T, N, prod)
WEFT_SHMEM_TOALL_BIT(DEF_TOALL_BIT)
WEFT_SHMEM_TOALL_CMP(DEF_TOALL_CMP)
WEFT_SHMEM_TOALL_ARITH(DEF_TOALL_ARITH)
