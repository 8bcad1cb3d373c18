/* Atomic memory operations (§9.7): a CPU atomic on the target's copy when
 * this PE maps it, else weft_rma_amo (a request the target's progress
 * engine serves). Every AMO is sequentially consistent and complete when
 * it returns; the non-blocking fetching forms store their result at once. */
#include <string.h>

#include "shmem/shmem_int.h"

#define CTX(ctx, fn)                                                                               \
    do {                                                                                           \
        if ((ctx) != SHMEM_CTX_DEFAULT)                                                            \
            weft__shmem_check_ctx((ctx), (fn));                                                    \
    } while (0)
#define SC __ATOMIC_SEQ_CST

/* Through the engine: the operand's bits in, the old value's bits out. */
static uint64_t amo_slow(void *dest, size_t size, weft_rma_amo_op_t op, const void *v,
                         const void *c, int pe, const char *fn)
{
    uint64_t vb = 0, cb = 0, old = 0;
    if (v)
        memcpy(&vb, v, size);
    if (c)
        memcpy(&cb, c, size);
    int rc = weft_rma_amo(weft__shmem.ctx, pe, op, dest, size, vb, cb, &old);
    if (rc != WEFT_OK) {
        weft__shmem_bad_ptr(dest, size, pe, fn);
        weft__shmem_fatal(fn, "%s", weft_strerror(rc));
    }
    return old;
}

/* op on T at pe's dest: the old value. FETCH, SET and SWAP for every type;
 * the read-modify-writes on integer types only (INT). */
#define DEF_CORE(T, N, INT)                                                                        \
    static inline T N##_amo(T *dest, weft_rma_amo_op_t op, T v, T c, int pe, const char *fn)       \
    {                                                                                              \
        T *t = weft_rma_ptr_range(weft__shmem.ctx, pe, dest, sizeof(T));                           \
        T old;                                                                                     \
        if (__builtin_expect(t == NULL, 0)) {                                                      \
            uint64_t bits = amo_slow(dest, sizeof(T), op, &v, &c, pe, fn);                         \
            memcpy(&old, &bits, sizeof(T));                                                        \
            return old;                                                                            \
        }                                                                                          \
        switch (op) {                                                                              \
        case WEFT_RMA_AMO_FETCH:                                                                   \
            __atomic_load(t, &old, SC);                                                            \
            return old;                                                                            \
        case WEFT_RMA_AMO_SET:                                                                     \
            __atomic_store(t, &v, SC);                                                             \
            return v;                                                                              \
        case WEFT_RMA_AMO_SWAP:                                                                    \
            __atomic_exchange(t, &v, &old, SC);                                                    \
            return old;                                                                            \
        default:                                                                                   \
            return INT(t, op, v, c);                                                               \
        }                                                                                          \
    }
#define RMW_INT(t, op, v, c)                                                                       \
    ((op) == WEFT_RMA_AMO_CSWAP                                                                    \
         ? (__atomic_compare_exchange_n((t), &(c), (v), false, SC, SC), (c))                       \
     : (op) == WEFT_RMA_AMO_ADD ? __atomic_fetch_add((t), (v), SC)                                 \
     : (op) == WEFT_RMA_AMO_AND ? __atomic_fetch_and((t), (v), SC)                                 \
     : (op) == WEFT_RMA_AMO_OR  ? __atomic_fetch_or((t), (v), SC)                                  \
                                : __atomic_fetch_xor((t), (v), SC))
#define RMW_NONE(t, op, v, c) ((void)(op), (void)(c), *(t))
#define DEF_CORE_INT(T, N)    DEF_CORE(T, N, RMW_INT)
#define DEF_CORE_FLT(T, N)    DEF_CORE(T, N, RMW_NONE)
WEFT_SHMEM_AMO_STD(DEF_CORE_INT)
DEF_CORE_FLT(float, float)
DEF_CORE_FLT(double, double)

/* fetch, set, swap: the extended types (float and double too). */
#define DEF_EXT(T, N)                                                                              \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe)     \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_fetch");                                                     \
        return N##_amo((T *)source, WEFT_RMA_AMO_FETCH, (T)0, (T)0, pe,                            \
                       "shmem_" #N "_atomic_fetch");                                               \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_atomic_fetch(const T *source, int pe)                          \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, source, pe);                        \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch,             \
                                                            const T *source, int pe)               \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_fetch(ctx, source, pe);                                    \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)         \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, source, pe);                      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe)   \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_set");                                                       \
        (void)N##_amo(dest, WEFT_RMA_AMO_SET, value, (T)0, pe, "shmem_" #N "_atomic_set");         \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_set(T *dest, T value, int pe)                        \
    {                                                                                              \
        shmem_ctx_##N##_atomic_set(SHMEM_CTX_DEFAULT, dest, value, pe);                            \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe)     \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_swap");                                                      \
        return N##_amo(dest, WEFT_RMA_AMO_SWAP, value, (T)0, pe, "shmem_" #N "_atomic_swap");      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_atomic_swap(T *dest, T value, int pe)                          \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, dest, value, pe);                    \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest,     \
                                                           T value, int pe)                        \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_swap(ctx, dest, value, pe);                                \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)         \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, dest, value, pe);                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_fetch(const T *source, int pe)                                 \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, source, pe);                        \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_set(T *dest, T value, int pe)                               \
    {                                                                                              \
        shmem_ctx_##N##_atomic_set(SHMEM_CTX_DEFAULT, dest, value, pe);                            \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_swap(T *dest, T value, int pe)                                 \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, dest, value, pe);                    \
    }
WEFT_SHMEM_AMO_EXT(DEF_EXT)

/* A fetching read-modify-write OP and its forms: fetch_OP, fetch_OP_nbi, OP. */
#define DEF_RMW(T, N, OP, CODE)                                                                    \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_fetch_##OP(shmem_ctx_t ctx, T *dest, T value,       \
                                                          int pe)                                  \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_fetch_" #OP);                                                \
        return N##_amo(dest, CODE, value, (T)0, pe, "shmem_" #N "_atomic_fetch_" #OP);             \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe)                    \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_fetch_##OP(SHMEM_CTX_DEFAULT, dest, value, pe);              \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_atomic_fetch_##OP##_nbi(shmem_ctx_t ctx, T *fetch,      \
                                                                   T *dest, T value, int pe)       \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_fetch_##OP(ctx, dest, value, pe);                          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe) \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_fetch_##OP(SHMEM_CTX_DEFAULT, dest, value, pe);            \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_atomic_##OP(shmem_ctx_t ctx, T *dest, T value, int pe)  \
    {                                                                                              \
        (void)shmem_ctx_##N##_atomic_fetch_##OP(ctx, dest, value, pe);                             \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_##OP(T *dest, T value, int pe)                       \
    {                                                                                              \
        (void)shmem_ctx_##N##_atomic_fetch_##OP(SHMEM_CTX_DEFAULT, dest, value, pe);               \
    }

/* compare_swap, fetch_inc, inc, fetch_add, add: the standard types. */
#define DEF_STD(T, N)                                                                              \
    DEF_RMW(T, N, add, WEFT_RMA_AMO_ADD)                                                           \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond,      \
                                                            T value, int pe)                       \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_compare_swap");                                              \
        /* the old value, whether it swapped or not */                                             \
        return N##_amo(dest, WEFT_RMA_AMO_CSWAP, value, cond, pe,                                  \
                       "shmem_" #N "_atomic_compare_swap");                                        \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)          \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_compare_swap(SHMEM_CTX_DEFAULT, dest, cond, value, pe);      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_atomic_compare_swap_nbi(                                \
        shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe)                               \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_compare_swap(ctx, dest, cond, value, pe);                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, \
                                                               int pe)                             \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_compare_swap(SHMEM_CTX_DEFAULT, dest, cond, value, pe);    \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe)         \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_fetch_add(ctx, dest, (T)1, pe);                              \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_atomic_fetch_inc(T *dest, int pe)                              \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, dest, (T)1, pe);                \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch,         \
                                                                T *dest, int pe)                   \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_fetch_add(ctx, dest, (T)1, pe);                            \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)             \
    {                                                                                              \
        *fetch = shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, dest, (T)1, pe);              \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe)            \
    {                                                                                              \
        (void)shmem_ctx_##N##_atomic_fetch_add(ctx, dest, (T)1, pe);                               \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_inc(T *dest, int pe)                                 \
    {                                                                                              \
        (void)shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, dest, (T)1, pe);                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_cswap(T *dest, T cond, T value, int pe)                        \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_compare_swap(SHMEM_CTX_DEFAULT, dest, cond, value, pe);      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_finc(T *dest, int pe)                                          \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, dest, (T)1, pe);                \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_inc(T *dest, int pe)                                        \
    {                                                                                              \
        (void)shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, dest, (T)1, pe);                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_##N##_fadd(T *dest, T value, int pe)                                 \
    {                                                                                              \
        return shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, dest, value, pe);               \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_add(T *dest, T value, int pe)                               \
    {                                                                                              \
        (void)shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, dest, value, pe);                \
    }
WEFT_SHMEM_AMO_STD(DEF_STD)

#define DEF_BIT(T, N)                                                                              \
    DEF_RMW(T, N, and, WEFT_RMA_AMO_AND)                                                           \
    DEF_RMW(T, N, or, WEFT_RMA_AMO_OR) DEF_RMW(T, N, xor, WEFT_RMA_AMO_XOR)
WEFT_SHMEM_AMO_BIT(DEF_BIT)
