/* MPI_Comm_spawn when things go wrong: a program that does not exist (every
 * errcode MPI_ERR_SPAWN, no communicator), and a child that dies while its
 * parents wait for it (their receive fails; the job goes on and finalizes).
 * "orphan PIDFILE" (spawn_orphan.sh): the parent spawns a child that writes
 * its pid and sleeps, then dies itself; the child's job must end with it. */
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "die")) {
        MPI_Init(&argc, &argv);
        MPI_Comm par;
        MPI_Comm_get_parent(&par);
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 1)
            raise(SIGKILL);          /* dies with the parents waiting for it */
        MPI_Barrier(MPI_COMM_WORLD); /* never completes: rank 1 is gone */
        MPI_Finalize();
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "sleeper")) {
        MPI_Init(&argc, &argv);
        FILE *f = fopen(argv[2], "w");
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
        MPI_Comm par;
        MPI_Comm_get_parent(&par);
        int ready = 1;
        MPI_Send(&ready, 1, MPI_INT, 0, 0, par);
        for (int i = 0; i < 600; i++)
            sleep(1); /* until its job ends it */
        MPI_Finalize();
        return 1;
    }
    mt_init(&argc, &argv);
    if (argc > 2 && !strcmp(argv[1], "orphan")) {
        char *cargv[] = {"sleeper", argv[2], NULL};
        MPI_Comm inter;
        MPI_MUST(MPI_Comm_spawn(argv[0], cargv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                                MPI_ERRCODES_IGNORE));
        int ready = 0;
        MPI_MUST(MPI_Recv(&ready, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE));
        raise(SIGKILL);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm inter = MPI_COMM_WORLD;
    int errs[3] = {-1, -1, -1};
    int rc = MPI_Comm_spawn("/nonexistent/weft-no-such-program", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &inter, errs);
    CHECK(mt_class(rc) == MPI_ERR_SPAWN);
    CHECK(inter == MPI_COMM_NULL);
    if (mt_rank == 0)
        for (int i = 0; i < 3; i++)
            CHECK(errs[i] == MPI_ERR_SPAWN);
    /* A child that dies: the parents' receive from it fails. */
    char *cargv[] = {"die", NULL};
    MPI_MUST(MPI_Comm_spawn(argv[0], cargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                            MPI_ERRCODES_IGNORE));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int v;
    rc = MPI_Recv(&v, 1, MPI_INT, 1, 0, inter, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS);
    MPI_Comm_free(&inter);
    return mt_finish("test_spawn_fault");
}
