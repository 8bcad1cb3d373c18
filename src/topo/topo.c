/* The machine's hierarchy, and the mapping of a host's ranks onto it (the
 * model of Open MPI's mpirun and Slurm: --map-by decides which cpus each rank
 * gets, --bind-to how wide its binding is around them). See topo.h. */
#include "topo/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>
#endif

static const char *const level_names[WEFT_TOPO_LEVELS] = {"hwthread", "core",    "l3cache",
                                                          "numa",     "package", "machine"};

const char *weft__topo_level_name(int level)
{
    if (level == WEFT_TOPO_NONE)
        return "none";
    if (level == WEFT_TOPO_SLOT)
        return "slot";
    return level >= 0 && level < WEFT_TOPO_LEVELS ? level_names[level] : "?";
}

int weft__topo_level_parse(const char *name, size_t len)
{
    static const struct {
        const char *name;
        int level;
    } names[] = {
        {"hwthread", WEFT_TOPO_PU},    {"pu", WEFT_TOPO_PU},
        {"core", WEFT_TOPO_CORE},      {"l3cache", WEFT_TOPO_L3},
        {"l3", WEFT_TOPO_L3},          {"numa", WEFT_TOPO_NUMA},
        {"numanode", WEFT_TOPO_NUMA},  {"package", WEFT_TOPO_PACKAGE},
        {"socket", WEFT_TOPO_PACKAGE}, {"machine", WEFT_TOPO_MACHINE},
        {"board", WEFT_TOPO_MACHINE},  {"none", WEFT_TOPO_NONE},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i].name) == len && !strncasecmp(name, names[i].name, len))
            return names[i].level;
    return -3;
}

void weft__topo_free(weft_topo_t *t)
{
    if (t) {
        free(t->pus);
        free(t);
    }
}

#ifndef WEFT_HAVE_HWLOC
/* Without hwloc: every online cpu is a core of one package, one NUMA node. */
static int load_flat(weft_topo_t *t, char *err, size_t errlen)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (n < 1 || n > CPU_SETSIZE)
        n = n < 1 ? 1 : CPU_SETSIZE;
    t->pus = calloc((size_t)n, sizeof *t->pus);
    if (!t->pus) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        t->pus[i].os = i;
        t->pus[i].at[WEFT_TOPO_PU] = t->pus[i].at[WEFT_TOPO_CORE] = i;
        t->pus[i].at[WEFT_TOPO_L3] = -1;
        t->pus[i].at[WEFT_TOPO_NUMA] = t->pus[i].at[WEFT_TOPO_PACKAGE] = 0;
        t->pus[i].at[WEFT_TOPO_MACHINE] = 0;
    }
    t->npus = (int)n;
    t->count[WEFT_TOPO_PU] = t->count[WEFT_TOPO_CORE] = (int)n;
    t->count[WEFT_TOPO_NUMA] = t->count[WEFT_TOPO_PACKAGE] = t->count[WEFT_TOPO_MACHINE] = 1;
    t->this_system = true;
    t->source = "flat";
    return 0;
}
#endif

#ifdef WEFT_HAVE_HWLOC
/* The cpus of the closest non-I/O object of every network card hwloc finds
 * (Ethernet, InfiniBand, libfabric's), when they are less than the machine. */
static void load_nics(weft_topo_t *t, hwloc_topology_t topo)
{
    hwloc_obj_t dev = NULL;
    CPU_ZERO(&t->nic_local);
    while ((dev = hwloc_get_next_osdev(topo, dev))) {
        if (dev->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK &&
            dev->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo, dev);
        if (!near || !near->cpuset || near->type == HWLOC_OBJ_MACHINE)
            continue;
        unsigned cpu;
        hwloc_bitmap_foreach_begin(cpu, near->cpuset)
        {
            if (cpu < CPU_SETSIZE)
                CPU_SET((int)cpu, &t->nic_local);
        }
        hwloc_bitmap_foreach_end();
    }
    t->nic_known = CPU_COUNT(&t->nic_local) > 0 && CPU_COUNT(&t->nic_local) < t->npus;
}

static int load_hwloc(weft_topo_t *t, bool io, char *err, size_t errlen)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) {
        snprintf(err, errlen, "hwloc cannot read the machine's topology");
        return -1;
    }
    if (io) {
        /* Network cards as the Linux backend finds them in sysfs; not the
         * plugins (libpciaccess, OpenCL, GPUs), which are slow to load and
         * keep memory they never free. */
        static const char *const plugins[] = {"pci",  "opencl", "gl",       "cuda",
                                              "nvml", "rsmi",   "levelzero"};
        for (size_t i = 0; i < sizeof plugins / sizeof *plugins; i++)
            hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                          plugins[i]);
        hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    }
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        snprintf(err, errlen, "hwloc cannot read the machine's topology");
        return -1;
    }
    int rc = -1;
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (n < 1 || !(t->pus = calloc((size_t)n, sizeof *t->pus))) {
        snprintf(err, errlen, n < 1 ? "hwloc finds no cpu" : "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
        t->pus[i].os = (int)pu->os_index;
        for (int l = 0; l < WEFT_TOPO_LEVELS; l++)
            t->pus[i].at[l] = -1;
        t->pus[i].at[WEFT_TOPO_PU] = i;
        t->pus[i].at[WEFT_TOPO_MACHINE] = 0;
        if (pu->os_index >= CPU_SETSIZE) {
            snprintf(err, errlen, "cpu %u is beyond the %d weft can bind", pu->os_index,
                     CPU_SETSIZE);
            goto out;
        }
    }
    t->npus = n;
    t->count[WEFT_TOPO_PU] = n;
    t->count[WEFT_TOPO_MACHINE] = 1;
    static const struct {
        int level;
        hwloc_obj_type_t type;
    } levels[] = {{WEFT_TOPO_CORE, HWLOC_OBJ_CORE},
                  {WEFT_TOPO_L3, HWLOC_OBJ_L3CACHE},
                  {WEFT_TOPO_NUMA, HWLOC_OBJ_NUMANODE},
                  {WEFT_TOPO_PACKAGE, HWLOC_OBJ_PACKAGE}};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        int level = levels[l].level, nobj = hwloc_get_nbobjs_by_type(topo, levels[l].type);
        int count = 0;
        for (int j = 0; j < nobj; j++) {
            hwloc_obj_t obj = hwloc_get_obj_by_type(topo, levels[l].type, (unsigned)j);
            bool any = false;
            unsigned cpu;
            hwloc_bitmap_foreach_begin(cpu, obj->cpuset)
            {
                hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, cpu);
                if (pu && t->pus[pu->logical_index].at[level] < 0) {
                    t->pus[pu->logical_index].at[level] = count;
                    any = true;
                }
            }
            hwloc_bitmap_foreach_end();
            count += any;
        }
        t->count[level] = count;
    }
    /* A cpu that hwloc puts in no core is a core of its own. */
    for (int i = 0; i < n; i++)
        if (t->pus[i].at[WEFT_TOPO_CORE] < 0)
            t->pus[i].at[WEFT_TOPO_CORE] = t->count[WEFT_TOPO_CORE]++;
    if (io)
        load_nics(t, topo);
    t->this_system = hwloc_topology_is_thissystem(topo);
    t->source = t->this_system ? "hwloc" : "hwloc (synthetic or XML)";
    rc = 0;
out:
    hwloc_topology_destroy(topo);
    return rc;
}
#endif

int weft__topo_load(weft_topo_t **out, bool io, char *err, size_t errlen)
{
    weft_topo_t *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
#ifdef WEFT_HAVE_HWLOC
    int rc = load_hwloc(t, io, err, errlen);
#else
    (void)io;
    int rc = load_flat(t, err, errlen);
#endif
    if (rc != 0) {
        weft__topo_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void weft__topo_allowed(const weft_topo_t *t, cpu_set_t *out)
{
    cpu_set_t mine;
    bool known = t->this_system && sched_getaffinity(0, sizeof mine, &mine) == 0;
    CPU_ZERO(out);
    for (int i = 0; i < t->npus; i++)
        if (!known || CPU_ISSET(t->pus[i].os, &mine))
            CPU_SET(t->pus[i].os, out);
}

/* ---- policies ---- */

int weft__topo_policy_parse(const char *map_by, const char *bind_to, weft_topo_policy_t *p,
                            bool *by_node, char *err, size_t errlen)
{
    *p = (weft_topo_policy_t){.map = WEFT_TOPO_SLOT, .bind = WEFT_TOPO_CORE};
    *by_node = false;
    if (map_by) {
        /* object[:modifier[,modifier]...], modifiers pe=N (PE=N as Open MPI
         * writes it), oversubscribe, nooversubscribe, span (accepted). */
        size_t len = strcspn(map_by, ":");
        if (len == 4 && !strncasecmp(map_by, "slot", 4)) {
        } else if (len == 4 && !strncasecmp(map_by, "node", 4)) {
            *by_node = true;
        } else {
            int level = weft__topo_level_parse(map_by, len);
            if (level < WEFT_TOPO_PU || level == WEFT_TOPO_MACHINE) {
                snprintf(err, errlen,
                         "--map-by '%.*s': slot, node, hwthread, core, l3cache, numa or package",
                         (int)len, map_by);
                return -1;
            }
            p->map = level;
            p->map_given = true;
        }
        for (const char *m = map_by + len; *m;) {
            m++;
            size_t ml = strcspn(m, ",:");
            if (ml > 3 && !strncasecmp(m, "pe=", 3)) {
                char *end;
                long pe = strtol(m + 3, &end, 10);
                if (end != m + ml || pe < 1 || pe > CPU_SETSIZE) {
                    snprintf(err, errlen, "--map-by '%s': pe=N needs a number of cpus >= 1",
                             map_by);
                    return -1;
                }
                p->pe = (int)pe;
            } else if (!(ml == 13 && !strncasecmp(m, "oversubscribe", 13)) &&
                       !(ml == 15 && !strncasecmp(m, "nooversubscribe", 15)) &&
                       !(ml == 4 && !strncasecmp(m, "span", 4))) {
                snprintf(err, errlen, "--map-by '%s': unknown modifier '%.*s' (pe=N)", map_by,
                         (int)ml, m);
                return -1;
            }
            m += ml;
        }
        /* Binding follows the map's object; with pe=N, the N cpus. */
        if (p->pe)
            p->bind = p->map == WEFT_TOPO_PU ? WEFT_TOPO_PU : WEFT_TOPO_CORE;
        else if (p->map_given)
            p->bind = p->map;
    }
    if (bind_to) {
        size_t len = strcspn(bind_to, ":");
        int level = weft__topo_level_parse(bind_to, len);
        if (level == -3 || level == WEFT_TOPO_MACHINE) {
            snprintf(err, errlen,
                     "--bind-to '%.*s': none, hwthread, core, l3cache, numa or package", (int)len,
                     bind_to);
            return -1;
        }
        if (bind_to[len]) {
            if (strcasecmp(bind_to + len + 1, "overload-allowed") != 0) {
                snprintf(err, errlen, "--bind-to '%s': unknown modifier (overload-allowed)",
                         bind_to);
                return -1;
            }
            p->overload = true;
        }
        p->bind = level;
        p->bind_given = true;
    }
    return 0;
}

/* ---- mapping ---- */

/* The units ranks are given: cores (or hwthreads) with allowed cpus, in the
 * machine's order; each as its first cpu's index in t->pus. */
struct units {
    int n;
    int *first; /* index in t->pus of the unit's first allowed cpu */
    int level;  /* WEFT_TOPO_CORE or WEFT_TOPO_PU */
};

static int units_make(const weft_topo_t *t, const cpu_set_t *allowed, int level, struct units *u)
{
    u->n = 0;
    u->level = level;
    u->first = malloc(sizeof *u->first * (size_t)(t->npus ? t->npus : 1));
    if (!u->first)
        return -1;
    for (int i = 0; i < t->npus; i++) {
        if (!CPU_ISSET(t->pus[i].os, allowed))
            continue;
        if (u->n && t->pus[u->first[u->n - 1]].at[level] == t->pus[i].at[level])
            continue;
        u->first[u->n++] = i;
    }
    return 0;
}

/* The object of `level` that holds unit k. */
static int unit_at(const weft_topo_t *t, const struct units *u, int k, int level)
{
    return t->pus[u->first[k]].at[level];
}

/* Runs of consecutive units in one object of `level`: starts[o] and
 * lens[o] for each such object, in order; their number. */
static int unit_runs(const weft_topo_t *t, const struct units *u, int level, int *starts, int *lens)
{
    int n = 0;
    for (int k = 0; k < u->n; k++) {
        if (k == 0 || unit_at(t, u, k, level) != unit_at(t, u, k - 1, level)) {
            starts[n] = k;
            lens[n++] = 0;
        }
        lens[n - 1]++;
    }
    return n;
}

/* Ranks that fit, `pe` units each, none across a package: into runs. */
static int fits(const int *lens, int nruns, int pe)
{
    int n = 0;
    for (int r = 0; r < nruns; r++)
        n += lens[r] / pe;
    return n;
}

int weft__topo_map(const weft_topo_t *t, const cpu_set_t *allowed, int n,
                   const weft_topo_policy_t *p, cpu_set_t *sets, bool *bound, char *err,
                   size_t errlen)
{
    for (int i = 0; i < n; i++) {
        CPU_ZERO(&sets[i]);
        bound[i] = false;
    }
    if (n <= 0 || (p->bind == WEFT_TOPO_NONE && !p->map_given))
        return 0;
    int needed[2] = {p->map, p->bind};
    for (int i = 0; i < 2; i++) {
        if (needed[i] >= 0 && !t->count[needed[i]]) {
            snprintf(err, errlen, "this machine has no %s (hwloc sees none)",
                     weft__topo_level_name(needed[i]));
            return -1;
        }
    }
    int level = p->map == WEFT_TOPO_PU || p->bind == WEFT_TOPO_PU ? WEFT_TOPO_PU : WEFT_TOPO_CORE;
    const char *unit = level == WEFT_TOPO_PU ? "hwthread" : "core";
    struct units u;
    int *starts = NULL, *lens = NULL, *cursor = NULL, *rank_unit = NULL;
    int rc = -1;
    if (units_make(t, allowed, level, &u) != 0)
        goto out_nomem;
    starts = malloc(sizeof *starts * (size_t)(u.n + 1));
    lens = malloc(sizeof *lens * (size_t)(u.n + 1));
    cursor = calloc((size_t)u.n + 1, sizeof *cursor);
    rank_unit = malloc(sizeof *rank_unit * (size_t)n);
    if (!starts || !lens || !cursor || !rank_unit)
        goto out_nomem;
    if (u.n == 0) {
        snprintf(err, errlen, "no cpu of this machine is allowed");
        goto out;
    }
    int npkg = unit_runs(t, &u, WEFT_TOPO_PACKAGE, starts, lens);
    int widest = 0;
    for (int k = 0; k < npkg; k++)
        widest = lens[k] > widest ? lens[k] : widest;
    int pe = p->pe;
    bool chosen = !p->map_given && !p->bind_given && !pe;
    if (chosen) {
        /* The default: the ranks share the cores out, as many each as fit
         * everyone (a rank's threads then have cores of their own); none
         * across a package. Oversubscribed: no binding. */
        for (pe = u.n / n; pe > 1 && fits(lens, npkg, pe) < n; pe--)
            ;
        if (pe < 1 || fits(lens, npkg, pe) < n) {
            rc = 0;
            goto out;
        }
    } else if (!pe) {
        pe = 1;
    }
    if (pe > widest) {
        snprintf(err, errlen, "pe=%d is more than the %d %ss of a package here", pe, widest, unit);
        goto out;
    }
    bool overloaded = false;
    if (p->map == WEFT_TOPO_SLOT || p->map == WEFT_TOPO_CORE || p->map == WEFT_TOPO_PU) {
        /* In order, a rank's units never across a package. */
        int k = 0, run = 0;
        for (int r = 0; r < n && !overloaded; r++) {
            while (run < npkg && starts[run] + lens[run] - k < pe) {
                run++;
                k = run < npkg ? starts[run] : u.n;
            }
            if (run >= npkg) {
                overloaded = true;
                break;
            }
            rank_unit[r] = k;
            k += pe;
        }
    } else {
        /* Round-robin over the objects of the map's level. */
        int nobj = unit_runs(t, &u, p->map, starts, lens);
        int narrow = u.n;
        for (int o = 0; o < nobj; o++)
            narrow = lens[o] < narrow ? lens[o] : narrow;
        if (pe > narrow) {
            snprintf(err, errlen, "pe=%d is more than the %d %ss of a %s here", pe, narrow, unit,
                     weft__topo_level_name(p->map));
            goto out;
        }
        for (int r = 0; r < n; r++) {
            int o = r % nobj;
            if (cursor[o] + pe > lens[o]) {
                overloaded = true;
                break;
            }
            rank_unit[r] = starts[o] + cursor[o];
            cursor[o] += pe;
        }
    }
    if (overloaded) {
        if (p->overload || !(p->map_given || p->bind_given || p->pe)) {
            rc = 0; /* oversubscribed, as asked or by default: unbound */
            goto out;
        }
        snprintf(err, errlen,
                 "%d ranks do not fit this host's %d %ss at %d each (--map-by %s); "
                 "use fewer ranks, or --bind-to none",
                 n, u.n, unit, pe, weft__topo_level_name(p->map));
        goto out;
    }
    if (p->bind == WEFT_TOPO_NONE) {
        rc = 0;
        goto out;
    }
    for (int r = 0; r < n; r++) {
        /* The binding: every allowed cpu of the objects of the bind's level
         * that hold the rank's units. */
        for (int k = rank_unit[r]; k < rank_unit[r] + pe; k++) {
            int obj = unit_at(t, &u, k, p->bind);
            for (int i = 0; i < t->npus; i++)
                if (t->pus[i].at[p->bind] == obj && CPU_ISSET(t->pus[i].os, allowed))
                    CPU_SET(t->pus[i].os, &sets[r]);
        }
        bound[r] = true;
    }
    rc = 0;
    goto out;
out_nomem:
    snprintf(err, errlen, "out of memory");
out:
    free(u.first);
    free(starts);
    free(lens);
    free(cursor);
    free(rank_unit);
    return rc;
}

/* ---- text ---- */

void weft__topo_bitmap(const cpu_set_t *set, char *buf, size_t len)
{
    int top = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, set))
            top = cpu;
    size_t at = 0;
    buf[0] = '\0';
    for (int word = top / 32; word >= 0 && at + 12 < len; word--) {
        unsigned bits = 0;
        for (int b = 0; b < 32; b++)
            if (CPU_ISSET(word * 32 + b, set))
                bits |= 1u << b;
        at += (size_t)snprintf(buf + at, len - at, "%s0x%08x", at ? "," : "", bits);
    }
}

void weft__topo_list(const cpu_set_t *set, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE && at + 24 < len; cpu++) {
        if (!CPU_ISSET(cpu, set))
            continue;
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        if (last == cpu)
            at += (size_t)snprintf(buf + at, len - at, "%s%d", at ? "," : "", cpu);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", cpu, last);
        cpu = last;
    }
}

int weft__topo_list_parse(const char *s, cpu_set_t *out)
{
    CPU_ZERO(out);
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0 || a >= CPU_SETSIZE)
            return -1;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a || b >= CPU_SETSIZE)
                return -1;
            s = end;
        }
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, out);
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return 0;
}

void weft__topo_picture(const weft_topo_t *t, const cpu_set_t *set, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < t->npus && at + 4 < len; i++) {
        const weft_topo_pu_t *pu = &t->pus[i], *prev = i ? &t->pus[i - 1] : NULL;
        bool new_pkg = !prev || prev->at[WEFT_TOPO_PACKAGE] != pu->at[WEFT_TOPO_PACKAGE];
        if (prev && new_pkg)
            buf[at++] = ']';
        if (new_pkg)
            buf[at++] = '[';
        else if (prev->at[WEFT_TOPO_CORE] != pu->at[WEFT_TOPO_CORE])
            buf[at++] = '/';
        buf[at++] = CPU_ISSET(pu->os, set) ? 'B' : '.';
    }
    if (at && at + 1 < len)
        buf[at++] = ']';
    buf[at] = '\0';
}
