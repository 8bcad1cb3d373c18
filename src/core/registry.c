/* The driver registry (registry.h). */
#include "core/registry.h"

#include <pthread.h>
#include <stdlib.h>

#include "util/log.h"
#include "util/util.h"

static const weft_driver_ops_t *const builtin[] = {
    &weft__driver_self_ops,
    &weft__driver_shm_ops,
#ifdef WEFT_HAVE_OFI
    &weft__driver_ofi_ops,
#endif
    &weft__driver_tcp_ops,
};

const weft_driver_ops_t *const *weft__drivers_builtin(size_t *count)
{
    *count = WEFT_ARRAY_SIZE(builtin);
    return builtin;
}

/* The joined table, built at the first look. */
static const weft_param_desc_t *table;
static size_t ntable;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static size_t driver_params(const weft_driver_ops_t *ops, weft_param_desc_t *out)
{
    size_t n = 0;
    for (const weft_param_desc_t *p = ops->params; p && p->name; p++, n++)
        if (out)
            out[n] = *p;
    return n;
}

static void table_build(void)
{
    size_t nengine, n;
    const weft_param_desc_t *engine = weft__param_engine_table(&nengine);
    n = nengine;
    for (size_t i = 0; i < WEFT_ARRAY_SIZE(builtin); i++)
        n += driver_params(builtin[i], NULL);
    weft_param_desc_t *t = malloc(n * sizeof *t);
    if (!t) {
        /* Then only the engine's own are listed. */
        table = engine;
        ntable = nengine;
        return;
    }
    for (size_t i = 0; i < nengine; i++)
        t[i] = engine[i];
    size_t k = nengine;
    for (size_t i = 0; i < WEFT_ARRAY_SIZE(builtin); i++)
        k += driver_params(builtin[i], t + k);
    table = t;
    ntable = n;
}

const weft_param_desc_t *weft__param_table(size_t *count)
{
    pthread_once(&table_once, table_build);
    *count = ntable;
    return table;
}

int weft__param_set(size_t index, const char *value)
{
    size_t n;
    const weft_param_desc_t *t = weft__param_table(&n);
    if (index >= n)
        return -1;
    return weft__param_override(t[index].name, value);
}

const char *weft__param_get(size_t index)
{
    size_t n;
    const weft_param_desc_t *t = weft__param_table(&n);
    return index < n ? weft__param_value(t[index].name) : NULL;
}

const weft_param_t *weft_param_table(size_t *count)
{
    size_t n;
    const weft_param_desc_t *t = weft__param_table(&n);
    if (count)
        *count = n;
    return t;
}

int weft_param_set(const char *name, const char *value)
{
    if (!name)
        return WEFT_EINVAL;
    if (weft__param_override(name, value) != 0)
        return WEFT_ENOMEM;
    weft__log_reread(); /* WEFT_LOG may be the one */
    return WEFT_OK;
}

const char *weft_param_get(const char *name)
{
    return name ? weft__param_value(name) : NULL;
}
