/* The timeline trace (WEFT_TRACE=path): events of the engine into per-thread
 * buffers, written as Chrome trace-event JSON when the context ends.
 *
 * Off (the usual case), an event point costs one load and one predictable
 * branch: weft__tracer is NULL. On, an event is a timestamp and five 64-bit
 * arguments appended to the calling thread's own buffer, with no lock; a
 * full buffer drops events and counts them, never blocks. The buffers are
 * written by weft__trace_finish, at weft_finalize, outside any hot path. */
#ifndef WEFT_TRACE_H
#define WEFT_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

/* What happened. The names, categories and argument names are in trace.c's
 * table, in this order. */
typedef enum weft_trace_kind {
    WEFT_TR_ISEND,        /* peer, tag, length, comm */
    WEFT_TR_IRECV,        /* peer (-1: any), tag, length, comm */
    WEFT_TR_PACKET,       /* peer, chunks, bytes, strategy and driver names (const char *) */
    WEFT_TR_LONE,         /* peer, bytes, payload, -, driver: a packet past the scheduler */
    WEFT_TR_ARRIVE,       /* peer, bytes: a packet taken from the driver */
    WEFT_TR_MATCH,        /* peer, tag, length, 1: expected (a receive waited) 0: unexpected */
    WEFT_TR_UNEXPECTED,   /* peer, tag, length, depth of the unexpected queue */
    WEFT_TR_RDV,          /* peer, tag, length: a rendezvous announced */
    WEFT_TR_RTR,          /* peer, length: a receiver asks for a rendezvous' data as packets */
    WEFT_TR_ACK,          /* peer: a receiver has a rendezvous' data (it read it, or took none) */
    WEFT_TR_CREDIT_STALL, /* peer, length: an eager send turned rendezvous for credit */
    WEFT_TR_PIECE,        /* peer, bytes, 1: this side copied out of the engine lock */
    WEFT_TR_WAIT,         /* a thread waiting for a request (begin/end) */
    WEFT_TR_CALLBACK,     /* a progress callback that did work: id, events, ns it took */
    WEFT_TR_SLEEP,        /* a sleep on the drivers' doorbells (begin/end) */
    WEFT_TR_NKINDS
} weft_trace_kind_t;

/* The phase of an event: a point in time, or the begin or end of a span. */
enum { WEFT_TR_I = 0, WEFT_TR_B = 1, WEFT_TR_E = 2 };

typedef struct weft_tracer weft_tracer_t;

/* The process's tracer; NULL when tracing is off. */
extern weft_tracer_t *weft__tracer;

/* Whether tracing is on: the one load and branch of every event point. */
static inline bool weft__trace_on(void)
{
    return __atomic_load_n(&weft__tracer, __ATOMIC_RELAXED) != NULL;
}

/* Record one event of the calling thread (tracing on). */
void weft__trace_emit(int kind, int phase, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                      uint64_t e);

#define WEFT_TRACE(kind, phase, a, b, c, d) WEFT_TRACE5(kind, phase, a, b, c, d, 0)
#define WEFT_TRACE5(kind, phase, a, b, c, d, e)                                                    \
    do {                                                                                           \
        if (WEFT_UNLIKELY(weft__trace_on()))                                                       \
            weft__trace_emit((kind), (phase), (uint64_t)(a), (uint64_t)(b), (uint64_t)(c),         \
                             (uint64_t)(d), (uint64_t)(e));                                        \
    } while (0)

/* Start tracing into files named after path (see weft__trace_finish), when
 * path is not NULL; events per thread buffer: events. 0 or an error
 * (WEFT_ENOMEM). Called once, at init, before any event. */
int weft__trace_start(const char *path, uint64_t events);

/* Name the calling thread in the trace ("progress"); a no-op when off. */
void weft__trace_thread_name(const char *name);

/* Write the trace of this process as rank of size ranks to the start's path
 * ("%r" in it replaced by the rank, else ".<rank>.json" appended), with node
 * (the node's id) in its metadata, free the buffers and turn tracing off.
 * No thread may emit any more. Returns 0, or -1 when the file could not be
 * written (logged). A no-op when off. */
int weft__trace_finish(int rank, int size, const char *node);

#endif
