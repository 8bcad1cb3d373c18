/* MPI_Comm_split_type by hardware resource (MPI 4.0 §7.4.2), checked against
 * what Linux says of the machine in /sys (not hwloc, which weft uses):
 *   - guided, with every rank bound to one cpu (rank r to the (r mod n)-th
 *     cpu it may run on): for Package, L3Cache, L2Cache, Core and PU (and
 *     the spellings "hwloc://Core" and "core"), each rank's communicator
 *     holds exactly the ranks whose cpu shares that resource with its own,
 *     and its info names the resource;
 *   - guided with "mpi_shared_memory": every rank of the node;
 *   - guided with an unknown resource, no info, or no key: MPI_COMM_NULL on
 *     every rank, and success;
 *   - guided, unbound again: Core gives MPI_COMM_NULL where the rank may run
 *     on several cores;
 *   - unguided, bound: a strict subset of the ranks or MPI_COMM_NULL, its
 *     info naming a level that a guided split with that name reproduces;
 *   - MPI_UNDEFINED: MPI_COMM_NULL.
 * Linux only (sched_setaffinity and sysfs); a resource that /sys does not
 * describe is passed over. Plain MPI 4.0. */
#define _GNU_SOURCE
#include <sched.h>

#include "mpitest.h"

#define KEYLEN 128

static int me, np;
static cpu_set_t allowed;

/* The first line of a file, without its newline; 0 when it cannot be read. */
static int read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        out[strcspn(out, "\n")] = '\0';
    return ok;
}

/* What identifies cpu's instance of a resource type, from /sys: the list of
 * cpus that share it. 0 when /sys does not say. */
static int sys_key(int cpu, const char *type, char *key)
{
    char path[256], level[16], kind[32];
    if (!strcmp(type, "PU")) {
        snprintf(key, KEYLEN, "%d", cpu);
        return 1;
    }
    if (!strcmp(type, "Core")) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", cpu);
        if (read_line(path, key, KEYLEN))
            return 1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                 cpu);
        return read_line(path, key, KEYLEN);
    }
    if (!strcmp(type, "Package")) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/package_cpus_list",
                 cpu);
        if (read_line(path, key, KEYLEN))
            return 1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_siblings_list",
                 cpu);
        return read_line(path, key, KEYLEN);
    }
    int want = !strcmp(type, "L3Cache") ? 3 : !strcmp(type, "L2Cache") ? 2 : 0;
    for (int i = 0; want && i < 16; i++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, i);
        if (!read_line(path, level, sizeof level))
            return 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, i);
        if (atoi(level) != want || !read_line(path, kind, sizeof kind) ||
            !strcmp(kind, "Instruction"))
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
                 cpu, i);
        return read_line(path, key, KEYLEN);
    }
    return 0;
}

/* The world ranks of c's members, in world rank order, as a bit mask (the
 * test runs at most 64 ranks); 0 for MPI_COMM_NULL. */
static unsigned long long members(MPI_Comm c)
{
    if (c == MPI_COMM_NULL)
        return 0;
    int n;
    MPI_MUST(MPI_Comm_size(c, &n));
    int *all = malloc((size_t)n * sizeof *all);
    MPI_MUST(MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, c));
    unsigned long long m = 0;
    for (int i = 0; i < n; i++)
        m |= 1ull << all[i];
    free(all);
    return m;
}

/* The resource named in c's info, or "" . */
static void info_type(MPI_Comm c, char *out)
{
    MPI_Info info;
    int flag = 0;
    out[0] = '\0';
    MPI_MUST(MPI_Comm_get_info(c, &info));
    MPI_MUST(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, out, &flag));
    MPI_MUST(MPI_Info_free(&info));
    if (!flag)
        out[0] = '\0';
}

/* A guided split on `value`. */
static MPI_Comm guided(const char *value)
{
    MPI_Info info;
    MPI_Comm c;
    MPI_MUST(MPI_Info_create(&info));
    MPI_MUST(MPI_Info_set(info, "mpi_hw_resource_type", value));
    MPI_MUST(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    MPI_MUST(MPI_Info_free(&info));
    return c;
}

/* Bound: each type's groups are those of /sys. */
static void bound_types(int cpu)
{
    static const char *const types[][2] = {
        {"Package", "Package"}, {"L3Cache", "L3Cache"},   {"L2Cache", "L2Cache"}, {"Core", "Core"},
        {"PU", "PU"},           {"Core", "hwloc://Core"}, {"Core", "core"}};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        char key[KEYLEN] = "", *keys = malloc((size_t)np * KEYLEN);
        int have = sys_key(cpu, types[t][0], key), all_have = have;
        MPI_MUST(MPI_Allreduce(MPI_IN_PLACE, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        MPI_MUST(MPI_Allgather(key, KEYLEN, MPI_CHAR, keys, KEYLEN, MPI_CHAR, MPI_COMM_WORLD));
        MPI_Comm c = guided(types[t][1]);
        if (all_have) {
            unsigned long long want = 0;
            for (int r = 0; r < np; r++)
                if (!strcmp(keys + (size_t)r * KEYLEN, key))
                    want |= 1ull << r;
            unsigned long long got = members(c);
            if (got != want)
                fprintf(stderr, "[rank %d] cpu %d, %s: members %llx, /sys says %llx (%s)\n", me,
                        cpu, types[t][1], got, want, key);
            CHECK(got == want);
            char named[MPI_MAX_INFO_VAL + 1] = "";
            if (c != MPI_COMM_NULL)
                info_type(c, named);
            CHECK(!strcmp(named, types[t][1]));
        }
        if (c != MPI_COMM_NULL)
            MPI_MUST(MPI_Comm_free(&c));
        free(keys);
    }
}

/* Splits where nobody gets a communicator, without error. */
static void nobody(void)
{
    MPI_Comm c = guided("no_such_resource");
    CHECK(c == MPI_COMM_NULL);
    MPI_MUST(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL);
    MPI_Info empty;
    MPI_MUST(MPI_Info_create(&empty));
    MPI_MUST(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, empty, &c));
    CHECK(c == MPI_COMM_NULL);
    MPI_MUST(MPI_Info_free(&empty));
    MPI_MUST(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL);
}

/* Unguided: a strict subset, whose level a guided split reproduces. */
static void unguided(void)
{
    MPI_Info info;
    MPI_Comm c;
    MPI_MUST(MPI_Info_create(&info));
    MPI_MUST(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
    int size = 0;
    char named[MPI_MAX_INFO_VAL + 1] = "", given[MPI_MAX_INFO_VAL + 1] = "";
    if (c != MPI_COMM_NULL) {
        MPI_MUST(MPI_Comm_size(c, &size));
        info_type(c, named);
        int flag = 0;
        MPI_MUST(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, given, &flag));
        CHECK(flag && !strcmp(given, named));
        CHECK(named[0] != '\0');
    }
    CHECK(size < np); /* a strict subset, or none */
    if (np == 1)
        CHECK(c == MPI_COMM_NULL);
    /* Everybody names the same level (or none): the guided split on it
     * gives the same groups. */
    char *all = malloc((size_t)np * (MPI_MAX_INFO_VAL + 1));
    MPI_MUST(MPI_Allgather(named, MPI_MAX_INFO_VAL + 1, MPI_CHAR, all, MPI_MAX_INFO_VAL + 1,
                           MPI_CHAR, MPI_COMM_WORLD));
    const char *level = "";
    for (int r = 0; r < np; r++)
        if (all[(size_t)r * (MPI_MAX_INFO_VAL + 1)])
            level = all + (size_t)r * (MPI_MAX_INFO_VAL + 1);
    for (int r = 0; r < np; r++) {
        const char *l = all + (size_t)r * (MPI_MAX_INFO_VAL + 1);
        CHECK(!l[0] || !strcmp(l, level));
    }
    if (level[0]) {
        MPI_Comm again = guided(level);
        CHECK(members(again) == members(c));
        if (again != MPI_COMM_NULL)
            MPI_MUST(MPI_Comm_free(&again));
    }
    free(all);
    if (c != MPI_COMM_NULL)
        MPI_MUST(MPI_Comm_free(&c));
    MPI_MUST(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    me = mt_rank;
    np = mt_size;
    if (np > 64 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        if (me == 0)
            printf("test_comm_hw: needs at most 64 ranks and sched_getaffinity\n");
        MPI_Finalize();
        return 77;
    }
    /* Shared memory: the whole node (one node here). */
    MPI_Comm c = guided("mpi_shared_memory");
    CHECK(members(c) == (np == 64 ? ~0ull : (1ull << np) - 1));
    MPI_MUST(MPI_Comm_free(&c));
    nobody();
    /* Bound to one cpu each. */
    int n = CPU_COUNT(&allowed), cpu = -1;
    for (int i = 0, seen = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &allowed) && seen++ == me % n)
            cpu = i;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    bound_types(cpu);
    unguided();
    /* Unbound again: on several cores, a rank is within no one core. */
    CHECK(sched_setaffinity(0, sizeof allowed, &allowed) == 0);
    char first[KEYLEN] = "", other[KEYLEN] = "";
    int cores = 1;
    for (int i = 0; i < CPU_SETSIZE; i++) {
        if (!CPU_ISSET(i, &allowed) || !sys_key(i, "Core", other))
            continue;
        if (!first[0])
            strcpy(first, other);
        else if (strcmp(first, other))
            cores = 2;
    }
    c = guided("Core");
    if (cores > 1)
        CHECK(c == MPI_COMM_NULL);
    if (c != MPI_COMM_NULL)
        MPI_MUST(MPI_Comm_free(&c));
    return mt_finish("test_comm_hw");
}
