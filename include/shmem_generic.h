/* OpenSHMEM 1.5's C11 generic forms (included by shmem.h). Each picks the
 * typed routine from its destination's type; the RMA, AMO and signal ones
 * also take a context as an extra first argument. */
#ifndef WEFT_SHMEM_GENERIC_H
#define WEFT_SHMEM_GENERIC_H

/* The association lists: WEFT_SHMEM_G_<types>(P, F) maps each type T of the
 * list to P<typename>_F, e.g. int to shmem_int_put. */
#define WEFT_SHMEM_G_RMA(P, F)                                                                     \
    float : P##float_##F,                                                                          \
            double : P##double_##F,                                                                \
                     long double : P##longdouble_##F,                                              \
                                   char : P##char_##F,                                             \
                                          signed char : P##schar_##F,                              \
                                                        short : P##short_##F,                      \
                                                                int : P##int_##F,                  \
                                                                      long : P##long_##F,          \
                                                                             long long             \
        : P##longlong_##F,                                                                         \
          unsigned char : P##uchar_##F,                                                            \
                          unsigned short : P##ushort_##F,                                          \
                                           unsigned int : P##uint_##F,                             \
                                                          unsigned long : P##ulong_##F,            \
                                                                          unsigned long long       \
        : P##ulonglong_##F

#define WEFT_SHMEM_G_AMO_STD(P, F)                                                                 \
    int : P##int_##F,                                                                              \
          long : P##long_##F,                                                                      \
                 long long : P##longlong_##F,                                                      \
                             unsigned int : P##uint_##F,                                           \
                                            unsigned long : P##ulong_##F,                          \
                                                            unsigned long long : P##ulonglong_##F

#define WEFT_SHMEM_G_AMO_EXT(P, F)                                                                 \
    int : P##int_##F,                                                                              \
          long : P##long_##F,                                                                      \
                 long long : P##longlong_##F,                                                      \
                             unsigned int : P##uint_##F,                                           \
                                            unsigned long : P##ulong_##F,                          \
                                                            unsigned long long : P##ulonglong_##F, \
                                                                                 float             \
        : P##float_##F,                                                                            \
          double : P##double_##F

#define WEFT_SHMEM_G_AMO_BIT(P, F)                                                                 \
    unsigned int : P##uint_##F, unsigned long : P##ulong_##F, unsigned long long : P##ulonglong_##F

#define WEFT_SHMEM_G_P2P(P, F)                                                                     \
    short : P##short_##F,                                                                          \
            int : P##int_##F,                                                                      \
                  long : P##long_##F,                                                              \
                         long long : P##longlong_##F,                                              \
                                     unsigned short : P##ushort_##F,                               \
                                                      unsigned int : P##uint_##F,                  \
                                                                     unsigned long                 \
        : P##ulong_##F,                                                                            \
          unsigned long long : P##ulonglong_##F

#define WEFT_SHMEM_G_RBIT(P, F)                                                                    \
    unsigned char : P##uchar_##F,                                                                  \
                    unsigned short : P##ushort_##F,                                                \
                                     unsigned int : P##uint_##F,                                   \
                                                    unsigned long : P##ulong_##F,                  \
                                                                    unsigned long long             \
        : P##ulonglong_##F

#define WEFT_SHMEM_G_RCMP(P, F)                                                                    \
    char : P##char_##F,                                                                            \
           signed char : P##schar_##F,                                                             \
                         short : P##short_##F,                                                     \
                                 int : P##int_##F,                                                 \
                                       long : P##long_##F,                                         \
                                              long long : P##longlong_##F,                         \
                                                          unsigned char : P##uchar_##F,            \
                                                                          unsigned short           \
        : P##ushort_##F,                                                                           \
          unsigned int : P##uint_##F,                                                              \
                         unsigned long : P##ulong_##F,                                             \
                                         unsigned long long : P##ulonglong_##F,                    \
                                                              float : P##float_##F,                \
                                                                      double : P##double_##F,      \
                                                                               long double         \
        : P##longdouble_##F

#define WEFT_SHMEM_G_RARITH(P, F)                                                                  \
    char : P##char_##F,                                                                            \
           signed char : P##schar_##F,                                                             \
                         short : P##short_##F,                                                     \
                                 int : P##int_##F,                                                 \
                                       long : P##long_##F,                                         \
                                              long long : P##longlong_##F,                         \
                                                          unsigned char : P##uchar_##F,            \
                                                                          unsigned short           \
        : P##ushort_##F,                                                                           \
          unsigned int : P##uint_##F,                                                              \
                         unsigned long : P##ulong_##F,                                             \
                                         unsigned long long : P##ulonglong_##F,                    \
                                                              float : P##float_##F,                \
                                                                      double : P##double_##F,      \
                                                                               long double         \
        : P##longdouble_##F,                                                                       \
          double _Complex : P##complexd_##F,                                                       \
                            float _Complex : P##complexf_##F

#define WEFT_SHMEM_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define WEFT_SHMEM_NARG(...)                                     WEFT_SHMEM_NARG_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define WEFT_SHMEM_CAT_(a, b)                                    a##b
#define WEFT_SHMEM_CAT(a, b)                                     WEFT_SHMEM_CAT_(a, b)

/* A routine with a context form: NAME(dest, ...) with N arguments, or
 * NAME(ctx, dest, ...) with N + 1, chosen by dest's type from LIST. */
#define WEFT_SHMEM_G_PLAIN(LIST, F, d) _Generic(*(d), WEFT_SHMEM_G_##LIST(shmem_, F))
#define WEFT_SHMEM_G_CTX(LIST, F, d)   _Generic(*(d), WEFT_SHMEM_G_##LIST(shmem_ctx_, F))

#define weft_shmem_put_4(a, ...)        WEFT_SHMEM_G_PLAIN(RMA, put, a)(a, __VA_ARGS__)
#define weft_shmem_put_5(c, a, ...)     WEFT_SHMEM_G_CTX(RMA, put, a)(c, a, __VA_ARGS__)
#define shmem_put(...)                  WEFT_SHMEM_CAT(weft_shmem_put_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_get_4(a, ...)        WEFT_SHMEM_G_PLAIN(RMA, get, a)(a, __VA_ARGS__)
#define weft_shmem_get_5(c, a, ...)     WEFT_SHMEM_G_CTX(RMA, get, a)(c, a, __VA_ARGS__)
#define shmem_get(...)                  WEFT_SHMEM_CAT(weft_shmem_get_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_p_3(a, ...)          WEFT_SHMEM_G_PLAIN(RMA, p, a)(a, __VA_ARGS__)
#define weft_shmem_p_4(c, a, ...)       WEFT_SHMEM_G_CTX(RMA, p, a)(c, a, __VA_ARGS__)
#define shmem_p(...)                    WEFT_SHMEM_CAT(weft_shmem_p_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_g_2(a, ...)          WEFT_SHMEM_G_PLAIN(RMA, g, a)(a, __VA_ARGS__)
#define weft_shmem_g_3(c, a, ...)       WEFT_SHMEM_G_CTX(RMA, g, a)(c, a, __VA_ARGS__)
#define shmem_g(...)                    WEFT_SHMEM_CAT(weft_shmem_g_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_put_nbi_4(a, ...)    WEFT_SHMEM_G_PLAIN(RMA, put_nbi, a)(a, __VA_ARGS__)
#define weft_shmem_put_nbi_5(c, a, ...) WEFT_SHMEM_G_CTX(RMA, put_nbi, a)(c, a, __VA_ARGS__)
#define shmem_put_nbi(...)                                                                         \
    WEFT_SHMEM_CAT(weft_shmem_put_nbi_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_get_nbi_4(a, ...)    WEFT_SHMEM_G_PLAIN(RMA, get_nbi, a)(a, __VA_ARGS__)
#define weft_shmem_get_nbi_5(c, a, ...) WEFT_SHMEM_G_CTX(RMA, get_nbi, a)(c, a, __VA_ARGS__)
#define shmem_get_nbi(...)                                                                         \
    WEFT_SHMEM_CAT(weft_shmem_get_nbi_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_iput_6(a, ...)          WEFT_SHMEM_G_PLAIN(RMA, iput, a)(a, __VA_ARGS__)
#define weft_shmem_iput_7(c, a, ...)       WEFT_SHMEM_G_CTX(RMA, iput, a)(c, a, __VA_ARGS__)
#define shmem_iput(...)                    WEFT_SHMEM_CAT(weft_shmem_iput_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_iget_6(a, ...)          WEFT_SHMEM_G_PLAIN(RMA, iget, a)(a, __VA_ARGS__)
#define weft_shmem_iget_7(c, a, ...)       WEFT_SHMEM_G_CTX(RMA, iget, a)(c, a, __VA_ARGS__)
#define shmem_iget(...)                    WEFT_SHMEM_CAT(weft_shmem_iget_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_put_signal_7(a, ...)    WEFT_SHMEM_G_PLAIN(RMA, put_signal, a)(a, __VA_ARGS__)
#define weft_shmem_put_signal_8(c, a, ...) WEFT_SHMEM_G_CTX(RMA, put_signal, a)(c, a, __VA_ARGS__)
#define shmem_put_signal(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_put_signal_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_put_signal_nbi_7(a, ...)                                                        \
    WEFT_SHMEM_G_PLAIN(RMA, put_signal_nbi, a)(a, __VA_ARGS__)
#define weft_shmem_put_signal_nbi_8(c, a, ...)                                                     \
    WEFT_SHMEM_G_CTX(RMA, put_signal_nbi, a)(c, a, __VA_ARGS__)
#define shmem_put_signal_nbi(...)                                                                  \
    WEFT_SHMEM_CAT(weft_shmem_put_signal_nbi_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_fetch_2(a, ...)                                                          \
    WEFT_SHMEM_G_PLAIN(AMO_EXT, atomic_fetch, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_3(c, a, ...)                                                       \
    WEFT_SHMEM_G_CTX(AMO_EXT, atomic_fetch, a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch(...)                                                                    \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_set_3(a, ...) WEFT_SHMEM_G_PLAIN(AMO_EXT, atomic_set, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_set_4(c, a, ...)                                                         \
    WEFT_SHMEM_G_CTX(AMO_EXT, atomic_set, a)(c, a, __VA_ARGS__)
#define shmem_atomic_set(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_set_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_swap_3(a, ...) WEFT_SHMEM_G_PLAIN(AMO_EXT, atomic_swap, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_swap_4(c, a, ...)                                                        \
    WEFT_SHMEM_G_CTX(AMO_EXT, atomic_swap, a)(c, a, __VA_ARGS__)
#define shmem_atomic_swap(...)                                                                     \
    WEFT_SHMEM_CAT(weft_shmem_atomic_swap_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_compare_swap_4(a, ...)                                                   \
    WEFT_SHMEM_G_PLAIN(AMO_STD, atomic_compare_swap, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_compare_swap_5(c, a, ...)                                                \
    WEFT_SHMEM_G_CTX(AMO_STD, atomic_compare_swap, a)(c, a, __VA_ARGS__)
#define shmem_atomic_compare_swap(...)                                                             \
    WEFT_SHMEM_CAT(weft_shmem_atomic_compare_swap_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_fetch_inc_2(a, ...)                                                      \
    WEFT_SHMEM_G_PLAIN(AMO_STD, atomic_fetch_inc, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_inc_3(c, a, ...)                                                   \
    WEFT_SHMEM_G_CTX(AMO_STD, atomic_fetch_inc, a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...)                                                                \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_inc_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_inc_2(a, ...) WEFT_SHMEM_G_PLAIN(AMO_STD, atomic_inc, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_inc_3(c, a, ...)                                                         \
    WEFT_SHMEM_G_CTX(AMO_STD, atomic_inc, a)(c, a, __VA_ARGS__)
#define shmem_atomic_inc(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_inc_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_fetch_add_3(a, ...)                                                      \
    WEFT_SHMEM_G_PLAIN(AMO_STD, atomic_fetch_add, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_add_4(c, a, ...)                                                   \
    WEFT_SHMEM_G_CTX(AMO_STD, atomic_fetch_add, a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_add(...)                                                                \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_add_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_add_3(a, ...) WEFT_SHMEM_G_PLAIN(AMO_STD, atomic_add, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_add_4(c, a, ...)                                                         \
    WEFT_SHMEM_G_CTX(AMO_STD, atomic_add, a)(c, a, __VA_ARGS__)
#define shmem_atomic_add(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_add_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_fetch_and_3(a, ...)                                                      \
    WEFT_SHMEM_G_PLAIN(AMO_BIT, atomic_fetch_and, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_and_4(c, a, ...)                                                   \
    WEFT_SHMEM_G_CTX(AMO_BIT, atomic_fetch_and, a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_and(...)                                                                \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_and_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_and_3(a, ...) WEFT_SHMEM_G_PLAIN(AMO_BIT, atomic_and, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_and_4(c, a, ...)                                                         \
    WEFT_SHMEM_G_CTX(AMO_BIT, atomic_and, a)(c, a, __VA_ARGS__)
#define shmem_atomic_and(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_and_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_fetch_or_3(a, ...)                                                       \
    WEFT_SHMEM_G_PLAIN(AMO_BIT, atomic_fetch_or, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_or_4(c, a, ...)                                                    \
    WEFT_SHMEM_G_CTX(AMO_BIT, atomic_fetch_or, a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_or(...)                                                                 \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_or_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_or_3(a, ...)    WEFT_SHMEM_G_PLAIN(AMO_BIT, atomic_or, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_or_4(c, a, ...) WEFT_SHMEM_G_CTX(AMO_BIT, atomic_or, a)(c, a, __VA_ARGS__)
#define shmem_atomic_or(...)                                                                       \
    WEFT_SHMEM_CAT(weft_shmem_atomic_or_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_fetch_xor_3(a, ...)                                                      \
    WEFT_SHMEM_G_PLAIN(AMO_BIT, atomic_fetch_xor, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_xor_4(c, a, ...)                                                   \
    WEFT_SHMEM_G_CTX(AMO_BIT, atomic_fetch_xor, a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...)                                                                \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_xor_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_atomic_xor_3(a, ...) WEFT_SHMEM_G_PLAIN(AMO_BIT, atomic_xor, a)(a, __VA_ARGS__)
#define weft_shmem_atomic_xor_4(c, a, ...)                                                         \
    WEFT_SHMEM_G_CTX(AMO_BIT, atomic_xor, a)(c, a, __VA_ARGS__)
#define shmem_atomic_xor(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_xor_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

/* Collectives on teams: (team, dest, ...), chosen by dest's type. */
#define shmem_broadcast(team, dest, ...)                                                           \
    _Generic(*(dest), WEFT_SHMEM_G_RMA(shmem_, broadcast))(team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...)                                                             \
    _Generic(*(dest), WEFT_SHMEM_G_RMA(shmem_, collect))(team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...)                                                            \
    _Generic(*(dest), WEFT_SHMEM_G_RMA(shmem_, fcollect))(team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...)                                                            \
    _Generic(*(dest), WEFT_SHMEM_G_RMA(shmem_, alltoall))(team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...)                                                           \
    _Generic(*(dest), WEFT_SHMEM_G_RMA(shmem_, alltoalls))(team, dest, __VA_ARGS__)
#define shmem_and_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), WEFT_SHMEM_G_RBIT(shmem_, and_reduce))(team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...)                                                           \
    _Generic(*(dest), WEFT_SHMEM_G_RBIT(shmem_, or_reduce))(team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), WEFT_SHMEM_G_RBIT(shmem_, xor_reduce))(team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), WEFT_SHMEM_G_RCMP(shmem_, max_reduce))(team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), WEFT_SHMEM_G_RCMP(shmem_, min_reduce))(team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), WEFT_SHMEM_G_RARITH(shmem_, sum_reduce))(team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...)                                                         \
    _Generic(*(dest), WEFT_SHMEM_G_RARITH(shmem_, prod_reduce))(team, dest, __VA_ARGS__)

/* Point-to-point synchronization, single and on arrays. */
#define shmem_wait_until(ivars, ...)                                                               \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, wait_until))(ivars, __VA_ARGS__)
#define shmem_test(ivars, ...)                                                                     \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, test))(ivars, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...)                                                           \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, wait_until_all))(ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...)                                                           \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, wait_until_any))(ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...)                                                          \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, wait_until_some))(ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...)                                                    \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, wait_until_all_vector))(ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...)                                                    \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, wait_until_any_vector))(ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...)                                                   \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, wait_until_some_vector))(ivars, __VA_ARGS__)
#define shmem_test_all(ivars, ...)                                                                 \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, test_all))(ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...)                                                                 \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, test_any))(ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...)                                                                \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, test_some))(ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...)                                                          \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, test_all_vector))(ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...)                                                          \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, test_any_vector))(ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...)                                                         \
    _Generic(*(ivars), WEFT_SHMEM_G_P2P(shmem_, test_some_vector))(ivars, __VA_ARGS__)

#endif
