/* What weft's MPI does not do yet (MPI 3.1 chapters 10 and 11): process
 * creation and ports, one-sided communication. Each function checks only
 * what it needs to pick the error class, sets its output handles to the null
 * handle first (so a caller that goes on with MPI_ERRORS_RETURN holds no
 * garbage), and reports MPI_ERR_UNSUPPORTED_OPERATION through the handler the
 * standard names: windows through weft__mpi_err_win (window creation on the
 * communicator, which is where §11.2 raises its errors), the rest on the
 * communicator given or MPI_COMM_WORLD.
 *
 * No window can exist, so an operation on MPI_WIN_NULL reports MPI_ERR_WIN (a
 * null handle is never valid there), any other handle
 * MPI_ERR_UNSUPPORTED_OPERATION.
 */
#include "mpi/mpi_int.h"

#define UNSUPPORTED MPI_ERR_UNSUPPORTED_OPERATION

static int win_class(MPI_Win win)
{
    return win == MPI_WIN_NULL ? MPI_ERR_WIN : UNSUPPORTED;
}

/* ---- Process creation and ports (chapter 10) ---- */

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    return weft__mpi_err(comm, UNSUPPORTED, "MPI_Comm_spawn");
}
WEFT_MPI_ALIAS(Comm_spawn)

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    return weft__mpi_err(comm, UNSUPPORTED, "MPI_Comm_spawn_multiple");
}
WEFT_MPI_ALIAS(Comm_spawn_multiple)

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    return weft__mpi_err(NULL, UNSUPPORTED, "MPI_Open_port");
}
WEFT_MPI_ALIAS(Open_port)

int PMPI_Close_port(const char *port_name)
{
    return weft__mpi_err(NULL, UNSUPPORTED, "MPI_Close_port");
}
WEFT_MPI_ALIAS(Close_port)

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    return weft__mpi_err(comm, UNSUPPORTED, "MPI_Comm_accept");
}
WEFT_MPI_ALIAS(Comm_accept)

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    return weft__mpi_err(comm, UNSUPPORTED, "MPI_Comm_connect");
}
WEFT_MPI_ALIAS(Comm_connect)

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    return weft__mpi_err(NULL, UNSUPPORTED, "MPI_Publish_name");
}
WEFT_MPI_ALIAS(Publish_name)

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    return weft__mpi_err(NULL, UNSUPPORTED, "MPI_Unpublish_name");
}
WEFT_MPI_ALIAS(Unpublish_name)

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    return weft__mpi_err(NULL, UNSUPPORTED, "MPI_Lookup_name");
}
WEFT_MPI_ALIAS(Lookup_name)

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    return weft__mpi_err(NULL, UNSUPPORTED, "MPI_Comm_join");
}
WEFT_MPI_ALIAS(Comm_join)

/* ---- One-sided communication (chapter 11) ---- */

int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_set_name");
}
WEFT_MPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_get_name");
}
WEFT_MPI_ALIAS(Win_get_name)

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    if (win)
        *win = MPI_WIN_NULL;
    return weft__mpi_err(comm, UNSUPPORTED, "MPI_Win_create");
}
WEFT_MPI_ALIAS(Win_create)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    if (baseptr)
        *(void **)baseptr = NULL;
    if (win)
        *win = MPI_WIN_NULL;
    return weft__mpi_err(comm, UNSUPPORTED, "MPI_Win_allocate");
}
WEFT_MPI_ALIAS(Win_allocate)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    if (baseptr)
        *(void **)baseptr = NULL;
    if (win)
        *win = MPI_WIN_NULL;
    return weft__mpi_err(comm, UNSUPPORTED, "MPI_Win_allocate_shared");
}
WEFT_MPI_ALIAS(Win_allocate_shared)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_shared_query");
}
WEFT_MPI_ALIAS(Win_shared_query)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    if (win)
        *win = MPI_WIN_NULL;
    return weft__mpi_err(comm, UNSUPPORTED, "MPI_Win_create_dynamic");
}
WEFT_MPI_ALIAS(Win_create_dynamic)

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_attach");
}
WEFT_MPI_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_detach");
}
WEFT_MPI_ALIAS(Win_detach)

int PMPI_Win_free(MPI_Win *win)
{
    MPI_Win w = win ? *win : MPI_WIN_NULL;
    return weft__mpi_err_win(w, win_class(w), "MPI_Win_free");
}
WEFT_MPI_ALIAS(Win_free)

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    if (group)
        *group = MPI_GROUP_NULL;
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_get_group");
}
WEFT_MPI_ALIAS(Win_get_group)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_set_info");
}
WEFT_MPI_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    if (info_used)
        *info_used = MPI_INFO_NULL;
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_get_info");
}
WEFT_MPI_ALIAS(Win_get_info)

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Put");
}
WEFT_MPI_ALIAS(Put)

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Get");
}
WEFT_MPI_ALIAS(Get)

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Accumulate");
}
WEFT_MPI_ALIAS(Accumulate)

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Get_accumulate");
}
WEFT_MPI_ALIAS(Get_accumulate)

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Fetch_and_op");
}
WEFT_MPI_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Compare_and_swap");
}
WEFT_MPI_ALIAS(Compare_and_swap)

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    if (request)
        *request = MPI_REQUEST_NULL;
    return weft__mpi_err_win(win, win_class(win), "MPI_Rput");
}
WEFT_MPI_ALIAS(Rput)

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    if (request)
        *request = MPI_REQUEST_NULL;
    return weft__mpi_err_win(win, win_class(win), "MPI_Rget");
}
WEFT_MPI_ALIAS(Rget)

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    if (request)
        *request = MPI_REQUEST_NULL;
    return weft__mpi_err_win(win, win_class(win), "MPI_Raccumulate");
}
WEFT_MPI_ALIAS(Raccumulate)

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    if (request)
        *request = MPI_REQUEST_NULL;
    return weft__mpi_err_win(win, win_class(win), "MPI_Rget_accumulate");
}
WEFT_MPI_ALIAS(Rget_accumulate)

int PMPI_Win_fence(int assert, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_fence");
}
WEFT_MPI_ALIAS(Win_fence)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_start");
}
WEFT_MPI_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_complete");
}
WEFT_MPI_ALIAS(Win_complete)

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_post");
}
WEFT_MPI_ALIAS(Win_post)

int PMPI_Win_wait(MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_wait");
}
WEFT_MPI_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_test");
}
WEFT_MPI_ALIAS(Win_test)

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_lock");
}
WEFT_MPI_ALIAS(Win_lock)

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_lock_all");
}
WEFT_MPI_ALIAS(Win_lock_all)

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_unlock");
}
WEFT_MPI_ALIAS(Win_unlock)

int PMPI_Win_unlock_all(MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_unlock_all");
}
WEFT_MPI_ALIAS(Win_unlock_all)

int PMPI_Win_flush(int rank, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_flush");
}
WEFT_MPI_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_flush_all");
}
WEFT_MPI_ALIAS(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_flush_local");
}
WEFT_MPI_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_flush_local_all");
}
WEFT_MPI_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win)
{
    return weft__mpi_err_win(win, win_class(win), "MPI_Win_sync");
}
WEFT_MPI_ALIAS(Win_sync)
