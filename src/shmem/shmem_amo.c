/* Atomic memory operations (§9.7): CPU atomics on the target's copy, which
 * this PE maps. Every AMO is sequentially consistent and complete when it
 * returns; the non-blocking fetching forms store their result at once. */
#include "shmem/shmem_int.h"

#define TGT(dest, pe, fn) ((__typeof__(dest))weft__shmem_ptr((dest), sizeof *(dest), (pe), (fn)))
#define CTX(ctx, fn)                                                                               \
    do {                                                                                           \
        if ((ctx) != SHMEM_CTX_DEFAULT)                                                            \
            weft__shmem_check_ctx((ctx), (fn));                                                    \
    } while (0)
#define SC __ATOMIC_SEQ_CST

/* fetch, set, swap: the extended types (float and double too). */
#define DEF_EXT(T, N)                                                                              \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe)     \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_fetch");                                                     \
        T v;                                                                                       \
        __atomic_load(TGT(source, pe, "shmem_" #N "_atomic_fetch"), &v, SC);                       \
        return v;                                                                                  \
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
        __atomic_store(TGT(dest, pe, "shmem_" #N "_atomic_set"), &value, SC);                      \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_atomic_set(T *dest, T value, int pe)                        \
    {                                                                                              \
        shmem_ctx_##N##_atomic_set(SHMEM_CTX_DEFAULT, dest, value, pe);                            \
    }                                                                                              \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe)     \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_swap");                                                      \
        T old;                                                                                     \
        __atomic_exchange(TGT(dest, pe, "shmem_" #N "_atomic_swap"), &value, &old, SC);            \
        return old;                                                                                \
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
#define DEF_RMW(T, N, OP, BUILTIN)                                                                 \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_fetch_##OP(shmem_ctx_t ctx, T *dest, T value,       \
                                                          int pe)                                  \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_fetch_" #OP);                                                \
        return BUILTIN(TGT(dest, pe, "shmem_" #N "_atomic_fetch_" #OP), value, SC);                \
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
    DEF_RMW(T, N, add, __atomic_fetch_add)                                                         \
    WEFT_SHMEM_EXPORT T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond,      \
                                                            T value, int pe)                       \
    {                                                                                              \
        CTX(ctx, "shmem_" #N "_atomic_compare_swap");                                              \
        __atomic_compare_exchange_n(TGT(dest, pe, "shmem_" #N "_atomic_compare_swap"), &cond,      \
                                    value, false, SC, SC);                                         \
        return cond; /* the old value, whether it swapped or not */                                \
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
    DEF_RMW(T, N, and, __atomic_fetch_and)                                                         \
    DEF_RMW(T, N, or, __atomic_fetch_or) DEF_RMW(T, N, xor, __atomic_fetch_xor)
WEFT_SHMEM_AMO_BIT(DEF_BIT)
