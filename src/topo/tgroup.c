/* Thread groups (seed 004, Marcel's bubbles): a tree of groups whose policies
 * share the rank's cpus out among their threads. See weft_topo.h for the
 * policies; the placement is computed for the whole tree first, then the
 * threads are bound, so an error leaves every binding as it was. */
#include "topo/tgroup.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

typedef struct {
    bool is_group;
    pthread_t thread;
    weft_tgroup_t *group;
    bool placed;
    cpu_set_t cpus, next; /* as bound; as computed by the placement under way */
} member_t;

/* What a tree shares: its topology and its lock. The network cards'
 * locality is read only when a progress thread is to be placed: I/O
 * discovery doubles the time to read the topology. */
typedef struct {
    pthread_mutex_t lock;
    weft_topo_t *topo;
    bool nics_read;
} tree_t;

struct weft_tgroup {
    tree_t *tree;
    weft_tgroup_t *parent;
    weft_tgroup_policy_t policy;
    char *where;    /* NULL: what its parent gives it */
    cpu_set_t cpus; /* a root's span; else as last placed */
    cpu_set_t next; /* being computed */
    bool placed;
    member_t *members;
    int nmembers, cap;
};

/* `where` parsed: an object level and index, or a cpu list. */
static int where_parse(const char *where, int *level, int *index, cpu_set_t *list)
{
    const char *colon = strchr(where, ':');
    if (!colon || !colon[1])
        return WEFT_EINVAL;
    size_t len = (size_t)(colon - where);
    if (len == 4 && !strncmp(where, "cpus", 4)) {
        *level = -1;
        return weft__topo_list_parse(colon + 1, list) == 0 && CPU_COUNT(list) ? WEFT_OK
                                                                              : WEFT_EINVAL;
    }
    *level = weft__topo_level_parse(where, len);
    if (*level < WEFT_TOPO_PU || *level >= WEFT_TOPO_MACHINE)
        return WEFT_EINVAL;
    char *end;
    long i = strtol(colon + 1, &end, 10);
    if (*end || i < 0 || i > 1 << 20)
        return WEFT_EINVAL;
    *index = (int)i;
    return WEFT_OK;
}

/* The part `where` of base: WEFT_ENOTFOUND when it holds none of base. */
static int where_resolve(const weft_topo_t *t, const char *where, const cpu_set_t *base,
                         cpu_set_t *out)
{
    int level, index;
    cpu_set_t list;
    int rc = where_parse(where, &level, &index, &list);
    if (rc != WEFT_OK)
        return rc;
    CPU_ZERO(out);
    if (level < 0) {
        CPU_AND(out, &list, base);
        return CPU_COUNT(out) ? WEFT_OK : WEFT_ENOTFOUND;
    }
    /* The index-th object of the level that meets base, in the machine's
     * order (objects are numbered in that order, so consecutive cpus). */
    int seen = -1, last = -1;
    for (int i = 0; i < t->npus; i++) {
        const weft_topo_pu_t *pu = &t->pus[i];
        if (!CPU_ISSET(pu->os, base) || pu->at[level] < 0)
            continue;
        if (pu->at[level] != last) {
            last = pu->at[level];
            seen++;
        }
        if (seen == index)
            CPU_SET(pu->os, out);
        else if (seen > index)
            break;
    }
    return CPU_COUNT(out) ? WEFT_OK : WEFT_ENOTFOUND;
}

static int grow(weft_tgroup_t *g)
{
    if (g->nmembers < g->cap)
        return WEFT_OK;
    int cap = g->cap ? 2 * g->cap : 8;
    member_t *m = realloc(g->members, sizeof *m * (size_t)cap);
    if (!m)
        return WEFT_ENOMEM;
    g->members = m;
    g->cap = cap;
    return WEFT_OK;
}

WEFT_API int weft_tgroup_create(weft_tgroup_t *parent, weft_tgroup_policy_t policy,
                                const char *where, weft_tgroup_t **out)
{
    if (!out || policy < WEFT_TGROUP_SPREAD || policy > WEFT_TGROUP_BOUND)
        return WEFT_EINVAL;
    int level, index;
    cpu_set_t list;
    if (where && where_parse(where, &level, &index, &list) != WEFT_OK)
        return WEFT_EINVAL;
    weft_tgroup_t *g = calloc(1, sizeof *g);
    if (!g || (where && !(g->where = strdup(where)))) {
        free(g);
        return WEFT_ENOMEM;
    }
    g->policy = policy;
    int rc = WEFT_OK;
    if (parent) {
        pthread_mutex_lock(&parent->tree->lock);
        g->tree = parent->tree;
        g->parent = parent;
        g->cpus = parent->cpus;
        if ((rc = grow(parent)) == WEFT_OK)
            parent->members[parent->nmembers++] = (member_t){.is_group = true, .group = g};
        pthread_mutex_unlock(&parent->tree->lock);
        if (rc != WEFT_OK)
            goto err;
        *out = g;
        return WEFT_OK;
    }
    /* A root: the topology, and the cpus the calling thread may use. */
    char why[256];
    rc = WEFT_ENOMEM;
    if (!(g->tree = calloc(1, sizeof *g->tree)))
        goto err;
    if (weft__topo_load(&g->tree->topo, false, why, sizeof why) != 0) {
        rc = WEFT_ESYS;
        goto err_tree;
    }
    cpu_set_t span;
    weft__topo_allowed(g->tree->topo, &span);
    if (g->tree->topo->this_system &&
        pthread_getaffinity_np(pthread_self(), sizeof span, &span) != 0) {
        rc = WEFT_ESYS;
        goto err_topo;
    }
    cpu_set_t all;
    weft__topo_allowed(g->tree->topo, &all);
    CPU_AND(&span, &span, &all);
    if (where && (rc = where_resolve(g->tree->topo, where, &span, &g->cpus)) != WEFT_OK)
        goto err_topo;
    if (!where)
        g->cpus = span;
    pthread_mutex_init(&g->tree->lock, NULL);
    *out = g;
    return WEFT_OK;

err_topo:
    weft__topo_free(g->tree->topo);
err_tree:
    free(g->tree);
err:
    free(g->where);
    free(g);
    return rc;
}

WEFT_API int weft_tgroup_free(weft_tgroup_t *g)
{
    if (!g)
        return WEFT_EINVAL;
    tree_t *tree = g->tree;
    pthread_mutex_lock(&tree->lock);
    for (int i = 0; i < g->nmembers; i++) {
        if (g->members[i].is_group) {
            pthread_mutex_unlock(&tree->lock);
            return WEFT_ESTATE;
        }
    }
    weft_tgroup_t *parent = g->parent;
    if (parent) {
        for (int i = 0; i < parent->nmembers; i++) {
            if (parent->members[i].is_group && parent->members[i].group == g) {
                memmove(&parent->members[i], &parent->members[i + 1],
                        sizeof *parent->members * (size_t)(parent->nmembers - i - 1));
                parent->nmembers--;
                break;
            }
        }
    }
    pthread_mutex_unlock(&tree->lock);
    if (!parent) {
        pthread_mutex_destroy(&tree->lock);
        weft__topo_free(tree->topo);
        free(tree);
    }
    free(g->members);
    free(g->where);
    free(g);
    return WEFT_OK;
}

static weft_tgroup_t *root_of(weft_tgroup_t *g)
{
    while (g->parent)
        g = g->parent;
    return g;
}

/* Whether thread is a member of g or of a group under it. */
static bool holds(const weft_tgroup_t *g, pthread_t thread)
{
    for (int i = 0; i < g->nmembers; i++) {
        const member_t *m = &g->members[i];
        if (m->is_group ? holds(m->group, thread) : pthread_equal(m->thread, thread))
            return true;
    }
    return false;
}

WEFT_API int weft_tgroup_add_thread(weft_tgroup_t *g, pthread_t thread)
{
    if (!g)
        return WEFT_EINVAL;
    pthread_mutex_lock(&g->tree->lock);
    int rc = WEFT_ESTATE;
    if (!holds(root_of(g), thread) && (rc = grow(g)) == WEFT_OK)
        g->members[g->nmembers++] = (member_t){.thread = thread};
    pthread_mutex_unlock(&g->tree->lock);
    return rc;
}

WEFT_API int weft_tgroup_join(weft_tgroup_t *g)
{
    return weft_tgroup_add_thread(g, pthread_self());
}

WEFT_API int weft_tgroup_remove_thread(weft_tgroup_t *g, pthread_t thread)
{
    if (!g)
        return WEFT_EINVAL;
    pthread_mutex_lock(&g->tree->lock);
    int rc = WEFT_ENOTFOUND;
    for (int i = 0; i < g->nmembers; i++) {
        if (!g->members[i].is_group && pthread_equal(g->members[i].thread, thread)) {
            memmove(&g->members[i], &g->members[i + 1],
                    sizeof *g->members * (size_t)(g->nmembers - i - 1));
            g->nmembers--;
            rc = WEFT_OK;
            break;
        }
    }
    pthread_mutex_unlock(&g->tree->lock);
    return rc;
}

/* ---- placement ---- */

/* Threads of a member: 1 for a thread, all those under a group (at least 1,
 * so that an empty group still gets a share), but for those of groups with a
 * `where`, which take their own part whatever their share. */
static int threads_under(const weft_tgroup_t *g)
{
    int n = 0;
    for (int i = 0; i < g->nmembers; i++) {
        const member_t *m = &g->members[i];
        n += !m->is_group ? 1 : m->group->where ? 0 : threads_under(m->group);
    }
    return n;
}

static int weight(const member_t *m)
{
    if (!m->is_group)
        return 1;
    int n = threads_under(m->group);
    return n > 0 ? n : 1;
}

/* The units a group shares out: its cores (or, per_pu, its hardware
 * threads), each as the set of its cpus within the group's. */
static int units_of(const weft_topo_t *t, const cpu_set_t *cpus, bool per_pu, cpu_set_t *units)
{
    int n = 0, last = -1;
    for (int i = 0; i < t->npus; i++) {
        const weft_topo_pu_t *pu = &t->pus[i];
        if (!CPU_ISSET(pu->os, cpus))
            continue;
        int at = pu->at[per_pu ? WEFT_TOPO_PU : WEFT_TOPO_CORE];
        if (n == 0 || at != last) {
            CPU_ZERO(&units[n++]);
            last = at;
        }
        CPU_SET(pu->os, &units[n - 1]);
    }
    return n;
}

static int compute(const weft_topo_t *t, weft_tgroup_t *g, const cpu_set_t *cpus);

/* Gives member m the cpus `set`: a thread is bound there, a group placed. */
static int give(const weft_topo_t *t, member_t *m, const cpu_set_t *set)
{
    if (!m->is_group) {
        m->next = *set;
        return WEFT_OK;
    }
    return compute(t, m->group, set);
}

static int share(const weft_topo_t *t, weft_tgroup_t *g, int total, cpu_set_t *units);

/* Computes g's placement on cpus: g->next and its members' next. */
static int compute(const weft_topo_t *t, weft_tgroup_t *g, const cpu_set_t *cpus)
{
    g->next = *cpus;
    if (g->where && g->parent) {
        int rc = where_resolve(t, g->where, cpus, &g->next);
        if (rc != WEFT_OK)
            return rc;
    }
    int total = 0;
    for (int i = 0; i < g->nmembers; i++) {
        member_t *m = &g->members[i];
        if (m->is_group && m->group->where) {
            /* Its own part of this group's cpus, whatever the policy. */
            int rc = compute(t, m->group, &g->next);
            if (rc != WEFT_OK)
                return rc;
            continue;
        }
        total += weight(m);
    }
    if (total == 0)
        return WEFT_OK;
    if (g->policy == WEFT_TGROUP_BOUND) {
        for (int i = 0; i < g->nmembers; i++) {
            const member_t *m = &g->members[i];
            if (total > weight(m) && m->is_group && !m->group->where &&
                m->group->policy == WEFT_TGROUP_GANG)
                return WEFT_ENOBUFS; /* its cores would be its siblings' too */
        }
        for (int i = 0; i < g->nmembers; i++) {
            member_t *m = &g->members[i];
            int rc = m->is_group && m->group->where ? WEFT_OK : give(t, m, &g->next);
            if (rc != WEFT_OK)
                return rc;
        }
        return WEFT_OK;
    }
    cpu_set_t *units = malloc(sizeof *units * (size_t)t->npus);
    if (!units)
        return WEFT_ENOMEM;
    int rc = share(t, g, total, units);
    free(units);
    return rc;
}

/* SPREAD, COMPACT and GANG: g's units (cores, or hardware threads when the
 * threads are more) shared out among its members of the given total weight. */
static int share(const weft_topo_t *t, weft_tgroup_t *g, int total, cpu_set_t *units)
{
    int n = units_of(t, &g->next, false, units);
    bool per_pu = total > n;
    if (per_pu) {
        if (g->policy == WEFT_TGROUP_GANG)
            return WEFT_ENOBUFS; /* a core per thread, or not at all */
        n = units_of(t, &g->next, true, units);
    }
    if (n == 0)
        return WEFT_ENOTFOUND;
    bool wraps = total > n;
    int at = 0;
    for (int i = 0; i < g->nmembers; i++) {
        member_t *m = &g->members[i];
        if (m->is_group && m->group->where)
            continue;
        int w = weight(m);
        if (wraps && m->is_group && m->group->policy == WEFT_TGROUP_GANG)
            return WEFT_ENOBUFS; /* it would share its cores */
        cpu_set_t set;
        CPU_ZERO(&set);
        if (g->policy == WEFT_TGROUP_SPREAD) {
            /* Part j of total: units [j*n/total, max(+1, (j+1)*n/total)). A
             * thread takes the first unit of its part, a group all its parts. */
            for (int j = at; j < at + w; j++) {
                int lo = (int)((long)j * n / total), hi = (int)((long)(j + 1) * n / total);
                if (hi <= lo)
                    hi = lo + 1;
                for (int k = lo; k < (m->is_group ? hi : lo + 1); k++)
                    CPU_OR(&set, &set, &units[k]);
            }
        } else {
            for (int j = at; j < at + w; j++)
                CPU_OR(&set, &set, &units[j % n]);
        }
        at += w;
        int rc = give(t, m, &set);
        if (rc != WEFT_OK)
            return rc;
    }
    return WEFT_OK;
}

/* Binds what compute found, and keeps it as placed. */
static int apply(weft_tgroup_t *g, bool bind)
{
    int rc = WEFT_OK;
    g->cpus = g->next;
    g->placed = true;
    for (int i = 0; i < g->nmembers; i++) {
        member_t *m = &g->members[i];
        if (m->is_group) {
            int r = apply(m->group, bind);
            rc = rc == WEFT_OK ? r : rc;
            continue;
        }
        if (bind && pthread_setaffinity_np(m->thread, sizeof m->next, &m->next) != 0) {
            rc = WEFT_ESYS;
            continue;
        }
        m->cpus = m->next;
        m->placed = true;
    }
    return rc;
}

int weft__tgroup_place(weft_tgroup_t *group)
{
    if (!group)
        return WEFT_EINVAL;
    weft_tgroup_t *root = root_of(group);
    const weft_topo_t *t = root->tree->topo;
    pthread_mutex_lock(&root->tree->lock);
    int rc = compute(t, root, &root->cpus);
    if (rc == WEFT_OK)
        rc = apply(root, t->this_system);
    pthread_mutex_unlock(&root->tree->lock);
    return rc;
}

/* The cpus the threads of g's tree were placed on. */
static void used_by(const weft_tgroup_t *g, cpu_set_t *used)
{
    for (int i = 0; i < g->nmembers; i++) {
        const member_t *m = &g->members[i];
        if (m->is_group)
            used_by(m->group, used);
        else if (m->placed)
            CPU_OR(used, used, &m->cpus);
    }
}

static void spare(weft_tgroup_t *root, cpu_set_t *out)
{
    weft_topo_t *t = root->tree->topo;
    if (!root->tree->nics_read) {
        weft_topo_t *io;
        char why[256];
        if (weft__topo_load(&io, true, why, sizeof why) == 0) {
            t->nic_known = io->nic_known;
            t->nic_local = io->nic_local;
            weft__topo_free(io);
        }
        root->tree->nics_read = true;
    }
    cpu_set_t used;
    CPU_ZERO(&used);
    used_by(root, &used);
    /* Free cores, near a network card first; then free hardware threads;
     * the last found of the best kind (applications fill cores from the
     * first). */
    int best = -1;
    cpu_set_t core;
    CPU_ZERO(out);
    CPU_ZERO(&core);
    for (int i = 0; i < t->npus; i++) {
        const weft_topo_pu_t *pu = &t->pus[i];
        if (CPU_ISSET(pu->os, &root->cpus))
            CPU_SET(pu->os, &core);
        bool core_ends =
            i + 1 == t->npus || t->pus[i + 1].at[WEFT_TOPO_CORE] != pu->at[WEFT_TOPO_CORE];
        if (!core_ends || !CPU_COUNT(&core))
            continue;
        cpu_set_t busy, near;
        CPU_AND(&busy, &core, &used);
        CPU_AND(&near, &core, &t->nic_local);
        int kind = CPU_COUNT(&busy) ? 0 : t->nic_known && CPU_COUNT(&near) ? 3 : 2;
        if (kind == 0 && CPU_COUNT(&busy) < CPU_COUNT(&core))
            kind = 1; /* a hardware thread of a busy core */
        if (kind >= best) {
            best = kind;
            if (kind == 1)
                CPU_XOR(out, &core, &busy);
            else
                *out = core;
        }
        CPU_ZERO(&core);
    }
    if (!CPU_COUNT(out))
        *out = root->cpus;
}

bool weft__tgroup_spare(weft_tgroup_t *group, cpu_set_t *out)
{
    weft_tgroup_t *root = root_of(group);
    pthread_mutex_lock(&root->tree->lock);
    spare(root, out);
    bool real = root->tree->topo->this_system;
    pthread_mutex_unlock(&root->tree->lock);
    return real;
}

WEFT_API int weft_tgroup_cpus(weft_tgroup_t *g, int member, char *buf, size_t len)
{
    if (!g || !buf || member < WEFT_TGROUP_PROGRESS)
        return WEFT_EINVAL;
    pthread_mutex_lock(&g->tree->lock);
    int rc = WEFT_EINVAL, k = -1;
    const cpu_set_t *set = NULL;
    cpu_set_t spot;
    if (member == -1) {
        set = &g->cpus;
        rc = WEFT_OK;
    } else if (member == WEFT_TGROUP_PROGRESS) {
        spare(root_of(g), &spot);
        set = &spot;
        rc = WEFT_OK;
    }
    for (int i = 0; i < g->nmembers && !set; i++) {
        if (!g->members[i].is_group && ++k == member) {
            set = &g->members[i].cpus;
            rc = g->members[i].placed ? WEFT_OK : WEFT_ESTATE;
        }
    }
    if (rc == WEFT_OK) {
        char text[4096];
        weft__topo_list(set, text, sizeof text);
        rc = strlen(text) < len ? WEFT_OK : WEFT_ETRUNC;
        if (rc == WEFT_OK)
            memcpy(buf, text, strlen(text) + 1);
    }
    pthread_mutex_unlock(&g->tree->lock);
    return rc;
}
