/* weftrun's placement: the ranks of a host mapped onto its cores with the
 * host's own topology, each rank bound (sched_setaffinity) between fork and
 * exec, before the program runs a single instruction; --report-bindings says
 * where, one line per rank. Ranks of this machine are placed by weftrun
 * itself, which checks the whole placement before any rank starts; a remote
 * rank runs `weftrun --placed ...` on its host, which does the same there
 * for that rank and execs the program. */
#include "weftrun_place.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int weftrun_place_host(weftrun_place_t *pl, int n, cpu_set_t *sets, bool *bound, bool *applied,
                       char *err, size_t errlen)
{
    if (!pl->topo && weft__topo_load(&pl->topo, false, err, errlen) != 0)
        return -1;
    cpu_set_t allowed;
    weft__topo_allowed(pl->topo, &allowed);
    *applied = pl->topo->this_system;
    return weft__topo_map(pl->topo, &allowed, n, &pl->policy, sets, bound, err, errlen);
}

void weftrun_place_free(weftrun_place_t *pl)
{
    weft__topo_free(pl->topo);
    pl->topo = NULL;
}

void weftrun_place_report(FILE *f, const char *host, int rank, const cpu_set_t *set, bool bound,
                          bool applied, const weftrun_place_t *pl, int n)
{
    if (!bound) {
        const char *why =
            pl->policy.bind == WEFT_TOPO_NONE ? "--bind-to none" : "more ranks than cores here";
        fprintf(f, "weftrun: host %s rank %d: not bound (%s; %d ranks on this host)\n", host, rank,
                why, n);
        return;
    }
    char bitmap[320], list[512], picture[4096] = "";
    if (pl->topo)
        weft__topo_picture(pl->topo, set, picture, sizeof picture);
    weft__topo_bitmap(set, bitmap, sizeof bitmap);
    weft__topo_list(set, list, sizeof list);
    fprintf(f, "weftrun: host %s rank %d: bound to %s (cpus %s): %s%s\n", host, rank, bitmap, list,
            picture, applied ? "" : " (not applied: the topology is not this machine's)");
}

int weftrun_placed_main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "weftrun --placed: INDEX COUNT MAP BIND REPORT program [args...]\n");
        return 2;
    }
    int index = atoi(argv[2]), count = atoi(argv[3]);
    weftrun_place_t pl = {.map_by = strcmp(argv[4], "-") ? argv[4] : NULL,
                          .bind_to = strcmp(argv[5], "-") ? argv[5] : NULL,
                          .report = !strcmp(argv[6], "1")};
    char err[512], host[256] = "?";
    gethostname(host, sizeof host - 1);
    if (getenv("WEFT_NODE_ID")) /* the name weftrun knows the host by */
        snprintf(host, sizeof host, "%s", getenv("WEFT_NODE_ID"));
    const char *rank = getenv("WEFT_RANK");
    bool by_node;
    cpu_set_t *sets = calloc((size_t)(count > 0 ? count : 1), sizeof *sets);
    bool *bound = calloc((size_t)(count > 0 ? count : 1), sizeof *bound), applied;
    int rc = 2;
    if (!sets || !bound || index < 0 || index >= count) {
        fprintf(stderr, "weftrun: host %s: bad placement request\n", host);
        goto out;
    }
    if (weft__topo_policy_parse(pl.map_by, pl.bind_to, &pl.policy, &by_node, err, sizeof err) !=
            0 ||
        weftrun_place_host(&pl, count, sets, bound, &applied, err, sizeof err) != 0) {
        fprintf(stderr, "weftrun: host %s rank %s: cannot place: %s\n", host, rank ? rank : "?",
                err);
        goto out;
    }
    if (pl.report)
        weftrun_place_report(stderr, host, rank ? atoi(rank) : -1, &sets[index], bound[index],
                             applied, &pl, count);
    if (bound[index] && applied && sched_setaffinity(0, sizeof sets[index], &sets[index]) != 0) {
        fprintf(stderr, "weftrun: host %s rank %s: cannot bind: %s\n", host, rank ? rank : "?",
                strerror(errno));
        goto out;
    }
    weftrun_place_free(&pl);
    free(sets);
    free(bound);
    execvp(argv[7], argv + 7);
    fprintf(stderr, "weftrun: host %s: cannot run '%s': %s\n", host, argv[7], strerror(errno));
    return 127;
out:
    weftrun_place_free(&pl);
    free(sets);
    free(bound);
    return rc;
}
