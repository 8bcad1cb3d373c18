/* Handle conversion between C and Fortran (MPI 3.1 §17.2.4).
 *
 * A C handle is a pointer, a Fortran handle an MPI_Fint: each kind of handle
 * has a table from index to pointer and a hash from pointer to index. The
 * predefined handles hold fixed small indices, the same in every process and
 * every run (the null handle is 0 wherever nothing else is said):
 *
 *   communicators   MPI_COMM_WORLD 0, MPI_COMM_SELF 1, MPI_COMM_NULL 2
 *   groups          MPI_GROUP_NULL 0, MPI_GROUP_EMPTY 1
 *   datatypes       MPI_DATATYPE_NULL 0, then the predefined types in the order
 *                   of WEFT_MPI_PREDEFINED_TYPES (mpi.h) from 1
 *   operations      MPI_OP_NULL 0, then WEFT_MPI_PREDEFINED_OPS from 1
 *   error handlers  MPI_ERRHANDLER_NULL 0, MPI_ERRORS_ARE_FATAL 1, MPI_ERRORS_RETURN 2,
 *                   MPI_ERRORS_ABORT 3
 *   infos           MPI_INFO_NULL 0, MPI_INFO_ENV 1
 *   messages        MPI_MESSAGE_NULL 0, MPI_MESSAGE_NO_PROC 1
 *   requests, windows, files, sessions: the null handle 0
 *
 * Any other handle gets the next index the first time it is converted and
 * keeps it. f2c of an index never handed out gives the null handle. The tables
 * do not learn when an object is freed: converting a freed handle is
 * erroneous in MPI, and a new object at the same address simply takes over the
 * index. Tables are shared by all threads, under weft__mpi.lock.
 *
 * Fortran status (MPI_F_STATUS_SIZE = 6 MPI_Fint, mpi.h): MPI_F_SOURCE 0,
 * MPI_F_TAG 1, MPI_F_ERROR 2, then the private fields: 3 the cancelled flag,
 * 4 and 5 the low and high 32 bits of the received byte count.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mpi/mpi_int.h"

typedef struct handle_table {
    void *const *predefined; /* index -> handle for the fixed indices */
    int npredefined;
    void *null; /* what f2c gives for an unknown index */
    bool ready;
    void **objs; /* index -> handle */
    int n, cap;
    int *slots; /* open addressing: index + 1, 0 when empty */
    int nslots; /* a power of two, at least twice n */
} handle_table_t;

static void *const comm_pre[] = {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL};
static void *const group_pre[] = {MPI_GROUP_NULL, MPI_GROUP_EMPTY};
#define TYPE_ENTRY(mpi, obj) &weft_mpi_type_##obj,
static void *const type_pre[] = {MPI_DATATYPE_NULL, WEFT_MPI_PREDEFINED_TYPES(TYPE_ENTRY)};
#undef TYPE_ENTRY
#define OP_ENTRY(mpi, obj) &weft_mpi_op_##obj,
static void *const op_pre[] = {MPI_OP_NULL, WEFT_MPI_PREDEFINED_OPS(OP_ENTRY)};
#undef OP_ENTRY
static void *const errh_pre[] = {MPI_ERRHANDLER_NULL, MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN,
                                 MPI_ERRORS_ABORT};
static void *const info_pre[] = {MPI_INFO_NULL, MPI_INFO_ENV};
static void *const msg_pre[] = {MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC};
static void *const req_pre[] = {MPI_REQUEST_NULL};
static void *const win_pre[] = {MPI_WIN_NULL};
static void *const file_pre[] = {MPI_FILE_NULL};
static void *const session_pre[] = {MPI_SESSION_NULL};

#define TABLE(pre, null_handle)                                                                    \
    {                                                                                              \
        .predefined = pre, .npredefined = sizeof pre / sizeof pre[0], .null = null_handle          \
    }
static handle_table_t comm_table = TABLE(comm_pre, MPI_COMM_NULL);
static handle_table_t group_table = TABLE(group_pre, MPI_GROUP_NULL);
static handle_table_t type_table = TABLE(type_pre, MPI_DATATYPE_NULL);
static handle_table_t op_table = TABLE(op_pre, MPI_OP_NULL);
static handle_table_t errh_table = TABLE(errh_pre, MPI_ERRHANDLER_NULL);
static handle_table_t info_table = TABLE(info_pre, MPI_INFO_NULL);
static handle_table_t msg_table = TABLE(msg_pre, MPI_MESSAGE_NULL);
static handle_table_t req_table = TABLE(req_pre, MPI_REQUEST_NULL);
static handle_table_t win_table = TABLE(win_pre, MPI_WIN_NULL);
static handle_table_t file_table = TABLE(file_pre, MPI_FILE_NULL);
static handle_table_t session_table = TABLE(session_pre, MPI_SESSION_NULL);
#undef TABLE

static size_t hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

/* The slot of p in the hash: where it is, or the empty slot where it goes. */
static int *slot_of(handle_table_t *t, const void *p)
{
    size_t mask = (size_t)t->nslots - 1;
    for (size_t i = hash_ptr(p) & mask;; i = (i + 1) & mask) {
        int s = t->slots[i];
        if (s == 0 || t->objs[s - 1] == p)
            return &t->slots[i];
    }
}

static bool grow(handle_table_t *t)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        void **objs = realloc(t->objs, (size_t)cap * sizeof *objs);
        if (!objs)
            return false;
        t->objs = objs;
        t->cap = cap;
    }
    if (2 * (t->n + 1) > t->nslots) {
        int nslots = t->nslots ? 2 * t->nslots : 128;
        int *slots = calloc((size_t)nslots, sizeof *slots);
        if (!slots)
            return false;
        free(t->slots);
        t->slots = slots;
        t->nslots = nslots;
        for (int i = 0; i < t->n; i++)
            *slot_of(t, t->objs[i]) = i + 1;
    }
    return true;
}

/* Append p (not present) with the next index; -1 when out of memory. */
static int add(handle_table_t *t, void *p)
{
    if (!grow(t))
        return -1;
    t->objs[t->n] = p;
    *slot_of(t, p) = t->n + 1;
    return t->n++;
}

/* Register the predefined handles (all distinct), in order, at their fixed
 * indices. */
static bool ready(handle_table_t *t)
{
    if (t->ready)
        return true;
    for (int i = 0; i < t->npredefined; i++)
        if (add(t, t->predefined[i]) < 0)
            return false;
    t->ready = true;
    return true;
}

static MPI_Fint c2f(handle_table_t *t, void *p)
{
    if (!p)
        p = t->null;
    weft_lock_acquire(&weft__mpi.lock);
    int index = 0; /* the null handle when out of memory */
    if (ready(t)) {
        int s = *slot_of(t, p);
        if (s)
            index = s - 1;
        else if ((index = add(t, p)) < 0)
            index = 0;
    }
    weft_lock_release(&weft__mpi.lock);
    return (MPI_Fint)index;
}

static void *f2c(handle_table_t *t, MPI_Fint f)
{
    void *p = t->null;
    weft_lock_acquire(&weft__mpi.lock);
    if (ready(t) && f >= 0 && f < t->n)
        p = t->objs[f];
    weft_lock_release(&weft__mpi.lock);
    return p;
}

MPI_Fint PMPI_Comm_c2f(MPI_Comm comm)
{
    return c2f(&comm_table, comm);
}
WEFT_MPI_ALIAS(Comm_c2f)

MPI_Comm PMPI_Comm_f2c(MPI_Fint comm)
{
    return f2c(&comm_table, comm);
}
WEFT_MPI_ALIAS(Comm_f2c)

MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype)
{
    return c2f(&type_table, datatype);
}
WEFT_MPI_ALIAS(Type_c2f)

MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype)
{
    return f2c(&type_table, datatype);
}
WEFT_MPI_ALIAS(Type_f2c)

MPI_Fint PMPI_Group_c2f(MPI_Group group)
{
    return c2f(&group_table, group);
}
WEFT_MPI_ALIAS(Group_c2f)

MPI_Group PMPI_Group_f2c(MPI_Fint group)
{
    return f2c(&group_table, group);
}
WEFT_MPI_ALIAS(Group_f2c)

MPI_Fint PMPI_Request_c2f(MPI_Request request)
{
    return c2f(&req_table, request);
}
WEFT_MPI_ALIAS(Request_c2f)

MPI_Request PMPI_Request_f2c(MPI_Fint request)
{
    return f2c(&req_table, request);
}
WEFT_MPI_ALIAS(Request_f2c)

MPI_Fint PMPI_Op_c2f(MPI_Op op)
{
    return c2f(&op_table, op);
}
WEFT_MPI_ALIAS(Op_c2f)

MPI_Op PMPI_Op_f2c(MPI_Fint op)
{
    return f2c(&op_table, op);
}
WEFT_MPI_ALIAS(Op_f2c)

MPI_Fint PMPI_Info_c2f(MPI_Info info)
{
    return c2f(&info_table, info);
}
WEFT_MPI_ALIAS(Info_c2f)

MPI_Info PMPI_Info_f2c(MPI_Fint info)
{
    return f2c(&info_table, info);
}
WEFT_MPI_ALIAS(Info_f2c)

MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler)
{
    return c2f(&errh_table, errhandler);
}
WEFT_MPI_ALIAS(Errhandler_c2f)

MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler)
{
    return f2c(&errh_table, errhandler);
}
WEFT_MPI_ALIAS(Errhandler_f2c)

MPI_Fint PMPI_Session_c2f(MPI_Session session)
{
    return c2f(&session_table, session);
}
WEFT_MPI_ALIAS(Session_c2f)

MPI_Session PMPI_Session_f2c(MPI_Fint session)
{
    return f2c(&session_table, session);
}
WEFT_MPI_ALIAS(Session_f2c)

MPI_Fint PMPI_Win_c2f(MPI_Win win)
{
    return c2f(&win_table, win);
}
WEFT_MPI_ALIAS(Win_c2f)

MPI_Win PMPI_Win_f2c(MPI_Fint win)
{
    return f2c(&win_table, win);
}
WEFT_MPI_ALIAS(Win_f2c)

MPI_Fint PMPI_File_c2f(MPI_File file)
{
    return c2f(&file_table, file);
}
WEFT_MPI_ALIAS(File_c2f)

MPI_File PMPI_File_f2c(MPI_Fint file)
{
    return f2c(&file_table, file);
}
WEFT_MPI_ALIAS(File_f2c)

MPI_Fint PMPI_Message_c2f(MPI_Message message)
{
    return c2f(&msg_table, message);
}
WEFT_MPI_ALIAS(Message_c2f)

MPI_Message PMPI_Message_f2c(MPI_Fint message)
{
    return f2c(&msg_table, message);
}
WEFT_MPI_ALIAS(Message_f2c)

static MPI_Fint f_status_ignore[MPI_F_STATUS_SIZE], f_statuses_ignore[MPI_F_STATUS_SIZE];
MPI_Fint *MPI_F_STATUS_IGNORE = f_status_ignore;
MPI_Fint *MPI_F_STATUSES_IGNORE = f_statuses_ignore;

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (c_status == MPI_STATUS_IGNORE || !f_status || f_status == MPI_F_STATUS_IGNORE ||
        f_status == MPI_F_STATUSES_IGNORE)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_c2f");
    uint64_t count = (uint64_t)c_status->weft_count;
    f_status[MPI_F_SOURCE] = c_status->MPI_SOURCE;
    f_status[MPI_F_TAG] = c_status->MPI_TAG;
    f_status[MPI_F_ERROR] = c_status->MPI_ERROR;
    f_status[3] = c_status->weft_cancelled;
    f_status[4] = (MPI_Fint)(uint32_t)count;
    f_status[5] = (MPI_Fint)(uint32_t)(count >> 32);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Status_c2f)

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!f_status || f_status == MPI_F_STATUS_IGNORE || f_status == MPI_F_STATUSES_IGNORE ||
        c_status == MPI_STATUS_IGNORE)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_f2c");
    c_status->MPI_SOURCE = f_status[MPI_F_SOURCE];
    c_status->MPI_TAG = f_status[MPI_F_TAG];
    c_status->MPI_ERROR = f_status[MPI_F_ERROR];
    c_status->weft_cancelled = f_status[3];
    c_status->weft_count =
        (long long)((uint64_t)(uint32_t)f_status[4] | (uint64_t)(uint32_t)f_status[5] << 32);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Status_f2c)
