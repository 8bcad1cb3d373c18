/* Remote memory access (§9.6) and put-with-signal (§9.8).
 *
 * To a PE whose symmetric memory is mapped here (one node) a put is a copy
 * into its mapping and a get a copy out of it, complete when the call
 * returns. To any other PE they go through weft_rma_put/get: a put returns
 * once its source may be reused and is in place after quiet; a get returns
 * with the data. The non-blocking forms do the same (the standard allows
 * them to complete at once). */
#include <stdbool.h>
#include <string.h>

#include "shmem/shmem_int.h"

static inline void put(shmem_ctx_t ctx, void *dest, const void *src, size_t n, int pe,
                       const char *fn)
{
    if (ctx != SHMEM_CTX_DEFAULT)
        weft__shmem_check_ctx(ctx, fn);
    void *p = weft_rma_ptr_range(weft__shmem.ctx, pe, dest, n ? n : 1);
    if (__builtin_expect(p != NULL, 1)) {
        if (n)
            memmove(p, src, n);
        return;
    }
    weft__shmem_check_rc(weft_rma_put(weft__shmem.ctx, pe, dest, src, n), dest, n, pe, fn);
}

static inline void get(shmem_ctx_t ctx, void *dest, const void *src, size_t n, int pe,
                       const char *fn)
{
    if (ctx != SHMEM_CTX_DEFAULT)
        weft__shmem_check_ctx(ctx, fn);
    const void *p = weft_rma_ptr_range(weft__shmem.ctx, pe, src, n ? n : 1);
    if (__builtin_expect(p != NULL, 1)) {
        if (n)
            memmove(dest, p, n);
        return;
    }
    weft__shmem_check_rc(weft_rma_get(weft__shmem.ctx, pe, dest, src, n), src, n, pe, fn);
}

/* Strided: nelems elements of es bytes, dst and sst elements apart; element
 * by element (a put or get each when pe is not mapped). */
static void strided(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                    size_t nelems, size_t es, int pe, bool to_pe, const char *fn)
{
    char *d = dest;
    const char *s = src;
    for (size_t i = 0; i < nelems; i++) {
        char *de = d + (ptrdiff_t)i * dst * (ptrdiff_t)es;
        const char *se = s + (ptrdiff_t)i * sst * (ptrdiff_t)es;
        if (to_pe)
            put(ctx, de, se, es, pe, fn);
        else
            get(ctx, de, se, es, pe, fn);
    }
}
#define iput(ctx, d, s, dst, sst, n, es, pe, fn) strided(ctx, d, s, dst, sst, n, es, pe, true, fn)
#define iget(ctx, d, s, dst, sst, n, es, pe, fn) strided(ctx, d, s, dst, sst, n, es, pe, false, fn)

#define DEF_RMA(T, N)                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source,          \
                                               size_t nelems, int pe)                              \
    {                                                                                              \
        put(ctx, dest, source, nelems * sizeof(T), pe, "shmem_" #N "_put");                        \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)        \
    {                                                                                              \
        put(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), pe, "shmem_" #N "_put");          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source,      \
                                                   size_t nelems, int pe)                          \
    {                                                                                              \
        put(ctx, dest, source, nelems * sizeof(T), pe, "shmem_" #N "_put_nbi");                    \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)    \
    {                                                                                              \
        put(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), pe, "shmem_" #N "_put_nbi");      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source,          \
                                               size_t nelems, int pe)                              \
    {                                                                                              \
        get(ctx, dest, source, nelems * sizeof(T), pe, "shmem_" #N "_get");                        \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)        \
    {                                                                                              \
        get(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), pe, "shmem_" #N "_get");          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source,      \
                                                   size_t nelems, int pe)                          \
    {                                                                                              \
        get(ctx, dest, source, nelems * sizeof(T), pe, "shmem_" #N "_get_nbi");                    \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)    \
    {                                                                                              \
        get(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), pe, "shmem_" #N "_get_nbi");      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe)            \
    {                                                                                              \
        put(ctx, dest, &value, sizeof(T), pe, "shmem_" #N "_p");                                   \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_p(T *dest, T value, int pe)                                 \
    {                                                                                              \
        put(SHMEM_CTX_DEFAULT, dest, &value, sizeof(T), pe, "shmem_" #N "_p");                     \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe)                \
    {                                                                                              \
        T v;                                                                                       \
        get(ctx, &v, source, sizeof(T), pe, "shmem_" #N "_g");                                     \
        return v;                                                                                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_g(const T *source, int pe)                                     \
    {                                                                                              \
        return shmem_ctx_##N##_g(SHMEM_CTX_DEFAULT, source, pe);                                   \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source,         \
                                                ptrdiff_t dst, ptrdiff_t sst, size_t nelems,       \
                                                int pe)                                            \
    {                                                                                              \
        iput(ctx, dest, source, dst, sst, nelems, sizeof(T), pe, "shmem_" #N "_iput");             \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst,               \
                                            ptrdiff_t sst, size_t nelems, int pe)                  \
    {                                                                                              \
        iput(SHMEM_CTX_DEFAULT, dest, source, dst, sst, nelems, sizeof(T), pe,                     \
             "shmem_" #N "_iput");                                                                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source,         \
                                                ptrdiff_t dst, ptrdiff_t sst, size_t nelems,       \
                                                int pe)                                            \
    {                                                                                              \
        iget(ctx, dest, source, dst, sst, nelems, sizeof(T), pe, "shmem_" #N "_iget");             \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst,               \
                                            ptrdiff_t sst, size_t nelems, int pe)                  \
    {                                                                                              \
        iget(SHMEM_CTX_DEFAULT, dest, source, dst, sst, nelems, sizeof(T), pe,                     \
             "shmem_" #N "_iget");                                                                 \
    }
WEFT_SHMEM_RMA_TYPES(DEF_RMA)

#define DEF_SIZED(B, BYTES)                                                                        \
    WEFT_SHMEM_EXPORT void shmem_ctx_put##B(shmem_ctx_t ctx, void *dest, const void *source,       \
                                            size_t nelems, int pe)                                 \
    {                                                                                              \
        put(ctx, dest, source, nelems *(BYTES), pe, "shmem_put" #B);                               \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_put##B(void *dest, const void *source, size_t nelems, int pe)     \
    {                                                                                              \
        put(SHMEM_CTX_DEFAULT, dest, source, nelems *(BYTES), pe, "shmem_put" #B);                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_put##B##_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                                  size_t nelems, int pe)                           \
    {                                                                                              \
        put(ctx, dest, source, nelems *(BYTES), pe, "shmem_put" #B "_nbi");                        \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_put##B##_nbi(void *dest, const void *source, size_t nelems,       \
                                              int pe)                                              \
    {                                                                                              \
        put(SHMEM_CTX_DEFAULT, dest, source, nelems *(BYTES), pe, "shmem_put" #B "_nbi");          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_get##B(shmem_ctx_t ctx, void *dest, const void *source,       \
                                            size_t nelems, int pe)                                 \
    {                                                                                              \
        get(ctx, dest, source, nelems *(BYTES), pe, "shmem_get" #B);                               \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_get##B(void *dest, const void *source, size_t nelems, int pe)     \
    {                                                                                              \
        get(SHMEM_CTX_DEFAULT, dest, source, nelems *(BYTES), pe, "shmem_get" #B);                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_get##B##_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                                  size_t nelems, int pe)                           \
    {                                                                                              \
        get(ctx, dest, source, nelems *(BYTES), pe, "shmem_get" #B "_nbi");                        \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_get##B##_nbi(void *dest, const void *source, size_t nelems,       \
                                              int pe)                                              \
    {                                                                                              \
        get(SHMEM_CTX_DEFAULT, dest, source, nelems *(BYTES), pe, "shmem_get" #B "_nbi");          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_iput##B(shmem_ctx_t ctx, void *dest, const void *source,      \
                                             ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)  \
    {                                                                                              \
        iput(ctx, dest, source, dst, sst, nelems, (BYTES), pe, "shmem_iput" #B);                   \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_iput##B(void *dest, const void *source, ptrdiff_t dst,            \
                                         ptrdiff_t sst, size_t nelems, int pe)                     \
    {                                                                                              \
        iput(SHMEM_CTX_DEFAULT, dest, source, dst, sst, nelems, (BYTES), pe, "shmem_iput" #B);     \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_iget##B(shmem_ctx_t ctx, void *dest, const void *source,      \
                                             ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)  \
    {                                                                                              \
        iget(ctx, dest, source, dst, sst, nelems, (BYTES), pe, "shmem_iget" #B);                   \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_iget##B(void *dest, const void *source, ptrdiff_t dst,            \
                                         ptrdiff_t sst, size_t nelems, int pe)                     \
    {                                                                                              \
        iget(SHMEM_CTX_DEFAULT, dest, source, dst, sst, nelems, (BYTES), pe, "shmem_iget" #B);     \
    }
DEF_SIZED(8, 1)
DEF_SIZED(16, 2)
DEF_SIZED(32, 4)
DEF_SIZED(64, 8)
DEF_SIZED(128, 16)

WEFT_SHMEM_EXPORT void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source,
                                        size_t nelems, int pe)
{
    put(ctx, dest, source, nelems, pe, "shmem_putmem");
}

WEFT_SHMEM_EXPORT void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    put(SHMEM_CTX_DEFAULT, dest, source, nelems, pe, "shmem_putmem");
}

WEFT_SHMEM_EXPORT void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                                            size_t nelems, int pe)
{
    put(ctx, dest, source, nelems, pe, "shmem_putmem_nbi");
}

WEFT_SHMEM_EXPORT void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    put(SHMEM_CTX_DEFAULT, dest, source, nelems, pe, "shmem_putmem_nbi");
}

WEFT_SHMEM_EXPORT void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source,
                                        size_t nelems, int pe)
{
    get(ctx, dest, source, nelems, pe, "shmem_getmem");
}

WEFT_SHMEM_EXPORT void shmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    get(SHMEM_CTX_DEFAULT, dest, source, nelems, pe, "shmem_getmem");
}

WEFT_SHMEM_EXPORT void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                                            size_t nelems, int pe)
{
    get(ctx, dest, source, nelems, pe, "shmem_getmem_nbi");
}

WEFT_SHMEM_EXPORT void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    get(SHMEM_CTX_DEFAULT, dest, source, nelems, pe, "shmem_getmem_nbi");
}

/* ---- put with signal: the data first, then the signal, released after it
 * (a reader that sees the signal sees the data). ---- */

static void put_signal(shmem_ctx_t ctx, void *dest, const void *src, size_t n, uint64_t *sig,
                       uint64_t signal, int sig_op, int pe, const char *fn)
{
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        weft__shmem_fatal(fn,
                          "signal operation %d is neither SHMEM_SIGNAL_SET nor "
                          "SHMEM_SIGNAL_ADD",
                          sig_op);
    if (ctx != SHMEM_CTX_DEFAULT)
        weft__shmem_check_ctx(ctx, fn);
    /* The data first, then the signal (mapped: a release; through the
     * engine: one message, applied in that order at the target). */
    int rc = weft_rma_put_signal(weft__shmem.ctx, pe, dest, src, n, sig, signal,
                                 sig_op == SHMEM_SIGNAL_ADD);
    if (rc != WEFT_OK) {
        weft__shmem_bad_ptr(sig, sizeof *sig, pe, fn);
        weft__shmem_check_rc(rc, dest, n, pe, fn);
    }
}

WEFT_SHMEM_EXPORT void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source,
                                               size_t nelems, uint64_t *sig_addr, uint64_t signal,
                                               int sig_op, int pe)
{
    put_signal(ctx, dest, source, nelems, sig_addr, signal, sig_op, pe, "shmem_putmem_signal");
}

WEFT_SHMEM_EXPORT void shmem_putmem_signal(void *dest, const void *source, size_t nelems,
                                           uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems, sig_addr, signal, sig_op, pe,
               "shmem_putmem_signal");
}

WEFT_SHMEM_EXPORT void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                                                   size_t nelems, uint64_t *sig_addr,
                                                   uint64_t signal, int sig_op, int pe)
{
    put_signal(ctx, dest, source, nelems, sig_addr, signal, sig_op, pe, "shmem_putmem_signal_nbi");
}

WEFT_SHMEM_EXPORT void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems,
                                               uint64_t *sig_addr, uint64_t signal, int sig_op,
                                               int pe)
{
    put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems, sig_addr, signal, sig_op, pe,
               "shmem_putmem_signal_nbi");
}

#define DEF_SIGNAL(T, N)                                                                           \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source,   \
                                                      size_t nelems, uint64_t *sig_addr,           \
                                                      uint64_t signal, int sig_op, int pe)         \
    {                                                                                              \
        put_signal(ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe,            \
                   "shmem_" #N "_put_signal");                                                     \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems,         \
                                                  uint64_t *sig_addr, uint64_t signal, int sig_op, \
                                                  int pe)                                          \
    {                                                                                              \
        put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op,  \
                   pe, "shmem_" #N "_put_signal");                                                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_put_signal_nbi(                                         \
        shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr,              \
        uint64_t signal, int sig_op, int pe)                                                       \
    {                                                                                              \
        put_signal(ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe,            \
                   "shmem_" #N "_put_signal_nbi");                                                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,     \
                                                      uint64_t *sig_addr, uint64_t signal,         \
                                                      int sig_op, int pe)                          \
    {                                                                                              \
        put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op,  \
                   pe, "shmem_" #N "_put_signal_nbi");                                             \
    }
WEFT_SHMEM_RMA_TYPES(DEF_SIGNAL)

#define DEF_SIGNAL_SIZED(B, BYTES)                                                                 \
    WEFT_SHMEM_EXPORT void shmem_ctx_put##B##_signal(                                              \
        shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,        \
        uint64_t signal, int sig_op, int pe)                                                       \
    {                                                                                              \
        put_signal(ctx, dest, source, nelems *(BYTES), sig_addr, signal, sig_op, pe,               \
                   "shmem_put" #B "_signal");                                                      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_put##B##_signal(void *dest, const void *source, size_t nelems,    \
                                                 uint64_t *sig_addr, uint64_t signal, int sig_op,  \
                                                 int pe)                                           \
    {                                                                                              \
        put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems *(BYTES), sig_addr, signal, sig_op, pe, \
                   "shmem_put" #B "_signal");                                                      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_put##B##_signal_nbi(                                          \
        shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,        \
        uint64_t signal, int sig_op, int pe)                                                       \
    {                                                                                              \
        put_signal(ctx, dest, source, nelems *(BYTES), sig_addr, signal, sig_op, pe,               \
                   "shmem_put" #B "_signal_nbi");                                                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_put##B##_signal_nbi(void *dest, const void *source,               \
                                                     size_t nelems, uint64_t *sig_addr,            \
                                                     uint64_t signal, int sig_op, int pe)          \
    {                                                                                              \
        put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems *(BYTES), sig_addr, signal, sig_op, pe, \
                   "shmem_put" #B "_signal_nbi");                                                  \
    }
DEF_SIGNAL_SIZED(8, 1)
DEF_SIGNAL_SIZED(16, 2)
DEF_SIGNAL_SIZED(32, 4)
DEF_SIGNAL_SIZED(64, 8)
DEF_SIGNAL_SIZED(128, 16)

WEFT_SHMEM_EXPORT uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    return atomic_load_explicit((_Atomic uint64_t *)sig_addr, memory_order_acquire);
}
