/* Time to spawn: MPI_Comm_spawn of N children (this program again) until
 * parents and children have passed a barrier over the new intercommunicator,
 * then MPI_Comm_disconnect; the children exit. Plain MPI, built against each
 * library by bench/run_spawn.sh. Prints one line per spawn:
 *   csv,spawn,N,ms,<milliseconds>
 *   mpi_spawn [N [REPS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Barrier(parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 1, reps = argc > 2 ? atoi(argv[2]) : 5, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < reps; i++) {
        MPI_Comm inter;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        MPI_Barrier(inter);
        double t = MPI_Wtime() - t0;
        MPI_Comm_disconnect(&inter);
        if (rank == 0)
            printf("csv,spawn,%d,ms,%.3f\n", n, t * 1e3);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
