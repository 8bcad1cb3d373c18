/* Where the progress thread runs (WEFT_PROGRESS_THREAD=1).
 *
 * WEFT_PROGRESS_CPU picks: a cpu number pins the thread there, "none" leaves
 * it wherever the process may run, and "auto" (the default) places it where
 * it takes nothing from the application:
 *   - the thread that initialized weft is bound within one core (a rank
 *     bound to its core, the usual HPC launch): on that core's other
 *     hardware threads if it has some (they share its caches and are idle
 *     otherwise), else on that core itself, where SCHED_IDLE gives it only
 *     the cycles the application leaves while it waits;
 *   - it may run on several cores: if they are more than the ranks of this
 *     node, on one of the cores left over (the last ones, one per rank in
 *     turn); else nowhere in particular (SCHED_IDLE alone).
 * Among cores left over, those near a network card come first, where hwloc
 * knows its locality. Cores come from src/topo (hwloc; without it each cpu
 * counts as a core). The choice is logged at info level (WEFT_LOG=info). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "core/core_int.h"
#include "topo/topo.h"
#include "util/log.h"
#include "util/param.h"

#define MAX_CORES 1024

/* The cores of t that meet `allowed`, each as the set of its cpus within it,
 * in the machine's order; their number. */
static int cores_of(const weft_topo_t *t, const cpu_set_t *allowed, cpu_set_t *cores, int max)
{
    int n = 0, last = -1;
    for (int i = 0; i < t->npus; i++) {
        const weft_topo_pu_t *pu = &t->pus[i];
        if (!CPU_ISSET(pu->os, allowed))
            continue;
        if (n == 0 || pu->at[WEFT_TOPO_CORE] != last) {
            if (n == max)
                break;
            CPU_ZERO(&cores[n++]);
            last = pu->at[WEFT_TOPO_CORE];
        }
        CPU_SET(pu->os, &cores[n - 1]);
    }
    return n;
}

static void describe(const cpu_set_t *set, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE && at + 8 < len; cpu++)
        if (CPU_ISSET(cpu, set))
            at += (size_t)snprintf(buf + at, len - at, "%s%d", at ? "," : "", cpu);
}

/* WEFT_PROGRESS_CPU=auto, for the application's thread allowed on mine;
 * cores is room for MAX_CORES sets. */
static bool place_auto(const weft_ctx_t *ctx, const weft_topo_t *t, const cpu_set_t *mine,
                       cpu_set_t *cores, cpu_set_t *out)
{
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        CPU_SET(cpu, &all);
    int ncores = cores_of(t, &all, cores, MAX_CORES), used = -1, nused = 0;
    for (int i = 0; i < ncores; i++) {
        cpu_set_t both;
        CPU_AND(&both, &cores[i], mine);
        if (CPU_COUNT(&both)) {
            used = i;
            nused++;
        }
    }
    char text[256];
    if (nused == 1) {
        /* Bound within one core: its other hardware threads, else the core. */
        cpu_set_t rest;
        CPU_XOR(&rest, &cores[used], mine);
        CPU_AND(&rest, &rest, &cores[used]);
        *out = CPU_COUNT(&rest) ? rest : cores[used];
        describe(out, text, sizeof text);
        weft_log_info("progress thread on cpu %s: %s of the application's core", text,
                      CPU_COUNT(&rest) ? "the other hardware threads" : "idle time");
        return true;
    }
    /* Several cores: one the ranks of this node leave over, if any (the
     * last ones, one per rank in turn), those near a network card first. */
    int mycores = cores_of(t, mine, cores, MAX_CORES);
    if (mycores <= ctx->node_size) {
        weft_log_info("progress thread not pinned: %d cores for %d ranks on this node", mycores,
                      ctx->node_size);
        return false;
    }
    int spare = mycores - ctx->node_size, pick = ctx->node_index % spare, seen = 0;
    bool near_nic = false;
    for (int pass = t->nic_known ? 0 : 1; pass < 2 && seen <= pick; pass++) {
        for (int i = mycores - 1; i >= mycores - spare && seen <= pick; i--) {
            cpu_set_t near;
            CPU_AND(&near, &cores[i], &t->nic_local);
            if ((pass == 0) != (CPU_COUNT(&near) > 0))
                continue;
            if (seen++ == pick) {
                *out = cores[i];
                near_nic = pass == 0;
            }
        }
    }
    describe(out, text, sizeof text);
    weft_log_info("progress thread on cpu %s: a core left over%s (%d cores, %d ranks on this node)",
                  text, near_nic ? ", near the network card" : "", mycores, ctx->node_size);
    return true;
}

bool weft__node_oversubscribed(const weft_ctx_t *ctx)
{
    /* A rank allowed on several cpus (no binding, or a cpuset) shares those
     * with the node's other ranks; a rank bound to one cpu was placed by
     * somebody who knew the machine: count the machine's cpus then. */
    cpu_set_t mine;
    long cpus = 0;
    if (sched_getaffinity(0, sizeof mine, &mine) == 0)
        cpus = CPU_COUNT(&mine);
    if (cpus <= 1)
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 && ctx->node_size > cpus;
}

bool weft__progress_place(const weft_ctx_t *ctx, cpu_set_t *out)
{
    const char *how = weft__param_str("WEFT_PROGRESS_CPU", "auto");
    if (!strcmp(how, "none"))
        return false;
    if (strcmp(how, "auto") != 0) {
        long cpu = (long)weft__param_size("WEFT_PROGRESS_CPU", (uint64_t)-1);
        if (cpu < 0 || cpu >= CPU_SETSIZE) {
            weft_log_warn("progress thread: WEFT_PROGRESS_CPU=%s is no cpu; not pinned", how);
            return false;
        }
        CPU_ZERO(out);
        CPU_SET((int)cpu, out);
        return true;
    }
    /* The calling thread is the one that initializes weft: the application's. */
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return false;
    weft_topo_t *t;
    char why[256];
    if (weft__topo_load(&t, true, why, sizeof why) != 0) {
        weft_log_info("progress thread not pinned: %s", why);
        return false;
    }
    cpu_set_t *cores = malloc(sizeof *cores * MAX_CORES);
    bool placed = cores && place_auto(ctx, t, &mine, cores, out);
    free(cores);
    weft__topo_free(t);
    return placed;
}

/* ---- Hardware resource instances (weft_hw_instance) ---- */

/* The names other libraries give some types, and hwloc's for them. */
static const char *hw_alias(const char *name)
{
    static const char *const alias[][2] = {
        {"socket", "Package"},  {"hwthread", "PU"},     {"numa", "NUMANode"},
        {"l1", "L1Cache"},      {"l2", "L2Cache"},      {"l3", "L3Cache"},
        {"node", "Machine"},    {"l1cache", "L1Cache"}, {"l2cache", "L2Cache"},
        {"l3cache", "L3Cache"},
    };
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (!strcasecmp(name, alias[i][0]))
            return alias[i][1];
    return name;
}

int weft_hw_instance(const char *type, int *index)
{
    if (!type || !index)
        return WEFT_EINVAL;
    if (!strncasecmp(type, "hwloc://", 8))
        type += 8;
    type = hw_alias(type);
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return WEFT_ESYS;
#ifdef WEFT_HAVE_HWLOC
    hwloc_obj_type_t kind;
    union hwloc_obj_attr_u attr;
    /* hwloc also reads prefixes ("no" for NUMANode): the whole name only. */
    if (hwloc_type_sscanf(type, &kind, &attr, sizeof attr) < 0 ||
        strcasecmp(type, hwloc_obj_type_string(kind)) != 0)
        return WEFT_EINVAL;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return WEFT_ENOMEM;
    int rc = WEFT_ENOTFOUND;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set || hwloc_topology_load(topo) != 0) {
        rc = set ? WEFT_ESYS : WEFT_ENOMEM;
        goto out;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &mine))
            hwloc_bitmap_set(set, (unsigned)cpu);
    /* The one instance whose cpus hold all of this process's: none when the
     * process may run on several (types at several depths, hwloc's Groups,
     * have no single numbering: none either). */
    int n = hwloc_get_nbobjs_by_type(topo, kind);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, kind, (unsigned)i);
        if (obj && obj->cpuset && hwloc_bitmap_isincluded(set, obj->cpuset)) {
            *index = i;
            rc = WEFT_OK;
            break;
        }
    }
out:
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return rc;
#else
    /* Without hwloc: the machine, and a process bound to one cpu. */
    if (!strcasecmp(type, "Machine")) {
        *index = 0;
        return WEFT_OK;
    }
    if (strcasecmp(type, "PU") != 0)
        return WEFT_EUNSUPPORTED;
    if (CPU_COUNT(&mine) != 1)
        return WEFT_ENOTFOUND;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &mine))
            *index = cpu;
    return WEFT_OK;
#endif
}
