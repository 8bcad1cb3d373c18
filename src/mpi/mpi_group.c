/* Groups (MPI 3.1 §6.3): an ordered list of world ranks. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"

struct weft_mpi_group weft_mpi_group_empty = {
    .magic = WEFT_MPI_MAGIC_GROUP, .predefined = true, .size = 0, .rank = MPI_UNDEFINED};
struct weft_mpi_group weft_mpi_group_null = {.magic = WEFT_MPI_MAGIC_GROUP, .predefined = true};

MPI_Group weft__mpi_group_new(int size, const int *world_ranks)
{
    MPI_Group g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->ranks = malloc((size_t)(size ? size : 1) * sizeof *g->ranks);
    if (!g->ranks) {
        free(g);
        return NULL;
    }
    if (size)
        memcpy(g->ranks, world_ranks, (size_t)size * sizeof *g->ranks);
    g->magic = WEFT_MPI_MAGIC_GROUP;
    atomic_init(&g->refs, 1);
    g->size = size;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < size; i++)
        if (world_ranks[i] == weft__mpi.world_rank)
            g->rank = i;
    return g;
}

void weft__mpi_group_retain(MPI_Group g)
{
    if (!g->predefined)
        atomic_fetch_add(&g->refs, 1);
}

void weft__mpi_group_release(MPI_Group g)
{
    if (g && !g->predefined && atomic_fetch_sub(&g->refs, 1) == 1) {
        g->magic = WEFT_MPI_MAGIC_DEAD;
        free(g->ranks);
        free(g);
    }
}

/* ---- checks ---- */

static bool valid_group(MPI_Group g)
{
    return g && g->magic == WEFT_MPI_MAGIC_GROUP && g != MPI_GROUP_NULL;
}

/* Where a result has no member the standard asks for MPI_GROUP_EMPTY itself,
 * so that applications may compare the handle. */
static int make_group(int n, const int *world_ranks, MPI_Group *out)
{
    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    MPI_Group g = weft__mpi_group_new(n, world_ranks);
    if (!g)
        return MPI_ERR_NO_MEM;
    *out = g;
    return MPI_SUCCESS;
}

/* The index of world rank w in g, or -1. Groups are short next to the cost of
 * the calls that use them; a linear scan keeps groups a plain array. */
static int index_of(MPI_Group g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] == w)
            return i;
    return -1;
}

/* ---- queries ---- */

int PMPI_Group_size(MPI_Group group, int *size)
{
    if (!valid_group(group))
        return weft__mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_size");
    if (!size)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_size");
    *size = group->size;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Group_size)

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    if (!valid_group(group))
        return weft__mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_rank");
    if (!rank)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_rank");
    *rank = group->rank;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Group_rank)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    if (!valid_group(group1) || !valid_group(group2))
        return weft__mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_translate_ranks");
    if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_translate_ranks");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= group1->size))
            return weft__mpi_err(NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int j = index_of(group2, group1->ranks[ranks1[i]]);
        ranks2[i] = j < 0 ? MPI_UNDEFINED : j;
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Group_translate_ranks)

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    if (!valid_group(group1) || !valid_group(group2))
        return weft__mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_compare");
    if (!result)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_compare");
    if (group1->size != group2->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    bool same_order = true;
    for (int i = 0; i < group1->size && same_order; i++)
        same_order = group1->ranks[i] == group2->ranks[i];
    if (same_order) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    /* A group holds distinct processes, so equal sizes and inclusion one way
     * make the same set. */
    for (int i = 0; i < group1->size; i++) {
        if (index_of(group2, group1->ranks[i]) < 0) {
            *result = MPI_UNEQUAL;
            return MPI_SUCCESS;
        }
    }
    *result = MPI_SIMILAR;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Group_compare)

/* ---- set operations (§6.3.2): the order is group1's, then group2's ---- */

typedef enum set_op { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE } set_op_t;

static int set_op(MPI_Group g1, MPI_Group g2, set_op_t op, MPI_Group *newgroup, const char *fn)
{
    if (!valid_group(g1) || !valid_group(g2))
        return weft__mpi_err(NULL, MPI_ERR_GROUP, fn);
    if (!newgroup)
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    int *ranks = malloc((size_t)(g1->size + g2->size + 1) * sizeof *ranks);
    if (!ranks)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, fn);
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        bool in2 = index_of(g2, g1->ranks[i]) >= 0;
        if (op == SET_UNION || (op == SET_INTERSECTION) == in2)
            ranks[n++] = g1->ranks[i];
    }
    if (op == SET_UNION)
        for (int i = 0; i < g2->size; i++)
            if (index_of(g1, g2->ranks[i]) < 0)
                ranks[n++] = g2->ranks[i];
    int rc = make_group(n, ranks, newgroup);
    free(ranks);
    return rc ? weft__mpi_err(NULL, rc, fn) : MPI_SUCCESS;
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, SET_UNION, newgroup, "MPI_Group_union");
}
WEFT_MPI_ALIAS(Group_union)

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, SET_INTERSECTION, newgroup, "MPI_Group_intersection");
}
WEFT_MPI_ALIAS(Group_intersection)

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, SET_DIFFERENCE, newgroup, "MPI_Group_difference");
}
WEFT_MPI_ALIAS(Group_difference)

/* ---- subsets by rank ---- */

/* Validate n distinct ranks of g (MPI_ERR_RANK otherwise) and mark them in
 * `taken` (g->size flags). */
static int mark_ranks(MPI_Group g, int n, const int ranks[], bool *taken)
{
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size || taken[r])
            return MPI_ERR_RANK;
        taken[r] = true;
    }
    return MPI_SUCCESS;
}

/* Both calls keep the listed order for incl and group order for excl. */
static int incl_excl(MPI_Group group, int n, const int ranks[], bool excl, MPI_Group *newgroup,
                     const char *fn)
{
    if (!valid_group(group))
        return weft__mpi_err(NULL, MPI_ERR_GROUP, fn);
    if (n < 0 || (n > 0 && !ranks) || !newgroup)
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    if (n > group->size)
        return weft__mpi_err(NULL, MPI_ERR_RANK, fn);
    bool *taken = calloc((size_t)group->size + 1, sizeof *taken);
    int *out = malloc(((size_t)group->size + 1) * sizeof *out); /* n <= size */
    int rc = MPI_ERR_NO_MEM, m = 0;
    if (!taken || !out)
        goto out;
    if ((rc = mark_ranks(group, n, ranks, taken)))
        goto out;
    if (excl) {
        for (int i = 0; i < group->size; i++)
            if (!taken[i])
                out[m++] = group->ranks[i];
    } else {
        for (int i = 0; i < n; i++)
            out[m++] = group->ranks[ranks[i]];
    }
    rc = make_group(m, out, newgroup);
out:
    free(taken);
    free(out);
    return rc ? weft__mpi_err(NULL, rc, fn) : MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, false, newgroup, "MPI_Group_incl");
}
WEFT_MPI_ALIAS(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, true, newgroup, "MPI_Group_excl");
}
WEFT_MPI_ALIAS(Group_excl)

/* Expand n (first, last, stride) triplets into the ranks they name (§6.3.2):
 * every rank must lie in the group, a stride of 0 is erroneous, and no rank
 * may appear twice (across triplets too). */
static int expand_ranges(MPI_Group g, int n, int ranges[][3], int **out, int *count)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return MPI_ERR_ARG;
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return MPI_ERR_RANK;
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            continue; /* names no rank */
        total += ((long)last - first) / stride + 1;
        if (total > g->size)
            return MPI_ERR_RANK; /* some rank twice */
    }
    int *r = malloc((size_t)(total ? total : 1) * sizeof *r);
    if (!r)
        return MPI_ERR_NO_MEM;
    int m = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (long x = first; stride > 0 ? x <= last : x >= last; x += stride)
            r[m++] = (int)x;
    }
    *out = r;
    *count = m;
    return MPI_SUCCESS;
}

static int range_incl_excl(MPI_Group group, int n, int ranges[][3], bool excl, MPI_Group *newgroup,
                           const char *fn)
{
    if (!valid_group(group))
        return weft__mpi_err(NULL, MPI_ERR_GROUP, fn);
    if (n < 0 || (n > 0 && !ranges) || !newgroup)
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    int *ranks = NULL, m = 0;
    int rc = expand_ranges(group, n, ranges, &ranks, &m);
    if (rc)
        return weft__mpi_err(NULL, rc, fn);
    /* incl_excl reports under fn and checks duplicates. */
    rc = incl_excl(group, m, ranks, excl, newgroup, fn);
    free(ranks);
    return rc;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl(group, n, ranges, false, newgroup, "MPI_Group_range_incl");
}
WEFT_MPI_ALIAS(Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl(group, n, ranges, true, newgroup, "MPI_Group_range_excl");
}
WEFT_MPI_ALIAS(Group_range_excl)

int PMPI_Group_free(MPI_Group *group)
{
    /* Group operations hand out MPI_GROUP_EMPTY for empty results, and programs
     * free what they get (Open MPI and MPICH accept it too): freeing it is a
     * no-op. MPI_GROUP_NULL is an error. */
    if (group && *group == MPI_GROUP_EMPTY) {
        *group = MPI_GROUP_NULL;
        return MPI_SUCCESS;
    }
    if (!group || !valid_group(*group) || (*group)->predefined)
        return weft__mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_free");
    weft__mpi_group_release(*group);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Group_free)
