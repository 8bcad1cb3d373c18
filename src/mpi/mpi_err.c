/* Errors: classes, user-added classes and codes, strings, and the error handlers
 * of communicators, windows and files (MPI 3.1 §8.3-8.5).
 *
 * Every MPI function reports a failure through weft__mpi_err(), which calls the
 * handler attached to the object the call was about; MPI_ERRORS_ARE_FATAL
 * prints what failed and ends the whole job, MPI_ERRORS_RETURN lets the code
 * reach the caller, a user handler is called and the code is returned.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_win_int.h"

struct weft_mpi_errhandler weft_mpi_errors_are_fatal = {
    .magic = WEFT_MPI_MAGIC_ERRH, .predefined = true, .kind = WEFT_MPI_ERRH_FATAL};
struct weft_mpi_errhandler weft_mpi_errors_return = {
    .magic = WEFT_MPI_MAGIC_ERRH, .predefined = true, .kind = WEFT_MPI_ERRH_RETURN};
struct weft_mpi_errhandler weft_mpi_errors_abort = {
    .magic = WEFT_MPI_MAGIC_ERRH, .predefined = true, .kind = WEFT_MPI_ERRH_ABORT};
struct weft_mpi_errhandler weft_mpi_errhandler_null = {.magic = WEFT_MPI_MAGIC_ERRH,
                                                       .predefined = true};

struct weft_mpi_win weft_mpi_win_null = {.magic = WEFT_MPI_MAGIC_WIN};
struct weft_mpi_file weft_mpi_file_null = {.magic = WEFT_MPI_MAGIC_FILE};

static const char *const class_strings[MPI_ERR_LASTCODE] = {
    [MPI_SUCCESS] = "MPI_SUCCESS: no error",
    [MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
    [MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
    [MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype",
    [MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
    [MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
    [MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
    [MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
    [MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
    [MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
    [MPI_ERR_OP] = "MPI_ERR_OP: invalid reduce operation",
    [MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid communicator topology",
    [MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
    [MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
    [MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
    [MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated",
    [MPI_ERR_OTHER] = "MPI_ERR_OTHER: known error not in this list",
    [MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
    [MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
    [MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
    [MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid keyval",
    [MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
    [MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address",
    [MPI_ERR_INFO_KEY] = "MPI_ERR_INFO_KEY: info key too long",
    [MPI_ERR_INFO_VALUE] = "MPI_ERR_INFO_VALUE: info value too long",
    [MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: no such info key",
    [MPI_ERR_SPAWN] = "MPI_ERR_SPAWN: error spawning processes",
    [MPI_ERR_PORT] = "MPI_ERR_PORT: invalid port name",
    [MPI_ERR_SERVICE] = "MPI_ERR_SERVICE: invalid service name",
    [MPI_ERR_NAME] = "MPI_ERR_NAME: service name not published",
    [MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
    [MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size",
    [MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement",
    [MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
    [MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
    [MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assert argument",
    [MPI_ERR_RMA_CONFLICT] = "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
    [MPI_ERR_RMA_RANGE] = "MPI_ERR_RMA_RANGE: target memory outside the window",
    [MPI_ERR_RMA_ATTACH] = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "MPI_ERR_RMA_SHARED: memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "MPI_ERR_RMA_FLAVOR: wrong window flavor",
    [MPI_ERR_FILE] = "MPI_ERR_FILE: invalid file handle",
    [MPI_ERR_NOT_SAME] = "MPI_ERR_NOT_SAME: arguments differ between processes",
    [MPI_ERR_AMODE] = "MPI_ERR_AMODE: invalid access mode",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported",
    [MPI_ERR_NO_SUCH_FILE] = "MPI_ERR_NO_SUCH_FILE: file does not exist",
    [MPI_ERR_FILE_EXISTS] = "MPI_ERR_FILE_EXISTS: file exists",
    [MPI_ERR_BAD_FILE] = "MPI_ERR_BAD_FILE: invalid file name",
    [MPI_ERR_ACCESS] = "MPI_ERR_ACCESS: permission denied",
    [MPI_ERR_NO_SPACE] = "MPI_ERR_NO_SPACE: no space left",
    [MPI_ERR_QUOTA] = "MPI_ERR_QUOTA: quota exceeded",
    [MPI_ERR_READ_ONLY] = "MPI_ERR_READ_ONLY: read-only file or file system",
    [MPI_ERR_FILE_IN_USE] = "MPI_ERR_FILE_IN_USE: file in use",
    [MPI_ERR_DUP_DATAREP] = "MPI_ERR_DUP_DATAREP: data representation already defined",
    [MPI_ERR_CONVERSION] = "MPI_ERR_CONVERSION: conversion function failed",
    [MPI_ERR_IO] = "MPI_ERR_IO: I/O error",
    [MPI_ERR_SESSION] = "MPI_ERR_SESSION: invalid session",
    [MPI_ERR_PROC_ABORTED] = "MPI_ERR_PROC_ABORTED: a process involved was aborted",
    [MPI_ERR_VALUE_TOO_LARGE] = "MPI_ERR_VALUE_TOO_LARGE: value too large for its argument",
    [MPIX_ERR_PROC_FAILED] = "MPIX_ERR_PROC_FAILED: a process involved died or lost its "
                             "connection (in a collective: a member failed, or stopped on "
                             "such an error)",
};

/* weft's own error codes, from MPI_ERR_LASTCODE + 1. */
static const struct {
    int class_;
    const char *string;
} own_codes[WEFT_MPI_N_OWN_CODES] = {
    {MPI_ERR_OTHER, "MPI_ERR_OTHER: another member of the collective failed (it stopped on an "
                    "error of its own, not a dead process)"},
};

static bool own_code(int code)
{
    return code > MPI_ERR_LASTCODE && code <= MPI_ERR_LASTCODE + WEFT_MPI_N_OWN_CODES;
}

/* Classes and codes added by the application (MPI_Add_error_class/code). A code
 * above MPI_ERR_LASTCODE indexes this table; its class may be a predefined one. */
typedef struct user_code {
    int class_;
    char *string;
} user_code_t;

static user_code_t *user_codes;
static int n_user_codes, cap_user_codes;

static int user_code_new(int class_)
{
    if (n_user_codes == cap_user_codes) {
        int cap = cap_user_codes ? 2 * cap_user_codes : 16;
        user_code_t *t = realloc(user_codes, (size_t)cap * sizeof *t);
        if (!t)
            return -1;
        user_codes = t;
        cap_user_codes = cap;
    }
    int code = MPI_ERR_LASTCODE + WEFT_MPI_N_OWN_CODES + 1 + n_user_codes;
    user_codes[n_user_codes].class_ = class_ < 0 ? code : class_;
    user_codes[n_user_codes].string = NULL;
    n_user_codes++;
    return code;
}

static user_code_t *user_code(int code)
{
    int i = code - MPI_ERR_LASTCODE - WEFT_MPI_N_OWN_CODES - 1;
    return i >= 0 && i < n_user_codes ? &user_codes[i] : NULL;
}

/* The largest error code in use, for the MPI_LASTUSEDCODE attribute. */
int weft__mpi_err_lastused(void)
{
    return MPI_ERR_LASTCODE + WEFT_MPI_N_OWN_CODES + n_user_codes;
}

int weft__mpi_err_from_weft(int status)
{
    switch (status) {
    case WEFT_OK:
        return MPI_SUCCESS;
    case WEFT_ETRUNC:
        return MPI_ERR_TRUNCATE;
    case WEFT_ENOMEM:
    case WEFT_ENOBUFS:
        return MPI_ERR_NO_MEM;
    case WEFT_ERANK:
        return MPI_ERR_RANK;
    case WEFT_ETAG:
        return MPI_ERR_TAG;
    case WEFT_EINVAL:
        return MPI_ERR_ARG;
    case WEFT_EUNSUPPORTED:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case WEFT_EPEERDEAD:
        return MPIX_ERR_PROC_FAILED;
    case WEFT_EMEMBER:
        return WEFT_MPI_ERR_COLL_MEMBER;
    default:
        return MPI_ERR_INTERN;
    }
}

static bool valid_errh(MPI_Errhandler e)
{
    return e && e->magic == WEFT_MPI_MAGIC_ERRH && e != MPI_ERRHANDLER_NULL;
}

/* The exit status of a job that MPI_ERRORS_ARE_FATAL ends: the error class,
 * unless that status already means something to the shell or a test harness:
 * 77 is "skipped" to ctest and automake, 124 is timeout(1)'s, 125-127 the
 * shell's own, 128+n "killed by signal n". Those become 1, so a failed job
 * never passes for a skipped or a killed one. */
static int fatal_exit_status(int err)
{
    int class = err;
    if (PMPI_Error_class(err, &class) != MPI_SUCCESS)
        class = err;
    if (class <= 0 || class >= 124 || class == 77)
        return 1;
    return class;
}

static void fatal(const char *what, const char *name, int err, const char *fn, const char *handler)
{
    char s[MPI_MAX_ERROR_STRING];
    int len;
    PMPI_Error_string(err, s, &len);
    char msg[MPI_MAX_ERROR_STRING + 256];
    snprintf(msg, sizeof msg, "%s failed on %s %s: %s (%s)", fn ? fn : "MPI", what, name, s,
             handler);
    weft__mpi_say(msg);
    weft_abort(weft__mpi.ctx, fatal_exit_status(err), msg);
}

void weft__mpi_say(const char *msg)
{
    if (weft__mpi.world_known)
        fprintf(stderr, "[weft MPI rank %d] %s\n", weft__mpi.world_rank, msg);
    else
        fprintf(stderr, "[weft MPI] %s\n", msg);
}

_Thread_local const char *weft__mpi_err_as;

/* Hand err, raised by fn on the object at obj (a handle's address, what it
 * is and its name for the message), to handler e; returns err. */
static int dispatch(MPI_Errhandler e, void *obj, const char *what, const char *name, int err,
                    const char *fn)
{
    if (weft__mpi_err_as)
        fn = weft__mpi_err_as;
    if (!valid_errh(e) || e->kind == WEFT_MPI_ERRH_FATAL || e->kind == WEFT_MPI_ERRH_ABORT)
        fatal(what, name, err, fn,
              valid_errh(e) && e->kind == WEFT_MPI_ERRH_ABORT ? "MPI_ERRORS_ABORT"
                                                              : "MPI_ERRORS_ARE_FATAL");
    int code = err;
    if (e->kind == WEFT_MPI_ERRH_COMM && e->comm_fn)
        e->comm_fn(obj, &code, fn);
    else if (e->kind == WEFT_MPI_ERRH_WIN && e->win_fn)
        e->win_fn(obj, &code, fn);
    else if (e->kind == WEFT_MPI_ERRH_FILE && e->file_fn)
        e->file_fn(obj, &code, fn);
    else if (e->kind == WEFT_MPI_ERRH_SESSION && e->session_fn)
        e->session_fn(obj, &code, fn);
    return err;
}

int weft__mpi_err(MPI_Comm comm, int err, const char *fn)
{
    if (err == MPI_SUCCESS)
        return err;
    if (!comm || comm->magic != WEFT_MPI_MAGIC_COMM || comm == MPI_COMM_NULL)
        comm = atomic_load(&weft__mpi.initialized) == 1 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    return dispatch(comm->errhandler, &comm, "communicator",
                    comm->name[0] ? comm->name : "(unnamed)", err, fn);
}

int weft__mpi_err_handler(MPI_Errhandler e, int err, const char *fn)
{
    if (err == MPI_SUCCESS)
        return err;
    if (!valid_errh(e))
        return weft__mpi_err(NULL, err, fn);
    MPI_Comm none = MPI_COMM_NULL;
    return dispatch(e, &none, "communicator", "MPI_COMM_NULL", err, fn);
}

int weft__mpi_err_session(MPI_Session session, int err, const char *fn)
{
    if (err == MPI_SUCCESS)
        return err;
    if (!session || session == MPI_SESSION_NULL || session->magic != WEFT_MPI_MAGIC_SESSION)
        return weft__mpi_err(NULL, err, fn);
    return dispatch(session->errhandler, &session, "a", "session", err, fn);
}

int weft__mpi_err_win(MPI_Win win, int err, const char *fn)
{
    if (err == MPI_SUCCESS)
        return err;
    /* MPI_WIN_NULL or a bad handle: the error is the world's. */
    if (weft__win_check(win) != MPI_SUCCESS)
        return weft__mpi_err(NULL, err, fn);
    return dispatch(win->errhandler, &win, "window", win->name[0] ? win->name : "(unnamed)", err,
                    fn);
}

/* Files: the default handler is the one attached to MPI_FILE_NULL (§13.7),
 * MPI_ERRORS_RETURN unless the application changed it; a file takes the one
 * MPI_FILE_NULL has when it is opened. */
static MPI_Errhandler file_null_errh = &weft_mpi_errors_return;

static bool open_file(MPI_File f)
{
    return f && f != MPI_FILE_NULL && f->magic == WEFT_MPI_MAGIC_FILE;
}

MPI_Errhandler weft__mpi_file_default_errh(void)
{
    weft__mpi_errh_retain(file_null_errh);
    return file_null_errh;
}

int weft__mpi_err_file(MPI_File file, int err, const char *fn)
{
    if (err == MPI_SUCCESS)
        return err;
    if (open_file(file))
        return dispatch(file->errhandler, &file, "file", file->name, err, fn);
    MPI_File null = MPI_FILE_NULL;
    return dispatch(file_null_errh, &null, "file", "MPI_FILE_NULL", err, fn);
}

/* ---- public functions ---- */

static int create_errh(weft_mpi_errh_kind_t kind, void *fn, MPI_Errhandler *out, const char *name)
{
    if (!fn || !out)
        return weft__mpi_err(NULL, MPI_ERR_ARG, name);
    MPI_Errhandler e = calloc(1, sizeof *e);
    if (!e)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, name);
    e->magic = WEFT_MPI_MAGIC_ERRH;
    atomic_init(&e->refs, 1);
    e->kind = kind;
    switch (kind) {
    case WEFT_MPI_ERRH_COMM:
        e->comm_fn = (MPI_Comm_errhandler_function *)fn;
        break;
    case WEFT_MPI_ERRH_WIN:
        e->win_fn = (MPI_Win_errhandler_function *)fn;
        break;
    case WEFT_MPI_ERRH_SESSION:
        e->session_fn = (MPI_Session_errhandler_function *)fn;
        break;
    default:
        e->file_fn = (MPI_File_errhandler_function *)fn;
        break;
    }
    *out = e;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create_errh(WEFT_MPI_ERRH_COMM, (void *)fn, errhandler, "MPI_Comm_create_errhandler");
}
WEFT_MPI_ALIAS(Comm_create_errhandler)

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create_errh(WEFT_MPI_ERRH_SESSION, (void *)fn, errhandler,
                       "MPI_Session_create_errhandler");
}
WEFT_MPI_ALIAS(Session_create_errhandler)

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create_errh(WEFT_MPI_ERRH_WIN, (void *)fn, errhandler, "MPI_Win_create_errhandler");
}
WEFT_MPI_ALIAS(Win_create_errhandler)

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create_errh(WEFT_MPI_ERRH_FILE, (void *)fn, errhandler, "MPI_File_create_errhandler");
}
WEFT_MPI_ALIAS(File_create_errhandler)

void weft__mpi_errh_retain(MPI_Errhandler e)
{
    if (!e->predefined)
        atomic_fetch_add(&e->refs, 1);
}

void weft__mpi_errh_replace(MPI_Errhandler *slot, MPI_Errhandler e)
{
    weft__mpi_errh_retain(e);
    MPI_Errhandler old = *slot;
    *slot = e;
    weft__mpi_errh_release(old);
}

bool weft__mpi_errh_fits(MPI_Errhandler e, weft_mpi_errh_kind_t kind)
{
    return valid_errh(e) && (e->predefined || e->kind == kind);
}

void weft__mpi_errh_release(MPI_Errhandler e)
{
    if (e && !e->predefined && atomic_fetch_sub(&e->refs, 1) == 1) {
        e->magic = WEFT_MPI_MAGIC_DEAD;
        free(e);
    }
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_set_errhandler");
    if (!weft__mpi_errh_fits(errhandler, WEFT_MPI_ERRH_COMM))
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler");
    weft__mpi_errh_replace(&comm->errhandler, errhandler);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_get_errhandler");
    if (!errhandler)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler");
    weft__mpi_errh_retain(comm->errhandler);
    *errhandler = comm->errhandler;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_get_errhandler)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_call_errhandler");
    weft__mpi_err(comm, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_call_errhandler)

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    if (file != MPI_FILE_NULL && !open_file(file))
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_FILE, "MPI_File_set_errhandler");
    if (!weft__mpi_errh_fits(errhandler, WEFT_MPI_ERRH_FILE))
        return weft__mpi_err_file(file, MPI_ERR_ARG, "MPI_File_set_errhandler");
    weft__mpi_errh_replace(file == MPI_FILE_NULL ? &file_null_errh : &file->errhandler, errhandler);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_set_errhandler)

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    if (file != MPI_FILE_NULL && !open_file(file))
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_FILE, "MPI_File_get_errhandler");
    if (!errhandler)
        return weft__mpi_err_file(file, MPI_ERR_ARG, "MPI_File_get_errhandler");
    MPI_Errhandler e = file == MPI_FILE_NULL ? file_null_errh : file->errhandler;
    weft__mpi_errh_retain(e);
    *errhandler = e;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_get_errhandler)

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    if (fh != MPI_FILE_NULL && !open_file(fh))
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_FILE, "MPI_File_call_errhandler");
    weft__mpi_err_file(fh, errorcode, "MPI_File_call_errhandler");
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_call_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler || !valid_errh(*errhandler))
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Errhandler_free");
    weft__mpi_errh_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Errhandler_free)

int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_class");
    if (errorcode >= 0 && errorcode < MPI_ERR_LASTCODE) {
        *errorclass = errorcode;
        return MPI_SUCCESS;
    }
    if (own_code(errorcode)) {
        *errorclass = own_codes[errorcode - MPI_ERR_LASTCODE - 1].class_;
        return MPI_SUCCESS;
    }
    user_code_t *u = user_code(errorcode);
    if (!u)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_class");
    *errorclass = u->class_;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Error_class)

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_string");
    const char *s = NULL;
    if (errorcode >= 0 && errorcode < MPI_ERR_LASTCODE)
        s = class_strings[errorcode];
    else if (errorcode == MPI_ERR_LASTCODE)
        s = "MPI_ERR_LASTCODE: last error code";
    else if (errorcode >= MPI_T_ERR_MEMORY && errorcode < MPI_ERR_LASTCODE)
        s = "MPI_T error";
    else if (own_code(errorcode))
        s = own_codes[errorcode - MPI_ERR_LASTCODE - 1].string;
    user_code_t *u = user_code(errorcode);
    if (u)
        s = u->string ? u->string : "";
    if (!s) {
        if (!u && (errorcode < 0 || errorcode > MPI_ERR_LASTCODE))
            return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_string");
        s = "MPI_T error";
    }
    snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Error_string)

int PMPI_Add_error_class(int *errorclass)
{
    if (!errorclass)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_class");
    weft_lock_acquire(&weft__mpi.lock);
    int c = user_code_new(-1);
    weft_lock_release(&weft__mpi.lock);
    if (c < 0)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_class");
    *errorclass = c;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Add_error_class)

static bool valid_class(int c)
{
    if (c >= 0 && c < MPI_ERR_LASTCODE)
        return true;
    user_code_t *u = user_code(c);
    return u && u->class_ == c;
}

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    if (!errorcode || !valid_class(errorclass) || errorclass == MPI_SUCCESS)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_code");
    weft_lock_acquire(&weft__mpi.lock);
    int c = user_code_new(errorclass);
    weft_lock_release(&weft__mpi.lock);
    if (c < 0)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_code");
    *errorcode = c;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char *string)
{
    user_code_t *u = user_code(errorcode);
    if (!u || !string || strlen(string) >= MPI_MAX_ERROR_STRING)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_string");
    char *dup = strdup(string);
    if (!dup)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string");
    weft_lock_acquire(&weft__mpi.lock);
    free(u->string);
    u->string = dup;
    weft_lock_release(&weft__mpi.lock);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Add_error_string)

void weft__mpi_err_fini(void)
{
    for (int i = 0; i < n_user_codes; i++)
        free(user_codes[i].string);
    free(user_codes);
    user_codes = NULL;
    n_user_codes = cap_user_codes = 0;
}
