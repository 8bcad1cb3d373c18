/* Constant-time tag matching (seed 000, "A constant-time tag matching algorithm").
 *
 * Posted receives are classified by what they specify:
 *   fully specified  (comm, source, tag)  -> hash of (comm, source, tag)
 *   any source       (comm, tag)          -> hash of (comm, tag)
 *   any tag          (comm, source)       -> hash of (comm, source)
 *   both wildcards   (comm)               -> hash of (comm)
 * Each bucket entry holds a FIFO of posted receives. Every receive carries a
 * global posting sequence number, so an arriving message looks at the heads of
 * at most four FIFOs and takes the oldest: O(1) whatever the number posted.
 *
 * Unexpected messages (arrived before their receive) are linked into four FIFOs
 * — (comm, source, tag), (comm, tag), (comm, source), (comm) — through four
 * intrusive links, so a receive of any class finds the oldest matching message
 * at the head of one FIFO and removal from all four is O(1). The three
 * wildcard FIFOs are filled only while some wildcard receive or probe may
 * read them (see match.c): a job that names source and tag pays for one. A
 * message alone under its exact key needs no entry at all: it sits in the
 * hash bucket's chain itself, so a receive naming source and tag reaches it
 * from the bucket in one step.
 *
 * The caller feeds arrivals in each peer's send order; that is what keeps MPI's
 * non-overtaking rule. The structure does no locking and no allocation of the
 * receive and message objects, which the caller embeds.
 */
#ifndef WEFT_MATCH_H
#define WEFT_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/list.h"

#define WEFT_MATCH_ANY_SOURCE (-1)
#define WEFT_MATCH_ANY_TAG    UINT64_MAX

typedef struct weft__match_entry weft__match_entry_t; /* a hash bucket entry (private) */

/* Embedded in a receive request. Zero-initialise it (cancel reads link), then
 * fill comm, source, tag before posting; leave them unchanged while posted. A
 * receive naming source and tag alone under its key has no entry: like a
 * lone message (below), it sits in its bucket's chain. */
typedef struct weft__match_recv {
    uint32_t comm;
    int32_t source; /* rank or WEFT_MATCH_ANY_SOURCE */
    uint64_t tag;   /* tag or WEFT_MATCH_ANY_TAG */
    /* private: */
    uint64_t seq; /* global posting order */
    union {
        weft_list_t link;   /* in its class's FIFO; prev == NULL while not posted */
        struct {            /* or alone under its key, in the bucket chain (match.c) */
            uintptr_t next; /* the chain's next node */
            uintptr_t lone; /* where link.prev lies: a mark, never an aligned pointer */
        } chain;
    };
} weft__match_recv_t;

/* The four classes (a message's wildcard links are wild[idx - 1]). */
enum {
    WEFT_MATCH_IDX_SPEC = 0, /* (comm, source, tag) */
    WEFT_MATCH_IDX_TAG,      /* (comm, tag): for any-source receives */
    WEFT_MATCH_IDX_SRC,      /* (comm, source): for any-tag receives */
    WEFT_MATCH_IDX_ALL,      /* (comm): for full wildcards */
    WEFT_MATCH_NIDX
};

/* Embedded in an unexpected-message descriptor. Zero-initialise it (remove_msg
 * reads link), then fill comm, source (a rank, >= 0) and tag (never
 * WEFT_MATCH_ANY_TAG); leave them unchanged while it is inside. 88 bytes: the
 * links of the wildcard FIFOs and the arrival order (read only while wildcard
 * receives look) come first, the key and the exact-key link last, so an owner
 * that places the structure 8 bytes into a cache line gets the key, the link
 * and 32 bytes of its own in the next line, and a receive naming source and
 * tag reads that line only. A message keeps no pointer to its entries: it needs
 * one only when it leaves a FIFO it was alone in, and then both its
 * neighbours are that entry's list head. A message alone under its exact key
 * has no exact-key entry: the same 16 bytes then chain it into its bucket. */
typedef struct weft__match_msg {
    /* private: */
    weft_list_t wild[WEFT_MATCH_NIDX - 1]; /* in the TAG, SRC and ALL FIFOs, while kept */
    uint64_t arrival;                      /* arrival order, for the wildcard FIFOs */
    /* public: */
    uint32_t comm;
    int32_t source;
    uint64_t tag;
    /* private: */
    union {
        weft_list_t link;   /* in its exact-key entry's FIFO; prev == NULL while not inside */
        struct {            /* or alone under its key, in the bucket chain (match.c) */
            uintptr_t next; /* the chain's next node */
            uintptr_t lone; /* where link.prev lies: a mark, never an aligned pointer */
        } chain;
    };
} weft__match_msg_t;

typedef struct weft__match weft__match_t;

/* What the structure holds, first in it, so a hot path can read it inline. */
typedef struct weft__match_counts {
    size_t posted;     /* receives posted */
    size_t unexpected; /* unexpected messages inside */
} weft__match_counts_t;

/* Whether an unexpected message waits (a receive may find its message). */
static inline bool weft__match_any_unexpected(const weft__match_t *m)
{
    return ((const weft__match_counts_t *)(const void *)m)->unexpected != 0;
}

int weft__match_create(weft__match_t **out);
/* Free the structure. Receives and messages still inside are simply forgotten
 * (their owner frees them). */
void weft__match_destroy(weft__match_t *m);

/* A message (comm, source, tag) arrived: remove and return the oldest posted
 * receive that matches it, or NULL (the caller then adds it as unexpected).
 * A message with source < 0 or tag WEFT_MATCH_ANY_TAG matches nothing. */
weft__match_recv_t *weft__match_arrive(weft__match_t *m, uint32_t comm, int32_t source,
                                       uint64_t tag);
/* The receive weft__match_arrive would return for such a message, left in place. */
weft__match_recv_t *weft__match_first_recv(weft__match_t *m, uint32_t comm, int32_t source,
                                           uint64_t tag);
/* Record an unexpected message (after weft__match_arrive returned NULL). May fail
 * with WEFT_ENOMEM (nothing was recorded), or WEFT_EINVAL when its source is < 0,
 * its tag is WEFT_MATCH_ANY_TAG, or a receive naming its source and tag is
 * posted (weft__match_arrive was not asked first). */
int weft__match_add_unexpected(weft__match_t *m, weft__match_msg_t *msg);

/* Post a receive: if an unexpected message matches, remove and return the oldest
 * such message and leave the receive unposted; otherwise post the receive and
 * return NULL. *err is set to WEFT_OK or WEFT_ENOMEM (then nothing was posted). */
weft__match_msg_t *weft__match_post(weft__match_t *m, weft__match_recv_t *recv, int *err);

/* The oldest unexpected message that a receive (comm, source, tag) — wildcards
 * allowed — would match, left in place; NULL if none. */
weft__match_msg_t *weft__match_peek(weft__match_t *m, uint32_t comm, int32_t source, uint64_t tag);
/* Remove an unexpected message found by peek. Harmless on a message that is
 * not inside (already removed or returned by post). */
void weft__match_remove_msg(weft__match_t *m, weft__match_msg_t *msg);
/* Whether an unexpected message is still in the structure (not yet returned
 * by post nor removed). */
static inline bool weft__match_msg_inside(const weft__match_msg_t *msg)
{
    return msg->link.prev != NULL;
}
/* Remove a posted receive that has not matched (cancel). Returns true if it was
 * posted, false if it was not (already matched or never posted). */
bool weft__match_cancel(weft__match_t *m, weft__match_recv_t *recv);

/* Counts of posted receives and unexpected messages (for counters and tests). */
size_t weft__match_posted_count(const weft__match_t *m);
size_t weft__match_unexpected_count(const weft__match_t *m);

#endif
