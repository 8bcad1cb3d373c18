/* MPI and OpenSHMEM in one program, on one engine: started in the order
 * argv[1] says ("mpi" or "shmem" first), used together (a put, then an
 * allreduce of what it wrote; an MPI message, then an atomic), and ended in
 * the opposite order. */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static long x;

int main(int argc, char **argv)
{
    int shmem_first = argc > 1 && !strcmp(argv[1], "shmem");
    if (shmem_first)
        shmem_init();
    MPI_Init(&argc, &argv);
    if (!shmem_first)
        shmem_init();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bad = shmem_my_pe() != rank || shmem_n_pes() != size;
    shmem_long_p(&x, rank + 1, (rank + 1) % size);
    shmem_barrier_all();
    long sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    bad |= sum != (long)size * (size + 1) / 2;
    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    bad |= got != (rank + size - 1) % size;
    shmem_long_atomic_add(&x, 10, 0);
    MPI_Barrier(MPI_COMM_WORLD); /* an MPI barrier does not order SHMEM puts: quiet first */
    shmem_barrier_all();
    if (rank == 0)
        bad |= x != 11L * size; /* its left neighbor's put (size), 10 from every rank */
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (shmem_first) {
        MPI_Finalize();
        shmem_finalize();
    } else {
        shmem_finalize();
        MPI_Finalize();
    }
    if (rank == 0)
        printf("shmem_mpi: %d ranks, %s first: %s\n", size, shmem_first ? "shmem" : "mpi",
               all ? "FAILED" : "ok");
    return all;
}
