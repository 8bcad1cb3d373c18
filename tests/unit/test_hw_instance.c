/* weft_hw_instance: bad arguments and unknown names are refused (hwloc's
 * prefixes included: "no" is no NUMANode), the machine is instance 0 under
 * every spelling, and a thread bound to one cpu finds its PU and its core,
 * one of each, which it no longer does once it may run on several cores. */
#include <sched.h>

#include "../common/test_util.h"

int main(void)
{
    test_watchdog(60);
    int index = -1;
    CHECK(weft_hw_instance(NULL, &index) == WEFT_EINVAL);
    CHECK(weft_hw_instance("Core", NULL) == WEFT_EINVAL);
    CHECK(weft_hw_instance("no_such_resource", &index) == WEFT_EINVAL);
    CHECK(weft_hw_instance("no", &index) == WEFT_EINVAL);
    CHECK(weft_hw_instance("", &index) == WEFT_EINVAL);
    const char *machine[] = {"Machine", "machine", "hwloc://Machine", "node"};
    for (size_t i = 0; i < sizeof machine / sizeof *machine; i++) {
        index = -1;
        CHECK(weft_hw_instance(machine[i], &index) == WEFT_OK && index == 0);
    }
    cpu_set_t allowed, one;
    MUST(sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? WEFT_OK : WEFT_ESYS);
    int first = -1, cpus = CPU_COUNT(&allowed);
    for (int c = CPU_SETSIZE - 1; c >= 0; c--)
        if (CPU_ISSET(c, &allowed))
            first = c;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    MUST(sched_setaffinity(0, sizeof one, &one) == 0 ? WEFT_OK : WEFT_ESYS);
    int pu = -1, core = -1;
    int rc = weft_hw_instance("PU", &pu);
    CHECK(rc == WEFT_OK && pu >= 0);
    rc = weft_hw_instance("hwthread", &index);
    CHECK(rc == WEFT_OK && index == pu);
    rc = weft_hw_instance("Core", &core);
    CHECK((rc == WEFT_OK && core >= 0) || rc == WEFT_EUNSUPPORTED);
    MUST(sched_setaffinity(0, sizeof allowed, &allowed) == 0 ? WEFT_OK : WEFT_ESYS);
    if (cpus > 1)
        CHECK(weft_hw_instance("PU", &index) == WEFT_ENOTFOUND);
    return test_summary("test_hw_instance");
}
