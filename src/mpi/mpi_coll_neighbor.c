/* Neighbourhood collectives (MPI 3.1 §7.6) on the topology of a communicator.
 *
 * Neighbour lists: cartesian, for each dimension the neighbour at -1 then the one
 * at +1 (MPI_PROC_NULL off a non-periodic edge), the same list for sources and
 * destinations; graph, the adjacency list of the rank, both ways; dist graph, the
 * sources and the destinations given at creation. Every message is posted in one
 * round. On a cartesian topology a message is tagged with the direction it goes
 * in, so that a peer that is neighbour on both sides (a periodic dimension of
 * size 1 or 2) still gets each block in its slot; elsewhere, messages between a
 * pair are matched in order, which is what the standard asks of multigraphs.
 */
#include <stdlib.h>

#include "mpi/mpi_coll_int.h"

typedef struct nbrs {
    int nin, nout;
    int *in, *out;
    bool cart;
} nbrs_t;

/* The rank at coordinates coords of a cartesian grid (row-major), or
 * MPI_PROC_NULL off a non-periodic edge. */
static int cart_rank(const weft_mpi_topo_t *t, const int *coords)
{
    int r = 0;
    for (int d = 0; d < t->ndims; d++) {
        int c = coords[d];
        if (c < 0 || c >= t->dims[d]) {
            if (!t->periods[d])
                return MPI_PROC_NULL;
            c = ((c % t->dims[d]) + t->dims[d]) % t->dims[d];
        }
        r = r * t->dims[d] + c;
    }
    return r;
}

int weft__coll_degrees(MPI_Comm comm, int *in, int *out)
{
    const weft_mpi_topo_t *t = comm->topo;
    if (!t || comm->inter)
        return MPI_ERR_TOPOLOGY;
    switch (t->kind) {
    case MPI_CART:
        *in = *out = 2 * t->ndims;
        return MPI_SUCCESS;
    case MPI_GRAPH:
        *in = *out = t->index[comm->rank] - (comm->rank ? t->index[comm->rank - 1] : 0);
        return MPI_SUCCESS;
    case MPI_DIST_GRAPH:
        *in = t->indegree;
        *out = t->outdegree;
        return MPI_SUCCESS;
    default:
        return MPI_ERR_TOPOLOGY;
    }
}

static int neighbours(weft__mpi_sched_t *s, MPI_Comm comm, nbrs_t *n)
{
    const weft_mpi_topo_t *t = comm->topo;
    if (!t || comm->inter)
        return MPI_ERR_TOPOLOGY;
    n->cart = false;
    switch (t->kind) {
    case MPI_CART: {
        int nd = t->ndims;
        int *coords = weft__coll_tmp(s, (size_t)(nd ? nd : 1) * sizeof(int));
        n->in = n->out = weft__coll_tmp(s, (size_t)(2 * nd + 1) * sizeof(int));
        if (!coords || !n->in)
            return MPI_ERR_NO_MEM;
        /* Our coordinates, from the rank (row-major), as MPI_Cart_coords. */
        for (int d = nd - 1, r = comm->rank; d >= 0; d--) {
            coords[d] = r % t->dims[d];
            r /= t->dims[d];
        }
        for (int d = 0; d < nd; d++) {
            coords[d]--;
            n->in[2 * d] = cart_rank(t, coords);
            coords[d] += 2;
            n->in[2 * d + 1] = cart_rank(t, coords);
            coords[d]--;
        }
        n->nin = n->nout = 2 * nd;
        n->cart = true;
        return MPI_SUCCESS;
    }
    case MPI_GRAPH: {
        int r = comm->rank;
        int first = r ? t->index[r - 1] : 0;
        n->in = n->out = t->edges + first;
        n->nin = n->nout = t->index[r] - first;
        return MPI_SUCCESS;
    }
    case MPI_DIST_GRAPH:
        n->nin = t->indegree;
        n->nout = t->outdegree;
        n->in = t->sources;
        n->out = t->destinations;
        return MPI_SUCCESS;
    default:
        return MPI_ERR_TOPOLOGY;
    }
}

/* sb == NULL: send (sbuf, scount, stype) to every out-neighbour (allgather). */
static int build(weft__mpi_sched_t *s, MPI_Comm comm, const nbrs_t *n, const void *sbuf, int scount,
                 MPI_Datatype stype, const weft_coll_blocks_t *sb, const weft_coll_blocks_t *rb)
{
    weft__coll_phase(s);
    for (int i = 0; i < n->nin; i++) {
        if (n->in[i] == MPI_PROC_NULL)
            continue;
        char *p;
        size_t c;
        MPI_Datatype t;
        weft__coll_blk(rb, i, &p, &c, &t);
        /* From the neighbour at -1 comes what it sent towards +1, and back. */
        weft__coll_recv(s, comm, n->in[i], p, c, t, n->cart ? (i ^ 1) : 0);
    }
    for (int i = 0; i < n->nout; i++) {
        if (n->out[i] == MPI_PROC_NULL)
            continue;
        if (sb) {
            char *p;
            size_t c;
            MPI_Datatype t;
            weft__coll_blk(sb, i, &p, &c, &t);
            weft__coll_send(s, comm, n->out[i], p, c, t, n->cart ? i : 0);
        } else {
            weft__coll_send(s, comm, n->out[i], sbuf, (size_t)scount, stype, n->cart ? i : 0);
        }
    }
    weft__coll_round(s);
    return MPI_SUCCESS;
}

/* sb == NULL: an allgather of (sbuf, scount, stype). */
static int neighbor(const void *sbuf, int scount, MPI_Datatype stype, const weft_coll_blocks_t *sb,
                    const weft_coll_blocks_t *rb, MPI_Comm comm, MPI_Request *req, const char *name)
{
    int err = weft__mpi_check_comm(comm);
    if (err)
        return weft__mpi_err(NULL, err, name);
    weft__mpi_sched_t *s = weft__coll_new(comm, req != NULL);
    if (!s)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, name);
    nbrs_t n;
    err = neighbours(s, comm, &n);
    if (err == MPI_SUCCESS)
        err = sb ? weft__coll_check_blocks(sb, n.nout) : weft__coll_check_data(sbuf, scount, stype);
    if (err == MPI_SUCCESS && (sbuf == MPI_IN_PLACE || (sb && sb->buf == MPI_IN_PLACE)))
        err = MPI_ERR_BUFFER;
    if (err == MPI_SUCCESS)
        err = weft__coll_check_blocks(rb, n.nin);
    if (err == MPI_SUCCESS)
        err = build(s, comm, &n, sbuf, scount, stype, sb, rb);
    return weft__coll_finish(s, err, comm, req, name);
}

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    return neighbor(sendbuf, sendcount, sendtype, NULL, &rb, comm, NULL, "MPI_Neighbor_allgather");
}
WEFT_MPI_ALIAS(Neighbor_allgather)

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ineighbor_allgather");
    return neighbor(sendbuf, sendcount, sendtype, NULL, &rb, comm, request,
                    "MPI_Ineighbor_allgather");
}
WEFT_MPI_ALIAS(Ineighbor_allgather)

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, displs, recvtype);
    return neighbor(sendbuf, sendcount, sendtype, NULL, &rb, comm, NULL, "MPI_Neighbor_allgatherv");
}
WEFT_MPI_ALIAS(Neighbor_allgatherv)

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, displs, recvtype);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ineighbor_allgatherv");
    return neighbor(sendbuf, sendcount, sendtype, NULL, &rb, comm, request,
                    "MPI_Ineighbor_allgatherv");
}
WEFT_MPI_ALIAS(Ineighbor_allgatherv)

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t sb = weft__coll_uniform(sendbuf, sendcount, sendtype);
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    return neighbor(NULL, 0, NULL, &sb, &rb, comm, NULL, "MPI_Neighbor_alltoall");
}
WEFT_MPI_ALIAS(Neighbor_alltoall)

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    weft_coll_blocks_t sb = weft__coll_uniform(sendbuf, sendcount, sendtype);
    weft_coll_blocks_t rb = weft__coll_uniform(recvbuf, recvcount, recvtype);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ineighbor_alltoall");
    return neighbor(NULL, 0, NULL, &sb, &rb, comm, request, "MPI_Ineighbor_alltoall");
}
WEFT_MPI_ALIAS(Ineighbor_alltoall)

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    weft_coll_blocks_t sb = weft__coll_vector(sendbuf, sendcounts, sdispls, sendtype);
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, rdispls, recvtype);
    return neighbor(NULL, 0, NULL, &sb, &rb, comm, NULL, "MPI_Neighbor_alltoallv");
}
WEFT_MPI_ALIAS(Neighbor_alltoallv)

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    weft_coll_blocks_t sb = weft__coll_vector(sendbuf, sendcounts, sdispls, sendtype);
    weft_coll_blocks_t rb = weft__coll_vector(recvbuf, recvcounts, rdispls, recvtype);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ineighbor_alltoallv");
    return neighbor(NULL, 0, NULL, &sb, &rb, comm, request, "MPI_Ineighbor_alltoallv");
}
WEFT_MPI_ALIAS(Ineighbor_alltoallv)

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    weft_coll_blocks_t sb = weft__coll_wblocks(sendbuf, sendcounts, NULL, sdispls, sendtypes);
    weft_coll_blocks_t rb = weft__coll_wblocks(recvbuf, recvcounts, NULL, rdispls, recvtypes);
    return neighbor(NULL, 0, NULL, &sb, &rb, comm, NULL, "MPI_Neighbor_alltoallw");
}
WEFT_MPI_ALIAS(Neighbor_alltoallw)

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request)
{
    weft_coll_blocks_t sb = weft__coll_wblocks(sendbuf, sendcounts, NULL, sdispls, sendtypes);
    weft_coll_blocks_t rb = weft__coll_wblocks(recvbuf, recvcounts, NULL, rdispls, recvtypes);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Ineighbor_alltoallw");
    return neighbor(NULL, 0, NULL, &sb, &rb, comm, request, "MPI_Ineighbor_alltoallw");
}
WEFT_MPI_ALIAS(Ineighbor_alltoallw)
