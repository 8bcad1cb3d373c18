/* What the completion-object tests share (test_comp_*.c): a signal as the
 * engine sends one, and a wait for a thread to announce its sleep. */
#ifndef WEFT_TESTS_COMP_TEST_H
#define WEFT_TESTS_COMP_TEST_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "../common/test_util.h"
#include "progress/progress_int.h"

/* Signals that kept their node (none may: comp_signal's are on the stack,
 * and only a full queue keeps one); counted atomically, since threads
 * signal, and checked by main. */
static atomic_int comp_kept;

/* Signal comp as the engine does, with an entry of these fields. */
static inline void comp_signal(weft_comp_t *comp, void *uc, int error, int source, uint64_t tag,
                               size_t len)
{
    weft__comp_node_t n = {
        .comp = comp,
        .entry = {.user_context = uc, .error = error, .source = source, .tag = tag, .length = len}};
    if (weft__comp_signal(&n))
        atomic_fetch_add(&comp_kept, 1);
}

/* The closing line, after the check that no signal was kept. */
static inline int comp_summary(const char *name)
{
    CHECK(atomic_load(&comp_kept) == 0);
    return test_summary(name);
}

static inline void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Wait (at most a minute, however loaded the machine) until a waiter
 * without a context announced its sleep on w; whether it did. */
static inline bool comp_sleeper_seen(weft__waitword_t *w)
{
    for (int i = 0; i < 6000; i++) {
        if (atomic_load(&w->sleepers))
            return true;
        sleep_ms(10);
    }
    return false;
}

static inline bool entry_is(const weft_comp_entry_t *e, void *uc, int error, int source,
                            uint64_t tag, size_t len)
{
    return e->user_context == uc && e->error == error && e->source == source && e->tag == tag &&
           e->length == len;
}

#endif
