/* weft — remote procedure calls on active messages (weft_am.h).
 *
 * A service is a function registered by number on the ranks that serve it.
 * weft_rpc_call sends its arguments to a rank and returns at once; any
 * number of calls may be in flight, to any ranks, from any threads (each
 * with its endpoint). The service function runs on the target in the thread
 * that progresses, with the call's handle; it replies with weft_rpc_reply,
 * then or later, from any thread. The reply lands in the buffer the caller
 * gave (by rendezvous, with no copy, past WEFT_AM_EAGER_MAX) and the
 * caller's completion object is signaled with:
 *
 *   user_context  as given to weft_rpc_call;
 *   error         WEFT_OK; WEFT_ETRUNC (the reply was longer than the buffer:
 *                 what fitted is there); WEFT_ENOTFOUND (no such service on
 *                 the target); WEFT_EPEERDEAD (the target died first);
 *   source        the target; tag the service; length the reply's bytes
 *                 (at most the buffer's size).
 *
 * Two active-message ids of the layer are the RPC's own (the id given to
 * weft_rpc_create and the next).
 */
#ifndef WEFT_WEFT_RPC_H
#define WEFT_WEFT_RPC_H

#include "weft_am.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Services are 0 to WEFT_RPC_SERVICE_MAX. */
#define WEFT_RPC_SERVICE_MAX 255

typedef struct weft_rpc weft_rpc_t;
typedef struct weft_rpc_call weft_rpc_call_t; /* a call being served */

/* A service: args (len bytes) are valid during the call only. Must reply
 * once to call (weft_rpc_reply), now or later. */
typedef void (*weft_rpc_service_fn)(weft_rpc_call_t *call, const void *args, size_t len, void *arg);

/* Calls over am, on its ids id and id + 1 (to be the same on every rank).
 * WEFT_EINVAL, WEFT_ESTATE (an id registered already), WEFT_ENOMEM. */
WEFT_API int weft_rpc_create(weft_am_t *am, uint32_t id, weft_rpc_t **rpc_out);

/* Free rpc: with no call in flight or being served, before weft_am_free.
 * NULL is a no-op. */
WEFT_API int weft_rpc_free(weft_rpc_t *rpc);

/* Serve service with fn(call, args, len, arg). WEFT_EINVAL (service above
 * WEFT_RPC_SERVICE_MAX, NULL fn), WEFT_ESTATE (registered already).
 * Thread-safe. */
WEFT_API int weft_rpc_register(weft_rpc_t *rpc, uint32_t service, weft_rpc_service_fn fn,
                               void *arg);

/* Call service on rank peer with len bytes of args (header-sized arguments
 * travel in the message's header, larger ones as its payload; args may be
 * reused when the call returns). The reply goes to reply (up to reply_cap
 * bytes), which stays the call's until done is signaled. WEFT_OK (the call
 * is on its way), or WEFT_EINVAL, WEFT_ERANK, WEFT_EPEERDEAD, WEFT_ENOMEM:
 * then done is not signaled. Thread-safe for distinct endpoints. */
WEFT_API int weft_rpc_call(weft_rpc_t *rpc, weft_am_ep_t *ep, int peer, uint32_t service,
                           const void *args, size_t len, void *reply, size_t reply_cap,
                           weft_comp_t *done, void *user_context);

/* The rank that made call. */
WEFT_API int weft_rpc_call_source(const weft_rpc_call_t *call);

/* Reply len bytes at data to call, from any thread, through endpoint ep
 * (the thread's own); the data may be reused when it returns. The call
 * handle is freed: reply once. WEFT_OK, or the send's error (the caller's
 * side then fails or waits for the target's death). */
WEFT_API int weft_rpc_reply(weft_rpc_call_t *call, weft_am_ep_t *ep, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_RPC_H */
