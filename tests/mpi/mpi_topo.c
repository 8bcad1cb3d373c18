/* Process topologies (MPI 3.1 chapter 7): Dims_create, cartesian grids (ranks,
 * coordinates, shifts, sub-grids, a grid smaller than the world), graphs,
 * distributed graphs (adjacent and general, weighted and not). */
#include "topo_check.h"

static void dims_case(int nnodes, int ndims, const int *in, const int *expect)
{
    int d[8];
    memcpy(d, in, (size_t)ndims * sizeof *d);
    MUSTMPI(MPI_Dims_create(nnodes, ndims, d));
    bool ok = true;
    for (int i = 0; i < ndims; i++)
        ok = ok && d[i] == expect[i];
    if (!ok)
        fprintf(stderr, "Dims_create(%d, %d): got %d %d %d %d\n", nnodes, ndims, d[0],
                ndims > 1 ? d[1] : -1, ndims > 2 ? d[2] : -1, ndims > 3 ? d[3] : -1);
    CHECK(ok);
}

static void dims_table(void)
{
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_case(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
    dims_case(72, 2, (int[]){0, 0}, (int[]){9, 8});
    dims_case(16, 4, (int[]){0, 0, 0, 0}, (int[]){2, 2, 2, 2});
    dims_case(64, 3, (int[]){0, 0, 0}, (int[]){4, 4, 4});
    dims_case(30, 2, (int[]){0, 0}, (int[]){6, 5});
    dims_case(24, 3, (int[]){0, 3, 0}, (int[]){4, 3, 2});
    dims_case(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims_case(12, 2, (int[]){2, 6}, (int[]){2, 6});
    int d[2] = {0, 3};
    CHECK_CLASS(MPI_Dims_create(10, 2, d), MPI_ERR_DIMS);
    int e[2] = {-1, 0};
    CHECK_CLASS(MPI_Dims_create(4, 2, e), MPI_ERR_DIMS);
    int f[2] = {2, 3};
    CHECK_CLASS(MPI_Dims_create(12, 2, f), MPI_ERR_DIMS);
}

static void cart(void)
{
    int n = t_size, dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], r;
    MUSTMPI(MPI_Dims_create(n, 2, dims));
    MPI_Comm c;
    MUSTMPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN); /* errors are checked below */
    int status, nd;
    MUSTMPI(MPI_Topo_test(c, &status));
    CHECK(status == MPI_CART);
    MUSTMPI(MPI_Cartdim_get(c, &nd));
    CHECK(nd == 2);
    int gd[2], gp[2], gc[2];
    MUSTMPI(MPI_Cart_get(c, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0);
    CHECK(gc[0] == t_rank / dims[1] && gc[1] == t_rank % dims[1]); /* row-major */
    for (int i = 0; i < n; i++) {
        MUSTMPI(MPI_Cart_coords(c, i, 2, coords));
        MUSTMPI(MPI_Cart_rank(c, coords, &r));
        CHECK(r == i);
    }
    /* Periodic wrap in dimension 0, an error off the non-periodic one. */
    coords[0] = gc[0] + dims[0];
    coords[1] = gc[1];
    MUSTMPI(MPI_Cart_rank(c, coords, &r));
    CHECK(r == t_rank);
    coords[0] = -1;
    MUSTMPI(MPI_Cart_rank(c, coords, &r));
    CHECK(r == ((dims[0] - 1) * dims[1] + gc[1]));
    coords[0] = 0;
    coords[1] = dims[1];
    CHECK_CLASS(MPI_Cart_rank(c, coords, &r), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_coords(c, n, 2, coords), MPI_ERR_RANK);

    /* Shifts, then data along them. */
    int src, dst;
    MUSTMPI(MPI_Cart_shift(c, 0, 1, &src, &dst));
    CHECK(dst == ((gc[0] + 1) % dims[0]) * dims[1] + gc[1]);
    CHECK(src == ((gc[0] + dims[0] - 1) % dims[0]) * dims[1] + gc[1]);
    int got = -1;
    MUSTMPI(
        MPI_Sendrecv(&t_rank, 1, MPI_INT, dst, 1, &got, 1, MPI_INT, src, 1, c, MPI_STATUS_IGNORE));
    CHECK(got == src);
    MUSTMPI(MPI_Cart_shift(c, 1, 1, &src, &dst));
    CHECK(dst == (gc[1] + 1 < dims[1] ? t_rank + 1 : MPI_PROC_NULL));
    CHECK(src == (gc[1] > 0 ? t_rank - 1 : MPI_PROC_NULL));
    got = -1;
    MUSTMPI(
        MPI_Sendrecv(&t_rank, 1, MPI_INT, dst, 2, &got, 1, MPI_INT, src, 2, c, MPI_STATUS_IGNORE));
    CHECK(got == (src == MPI_PROC_NULL ? -1 : src));
    MUSTMPI(MPI_Cart_shift(c, 1, -dims[1], &src, &dst));
    CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL);
    CHECK_CLASS(MPI_Cart_shift(c, 2, 1, &src, &dst), MPI_ERR_ARG);

    /* Sub-grids: keep dimension 0 (a column), then nothing. */
    MPI_Comm sub;
    int remain[2] = {1, 0};
    MUSTMPI(MPI_Cart_sub(c, remain, &sub));
    int size, rank;
    MPI_Comm_size(sub, &size);
    MPI_Comm_rank(sub, &rank);
    CHECK(size == dims[0] && rank == gc[0]);
    MUSTMPI(MPI_Cartdim_get(sub, &nd));
    CHECK(nd == 1);
    MUSTMPI(MPI_Cart_get(sub, 1, gd, gp, coords));
    CHECK(gd[0] == dims[0] && gp[0] == 1 && coords[0] == gc[0]);
    MPI_Comm_free(&sub);
    int none[2] = {0, 0};
    MUSTMPI(MPI_Cart_sub(c, none, &sub));
    MPI_Comm_size(sub, &size);
    MUSTMPI(MPI_Cartdim_get(sub, &nd));
    CHECK(size == 1 && nd == 0);
    MPI_Comm_free(&sub);

    /* A duplicate keeps the topology. */
    MPI_Comm d;
    MUSTMPI(MPI_Comm_dup(c, &d));
    MUSTMPI(MPI_Topo_test(d, &status));
    CHECK(status == MPI_CART);
    MUSTMPI(MPI_Cart_shift(d, 0, 1, &src, &dst));
    MPI_Comm_free(&d);
    CHECK_CLASS(MPI_Graphdims_get(c, &nd, &r), MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&c);

    /* A grid smaller than the world: the last rank is left out. */
    int line = n > 1 ? n - 1 : 1, per = 0;
    MUSTMPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &line, &per, 1, &c));
    CHECK((t_rank < line) == (c != MPI_COMM_NULL));
    if (c != MPI_COMM_NULL) {
        MUSTMPI(MPI_Cart_shift(c, 0, 1, &src, &dst));
        CHECK(dst == (t_rank + 1 < line ? t_rank + 1 : MPI_PROC_NULL));
        MPI_Comm_free(&c);
    }
    MUSTMPI(MPI_Cart_map(MPI_COMM_WORLD, 1, &line, &per, &r));
    CHECK(r == (t_rank < line ? t_rank : MPI_UNDEFINED));
    int too_big = n + 1;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, &too_big, &per, 0, &c), MPI_ERR_TOPOLOGY);
    int zero_dim = 0;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, &zero_dim, &per, 0, &c), MPI_ERR_DIMS);
}

static void graph(void)
{
    /* A ring: node i has neighbours i-1 and i+1. */
    int n = t_size, *index = malloc((size_t)n * sizeof *index);
    int *edges = malloc(2 * (size_t)n * sizeof *edges);
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + n - 1) % n;
        edges[2 * i + 1] = (i + 1) % n;
    }
    MPI_Comm g;
    MUSTMPI(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    int status, nnodes, nedges, cnt, nb[2];
    MUSTMPI(MPI_Topo_test(g, &status));
    CHECK(status == MPI_GRAPH);
    MUSTMPI(MPI_Graphdims_get(g, &nnodes, &nedges));
    CHECK(nnodes == n && nedges == 2 * n);
    int *gi = malloc((size_t)n * sizeof *gi), *ge = malloc(2 * (size_t)n * sizeof *ge);
    MUSTMPI(MPI_Graph_get(g, n, 2 * n, gi, ge));
    CHECK(!memcmp(gi, index, (size_t)n * sizeof *gi) &&
          !memcmp(ge, edges, 2 * (size_t)n * sizeof *ge));
    MUSTMPI(MPI_Graph_neighbors_count(g, t_rank, &cnt));
    CHECK(cnt == 2);
    MUSTMPI(MPI_Graph_neighbors(g, t_rank, 2, nb));
    CHECK(nb[0] == (t_rank + n - 1) % n && nb[1] == (t_rank + 1) % n);
    CHECK_CLASS(MPI_Graph_neighbors_count(g, n, &cnt), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cartdim_get(g, &cnt), MPI_ERR_TOPOLOGY);
    int r;
    MUSTMPI(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &r));
    CHECK(r == t_rank);
    MPI_Comm_free(&g);
    MUSTMPI(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED);
    edges[0] = n;
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g), MPI_ERR_ARG);
    free(index);
    free(edges);
    free(gi);
    free(ge);
}

/* Sort (rank, weight) pairs by rank then weight, for order-free comparison. */
static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static bool same_pairs(const int *ranks, const int *weights, int n, int expect[][2])
{
    int(*p)[2] = malloc((size_t)(n + 1) * sizeof *p);
    for (int i = 0; i < n; i++) {
        p[i][0] = ranks[i];
        p[i][1] = weights ? weights[i] : 0;
    }
    qsort(p, (size_t)n, sizeof *p, cmp_pair);
    qsort(expect, (size_t)n, sizeof *expect, cmp_pair);
    bool ok = !memcmp(p, expect, (size_t)n * sizeof *p);
    free(p);
    return ok;
}

static void dist_graph(void)
{
    int n = t_size, me = t_rank, left = (me + n - 1) % n, right = (me + 1) % n;
    MPI_Comm g;
    int indeg, outdeg, weighted, src[4], sw[4], dst[4], dw[4];

    /* Adjacent, weighted: the ring, weight = sender + 100. */
    int lw = left + 100, mw = me + 100;
    MUSTMPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &lw, 1, &right, &mw,
                                           MPI_INFO_NULL, 0, &g));
    int status;
    MUSTMPI(MPI_Topo_test(g, &status));
    CHECK(status == MPI_DIST_GRAPH);
    MUSTMPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted);
    MUSTMPI(MPI_Dist_graph_neighbors(g, 1, src, sw, 1, dst, dw));
    CHECK(src[0] == left && sw[0] == left + 100 && dst[0] == right && dw[0] == me + 100);
    /* Data along the edge. */
    int got = -1;
    MUSTMPI(MPI_Sendrecv(&me, 1, MPI_INT, dst[0], 4, &got, 1, MPI_INT, src[0], 4, g,
                         MPI_STATUS_IGNORE));
    CHECK(got == left);
    MPI_Comm_free(&g);

    /* Adjacent, unweighted, sources only. */
    MUSTMPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 0, NULL,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    MUSTMPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 0 && !weighted);
    MUSTMPI(MPI_Dist_graph_neighbors(g, 1, src, MPI_UNWEIGHTED, 0, dst, MPI_UNWEIGHTED));
    CHECK(src[0] == left);
    CHECK_CLASS(MPI_Graph_neighbors_count(g, 0, &indeg), MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&g);

    /* General: rank 0 gives every edge i -> i+1 (weight 1000 + i), every rank
     * gives its own edge me -> me+2 (weight 2000 + me). */
    int n0 = me == 0 ? n : 0;
    int *sources = malloc((size_t)(n + 1) * sizeof *sources);
    int *degrees = malloc((size_t)(n + 1) * sizeof *degrees);
    int *dests = malloc((size_t)(n + 2) * sizeof *dests);
    int *weights = malloc((size_t)(n + 2) * sizeof *weights);
    for (int i = 0; i < n0; i++) {
        sources[i] = i;
        degrees[i] = 1;
        dests[i] = (i + 1) % n;
        weights[i] = 1000 + i;
    }
    sources[n0] = me;
    degrees[n0] = 1;
    dests[n0] = (me + 2) % n;
    weights[n0] = 2000 + me;
    MUSTMPI(MPI_Dist_graph_create(MPI_COMM_WORLD, n0 + 1, sources, degrees, dests, weights,
                                  MPI_INFO_NULL, 0, &g));
    MUSTMPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == 2 && outdeg == 2 && weighted);
    if (indeg == 2 && outdeg == 2) {
        MUSTMPI(MPI_Dist_graph_neighbors(g, 2, src, sw, 2, dst, dw));
        int l2 = (me + n - 2) % n;
        int ein[2][2] = {{left, 1000 + left}, {l2, 2000 + l2}};
        int eout[2][2] = {{right, 1000 + me}, {(me + 2) % n, 2000 + me}};
        CHECK(same_pairs(src, sw, 2, ein));
        CHECK(same_pairs(dst, dw, 2, eout));
    }
    MPI_Comm_free(&g);

    /* General, unweighted, and a rank that names no edge. */
    int k = me == 0 ? 0 : 1;
    sources[0] = me;
    degrees[0] = 1;
    dests[0] = 0;
    MUSTMPI(MPI_Dist_graph_create(MPI_COMM_WORLD, k, sources, degrees, dests, MPI_UNWEIGHTED,
                                  MPI_INFO_NULL, 0, &g));
    MUSTMPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(!weighted && outdeg == k && indeg == (me == 0 ? n - 1 : 0));
    MPI_Comm_free(&g);
    dests[0] = n;
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, sources, degrees, dests, MPI_UNWEIGHTED,
                                      MPI_INFO_NULL, 0, &g),
                MPI_ERR_RANK);
    free(sources);
    free(degrees);
    free(dests);
    free(weights);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    dims_table();
    cart();
    graph();
    dist_graph();
    return t_finish("mpi_topo");
}
