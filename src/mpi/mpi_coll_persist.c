/* Persistent collectives (MPI 4.0 §6.13: MPI_Bcast_init and the others).
 *
 * A persistent collective request keeps its non-blocking collective's
 * arguments and the sequence numbers (the high half of its tags) that its
 * init took from the communicator, and every MPI_Start builds that
 * collective's schedule anew with those numbers and runs it as the request's
 * inner request. Init calls are ordered as non-blocking collectives are, so
 * the numbers agree at every member; the starts need not be (MPI 4.0 allows
 * members to start persistent collectives in different orders), and each
 * start finds its partners by the numbers alone.
 *
 * A restart reuses the tags of the last run. That is safe: a member starts
 * again only once its last run completed, so each of its messages of the new
 * run follows, to the same peer, every message of the old one (non-
 * overtaking), and the peer's receives of the old run match those first.
 *
 * The init builds the schedule once and discards it (a dry run: see
 * weft__coll_pin), so bad arguments fail at init, through the communicator's
 * error handler (under the non-blocking call's name). A start builds again:
 * an MPI_IN_PLACE snapshot is taken at the start, as the data is then.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"

_Thread_local weft__coll_pin_t weft__coll_pin;

/* Starts the non-blocking collective of args on comm into *request. */
typedef int pcoll_start_fn(const void *args, MPI_Comm comm, MPI_Request *request);

struct weft__mpi_pcoll {
    pcoll_start_fn *start;
    uint32_t seq, seq_local;
    MPI_Request inner; /* the run in progress, NULL while inactive */
    _Alignas(max_align_t) unsigned char args[];
};

/* Build pc's collective with its own numbers: started into *out, or (dry)
 * checked and discarded. */
static int pcoll_run(struct weft__mpi_pcoll *pc, MPI_Comm comm, MPI_Request *out, bool dry)
{
    weft__coll_pin =
        (weft__coll_pin_t){.on = true, .dry = dry, .seq = pc->seq, .seq_local = pc->seq_local};
    int rc = pc->start(pc->args, comm, out);
    weft__coll_pin = (weft__coll_pin_t){0};
    return rc;
}

static int pcoll_init(MPI_Comm comm, MPI_Info info, MPI_Request *request, pcoll_start_fn *start,
                      const void *args, size_t len, const char *name)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, name);
    if (!info || info->magic != WEFT_MPI_MAGIC_INFO)
        return weft__mpi_err(comm, MPI_ERR_INFO, name);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_REQUEST, name);
    struct weft__mpi_pcoll *pc = malloc(sizeof *pc + len);
    if (!pc)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, name);
    pc->start = start;
    pc->inner = NULL;
    if (len)
        memcpy(pc->args, args, len);
    pc->seq = weft__coll_next_seq(comm, true);
    pc->seq_local =
        comm->inter && comm->local_comm ? weft__coll_next_seq(comm->local_comm, true) : 0;
    MPI_Request none = MPI_REQUEST_NULL;
    if ((rc = pcoll_run(pc, comm, &none, true))) {
        free(pc);
        return rc; /* reported by the build */
    }
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_PCOLL, comm);
    if (!r) {
        free(pc);
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, name);
    }
    r->persistent = true;
    r->type = NULL; /* nothing for weft__mpi_req_free to release */
    r->pcoll = pc;
    *request = r;
    return MPI_SUCCESS;
}

int weft__pcoll_start(MPI_Request r)
{
    r->complete = false;
    r->active = true;
    weft__mpi_status_empty(&r->status);
    int rc = pcoll_run(r->pcoll, r->comm, &r->pcoll->inner, false);
    if (rc) {
        r->pcoll->inner = NULL;
        r->active = false;
    }
    return rc;
}

void weft__pcoll_poll(MPI_Request r)
{
    MPI_Request in = r->pcoll->inner;
    if (!in)
        return;
    weft__mpi_req_poll(in);
    if (!in->complete)
        return;
    r->status = in->status;
    weft__mpi_req_free(in);
    r->pcoll->inner = NULL;
    r->complete = true;
}

void weft__pcoll_free(MPI_Request r)
{
    if (!r->pcoll)
        return;
    if (r->pcoll->inner)
        weft__mpi_req_free(r->pcoll->inner);
    free(r->pcoll);
    r->pcoll = NULL;
}

/* ---------------------------------------------------------------- the calls
 * Each keeps its non-blocking collective's arguments (arrays by address: the
 * caller keeps them unchanged while the request lives, §6.13). */

static int barrier_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    (void)p;
    return PMPI_Ibarrier(comm, request);
}
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return pcoll_init(comm, info, request, barrier_start, NULL, 0, "MPI_Barrier_init");
}
WEFT_MPI_ALIAS(Barrier_init)

typedef struct {
    void *buffer;
    int count;
    MPI_Datatype datatype;
    int root;
} bcast_args_t;
static int bcast_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const bcast_args_t *a = p;
    return PMPI_Ibcast(a->buffer, a->count, a->datatype, a->root, comm, request);
}
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    bcast_args_t a = {buffer, count, datatype, root};
    return pcoll_init(comm, info, request, bcast_start, &a, sizeof a, "MPI_Bcast_init");
}
WEFT_MPI_ALIAS(Bcast_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
    int root;
} gather_args_t;
static int gather_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const gather_args_t *a = p;
    return PMPI_Igather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                        a->recvtype, a->root, comm, request);
}
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    gather_args_t a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root};
    return pcoll_init(comm, info, request, gather_start, &a, sizeof a, "MPI_Gather_init");
}
WEFT_MPI_ALIAS(Gather_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts;
    const int *displs;
    MPI_Datatype recvtype;
    int root;
} gatherv_args_t;
static int gatherv_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const gatherv_args_t *a = p;
    return PMPI_Igatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
                         a->displs, a->recvtype, a->root, comm, request);
}
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    gatherv_args_t a = {sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root};
    return pcoll_init(comm, info, request, gatherv_start, &a, sizeof a, "MPI_Gatherv_init");
}
WEFT_MPI_ALIAS(Gatherv_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
    int root;
} scatter_args_t;
static int scatter_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const scatter_args_t *a = p;
    return PMPI_Iscatter(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                         a->recvtype, a->root, comm, request);
}
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    scatter_args_t a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root};
    return pcoll_init(comm, info, request, scatter_start, &a, sizeof a, "MPI_Scatter_init");
}
WEFT_MPI_ALIAS(Scatter_init)

typedef struct {
    const void *sendbuf;
    const int *sendcounts;
    const int *displs;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
    int root;
} scatterv_args_t;
static int scatterv_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const scatterv_args_t *a = p;
    return PMPI_Iscatterv(a->sendbuf, a->sendcounts, a->displs, a->sendtype, a->recvbuf,
                          a->recvcount, a->recvtype, a->root, comm, request);
}
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    scatterv_args_t a = {sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root};
    return pcoll_init(comm, info, request, scatterv_start, &a, sizeof a, "MPI_Scatterv_init");
}
WEFT_MPI_ALIAS(Scatterv_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
} allgather_args_t;
static int allgather_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const allgather_args_t *a = p;
    return PMPI_Iallgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                           a->recvtype, comm, request);
}
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    allgather_args_t a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype};
    return pcoll_init(comm, info, request, allgather_start, &a, sizeof a, "MPI_Allgather_init");
}
WEFT_MPI_ALIAS(Allgather_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts;
    const int *displs;
    MPI_Datatype recvtype;
} allgatherv_args_t;
static int allgatherv_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const allgatherv_args_t *a = p;
    return PMPI_Iallgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
                            a->displs, a->recvtype, comm, request);
}
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    allgatherv_args_t a = {sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype};
    return pcoll_init(comm, info, request, allgatherv_start, &a, sizeof a, "MPI_Allgatherv_init");
}
WEFT_MPI_ALIAS(Allgatherv_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
} alltoall_args_t;
static int alltoall_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const alltoall_args_t *a = p;
    return PMPI_Ialltoall(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                          a->recvtype, comm, request);
}
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    alltoall_args_t a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype};
    return pcoll_init(comm, info, request, alltoall_start, &a, sizeof a, "MPI_Alltoall_init");
}
WEFT_MPI_ALIAS(Alltoall_init)

typedef struct {
    const void *sendbuf;
    const int *sendcounts;
    const int *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts;
    const int *rdispls;
    MPI_Datatype recvtype;
} alltoallv_args_t;
static int alltoallv_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const alltoallv_args_t *a = p;
    return PMPI_Ialltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                           a->recvcounts, a->rdispls, a->recvtype, comm, request);
}
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    alltoallv_args_t a = {sendbuf, sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls, recvtype};
    return pcoll_init(comm, info, request, alltoallv_start, &a, sizeof a, "MPI_Alltoallv_init");
}
WEFT_MPI_ALIAS(Alltoallv_init)

typedef struct {
    const void *sendbuf;
    const int *sendcounts;
    const int *sdispls;
    const MPI_Datatype *sendtypes;
    void *recvbuf;
    const int *recvcounts;
    const int *rdispls;
    const MPI_Datatype *recvtypes;
} alltoallw_args_t;
static int alltoallw_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const alltoallw_args_t *a = p;
    return PMPI_Ialltoallw(a->sendbuf, a->sendcounts, a->sdispls, a->sendtypes, a->recvbuf,
                           a->recvcounts, a->rdispls, a->recvtypes, comm, request);
}
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    alltoallw_args_t a = {sendbuf, sendcounts, sdispls, sendtypes,
                          recvbuf, recvcounts, rdispls, recvtypes};
    return pcoll_init(comm, info, request, alltoallw_start, &a, sizeof a, "MPI_Alltoallw_init");
}
WEFT_MPI_ALIAS(Alltoallw_init)

typedef struct {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype datatype;
    MPI_Op op;
    int root;
} reduce_args_t;
static int reduce_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const reduce_args_t *a = p;
    return PMPI_Ireduce(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, a->root, comm,
                        request);
}
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    reduce_args_t a = {sendbuf, recvbuf, count, datatype, op, root};
    return pcoll_init(comm, info, request, reduce_start, &a, sizeof a, "MPI_Reduce_init");
}
WEFT_MPI_ALIAS(Reduce_init)

typedef struct {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype datatype;
    MPI_Op op;
} allreduce_args_t;
static int allreduce_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const allreduce_args_t *a = p;
    return PMPI_Iallreduce(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request);
}
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    allreduce_args_t a = {sendbuf, recvbuf, count, datatype, op};
    return pcoll_init(comm, info, request, allreduce_start, &a, sizeof a, "MPI_Allreduce_init");
}
WEFT_MPI_ALIAS(Allreduce_init)

typedef struct {
    const void *sendbuf;
    void *recvbuf;
    int recvcount;
    MPI_Datatype datatype;
    MPI_Op op;
} reduce_scatter_block_args_t;
static int reduce_scatter_block_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const reduce_scatter_block_args_t *a = p;
    return PMPI_Ireduce_scatter_block(a->sendbuf, a->recvbuf, a->recvcount, a->datatype, a->op,
                                      comm, request);
}
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    reduce_scatter_block_args_t a = {sendbuf, recvbuf, recvcount, datatype, op};
    return pcoll_init(comm, info, request, reduce_scatter_block_start, &a, sizeof a,
                      "MPI_Reduce_scatter_block_init");
}
WEFT_MPI_ALIAS(Reduce_scatter_block_init)

typedef struct {
    const void *sendbuf;
    void *recvbuf;
    const int *recvcounts;
    MPI_Datatype datatype;
    MPI_Op op;
} reduce_scatter_args_t;
static int reduce_scatter_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const reduce_scatter_args_t *a = p;
    return PMPI_Ireduce_scatter(a->sendbuf, a->recvbuf, a->recvcounts, a->datatype, a->op, comm,
                                request);
}
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    reduce_scatter_args_t a = {sendbuf, recvbuf, recvcounts, datatype, op};
    return pcoll_init(comm, info, request, reduce_scatter_start, &a, sizeof a,
                      "MPI_Reduce_scatter_init");
}
WEFT_MPI_ALIAS(Reduce_scatter_init)

typedef struct {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype datatype;
    MPI_Op op;
} scan_args_t;
static int scan_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const scan_args_t *a = p;
    return PMPI_Iscan(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request);
}
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    scan_args_t a = {sendbuf, recvbuf, count, datatype, op};
    return pcoll_init(comm, info, request, scan_start, &a, sizeof a, "MPI_Scan_init");
}
WEFT_MPI_ALIAS(Scan_init)

typedef struct {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype datatype;
    MPI_Op op;
} exscan_args_t;
static int exscan_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const exscan_args_t *a = p;
    return PMPI_Iexscan(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request);
}
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    exscan_args_t a = {sendbuf, recvbuf, count, datatype, op};
    return pcoll_init(comm, info, request, exscan_start, &a, sizeof a, "MPI_Exscan_init");
}
WEFT_MPI_ALIAS(Exscan_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
} neighbor_allgather_args_t;
static int neighbor_allgather_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const neighbor_allgather_args_t *a = p;
    return PMPI_Ineighbor_allgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                                    a->recvtype, comm, request);
}
int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    neighbor_allgather_args_t a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype};
    return pcoll_init(comm, info, request, neighbor_allgather_start, &a, sizeof a,
                      "MPI_Neighbor_allgather_init");
}
WEFT_MPI_ALIAS(Neighbor_allgather_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts;
    const int *displs;
    MPI_Datatype recvtype;
} neighbor_allgatherv_args_t;
static int neighbor_allgatherv_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const neighbor_allgatherv_args_t *a = p;
    return PMPI_Ineighbor_allgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                                     a->recvcounts, a->displs, a->recvtype, comm, request);
}
int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    neighbor_allgatherv_args_t a = {sendbuf,    sendcount, sendtype, recvbuf,
                                    recvcounts, displs,    recvtype};
    return pcoll_init(comm, info, request, neighbor_allgatherv_start, &a, sizeof a,
                      "MPI_Neighbor_allgatherv_init");
}
WEFT_MPI_ALIAS(Neighbor_allgatherv_init)

typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
} neighbor_alltoall_args_t;
static int neighbor_alltoall_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const neighbor_alltoall_args_t *a = p;
    return PMPI_Ineighbor_alltoall(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                                   a->recvtype, comm, request);
}
int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    neighbor_alltoall_args_t a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype};
    return pcoll_init(comm, info, request, neighbor_alltoall_start, &a, sizeof a,
                      "MPI_Neighbor_alltoall_init");
}
WEFT_MPI_ALIAS(Neighbor_alltoall_init)

typedef struct {
    const void *sendbuf;
    const int *sendcounts;
    const int *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts;
    const int *rdispls;
    MPI_Datatype recvtype;
} neighbor_alltoallv_args_t;
static int neighbor_alltoallv_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const neighbor_alltoallv_args_t *a = p;
    return PMPI_Ineighbor_alltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                                    a->recvcounts, a->rdispls, a->recvtype, comm, request);
}
int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    neighbor_alltoallv_args_t a = {sendbuf, sendcounts, sdispls, sendtype,
                                   recvbuf, recvcounts, rdispls, recvtype};
    return pcoll_init(comm, info, request, neighbor_alltoallv_start, &a, sizeof a,
                      "MPI_Neighbor_alltoallv_init");
}
WEFT_MPI_ALIAS(Neighbor_alltoallv_init)

typedef struct {
    const void *sendbuf;
    const int *sendcounts;
    const MPI_Aint *sdispls;
    const MPI_Datatype *sendtypes;
    void *recvbuf;
    const int *recvcounts;
    const MPI_Aint *rdispls;
    const MPI_Datatype *recvtypes;
} neighbor_alltoallw_args_t;
static int neighbor_alltoallw_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    const neighbor_alltoallw_args_t *a = p;
    return PMPI_Ineighbor_alltoallw(a->sendbuf, a->sendcounts, a->sdispls, a->sendtypes, a->recvbuf,
                                    a->recvcounts, a->rdispls, a->recvtypes, comm, request);
}
int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    neighbor_alltoallw_args_t a = {sendbuf, sendcounts, sdispls, sendtypes,
                                   recvbuf, recvcounts, rdispls, recvtypes};
    return pcoll_init(comm, info, request, neighbor_alltoallw_start, &a, sizeof a,
                      "MPI_Neighbor_alltoallw_init");
}
WEFT_MPI_ALIAS(Neighbor_alltoallw_init)
