/* The parameter table and the driver registry: the table joins the engine's
 * parameters and every built-in driver's (each name once); an override wins
 * over the environment and goes away with NULL; every built-in driver
 * describes itself (name, description, reach, the operations the engine
 * calls), and the table lists its parameters. */
#include <stdlib.h>
#include <string.h>

#include "../common/test_util.h"
#include "core/registry.h"

static bool listed(const weft_param_t *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return true;
    return false;
}

int main(void)
{
    size_t n;
    const weft_param_t *t = weft_param_table(&n);
    CHECK(t && n > 20);
    CHECK(listed(t, n, "WEFT_EAGER_CREDITS") && listed(t, n, "WEFT_SHM_RING") &&
          listed(t, n, "WEFT_TCP_RAILS"));
    for (size_t i = 0; i < n; i++) {
        CHECK(t[i].name && t[i].deflt && t[i].help && !strncmp(t[i].name, "WEFT_", 5));
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(t[i].name, t[j].name) != 0);
    }

    setenv("WEFT_SHM_RING", "1M", 1);
    CHECK(weft_param_get("WEFT_SHM_RING") && !strcmp(weft_param_get("WEFT_SHM_RING"), "1M"));
    CHECK(weft_param_set("WEFT_SHM_RING", "64K") == WEFT_OK);
    CHECK(!strcmp(weft_param_get("WEFT_SHM_RING"), "64K"));
    CHECK(weft__param_size("WEFT_SHM_RING", 0) == 64u << 10);
    CHECK(weft_param_set("WEFT_SHM_RING", NULL) == WEFT_OK);
    CHECK(!strcmp(weft_param_get("WEFT_SHM_RING"), "1M"));
    CHECK(weft_param_set(NULL, "x") == WEFT_EINVAL && weft_param_get(NULL) == NULL);
    CHECK(weft_param_set("WEFT_NOT_A_PARAMETER", NULL) == WEFT_OK);

    size_t nd;
    const weft_driver_ops_t *const *d = weft__drivers_builtin(&nd);
    CHECK(nd >= 3);
    unsigned reach = 0;
    for (size_t i = 0; i < nd; i++) {
        CHECK(d[i]->name && d[i]->description && d[i]->reach);
        CHECK(d[i]->init && d[i]->address && d[i]->connect && d[i]->connected && d[i]->send &&
              d[i]->poll && d[i]->disconnect && d[i]->fini);
        for (const weft_param_t *p = d[i]->params; p && p->name; p++)
            CHECK(listed(t, n, p->name));
        reach |= d[i]->reach;
    }
    CHECK(reach == (WEFT_DRV_REACH_SELF | WEFT_DRV_REACH_NODE | WEFT_DRV_REACH_NET));
    return test_summary("test_params");
}
