/* Init, finalize and the environment (MPI 3.1 §8, §12.4).
 *
 * The MPI instance joins the job through weft_init (weftrun, PMIx or
 * singleton), sets up the predefined objects and MPI_COMM_WORLD /
 * MPI_COMM_SELF. The first of MPI_Init and MPI_Session_init starts it, with
 * the thread level that call asks for (MPI_THREAD_MULTIPLE included: the
 * engine picks its lock kinds from it at run time); the last of MPI_Finalize
 * and MPI_Session_finalize ends it (the world model counts as one user, each
 * session as one). It starts once per process: once ended, it cannot start
 * again (MPI 4.0 allows that; weft's bootstrap joins the job once).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi/mpi_win_int.h"

weft__mpi_state_t weft__mpi;

int weft__mpi_check_init(void)
{
    return atomic_load_explicit(&weft__mpi.initialized, memory_order_acquire) == 1 ? MPI_SUCCESS
                                                                                   : MPI_ERR_OTHER;
}

static pthread_mutex_t instance_lock = PTHREAD_MUTEX_INITIALIZER;
static int instance_users;

/* The level MPI_Init and a session without a thread_level hint ask for. */
int weft__mpi_default_level(void)
{
    const char *level = getenv("WEFT_MPI_THREAD_LEVEL");
    return level && !strcmp(level, "multiple") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
}

static int instance_start(int required, const char *fn)
{
    if (atomic_load(&weft__mpi.initialized) == 2) {
        fprintf(stderr, "weft MPI: %s: MPI was finalized and cannot start again\n", fn);
        return MPI_ERR_OTHER;
    }
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        required = MPI_THREAD_MULTIPLE < required ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    /* MPI's levels and the engine's are the same four, in the same order. */
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level = required};
    int rc = weft_world_acquire(&params, &weft__mpi.ctx);
    if (rc != WEFT_OK) {
        fprintf(stderr, "weft MPI: %s: cannot join the job: %s\n", fn, weft_strerror(rc));
        return MPI_ERR_OTHER;
    }
    weft__mpi.thread_level = weft_thread_level(weft__mpi.ctx);
    weft__mpi.main_thread = (unsigned long)pthread_self();
    weft__mpi.world_rank = weft_rank(weft__mpi.ctx);
    weft__mpi.world_known = true;
    weft__mpi.world_size = weft_size(weft__mpi.ctx);
    /* A progress thread runs the collective schedules (weft_coll.h) beside
     * the application's threads, at any thread level. */
    bool shared = weft__mpi.thread_level == MPI_THREAD_MULTIPLE ||
                  weft_progress_thread_running(weft__mpi.ctx);
    weft_lock_init(&weft__mpi.lock, shared ? WEFT_LOCK_MUTEX : WEFT_LOCK_NONE);
    weft__mpi_types_init();
    if ((rc = weft__mpi_comms_init()) != MPI_SUCCESS) {
        weft_world_release(weft__mpi.ctx);
        weft__mpi.ctx = NULL;
        return rc;
    }
    weft__mpi_t_engine(weft__mpi.ctx);
    atomic_store_explicit(&weft__mpi.initialized, 1, memory_order_release);
    return MPI_SUCCESS;
}

static int instance_end(void)
{
    /* Buffered messages leave first, as if by MPI_Buffer_detach (MPI 3.1
     * §8.7): the engine below would close with their sends unfinished, and a
     * rendezvous that only the sender moves (tcp) would leave the receiver
     * waiting for ever. */
    void *bsend_buf;
    int bsend_size;
    PMPI_Buffer_detach(&bsend_buf, &bsend_size);
    weft__mpi_req_drain();
    weft__mpi_part_fini();
    weft__mpi_win_fini();
    /* Our schedules leave the context's list before the communicators their
     * steps may name go (the context may live on: another instance's, a
     * native user's); their requests free them. */
    weft_sched_forget(weft__mpi.ctx, &weft__mpi_coll_front);
    weft__mpi_comms_fini();
    weft__mpi_t_engine(NULL);
    int wrc = weft_world_release(weft__mpi.ctx);
    weft__mpi.ctx = NULL;
    weft__mpi_req_fini();
    weft__mpi_err_fini();
    weft_lock_destroy(&weft__mpi.lock);
    atomic_store(&weft__mpi.initialized, 2);
    return wrc == WEFT_OK ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int weft__mpi_instance_up(int required, const char *fn)
{
    pthread_mutex_lock(&instance_lock);
    int rc = instance_users ? MPI_SUCCESS : instance_start(required, fn);
    if (!rc)
        instance_users++;
    pthread_mutex_unlock(&instance_lock);
    return rc;
}

int weft__mpi_instance_down(void)
{
    pthread_mutex_lock(&instance_lock);
    int rc = --instance_users ? MPI_SUCCESS : instance_end();
    pthread_mutex_unlock(&instance_lock);
    return rc;
}

static int init_common(int required, int *provided, const char *fn)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&weft__mpi.world, &expected, 1)) {
        fprintf(stderr, "weft MPI: %s called %s\n", fn,
                expected == 1 ? "twice" : "after MPI_Finalize");
        return weft__mpi_err(NULL, MPI_ERR_OTHER, fn);
    }
    int rc = weft__mpi_instance_up(required, fn);
    if (rc) {
        atomic_store(&weft__mpi.world, 0);
        return rc;
    }
    /* A spawned job's ranks meet their parents (MPI_Comm_get_parent). */
    if ((rc = weft__mpi_dyn_init()) != MPI_SUCCESS)
        return weft__mpi_err(NULL, rc, fn);
    if (provided)
        *provided = weft__mpi.thread_level;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    return init_common(weft__mpi_default_level(), NULL, "MPI_Init");
}
WEFT_MPI_ALIAS(Init)

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Init_thread");
    return init_common(required, provided, "MPI_Init_thread");
}
WEFT_MPI_ALIAS(Init_thread)

int PMPI_Finalize(void)
{
    if (atomic_load(&weft__mpi.world) != 1)
        return weft__mpi_err(NULL, MPI_ERR_OTHER, "MPI_Finalize");
    /* Attributes on MPI_COMM_SELF are deleted first, so libraries can run their
     * cleanup while MPI still works (MPI 3.1 §8.7.1): their delete callbacks
     * may communicate, buffered sends included. */
    weft__mpi_attrs_delete_all(MPI_COMM_SELF);
    weft__mpi_dyn_fini();
    atomic_store(&weft__mpi.world, 2);
    return weft__mpi_instance_down();
}
WEFT_MPI_ALIAS(Finalize)

int PMPI_Initialized(int *flag)
{
    if (!flag)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Initialized");
    *flag = atomic_load(&weft__mpi.world) != 0;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Initialized)

int PMPI_Finalized(int *flag)
{
    if (!flag)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Finalized");
    *flag = atomic_load(&weft__mpi.world) == 2;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Finalized)

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    if (weft__mpi.world_known)
        snprintf(msg, sizeof msg, "MPI_Abort called by rank %d with error code %d",
                 weft__mpi.world_rank, errorcode);
    else
        snprintf(msg, sizeof msg, "MPI_Abort called before MPI_Init with error code %d", errorcode);
    weft__mpi_say(msg);
    /* The standard lets an implementation end every process of the job, and a
     * launcher cannot know which ones "comm" covers: end them all. */
    weft_abort(weft__mpi.ctx, errorcode & 0xff ? errorcode & 0xff : 1, msg);
}
WEFT_MPI_ALIAS(Abort)

int PMPI_Query_thread(int *provided)
{
    if (!provided)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Query_thread");
    *provided = weft__mpi.thread_level;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Query_thread)

int PMPI_Is_thread_main(int *flag)
{
    if (!flag)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Is_thread_main");
    *flag = (unsigned long)pthread_self() == weft__mpi.main_thread;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Is_thread_main)

double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
WEFT_MPI_ALIAS(Wtime)

double PMPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return 1e-9;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
WEFT_MPI_ALIAS(Wtick)

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_processor_name");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Get_processor_name)

int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_version");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Get_version)

int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_library_version");
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "weft MPI %s (MPI %d.%d)",
             WEFT_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Get_library_version)

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    if (size < 0 || !baseptr)
        return weft__mpi_err(NULL, size < 0 ? MPI_ERR_SIZE : MPI_ERR_ARG, "MPI_Alloc_mem");
    /* Cache-line aligned, so buffers handed to the engine start on a line. */
    void *p = NULL;
    if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Alloc_mem)

int PMPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Free_mem)

int PMPI_Pcontrol(const int level, ...)
{
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Pcontrol)
