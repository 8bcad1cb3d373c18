/* Where the progress thread runs (WEFT_PROGRESS_THREAD=1, WEFT_PROGRESS_CPU).
 * Each rank finds the thread by its name ("weft-progress") under
 * /proc/self/task and checks its cpu affinity against what the placement
 * rules give, worked out here from the kernel's own topology files
 * (/sys/devices/system/cpu/cpuN/topology/thread_siblings_list), not from
 * hwloc. Modes (argument):
 *   auto   the rank as launched: within one core, that core's other hardware
 *          threads (or the core); over several cores, one whole core of them
 *          when they outnumber the ranks (all ranks here share one node), else
 *          unpinned (the rank's own affinity);
 *   bind   the rank binds itself to its last allowed cpu before weft_init:
 *          the thread stays on that cpu's core;
 *   cpu    WEFT_PROGRESS_CPU set to the rank's first allowed cpu: exactly it;
 *   none   WEFT_PROGRESS_CPU=none: the rank's own affinity;
 *   group  after init, a thread group (weft_topo.h) spans the rank's cpus as
 *          its launcher bound it, places the main thread on its first core
 *          and the progress thread where the group leaves room: another core
 *          of the rank, or the rank's one core. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include "../common/test_cpus.h"
#include "../common/test_util.h"
#include "weft/weft_topo.h"

/* The cpus of cpu's core, from sysfs; false when unreadable. */
static bool core_of(int cpu, cpu_set_t *out)
{
    char path[128], line[256];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    CPU_ZERO(out);
    for (char *p = line; ok && *p && *p != '\n';) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return false;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, out);
        p = *end == ',' ? end + 1 : end;
    }
    return ok && CPU_COUNT(out) > 0;
}

/* The cores meeting set, each reduced to its cpus in set; their number, or
 * -1 when the topology cannot be read. */
static int cores_in(const cpu_set_t *set, cpu_set_t *cores, int max)
{
    int n = 0;
    cpu_set_t seen;
    CPU_ZERO(&seen);
    for (int cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++) {
        if (!CPU_ISSET(cpu, set) || CPU_ISSET(cpu, &seen))
            continue;
        cpu_set_t core;
        if (!core_of(cpu, &core))
            return -1;
        CPU_OR(&seen, &seen, &core);
        CPU_AND(&cores[n], &core, set);
        n++;
    }
    return n;
}

/* The progress thread's affinity, once it has named itself. */
static bool progress_affinity(cpu_set_t *out)
{
    for (int tries = 0; tries < 400; tries++) {
        DIR *d = opendir("/proc/self/task");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char path[300], name[32] = "";
            snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            if (fgets(name, sizeof name, f) && !strcmp(name, "weft-progress\n")) {
                fclose(f);
                pid_t tid = (pid_t)atoi(e->d_name);
                closedir(d);
                /* Named before it pins itself: let it do both. */
                usleep(20000);
                return sched_getaffinity(tid, sizeof *out, out) == 0;
            }
            fclose(f);
        }
        if (d)
            closedir(d);
        usleep(5000);
    }
    return false;
}

static int first_cpu(const cpu_set_t *s)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, s))
            return c;
    return -1;
}

static int last_cpu(const cpu_set_t *s)
{
    for (int c = CPU_SETSIZE - 1; c >= 0; c--)
        if (CPU_ISSET(c, s))
            return c;
    return -1;
}

int main(int argc, char **argv)
{
    test_watchdog(60);
    const char *mode = argc > 1 ? argv[1] : "auto";
    setenv("WEFT_PROGRESS_THREAD", "1", 1);
    cpu_set_t mine;
    MUST(sched_getaffinity(0, sizeof mine, &mine) == 0 ? WEFT_OK : WEFT_ESYS);
    static cpu_set_t cores[CPU_SETSIZE];
    if (cores_in(&mine, cores, CPU_SETSIZE) < 0) {
        printf("mp_progress_place: no cpu topology in /sys; skipped\n");
        return 77;
    }
    if (!strcmp(mode, "bind")) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(last_cpu(&mine), &one);
        MUST(sched_setaffinity(0, sizeof one, &one) == 0 ? WEFT_OK : WEFT_ESYS);
        mine = one;
    } else if (!strcmp(mode, "cpu")) {
        char v[16];
        snprintf(v, sizeof v, "%d", first_cpu(&mine));
        setenv("WEFT_PROGRESS_CPU", v, 1);
    } else if (!strcmp(mode, "none")) {
        setenv("WEFT_PROGRESS_CPU", "none", 1);
    }
    weft_ctx_t *ctx = test_init("mp_progress_place", 1);
    int ranks = weft_size(ctx);

    cpu_set_t got;
    bool found = progress_affinity(&got);
    CHECK(found);
    cpu_set_t want = mine;
    bool one_core_of_mine = false;
    int ncores = cores_in(&mine, cores, CPU_SETSIZE);
    if (!strcmp(mode, "cpu")) {
        CPU_ZERO(&want);
        CPU_SET(first_cpu(&mine), &want);
    } else if (!strcmp(mode, "none")) {
        want = mine;
    } else if (ncores == 1) {
        /* Within one core (bind, or a rank launched so): its other hardware
         * threads, else the core. */
        cpu_set_t core, rest;
        core_of(first_cpu(&mine), &core);
        CPU_XOR(&rest, &core, &mine);
        CPU_AND(&rest, &rest, &core);
        want = CPU_COUNT(&rest) ? rest : core;
    } else if (ncores > ranks) {
        one_core_of_mine = true; /* a core left over: which one depends on the rank */
    }
    if (found && one_core_of_mine) {
        int n = cores_in(&got, cores, CPU_SETSIZE);
        cpu_set_t inside;
        CPU_AND(&inside, &got, &mine);
        CHECK(n == 1 && CPU_EQUAL(&inside, &got));
    } else if (found) {
        CHECK(CPU_EQUAL(&got, &want));
    }
    if (found && !strcmp(mode, "group")) {
        /* The group spans what the launcher gave the rank. */
        char text[1024], list[1024];
        weft_tgroup_t *g;
        MUST(weft_tgroup_create(NULL, WEFT_TGROUP_COMPACT, NULL, &g));
        MUST(weft_tgroup_join(g));
        MUST(weft_tgroup_cpus(g, -1, text, sizeof text));
        test_cpu_list(&mine, list, sizeof list);
        CHECK(!strcmp(text, list));
        MUST(weft_tgroup_place(g, ctx));
        cpu_set_t main_cpus, prog;
        MUST(sched_getaffinity(0, sizeof main_cpus, &main_cpus) == 0 ? WEFT_OK : WEFT_ESYS);
        cores_in(&mine, cores, CPU_SETSIZE);
        CHECK(CPU_EQUAL(&main_cpus, &cores[0]));
        CHECK(progress_affinity(&prog));
        cpu_set_t inside, both;
        CPU_AND(&inside, &prog, &mine);
        CPU_AND(&both, &prog, &main_cpus);
        if (ncores > 1)
            CHECK(CPU_EQUAL(&inside, &prog) && CPU_COUNT(&both) == 0);
        else
            CHECK(CPU_EQUAL(&prog, &cores[0]));
        MUST(weft_progress_thread_cpus(ctx, text, sizeof text));
        printf("[rank %d] rank on %s, main thread on cpu %d, progress thread on %s\n", test_rank,
               list, first_cpu(&main_cpus), text);
        MUST(weft_tgroup_free(g));
    }
    if (found && test_failed)
        fprintf(stderr,
                "[rank %d] mode %s: progress thread on %d cpus from %d, %d cores, %d ranks\n",
                test_rank, mode, CPU_COUNT(&got), first_cpu(&got), ncores, ranks);
    MUST(weft_finalize(ctx));
    return test_summary("mp_progress_place");
}
