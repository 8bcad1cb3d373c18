/* Process topologies (MPI 3.1 chapter 7): cartesian, graph and distributed
 * graph, attached to a new communicator as a weft_mpi_topo_t.
 *
 * Ranks are never reordered (the standard allows ignoring `reorder`): the new
 * communicator keeps the old ranks, those beyond the topology's size get
 * MPI_COMM_NULL. Cartesian ranks are row-major (the last dimension varies
 * fastest), as §7.5.5 asks and the neighbourhood collectives assume.
 *
 * MPI_Dist_graph_create lets any process name any edge, so each process must
 * learn the edges that touch it: every process sends each other member one
 * message (possibly empty) listing the edges it gave that start or end there,
 * over the new communicator's third engine id (the one mpi_comm.c uses for its
 * own exchanges, with a tag from its sequence), and the receivers probe for
 * the size. Point-to-point only: no collective is needed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"

/* The third engine id of a communicator (see mpi_comm.c): internal exchanges. */
#define AUX_ID(c) ((c)->id_p2p + 2)

/* ---- the topology object ---- */

static int *dup_ints(const int *src, int n)
{
    int *d = malloc((size_t)(n > 0 ? n : 1) * sizeof *d);
    if (d && n > 0)
        memcpy(d, src, (size_t)n * sizeof *d);
    return d;
}

void weft__mpi_topo_free(weft_mpi_topo_t *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->sourceweights);
    free(t->destinations);
    free(t->destweights);
    free(t);
}

int weft__mpi_topo_dup(const weft_mpi_topo_t *t, weft_mpi_topo_t **out)
{
    weft_mpi_topo_t *d = calloc(1, sizeof *d);
    if (!d)
        return MPI_ERR_NO_MEM;
    *d = *t;
    d->dims = d->periods = d->coords = d->index = d->edges = NULL;
    d->sources = d->sourceweights = d->destinations = d->destweights = NULL;
    bool ok = true;
    switch (t->kind) {
    case MPI_CART:
        ok = (d->dims = dup_ints(t->dims, t->ndims)) &&
             (d->periods = dup_ints(t->periods, t->ndims)) &&
             (d->coords = dup_ints(t->coords, t->ndims));
        break;
    case MPI_GRAPH:
        ok = (d->index = dup_ints(t->index, t->nnodes)) &&
             (d->edges = dup_ints(t->edges, t->nedges));
        break;
    case MPI_DIST_GRAPH:
        ok = (d->sources = dup_ints(t->sources, t->indegree)) &&
             (d->destinations = dup_ints(t->destinations, t->outdegree)) &&
             (!t->weighted || ((d->sourceweights = dup_ints(t->sourceweights, t->indegree)) &&
                               (d->destweights = dup_ints(t->destweights, t->outdegree))));
        break;
    }
    if (!ok) {
        weft__mpi_topo_free(d);
        return MPI_ERR_NO_MEM;
    }
    *out = d;
    return MPI_SUCCESS;
}

/* The topology of comm if it is of kind `kind` (0: any), else NULL with the
 * error in *rc. */
static const weft_mpi_topo_t *topo_of(MPI_Comm comm, int kind, int *rc)
{
    if ((*rc = weft__mpi_check_comm(comm)))
        return NULL;
    const weft_mpi_topo_t *t = comm->topo;
    if (!t || comm->inter || (kind && t->kind != kind)) {
        *rc = MPI_ERR_TOPOLOGY;
        return NULL;
    }
    return t;
}

/* A new communicator over the first n ranks of comm_old (collective over
 * comm_old; MPI_COMM_NULL beyond n). */
static int comm_prefix(MPI_Comm comm_old, int n, MPI_Comm *out)
{
    if (n == comm_old->size)
        return weft__mpi_comm_create_from(comm_old, comm_old->group, out);
    MPI_Group g = weft__mpi_group_new(n, comm_old->group->ranks);
    if (!g)
        return MPI_ERR_NO_MEM;
    int rc = weft__mpi_comm_create_from(comm_old, g, out);
    weft__mpi_group_release(g);
    return rc;
}

static int check_intra(MPI_Comm comm)
{
    int rc = weft__mpi_check_comm(comm);
    if (!rc && comm->inter)
        rc = MPI_ERR_COMM;
    return rc;
}

/* ---- cartesian ---- */

/* Coordinates of rank r in a row-major grid. */
static void rank_to_coords(const int *dims, int ndims, int r, int *coords)
{
    for (int d = ndims - 1; d >= 0; d--) {
        coords[d] = r % dims[d];
        r /= dims[d];
    }
}

static weft_mpi_topo_t *cart_new(int ndims, const int *dims, const int *periods, int rank)
{
    weft_mpi_topo_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = dup_ints(dims, ndims);
    t->periods = malloc((ndims > 0 ? (size_t)ndims : 1) * sizeof *t->periods);
    t->coords = malloc((ndims > 0 ? (size_t)ndims : 1) * sizeof *t->coords);
    if (!t->dims || !t->periods || !t->coords) {
        weft__mpi_topo_free(t);
        return NULL;
    }
    for (int d = 0; d < ndims; d++)
        t->periods[d] = periods[d] != 0;
    rank_to_coords(dims, ndims, rank, t->coords);
    return t;
}

/* Product of dims, or -1 when a dimension is not positive or it overflows. */
static long grid_size(int ndims, const int *dims)
{
    long n = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return -1;
        n *= dims[d];
        if (n > (1L << 31))
            return -1;
    }
    return n;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    int rc = check_intra(comm_old);
    if (rc)
        return weft__mpi_err(comm_old, rc, "MPI_Cart_create");
    if (ndims < 0 || (ndims > 0 && (!dims || !periods)))
        return weft__mpi_err(comm_old, MPI_ERR_DIMS, "MPI_Cart_create");
    if (!comm_cart)
        return weft__mpi_err(comm_old, MPI_ERR_ARG, "MPI_Cart_create");
    long n = grid_size(ndims, dims);
    if (n < 0)
        return weft__mpi_err(comm_old, MPI_ERR_DIMS, "MPI_Cart_create");
    if (n > comm_old->size)
        return weft__mpi_err(comm_old, MPI_ERR_TOPOLOGY, "MPI_Cart_create");
    MPI_Comm c;
    if ((rc = comm_prefix(comm_old, (int)n, &c)))
        return weft__mpi_err(comm_old, rc, "MPI_Cart_create");
    if (c != MPI_COMM_NULL && !(c->topo = cart_new(ndims, dims, periods, c->rank))) {
        weft__mpi_comm_release(c);
        return weft__mpi_err(comm_old, MPI_ERR_NO_MEM, "MPI_Cart_create");
    }
    *comm_cart = c;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cart_create)

/* Balanced factorisation: the non-increasing list of k factors of m whose
 * largest and smallest are closest (ties: see better()), by search over
 * the divisors of m; greedy prime assignment is not always balanced (72 in 2
 * gives 12x6 where 9x8 exists). The search walks only the divisors (at most
 * 1344 for an int), largest first, and stops a branch as soon as it cannot
 * beat the best found, so large m and many dimensions stay fast. */
typedef struct dims_search {
    int k;
    int *cur, *best;
    long best_spread;
    const int *divs; /* divisors of m, decreasing */
    int ndivs;
} dims_search_t;

/* Is factor list a (non-increasing, k long) more balanced than b? The smaller
 * spread (largest minus smallest) wins; on a tie the larger largest (so the
 * larger smallest); then the same for the lists without their first factor.
 * The ties are broken as MPICH does, so that programs see the same grids. */
static bool better(const int *a, const int *b, int k)
{
    for (int i = 0; i < k - 1; i++) {
        int sa = a[i] - a[k - 1], sb = b[i] - b[k - 1];
        if (sa != sb)
            return sa < sb;
        if (a[i] != b[i])
            return a[i] > b[i];
    }
    return false;
}

/* Is r^n > x? Without overflow: stops multiplying once past x. */
static bool pow_above(long r, int n, long x)
{
    long p = 1;
    for (int t = 0; t < n; t++) {
        p *= r;
        if (p > x)
            return true;
    }
    return false;
}

/* floor(x^(1/n)) for x >= 1, n >= 1. */
static int iroot(long x, int n)
{
    if (n == 1)
        return (int)x;
    long r = (long)pow((double)x, 1.0 / n);
    while (r > 1 && pow_above(r, n, x))
        r--;
    while (!pow_above(r + 1, n, x))
        r++;
    return (int)r;
}

/* Choose factor i (and those after it) of rem, none above maxd. The factors
 * are tried smallest first from rem's n-th root up, where the balanced grids
 * are; a factor d leaves rem / d to the other left - 1 factors, whose smallest
 * is at most the (left - 1)-th root of that, so the spread will be at least
 * cur[0] minus that root: once that passes the best spread found, larger d
 * (which only raise the bound) are not tried. */
static void dims_search(dims_search_t *s, int i, int rem, int maxd)
{
    if (i == s->k - 1) {
        if (rem > maxd)
            return;
        s->cur[i] = rem;
        if (s->best_spread < 0 || better(s->cur, s->best, s->k)) {
            s->best_spread = (long)s->cur[0] - rem;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof *s->cur);
        }
        return;
    }
    int left = s->k - i; /* factors still to choose, this one included */
    int lo = iroot(rem, left);
    if (!pow_above(lo, left, rem - 1))
        lo++; /* d^left must reach rem */
    for (int j = s->ndivs - 1; j >= 0; j--) {
        int d = s->divs[j];
        if (d < lo || rem % d)
            continue;
        if (d > maxd || d > rem)
            break;
        long top = i == 0 ? d : s->cur[0];
        if (s->best_spread >= 0 && top - iroot(rem / d, left - 1) > s->best_spread)
            break;
        s->cur[i] = d;
        dims_search(s, i + 1, rem / d, d);
    }
}

/* The divisors of m in decreasing order into divs, with low (room for
 * sqrt(m) + 1) as scratch; returns how many. */
static int divisors(int m, int *divs, int *low)
{
    int nlow = 0, n = 0;
    for (int d = 1; (long)d * d <= m; d++)
        if (m % d == 0)
            low[nlow++] = d;
    for (int j = 0; j < nlow; j++)
        if (m / low[j] != low[j])
            divs[n++] = m / low[j];
    for (int j = nlow - 1; j >= 0; j--)
        divs[n++] = low[j];
    return n;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    if (ndims < 0 || (ndims > 0 && !dims))
        return weft__mpi_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
    if (nnodes <= 0)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Dims_create");
    long fixed = 1;
    int k = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return weft__mpi_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
        if (dims[d] == 0)
            k++;
        else
            fixed *= dims[d];
        if (fixed > nnodes)
            return weft__mpi_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
    }
    if (nnodes % fixed)
        return weft__mpi_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
    int m = (int)(nnodes / fixed);
    if (k == 0)
        return m == 1 ? MPI_SUCCESS : weft__mpi_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
    /* m has at most 2 sqrt(m) divisors, at most sqrt(m) up to its root. */
    int root = 1;
    while ((long)(root + 1) * (root + 1) <= m)
        root++;
    int *cur = malloc((2 * (size_t)k + 3 * ((size_t)root + 1)) * sizeof *cur);
    if (!cur)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Dims_create");
    int *divs = cur + 2 * k;
    int ndivs = divisors(m, divs, divs + 2 * (root + 1));
    dims_search_t s = {
        .k = k, .cur = cur, .best = cur + k, .best_spread = -1, .divs = divs, .ndivs = ndivs};
    dims_search(&s, 0, m, m);
    for (int d = 0, j = 0; d < ndims; d++)
        if (dims[d] == 0)
            dims[d] = s.best[j++];
    free(cur);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Dims_create)

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_CART, &rc);
    if (!rc && !ndims)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Cartdim_get");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cartdim_get)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_CART, &rc);
    if (!rc && (maxdims < 0 || (maxdims > 0 && (!dims || !periods || !coords))))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Cart_get");
    for (int d = 0; d < t->ndims && d < maxdims; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
        coords[d] = t->coords[d];
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cart_get)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_CART, &rc);
    if (!rc && (!rank || (t->ndims > 0 && !coords)))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Cart_rank");
    int r = 0;
    for (int d = 0; d < t->ndims; d++) {
        int c = coords[d], n = t->dims[d];
        if (c < 0 || c >= n) {
            if (!t->periods[d])
                return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Cart_rank");
            c = ((c % n) + n) % n;
        }
        r = r * n + c;
    }
    *rank = r;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cart_rank)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_CART, &rc);
    if (!rc && (rank < 0 || rank >= comm->size))
        rc = MPI_ERR_RANK;
    if (!rc && (maxdims < t->ndims || (t->ndims > 0 && !coords)))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Cart_coords");
    rank_to_coords(t->dims, t->ndims, rank, coords);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cart_coords)

/* The rank at our coordinates moved by disp along dim, or MPI_PROC_NULL off
 * a non-periodic edge. */
static int shifted(const weft_mpi_topo_t *t, int dim, int disp)
{
    int n = t->dims[dim];
    long c = (long)t->coords[dim] + disp;
    if (c < 0 || c >= n) {
        if (!t->periods[dim])
            return MPI_PROC_NULL;
        c = ((c % n) + n) % n;
    }
    int r = 0;
    for (int d = 0; d < t->ndims; d++)
        r = r * t->dims[d] + (d == dim ? (int)c : t->coords[d]);
    return r;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_CART, &rc);
    if (!rc && (direction < 0 || direction >= t->ndims || !rank_source || !rank_dest))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Cart_shift");
    *rank_dest = shifted(t, direction, disp);
    *rank_source = shifted(t, direction, -disp);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cart_shift)

/* Each subgrid is one colour of a split: the linearised coordinates along the
 * dropped dimensions; ranks keep their order (key = rank), which is the
 * row-major order of the remaining coordinates. */
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_CART, &rc);
    if (!rc && (!newcomm || (t->ndims > 0 && !remain_dims)))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Cart_sub");
    int nd = t->ndims;
    int *sub = malloc(2 * (size_t)(nd ? nd : 1) * sizeof *sub);
    if (!sub)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Cart_sub");
    int *sub_periods = sub + (nd ? nd : 1);
    int color = 0, k = 0;
    for (int d = 0; d < nd; d++) {
        if (remain_dims[d]) {
            sub[k] = t->dims[d];
            sub_periods[k++] = t->periods[d];
        } else {
            color = color * t->dims[d] + t->coords[d];
        }
    }
    MPI_Comm c;
    rc = weft__mpi_comm_split(comm, color, comm->rank, &c, "MPI_Cart_sub");
    if (rc) {
        free(sub);
        return rc; /* reported by the split */
    }
    if (!(c->topo = cart_new(k, sub, sub_periods, c->rank))) {
        free(sub);
        weft__mpi_comm_release(c);
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Cart_sub");
    }
    free(sub);
    *newcomm = c;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cart_sub)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    int rc = check_intra(comm);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Cart_map");
    if (ndims < 0 || (ndims > 0 && !dims))
        return weft__mpi_err(comm, MPI_ERR_DIMS, "MPI_Cart_map");
    if (!newrank)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Cart_map");
    long n = grid_size(ndims, dims);
    if (n < 0)
        return weft__mpi_err(comm, MPI_ERR_DIMS, "MPI_Cart_map");
    if (n > comm->size)
        return weft__mpi_err(comm, MPI_ERR_TOPOLOGY, "MPI_Cart_map");
    *newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Cart_map)

/* ---- graph ---- */

static int check_graph(MPI_Comm comm, int nnodes, const int index[], const int edges[])
{
    if (nnodes < 0 || nnodes > comm->size || (nnodes > 0 && !index))
        return MPI_ERR_ARG;
    int prev = 0;
    for (int i = 0; i < nnodes; i++) {
        if (index[i] < prev)
            return MPI_ERR_ARG;
        prev = index[i];
    }
    if (prev > 0 && !edges)
        return MPI_ERR_ARG;
    for (int e = 0; e < prev; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    int rc = check_intra(comm_old);
    if (!rc && !comm_graph)
        rc = MPI_ERR_ARG;
    if (!rc)
        rc = check_graph(comm_old, nnodes, index, edges);
    if (rc)
        return weft__mpi_err(comm_old, rc, "MPI_Graph_create");
    MPI_Comm c;
    if ((rc = comm_prefix(comm_old, nnodes, &c)))
        return weft__mpi_err(comm_old, rc, "MPI_Graph_create");
    if (c != MPI_COMM_NULL) {
        int nedges = nnodes ? index[nnodes - 1] : 0;
        weft_mpi_topo_t *t = calloc(1, sizeof *t);
        if (t) {
            t->kind = MPI_GRAPH;
            t->nnodes = nnodes;
            t->nedges = nedges;
            t->index = dup_ints(index, nnodes);
            t->edges = dup_ints(edges, nedges);
            c->topo = t;
        }
        if (!t || !t->index || !t->edges) {
            weft__mpi_comm_release(c);
            return weft__mpi_err(comm_old, MPI_ERR_NO_MEM, "MPI_Graph_create");
        }
    }
    *comm_graph = c;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Graph_create)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_GRAPH, &rc);
    if (!rc && (!nnodes || !nedges))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Graphdims_get");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_GRAPH, &rc);
    if (!rc &&
        (maxindex < 0 || maxedges < 0 || (maxindex > 0 && !index) || (maxedges > 0 && !edges)))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Graph_get");
    for (int i = 0; i < t->nnodes && i < maxindex; i++)
        index[i] = t->index[i];
    for (int e = 0; e < t->nedges && e < maxedges; e++)
        edges[e] = t->edges[e];
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Graph_get)

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_GRAPH, &rc);
    if (!rc && (rank < 0 || rank >= t->nnodes))
        rc = MPI_ERR_RANK;
    if (!rc && !nneighbors)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Graph_neighbors_count");
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_GRAPH, &rc);
    if (!rc && (rank < 0 || rank >= t->nnodes))
        rc = MPI_ERR_RANK;
    if (!rc && (maxneighbors < 0 || (maxneighbors > 0 && !neighbors)))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Graph_neighbors");
    int first = rank ? t->index[rank - 1] : 0;
    for (int e = first, i = 0; e < t->index[rank] && i < maxneighbors; e++, i++)
        neighbors[i] = t->edges[e];
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Graph_neighbors)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    int rc = check_intra(comm);
    if (!rc && !newrank)
        rc = MPI_ERR_ARG;
    if (!rc)
        rc = check_graph(comm, nnodes, index, edges);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Graph_map");
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Graph_map)

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    int rc = weft__mpi_check_comm(comm);
    if (!rc && !status)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Topo_test");
    *status = comm->topo && !comm->inter ? comm->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Topo_test)

/* ---- distributed graph ---- */

static bool ranks_valid(const int *r, int n, int size)
{
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            return false;
    return true;
}

/* A dist graph topology owning the four arrays given (weights NULL when
 * unweighted). */
static weft_mpi_topo_t *dist_new(int indegree, int *sources, int *sw, int outdegree, int *dests,
                                 int *dw, bool weighted)
{
    weft_mpi_topo_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = MPI_DIST_GRAPH;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    t->sources = sources;
    t->sourceweights = sw;
    t->destinations = dests;
    t->destweights = dw;
    return t;
}

/* Attach t to a new duplicate of comm_old (collective over comm_old); frees t
 * on failure. */
static int dist_attach(MPI_Comm comm_old, weft_mpi_topo_t *t, MPI_Comm *out)
{
    MPI_Comm c;
    int rc = weft__mpi_comm_create_from(comm_old, comm_old->group, &c);
    if (rc) {
        weft__mpi_topo_free(t);
        return rc;
    }
    c->topo = t;
    *out = c;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    const char *fn = "MPI_Dist_graph_create_adjacent";
    int rc = check_intra(comm_old);
    if (rc)
        return weft__mpi_err(comm_old, rc, fn);
    bool weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    if (indegree < 0 || outdegree < 0 || !comm_dist_graph || (indegree > 0 && !sources) ||
        (outdegree > 0 && !destinations) ||
        (weighted && ((indegree > 0 && (!sourceweights || sourceweights == MPI_WEIGHTS_EMPTY)) ||
                      (outdegree > 0 && (!destweights || destweights == MPI_WEIGHTS_EMPTY)))))
        return weft__mpi_err(comm_old, MPI_ERR_ARG, fn);
    if (!ranks_valid(sources, indegree, comm_old->size) ||
        !ranks_valid(destinations, outdegree, comm_old->size))
        return weft__mpi_err(comm_old, MPI_ERR_RANK, fn);
    int *s = dup_ints(sources, indegree), *d = dup_ints(destinations, outdegree);
    int *sw = weighted ? dup_ints(sourceweights, indegree) : NULL;
    int *dw = weighted ? dup_ints(destweights, outdegree) : NULL;
    weft_mpi_topo_t *t = NULL;
    if (!s || !d || (weighted && (!sw || !dw)) ||
        !(t = dist_new(indegree, s, sw, outdegree, d, dw, weighted))) {
        free(s);
        free(d);
        free(sw);
        free(dw);
        return weft__mpi_err(comm_old, MPI_ERR_NO_MEM, fn);
    }
    if ((rc = dist_attach(comm_old, t, comm_dist_graph)))
        return weft__mpi_err(comm_old, rc, fn);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Dist_graph_create_adjacent)

/* What one process tells another about the edges it was given: triples
 * (kind, other end, weight), kind OUT for an edge that starts at the receiver,
 * IN for one that ends there. */
enum { EDGE_OUT = 0, EDGE_IN = 1 };

typedef struct int_list {
    int n, cap;
    int *v;
} int_list_t;

static int list_push3(int_list_t *l, int a, int b, int c)
{
    if (l->n + 3 > l->cap) {
        int cap = l->cap ? 2 * l->cap : 24;
        int *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return MPI_ERR_NO_MEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = a;
    l->v[l->n++] = b;
    l->v[l->n++] = c;
    return MPI_SUCCESS;
}

/* Every member of c sends every other member out[p] (possibly empty) and gets
 * in[p] from each; in[me] is out[me]'s contents. Point-to-point on the
 * engine over c's aux id, so that nothing else can match. */
static int exchange_lists(MPI_Comm c, int_list_t *out, int_list_t *in)
{
    weft_ctx_t *ctx = weft__mpi.ctx;
    int n = c->size, me = c->rank, rc = MPI_SUCCESS, wrc;
    uint64_t tag = weft__mpi_comm_aux_tag(c);
    weft_request_t **sends = calloc((size_t)n, sizeof *sends);
    if (!sends)
        return MPI_ERR_NO_MEM;
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        wrc = weft_sr_isend(ctx, c->group->ranks[p], AUX_ID(c), tag, out[p].v,
                            (size_t)out[p].n * sizeof(int), &sends[p]);
        if (wrc < 0) {
            rc = weft__mpi_err_from_weft(wrc);
            sends[p] = NULL;
            goto wait_sends;
        }
    }
    in[me] = out[me];
    out[me] = (int_list_t){0};
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        weft_status_t st;
        weft_request_t *r;
        int src = c->group->ranks[p];
        if ((wrc = weft_sr_probe(ctx, src, AUX_ID(c), tag, &st)) < 0) {
            rc = weft__mpi_err_from_weft(wrc);
            goto wait_sends;
        }
        in[p].n = (int)(st.length / sizeof(int));
        in[p].cap = in[p].n;
        in[p].v = malloc(st.length ? st.length : 1);
        if (!in[p].v) {
            rc = MPI_ERR_NO_MEM;
            goto wait_sends;
        }
        if ((wrc = weft_sr_irecv(ctx, src, AUX_ID(c), tag, in[p].v, st.length, &r)) < 0 ||
            (wrc = weft_sr_wait(ctx, r, NULL)) < 0) {
            rc = weft__mpi_err_from_weft(wrc);
            goto wait_sends;
        }
    }
wait_sends:
    wrc = weft_sr_waitall(ctx, n, sends, NULL);
    if (!rc && wrc < 0)
        rc = weft__mpi_err_from_weft(wrc);
    free(sends);
    return rc;
}

static void free_lists(int_list_t *l, int n)
{
    if (!l)
        return;
    for (int i = 0; i < n; i++)
        free(l[i].v);
    free(l);
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    const char *fn = "MPI_Dist_graph_create";
    int rc = check_intra(comm_old);
    if (rc)
        return weft__mpi_err(comm_old, rc, fn);
    if (n < 0 || !comm_dist_graph || (n > 0 && (!sources || !degrees)))
        return weft__mpi_err(comm_old, MPI_ERR_ARG, fn);
    bool weighted = weights != MPI_UNWEIGHTED;
    long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return weft__mpi_err(comm_old, MPI_ERR_ARG, fn);
        nedges += degrees[i];
    }
    if (nedges > 0 && (!destinations || (weighted && (!weights || weights == MPI_WEIGHTS_EMPTY))))
        return weft__mpi_err(comm_old, MPI_ERR_ARG, fn);
    if (!ranks_valid(sources, n, comm_old->size) ||
        !ranks_valid(destinations, (int)nedges, comm_old->size))
        return weft__mpi_err(comm_old, MPI_ERR_RANK, fn);

    /* The new communicator first: its aux id carries the exchange. */
    MPI_Comm c;
    if ((rc = weft__mpi_comm_create_from(comm_old, comm_old->group, &c)))
        return weft__mpi_err(comm_old, rc, fn);
    int size = c->size;
    int_list_t *out = calloc((size_t)size, sizeof *out), *in = calloc((size_t)size, sizeof *in);
    int *s = NULL, *sw = NULL, *d = NULL, *dw = NULL;
    rc = MPI_ERR_NO_MEM;
    if (!out || !in)
        goto err;
    rc = MPI_SUCCESS;
    for (int i = 0, e = 0; i < n && !rc; i++) {
        for (int j = 0; j < degrees[i] && !rc; j++, e++) {
            int w = weighted ? weights[e] : 1;
            rc = list_push3(&out[sources[i]], EDGE_OUT, destinations[e], w);
            if (!rc)
                rc = list_push3(&out[destinations[e]], EDGE_IN, sources[i], w);
        }
    }
    /* Every member takes part even when it failed above (with what it has):
     * the others would wait for its message otherwise. */
    int xrc = exchange_lists(c, out, in);
    if (rc || (rc = xrc))
        goto err;
    int indeg = 0, outdeg = 0;
    for (int p = 0; p < size; p++) {
        for (int i = 0; i + 2 < in[p].n; i += 3) {
            if (in[p].v[i] == EDGE_IN)
                indeg++;
            else
                outdeg++;
        }
    }
    rc = MPI_ERR_NO_MEM;
    s = malloc((size_t)(indeg ? indeg : 1) * sizeof *s);
    d = malloc((size_t)(outdeg ? outdeg : 1) * sizeof *d);
    if (weighted) {
        sw = malloc((size_t)(indeg ? indeg : 1) * sizeof *sw);
        dw = malloc((size_t)(outdeg ? outdeg : 1) * sizeof *dw);
    }
    if (!s || !d || (weighted && (!sw || !dw)))
        goto err;
    int ni = 0, no = 0;
    for (int p = 0; p < size; p++) {
        for (int i = 0; i + 2 < in[p].n; i += 3) {
            if (in[p].v[i] == EDGE_IN) {
                s[ni] = in[p].v[i + 1];
                if (weighted)
                    sw[ni] = in[p].v[i + 2];
                ni++;
            } else {
                d[no] = in[p].v[i + 1];
                if (weighted)
                    dw[no] = in[p].v[i + 2];
                no++;
            }
        }
    }
    if (!(c->topo = dist_new(indeg, s, sw, outdeg, d, dw, weighted)))
        goto err;
    free_lists(out, size);
    free_lists(in, size);
    *comm_dist_graph = c;
    return MPI_SUCCESS;
err:
    free(s);
    free(sw);
    free(d);
    free(dw);
    free_lists(out, size);
    free_lists(in, size);
    weft__mpi_comm_release(c);
    return weft__mpi_err(comm_old, rc, fn);
}
WEFT_MPI_ALIAS(Dist_graph_create)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_DIST_GRAPH, &rc);
    if (!rc && (!indegree || !outdegree || !weighted))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Dist_graph_neighbors_count");
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Dist_graph_neighbors_count)

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    int rc;
    const weft_mpi_topo_t *t = topo_of(comm, MPI_DIST_GRAPH, &rc);
    if (!rc && (maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && !sources) ||
                (maxoutdegree > 0 && !destinations)))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Dist_graph_neighbors");
    /* Weights are written only for a weighted graph, and only where the
     * caller gave an array (MPI_UNWEIGHTED is a valid argument either way). */
    bool sw = t->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED &&
              sourceweights != MPI_WEIGHTS_EMPTY;
    bool dw = t->weighted && destweights && destweights != MPI_UNWEIGHTED &&
              destweights != MPI_WEIGHTS_EMPTY;
    for (int i = 0; i < t->indegree && i < maxindegree; i++) {
        sources[i] = t->sources[i];
        if (sw)
            sourceweights[i] = t->sourceweights[i];
    }
    for (int i = 0; i < t->outdegree && i < maxoutdegree; i++) {
        destinations[i] = t->destinations[i];
        if (dw)
            destweights[i] = t->destweights[i];
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Dist_graph_neighbors)
