/* Point-to-point synchronization (§9.10) and distributed locks (§9.12).
 *
 * The variables waited on are this PE's own symmetric memory, which peers
 * write directly: waiting is reading until the comparison holds, spinning a
 * little, then yielding the core (a peer that shares it may be the writer). */
#include <stdint.h>

#include "shmem/shmem_int.h"

#define CMP(v, cmp, c)                                                                             \
    ((cmp) == SHMEM_CMP_EQ   ? (v) == (c)                                                          \
     : (cmp) == SHMEM_CMP_NE ? (v) != (c)                                                          \
     : (cmp) == SHMEM_CMP_GT ? (v) > (c)                                                           \
     : (cmp) == SHMEM_CMP_GE ? (v) >= (c)                                                          \
     : (cmp) == SHMEM_CMP_LT ? (v) < (c)                                                           \
                             : (v) <= (c))

static void check_cmp(int cmp, const char *fn)
{
    if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE)
        weft__shmem_fatal(fn, "%d is not a comparison (SHMEM_CMP_EQ ... SHMEM_CMP_LE)", cmp);
}

#define LOAD(p)           __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ACTIVE(status, i) (!(status) || !(status)[i])

#define DEF_P2P(T, N)                                                                              \
    WEFT_SHMEM_EXPORT int shmem_##N##_test(T *ivar, int cmp, T cmp_value)                          \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_test");                                                       \
        T v = LOAD(ivar);                                                                          \
        return CMP(v, cmp, cmp_value);                                                             \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                   \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_wait_until");                                                 \
        unsigned spins = 0;                                                                        \
        for (T v = LOAD(ivar); !CMP(v, cmp, cmp_value); v = LOAD(ivar))                            \
            weft__shmem_pause(&spins);                                                             \
    }                                                                                              \
    static int N##_test_all_v(T *ivars, size_t n, const int *status, int cmp, const T *vals,       \
                              size_t vstep)                                                        \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            if (!ACTIVE(status, i))                                                                \
                continue;                                                                          \
            T v = LOAD(&ivars[i]);                                                                 \
            if (!CMP(v, cmp, vals[i * vstep]))                                                     \
                return 0;                                                                          \
        }                                                                                          \
        return 1;                                                                                  \
    }                                                                                              \
    static size_t N##_test_any_v(T *ivars, size_t n, const int *status, int cmp, const T *vals,    \
                                 size_t vstep)                                                     \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            if (!ACTIVE(status, i))                                                                \
                continue;                                                                          \
            T v = LOAD(&ivars[i]);                                                                 \
            if (CMP(v, cmp, vals[i * vstep]))                                                      \
                return i;                                                                          \
        }                                                                                          \
        return SIZE_MAX;                                                                           \
    }                                                                                              \
    static size_t N##_test_some_v(T *ivars, size_t n, size_t *idx, const int *status, int cmp,     \
                                  const T *vals, size_t vstep)                                     \
    {                                                                                              \
        size_t k = 0;                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            if (!ACTIVE(status, i))                                                                \
                continue;                                                                          \
            T v = LOAD(&ivars[i]);                                                                 \
            if (CMP(v, cmp, vals[i * vstep]))                                                      \
                idx[k++] = i;                                                                      \
        }                                                                                          \
        return k;                                                                                  \
    }                                                                                              \
    static bool N##_any_active(size_t n, const int *status)                                        \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            if (ACTIVE(status, i))                                                                 \
                return true;                                                                       \
        return false;                                                                              \
    }                                                                                              \
    WEFT_SHMEM_EXPORT int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status,         \
                                               int cmp, T cmp_value)                               \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_test_all");                                                   \
        return N##_test_all_v(ivars, nelems, status, cmp, &cmp_value, 0);                          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status,  \
                                                      int cmp, T *cmp_values)                      \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_test_all_vector");                                            \
        return N##_test_all_v(ivars, nelems, status, cmp, cmp_values, 1);                          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status,      \
                                                  int cmp, T cmp_value)                            \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_test_any");                                                   \
        return N##_test_any_v(ivars, nelems, status, cmp, &cmp_value, 0);                          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT size_t shmem_##N##_test_any_vector(                                          \
        T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)                        \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_test_any_vector");                                            \
        return N##_test_any_v(ivars, nelems, status, cmp, cmp_values, 1);                          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,       \
                                                   const int *status, int cmp, T cmp_value)        \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_test_some");                                                  \
        return N##_test_some_v(ivars, nelems, indices, status, cmp, &cmp_value, 0);                \
    }                                                                                              \
    WEFT_SHMEM_EXPORT size_t shmem_##N##_test_some_vector(                                         \
        T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, T *cmp_values)       \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_test_some_vector");                                           \
        return N##_test_some_v(ivars, nelems, indices, status, cmp, cmp_values, 1);                \
    }                                                                                              \
    static void N##_wait_all_v(T *ivars, size_t n, const int *status, int cmp, const T *vals,      \
                               size_t vstep)                                                       \
    {                                                                                              \
        unsigned spins = 0;                                                                        \
        while (!N##_test_all_v(ivars, n, status, cmp, vals, vstep))                                \
            weft__shmem_pause(&spins);                                                             \
    }                                                                                              \
    static size_t N##_wait_any_v(T *ivars, size_t n, const int *status, int cmp, const T *vals,    \
                                 size_t vstep)                                                     \
    {                                                                                              \
        if (!N##_any_active(n, status))                                                            \
            return SIZE_MAX;                                                                       \
        unsigned spins = 0;                                                                        \
        size_t i;                                                                                  \
        while ((i = N##_test_any_v(ivars, n, status, cmp, vals, vstep)) == SIZE_MAX)               \
            weft__shmem_pause(&spins);                                                             \
        return i;                                                                                  \
    }                                                                                              \
    static size_t N##_wait_some_v(T *ivars, size_t n, size_t *idx, const int *status, int cmp,     \
                                  const T *vals, size_t vstep)                                     \
    {                                                                                              \
        if (!N##_any_active(n, status))                                                            \
            return 0;                                                                              \
        unsigned spins = 0;                                                                        \
        size_t k;                                                                                  \
        while ((k = N##_test_some_v(ivars, n, idx, status, cmp, vals, vstep)) == 0)                \
            weft__shmem_pause(&spins);                                                             \
        return k;                                                                                  \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status,  \
                                                      int cmp, T cmp_value)                        \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_wait_until_all");                                             \
        N##_wait_all_v(ivars, nelems, status, cmp, &cmp_value, 0);                                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT void shmem_##N##_wait_until_all_vector(                                      \
        T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)                        \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_wait_until_all_vector");                                      \
        N##_wait_all_v(ivars, nelems, status, cmp, cmp_values, 1);                                 \
    }                                                                                              \
    WEFT_SHMEM_EXPORT size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems,                   \
                                                        const int *status, int cmp, T cmp_value)   \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_wait_until_any");                                             \
        return N##_wait_any_v(ivars, nelems, status, cmp, &cmp_value, 0);                          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT size_t shmem_##N##_wait_until_any_vector(                                    \
        T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)                        \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_wait_until_any_vector");                                      \
        return N##_wait_any_v(ivars, nelems, status, cmp, cmp_values, 1);                          \
    }                                                                                              \
    WEFT_SHMEM_EXPORT size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, \
                                                         const int *status, int cmp, T cmp_value)  \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_wait_until_some");                                            \
        return N##_wait_some_v(ivars, nelems, indices, status, cmp, &cmp_value, 0);                \
    }                                                                                              \
    WEFT_SHMEM_EXPORT size_t shmem_##N##_wait_until_some_vector(                                   \
        T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, T *cmp_values)       \
    {                                                                                              \
        check_cmp(cmp, "shmem_" #N "_wait_until_some_vector");                                     \
        return N##_wait_some_v(ivars, nelems, indices, status, cmp, cmp_values, 1);                \
    }
WEFT_SHMEM_P2P_TYPES(DEF_P2P)

WEFT_SHMEM_EXPORT void shmem_wait_until(long *ivar, int cmp, long cmp_value)
{
    shmem_long_wait_until(ivar, cmp, cmp_value);
}

WEFT_SHMEM_EXPORT void shmem_wait(long *ivar, long cmp_value)
{
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

WEFT_SHMEM_EXPORT void shmem_short_wait(short *ivar, short cmp_value)
{
    shmem_short_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

WEFT_SHMEM_EXPORT void shmem_int_wait(int *ivar, int cmp_value)
{
    shmem_int_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

WEFT_SHMEM_EXPORT void shmem_long_wait(long *ivar, long cmp_value)
{
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

WEFT_SHMEM_EXPORT void shmem_longlong_wait(long long *ivar, long long cmp_value)
{
    shmem_longlong_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

WEFT_SHMEM_EXPORT uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    check_cmp(cmp, "shmem_signal_wait_until");
    unsigned spins = 0;
    uint64_t v;
    while (v = LOAD(sig_addr), !CMP(v, cmp, cmp_value))
        weft__shmem_pause(&spins);
    return v;
}

/* ---- locks: the lock is PE 0's copy of the symmetric long, holding the
 * owner's PE + 1, or 0 when free; taken and released with atomics there
 * (CPU atomics when PE 0 is mapped, requests otherwise). ---- */

static uint64_t lock_amo(long *lock, weft_rma_amo_op_t op, uint64_t v, uint64_t c, const char *fn)
{
    weft__shmem_check_init(fn);
    uint64_t old = 0;
    weft__shmem_check_rc(weft_rma_amo(weft__shmem.ctx, 0, op, lock, sizeof *lock, v, c, &old), lock,
                         sizeof *lock, 0, fn);
    return old;
}

WEFT_SHMEM_EXPORT int shmem_test_lock(long *lock)
{
    uint64_t me = (uint64_t)weft__shmem.me + 1;
    return lock_amo(lock, WEFT_RMA_AMO_CSWAP, me, 0, "shmem_test_lock") == 0 ? 0 : 1;
}

WEFT_SHMEM_EXPORT void shmem_set_lock(long *lock)
{
    uint64_t me = (uint64_t)weft__shmem.me + 1;
    unsigned spins = 0;
    while (lock_amo(lock, WEFT_RMA_AMO_CSWAP, me, 0, "shmem_set_lock") != 0)
        weft__shmem_pause(&spins);
}

WEFT_SHMEM_EXPORT void shmem_clear_lock(long *lock)
{
    uint64_t me = (uint64_t)weft__shmem.me + 1;
    if (lock_amo(lock, WEFT_RMA_AMO_FETCH, 0, 0, "shmem_clear_lock") != me)
        weft__shmem_fatal("shmem_clear_lock", "this PE does not hold the lock at %p", (void *)lock);
    shmem_quiet(); /* what was written under the lock is in place first (§9.12) */
    lock_amo(lock, WEFT_RMA_AMO_SET, 0, 0, "shmem_clear_lock");
}
