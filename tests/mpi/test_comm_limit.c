/* The limit on live communicators (docs/mpi.md, "Limits"): MPI_Comm_dup until
 * it fails. The failure is MPI_ERR_OTHER under MPI_ERRORS_RETURN on every
 * rank at the same dup (the ranks agree on free ids), the limit is in the
 * thousands, the communicators made still work, and once they are freed
 * creation works again. */
#include "mpitest.h"

enum { MAX_TRY = 5000 };

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    static MPI_Comm comms[MAX_TRY];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int made = 0, rc = MPI_SUCCESS;
    while (made < MAX_TRY) {
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[made]);
        if (rc != MPI_SUCCESS)
            break;
        made++;
    }
    CHECK(made < MAX_TRY && mt_class(rc) == MPI_ERR_OTHER);
    CHECK(made >= 4000);
    /* Every rank stopped at the same dup. */
    int lo = 0, hi = 0;
    MPI_MUST(MPI_Allreduce(&made, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    MPI_MUST(MPI_Allreduce(&made, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(lo == made && hi == made);
    /* The last one made works. */
    if (made > 0) {
        int one = 1, sum = 0;
        MPI_MUST(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comms[made - 1]));
        CHECK(sum == mt_size);
    }
    for (int i = 0; i < made; i++)
        MPI_MUST(MPI_Comm_free(&comms[i]));
    MPI_Comm again;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &again));
    MPI_MUST(MPI_Comm_free(&again));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mt_finish("test_comm_limit");
}
