/* weft-info: what this weft has and how it is set: version, drivers,
 * strategies, and every WEFT_* parameter with its default and the value in
 * this environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "util/param.h"

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: weft-info\nPrint weft's drivers, strategies and WEFT_* parameters.\n");
        return 0;
    }
    printf("weft %s\n\n", WEFT_VERSION_STRING);
    printf("drivers:\n");
    printf("  %-8s %s\n", weft__driver_self_ops.name, "loopback within a process");
    printf("  %-8s %s\n", weft__driver_shm_ops.name,
           "processes of one node: per-peer rings, single-copy CMA for large messages");
    printf("  %-8s %s\n", weft__driver_tcp_ops.name,
           "between nodes: one authenticated connection per peer, rendezvous read straight "
           "into the receive buffer");
#ifdef WEFT_HAVE_OFI
    printf("  %-8s %s\n", weft__driver_ofi_ops.name,
           "libfabric (InfiniBand, Omni-Path, Slingshot, EFA...): RDM endpoint, tagged packets, "
           "rendezvous by fi_read");
#endif
    printf("\nstrategies (WEFT_STRATEGY):\n");
    size_t n;
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
    return 0;
}
