/* What the MPI applications of apps/ share: allocation that ends the job
 * when memory runs out, and whether this rank's cpus are its own. */
#ifndef APP_UTIL_H
#define APP_UTIL_H

#include <mpi.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void *app_xmalloc(size_t n, const char *who)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", who);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Whether placing this rank's threads makes sense: it was bound to part of
 * the machine, or it is alone on its node. Unbound ranks sharing a node
 * would all pile their threads onto the same first cores: their threads
 * are better left to the kernel. Collective over MPI_COMM_WORLD. */
static inline bool app_owns_cpus(void)
{
    MPI_Comm node;
    int on_node = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return false;
    return on_node == 1 || CPU_COUNT(&mine) < sysconf(_SC_NPROCESSORS_ONLN);
}

#endif
