/* The machine's hierarchy as weft places things on it: every cpu (hardware
 * thread, "PU") with the index of the core, L3 cache, NUMA node and package
 * that hold it. Read from hwloc where weft is built with it (hwloc honours
 * HWLOC_XMLFILE and HWLOC_SYNTHETIC, so a test can describe any machine);
 * without hwloc every cpu is a core of one package.
 *
 * Used by weftrun (mapping and binding ranks before exec), by the thread
 * groups (src/topo/tgroup.c) and by the progress thread's placement. Needs
 * nothing else of weft: weftrun compiles this file alone. */
#ifndef WEFT_SRC_TOPO_H
#define WEFT_SRC_TOPO_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    WEFT_TOPO_PU,
    WEFT_TOPO_CORE,
    WEFT_TOPO_L3,
    WEFT_TOPO_NUMA,
    WEFT_TOPO_PACKAGE,
    WEFT_TOPO_MACHINE,
    WEFT_TOPO_LEVELS,
    WEFT_TOPO_NONE = -1, /* --bind-to none */
    WEFT_TOPO_SLOT = -2, /* --map-by slot or node: the cores in order */
} weft_topo_level_t;

typedef struct {
    int os;                   /* the kernel's cpu number */
    int at[WEFT_TOPO_LEVELS]; /* the object of each level that holds it; -1: none */
} weft_topo_pu_t;

typedef struct weft_topo {
    int npus;
    weft_topo_pu_t *pus;         /* in the machine's (hwloc's logical) order */
    int count[WEFT_TOPO_LEVELS]; /* objects of each level; 0: the machine has none */
    bool this_system;            /* false for a synthetic or XML topology: no binding */
    /* The cpus near the network cards (their closest non-I/O object), when
     * loaded with io and hwloc knows them to be less than the machine. */
    bool nic_known;
    cpu_set_t nic_local;
    const char *source; /* "hwloc", "hwloc (synthetic or XML)", "flat" */
} weft_topo_t;

/* Loads this machine's topology (or the one HWLOC_XMLFILE / HWLOC_SYNTHETIC
 * describe); with io, the network cards' locality too (slower: PCI). 0, or
 * -1 with the reason in err. */
int weft__topo_load(weft_topo_t **out, bool io, char *err, size_t errlen);
void weft__topo_free(weft_topo_t *t);

/* The cpus of t that this process may use: its affinity for this system's
 * topology, every cpu of t otherwise. */
void weft__topo_allowed(const weft_topo_t *t, cpu_set_t *out);

/* "hwthread"/"pu", "core", "l3cache"/"l3", "numa", "package"/"socket",
 * "machine"/"node": the level; WEFT_TOPO_NONE for "none"; -3 if unknown. */
int weft__topo_level_parse(const char *name, size_t len);
const char *weft__topo_level_name(int level);

/* How ranks of one host are placed (weftrun --map-by / --bind-to). */
typedef struct {
    int map;         /* WEFT_TOPO_SLOT, _PU, _CORE, _L3, _NUMA, _PACKAGE */
    int pe;          /* cpus (cores, or hwthreads) per rank; 0: chosen */
    int bind;        /* a level, or WEFT_TOPO_NONE */
    bool map_given;  /* --map-by names an object (not slot or node) */
    bool bind_given; /* --bind-to given */
    bool overload;   /* --bind-to X:overload-allowed */
} weft_topo_policy_t;

/* Parses the values of --map-by (may be NULL) and --bind-to (may be NULL)
 * into p; *by_node tells --map-by node (ranks go round-robin over hosts). 0,
 * or -1 with the reason in err. */
int weft__topo_policy_parse(const char *map_by, const char *bind_to, weft_topo_policy_t *p,
                            bool *by_node, char *err, size_t errlen);

/* The cpus of each of the n ranks of one host under p, within allowed:
 * sets[i] and bound[i] (false: left unbound). 0, or -1 with the reason in
 * err (unknown object on this machine, more ranks than objects with binding
 * asked for, pe larger than a package). */
int weft__topo_map(const weft_topo_t *t, const cpu_set_t *allowed, int n,
                   const weft_topo_policy_t *p, cpu_set_t *sets, bool *bound, char *err,
                   size_t errlen);

/* set as hwloc writes a bitmap ("0x00000003", "0x00000001,0x00000000"). */
void weft__topo_bitmap(const cpu_set_t *set, char *buf, size_t len);
/* set as a list ("0-3,8"); "" when empty. */
void weft__topo_list(const cpu_set_t *set, char *buf, size_t len);
/* Parses a list ("0-3,8"). 0, or -1 if malformed. */
int weft__topo_list_parse(const char *s, cpu_set_t *out);
/* A picture of set on t: one [] per package, cores apart by '/', a 'B' per
 * cpu in set and a '.' per other ("[BB/..][../..]"). */
void weft__topo_picture(const weft_topo_t *t, const cpu_set_t *set, char *buf, size_t len);

#endif
