/* weft — the dynamic broadcast: one piece of data to any set of ranks, from
 * any rank, with no communicator and no barrier (seed 000: NewMadeleine's
 * multicast, which StarPU's NewMadeleine back end used).
 *
 * The root names the destinations; the others call nothing of this layer:
 * each receives the data with a plain receive from the root on (comm, tag)
 * (weft_sr_irecv, a wildcard receive, a probe) and cannot tell it from a
 * send of the root's. On the way the message carries the routing of its
 * subtree, and each destination forwards it to its children from inside
 * the progress engine, before or whether or not its application posted the
 * receive. A destination forwards while it is inside weft (any wait, test or
 * weft_progress) or when it runs a progress thread (WEFT_PROGRESS_THREAD=1).
 *
 * Data above the inline size travels in pieces (WEFT_BCAST_PIECE bytes,
 * 256 KiB by default) that are forwarded as they arrive; each piece follows
 * the engine's rendezvous rules at every hop, so a rank holds at most the
 * broadcast's own bytes. Where the destination's receive is posted before
 * the data comes, the pieces land in its buffer; else the destination keeps
 * the data until its application receives it, as an unexpected message.
 *
 * Completion: the root's object is signaled once every destination has the
 * data (each acknowledges up the tree), or has been found dead. Its entry:
 * user_context as given, tag the tag, length the length, error WEFT_OK or
 * WEFT_EPEERDEAD with source a rank that died (else the root). A destination
 * whose parent in the tree died is served by the root directly, so nobody
 * waits for ever: the live ones get the data, the dead ones are named.
 *
 * Order: broadcasts are not ordered with each other nor with the root's
 * sends on the same (comm, tag): give them distinct tags where the order
 * matters. Engine communicator ids 0xffffff11, 0xffffff17 and 0xffffff18 are
 * this layer's own. Ranks of the job only (not linked peers), up to 2^24.
 */
#ifndef WEFT_WEFT_BCAST_H
#define WEFT_WEFT_BCAST_H

#include "weft.h"
#include "weft_comp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The shape of the tree. */
typedef enum weft_bcast_tree {
    WEFT_BCAST_BINOMIAL = 0, /* the default: log2(n+1) steps */
    WEFT_BCAST_KARY = 1,     /* each rank forwards to `arity` children */
    WEFT_BCAST_CHAIN = 2,    /* each rank forwards to the next one (a pipeline) */
} weft_bcast_tree_t;

/* Options of a broadcast; NULL, or all zero, takes the defaults. */
typedef struct weft_bcast_opts {
    uint32_t tree;     /* weft_bcast_tree_t */
    uint32_t arity;    /* WEFT_BCAST_KARY: children per rank (0: 2) */
    size_t piece;      /* bytes per piece (0: WEFT_BCAST_PIECE) */
    size_t inline_max; /* data up to this rides in the routing message (0: WEFT_BCAST_INLINE) */
} weft_bcast_opts_t;

/* Broadcast len bytes at buf from this rank to the n ranks in ranks[]
 * (distinct, not this rank) as a message on (comm, tag). priorities[] (may
 * be NULL: all equal) orders them: higher first, those of equal priority in
 * the order given; the first ones sit nearest the root and get the data
 * first. The buffer must stay unchanged until done is signaled (see the
 * top of this file); n == 0 signals done at once. Errors, with nothing
 * sent: WEFT_EINVAL (NULL ctx or done, buf NULL with len, ranks NULL with n,
 * n < 0, a repeated rank, an unknown tree, tag WEFT_ANY_TAG), WEFT_ERANK (a
 * rank outside the job, or this rank), WEFT_EUNSUPPORTED (a job of 2^24
 * ranks or more, a broadcast of more than 65535 pieces), WEFT_ENOMEM.
 * Thread-safe. */
WEFT_API int weft_bcast_dynamic(weft_ctx_t *ctx, const void *buf, size_t len, const int *ranks,
                                const int *priorities, int n, uint32_t comm, uint64_t tag,
                                const weft_bcast_opts_t *opts, weft_comp_t *done,
                                void *user_context);

/* What this rank's broadcast layer did. */
typedef struct weft_bcast_counters {
    uint64_t started;   /* broadcasts this rank was the root of */
    uint64_t received;  /* broadcasts that reached this rank as a destination */
    uint64_t forwarded; /* routing messages and pieces this rank forwarded */
    uint64_t redone;    /* destinations the root served itself after a death */
    uint64_t dead;      /* dead ranks reported to this rank as a root */
} weft_bcast_counters_t;

/* Fill *out. WEFT_EINVAL for NULL. Thread-safe. */
WEFT_API int weft_bcast_counters_get(weft_ctx_t *ctx, weft_bcast_counters_t *out);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_BCAST_H */
