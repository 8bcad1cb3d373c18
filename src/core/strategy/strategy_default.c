/* The default strategy: one chunk per packet, oldest first. It is the
 * reference the other strategies are measured against. */
#include <string.h>

#include "core/core_int.h"

static int default_build(weft__gate_t *g, weft__packet_t *pkt)
{
    weft__chunk_t *c = weft__backlog_first(g);
    return c && weft__packet_add(g, pkt, c) ? 1 : 0;
}

const weft__strategy_ops_t weft__strategy_default = {
    .name = "default",
    .build = default_build,
};

const weft__strategy_ops_t *const *weft__strategy_list(size_t *count)
{
    static const weft__strategy_ops_t *const all[] = {
        &weft__strategy_default, &weft__strategy_aggreg, &weft__strategy_split_balance};
    *count = WEFT_ARRAY_SIZE(all);
    return all;
}

const weft__strategy_ops_t *weft__strategy_find(const char *name)
{
    size_t n;
    const weft__strategy_ops_t *const *all = weft__strategy_list(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i]->name, name))
            return all[i];
    return NULL;
}
