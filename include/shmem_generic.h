/* OpenSHMEM 1.5's C11 generic forms (included by shmem.h). Each picks the
 * typed routine from its destination's type; the RMA ones also take a
 * context as an extra first argument. */
#ifndef WEFT_SHMEM_GENERIC_H
#define WEFT_SHMEM_GENERIC_H

#define WEFT_SHMEM_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define WEFT_SHMEM_NARG(...)                                     WEFT_SHMEM_NARG_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define WEFT_SHMEM_CAT_(a, b)                                    a##b
#define WEFT_SHMEM_CAT(a, b)                                     WEFT_SHMEM_CAT_(a, b)

#define weft_shmem_put_p(d)                                                                        \
    _Generic(*(d), float                                                                           \
             : shmem_float_put, double                                                             \
             : shmem_double_put, long double                                                       \
             : shmem_longdouble_put, char                                                          \
             : shmem_char_put, signed char                                                         \
             : shmem_schar_put, short                                                              \
             : shmem_short_put, int                                                                \
             : shmem_int_put, long                                                                 \
             : shmem_long_put, long long                                                           \
             : shmem_longlong_put, unsigned char                                                   \
             : shmem_uchar_put, unsigned short                                                     \
             : shmem_ushort_put, unsigned int                                                      \
             : shmem_uint_put, unsigned long                                                       \
             : shmem_ulong_put, unsigned long long                                                 \
             : shmem_ulonglong_put)
#define weft_shmem_put_c(d)                                                                        \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_put, double                                                         \
             : shmem_ctx_double_put, long double                                                   \
             : shmem_ctx_longdouble_put, char                                                      \
             : shmem_ctx_char_put, signed char                                                     \
             : shmem_ctx_schar_put, short                                                          \
             : shmem_ctx_short_put, int                                                            \
             : shmem_ctx_int_put, long                                                             \
             : shmem_ctx_long_put, long long                                                       \
             : shmem_ctx_longlong_put, unsigned char                                               \
             : shmem_ctx_uchar_put, unsigned short                                                 \
             : shmem_ctx_ushort_put, unsigned int                                                  \
             : shmem_ctx_uint_put, unsigned long                                                   \
             : shmem_ctx_ulong_put, unsigned long long                                             \
             : shmem_ctx_ulonglong_put)
#define weft_shmem_put_4(a, ...)    weft_shmem_put_p(a)(a, __VA_ARGS__)
#define weft_shmem_put_5(c, a, ...) weft_shmem_put_c(a)(c, a, __VA_ARGS__)
#define shmem_put(...)              WEFT_SHMEM_CAT(weft_shmem_put_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_get_p(d)                                                                        \
    _Generic(*(d), float                                                                           \
             : shmem_float_get, double                                                             \
             : shmem_double_get, long double                                                       \
             : shmem_longdouble_get, char                                                          \
             : shmem_char_get, signed char                                                         \
             : shmem_schar_get, short                                                              \
             : shmem_short_get, int                                                                \
             : shmem_int_get, long                                                                 \
             : shmem_long_get, long long                                                           \
             : shmem_longlong_get, unsigned char                                                   \
             : shmem_uchar_get, unsigned short                                                     \
             : shmem_ushort_get, unsigned int                                                      \
             : shmem_uint_get, unsigned long                                                       \
             : shmem_ulong_get, unsigned long long                                                 \
             : shmem_ulonglong_get)
#define weft_shmem_get_c(d)                                                                        \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_get, double                                                         \
             : shmem_ctx_double_get, long double                                                   \
             : shmem_ctx_longdouble_get, char                                                      \
             : shmem_ctx_char_get, signed char                                                     \
             : shmem_ctx_schar_get, short                                                          \
             : shmem_ctx_short_get, int                                                            \
             : shmem_ctx_int_get, long                                                             \
             : shmem_ctx_long_get, long long                                                       \
             : shmem_ctx_longlong_get, unsigned char                                               \
             : shmem_ctx_uchar_get, unsigned short                                                 \
             : shmem_ctx_ushort_get, unsigned int                                                  \
             : shmem_ctx_uint_get, unsigned long                                                   \
             : shmem_ctx_ulong_get, unsigned long long                                             \
             : shmem_ctx_ulonglong_get)
#define weft_shmem_get_4(a, ...)    weft_shmem_get_p(a)(a, __VA_ARGS__)
#define weft_shmem_get_5(c, a, ...) weft_shmem_get_c(a)(c, a, __VA_ARGS__)
#define shmem_get(...)              WEFT_SHMEM_CAT(weft_shmem_get_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_p_p(d)                                                                          \
    _Generic(*(d), float                                                                           \
             : shmem_float_p, double                                                               \
             : shmem_double_p, long double                                                         \
             : shmem_longdouble_p, char                                                            \
             : shmem_char_p, signed char                                                           \
             : shmem_schar_p, short                                                                \
             : shmem_short_p, int                                                                  \
             : shmem_int_p, long                                                                   \
             : shmem_long_p, long long                                                             \
             : shmem_longlong_p, unsigned char                                                     \
             : shmem_uchar_p, unsigned short                                                       \
             : shmem_ushort_p, unsigned int                                                        \
             : shmem_uint_p, unsigned long                                                         \
             : shmem_ulong_p, unsigned long long                                                   \
             : shmem_ulonglong_p)
#define weft_shmem_p_c(d)                                                                          \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_p, double                                                           \
             : shmem_ctx_double_p, long double                                                     \
             : shmem_ctx_longdouble_p, char                                                        \
             : shmem_ctx_char_p, signed char                                                       \
             : shmem_ctx_schar_p, short                                                            \
             : shmem_ctx_short_p, int                                                              \
             : shmem_ctx_int_p, long                                                               \
             : shmem_ctx_long_p, long long                                                         \
             : shmem_ctx_longlong_p, unsigned char                                                 \
             : shmem_ctx_uchar_p, unsigned short                                                   \
             : shmem_ctx_ushort_p, unsigned int                                                    \
             : shmem_ctx_uint_p, unsigned long                                                     \
             : shmem_ctx_ulong_p, unsigned long long                                               \
             : shmem_ctx_ulonglong_p)
#define weft_shmem_p_3(a, ...)    weft_shmem_p_p(a)(a, __VA_ARGS__)
#define weft_shmem_p_4(c, a, ...) weft_shmem_p_c(a)(c, a, __VA_ARGS__)
#define shmem_p(...)              WEFT_SHMEM_CAT(weft_shmem_p_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_g_p(d)                                                                          \
    _Generic(*(d), float                                                                           \
             : shmem_float_g, double                                                               \
             : shmem_double_g, long double                                                         \
             : shmem_longdouble_g, char                                                            \
             : shmem_char_g, signed char                                                           \
             : shmem_schar_g, short                                                                \
             : shmem_short_g, int                                                                  \
             : shmem_int_g, long                                                                   \
             : shmem_long_g, long long                                                             \
             : shmem_longlong_g, unsigned char                                                     \
             : shmem_uchar_g, unsigned short                                                       \
             : shmem_ushort_g, unsigned int                                                        \
             : shmem_uint_g, unsigned long                                                         \
             : shmem_ulong_g, unsigned long long                                                   \
             : shmem_ulonglong_g)
#define weft_shmem_g_c(d)                                                                          \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_g, double                                                           \
             : shmem_ctx_double_g, long double                                                     \
             : shmem_ctx_longdouble_g, char                                                        \
             : shmem_ctx_char_g, signed char                                                       \
             : shmem_ctx_schar_g, short                                                            \
             : shmem_ctx_short_g, int                                                              \
             : shmem_ctx_int_g, long                                                               \
             : shmem_ctx_long_g, long long                                                         \
             : shmem_ctx_longlong_g, unsigned char                                                 \
             : shmem_ctx_uchar_g, unsigned short                                                   \
             : shmem_ctx_ushort_g, unsigned int                                                    \
             : shmem_ctx_uint_g, unsigned long                                                     \
             : shmem_ctx_ulong_g, unsigned long long                                               \
             : shmem_ctx_ulonglong_g)
#define weft_shmem_g_2(a, ...)    weft_shmem_g_p(a)(a, __VA_ARGS__)
#define weft_shmem_g_3(c, a, ...) weft_shmem_g_c(a)(c, a, __VA_ARGS__)
#define shmem_g(...)              WEFT_SHMEM_CAT(weft_shmem_g_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_put_nbi_p(d)                                                                    \
    _Generic(*(d), float                                                                           \
             : shmem_float_put_nbi, double                                                         \
             : shmem_double_put_nbi, long double                                                   \
             : shmem_longdouble_put_nbi, char                                                      \
             : shmem_char_put_nbi, signed char                                                     \
             : shmem_schar_put_nbi, short                                                          \
             : shmem_short_put_nbi, int                                                            \
             : shmem_int_put_nbi, long                                                             \
             : shmem_long_put_nbi, long long                                                       \
             : shmem_longlong_put_nbi, unsigned char                                               \
             : shmem_uchar_put_nbi, unsigned short                                                 \
             : shmem_ushort_put_nbi, unsigned int                                                  \
             : shmem_uint_put_nbi, unsigned long                                                   \
             : shmem_ulong_put_nbi, unsigned long long                                             \
             : shmem_ulonglong_put_nbi)
#define weft_shmem_put_nbi_c(d)                                                                    \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_put_nbi, double                                                     \
             : shmem_ctx_double_put_nbi, long double                                               \
             : shmem_ctx_longdouble_put_nbi, char                                                  \
             : shmem_ctx_char_put_nbi, signed char                                                 \
             : shmem_ctx_schar_put_nbi, short                                                      \
             : shmem_ctx_short_put_nbi, int                                                        \
             : shmem_ctx_int_put_nbi, long                                                         \
             : shmem_ctx_long_put_nbi, long long                                                   \
             : shmem_ctx_longlong_put_nbi, unsigned char                                           \
             : shmem_ctx_uchar_put_nbi, unsigned short                                             \
             : shmem_ctx_ushort_put_nbi, unsigned int                                              \
             : shmem_ctx_uint_put_nbi, unsigned long                                               \
             : shmem_ctx_ulong_put_nbi, unsigned long long                                         \
             : shmem_ctx_ulonglong_put_nbi)
#define weft_shmem_put_nbi_4(a, ...)    weft_shmem_put_nbi_p(a)(a, __VA_ARGS__)
#define weft_shmem_put_nbi_5(c, a, ...) weft_shmem_put_nbi_c(a)(c, a, __VA_ARGS__)
#define shmem_put_nbi(...)                                                                         \
    WEFT_SHMEM_CAT(weft_shmem_put_nbi_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_get_nbi_p(d)                                                                    \
    _Generic(*(d), float                                                                           \
             : shmem_float_get_nbi, double                                                         \
             : shmem_double_get_nbi, long double                                                   \
             : shmem_longdouble_get_nbi, char                                                      \
             : shmem_char_get_nbi, signed char                                                     \
             : shmem_schar_get_nbi, short                                                          \
             : shmem_short_get_nbi, int                                                            \
             : shmem_int_get_nbi, long                                                             \
             : shmem_long_get_nbi, long long                                                       \
             : shmem_longlong_get_nbi, unsigned char                                               \
             : shmem_uchar_get_nbi, unsigned short                                                 \
             : shmem_ushort_get_nbi, unsigned int                                                  \
             : shmem_uint_get_nbi, unsigned long                                                   \
             : shmem_ulong_get_nbi, unsigned long long                                             \
             : shmem_ulonglong_get_nbi)
#define weft_shmem_get_nbi_c(d)                                                                    \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_get_nbi, double                                                     \
             : shmem_ctx_double_get_nbi, long double                                               \
             : shmem_ctx_longdouble_get_nbi, char                                                  \
             : shmem_ctx_char_get_nbi, signed char                                                 \
             : shmem_ctx_schar_get_nbi, short                                                      \
             : shmem_ctx_short_get_nbi, int                                                        \
             : shmem_ctx_int_get_nbi, long                                                         \
             : shmem_ctx_long_get_nbi, long long                                                   \
             : shmem_ctx_longlong_get_nbi, unsigned char                                           \
             : shmem_ctx_uchar_get_nbi, unsigned short                                             \
             : shmem_ctx_ushort_get_nbi, unsigned int                                              \
             : shmem_ctx_uint_get_nbi, unsigned long                                               \
             : shmem_ctx_ulong_get_nbi, unsigned long long                                         \
             : shmem_ctx_ulonglong_get_nbi)
#define weft_shmem_get_nbi_4(a, ...)    weft_shmem_get_nbi_p(a)(a, __VA_ARGS__)
#define weft_shmem_get_nbi_5(c, a, ...) weft_shmem_get_nbi_c(a)(c, a, __VA_ARGS__)
#define shmem_get_nbi(...)                                                                         \
    WEFT_SHMEM_CAT(weft_shmem_get_nbi_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_iput_p(d)                                                                       \
    _Generic(*(d), float                                                                           \
             : shmem_float_iput, double                                                            \
             : shmem_double_iput, long double                                                      \
             : shmem_longdouble_iput, char                                                         \
             : shmem_char_iput, signed char                                                        \
             : shmem_schar_iput, short                                                             \
             : shmem_short_iput, int                                                               \
             : shmem_int_iput, long                                                                \
             : shmem_long_iput, long long                                                          \
             : shmem_longlong_iput, unsigned char                                                  \
             : shmem_uchar_iput, unsigned short                                                    \
             : shmem_ushort_iput, unsigned int                                                     \
             : shmem_uint_iput, unsigned long                                                      \
             : shmem_ulong_iput, unsigned long long                                                \
             : shmem_ulonglong_iput)
#define weft_shmem_iput_c(d)                                                                       \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_iput, double                                                        \
             : shmem_ctx_double_iput, long double                                                  \
             : shmem_ctx_longdouble_iput, char                                                     \
             : shmem_ctx_char_iput, signed char                                                    \
             : shmem_ctx_schar_iput, short                                                         \
             : shmem_ctx_short_iput, int                                                           \
             : shmem_ctx_int_iput, long                                                            \
             : shmem_ctx_long_iput, long long                                                      \
             : shmem_ctx_longlong_iput, unsigned char                                              \
             : shmem_ctx_uchar_iput, unsigned short                                                \
             : shmem_ctx_ushort_iput, unsigned int                                                 \
             : shmem_ctx_uint_iput, unsigned long                                                  \
             : shmem_ctx_ulong_iput, unsigned long long                                            \
             : shmem_ctx_ulonglong_iput)
#define weft_shmem_iput_6(a, ...)    weft_shmem_iput_p(a)(a, __VA_ARGS__)
#define weft_shmem_iput_7(c, a, ...) weft_shmem_iput_c(a)(c, a, __VA_ARGS__)
#define shmem_iput(...)              WEFT_SHMEM_CAT(weft_shmem_iput_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_iget_p(d)                                                                       \
    _Generic(*(d), float                                                                           \
             : shmem_float_iget, double                                                            \
             : shmem_double_iget, long double                                                      \
             : shmem_longdouble_iget, char                                                         \
             : shmem_char_iget, signed char                                                        \
             : shmem_schar_iget, short                                                             \
             : shmem_short_iget, int                                                               \
             : shmem_int_iget, long                                                                \
             : shmem_long_iget, long long                                                          \
             : shmem_longlong_iget, unsigned char                                                  \
             : shmem_uchar_iget, unsigned short                                                    \
             : shmem_ushort_iget, unsigned int                                                     \
             : shmem_uint_iget, unsigned long                                                      \
             : shmem_ulong_iget, unsigned long long                                                \
             : shmem_ulonglong_iget)
#define weft_shmem_iget_c(d)                                                                       \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_iget, double                                                        \
             : shmem_ctx_double_iget, long double                                                  \
             : shmem_ctx_longdouble_iget, char                                                     \
             : shmem_ctx_char_iget, signed char                                                    \
             : shmem_ctx_schar_iget, short                                                         \
             : shmem_ctx_short_iget, int                                                           \
             : shmem_ctx_int_iget, long                                                            \
             : shmem_ctx_long_iget, long long                                                      \
             : shmem_ctx_longlong_iget, unsigned char                                              \
             : shmem_ctx_uchar_iget, unsigned short                                                \
             : shmem_ctx_ushort_iget, unsigned int                                                 \
             : shmem_ctx_uint_iget, unsigned long                                                  \
             : shmem_ctx_ulong_iget, unsigned long long                                            \
             : shmem_ctx_ulonglong_iget)
#define weft_shmem_iget_6(a, ...)    weft_shmem_iget_p(a)(a, __VA_ARGS__)
#define weft_shmem_iget_7(c, a, ...) weft_shmem_iget_c(a)(c, a, __VA_ARGS__)
#define shmem_iget(...)              WEFT_SHMEM_CAT(weft_shmem_iget_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_fetch_p(d)                                                               \
    _Generic(*(d), int                                                                             \
             : shmem_int_atomic_fetch, long                                                        \
             : shmem_long_atomic_fetch, long long                                                  \
             : shmem_longlong_atomic_fetch, unsigned int                                           \
             : shmem_uint_atomic_fetch, unsigned long                                              \
             : shmem_ulong_atomic_fetch, unsigned long long                                        \
             : shmem_ulonglong_atomic_fetch, float                                                 \
             : shmem_float_atomic_fetch, double                                                    \
             : shmem_double_atomic_fetch)
#define weft_shmem_atomic_fetch_c(d)                                                               \
    _Generic(*(d), int                                                                             \
             : shmem_ctx_int_atomic_fetch, long                                                    \
             : shmem_ctx_long_atomic_fetch, long long                                              \
             : shmem_ctx_longlong_atomic_fetch, unsigned int                                       \
             : shmem_ctx_uint_atomic_fetch, unsigned long                                          \
             : shmem_ctx_ulong_atomic_fetch, unsigned long long                                    \
             : shmem_ctx_ulonglong_atomic_fetch, float                                             \
             : shmem_ctx_float_atomic_fetch, double                                                \
             : shmem_ctx_double_atomic_fetch)
#define weft_shmem_atomic_fetch_2(a, ...)    weft_shmem_atomic_fetch_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_3(c, a, ...) weft_shmem_atomic_fetch_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch(...)                                                                    \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_set_p(d)                                                                 \
    _Generic(*(d), int                                                                             \
             : shmem_int_atomic_set, long                                                          \
             : shmem_long_atomic_set, long long                                                    \
             : shmem_longlong_atomic_set, unsigned int                                             \
             : shmem_uint_atomic_set, unsigned long                                                \
             : shmem_ulong_atomic_set, unsigned long long                                          \
             : shmem_ulonglong_atomic_set, float                                                   \
             : shmem_float_atomic_set, double                                                      \
             : shmem_double_atomic_set)
#define weft_shmem_atomic_set_c(d)                                                                 \
    _Generic(*(d), int                                                                             \
             : shmem_ctx_int_atomic_set, long                                                      \
             : shmem_ctx_long_atomic_set, long long                                                \
             : shmem_ctx_longlong_atomic_set, unsigned int                                         \
             : shmem_ctx_uint_atomic_set, unsigned long                                            \
             : shmem_ctx_ulong_atomic_set, unsigned long long                                      \
             : shmem_ctx_ulonglong_atomic_set, float                                               \
             : shmem_ctx_float_atomic_set, double                                                  \
             : shmem_ctx_double_atomic_set)
#define weft_shmem_atomic_set_3(a, ...)    weft_shmem_atomic_set_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_set_4(c, a, ...) weft_shmem_atomic_set_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_set(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_set_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_swap_p(d)                                                                \
    _Generic(*(d), int                                                                             \
             : shmem_int_atomic_swap, long                                                         \
             : shmem_long_atomic_swap, long long                                                   \
             : shmem_longlong_atomic_swap, unsigned int                                            \
             : shmem_uint_atomic_swap, unsigned long                                               \
             : shmem_ulong_atomic_swap, unsigned long long                                         \
             : shmem_ulonglong_atomic_swap, float                                                  \
             : shmem_float_atomic_swap, double                                                     \
             : shmem_double_atomic_swap)
#define weft_shmem_atomic_swap_c(d)                                                                \
    _Generic(*(d), int                                                                             \
             : shmem_ctx_int_atomic_swap, long                                                     \
             : shmem_ctx_long_atomic_swap, long long                                               \
             : shmem_ctx_longlong_atomic_swap, unsigned int                                        \
             : shmem_ctx_uint_atomic_swap, unsigned long                                           \
             : shmem_ctx_ulong_atomic_swap, unsigned long long                                     \
             : shmem_ctx_ulonglong_atomic_swap, float                                              \
             : shmem_ctx_float_atomic_swap, double                                                 \
             : shmem_ctx_double_atomic_swap)
#define weft_shmem_atomic_swap_3(a, ...)    weft_shmem_atomic_swap_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_swap_4(c, a, ...) weft_shmem_atomic_swap_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_swap(...)                                                                     \
    WEFT_SHMEM_CAT(weft_shmem_atomic_swap_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_compare_swap_p(d)                                                        \
    _Generic(*(d), int                                                                             \
             : shmem_int_atomic_compare_swap, long                                                 \
             : shmem_long_atomic_compare_swap, long long                                           \
             : shmem_longlong_atomic_compare_swap, unsigned int                                    \
             : shmem_uint_atomic_compare_swap, unsigned long                                       \
             : shmem_ulong_atomic_compare_swap, unsigned long long                                 \
             : shmem_ulonglong_atomic_compare_swap)
#define weft_shmem_atomic_compare_swap_c(d)                                                        \
    _Generic(*(d), int                                                                             \
             : shmem_ctx_int_atomic_compare_swap, long                                             \
             : shmem_ctx_long_atomic_compare_swap, long long                                       \
             : shmem_ctx_longlong_atomic_compare_swap, unsigned int                                \
             : shmem_ctx_uint_atomic_compare_swap, unsigned long                                   \
             : shmem_ctx_ulong_atomic_compare_swap, unsigned long long                             \
             : shmem_ctx_ulonglong_atomic_compare_swap)
#define weft_shmem_atomic_compare_swap_4(a, ...) weft_shmem_atomic_compare_swap_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_compare_swap_5(c, a, ...)                                                \
    weft_shmem_atomic_compare_swap_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_compare_swap(...)                                                             \
    WEFT_SHMEM_CAT(weft_shmem_atomic_compare_swap_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_fetch_inc_p(d)                                                           \
    _Generic(*(d), int                                                                             \
             : shmem_int_atomic_fetch_inc, long                                                    \
             : shmem_long_atomic_fetch_inc, long long                                              \
             : shmem_longlong_atomic_fetch_inc, unsigned int                                       \
             : shmem_uint_atomic_fetch_inc, unsigned long                                          \
             : shmem_ulong_atomic_fetch_inc, unsigned long long                                    \
             : shmem_ulonglong_atomic_fetch_inc)
#define weft_shmem_atomic_fetch_inc_c(d)                                                           \
    _Generic(*(d), int                                                                             \
             : shmem_ctx_int_atomic_fetch_inc, long                                                \
             : shmem_ctx_long_atomic_fetch_inc, long long                                          \
             : shmem_ctx_longlong_atomic_fetch_inc, unsigned int                                   \
             : shmem_ctx_uint_atomic_fetch_inc, unsigned long                                      \
             : shmem_ctx_ulong_atomic_fetch_inc, unsigned long long                                \
             : shmem_ctx_ulonglong_atomic_fetch_inc)
#define weft_shmem_atomic_fetch_inc_2(a, ...)    weft_shmem_atomic_fetch_inc_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_inc_3(c, a, ...) weft_shmem_atomic_fetch_inc_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...)                                                                \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_inc_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_inc_p(d)                                                                 \
    _Generic(*(d), int                                                                             \
             : shmem_int_atomic_inc, long                                                          \
             : shmem_long_atomic_inc, long long                                                    \
             : shmem_longlong_atomic_inc, unsigned int                                             \
             : shmem_uint_atomic_inc, unsigned long                                                \
             : shmem_ulong_atomic_inc, unsigned long long                                          \
             : shmem_ulonglong_atomic_inc)
#define weft_shmem_atomic_inc_c(d)                                                                 \
    _Generic(*(d), int                                                                             \
             : shmem_ctx_int_atomic_inc, long                                                      \
             : shmem_ctx_long_atomic_inc, long long                                                \
             : shmem_ctx_longlong_atomic_inc, unsigned int                                         \
             : shmem_ctx_uint_atomic_inc, unsigned long                                            \
             : shmem_ctx_ulong_atomic_inc, unsigned long long                                      \
             : shmem_ctx_ulonglong_atomic_inc)
#define weft_shmem_atomic_inc_2(a, ...)    weft_shmem_atomic_inc_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_inc_3(c, a, ...) weft_shmem_atomic_inc_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_inc(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_inc_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_fetch_add_p(d)                                                           \
    _Generic(*(d), int                                                                             \
             : shmem_int_atomic_fetch_add, long                                                    \
             : shmem_long_atomic_fetch_add, long long                                              \
             : shmem_longlong_atomic_fetch_add, unsigned int                                       \
             : shmem_uint_atomic_fetch_add, unsigned long                                          \
             : shmem_ulong_atomic_fetch_add, unsigned long long                                    \
             : shmem_ulonglong_atomic_fetch_add)
#define weft_shmem_atomic_fetch_add_c(d)                                                           \
    _Generic(*(d), int                                                                             \
             : shmem_ctx_int_atomic_fetch_add, long                                                \
             : shmem_ctx_long_atomic_fetch_add, long long                                          \
             : shmem_ctx_longlong_atomic_fetch_add, unsigned int                                   \
             : shmem_ctx_uint_atomic_fetch_add, unsigned long                                      \
             : shmem_ctx_ulong_atomic_fetch_add, unsigned long long                                \
             : shmem_ctx_ulonglong_atomic_fetch_add)
#define weft_shmem_atomic_fetch_add_3(a, ...)    weft_shmem_atomic_fetch_add_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_add_4(c, a, ...) weft_shmem_atomic_fetch_add_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_add(...)                                                                \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_add_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_add_p(d)                                                                 \
    _Generic(*(d), int                                                                             \
             : shmem_int_atomic_add, long                                                          \
             : shmem_long_atomic_add, long long                                                    \
             : shmem_longlong_atomic_add, unsigned int                                             \
             : shmem_uint_atomic_add, unsigned long                                                \
             : shmem_ulong_atomic_add, unsigned long long                                          \
             : shmem_ulonglong_atomic_add)
#define weft_shmem_atomic_add_c(d)                                                                 \
    _Generic(*(d), int                                                                             \
             : shmem_ctx_int_atomic_add, long                                                      \
             : shmem_ctx_long_atomic_add, long long                                                \
             : shmem_ctx_longlong_atomic_add, unsigned int                                         \
             : shmem_ctx_uint_atomic_add, unsigned long                                            \
             : shmem_ctx_ulong_atomic_add, unsigned long long                                      \
             : shmem_ctx_ulonglong_atomic_add)
#define weft_shmem_atomic_add_3(a, ...)    weft_shmem_atomic_add_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_add_4(c, a, ...) weft_shmem_atomic_add_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_add(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_add_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_fetch_and_p(d)                                                           \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_uint_atomic_fetch_and, unsigned long                                          \
             : shmem_ulong_atomic_fetch_and, unsigned long long                                    \
             : shmem_ulonglong_atomic_fetch_and)
#define weft_shmem_atomic_fetch_and_c(d)                                                           \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_ctx_uint_atomic_fetch_and, unsigned long                                      \
             : shmem_ctx_ulong_atomic_fetch_and, unsigned long long                                \
             : shmem_ctx_ulonglong_atomic_fetch_and)
#define weft_shmem_atomic_fetch_and_3(a, ...)    weft_shmem_atomic_fetch_and_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_and_4(c, a, ...) weft_shmem_atomic_fetch_and_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_and(...)                                                                \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_and_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_and_p(d)                                                                 \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_uint_atomic_and, unsigned long                                                \
             : shmem_ulong_atomic_and, unsigned long long                                          \
             : shmem_ulonglong_atomic_and)
#define weft_shmem_atomic_and_c(d)                                                                 \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_ctx_uint_atomic_and, unsigned long                                            \
             : shmem_ctx_ulong_atomic_and, unsigned long long                                      \
             : shmem_ctx_ulonglong_atomic_and)
#define weft_shmem_atomic_and_3(a, ...)    weft_shmem_atomic_and_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_and_4(c, a, ...) weft_shmem_atomic_and_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_and(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_and_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_fetch_or_p(d)                                                            \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_uint_atomic_fetch_or, unsigned long                                           \
             : shmem_ulong_atomic_fetch_or, unsigned long long                                     \
             : shmem_ulonglong_atomic_fetch_or)
#define weft_shmem_atomic_fetch_or_c(d)                                                            \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_ctx_uint_atomic_fetch_or, unsigned long                                       \
             : shmem_ctx_ulong_atomic_fetch_or, unsigned long long                                 \
             : shmem_ctx_ulonglong_atomic_fetch_or)
#define weft_shmem_atomic_fetch_or_3(a, ...)    weft_shmem_atomic_fetch_or_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_or_4(c, a, ...) weft_shmem_atomic_fetch_or_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_or(...)                                                                 \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_or_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_or_p(d)                                                                  \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_uint_atomic_or, unsigned long                                                 \
             : shmem_ulong_atomic_or, unsigned long long                                           \
             : shmem_ulonglong_atomic_or)
#define weft_shmem_atomic_or_c(d)                                                                  \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_ctx_uint_atomic_or, unsigned long                                             \
             : shmem_ctx_ulong_atomic_or, unsigned long long                                       \
             : shmem_ctx_ulonglong_atomic_or)
#define weft_shmem_atomic_or_3(a, ...)    weft_shmem_atomic_or_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_or_4(c, a, ...) weft_shmem_atomic_or_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_or(...)                                                                       \
    WEFT_SHMEM_CAT(weft_shmem_atomic_or_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_fetch_xor_p(d)                                                           \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_uint_atomic_fetch_xor, unsigned long                                          \
             : shmem_ulong_atomic_fetch_xor, unsigned long long                                    \
             : shmem_ulonglong_atomic_fetch_xor)
#define weft_shmem_atomic_fetch_xor_c(d)                                                           \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_ctx_uint_atomic_fetch_xor, unsigned long                                      \
             : shmem_ctx_ulong_atomic_fetch_xor, unsigned long long                                \
             : shmem_ctx_ulonglong_atomic_fetch_xor)
#define weft_shmem_atomic_fetch_xor_3(a, ...)    weft_shmem_atomic_fetch_xor_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_fetch_xor_4(c, a, ...) weft_shmem_atomic_fetch_xor_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...)                                                                \
    WEFT_SHMEM_CAT(weft_shmem_atomic_fetch_xor_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define weft_shmem_atomic_xor_p(d)                                                                 \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_uint_atomic_xor, unsigned long                                                \
             : shmem_ulong_atomic_xor, unsigned long long                                          \
             : shmem_ulonglong_atomic_xor)
#define weft_shmem_atomic_xor_c(d)                                                                 \
    _Generic(*(d), unsigned int                                                                    \
             : shmem_ctx_uint_atomic_xor, unsigned long                                            \
             : shmem_ctx_ulong_atomic_xor, unsigned long long                                      \
             : shmem_ctx_ulonglong_atomic_xor)
#define weft_shmem_atomic_xor_3(a, ...)    weft_shmem_atomic_xor_p(a)(a, __VA_ARGS__)
#define weft_shmem_atomic_xor_4(c, a, ...) weft_shmem_atomic_xor_c(a)(c, a, __VA_ARGS__)
#define shmem_atomic_xor(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_atomic_xor_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

#define shmem_wait_until(ivar, ...)                                                                \
    _Generic(*(ivar), short                                                                        \
             : shmem_short_wait_until, int                                                         \
             : shmem_int_wait_until, long                                                          \
             : shmem_long_wait_until, long long                                                    \
             : shmem_longlong_wait_until, unsigned short                                           \
             : shmem_ushort_wait_until, unsigned int                                               \
             : shmem_uint_wait_until, unsigned long                                                \
             : shmem_ulong_wait_until, unsigned long long                                          \
             : shmem_ulonglong_wait_until)(ivar, __VA_ARGS__)

#define shmem_test(ivar, ...)                                                                      \
    _Generic(*(ivar), short                                                                        \
             : shmem_short_test, int                                                               \
             : shmem_int_test, long                                                                \
             : shmem_long_test, long long                                                          \
             : shmem_longlong_test, unsigned short                                                 \
             : shmem_ushort_test, unsigned int                                                     \
             : shmem_uint_test, unsigned long                                                      \
             : shmem_ulong_test, unsigned long long                                                \
             : shmem_ulonglong_test)(ivar, __VA_ARGS__)

/* Put with signal: (dest, source, nelems, sig_addr, signal, sig_op, pe), or
 * with a context first. */
#define weft_shmem_put_signal_p(d)                                                                 \
    _Generic(*(d), float                                                                           \
             : shmem_float_put_signal, double                                                      \
             : shmem_double_put_signal, long double                                                \
             : shmem_longdouble_put_signal, char                                                   \
             : shmem_char_put_signal, signed char                                                  \
             : shmem_schar_put_signal, short                                                       \
             : shmem_short_put_signal, int                                                         \
             : shmem_int_put_signal, long                                                          \
             : shmem_long_put_signal, long long                                                    \
             : shmem_longlong_put_signal, unsigned char                                            \
             : shmem_uchar_put_signal, unsigned short                                              \
             : shmem_ushort_put_signal, unsigned int                                               \
             : shmem_uint_put_signal, unsigned long                                                \
             : shmem_ulong_put_signal, unsigned long long                                          \
             : shmem_ulonglong_put_signal)
#define weft_shmem_put_signal_c(d)                                                                 \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_put_signal, double                                                  \
             : shmem_ctx_double_put_signal, long double                                            \
             : shmem_ctx_longdouble_put_signal, char                                               \
             : shmem_ctx_char_put_signal, signed char                                              \
             : shmem_ctx_schar_put_signal, short                                                   \
             : shmem_ctx_short_put_signal, int                                                     \
             : shmem_ctx_int_put_signal, long                                                      \
             : shmem_ctx_long_put_signal, long long                                                \
             : shmem_ctx_longlong_put_signal, unsigned char                                        \
             : shmem_ctx_uchar_put_signal, unsigned short                                          \
             : shmem_ctx_ushort_put_signal, unsigned int                                           \
             : shmem_ctx_uint_put_signal, unsigned long                                            \
             : shmem_ctx_ulong_put_signal, unsigned long long                                      \
             : shmem_ctx_ulonglong_put_signal)
#define weft_shmem_put_signal_7(a, ...)    weft_shmem_put_signal_p(a)(a, __VA_ARGS__)
#define weft_shmem_put_signal_8(c, a, ...) weft_shmem_put_signal_c(a)(c, a, __VA_ARGS__)
#define shmem_put_signal(...)                                                                      \
    WEFT_SHMEM_CAT(weft_shmem_put_signal_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)
#define weft_shmem_put_signal_nbi_p(d)                                                             \
    _Generic(*(d), float                                                                           \
             : shmem_float_put_signal_nbi, double                                                  \
             : shmem_double_put_signal_nbi, long double                                            \
             : shmem_longdouble_put_signal_nbi, char                                               \
             : shmem_char_put_signal_nbi, signed char                                              \
             : shmem_schar_put_signal_nbi, short                                                   \
             : shmem_short_put_signal_nbi, int                                                     \
             : shmem_int_put_signal_nbi, long                                                      \
             : shmem_long_put_signal_nbi, long long                                                \
             : shmem_longlong_put_signal_nbi, unsigned char                                        \
             : shmem_uchar_put_signal_nbi, unsigned short                                          \
             : shmem_ushort_put_signal_nbi, unsigned int                                           \
             : shmem_uint_put_signal_nbi, unsigned long                                            \
             : shmem_ulong_put_signal_nbi, unsigned long long                                      \
             : shmem_ulonglong_put_signal_nbi)
#define weft_shmem_put_signal_nbi_c(d)                                                             \
    _Generic(*(d), float                                                                           \
             : shmem_ctx_float_put_signal_nbi, double                                              \
             : shmem_ctx_double_put_signal_nbi, long double                                        \
             : shmem_ctx_longdouble_put_signal_nbi, char                                           \
             : shmem_ctx_char_put_signal_nbi, signed char                                          \
             : shmem_ctx_schar_put_signal_nbi, short                                               \
             : shmem_ctx_short_put_signal_nbi, int                                                 \
             : shmem_ctx_int_put_signal_nbi, long                                                  \
             : shmem_ctx_long_put_signal_nbi, long long                                            \
             : shmem_ctx_longlong_put_signal_nbi, unsigned char                                    \
             : shmem_ctx_uchar_put_signal_nbi, unsigned short                                      \
             : shmem_ctx_ushort_put_signal_nbi, unsigned int                                       \
             : shmem_ctx_uint_put_signal_nbi, unsigned long                                        \
             : shmem_ctx_ulong_put_signal_nbi, unsigned long long                                  \
             : shmem_ctx_ulonglong_put_signal_nbi)
#define weft_shmem_put_signal_nbi_7(a, ...)    weft_shmem_put_signal_nbi_p(a)(a, __VA_ARGS__)
#define weft_shmem_put_signal_nbi_8(c, a, ...) weft_shmem_put_signal_nbi_c(a)(c, a, __VA_ARGS__)
#define shmem_put_signal_nbi(...)                                                                  \
    WEFT_SHMEM_CAT(weft_shmem_put_signal_nbi_, WEFT_SHMEM_NARG(__VA_ARGS__))(__VA_ARGS__)

/* Collectives on teams: (team, dest, ...), chosen by dest's type. */
#define shmem_broadcast(team, dest, ...)                                                           \
    _Generic(*(dest), float                                                                        \
             : shmem_float_broadcast, double                                                       \
             : shmem_double_broadcast, long double                                                 \
             : shmem_longdouble_broadcast, char                                                    \
             : shmem_char_broadcast, signed char                                                   \
             : shmem_schar_broadcast, short                                                        \
             : shmem_short_broadcast, int                                                          \
             : shmem_int_broadcast, long                                                           \
             : shmem_long_broadcast, long long                                                     \
             : shmem_longlong_broadcast, unsigned char                                             \
             : shmem_uchar_broadcast, unsigned short                                               \
             : shmem_ushort_broadcast, unsigned int                                                \
             : shmem_uint_broadcast, unsigned long                                                 \
             : shmem_ulong_broadcast, unsigned long long                                           \
             : shmem_ulonglong_broadcast)(team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...)                                                             \
    _Generic(*(dest), float                                                                        \
             : shmem_float_collect, double                                                         \
             : shmem_double_collect, long double                                                   \
             : shmem_longdouble_collect, char                                                      \
             : shmem_char_collect, signed char                                                     \
             : shmem_schar_collect, short                                                          \
             : shmem_short_collect, int                                                            \
             : shmem_int_collect, long                                                             \
             : shmem_long_collect, long long                                                       \
             : shmem_longlong_collect, unsigned char                                               \
             : shmem_uchar_collect, unsigned short                                                 \
             : shmem_ushort_collect, unsigned int                                                  \
             : shmem_uint_collect, unsigned long                                                   \
             : shmem_ulong_collect, unsigned long long                                             \
             : shmem_ulonglong_collect)(team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...)                                                            \
    _Generic(*(dest), float                                                                        \
             : shmem_float_fcollect, double                                                        \
             : shmem_double_fcollect, long double                                                  \
             : shmem_longdouble_fcollect, char                                                     \
             : shmem_char_fcollect, signed char                                                    \
             : shmem_schar_fcollect, short                                                         \
             : shmem_short_fcollect, int                                                           \
             : shmem_int_fcollect, long                                                            \
             : shmem_long_fcollect, long long                                                      \
             : shmem_longlong_fcollect, unsigned char                                              \
             : shmem_uchar_fcollect, unsigned short                                                \
             : shmem_ushort_fcollect, unsigned int                                                 \
             : shmem_uint_fcollect, unsigned long                                                  \
             : shmem_ulong_fcollect, unsigned long long                                            \
             : shmem_ulonglong_fcollect)(team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...)                                                            \
    _Generic(*(dest), float                                                                        \
             : shmem_float_alltoall, double                                                        \
             : shmem_double_alltoall, long double                                                  \
             : shmem_longdouble_alltoall, char                                                     \
             : shmem_char_alltoall, signed char                                                    \
             : shmem_schar_alltoall, short                                                         \
             : shmem_short_alltoall, int                                                           \
             : shmem_int_alltoall, long                                                            \
             : shmem_long_alltoall, long long                                                      \
             : shmem_longlong_alltoall, unsigned char                                              \
             : shmem_uchar_alltoall, unsigned short                                                \
             : shmem_ushort_alltoall, unsigned int                                                 \
             : shmem_uint_alltoall, unsigned long                                                  \
             : shmem_ulong_alltoall, unsigned long long                                            \
             : shmem_ulonglong_alltoall)(team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...)                                                           \
    _Generic(*(dest), float                                                                        \
             : shmem_float_alltoalls, double                                                       \
             : shmem_double_alltoalls, long double                                                 \
             : shmem_longdouble_alltoalls, char                                                    \
             : shmem_char_alltoalls, signed char                                                   \
             : shmem_schar_alltoalls, short                                                        \
             : shmem_short_alltoalls, int                                                          \
             : shmem_int_alltoalls, long                                                           \
             : shmem_long_alltoalls, long long                                                     \
             : shmem_longlong_alltoalls, unsigned char                                             \
             : shmem_uchar_alltoalls, unsigned short                                               \
             : shmem_ushort_alltoalls, unsigned int                                                \
             : shmem_uint_alltoalls, unsigned long                                                 \
             : shmem_ulong_alltoalls, unsigned long long                                           \
             : shmem_ulonglong_alltoalls)(team, dest, __VA_ARGS__)
#define shmem_and_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), unsigned char                                                                \
             : shmem_uchar_and_reduce, unsigned short                                              \
             : shmem_ushort_and_reduce, unsigned int                                               \
             : shmem_uint_and_reduce, unsigned long                                                \
             : shmem_ulong_and_reduce, unsigned long long                                          \
             : shmem_ulonglong_and_reduce)(team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...)                                                           \
    _Generic(*(dest), unsigned char                                                                \
             : shmem_uchar_or_reduce, unsigned short                                               \
             : shmem_ushort_or_reduce, unsigned int                                                \
             : shmem_uint_or_reduce, unsigned long                                                 \
             : shmem_ulong_or_reduce, unsigned long long                                           \
             : shmem_ulonglong_or_reduce)(team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), unsigned char                                                                \
             : shmem_uchar_xor_reduce, unsigned short                                              \
             : shmem_ushort_xor_reduce, unsigned int                                               \
             : shmem_uint_xor_reduce, unsigned long                                                \
             : shmem_ulong_xor_reduce, unsigned long long                                          \
             : shmem_ulonglong_xor_reduce)(team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), char                                                                         \
             : shmem_char_max_reduce, signed char                                                  \
             : shmem_schar_max_reduce, short                                                       \
             : shmem_short_max_reduce, int                                                         \
             : shmem_int_max_reduce, long                                                          \
             : shmem_long_max_reduce, long long                                                    \
             : shmem_longlong_max_reduce, unsigned char                                            \
             : shmem_uchar_max_reduce, unsigned short                                              \
             : shmem_ushort_max_reduce, unsigned int                                               \
             : shmem_uint_max_reduce, unsigned long                                                \
             : shmem_ulong_max_reduce, unsigned long long                                          \
             : shmem_ulonglong_max_reduce, float                                                   \
             : shmem_float_max_reduce, double                                                      \
             : shmem_double_max_reduce, long double                                                \
             : shmem_longdouble_max_reduce)(team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), char                                                                         \
             : shmem_char_min_reduce, signed char                                                  \
             : shmem_schar_min_reduce, short                                                       \
             : shmem_short_min_reduce, int                                                         \
             : shmem_int_min_reduce, long                                                          \
             : shmem_long_min_reduce, long long                                                    \
             : shmem_longlong_min_reduce, unsigned char                                            \
             : shmem_uchar_min_reduce, unsigned short                                              \
             : shmem_ushort_min_reduce, unsigned int                                               \
             : shmem_uint_min_reduce, unsigned long                                                \
             : shmem_ulong_min_reduce, unsigned long long                                          \
             : shmem_ulonglong_min_reduce, float                                                   \
             : shmem_float_min_reduce, double                                                      \
             : shmem_double_min_reduce, long double                                                \
             : shmem_longdouble_min_reduce)(team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...)                                                          \
    _Generic(*(dest), char                                                                         \
             : shmem_char_sum_reduce, signed char                                                  \
             : shmem_schar_sum_reduce, short                                                       \
             : shmem_short_sum_reduce, int                                                         \
             : shmem_int_sum_reduce, long                                                          \
             : shmem_long_sum_reduce, long long                                                    \
             : shmem_longlong_sum_reduce, unsigned char                                            \
             : shmem_uchar_sum_reduce, unsigned short                                              \
             : shmem_ushort_sum_reduce, unsigned int                                               \
             : shmem_uint_sum_reduce, unsigned long                                                \
             : shmem_ulong_sum_reduce, unsigned long long                                          \
             : shmem_ulonglong_sum_reduce, float                                                   \
             : shmem_float_sum_reduce, double                                                      \
             : shmem_double_sum_reduce, long double                                                \
             : shmem_longdouble_sum_reduce, double _Complex                                        \
             : shmem_complexd_sum_reduce, float _Complex                                           \
             : shmem_complexf_sum_reduce)(team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...)                                                         \
    _Generic(*(dest), char                                                                         \
             : shmem_char_prod_reduce, signed char                                                 \
             : shmem_schar_prod_reduce, short                                                      \
             : shmem_short_prod_reduce, int                                                        \
             : shmem_int_prod_reduce, long                                                         \
             : shmem_long_prod_reduce, long long                                                   \
             : shmem_longlong_prod_reduce, unsigned char                                           \
             : shmem_uchar_prod_reduce, unsigned short                                             \
             : shmem_ushort_prod_reduce, unsigned int                                              \
             : shmem_uint_prod_reduce, unsigned long                                               \
             : shmem_ulong_prod_reduce, unsigned long long                                         \
             : shmem_ulonglong_prod_reduce, float                                                  \
             : shmem_float_prod_reduce, double                                                     \
             : shmem_double_prod_reduce, long double                                               \
             : shmem_longdouble_prod_reduce, double _Complex                                       \
             : shmem_complexd_prod_reduce, float _Complex                                          \
             : shmem_complexf_prod_reduce)(team, dest, __VA_ARGS__)

/* Point-to-point synchronization on arrays. */
#define shmem_wait_until_all(ivars, ...)                                                           \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_wait_until_all, int                                                     \
             : shmem_int_wait_until_all, long                                                      \
             : shmem_long_wait_until_all, long long                                                \
             : shmem_longlong_wait_until_all, unsigned short                                       \
             : shmem_ushort_wait_until_all, unsigned int                                           \
             : shmem_uint_wait_until_all, unsigned long                                            \
             : shmem_ulong_wait_until_all, unsigned long long                                      \
             : shmem_ulonglong_wait_until_all)(ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...)                                                           \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_wait_until_any, int                                                     \
             : shmem_int_wait_until_any, long                                                      \
             : shmem_long_wait_until_any, long long                                                \
             : shmem_longlong_wait_until_any, unsigned short                                       \
             : shmem_ushort_wait_until_any, unsigned int                                           \
             : shmem_uint_wait_until_any, unsigned long                                            \
             : shmem_ulong_wait_until_any, unsigned long long                                      \
             : shmem_ulonglong_wait_until_any)(ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...)                                                          \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_wait_until_some, int                                                    \
             : shmem_int_wait_until_some, long                                                     \
             : shmem_long_wait_until_some, long long                                               \
             : shmem_longlong_wait_until_some, unsigned short                                      \
             : shmem_ushort_wait_until_some, unsigned int                                          \
             : shmem_uint_wait_until_some, unsigned long                                           \
             : shmem_ulong_wait_until_some, unsigned long long                                     \
             : shmem_ulonglong_wait_until_some)(ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...)                                                    \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_wait_until_all_vector, int                                              \
             : shmem_int_wait_until_all_vector, long                                               \
             : shmem_long_wait_until_all_vector, long long                                         \
             : shmem_longlong_wait_until_all_vector, unsigned short                                \
             : shmem_ushort_wait_until_all_vector, unsigned int                                    \
             : shmem_uint_wait_until_all_vector, unsigned long                                     \
             : shmem_ulong_wait_until_all_vector, unsigned long long                               \
             : shmem_ulonglong_wait_until_all_vector)(ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...)                                                    \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_wait_until_any_vector, int                                              \
             : shmem_int_wait_until_any_vector, long                                               \
             : shmem_long_wait_until_any_vector, long long                                         \
             : shmem_longlong_wait_until_any_vector, unsigned short                                \
             : shmem_ushort_wait_until_any_vector, unsigned int                                    \
             : shmem_uint_wait_until_any_vector, unsigned long                                     \
             : shmem_ulong_wait_until_any_vector, unsigned long long                               \
             : shmem_ulonglong_wait_until_any_vector)(ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...)                                                   \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_wait_until_some_vector, int                                             \
             : shmem_int_wait_until_some_vector, long                                              \
             : shmem_long_wait_until_some_vector, long long                                        \
             : shmem_longlong_wait_until_some_vector, unsigned short                               \
             : shmem_ushort_wait_until_some_vector, unsigned int                                   \
             : shmem_uint_wait_until_some_vector, unsigned long                                    \
             : shmem_ulong_wait_until_some_vector, unsigned long long                              \
             : shmem_ulonglong_wait_until_some_vector)(ivars, __VA_ARGS__)
#define shmem_test_all(ivars, ...)                                                                 \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_test_all, int                                                           \
             : shmem_int_test_all, long                                                            \
             : shmem_long_test_all, long long                                                      \
             : shmem_longlong_test_all, unsigned short                                             \
             : shmem_ushort_test_all, unsigned int                                                 \
             : shmem_uint_test_all, unsigned long                                                  \
             : shmem_ulong_test_all, unsigned long long                                            \
             : shmem_ulonglong_test_all)(ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...)                                                                 \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_test_any, int                                                           \
             : shmem_int_test_any, long                                                            \
             : shmem_long_test_any, long long                                                      \
             : shmem_longlong_test_any, unsigned short                                             \
             : shmem_ushort_test_any, unsigned int                                                 \
             : shmem_uint_test_any, unsigned long                                                  \
             : shmem_ulong_test_any, unsigned long long                                            \
             : shmem_ulonglong_test_any)(ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...)                                                                \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_test_some, int                                                          \
             : shmem_int_test_some, long                                                           \
             : shmem_long_test_some, long long                                                     \
             : shmem_longlong_test_some, unsigned short                                            \
             : shmem_ushort_test_some, unsigned int                                                \
             : shmem_uint_test_some, unsigned long                                                 \
             : shmem_ulong_test_some, unsigned long long                                           \
             : shmem_ulonglong_test_some)(ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...)                                                          \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_test_all_vector, int                                                    \
             : shmem_int_test_all_vector, long                                                     \
             : shmem_long_test_all_vector, long long                                               \
             : shmem_longlong_test_all_vector, unsigned short                                      \
             : shmem_ushort_test_all_vector, unsigned int                                          \
             : shmem_uint_test_all_vector, unsigned long                                           \
             : shmem_ulong_test_all_vector, unsigned long long                                     \
             : shmem_ulonglong_test_all_vector)(ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...)                                                          \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_test_any_vector, int                                                    \
             : shmem_int_test_any_vector, long                                                     \
             : shmem_long_test_any_vector, long long                                               \
             : shmem_longlong_test_any_vector, unsigned short                                      \
             : shmem_ushort_test_any_vector, unsigned int                                          \
             : shmem_uint_test_any_vector, unsigned long                                           \
             : shmem_ulong_test_any_vector, unsigned long long                                     \
             : shmem_ulonglong_test_any_vector)(ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...)                                                         \
    _Generic(*(ivars), short                                                                       \
             : shmem_short_test_some_vector, int                                                   \
             : shmem_int_test_some_vector, long                                                    \
             : shmem_long_test_some_vector, long long                                              \
             : shmem_longlong_test_some_vector, unsigned short                                     \
             : shmem_ushort_test_some_vector, unsigned int                                         \
             : shmem_uint_test_some_vector, unsigned long                                          \
             : shmem_ulong_test_some_vector, unsigned long long                                    \
             : shmem_ulonglong_test_some_vector)(ivars, __VA_ARGS__)

#endif
