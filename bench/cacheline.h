/* Messages handed between two processes through shared cache lines: the
 * floors under any shared-memory transport, timed by bench/raw_cacheline.c
 * (two forked processes) and by weft_pingpong --floor (two ranks, in the same
 * launch as their latency runs). Header only, so that raw_cacheline.c still
 * builds alone with `gcc -O2 bench/raw_cacheline.c`. */
#ifndef WEFT_BENCH_CACHELINE_H
#define WEFT_BENCH_CACHELINE_H

#include <stdatomic.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#define BENCH_LINE_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define BENCH_LINE_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define BENCH_LINE_RELAX() ((void)0)
#endif

typedef struct bench_line {
    _Alignas(64) _Atomic int64_t flag; /* the message number; INT64_MIN: quit */
    int64_t payload[7];
} bench_line_t;

/* How message v goes from one side to the other:
 *   BENCH_LINE  one line both ways, the answer to v is -v: the classic floor;
 *   BENCH_PAIR  one line per direction, each written by one side only;
 *   BENCH_RING  a ring of BENCH_RING_SLOTS one-line slots per direction,
 *               message v in slot v mod BENCH_RING_SLOTS, its flag v (unique,
 *               so the reader never clears it): what a queue of one-line
 *               records, weft's shm rings included, costs before its first
 *               instruction of software. A queue cannot let both directions
 *               share one line: each side would overwrite the other's record.
 * Message numbers only grow, so the patterns may take turns on one mapping:
 * a reader waits for its own number, which no earlier message wrote. */
enum bench_pattern { BENCH_LINE, BENCH_PAIR, BENCH_RING };
#define BENCH_RING_SLOTS  64
#define BENCH_LINES_BYTES (4 * 4096) /* the mapping the patterns need */

/* The line that carries message v from side `from` (0 or 1). */
static inline bench_line_t *bench_line_of(bench_line_t *base, enum bench_pattern p, int from,
                                          int64_t v)
{
    if (p == BENCH_LINE)
        return base + 2 * (BENCH_RING_SLOTS + 1);
    bench_line_t *dir = base + (from ? BENCH_RING_SLOTS + 1 : 0); /* a gap line between */
    return p == BENCH_PAIR ? dir : dir + (v % BENCH_RING_SLOTS);
}

/* One round trip of message v. Side 0 sends v and waits for the answer; side
 * 1 waits for v and answers. Returns -1 when side 1 finds INT64_MIN where it
 * waits (told to quit), else 0. */
static inline int bench_line_step(bench_line_t *base, enum bench_pattern p, int side, int64_t v)
{
    int64_t answer = p == BENCH_LINE ? -v : v;
    bench_line_t *to_1 = bench_line_of(base, p, 0, v), *to_0 = bench_line_of(base, p, 1, v);
    if (side == 0) {
        to_1->payload[0] = v;
        atomic_store_explicit(&to_1->flag, v, memory_order_release);
        while (atomic_load_explicit(&to_0->flag, memory_order_acquire) != answer)
            BENCH_LINE_RELAX();
        return 0;
    }
    int64_t f;
    while ((f = atomic_load_explicit(&to_1->flag, memory_order_acquire)) != v) {
        if (f == INT64_MIN)
            return -1;
        BENCH_LINE_RELAX();
    }
    to_0->payload[0] = to_1->payload[0] + 1;
    atomic_store_explicit(&to_0->flag, answer, memory_order_release);
    return 0;
}

#endif
