/* Helpers shared by weft's test programs: checks that say where they failed,
 * deterministic data patterns, a watchdog. */
#ifndef WEFT_TEST_UTIL_H
#define WEFT_TEST_UTIL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "weft/weft.h"

static int test_rank = -1;
static long test_passed, test_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            test_passed++;                                                                         \
        } else {                                                                                   \
            test_failed++;                                                                         \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", test_rank, __FILE__, __LINE__,  \
                    #cond);                                                                        \
        }                                                                                          \
    } while (0)

/* CHECK from several threads (a handler on the progress thread, worker
 * threads): the counters are shared, so each check takes a lock. */
static pthread_mutex_t test_check_lock __attribute__((unused)) = PTHREAD_MUTEX_INITIALIZER;
#define LCHECK(cond)                                                                               \
    do {                                                                                           \
        pthread_mutex_lock(&test_check_lock);                                                      \
        CHECK(cond);                                                                               \
        pthread_mutex_unlock(&test_check_lock);                                                    \
    } while (0)

/* A call that must succeed; on failure the test cannot go on. */
#define MUST(call)                                                                                 \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != WEFT_OK) {                                                                      \
            fprintf(stderr, "[rank %d] %s:%d: %s failed: %s (%d)\n", test_rank, __FILE__,          \
                    __LINE__, #call, weft_strerror(rc_), rc_);                                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Byte i of message "key": any two messages differ, and a shifted copy fails. */
static inline uint8_t test_byte(uint64_t key, size_t i)
{
    uint64_t x = key * 0x9E3779B97F4A7C15ull + i;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint8_t)x;
}

static inline void test_fill(void *buf, size_t len, uint64_t key)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = test_byte(key, i);
}

/* Index of the first wrong byte, or -1. */
static inline long test_verify(const void *buf, size_t len, uint64_t key)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        if (p[i] != test_byte(key, i))
            return (long)i;
    return -1;
}

/* Seconds on the monotonic clock. */
static inline double test_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_watchdog_fired(int sig)
{
    (void)sig;
    static const char msg[] = "test watchdog: time limit reached\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(124);
}

static inline void test_watchdog(unsigned seconds)
{
    signal(SIGALRM, test_watchdog_fired);
    alarm(seconds);
}

/* Join the job; a test that needs at least min_ranks ranks and has fewer says
 * so and exits 77 (skipped). */
static inline weft_ctx_t *test_init(const char *name, int min_ranks)
{
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    test_rank = weft_rank(ctx);
    if (weft_size(ctx) < min_ranks) {
        printf("%s: needs %d ranks; skipped\n", name, min_ranks);
        weft_finalize(ctx);
        exit(77);
    }
    return ctx;
}

/* A zero-byte message on comm/tag, sent to or received from peer and waited
 * for: the tests' way to say "I got this far". */
static inline void test_note(weft_ctx_t *ctx, int peer, bool send, uint32_t comm, uint64_t tag)
{
    weft_request_t *req;
    if (send)
        MUST(weft_sr_isend(ctx, peer, comm, tag, NULL, 0, &req));
    else
        MUST(weft_sr_irecv(ctx, peer, comm, tag, NULL, 0, &req));
    MUST(weft_sr_wait(ctx, req, NULL));
}

/* Every rank of ctx's job reaches this point before any leaves it: notes to
 * rank 0 on comm/tag, then from it. */
static inline void test_barrier(weft_ctx_t *ctx, uint32_t comm, uint64_t tag)
{
    int rank = weft_rank(ctx), size = weft_size(ctx);
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            test_note(ctx, r, false, comm, tag);
        for (int r = 1; r < size; r++)
            test_note(ctx, r, true, comm, tag);
    } else {
        test_note(ctx, 0, true, comm, tag);
        test_note(ctx, 0, false, comm, tag);
    }
}

/* Print the closing line and return the exit code. */
static inline int test_summary(const char *name)
{
    if (test_rank <= 0)
        printf("%s: %ld passed, %ld failed\n", name, test_passed, test_failed);
    else if (test_failed)
        printf("[rank %d] %s: %ld passed, %ld failed\n", test_rank, name, test_passed, test_failed);
    fflush(stdout);
    return test_failed ? 1 : 0;
}

#endif
