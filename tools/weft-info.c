/* weft-info: what this weft has and how it is set: version, drivers,
 * strategies, and every WEFT_* parameter with its default and the value in
 * this environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "core/registry.h"
#include "weft/weft_rma.h"

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: weft-info\nPrint weft's drivers, strategies and WEFT_* parameters.\n");
        return 0;
    }
    printf("weft %s\n\n", WEFT_VERSION_STRING);
    printf("drivers (highest preference first within each reach):\n");
    size_t n;
    const weft_driver_ops_t *const *drv = weft__drivers_builtin(&n);
    for (size_t i = 0; i < n; i++) {
        unsigned r = drv[i]->reach;
        char reach[64] = "";
        const char *what[] = {"this process", "this node", "other nodes"};
        for (int k = 0; k < 3; k++)
            if (r & (1u << k))
                snprintf(reach + strlen(reach), sizeof reach - strlen(reach), "%s%s",
                         reach[0] ? ", " : "", what[k]);
        printf("  %-8s %s\n           reaches %s; preference %d%s%s%s\n", drv[i]->name,
               drv[i]->description, reach, drv[i]->preference,
               drv[i]->native_only ? "; between nodes only on a native fabric unless named" : "",
               drv[i]->strategy ? "; strategy " : "", drv[i]->strategy ? drv[i]->strategy : "");
    }
    printf("\nstrategies (WEFT_STRATEGY):\n");
    const weft__strategy_ops_t *const *st = weft__strategy_list(&n);
    for (size_t i = 0; i < n; i++)
        printf("  %s\n", st[i]->name);
    printf("\nparameters (environment):\n");
    const weft_param_desc_t *p = weft__param_table(&n);
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(p[i].name);
        printf("  %-20s = %-10s (default %s)\n      %s\n", p[i].name, v && *v ? v : "(unset)",
               p[i].deflt, p[i].help);
    }
    /* What OpenSHMEM programs (libshmem) get. */
    const char *heap = getenv("SHMEM_SYMMETRIC_SIZE");
    printf(
        "\none-sided memory (OpenSHMEM):\n"
        "  SHMEM_SYMMETRIC_SIZE = %-10s (default %zuM)\n"
        "      bytes of symmetric heap per PE (K, M, G suffixes; SMA_SYMMETRIC_SIZE too)\n"
        "  PEs on this node: the heap and static data mapped, put/get are copies, "
        "atomics CPU atomics\n"
        "  PEs on other nodes (or all, WEFT_RMA_MAP=0): requests served by their progress engine\n",
        heap && *heap ? heap : "(unset)", WEFT_RMA_HEAP_DEFAULT >> 20);
    return 0;
}
