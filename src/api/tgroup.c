/* The public placement of thread groups: src/topo places the groups' threads;
 * the progress thread, which the engine owns, goes where they leave room. */
#include "core/core_int.h"
#include "topo/tgroup.h"
#include "topo/topo.h"

WEFT_API int weft_tgroup_place(weft_tgroup_t *group, weft_ctx_t *ctx)
{
    int rc = weft__tgroup_place(group);
    if (rc != WEFT_OK || !ctx || !ctx->progress_running)
        return rc;
    cpu_set_t spot;
    if (!weft__tgroup_spare(group, &spot))
        return WEFT_OK; /* not this machine's topology: nothing is bound */
    return weft__progress_thread_move(ctx, &spot);
}

WEFT_API int weft_progress_thread_cpus(weft_ctx_t *ctx, char *buf, size_t len)
{
    if (!ctx || !buf)
        return WEFT_EINVAL;
    cpu_set_t where;
    int rc = weft__progress_thread_where(ctx, &where);
    if (rc != WEFT_OK)
        return rc;
    char text[4096];
    weft__topo_list(&where, text, sizeof text);
    if (strlen(text) >= len)
        return WEFT_ETRUNC;
    memcpy(buf, text, strlen(text) + 1);
    return WEFT_OK;
}
