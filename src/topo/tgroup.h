/* Thread groups' placement (tgroup.c), for the public weft_tgroup_place of
 * src/api/tgroup.c, which places the progress thread too. */
#ifndef WEFT_SRC_TGROUP_H
#define WEFT_SRC_TGROUP_H

#include <sched.h>
#include <stdbool.h>

#include "weft/weft_topo.h"

/* Computes the cpus of every member of group's tree, then binds its threads.
 * A weft status; on an error nothing is bound. */
int weft__tgroup_place(weft_tgroup_t *group);

/* Where a progress thread goes beside group's tree as last placed: a core
 * of the root's cpus that no member uses (one near a network card first),
 * else a hardware thread no member uses, else the root's last core. False
 * when the topology is not this machine's (nothing is to be bound). */
bool weft__tgroup_spare(weft_tgroup_t *group, cpu_set_t *out);

#endif
