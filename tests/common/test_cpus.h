/* A cpu set as a list ("0-3,8"), as weft_tgroup_cpus and the kernel's
 * Cpus_allowed_list write it, for tests that compare placements. */
#ifndef WEFT_TEST_CPUS_H
#define WEFT_TEST_CPUS_H

#include <sched.h>
#include <stdio.h>

static inline void test_cpu_list(const cpu_set_t *set, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && at + 24 < len; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        at += (size_t)snprintf(buf + at, len - at, last > c ? "%s%d-%d" : "%s%d", at ? "," : "", c,
                               last);
        c = last;
    }
}

#endif
