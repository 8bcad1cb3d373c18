/* Collectives that live below the front ends: the engine starts them with
 * every context, because a rank takes part in them without calling them
 * (it forwards a dynamic broadcast it is a destination of). */
#ifndef WEFT_COLL_H
#define WEFT_COLL_H

#include <stdbool.h>

#include "weft/weft_coll.h"

struct weft_ctx;

/* The front of the group collectives (coll_group.c): their built-in types
 * and ops, weft statuses as errors; weft_sched_new's default. */
extern const weft_sched_front_t weft__coll_native_front;

/* The schedules' list of ctx and its progress callback (sched.c), started
 * and ended with the context's collectives layer. */
int weft__sched_init(struct weft_ctx *ctx);
void weft__sched_fini(struct weft_ctx *ctx);

/* Start the collectives layer of ctx (bcast.c): the schedules' list, the
 * dynamic broadcast's sink, their progress callbacks. WEFT_ENOMEM, or what
 * registering returned. */
int weft__coll_init(struct weft_ctx *ctx);
/* Whether this rank still owes a broadcast its part: a destination that has
 * not acknowledged yet (its children have not answered, a piece is still on
 * its way) while its parent and root live. weft_finalize makes progress
 * while it is so: a destination may reach its finalize as soon as it has
 * the data, before the ranks below it answered. Runs queued events when no
 * other thread does. */
bool weft__coll_busy(struct weft_ctx *ctx);
/* Peer died (the engine's gate loss, under its locks): queued for the
 * broadcasts it was the root of. */
void weft__coll_peer_lost(struct weft_ctx *ctx, int peer);
/* finalize, under the engine lock, before it cancels what is live: the
 * receives a broadcast claimed go back to the engine's live list. */
void weft__coll_abandon(struct weft_ctx *ctx);
/* Free it, and what it still holds (schedules are only unlisted: their
 * owners free them); the engine has canceled every request by then. NULL
 * layer: nothing. */
void weft__coll_fini(struct weft_ctx *ctx);

#endif
