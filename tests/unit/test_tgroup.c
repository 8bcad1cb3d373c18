/* Thread groups (weft_topo.h): each policy's cpu sets on hwloc's synthetic
 * 2-package x 2-NUMA x 8-core x 2-hwthread machine (computed, not bound);
 * nested groups, `where`, gangs that do not fit, re-placing; then real
 * bindings on this machine read back with pthread_getaffinity_np, and the
 * progress thread placed where the groups leave room. */
#include <sched.h>
#include <stdlib.h>

#include "../common/test_cpus.h"
#include "../common/test_util.h"
#include "weft/weft_topo.h"

#define MAXT 80

static pthread_barrier_t done;
static pthread_t threads[MAXT];
static int nthreads;

static void *park(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&done);
    return NULL;
}

/* Threads that wait until the end of the test (members must be real). */
static void start_threads(int n)
{
    pthread_barrier_init(&done, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        MUST(pthread_create(&threads[i], NULL, park, NULL) == 0 ? WEFT_OK : WEFT_ESYS);
    nthreads = n;
}

static void stop_threads(void)
{
    pthread_barrier_wait(&done);
    for (int i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&done);
}

/* Member i of g is on `want`. */
static void cpus_are(weft_tgroup_t *g, int i, const char *want, int line)
{
    char got[512] = "?";
    int rc = weft_tgroup_cpus(g, i, got, sizeof got);
    if (rc != WEFT_OK || strcmp(got, want) != 0) {
        fprintf(stderr, "line %d: member %d on '%s' (%s), want '%s'\n", line, i, got,
                weft_strerror(rc), want);
        CHECK(!"placed as expected");
    } else {
        CHECK(1);
    }
}
#define CPUS(g, i, want) cpus_are(g, i, want, __LINE__)

static weft_tgroup_t *group(weft_tgroup_t *parent, weft_tgroup_policy_t policy, const char *where,
                            int first, int n)
{
    weft_tgroup_t *g = NULL;
    MUST(weft_tgroup_create(parent, policy, where, &g));
    for (int i = first; i < first + n; i++)
        MUST(weft_tgroup_add_thread(g, threads[i]));
    return g;
}

static void synthetic(void)
{
    setenv("HWLOC_SYNTHETIC", "pack:2 numa:2 core:8 pu:2", 1);
    start_threads(MAXT);

    /* SPREAD: 4 threads on 32 cores, one at the start of each 8-core part
     * (each NUMA node); 2 threads: one per package. */
    weft_tgroup_t *g = group(NULL, WEFT_TGROUP_SPREAD, NULL, 0, 4);
    CPUS(g, -1, "0-63");
    char text[64];
    CHECK(weft_tgroup_cpus(g, 0, text, sizeof text) == WEFT_ESTATE);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, 0, "0-1");
    CPUS(g, 1, "16-17");
    CPUS(g, 2, "32-33");
    CPUS(g, 3, "48-49");
    MUST(weft_tgroup_remove_thread(g, threads[2]));
    MUST(weft_tgroup_remove_thread(g, threads[3]));
    CHECK(weft_tgroup_remove_thread(g, threads[3]) == WEFT_ENOTFOUND);
    MUST(weft_tgroup_place(g, NULL)); /* re-placed: two left */
    CPUS(g, 0, "0-1");
    CPUS(g, 1, "32-33");
    CHECK(weft_tgroup_add_thread(g, threads[0]) == WEFT_ESTATE);
    CHECK(weft_tgroup_cpus(g, 2, text, sizeof text) == WEFT_EINVAL);
    CHECK(weft_tgroup_cpus(g, -1, text, 2) == WEFT_ETRUNC);
    MUST(weft_tgroup_free(g));

    /* COMPACT: side by side; past the cores, hardware threads; past those,
     * in turn. */
    g = group(NULL, WEFT_TGROUP_COMPACT, NULL, 0, 4);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, 0, "0-1");
    CPUS(g, 3, "6-7");
    MUST(weft_tgroup_free(g));
    g = group(NULL, WEFT_TGROUP_COMPACT, NULL, 0, 40);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, 0, "0");
    CPUS(g, 1, "1");
    CPUS(g, 39, "39");
    MUST(weft_tgroup_free(g));
    g = group(NULL, WEFT_TGROUP_SPREAD, NULL, 0, 66);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, 0, "0");
    CPUS(g, 65, "63");
    MUST(weft_tgroup_free(g));

    /* Nested: SPREAD over two COMPACT groups of 2 threads (a package each),
     * and a group BOUND to the second NUMA node whatever its parent does. */
    weft_tgroup_t *root = group(NULL, WEFT_TGROUP_SPREAD, NULL, 0, 0);
    weft_tgroup_t *a = group(root, WEFT_TGROUP_COMPACT, NULL, 0, 2);
    weft_tgroup_t *b = group(root, WEFT_TGROUP_COMPACT, NULL, 2, 2);
    weft_tgroup_t *n1 = group(root, WEFT_TGROUP_BOUND, "numa:1", 4, 2);
    MUST(weft_tgroup_place(b, NULL)); /* any group places its whole tree */
    CPUS(a, -1, "0-31");
    CPUS(a, 0, "0-1");
    CPUS(a, 1, "2-3");
    CPUS(b, -1, "32-63");
    CPUS(b, 0, "32-33");
    CPUS(b, 1, "34-35");
    CPUS(n1, 0, "16-31");
    CPUS(n1, 1, "16-31");
    CHECK(weft_tgroup_free(root) == WEFT_ESTATE);
    MUST(weft_tgroup_free(n1));
    /* A `where` that names nothing of its parent's cpus. */
    weft_tgroup_t *bad = group(a, WEFT_TGROUP_BOUND, "numa:1", 30, 1);
    MUST(weft_tgroup_place(root, NULL));
    CPUS(bad, 0, "16-31"); /* the second NUMA node of a's package */
    MUST(weft_tgroup_free(bad));
    bad = group(a, WEFT_TGROUP_BOUND, "numa:2", 30, 1);
    CHECK(weft_tgroup_place(root, NULL) == WEFT_ENOTFOUND);
    MUST(weft_tgroup_free(bad));
    bad = group(a, WEFT_TGROUP_BOUND, "cpus:2-5", 30, 1);
    MUST(weft_tgroup_place(root, NULL));
    CPUS(bad, 0, "2-5");
    MUST(weft_tgroup_free(bad));
    MUST(weft_tgroup_free(a));
    MUST(weft_tgroup_free(b));
    MUST(weft_tgroup_free(root));

    /* A gang of 16 fits a package; of 17 it does not, and then nothing
     * moves; beside another thread of its parent it would share: refused. */
    root = group(NULL, WEFT_TGROUP_COMPACT, "package:1", 0, 0);
    weft_tgroup_t *gang = group(root, WEFT_TGROUP_GANG, NULL, 0, 16);
    MUST(weft_tgroup_place(root, NULL));
    CPUS(gang, 0, "32-33");
    CPUS(gang, 15, "62-63");
    MUST(weft_tgroup_add_thread(gang, threads[16]));
    CHECK(weft_tgroup_place(root, NULL) == WEFT_ENOBUFS);
    CPUS(gang, 0, "32-33");
    CHECK(weft_tgroup_cpus(gang, 16, text, sizeof text) == WEFT_ESTATE);
    MUST(weft_tgroup_remove_thread(gang, threads[16]));
    MUST(weft_tgroup_add_thread(root, threads[16]));
    CHECK(weft_tgroup_place(root, NULL) == WEFT_ENOBUFS);
    MUST(weft_tgroup_remove_thread(root, threads[16]));
    MUST(weft_tgroup_remove_thread(gang, threads[15]));
    MUST(weft_tgroup_add_thread(root, threads[16]));
    MUST(weft_tgroup_place(root, NULL)); /* 15 + 1: fits */
    CPUS(gang, 0, "32-33");
    CPUS(root, 0, "62-63");
    MUST(weft_tgroup_free(gang));
    MUST(weft_tgroup_free(root));
    /* Under BOUND, a gang beside other members would share their cpus. */
    root = group(NULL, WEFT_TGROUP_BOUND, NULL, 0, 1);
    gang = group(root, WEFT_TGROUP_GANG, NULL, 1, 2);
    CHECK(weft_tgroup_place(root, NULL) == WEFT_ENOBUFS);
    MUST(weft_tgroup_remove_thread(root, threads[0]));
    MUST(weft_tgroup_place(root, NULL));
    CPUS(gang, 1, "2-3");
    MUST(weft_tgroup_free(gang));
    MUST(weft_tgroup_free(root));

    /* Roots on part of the machine; bad arguments. */
    g = group(NULL, WEFT_TGROUP_SPREAD, "package:1", 0, 2);
    CPUS(g, -1, "32-63");
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, 0, "32-33");
    CPUS(g, 1, "48-49");
    MUST(weft_tgroup_free(g));
    g = group(NULL, WEFT_TGROUP_COMPACT, "cpus:8-11", 0, 3);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, 0, "8"); /* 3 threads, 2 cores: hardware threads */
    CPUS(g, 2, "10");
    MUST(weft_tgroup_free(g));
    CHECK(weft_tgroup_create(NULL, WEFT_TGROUP_SPREAD, "package:2", &g) == WEFT_ENOTFOUND);
    CHECK(weft_tgroup_create(NULL, WEFT_TGROUP_SPREAD, "board:0", &g) == WEFT_EINVAL);
    CHECK(weft_tgroup_create(NULL, WEFT_TGROUP_SPREAD, "numa", &g) == WEFT_EINVAL);
    CHECK(weft_tgroup_create(NULL, WEFT_TGROUP_SPREAD, "cpus:x", &g) == WEFT_EINVAL);
    CHECK(weft_tgroup_create(NULL, (weft_tgroup_policy_t)9, NULL, &g) == WEFT_EINVAL);
    CHECK(weft_tgroup_create(NULL, WEFT_TGROUP_SPREAD, NULL, NULL) == WEFT_EINVAL);
    CHECK(weft_tgroup_place(NULL, NULL) == WEFT_EINVAL);
    stop_threads();
    unsetenv("HWLOC_SYNTHETIC");
}

/* Where a progress thread goes beside the groups: a free core, one near the
 * network card first (an XML machine with a NIC on package 0); a free
 * hardware thread; else the last core. */
static void progress_spot(void)
{
    start_threads(4);
    char xml[1024];
    snprintf(xml, sizeof xml, "%s", __FILE__);
    char *slash = strrchr(xml, '/');
    snprintf(slash ? slash + 1 : xml, sizeof xml - (size_t)(slash ? slash + 1 - xml : 0),
             "topo_nic.xml");
    setenv("HWLOC_XMLFILE", xml, 1);
    weft_tgroup_t *g = group(NULL, WEFT_TGROUP_SPREAD, NULL, 0, 2);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, 0, "0");
    CPUS(g, 1, "2");
    CPUS(g, WEFT_TGROUP_PROGRESS, "1"); /* free, and near eth1 */
    MUST(weft_tgroup_free(g));
    unsetenv("HWLOC_XMLFILE");
    setenv("HWLOC_SYNTHETIC", "pack:2 core:2 pu:1", 1);
    g = group(NULL, WEFT_TGROUP_SPREAD, NULL, 0, 2);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, WEFT_TGROUP_PROGRESS, "3"); /* no NIC known: the last free core */
    MUST(weft_tgroup_free(g));
    g = group(NULL, WEFT_TGROUP_COMPACT, NULL, 0, 4);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, WEFT_TGROUP_PROGRESS, "3"); /* all busy: the last core */
    MUST(weft_tgroup_free(g));
    setenv("HWLOC_SYNTHETIC", "pack:1 core:2 pu:2", 1);
    g = group(NULL, WEFT_TGROUP_COMPACT, NULL, 0, 3);
    MUST(weft_tgroup_place(g, NULL));
    CPUS(g, 2, "2");
    CPUS(g, WEFT_TGROUP_PROGRESS, "3"); /* the free hardware thread */
    MUST(weft_tgroup_free(g));
    unsetenv("HWLOC_SYNTHETIC");
    stop_threads();
}

static void real_bindings(weft_ctx_t *ctx)
{
    cpu_set_t mine;
    MUST(sched_getaffinity(0, sizeof mine, &mine) == 0 ? WEFT_OK : WEFT_ESYS);
    start_threads(1);
    weft_tgroup_t *g = group(NULL, WEFT_TGROUP_COMPACT, NULL, 0, 1);
    MUST(weft_tgroup_place(g, ctx));
    char want[512], got[512];
    MUST(weft_tgroup_cpus(g, 0, want, sizeof want));
    cpu_set_t set;
    MUST(pthread_getaffinity_np(threads[0], sizeof set, &set) == 0 ? WEFT_OK : WEFT_ESYS);
    test_cpu_list(&set, got, sizeof got); /* where the kernel says it is bound */
    CHECK(!strcmp(got, want));
    CHECK(CPU_COUNT(&set) < CPU_COUNT(&mine) || CPU_COUNT(&mine) == 1);
    /* The progress thread: off the member's cpus when the rank has more. */
    char prog[512];
    int rc = weft_progress_thread_cpus(ctx, prog, sizeof prog);
    if (getenv("WEFT_PROGRESS_THREAD")) {
        CHECK(rc == WEFT_OK);
        printf("member on %s, progress thread on %s\n", want, prog);
        if (rc == WEFT_OK && CPU_COUNT(&set) < CPU_COUNT(&mine))
            CHECK(strcmp(prog, want) != 0 && !strstr(prog, want));
    } else {
        CHECK(rc == WEFT_ESTATE);
    }
    MUST(weft_tgroup_free(g));
    stop_threads();
}

int main(void)
{
    test_watchdog(120);
    setenv("HWLOC_SYNTHETIC", "pack:2 core:2 pu:1", 1);
    weft_tgroup_t *probe;
    bool hwloc = false;
    if (weft_tgroup_create(NULL, WEFT_TGROUP_BOUND, NULL, &probe) == WEFT_OK) {
        char text[64];
        hwloc = weft_tgroup_cpus(probe, -1, text, sizeof text) == WEFT_OK && !strcmp(text, "0-3");
        weft_tgroup_free(probe);
    }
    unsetenv("HWLOC_SYNTHETIC");
    if (hwloc) {
        synthetic();
        progress_spot();
    } else
        printf("built without hwloc: synthetic machines not checked\n");
    weft_ctx_t *ctx = NULL;
    MUST(weft_init(NULL, &ctx));
    real_bindings(ctx);
    MUST(weft_finalize(ctx));
    return test_summary("test_tgroup");
}
