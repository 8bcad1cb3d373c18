/* weftrun's placement of ranks: --map-by, --bind-to, --report-bindings
 * (weftrun_place.c, on src/topo/topo.c). */
#ifndef WEFTRUN_PLACE_H
#define WEFTRUN_PLACE_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>

#include "topo/topo.h"

/* The placement asked for on the command line. */
typedef struct {
    const char *map_by;  /* --map-by's value, or NULL */
    const char *bind_to; /* --bind-to's value, or NULL */
    bool report;         /* --report-bindings */
    weft_topo_policy_t policy;
    weft_topo_t *topo; /* this host's, once weftrun_place_host read it */
} weftrun_place_t;

/* Where the ranks of this host go: sets[i], bound[i] for the host's i-th
 * rank; *applied false when the topology is not this machine's (then the
 * bindings are reported, not applied). Keeps the topology in pl->topo for
 * the reports (weftrun_place_free). 0, or -1 with the reason in err. */
int weftrun_place_host(weftrun_place_t *pl, int n, cpu_set_t *sets, bool *bound, bool *applied,
                       char *err, size_t errlen);
void weftrun_place_free(weftrun_place_t *pl);

/* One --report-bindings line for a rank of this host, on f (after
 * weftrun_place_host). */
void weftrun_place_report(FILE *f, const char *host, int rank, const cpu_set_t *set, bool bound,
                          bool applied, const weftrun_place_t *pl, int n);

/* weftrun --placed INDEX COUNT MAP BIND REPORT prog args: what a remote rank
 * runs on its host (the topology is that host's): places itself as the
 * INDEX-th of COUNT ranks there (MAP and BIND "-" when not given, REPORT 0 or
 * 1), then execs prog. Returns only on failure, with an exit code. */
int weftrun_placed_main(int argc, char **argv);

#endif
