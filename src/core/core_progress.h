/* The engine's private declarations, part two: cooperative rendezvous
 * (coop.c), waiting and background progress (progress.c, place.c).
 * Included by core_int.h after its types; include core_int.h, not this. */
#ifndef WEFT_CORE_PROGRESS_H
#define WEFT_CORE_PROGRESS_H

#ifndef WEFT_CORE_INT_H
#error "include core/core_int.h"
#endif

/* Cooperative rendezvous (coop.c). */
void weft__coop_gate_init(struct weft_ctx *ctx, weft__gate_t *g);
/* A receive was just posted: publish it if a sender may claim it. */
void weft__coop_publish(struct weft_ctx *ctx, struct weft_request *req);
/* Before canceling a posted receive: false if a sender has claimed it. */
bool weft__coop_cancel(weft__gate_t *g, struct weft_request *req);
/* Message number g->published_seq arrived (matched: the receive it took, or
 * NULL): 0 to handle it as usual, 1 if it was the claiming rendezvous (done),
 * or WEFT_EPROTO. */
int weft__coop_arrival(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c,
                       struct weft_request *matched);
/* A receive matched a rendezvous: move it cooperatively if possible (false:
 * use another path). */
bool weft__coop_start_recv(struct weft_ctx *ctx, struct weft_request *req, weft__gate_t *g,
                           uint64_t accept, const weft_rkey_t *rkey);
/* A rendezvous left: watch for a publication it may claim. */
void weft__coop_watch(struct weft_ctx *ctx, struct weft_request *req);
void weft__coop_unwatch(struct weft_request *req);
int weft__coop_on_coop(struct weft_ctx *ctx, weft__gate_t *g, const weft__wire_chunk_t *c);
/* A piece of a cooperative transfer, claimed under the engine lock. */
struct weft__coop_copy {
    struct weft_request *req; /* NULL: none */
    weft__cell_t *cell;
    uint64_t off;
    size_t len;
    uint32_t index; /* the piece's number */
    uint32_t count; /* pieces it stands for: 1, or all those left when failed */
    int fail;       /* not 0: count the pieces failed with this error, copy nothing */
};
/* Whether a cooperative transfer is under way (not only watched for a
 * publication to claim): a thread then must not sleep. */
bool weft__coop_busy(struct weft_ctx *ctx);
/* Claim at most one piece and finish what is done. Returns events. out NULL:
 * the piece is copied here, under the engine lock; otherwise it is handed out
 * in *out, for the caller to copy with weft__coop_copy_run once it has
 * released the engine lock. */
int weft__coop_progress(struct weft_ctx *ctx, weft__coop_copy_t *out);
/* Copy a claimed piece (with or without the engine lock) and release its
 * hold; the request must not be touched after. */
void weft__coop_copy_run(const weft__coop_copy_t *cp, bool unlocked);

/* The end of weft__progress_try when handlers wait: take them, release the
 * lock, copy the claimed piece, run them (request.c). Returns how many ran. */
int weft__progress_handlers(struct weft_ctx *ctx, weft__coop_copy_t *copy);
/* Progress for everybody if the engine lock is free (never waits for it):
 * a pass, then, after the release, the copy of the piece it claimed, if any,
 * and the handlers of the completions found under the lock. Returns events
 * (each handler run counts as one). Inline: every waiting loop polls
 * through it. */
static inline int weft__progress_try(struct weft_ctx *ctx)
{
    int n = 0;
    if (weft_lock_try(&ctx->lock)) {
        weft__coop_copy_t copy;
        copy.req = NULL;
        n = weft__progress_step(ctx, &copy);
        /* One load and a branch on every poll; the rest out of line. */
        if (WEFT_UNLIKELY(ctx->comp_handlers != NULL)) {
            n += weft__progress_handlers(ctx, &copy);
        } else {
            weft_lock_release(&ctx->lock);
            if (WEFT_UNLIKELY(copy.req != NULL))
                weft__coop_copy_run(&copy, true);
        }
    }
    /* The front ends' callbacks, also when another thread holds the engine:
     * they take it themselves when they need it. */
    if (WEFT_UNLIKELY(weft__pq_any_armed(&ctx->callbacks)))
        n += weft__pq_run_shared(&ctx->callbacks);
    return n;
}
/* Release the engine lock, then run the handlers of the completions found
 * under it (ctx->comp_handlers), in this thread. */
static inline void weft__unlock(struct weft_ctx *ctx)
{
    weft__comp_node_t *handlers = ctx->comp_handlers;
    if (WEFT_LIKELY(handlers == NULL)) {
        weft_lock_release(&ctx->lock);
        return;
    }
    ctx->comp_handlers = ctx->comp_handlers_tail = NULL;
    weft_lock_release(&ctx->lock);
    weft__comp_handlers_run(ctx, handlers);
}
/* A request completes: leave the list, free its cell. */
void weft__coop_finish(struct weft_ctx *ctx, struct weft_request *req);

/* Waiting and background progress (progress.c). */
int weft__wait_policy_parse(const char *s); /* WEFT__WAIT_*, or -1 */
/* Wait until req completes, following the context's policy. */
void weft__wait(struct weft_ctx *ctx, struct weft_request *req);
/* req was just marked done (WEFT_THREAD_MULTIPLE): count it, wake its thread if it sleeps. */
void weft__wake_waiter(struct weft_ctx *ctx, struct weft_request *req);
int weft__progress_thread_start(struct weft_ctx *ctx);
/* Where the progress thread goes (place.c): true with *out set to pin it
 * there, false to leave it unpinned. Called by the initializing thread. */
bool weft__progress_place(const struct weft_ctx *ctx, cpu_set_t *out);
/* More ranks on this node than cpus this process may run on (place.c). */
bool weft__node_oversubscribed(const struct weft_ctx *ctx);
void weft__progress_thread_stop(struct weft_ctx *ctx);
/* Moves the running progress thread onto cpus (thread groups place it
 * beside theirs). WEFT_ESTATE when none runs, WEFT_ESYS if refused. */
int weft__progress_thread_move(struct weft_ctx *ctx, const cpu_set_t *cpus);
/* The cpus the progress thread may run on. WEFT_ESTATE when none runs. */
int weft__progress_thread_where(struct weft_ctx *ctx, cpu_set_t *out);
/* End the progress thread's sleep on doorbells (it found no work that only
 * polling would see, and something such appeared). */
void weft__progress_kick(struct weft_ctx *ctx);
/* Work appeared that only a progress pass serves (a send held to share a
 * packet): kick the progress thread if it sleeps. The caller's stores come
 * before the look (progress.c: the sleeper announces, then makes a pass). */
static inline void weft__progress_wanted(struct weft_ctx *ctx)
{
    /* A read-modify-write: ordered after the caller's stores as a fence
     * would be (and ThreadSanitizer knows it). */
    if (ctx->progress_kick >= 0 && atomic_fetch_add(&ctx->progress_asleep, 0))
        weft__progress_kick(ctx);
}

#endif
