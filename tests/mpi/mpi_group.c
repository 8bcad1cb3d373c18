/* Groups (MPI 3.1 §6.3): queries, comparison, set operations and their order,
 * inclusion and exclusion by rank and by range, translation, error classes. */
#include "topo_check.h"

static void check_ranks(MPI_Group g, MPI_Group world, int n, const int *expect)
{
    int size, *r = malloc((size_t)(n + 1) * sizeof *r), *w = malloc((size_t)(n + 1) * sizeof *w);
    MPI_Group_size(g, &size);
    CHECK(size == n);
    for (int i = 0; i < n; i++)
        r[i] = i;
    if (size == n && n > 0) {
        MUSTMPI(MPI_Group_translate_ranks(g, n, r, world, w));
        for (int i = 0; i < n; i++)
            CHECK(w[i] == expect[i]);
    }
    free(r);
    free(w);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    int n = t_size, me = t_rank;
    MPI_Group world, g1, g2, g;
    MUSTMPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int size, rank, res;
    MUSTMPI(MPI_Group_size(world, &size));
    MUSTMPI(MPI_Group_rank(world, &rank));
    CHECK(size == n && rank == me);
    int *all = malloc((size_t)n * sizeof *all), *rev = malloc((size_t)n * sizeof *rev);
    int *tmp = malloc((size_t)(2 * n + 2) * sizeof *tmp);
    for (int i = 0; i < n; i++) {
        all[i] = i;
        rev[i] = n - 1 - i;
    }

    /* incl: listed order; excl: group order. */
    MUSTMPI(MPI_Group_incl(world, n, rev, &g1));
    check_ranks(g1, world, n, rev);
    MUSTMPI(MPI_Group_rank(g1, &rank));
    CHECK(rank == n - 1 - me);
    MUSTMPI(MPI_Group_compare(world, g1, &res));
    CHECK(res == (n == 1 ? MPI_IDENT : MPI_SIMILAR));
    MUSTMPI(MPI_Group_compare(world, world, &res));
    CHECK(res == MPI_IDENT);
    int zero = 0;
    MUSTMPI(MPI_Group_excl(world, 1, &zero, &g2)); /* ranks 1..n-1 */
    check_ranks(g2, world, n - 1, all + 1);
    CHECK((n == 1) == (g2 == MPI_GROUP_EMPTY));
    MUSTMPI(MPI_Group_rank(g2, &rank));
    CHECK(rank == (me == 0 ? MPI_UNDEFINED : me - 1));
    MUSTMPI(MPI_Group_compare(world, g2, &res));
    CHECK(res == MPI_UNEQUAL);

    /* Set operations: union is g1's order then g2's extras; intersection and
     * difference keep group1's order. */
    MUSTMPI(MPI_Group_union(g2, g1, &g)); /* 1..n-1, then 0 */
    for (int i = 0; i < n - 1; i++)
        tmp[i] = i + 1;
    tmp[n - 1] = 0;
    check_ranks(g, world, n, tmp);
    MPI_Group_free(&g);
    MUSTMPI(MPI_Group_intersection(g1, g2, &g)); /* n-1..1 */
    for (int i = 0; i < n - 1; i++)
        tmp[i] = n - 1 - i;
    check_ranks(g, world, n - 1, tmp);
    MPI_Group_free(&g);
    MUSTMPI(MPI_Group_difference(g1, g2, &g)); /* {0} */
    check_ranks(g, world, 1, all);
    MPI_Group_free(&g);
    MUSTMPI(MPI_Group_difference(g2, g1, &g));
    CHECK(g == MPI_GROUP_EMPTY);
    MUSTMPI(MPI_Group_intersection(world, MPI_GROUP_EMPTY, &g));
    CHECK(g == MPI_GROUP_EMPTY);
    MUSTMPI(MPI_Group_union(MPI_GROUP_EMPTY, world, &g));
    MUSTMPI(MPI_Group_compare(g, world, &res));
    CHECK(res == MPI_IDENT);
    MPI_Group_free(&g);

    /* Translation: MPI_PROC_NULL stays, non-members are MPI_UNDEFINED. */
    int in[2] = {0, MPI_PROC_NULL}, out[2];
    MUSTMPI(MPI_Group_translate_ranks(world, 2, in, g2, out));
    CHECK(out[0] == MPI_UNDEFINED && out[1] == MPI_PROC_NULL);

    /* Ranges: evens ascending, then odds descending. */
    int ranges[2][3] = {{0, n - 1, 2}, {0, 1, -2}};
    int m = 0;
    for (int i = 0; i < n; i += 2)
        tmp[m++] = i;
    int last_odd = (n - 1) % 2 ? n - 1 : n - 2;
    ranges[1][0] = last_odd;
    int nr = last_odd >= 1 ? 2 : 1;
    for (int i = last_odd; i >= 1; i -= 2)
        tmp[m++] = i;
    MUSTMPI(MPI_Group_range_incl(world, nr, ranges, &g));
    check_ranks(g, world, n, tmp);
    MPI_Group_free(&g);
    int evens[1][3] = {{0, n - 1, 2}};
    MUSTMPI(MPI_Group_range_excl(world, 1, evens, &g));
    m = 0;
    for (int i = 1; i < n; i += 2)
        tmp[m++] = i;
    check_ranks(g, world, m, tmp);
    CHECK((m == 0) == (g == MPI_GROUP_EMPTY));
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);
    MUSTMPI(MPI_Group_incl(world, 0, NULL, &g));
    CHECK(g == MPI_GROUP_EMPTY);

    /* Error classes. */
    int bad = n;
    CHECK_CLASS(MPI_Group_incl(world, 1, &bad, &g), MPI_ERR_RANK);
    int neg = -1;
    CHECK_CLASS(MPI_Group_excl(world, 1, &neg, &g), MPI_ERR_RANK);
    int dup[2] = {0, 0};
    CHECK_CLASS(MPI_Group_incl(world, 2, dup, &g), MPI_ERR_RANK);
    int stride0[1][3] = {{0, 0, 0}};
    CHECK_CLASS(MPI_Group_range_incl(world, 1, stride0, &g), MPI_ERR_ARG);
    int outside[1][3] = {{0, n, 1}};
    CHECK_CLASS(MPI_Group_range_incl(world, 1, outside, &g), MPI_ERR_RANK);
    int twice[2][3] = {{0, 0, 1}, {0, 0, 1}};
    CHECK_CLASS(MPI_Group_range_excl(world, 2, twice, &g), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_translate_ranks(world, 1, &bad, world, out), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &size), MPI_ERR_GROUP);
    /* MPI_GROUP_EMPTY, as group operations return it, may be freed (a no-op
     * that sets the handle to MPI_GROUP_NULL), as Open MPI and MPICH allow. */
    g = MPI_GROUP_EMPTY;
    MUSTMPI(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL);
    g = MPI_GROUP_NULL;
    CHECK_CLASS(MPI_Group_free(&g), MPI_ERR_GROUP);

    /* A communicator from a group: the reversed world. */
    MPI_Comm c;
    MUSTMPI(MPI_Comm_create(MPI_COMM_WORLD, g1, &c));
    MUSTMPI(MPI_Comm_rank(c, &rank));
    CHECK(rank == n - 1 - me);
    MPI_Group cg;
    MUSTMPI(MPI_Comm_group(c, &cg));
    MUSTMPI(MPI_Group_compare(cg, g1, &res));
    CHECK(res == MPI_IDENT);
    MPI_Group_free(&cg);
    MPI_Comm_free(&c);

    MUSTMPI(MPI_Group_free(&g1));
    CHECK(g1 == MPI_GROUP_NULL);
    if (g2 != MPI_GROUP_EMPTY)
        MUSTMPI(MPI_Group_free(&g2));
    MUSTMPI(MPI_Group_free(&world));
    free(all);
    free(rev);
    free(tmp);
    return t_finish("mpi_group");
}
