/* Neighbourhood collectives on a periodic ring and a non-periodic 2-D grid
 * (cartesian), a graph ring and a dist graph, blocking and non-blocking.
 * Skips (77) when topologies are not available. */
#include "coll_test.h"

static int nb;

/* Cartesian: block j of rank r is r * 100 + j; from the neighbour at -1 in
 * dimension d comes its block 2d+1, from the one at +1 its block 2d. */
static void cart(MPI_Comm c, int ndims)
{
    int r, n = 2 * ndims;
    MPI_Comm_rank(c, &r);
    int s[8], g[8], a[8];
    for (int j = 0; j < n; j++) {
        s[j] = r * 100 + j;
        g[j] = a[j] = -1;
    }
    COLL(nb, MPI_Neighbor_allgather(&s[0], 1, MPI_INT, g, 1, MPI_INT, c),
         MPI_Ineighbor_allgather(&s[0], 1, MPI_INT, g, 1, MPI_INT, c, &rq_));
    COLL(nb, MPI_Neighbor_alltoall(s, 1, MPI_INT, a, 1, MPI_INT, c),
         MPI_Ineighbor_alltoall(s, 1, MPI_INT, a, 1, MPI_INT, c, &rq_));
    for (int d = 0; d < ndims; d++) {
        int lo, hi;
        MUSTMPI(MPI_Cart_shift(c, d, 1, &lo, &hi));
        CHECK(g[2 * d] == (lo == MPI_PROC_NULL ? -1 : lo * 100));
        CHECK(g[2 * d + 1] == (hi == MPI_PROC_NULL ? -1 : hi * 100));
        CHECK(a[2 * d] == (lo == MPI_PROC_NULL ? -1 : lo * 100 + 2 * d + 1));
        CHECK(a[2 * d + 1] == (hi == MPI_PROC_NULL ? -1 : hi * 100 + 2 * d));
    }
    /* v and w forms: same data, reversed placement. */
    int counts[8], displs[8], rcounts[8], rdispls[8];
    MPI_Aint sd[8], rd[8];
    MPI_Datatype types[8];
    for (int j = 0; j < n; j++) {
        counts[j] = rcounts[j] = 1;
        displs[j] = j;
        rdispls[j] = n - 1 - j;
        sd[j] = j * (MPI_Aint)sizeof(int);
        rd[j] = (n - 1 - j) * (MPI_Aint)sizeof(int);
        types[j] = MPI_INT;
        a[j] = -1;
    }
    COLL(
        nb, MPI_Neighbor_alltoallv(s, counts, displs, MPI_INT, a, rcounts, rdispls, MPI_INT, c),
        MPI_Ineighbor_alltoallv(s, counts, displs, MPI_INT, a, rcounts, rdispls, MPI_INT, c, &rq_));
    int w[8];
    for (int j = 0; j < n; j++)
        w[j] = -1;
    COLL(nb, MPI_Neighbor_alltoallw(s, counts, sd, types, w, rcounts, rd, types, c),
         MPI_Ineighbor_alltoallw(s, counts, sd, types, w, rcounts, rd, types, c, &rq_));
    for (int d = 0; d < ndims; d++) {
        int lo, hi;
        MUSTMPI(MPI_Cart_shift(c, d, 1, &lo, &hi));
        CHECK(a[n - 1 - 2 * d] == (lo == MPI_PROC_NULL ? -1 : lo * 100 + 2 * d + 1));
        CHECK(w[n - 2 - 2 * d] == (hi == MPI_PROC_NULL ? -1 : hi * 100 + 2 * d));
    }
    for (int j = 0; j < n; j++)
        g[j] = -1;
    COLL(nb, MPI_Neighbor_allgatherv(&s[1], 1, MPI_INT, g, rcounts, rdispls, MPI_INT, c),
         MPI_Ineighbor_allgatherv(&s[1], 1, MPI_INT, g, rcounts, rdispls, MPI_INT, c, &rq_));
    for (int d = 0; d < ndims; d++) {
        int lo, hi;
        MUSTMPI(MPI_Cart_shift(c, d, 1, &lo, &hi));
        CHECK(g[n - 1 - 2 * d] == (lo == MPI_PROC_NULL ? -1 : lo * 100 + 1));
    }
}

/* Ring as a dist graph: one source (left), one destination (right). */
static void dist_ring(MPI_Comm c, int P, int R)
{
    int left = (R - 1 + P) % P, right = (R + 1) % P, x = R * 3, y = -1;
    COLL(nb, MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, c),
         MPI_Ineighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, c, &rq_));
    CHECK(y == left * 3);
    (void)right;
}

/* Ring as a graph: neighbours (left, right) of every rank, both ways. */
static void graph_ring(MPI_Comm c, int P, int R)
{
    int nn;
    MUSTMPI(MPI_Graph_neighbors_count(c, R, &nn));
    int nbr[2], s[2], g[2] = {-1, -1};
    MUSTMPI(MPI_Graph_neighbors(c, R, nn, nbr));
    for (int j = 0; j < nn; j++)
        s[j] = R * 10 + j;
    COLL(nb, MPI_Neighbor_allgather(&s[0], 1, MPI_INT, g, 1, MPI_INT, c),
         MPI_Ineighbor_allgather(&s[0], 1, MPI_INT, g, 1, MPI_INT, c, &rq_));
    for (int j = 0; j < nn; j++)
        CHECK(g[j] == nbr[j] * 10);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    int P = t_size, R = t_rank;
    MPI_Comm ring, grid, dg, gr;
    int dims[2] = {P}, periods[2] = {1, 0};
    if (MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring) != MPI_SUCCESS)
        t_skip("MPI_Cart_create is not available");
    dims[0] = dims[1] = 0;
    MUSTMPI(MPI_Dims_create(P, 2, dims));
    periods[0] = 0;
    MUSTMPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    int src = (R - 1 + P) % P, dst = (R + 1) % P;
    MUSTMPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    int *index = malloc(sizeof(int) * P), *edges = malloc(sizeof(int) * 2 * P);
    for (int q = 0; q < P; q++) {
        index[q] = 2 * (q + 1);
        edges[2 * q] = (q - 1 + P) % P;
        edges[2 * q + 1] = (q + 1) % P;
    }
    MUSTMPI(MPI_Graph_create(MPI_COMM_WORLD, P, index, edges, 0, &gr));
    for (nb = 0; nb < 2; nb++) {
        cart(ring, 1);
        cart(grid, 2);
        dist_ring(dg, P, R);
        graph_ring(gr, P, R);
    }
    free(index);
    free(edges);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&grid);
    MPI_Comm_free(&dg);
    MPI_Comm_free(&gr);
    return t_finish("coll_neighbor");
}
