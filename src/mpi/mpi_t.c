/* The MPI tools information interface (MPI 3.1 §14.3).
 *
 * Control variables: one per WEFT_* parameter of util/param.c's table, in
 * that order, each a string (MPI_CHAR, count WEFT_MPI_T_STRLEN) bound to no
 * object, scope MPI_T_SCOPE_LOCAL. Reading gives the value in effect (a
 * write, else the environment, else the documented default). A write before
 * MPI_Init overrides the environment for MPI_Init, which is when the engine
 * reads its parameters; once MPI is initialized a write answers
 * MPI_T_ERR_CVAR_SET_NOT_NOW, after MPI_Finalize MPI_T_ERR_CVAR_SET_NEVER.
 *
 * Performance variables: the engine's counters (weft_counters_t), each an
 * MPI_UNSIGNED_LONG_LONG bound to no object, continuous (always counting,
 * so start and stop answer MPI_T_ERR_PVAR_NO_STARTSTOP). Counters are per
 * handle: a handle reads what happened since it was allocated or last reset
 * (or the value written to it, plus what happened since). The peak depth of
 * the unexpected queue is a read-only high-water mark. Before MPI_Init they
 * read 0; after MPI_Finalize, what they were when it began.
 *
 * Categories: weft_engine, weft_shm, weft_tcp and weft_ofi group the control
 * variables by the part of weft that reads them, weft_counters holds the
 * performance variables. No enumerations. Every function may be called from
 * any thread (one mutex: none of this is on a hot path), before MPI_Init and
 * after MPI_Finalize; errors are returned, not given to an error handler.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"
#include "util/util.h"

#define WEFT_MPI_T_STRLEN 256 /* chars of a control variable's value, its NUL included */

/* Handles and sessions are checked by looking them up in these lists, so a
 * stale or foreign one is refused without being read. */
struct weft_mpi_t_cvar_handle {
    int index;
    struct weft_mpi_t_cvar_handle *next; /* every live one, freed at the last MPI_T_finalize */
};

struct weft_mpi_t_pvar_handle {
    int index;
    uint64_t base; /* the counter's value that reads as 0 through this handle */
    struct weft_mpi_t_pvar_session *session;
    struct weft_mpi_t_pvar_handle *next;
};

struct weft_mpi_t_pvar_session {
    struct weft_mpi_t_pvar_handle *handles;
    struct weft_mpi_t_pvar_session *next;
};

/* ---- the variables ---- */

typedef struct pvar {
    const char *name;
    size_t offset; /* in weft_counters_t */
    int var_class;
    const char *desc;
} pvar_t;

#define COUNTER(field, desc)                                                                       \
    {                                                                                              \
        "weft_" #field, offsetof(weft_counters_t, field), MPI_T_PVAR_CLASS_COUNTER, desc           \
    }

static const pvar_t pvars[] = {
    COUNTER(packets_sent, "packets the drivers took from this process"),
    COUNTER(packets_received, "packets that arrived at this process"),
    COUNTER(chunks_sent, "chunks (messages and control) in the packets sent"),
    COUNTER(chunks_received, "chunks in the packets received"),
    COUNTER(bytes_sent, "payload bytes of the messages sent"),
    COUNTER(bytes_received, "payload bytes of the messages received"),
    COUNTER(eager_sent, "messages sent eagerly (data with the envelope)"),
    COUNTER(rdv_sent, "messages sent by rendezvous"),
    COUNTER(rdv_rget, "rendezvous moved by a single-copy read"),
    COUNTER(rdv_rtr, "rendezvous moved by ready-to-receive and streamed data"),
    COUNTER(rdv_coop, "rendezvous moved in pieces by either side (shared memory)"),
    COUNTER(rdv_published, "receives published so that their sender may move the data"),
    COUNTER(rdv_claimed, "rendezvous that wrote into a receive its peer published"),
    COUNTER(unexpected, "messages that arrived before their receive was posted"),
    {"weft_unexpected_max", offsetof(weft_counters_t, unexpected_max),
     MPI_T_PVAR_CLASS_HIGHWATERMARK, "peak depth of the unexpected-message queue"},
    COUNTER(credit_stalls, "eager sends that went by rendezvous for lack of credit"),
};
#define NPVARS ((int)WEFT_ARRAY_SIZE(pvars))

static bool pvar_readonly(int i)
{
    return pvars[i].var_class != MPI_T_PVAR_CLASS_COUNTER;
}

/* Categories of control variables by name prefix; the first category takes
 * what no other does. The last category holds the performance variables. */
static const struct category {
    const char *name, *desc;
    const char *prefix[2];
} cats[] = {
    {"weft_engine", "the engine: matching, protocols, progress, waiting, logging", {NULL, NULL}},
    {"weft_shm", "the shared-memory driver (ranks on one node)", {"WEFT_SHM_", "WEFT_PEER_CHECK"}},
    {"weft_tcp", "the tcp driver and its rails", {"WEFT_TCP_", "WEFT_RAIL_"}},
    {"weft_ofi", "the libfabric (ofi) driver", {"WEFT_OFI_", NULL}},
    {"weft_counters", "the engine's traffic counters", {NULL, NULL}},
};
#define NCATS        ((int)WEFT_ARRAY_SIZE(cats))
#define CAT_COUNTERS (NCATS - 1)

static int cvar_count(void)
{
    size_t n;
    weft_param_table(&n);
    return (int)n;
}

static int cvar_category(int i)
{
    size_t n;
    const char *name = weft_param_table(&n)[i].name;
    for (int c = 1; c < CAT_COUNTERS; c++)
        for (int k = 0; k < 2; k++)
            if (cats[c].prefix[k] && !strncmp(name, cats[c].prefix[k], strlen(cats[c].prefix[k])))
                return c;
    return 0;
}

/* ---- state ---- */

static pthread_mutex_t t_lock = PTHREAD_MUTEX_INITIALIZER;
static int t_refs; /* MPI_T_init_thread calls not yet finalized */
static struct weft_mpi_t_cvar_handle *t_cvars;
static struct weft_mpi_t_pvar_session *t_sessions;
static weft_ctx_t *t_ctx;       /* the engine, between MPI_Init and MPI_Finalize */
static weft_counters_t t_final; /* its counters when MPI_Finalize began */

void weft__mpi_t_engine(weft_ctx_t *ctx)
{
    pthread_mutex_lock(&t_lock);
    if (!ctx && t_ctx)
        weft_counters_get(t_ctx, &t_final);
    t_ctx = ctx;
    pthread_mutex_unlock(&t_lock);
}

static uint64_t pvar_now(int i)
{
    weft_counters_t c;
    if (t_ctx)
        weft_counters_get(t_ctx, &c);
    else
        c = t_final; /* zero before MPI_Init */
    uint64_t v;
    memcpy(&v, (const char *)&c + pvars[i].offset, sizeof v);
    return v;
}

/* Every function but init and finalize: the lock taken, or an error. */
#define T_ENTER()                                                                                  \
    do {                                                                                           \
        pthread_mutex_lock(&t_lock);                                                               \
        if (!t_refs) {                                                                             \
            pthread_mutex_unlock(&t_lock);                                                         \
            return MPI_T_ERR_NOT_INITIALIZED;                                                      \
        }                                                                                          \
    } while (0)
#define T_RETURN(rc)                                                                               \
    do {                                                                                           \
        pthread_mutex_unlock(&t_lock);                                                             \
        return (rc);                                                                               \
    } while (0)

/* MPI_T's strings (§14.3.3): *len gives the room in buf and receives the
 * length stored, NUL included (the string cut to fit); with buf NULL or
 * *len 0 nothing is stored and *len receives the length needed. */
static void put_str(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    int need = (int)strlen(s) + 1;
    if (!buf || *len <= 0) {
        *len = need;
        return;
    }
    int n = need < *len ? need : *len;
    memcpy(buf, s, (size_t)n - 1);
    buf[n - 1] = '\0';
    *len = n;
}

/* ---- init and finalize ---- */

int PMPI_T_init_thread(int required, int *provided)
{
    (void)required; /* one mutex makes every level safe */
    pthread_mutex_lock(&t_lock);
    t_refs++;
    pthread_mutex_unlock(&t_lock);
    if (provided)
        *provided = MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(T_init_thread)

int PMPI_T_finalize(void)
{
    T_ENTER();
    if (--t_refs == 0) {
        /* Handles and sessions are gone with the interface (a tool that
         * initializes it again starts afresh); the values written stay. */
        while (t_cvars) {
            struct weft_mpi_t_cvar_handle *h = t_cvars;
            t_cvars = h->next;
            free(h);
        }
        while (t_sessions) {
            struct weft_mpi_t_pvar_session *s = t_sessions;
            t_sessions = s->next;
            while (s->handles) {
                struct weft_mpi_t_pvar_handle *h = s->handles;
                s->handles = h->next;
                free(h);
            }
            free(s);
        }
    }
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_finalize)

/* ---- enumerations: there are none ---- */

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    (void)enumtype, (void)num, (void)name, (void)name_len;
    T_ENTER();
    T_RETURN(MPI_T_ERR_INVALID_HANDLE);
}
WEFT_MPI_ALIAS(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    (void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
    T_ENTER();
    T_RETURN(MPI_T_ERR_INVALID_HANDLE);
}
WEFT_MPI_ALIAS(T_enum_get_item)

/* ---- control variables ---- */

int PMPI_T_cvar_get_num(int *num_cvar)
{
    T_ENTER();
    if (!num_cvar)
        T_RETURN(MPI_T_ERR_INVALID);
    *num_cvar = cvar_count();
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_cvar_get_num)

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    T_ENTER();
    if (cvar_index < 0 || cvar_index >= cvar_count())
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    size_t n;
    const weft_param_t *p = &weft_param_table(&n)[cvar_index];
    put_str(p->name, name, name_len);
    if (desc_len) {
        char text[1024];
        snprintf(text, sizeof text, "%s (default: %s)", p->help, p->deflt);
        put_str(text, desc, desc_len);
    }
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype)
        *datatype = MPI_CHAR;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_LOCAL;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_cvar_get_info)

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    T_ENTER();
    if (!name || !cvar_index)
        T_RETURN(MPI_T_ERR_INVALID);
    size_t n;
    const weft_param_t *t = weft_param_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(t[i].name, name)) {
            *cvar_index = (int)i;
            T_RETURN(MPI_SUCCESS);
        }
    }
    T_RETURN(MPI_T_ERR_INVALID_NAME);
}
WEFT_MPI_ALIAS(T_cvar_get_index)

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    (void)obj_handle; /* bound to no object */
    T_ENTER();
    if (cvar_index < 0 || cvar_index >= cvar_count())
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count)
        T_RETURN(MPI_T_ERR_INVALID);
    struct weft_mpi_t_cvar_handle *h = malloc(sizeof *h);
    if (!h)
        T_RETURN(MPI_T_ERR_MEMORY);
    *h = (struct weft_mpi_t_cvar_handle){.index = cvar_index, .next = t_cvars};
    t_cvars = h;
    *handle = h;
    *count = WEFT_MPI_T_STRLEN;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_cvar_handle_alloc)

/* A live control-variable handle, or NULL. Called with t_lock. */
static struct weft_mpi_t_cvar_handle **cvar_find(MPI_T_cvar_handle h)
{
    struct weft_mpi_t_cvar_handle **p = &t_cvars;
    while (*p && *p != h)
        p = &(*p)->next;
    return *p ? p : NULL;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    T_ENTER();
    struct weft_mpi_t_cvar_handle **p = handle ? cvar_find(*handle) : NULL;
    if (!p)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    struct weft_mpi_t_cvar_handle *h = *p;
    *p = h->next;
    free(h);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    T_ENTER();
    if (!cvar_find(handle))
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!buf)
        T_RETURN(MPI_T_ERR_INVALID);
    size_t n;
    const char *v = weft_param_get(weft_param_table(&n)[handle->index].name);
    if (!v || !*v)
        v = weft_param_table(&n)[handle->index].deflt;
    int len = WEFT_MPI_T_STRLEN;
    put_str(v, buf, &len);
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    T_ENTER();
    if (!cvar_find(handle))
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!buf || !memchr(buf, '\0', WEFT_MPI_T_STRLEN))
        T_RETURN(MPI_T_ERR_INVALID);
    /* The engine reads its parameters in MPI_Init. */
    int state = atomic_load(&weft__mpi.initialized);
    if (state == 1)
        T_RETURN(MPI_T_ERR_CVAR_SET_NOT_NOW);
    if (state == 2)
        T_RETURN(MPI_T_ERR_CVAR_SET_NEVER);
    size_t n;
    if (weft_param_set(weft_param_table(&n)[handle->index].name, buf) != WEFT_OK)
        T_RETURN(MPI_T_ERR_MEMORY);
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_cvar_write)

/* ---- performance variables ---- */

int PMPI_T_pvar_get_num(int *num_pvar)
{
    T_ENTER();
    if (!num_pvar)
        T_RETURN(MPI_T_ERR_INVALID);
    *num_pvar = NPVARS;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous, int *atomic)
{
    T_ENTER();
    if (pvar_index < 0 || pvar_index >= NPVARS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    const pvar_t *p = &pvars[pvar_index];
    put_str(p->name, name, name_len);
    put_str(p->desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (var_class)
        *var_class = p->var_class;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = pvar_readonly(pvar_index);
    if (continuous)
        *continuous = 1;
    if (atomic)
        *atomic = 0;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_pvar_get_info)

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    T_ENTER();
    if (!name || !pvar_index)
        T_RETURN(MPI_T_ERR_INVALID);
    for (int i = 0; i < NPVARS; i++) {
        if (pvars[i].var_class == var_class && !strcmp(pvars[i].name, name)) {
            *pvar_index = i;
            T_RETURN(MPI_SUCCESS);
        }
    }
    T_RETURN(MPI_T_ERR_INVALID_NAME);
}
WEFT_MPI_ALIAS(T_pvar_get_index)

/* A live session, or NULL. Called with t_lock. */
static struct weft_mpi_t_pvar_session **session_find(MPI_T_pvar_session s)
{
    struct weft_mpi_t_pvar_session **p = &t_sessions;
    while (*p && *p != s)
        p = &(*p)->next;
    return *p ? p : NULL;
}

/* A live handle of session s, or NULL. Called with t_lock. */
static struct weft_mpi_t_pvar_handle **pvar_find(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    struct weft_mpi_t_pvar_handle **p = &s->handles;
    while (*p && *p != h)
        p = &(*p)->next;
    return *p ? p : NULL;
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    T_ENTER();
    if (!session)
        T_RETURN(MPI_T_ERR_INVALID);
    struct weft_mpi_t_pvar_session *s = calloc(1, sizeof *s);
    if (!s)
        T_RETURN(MPI_T_ERR_MEMORY);
    s->next = t_sessions;
    t_sessions = s;
    *session = s;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_pvar_session_create)

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    T_ENTER();
    struct weft_mpi_t_pvar_session **p = session ? session_find(*session) : NULL;
    if (!p)
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    struct weft_mpi_t_pvar_session *s = *p;
    *p = s->next;
    while (s->handles) {
        struct weft_mpi_t_pvar_handle *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle; /* bound to no object */
    T_ENTER();
    if (!session_find(session))
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (pvar_index < 0 || pvar_index >= NPVARS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count)
        T_RETURN(MPI_T_ERR_INVALID);
    struct weft_mpi_t_pvar_handle *h = malloc(sizeof *h);
    if (!h)
        T_RETURN(MPI_T_ERR_MEMORY);
    *h = (struct weft_mpi_t_pvar_handle){.index = pvar_index,
                                         .base =
                                             pvar_readonly(pvar_index) ? 0 : pvar_now(pvar_index),
                                         .session = session,
                                         .next = session->handles};
    session->handles = h;
    *handle = h;
    *count = 1;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_pvar_handle_alloc)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    T_ENTER();
    if (!session_find(session))
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    struct weft_mpi_t_pvar_handle **p = handle ? pvar_find(session, *handle) : NULL;
    if (!p)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    struct weft_mpi_t_pvar_handle *h = *p;
    *p = h->next;
    free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_pvar_handle_free)

/* The session and handle of a call on one variable; MPI_SUCCESS or the
 * error. all: whether MPI_T_PVAR_ALL_HANDLES is accepted. */
static int pvar_args(MPI_T_pvar_session s, MPI_T_pvar_handle h, bool all)
{
    if (!session_find(s))
        return MPI_T_ERR_INVALID_SESSION;
    if (h == MPI_T_PVAR_ALL_HANDLES)
        return all ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
    return pvar_find(s, h) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

/* Start and stop: every variable is continuous. With MPI_T_PVAR_ALL_HANDLES
 * there is nothing to start or stop, which succeeds. */
static int start_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    T_ENTER();
    int rc = pvar_args(session, handle, true);
    if (rc == MPI_SUCCESS && handle != MPI_T_PVAR_ALL_HANDLES)
        rc = MPI_T_ERR_PVAR_NO_STARTSTOP;
    T_RETURN(rc);
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return start_stop(session, handle);
}
WEFT_MPI_ALIAS(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return start_stop(session, handle);
}
WEFT_MPI_ALIAS(T_pvar_stop)

/* Read, then (reset) rebase. Called with t_lock and checked arguments. */
static int read_handle(struct weft_mpi_t_pvar_handle *h, void *buf, bool reset)
{
    if (!buf)
        return MPI_T_ERR_INVALID;
    if (reset && pvar_readonly(h->index))
        return MPI_T_ERR_PVAR_NO_WRITE;
    uint64_t now = pvar_now(h->index);
    unsigned long long v = now - h->base;
    memcpy(buf, &v, sizeof v);
    if (reset)
        h->base = now;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    T_ENTER();
    int rc = pvar_args(session, handle, false);
    if (rc == MPI_SUCCESS)
        rc = read_handle(handle, buf, false);
    T_RETURN(rc);
}
WEFT_MPI_ALIAS(T_pvar_read)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    T_ENTER();
    int rc = pvar_args(session, handle, false);
    if (rc == MPI_SUCCESS)
        rc = read_handle(handle, buf, true);
    T_RETURN(rc);
}
WEFT_MPI_ALIAS(T_pvar_readreset)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    T_ENTER();
    int rc = pvar_args(session, handle, false);
    if (rc == MPI_SUCCESS && !buf)
        rc = MPI_T_ERR_INVALID;
    if (rc == MPI_SUCCESS && pvar_readonly(handle->index))
        rc = MPI_T_ERR_PVAR_NO_WRITE;
    if (rc == MPI_SUCCESS) {
        unsigned long long v;
        memcpy(&v, buf, sizeof v);
        handle->base = pvar_now(handle->index) - v;
    }
    T_RETURN(rc);
}
WEFT_MPI_ALIAS(T_pvar_write)

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    T_ENTER();
    int rc = pvar_args(session, handle, true);
    if (rc == MPI_SUCCESS && handle == MPI_T_PVAR_ALL_HANDLES) {
        /* Every handle of the session that may be reset. */
        for (struct weft_mpi_t_pvar_handle *h = session->handles; h; h = h->next)
            if (!pvar_readonly(h->index))
                h->base = pvar_now(h->index);
    } else if (rc == MPI_SUCCESS) {
        if (pvar_readonly(handle->index))
            rc = MPI_T_ERR_PVAR_NO_WRITE;
        else
            handle->base = pvar_now(handle->index);
    }
    T_RETURN(rc);
}
WEFT_MPI_ALIAS(T_pvar_reset)

/* ---- categories ---- */

int PMPI_T_category_get_num(int *num_cat)
{
    T_ENTER();
    if (!num_cat)
        T_RETURN(MPI_T_ERR_INVALID);
    *num_cat = NCATS;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_category_get_num)

/* The members of category c: control variables, or (the last category)
 * performance variables, their indices into out (up to len), their number
 * returned. Called with t_lock. */
static int members(int c, bool want_pvars, int len, int *out)
{
    int n = 0;
    if (want_pvars) {
        if (c == CAT_COUNTERS)
            for (int i = 0; i < NPVARS; i++, n++)
                if (out && n < len)
                    out[n] = i;
        return n;
    }
    if (c == CAT_COUNTERS)
        return 0;
    for (int i = 0, nc = cvar_count(); i < nc; i++) {
        if (cvar_category(i) != c)
            continue;
        if (out && n < len)
            out[n] = i;
        n++;
    }
    return n;
}

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    T_ENTER();
    if (cat_index < 0 || cat_index >= NCATS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    put_str(cats[cat_index].name, name, name_len);
    put_str(cats[cat_index].desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = members(cat_index, false, 0, NULL);
    if (num_pvars)
        *num_pvars = members(cat_index, true, 0, NULL);
    if (num_categories)
        *num_categories = 0;
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_category_get_info)

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    T_ENTER();
    if (!name || !cat_index)
        T_RETURN(MPI_T_ERR_INVALID);
    for (int c = 0; c < NCATS; c++) {
        if (!strcmp(cats[c].name, name)) {
            *cat_index = c;
            T_RETURN(MPI_SUCCESS);
        }
    }
    T_RETURN(MPI_T_ERR_INVALID_NAME);
}
WEFT_MPI_ALIAS(T_category_get_index)

static int category_list(int cat_index, int len, int indices[], bool want_pvars)
{
    T_ENTER();
    if (cat_index < 0 || cat_index >= NCATS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices))
        T_RETURN(MPI_T_ERR_INVALID);
    members(cat_index, want_pvars, len, indices);
    T_RETURN(MPI_SUCCESS);
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return category_list(cat_index, len, indices, false);
}
WEFT_MPI_ALIAS(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return category_list(cat_index, len, indices, true);
}
WEFT_MPI_ALIAS(T_category_get_pvars)

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    (void)indices; /* no category holds another */
    T_ENTER();
    if (cat_index < 0 || cat_index >= NCATS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (len < 0)
        T_RETURN(MPI_T_ERR_INVALID);
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_category_get_categories)

int PMPI_T_category_changed(int *stamp)
{
    T_ENTER();
    if (!stamp)
        T_RETURN(MPI_T_ERR_INVALID);
    *stamp = 0; /* the variables and categories never change */
    T_RETURN(MPI_SUCCESS);
}
WEFT_MPI_ALIAS(T_category_changed)
