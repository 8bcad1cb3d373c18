/* What weft's MPI does not do yet (MPI 3.1 chapter 10): process creation
 * and ports. Each function sets its output handles to the null handle first
 * (so a caller that goes on with MPI_ERRORS_RETURN holds no garbage) and
 * reports MPI_ERR_UNSUPPORTED_OPERATION on the communicator given or
 * MPI_COMM_WORLD. */
#include "mpi/mpi_int.h"

#define UNSUPPORTED MPI_ERR_UNSUPPORTED_OPERATION

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
