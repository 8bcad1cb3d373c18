/* The MPI-1 functions removed in MPI 3.0 that old programs (HPL, HPCC) still
 * call behave as their MPI-2 successors. */
#include "mpitest.h"

static int handler_calls;
static void handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    struct {
        int i;
        double d;
    } s;
    MPI_Aint a, b;
    MPI_MUST(MPI_Address(&s.d, &a));
    MPI_MUST(MPI_Get_address(&s.d, &b));
    CHECK(a == b);

    int len[2] = {1, 1};
    MPI_Aint disp[2] = {0, (MPI_Aint)((char *)&s.d - (char *)&s)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st, hv, hi;
    MPI_MUST(MPI_Type_struct(2, len, disp, types, &st));
    int size;
    MPI_Aint lb, ub, extent;
    MPI_MUST(MPI_Type_size(st, &size));
    CHECK(size == (int)(sizeof(int) + sizeof(double)));
    MPI_MUST(MPI_Type_lb(st, &lb));
    MPI_MUST(MPI_Type_ub(st, &ub));
    MPI_MUST(MPI_Type_extent(st, &extent));
    CHECK(lb == 0 && ub == (MPI_Aint)sizeof s && extent == (MPI_Aint)sizeof s);

    MPI_MUST(MPI_Type_hvector(3, 2, 16, MPI_INT, &hv));
    MPI_MUST(MPI_Type_extent(hv, &extent));
    CHECK(extent == 2 * 16 + 2 * (MPI_Aint)sizeof(int));
    int blens[2] = {2, 1};
    MPI_Aint hdisp[2] = {8, 32};
    MPI_MUST(MPI_Type_hindexed(2, blens, hdisp, MPI_INT, &hi));
    MPI_MUST(MPI_Type_lb(hi, &lb));
    MPI_MUST(MPI_Type_ub(hi, &ub));
    CHECK(lb == 8 && ub == 32 + (MPI_Aint)sizeof(int));
    MPI_MUST(MPI_Type_free(&st));
    MPI_MUST(MPI_Type_free(&hv));
    MPI_MUST(MPI_Type_free(&hi));

    MPI_Errhandler e, got;
    MPI_Comm c;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_MUST(MPI_Errhandler_create(handler, &e));
    MPI_MUST(MPI_Errhandler_set(c, e));
    MPI_MUST(MPI_Errhandler_get(c, &got));
    CHECK(got == e);
    MPI_MUST(MPI_Errhandler_free(&got));
    int buf = 0;
    CHECK(MPI_Send(&buf, 1, MPI_INT, mt_size, 0, c) != MPI_SUCCESS); /* no such rank */
    CHECK(handler_calls == 1);
    MPI_MUST(MPI_Errhandler_free(&e));
    MPI_MUST(MPI_Comm_free(&c));
    return mt_finish("test_removed_mpi1");
}
