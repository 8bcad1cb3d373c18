/* Thread groups: placing a rank's threads on the machine's hierarchy.
 *
 * Seed 004 (Marcel's "bubbles"): on a machine of cores in caches, chips and
 * NUMA nodes, the application says which threads belong together, and a
 * policy places each group on the part of the machine the rank owns. A group
 * holds threads and sub-groups; its policy shares its cpus out among them:
 *
 *   SPREAD   members as far apart as the group's cpus allow: the cpus are cut
 *            into as many equal consecutive parts as the group has threads (a
 *            sub-group counts its threads), a thread runs on the first core
 *            of its part, a sub-group gets all its parts (OpenMP's
 *            proc_bind(spread)). Two threads on two packages: one on each.
 *   COMPACT  members side by side: each thread on the next core (sharing
 *            caches), a sub-group on the next cores, as many as its threads
 *            (OpenMP's proc_bind(close)).
 *   GANG     as COMPACT, but every thread of the group has a core of its own,
 *            never shared with another thread of the group or of its parent,
 *            so all of them can run at once; a gang that does not fit is not
 *            placed at all (WEFT_ENOBUFS). Linux has no gang scheduler: weft
 *            guarantees the cores, not that the threads are scheduled as one.
 *   BOUND    every member on all of the group's cpus (with `where`, a group
 *            bound to one hwloc object).
 *
 * With more threads than cores, COMPACT and SPREAD use hardware threads, and
 * with more threads than those, threads share them in turn.
 *
 * A group created with `where` takes that part of its parent's cpus, whatever
 * its parent's policy: "numa:1" (the second NUMA node among those the parent
 * spans), "package:0", "l3cache:2", "core:3", "hwthread:5", or "cpus:0-7,16"
 * (kernel cpu numbers). A root group (no parent) spans the cpus the calling
 * thread may run on (the rank's binding, from weftrun or any launcher), or
 * its `where` among them.
 *
 * weft_tgroup_place computes every member's cpus, then binds the threads
 * (pthread_setaffinity_np); on an error nothing is changed. Given the
 * context, it places the context's progress thread too, where the groups
 * leave room: on a core no member uses (near the network card where hwloc
 * knows its locality), else on a hardware thread no member uses, else on the
 * group's last core, where the progress thread polls at idle priority as it
 * always does when it must poll.
 *
 * On a topology that is not this machine's (HWLOC_SYNTHETIC, HWLOC_XMLFILE)
 * everything is computed and reported by weft_tgroup_cpus, nothing is bound.
 *
 * Thread safety: every call is thread-safe; the calls on the groups of one
 * tree are serialized by a lock of the tree. */
#ifndef WEFT_TOPO_H_PUBLIC
#define WEFT_TOPO_H_PUBLIC

#include <pthread.h>
#include <stddef.h>

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_tgroup weft_tgroup_t;

typedef enum {
    WEFT_TGROUP_SPREAD,
    WEFT_TGROUP_COMPACT,
    WEFT_TGROUP_GANG,
    WEFT_TGROUP_BOUND,
} weft_tgroup_policy_t;

/* A new, empty group under parent (NULL: a root group, which reads the
 * machine's topology: milliseconds), placing its members by policy, on the
 * part `where` of its parent's cpus (NULL: whatever its parent's policy
 * gives it). Errors: WEFT_EINVAL (bad policy or `where`, out NULL),
 * WEFT_ENOTFOUND (a root's `where` names no object of the rank's cpus),
 * WEFT_ESYS (the topology or the thread's binding cannot be read),
 * WEFT_ENOMEM. */
WEFT_API int weft_tgroup_create(weft_tgroup_t *parent, weft_tgroup_policy_t policy,
                                const char *where, weft_tgroup_t **out);

/* Frees an empty-of-groups group (its threads leave it, keeping their
 * binding). Errors: WEFT_EINVAL (NULL), WEFT_ESTATE (it has sub-groups). */
WEFT_API int weft_tgroup_free(weft_tgroup_t *group);

/* Adds a thread to the group (weft_tgroup_join: the calling thread); a
 * thread belongs to one group of a tree at most. It is bound at the next
 * weft_tgroup_place. Errors: WEFT_EINVAL, WEFT_ESTATE (already in a group
 * of this tree), WEFT_ENOMEM. */
WEFT_API int weft_tgroup_add_thread(weft_tgroup_t *group, pthread_t thread);
WEFT_API int weft_tgroup_join(weft_tgroup_t *group);

/* Removes a thread from the group; its binding stays. Errors: WEFT_EINVAL,
 * WEFT_ENOTFOUND (not a member). */
WEFT_API int weft_tgroup_remove_thread(weft_tgroup_t *group, pthread_t thread);

/* Places the whole tree that group belongs to, from its root, and binds its
 * threads; with ctx (may be NULL) also that context's progress thread, if it
 * runs. Call it again after adding or removing members: that re-places
 * them. Errors (nothing is bound then): WEFT_ENOBUFS (a gang does not fit),
 * WEFT_ENOTFOUND (a `where` names no object of its parent's cpus),
 * WEFT_ESYS (a thread cannot be bound: it may have ended), WEFT_EINVAL. */
WEFT_API int weft_tgroup_place(weft_tgroup_t *group, weft_ctx_t *ctx);

/* weft_tgroup_cpus's member for where a progress thread goes beside the
 * tree (as weft_tgroup_place puts the context's). */
#define WEFT_TGROUP_PROGRESS (-2)

/* The cpus, as a list ("0-3,8"), of the group (member -1), of its member-th
 * thread (in the order they were added), or where a progress thread goes
 * beside the group's tree (WEFT_TGROUP_PROGRESS), as last placed; the
 * group's span before any placing. Errors: WEFT_EINVAL (no such member,
 * NULL buffer), WEFT_ETRUNC (len too small), WEFT_ESTATE (not placed yet). */
WEFT_API int weft_tgroup_cpus(weft_tgroup_t *group, int member, char *buf, size_t len);

/* The cpus the context's progress thread may run on, as a list. Errors:
 * WEFT_EINVAL, WEFT_ESTATE (no progress thread runs), WEFT_ESYS,
 * WEFT_ETRUNC. Thread-safe. */
WEFT_API int weft_progress_thread_cpus(weft_ctx_t *ctx, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
