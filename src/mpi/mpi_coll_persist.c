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
 * caller keeps them unchanged while the request lives, §6.13).
 * PCOLL_INIT(Name, name, (parameters), fields of the kept arguments;, the
 * non-blocking call on `a`, the arguments to keep...) defines MPI_Name_init. */
#define PCOLL_INIT(Name, name, PARAMS, FIELDS, CALL, ...)                                          \
    typedef struct {                                                                               \
        FIELDS                                                                                     \
    } name##_args_t;                                                                               \
    static int name##_start(const void *p, MPI_Comm comm, MPI_Request *request)                    \
    {                                                                                              \
        const name##_args_t *a = p;                                                                \
        return CALL;                                                                               \
    }                                                                                              \
    int PMPI_##Name##_init PARAMS                                                                  \
    {                                                                                              \
        name##_args_t a = {__VA_ARGS__};                                                           \
        return pcoll_init(comm, info, request, name##_start, &a, sizeof a, "MPI_" #Name "_init");  \
    }                                                                                              \
    WEFT_MPI_ALIAS(Name##_init)

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

/* clang-format off: one block per call, its fields on one line. */
// clang-format off
PCOLL_INIT(Bcast, bcast,
           (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
           MPI_Request *request),
           void *buffer; int count; MPI_Datatype datatype; int root;,
           PMPI_Ibcast(a->buffer, a->count, a->datatype, a->root, comm, request),
           buffer, count, datatype, root)

PCOLL_INIT(Gather, gather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype; int root;,
           PMPI_Igather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, a->root, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)

PCOLL_INIT(Gatherv, gatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
           recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; const int
           *recvcounts; const int *displs; MPI_Datatype recvtype; int root;,
           PMPI_Igatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
           a->displs, a->recvtype, a->root, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root)

PCOLL_INIT(Scatter, scatter,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype; int root;,
           PMPI_Iscatter(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, a->root, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)

PCOLL_INIT(Scatterv, scatterv,
           (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info
           info, MPI_Request *request),
           const void *sendbuf; const int *sendcounts; const int *displs; MPI_Datatype sendtype;
           void *recvbuf; int recvcount; MPI_Datatype recvtype; int root;,
           PMPI_Iscatterv(a->sendbuf, a->sendcounts, a->displs, a->sendtype, a->recvbuf,
           a->recvcount, a->recvtype, a->root, comm, request),
           sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root)

PCOLL_INIT(Allgather, allgather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype;,
           PMPI_Iallgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

PCOLL_INIT(Allgatherv, allgatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
           recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
           MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; const int
           *recvcounts; const int *displs; MPI_Datatype recvtype;,
           PMPI_Iallgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
           a->displs, a->recvtype, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)

PCOLL_INIT(Alltoall, alltoall,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype;,
           PMPI_Ialltoall(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

PCOLL_INIT(Alltoallv, alltoallv,
           (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; const int *sendcounts; const int *sdispls; MPI_Datatype sendtype;
           void *recvbuf; const int *recvcounts; const int *rdispls; MPI_Datatype recvtype;,
           PMPI_Ialltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
           a->recvcounts, a->rdispls, a->recvtype, comm, request),
           sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype)

PCOLL_INIT(Alltoallw, alltoallw,
           (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype
           sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const
           MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; const int *sendcounts; const int *sdispls; const MPI_Datatype
           *sendtypes; void *recvbuf; const int *recvcounts; const int *rdispls; const MPI_Datatype
           *recvtypes;,
           PMPI_Ialltoallw(a->sendbuf, a->sendcounts, a->sdispls, a->sendtypes, a->recvbuf,
           a->recvcounts, a->rdispls, a->recvtypes, comm, request),
           sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)

PCOLL_INIT(Reduce, reduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int
           root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int count; MPI_Datatype datatype; MPI_Op op; int
           root;,
           PMPI_Ireduce(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, a->root, comm,
           request),
           sendbuf, recvbuf, count, datatype, op, root)

PCOLL_INIT(Allreduce, allreduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int count; MPI_Datatype datatype; MPI_Op op;,
           PMPI_Iallreduce(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request),
           sendbuf, recvbuf, count, datatype, op)

PCOLL_INIT(Reduce_scatter_block, reduce_scatter_block,
           (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int recvcount; MPI_Datatype datatype; MPI_Op op;,
           PMPI_Ireduce_scatter_block(a->sendbuf, a->recvbuf, a->recvcount, a->datatype, a->op,
           comm, request),
           sendbuf, recvbuf, recvcount, datatype, op)

PCOLL_INIT(Reduce_scatter, reduce_scatter,
           (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; const int *recvcounts; MPI_Datatype datatype; MPI_Op
           op;,
           PMPI_Ireduce_scatter(a->sendbuf, a->recvbuf, a->recvcounts, a->datatype, a->op, comm,
           request),
           sendbuf, recvbuf, recvcounts, datatype, op)

PCOLL_INIT(Scan, scan,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int count; MPI_Datatype datatype; MPI_Op op;,
           PMPI_Iscan(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request),
           sendbuf, recvbuf, count, datatype, op)

PCOLL_INIT(Exscan, exscan,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int count; MPI_Datatype datatype; MPI_Op op;,
           PMPI_Iexscan(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request),
           sendbuf, recvbuf, count, datatype, op)

PCOLL_INIT(Neighbor_allgather, neighbor_allgather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype;,
           PMPI_Ineighbor_allgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

PCOLL_INIT(Neighbor_allgatherv, neighbor_allgatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
           recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
           MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; const int
           *recvcounts; const int *displs; MPI_Datatype recvtype;,
           PMPI_Ineighbor_allgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
           a->recvcounts, a->displs, a->recvtype, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)

PCOLL_INIT(Neighbor_alltoall, neighbor_alltoall,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype;,
           PMPI_Ineighbor_alltoall(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, comm, request),
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

PCOLL_INIT(Neighbor_alltoallv, neighbor_alltoallv,
           (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; const int *sendcounts; const int *sdispls; MPI_Datatype sendtype;
           void *recvbuf; const int *recvcounts; const int *rdispls; MPI_Datatype recvtype;,
           PMPI_Ineighbor_alltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
           a->recvcounts, a->rdispls, a->recvtype, comm, request),
           sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype)

PCOLL_INIT(Neighbor_alltoallw, neighbor_alltoallw,
           (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const
           MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint
           rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request
           *request),
           const void *sendbuf; const int *sendcounts; const MPI_Aint *sdispls; const MPI_Datatype
           *sendtypes; void *recvbuf; const int *recvcounts; const MPI_Aint *rdispls; const
           MPI_Datatype *recvtypes;,
           PMPI_Ineighbor_alltoallw(a->sendbuf, a->sendcounts, a->sdispls, a->sendtypes, a->recvbuf,
           a->recvcounts, a->rdispls, a->recvtypes, comm, request),
           sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)
// clang-format on
