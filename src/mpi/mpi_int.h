/* The MPI layer's private objects and the interfaces between its parts.
 *
 * MPI is a process-wide interface (MPI_COMM_WORLD needs no handle to reach it), so
 * this layer keeps one process-wide state, `weft__mpi`, holding the engine
 * context it runs on; the engine below keeps none. Everything else hangs off
 * handles.
 *
 * Parts (one file each, prefix mpi_):
 *   mpi_env.c       init/finalize, thread level, Wtime, version, Alloc_mem
 *   mpi_err.c       error classes/codes/strings, error handlers, weft__mpi_err()
 *   mpi_p2p.c       sends, receives, probes (matched too), Sendrecv
 *   mpi_req.c       requests: wait/test families, persistent, generalized, cancel
 *   mpi_type*.c     datatypes: predefined types and the builder (mpi_type.c),
 *                   constructors (_create, _darray), queries (_query), pack (_pack)
 *   mpi_op.c        reduction operations on predefined and user types
 *   mpi_coll*.c     collectives as schedules (blocking = start + wait)
 *   mpi_comm.c      communicators (context ids), intercommunicators
 *   mpi_group.c     groups
 *   mpi_attr.c      keyvals and attributes on comms, types, windows
 *   mpi_info.c      MPI_Info
 *   mpi_topo.c      cartesian, graph, dist graph topologies
 *   mpi_win*.c      one-sided communication (mpi_win_int.h)
 *   mpi_dynproc.c   dynamic processes: ports, accept/connect, join, names, spawn
 *   mpi_handle.c    f2c/c2f tables
 *
 * Naming: the library implements PMPI_X; WEFT_MPI_ALIAS(X) next to it makes MPI_X a
 * weak alias, so a profiler can interpose MPI_X and call PMPI_X. Inside the
 * library, calls go to PMPI_X so that a profiler sees only the user's calls.
 */
#ifndef WEFT_MPI_INT_H
#define WEFT_MPI_INT_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/lock.h"
#include "weft/weft.h"
#include "weft/weft_coll.h"

#define WEFT_MPI_STR_(x) #x
#define WEFT_MPI_STR(x)  WEFT_MPI_STR_(x)
/* Make MPI_name a weak alias of PMPI_name (defined in the same file), exported:
 * clang gives a "#pragma weak" alias hidden visibility under
 * -fvisibility=hidden, whatever the declaration in mpi.h says, so the alias
 * is declared with its attributes. */
#define WEFT_MPI_ALIAS(name)                                                                       \
    extern __typeof__(PMPI_##name) MPI_##name                                                      \
        __attribute__((weak, alias(WEFT_MPI_STR(PMPI_##name)), visibility("default")));

/* Magic numbers in every object: a handle that is not one of ours (garbage, freed,
 * wrong kind) is caught and reported with the right error class. */
enum {
    WEFT_MPI_MAGIC_COMM = 0x436f6d6d,
    WEFT_MPI_MAGIC_GROUP = 0x47727570,
    WEFT_MPI_MAGIC_TYPE = 0x54797065,
    WEFT_MPI_MAGIC_REQ = 0x52657175,
    WEFT_MPI_MAGIC_OP = 0x4f705f5f,
    WEFT_MPI_MAGIC_ERRH = 0x45727248,
    WEFT_MPI_MAGIC_INFO = 0x496e666f,
    WEFT_MPI_MAGIC_WIN = 0x57696e5f,
    WEFT_MPI_MAGIC_FILE = 0x46696c65,
    WEFT_MPI_MAGIC_MSG = 0x4d736721,
    WEFT_MPI_MAGIC_SESSION = 0x53657373,
    WEFT_MPI_MAGIC_DEAD = 0x44656164, /* set when an object is freed */
};

/* ---------------------------------------------------------------- attributes */

typedef struct weft_mpi_attr {
    struct weft_mpi_attr *next;
    int keyval;
    void *value;
} weft_mpi_attr_t;

/* ---------------------------------------------------------------- groups */

struct weft_mpi_group {
    uint32_t magic;
    atomic_int refs; /* predefined groups are never freed */
    bool predefined;
    int size;
    int rank;   /* this process's rank in the group, or MPI_UNDEFINED */
    int *ranks; /* group rank -> world rank */
};

/* ---------------------------------------------------------------- errors */

typedef enum weft_mpi_errh_kind {
    WEFT_MPI_ERRH_FATAL,
    WEFT_MPI_ERRH_RETURN,
    WEFT_MPI_ERRH_COMM, /* user function for communicators */
    WEFT_MPI_ERRH_WIN,
    WEFT_MPI_ERRH_FILE,
    WEFT_MPI_ERRH_SESSION,
    /* MPI_ERRORS_ABORT: abort the processes of the communicator, which here
     * is the job, as MPI_Abort does. */
    WEFT_MPI_ERRH_ABORT,
} weft_mpi_errh_kind_t;

struct weft_mpi_errhandler {
    uint32_t magic;
    atomic_int refs;
    bool predefined;
    weft_mpi_errh_kind_t kind;
    union {
        MPI_Comm_errhandler_function *comm_fn;
        MPI_Win_errhandler_function *win_fn;
        MPI_File_errhandler_function *file_fn;
        MPI_Session_errhandler_function *session_fn;
    };
};

/* ---------------------------------------------------------------- topologies */

typedef struct weft_mpi_topo {
    int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int ndims;
    int *dims, *periods, *coords;       /* cartesian */
    int nnodes, nedges, *index, *edges; /* graph */
    int indegree, outdegree, weighted;  /* dist graph */
    int *sources, *sourceweights, *destinations, *destweights;
} weft_mpi_topo_t;

/* ---------------------------------------------------------------- communicators */

/* MPI_Comm_free only marks a communicator for deallocation (MPI 3.1 §6.4.3):
 * what still uses it (a request, persistent or not, a matched message) holds a
 * reference, and the object and its context ids stay until the last one goes,
 * so no communicator made meanwhile takes the ids while traffic on them may
 * still match. */
struct weft_mpi_comm {
    uint32_t magic;
    bool predefined;
    bool freed; /* MPI_Comm_free'd: the handle is dead, the object may live on */
    bool inter;
    /* Engine communicator ids: point-to-point traffic and the collectives'
     * traffic never match each other (MPI requires both on one communicator). */
    uint32_t id_p2p;
    uint32_t id_coll;
    int rank, size;         /* in the local group */
    MPI_Group group;        /* local group (comm rank -> world rank) */
    MPI_Group remote_group; /* intercommunicators: the remote group */
    /* Peer (a world rank, or past the world a process of another job that
     * this one linked to: MPI dynamic processes) -> rank in the group that
     * sends to us, or -1; w2r_len entries. */
    int *world_to_rank;
    int w2r_len;
    /* Intercommunicators between jobs: which group comes first in the
     * order both sides list their union in (1 the local, -1 the remote);
     * 0 within a job, where the group whose leader has the lower world
     * rank comes first. */
    int8_t inter_first;
    MPI_Comm local_comm; /* intercommunicators: an intracommunicator of the local group */
    MPI_Errhandler errhandler;
    weft_mpi_attr_t *attrs;
    MPI_Info info;
    weft_mpi_topo_t *topo;
    /* Partitioned channels' init counters (mpi_part.c), under weft__mpi.lock:
     * a communicator's own, so a new one on a reused id starts from 0. */
    struct weft__mpi_part_serial *part_serials;
    /* Sequences of the blocking and of the non-blocking collectives started
     * on this communicator (weft__coll_next_seq): each call gets its own tag
     * space, so a non-blocking collective never matches another's traffic. */
    atomic_uint coll_seq, coll_seq_nb;
    /* Sequence of this layer's own exchanges (communicator creation) on the
     * communicator's third engine id. */
    atomic_uint aux_seq;
    char name[MPI_MAX_OBJECT_NAME];
    /* The handle's reference (until MPI_Comm_free) and one per request or
     * message using it. Every request on a communicator that is not
     * predefined changes it, so it has a cache line of its own: threads
     * sending on one communicator do not also bounce the line of what every
     * send reads (magic, ids, group). */
    _Alignas(64) atomic_int refs;
};

/* The rank, in comm, of a world rank that sent to us (-1 when not a member). */
static inline int weft__mpi_comm_rank_of(MPI_Comm comm, int world_rank)
{
    return (unsigned)world_rank < (unsigned)comm->w2r_len ? comm->world_to_rank[world_rank] : -1;
}
/* The world rank of rank r of the group we send to (remote group for inter). */
static inline int weft__mpi_comm_peer(MPI_Comm comm, int r)
{
    return (comm->inter ? comm->remote_group : comm->group)->ranks[r];
}
static inline int weft__mpi_comm_peer_size(MPI_Comm comm)
{
    return comm->inter ? comm->remote_group->size : comm->size;
}

/* ---------------------------------------------------------------- datatypes */

/* A datatype is flattened, at construction, into the byte segments of one
 * element (offset from the buffer address, length), in type-map order, with
 * adjacent segments merged. count elements repeat the segments every extent
 * bytes. This one representation serves sends (iovec), packing and unpacking,
 * and Get_elements (through the basic-element runs). */
typedef struct weft_mpi_seg {
    MPI_Aint off;
    size_t len;
} weft_mpi_seg_t;

/* The basic elements of one element of the type, in order: n elements of
 * basic type `type` (a predefined, named type). Get_elements counts them. */
typedef struct weft_mpi_run {
    MPI_Datatype type;
    size_t n;
} weft_mpi_run_t;

/* Kinds of predefined types, for reductions and external32. */
typedef enum weft_mpi_basic {
    WEFT_MPI_B_NONE = 0, /* derived, or no arithmetic (MPI_BYTE, MPI_PACKED) */
    WEFT_MPI_B_INT,      /* signed integer of `size` bytes */
    WEFT_MPI_B_UINT,     /* unsigned integer */
    WEFT_MPI_B_FLOAT,    /* float, double, long double by size */
    WEFT_MPI_B_COMPLEX,  /* pairs of floats */
    WEFT_MPI_B_BOOL,     /* C _Bool, C++ bool, Fortran logical */
    WEFT_MPI_B_BYTE,     /* MPI_BYTE, MPI_CHAR family for bitwise ops... */
    WEFT_MPI_B_PAIR,     /* value/index pairs for MINLOC/MAXLOC */
} weft_mpi_basic_t;

struct weft_mpi_datatype {
    uint32_t magic;
    atomic_int refs;
    bool predefined;
    bool committed;
    weft_mpi_basic_t basic; /* for predefined types */
    size_t size;            /* bytes of data in one element */
    MPI_Aint lb, ub;        /* extent = ub - lb */
    /* lb / ub set explicitly (resized, subarray, darray) somewhere inside:
     * such bounds stick through later constructors (MPI 3.1 §4.1.7). */
    bool xlb, xub;
    MPI_Aint true_lb, true_ub;
    bool contig; /* count elements are one byte range from true_lb */
    int nsegs;
    weft_mpi_seg_t *segs; /* nsegs segments of one element */
    int nruns;
    weft_mpi_run_t *runs;     /* basic elements of one element */
    MPI_Datatype reduce_type; /* the one predefined type it is made of, else NULL */
    /* What built it (Type_get_envelope / get_contents). */
    int combiner;
    int nints, naddrs, ntypes;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
    weft_mpi_attr_t *attrs;
    char name[MPI_MAX_OBJECT_NAME];
};

static inline MPI_Aint weft__mpi_type_extent(MPI_Datatype t)
{
    return t->ub - t->lb;
}

/* Describe count elements at buf as iovecs. Fills at most max entries and
 * returns the number needed (callers pack when it exceeds what they can pass). */
int weft__mpi_type_iov(MPI_Datatype t, const void *buf, size_t count, struct iovec *iov, int max);
/* Copy bytes [offset, offset+len) of the packed stream of count elements at buf
 * into out (pack) or from in (unpack). */
void weft__mpi_type_pack(MPI_Datatype t, const void *buf, size_t count, size_t offset, size_t len,
                         void *out);
void weft__mpi_type_unpack(MPI_Datatype t, void *buf, size_t count, size_t offset, size_t len,
                           const void *in);
/* external32 (MPI 3.1 §13.5.2): the bytes of one element of t in it (MPI_LONG
 * 4, MPI_WCHAR 2, no padding in pairs); count elements of t between their
 * native packed stream at native (used as scratch: changed on the way) and
 * their external stream at ext; and the type a file sees for t in a view in
 * external32 (a new reference, committed; t itself, retained, when no size
 * in it changes). */
size_t weft__mpi_type_ext_size(MPI_Datatype t);
void weft__mpi_type_external_conv(MPI_Datatype t, size_t count, void *native, void *ext,
                                  bool to_external);
int weft__mpi_type_ext_file(MPI_Datatype t, MPI_Datatype *out);
/* Basic elements in the first `bytes` bytes of a stream of elements of t. */
MPI_Count weft__mpi_type_elements(MPI_Datatype t, MPI_Count bytes);
/* Set up the predefined types; called once by MPI_Init. */
void weft__mpi_types_init(void);
/* A reference on a derived type for whatever still uses it after the call that
 * named it returned (a pending operation, another type): Type_free leaves the
 * type alive until the last release. Both do nothing on predefined types. */
void weft__mpi_type_retain(MPI_Datatype t);
void weft__mpi_type_release(MPI_Datatype t);

/* ---------------------------------------------------------------- operations */

typedef void weft_mpi_op_fn(const void *in, void *inout, size_t n, MPI_Datatype basic);

struct weft_mpi_op {
    uint32_t magic;
    atomic_int refs;
    bool predefined;
    bool commute;
    weft_mpi_op_fn *fn; /* predefined: applies to n elements of a basic type */
    MPI_User_function *user_fn;
};

/* inout[i] = in[i] op inout[i] for count elements of type t, any count (a
 * collective's internal totals may pass INT_MAX; a user function, which takes
 * an int, is called in pieces). MPI_SUCCESS, or MPI_ERR_OP when op is not
 * defined on t. */
int weft__mpi_op_apply(MPI_Op op, const void *in, void *inout, size_t count, MPI_Datatype t);
/* MPI_ERR_OP if the predefined op does not apply to t's basic type (MPI 3.1
 * §5.9.2), MPI_SUCCESS otherwise: the check every member of a reduction
 * makes before it starts, so that all fail alike and none waits for one
 * that failed. */
int weft__mpi_op_check_type(MPI_Op op, MPI_Datatype t);
/* References on user operations, as for types (Op_free while a non-blocking
 * collective still uses the op). Nothing on predefined ops. */
void weft__mpi_op_retain(MPI_Op op);
void weft__mpi_op_release(MPI_Op op);

/* ---------------------------------------------------------------- info */

/* A session (MPI 4.0 §11.3): a handle on the MPI instance, which the first
 * of MPI_Init and MPI_Session_init starts and the last of MPI_Finalize and
 * MPI_Session_finalize ends (mpi_env.c). */
struct weft_mpi_session {
    uint32_t magic;
    MPI_Errhandler errhandler;
    MPI_Info info; /* the hints given, and thread_level as provided */
};

struct weft_mpi_info {
    uint32_t magic;
    bool predefined;
    int n, cap;
    char **keys, **values;
};

/* ---------------------------------------------------------------- windows, files, messages */

/* Windows: struct weft_mpi_win is in mpi_win_int.h. */

/* An open file (mpi_file.c). The view maps the stream of data bytes the
 * program sees onto file offsets: the filetype's segments, tiled from disp
 * every extent bytes; pos[i] is where segment i starts in one tile's data. */
struct weft_mpi_file {
    uint32_t magic;
    int fd;
    int amode;
    bool atomic;
    bool external32; /* the view's data representation (else native) */
    MPI_Comm comm;   /* a private duplicate: the file's collectives stay apart */
    MPI_Info info;   /* the hints given, as given */
    MPI_Errhandler errhandler;
    char *name;
    /* The view. */
    MPI_Offset disp;
    MPI_Datatype etype, filetype;           /* as the file sees them (external32: its sizes) */
    MPI_Datatype user_etype, user_filetype; /* as MPI_File_set_view was given them */
    size_t esize, fsize; /* bytes of data in one etype, in one filetype, in the file */
    MPI_Aint fextent;
    bool dense;    /* the tiles make one range from disp + true_lb */
    size_t *pos;   /* filetype->nsegs + 1 prefix sums of the segment lengths */
    MPI_Offset fp; /* the individual file pointer, in etypes */
    /* The shared file pointer: 8 bytes in a side file next to the data file,
     * opened at its first use, moved under an fcntl lock. */
    char *sp_name;
    int sp_fd;
    /* Two-phase writes' buffers, kept from one call to the next (fresh
     * pages for every call would cost more than the data's copy). */
    void *tp_buf[2];
    size_t tp_len[2];
    /* A split collective begun (…_begin) and not yet ended: its status. */
    bool split;
    MPI_Status split_status;
    pthread_mutex_t lock;        /* the individual pointer and the side file's descriptor */
    pthread_mutex_t atomic_lock; /* atomic mode: one access of this process at a time */
};
/* The handler a newly opened file starts with: MPI_FILE_NULL's, retained. */
MPI_Errhandler weft__mpi_file_default_errh(void);

/* A message taken out of matching by MPI_Mprobe/Improbe, received later by
 * MPI_Mrecv/Imrecv. */
struct weft_mpi_message {
    uint32_t magic;
    MPI_Comm comm;        /* a reference, released once the message is received */
    weft_message_t *wmsg; /* the engine's matched message */
    MPI_Status status;
};

/* ---------------------------------------------------------------- requests */

typedef enum weft_mpi_req_kind {
    WEFT_MPI_REQ_SEND,
    WEFT_MPI_REQ_RECV,
    WEFT_MPI_REQ_DONE,  /* complete at creation (MPI_PROC_NULL) */
    WEFT_MPI_REQ_BSEND, /* MPI_Ibsend, MPI_Bsend_init: complete once copied, cancellable */
    WEFT_MPI_REQ_GREQ,  /* generalized request */
    WEFT_MPI_REQ_COLL,  /* non-blocking collective schedule */
    WEFT_MPI_REQ_PAIR,  /* MPI_Isendrecv(_replace): a receive and a send */
    WEFT_MPI_REQ_PCOLL, /* persistent collective (MPI_Bcast_init...) */
    WEFT_MPI_REQ_PART,  /* partitioned (MPI_Psend_init, MPI_Precv_init) */
} weft_mpi_req_kind_t;

typedef struct weft_sched weft__mpi_sched_t; /* weft_coll.h */

/* Cache-line aligned (weft__mpi_req_alloc): what allocating, waiting for and
 * freeing a point-to-point request touch lies in its first two lines, so a
 * program with thousands of requests in flight reads two lines of each. */
struct weft_mpi_request {
    _Alignas(64) uint32_t magic;
    weft_mpi_req_kind_t kind;
    bool persistent; /* made by *_init; stays until Request_free */
    bool active;     /* persistent: started and not yet completed */
    bool complete;   /* the status below is final */
    bool freed;      /* Request_free'd while active: free on completion */
    MPI_Comm comm;   /* for error handlers and source translation */
    weft_request_t *wreq;
    MPI_Status status;
    struct weft_mpi_request *next_free;
    /* Second line: what alloc resets and free looks at, and the arguments a
     * point-to-point request records when it needs them again (persistent,
     * non-contiguous or synchronous). */
    weft__mpi_sched_t *sched; /* collectives */
    /* Non-contiguous data that went through a staging buffer. */
    void *staging;
    MPI_Datatype user_type;
    void *user_buf;
    /* How to start (again, for persistent requests). */
    const void *buf;
    MPI_Datatype type;
    int count;
    int mode; /* WEFT_MPI_MODE_* */
    int peer, tag;
    /* Third line on: what some kinds only use. */
    int user_count;
    /* Generalized requests. */
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
    atomic_int greq_done;
    /* MPI_Ibsend: the copy's entry while it lives (under the buffered sends'
     * lock), and whether a cancel waits for its send's outcome. */
    struct weft__mpi_bsend *bsend;
    bool bsend_cancel;
    /* MPI_Isendrecv(_replace): its receive and its send, until both completed,
     * and the packed copy that _replace sends from. */
    struct weft_mpi_request *part[2];
    void *part_copy;
    /* Persistent collectives (mpi_coll_persist.c). */
    struct weft__mpi_pcoll *pcoll;
    /* Partitioned communication (mpi_part.c). */
    struct weft__mpi_part *prt;
};

_Static_assert(offsetof(struct weft_mpi_request, tag) + sizeof(int) <= 128,
               "what every point-to-point request touches is in its first two lines");

enum {
    WEFT_MPI_MODE_STD,
    WEFT_MPI_MODE_SYNC,
    WEFT_MPI_MODE_BUF,
    WEFT_MPI_MODE_READY,
    WEFT_MPI_MODE_RECV
};

/* A new request on comm, which it holds a reference to until it goes back
 * (weft__mpi_req_recycle). */
MPI_Request weft__mpi_req_alloc(weft_mpi_req_kind_t kind, MPI_Comm comm);
/* Free what an MPI_Isendrecv request r holds: its parts, which are complete
 * (or were never started), and its packed copy. */
void weft__mpi_req_free_pair(MPI_Request r);
/* Persistent collectives (mpi_coll_persist.c): start an inactive one, see
 * whether its run completed, free what it holds. */
int weft__pcoll_start(MPI_Request r);
void weft__pcoll_poll(MPI_Request r);
void weft__pcoll_free(MPI_Request r);
/* Partitioned requests (mpi_part.c): the same three, and the teardown of
 * their channel serials at the instance's end. */
int weft__mpi_part_start(MPI_Request r);
void weft__mpi_part_poll(MPI_Request r);
void weft__mpi_part_free(MPI_Request r);
void weft__mpi_part_fini(void);
void weft__mpi_part_comm_fini(MPI_Comm c);
/* Record how to start r (again): what send_start, recv_start and MPI_Start read. */
static inline void weft__mpi_req_record(MPI_Request r, const void *buf, int count,
                                        MPI_Datatype type, int peer, int tag, int mode)
{
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->mode = mode;
}
void weft__mpi_req_free(MPI_Request r);
/* Give back a request that holds nothing any more (no schedule, staging
 * buffer, datatype or buffered send) but its communicator, which it releases:
 * what weft__mpi_req_free ends with. */
void weft__mpi_req_recycle(MPI_Request r);
/* Advance r once; on completion set r->complete and r->status. Never blocks. */
int weft__mpi_req_poll(MPI_Request r);
/* Wait for r (progressing everything meanwhile) without freeing it. */
int weft__mpi_req_wait_complete(MPI_Request r);
/* Buffered send requests (mpi_p2p.c): MPI_Cancel asks the copy's send to be
 * canceled (the request then completes once the answer is in); poll collects
 * that answer; forget unlinks a request being freed from its copy. */
int weft__mpi_bsend_start(const void *buf, int count, MPI_Datatype t, int dest, int tag,
                          MPI_Comm comm, MPI_Request user, const char *fn);
void weft__mpi_bsend_cancel(MPI_Request r);
void weft__mpi_bsend_poll(MPI_Request r);
void weft__mpi_bsend_forget(MPI_Request r);

/* ---------------------------------------------------------------- collectives */

/* A collective is a schedule of the engine's (weft_coll.h, front
 * weft__mpi_coll_front): rounds of sends and receives, then local steps.
 * The engine advances started schedules in every progress pass, the
 * progress thread's included, so a non-blocking collective moves on while
 * the application waits on something else, or computes. */
extern const weft_sched_front_t weft__mpi_coll_front; /* mpi_coll_sched.c */

/* ---------------------------------------------------------------- process state */

typedef struct weft__mpi_state {
    weft_ctx_t *ctx;
    /* The instance (mpi_env.c): 0 before it starts, 1 up, 2 ended. */
    atomic_int initialized;
    atomic_int world; /* the world model: 0 before MPI_Init, 1 after, 2 after MPI_Finalize */
    int thread_level;
    unsigned long main_thread;
    int world_rank, world_size;
    bool world_known; /* world_rank is set: the instance started once */
    /* Guards the layer's shared tables (free lists, keyvals, context ids,
     * active schedules); a mutex at MPI_THREAD_MULTIPLE or with a progress
     * thread, else none. Never held while waiting. */
    weft_lock_t lock;
    /* Context ids in use (bit set = taken), agreed on by the members of a new
     * communicator with an all-reduce, like MPICH does. */
    uint64_t ctx_mask[64];
    /* MPI_Comm_idup agreements in flight: one may take an id while a blocking
     * agreement of this process waits, so those then check their pick. Their
     * priorities (parent id, sequence number: the same at every member) say
     * which one may offer this process's free ids (mpi_comm.c). */
    atomic_int idups;
    uint64_t *idup_prio;
    int nidup_prio, cap_idup_prio;
    /* Buffered sends. */
    void *bsend_buf;
    int bsend_size;
} weft__mpi_state_t;

extern weft__mpi_state_t weft__mpi;

/* Start the instance, or join it if up (MPI_Init, MPI_Session_init); end it
 * with its last user. Both return an MPI error class, not reported. */
int weft__mpi_instance_up(int required, const char *fn);
int weft__mpi_instance_down(void);
/* WEFT_MPI_THREAD_LEVEL: the level MPI_Init asks for. */
int weft__mpi_default_level(void);

/* Is any non-blocking collective in flight? A hint read without a lock, so
 * waits can skip the walk. */
static inline bool weft__mpi_scheds_active(void)
{
    return weft_sched_active(weft__mpi.ctx);
}

/* Advance the engine and every active collective once (the engine runs the
 * schedules in its pass). */
void weft__mpi_progress(void);

/* ---------------------------------------------------------------- errors */

/* Report error class/code err on comm (NULL: MPI_COMM_WORLD, or MPI_COMM_SELF
 * before init) through its error handler; returns err for `return
 * weft__mpi_err(...)`. fn names the MPI function for the fatal message. */
int weft__mpi_err(MPI_Comm comm, int err, const char *fn);
/* Print "[weft MPI rank R] msg" on stderr, or "[weft MPI] msg" when this
 * process does not know its rank yet (MPI_Init failed or was never called). */
void weft__mpi_say(const char *msg);
/* While set (per thread), weft__mpi_err reports under this name instead of
 * fn: a call that does its work through another MPI call (a persistent
 * collective's init and start, through the non-blocking collective). */
extern _Thread_local const char *weft__mpi_err_as;
/* The same with handler e where no communicator exists yet (the calls that
 * make one from groups; MPI_ERRHANDLER_NULL: as weft__mpi_err(NULL, ...)). */
int weft__mpi_err_handler(MPI_Errhandler e, int err, const char *fn);
/* The same on a session (an invalid one: on the world, or self before init). */
int weft__mpi_err_session(MPI_Session session, int err, const char *fn);
int weft__mpi_err_win(MPI_Win win, int err, const char *fn);
int weft__mpi_err_file(MPI_File file, int err, const char *fn);
/* The MPI error class for a weft status. */
int weft__mpi_err_from_weft(int status);
/* weft__mpi_err_from_weft maps WEFT_EMEMBER (a collective's receive that got
 * another member's failure poison, mpi_coll_int.h) to this error code of
 * class MPI_ERR_OTHER. Codes of weft's own follow MPI_ERR_LASTCODE; the
 * application's (MPI_Add_error_code) follow them. */
#define WEFT_MPI_ERR_COLL_MEMBER (MPI_ERR_LASTCODE + 1)
#define WEFT_MPI_N_OWN_CODES     1

/* Argument checks shared by the parts. Each returns MPI_SUCCESS or an error class. */
int weft__mpi_check_comm(MPI_Comm comm);
int weft__mpi_check_type(MPI_Datatype t); /* committed, valid */
int weft__mpi_check_count(int count);
int weft__mpi_check_buf(const void *buf, int count, MPI_Datatype t);
int weft__mpi_check_init(void); /* MPI_ERR_OTHER before Init / after Finalize */
/* MPI_T's view of the engine (mpi_t.c): the context after MPI_Init, NULL when
 * MPI_Finalize begins (the counters are kept as they were then). */
void weft__mpi_t_engine(weft_ctx_t *ctx);

/* Convert an engine status into an MPI status of comm. */
void weft__mpi_status_set(MPI_Status *st, MPI_Comm comm, const weft_status_t *ws, int err);
static inline void weft__mpi_status_empty(MPI_Status *st)
{
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->weft_cancelled = 0;
    st->weft_count = 0;
}
/* The status of an operation with MPI_PROC_NULL (§3.11). MPI_ERROR is left as
 * it is: calls that return one status never write it (§3.2.5), and a
 * request's own status starts out empty. */
static inline void weft__mpi_status_proc_null(MPI_Status *st)
{
    st->MPI_SOURCE = MPI_PROC_NULL;
    st->MPI_TAG = MPI_ANY_TAG;
    st->weft_cancelled = 0;
    st->weft_count = 0;
}

/* ---------------------------------------------------------------- communicators */

/* Make a communicator over group (ranks in world), with fresh context ids agreed
 * on by the members of parent: collective over parent. *out is MPI_COMM_NULL on
 * members of parent outside group. */
int weft__mpi_comm_create_from(MPI_Comm parent, MPI_Group group, MPI_Comm *out);
/* MPI_Comm_create_from_group's work (MPI 4.0 §7.4.2): MPI_Comm_create_group
 * over the world, collective over group's members, the agreement named by
 * stringtag's hash (weft__mpi_stringtag_hash) in a tag space of its own.
 * Returns an MPI error class, not reported. */
int weft__mpi_comm_from_group(MPI_Group group, const char *stringtag, MPI_Comm *newcomm);
uint32_t weft__mpi_stringtag_hash(const char *stringtag);
/* MPI_Comm_split's work, reporting errors as fn. */
int weft__mpi_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *fn);
/* Lower-level pieces for intercommunicators: agree on a context id k among
 * `members` (world ranks, me = my index) over comm `over` with tag, also
 * gathering extra_len bytes from each member; then build the object. */
int weft__mpi_comm_agree(MPI_Comm over, uint64_t tag, const int *members, int n, int me,
                         const void *extra, size_t extra_len, void *extra_all, int *k_out);
uint64_t weft__mpi_comm_aux_tag(MPI_Comm comm); /* next tag of comm's own exchanges */
MPI_Comm weft__mpi_comm_new(MPI_Group group, MPI_Group remote, int k);
/* Context ids: k owns the engine communicator ids 4k (point-to-point), 4k+1
 * (collectives) and 4k+2 (id agreements); WEFT_MPI_CTX_BITS of them, a bit
 * each in a used-id bitmap (ctx_mask). A communicator without an id yet
 * (MPI_Comm_idup in flight) holds WEFT_MPI_CTX_BITS. */
#define WEFT_MPI_CTX_BITS  (64 * 64)
#define WEFT_MPI_ID_P2P(k) (4u * (uint32_t)(k))
/* The error of a communicator creation that finds no id free at every member
 * (WEFT_MPI_CTX_BITS communicators live at once, MPI_COMM_WORLD and
 * MPI_COMM_SELF among them): MPI_ERR_OTHER, said once per process on stderr
 * with the limit, as the class alone cannot say it. */
int weft__mpi_ctx_exhausted(void);
/* The lowest id free in a used-id bitmap of WEFT_MPI_CTX_BITS bits, or -1. */
int weft__mpi_ctx_lowest_free(const uint64_t *used);
/* What a duplicate c of comm inherits (§6.4.2): error handler, attributes
 * (through their copy callbacks), topology, info hints (info's, if given). */
int weft__mpi_comm_dup_inherit(MPI_Comm comm, MPI_Info info, MPI_Comm c);
void weft__mpi_comm_inherit_errh(MPI_Comm c, MPI_Comm parent);
void weft__mpi_ctx_give(int k);
/* References on a communicator (see struct weft_mpi_comm); nothing on
 * predefined ones, so the MPI_COMM_WORLD traffic does no atomic operation.
 * Thread-safe. The last release frees the object and gives its ids back. */
static inline void weft__mpi_comm_retain(MPI_Comm comm)
{
    if (!comm->predefined)
        atomic_fetch_add_explicit(&comm->refs, 1, memory_order_relaxed);
}
void weft__mpi_comm_destroy(MPI_Comm comm); /* what the last release runs */
static inline void weft__mpi_comm_release(MPI_Comm comm)
{
    if (comm && !comm->predefined &&
        atomic_fetch_sub_explicit(&comm->refs, 1, memory_order_acq_rel) == 1)
        weft__mpi_comm_destroy(comm);
}
/* Take context ids k and k2 (k2 < 0: k alone) on this process, both or neither:
 * false when another thread of it holds either. */
bool weft__mpi_ctx_try_take(int k, int k2);
/* Whether this process may take context ids while one of its agreements
 * waits (other threads, MPI_Comm_idup agreements in flight): then every
 * member of that agreement must confirm the id it picked. */
bool weft__mpi_ids_contended(void);
/* The tag of one phase (0 or 1) of one round of an id agreement made under
 * `tag`: above any tag of the caller, so that retries never mix. */
uint64_t weft__mpi_round_tag(uint64_t tag, int round, int phase);
int weft__mpi_comms_init(void);
void weft__mpi_comms_fini(void);
int weft__mpi_intercomm_dup(MPI_Comm comm, MPI_Comm *out); /* mpi_intercomm.c */
/* The intercommunicator over local and remote with id k, and its local_comm
 * with id k_local (both taken already, given back on failure). */
int weft__mpi_intercomm_build(MPI_Group local, MPI_Group remote, int k, int k_local, MPI_Comm *out);
/* Dynamic processes (mpi_dynproc.c): at MPI_Init, a spawned job connects to
 * its parents; at MPI_Finalize, ports close and the jobs this process
 * spawned are waited for. */
int weft__mpi_dyn_init(void);
void weft__mpi_dyn_fini(void);
/* MPI_Comm_split and MPI_Comm_create on an intercommunicator (§6.4.2), without
 * the argument checks and error reporting, which the callers do. */
int weft__mpi_intercomm_split(MPI_Comm comm, int color, int key, MPI_Comm *out);
int weft__mpi_intercomm_create_sub(MPI_Comm comm, MPI_Group group, MPI_Comm *out);

/* ---------------------------------------------------------------- other parts */

MPI_Group weft__mpi_group_new(int size, const int *world_ranks); /* refs = 1 */
void weft__mpi_group_retain(MPI_Group g);
void weft__mpi_group_release(MPI_Group g);
void weft__mpi_errh_retain(MPI_Errhandler e);
void weft__mpi_errh_release(MPI_Errhandler e);
/* Put e in *slot (an object's handler) with a reference, releasing the old. */
void weft__mpi_errh_replace(MPI_Errhandler *slot, MPI_Errhandler e);
/* Whether an object of kind (COMM, FILE, SESSION) may take error handler e:
 * a predefined one but MPI_ERRHANDLER_NULL, or a user function for kind. */
bool weft__mpi_errh_fits(MPI_Errhandler e, weft_mpi_errh_kind_t kind);
int weft__mpi_err_lastused(void);
void weft__mpi_err_fini(void);
/* Attributes (mpi_attr.c): copy through the copy callbacks (Comm_dup), delete
 * all through the delete callbacks (Comm_free, Finalize on SELF and WORLD). */
int weft__mpi_attrs_copy(MPI_Comm from, MPI_Comm to);
int weft__mpi_attrs_delete_all(MPI_Comm comm);
int weft__mpi_type_attrs_copy(MPI_Datatype from, MPI_Datatype to);
int weft__mpi_type_attrs_delete_all(MPI_Datatype t);
/* Info (mpi_info.c). */
int weft__mpi_info_dup_internal(MPI_Info in, MPI_Info *out);
void weft__mpi_info_release(MPI_Info info);
/* Topologies (mpi_topo.c). */
void weft__mpi_topo_free(weft_mpi_topo_t *t);
int weft__mpi_topo_dup(const weft_mpi_topo_t *t, weft_mpi_topo_t **out);
/* Requests (mpi_req.c, mpi_req_alloc.c) and p2p (mpi_p2p.c). */
void weft__mpi_req_fini(void);
void weft__mpi_req_drain(void); /* finalize: complete requests freed while active */
int weft__mpi_send_start(MPI_Request r);
int weft__mpi_recv_start(MPI_Request r);

#endif
