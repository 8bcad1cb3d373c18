/* Small helpers shared by every layer. */
#ifndef WEFT_UTIL_H
#define WEFT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WEFT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define WEFT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define WEFT_CACHELINE   64
#define WEFT_INTERNAL    __attribute__((visibility("hidden")))
/* Kept out of line (also by link-time optimization): a rare path whose body
 * would make a hot caller save registers and build a frame on every call. */
#define WEFT_NOINLINE __attribute__((noinline))

#define weft_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#define WEFT_ARRAY_SIZE(a)                   (sizeof(a) / sizeof((a)[0]))
#define WEFT_MIN(a, b)                       ((a) < (b) ? (a) : (b))
#define WEFT_MAX(a, b)                       ((a) > (b) ? (a) : (b))
#define WEFT_ALIGN_UP(x, a)                  (((x) + ((a)-1)) & ~((__typeof__(x))(a)-1))

/* Monotonic time in nanoseconds. */
uint64_t weft__now_ns(void);

/* True when s is 1 to max bytes of [A-Za-z0-9._-]: fit to go into a file or
 * shared-memory name as it is (job ids in segment names). */
int weft__name_plain(const char *s, size_t max);

/* Sequence-number comparison that survives wrap-around of 32-bit counters:
 * true when a comes strictly before b. */
static inline int weft__seq_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* memcpy for the few bytes of a small message or header: up to 32 bytes in
 * overlapping loads and stores, inline, where a call to memcpy costs more
 * than the copy; larger sizes go to memcpy. n may be 0 (then src and dst are
 * not touched and may be NULL). */
static inline void weft__copy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (WEFT_UNLIKELY(n > 32)) {
        memcpy(d, s, n);
    } else if (n > 16) {
        uint64_t a[2], b[2];
        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, b, 16);
    } else if (n >= 8) {
        uint64_t head, tail;
        memcpy(&head, s, 8);
        memcpy(&tail, s + n - 8, 8);
        memcpy(d, &head, 8);
        memcpy(d + n - 8, &tail, 8);
    } else if (n >= 4) {
        uint32_t head, tail;
        memcpy(&head, s, 4);
        memcpy(&tail, s + n - 4, 4);
        memcpy(d, &head, 4);
        memcpy(d + n - 4, &tail, 4);
    } else if (n) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

#endif
