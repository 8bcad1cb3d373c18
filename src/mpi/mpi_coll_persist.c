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
 * error handler (under the init's name: weft__mpi_err_as). A start builds again:
 * an MPI_IN_PLACE snapshot is taken at the start, as the data is then.
 *
 * Buffers are kept by address (their contents are the point of each start),
 * but the count, displacement and type arrays are copied at init, where they
 * are significant, and every datatype and op named is referenced until the
 * request is freed: a caller may free or reuse them once the init returns, as
 * it may after MPI_Send_init (MPICH and Open MPI read them only at init too,
 * and bindings such as mpi4py pass temporary arrays).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_coll_int.h"
#include "mpi/mpi_type_int.h"

_Thread_local weft__coll_pin_t weft__coll_pin;

/* Starts the non-blocking collective of args on comm into *request. */
typedef int pcoll_start_fn(const void *args, MPI_Comm comm, MPI_Request *request);

enum { PCOLL_MAX_ARRAYS = 6 };

struct weft__mpi_pcoll {
    pcoll_start_fn *start;
    uint32_t seq, seq_local;
    MPI_Request inner; /* the run in progress, NULL while inactive */
    /* What the arguments point at that the request owns: */
    void *arrays[PCOLL_MAX_ARRAYS]; /* copies of the caller's arrays */
    int narrays;
    MPI_Datatype *types; /* one reference each */
    int ntypes, types_cap;
    MPI_Op op;  /* referenced, or NULL */
    bool nomem; /* a copy or a reference failed for want of memory */
    _Alignas(max_align_t) unsigned char args[];
};

/* A copy of the n elements of size size at src, owned by pc; src itself when
 * there is nothing to copy (n == 0, or NULL: not significant here). */
static void *keep_array(struct weft__mpi_pcoll *pc, const void *src, int n, size_t size)
{
    if (!src || n <= 0)
        return (void *)src;
    void *copy = pc->narrays < PCOLL_MAX_ARRAYS ? malloc((size_t)n * size) : NULL;
    if (!copy) {
        pc->nomem = true;
        return (void *)src;
    }
    memcpy(copy, src, (size_t)n * size);
    pc->arrays[pc->narrays++] = copy;
    return copy;
}

/* A reference to each valid type of types[0..n) (the others are not
 * significant: the dry run accepted the arguments). */
static void keep_types(struct weft__mpi_pcoll *pc, const MPI_Datatype *types, int n)
{
    for (int i = 0; types && i < n; i++) {
        MPI_Datatype t = types[i];
        if (!weft__mpi_type_valid(t) || t->predefined)
            continue;
        if (pc->ntypes == pc->types_cap) {
            int cap = pc->types_cap ? 2 * pc->types_cap : 4;
            MPI_Datatype *grown = realloc(pc->types, (size_t)cap * sizeof *grown);
            if (!grown) {
                pc->nomem = true;
                return;
            }
            pc->types = grown;
            pc->types_cap = cap;
        }
        weft__mpi_type_retain(t);
        pc->types[pc->ntypes++] = t;
    }
}

static void keep_type(struct weft__mpi_pcoll *pc, MPI_Datatype t)
{
    keep_types(pc, &t, 1);
}

static void keep_op(struct weft__mpi_pcoll *pc, MPI_Op op)
{
    if (weft__coll_check_op(op) == MPI_SUCCESS) {
        weft__mpi_op_retain(op);
        pc->op = op;
    }
}

/* In a keep statement: copy the arrays of n entries a->f... into pc. */
#define KEEP_ARRAY(f, n)          (a->f = keep_array(pc, a->f, (n), sizeof *a->f))
#define KEEP_V(counts, displs, n) (KEEP_ARRAY(counts, n), KEEP_ARRAY(displs, n))
#define KEEP_W(counts, displs, types, n)                                                           \
    (KEEP_V(counts, displs, n), KEEP_ARRAY(types, n), keep_types(pc, a->types, (n)))
#define KEEP_TYPES(t1, t2) (keep_type(pc, a->t1), keep_type(pc, a->t2))
#define PEERS              weft__mpi_comm_peer_size(comm) /* the length of the arrays */

static void pcoll_release(struct weft__mpi_pcoll *pc)
{
    for (int i = 0; i < pc->narrays; i++)
        free(pc->arrays[i]);
    for (int i = 0; i < pc->ntypes; i++)
        weft__mpi_type_release(pc->types[i]);
    free(pc->types);
    if (pc->op)
        weft__mpi_op_release(pc->op);
    free(pc);
}

/* Whether this member is the root of a rooted collective. */
static bool is_root(MPI_Comm comm, int root)
{
    return comm->inter ? root == MPI_ROOT : comm->rank == root;
}

/* This member's neighbour counts (0 without a topology: the dry run said). */
static int indegree(MPI_Comm comm)
{
    int in = 0, out = 0;
    weft__coll_degrees(comm, &in, &out);
    return in;
}

static int outdegree(MPI_Comm comm)
{
    int in = 0, out = 0;
    weft__coll_degrees(comm, &in, &out);
    return out;
}

/* Build pc's collective with its own numbers: started into *out, or (dry)
 * checked and discarded; errors are reported under name. */
static int pcoll_run(struct weft__mpi_pcoll *pc, MPI_Comm comm, MPI_Request *out, bool dry,
                     const char *name)
{
    weft__coll_pin =
        (weft__coll_pin_t){.on = true, .dry = dry, .seq = pc->seq, .seq_local = pc->seq_local};
    weft__mpi_err_as = name;
    int rc = pc->start(pc->args, comm, out);
    weft__mpi_err_as = NULL;
    weft__coll_pin = (weft__coll_pin_t){0};
    return rc;
}

/* Copies into pc what its arguments point at that the caller may free. */
typedef void pcoll_keep_fn(void *args, MPI_Comm comm, struct weft__mpi_pcoll *pc);

static int pcoll_init(MPI_Comm comm, MPI_Info info, MPI_Request *request, pcoll_start_fn *start,
                      pcoll_keep_fn *keep, const void *args, size_t len, const char *name)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, name);
    if (!info || info->magic != WEFT_MPI_MAGIC_INFO)
        return weft__mpi_err(comm, MPI_ERR_INFO, name);
    if (!request)
        return weft__mpi_err(comm, MPI_ERR_REQUEST, name);
    struct weft__mpi_pcoll *pc = calloc(1, sizeof *pc + len);
    if (!pc)
        return weft__mpi_err(comm, MPI_ERR_NO_MEM, name);
    pc->start = start;
    if (len)
        memcpy(pc->args, args, len);
    pc->seq = weft__coll_next_seq(comm, true);
    pc->seq_local =
        comm->inter && comm->local_comm ? weft__coll_next_seq(comm->local_comm, true) : 0;
    MPI_Request none = MPI_REQUEST_NULL;
    if ((rc = pcoll_run(pc, comm, &none, true, name))) {
        free(pc);
        return rc; /* reported by the build */
    }
    if (keep)
        keep(pc->args, comm, pc);
    MPI_Request r = pc->nomem ? NULL : weft__mpi_req_alloc(WEFT_MPI_REQ_PCOLL, comm);
    if (!r) {
        pcoll_release(pc);
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
    int rc = pcoll_run(r->pcoll, r->comm, &r->pcoll->inner, false, "MPI_Start");
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
    pcoll_release(r->pcoll);
    r->pcoll = NULL;
}

/* ---------------------------------------------------------------- the calls
 * Each keeps its non-blocking collective's arguments.
 * PCOLL_INIT(Name, name, (parameters), fields of the kept arguments;, the
 * non-blocking call on `a`, what to copy and reference (statements on `a`,
 * `comm` and `pc`), the arguments to keep...) defines MPI_Name_init. */
#define PCOLL_INIT(Name, name, PARAMS, FIELDS, CALL, KEEP, ...)                                    \
    typedef struct {                                                                               \
        FIELDS                                                                                     \
    } name##_args_t;                                                                               \
    static int name##_start(const void *p, MPI_Comm comm, MPI_Request *request)                    \
    {                                                                                              \
        const name##_args_t *a = p;                                                                \
        return CALL;                                                                               \
    }                                                                                              \
    static void name##_keep(void *p, MPI_Comm comm, struct weft__mpi_pcoll *pc)                    \
    {                                                                                              \
        name##_args_t *a = p;                                                                      \
        (void)comm;                                                                                \
        KEEP                                                                                       \
    }                                                                                              \
    int PMPI_##Name##_init PARAMS                                                                  \
    {                                                                                              \
        name##_args_t a = {__VA_ARGS__};                                                           \
        return pcoll_init(comm, info, request, name##_start, name##_keep, &a, sizeof a,            \
                          "MPI_" #Name "_init");                                                   \
    }                                                                                              \
    WEFT_MPI_ALIAS(Name##_init)

static int barrier_start(const void *p, MPI_Comm comm, MPI_Request *request)
{
    (void)p;
    return PMPI_Ibarrier(comm, request);
}
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return pcoll_init(comm, info, request, barrier_start, NULL, NULL, 0, "MPI_Barrier_init");
}
WEFT_MPI_ALIAS(Barrier_init)

/* clang-format off: one block per call, its fields on one line. */
// clang-format off
PCOLL_INIT(Bcast, bcast,
           (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
           MPI_Request *request),
           void *buffer; int count; MPI_Datatype datatype; int root;,
           PMPI_Ibcast(a->buffer, a->count, a->datatype, a->root, comm, request),
           keep_type(pc, a->datatype);,
           buffer, count, datatype, root)

PCOLL_INIT(Gather, gather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype; int root;,
           PMPI_Igather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, a->root, comm, request),
           KEEP_TYPES(sendtype, recvtype);,
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)

PCOLL_INIT(Gatherv, gatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
           recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; const int
           *recvcounts; const int *displs; MPI_Datatype recvtype; int root;,
           PMPI_Igatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
           a->displs, a->recvtype, a->root, comm, request),
           KEEP_TYPES(sendtype, recvtype); if (is_root(comm, a->root)) KEEP_V(recvcounts, displs,
           PEERS);,
           sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root)

PCOLL_INIT(Scatter, scatter,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype; int root;,
           PMPI_Iscatter(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, a->root, comm, request),
           KEEP_TYPES(sendtype, recvtype);,
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)

PCOLL_INIT(Scatterv, scatterv,
           (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info
           info, MPI_Request *request),
           const void *sendbuf; const int *sendcounts; const int *displs; MPI_Datatype sendtype;
           void *recvbuf; int recvcount; MPI_Datatype recvtype; int root;,
           PMPI_Iscatterv(a->sendbuf, a->sendcounts, a->displs, a->sendtype, a->recvbuf,
           a->recvcount, a->recvtype, a->root, comm, request),
           KEEP_TYPES(sendtype, recvtype); if (is_root(comm, a->root)) KEEP_V(sendcounts, displs,
           PEERS);,
           sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root)

PCOLL_INIT(Allgather, allgather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype;,
           PMPI_Iallgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, comm, request),
           KEEP_TYPES(sendtype, recvtype);,
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

PCOLL_INIT(Allgatherv, allgatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
           recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
           MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; const int
           *recvcounts; const int *displs; MPI_Datatype recvtype;,
           PMPI_Iallgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
           a->displs, a->recvtype, comm, request),
           KEEP_TYPES(sendtype, recvtype); KEEP_V(recvcounts, displs, PEERS);,
           sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)

PCOLL_INIT(Alltoall, alltoall,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype;,
           PMPI_Ialltoall(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, comm, request),
           KEEP_TYPES(sendtype, recvtype);,
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

PCOLL_INIT(Alltoallv, alltoallv,
           (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; const int *sendcounts; const int *sdispls; MPI_Datatype sendtype;
           void *recvbuf; const int *recvcounts; const int *rdispls; MPI_Datatype recvtype;,
           PMPI_Ialltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
           a->recvcounts, a->rdispls, a->recvtype, comm, request),
           KEEP_TYPES(sendtype, recvtype); if (a->sendbuf != MPI_IN_PLACE) KEEP_V(sendcounts,
           sdispls, PEERS); KEEP_V(recvcounts, rdispls, PEERS);,
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
           if (a->sendbuf != MPI_IN_PLACE) KEEP_W(sendcounts, sdispls, sendtypes, PEERS);
           KEEP_W(recvcounts, rdispls, recvtypes, PEERS);,
           sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)

PCOLL_INIT(Reduce, reduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int
           root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int count; MPI_Datatype datatype; MPI_Op op; int
           root;,
           PMPI_Ireduce(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, a->root, comm,
           request),
           keep_type(pc, a->datatype); keep_op(pc, a->op);,
           sendbuf, recvbuf, count, datatype, op, root)

PCOLL_INIT(Allreduce, allreduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int count; MPI_Datatype datatype; MPI_Op op;,
           PMPI_Iallreduce(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request),
           keep_type(pc, a->datatype); keep_op(pc, a->op);,
           sendbuf, recvbuf, count, datatype, op)

PCOLL_INIT(Reduce_scatter_block, reduce_scatter_block,
           (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int recvcount; MPI_Datatype datatype; MPI_Op op;,
           PMPI_Ireduce_scatter_block(a->sendbuf, a->recvbuf, a->recvcount, a->datatype, a->op,
           comm, request),
           keep_type(pc, a->datatype); keep_op(pc, a->op);,
           sendbuf, recvbuf, recvcount, datatype, op)

PCOLL_INIT(Reduce_scatter, reduce_scatter,
           (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; const int *recvcounts; MPI_Datatype datatype; MPI_Op
           op;,
           PMPI_Ireduce_scatter(a->sendbuf, a->recvbuf, a->recvcounts, a->datatype, a->op, comm,
           request),
           keep_type(pc, a->datatype); keep_op(pc, a->op); KEEP_ARRAY(recvcounts, comm->size);,
           sendbuf, recvbuf, recvcounts, datatype, op)

PCOLL_INIT(Scan, scan,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int count; MPI_Datatype datatype; MPI_Op op;,
           PMPI_Iscan(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request),
           keep_type(pc, a->datatype); keep_op(pc, a->op);,
           sendbuf, recvbuf, count, datatype, op)

PCOLL_INIT(Exscan, exscan,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; void *recvbuf; int count; MPI_Datatype datatype; MPI_Op op;,
           PMPI_Iexscan(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op, comm, request),
           keep_type(pc, a->datatype); keep_op(pc, a->op);,
           sendbuf, recvbuf, count, datatype, op)

PCOLL_INIT(Neighbor_allgather, neighbor_allgather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype;,
           PMPI_Ineighbor_allgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, comm, request),
           KEEP_TYPES(sendtype, recvtype);,
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

PCOLL_INIT(Neighbor_allgatherv, neighbor_allgatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
           recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
           MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; const int
           *recvcounts; const int *displs; MPI_Datatype recvtype;,
           PMPI_Ineighbor_allgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
           a->recvcounts, a->displs, a->recvtype, comm, request),
           KEEP_TYPES(sendtype, recvtype); KEEP_V(recvcounts, displs, indegree(comm));,
           sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)

PCOLL_INIT(Neighbor_alltoall, neighbor_alltoall,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; int sendcount; MPI_Datatype sendtype; void *recvbuf; int recvcount;
           MPI_Datatype recvtype;,
           PMPI_Ineighbor_alltoall(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
           a->recvtype, comm, request),
           KEEP_TYPES(sendtype, recvtype);,
           sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

PCOLL_INIT(Neighbor_alltoallv, neighbor_alltoallv,
           (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request),
           const void *sendbuf; const int *sendcounts; const int *sdispls; MPI_Datatype sendtype;
           void *recvbuf; const int *recvcounts; const int *rdispls; MPI_Datatype recvtype;,
           PMPI_Ineighbor_alltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
           a->recvcounts, a->rdispls, a->recvtype, comm, request),
           KEEP_TYPES(sendtype, recvtype); KEEP_V(sendcounts, sdispls, outdegree(comm));
           KEEP_V(recvcounts, rdispls, indegree(comm));,
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
           KEEP_W(sendcounts, sdispls, sendtypes, outdegree(comm)); KEEP_W(recvcounts, rdispls,
           recvtypes, indegree(comm));, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
           recvcounts, rdispls, recvtypes) // clang-format on
