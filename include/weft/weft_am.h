/* weft — active messages with completion objects, and puts with a remote
 * signal: the interface for task runtimes (HPX parcels, StarPU, PaRSEC).
 *
 * A message names a handler id on its target rank, carries a small header
 * (up to WEFT_AM_HEADER_MAX bytes) and a payload; the target registered the
 * id with a completion object (weft_comp.h) and the message is delivered into
 * it as a weft_am_msg_t:
 *
 *   queue    an entry per message: user_context is the weft_am_msg_t, tag the
 *            handler id, source the sender, length the payload's length;
 *   handler  the handler's function is called with that entry by the thread
 *            that progresses (weft_progress, any wait, the progress thread),
 *            never under an engine lock;
 *   counter, synchronizer, flag
 *            signaled once per message; the message itself is dropped (for
 *            puts with a remote signal, whose data is in place already).
 *
 * The message is lent: its header and data stay valid until
 * weft_am_msg_release. A queue's consumer releases what it pops; a handler
 * releases nothing: the message is released when the handler returns,
 * unless the handler called weft_am_msg_keep, and then whoever holds it
 * releases it later, from any thread (a runtime may so keep a payload as a
 * task's argument without copying it out).
 *
 * Small payloads (header and data up to WEFT_AM_EAGER_MAX bytes) travel
 * eagerly and are copied once, out of the driver's buffers into the message.
 * Larger ones go by rendezvous straight into a buffer the target's alloc
 * function returns (or one the layer allocates), with no copy on the way
 * where the driver reads the sender's memory (shared memory, libfabric): the
 * message is delivered once its data is in place.
 *
 * Sending: weft_am_send from an endpoint (weft_am_ep_t), one per thread that
 * sends, so that threads share no state of this layer. A small message to a
 * peer whose track is idle and copies what it sends (shared memory,
 * libfabric) leaves inside the call, with no request and no queue
 * ("send immediate"): WEFT_OK, done, the buffers are free and the local
 * completion object is not signaled. Otherwise the message is queued with
 * the engine's scheduler (which aggregates it with others where the gate's
 * strategy does, WEFT_STRATEGY=aggreg) and WEFT_INPROGRESS says so: the local
 * completion object is signaled once the buffers may be reused. With
 * WEFT_AM_IMMEDIATE a message that cannot leave at once is not queued:
 * WEFT_EAGAIN, nothing done, retry later (back off, poll).
 *
 * Handler ids are the program's: register them on every rank (a message for
 * an id not registered yet waits at its target until it is). Messages from
 * one endpoint to one target are delivered in the order they were sent when
 * all are eager (into a queue or a handler); a rendezvous one is delivered
 * when its data is in place; two endpoints' messages are not ordered.
 *
 * A peer that dies fails the messages still in flight to it: their local
 * completion comes with WEFT_EPEERDEAD and the dead rank in entry.source
 * (for a message that failed, source names the target). Engine communicator
 * ids 0xffffff10 and 0xffffff14 are this layer's own.
 */
#ifndef WEFT_WEFT_AM_H
#define WEFT_WEFT_AM_H

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest header a message carries. */
#define WEFT_AM_HEADER_MAX 128
/* Header and payload up to this many bytes travel eagerly. */
#define WEFT_AM_EAGER_MAX 8192
/* Handler ids are 0 to WEFT_AM_ID_MAX. */
#define WEFT_AM_ID_MAX 1023

/* Flags of weft_am_send and weft_am_put_signal. */
enum {
    /* Do not queue: WEFT_EAGAIN unless the message leaves inside the call. */
    WEFT_AM_IMMEDIATE = 1u << 0,
};

typedef struct weft_am weft_am_t;       /* a context's active-message layer */
typedef struct weft_am_ep weft_am_ep_t; /* a sending endpoint */

/* A delivered message. */
typedef struct weft_am_msg {
    uint32_t id;        /* handler id */
    int source;         /* the sender's rank */
    int error;          /* WEFT_OK; for a rendezvous, the transfer's error (WEFT_EPEERDEAD) */
    uint32_t hlen;      /* header bytes */
    const void *header; /* hlen bytes */
    void *data;         /* the payload: length bytes */
    size_t length;
    uint64_t region_offset; /* a put with a remote signal: where in the region */
    uint32_t region;        /* a put with a remote signal: the region's id, else UINT32_MAX */
    uint32_t reserved;
} weft_am_msg_t;

/* The target's buffer for a rendezvous payload of len bytes whose message
 * is msg (header and source set, data not yet): return len bytes of memory
 * the program owns (the layer never frees it), or NULL for the layer to
 * allocate it (freed at weft_am_msg_release). Called outside the engine's
 * locks by the progressing thread. */
typedef void *(*weft_am_alloc_fn)(size_t len, const weft_am_msg_t *msg, void *arg);

/* The layer of ctx: one per context (a second call returns WEFT_ESTATE).
 * It takes the messages of ids registered later too. WEFT_EINVAL,
 * WEFT_ENOMEM. Thread-safe. */
WEFT_API int weft_am_create(weft_ctx_t *ctx, weft_am_t **am_out);

/* The context am was made for. Thread-safe. */
WEFT_API weft_ctx_t *weft_am_ctx(const weft_am_t *am);

/* Free the layer, its endpoints, its pooled messages and the messages that
 * wait for an id never registered. Call it with no thread using it and no
 * message in flight to or from this rank (a rendezvous still running would
 * complete into freed memory): after the last delivery and a barrier, before
 * weft_finalize. Delivered messages must have been released. NULL is a
 * no-op. */
WEFT_API int weft_am_free(weft_am_t *am);

/* Deliver the messages of handler id into comp (see the top of this file);
 * alloc (may be NULL) gives rendezvous buffers. The comp must stay valid
 * until weft_am_free. WEFT_EINVAL for an id above WEFT_AM_ID_MAX, a NULL or
 * unknown comp; WEFT_ESTATE if id is registered already. Messages that
 * arrived before for id are delivered now. Thread-safe. */
WEFT_API int weft_am_register(weft_am_t *am, uint32_t id, weft_comp_t *comp, weft_am_alloc_fn alloc,
                              void *arg);

/* A memory region a put with a remote signal may write: len bytes at base.
 * *region_out gets its id: ids are given in order from 0, so ranks that
 * register their regions in the same order name them alike (a symmetric
 * region). The memory must stay valid until weft_am_free. WEFT_EINVAL,
 * WEFT_ENOBUFS (64 regions). Thread-safe. */
WEFT_API int weft_am_region_register(weft_am_t *am, void *base, size_t len, uint32_t *region_out);

/* A sending endpoint of am, for one thread (or one at a time). WEFT_EINVAL,
 * WEFT_ENOMEM. Thread-safe. */
WEFT_API int weft_am_ep_create(weft_am_t *am, weft_am_ep_t **ep_out);

/* Free an endpoint; its messages in flight complete all the same. NULL is a
 * no-op. */
WEFT_API int weft_am_ep_free(weft_am_ep_t *ep);

/* Send handler id on rank peer a message of hlen header bytes and the
 * payload gathered from iovcnt pieces (iovcnt >= 0; the array may be reused
 * at once). WEFT_OK: sent, every buffer free, local not signaled.
 * WEFT_INPROGRESS: queued; local (may be NULL) is signaled once with
 * user_context when the buffers may be reused, its entry's source the
 * target, its error WEFT_OK or the failure (WEFT_EPEERDEAD). WEFT_EAGAIN
 * (WEFT_AM_IMMEDIATE only): nothing done. Errors: WEFT_EINVAL (hlen above
 * WEFT_AM_HEADER_MAX, id above WEFT_AM_ID_MAX, NULL pointers, an unknown
 * local), WEFT_ERANK, WEFT_EPEERDEAD, WEFT_ENOMEM. Thread-safe for distinct
 * endpoints. */
WEFT_API int weft_am_send(weft_am_ep_t *ep, int peer, uint32_t id, const void *header, size_t hlen,
                          const struct iovec *iov, int iovcnt, weft_comp_t *local,
                          void *user_context, unsigned flags);

/* Put len bytes at buf into region (the target's id) at offset on rank
 * peer, and deliver there a message for handler id with the header, whose
 * data points at the bytes in the region: LCI's put with a signal. A region
 * too small for offset + len fails at the target: the message is delivered
 * with WEFT_EINVAL and nothing written. Returns and completes as
 * weft_am_send. */
WEFT_API int weft_am_put_signal(weft_am_ep_t *ep, int peer, uint32_t id, const void *header,
                                size_t hlen, const void *buf, size_t len, uint32_t region,
                                uint64_t offset, weft_comp_t *local, void *user_context,
                                unsigned flags);

/* Keep a message past its handler's return (inside a handler only; messages
 * popped from a queue are the consumer's anyway). */
WEFT_API void weft_am_msg_keep(weft_am_msg_t *msg);

/* Give a delivered message back (its header and data with it). Any thread. */
WEFT_API void weft_am_msg_release(weft_am_msg_t *msg);

/* What the layer did. */
typedef struct weft_am_counters {
    uint64_t sent_now;    /* messages that left inside weft_am_send */
    uint64_t sent_queued; /* messages handed to the scheduler */
    uint64_t sent_rdv;    /* of all sent, those whose payload went by rendezvous */
    uint64_t retries;     /* WEFT_EAGAIN returned */
    uint64_t delivered;   /* messages delivered to a completion object */
    uint64_t waited;      /* arrivals for an id not yet registered */
} weft_am_counters_t;

/* Fill *out. WEFT_EINVAL for NULL. Thread-safe. */
WEFT_API int weft_am_counters_get(weft_am_t *am, weft_am_counters_t *out);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_AM_H */
