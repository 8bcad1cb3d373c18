/* Fault programs, run by tests that check mpirun's exit status and message:
 *   abort  the last rank calls MPI_Abort(MPI_COMM_WORLD, 7) while the others wait
 *          in a receive that never completes: the whole job must end, exit 7
 *   fatal  the last rank makes an invalid call under MPI_ERRORS_ARE_FATAL
 *   pcoll  the same with a persistent collective's init (a bad root): the
 *          message names MPI_Bcast_init, not the call it works through
 *   errabort  the invalid call under MPI_ERRORS_ABORT (MPI 4.0), set on
 *          MPI_COMM_WORLD: the job ends, and the message names the handler
 *   nofinalize  the last rank exits with status 0 without MPI_Finalize while
 *          the others wait in MPI_Barrier: the others fail with
 *          MPIX_ERR_PROC_FAILED (class 77) under MPI_ERRORS_ARE_FATAL, and the
 *          job must not exit 77, the status ctest reads as "skipped" */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "abort";
    if (!strcmp(mode, "nofinalize")) {
        if (rank == size - 1)
            exit(0);
        MPI_Barrier(MPI_COMM_WORLD);
        printf("not reached\n");
        return 0;
    }
    if (rank == size - 1) {
        if (!strcmp(mode, "abort"))
            MPI_Abort(MPI_COMM_WORLD, 7);
        if (!strcmp(mode, "errabort"))
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
        if (!strcmp(mode, "pcoll")) {
            MPI_Request r;
            MPI_Bcast_init(&x, 1, MPI_INT, size + 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
            printf("not reached\n");
        }
        MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
        printf("not reached\n");
    } else {
        MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
