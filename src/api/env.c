/* Job-level services of the native API that are not send/receive. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "core/core_int.h"

WEFT_API void weft_abort(weft_ctx_t *ctx, int code, const char *msg)
{
    fflush(stdout);
    fflush(stderr);
    if (ctx && ctx->boot)
        weft__boot_abort(ctx->boot, code, msg ? msg : "");
    /* Under weftrun the launcher ends every rank; alone, or if it could not be
     * told, end this one. */
    _exit(code ? code : 1);
}

WEFT_API int weft_node_leader(const weft_ctx_t *ctx)
{
    return ctx ? ctx->node_leader : WEFT_EINVAL;
}

/* The process's shared context (weft_world_acquire): made by the first
 * front end that asks, finalized when the last lets go. */
static pthread_mutex_t world_lock = PTHREAD_MUTEX_INITIALIZER;
static weft_ctx_t *world;
static int world_users;

WEFT_API int weft_world_acquire(const weft_init_params_t *params, weft_ctx_t **ctx_out)
{
    if (!ctx_out)
        return WEFT_EINVAL;
    pthread_mutex_lock(&world_lock);
    int rc = WEFT_OK;
    if (!world)
        rc = weft_init(params, &world);
    if (rc == WEFT_OK) {
        world_users++;
        *ctx_out = world;
    }
    pthread_mutex_unlock(&world_lock);
    return rc;
}

WEFT_API int weft_world_release(weft_ctx_t *ctx)
{
    pthread_mutex_lock(&world_lock);
    int rc = WEFT_OK;
    if (!ctx || ctx != world || world_users == 0) {
        rc = WEFT_EINVAL;
    } else if (--world_users == 0) {
        rc = weft_finalize(world);
        world = NULL;
    }
    pthread_mutex_unlock(&world_lock);
    return rc;
}
