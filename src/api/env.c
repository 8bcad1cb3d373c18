/* Job-level services of the native API that are not send/receive. */
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
