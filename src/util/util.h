/* Small helpers shared by every layer. */
#ifndef WEFT_UTIL_H
#define WEFT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define WEFT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define WEFT_CACHELINE   64
#define WEFT_INTERNAL    __attribute__((visibility("hidden")))

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

#endif
