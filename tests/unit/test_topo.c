/* The mapping of a host's ranks onto its hierarchy (src/topo/topo.c), on
 * hwloc's synthetic machines: a 2-package x 2-NUMA x 8-core x 2-hwthread one
 * and a 64-core one with L3 caches, and on this machine. For each --map-by /
 * --bind-to the cpu sets are checked against the ones Open MPI's mpirun and
 * Slurm would give; then the bad inputs. */
#include <stdlib.h>

#include "../common/test_util.h"
#include "topo/topo.h"

static weft_topo_t *load(const char *synthetic)
{
    if (synthetic)
        setenv("HWLOC_SYNTHETIC", synthetic, 1);
    else
        unsetenv("HWLOC_SYNTHETIC");
    weft_topo_t *t = NULL;
    char err[256];
    if (weft__topo_load(&t, false, err, sizeof err) != 0) {
        fprintf(stderr, "cannot load the topology: %s\n", err);
        exit(1);
    }
    return t;
}

/* Maps n ranks under --map-by map --bind-to bind and compares each rank's
 * cpus with want[i] (a list, or "-" for unbound). */
static void expect(const weft_topo_t *t, const cpu_set_t *allowed, const char *map,
                   const char *bind, int n, const char *const *want)
{
    weft_topo_policy_t p;
    bool by_node;
    char err[256] = "";
    CHECK(weft__topo_policy_parse(map, bind, &p, &by_node, err, sizeof err) == 0);
    cpu_set_t sets[128];
    bool bound[128];
    int rc = weft__topo_map(t, allowed, n, &p, sets, bound, err, sizeof err);
    CHECK(rc == 0);
    if (rc != 0) {
        fprintf(stderr, "map %s bind %s n %d: %s\n", map ? map : "-", bind ? bind : "-", n, err);
        return;
    }
    for (int i = 0; i < n; i++) {
        char got[512];
        weft__topo_list(&sets[i], got, sizeof got);
        const char *g = bound[i] ? got : "-";
        if (strcmp(g, want[i]) != 0) {
            fprintf(stderr, "map %s bind %s n %d rank %d: cpus %s, want %s\n", map ? map : "-",
                    bind ? bind : "-", n, i, g, want[i]);
            CHECK(!"cpu set as expected");
        }
    }
}

/* The same, expecting an error whose text holds `why`. */
static void refuse(const weft_topo_t *t, const char *map, const char *bind, int n, const char *why)
{
    weft_topo_policy_t p;
    bool by_node;
    char err[256] = "";
    int rc = weft__topo_policy_parse(map, bind, &p, &by_node, err, sizeof err);
    if (rc == 0) {
        cpu_set_t allowed, sets[128];
        bool bound[128];
        weft__topo_allowed(t, &allowed);
        rc = weft__topo_map(t, &allowed, n, &p, sets, bound, err, sizeof err);
    }
    CHECK(rc != 0);
    if (rc == 0 || !strstr(err, why)) {
        fprintf(stderr, "map %s bind %s n %d: '%s', want an error about '%s'\n", map ? map : "-",
                bind ? bind : "-", n, err, why);
        CHECK(!"refused for the reason expected");
    }
}

#define WANT(...) ((const char *const[]){__VA_ARGS__})

/* 2 packages x 2 NUMA nodes x 8 cores x 2 hwthreads: core c holds cpus 2c
 * and 2c+1; NUMA node k cores 8k..8k+7. */
static void machine_2x2x8x2(void)
{
    weft_topo_t *t = load("pack:2 numa:2 core:8 pu:2");
    CHECK(t->npus == 64 && t->count[WEFT_TOPO_CORE] == 32);
    CHECK(t->count[WEFT_TOPO_NUMA] == 4 && t->count[WEFT_TOPO_PACKAGE] == 2);
    CHECK(t->count[WEFT_TOPO_L3] == 0 && !t->this_system);
    cpu_set_t all;
    weft__topo_allowed(t, &all);
    CHECK(CPU_COUNT(&all) == 64);

    /* Default: the cores shared out, none across a package; oversubscribed
     * (more ranks than cores): unbound. */
    expect(t, &all, NULL, NULL, 1, WANT("0-31"));
    expect(t, &all, NULL, NULL, 2, WANT("0-31", "32-63"));
    expect(t, &all, NULL, NULL, 3, WANT("0-15", "16-31", "32-47"));
    expect(t, &all, NULL, NULL, 4, WANT("0-15", "16-31", "32-47", "48-63"));
    const char *none[40];
    for (int i = 0; i < 40; i++)
        none[i] = "-";
    expect(t, &all, NULL, NULL, 33, none);
    expect(t, &all, NULL, "none", 4, none);
    expect(t, &all, NULL, "core:overload-allowed", 33, none);

    expect(t, &all, NULL, "core", 4, WANT("0-1", "2-3", "4-5", "6-7"));
    expect(t, &all, "core", NULL, 3, WANT("0-1", "2-3", "4-5"));
    expect(t, &all, "slot", "hwthread", 3, WANT("0", "1", "2"));
    expect(t, &all, "hwthread", NULL, 3, WANT("0", "1", "2"));
    expect(t, &all, "hwthread", "core", 3, WANT("0-1", "0-1", "2-3"));
    expect(t, &all, NULL, "numa", 3, WANT("0-15", "0-15", "0-15"));
    expect(t, &all, NULL, "package", 2, WANT("0-31", "0-31"));
    expect(t, &all, "numa", NULL, 6, WANT("0-15", "16-31", "32-47", "48-63", "0-15", "16-31"));
    expect(t, &all, "numa", "core", 6, WANT("0-1", "16-17", "32-33", "48-49", "2-3", "18-19"));
    expect(t, &all, "socket", "core", 4, WANT("0-1", "32-33", "2-3", "34-35"));
    expect(t, &all, "package", NULL, 3, WANT("0-31", "32-63", "0-31"));
    expect(t, &all, "package:pe=4", NULL, 4, WANT("0-7", "32-39", "8-15", "40-47"));
    expect(t, &all, "package:PE=4", "package", 2, WANT("0-31", "32-63"));
    expect(t, &all, "slot:pe=2", NULL, 3, WANT("0-3", "4-7", "8-11"));
    expect(t, &all, "core:pe=2", "hwthread", 3, WANT("0-1", "2-3", "4-5"));
    /* A rank's cores stay in one package: the third starts the second. */
    expect(t, &all, "slot:pe=6", NULL, 4, WANT("0-11", "12-23", "32-43", "44-55"));
    expect(t, &all, "numa:pe=8", NULL, 4, WANT("0-15", "16-31", "32-47", "48-63"));

    /* A rank that owns part of the machine (a cpuset): numa 1 and 2. */
    cpu_set_t part;
    CHECK(weft__topo_list_parse("16-47", &part) == 0);
    expect(t, &part, NULL, NULL, 2, WANT("16-31", "32-47"));
    expect(t, &part, NULL, "core", 2, WANT("16-17", "18-19"));
    expect(t, &part, "numa", NULL, 3, WANT("16-31", "32-47", "16-31"));

    /* Bad input: a clear error before any rank starts. */
    refuse(t, NULL, "core", 33, "33 ranks do not fit this host's 32 cores");
    refuse(t, "numa", "core", 33, "do not fit");
    refuse(t, "package:pe=17", NULL, 1, "pe=17 is more than the 16 cores of a package");
    refuse(t, "numa:pe=9", NULL, 1, "pe=9 is more than the 8 cores of a numa");
    refuse(t, "l3cache", NULL, 1, "no l3cache");
    refuse(t, NULL, "l3cache", 1, "no l3cache");
    refuse(t, "board", NULL, 1, "--map-by 'board'");
    refuse(t, "l2cache", NULL, 1, "--map-by 'l2cache'");
    refuse(t, NULL, "l2cache", 1, "--bind-to 'l2cache'");
    refuse(t, NULL, "core:sometimes", 1, "unknown modifier");
    refuse(t, "core:pe=0", NULL, 1, "pe=N");
    refuse(t, "core:pe=x", NULL, 1, "pe=N");
    refuse(t, "core:wide", NULL, 1, "unknown modifier 'wide'");

    /* Pictures and bitmaps for --report-bindings. */
    cpu_set_t set;
    char text[512];
    CHECK(weft__topo_list_parse("0-1", &set) == 0);
    weft__topo_bitmap(&set, text, sizeof text);
    CHECK(!strcmp(text, "0x00000003"));
    weft__topo_picture(t, &set, text, sizeof text);
    CHECK(!strncmp(text, "[BB/../", 7) && strstr(text, "/..][../") && strlen(text) == 2 * 49);
    CHECK(weft__topo_list_parse("33,63", &set) == 0);
    weft__topo_bitmap(&set, text, sizeof text);
    CHECK(!strcmp(text, "0x80000002,0x00000000"));
    weft__topo_list(&set, text, sizeof text);
    CHECK(!strcmp(text, "33,63"));
    CHECK(weft__topo_list_parse("3-1", &set) != 0 && weft__topo_list_parse("1,x", &set) != 0);
    weft__topo_free(t);
}

/* 64 cores, one hwthread each: 2 packages x 2 NUMA x 2 L3 x 8 cores. */
static void machine_64(void)
{
    weft_topo_t *t = load("pack:2 numa:2 l3:2 core:8 pu:1");
    CHECK(t->npus == 64 && t->count[WEFT_TOPO_CORE] == 64 && t->count[WEFT_TOPO_L3] == 8);
    cpu_set_t all;
    weft__topo_allowed(t, &all);
    expect(t, &all, NULL, NULL, 8,
           WANT("0-7", "8-15", "16-23", "24-31", "32-39", "40-47", "48-55", "56-63"));
    expect(t, &all, NULL, NULL, 64,
           WANT("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14",
                "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28",
                "29", "30", "31", "32", "33", "34", "35", "36", "37", "38", "39", "40", "41", "42",
                "43", "44", "45", "46", "47", "48", "49", "50", "51", "52", "53", "54", "55", "56",
                "57", "58", "59", "60", "61", "62", "63"));
    expect(t, &all, "l3cache", NULL, 9,
           WANT("0-7", "8-15", "16-23", "24-31", "32-39", "40-47", "48-55", "56-63", "0-7"));
    expect(t, &all, "l3", "core", 10, WANT("0", "8", "16", "24", "32", "40", "48", "56", "1", "9"));
    expect(t, &all, "l3cache:pe=4", NULL, 3, WANT("0-3", "8-11", "16-19"));
    expect(t, &all, "numa", "l3cache", 5, WANT("0-7", "16-23", "32-39", "48-55", "0-7"));
    /* Hwthreads are cores here: binding to either is the same. */
    expect(t, &all, "hwthread", "hwthread", 2, WANT("0", "1"));
    char text[256];
    cpu_set_t set;
    CHECK(weft__topo_list_parse("0,63", &set) == 0);
    weft__topo_picture(t, &set, text, sizeof text);
    CHECK(!strncmp(text, "[B/./", 5) && strstr(text, "./.][./") && strstr(text, "/B]"));
    refuse(t, NULL, "core", 65, "65 ranks do not fit this host's 64 cores");
    refuse(t, "l3cache:pe=9", NULL, 1, "pe=9 is more than the 8 cores of a l3cache");
    weft__topo_free(t);
}

/* This machine: whatever it is, the default gives each rank its own cores,
 * disjoint, within what this process may use. */
static void this_machine(void)
{
    weft_topo_t *t = load(NULL);
    CHECK(t->this_system);
    cpu_set_t allowed;
    weft__topo_allowed(t, &allowed);
    CHECK(CPU_COUNT(&allowed) >= 1);
    weft_topo_policy_t p;
    bool by_node;
    char err[256];
    CHECK(weft__topo_policy_parse(NULL, "core", &p, &by_node, err, sizeof err) == 0);
    cpu_set_t sets[2];
    bool bound[2];
    int cores = 0;
    for (int i = 0; i < t->npus; i++)
        cores += CPU_ISSET(t->pus[i].os, &allowed) &&
                 (i == 0 || t->pus[i].at[WEFT_TOPO_CORE] != t->pus[i - 1].at[WEFT_TOPO_CORE]);
    if (cores >= 2) {
        CHECK(weft__topo_map(t, &allowed, 2, &p, sets, bound, err, sizeof err) == 0);
        cpu_set_t both;
        CPU_AND(&both, &sets[0], &sets[1]);
        CHECK(bound[0] && bound[1] && CPU_COUNT(&both) == 0);
        CPU_AND(&both, &sets[0], &allowed);
        CHECK(CPU_EQUAL(&both, &sets[0]));
    }
    weft__topo_free(t);
}

int main(void)
{
    test_watchdog(120);
    weft_topo_t *probe = load("pack:2 core:2 pu:1");
    bool hwloc = probe->npus == 4 && strcmp(probe->source, "flat") != 0;
    weft__topo_free(probe);
    if (hwloc) {
        machine_2x2x8x2();
        machine_64();
    } else {
        printf("built without hwloc: synthetic machines not checked\n");
    }
    this_machine();
    return test_summary("test_topo");
}
