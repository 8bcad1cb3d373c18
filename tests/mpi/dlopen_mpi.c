/* libmpi.so opened with dlopen, as mpi4py and other language bindings load
 * it: the library must load (its thread-local request cache uses the
 * initial-exec TLS model, which needs room in glibc's static TLS space) and
 * work. This program is not linked with libmpi; it takes the library's path
 * as its argument, finds every function and handle with dlsym, and runs
 * nonblocking exchanges around a ring plus an allreduce.
 *
 *   mpirun -n N dlopen_mpi /path/to/libmpi.so */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi.h"

#define ROUNDS 1000
#define WINDOW 16

static void *lib;

static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "dlopen_mpi: %s not found: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dlopen_mpi LIBMPI\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen_mpi: dlopen(%s) failed: %s\n", argv[1], dlerror());
        return 1;
    }
    int (*init)(int *, char ***) = (int (*)(int *, char ***))sym("MPI_Init");
    int (*finalize)(void) = (int (*)(void))sym("MPI_Finalize");
    int (*comm_rank)(MPI_Comm, int *) = (int (*)(MPI_Comm, int *))sym("MPI_Comm_rank");
    int (*comm_size)(MPI_Comm, int *) = (int (*)(MPI_Comm, int *))sym("MPI_Comm_size");
    int (*isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = (int (*)(
        const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))sym("MPI_Isend");
    int (*irecv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) =
        (int (*)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))sym("MPI_Irecv");
    int (*waitall)(int, MPI_Request *, MPI_Status *) =
        (int (*)(int, MPI_Request *, MPI_Status *))sym("MPI_Waitall");
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) =
        (int (*)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))sym("MPI_Allreduce");
    MPI_Comm world = (MPI_Comm)sym("weft_mpi_comm_world");
    MPI_Datatype type_int = (MPI_Datatype)sym("weft_mpi_type_int");
    MPI_Op op_sum = (MPI_Op)sym("weft_mpi_op_sum");

    int rank, size;
    if (init(&argc, &argv) != MPI_SUCCESS || comm_rank(world, &rank) != MPI_SUCCESS ||
        comm_size(world, &size) != MPI_SUCCESS) {
        fprintf(stderr, "dlopen_mpi: MPI_Init failed\n");
        return 1;
    }
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[WINDOW], in[WINDOW], bad = 0;
    MPI_Request reqs[2 * WINDOW];
    for (int r = 0; r < ROUNDS && !bad; r++) {
        for (int w = 0; w < WINDOW; w++) {
            out[w] = r * WINDOW + w + rank;
            in[w] = -1;
            irecv(&in[w], 1, type_int, prev, w, world, &reqs[w]);
        }
        for (int w = 0; w < WINDOW; w++)
            isend(&out[w], 1, type_int, next, w, world, &reqs[WINDOW + w]);
        if (waitall(2 * WINDOW, reqs, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
            fprintf(stderr, "dlopen_mpi: rank %d: MPI_Waitall failed\n", rank);
            bad = 1;
        }
        for (int w = 0; w < WINDOW && !bad; w++)
            if (in[w] != r * WINDOW + w + prev) {
                fprintf(stderr, "dlopen_mpi: rank %d round %d: got %d, want %d\n", rank, r, in[w],
                        r * WINDOW + w + prev);
                bad = 1;
            }
    }
    int sum = 0;
    allreduce(&bad, &sum, 1, type_int, op_sum, world);
    if (rank == 0)
        printf("dlopen_mpi: %d ranks, %d rounds of %d messages: %s\n", size, ROUNDS, WINDOW,
               sum ? "FAILED" : "passed");
    finalize();
    dlclose(lib);
    return sum ? 1 : 0;
}
